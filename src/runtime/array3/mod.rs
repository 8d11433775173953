//! Distributed 3D grids over an arbitrary box tiling ([`GridPlan3`]).
//!
//! A [`DistArray3`] holds this rank's box of an `nx × ny × nz` grid, padded
//! by a ghost layer of width 1 to 4 on every side, with `ncomp` values per
//! cell. The block is one flat `Vec<T>` in C order: index
//! `((i·py + j)·pz + k)·ncomp + c` for padded local cell `(i, j, k)`
//! (`py`, `pz` the padded extents) and component `c` — `k` fastest, the
//! components of a cell contiguous. Global arrays (scatter, gather) use the
//! same order without padding: `((i·ny + j)·nz + k)·ncomp + c`.
//!
//! As in 2D ([`super::array`]), the cells a rank exchanges with another are
//! always the intersection of two boxes:
//!
//! * ghost exchange, 27-point ([`DistArray3::exchange_ghosts`]):
//!   `mine ∩ expand(theirs, g)` is sent, `expand(mine, g) ∩ theirs`
//!   received — faces, edges and corners;
//! * 7-point ([`DistArray3::exchange_faces`]): the same with `expand` along
//!   one axis at a time (faces only: a neighbour touches at most one face
//!   of a box, so it is still one box per neighbour);
//! * remap: `old_mine ∩ new_theirs` is sent, `old_theirs ∩ new_mine`
//!   received, so only cells whose owner changes travel.
//!
//! Ghost exchanges go to the neighbours only ([`super::halo`]), as one
//! subarray datatype per neighbour and direction on the padded block (the
//! grid layer's, [`super::layout`]; no packing, no staging); scatter,
//! gather and remap are collective, with a checked entry carrying the
//! shape, ghost width, components, element size and exchange count, so that
//! ranks that disagree get the same error.

use std::mem::size_of;

use mpi::topology::SimpleCommunicator;
use mpi::traits::*;

use super::array::Element;
use super::clock::{polling, waiting};
use super::comm::{agree, check_identical, fingerprint};
use super::cost::{cost_methods_3d, CostField, CostGrid};
use super::halo::{self, ExchangeStats};
use super::layout::{
    exchange_on, move_whole, transfer, whole_layouts, HaloTypes, Layout, RawField, Way,
};
use super::object::{global_stats, Core, MoveStats};
use super::watchdog::Checkpoints;
use crate::error::{Error, Result};
use crate::plan::array3d::{Box3, GridPlan3, Shape3, Stencil};

/// Largest ghost width a [`DistArray3`] accepts.
pub const MAX_GHOST3: usize = 4;

mod block;

use block::{check_args, Block3};

/// A 3D grid distributed over the ranks of a communicator by a
/// [`GridPlan3`]: box `r` of the plan lives on rank `r`, padded by `ghost`
/// layers, with `ncomp` values per cell (layout in the module's
/// documentation). Keeps its own duplicate of the communicator.
pub struct DistArray3<T> {
    /// The communicator, the checked channel and the exchange count.
    core: Core,
    block: Block3<T>,
    /// The derived datatypes of the 7-point and the 27-point exchange on
    /// the current plan (made at the first exchange of each kind).
    halo_types: [Option<HaloTypes>; 2],
    /// Fingerprints of the 7-point and the 27-point exchange call.
    exchange_fp: [u64; 2],
    /// The cost per cell of this rank's box, if the application set one.
    cost: Option<CostField>,
}

impl<T> std::fmt::Debug for DistArray3<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DistArray3")
            .field("rank", &self.block.rank)
            .field("ghost", &self.block.ghost)
            .field("ncomp", &self.block.ncomp)
            .field("plan", &self.block.plan)
            .finish_non_exhaustive()
    }
}

