//! Save files of grids (`nuce_grid_save`, `nuce_saved_*`): a grid's fields,
//! its cost per cell and the application's own bytes in one portable file,
//! read back on any number of ranks. Built on `nuce::SavedGrid`; the
//! reference is `docs/c-api.md`, section "Save and restart on another
//! number of ranks".

use std::ffi::{c_char, c_int, c_void, CStr};

use nuce::{waiting, Error, Result, SavedGrid};

use crate::grid::{grid, nuce_field, nuce_grid, raw_fields, NUCE_STENCIL_BOX, NUCE_STENCIL_FACES};
use crate::{balancer, checked, free_handle, guard, null, unreachable_null};
use crate::{caller, nuce_balancer};

/// A save file opened for a restart (opaque), from [`nuce_saved_open`].
pub struct nuce_saved {
    saved: SavedGrid,
}

/// A path argument.
///
/// # Safety
/// `p` is NULL or a NUL-terminated string.
pub(crate) unsafe fn path_arg(p: *const c_char) -> Result<String> {
    // SAFETY: the caller's contract.
    unsafe { str_arg(p, "path") }
}

/// A string argument named `what` in errors.
///
/// # Safety
/// `p` is NULL or a NUL-terminated string.
pub(crate) unsafe fn str_arg(p: *const c_char, what: &str) -> Result<String> {
    if p.is_null() {
        return Err(null(what));
    }
    // SAFETY: non-null and NUL-terminated (contract).
    let s = unsafe { CStr::from_ptr(p) };
    s.to_str()
        .map(str::to_owned)
        .map_err(|_| Error::invalid_input(format!("{what} is not UTF-8")))
}

/// Saves the grid's `nfields` fields (this rank's box of each; ghost cells
/// are not saved), its cost per cell if one is set for the current box,
/// and `user_len` bytes of the application's own at `user` (may be NULL
/// when `user_len` is 0; at most 64 MiB) to the file `path` (collective
/// over the grid's ranks; the same path, field count and cell sizes on
/// every rank). The file is written under `path` + `.nuce-tmp` and renamed
/// when every rank succeeded: a job killed while saving leaves the
/// previous file at `path` intact. Errors are the same on every rank, and
/// `path` is unchanged then.
#[no_mangle]
pub extern "C" fn nuce_grid_save(
    g: *mut nuce_grid,
    path: *const c_char,
    nfields: c_int,
    fields: *const nuce_field,
    user: *const c_void,
    user_len: usize,
) -> c_int {
    // SAFETY: the caller's contract (save_grid's).
    unsafe { save_grid(None, g, path, (nfields, fields), (user, user_len)) }
}

/// [`nuce_grid_save`] that also saves the balancer's speed state: every
/// rank's speed, its estimate and noise, and its speed function (collective
/// over the balancer's ranks, which must be the grid's). A restart on as
/// many ranks as saved the file starts from those speeds (the saved plan,
/// nothing measured); on another number they are reported
/// ([`nuce_saved_speeds`]). Errors are the same on every rank (a NULL
/// balancer on some rank included), and `path` is unchanged then.
#[no_mangle]
pub extern "C" fn nuce_grid_checkpoint(
    b: *mut nuce_balancer,
    g: *mut nuce_grid,
    path: *const c_char,
    nfields: c_int,
    fields: *const nuce_field,
    user: *const c_void,
    user_len: usize,
) -> c_int {
    // SAFETY: the caller's contract (save_grid's).
    unsafe { save_grid(Some(b), g, path, (nfields, fields), (user, user_len)) }
}

/// The body of [`nuce_grid_save`] (`b`: `None`) and
/// [`nuce_grid_checkpoint`].
///
/// # Safety
/// `b` NULL or a live balancer, `g` NULL or a live grid, `path` NULL or a
/// string, `fields` NULL or `nfields` fields, `user` NULL or `user_len`
/// bytes.
unsafe fn save_grid(
    b: Option<*mut nuce_balancer>,
    g: *mut nuce_grid,
    path: *const c_char,
    (nfields, fields): (c_int, *const nuce_field),
    (user, user_len): (*const c_void, usize),
) -> c_int {
    let name = if b.is_some() {
        "nuce_grid_checkpoint"
    } else {
        "nuce_grid_save"
    };
    guard(|| {
        // SAFETY: `g` is NULL or a live handle.
        let h = unsafe { grid(g) }.map_err(|_| unreachable_null("the grid", name))?;
        let _w = waiting();
        // SAFETY: NULL or a live balancer; NULL or a string; NULL or
        // `nfields` fields; NULL or `user_len` bytes (contract).
        let args = caller::refused_or(unsafe {
            b.map(|b| balancer(b).map(|hb| &hb.bal))
                .transpose()
                .and_then(|bal| {
                    let p = path_arg(path)?;
                    let f = raw_fields(nfields, fields, "fields")?;
                    Ok((bal, p, f, user_bytes(user, user_len)?))
                })
        });
        let (bal, p, f, u) = match args {
            Ok(a) => a,
            Err(e) => return Err(h.grid.refuse_call("Grid::save", e)),
        };
        // SAFETY: the buffers hold the padded blocks (contract; sizes
        // checked against the layout).
        match bal {
            Some(bal) => unsafe { bal.checkpoint_grid_raw(&h.grid, p, &f, u) },
            None => unsafe { h.grid.save_raw(p, &f, u) },
        }
        .map(|_| ())
    })
}

