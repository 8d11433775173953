//! Grids on the application's own buffers: the layout of a 2D or 3D grid
//! ([`Layout`]: this rank's box, its neighbours and the cells each side
//! sends) and the distributed grid handle ([`Grid`]) whose ghost exchanges
//! and remaps act **in place on buffers the application owns**.
//!
//! A grid is `n0 × n1 × n2` cells tiled by a [`GridPlan3`] (one box per
//! rank); a 2D grid is one with `n0 = 1`. A *field* is one buffer of the
//! application holding this rank's box plus its own padding: `pad[a]` halo
//! cells on each side along axis `a` (at least the ghost width along every
//! axis of extent > 1; any padding along an axis of extent 1), cells of
//! `elem_size` bytes (several components of a cell = one bigger element),
//! C order (axis 2 fastest). The cell at global `(i, j, k)` is element
//!
//! ```text
//! ((i − lo0 + pad0)·d1 + (j − lo1 + pad1))·d2 + (k − lo2 + pad2),   d_a = size_a + 2·pad_a
//! ```
//!
//! of the buffer, `lo`/`size` the rank's box; the buffer holds `d0·d1·d2`
//! elements ([`Layout::padded_len`]; 0 for a rank with an empty box).
//! Fortran codes reverse the axes (their first index is the fastest).
//!
//! * **Exchange** ([`Grid::exchange`], [`Grid::exchange_begin`] /
//!   [`Exchange::end`]): one message to and from each neighbour, each an MPI
//!   derived datatype (per field a subarray of the region, combined over
//!   the fields into one struct type) built once per (layout, fields) and
//!   cached: no staging copy, no copy loop. The messages carry the halo
//!   protocol of [`super::halo`] (tag = call fingerprint + sequence; a
//!   neighbour at another exchange — other field count, element sizes,
//!   stencil — or a skipped exchange escalates to a checkpoint, and every
//!   rank involved returns the same error).
//! * **Remap**: a [`Grid`] is [`Rebalance`](super::balancer::Rebalance):
//!   when [`Balancer::maybe_remap`](super::balancer::Balancer::maybe_remap)
//!   decides to remap, the grid keeps the old and the new plan (*pending*);
//!   the application asks its new box ([`Grid::local_box`]), allocates new
//!   buffers and calls [`Grid::move_fields`] (collective), which copies
//!   locally the cells it keeps and sends only the cells that change owner,
//!   straight from the old buffers into the new ones. Exchanges are refused
//!   while a move is pending.
//! * **Cost per cell** ([`Grid::set_cost`], [`Grid::set_cost_with`],
//!   [`Grid::clear_cost`]): cells that do unequal work are balanced by
//!   `Σ cost / speed` instead of cell counts, by the same mechanism as the
//!   Rust containers' ([`super::cost`]). The cost is of this rank's box
//!   (no padding) and does not follow a move: set it again for the new box.
//!
//! ```no_run
//! # fn main() -> nuce::Result<()> {
//! use nuce::Field;
//! use nuce::plan::array3d::Stencil;
//! let universe = mpi::initialize().unwrap();
//! let mut bal = nuce::Balancer::new(&universe.world())?;
//! let mut grid = bal.new_grid((32, 32, 32), Stencil::seven(1))?;
//! let pad = [1, 1, 1];
//! let mut u = vec![0.0f64; grid.padded_len(pad)?];
//! for _phase in 0..3 {
//!     for _it in 0..10 {
//!         grid.exchange(&mut [Field::new(&mut u, pad)])?;
//!         // ... update this rank's cells of u ...
//!     }
//!     if bal.maybe_remap(&mut grid, 10)?.decision.remap {
//!         let mut v = vec![0.0f64; grid.padded_len(pad)?]; // the new box
//!         grid.move_fields(&[Field::new(&mut u, pad)], &mut [Field::new(&mut v, pad)])?;
//!         u = v;
//!     }
//! }
//! # Ok(()) }
//! ```

use std::ffi::c_void;
use std::marker::PhantomData;
use std::mem::size_of;
use std::os::raw::c_int;
use std::rc::Rc;
use std::time::Instant;

use mpi::ffi;
use mpi::topology::SimpleCommunicator;
use mpi::traits::*;

use super::clock::{polling, waiting, Waiting};
use super::comm::{agree, check_identical, mpi_check};
use super::cost::{cost_methods_3d, CostField, CostGrid};
use super::halo::{self, Message, Posted};
use super::object::{global_stats, migration_volume3, next_call, MoveStats, OwnComm};
use super::tags::GRID_MOVE;
use super::watchdog::Checkpoints;
use crate::error::{Error, Result};
use crate::plan::array3d::{Box3, GridPlan3, Shape3, Stencil};

/// Largest ghost width a [`Layout`] accepts.
pub const MAX_GHOST: usize = 4;

/// Plain data that MPI may overwrite with any bytes: integers, floats and
/// arrays of them (a cell of several components).
///
/// # Safety
/// Every bit pattern of `size_of::<Self>()` bytes is a valid value, and the
/// type has no padding bytes nor pointers.
pub unsafe trait Plain: Copy + 'static {}

macro_rules! plain {
    ($($t:ty),*) => { $(
        // SAFETY: a primitive number: every bit pattern is valid, no padding.
        unsafe impl Plain for $t {}
    )* };
}
plain!(u8, i8, u16, i16, u32, i32, u64, i64, u128, i128, f32, f64);
// SAFETY: an array of plain values has no padding and every bit pattern valid.
unsafe impl<T: Plain, const N: usize> Plain for [T; N] {}

/// A field as the raw API takes it (the C API's `nuce_field`): the address
/// of the application's buffer, its element size in bytes and its padding
/// per axis (layout in the module's documentation).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct RawField {
    /// Start of the buffer (element 0 of the padded block).
    pub data: *mut c_void,
    /// Bytes per cell (≥ 1).
    pub elem_size: usize,
    /// Halo cells allocated on each side, per axis.
    pub pad: [usize; 3],
}

/// A field of the safe API: the application's slice with its padding.
#[derive(Debug)]
pub struct Field<'a> {
    raw: RawField,
    len: usize,
    _buf: PhantomData<&'a mut [u8]>,
}

impl<'a> Field<'a> {
    /// The slice `data` (this rank's padded block, as many cells as
    /// [`Grid::padded_len`] gives for `pad`) with `pad` halo cells on each
    /// side per axis. The length is checked by every call that takes it.
    pub fn new<T: Plain>(data: &'a mut [T], pad: [usize; 3]) -> Self {
        Field {
            raw: RawField {
                data: data.as_mut_ptr().cast(),
                elem_size: size_of::<T>(),
                pad,
            },
            len: data.len(),
            _buf: PhantomData,
        }
    }

