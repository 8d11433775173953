//! The data steps of a save file: MPI-IO of each rank's cells.
//!
//! In the file, each array (a field, then the cost) is the boxes of the
//! **writing** plan one after another, each box's cells in C order. A save
//! is then one contiguous collective write per array on every rank (MPI-IO
//! writes plain ranges several times faster than through a subarray view:
//! measured in BENCHMARKS.md). A read on another plan takes, for each old
//! box its new box meets, that intersection (a subarray of the old box's
//! block) — one collective read per array through a view of them all; a
//! read on the same plan is one contiguous read.

use std::ffi::{c_void, CString};
use std::os::raw::c_int;
use std::path::Path;

use mpi::ffi;
use mpi::traits::*;

use crate::error::{Error, Result};
use crate::plan::array3d::Box3;
use crate::runtime::comm::{agree, mpi_check};
use crate::runtime::layout::{Dtype, Layout, RawField};

/// Which way [`transfer`] goes.
pub(super) enum Io<'a> {
    /// Write the arrays (and at the root the prefixed header at offset 0)
    /// into a new file.
    Write {
        header: Option<&'a [u8]>,
    },
    Read,
}

/// Where this rank's cells of one array lie in the file: `pieces` (sub-boxes
/// of its box, in file order, each staged in C order after the previous),
/// from `shift` bytes into the array; `view` the file type of the pieces,
/// `None` when they are one contiguous range.
struct Pieces {
    pieces: Vec<Box3>,
    shift: u64,
    view: Option<Dtype>,
}

/// The first cell of each box in its array's region of the file.
pub(super) fn block_starts(boxes: &[Box3]) -> Vec<u64> {
    boxes
        .iter()
        .scan(0u64, |at, b| {
            let here = *at;
            *at += b.volume() as u64;
            Some(here)
        })
        .collect()
}

/// The pieces of this rank's box in a file written with `boxes` (cells of
/// `e` bytes).
fn pieces(layout: &Layout, boxes: &[Box3], e: usize) -> Result<Pieces> {
    let me = layout.local_box();
    let starts = block_starts(boxes);
    let met: Vec<(usize, Box3)> = boxes
        .iter()
        .enumerate()
        .filter_map(|(r, b)| b.intersect(&me).filter(|i| !i.is_empty()).map(|i| (r, i)))
        .collect();
    if let [(r, i)] = met[..] {
        if i == boxes[r] {
            // This rank's box is one whole block of the file.
            return Ok(Pieces {
                pieces: vec![i],
                shift: starts[r] * e as u64,
                view: None,
            });
        }
    }
    let (w, base) = crate::runtime::halo::word_type(e);
    let int = |x: usize| {
        c_int::try_from(x).map_err(|_| {
            Error::invalid_input(format!("a box of {x} words exceeds MPI-IO's int range"))
        })
    };
    let mut parts = Vec::with_capacity(met.len());
    for &(r, i) in &met {
        let o = boxes[r];
        parts.push(Dtype::subarray(
            [int(o.nx)?, int(o.ny)?, int(o.nz * w)?],
            [int(i.nx)?, int(i.ny)?, int(i.nz * w)?],
            [int(i.x - o.x)?, int(i.y - o.y)?, int((i.z - o.z) * w)?],
            base,
        )?);
    }
    let disps: Vec<u64> = met.iter().map(|&(r, _)| starts[r] * e as u64).collect();
    Ok(Pieces {
        pieces: met.iter().map(|&(_, i)| i).collect(),
        shift: 0,
        view: Some(Dtype::structure(&parts, &disps)?.commit()?),
    })
}

