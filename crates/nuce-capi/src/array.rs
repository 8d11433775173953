//! The 2D array of the C API (`nuce_array_*`, `nuce_maybe_remap`): a
//! distributed 2D array on the application's buffers, with nuce's own block
//! only as the hand-over of a new one (see `staged` and `docs/c-api.md`).

use std::ffi::{c_int, c_void};

use mpi::traits::*;
use nuce::{waiting, Error, Rect, Result};

#[cfg(doc)]
use crate::nuce_record_phase;
use crate::staged::{check_elem_size, create_dyn, Init, Staged};
use crate::{
    balancer, buffer, buffer_mut, caller, checked, deref_mut, free_handle, guard, nuce_balancer,
    null, to_usize, unreachable_null,
};

/// Writes `r` as `row, col, rows, cols` into `out[4]`.
///
/// # Safety
/// `out` is NULL or points to 4 writable `int64_t`.
pub(crate) unsafe fn write_rect(r: Option<Rect>, out: *mut i64, rank: c_int) -> Result<()> {
    let r = r.ok_or_else(|| Error::invalid_input(format!("rank {rank} is out of range")))?;
    if out.is_null() {
        return Err(null("out"));
    }
    let v = [r.row, r.col, r.rows, r.cols].map(|x| x as i64);
    // SAFETY: non-null, and 4 writable int64_t (contract).
    unsafe { std::ptr::copy_nonoverlapping(v.as_ptr(), out, 4) };
    Ok(())
}

/// A distributed 2D array (opaque), bound to the balancer that created it:
/// the layout, and the library's hand-over block (see `docs/c-api.md`).
pub struct nuce_array {
    inner: Box<dyn Staged>,
}

/// The array behind a handle.
///
/// # Safety
/// `a` is NULL or a live handle from [`nuce_array_create`] or [`nuce_array_scatter`].
unsafe fn array<'a>(a: *mut nuce_array) -> Result<&'a mut nuce_array> {
    // SAFETY: the caller's contract.
    unsafe { deref_mut(a, "array") }
}

/// Shared body of the two array constructors.
fn new_array(
    b: *mut nuce_balancer,
    (rows, cols, elem_size, ghost): (i64, i64, usize, i64),
    global: Option<(*const c_void, usize)>,
    out: *mut *mut nuce_array,
) -> c_int {
    let call = if global.is_some() {
        "nuce_array_scatter"
    } else {
        "nuce_array_create"
    };
    guard(|| {
        // SAFETY: `out` is NULL or a writable pointer (contract).
        let out = unsafe { out.as_mut() };
        // SAFETY: `b` is NULL or a live handle.
        let h = unsafe { balancer(b) }.map_err(|_| unreachable_null("the balancer", call))?;
        let _w = waiting();
        let root = h.bal.comm().rank() == nuce::ROOT;
        // This rank's own validation: its refusal at the checked entry.
        let [rn, cn] = caller::extent_names();
        let local = to_usize(rows, rn).and_then(|r| {
            let out = out.ok_or_else(|| null("out"))?;
            *out = std::ptr::null_mut();
            let shape = (r, to_usize(cols, cn)?, to_usize(ghost, "ghost")?);
            check_elem_size(elem_size)?;
            let data = match global {
                None => Init::Zero,
                Some((p, len)) => Init::Scatter(if root {
                    let cells = shape.0.saturating_mul(shape.1);
                    // SAFETY: `p` is NULL or `len * elem_size` readable bytes
                    // on the root (contract); checked against rows × cols.
                    Some(unsafe { buffer(p, len, cells, elem_size, "global") }?)
                } else {
                    None
                }),
            };
            Ok((shape, out, data))
        });
        let op = format!(
            "{call}({}, {}ghost {ghost})",
            caller::extents(rows, cols),
            caller::array_elem_size(elem_size)
        );
        let (shape, out, init) = checked(local, |r| h.bal.entry(&op, r))?;
        let inner = create_dyn(&mut h.bal, elem_size, shape, init)?;
        *out = Box::into_raw(Box::new(nuce_array { inner }));
        Ok(())
    })
}

/// Plans a `rows × cols` array of `elem_size`-byte elements (1, 2, 4, 8, 16
/// or 32) for the current speeds and creates it, zero-filled, with a ghost
/// border of width `ghost` (collective; all arguments identical on every
/// rank). A balance point. Copy this rank's block out with
/// [`nuce_array_read`].
#[no_mangle]
pub extern "C" fn nuce_array_create(
    b: *mut nuce_balancer,
    rows: i64,
    cols: i64,
    elem_size: usize,
    ghost: i64,
    out: *mut *mut nuce_array,
) -> c_int {
    new_array(b, (rows, cols, elem_size, ghost), None, out)
}

