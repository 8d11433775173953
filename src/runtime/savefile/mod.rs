//! Save files of a grid: its fields, its cost per cell and the
//! application's own state in one portable file, written collectively and
//! read back on **any number of ranks** (restart after a job ends, a node
//! is lost, or on another allocation). Arrays use the grid's file
//! (`arrays`); graphs have a file of their own kind (`graphs`,
//! [`SavedGraph`]), told apart by the first bytes.
//!
//! * **Write** ([`Grid::save`]): every rank writes its box of every field
//!   with MPI-IO, one contiguous range per field written by the rank alone
//!   in chunks (the file holds each field as the writing plan's boxes one
//!   after another, each in C order: [`mpiio`]), into `PATH.nuce-tmp`,
//!   hashing the cells for the checksums as it stages them; the root then
//!   writes the header (with the checksums) at the start; the file is
//!   synced, closed and renamed to `PATH` only when every rank succeeded.
//!   A job killed while writing leaves the previous `PATH` intact.
//! * **Read** ([`SavedGrid::open`], then [`SavedGrid::new_grid`] and
//!   [`SavedGrid::read`]): the root checks the header (magic, format,
//!   its own checksum, the file's length) and broadcasts it; a grid of the
//!   saved shape is planned for *this* run's speeds (so a restart on
//!   another number of ranks, or after a speed change, starts balanced);
//!   each rank reads its new box into the application's buffers (through
//!   a small staging buffer, hashing the cells on the way), and the cost
//!   per cell, if one was saved, is set on the grid.
//! * **Integrity**: the header holds, per field, a checksum of its cells
//!   that does not depend on the plan (a sum over cells of a hash of the
//!   cell's global index and bytes); a read recomputes it over every rank
//!   and a difference is an error on every rank. A truncated file, another
//!   format, a corrupt header, fields that do not match are the same
//!   error on every rank, never a crash.
//!
//! File layout (format 1): 8 bytes `NUCESAVE` (a graph's: `NUCEGRPH`), the format (u32 LE), the
//! header's length (u32 LE) and its FNV-1a hash (u64 LE), the header
//! (bincode, with the writing plan's boxes), then from [`Header`]'s
//! `data_offset` each field's cells box by box, then the cost (f64 per
//! cell) if saved.

use std::path::{Path, PathBuf};
use std::time::Instant;

use mpi::collective::SystemOperation;
use mpi::traits::*;

use super::balancer::{Balancer, SavedSpeeds};
use super::clock::waiting;
use super::comm::{agree, encode, root_compute};
use super::layout::{Field, Grid, RawField};
use checkpoint::speeds_of;

mod arrays;
mod checkpoint;
mod checksum;
mod graphs;
mod header;
mod mpiio;
use crate::error::{Error, Result};
use crate::plan::array3d::{Shape3, Stencil};
pub use checkpoint::Checkpointable;
use checksum::all_sums;
pub use graphs::SavedGraph;
pub use header::SAVE_FORMAT;
use header::{prefixed, read_header, Header, Kind, ALIGN, PREFIX};
use mpiio::{transfer, MpiFile};

/// What [`Grid::save`] wrote.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SaveStats {
    /// Bytes of the file.
    pub bytes: u64,
    /// Seconds from the first rank's entry to the rename, at the root
    /// (the slowest rank's: the call ends with a collective).
    pub seconds: f64,
}

/// A save file opened for a restart (see the module's documentation): the
/// same on every rank of the communicator that opened it.
#[derive(Debug, Clone)]
pub struct SavedGrid {
    path: PathBuf,
    header: Header,
}

impl SavedGrid {
    /// Opens the save file `path` (collective; the same path on every
    /// rank). The root reads and checks its header — a missing file, not a
    /// nuce save file, another format, a corrupt header, a truncated file
    /// — and every rank returns the same result.
    pub fn open<C: Communicator>(comm: &C, path: impl AsRef<Path>) -> Result<SavedGrid> {
        let _w = waiting();
        let path = path.as_ref().to_path_buf();
        let name = path.to_string_lossy().into_owned();
        let _span = tracing::debug_span!("save.open").entered();
        super::comm::check_identical(comm, 0, "save file path", &name)?;
        let header = root_compute(comm, 0, || read_header(&path))?;
        Ok(SavedGrid { path, header })
    }

