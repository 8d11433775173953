//! Distributed 2D arrays over an arbitrary rectangle tiling ([`ArrayPlan`]).
//!
//! A [`DistArray2`] holds this rank's block as an `ndarray::Array2<T>` padded
//! with a ghost border of configurable width, plus the global extents and the
//! plan. Decompositions are arbitrary tilings, not Cartesian grids: the cells a
//! rank exchanges with another are always the intersection of two rectangles,
//!
//! * halo: `mine ∩ expand(theirs, g)` is sent, `expand(mine, g) ∩ theirs` is
//!   received — partial edges and corners (9-point stencils) included;
//! * remap: `old_mine ∩ new_theirs` is sent, `old_theirs ∩ new_mine` received,
//!   so only cells whose owner changes travel (the theoretical minimum).
//!
//! The array's plan is a one-plane grid of the grid layer
//! ([`super::layout`]), and its block a field padded by the ghost width
//! along both axes: the ghost exchange, the remap, the scatter and the
//! gather are that layer's, as for a [`Grid`](super::layout::Grid) on the
//! application's buffers and a [`DistArray3`](super::array3::DistArray3) —
//! derived datatypes addressing the blocks in place, messages only between
//! the ranks that exchange cells, no serialization.

use std::mem::size_of;

use mpi::datatype::Equivalence;
use mpi::topology::SimpleCommunicator;
use mpi::traits::*;
use ndarray::{Array2, ArrayView2, ArrayViewMut2};

use super::clock::{polling, waiting};
use super::comm::agree;
use super::cost::{CostField, CostGrid};
use super::halo::{self, ExchangeStats};
use super::layout::exchange_on;
use super::object::{Core, MoveStats};
use super::watchdog::Checkpoints;
use crate::error::{Error, Result};
use crate::plan::array2d::weighted::box_of;
use crate::plan::array2d::{ArrayPlan, Rect};

mod moves;
mod tile;

use tile::Tiled;

/// Element types a [`DistArray2`] can hold: plain MPI-transferable values.
pub trait Element: Equivalence + Copy + Default + Send + Sync + 'static {}
impl<T: Equivalence + Copy + Default + Send + Sync + 'static> Element for T {}

/// A 2D array distributed over the ranks of a communicator by an [`ArrayPlan`]:
/// part `r` of the plan lives on rank `r`.
///
/// The array keeps its own duplicate of the communicator it was created on,
/// so its messages never mix with the application's and no call can be made
/// on a wrong communicator. Every data movement is a communication section
/// of [`super::clock`]: its time (waiting for neighbours included) is never
/// counted as this rank's compute time.
pub struct DistArray2<T> {
    /// The communicator, the checked channel and the exchange count.
    core: Core,
    tiles: Tiled<T>,
    /// Fingerprint of the exchange call ([`DistArray2::exchange_call`]).
    exchange_fp: u64,
    /// The cost per cell of this rank's block, if the application set one.
    cost: Option<CostField>,
    /// The application's copy of this rank's padded block, which a remap at
    /// a balance point reads instead of the array's own
    /// ([`DistArray2::set_remap_source`]).
    source: Option<*const T>,
}

impl<T> std::fmt::Debug for DistArray2<T>
where
    T: std::fmt::Debug,
{
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DistArray2")
            .field("rank", &self.tiles.rank)
            .field("ghost", &self.tiles.ghost)
            .field("plan", &self.tiles.plan)
            .finish_non_exhaustive()
    }
}

impl<T: Element> DistArray2<T> {
    /// An array of default values laid out by `plan`, on a duplicate of
    /// `comm` (collective: `MPI_Comm_dup` and the plan checks). The plan
    /// must have one part per rank, tile the array and be the same on every
    /// rank; otherwise every rank returns the same error.
    pub fn with_plan<C: Communicator>(comm: &C, plan: ArrayPlan, ghost: usize) -> Result<Self> {
        let _w = waiting();
        let (comm, cp) = Checkpoints::duplicate_checked(
            comm,
            &format!(
                "DistArray2::with_plan({}x{}, {} parts, ghost {ghost}, {}-byte elements)",
                plan.rows,
                plan.cols,
                plan.parts.len(),
                size_of::<T>()
            ),
        )?;
        let tiles = Tiled::new(&comm, plan, ghost)?;
        Ok(DistArray2::wrap(comm, tiles, cp))
    }