/// Writes or reads this rank's cells of each array at the file offsets
/// `offs` (each array's region; the boxes of the writing plan `boxes`
/// one after another) through MPI-IO, collective on `comm`. A local
/// failure still takes part in every collective step (so no rank hangs)
/// and is returned; the caller agrees on it.
///
/// # Safety
/// Each array was checked against `layout` and points to a buffer of its
/// padded length, writable for a read.
pub(super) unsafe fn transfer<C: Communicator>(
    comm: &C,
    layout: &Layout,
    path: &Path,
    offs: &[u64],
    boxes: &[Box3],
    arrays: &[RawField],
    io: Io<'_>,
) -> Result<()> {
    let cpath = CString::new(path.as_os_str().as_encoded_bytes())
        .map_err(|_| Error::invalid_input(format!("{}: a NUL in the path", path.display())))?;
    let mode = match io {
        Io::Write { .. } => ffi::MPI_MODE_CREATE | ffi::MPI_MODE_WRONLY,
        Io::Read => ffi::MPI_MODE_RDONLY,
    } as c_int;
    // SAFETY: reading a handle constant.
    let mut fh = unsafe { ffi::RSMPI_FILE_NULL };
    // SAFETY: a NUL-terminated path, a valid communicator, an out-pointer.
    let opened = mpi_check(
        unsafe {
            ffi::MPI_File_open(
                comm.as_raw(),
                cpath.as_ptr(),
                mode,
                ffi::RSMPI_INFO_NULL,
                &mut fh,
            )
        },
        &format!("MPI_File_open({})", path.display()),
    );
    // MPI_File_open is collective: a failure on one rank is one on all
    // (the same error is agreed on before any data moves).
    agree(comm, 0, opened)?;
    let mut first: Result<()> = Ok(());
    let mut keep = |r: Result<()>| {
        if first.is_ok() {
            first = r;
        }
    };
    if let Io::Write { header: Some(h) } = io {
        // SAFETY: `h` is readable for its length.
        keep(mpi_check(
            unsafe {
                ffi::MPI_File_write_at(
                    fh,
                    0,
                    h.as_ptr().cast(),
                    h.len() as c_int,
                    ffi::RSMPI_UINT8_T,
                    ffi::RSMPI_STATUS_IGNORE,
                )
            },
            "MPI_File_write_at (header)",
        ));
    }
    let me = layout.local_box();
    for (f, &off) in arrays.iter().zip(offs) {
        let (words, base) = crate::runtime::halo::word_type(f.elem_size);
        let count = c_int::try_from(me.volume() * words).map_err(|_| {
            Error::invalid_input(format!(
                "a box of {} cells of {} bytes exceeds MPI-IO's int count",
                me.volume(),
                f.elem_size
            ))
        });
        let plan = match (me.volume() > 0, count) {
            (false, _) => Err(None),
            (true, Ok(count)) => pieces(layout, boxes, f.elem_size)
                .map(|p| (p, count))
                .map_err(Some),
            (true, Err(e)) => Err(Some(e)),
        };
        // The etype is the same on every rank (MPI requires its extent to be).
        let (count, ft, shift, pieces) = match &plan {
            Ok((p, count)) => (
                *count,
                p.view.as_ref().map_or(base, |t| t.0),
                p.shift,
                &p.pieces[..],
            ),
            // An empty box, or a local failure: the collectives with nothing.
            Err(e) => {
                if let Some(e) = e {
                    keep(Err(e.clone()));
                }
                (0, base, 0, &[][..])
            }
        };
        // This rank's cells staged contiguously in the pieces' order.
        let mut staged = vec![
            0u8;
            if count > 0 {
                me.volume() * f.elem_size
            } else {
                0
            }
        ];
        if count > 0 && matches!(io, Io::Write { .. }) {
            // SAFETY: the rows lie inside the checked buffer (contract).
            for_rows(layout, f, pieces, |at, to, len| unsafe {
                std::ptr::copy_nonoverlapping(
                    f.data.cast::<u8>().add(at),
                    staged.as_mut_ptr().add(to),
                    len,
                );
            });
        }
        // SAFETY: committed types (or words), a NUL-terminated representation name.
        keep(mpi_check(
            unsafe {
                ffi::MPI_File_set_view(
                    fh,
                    (off + shift) as ffi::MPI_Offset,
                    base,
                    ft,
                    c"native".as_ptr(),
                    ffi::RSMPI_INFO_NULL,
                )
            },
            "MPI_File_set_view",
        ));
        let mut dummy = 0u8;
        let buf: *mut c_void = if count == 0 {
            (&mut dummy as *mut u8).cast()
        } else {
            staged.as_mut_ptr().cast()
        };
        // SAFETY: `buf` holds `count` words of `base` (or is unused).
        let code = unsafe {
            match io {
                Io::Write { .. } => {
                    ffi::MPI_File_write_all(fh, buf, count, base, ffi::RSMPI_STATUS_IGNORE)
                }
                Io::Read => ffi::MPI_File_read_all(fh, buf, count, base, ffi::RSMPI_STATUS_IGNORE),
            }
        };
        keep(mpi_check(code, "MPI_File_write_all/read_all"));
        if count > 0 && code == ffi::MPI_SUCCESS as c_int && matches!(io, Io::Read) {
            // SAFETY: the rows lie inside the checked, writable buffer (contract).
            for_rows(layout, f, pieces, |at, to, len| unsafe {
                std::ptr::copy_nonoverlapping(
                    staged.as_ptr().add(to),
                    f.data.cast::<u8>().add(at),
                    len,
                );
            });
        }
    }
    if matches!(io, Io::Write { .. }) {
        // SAFETY: an open file; collective.
        keep(mpi_check(
            unsafe { ffi::MPI_File_sync(fh) },
            "MPI_File_sync",
        ));
    }
    // SAFETY: an open file; collective.
    keep(mpi_check(
        unsafe { ffi::MPI_File_close(&mut fh) },
        "MPI_File_close",
    ));
    first.map_err(|e| Error::invalid_input(format!("{}: {e}", path.display())))
}

/// Calls `each(offset in f's padded buffer, offset in the staging buffer,
/// length)` in bytes for each row (along axis 2) of each of `pieces`
/// (sub-boxes of this rank's box, staged one after another, each in C
/// order).
pub(super) fn for_rows(
    layout: &Layout,
    f: &RawField,
    pieces: &[Box3],
    mut each: impl FnMut(usize, usize, usize),
) {
    let me = layout.local_box();
    let d = layout.padded_dims(f.pad);
    let e = f.elem_size;
    let mut to = 0;
    for p in pieces {
        let len = p.nz * e;
        for i in p.x..p.x + p.nx {
            for j in p.y..p.y + p.ny {
                let at = ((i - me.x + f.pad[0]) * d[1] + (j - me.y + f.pad[1])) * d[2]
                    + (p.z - me.z + f.pad[2]);
                each(at * e, to, len);
                to += len;
            }
        }
    }
}
