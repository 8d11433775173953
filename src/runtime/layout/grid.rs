//! [`Grid`]: a grid on the application's buffers (see the module
//! [`super`]): its exchanges, blocking and begin/end, the cache of datatypes
//! per field set, its cost per cell and its remap (the pending layout and
//! the move). One object in one file: its exchanges and its move share the
//! datatype cache and the pending layout.

use std::rc::Rc;

use mpi::topology::SimpleCommunicator;
use mpi::traits::*;

use super::datatypes::{offsets, post_exchange, PeerTypes};
use super::transfer::transfer;
use super::{Field, Layout, RawField};
use crate::error::{Error, Result};
use crate::plan::array3d::{Box3, GridPlan3, Shape3, Stencil};
use crate::runtime::clock::{polling, waiting};
use crate::runtime::comm::{agree, check_identical};
use crate::runtime::cost::{cost_methods_3d, CostField, CostGrid};
use crate::runtime::halo::{self, Posted};
use crate::runtime::object::{global_stats, migration_volume3, next_call, MoveStats, OwnComm};
use crate::runtime::watchdog::Checkpoints;

/// The key of a cached field set: per field, its offset from the first
/// field's buffer, element size and padding.
type FieldKey = Vec<(isize, usize, [usize; 3])>;

/// Cached field sets per layout (the oldest is dropped beyond this).
const CACHED_FIELD_SETS: usize = 8;

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
/// [`Balancer::new_grid`](crate::runtime::balancer::Balancer::new_grid) or [`Grid::new`].
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
            .field("exchanges", &self.exchanges)
            .finish_non_exhaustive()
    }
}

/// The last exchange call's identity, kept while the next calls are the
/// same (element sizes and cell types): its name and fingerprint.
#[derive(Debug)]
struct LastCall {
    sizes: Vec<usize>,
    types: Vec<String>,
    what: Rc<str>,
    fingerprint: u64,
}

impl Grid {
    /// A grid laid out by `plan` (one part per rank of `comm`) for
    /// `stencil` (ghost width 0 to [`MAX_GHOST`](super::MAX_GHOST)), on a duplicate of `comm`
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
    /// returns `why` (`halo::refuse`). For bindings.
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
    /// sizes and cell types are the same (the hot path formats nothing).
    fn call_of(&mut self, fields: &[RawField], types: &[&str]) -> (Rc<str>, u64) {
        if let Some(c) = &self.last_call {
            if c.sizes.len() == fields.len()
                && c.sizes.iter().zip(fields).all(|(&s, f)| s == f.elem_size)
                && c.types.iter().map(String::as_str).eq(types.iter().copied())
            {
                return (c.what.clone(), c.fingerprint);
            }
        }
        let what: Rc<str> = self.exchange_call(fields, types).into();
        let fingerprint = halo::fingerprint(&what);
        self.last_call = Some(LastCall {
            sizes: fields.iter().map(|f| f.elem_size).collect(),
            types: types.iter().map(|t| t.to_string()).collect(),
            what: what.clone(),
            fingerprint,
        });
        (what, fingerprint)
    }

    /// The exchange call with its must-match arguments, as errors name it:
    /// the cells' types too where the caller names them.
    fn exchange_call(&self, fields: &[RawField], types: &[&str]) -> String {
        let (nx, ny, nz) = self.layout.plan.shape;
        let sizes: Vec<usize> = fields.iter().map(|f| f.elem_size).collect();
        let types = if types.is_empty() {
            String::new()
        } else {
            format!(" ({})", types.join(", "))
        };
        format!(
            "Grid::exchange on a {nx}x{ny}x{nz} grid, {}-point stencil, ghost {}, {} fields of {sizes:?}-byte cells{types}",
            self.layout.stencil.points(),
            self.layout.stencil.ghost,
            fields.len(),
        )
    }

    /// Fills the ghost cells of every field from the neighbours (one
    /// message to and from each, nothing through the root; see the
    /// module's documentation). Ghost cells outside the grid are left
    /// untouched. Every rank must call it with the same number of fields,
    /// element sizes and element types (compared where they are primitive
    /// numbers: `f64` against `i64`; paddings may differ); a difference,
    /// or a wrong slice length on one rank, is the same error on every rank
    /// involved.
    pub fn exchange(&mut self, fields: &mut [Field<'_>]) -> Result<()> {
        self.exchange_begin(fields)?.end()
    }

    /// Starts [`Grid::exchange`]; the fields stay borrowed until
    /// [`Exchange::end`]. (To compute on a field's interior meanwhile, use
    /// [`Grid::exchange_begin_raw`].)
    pub fn exchange_begin<'a>(&'a mut self, fields: &'a mut [Field<'_>]) -> Result<Exchange<'a>> {
        let raw: Vec<RawField> = fields.iter().map(|f| f.raw).collect();
        let lens: Vec<usize> = fields.iter().map(|f| f.len).collect();
        // Named only when every field's type is (see `Field::new`).
        let types: Vec<&str> = if fields.iter().all(|f| !f.cell_type.is_empty()) {
            fields.iter().map(|f| f.cell_type).collect()
        } else {
            Vec::new()
        };
        // SAFETY: the fields' slices are borrowed by the returned Exchange
        // until it ends (its drop ends it too); their lengths are checked.
        let pending = unsafe { self.begin(&raw, Some(&lens), &types) }?;
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
        unsafe { self.begin(fields, None, &[]) }
    }

    /// [`Grid::exchange_begin_raw`] with the name of each field's cell type
    /// (`types[k]` for `fields[k]`, e.g. a NumPy dtype): ranks whose types
    /// differ get the same error on every rank, as for element sizes that
    /// differ — cells of one size but another type (`f64` against `i64`)
    /// would otherwise be exchanged as bytes. [`Grid::exchange`] names
    /// the Rust types itself.
    ///
    /// # Safety
    /// As [`Grid::exchange_begin_raw`].
    pub unsafe fn exchange_begin_raw_typed(
        &mut self,
        fields: &[RawField],
        types: &[&str],
    ) -> Result<PendingExchange> {
        if types.len() != fields.len() {
            let why = Error::invalid_input(format!(
                "{} fields but {} cell types",
                fields.len(),
                types.len()
            ));
            return Err(self.refuse_exchange(why));
        }
        // SAFETY: the caller's contract.
        unsafe { self.begin(fields, None, types) }
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
        types: &[&str],
    ) -> Result<PendingExchange> {
        let _w = polling();
        let (what, fp) = self.call_of(fields, types);
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
        // No barrier: the move's agreement starts the ranks together, and
        // its time is taken from there.
        // SAFETY: the fields were checked against both layouts (contract).
        let res = unsafe { transfer(&*self.comm, &self.layout, &next, old, new) };
        let (sent, mine, msgs, start) = match res {
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
