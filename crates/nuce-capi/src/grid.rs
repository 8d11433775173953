//! 2D and 3D grids on the application's own buffers (`nuce_grid_*`): the
//! layout (this rank's box, its neighbours and the cells each side sends),
//! ghost exchanges in place on the application's fields (blocking and
//! begin/end) and remaps into new buffers the application provides — no
//! staging copy, any element size, several fields at once. Built on
//! `nuce::internals::layout`; the reference is `docs/c-api.md`, section
//! "Grids on your own buffers (2D and 3D)".

use std::ffi::{c_int, c_void};

use nuce::internals::clock::polling;
use nuce::internals::layout::{PendingExchange, RawField};
use nuce::plan::array3d::Stencil;
use nuce::{waiting, Error, Grid, Result};

use crate::{balancer, checked, deref_mut, free_handle, guard, null, to_usize, unreachable_null};
use crate::{caller, nuce_balancer};

/// The 7-point stencil (faces only) of [`nuce_grid_create`].
pub const NUCE_STENCIL_FACES: c_int = 7;
/// The 27-point stencil (faces, edges, corners) of [`nuce_grid_create`].
pub const NUCE_STENCIL_BOX: c_int = 27;

/// A grid distributed over the balancer's ranks (opaque), whose data lives
/// in the application's buffers.
pub struct nuce_grid {
    pub(crate) grid: Grid,
}

/// A ghost exchange in flight (opaque), from [`nuce_grid_exchange_begin`]
/// until [`nuce_grid_exchange_end`].
pub struct nuce_exchange {
    grid: *mut nuce_grid,
    pending: PendingExchange,
}

/// One field of the application: `data` points to this rank's padded block
/// of `elem_size`-byte cells, C order (dimension 2 fastest), with `pad[d]`
/// halo cells allocated on each side of dimension `d` (at least the ghost
/// width where the grid's extent is above 1; any value ≥ 0 where it is 1).
/// Its length is [`nuce_grid_padded_len`] cells.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct nuce_field {
    /// Start of the padded block (may be NULL on a rank with an empty box).
    pub data: *mut c_void,
    /// Bytes per cell (several components of a cell = one bigger cell).
    pub elem_size: usize,
    /// Halo cells allocated on each side, per dimension.
    pub pad: [i64; 3],
}

/// The grid behind a handle.
///
/// # Safety
/// `g` is NULL or a live handle from [`nuce_grid_create`].
pub(crate) unsafe fn grid<'a>(g: *mut nuce_grid) -> Result<&'a mut nuce_grid> {
    // SAFETY: the caller's contract.
    unsafe { deref_mut(g, "grid") }
}

/// Three values from a C array of 3 `int64_t`, each ≥ 0.
///
/// # Safety
/// `p` is NULL or points to 3 readable `int64_t`.
unsafe fn three(p: *const i64, what: &str) -> Result<[usize; 3]> {
    if p.is_null() {
        return Err(null(what));
    }
    // SAFETY: non-null, 3 readable int64_t (contract).
    let v = unsafe { std::slice::from_raw_parts(p, 3) };
    Ok([
        to_usize(v[0], &caller::axis(what, 0))?,
        to_usize(v[1], &caller::axis(what, 1))?,
        to_usize(v[2], &caller::axis(what, 2))?,
    ])
}

/// The fields of a C call as the runtime takes them.
///
/// # Safety
/// `fields` is NULL or points to `n` readable `nuce_field`.
pub(crate) unsafe fn raw_fields(
    n: c_int,
    fields: *const nuce_field,
    what: &str,
) -> Result<Vec<RawField>> {
    let n = usize::try_from(n)
        .ok()
        .filter(|&n| n > 0)
        .ok_or_else(|| Error::invalid_input(format!("{what}: {n} fields (at least 1)")))?;
    if fields.is_null() {
        return Err(null(what));
    }
    // SAFETY: non-null, `n` readable fields (contract).
    let v = unsafe { std::slice::from_raw_parts(fields, n) };
    v.iter()
        .enumerate()
        .map(|(k, f)| {
            // The field's name is made only for an error: an exchange
            // reads its fields at every call.
            let pad = |d: usize| {
                usize::try_from(f.pad[d]).or_else(|_| {
                    let name = if caller::fortran() {
                        format!("{}%{}", caller::element(what, k), caller::axis("pad", d))
                    } else {
                        format!("{what}[{k}].pad[{d}]")
                    };
                    to_usize(f.pad[d], &name)
                })
            };
            Ok(RawField {
                data: f.data,
                elem_size: f.elem_size,
                pad: [pad(0)?, pad(1)?, pad(2)?],
            })
        })
        .collect()
}