    /// The raw description of the field.
    pub fn raw(&self) -> RawField {
        self.raw
    }

    /// The slice's length in cells.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the slice is empty (a rank with an empty box).
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

/// The cells this rank exchanges with one neighbour (global coordinates).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Region {
    /// The neighbour's rank.
    pub rank: usize,
    /// This rank's cells the neighbour reads (sent).
    pub send: Box3,
    /// The neighbour's cells this rank reads (received into its padding).
    pub recv: Box3,
}

/// The layout of a grid on one rank: the plan, this rank's box, the
/// stencil, and per neighbour the cells sent and received
/// ([`GridPlan3::halo_pairs`]), built once per plan.
#[derive(Debug, Clone, PartialEq)]
pub struct Layout {
    plan: GridPlan3,
    rank: usize,
    stencil: Stencil,
    regions: Vec<Region>,
}

impl Layout {
    /// The layout of `rank`'s box of `plan` for `stencil` (ghost width 0 to
    /// [`MAX_GHOST`], at most every extent > 1 of the grid). `O(p)`.
    pub fn new(plan: GridPlan3, rank: usize, stencil: Stencil) -> Result<Self> {
        check_plan(&plan, stencil)?;
        if rank >= plan.len() {
            return Err(Error::shape_mismatch(format!(
                "rank {rank} of a plan of {} parts",
                plan.len()
            )));
        }
        let regions = plan
            .halo_pairs(rank, stencil)
            .into_iter()
            .map(|(q, send, recv)| Region {
                rank: q,
                send,
                recv,
            })
            .collect();
        Ok(Layout {
            plan,
            rank,
            stencil,
            regions,
        })
    }

    /// The plan.
    pub fn plan(&self) -> &GridPlan3 {
        &self.plan
    }
    /// This rank.
    pub fn rank(&self) -> usize {
        self.rank
    }
    /// The stencil (kind and ghost width).
    pub fn stencil(&self) -> Stencil {
        self.stencil
    }
    /// This rank's box (global coordinates; empty for a rank without cells).
    pub fn local_box(&self) -> Box3 {
        self.plan.boxes[self.rank]
    }
    /// The neighbours and the cells exchanged with each, in rank order.
    pub fn regions(&self) -> &[Region] {
        &self.regions
    }
    /// The neighbours' ranks, ascending.
    pub fn neighbours(&self) -> Vec<usize> {
        self.regions.iter().map(|r| r.rank).collect()
    }

    /// The least padding a field needs per axis: the ghost width along the
    /// axes of extent > 1, 0 along an axis of extent 1 (a 2D grid's axis 0).
    pub fn required_pad(&self) -> [usize; 3] {
        [0, 1, 2].map(|a| {
            if self.plan.extent(a) > 1 {
                self.stencil.ghost
            } else {
                0
            }
        })
    }

    /// Extents of this rank's block with `pad` cells each side (`[0; 3]`
    /// for an empty box).
    pub fn padded_dims(&self, pad: [usize; 3]) -> [usize; 3] {
        let b = self.local_box();
        if b.is_empty() {
            [0; 3]
        } else {
            [0, 1, 2].map(|a| b.len(a).saturating_add(pad[a].saturating_mul(2)))
        }
    }

    /// Number of cells of this rank's buffer with `pad` cells each side.
    /// Errors: a padding below [`Layout::required_pad`], a size that overflows.
    pub fn padded_len(&self, pad: [usize; 3]) -> Result<usize> {
        let need = self.required_pad();
        if let Some(a) = (0..3).find(|&a| pad[a] < need[a]) {
            return Err(Error::invalid_input(format!(
                "padding {pad:?} is below the ghost width {} along axis {a}",
                self.stencil.ghost
            )));
        }
        let d = self.padded_dims(pad);
        d[0].checked_mul(d[1])
            .and_then(|x| x.checked_mul(d[2]))
            .filter(|&x| x <= isize::MAX as usize)
            .ok_or_else(|| Error::invalid_input(format!("a block of {d:?} cells overflows")))
    }

    /// Checks that a block of cells of `elem_size` bytes padded by `pad`
    /// fits this layout's datatypes (sizes and MPI's count range).
    pub(crate) fn check_block(&self, elem_size: usize, pad: [usize; 3]) -> Result<()> {
        let f = RawField {
            data: std::ptr::NonNull::<u8>::dangling().as_ptr().cast(),
            elem_size,
            pad,
        };
        self.check_field(0, &f, None)
    }

    /// Checks field `k` against this layout: element size, padding, MPI's
    /// count range, a non-NULL buffer for a non-empty box, and the length
    /// when it is known.
    fn check_field(&self, k: usize, f: &RawField, len: Option<usize>) -> Result<()> {
        let what = |m: String| Error::invalid_input(format!("field {k}: {m}"));
        if f.elem_size == 0 {
            return Err(what("elem_size is 0".into()));
        }
        let need = self.padded_len(f.pad).map_err(|e| what(e.to_string()))?;
        if need
            .checked_mul(f.elem_size)
            .is_none_or(|b| b > isize::MAX as usize)
        {
            return Err(what(format!(
                "{need} cells of {} bytes overflow",
                f.elem_size
            )));
        }
        let d = self.padded_dims(f.pad);
        if d[0].max(d[1]).max(d[2].saturating_mul(f.elem_size)) > c_int::MAX as usize {
            return Err(what(format!(
                "a block of {d:?} cells of {} bytes exceeds MPI's int range",
                f.elem_size
            )));
        }
        if let Some(len) = len.filter(|&l| l != need) {
            return Err(Error::shape_mismatch(format!(
                "field {k} has {len} cells, this rank's box {:?} with padding {:?} needs {need}",
                self.local_box(),
                f.pad
            )));
        }
        if need > 0 && f.data.is_null() {
            return Err(what("data is NULL".into()));
        }
        Ok(())
    }

    /// The MPI datatype of `region` (global coordinates, inside the padded
    /// block) of field `f`: a subarray of bytes.
    fn subarray(&self, f: &RawField, region: &Box3) -> Result<Dtype> {
        let me = self.local_box();
        let d = self.padded_dims(f.pad);
        let int = |x: usize| x as c_int; // in range: checked by check_field
                                         // The cell as `e` of the widest unsigned words that divide it: MPI
                                         // packs runs of words much faster than runs of bytes.
        let (e, base) = super::halo::word_type(f.elem_size);
        let sizes = [int(d[0]), int(d[1]), int(d[2] * e)];
        let subs = [int(region.nx), int(region.ny), int(region.nz * e)];
        let at = [0, 1, 2].map(|a| region.lo(a) + f.pad[a] - me.lo(a));
        let starts = [int(at[0]), int(at[1]), int(at[2] * e)];
        Dtype::subarray(sizes, subs, starts, base)
    }

