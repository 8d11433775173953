//! Save files of a grid: its fields, its cost per cell and the
//! application's own state in one portable file, written collectively and
//! read back on **any number of ranks** (restart after a job ends, a node
//! is lost, or on another allocation).
//!
//! * **Write** ([`Grid::save`]): every rank writes its box of every field
//!   with MPI-IO (`MPI_File_write_all` through a subarray view of the
//!   global array: the file holds each field as one global array in C
//!   order, whatever the plan), into `PATH.nuce-tmp`; the root writes the
//!   header; the file is synced, closed and renamed to `PATH` only when
//!   every rank succeeded. A job killed while writing leaves the previous
//!   `PATH` intact.
//! * **Read** ([`SavedGrid::open`], then [`SavedGrid::new_grid`] and
//!   [`SavedGrid::read`]): the root checks the header (magic, format,
//!   its own checksum, the file's length) and broadcasts it; a grid of the
//!   saved shape is planned for *this* run's speeds (so a restart on
//!   another number of ranks, or after a speed change, starts balanced);
//!   each rank reads its new box into the application's buffers, and the
//!   cost per cell, if one was saved, is set on the grid.
//! * **Integrity**: the header holds, per field, a checksum of its cells
//!   that does not depend on the plan (a sum over cells of a hash of the
//!   cell's global index and bytes); a read recomputes it over every rank
//!   and a difference is an error on every rank. A truncated file, another
//!   format, a corrupt header, fields that do not match are the same
//!   error on every rank, never a crash.
//!
//! File layout (format 1): 8 bytes `NUCESAVE`, the format (u32 LE), the
//! header's length (u32 LE) and its FNV-1a hash (u64 LE), the header
//! (bincode), then from [`Header`]'s `data_offset` each field's global
//! array, then the cost (f64 per cell) if saved.

use std::ffi::{c_void, CString};
use std::os::raw::c_int;
use std::path::{Path, PathBuf};
use std::time::Instant;

use mpi::collective::SystemOperation;
use mpi::ffi;
use mpi::traits::*;
use serde::{Deserialize, Serialize};

use super::balancer::Balancer;
use super::clock::waiting;
use super::comm::{agree, decode, encode, fnv1a, mpi_check, root_compute};
use super::layout::{Dtype, Field, Grid, Layout, RawField, MAX_GHOST};
use crate::error::{Error, Result};
use crate::plan::array3d::{Shape3, Stencil};

/// The first bytes of every save file.
const MAGIC: &[u8; 8] = b"NUCESAVE";
/// The file format this nuce writes and reads.
pub const SAVE_FORMAT: u32 = 1;
/// Magic, format, header length, header hash.
const PREFIX: usize = 8 + 4 + 4 + 8;
/// The data start at a multiple of this (file systems' block size).
const ALIGN: u64 = 4096;

/// What a save file says of its grid (after the fixed prefix).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Header {
    /// The nuce version that wrote the file.
    nuce: String,
    /// The grid's global shape.
    shape: Shape3,
    /// The grid's stencil.
    stencil: Stencil,
    /// Bytes per cell of each field, in order.
    elem_sizes: Vec<usize>,
    /// Whether a cost per cell (f64) follows the fields.
    cost: bool,
    /// Ranks that wrote the file.
    ranks: usize,
    /// The application's own bytes.
    user: Vec<u8>,
    /// Where the first field starts.
    data_offset: u64,
    /// Per field (then the cost): the sum of the cells' hashes.
    sums: Vec<u64>,
}

impl Header {
    /// Bytes per cell of every array in the file, the cost last.
    fn arrays(&self) -> Vec<usize> {
        let mut v = self.elem_sizes.clone();
        if self.cost {
            v.push(8);
        }
        v
    }