/// The `n` grid handles at `grids` (NULL when `n` is 0), each live and
/// given once.
///
/// # Safety
/// `grids` is NULL or points to `n` readable handles, each NULL or live.
pub(crate) unsafe fn grid_handles<'a>(
    n: c_int,
    grids: *const *mut nuce_grid,
) -> Result<Vec<&'a mut nuce_grid>> {
    // SAFETY: the caller's contract.
    unsafe { crate::handles(n, grids, "grids") }
}

/// Plans an `n[0] × n[1] × n[2]` grid for the current speeds and makes its
/// layout for `stencil` ([`NUCE_STENCIL_FACES`] or [`NUCE_STENCIL_BOX`])
/// with `ghost` layers (0 to 4), writing the handle to `*out` (collective
/// over the balancer's ranks; all arguments identical on every rank). A
/// balance point. A 2D grid has `n[0] = 1`. The application then asks its
/// box ([`nuce_grid_box`]) and allocates its fields.
#[no_mangle]
pub extern "C" fn nuce_grid_create(
    b: *mut nuce_balancer,
    n: *const i64,
    ghost: i64,
    stencil: c_int,
    out: *mut *mut nuce_grid,
) -> c_int {
    guard(|| {
        // SAFETY: `b` is NULL or a live handle.
        let h = unsafe { balancer(b) }
            .map_err(|_| unreachable_null("the balancer", "nuce_grid_create"))?;
        let _w = waiting();
        // SAFETY: `n` is NULL or 3 readable int64_t (contract).
        let shape = unsafe { three(n, "n") };
        let op = match &shape {
            Ok(s) => format!(
                "nuce_grid_create(n {}, ghost {ghost}, stencil {stencil})",
                caller::triple(*s)
            ),
            Err(_) => format!("nuce_grid_create(ghost {ghost}, stencil {stencil})"),
        };
        let local = shape.and_then(|s| {
            // SAFETY: `out` is NULL or writable (contract).
            let out = unsafe { out.as_mut() }.ok_or_else(|| null("out"))?;
            *out = std::ptr::null_mut();
            let ghost = to_usize(ghost, "ghost")?;
            let st = match stencil {
                NUCE_STENCIL_FACES => Stencil::seven(ghost),
                NUCE_STENCIL_BOX => Stencil::twenty_seven(ghost),
                _ => {
                    return Err(Error::invalid_input(format!(
                        "stencil = {stencil}: NUCE_STENCIL_FACES (7) or NUCE_STENCIL_BOX (27)"
                    )))
                }
            };
            Ok((s, st, out))
        });
        let (s, st, out) = checked(local, |r| h.bal.entry(&op, r))?;
        let grid = Grid::new(&mut h.bal, (s[0], s[1], s[2]), st)?;
        *out = Box::into_raw(Box::new(nuce_grid { grid }));
        Ok(())
    })
}

/// Frees a grid (local; NULL is ignored). No exchange of it may be in flight.
#[no_mangle]
pub extern "C" fn nuce_grid_free(g: *mut nuce_grid) -> c_int {
    // SAFETY: `g` is NULL or came from nuce_grid_create, freed once (contract).
    unsafe { free_handle(g) }
}