    /// The datatypes of a ghost exchange of `fields` (each checked against
    /// this layout by the caller): per neighbour, what is sent and what is
    /// received, relative to the first field's buffer.
    fn exchange_types(&self, fields: &[RawField]) -> Result<PeerTypes> {
        let offs = offsets(fields);
        self.regions
            .iter()
            .map(|r| {
                Ok((
                    r.rank as i32,
                    self.combined(fields, &offs, &r.send)?,
                    self.combined(fields, &offs, &r.recv)?,
                ))
            })
            .collect()
    }

    /// One committed datatype for `region` of every field, displaced by
    /// `offsets` (bytes from the first field's buffer).
    fn combined(&self, fields: &[RawField], offsets: &[isize], region: &Box3) -> Result<Dtype> {
        if let ([f], [0]) = (fields, offsets) {
            // One field at its own address: its subarray as it is (a
            // struct around it costs MPI's packing about 0.06 µs a message).
            return self.subarray(f, region)?.commit();
        }
        let parts = fields
            .iter()
            .map(|f| self.subarray(f, region))
            .collect::<Result<Vec<Dtype>>>()?;
        let disps: Vec<u64> = offsets.iter().map(|&o| o as u64).collect();
        Dtype::structure(&parts, &disps)?.commit()
    }
}

/// Checks a plan and stencil for a layout (every rank can alone).
fn check_plan(plan: &GridPlan3, stencil: Stencil) -> Result<()> {
    plan.validate()?;
    let g = stencil.ghost;
    if g > MAX_GHOST {
        return Err(Error::invalid_input(format!(
            "ghost width {g}: 0 to {MAX_GHOST} supported"
        )));
    }
    if let Some(a) = (0..3).find(|&a| plan.extent(a) > 1 && g > plan.extent(a)) {
        return Err(Error::invalid_input(format!(
            "ghost width {g} is wider than the grid's extent {} along axis {a}",
            plan.extent(a)
        )));
    }
    Ok(())
}

/// An owned MPI datatype, freed on drop (MPI frees it once the messages
/// using it complete).
#[derive(Debug)]
pub(crate) struct Dtype(pub(crate) ffi::MPI_Datatype);

impl Dtype {
    fn null() -> Self {
        // SAFETY: reading an MPI handle constant.
        Dtype(unsafe { ffi::RSMPI_DATATYPE_NULL })
    }

    /// `MPI_Type_create_subarray` in C order on `base` (three axes; the
    /// caller keeps the numbers in range), not committed.
    pub(crate) fn subarray(
        sizes: [c_int; 3],
        subs: [c_int; 3],
        starts: [c_int; 3],
        base: ffi::MPI_Datatype,
    ) -> Result<Dtype> {
        let mut t = Dtype::null();
        // SAFETY: three sizes, subsizes and starts; `t.0` is an out-pointer.
        let code = unsafe {
            ffi::MPI_Type_create_subarray(
                3,
                sizes.as_ptr(),
                subs.as_ptr(),
                starts.as_ptr(),
                ffi::MPI_ORDER_C as c_int,
                base,
                &mut t.0,
            )
        };
        mpi_check(code, "MPI_Type_create_subarray")?;
        Ok(t)
    }

    /// `MPI_Type_create_struct` of one of each of `parts` at byte
    /// displacements `disps` (not committed).
    pub(crate) fn structure(parts: &[Dtype], disps: &[u64]) -> Result<Dtype> {
        let lens: Vec<c_int> = vec![1; parts.len()];
        let disps: Vec<ffi::MPI_Aint> = disps.iter().map(|&o| o as ffi::MPI_Aint).collect();
        let types: Vec<ffi::MPI_Datatype> = parts.iter().map(|t| t.0).collect();
        let mut t = Dtype::null();
        // SAFETY: `parts.len()` lengths, displacements and types; out-pointer.
        let code = unsafe {
            ffi::MPI_Type_create_struct(
                parts.len() as c_int,
                lens.as_ptr(),
                disps.as_ptr(),
                types.as_ptr(),
                &mut t.0,
            )
        };
        mpi_check(code, "MPI_Type_create_struct")?;
        Ok(t)
    }

    /// Commits the type.
    pub(crate) fn commit(mut self) -> Result<Dtype> {
        // SAFETY: a created, not yet freed type.
        mpi_check(
            unsafe { ffi::MPI_Type_commit(&mut self.0) },
            "MPI_Type_commit",
        )?;
        Ok(self)
    }
}

impl Drop for Dtype {
    fn drop(&mut self) {
        // SAFETY: reading an MPI handle constant; freeing a type this
        // object owns, while MPI runs.
        unsafe {
            if self.0 != ffi::RSMPI_DATATYPE_NULL
                && mpi::environment::is_initialized()
                && !mpi::environment::is_finalized()
            {
                ffi::MPI_Type_free(&mut self.0);
            }
        }
    }
}

/// The datatypes of one exchange of a field set: per neighbour, its rank,
/// what is sent and what is received.
type PeerTypes = Vec<(i32, Dtype, Dtype)>;

/// The ghost exchange of one field on a layout: one subarray datatype per
/// neighbour and direction, and the bytes it moves. What the Rust arrays
/// keep to exchange on their own blocks (or on an application's buffer of
/// the same layout) with no packing.
#[derive(Clone)]
pub(crate) struct HaloTypes {
    peers: Rc<PeerTypes>,
    /// Bytes sent and received per exchange.
    bytes: (u64, u64),
}

impl HaloTypes {
    /// For a block of cells of `elem_size` bytes padded by `pad` on `layout`.
    pub(crate) fn new(layout: &Layout, elem_size: usize, pad: [usize; 3]) -> Result<Self> {
        layout.check_block(elem_size, pad)?;
        let field = RawField {
            data: std::ptr::NonNull::<u8>::dangling().as_ptr().cast(),
            elem_size,
            pad,
        };
        let total = |f: fn(&Region) -> Box3| {
            let cells: usize = layout.regions.iter().map(|r| f(r).volume()).sum();
            (cells * elem_size) as u64
        };
        Ok(HaloTypes {
            peers: Rc::new(layout.exchange_types(&[field])?),
            bytes: (total(|r| r.send), total(|r| r.recv)),
        })
    }
}

impl std::fmt::Debug for HaloTypes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HaloTypes")
            .field("neighbours", &self.peers.len())
            .field("bytes", &self.bytes)
            .finish()
    }
}