    /// Scatters a global array held by `root` into blocks laid out by `plan`,
    /// on a duplicate of `comm`. Errors (plan not tiling, wrong part count, a
    /// global array of the wrong shape or missing at the root) are returned
    /// on every rank. `global` is read on the root only.
    pub fn scatter_with_plan<C: Communicator>(
        comm: &C,
        root: i32,
        plan: ArrayPlan,
        ghost: usize,
        global: Option<&Array2<T>>,
    ) -> Result<(Self, MoveStats)> {
        let _w = waiting();
        let (comm, cp) = Checkpoints::duplicate_checked(
            comm,
            &format!(
                "DistArray2::scatter_with_plan({}x{} in {} parts from root {root}, ghost {ghost}, {}-byte elements)",
                plan.rows,
                plan.cols,
                plan.parts.len(),
                size_of::<T>()
            ),
        )?;
        let (tiles, stats) = Tiled::scatter_from_root(&comm, root, plan, ghost, global)?;
        Ok((DistArray2::wrap(comm, tiles, cp), stats))
    }

    /// Gathers the array at `root`: `Some(global)` there, `None` elsewhere.
    pub fn gather(&self, root: i32) -> Result<Option<Array2<T>>> {
        let _w = waiting();
        self.check(&format!("DistArray2::gather(to root {root})"))?;
        self.tiles.gather_to_root(&*self.core.comm, root)
    }

    /// [`DistArray2::gather`] from a buffer of the application laid out as
    /// this array's padded block (row-major, `(rows + 2g) × (cols + 2g)`
    /// elements) straight into the root's `global` (`rows × cols`
    /// elements, row-major; ignored elsewhere): one derived-datatype
    /// message per rank, no copy (the C API's `nuce_array_gather`).
    ///
    /// # Safety
    /// `padded` points to this rank's padded block, readable; at the root
    /// `global` points to `rows × cols` writable elements; neither is
    /// otherwise written until this returns.
    #[doc(hidden)]
    pub unsafe fn gather_from(&self, root: i32, padded: *const T, global: *mut T) -> Result<()> {
        let _w = waiting();
        self.check(&format!("DistArray2::gather(to root {root})"))?;
        // SAFETY: the caller's contract.
        unsafe {
            self.tiles
                .gather_into(&*self.core.comm, root, (padded, Ok(())), global)
        }
    }

    /// The application's copy of this rank's padded block (row-major,
    /// `(rows + 2g) × (cols + 2g)` elements) that a remap at a balance
    /// point reads instead of the array's own, or `None` for the array's
    /// own: a binding whose application keeps the block in its own buffer
    /// sets it around [`Balancer::maybe_remap`](super::balancer::Balancer::maybe_remap),
    /// so that nothing is copied into the array first (the C API's
    /// `nuce_maybe_remap`). The new block after a remap is the array's own.
    ///
    /// # Safety
    /// Until it is set back to `None`, `padded` points to this rank's
    /// padded block of the array's current layout, readable and not
    /// written by anyone during a call on the array.
    #[doc(hidden)]
    pub unsafe fn set_remap_source(&mut self, padded: Option<*const T>) {
        self.source = padded;
    }

    /// Fills the ghost border with the neighbours' cells: every rank must
    /// call it, but it synchronises only with the neighbours (nonblocking
    /// point-to-point). Returns this rank's statistics. Ghost cells outside
    /// the global array are left untouched (boundary conditions are the
    /// application's).
    ///
    /// No message goes to the root: a neighbour at another exchange (it
    /// skipped one, or exchanges another array) is seen from the messages'
    /// tags, and a wait that outlasts the timeout joins the checkpoint under
    /// way, so that every rank involved returns the same error
    /// ([`super::halo`]). `NUCE_CHECK=full` adds a checked entry per call.
    pub fn exchange_ghosts(&mut self) -> Result<ExchangeStats> {
        let (rows, cols) = self.tiles.padded_shape();
        let data = &self.tiles.data;
        if !data.is_standard_layout() || data.dim() != (rows, cols) {
            let why =
                Error::invalid_input(format!(
                "this rank's padded block is a {}x{} array{}, not the array's own {rows}x{cols} \
                 row-major block (was it replaced through padded_mut?)",
                data.nrows(),
                data.ncols(),
                if data.is_standard_layout() { "" } else { " in another memory order" }
            ));
            return Err(self.refuse_exchange(why));
        }
        // SAFETY: the array's own block, of its layout (checked above).
        unsafe { self.exchange_on(None) }
    }