impl<T: Element> DistArray3<T> {
    /// An array of default values laid out by `plan`, with `ghost` layers
    /// (1 to [`MAX_GHOST3`], at most the grid's smallest extent) and `ncomp`
    /// components per cell, on a duplicate of `comm` (collective). Bad or
    /// differing arguments are the same error on every rank.
    pub fn with_plan<C: Communicator>(
        comm: &C,
        plan: GridPlan3,
        ghost: usize,
        ncomp: usize,
    ) -> Result<Self> {
        let _w = waiting();
        let (comm, cp) = Checkpoints::duplicate_checked(
            comm,
            &format!(
                "DistArray3::with_plan({}, ghost {ghost}, {ncomp} components, {}-byte elements)",
                describe_plan(&plan),
                size_of::<T>()
            ),
        )?;
        Self::on(comm, cp, plan, ghost, ncomp)
    }

    /// Checks and creates on an already duplicated communicator.
    fn on(
        comm: SimpleCommunicator,
        cp: Checkpoints,
        plan: GridPlan3,
        ghost: usize,
        ncomp: usize,
    ) -> Result<Self> {
        agree(
            &comm,
            0,
            check_args::<T>(&plan, comm.size() as usize, ghost, ncomp),
        )?;
        check_identical(&comm, 0, "plan", &plan)?;
        let rank = comm.rank() as usize;
        let mut a = DistArray3 {
            core: Core::new(comm, cp),
            block: Block3::new(plan, rank, ghost, ncomp),
            halo_types: [None, None],
            exchange_fp: [0; 2],
            cost: None,
        };
        a.exchange_fp = [false, true].map(|c| halo::fingerprint(&a.exchange_call(c)));
        Ok(a)
    }

    /// Scatters the root's `global` grid (`nx·ny·nz·ncomp` values in C
    /// order, components fastest; read on the root only) into boxes laid
    /// out by `plan`. Errors (bad ghost width or components, a plan not
    /// tiling or with another part count, a global array of the wrong
    /// length or missing at the root) are the same on every rank.
    pub fn scatter_with_plan<C: Communicator>(
        comm: &C,
        root: i32,
        plan: GridPlan3,
        ghost: usize,
        ncomp: usize,
        global: Option<&[T]>,
    ) -> Result<(Self, MoveStats)> {
        let _w = waiting();
        let (comm, cp) = Checkpoints::duplicate_checked(
            comm,
            &format!(
                "DistArray3::scatter_with_plan({} from root {root}, ghost {ghost}, {ncomp} components, {}-byte elements)",
                describe_plan(&plan),
                size_of::<T>()
            ),
        )?;
        let at_root = comm.rank() == root;
        let want = plan.cells().saturating_mul(ncomp);
        let ok = match global {
            _ if !at_root => Ok(()),
            None => Err(Error::invalid_input(
                "DistArray3::scatter_with_plan: the root has no array",
            )),
            Some(g) if g.len() != want => Err(Error::shape_mismatch(format!(
                "global array has {} values, the {}x{}x{} grid of {ncomp} components needs {want}",
                g.len(),
                plan.shape.0,
                plan.shape.1,
                plan.shape.2
            ))),
            Some(_) => Ok(()),
        };
        agree(&comm, root, ok)?;
        let a = Self::on(comm, cp, plan, ghost, ncomp)?;
        let layouts = agree(&*a.core.comm, root, a.whole_layouts(root))?;
        let src = global
            .filter(|_| at_root)
            .map_or(std::ptr::null(), <[T]>::as_ptr);
        // SAFETY: the block is this rank's padded block of its layout (made
        // by `on`), written; the root's array is the whole grid in C order,
        // only read; both checked against their layouts.
        let (sent, mine, msgs, start) = unsafe {
            move_whole(
                &*a.core.comm,
                Way::Scatter,
                (&layouts.0, &layouts.1),
                a.field(),
                a.whole(src),
            )
        }?;
        let stats = global_stats(&*a.core.comm, sent, mine, msgs, start);
        Ok((a, stats))
    }