/// Plans a `rows × cols` array for the current speeds and scatters the
/// root's `global` buffer (`global_len` = rows × cols elements, row-major;
/// read on rank 0 only, may be NULL elsewhere) with a ghost border of width
/// `ghost` (collective; `rows`, `cols`, `elem_size`, `ghost` identical on
/// every rank). A balance point. Copy this rank's block out with
/// [`nuce_array_read`].
#[no_mangle]
pub extern "C" fn nuce_array_scatter(
    b: *mut nuce_balancer,
    rows: i64,
    cols: i64,
    elem_size: usize,
    ghost: i64,
    global: *const c_void,
    global_len: usize,
    out: *mut *mut nuce_array,
) -> c_int {
    new_array(
        b,
        (rows, cols, elem_size, ghost),
        Some((global, global_len)),
        out,
    )
}

/// Frees an array (local; NULL is ignored).
#[no_mangle]
pub extern "C" fn nuce_array_free(a: *mut nuce_array) -> c_int {
    // SAFETY: `a` is NULL or came from an array constructor, freed once (contract).
    unsafe { free_handle(a) }
}

/// Rank `rank`'s rectangle in the array's current layout (local):
/// `out[4] = {row, col, rows, cols}` in global coordinates.
#[no_mangle]
pub extern "C" fn nuce_array_rect(a: *mut nuce_array, rank: c_int, out: *mut i64) -> c_int {
    guard(|| {
        // SAFETY: `a` is NULL or a live handle.
        let a = unsafe { array(a) }?;
        let part = usize::try_from(rank).ok().and_then(|r| a.inner.part(r));
        // SAFETY: `out` is NULL or 4 writable int64_t (contract).
        unsafe { write_rect(part, out, rank) }
    })
}

/// The number of elements of this rank's padded block, `(rows + 2g) ×
/// (cols + 2g)` (local): the length of the buffer the application allocates
/// for it.
#[no_mangle]
pub extern "C" fn nuce_array_padded_len(a: *mut nuce_array, len: *mut usize) -> c_int {
    guard(|| {
        // SAFETY: `a` is NULL or a live handle.
        let a = unsafe { array(a) }?;
        // SAFETY: `len` is NULL or writable (contract).
        *unsafe { deref_mut(len, "len") }? = a.inner.padded_len();
        Ok(())
    })
}

/// Copies this rank's current block, ghost border included, into the
/// application's `padded` buffer of `len` elements (local): after
/// [`nuce_array_create`], [`nuce_array_scatter`] or a remap.
#[no_mangle]
pub extern "C" fn nuce_array_read(a: *mut nuce_array, padded: *mut c_void, len: usize) -> c_int {
    guard(|| {
        // SAFETY: `a` is NULL or a live handle.
        let a = unsafe { array(a) }?;
        let (n, e) = (a.inner.padded_len(), a.inner.elem_size());
        // SAFETY: `padded` is NULL or `len * elem_size` writable bytes.
        let app = unsafe { buffer_mut(padded, len, n, e, caller::padded_name()) }?;
        a.inner.store_all(app);
        Ok(())
    })
}

/// Fills the ghost border of the application's `padded` buffer (`len`
/// elements, this rank's block) with the neighbours' cells (collective over
/// the array's ranks). Ghosts outside the global array are left untouched.
#[no_mangle]
pub extern "C" fn nuce_array_exchange_ghosts(
    a: *mut nuce_array,
    padded: *mut c_void,
    len: usize,
) -> c_int {
    guard(|| {
        // SAFETY: `a` is NULL or a live handle.
        let a = unsafe { array(a) }?;
        // The exchange opens its own communication section (a nested one
        // here would cost a clock reading per call for nothing).
        let (n, e) = (a.inner.padded_len(), a.inner.elem_size());
        // Neighbours only: a wrong buffer is not agreed on through the root
        // first; this rank joins the exchange's escalation instead.
        // SAFETY: `padded` is NULL or `len * elem_size` writable bytes.
        let app = match unsafe { buffer_mut(padded, len, n, e, caller::padded_name()) } {
            Ok(app) => app,
            Err(err) => return Err(a.inner.refuse_exchange(err)),
        };
        a.inner.exchange_ghosts_on(app)
    })
}