/// Ghost exchange `call` of the block at `base` with the datatypes in
/// `cache`, made by `make` at the first exchange (a failure to make them is
/// this rank's refusal of the exchange, the same error on every rank
/// involved): posted, waited for (errors as [`halo::finish`]), and this
/// rank's statistics, timed from `start`.
///
/// # Safety
/// `base` is a block of the layout and cell size the datatypes are (or
/// `make` makes them) for, not otherwise accessed until this returns.
pub(crate) unsafe fn exchange_on<C: Communicator>(
    comm: &C,
    cp: &Checkpoints,
    (call, section): (halo::Call, Waiting),
    op: &dyn Fn() -> String,
    base: *mut c_void,
    (cache, make): (&mut Option<HaloTypes>, impl FnOnce() -> Result<HaloTypes>),
) -> Result<halo::ExchangeStats> {
    let types = match cache {
        Some(t) => t,
        None => match make() {
            Ok(t) => cache.insert(t),
            Err(e) => return Err(halo::refuse(comm, cp, call, op, e)),
        },
    };
    // SAFETY: the caller's contract.
    let posted = unsafe { post_exchange(comm, call, base, &types.peers) }?;
    halo::finish(comm, cp, posted, op)?;
    Ok(halo::ExchangeStats {
        bytes_sent: types.bytes.0,
        bytes_received: types.bytes.1,
        messages_sent: types.peers.len() as u64,
        seconds: section.end().as_secs_f64(),
    })
}

/// Posts ghost exchange `call` of the field set at `base` (the first
/// field's buffer) with the datatypes `types` ([`Layout::exchange_types`]):
/// one message to and one from each neighbour, no staging copy; complete it
/// with [`halo::finish`].
///
/// # Safety
/// `types` were made for fields whose first buffer is `base`; every buffer
/// is valid for the layout (readable where sent, writable and not otherwise
/// accessed where received) and `types` stays alive until the exchange ends.
unsafe fn post_exchange<C: Communicator>(
    comm: &C,
    call: halo::Call,
    base: *mut c_void,
    types: &PeerTypes,
) -> Result<Posted> {
    let msg = |peer: i32, t: &Dtype| Message {
        peer,
        buf: base,
        count: 1,
        dtype: t.0,
    };
    let recvs = types.iter().map(|(q, _, r)| msg(*q, r));
    let sends = types.iter().map(|(q, s, _)| msg(*q, s));
    // SAFETY: the caller's contract.
    unsafe { halo::post(comm, call, types.len(), recvs.chain(sends)) }
}

/// The key of a cached field set: per field, its offset from the first
/// field's buffer, element size and padding.
type FieldKey = Vec<(isize, usize, [usize; 3])>;

/// Cached field sets per layout (the oldest is dropped beyond this).
const CACHED_FIELD_SETS: usize = 8;

/// Byte offsets of the fields' buffers from the first one's.
fn offsets(fields: &[RawField]) -> Vec<isize> {
    let base = fields.first().map_or(0, |f| f.data as isize);
    fields
        .iter()
        .map(|f| (f.data as isize).wrapping_sub(base))
        .collect()
}

/// A ghost exchange started by [`Grid::exchange_begin_raw`]: end it with
/// [`Grid::exchange_end_raw`] before touching the fields' ghost cells (and
/// before any other call on the grid but exchanges).
#[derive(Debug)]
pub struct PendingExchange {
    posted: Posted,
    what: Rc<str>,
    /// The datatypes of the messages (kept until the end).
    _types: Rc<PeerTypes>,
}

/// A ghost exchange of the safe API in flight ([`Grid::exchange_begin`]):
/// the fields stay borrowed until [`Exchange::end`] (or drop, which ends it
/// and drops its result).
#[derive(Debug)]
pub struct Exchange<'a> {
    grid: &'a mut Grid,
    pending: Option<PendingExchange>,
}

impl Exchange<'_> {
    /// Waits for the exchange: the ghost cells are filled (same errors as
    /// [`Grid::exchange`]).
    pub fn end(mut self) -> Result<()> {
        match self.pending.take() {
            Some(p) => self.grid.exchange_end_raw(p),
            None => Ok(()),
        }
    }
}

impl Drop for Exchange<'_> {
    fn drop(&mut self) {
        if let Some(p) = self.pending.take() {
            let _ = self.grid.exchange_end_raw(p);
        }
    }
}

/// A grid distributed by a [`GridPlan3`] whose data lives in the
/// application's buffers (see the module's documentation). Keeps its own
/// duplicate of the communicator; made by
/// [`Balancer::new_grid`](super::balancer::Balancer::new_grid) or [`Grid::new`].
pub struct Grid {
    comm: OwnComm,
    cp: Checkpoints,
    layout: Layout,
    pending: Option<Layout>,
    exchanges: u64,
    full_checks: bool,
    /// Bytes per cell of the last exchange's fields (the remap cost model's).
    cell_bytes: usize,
    in_flight: usize,
    cache: Vec<(FieldKey, Rc<PeerTypes>)>,
    /// The last exchange call: its fields' element sizes, description and fingerprint.
    last_call: Option<(Vec<usize>, Rc<str>, u64)>,
    /// The cost per cell set by [`Grid::set_cost`], for the box it was set for.
    cost: Option<CostField>,
}

impl std::fmt::Debug for Grid {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Grid")
            .field("layout", &self.layout)
            .field("pending", &self.pending)
            .field("exchanges", &self.exchanges)
            .finish_non_exhaustive()
    }
}

impl Grid {
    /// A grid laid out by `plan` (one part per rank of `comm`) for
    /// `stencil` (ghost width 0 to [`MAX_GHOST`]), on a duplicate of `comm`
    /// (collective). Bad or differing arguments are the same error on every rank.
    pub fn new<C: Communicator>(comm: &C, plan: GridPlan3, stencil: Stencil) -> Result<Self> {
        let _w = waiting();
        let (nx, ny, nz) = plan.shape;
        let (comm, cp) = Checkpoints::duplicate_checked(
            comm,
            &format!(
                "Grid::new({nx}x{ny}x{nz} in {} parts, {}-point stencil, ghost {})",
                plan.len(),
                stencil.points(),
                stencil.ghost
            ),
        )?;
        let rank = comm.rank() as usize;
        let ranks = comm.size() as usize;
        let layout = if plan.len() != ranks {
            Err(Error::shape_mismatch(format!(
                "plan has {} parts for {ranks} ranks",
                plan.len()
            )))
        } else {
            Layout::new(plan, rank, stencil)
        };
        let layout = agree(&comm, 0, layout)?;
        check_identical(&comm, 0, "plan", layout.plan())?;
        Ok(Grid {
            comm: OwnComm::new(comm),
            cp,
            layout,
            pending: None,
            exchanges: 0,
            full_checks: halo::full_checks_from_env(),
            cell_bytes: 0,
            in_flight: 0,
            cache: Vec::new(),
            last_call: None,
            cost: None,
        })
    }