    /// Gathers the grid at `root`: `Some(values)` there (C order, components
    /// fastest, as [`DistArray3::scatter`] takes them), `None` elsewhere.
    pub fn gather(&self, root: i32) -> Result<Option<Vec<T>>> {
        let _w = waiting();
        self.check(&format!("DistArray3::gather(to root {root})"))?;
        let (layout, at) = agree(&*self.core.comm, root, self.whole_layouts(root))?;
        let at_root = self.core.comm.rank() == root;
        let cells = if at_root { self.global_cells() } else { 0 };
        let mut global = vec![T::default(); cells * self.block.ncomp];
        // SAFETY: the block is this rank's padded block of `layout`, only
        // read; the root's `global` is the whole grid in C order, written,
        // borrowed here alone; both checked against their layouts.
        unsafe {
            move_whole(
                &*self.core.comm,
                Way::Gather,
                (&layout, &at),
                self.field(),
                self.whole(global.as_mut_ptr()),
            )
        }?;
        Ok(at_root.then_some(global))
    }

    /// This rank's block as the grid layer's field (`ncomp` values of `T` a cell).
    fn field(&self) -> RawField {
        RawField {
            data: self.block.data.as_ptr().cast_mut().cast(),
            elem_size: self.block.ncomp * size_of::<T>(),
            pad: [self.block.ghost; 3],
        }
    }

    /// The whole grid at `data` (no padding) as the grid layer's field.
    fn whole(&self, data: *const T) -> RawField {
        RawField {
            data: data.cast_mut().cast(),
            pad: [0; 3],
            ..self.field()
        }
    }

    /// The layouts of a move between this rank's block and the whole grid
    /// at `root` ([`move_whole`]): this rank's box without halo, and the
    /// root's whole grid, checked for the block and, at the root, for the
    /// whole grid.
    fn whole_layouts(&self, root: i32) -> Result<(Layout, Layout)> {
        let b = &self.block;
        let cells = (b.ncomp * size_of::<T>(), [b.ghost; 3]);
        whole_layouts(&b.plan, b.rank, root, cells)
    }

    /// Fills the ghost layers with the neighbours' cells, faces, edges and
    /// corners (a 27-point stencil's halo): every rank must call it, but it
    /// synchronises only with its neighbours ([`super::halo`]). Ghost cells
    /// outside the grid are left untouched. Returns this rank's statistics.
    pub fn exchange_ghosts(&mut self) -> Result<ExchangeStats> {
        self.exchange(Stencil::twenty_seven(self.block.ghost))
    }

    /// Fills only the face ghost layers (a 7-point stencil's halo): less
    /// to send than [`DistArray3::exchange_ghosts`]; edge and corner ghost
    /// cells keep stale values.
    pub fn exchange_faces(&mut self) -> Result<ExchangeStats> {
        self.exchange(Stencil::seven(self.block.ghost))
    }

    /// A ghost exchange of `stencil`'s kind (7 or 27 points; the width is the array's).
    pub fn exchange(&mut self, stencil: Stencil) -> Result<ExchangeStats> {
        let w = polling();
        let corners = stencil.corners();
        // Described only with checked exchanges and on the error path.
        let (shape, ghost, ncomp) = (self.block.plan.shape, self.block.ghost, self.block.ncomp);
        let what = move || exchange_call::<T>(shape, ghost, ncomp, corners);
        let call = self
            .core
            .next_exchange(what, self.exchange_fp[usize::from(corners)])?;
        let base = self.block.data.as_mut_ptr().cast();
        let (plan, rank) = (&self.block.plan, self.block.rank);
        let make = || {
            let layout = Layout::new(plan.clone(), rank, stencil)?;
            HaloTypes::new(&layout, ncomp * size_of::<T>(), [ghost; 3])
        };
        let cache = &mut self.halo_types[usize::from(corners)];
        // SAFETY: the datatypes address the padded block of this rank's box
        // (`ghost` layers, `ncomp` components of T per cell, C order: the
        // grid layer's field layout), checked against the layout when they
        // are made; the block is not touched until the exchange returns.
        unsafe {
            exchange_on(
                &*self.core.comm,
                &self.core.cp,
                (call, w),
                &what,
                base,
                (cache, make),
            )
        }
    }

