//! The data steps of a save file: MPI-IO of each rank's cells.
//!
//! In the file, each array (a field, then the cost) is the boxes of the
//! **writing** plan one after another, each box's cells in C order. A save
//! is then one contiguous range per array on every rank (MPI-IO
//! writes plain ranges several times faster than through a subarray view:
//! measured in BENCHMARKS.md). A read on another plan takes, for each old
//! box its new box meets, that intersection (a subarray of the old box's
//! block) — one collective read per array through a view of them all; a read
//! on the same plan is one contiguous range per rank, read (as a save
//! writes) by each rank alone, in chunks through a small staging buffer
//! where the checksums are hashed ([`transfer`]).

use std::ffi::{c_void, CString};
use std::os::raw::c_int;
use std::path::Path;

use mpi::ffi;
use mpi::traits::*;

use super::checksum::row_hash;
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

    /// Reads `buf`, elements of `e` bytes, at byte offset `off` of the
    /// default view: this rank's own `MPI_File_read_at` calls of at most
    /// [`STAGE_BYTES`] each (not collective; an empty `buf` does nothing).
    pub(super) fn read_at(&mut self, off: u64, buf: &mut [u8], e: usize) {
        debug_assert!(!self.write);
        // SAFETY: `buf` is writable for its length.
        unsafe { self.at(off, buf.as_mut_ptr(), buf.len(), e) }
    }

    /// Writes `buf` as [`MpiFile::read_at`] reads (`MPI_File_write_at`).
    pub(super) fn write_at(&mut self, off: u64, buf: &[u8], e: usize) {
        debug_assert!(self.write);
        // SAFETY: a file open for writing only reads `buf`, readable for
        // its length.
        unsafe { self.at(off, buf.as_ptr().cast_mut(), buf.len(), e) }
    }

    /// # Safety
    /// `buf` holds `len` bytes, writable when the file is read.
    unsafe fn at(&mut self, off: u64, buf: *mut u8, len: usize, e: usize) {
        let (words, base) = crate::runtime::halo::word_type(e.max(1));
        let step = chunk_cells(e) * e.max(1);
        let mut at = 0;
        while at < len && self.first.is_ok() {
            let n = step.min(len - at);
            let count = (n / e.max(1) * words) as c_int;
            let r = self.call(
                Io::At((off + at as u64) as ffi::MPI_Offset),
                // SAFETY: inside `buf` (the contract).
                unsafe { buf.add(at) }.cast(),
                count,
                base,
            );
            self.keep(r);
            at += n;
        }
    }

    /// One write (`self.write`) or read of `count` words of `base` at
    /// `buf`, as `how` says.
    fn call(
        &mut self,
        how: Io,
        buf: *mut c_void,
        count: c_int,
        base: ffi::MPI_Datatype,
    ) -> Result<()> {
        let span = tracing::debug_span!("save.io").entered();
        // SAFETY: `buf` holds `count` words of `base` (the callers'
        // contract), an open file.
        let code = unsafe {
            let st = ffi::RSMPI_STATUS_IGNORE;
            match (self.write, how) {
                (true, Io::At(o)) => ffi::MPI_File_write_at(self.fh, o, buf, count, base, st),
                (false, Io::At(o)) => ffi::MPI_File_read_at(self.fh, o, buf, count, base, st),
                (true, Io::Next) => ffi::MPI_File_write(self.fh, buf, count, base, st),
                (false, Io::Next) => ffi::MPI_File_read(self.fh, buf, count, base, st),
                (true, Io::All) => ffi::MPI_File_write_all(self.fh, buf, count, base, st),
                (false, Io::All) => ffi::MPI_File_read_all(self.fh, buf, count, base, st),
            }
        };
        drop(span);
        mpi_check(code, "MPI_File_write/read")
    }

    /// Sets the view (collective): from byte `disp`, words of `base`
    /// through the file type `ft`.
    fn set_view(&mut self, disp: u64, base: ffi::MPI_Datatype, ft: ffi::MPI_Datatype) {
        // SAFETY: committed types (or words), a NUL-terminated representation name.
        let code = unsafe {
            ffi::MPI_File_set_view(
                self.fh,
                disp as ffi::MPI_Offset,
                base,
                ft,
                c"native".as_ptr(),
                ffi::RSMPI_INFO_NULL,
            )
        };
        self.keep(mpi_check(code, "MPI_File_set_view"));
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

/// How [`MpiFile::call`] moves data.
#[derive(Clone, Copy)]
enum Io {
    /// This rank alone, at an offset of the view.
    At(ffi::MPI_Offset),
    /// This rank alone, at its file pointer.
    Next,
    /// Collective, at each rank's file pointer.
    All,
}

/// Bytes staged per MPI-IO call of an array's cells (and per call of
/// [`MpiFile::read_at`], [`MpiFile::write_at`]): a staging buffer of this size is reused, warm in the
/// cache, where one of a whole box (tens of MB, fresh pages) cost as much
/// as the read itself (measured in BENCHMARKS.md).
pub(super) const STAGE_BYTES: usize = 256 << 10;

/// Cells of `e` bytes per staged call.
fn chunk_cells(e: usize) -> usize {
    (STAGE_BYTES / e.max(1)).max(1)
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
/// writing plan `boxes` one after another) through MPI-IO, and returns the
/// sums of the hashes of this rank's cells of each array (as
/// [`checksum::row_hash`] adds them up; of the cells read, for a read).
///
/// Per array, a collective `MPI_File_set_view` (this rank's pieces of the
/// file), then calls through a reused staging buffer of [`STAGE_BYTES`],
/// each staged chunk copied to or from the padded buffer row by row and
/// hashed while it is in the cache (one pass over the cells, no buffer of
/// the whole box). The calls are each rank's own (`MPI_File_write`,
/// `MPI_File_read`) when every rank's box is one block of the file (a save;
/// a read on the writing plan), else one collective `MPI_File_read_all` of
/// the whole box per array (staged in a buffer of the box). The file's
/// view is the
/// default again at the end (the root's header goes at byte 0). A local
/// failure still takes part in every collective step (so no rank hangs)
/// and is kept in `file` ([`MpiFile::close`]).
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
) -> Vec<u64> {
    let me = layout.local_box();
    let now = &layout.plan().boxes;
    // Every rank's box one whole block of the file (a save, a read on the
    // writing plan): no rank needs the others.
    let collective = !now.iter().all(|b| b.is_empty() || boxes.contains(b));
    let mut sums = Vec::with_capacity(arrays.len());
    let mut stage = Vec::new();
    for (f, &off) in arrays.iter().zip(offs) {
        let e = f.elem_size;
        let (words, base) = crate::runtime::halo::word_type(e);
        let plan = if me.volume() > 0 {
            pieces(layout, boxes, e).map(Some)
        } else {
            Ok(None)
        };
        // The etype is the same on every rank (MPI requires its extent to be).
        let (ft, shift, pieces) = match &plan {
            Ok(Some(p)) => (
                p.view.as_ref().map_or(base, |t| t.0),
                p.shift,
                &p.pieces[..],
            ),
            // An empty box, or a local failure: the view with nothing.
            Ok(None) | Err(_) => (base, 0, &[][..]),
        };
        if let Err(e) = &plan {
            file.keep(Err(e.clone()));
        }
        file.set_view(off + shift, base, ft);
        let cells: usize = pieces.iter().map(Box3::volume).sum();
        // Through views of several pieces, one collective call of the
        // whole box on every rank (MPI-IO's two-phase read gathers the
        // pieces; many smaller collective calls cost more on oversubscribed
        // ranks); each rank's own calls of a chunk otherwise.
        let (step, calls) = match collective {
            true => (cells.max(1), 1),
            false => (chunk_cells(e), cells.div_ceil(chunk_cells(e))),
        };
        stage.resize(stage.len().max(step.min(cells) * e), 0u8);
        let mut rows = Rows::new(layout, f, pieces);
        let mut sum = 0u64;
        let mut done = 0;
        let mut dummy = 0u64;
        for _ in 0..calls {
            let mut n = if file.first.is_ok() {
                step.min(cells - done)
            } else {
                0
            };
            let count = c_int::try_from(n * words).unwrap_or_else(|_| {
                file.keep(Err(Error::invalid_input(format!(
                    "a box of {n} cells of {e} bytes exceeds MPI-IO's int count"
                ))));
                n = 0;
                0
            });
            if n == 0 && !collective {
                break;
            }
            let chunk = &mut stage[..n * e];
            let buf: *mut c_void = if n == 0 {
                (&mut dummy as *mut u64).cast()
            } else {
                chunk.as_mut_ptr().cast()
            };
            let how = if collective { Io::All } else { Io::Next };
            // SAFETY: the rows lie inside the checked buffer (contract);
            // `buf` holds `n` cells (or is unused).
            unsafe {
                if file.write {
                    sum = sum.wrapping_add(rows.stage(chunk, e, true));
                }
                let r = file.call(how, buf, count, base);
                file.keep(r);
                if !file.write && file.first.is_ok() {
                    sum = sum.wrapping_add(rows.stage(chunk, e, false));
                }
            }
            done += n;
        }
        sums.push(sum);
    }
    // SAFETY: reading handle constants.
    let byte = unsafe { ffi::RSMPI_UINT8_T };
    file.set_view(0, byte, byte);
    sums
}

/// The rows (along axis 2) of pieces of this rank's box (sub-boxes, one
/// after another, each in C order) in a field's padded buffer, consumed
/// chunk by chunk ([`Rows::stage`]); a row a chunk ends in is continued in
/// the next.
struct Rows<'a> {
    /// The padded buffer's dimensions and padding, this rank's box, the
    /// grid's shape, the buffer.
    d: [usize; 3],
    pad: [usize; 3],
    me: Box3,
    shape: (usize, usize, usize),
    data: *mut u8,
    pieces: &'a [Box3],
    /// The piece, row within it (x-major) and cells of that row done.
    piece: usize,
    row: usize,
    done: usize,
}