    /// The file offset of each array, and the file's length.
    fn offsets(&self) -> Result<(Vec<u64>, u64)> {
        let (nx, ny, nz) = self.shape;
        let cells = (nx as u64)
            .checked_mul(ny as u64)
            .and_then(|c| c.checked_mul(nz as u64))
            .ok_or_else(|| Error::invalid_input("save file: the grid's size overflows"))?;
        let mut at = self.data_offset;
        let mut offs = Vec::new();
        for e in self.arrays() {
            offs.push(at);
            at = cells
                .checked_mul(e as u64)
                .and_then(|b| b.checked_add(at))
                .ok_or_else(|| Error::invalid_input("save file: the data's size overflows"))?;
        }
        Ok((offs, at))
    }
}

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

    /// A grid of the saved shape and stencil planned for the balancer's
    /// current speeds ([`Balancer::new_grid`]: measure them first, e.g.
    /// with [`Balancer::measure`], for a balanced restart). Collective on
    /// the balancer's communicator, which may have any number of ranks.
    pub fn new_grid(&self, bal: &mut Balancer) -> Result<Grid> {
        bal.new_grid(self.header.shape, self.header.stencil)
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
        grid.checked_entry(&what, local.as_ref().err())?;
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
            // SAFETY: the fields were checked against the layout (contract),
            // the cost buffer holds the box.
            let io = unsafe { transfer(comm, &layout, &self.path, &offs, &arrays, Io::Read) };
            let io = agree(comm, 0, io);
            io.and_then(|()| {
                let sums = local_sums(&layout, &arrays);
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
        let raw: Vec<RawField> = fields.iter().map(|f| f.raw()).collect();
        let lens: Vec<usize> = fields.iter().map(|f| f.len()).collect();
        // SAFETY: the slices are borrowed for the call, lengths checked.
        unsafe { self.save_checked(path.as_ref(), &raw, Some(&lens), user) }
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
        unsafe { self.save_checked(path.as_ref(), fields, None, user) }
    }

    /// # Safety
    /// See [`Grid::save_raw`].
    unsafe fn save_checked(
        &self,
        path: &Path,
        fields: &[RawField],
        lens: Option<&[usize]>,
        user: &[u8],
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
        } else if user.len() > 64 << 20 {
            Err(Error::invalid_input(format!(
                "{} user bytes: at most 64 MiB",
                user.len()
            )))
        } else {
            self.check_fields_now(fields, lens)
        };
        self.checked_entry(&what, local.as_ref().err())?;
        let comm = self.comm();
        let layout = self.layout();
        let mut cost_values = self
            .cost()
            .filter(|c| c.block() == layout.local_box())
            .map(|c| c.values().to_vec());
        let has_cost = agree(comm, 0, Ok(cost_values.is_some()))?;
        let all_cost = {
            let mut n = 0i32;
            comm.all_reduce_into(&i32::from(has_cost), &mut n, SystemOperation::sum());
            n == comm.size()
        };
        if !all_cost {
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
        let sums = all_sums(comm, &local_sums(layout, &arrays));
        let mut header = Header {
            nuce: env!("CARGO_PKG_VERSION").to_string(),
            shape: layout.plan().shape,
            stencil: layout.stencil(),
            elem_sizes: sizes,
            cost: cost_values.is_some(),
            ranks: comm.size() as usize,
            user: user.to_vec(),
            data_offset: 0,
            sums,
        };
        let head = encode(&header)?;
        header.data_offset = (PREFIX + head.len()) as u64;
        header.data_offset = header.data_offset.div_ceil(ALIGN) * ALIGN;
        let head = encode(&header)?;
        let (offs, len) = header.offsets()?;
        let tmp = temporary(path);
        if comm.rank() == 0 {
            // A temporary file left by a killed save: written anew (not
            // resized: extending a file block by block is faster).
            let _ = std::fs::remove_file(&tmp);
        }
        let prefix = (comm.rank() == 0).then(|| prefixed(&head));
        // SAFETY: the fields were checked against the layout (contract).
        let io = unsafe {
            transfer(
                comm,
                layout,
                &tmp,
                &offs,
                &arrays,
                Io::Write {
                    header: prefix.as_deref(),
                },
            )
        };
        agree(comm, 0, io)?;
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
        agree(comm, 0, renamed)?;
        Ok(SaveStats {
            bytes: len,
            seconds: start.elapsed().as_secs_f64(),
        })
    }
}

/// The file a save writes before its rename.
fn temporary(path: &Path) -> PathBuf {
    let mut s = path.as_os_str().to_owned();
    s.push(".nuce-tmp");
    PathBuf::from(s)
}

/// The fixed prefix and the header.
fn prefixed(head: &[u8]) -> Vec<u8> {
    let mut v = Vec::with_capacity(PREFIX + head.len());
    v.extend_from_slice(MAGIC);
    v.extend_from_slice(&SAVE_FORMAT.to_le_bytes());
    v.extend_from_slice(&(head.len() as u32).to_le_bytes());
    v.extend_from_slice(&fnv1a(head).to_le_bytes());
    v.extend_from_slice(head);
    v
}

/// The root's reading and checking of a save file's header.
fn read_header(path: &Path) -> Result<Header> {
    use std::io::Read;
    let bad = |m: String| Error::invalid_input(format!("save file {}: {m}", path.display()));
    let mut file = std::fs::File::open(path).map_err(|e| bad(format!("cannot open: {e}")))?;
    let size = file
        .metadata()
        .map_err(|e| bad(format!("cannot read: {e}")))?
        .len();
    let mut pre = [0u8; PREFIX];
    file.read_exact(&mut pre)
        .map_err(|_| bad(format!("{size} bytes: too short for a nuce save file")))?;
    if &pre[..8] != MAGIC {
        return Err(bad("not a nuce save file".into()));
    }
    let word = |a: usize| u32::from_le_bytes(pre[a..a + 4].try_into().expect("4 bytes"));
    let format = word(8);
    if format != SAVE_FORMAT {
        return Err(bad(format!(
            "format {format}; this nuce ({}) reads format {SAVE_FORMAT}",
            env!("CARGO_PKG_VERSION")
        )));
    }
    let len = word(12) as u64;
    if PREFIX as u64 + len > size {
        return Err(bad(format!("truncated ({size} bytes, a header of {len})")));
    }
    let mut head = vec![0u8; len as usize];
    file.read_exact(&mut head)
        .map_err(|e| bad(format!("cannot read the header: {e}")))?;
    let hash = u64::from_le_bytes(pre[16..24].try_into().expect("8 bytes"));
    if fnv1a(&head) != hash {
        return Err(bad(
            "the header does not match its checksum (a corrupt file)".into(),
        ));
    }
    let h: Header = decode(&head, 0).map_err(|e| bad(format!("unreadable header: {e}")))?;
    let (_, end) = h.offsets().map_err(|e| bad(e.to_string()))?;
    if h.sums.len() != h.arrays().len() || h.data_offset < PREFIX as u64 + len {
        return Err(bad("an inconsistent header (a corrupt file)".into()));
    }
    if h.stencil.ghost > MAX_GHOST {
        return Err(bad(format!(
            "ghost width {}: a corrupt file",
            h.stencil.ghost
        )));
    }
    if end > size {
        return Err(bad(format!("truncated ({size} bytes of {end})")));
    }
    Ok(h)
}

/// Which way [`transfer`] goes.
enum Io<'a> {
    /// Write the arrays (and at the root the prefixed header at offset 0)
    /// into a new file.
    Write {
        header: Option<&'a [u8]>,
    },
    Read,
}