    /// The exchange call with its must-match arguments, as errors name it.
    fn exchange_call(&self, corners: bool) -> String {
        exchange_call::<T>(
            self.block.plan.shape,
            self.block.ghost,
            self.block.ncomp,
            corners,
        )
    }

    /// This array on `comm` laid out by `plan`, in which this rank has the
    /// same box as now: the block moves over without a copy (collective on
    /// `comm`; a departure's successor on the ranks that stay). `self` is
    /// left with an empty block.
    pub(crate) fn successor(&mut self, comm: &SimpleCommunicator, plan: GridPlan3) -> Result<Self> {
        let (ghost, ncomp) = (self.block.ghost, self.block.ncomp);
        let mut n = DistArray3::with_plan(comm, plan, ghost, ncomp)?;
        let same = n.local_box() == self.local_box();
        agree(
            &*n.core.comm,
            0,
            if same {
                Ok(())
            } else {
                Err(Error::invalid_input(
                    "DistArray3: the successor's box differs",
                ))
            },
        )?;
        std::mem::swap(&mut n.block.data, &mut self.block.data);
        Ok(n)
    }

    /// Moves the data to `new_plan`: only the cells whose owner changes
    /// travel, on the grid layer (module `layout`): one derived-datatype
    /// message per pair of ranks whose boxes overlap, from the old block
    /// straight into the new one (no staging), the kept cells copied
    /// locally. One checked entry
    /// first (a rank moving to another plan is a disagreement there). On
    /// error every rank returns the same `Err` and keeps its old data. Ghost
    /// cells of the new block are default-initialised: exchange ghosts
    /// afterwards.
    pub fn remap(&mut self, new_plan: &GridPlan3) -> Result<MoveStats> {
        let _w = waiting();
        // What each rank can check alone, refused at the one checked entry;
        // the new plan's fingerprint in the call makes a rank moving to
        // another plan a disagreement there.
        let layouts = self.remap_layouts(new_plan);
        let fp = fingerprint(new_plan)?;
        self.check_refusing(
            &format!(
                "DistArray3::remap(to {}, plan #{fp:016x})",
                describe_plan(new_plan)
            ),
            layouts.as_ref().err(),
        )?;
        self.move_to(layouts?, new_plan.clone())
    }

    /// [`DistArray3::remap`] at a balance point, to the plan rank 0 made
    /// and broadcast: identical on every rank by construction, and the
    /// balance point's checked entry came before, so no checked entry and
    /// no fingerprint here (what each rank checks alone is agreed on).
    pub(crate) fn remap_broadcast(&mut self, new_plan: GridPlan3) -> Result<MoveStats> {
        let _w = waiting();
        let layouts = agree(&*self.core.comm, 0, self.remap_layouts(&new_plan))?;
        self.move_to(layouts, new_plan)
    }

    /// The move of a remap to `new_plan`, laid out `from` and `to` on this
    /// rank (checked on every rank).
    fn move_to(&mut self, (from, to): (Layout, Layout), new_plan: GridPlan3) -> Result<MoveStats> {
        let (g, ncomp, rank) = (self.block.ghost, self.block.ncomp, self.block.rank);
        let elem_size = ncomp * size_of::<T>();
        let mut next = Block3::new(new_plan, rank, g, ncomp);
        let field = |data: *mut T| RawField {
            data: data.cast(),
            elem_size,
            pad: [g; 3],
        };
        let new = field(next.data.as_mut_ptr());
        let old = field(self.block.data.as_ptr().cast_mut());
        // SAFETY: both blocks are padded boxes of their layouts (`ghost` layers,
        // `ncomp` components of T per cell, C order), the grid layer's field
        // layout; `old` is only read, `new` is a distinct allocation.
        let (sent, moved, msgs, start) =
            unsafe { transfer(&*self.core.comm, &from, &to, &[old], &[new]) }?;
        let stats = global_stats(&*self.core.comm, sent, moved, msgs, start);
        self.block = next;
        self.halo_types = [None, None];
        Ok(stats)
    }