/// Opens the save file `path` (collective over the balancer's ranks, which
/// may be more or fewer than those that saved it; the same path on every
/// rank) and writes the handle to `*out`. A missing file, not a nuce save
/// file, another format, a corrupt header or a truncated file is the same
/// error on every rank.
#[no_mangle]
pub extern "C" fn nuce_saved_open(
    b: *mut nuce_balancer,
    path: *const c_char,
    out: *mut *mut nuce_saved,
) -> c_int {
    // SAFETY: the caller's contract (the same as open_handle's).
    unsafe {
        open_handle(b, path, out, "nuce_saved_open", |bal, p| {
            Ok(nuce_saved {
                saved: SavedGrid::open(bal.comm(), p)?,
            })
        })
    }
}

/// The body of a save file's `open` call `name`: this rank's path and
/// `out` checked (refused at the checked entry), the handle opened by
/// `open` on the balancer's ranks and written to `*out`.
///
/// # Safety
/// `b` is NULL or a live handle, `path` NULL or a NUL-terminated string,
/// `out` NULL or writable.
pub(crate) unsafe fn open_handle<H>(
    b: *mut nuce_balancer,
    path: *const c_char,
    out: *mut *mut H,
    name: &str,
    open: impl FnOnce(&nuce::Balancer, &str) -> Result<H>,
) -> c_int {
    guard(|| {
        // SAFETY: `b` is NULL or a live handle.
        let h = unsafe { balancer(b) }.map_err(|_| unreachable_null("the balancer", name))?;
        let _w = waiting();
        // SAFETY: NULL or a string; `out` NULL or writable (contract).
        let local = unsafe { path_arg(path) }.and_then(|p| {
            // SAFETY: as above.
            let out = unsafe { out.as_mut() }.ok_or_else(|| null("out"))?;
            *out = std::ptr::null_mut();
            Ok((p, out))
        });
        let (p, out) = checked(local, |r| h.bal.entry(name, r))?;
        *out = Box::into_raw(Box::new(open(&h.bal, &p)?));
        Ok(())
    })
}

/// `user_len` bytes at `user` (NULL allowed when `user_len` is 0).
///
/// # Safety
/// `user` is NULL or `user_len` readable bytes.
pub(crate) unsafe fn user_bytes<'a>(user: *const c_void, user_len: usize) -> Result<&'a [u8]> {
    if user_len == 0 {
        Ok(&[])
    } else if user.is_null() {
        Err(null("user"))
    } else {
        // SAFETY: the caller's contract.
        Ok(unsafe { std::slice::from_raw_parts(user.cast(), user_len) })
    }
}

/// The saved grid (local): its extents `n[3]`, ghost width, stencil
/// ([`NUCE_STENCIL_FACES`] or [`NUCE_STENCIL_BOX`]), number of fields and
/// the number of ranks that saved it. Any output pointer may be NULL.
#[no_mangle]
pub extern "C" fn nuce_saved_grid(
    s: *const nuce_saved,
    n: *mut i64,
    ghost: *mut i64,
    stencil: *mut c_int,
    nfields: *mut c_int,
    saved_ranks: *mut c_int,
) -> c_int {
    guard(|| {
        // SAFETY: `s` is NULL or a live handle.
        let sv = &unsafe { s.as_ref() }.ok_or_else(|| null("saved"))?.saved;
        let (a, b, c) = sv.shape();
        // SAFETY: each output is NULL or writable (contract; `n` holds 3).
        unsafe {
            if !n.is_null() {
                std::slice::from_raw_parts_mut(n, 3)
                    .copy_from_slice(&[a as i64, b as i64, c as i64]);
            }
            if let Some(g) = ghost.as_mut() {
                *g = sv.stencil().ghost as i64;
            }
            if let Some(st) = stencil.as_mut() {
                *st = if sv.stencil().box_stencil {
                    NUCE_STENCIL_BOX
                } else {
                    NUCE_STENCIL_FACES
                };
            }
            if let Some(k) = nfields.as_mut() {
                *k = sv.elem_sizes().len() as c_int;
            }
            if let Some(r) = saved_ranks.as_mut() {
                *r = sv.saved_ranks() as c_int;
            }
        }
        Ok(())
    })
}