/// Rank `rank`'s box (local): first cell `lo[3]` and extents `size[3]`,
/// global coordinates (all 0 for a rank without cells). While a move is
/// pending (after [`nuce_grid_maybe_remap`] set `*remapped`), the new box.
#[no_mangle]
pub extern "C" fn nuce_grid_box(
    g: *const nuce_grid,
    rank: c_int,
    lo: *mut i64,
    size: *mut i64,
) -> c_int {
    guard(|| {
        // SAFETY: `g` is NULL or a live handle (read only).
        let g = unsafe { g.as_ref() }.ok_or_else(|| null("grid"))?;
        let b = usize::try_from(rank)
            .ok()
            .and_then(|r| g.grid.plan().boxes.get(r))
            .copied()
            .ok_or_else(|| Error::invalid_input(format!("rank {rank} is out of range")))?;
        if lo.is_null() || size.is_null() {
            return Err(null("lo or size"));
        }
        let l = [b.x, b.y, b.z].map(|x| x as i64);
        let s = [b.nx, b.ny, b.nz].map(|x| x as i64);
        // SAFETY: non-null, 3 writable int64_t each (contract).
        unsafe {
            std::ptr::copy_nonoverlapping(l.as_ptr(), lo, 3);
            std::ptr::copy_nonoverlapping(s.as_ptr(), size, 3);
        }
        Ok(())
    })
}

/// The number of cells of this rank's buffer with `pad[3]` halo cells on
/// each side (local): `(size[0] + 2 pad[0]) (size[1] + 2 pad[1]) (size[2] +
/// 2 pad[2])`, 0 for a rank without cells; for the new box while a move is
/// pending. Fails when a padding is below the ghost width (along a
/// dimension of extent > 1).
#[no_mangle]
pub extern "C" fn nuce_grid_padded_len(
    g: *const nuce_grid,
    pad: *const i64,
    len: *mut usize,
) -> c_int {
    guard(|| {
        // SAFETY: `g` is NULL or a live handle (read only).
        let g = unsafe { g.as_ref() }.ok_or_else(|| null("grid"))?;
        // SAFETY: `pad` is NULL or 3 readable int64_t (contract).
        let pad = unsafe { three(pad, "pad") }?;
        let n = g.grid.padded_len(pad)?;
        // SAFETY: `len` is NULL or writable (contract).
        *unsafe { len.as_mut() }.ok_or_else(|| null("len"))? = n;
        Ok(())
    })
}

/// This rank's neighbours in the current layout (local): `*count` is set
/// to their number, and the first `min(count, max)` ranks, ascending, are
/// written to `ranks` (may be NULL when `max` is 0).
#[no_mangle]
pub extern "C" fn nuce_grid_neighbours(
    g: *const nuce_grid,
    count: *mut c_int,
    ranks: *mut c_int,
    max: c_int,
) -> c_int {
    guard(|| {
        // SAFETY: `g` is NULL or a live handle (read only).
        let g = unsafe { g.as_ref() }.ok_or_else(|| null("grid"))?;
        let n = g.grid.layout().neighbours();
        // SAFETY: `count` is NULL or writable (contract).
        *unsafe { count.as_mut() }.ok_or_else(|| null("count"))? = n.len() as c_int;
        let k = n.len().min(usize::try_from(max).unwrap_or(0));
        if k > 0 {
            if ranks.is_null() {
                return Err(null("ranks"));
            }
            for (i, &q) in n.iter().take(k).enumerate() {
                // SAFETY: non-null, `max` ≥ k writable ints (contract).
                unsafe { *ranks.add(i) = q as c_int };
            }
        }
        Ok(())
    })
}

/// The cells exchanged in a ghost exchange of the current layout (local):
/// two regions per neighbour, the cells this rank sends it (`is_send` 1)
/// and the cells it receives from it (`is_send` 0), each a box of global
/// coordinates `lo[3 i .. 3 i + 2]`, `size[3 i .. 3 i + 2]`. `*count` is set
/// to the number of regions; the first `min(count, max)` are written (the
/// arrays may be NULL when `max` is 0).
#[no_mangle]
pub extern "C" fn nuce_grid_regions(
    g: *const nuce_grid,
    count: *mut c_int,
    rank: *mut c_int,
    lo: *mut i64,
    size: *mut i64,
    is_send: *mut c_int,
    max: c_int,
) -> c_int {
    guard(|| {
        // SAFETY: `g` is NULL or a live handle (read only).
        let g = unsafe { g.as_ref() }.ok_or_else(|| null("grid"))?;
        let regions: Vec<_> = g
            .grid
            .layout()
            .regions()
            .iter()
            .flat_map(|r| [(r.rank, r.send, 1), (r.rank, r.recv, 0)])
            .collect();
        // SAFETY: `count` is NULL or writable (contract).
        *unsafe { count.as_mut() }.ok_or_else(|| null("count"))? = regions.len() as c_int;
        let k = regions.len().min(usize::try_from(max).unwrap_or(0));
        if k == 0 {
            return Ok(());
        }
        if rank.is_null() || lo.is_null() || size.is_null() || is_send.is_null() {
            return Err(null("rank, lo, size or is_send"));
        }
        for (i, (q, b, s)) in regions.into_iter().take(k).enumerate() {
            // SAFETY: non-null; `max` ≥ k entries (3 per region for lo and
            // size) writable (contract).
            unsafe {
                *rank.add(i) = q as c_int;
                *is_send.add(i) = s;
                for d in 0..3 {
                    *lo.add(3 * i + d) = b.lo(d) as i64;
                    *size.add(3 * i + d) = b.len(d) as i64;
                }
            }
        }
        Ok(())
    })
}