    /// The saved grid's global shape.
    pub fn shape(&self) -> Shape3 {
        self.header.shape
    }
    /// The saved grid's stencil.
    pub fn stencil(&self) -> Stencil {
        self.header.stencil
    }
    /// Bytes per cell of each saved field, in order.
    pub fn elem_sizes(&self) -> &[usize] {
        &self.header.elem_sizes
    }
    /// Whether a cost per cell was saved ([`SavedGrid::read`] sets it).
    pub fn has_cost(&self) -> bool {
        self.header.cost
    }
    /// The number of ranks that wrote the file.
    pub fn saved_ranks(&self) -> usize {
        self.header.ranks
    }
    /// The nuce version that wrote the file.
    pub fn nuce_version(&self) -> &str {
        &self.header.nuce
    }
    /// The application's own bytes given to [`Grid::save`].
    pub fn user(&self) -> &[u8] {
        &self.header.user
    }
    /// The speed state of the balancer that wrote the file, one entry per
    /// saved rank ([`Grid::checkpoint`]); `None` for a plain
    /// [`Grid::save`] and for files of format 1.
    pub fn speeds(&self) -> Option<&SavedSpeeds> {
        self.header.speeds.as_ref()
    }

    /// A grid of the saved shape and stencil planned for the balancer's
    /// current speeds ([`Grid::new`](crate::Grid::new)). When the balancer knows no
    /// speeds yet, a restart on as many ranks as saved the file starts from
    /// the saved speeds ([`SavedSpeeds::restore`]: the saved plan comes
    /// back, nothing is measured); on another number of ranks, measure them
    /// first (e.g. [`Balancer::measure`]) for a balanced restart, or the
    /// plan is uniform. Collective on the balancer's communicator, which may
    /// have any number of ranks.
    pub fn new_grid(&self, bal: &mut Balancer) -> Result<Grid> {
        bal.restore_if_unmeasured(self.speeds());
        Grid::new(bal, self.header.shape, self.header.stencil)
    }