impl<'a> Rows<'a> {
    fn new(layout: &Layout, f: &RawField, pieces: &'a [Box3]) -> Rows<'a> {
        Rows {
            d: layout.padded_dims(f.pad),
            pad: f.pad,
            me: layout.local_box(),
            shape: layout.plan().shape,
            data: f.data.cast(),
            pieces,
            piece: 0,
            row: 0,
            done: 0,
        }
    }

    /// Copies the next `chunk.len() / e` cells between the padded buffer
    /// and `chunk` (into `chunk` when `to_chunk`, else out of it), row by
    /// row, and returns the sum of their hashes.
    ///
    /// # Safety
    /// The buffer holds the padded box (readable; writable unless
    /// `to_chunk`), and the rows left cover the chunk.
    unsafe fn stage(&mut self, chunk: &mut [u8], e: usize, to_chunk: bool) -> u64 {
        let _span = tracing::debug_span!("save.stage").entered();
        let (_, n1, n2) = self.shape;
        let mut sum = 0u64;
        let mut at = 0;
        while at < chunk.len() {
            let p = self.pieces[self.piece];
            let (i, j) = (p.x + self.row / p.ny, p.y + self.row % p.ny);
            let k = p.z + self.done;
            let cells = (p.nz - self.done).min((chunk.len() - at) / e);
            let cell = ((i - self.me.x + self.pad[0]) * self.d[1] + (j - self.me.y + self.pad[1]))
                * self.d[2]
                + (k - self.me.z + self.pad[2]);
            let len = cells * e;
            // SAFETY: the row lies inside the padded buffer (contract).
            let row = unsafe { std::slice::from_raw_parts_mut(self.data.add(cell * e), len) };
            let part = &mut chunk[at..at + len];
            if to_chunk {
                part.copy_from_slice(row);
            } else {
                row.copy_from_slice(part);
            }
            sum = sum.wrapping_add(row_hash(((i * n1 + j) * n2 + k) as u64, part, e));
            at += len;
            self.done += cells;
            if self.done == p.nz {
                self.done = 0;
                self.row += 1;
                if self.row == p.nx * p.ny {
                    self.row = 0;
                    self.piece += 1;
                }
            }
        }
        sum
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::array3d::{GridPlan3, Stencil};

    #[test]
    fn chunks_that_cut_rows_stage_every_cell_once_and_hash_as_whole_rows() {
        // A 4 x 3 x 5 grid on two ranks; this is rank 1 (x in 2..4), its
        // box read as two pieces (y = 0 and y in 1..3) into 12-byte cells.
        let boxes = vec![
            Box3::from_axes([0, 0, 0], [2, 3, 5]),
            Box3::from_axes([2, 0, 0], [2, 3, 5]),
        ];
        let plan = GridPlan3::new("t", (4, 3, 5), boxes).unwrap();
        let layout = Layout::new(plan, 1, Stencil::seven(1)).unwrap();
        let (e, pad) = (12, [1, 1, 1]);
        let me = layout.local_box();
        let d = layout.padded_dims(pad);
        let len = d[0] * d[1] * d[2] * e;
        let mut src: Vec<u8> = (0..len).map(|b| (b * 31 % 251) as u8).collect();
        let pieces = [
            Box3::from_axes([2, 0, 0], [2, 1, 5]),
            Box3::from_axes([2, 1, 0], [2, 2, 5]),
        ];
        // The pieces' rows in order, each with its hash, and which cells
        // of the padded buffer they are.
        let (mut expect, mut sum, mut inside) = (vec![], 0u64, vec![false; len / e]);
        for p in &pieces {
            for i in p.x..p.x + p.nx {
                for j in p.y..p.y + p.ny {
                    let at = ((i - me.x + 1) * d[1] + (j - me.y + 1)) * d[2] + (p.z - me.z + 1);
                    let row = &src[at * e..(at + p.nz) * e];
                    expect.extend_from_slice(row);
                    sum = sum.wrapping_add(row_hash(((i * 3 + j) * 5 + p.z) as u64, row, e));
                    inside[at..at + p.nz].iter_mut().for_each(|c| *c = true);
                }
            }
        }
        let field = |data: &mut Vec<u8>| RawField {
            data: data.as_mut_ptr().cast(),
            elem_size: e,
            pad,
        };
        for cells in [1, 2, 7, 30] {
            let mut staged = vec![0u8; me.volume() * e];
            let mut rows = Rows::new(&layout, &field(&mut src), &pieces);
            let mut into = 0u64;
            for c in staged.chunks_mut(cells * e) {
                // SAFETY: the buffer holds the padded box; the rows cover it.
                into = into.wrapping_add(unsafe { rows.stage(c, e, true) });
            }
            assert_eq!(staged, expect, "chunks of {cells} cells");
            assert_eq!(into, sum, "chunks of {cells} cells");
            let mut dst = vec![0u8; len];
            let mut rows = Rows::new(&layout, &field(&mut dst), &pieces);
            let mut out = 0u64;
            for c in staged.chunks_mut(cells * e) {
                // SAFETY: as above, the buffer writable.
                out = out.wrapping_add(unsafe { rows.stage(c, e, false) });
            }
            assert_eq!(out, sum, "chunks of {cells} cells");
            for (k, &inn) in inside.iter().enumerate() {
                let want: &[u8] = if inn {
                    &src[k * e..(k + 1) * e]
                } else {
                    &[0; 12]
                };
                assert_eq!(
                    &dst[k * e..(k + 1) * e],
                    want,
                    "cell {k}, chunks of {cells}"
                );
            }
        }
    }
}