    /// [`DistArray2::exchange_ghosts`] on a buffer of the application laid
    /// out as this array's padded block (row-major, `(rows + 2g) × (cols +
    /// 2g)` elements for this rank's rectangle and ghost width `g`) instead
    /// of the array's own: one derived-datatype message to and from each
    /// neighbour, no copy (the C API's `nuce_array_exchange_ghosts`). Same
    /// call, sequence and errors as [`DistArray2::exchange_ghosts`].
    ///
    /// # Safety
    /// `padded` points to that many elements, writable, not otherwise
    /// accessed until this returns.
    #[doc(hidden)]
    pub unsafe fn exchange_ghosts_on(&mut self, padded: *mut T) -> Result<ExchangeStats> {
        // SAFETY: the caller's contract.
        unsafe { self.exchange_on(Some(padded)) }
    }

    /// The ghost exchange on `padded`, or on the array's own block: the
    /// grid layer's subarray datatypes, one message to and from each
    /// neighbour, in place.
    ///
    /// # Safety
    /// `padded` (or the own block when `None`) is a standard-layout block
    /// of this rank's padded shape, not otherwise accessed until this returns.
    unsafe fn exchange_on(&mut self, padded: Option<*mut T>) -> Result<ExchangeStats> {
        let w = polling();
        let call = self.next_exchange()?;
        let (shape, ghost) = (self.global_shape(), self.tiles.ghost);
        let what = move || exchange_call::<T>(shape, ghost);
        let Tiled {
            plan,
            rank,
            data,
            on_buffer,
            ..
        } = &mut self.tiles;
        let base = padded.unwrap_or_else(|| data.as_mut_ptr());
        let make = || Tiled::<T>::halo_types(plan, *rank, ghost);
        // SAFETY: the datatypes address a padded block of this layout
        // (caller's contract).
        unsafe {
            exchange_on(
                &*self.core.comm,
                &self.core.cp,
                (call, w),
                &what,
                base.cast(),
                (on_buffer, make),
            )
        }
    }

    /// Takes part in the next ghost exchange only to say that this rank
    /// cannot (`why`, e.g. the application's buffer is wrong): the error
    /// that every rank of the exchange returns, within the timeout, instead
    /// of this rank returning alone while its neighbours wait for it.
    pub fn refuse_exchange(&mut self, why: Error) -> Error {
        let _w = waiting();
        match self.next_exchange() {
            Ok(call) => halo::refuse(
                &*self.core.comm,
                &self.core.cp,
                call,
                &|| self.exchange_call(),
                why,
            ),
            Err(e) => e,
        }
    }

    /// The next exchange's identity and description (a checked entry too
    /// with `NUCE_CHECK=full`).
    fn next_exchange(&mut self) -> Result<halo::Call> {
        let (shape, ghost) = (self.global_shape(), self.tiles.ghost);
        self.core
            .next_exchange(|| exchange_call::<T>(shape, ghost), self.exchange_fp)
    }

    /// The exchange call with its must-match arguments (shape, ghost width,
    /// element size), as errors name it.
    fn exchange_call(&self) -> String {
        exchange_call::<T>(self.global_shape(), self.tiles.ghost)
    }

    /// Wraps a communicator, its checkpoints and a block (no exchange yet).
    fn wrap(comm: SimpleCommunicator, tiles: Tiled<T>, cp: Checkpoints) -> Self {
        let mut a = DistArray2 {
            core: Core::new(comm, cp),
            tiles,
            exchange_fp: 0,
            cost: None,
            source: None,
        };
        a.exchange_fp = halo::fingerprint(&a.exchange_call());
        a
    }