    /// The grid layer's layouts of this rank's box before and after a remap
    /// to `new_plan`, with the checks every rank can make alone.
    fn remap_layouts(&self, new_plan: &GridPlan3) -> Result<(Layout, Layout)> {
        let (g, ncomp, rank) = (self.block.ghost, self.block.ncomp, self.block.rank);
        if new_plan.shape != self.block.plan.shape {
            return Err(Error::shape_mismatch(format!(
                "new plan is for {}, the grid is {}",
                describe_plan(new_plan),
                describe_plan(&self.block.plan)
            )));
        }
        check_args::<T>(new_plan, self.core.comm.size() as usize, g, ncomp)?;
        let layout = |plan: &GridPlan3| -> Result<Layout> {
            let l = Layout::new(plan.clone(), rank, Stencil::seven(g))?;
            l.check_block(ncomp * size_of::<T>(), [g; 3])?;
            Ok(l)
        };
        Ok((layout(&self.block.plan)?, layout(new_plan)?))
    }

    cost_methods_3d!(
        "DistArray3",
        #[doc = ""],
        #[doc = "Set it again after a remap changes the box."]
    );

    /// The grid and cost field as the balancer sees them (`None` without
    /// a cost field).
    pub(crate) fn cost_grid(&self) -> Option<CostGrid<'_>> {
        self.cost
            .as_ref()
            .map(|field| CostGrid::of_plan(field, self.plan(), self.block.rank))
    }

    /// Moves this array to `other`'s layout ([`DistArray3::remap`]): a
    /// second field of the same grid follows the first after
    /// [`Balancer::maybe_remap`](super::balancer::Balancer::maybe_remap)
    /// moved it (`v.remap_like(&u)?` when `report.remap`).
    pub fn remap_like<U: Element>(&mut self, other: &DistArray3<U>) -> Result<MoveStats> {
        self.remap(other.plan())
    }

    /// The checked entry of a verb: `op` with the grid's shape, ghost
    /// width, components, element size and exchange count.
    fn check(&self, op: &str) -> Result<()> {
        self.check_refusing(op, None)
    }

    /// [`DistArray3::check`], where this rank may refuse with its own error
    /// (every rank then returns the lowest refusing rank's).
    fn check_refusing(&self, op: &str, refused: Option<&Error>) -> Result<()> {
        let (nx, ny, nz) = self.block.plan.shape;
        self.core.cp.check_refusing(
            &*self.core.comm,
            &format!(
                "{op} on a {nx}x{ny}x{nz} grid, ghost {}, {} components, {}-byte elements, after {} ghost exchanges",
                self.block.ghost,
                self.block.ncomp,
                size_of::<T>(),
                self.core.exchanges()
            ),
            refused,
        )
    }

    /// Sets the timeout of the array's collectives (local; every rank must do the same).
    pub fn set_timeout(&mut self, timeout: Option<std::time::Duration>) {
        self.core.cp.set_timeout(timeout);
    }
    /// Ghost exchanges made so far (of either kind).
    pub fn exchanges(&self) -> u64 {
        self.core.exchanges()
    }
    /// The array's checked channel (a balancer adopts the arrays it makes).
    pub(crate) fn checks_mut(&mut self) -> &mut Checkpoints {
        &mut self.core.cp
    }
    /// The array's communicator (a duplicate of the one it was created on).
    pub fn comm(&self) -> &SimpleCommunicator {
        &self.core.comm
    }
    /// The plan the array is laid out by.
    pub fn plan(&self) -> &GridPlan3 {
        &self.block.plan
    }
    /// This rank's box in global coordinates.
    pub fn local_box(&self) -> Box3 {
        self.block.me()
    }
    /// Ghost width.
    pub fn ghost(&self) -> usize {
        self.block.ghost
    }
    /// Components per cell.
    pub fn ncomp(&self) -> usize {
        self.block.ncomp
    }
    /// Global shape `(nx, ny, nz)`.
    pub fn global_shape(&self) -> Shape3 {
        self.block.plan.shape
    }
    /// Number of cells of the whole grid.
    pub fn global_cells(&self) -> usize {
        self.block.plan.cells()
    }
    /// Padded extents of this rank's block (`[0; 3]` for an empty box).
    pub fn padded_dims(&self) -> [usize; 3] {
        Block3::<T>::padded_dims(&self.block.me(), self.block.ghost)
    }
    /// Flat index in [`DistArray3::padded`] of component `c` of the cell at
    /// global `(i, j, k)`, which must lie in this rank's box expanded by the ghost width.
    pub fn index(&self, i: usize, j: usize, k: usize, c: usize) -> usize {
        let (me, g) = (self.block.me(), self.block.ghost);
        let d = self.padded_dims();
        let at = [i + g - me.x, j + g - me.y, k + g - me.z];
        ((at[0] * d[1] + at[1]) * d[2] + at[2]) * self.block.ncomp + c
    }
    /// This rank's padded block, flat (layout in the module's documentation).
    pub fn padded(&self) -> &[T] {
        &self.block.data
    }
    /// Mutable padded block.
    pub fn padded_mut(&mut self) -> &mut [T] {
        &mut self.block.data
    }
    /// This rank's own cells (no ghosts), packed in C order, components fastest.
    pub fn local_values(&self) -> Vec<T> {
        self.block.pack_own()
    }
    /// Overwrites this rank's own cells from `values` (as [`DistArray3::local_values`] gives them).
    pub fn set_local_values(&mut self, values: &[T]) -> Result<()> {
        let me = self.block.me();
        let want = me.volume() * self.block.ncomp;
        if values.len() != want {
            return Err(Error::shape_mismatch(format!(
                "{} values for a box of {want}",
                values.len()
            )));
        }
        if let Some(c) = self.block.cells(Some(me).filter(|b| !b.is_empty())) {
            self.block.unpack(&c, values);
        }
        Ok(())
    }
    /// The boxes this rank sends to and receives from every rank in a ghost
    /// exchange of `stencil`'s kind: `(send[r], recv[r])`.
    pub fn halo_regions(&self, stencil: Stencil) -> (Vec<Option<Box3>>, Vec<Option<Box3>>) {
        let g = self.block.ghost;
        let stencil = if stencil.corners() {
            Stencil::twenty_seven(g)
        } else {
            Stencil::seven(g)
        };
        let p = self.block.plan.len();
        let (mut send, mut recv) = (vec![None; p], vec![None; p]);
        for (q, s, r) in self.block.plan.halo_pairs(self.block.rank, stencil) {
            send[q] = Some(s);
            recv[q] = Some(r);
        }
        (send, recv)
    }
}

/// A plan as the checked calls name it.
fn describe_plan(plan: &GridPlan3) -> String {
    let (nx, ny, nz) = plan.shape;
    format!("{nx}x{ny}x{nz} in {} parts", plan.len())
}

/// A 3D ghost exchange with its must-match arguments, as errors name it.
fn exchange_call<T>(
    (nx, ny, nz): (usize, usize, usize),
    ghost: usize,
    ncomp: usize,
    corners: bool,
) -> String {
    format!(
        "DistArray3::exchange_{} on a {nx}x{ny}x{nz} grid, ghost {ghost}, {ncomp} components, {}-byte elements",
        if corners { "ghosts" } else { "faces" },
        size_of::<T>()
    )
}