/// Fills the ghost cells of the `nfields` fields from the neighbours, in
/// place (every rank of the grid calls it; it synchronises with its
/// neighbours only). Every rank passes the same number of fields and
/// element sizes (paddings may differ); a difference, or a wrong field on
/// one rank, is the same error on every rank involved. Ghost cells outside
/// the grid are left untouched.
#[no_mangle]
pub extern "C" fn nuce_grid_exchange(
    g: *mut nuce_grid,
    nfields: c_int,
    fields: *const nuce_field,
) -> c_int {
    guard(|| {
        // SAFETY: `g` is NULL or a live handle.
        let h = unsafe { grid(g) }?;
        let x = begin(h, nfields, fields)?;
        h.grid.exchange_end_raw(x)
    })
}

/// Starts the exchange of [`nuce_grid_exchange`] and returns at once with
/// `*req`: the application may compute on its cells meanwhile (reading
/// any, writing none that the exchange sends, touching no ghost cell) and
/// ends it with [`nuce_grid_exchange_end`]. The fields must stay allocated
/// until then.
#[no_mangle]
pub extern "C" fn nuce_grid_exchange_begin(
    g: *mut nuce_grid,
    nfields: c_int,
    fields: *const nuce_field,
    req: *mut *mut nuce_exchange,
) -> c_int {
    guard(|| {
        // SAFETY: `g` is NULL or a live handle.
        let h = unsafe { grid(g) }?;
        // SAFETY: `req` is NULL or writable (contract).
        let req = match unsafe { req.as_mut() } {
            Some(r) => r,
            None => return Err(h.grid.refuse_exchange(null("req"))),
        };
        *req = std::ptr::null_mut();
        let pending = begin(h, nfields, fields)?;
        *req = Box::into_raw(Box::new(nuce_exchange { grid: g, pending }));
        Ok(())
    })
}

/// Shared start of the exchanges: the fields read, checked and posted, or
/// this rank's refusal joined by its neighbours.
fn begin(h: &mut nuce_grid, nfields: c_int, fields: *const nuce_field) -> Result<PendingExchange> {
    // An exchange's section: its wait reports its own time off the CPU.
    let _w = polling();
    // SAFETY: `fields` is NULL or `nfields` readable fields (contract).
    let raw = match unsafe { raw_fields(nfields, fields, "fields") } {
        Ok(r) => r,
        Err(e) => return Err(h.grid.refuse_exchange(e)),
    };
    // SAFETY: each field's buffer holds its padded block (contract; sizes
    // are checked against the layout), valid until the exchange ends.
    unsafe { h.grid.exchange_begin_raw(&raw) }
}

/// Ends an exchange started by [`nuce_grid_exchange_begin`] and frees
/// `req` (its ghost cells are then filled, or the same error is returned on
/// every rank involved).
#[no_mangle]
pub extern "C" fn nuce_grid_exchange_end(req: *mut nuce_exchange) -> c_int {
    guard(|| {
        if req.is_null() {
            return Err(null("req"));
        }
        // SAFETY: a handle from nuce_grid_exchange_begin, ended once (contract).
        let x = unsafe { Box::from_raw(req) };
        // SAFETY: the grid outlives its exchanges (contract).
        let h = unsafe { grid(x.grid) }?;
        h.grid.exchange_end_raw(x.pending)
    })
}