/// The speeds of the ranks that wrote a checkpoint (local): `*count` is
/// their number (0 for a file written by [`nuce_grid_save`], or by an older
/// nuce), and the first `min(n, *count)` of them (work units per second, as
/// planned) are written to `speeds` (may be NULL when `n` is 0). On as many
/// ranks as saved the file, [`nuce_saved_grid_create`] starts from them
/// when the balancer knows no speeds yet.
#[no_mangle]
pub extern "C" fn nuce_saved_speeds(
    s: *const nuce_saved,
    n: c_int,
    speeds: *mut f64,
    count: *mut c_int,
) -> c_int {
    // SAFETY: `s` is NULL or a live handle (contract).
    let sv = unsafe { s.as_ref() }.map(|h| h.saved.speeds());
    // SAFETY: the caller's contract (write_speeds').
    unsafe { write_speeds(sv, n, speeds, count) }
}

/// The body of the `nuce_saved_*speeds` calls: `saved` is `None` for a
/// NULL handle, `Some(None)` for a file without speeds.
///
/// # Safety
/// `speeds` is NULL or `n` writable doubles, `count` NULL or writable.
pub(crate) unsafe fn write_speeds(
    saved: Option<Option<&nuce::SavedSpeeds>>,
    n: c_int,
    speeds: *mut f64,
    count: *mut c_int,
) -> c_int {
    guard(|| {
        let saved = saved.ok_or_else(|| null("saved"))?;
        let n = usize::try_from(n).map_err(|_| Error::invalid_input(format!("n = {n}")))?;
        // SAFETY: the caller's contract.
        let count = unsafe { count.as_mut() }.ok_or_else(|| null("count"))?;
        let all = saved.map_or(&[][..], |s| &s.speeds[..]);
        let k = n.min(all.len());
        if k > 0 {
            if speeds.is_null() {
                return Err(null("speeds"));
            }
            // SAFETY: `speeds` holds `n` >= `k` doubles (contract).
            unsafe { std::slice::from_raw_parts_mut(speeds, k) }.copy_from_slice(&all[..k]);
        }
        *count = all.len() as c_int;
        Ok(())
    })
}

/// Bytes per cell of saved field `k` (0-based) in `*elem_size` (local).
#[no_mangle]
pub extern "C" fn nuce_saved_field_size(
    s: *const nuce_saved,
    k: c_int,
    elem_size: *mut usize,
) -> c_int {
    guard(|| {
        // SAFETY: `s` is NULL or a live handle.
        let sv = &unsafe { s.as_ref() }.ok_or_else(|| null("saved"))?.saved;
        let sizes = sv.elem_sizes();
        let e = usize::try_from(k)
            .ok()
            .and_then(|k| sizes.get(k))
            .ok_or_else(|| {
                Error::invalid_input(format!("k = {k}: the file has {} fields", sizes.len()))
            })?;
        // SAFETY: `elem_size` is NULL or writable (contract).
        *unsafe { elem_size.as_mut() }.ok_or_else(|| null("elem_size"))? = *e;
        Ok(())
    })
}

/// The application's own bytes given to [`nuce_grid_save`] (local):
/// `*data` points into the handle (valid until [`nuce_saved_free`]),
/// `*len` is their number.
#[no_mangle]
pub extern "C" fn nuce_saved_user(
    s: *const nuce_saved,
    data: *mut *const c_void,
    len: *mut usize,
) -> c_int {
    guard(|| {
        // SAFETY: `s` is NULL or a live handle.
        let sv = &unsafe { s.as_ref() }.ok_or_else(|| null("saved"))?.saved;
        // SAFETY: outputs NULL or writable (contract).
        let (d, l) = unsafe { (data.as_mut(), len.as_mut()) };
        let (d, l) = (
            d.ok_or_else(|| null("data"))?,
            l.ok_or_else(|| null("len"))?,
        );
        *d = sv.user().as_ptr().cast();
        *l = sv.user().len();
        Ok(())
    })
}

