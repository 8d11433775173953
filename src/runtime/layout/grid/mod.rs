//! [`Grid`]: a grid on the application's buffers (see the module
//! [`super`]): the object, its cost per cell and its remap (the pending
//! layout and the move). Its ghost exchanges, blocking and begin/end, and
//! the cache of datatypes per field set they share with the move are in
//! [`exchange`]; a field to and from one whole array at a root
//! ([`Grid::gather`], [`Grid::scatter`]) in [`whole`].

use std::rc::Rc;

use mpi::topology::SimpleCommunicator;
use mpi::traits::*;

use super::datatypes::PeerTypes;
use super::transfer::transfer;
use super::{Field, Layout, RawField};
use crate::error::{Error, Result};
use crate::plan::array3d::{Box3, GridPlan3, Shape3, Stencil};
use crate::runtime::clock::waiting;
use crate::runtime::comm::{agree, check_identical};
use crate::runtime::cost::{cost_methods_3d, CostField, CostGrid};
use crate::runtime::object::{global_stats, migration_volume3, Core, MoveStats};
use crate::runtime::watchdog::Checkpoints;

mod exchange;
mod whole;

pub use exchange::{Exchange, PendingExchange};
use exchange::{FieldKey, LastCall};

/// A grid distributed by a [`GridPlan3`] whose data lives in the
/// application's buffers (see the module's documentation). Keeps its own
/// duplicate of the communicator; made by
/// [`Grid::new`] (planned by a balancer) or [`Grid::with_plan`].
pub struct Grid {
    /// The communicator, the checked channel and the exchange count.
    core: Core,
    layout: Layout,
    pending: Option<Layout>,
    /// Bytes per cell of the last exchange's fields (the remap cost model's).
    cell_bytes: usize,
    in_flight: usize,
    cache: Vec<(FieldKey, Rc<PeerTypes>)>,
    /// The last exchange call's identity ([`LastCall`]).
    last_call: Option<LastCall>,
    /// The cost per cell set by [`Grid::set_cost`], for the box it was set for.
    cost: Option<CostField>,
}

impl std::fmt::Debug for Grid {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Grid")
            .field("layout", &self.layout)
            .field("pending", &self.pending)
            .field("exchanges", &self.core.exchanges())
            .finish_non_exhaustive()
    }
}

impl Grid {
    /// A grid laid out by `plan` (one part per rank of `comm`) for
    /// `stencil` (ghost width 0 to [`MAX_GHOST`](super::MAX_GHOST)), on a duplicate of `comm`
    /// (collective). Bad or differing arguments are the same error on every rank.
    pub fn with_plan<C: Communicator>(comm: &C, plan: GridPlan3, stencil: Stencil) -> Result<Self> {
        let _w = waiting();
        let (nx, ny, nz) = plan.shape;
        let (comm, cp) = Checkpoints::duplicate_checked(
            comm,
            &format!(
                "Grid::with_plan({nx}x{ny}x{nz} in {} parts, {}-point stencil, ghost {})",
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
            core: Core::new(comm, cp),
            layout,
            pending: None,
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
        self.core.exchanges()
    }
    /// Bytes per cell of the last exchange's fields (0 before the first):
    /// what a remap decision counts per cell that moves.
    pub fn cell_bytes(&self) -> usize {
        self.cell_bytes
    }
    /// The grid's communicator (a duplicate of the one it was created on).
    pub fn comm(&self) -> &SimpleCommunicator {
        &self.core.comm
    }
    /// Sets the timeout of the grid's collectives (local; every rank must do the same).
    pub fn set_timeout(&mut self, timeout: Option<std::time::Duration>) {
        self.core.cp.set_timeout(timeout);
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
        match self
            .core
            .cp
            .check_refusing(&*self.core.comm, what, Some(&why))
        {
            Err(e) => e,
            Ok(()) => why,
        }
    }

    /// The checked entry of a collective call `what` of the grid, with
    /// this rank's own refusal: every rank returns the same error.
    pub(crate) fn checked_entry(&self, what: &str, refused: Option<&Error>) -> Result<()> {
        self.core.cp.check_refusing(&*self.core.comm, what, refused)
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
        &mut self.core.cp
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
    /// [`Balancer::maybe_remap`](crate::runtime::balancer::Balancer::maybe_remap)):
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
            self.core.exchanges()
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
        self.core
            .cp
            .check_refusing(&*self.core.comm, &what, local.as_ref().err())?;
        let next = local?;
        check_identical(&*self.core.comm, 0, "new plan", next.plan())?;
        self.pending = Some(next);
        Ok(())
    }

    /// A move this rank cannot take part in (`why`): the move's checked
    /// entry with this rank's refusal, so that every rank returns the same
    /// error (collective). For bindings.
    pub fn refuse_move(&mut self, why: Error) -> Error {
        self.refuse_call(&self.move_call(&[], &[]), why)
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
            self.core.exchanges()
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
        self.core
            .cp
            .check_refusing(&*self.core.comm, &what, local.as_ref().err())?;
        let next = self.pending.take().expect("checked: a move is pending");
        // No barrier: the move's agreement starts the ranks together, and
        // its time is taken from there.
        // SAFETY: the fields were checked against both layouts (contract).
        let res = unsafe { transfer(&*self.core.comm, &self.layout, &next, old, new) };
        let (sent, mine, msgs, start) = match res {
            Ok(x) => x,
            Err(e) => {
                self.pending = Some(next);
                return Err(e);
            }
        };
        let stats = global_stats(&*self.core.comm, sent, mine, msgs, start);
        self.layout = next;
        self.cache.clear();
        Ok(stats)
    }
}