    /// The current layout (the old one while a move is pending).
    pub fn layout(&self) -> &Layout {
        &self.layout
    }
    /// The layout a pending move goes to, if any.
    pub fn pending(&self) -> Option<&Layout> {
        self.pending.as_ref()
    }
    /// The layout the application's buffers must have now: the pending one
    /// while a move is pending (its new buffers), else the current one.
    fn target(&self) -> &Layout {
        self.pending.as_ref().unwrap_or(&self.layout)
    }
    /// The plan (the new one while a move is pending).
    pub fn plan(&self) -> &GridPlan3 {
        self.target().plan()
    }
    /// This rank's box (the new one while a move is pending).
    pub fn local_box(&self) -> Box3 {
        self.target().local_box()
    }
    /// Cells of this rank's buffer with `pad` cells each side (for the new
    /// box while a move is pending): see [`Layout::padded_len`].
    pub fn padded_len(&self, pad: [usize; 3]) -> Result<usize> {
        self.target().padded_len(pad)
    }
    /// The global shape.
    pub fn global_shape(&self) -> Shape3 {
        self.layout.plan.shape
    }
    /// The stencil.
    pub fn stencil(&self) -> Stencil {
        self.layout.stencil
    }
    /// Ghost exchanges made so far.
    pub fn exchanges(&self) -> u64 {
        self.exchanges
    }
    /// Bytes per cell of the last exchange's fields (0 before the first):
    /// what a remap decision counts per cell that moves.
    pub fn cell_bytes(&self) -> usize {
        self.cell_bytes
    }
    /// The grid's communicator (a duplicate of the one it was created on).
    pub fn comm(&self) -> &SimpleCommunicator {
        &self.comm
    }
    /// Sets the timeout of the grid's collectives (local; every rank must do the same).
    pub fn set_timeout(&mut self, timeout: Option<std::time::Duration>) {
        self.cp.set_timeout(timeout);
    }
    cost_methods_3d!(
        "Grid",
        #[doc = ""],
        #[doc = "A cost belongs to the box it was set for and does **not** move with"],
        #[doc = "the cells: after a remap that changes this rank's box, set the cost"],
        #[doc = "of the new box (while the move is pending, [`Grid::local_box`] is"],
        #[doc = "already the new box, so it may be set before or after"],
        #[doc = "[`Grid::move_fields`]); a balance point with the cost of an old box"],
        #[doc = "is the same error on every rank."]
    );