/// Plans a grid of the saved extents and stencil for the balancer's
/// current speeds (measure them first, e.g. with `nuce_measure`, for a
/// balanced restart) and writes its handle to `*out` (collective over the
/// balancer's ranks; a balance point, like [`crate::nuce_grid_create`]).
/// The application then asks its box (`nuce_grid_box`), allocates its
/// fields and calls [`nuce_saved_read`].
#[no_mangle]
pub extern "C" fn nuce_saved_grid_create(
    s: *const nuce_saved,
    b: *mut nuce_balancer,
    out: *mut *mut nuce_grid,
) -> c_int {
    // SAFETY: the caller's contract (the same as create_handle's).
    unsafe {
        create_handle(s, b, out, "nuce_saved_grid_create", |sv, bal| {
            Ok(nuce_grid {
                grid: sv.saved.new_grid(bal)?,
            })
        })
    }
}

/// The body of a restart's `create` call `name` from the opened file
/// `s`: this rank's `s` and `out` checked (refused at the checked entry),
/// the handle made by `make` on the balancer's ranks and written to
/// `*out`.
///
/// # Safety
/// `s` and `b` are NULL or live handles, `out` NULL or writable.
pub(crate) unsafe fn create_handle<S, H>(
    s: *const S,
    b: *mut nuce_balancer,
    out: *mut *mut H,
    name: &str,
    make: impl FnOnce(&S, &mut nuce::Balancer) -> Result<H>,
) -> c_int {
    guard(|| {
        // SAFETY: `b` is NULL or a live handle.
        let h = unsafe { balancer(b) }.map_err(|_| unreachable_null("the balancer", name))?;
        let _w = waiting();
        // SAFETY: `s` NULL or a live handle; `out` NULL or writable (contract).
        let local = unsafe { s.as_ref() }
            .ok_or_else(|| null("saved"))
            .and_then(|sv| {
                // SAFETY: as above.
                let out = unsafe { out.as_mut() }.ok_or_else(|| null("out"))?;
                *out = std::ptr::null_mut();
                Ok((sv, out))
            });
        let (sv, out) = checked(local, |r| h.bal.entry(name, r))?;
        *out = Box::into_raw(Box::new(make(sv, &mut h.bal)?));
        Ok(())
    })
}

/// Reads this rank's box of every saved field into the application's
/// `nfields` fields (the same count and cell sizes as saved, any padding;
/// ghost cells are left untouched: exchange afterwards) and sets the saved
/// cost per cell, if any, on the grid (collective over the grid's ranks).
/// A grid of another shape, fields that do not match, a pending move, or
/// data whose checksums differ from the saved ones (a corrupt file) are
/// the same error on every rank.
#[no_mangle]
pub extern "C" fn nuce_saved_read(
    s: *const nuce_saved,
    g: *mut nuce_grid,
    nfields: c_int,
    fields: *const nuce_field,
) -> c_int {
    guard(|| {
        // SAFETY: `g` is NULL or a live handle.
        let h = unsafe { grid(g) }.map_err(|_| unreachable_null("the grid", "nuce_saved_read"))?;
        let _w = waiting();
        // SAFETY: `s` NULL or live; NULL or `nfields` fields (contract).
        let args = caller::refused_or(unsafe {
            s.as_ref()
                .ok_or_else(|| null("saved"))
                .and_then(|sv| Ok((sv, raw_fields(nfields, fields, "fields")?)))
        });
        let (sv, f) = match args {
            Ok(a) => a,
            Err(e) => return Err(h.grid.refuse_call("SavedGrid::read", e)),
        };
        // SAFETY: the buffers hold the padded blocks, writable (contract;
        // sizes checked against the layout).
        unsafe { sv.saved.read_raw(&mut h.grid, &f) }
    })
}

/// Frees a save-file handle (local; NULL is ignored).
#[no_mangle]
pub extern "C" fn nuce_saved_free(s: *mut nuce_saved) -> c_int {
    // SAFETY: `s` is NULL or came from nuce_saved_open, freed once (contract).
    unsafe { free_handle(s) }
}

/// `in_c_words` for the save files' runtime names.
pub(crate) const SAVE_NAMES: [(&str, &str); 3] = [
    ("Grid::save", "nuce_grid_save"),
    ("SavedGrid::read", "nuce_saved_read"),
    ("SavedGrid::open", "nuce_saved_open"),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_null_or_bad_path_is_an_error() {
        // SAFETY: NULL, and a NUL-terminated literal.
        unsafe {
            assert!(path_arg(std::ptr::null()).is_err());
            assert_eq!(path_arg(c"a.nuce".as_ptr()).unwrap(), "a.nuce");
        }
    }
}
