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

/// A file open with MPI-IO on every rank of a communicator, with the first
/// local failure of its steps: every rank takes part in every collective
/// step whatever failed before (so no rank hangs), and [`MpiFile::close`]
/// returns that failure (the caller agrees on it).
pub(super) struct MpiFile {
    fh: ffi::MPI_File,
    path: std::path::PathBuf,
    write: bool,
    first: Result<()>,
}

impl MpiFile {
    /// Opens `path` on every rank of `comm` (collective): created for
    /// writing, or read only. A failure on any rank is the same error on
    /// every rank (agreed before any data moves).
    pub(super) fn open<C: Communicator>(comm: &C, path: &Path, write: bool) -> Result<MpiFile> {
        let cpath = CString::new(path.as_os_str().as_encoded_bytes())
            .map_err(|_| Error::invalid_input(format!("{}: a NUL in the path", path.display())));
        let cpath = agree(comm, 0, cpath)?;
        let mode = if write {
            ffi::MPI_MODE_CREATE | ffi::MPI_MODE_WRONLY
        } else {
            ffi::MPI_MODE_RDONLY
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
        agree(comm, 0, opened)?;
        Ok(MpiFile {
            fh,
            path: path.to_path_buf(),
            write,
            first: Ok(()),
        })
    }

    /// Records a step's result (the first failure is kept).
    pub(super) fn keep(&mut self, r: Result<()>) {
        if self.first.is_ok() {
            self.first = r;
        }
    }

    /// Writes `h` at offset 0 (not collective: the root's header).
    pub(super) fn write_header(&mut self, h: &[u8]) {
        // SAFETY: `h` is readable for its length.
        let code = unsafe {
            ffi::MPI_File_write_at(
                self.fh,
                0,
                h.as_ptr().cast(),
                h.len() as c_int,
                ffi::RSMPI_UINT8_T,
                ffi::RSMPI_STATUS_IGNORE,
            )
        };
        self.keep(mpi_check(code, "MPI_File_write_at (header)"));
    }

    /// Writes (`write`) or reads `buf`, elements of `e` bytes, at byte
    /// offset `off` (collective: `MPI_File_write_at_all` or
    /// `MPI_File_read_at_all`; `e` the same on every rank; an empty `buf`
    /// takes part with nothing).
    pub(super) fn at_all(&mut self, off: u64, buf: &mut [u8], e: usize) {
        let (words, base) = crate::runtime::halo::word_type(e.max(1));
        let count = c_int::try_from(buf.len() / e.max(1) * words).map_err(|_| {
            Error::invalid_input(format!(
                "{} bytes exceed MPI-IO's int count of {}-byte words",
                buf.len(),
                e
            ))
        });
        let count = match count {
            Ok(c) => c,
            Err(err) => {
                self.keep(Err(err));
                0
            }
        };
        let mut dummy = 0u64;
        let ptr: *mut c_void = if count == 0 {
            (&mut dummy as *mut u64).cast()
        } else {
            buf.as_mut_ptr().cast()
        };
        // SAFETY: `ptr` holds `count` words of `base` (or is unused); an
        // open file with the default view (byte offsets).
        let code = unsafe {
            if self.write {
                ffi::MPI_File_write_at_all(
                    self.fh,
                    off as ffi::MPI_Offset,
                    ptr,
                    count,
                    base,
                    ffi::RSMPI_STATUS_IGNORE,
                )
            } else {
                ffi::MPI_File_read_at_all(
                    self.fh,
                    off as ffi::MPI_Offset,
                    ptr,
                    count,
                    base,
                    ffi::RSMPI_STATUS_IGNORE,
                )
            }
        };
        self.keep(mpi_check(code, "MPI_File_write_at_all/read_at_all"));
    }

    /// Syncs a written file and closes it (collective); the first local
    /// failure of all its steps.
    pub(super) fn close(mut self) -> Result<()> {
        if self.write {
            // SAFETY: an open file; collective.
            let code = unsafe { ffi::MPI_File_sync(self.fh) };
            self.keep(mpi_check(code, "MPI_File_sync"));
        }
        // SAFETY: an open file; collective.
        let code = unsafe { ffi::MPI_File_close(&mut self.fh) };
        self.keep(mpi_check(code, "MPI_File_close"));
        let path = self.path.display().to_string();
        std::mem::replace(&mut self.first, Ok(()))
            .map_err(|e| Error::invalid_input(format!("{path}: {e}")))
    }
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

/// Writes (a file open for writing) or reads this rank's cells of each
/// array at the file offsets `offs` (each array's region; the boxes of the
/// writing plan `boxes` one after another) through MPI-IO, collective on
/// the file's ranks. A local failure still takes part in every collective
/// step (so no rank hangs) and is kept in `file` ([`MpiFile::close`]).
///
/// # Safety
/// Each array was checked against `layout` and points to a buffer of its
/// padded length, writable for a read.
pub(super) unsafe fn transfer(
    file: &mut MpiFile,
    layout: &Layout,
    offs: &[u64],
    boxes: &[Box3],
    arrays: &[RawField],
) {
    let (fh, write) = (file.fh, file.write);
    let mut keep = |r: Result<()>| file.keep(r);
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
        if count > 0 && write {
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
            if write {
                ffi::MPI_File_write_all(fh, buf, count, base, ffi::RSMPI_STATUS_IGNORE)
            } else {
                ffi::MPI_File_read_all(fh, buf, count, base, ffi::RSMPI_STATUS_IGNORE)
            }
        };
        keep(mpi_check(code, "MPI_File_write_all/read_all"));
        if count > 0 && code == ffi::MPI_SUCCESS as c_int && !write {
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