    /// Reads this rank's box of every saved field into the application's
    /// buffers `fields` (as many as were saved, the same element sizes,
    /// each padded as [`Grid::padded_len`] says; ghost cells are left
    /// untouched: exchange afterwards) and sets the saved cost per cell, if
    /// any, on `grid` (collective on the grid's communicator). Every rank
    /// returns the same error when the grid is not of the saved shape, the
    /// fields do not match, a move is pending, or the data's checksums
    /// differ from the saved ones (a corrupt file; the buffers then hold
    /// what was read).
    pub fn read(&self, grid: &mut Grid, fields: &mut [Field<'_>]) -> Result<()> {
        let raw: Vec<RawField> = fields.iter().map(|f| f.raw()).collect();
        let lens: Vec<usize> = fields.iter().map(|f| f.len()).collect();
        // SAFETY: the slices are borrowed exclusively for the call and
        // their lengths are checked.
        unsafe { self.read_checked(grid, &raw, Some(&lens)) }
    }

    /// [`SavedGrid::read`] on raw fields (the C API).
    ///
    /// # Safety
    /// Each `fields[k].data` points to a writable buffer of
    /// [`Grid::padded_len`]`(fields[k].pad)` cells of `elem_size` bytes.
    pub unsafe fn read_raw(&self, grid: &mut Grid, fields: &[RawField]) -> Result<()> {
        // SAFETY: the caller's contract.
        unsafe { self.read_checked(grid, fields, None) }
    }

    /// # Safety
    /// See [`SavedGrid::read_raw`]; `lens` are the buffers' lengths when known.
    unsafe fn read_checked(
        &self,
        grid: &mut Grid,
        fields: &[RawField],
        lens: Option<&[usize]>,
    ) -> Result<()> {
        let _w = waiting();
        let h = &self.header;
        let what = format!(
            "SavedGrid::read({} fields of {:?}-byte cells from a save of a {:?} grid)",
            fields.len(),
            fields.iter().map(|f| f.elem_size).collect::<Vec<_>>(),
            h.shape
        );
        let local = self.check_read(grid, fields, lens);
        let span = tracing::debug_span!("save.read.entry").entered();
        grid.checked_entry(&what, local.as_ref().err())?;
        drop(span);
        let layout = grid.layout().clone();
        let mut cost = vec![
            0.0f64;
            if h.cost {
                layout.local_box().volume()
            } else {
                0
            }
        ];
        let mut arrays = fields.to_vec();
        if h.cost {
            arrays.push(RawField {
                data: cost.as_mut_ptr().cast(),
                elem_size: 8,
                pad: [0; 3],
            });
        }
        let (offs, _) = h.offsets()?;
        let res = {
            let comm = grid.comm();
            let span = tracing::debug_span!("save.read.open").entered();
            let io = MpiFile::open(comm, &self.path, false).and_then(|mut file| {
                drop(span);
                // SAFETY: the fields were checked against the layout
                // (contract), the cost buffer holds the box.
                let sums = unsafe { transfer(&mut file, &layout, &offs, &h.boxes, &arrays) };
                let _span = tracing::debug_span!("save.read.close").entered();
                file.close().map(|()| sums)
            });
            let io = agree(comm, 0, io);
            io.and_then(|sums| {
                let _span = tracing::debug_span!("save.read.checksum").entered();
                let total = all_sums(comm, &sums);
                let bad: Vec<usize> = (0..total.len()).filter(|&k| total[k] != h.sums[k]).collect();
                if bad.is_empty() {
                    Ok(())
                } else {
                    Err(Error::invalid_input(format!(
                        "save file {}: the data of {} do not match their checksums (a corrupt file)",
                        self.path.display(),
                        describe_arrays(&bad, fields.len())
                    )))
                }
            })
        };
        res?;
        if h.cost {
            grid.set_cost(cost);
        }
        Ok(())
    }

    /// This rank's checks of a read.
    fn check_read(&self, grid: &Grid, fields: &[RawField], lens: Option<&[usize]>) -> Result<()> {
        let h = &self.header;
        if grid.global_shape() != h.shape {
            return Err(Error::shape_mismatch(format!(
                "the grid is {:?}, the save file's {:?}",
                grid.global_shape(),
                h.shape
            )));
        }
        if grid.pending().is_some() {
            return Err(Error::invalid_input(
                "a move is pending on the grid: complete it first",
            ));
        }
        let sizes: Vec<usize> = fields.iter().map(|f| f.elem_size).collect();
        if sizes != h.elem_sizes {
            return Err(Error::shape_mismatch(format!(
                "fields of {sizes:?}-byte cells, the save file has {:?}",
                h.elem_sizes
            )));
        }
        grid.check_fields_now(fields, lens)
    }
}

impl Grid {
    /// Saves the grid's `fields` (this rank's box of each, padded as
    /// [`Grid::padded_len`] says; ghost cells are not saved), its cost per
    /// cell if one is set for the current box, and the application's own
    /// `user` bytes (e.g. its step and time; at most 64 MiB) to the file
    /// `path` (collective; the same path, field count and element sizes on
    /// every rank). See the module's documentation for the file and its
    /// guarantees; [`SavedGrid`] reads it back on any number of ranks.
    /// Every rank returns the same error — a move pending, fields that do
    /// not fit, an I/O failure on any rank — and `path` is then unchanged.
    pub fn save(
        &self,
        path: impl AsRef<Path>,
        fields: &[Field<'_>],
        user: &[u8],
    ) -> Result<SaveStats> {
        self.save_fields(path.as_ref(), fields, user, None)
    }

    /// [`Grid::save`], with `bal`'s speed state when given.
    pub(super) fn save_fields(
        &self,
        path: &Path,
        fields: &[Field<'_>],
        user: &[u8],
        bal: Option<&Balancer>,
    ) -> Result<SaveStats> {
        let raw: Vec<RawField> = fields.iter().map(|f| f.raw()).collect();
        let lens: Vec<usize> = fields.iter().map(|f| f.len()).collect();
        // SAFETY: the slices are borrowed for the call, lengths checked.
        unsafe { self.save_checked(path, &raw, Some(&lens), user, bal) }
    }

    /// [`Grid::save`] on raw fields (the C API).
    ///
    /// # Safety
    /// Each `fields[k].data` points to a readable buffer of
    /// [`Grid::padded_len`]`(fields[k].pad)` cells of `elem_size` bytes.
    pub unsafe fn save_raw(
        &self,
        path: impl AsRef<Path>,
        fields: &[RawField],
        user: &[u8],
    ) -> Result<SaveStats> {
        // SAFETY: the caller's contract.
        unsafe { self.save_checked(path.as_ref(), fields, None, user, None) }
    }

    /// [`Grid::save_raw`], with the speed state of `bal` in the header
    /// when given (gathered after the checked entry).
    ///
    /// # Safety
    /// See [`Grid::save_raw`]; `lens` are the buffers' lengths when known.
    pub(super) unsafe fn save_checked(
        &self,
        path: &Path,
        fields: &[RawField],
        lens: Option<&[usize]>,
        user: &[u8],
        bal: Option<&Balancer>,
    ) -> Result<SaveStats> {
        let _w = waiting();
        let start = Instant::now();
        let name = path.to_string_lossy().into_owned();
        let sizes: Vec<usize> = fields.iter().map(|f| f.elem_size).collect();
        let what = format!(
            "Grid::save({name:?}, {} fields of {sizes:?}-byte cells)",
            fields.len()
        );
        let local = if self.pending().is_some() {
            Err(Error::invalid_input(
                "a move is pending on the grid: complete it before saving",
            ))
        } else {
            check_user(user).and_then(|()| self.check_fields_now(fields, lens))
        };
        self.checked_entry(&what, local.as_ref().err())?;
        let comm = self.comm();
        let speeds = speeds_of(bal, comm)?;
        let layout = self.layout();
        let mut cost_values = self.cost().and_then(|c| c.values_for(layout.local_box()));
        // The cost is saved when every rank has one for its box.
        let mut all_cost = 0i32;
        comm.all_reduce_into(
            &i32::from(cost_values.is_some()),
            &mut all_cost,
            SystemOperation::min(),
        );
        if all_cost == 0 {
            cost_values = None;
        }
        let mut arrays = fields.to_vec();
        if let Some(c) = cost_values.as_mut() {
            arrays.push(RawField {
                data: c.as_mut_ptr().cast(),
                elem_size: 8,
                pad: [0; 3],
            });
        }
        let mut header = Header {
            nuce: env!("CARGO_PKG_VERSION").to_string(),
            shape: layout.plan().shape,
            stencil: layout.stencil(),
            elem_sizes: sizes,
            cost: cost_values.is_some(),
            ranks: comm.size() as usize,
            boxes: layout.plan().boxes.clone(),
            user: user.to_vec(),
            data_offset: 0,
            // Known once the data are written (the same length before).
            sums: vec![0; arrays.len()],
            speeds,
        };
        let head = encode_aligned(&mut header, |h, at| h.data_offset = at)?.len();
        let (offs, len) = header.offsets()?;
        write_file(comm, path, |file| {
            // SAFETY: the fields were checked against the layout (contract).
            let sums = unsafe { transfer(file, layout, &offs, &layout.plan().boxes, &arrays) };
            header.sums = all_sums(comm, &sums);
            if comm.rank() == 0 {
                write_head(file, Kind::Grid, &header, head);
            }
        })?;
        Ok(SaveStats {
            bytes: len,
            seconds: start.elapsed().as_secs_f64(),
        })
    }
}

/// Writes a save file (collective on `comm`): `PATH.nuce-tmp` created
/// anew, `body`'s writes (the data, and the root's header:
/// [`write_head`]), synced and closed; the root renames it to `path` once
/// every rank succeeded. The same error on every rank otherwise, and
/// `path` is then unchanged.
fn write_file<C: Communicator>(
    comm: &C,
    path: &Path,
    body: impl FnOnce(&mut MpiFile),
) -> Result<()> {
    let tmp = temporary(path);
    let span = tracing::debug_span!("save.write.open").entered();
    if comm.rank() == 0 {
        // A temporary file left by a killed save: written anew (not
        // resized: extending a file block by block is faster).
        let _ = std::fs::remove_file(&tmp);
    }
    let written = MpiFile::open(comm, &tmp, true).and_then(|mut file| {
        drop(span);
        body(&mut file);
        let _span = tracing::debug_span!("save.write.close").entered();
        file.close()
    });
    agree(comm, 0, written)?;
    let _span = tracing::debug_span!("save.write.rename").entered();
    let renamed = if comm.rank() == 0 {
        std::fs::rename(&tmp, path).map_err(|e| {
            Error::invalid_input(format!(
                "cannot rename {} to {}: {e}",
                tmp.display(),
                path.display()
            ))
        })
    } else {
        Ok(())
    };
    agree(comm, 0, renamed)
}

/// Writes the fixed prefix of a file of `kind` and the header `h` at byte
/// 0 of `file` (the root's, after the data: the header holds their
/// checksums), which must encode to `len` bytes, as it did when the data's
/// offset was chosen ([`encode_aligned`]; bincode's fixed-width integers).
fn write_head<H: serde::Serialize>(file: &mut MpiFile, kind: Kind, h: &H, len: usize) {
    match encode(h) {
        Ok(head) if head.len() == len => file.write_header(&prefixed(kind, &head)),
        Ok(head) => file.keep(Err(Error::invalid_input(format!(
            "the header grew from {len} to {} bytes",
            head.len()
        )))),
        Err(e) => file.keep(Err(e)),
    }
}

/// The application's bytes of a save: at most 64 MiB.
fn check_user(user: &[u8]) -> Result<()> {
    if user.len() > 64 << 20 {
        return Err(Error::invalid_input(format!(
            "{} user bytes: at most 64 MiB",
            user.len()
        )));
    }
    Ok(())
}

/// The encoded header `h` once `set` has put its data offset: the first
/// multiple of [`ALIGN`] after the fixed prefix and the header.
fn encode_aligned<H: serde::Serialize>(h: &mut H, set: impl Fn(&mut H, u64)) -> Result<Vec<u8>> {
    let head = encode(&*h)?;
    set(h, ((PREFIX + head.len()) as u64).div_ceil(ALIGN) * ALIGN);
    encode(&*h)
}

/// The file a save writes before its rename.
fn temporary(path: &Path) -> PathBuf {
    let mut s = path.as_os_str().to_owned();
    s.push(".nuce-tmp");
    PathBuf::from(s)
}

/// "field 0 and the cost"-style names of arrays.
fn describe_arrays(bad: &[usize], fields: usize) -> String {
    bad.iter()
        .map(|&k| {
            if k < fields {
                format!("field {k}")
            } else {
                "the cost".to_string()
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
}