    /// The grid and cost field as the balancer sees them (`None` without a
    /// cost field); the pending layout's boxes while a move is pending.
    pub(crate) fn cost_grid(&self) -> Option<CostGrid<'_>> {
        let l = self.target();
        self.cost
            .as_ref()
            .map(|field| CostGrid::of_plan(field, l.plan(), l.rank))
    }

    /// A collective call of the grid (`what`, e.g. `Grid::save`) that this
    /// rank cannot take part in (`why`): the call's checked entry with this
    /// rank's refusal, so that every rank returns the same error. For
    /// bindings.
    pub fn refuse_call(&self, what: &str, why: Error) -> Error {
        let _w = waiting();
        match self.cp.check_refusing(&*self.comm, what, Some(&why)) {
            Err(e) => e,
            Ok(()) => why,
        }
    }

    /// The checked entry of a collective call `what` of the grid, with
    /// this rank's own refusal: every rank returns the same error.
    pub(crate) fn checked_entry(&self, what: &str, refused: Option<&Error>) -> Result<()> {
        self.cp.check_refusing(&*self.comm, what, refused)
    }

    /// Checks `fields` (lengths when known) against the current layout.
    pub(crate) fn check_fields_now(
        &self,
        fields: &[RawField],
        lens: Option<&[usize]>,
    ) -> Result<()> {
        self.check_fields(&self.layout, fields, lens)
    }

    /// The grid's checked channel (a balancer adopts the grids it makes).
    pub(crate) fn checks_mut(&mut self) -> &mut Checkpoints {
        &mut self.cp
    }
    /// What a move from the current layout to `next` will send, over all
    /// ranks ([`migration_volume3`] of the two plans, which every rank
    /// holds: no communication): the cells that change owner at the bytes
    /// per cell of the last exchange (8 before any), the non-empty messages
    /// between different ranks; `seconds` is 0 — the move's own report
    /// ([`Grid::move_fields`]) has its time.
    pub(crate) fn planned_move(&self, next: &GridPlan3) -> MoveStats {
        let cell = match self.cell_bytes {
            0 => 8,
            b => b,
        } as u64;
        let per_rank = migration_volume3(&self.layout.plan, next);
        // Each cell and message is counted at its sender and its receiver.
        let (cells, messages) = per_rank
            .iter()
            .fold((0, 0), |(c, m), &(rc, rm)| (c + rc as u64, m + rm as u64));
        let busiest = per_rank.iter().map(|&(c, _)| c as u64).max().unwrap_or(0);
        MoveStats {
            bytes: cells / 2 * cell,
            messages: messages / 2,
            max_rank_bytes: busiest * cell,
            seconds: 0.0,
        }
    }

    /// Makes `plan` the layout a move must go to (a remap decision).
    pub(crate) fn set_pending(&mut self, plan: GridPlan3) -> Result<()> {
        self.pending = Some(Layout::new(plan, self.layout.rank, self.layout.stencil)?);
        Ok(())
    }

    /// Starts a remap to `plan` chosen by the application (collective; the
    /// balancer's decisions go through
    /// [`Balancer::maybe_remap`](super::balancer::Balancer::maybe_remap)):
    /// the grid keeps both layouts until [`Grid::move_fields`]. Errors — a
    /// plan for another grid or rank count, plans that differ between
    /// ranks, a move already pending, an exchange in flight — are the same
    /// on every rank.
    pub fn start_remap(&mut self, plan: GridPlan3) -> Result<()> {
        let _w = waiting();
        let (nx, ny, nz) = plan.shape;
        let what = format!(
            "Grid::start_remap({nx}x{ny}x{nz} in {} parts) after {} ghost exchanges",
            plan.len(),
            self.exchanges
        );
        let local = if plan.shape != self.layout.plan.shape || plan.len() != self.layout.plan.len()
        {
            Err(Error::shape_mismatch(format!(
                "the new plan is for {nx}x{ny}x{nz} in {} parts, the grid is {:?} in {} parts",
                plan.len(),
                self.layout.plan.shape,
                self.layout.plan.len()
            )))
        } else if self.pending.is_some() {
            Err(Error::invalid_input(
                "a remap is already pending (Grid::move_fields first)",
            ))
        } else if self.in_flight > 0 {
            Err(Error::invalid_input(
                "a ghost exchange of the grid is still in flight: end it first",
            ))
        } else {
            Layout::new(plan, self.layout.rank, self.layout.stencil)
        };
        self.cp
            .check_refusing(&*self.comm, &what, local.as_ref().err())?;
        let next = local?;
        check_identical(&*self.comm, 0, "new plan", next.plan())?;
        self.pending = Some(next);
        Ok(())
    }

    /// An exchange this rank cannot take part in (`why`: e.g. its field
    /// list is unreadable): it takes the exchange's place in the sequence
    /// and joins the escalation at once, so that every rank involved
    /// returns `why` ([`halo::refuse`]). For bindings.
    pub fn refuse_exchange(&mut self, why: Error) -> Error {
        let _w = waiting();
        let what = format!("Grid::exchange (refused: {why})");
        let fp = halo::fingerprint(&what);
        match next_call(&*self.comm, &self.cp, None, &mut self.exchanges, fp) {
            Ok(call) => halo::refuse(&*self.comm, &self.cp, call, &|| what.clone(), why),
            Err(e) => e,
        }
    }

    /// A move this rank cannot take part in (`why`): the move's checked
    /// entry with this rank's refusal, so that every rank returns the same
    /// error (collective). For bindings.
    pub fn refuse_move(&mut self, why: Error) -> Error {
        self.refuse_call(&self.move_call(&[], &[]), why)
    }

    /// The exchange call of `fields` as errors name it, and its
    /// fingerprint: kept from the last exchange when the fields' element
    /// sizes are the same (the hot path formats nothing).
    fn call_of(&mut self, fields: &[RawField]) -> (Rc<str>, u64) {
        if let Some((sizes, what, fp)) = &self.last_call {
            if sizes.len() == fields.len()
                && sizes.iter().zip(fields).all(|(&s, f)| s == f.elem_size)
            {
                return (what.clone(), *fp);
            }
        }
        let what: Rc<str> = self.exchange_call(fields).into();
        let fp = halo::fingerprint(&what);
        let sizes = fields.iter().map(|f| f.elem_size).collect();
        self.last_call = Some((sizes, what.clone(), fp));
        (what, fp)
    }

    /// The exchange call with its must-match arguments, as errors name it.
    fn exchange_call(&self, fields: &[RawField]) -> String {
        let (nx, ny, nz) = self.layout.plan.shape;
        let sizes: Vec<usize> = fields.iter().map(|f| f.elem_size).collect();
        format!(
            "Grid::exchange on a {nx}x{ny}x{nz} grid, {}-point stencil, ghost {}, {} fields of {sizes:?}-byte cells",
            self.layout.stencil.points(),
            self.layout.stencil.ghost,
            fields.len(),
        )
    }

    /// Fills the ghost cells of every field from the neighbours (one
    /// message to and from each, nothing through the root; see the
    /// module's documentation). Ghost cells outside the grid are left
    /// untouched. Every rank must call it with the same number of fields
    /// and element sizes (paddings may differ); a difference, or a wrong
    /// slice length on one rank, is the same error on every rank involved.
    pub fn exchange(&mut self, fields: &mut [Field<'_>]) -> Result<()> {
        self.exchange_begin(fields)?.end()
    }

    /// Starts [`Grid::exchange`]; the fields stay borrowed until
    /// [`Exchange::end`]. (To compute on a field's interior meanwhile, use
    /// [`Grid::exchange_begin_raw`].)
    pub fn exchange_begin<'a>(&'a mut self, fields: &'a mut [Field<'_>]) -> Result<Exchange<'a>> {
        let raw: Vec<RawField> = fields.iter().map(|f| f.raw).collect();
        let lens: Vec<usize> = fields.iter().map(|f| f.len).collect();
        // SAFETY: the fields' slices are borrowed by the returned Exchange
        // until it ends (its drop ends it too); their lengths are checked.
        let pending = unsafe { self.begin(&raw, Some(&lens)) }?;
        Ok(Exchange {
            grid: self,
            pending: Some(pending),
        })
    }

    /// Starts a ghost exchange of the raw fields `fields` (as
    /// [`Grid::exchange`]); the caller may compute on cells the messages do
    /// not touch (this rank's cells outside the regions sent: reading them
    /// all is fine, writing the sent ones is not) until
    /// [`Grid::exchange_end_raw`].
    ///
    /// # Safety
    /// Each field's `data` points to [`Grid::padded_len`]`(pad)` cells of
    /// `elem_size` bytes, valid until the exchange ends; the ghost cells it
    /// receives are not accessed until then.
    pub unsafe fn exchange_begin_raw(&mut self, fields: &[RawField]) -> Result<PendingExchange> {
        // SAFETY: the caller's contract.
        unsafe { self.begin(fields, None) }
    }

    /// Ends an exchange begun by [`Grid::exchange_begin_raw`] (ghost cells
    /// filled, or the same error on every rank involved).
    pub fn exchange_end_raw(&mut self, x: PendingExchange) -> Result<()> {
        let _w = polling();
        self.in_flight = self.in_flight.saturating_sub(1);
        let PendingExchange { posted, what, .. } = x;
        halo::finish(&*self.comm, &self.cp, posted, &|| what.to_string())
    }

    /// The shared body of the exchanges: checks, datatypes, posting.
    ///
    /// # Safety
    /// See [`Grid::exchange_begin_raw`]; `lens`, when given, are the
    /// fields' buffer lengths in cells.
    unsafe fn begin(
        &mut self,
        fields: &[RawField],
        lens: Option<&[usize]>,
    ) -> Result<PendingExchange> {
        let _w = polling();
        let (what, fp) = self.call_of(fields);
        if self.pending.is_some() {
            return Err(Error::invalid_input(format!(
                "{what}: a remap is pending; move the fields to their new buffers first (Grid::move_fields)"
            )));
        }
        let call = next_call(
            &*self.comm,
            &self.cp,
            self.full_checks.then_some(&*what),
            &mut self.exchanges,
            fp,
        )?;
        let op = || what.to_string();
        let types = self
            .check_fields(&self.layout, fields, lens)
            .and_then(|()| self.types(fields));
        let types = match types {
            Ok(t) => t,
            Err(e) => return Err(halo::refuse(&*self.comm, &self.cp, call, &op, e)),
        };
        self.cell_bytes = fields.iter().map(|f| f.elem_size).sum();
        // SAFETY: each datatype addresses the fields' regions relative to
        // the first field's buffer, all inside buffers checked against the
        // layout and valid until the exchange ends (caller's contract).
        let posted = unsafe { post_exchange(&*self.comm, call, fields[0].data, &types) }?;
        self.in_flight += 1;
        Ok(PendingExchange {
            posted,
            what,
            _types: types,
        })
    }

    /// Checks a field set against `layout` (at least one field).
    fn check_fields(
        &self,
        layout: &Layout,
        fields: &[RawField],
        lens: Option<&[usize]>,
    ) -> Result<()> {
        if fields.is_empty() {
            return Err(Error::invalid_input("no fields"));
        }
        for (k, f) in fields.iter().enumerate() {
            layout.check_field(k, f, lens.map(|l| l[k]))?;
        }
        Ok(())
    }

    /// The exchange datatypes of a field set, from the cache or built.
    fn types(&mut self, fields: &[RawField]) -> Result<Rc<PeerTypes>> {
        let offs = offsets(fields);
        let key: FieldKey = fields
            .iter()
            .zip(&offs)
            .map(|(f, &o)| (o, f.elem_size, f.pad))
            .collect();
        if let Some((_, t)) = self.cache.iter().find(|(k, _)| *k == key) {
            return Ok(t.clone());
        }
        let types = self.layout.exchange_types(fields)?;
        let types = Rc::new(types);
        if self.cache.len() >= CACHED_FIELD_SETS {
            self.cache.remove(0);
        }
        self.cache.push((key, types.clone()));
        Ok(types)
    }

    /// Completes a pending remap (collective): fills the application's
    /// `new` buffers (for the new box, [`Grid::local_box`]) from its `old`
    /// ones (the box before the remap), field by field — the cells this rank
    /// keeps are copied locally, the cells that change owner travel from
    /// the old buffers straight into the new ones (one derived-datatype
    /// message per pair of ranks). Ghost cells of the new buffers are left
    /// untouched: exchange afterwards. Returns what moved (bytes of cells
    /// that changed owner). Errors — no move pending, field counts, element
    /// sizes or lengths that do not fit — are the same on every rank, and
    /// nothing is moved then.
    pub fn move_fields(&mut self, old: &[Field<'_>], new: &mut [Field<'_>]) -> Result<MoveStats> {
        let raw = |v: &[Field<'_>]| v.iter().map(|f| f.raw).collect::<Vec<_>>();
        let lens = |v: &[Field<'_>]| v.iter().map(|f| f.len).collect::<Vec<_>>();
        // SAFETY: the slices are borrowed for the call (old shared, new
        // exclusive, so they do not overlap) and their lengths checked.
        unsafe { self.move_checked(&raw(old), &raw(new), Some((&lens(old), &lens(new)))) }
    }

    /// [`Grid::move_fields`] on raw fields. The same buffer may be given as
    /// old and new field when this rank's box and the padding did not
    /// change (nothing is copied then).
    ///
    /// # Safety
    /// `old[k].data` and `new[k].data` point to buffers of the old and the
    /// new layout's [`Layout::padded_len`] cells, readable and writable
    /// respectively; two different buffers do not overlap.
    pub unsafe fn move_fields_raw(
        &mut self,
        old: &[RawField],
        new: &[RawField],
    ) -> Result<MoveStats> {
        // SAFETY: the caller's contract.
        unsafe { self.move_checked(old, new, None) }
    }

    /// The move call with its must-match arguments, as errors name it.
    fn move_call(&self, old: &[RawField], new: &[RawField]) -> String {
        let (nx, ny, nz) = self.layout.plan.shape;
        let sizes = |v: &[RawField]| v.iter().map(|f| f.elem_size).collect::<Vec<_>>();
        format!(
            "Grid::move_fields({} old fields of {:?}-byte cells, {} new of {:?}) on a {nx}x{ny}x{nz} grid after {} ghost exchanges",
            old.len(),
            sizes(old),
            new.len(),
            sizes(new),
            self.exchanges
        )
    }

    /// This rank's own validation of a move.
    fn check_move(
        &self,
        old: &[RawField],
        new: &[RawField],
        lens: Option<(&[usize], &[usize])>,
    ) -> Result<&Layout> {
        let next = self.pending.as_ref().ok_or_else(|| {
            Error::invalid_input("no remap is pending (Grid::move_fields follows a remap)")
        })?;
        if self.in_flight > 0 {
            return Err(Error::invalid_input(
                "a ghost exchange of the grid is still in flight: end it first",
            ));
        }
        if old.len() != new.len() {
            return Err(Error::shape_mismatch(format!(
                "{} old fields and {} new ones",
                old.len(),
                new.len()
            )));
        }
        self.check_fields(&self.layout, old, lens.map(|l| l.0))
            .map_err(|e| Error::invalid_input(format!("old {e}")))?;
        self.check_fields(next, new, lens.map(|l| l.1))
            .map_err(|e| Error::invalid_input(format!("new {e}")))?;
        let same_box = self.layout.local_box() == next.local_box();
        for (k, (o, n)) in old.iter().zip(new).enumerate() {
            if o.elem_size != n.elem_size {
                return Err(Error::shape_mismatch(format!(
                    "field {k}: {}-byte old cells, {}-byte new ones",
                    o.elem_size, n.elem_size
                )));
            }
            let empty = self.layout.padded_len(o.pad)? == 0 || next.padded_len(n.pad)? == 0;
            if o.data == n.data && !empty && !(same_box && o.pad == n.pad) {
                return Err(Error::invalid_input(format!(
                    "field {k}: the same buffer is old and new, but this rank's box or padding changes"
                )));
            }
        }
        Ok(next)
    }

    /// The shared body of the moves.
    ///
    /// # Safety
    /// See [`Grid::move_fields_raw`].
    unsafe fn move_checked(
        &mut self,
        old: &[RawField],
        new: &[RawField],
        lens: Option<(&[usize], &[usize])>,
    ) -> Result<MoveStats> {
        let _w = waiting();
        let what = self.move_call(old, new);
        let local = self.check_move(old, new, lens).map(|_| ());
        self.cp
            .check_refusing(&*self.comm, &what, local.as_ref().err())?;
        let next = self.pending.take().expect("checked: a move is pending");
        self.comm.barrier();
        let start = Instant::now();
        // SAFETY: the fields were checked against both layouts (contract).
        let res = unsafe { transfer(&*self.comm, &self.layout, &next, old, new) };
        let (sent, mine, msgs) = match res {
            Ok(x) => x,
            Err(e) => {
                self.pending = Some(next);
                return Err(e);
            }
        };
        let stats = global_stats(&*self.comm, sent, mine, msgs, start);
        self.layout = next;
        self.cache.clear();
        Ok(stats)
    }
}

/// `MPI_REQUEST_NULL`.
fn null_request() -> ffi::MPI_Request {
    // SAFETY: reading an MPI handle constant.
    unsafe { ffi::RSMPI_REQUEST_NULL }
}

/// Moves fields from layout `from` to layout `next` on `comm` (every rank
/// with its own layouts of the same two plans): sends the cells that change
/// owner (one derived-datatype message per pair of ranks, from the old
/// buffers straight into the new ones) and copies those kept. Returns
/// (bytes sent, bytes sent and received, messages sent).
///
/// # Safety
/// See [`Grid::move_fields_raw`]: `old` fits `from`, `new` fits `next`.
pub(crate) unsafe fn transfer<C: Communicator>(
    comm: &C,
    from: &Layout,
    next: &Layout,
    old: &[RawField],
    new: &[RawField],
) -> Result<(usize, usize, usize)> {
    let rank = from.rank;
    let (was, now) = (from.local_box(), next.local_box());
    let cell: usize = old.iter().map(|f| f.elem_size).sum();
    let (oo, no) = (offsets(old), offsets(new));
    let mut reqs = Vec::new();
    let mut types = Vec::new();
    let (mut sent, mut got, mut msgs) = (0, 0, 0);
    let tag = GRID_MOVE;
    for q in 0..from.plan.len() {
        if q == rank {
            continue;
        }
        if let Some(b) = from.plan.boxes[q].intersect(&now) {
            let t = next.combined(new, &no, &b)?;
            let mut r = null_request();
            // SAFETY: the type addresses the new buffers (checked).
            let code = unsafe {
                ffi::MPI_Irecv(new[0].data, 1, t.0, q as c_int, tag, comm.as_raw(), &mut r)
            };
            mpi_check(code, "MPI_Irecv (grid move)")?;
            reqs.push(r);
            types.push(t);
            got += b.volume() * cell;
        }
    }
    for q in 0..next.plan.len() {
        if q == rank {
            continue;
        }
        if let Some(b) = was.intersect(&next.plan.boxes[q]) {
            let t = from.combined(old, &oo, &b)?;
            let mut r = null_request();
            // SAFETY: the type addresses the old buffers (checked).
            let code = unsafe {
                ffi::MPI_Isend(old[0].data, 1, t.0, q as c_int, tag, comm.as_raw(), &mut r)
            };
            mpi_check(code, "MPI_Isend (grid move)")?;
            reqs.push(r);
            types.push(t);
            sent += b.volume() * cell;
            msgs += 1;
        }
    }
    if let Some(keep) = was.intersect(&now) {
        for (o, n) in old.iter().zip(new) {
            // SAFETY: both buffers hold their layout's blocks (contract).
            unsafe { copy_kept(from, o, next, n, &keep) };
        }
    }
    // SAFETY: `reqs` holds the requests posted above.
    let code = unsafe {
        ffi::MPI_Waitall(
            reqs.len() as c_int,
            reqs.as_mut_ptr(),
            ffi::RSMPI_STATUSES_IGNORE,
        )
    };
    mpi_check(code, "MPI_Waitall (grid move)")?;
    drop(types);
    Ok((sent, sent + got, msgs))
}

/// Copies the cells of `keep` from field `o` (laid out by `from`) to field
/// `n` (laid out by `to`), one contiguous run along axis 2 at a time;
/// nothing when both are the same buffer (same box and padding, checked).
///
/// # Safety
/// Both buffers hold their layout's padded block; `keep` lies in both boxes.
unsafe fn copy_kept(from: &Layout, o: &RawField, to: &Layout, n: &RawField, keep: &Box3) {
    if o.data == n.data {
        return;
    }
    let e = o.elem_size;
    let index = |l: &Layout, f: &RawField, i: usize, j: usize| {
        let (b, d) = (l.local_box(), l.padded_dims(f.pad));
        let (i, j, k) = (
            i + f.pad[0] - b.x,
            j + f.pad[1] - b.y,
            keep.z + f.pad[2] - b.z,
        );
        ((i * d[1] + j) * d[2] + k) * e
    };
    let run = keep.nz * e;
    for i in keep.x..keep.x + keep.nx {
        for j in keep.y..keep.y + keep.ny {
            let (src, dst) = (index(from, o, i, j), index(to, n, i, j));
            // SAFETY: both runs lie inside their buffers (contract); the
            // buffers are distinct.
            unsafe {
                std::ptr::copy(
                    o.data.cast::<u8>().add(src),
                    n.data.cast::<u8>().add(dst),
                    run,
                )
            };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::array3d::{Best3, GridDecomposer3};

    #[test]
    fn layouts_check_padding_and_lengths() {
        let plan = Best3::default().decompose((1, 8, 6), &[1.0, 2.0]).unwrap();
        let l = Layout::new(plan.clone(), 0, Stencil::seven(2)).unwrap();
        // 2D: axis 0 needs no padding.
        assert_eq!(l.required_pad(), [0, 2, 2]);
        let b = l.local_box();
        let n = l.padded_len([0, 2, 3]).unwrap();
        assert_eq!(n, b.nx * (b.ny + 4) * (b.nz + 6));
        assert!(l.padded_len([0, 1, 2]).is_err());
        let f = RawField {
            data: std::ptr::null_mut(),
            elem_size: 8,
            pad: [0, 2, 2],
        };
        assert!(l.check_field(0, &f, None).is_err(), "NULL buffer");
        assert!(Layout::new(plan.clone(), 0, Stencil::seven(5)).is_err());
        assert!(Layout::new(plan, 2, Stencil::seven(1)).is_err());
        let thin = Best3::default().decompose((4, 4, 2), &[1.0]).unwrap();
        assert!(Layout::new(thin, 0, Stencil::seven(3)).is_err());
    }

    #[test]
    fn regions_are_the_reach_of_the_stencil() {
        let plan = GridPlan3::new(
            "t",
            (4, 4, 1),
            vec![
                Box3::new(0, 0, 0, 2, 2, 1),
                Box3::new(2, 0, 0, 2, 2, 1),
                Box3::new(0, 2, 0, 2, 2, 1),
                Box3::new(2, 2, 0, 2, 2, 1),
            ],
        )
        .unwrap();
        let faces = Layout::new(plan.clone(), 0, Stencil::seven(1)).unwrap();
        assert_eq!(faces.neighbours(), vec![1, 2]);
        assert_eq!(faces.regions()[0].send, Box3::new(1, 0, 0, 1, 2, 1));
        assert_eq!(faces.regions()[0].recv, Box3::new(2, 0, 0, 1, 2, 1));
        let boxed = Layout::new(plan, 0, Stencil::twenty_seven(1)).unwrap();
        assert_eq!(boxed.neighbours(), vec![1, 2, 3]);
        assert_eq!(boxed.regions()[2].send, Box3::new(1, 1, 0, 1, 1, 1));
        assert_eq!(boxed.regions()[2].recv, Box3::new(2, 2, 0, 1, 1, 1));
    }
}