/// Writes or reads this rank's box of each array at the file offsets
/// `offs` (each a global array in C order) through MPI-IO, collective on
/// `comm`. A local failure still takes part in every collective step (so
/// no rank hangs) and is returned; the caller agrees on it.
///
/// # Safety
/// Each array was checked against `layout` and points to a buffer of its
/// padded length, writable for a read.
unsafe fn transfer<C: Communicator>(
    comm: &C,
    layout: &Layout,
    path: &Path,
    offs: &[u64],
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
        // This rank's cells staged contiguously, one field at a time (one
        // copy of the rows; MPI-IO then sees a contiguous memory buffer).
        let (words, base) = super::halo::word_type(f.elem_size);
        let count = c_int::try_from(me.volume() * words);
        let types = match (me.volume() > 0, count) {
            (false, _) => Err(None),
            (true, Ok(count)) => file_type(layout, f).map(|ft| (ft, count)).map_err(Some),
            (true, Err(_)) => Err(Some(Error::invalid_input(format!(
                "a box of {} cells of {} bytes exceeds MPI-IO's int count",
                me.volume(),
                f.elem_size
            )))),
        };
        let mut staged = vec![
            0u8;
            if types.is_ok() {
                me.volume() * f.elem_size
            } else {
                0
            }
        ];
        let (etype, count, ft) = match &types {
            Ok((ft, count)) => (ft.1, *count, ft.0 .0),
            // An empty box, or a local failure: the collectives with nothing.
            Err(e) => {
                if let Some(e) = e {
                    keep(Err(e.clone()));
                }
                // SAFETY: a handle constant.
                (unsafe { ffi::RSMPI_UINT8_T }, 0, unsafe {
                    ffi::RSMPI_UINT8_T
                })
            }
        };
        if count > 0 && matches!(io, Io::Write { .. }) {
            // SAFETY: the rows lie inside the checked buffer (contract).
            for_rows(layout, f, |at, to, len| unsafe {
                std::ptr::copy_nonoverlapping(
                    f.data.cast::<u8>().add(at),
                    staged.as_mut_ptr().add(to),
                    len,
                );
            });
        }
        // SAFETY: committed types (or bytes), a NUL-terminated representation name.
        keep(mpi_check(
            unsafe {
                ffi::MPI_File_set_view(
                    fh,
                    off as ffi::MPI_Offset,
                    etype,
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
            for_rows(layout, f, |at, to, len| unsafe {
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

/// The file view of `f`'s array: this rank's box in the global array, in
/// the widest words that divide a cell (committed), with that word type.
fn file_type(layout: &Layout, f: &RawField) -> Result<(Dtype, ffi::MPI_Datatype)> {
    let (nx, ny, nz) = layout.plan().shape;
    let b = layout.local_box();
    let (e, base) = super::halo::word_type(f.elem_size);
    let int = |x: usize| {
        c_int::try_from(x).map_err(|_| {
            Error::invalid_input(format!(
                "a grid of {nx}x{ny}x{nz} cells of {} bytes exceeds MPI-IO's int range",
                f.elem_size
            ))
        })
    };
    let sizes = [int(nx)?, int(ny)?, int(nz.saturating_mul(e))?];
    let subs = [int(b.nx)?, int(b.ny)?, int(b.nz * e)?];
    let starts = [int(b.x)?, int(b.y)?, int(b.z * e)?];
    Ok((Dtype::subarray(sizes, subs, starts, base)?.commit()?, base))
}

/// This rank's sums of its cells' hashes, per array.
fn local_sums(layout: &Layout, arrays: &[RawField]) -> Vec<u64> {
    let (_, n1, n2) = layout.plan().shape;
    let b = layout.local_box();
    arrays
        .iter()
        .map(|f| {
            let e = f.elem_size;
            let mut sum = 0u64;
            let row_len = b.nz * e;
            for_rows(layout, f, |at, to, len| {
                // The row's first cell: `to / row_len` rows into the box.
                let r = to / row_len.max(1);
                let g = ((b.x + r / b.ny) * n1 + (b.y + r % b.ny)) * n2 + b.z;
                // SAFETY: the row's cells lie inside the checked buffer.
                let bytes = unsafe { std::slice::from_raw_parts(f.data.cast::<u8>().add(at), len) };
                sum = sum.wrapping_add(row_hash(g as u64, bytes, e));
            });
            sum
        })
        .collect()
}

/// Calls `each(offset in f's padded buffer, offset in the box's cells in C
/// order, length)` in bytes for each row (along axis 2) of this rank's
/// box; nothing for an empty box.
fn for_rows(layout: &Layout, f: &RawField, mut each: impl FnMut(usize, usize, usize)) {
    let b = layout.local_box();
    if b.volume() == 0 {
        return;
    }
    let d = layout.padded_dims(f.pad);
    let e = f.elem_size;
    let len = b.nz * e;
    for i in 0..b.nx {
        for j in 0..b.ny {
            let at = ((i + f.pad[0]) * d[1] + (j + f.pad[1])) * d[2] + f.pad[2];
            each(at * e, (i * b.ny + j) * len, len);
        }
    }
}

/// The sums over every rank (wrapping).
fn all_sums<C: Communicator>(comm: &C, local: &[u64]) -> Vec<u64> {
    // Split in 32-bit halves: a sum of u32s in u64 cannot overflow for
    // fewer than 2^32 ranks, and wrapping is then exact.
    let halves: Vec<u64> = local
        .iter()
        .flat_map(|&s| [s & 0xffff_ffff, s >> 32])
        .collect();
    let mut total = vec![0u64; halves.len()];
    comm.all_reduce_into(&halves[..], &mut total[..], SystemOperation::sum());
    total
        .chunks_exact(2)
        .map(|h| h[0].wrapping_add(h[1].wrapping_shl(32)))
        .collect()
}

/// The sum of the hashes of the cells of `bytes` (cells of `e` bytes, the
/// first at global index `g`): each 8-byte word of a cell (the last one
/// zero-padded) is hashed with its position ([`word_hash`]).
fn row_hash(g: u64, bytes: &[u8], e: usize) -> u64 {
    let words = e.div_ceil(8) as u64;
    let word = |w: &[u8]| {
        let mut b = [0u8; 8];
        b[..w.len()].copy_from_slice(w);
        u64::from_le_bytes(b)
    };
    let mut sum = 0u64;
    if e % 8 == 0 {
        // Words never straddle cells: one run over the row.
        for (q, w) in bytes.chunks_exact(8).enumerate() {
            sum = sum.wrapping_add(word_hash(g * words + q as u64, word(w)));
        }
    } else {
        for (k, cell) in bytes.chunks_exact(e).enumerate() {
            for (q, w) in cell.chunks(8).enumerate() {
                sum = sum.wrapping_add(word_hash((g + k as u64) * words + q as u64, word(w)));
            }
        }
    }
    sum
}

/// The hash of the 8-byte word `w` at position `pos`: for a fixed position
/// a bijection of `w` (xor, an odd multiplier, an xor-shift), so that any
/// change of one word changes the sum.
fn word_hash(pos: u64, w: u64) -> u64 {
    let h = (w ^ pos.wrapping_mul(0x9e37_79b9_7f4a_7c15)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    h ^ (h >> 31)
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_row_hash_depends_on_positions_and_bytes_and_not_on_rows() {
        for e in [1, 3, 8, 12, 24] {
            let bytes: Vec<u8> = (0..6 * e).map(|b| (b * 37 % 251) as u8).collect();
            let whole = row_hash(5, &bytes, e);
            // The same cells cut into two rows elsewhere.
            let cut = row_hash(5, &bytes[..2 * e], e).wrapping_add(row_hash(7, &bytes[2 * e..], e));
            assert_eq!(whole, cut, "e = {e}");
            assert_ne!(whole, row_hash(6, &bytes, e), "e = {e}");
            let mut one = bytes.clone();
            one[e + 1] ^= 0x40;
            assert_ne!(whole, row_hash(5, &one, e), "e = {e}");
        }
    }

    #[test]
    fn a_header_round_trips_and_its_offsets_add_up() {
        let h = Header {
            nuce: "x".into(),
            shape: (2, 3, 4),
            stencil: Stencil::seven(1),
            elem_sizes: vec![8, 3],
            cost: true,
            ranks: 3,
            user: vec![1, 2, 3],
            data_offset: 4096,
            sums: vec![1, 2, 3],
        };
        let (offs, end) = h.offsets().unwrap();
        assert_eq!(offs, vec![4096, 4096 + 24 * 8, 4096 + 24 * 11]);
        assert_eq!(end, 4096 + 24 * 19);
        let bytes = prefixed(&encode(&h).unwrap());
        let dir = std::env::temp_dir().join(format!("nuce-save-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("h.nuce");
        let mut file = bytes.clone();
        file.resize(end as usize, 0);
        std::fs::write(&p, &file).unwrap();
        assert_eq!(read_header(&p).unwrap(), h);
        // Truncated, corrupt, another format, not a save file.
        std::fs::write(&p, &file[..file.len() - 1]).unwrap();
        assert!(read_header(&p)
            .unwrap_err()
            .to_string()
            .contains("truncated"));
        let mut corrupt = file.clone();
        corrupt[PREFIX + 2] ^= 1;
        std::fs::write(&p, &corrupt).unwrap();
        assert!(read_header(&p).unwrap_err().to_string().contains("corrupt"));
        let mut other = file.clone();
        other[8] = 9;
        std::fs::write(&p, &other).unwrap();
        assert!(read_header(&p)
            .unwrap_err()
            .to_string()
            .contains("format 9"));
        std::fs::write(&p, b"hello").unwrap();
        assert!(read_header(&p)
            .unwrap_err()
            .to_string()
            .contains("too short"));
        std::fs::write(&p, [b'x'; 64]).unwrap();
        assert!(read_header(&p)
            .unwrap_err()
            .to_string()
            .contains("not a nuce"));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