    /// Sets the cost per cell of this rank's block (`rows × cols` values of
    /// [`DistArray2::rect`] in C order, any unit, finite and `≥ 0`): the
    /// balancer then times, plans and decides by `Σ cost` instead of cell
    /// counts (see module `cost`). Local; checked at the next balance
    /// point, where a bad cost on any rank is the same error on every rank.
    /// Set it again after a remap changes the block.
    pub fn set_cost(&mut self, costs: impl Into<Vec<f64>>) {
        self.cost = Some(CostField::new(box_of(&self.rect()), costs.into()));
    }

    /// [`DistArray2::set_cost`] from `f(row, col)` at each cell's global
    /// indices (local).
    pub fn set_cost_with(&mut self, f: impl Fn(usize, usize) -> f64) {
        self.cost = Some(CostField::from_fn(box_of(&self.rect()), |i, j, _| f(i, j)));
    }

    /// Drops the cost field: the balancer counts cells again (local).
    pub fn clear_cost(&mut self) {
        self.cost = None;
    }

    /// The cost field set by [`DistArray2::set_cost`], if any.
    pub fn cost(&self) -> Option<&CostField> {
        self.cost.as_ref()
    }

    /// The grid and cost field as the balancer sees them (`None` without
    /// a cost field).
    pub(crate) fn cost_grid(&self) -> Option<CostGrid<'_>> {
        self.cost.as_ref().map(|field| CostGrid {
            field,
            shape: (self.tiles.plan.rows, self.tiles.plan.cols, 1),
            boxes: self.tiles.plan.parts.iter().map(box_of).collect(),
            rank: self.tiles.rank,
        })
    }

    /// Moves the data to `new_plan`: only the cells whose owner changes travel.
    /// Transactional: on error (on any rank) every rank returns the same
    /// `Err` and keeps its old data. Ghost cells of the new block are
    /// default-initialised: call [`DistArray2::exchange_ghosts`] afterwards.
    pub fn remap(&mut self, new_plan: &ArrayPlan) -> Result<MoveStats> {
        let _w = waiting();
        self.check(&format!(
            "DistArray2::remap(to {}x{} in {} parts)",
            new_plan.rows,
            new_plan.cols,
            new_plan.parts.len()
        ))?;
        // SAFETY: no source: the array's own block.
        unsafe {
            self.tiles
                .remap(&*self.core.comm, new_plan.clone(), false, None)
        }
    }

    /// [`DistArray2::remap`] at a balance point, to the plan rank 0 made
    /// and broadcast: every rank has the same by construction, and the
    /// balance point's own checked entry came before, so the root alone
    /// validates it (the others' work and memory stay independent of the
    /// number of ranks but for the plan itself).
    pub(crate) fn remap_broadcast(&mut self, new_plan: ArrayPlan) -> Result<MoveStats> {
        let _w = waiting();
        // SAFETY: the source, if set, is the application's block of this
        // layout (`set_remap_source`'s contract).
        let stats = unsafe {
            self.tiles
                .remap(&*self.core.comm, new_plan, true, self.source)
        };
        // The application's block is of the old layout: never read again.
        self.source = None;
        stats
    }

    /// The checked entry of a collective call `op` named in the caller's
    /// words (e.g. a C function with its must-match arguments), where this
    /// rank may refuse (`refused`: its own input is wrong, e.g. a buffer of
    /// the wrong length): every rank returns the same result, within the
    /// timeout ([`super::watchdog::refusing_checkpoint`]).
    #[doc(hidden)]
    pub fn entry(&self, op: &str, refused: Option<&Error>) -> Result<()> {
        let _w = waiting();
        self.core.cp.check_refusing(&*self.core.comm, op, refused)
    }

    /// The checked entry of a verb: `op` with the array's shape, ghost
    /// width and element size, which must match on every rank.
    fn check(&self, op: &str) -> Result<()> {
        let (rows, cols) = self.global_shape();
        self.core.cp.check(
            &*self.core.comm,
            &format!(
                "{op} on a {rows}x{cols} array, ghost {}, {}-byte elements, after {} ghost exchanges",
                self.tiles.ghost,
                size_of::<T>(),
                self.core.exchanges()
            ),
        )
    }

    /// Sets the timeout of the array's collectives (local; every rank must
    /// do the same). By default `NUCE_TIMEOUT_S` (module `watchdog`);
    /// arrays made by a [`Balancer`](super::balancer::Balancer) take its timeout.
    pub fn set_timeout(&mut self, timeout: Option<std::time::Duration>) {
        self.core.cp.set_timeout(timeout);
    }

    /// Ghost exchanges made so far on this array (every rank must make the
    /// same number between two balance points; checked there).
    pub fn exchanges(&self) -> u64 {
        self.core.exchanges()
    }

    /// The array's checked channel (a balancer adopts the arrays it makes).
    pub(crate) fn checks_mut(&mut self) -> &mut Checkpoints {
        &mut self.core.cp
    }

    /// This array on `comm` laid out by `plan`, in which this rank has the
    /// same rectangle as now: the block moves over without a copy
    /// (collective on `comm`; a departure's successor on the ranks that
    /// stay, as [`super::array3::DistArray3`]'s). `self` is left with an
    /// empty block.
    pub(crate) fn successor(&mut self, comm: &SimpleCommunicator, plan: ArrayPlan) -> Result<Self> {
        let mut n = DistArray2::with_plan(comm, plan, self.tiles.ghost)?;
        let same = if n.rect() == self.rect() {
            Ok(())
        } else {
            Err(Error::invalid_input(
                "DistArray2: the successor's rectangle differs",
            ))
        };
        agree(&*n.core.comm, 0, same)?;
        std::mem::swap(&mut n.tiles.data, &mut self.tiles.data);
        Ok(n)
    }

    /// The array's communicator (a duplicate of the one it was created on).
    pub fn comm(&self) -> &SimpleCommunicator {
        &self.core.comm
    }
    /// The plan the array is laid out by.
    pub fn plan(&self) -> &ArrayPlan {
        &self.tiles.plan
    }
    /// This rank's rectangle in global coordinates.
    pub fn rect(&self) -> Rect {
        self.tiles.rect()
    }
    /// Ghost width.
    pub fn ghost(&self) -> usize {
        self.tiles.ghost
    }
    /// Global shape `(rows, cols)`.
    pub fn global_shape(&self) -> (usize, usize) {
        (self.tiles.plan.rows, self.tiles.plan.cols)
    }
    /// Number of cells of the whole array.
    pub fn global_len(&self) -> usize {
        self.tiles.plan.rows * self.tiles.plan.cols
    }
    /// This rank's cells (without ghosts).
    pub fn local(&self) -> ArrayView2<'_, T> {
        self.tiles.local()
    }
    /// This rank's cells (without ghosts), mutable.
    pub fn local_mut(&mut self) -> ArrayViewMut2<'_, T> {
        self.tiles.local_mut()
    }
    /// This rank's block with its ghost border: local cell `(i, j)` is at `(i + g, j + g)`.
    pub fn padded(&self) -> &Array2<T> {
        &self.tiles.data
    }
    /// Mutable padded block. Write its cells, but keep its shape and
    /// (row-major) memory order: the ghost exchange works on it in place
    /// and refuses a block replaced by one of another shape or order.
    pub fn padded_mut(&mut self) -> &mut Array2<T> {
        &mut self.tiles.data
    }
    /// The rectangles this rank sends to and receives from every rank in a
    /// ghost exchange: `(send[r], recv[r])`, empty for itself.
    pub fn halo_regions(&self) -> (Vec<Option<Rect>>, Vec<Option<Rect>>) {
        self.tiles.halo_regions()
    }
}

/// A 2D ghost exchange with its must-match arguments, as errors name it.
fn exchange_call<T>((rows, cols): (usize, usize), ghost: usize) -> String {
    format!(
        "DistArray2::exchange_ghosts on a {rows}x{cols} array, ghost {ghost}, {}-byte elements",
        size_of::<T>()
    )
}
