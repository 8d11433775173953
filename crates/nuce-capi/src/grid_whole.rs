//! A grid's field to and from one whole array on rank 0
//! (`nuce_grid_scatter`, `nuce_grid_gather`): the grid's counterparts of
//! `nuce_array_scatter` and `nuce_array_gather`, straight between the
//! application's buffers and rank 0's array (no staging copy). The
//! reference is `docs/c-api.md`, section "Grids on your own buffers (2D and
//! 3D)".

use std::ffi::{c_int, c_void};

use nuce::internals::layout::RawField;
use nuce::{waiting, Grid, Result};

use crate::grid::{grid, nuce_field, nuce_grid, raw_fields};
use crate::{caller, guard, unreachable_null};

/// The shared body of [`nuce_grid_gather`] and [`nuce_grid_scatter`] (the
/// C function `call`, the grid's verb `verb`): the handle, then the field
/// (a bad one is this rank's refusal at the verb's checked entry), then
/// `go` on them.
fn whole(
    (call, verb): (&str, &str),
    g: *mut nuce_grid,
    field: *const nuce_field,
    go: impl FnOnce(&Grid, RawField) -> Result<()>,
) -> c_int {
    guard(|| {
        // SAFETY: `g` is NULL or a live handle.
        let h = unsafe { grid(g) }.map_err(|_| unreachable_null("the grid", call))?;
        let _w = waiting();
        // SAFETY: `field` is NULL or one readable field (contract).
        match caller::refused_or(unsafe { raw_fields(1, field, "field") }) {
            Ok(f) => go(&h.grid, f[0]),
            Err(e) => Err(h.grid.refuse_call(verb, e)),
        }
    })
}

/// Gathers one field of the grid on rank 0 (collective over the grid's
/// ranks): every rank passes its `field` (its padded block, as for
/// [`nuce_grid_exchange`](crate::nuce_grid_exchange); ghost cells are not
/// read); rank 0 receives the whole grid in `global`, `global_len` =
/// `n[0]·n[1]·n[2]` cells of the field's `elem_size` bytes, C order
/// (dimension 2 fastest; Fortran: dimension 1 fastest). `global` and
/// `global_len` are read on rank 0 only: other ranks may pass `NULL, 0`.
/// Errors — a field that does not fit this rank's box, a missing or
/// wrongly sized array on rank 0, another element size on some rank, a
/// move pending — are the same on every rank, and nothing is written then.
#[no_mangle]
pub extern "C" fn nuce_grid_gather(
    g: *mut nuce_grid,
    field: *const nuce_field,
    global: *mut c_void,
    global_len: usize,
) -> c_int {
    let call = ("nuce_grid_gather", "Grid::gather(to root 0)");
    whole(call, g, field, |grid, f| {
        // SAFETY: the field holds this rank's padded block, `global` on rank
        // 0 `global_len` writable cells (contract; sizes checked).
        unsafe { grid.gather_raw(0, f, global, global_len) }
    })
}

/// Scatters rank 0's whole array `global` (`global_len` =
/// `n[0]·n[1]·n[2]` cells of the field's `elem_size` bytes, C order; read
/// on rank 0 only, other ranks may pass `NULL, 0`) into every rank's
/// `field` (its padded block; ghost cells are not written: exchange
/// afterwards) (collective over the grid's ranks). Errors as
/// [`nuce_grid_gather`]'s, the same on every rank, nothing written then.
#[no_mangle]
pub extern "C" fn nuce_grid_scatter(
    g: *mut nuce_grid,
    global: *const c_void,
    global_len: usize,
    field: *const nuce_field,
) -> c_int {
    let call = ("nuce_grid_scatter", "Grid::scatter(from root 0)");
    whole(call, g, field, |grid, f| {
        // SAFETY: the field holds this rank's padded block (writable),
        // `global` on rank 0 `global_len` readable cells (contract).
        unsafe { grid.scatter_raw(0, global, global_len, f) }
    })
}
