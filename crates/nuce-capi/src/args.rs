//! The C API's checks of its arguments: NULL pointers, handle arrays,
//! buffers against their explicit lengths, sizes that must fit `usize`.

use std::ffi::{c_int, c_void};

use nuce::{Error, Result};

use crate::null;

/// `&mut *p`, or an error naming the argument.
///
/// # Safety
/// `p` is NULL or points to a live, exclusively borrowed `T`.
pub(crate) unsafe fn deref_mut<'a, T>(p: *mut T, what: &str) -> Result<&'a mut T> {
    // SAFETY: the caller's contract: NULL or valid and unaliased.
    unsafe { p.as_mut() }.ok_or_else(|| null(what))
}

/// `n` distinct live handles at `ptrs` (an array named `what`; NULL allowed
/// when `n` is 0).
///
/// # Safety
/// `ptrs` is NULL or `n` readable pointers, each NULL or a live handle.
pub(crate) unsafe fn handles<'a, H>(
    n: c_int,
    ptrs: *const *mut H,
    what: &str,
) -> Result<Vec<&'a mut H>> {
    let n = usize::try_from(n)
        .map_err(|_| Error::invalid_input(format!("n{what} = {n}: at least 0")))?;
    let all: &[*mut H] = if n == 0 {
        &[]
    } else if ptrs.is_null() {
        return Err(null(what));
    } else {
        // SAFETY: `n` readable handles (contract).
        unsafe { std::slice::from_raw_parts(ptrs, n) }
    };
    for (k, p) in all.iter().enumerate() {
        if all[..k].contains(p) {
            return Err(Error::invalid_input(format!("{what}[{k}] is given twice")));
        }
    }
    all.iter()
        .enumerate()
        // SAFETY: each NULL or a live, distinct handle (checked above).
        .map(|(k, &p)| unsafe { deref_mut(p, &format!("{what}[{k}]")) })
        .collect()
}

/// The bytes of a buffer of `len` elements of `elem` bytes, checked against
/// the expected number of elements.
///
/// # Safety
/// `p` is NULL or points to `len * elem` readable bytes.
pub(crate) unsafe fn buffer<'a>(
    p: *const c_void,
    len: usize,
    expected: usize,
    elem: usize,
    what: &str,
) -> Result<&'a [u8]> {
    if p.is_null() {
        return Err(null(what));
    }
    if len != expected {
        return Err(Error::shape_mismatch(format!(
            "{what} has {len} elements, {expected} expected"
        )));
    }
    // SAFETY: non-null, and the caller's contract gives `len * elem` bytes.
    Ok(unsafe { std::slice::from_raw_parts(p.cast::<u8>(), len * elem) })
}

/// The `n` entries of an argument array (`n` = 0: none, `p` may be NULL).
///
/// # Safety
/// `p` is NULL or points to `n` readable entries.
pub(crate) unsafe fn entries<'a, T>(p: *const T, n: usize, what: &str) -> Result<&'a [T]> {
    match n {
        0 => Ok(&[]),
        _ if p.is_null() => Err(null(what)),
        // SAFETY: non-null and `n` readable entries (contract).
        _ => Ok(unsafe { std::slice::from_raw_parts(p, n) }),
    }
}

/// [`buffer`], writable.
///
/// # Safety
/// `p` is NULL or points to `len * elem` writable bytes not otherwise borrowed.
pub(crate) unsafe fn buffer_mut<'a>(
    p: *mut c_void,
    len: usize,
    expected: usize,
    elem: usize,
    what: &str,
) -> Result<&'a mut [u8]> {
    // SAFETY: same contract as `buffer`, which checks NULL and the length.
    unsafe { buffer(p, len, expected, elem, what)? };
    // SAFETY: non-null and `len * elem` writable, unaliased bytes (contract).
    Ok(unsafe { std::slice::from_raw_parts_mut(p.cast::<u8>(), len * elem) })
}

pub(crate) fn to_usize(x: i64, what: &str) -> Result<usize> {
    usize::try_from(x).map_err(|_| Error::invalid_input(format!("{what} = {x} is negative")))
}
