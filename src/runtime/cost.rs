//! A cost per cell on distributed grids: work that is not uniform in space.
//!
//! A solver whose cells do unequal work (more chemistry in a flame front,
//! more iterations of a local solve near a shock) gives each block's cost
//! per cell to its container — [`DistArray2::set_cost`](super::array::DistArray2::set_cost),
//! [`DistArray3::set_cost`](super::array3::DistArray3::set_cost), a grid on
//! the application's buffers: [`Grid::set_cost`](super::layout::Grid::set_cost)
//! (`nuce_grid_set_cost` in C), or their `set_cost_with` variants that
//! evaluate a closure on the block's global indices. Costs are in any unit (relative work per cell), finite and
//! `≥ 0`, and not all 0 over the grid. Setting a cost is local (no
//! communication); the cost may change at every phase.
//!
//! At the next balance point ([`Balancer::maybe_remap`](super::balancer::Balancer::maybe_remap)):
//!
//! 1. each rank's speed is its summed cost × the phase's iterations divided
//!    by its compute time (cost units per second), not its cell count;
//! 2. the root gathers the cost field (8 bytes per cell, one
//!    `MPI_Gatherv`), builds its prefix sums
//!    ([`CellCosts`]) and plans with the weighted recursive bisection
//!    ([`WeightedBisection3d`](crate::plan::array3d::WeightedBisection3d),
//!    [`WeightedBisection2d`](crate::plan::array2d::WeightedBisection2d)):
//!    each part's `Σ cost / speed` is balanced, whatever the balancer's
//!    decomposer for cost-free arrays;
//! 3. the decision predicts each layout's time per iteration as
//!    `max_i Σ cost_i / speed_i`.
//!
//! A cost belongs to the block it was set for: after a remap that changes
//! this rank's block, set it again (for the new block) before the next
//! balance point — a stale cost, a cost of the wrong length, a NaN,
//! negative or infinite cost on any rank is the same error on every rank,
//! and so is a cost set on some ranks but not on others.
//! [`clear_cost`](super::array3::DistArray3::clear_cost) goes back to
//! cells. The planner balances the cost of the phase just measured: when
//! the expensive region moves, the phase after the move runs on the old
//! layout and the balance point after it moves the data. The first layout
//! (`DistArray3::scatter`, `DistArray2::new`, …) is planned by cells; the
//! first balance point with a cost field re-plans by cost. Speeds in cost
//! units and in cells are not comparable: switching between them (setting
//! a first cost after phases timed by cells, or clearing it) looks to the
//! phase timer like a change of speed, which it follows within one phase.
//! A cost should be the real relative work per cell: the balance is as
//! good as the cost model.

use mpi::datatype::PartitionMut;
use mpi::traits::*;
use mpi::Count;

use super::comm::{agree, displacements};
use crate::error::{Error, Result};
use crate::plan::array3d::{check_cost_values, Box3, CellCosts, GridPlan3, Shape3};

/// The cost methods of a 3D container — `set_cost`, `set_cost_with`,
/// `clear_cost` and `cost` — over its field `cost: Option<CostField>` and
/// its `local_box()`, written once for [`DistArray3`](super::array3::DistArray3)
/// and [`Grid`](super::layout::Grid): `$name` names the type in the
/// documentation, and the attributes given after it (more documentation)
/// go to `set_cost`.
macro_rules! cost_methods_3d {
    ($name:literal $(, #[$doc:meta])*) => {
        #[doc = concat!(
            "Sets the cost per cell of this rank's box (its `nx·ny·nz` cells of [`",
            $name,
            "::local_box`] in C order, without ghosts or padding; any unit, finite and `≥ 0`): ",
            "the balancer then times, plans and decides by `Σ cost` instead of cell counts ",
            "(see module `cost`). Local; checked at the next balance point, where a bad cost ",
            "on any rank (NaN, negative, infinite, the wrong length, set on some ranks only, ",
            "all 0) is the same error on every rank."
        )]
        $(#[$doc])*
        pub fn set_cost(&mut self, costs: impl Into<Vec<f64>>) {
            self.cost = Some(CostField::new(self.local_box(), costs.into()));
        }

        #[doc = concat!(
            "[`", $name, "::set_cost`] from `f(i, j, k)` at each cell's global indices (local)."
        )]
        pub fn set_cost_with(&mut self, f: impl Fn(usize, usize, usize) -> f64) {
            self.cost = Some(CostField::from_fn(self.local_box(), f));
        }

        /// Drops the cost field: the balancer counts cells again (local).
        pub fn clear_cost(&mut self) {
            self.cost = None;
        }

        #[doc = concat!("The cost field set by [`", $name, "::set_cost`], if any.")]
        pub fn cost(&self) -> Option<&CostField> {
            self.cost.as_ref()
        }
    };
}
pub(crate) use cost_methods_3d;

/// A container's cost per cell: the values, in C order over the block
/// they were set for (the block without ghosts).
#[derive(Debug, Clone, PartialEq)]
pub struct CostField {
    block: Box3,
    values: Vec<f64>,
}