/// A balance point between phases of `iterations` iterations (collective
/// over the balancer's ranks; `g` made by this balancer): measures this
/// rank's phase (its cells — or its summed cost, [`nuce_grid_set_cost`] —
/// × `iterations` in its compute time since the last balance point, unless
/// [`crate::nuce_record_phase`] was called),
/// and lets the root decide whether a new layout pays off over the next
/// `iterations` iterations. When it does, `*remapped` is 1 (on every rank)
/// and a move is pending: ask the new box ([`nuce_grid_box`],
/// [`nuce_grid_padded_len`]), allocate new fields and call
/// [`nuce_grid_move`]. Exchanges are refused until then.
#[no_mangle]
pub extern "C" fn nuce_grid_maybe_remap(
    b: *mut nuce_balancer,
    g: *mut nuce_grid,
    iterations: i64,
    remapped: *mut c_int,
) -> c_int {
    remap(b, g, (iterations, None), remapped)
}

/// [`nuce_grid_maybe_remap`] with another decision horizon: the phase just
/// done had `iterations` iterations, and a remap must pay off within the
/// next `ahead` iterations.
#[no_mangle]
pub extern "C" fn nuce_grid_maybe_remap_ahead(
    b: *mut nuce_balancer,
    g: *mut nuce_grid,
    iterations: i64,
    ahead: i64,
    remapped: *mut c_int,
) -> c_int {
    remap(b, g, (iterations, Some(ahead)), remapped)
}

/// Shared body of the two balance points.
fn remap(
    b: *mut nuce_balancer,
    g: *mut nuce_grid,
    (iterations, ahead): (i64, Option<i64>),
    remapped: *mut c_int,
) -> c_int {
    let (call, op) = match ahead {
        None => (
            "nuce_grid_maybe_remap",
            format!("nuce_grid_maybe_remap(iterations {iterations})"),
        ),
        Some(x) => (
            "nuce_grid_maybe_remap_ahead",
            format!("nuce_grid_maybe_remap_ahead(iterations {iterations}, ahead {x})"),
        ),
    };
    guard(|| {
        // SAFETY: `b` is NULL or a live handle.
        let h = unsafe { balancer(b) }.map_err(|_| unreachable_null("the balancer", call))?;
        let _w = waiting();
        let local = (|| {
            // SAFETY: `g` is NULL or a live handle; `remapped` NULL or writable.
            let (g, r) = unsafe {
                (
                    deref_mut(g, &format!("the grid (in {call})"))?,
                    remapped.as_mut(),
                )
            };
            let it = to_usize(iterations, "iterations")?;
            let ahead = to_usize(ahead.unwrap_or(iterations), "ahead")?;
            let r = r.ok_or_else(|| null("remapped"))?;
            *r = 0;
            Ok((g, it, ahead, r))
        })();
        let (g, it, ahead, r) = checked(local, |e| h.bal.entry(&op, e))?;
        let report = h.bal.maybe_remap_ahead(&mut g.grid, it, ahead)?;
        crate::decision::remember(h, &report.decision);
        *r = c_int::from(report.decision.remap);
        Ok(())
    })
}

/// Sets the cost per cell of this rank's box (local): `n` values, one per
/// cell of the box of [`nuce_grid_box`] in C order (dimension 2 fastest),
/// **without** padding — `n = size[0]·size[1]·size[2]`; any unit, finite
/// and ≥ 0 (e.g. the relative work of each cell). The values are copied.
/// The balancer then times this rank by its summed cost, plans with the
/// weighted bisection and decides on `Σ cost / speed` (docs/c-api.md,
/// "Cost per cell"). Checked at the next balance point
/// ([`nuce_grid_maybe_remap`]), where a bad cost on any rank (NaN,
/// negative, infinite, `n` not the box's cells, all 0 over the grid, set
/// for a box the rank no longer has) is the same error on every rank
/// (`NUCE_ERR_INVALID_INPUT`, `NUCE_ERR_SHAPE_MISMATCH` for `n`), and a
/// cost set on some ranks only the same `NUCE_ERR_DISAGREEMENT`. The cost does not follow a move: after a remap
/// that changes this rank's box, set the cost of the new box (while the
/// move is pending [`nuce_grid_box`] gives the new box already, so before
/// or after [`nuce_grid_move`]). `cost` may be NULL only when `n` is 0.
#[no_mangle]
pub extern "C" fn nuce_grid_set_cost(g: *mut nuce_grid, cost: *const f64, n: usize) -> c_int {
    guard(|| {
        // SAFETY: `g` is NULL or a live handle.
        let h = unsafe { grid(g) }?;
        let values = if n == 0 {
            Vec::new()
        } else if cost.is_null() {
            return Err(null("cost"));
        } else {
            // SAFETY: non-null, `n` readable doubles (contract).
            unsafe { std::slice::from_raw_parts(cost, n) }.to_vec()
        };
        h.grid.set_cost(values);
        Ok(())
    })
}