/// Gathers the array on rank 0 into `global` (`global_len` = rows × cols
/// elements, row-major; written on rank 0 only, may be NULL elsewhere) from
/// every rank's `padded` buffer of `len` elements (collective).
#[no_mangle]
pub extern "C" fn nuce_array_gather(
    a: *mut nuce_array,
    padded: *const c_void,
    len: usize,
    global: *mut c_void,
    global_len: usize,
) -> c_int {
    guard(|| {
        // SAFETY: `a` is NULL or a live handle.
        let a =
            unsafe { array(a) }.map_err(|_| unreachable_null("the array", "nuce_array_gather"))?;
        let _w = waiting();
        let ((rows, cols), e, n) = (
            a.inner.global_shape(),
            a.inner.elem_size(),
            a.inner.padded_len(),
        );
        let root = a.inner.comm().rank() == 0;
        // SAFETY: `padded` is NULL or `len * elem_size` readable bytes.
        let local = unsafe { buffer(padded, len, n, e, caller::padded_name()) }.and_then(|app| {
            let out = root.then(|| {
                // SAFETY: `global` is NULL or `global_len * elem_size`
                // writable bytes on the root (contract).
                unsafe { buffer_mut(global, global_len, rows * cols, e, "global") }
            });
            Ok((app, out.transpose()?))
        });
        let (app, out) = checked(local, |r| a.inner.entry("nuce_array_gather", r))?;
        a.inner.gather_from(app, 0, out)
    })
}

/// A balance point between phases of `iterations` iterations (collective
/// over the balancer's ranks; `a` made by this balancer): measures this
/// rank's phase (its cells × `iterations` in its compute time since the last
/// balance point — everything outside nuce's calls — unless
/// [`nuce_record_phase`] was called), lets the root decide whether a new
/// layout pays off over the next `iterations` iterations, and if so remaps
/// the array. `padded` (`len` elements) is this rank's current block, read
/// only. `*remapped` is set to 1 when the layout changed (same on every
/// rank): the application then asks [`nuce_array_padded_len`], allocates a
/// buffer of that size, copies the new block into it with
/// [`nuce_array_read`] and exchanges ghosts.
///
/// The balance point of a 2D array (`nuce_array`) only, despite its name
/// without `array_` (kept for existing callers): a grid's is
/// `nuce_grid_maybe_remap`, a graph's `nuce_graph_maybe_remap`.
#[no_mangle]
pub extern "C" fn nuce_maybe_remap(
    b: *mut nuce_balancer,
    a: *mut nuce_array,
    iterations: i64,
    padded: *const c_void,
    len: usize,
    remapped: *mut c_int,
) -> c_int {
    remap(b, a, (iterations, None), (padded, len), remapped)
}

/// [`nuce_maybe_remap`] with another decision horizon: the phase just done
/// had `iterations` iterations, and a remap must pay off within the next
/// `ahead` iterations (e.g. all those left in the run).
#[no_mangle]
pub extern "C" fn nuce_maybe_remap_ahead(
    b: *mut nuce_balancer,
    a: *mut nuce_array,
    iterations: i64,
    ahead: i64,
    padded: *const c_void,
    len: usize,
    remapped: *mut c_int,
) -> c_int {
    remap(b, a, (iterations, Some(ahead)), (padded, len), remapped)
}

/// Shared body of [`nuce_maybe_remap`] (`ahead` = `None`) and
/// [`nuce_maybe_remap_ahead`].
fn remap(
    b: *mut nuce_balancer,
    a: *mut nuce_array,
    (iterations, ahead): (i64, Option<i64>),
    (padded, len): (*const c_void, usize),
    remapped: *mut c_int,
) -> c_int {
    let (call, op) = match ahead {
        None => (
            "nuce_maybe_remap",
            format!("nuce_maybe_remap(iterations {iterations})"),
        ),
        Some(x) => (
            "nuce_maybe_remap_ahead",
            format!("nuce_maybe_remap_ahead(iterations {iterations}, ahead {x})"),
        ),
    };
    guard(|| {
        // SAFETY: `b` is NULL or a live handle.
        let h = unsafe { balancer(b) }.map_err(|_| unreachable_null("the balancer", call))?;
        let _w = waiting();
        // This rank's own validation, its refusal at the checked entry: the
        // array handle (a NULL one is refused on the balancer's ranks), the
        // counts, the output and the buffer.
        let local = (|| {
            // SAFETY: `a` is NULL or a live handle; `remapped` NULL or writable.
            let (a, remapped) = unsafe {
                (
                    deref_mut(a, &format!("the array (in {call})"))?,
                    remapped.as_mut(),
                )
            };
            let iterations = to_usize(iterations, "iterations")?;
            let ahead = to_usize(ahead.unwrap_or(iterations as i64), "ahead")?;
            let r = remapped.ok_or_else(|| null("remapped"))?;
            *r = 0;
            let (n, e) = (a.inner.padded_len(), a.inner.elem_size());
            // SAFETY: `padded` is NULL or `len * elem_size` readable bytes.
            let app = unsafe { buffer(padded, len, n, e, caller::padded_name()) }?;
            Ok((a, iterations, ahead, r, app))
        })();
        let (a, iterations, ahead, remapped, app) = checked(local, |r| h.bal.entry(&op, r))?;
        let decision = a.inner.maybe_remap(&mut h.bal, (iterations, ahead), app)?;
        crate::decision::remember(h, &decision);
        *remapped = c_int::from(decision.remap);
        Ok(())
    })
}