impl CostField {
    /// The cost of `block` given as values in C order (checked at the
    /// balance point).
    pub(crate) fn new(block: Box3, values: Vec<f64>) -> Self {
        CostField { block, values }
    }

    /// The cost of `block` from `f(i, j, k)` at each cell's global indices.
    pub(crate) fn from_fn(block: Box3, f: impl Fn(usize, usize, usize) -> f64) -> Self {
        let mut values = Vec::with_capacity(block.volume());
        for i in block.x..block.x + block.nx {
            for j in block.y..block.y + block.ny {
                for k in block.z..block.z + block.nz {
                    values.push(f(i, j, k));
                }
            }
        }
        CostField { block, values }
    }

    /// The values, C order over the block they were set for.
    pub fn values(&self) -> &[f64] {
        &self.values
    }

    /// The block the values were set for.
    pub fn block(&self) -> Box3 {
        self.block
    }

    /// The values when the field was set for `block` (this rank's block
    /// now), `None` for a field of an older block: what carries over to
    /// a successor, a save file or a restarted container.
    pub(crate) fn values_for(&self, block: Box3) -> Option<Vec<f64>> {
        (self.block == block).then(|| self.values.clone())
    }

    /// `Σ cost` when the field fits `current` (this rank's block now) and
    /// every value is finite and `≥ 0`; a clear error otherwise. Local.
    pub(crate) fn checked_sum(&self, current: &Box3) -> Result<f64> {
        if self.block != *current {
            return Err(Error::invalid_input(format!(
                "the cost field was set for block {:?}, the block is now {current:?} (a remap changed it): set the cost of the new block",
                self.block
            )));
        }
        if self.values.len() != current.volume() {
            return Err(Error::shape_mismatch(format!(
                "{} cell costs for a block of {} cells",
                self.values.len(),
                current.volume()
            )));
        }
        check_cost_values(&self.values, 0)?;
        Ok(self.values.iter().sum())
    }
}

/// A container's view for the balancer when it has a cost field: the
/// field, the grid as 3D boxes (a 2D array as `rows × cols × 1`) and this
/// rank's block. Named only in the sealed [`Rebalance`](crate::Rebalance)
/// trait's hidden methods.
#[allow(unnameable_types)]
pub struct CostGrid<'a> {
    /// The cost field.
    pub field: &'a CostField,
    /// The grid's shape.
    pub shape: Shape3,
    /// Every rank's block, in rank order.
    pub boxes: Vec<Box3>,
    /// This rank.
    pub rank: usize,
}

impl<'a> CostGrid<'a> {
    /// The view of a 3D grid laid out by `plan`, for `rank`.
    pub(crate) fn of_plan(field: &'a CostField, plan: &GridPlan3, rank: usize) -> Self {
        CostGrid {
            field,
            shape: plan.shape,
            boxes: plan.boxes.clone(),
            rank,
        }
    }

    /// This rank's `Σ cost` (local check, see [`CostField`]).
    pub fn local_sum(&self) -> Result<f64> {
        self.field.checked_sum(&self.boxes[self.rank])
    }

    /// Gathers the checked cost field at `root` and builds its prefix sums
    /// there (`Some` at the root, `None` elsewhere); every rank must have
    /// passed [`CostGrid::local_sum`] (agreed). Errors (an all-zero field,
    /// a block beyond MPI's counts) are the same on every rank. Collective.
    pub fn gather<C: Communicator>(&self, comm: &C, root: i32) -> Result<Option<CellCosts>> {
        let counts: Result<Vec<Count>> = self
            .boxes
            .iter()
            .map(|b| {
                Count::try_from(b.volume()).map_err(|_| {
                    Error::invalid_input(format!(
                        "a block of {} cells is beyond MPI's counts for the cost gather",
                        b.volume()
                    ))
                })
            })
            .collect();
        // Every rank knows the counts: they agree without communication.
        let counts = counts?;
        let mine = self.field.values();
        let proc = comm.process_at_rank(root);
        if comm.rank() != root {
            proc.gather_varcount_into(mine);
            return agree(comm, root, Ok(None));
        }
        let displs = displacements(&counts);
        let mut flat = vec![0.0f64; counts.iter().map(|&c| c as usize).sum()];
        {
            let mut part = PartitionMut::new(&mut flat[..], &counts[..], &displs[..]);
            proc.gather_varcount_into_root(mine, &mut part);
        }
        let (nx, ny, nz) = self.shape;
        let mut global = vec![0.0f64; nx * ny * nz];
        for (b, &d) in self.boxes.iter().zip(&displs) {
            let mut src = d as usize;
            for i in b.x..b.x + b.nx {
                for j in b.y..b.y + b.ny {
                    let at = (i * ny + j) * nz + b.z;
                    global[at..at + b.nz].copy_from_slice(&flat[src..src + b.nz]);
                    src += b.nz;
                }
            }
        }
        agree(
            comm,
            root,
            CellCosts::new(self.shape, &global)
                .map(Some)
                .map_err(Error::from),
        )
    }
}