/// Drops the cost per cell set by [`nuce_grid_set_cost`] (local): the
/// balancer counts cells again.
#[no_mangle]
pub extern "C" fn nuce_grid_clear_cost(g: *mut nuce_grid) -> c_int {
    guard(|| {
        // SAFETY: `g` is NULL or a live handle.
        unsafe { grid(g) }?.grid.clear_cost();
        Ok(())
    })
}

/// Completes a pending remap (collective over the grid's ranks): fills the
/// application's `new_fields` (allocated for the new box, with any
/// padding) from its `old_fields` (the box before the remap), field by
/// field: the cells this rank keeps are copied locally, the cells that
/// change owner travel from the old buffers straight into the new ones. A
/// field may pass the same buffer as old and new when this rank's box and
/// its padding did not change (nothing is copied). Ghost cells of the new
/// fields are not filled: exchange afterwards. Errors are the same on
/// every rank, and nothing is moved then.
#[no_mangle]
pub extern "C" fn nuce_grid_move(
    g: *mut nuce_grid,
    nfields: c_int,
    old_fields: *const nuce_field,
    new_fields: *const nuce_field,
) -> c_int {
    guard(|| {
        // SAFETY: `g` is NULL or a live handle.
        let h = unsafe { grid(g) }.map_err(|_| unreachable_null("the grid", "nuce_grid_move"))?;
        let _w = waiting();
        // SAFETY: NULL or `nfields` readable fields each (contract).
        let fields = caller::refused_or(unsafe {
            raw_fields(nfields, old_fields, "old_fields")
                .and_then(|o| Ok((o, raw_fields(nfields, new_fields, "new_fields")?)))
        });
        let (old, new) = match fields {
            Ok(f) => f,
            Err(e) => return Err(h.grid.refuse_move(e)),
        };
        // SAFETY: the buffers hold the old and new padded blocks (contract;
        // sizes checked against the layouts).
        unsafe { h.grid.move_fields_raw(&old, &new) }.map(|_| ())
    })
}

/// `in_c_words` for the grid's runtime names (kept with the grid's functions).
pub(crate) const GRID_NAMES: [(&str, &str); 8] = [
    (
        "Balancer::maybe_remap(a grid",
        "nuce_grid_maybe_remap(a grid",
    ),
    ("Grid::exchange", "nuce_grid_exchange"),
    ("Grid::move_fields", "nuce_grid_move"),
    ("Grid::gather", "nuce_grid_gather"),
    ("Grid::scatter", "nuce_grid_scatter"),
    ("Grid::with_plan", "nuce_grid_create (its layout step)"),
    ("Balancer::plan3", "nuce_grid_create (the planning step)"),
    ("Grid::start_remap", "nuce_grid_maybe_remap"),
];

#[cfg(test)]
mod tests {
    use crate::in_c_words;

    #[test]
    fn grid_names_are_in_c_words() {
        let m = in_c_words("Grid::move_fields(2 old fields) failed");
        assert!(m.starts_with("nuce_grid_move("), "{m}");
        // A grid's balance point is nuce_grid_maybe_remap, an array's
        // nuce_maybe_remap, a graph's nuce_graph_maybe_remap.
        let m = in_c_words("Balancer::maybe_remap(a grid, iterations 5");
        assert!(m.starts_with("nuce_grid_maybe_remap(a grid,"), "{m}");
        let m = in_c_words("Balancer::maybe_remap(a 2D array, iterations 5");
        assert!(m.starts_with("nuce_maybe_remap(a 2D array,"), "{m}");
        let m = in_c_words("Balancer::maybe_remap(a graph, iterations 5");
        assert!(m.starts_with("nuce_graph_maybe_remap(a graph,"), "{m}");
    }
}
