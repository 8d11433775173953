//! [`Rebalance`]: what a balance point asks of the data it moves — its
//! work, a new layout proposed at the root ([`RootContext`], [`Proposal`])
//! or by every rank together ([`LocalProposal`]), and the move — with its
//! implementations for [`DistArray2`], [`DistArray3`], [`DistGraph`] and a
//! [`Grid`](crate::runtime::layout::Grid) on the application's buffers.

use super::*;

/// What the root needs from the balancer to propose a new layout.
pub struct RootContext {
    pub(super) planner: Arc<dyn ArrayDecomposer>,
    pub(super) planner3: GridAlgorithm,
    pub(super) policy: (RemapPolicy, Option<f64>),
    pub(super) ahead: usize,
    /// The gathered cost field's prefix sums (at the root, when the data
    /// has a cost field).
    pub(super) costs: Option<CellCosts>,
}

/// The root's proposal: for the balance point's [`PlanningModel`] (the
/// merged speed estimates, the speed functions, the memory limits), the
/// decision and the new layout (planned for the model's speeds).
pub type Proposal<'a, P> = Box<dyn FnOnce(&PlanningModel) -> Result<(RemapDecision, P)> + 'a>;

/// A candidate layout planned by every rank together
/// ([`Rebalance::propose_collective`]): what the root weighs (the same on
/// every rank) and this rank's share of the move.
#[derive(Debug, Clone)]
pub struct LocalProposal<P> {
    /// The work of every rank now.
    pub current: Vec<f64>,
    /// The work of every rank under the candidate.
    pub candidate: Vec<f64>,
    /// Every rank's move volume (bytes sent plus received, messages).
    pub volume: Vec<(f64, usize)>,
    /// This rank's share of the move.
    pub plan: P,
}

/// Distributed data a [`Balancer`] can rebalance: [`DistArray2`],
/// [`DistGraph`], [`DistArray3`], and a [`Grid`](crate::runtime::layout::Grid) on the
/// application's buffers (its remap is pending until the application's
/// move). Sealed: implemented by nuce's types only; the methods hidden
/// from these docs are the balancer's, with no stability promise.
pub trait Rebalance: sealed::Sealed {
    /// The new layout, broadcast from the root.
    #[doc(hidden)]
    type Plan: Serialize + DeserializeOwned;
    /// This rank's work per iteration (cells; sum of vertex weights).
    fn local_work(&self) -> f64;
    /// Number of elements of the whole data (cells; vertices): must be the same on every rank.
    fn global_len(&self) -> usize;
    /// The container's communicator.
    fn comm(&self) -> &SimpleCommunicator;
    /// What the container is, as a balance point's call names it (`a 2D
    /// array`, `a 3D array`, `a grid`, `a graph`).
    #[doc(hidden)]
    fn kind(&self) -> &'static str;
    /// Ghost exchanges made so far (compared at the balance point: a rank
    /// that skipped one is caught there).
    fn exchanges(&self) -> u64;
    /// Whether the root plans the new layout ([`Rebalance::propose`]), or
    /// every rank its own share ([`Rebalance::propose_collective`]). The
    /// same on every rank.
    #[doc(hidden)]
    fn plans_at_root(&self) -> bool {
        true
    }
    /// The root's decision for given speeds (called on the root only, when
    /// [`Rebalance::plans_at_root`]).
    #[doc(hidden)]
    fn propose<'a>(&'a self, ctx: &'a RootContext) -> Proposal<'a, Self::Plan>;
    /// The candidate layout for the snapped `speeds` (the same on every
    /// rank), planned by every rank together when not
    /// [`Rebalance::plans_at_root`]: collective.
    #[doc(hidden)]
    fn propose_collective(&self, _speeds: &[f64]) -> Result<LocalProposal<Self::Plan>> {
        Err(Error::invalid_input(
            "propose_collective: this data is planned at the root",
        ))
    }
    /// Moves the data to the new layout (collective).
    #[doc(hidden)]
    fn apply(&mut self, plan: Self::Plan) -> Result<MoveStats>;
    /// The grid and cost field of a grid container (`None` for graphs).
    #[doc(hidden)]
    fn cost_grid(&self) -> Option<CostGrid<'_>> {
        None
    }
    /// Whether the work of a rank is the number of its cells (arrays and
    /// grids without a cost field): the data memory limits apply to.
    #[doc(hidden)]
    fn work_is_cells(&self) -> bool {
        false
    }
}

mod sealed {
    // Unnameable on purpose: no type outside nuce can implement `Rebalance`.
    #[allow(unnameable_types)]
    pub trait Sealed {}
    impl<T> Sealed for super::DistArray2<T> {}
    impl<T> Sealed for super::DistGraph<T> {}
    impl<T> Sealed for super::DistArray3<T> {}
    impl Sealed for super::BufferGrid {}
}

/// A grid's layout as a balance point weighs it, in 2D ([`ArrayPlan`]) and
/// 3D ([`GridPlan3`]) alike: one proposal ([`propose_tiling`]) for every
/// dimension.
trait Tiling: Sized {
    /// The weighted bisection of the gathered costs for `speeds`.
    fn of_costs(costs: &CellCosts, speeds: &[f64]) -> Result<Self>;
    /// Every part's cells.
    fn cells(&self) -> Vec<usize>;
    /// Every part's `Σ cost`.
    fn costs(&self, costs: &CellCosts) -> Result<Vec<f64>>;
    /// The mirror image of `self` that keeps the most cells of `current` in place.
    fn mirrored_like(self, current: &Self) -> Result<Self>;
    /// Every rank's move from `self` to `to`: cells sent plus received, messages.
    fn moves_to(&self, to: &Self) -> Vec<(usize, usize)>;
}

impl Tiling for ArrayPlan {
    fn of_costs(costs: &CellCosts, speeds: &[f64]) -> Result<Self> {
        Ok(WeightedBisection2d.decompose_costs(costs, speeds)?)
    }
    fn cells(&self) -> Vec<usize> {
        self.areas()
    }
    fn costs(&self, costs: &CellCosts) -> Result<Vec<f64>> {
        Ok(rect_costs(costs, &self.parts))
    }
    fn mirrored_like(self, current: &Self) -> Result<Self> {
        Ok(self.closest_mirror(current)?)
    }
    fn moves_to(&self, to: &Self) -> Vec<(usize, usize)> {
        migration_volume(self, to)
    }
}

impl Tiling for GridPlan3 {
    fn of_costs(costs: &CellCosts, speeds: &[f64]) -> Result<Self> {
        Ok(WeightedBisection3d.decompose_costs(costs, speeds)?)
    }
    fn cells(&self) -> Vec<usize> {
        self.volumes()
    }
    fn costs(&self, costs: &CellCosts) -> Result<Vec<f64>> {
        Ok(costs.part_costs(self)?)
    }
    fn mirrored_like(self, current: &Self) -> Result<Self> {
        Ok(self.closest_mirror(current))
    }
    fn moves_to(&self, to: &Self) -> Vec<(usize, usize)> {
        migration_volume3(self, to)
    }
}

/// The root's decision for a grid laid out by `current` (2D or 3D) whose
/// cells move `bytes` each: the candidate is `fresh`'s plan for the speeds
/// (the balancer's decomposer; within the memory limits), mirrored to keep
/// the most cells in place, or — with a cost field — the weighted bisection
/// of the gathered costs; the loads compared are cells or `Σ cost` per part
/// ([`crate::runtime::cost`]).
fn propose_tiling<P: Tiling>(
    ctx: &RootContext,
    current: &P,
    bytes: f64,
    model: &PlanningModel,
    fresh: impl FnMut(&[f64]) -> crate::plan::Result<P>,
) -> Result<(RemapDecision, P)> {
    let candidate = match &ctx.costs {
        Some(c) => P::of_costs(c, &model.speeds)?,
        // By cells, any mirror image of the plan is as good: the one that
        // keeps the most cells in place.
        None => model
            .plan_within_caps(fresh, P::cells)?
            .mirrored_like(current)?,
    };
    let loads = |p: &P| match &ctx.costs {
        Some(c) => p.costs(c),
        None => Ok(p.cells().into_iter().map(|v| v as f64).collect()),
    };
    let volume: Vec<(f64, usize)> = current
        .moves_to(&candidate)
        .into_iter()
        .map(|(cells, msgs)| (cells as f64 * bytes, msgs))
        .collect();
    let (policy, bandwidth) = ctx.policy;
    let d = model.decide(
        &policy,
        &loads(current)?,
        &loads(&candidate)?,
        &volume,
        ctx.ahead,
        bandwidth,
    )?;
    Ok((d.decision, candidate))
}

/// [`propose_tiling`] for a 3D grid ([`DistArray3`], [`BufferGrid`]): the
/// balancer's 3D planner for `stencil` (ghost at least 1).
fn propose_grid3(
    ctx: &RootContext,
    current: &GridPlan3,
    mut stencil: Stencil,
    bytes: f64,
    model: &PlanningModel,
) -> Result<(RemapDecision, GridPlan3)> {
    stencil.ghost = stencil.ghost.max(1);
    let planner3 = ctx.planner3.for_stencil(stencil)?;
    propose_tiling(ctx, current, bytes, model, |s| {
        planner3.decompose(current.shape, s)
    })
}

impl<T: Element> Rebalance for DistArray3<T> {
    type Plan = GridPlan3;
    fn kind(&self) -> &'static str {
        "a 3D array"
    }
    fn local_work(&self) -> f64 {
        self.local_box().volume() as f64
    }
    fn global_len(&self) -> usize {
        self.global_cells()
    }
    fn comm(&self) -> &SimpleCommunicator {
        DistArray3::comm(self)
    }
    fn exchanges(&self) -> u64 {
        DistArray3::exchanges(self)
    }
    fn propose<'a>(&'a self, ctx: &'a RootContext) -> Proposal<'a, GridPlan3> {
        let bytes = (self.ncomp() * std::mem::size_of::<T>()) as f64;
        Box::new(move |model| {
            propose_grid3(ctx, self.plan(), Stencil::seven(self.ghost()), bytes, model)
        })
    }
    fn apply(&mut self, plan: GridPlan3) -> Result<MoveStats> {
        self.remap_broadcast(plan)
    }
    fn cost_grid(&self) -> Option<CostGrid<'_>> {
        DistArray3::cost_grid(self)
    }
    fn work_is_cells(&self) -> bool {
        DistArray3::cost_grid(self).is_none()
    }
}

/// A grid on the application's buffers: a decision to remap makes the new
/// plan pending, and the application completes it with
/// [`Grid::move_fields`](crate::runtime::layout::Grid::move_fields) into new buffers
/// (so `apply` moves nothing itself; its report gives the bytes and
/// messages the move will send, at the last exchange's bytes per cell, and
/// 0 seconds). The cost
/// model counts the bytes per cell of the grid's last exchange (8 before
/// any). The root refuses a new decision while a move is pending.
impl Rebalance for BufferGrid {
    type Plan = GridPlan3;
    fn kind(&self) -> &'static str {
        "a grid"
    }
    fn local_work(&self) -> f64 {
        self.layout().local_box().volume() as f64
    }
    fn global_len(&self) -> usize {
        self.layout().plan().cells()
    }
    fn comm(&self) -> &SimpleCommunicator {
        BufferGrid::comm(self)
    }
    fn exchanges(&self) -> u64 {
        BufferGrid::exchanges(self)
    }
    fn propose<'a>(&'a self, ctx: &'a RootContext) -> Proposal<'a, GridPlan3> {
        let bytes = match self.cell_bytes() {
            0 => 8.0,
            b => b as f64,
        };
        Box::new(move |model| {
            if self.pending().is_some() {
                return Err(Error::invalid_input(
                    "maybe_remap: the grid's previous remap is still pending (call Grid::move_fields first)"
                        ,
                ));
            }
            propose_grid3(ctx, self.layout().plan(), self.stencil(), bytes, model)
        })
    }
    fn apply(&mut self, plan: GridPlan3) -> Result<MoveStats> {
        let planned = self.planned_move(&plan);
        self.set_pending(plan).map(|()| planned)
    }
    fn cost_grid(&self) -> Option<CostGrid<'_>> {
        BufferGrid::cost_grid(self)
    }
    fn work_is_cells(&self) -> bool {
        BufferGrid::cost_grid(self).is_none()
    }
}

impl<T: Element> Rebalance for DistArray2<T> {
    type Plan = ArrayPlan;
    fn kind(&self) -> &'static str {
        "a 2D array"
    }
    fn local_work(&self) -> f64 {
        self.rect().area() as f64
    }
    fn global_len(&self) -> usize {
        DistArray2::global_len(self)
    }
    fn comm(&self) -> &SimpleCommunicator {
        DistArray2::comm(self)
    }
    fn exchanges(&self) -> u64 {
        DistArray2::exchanges(self)
    }
    fn propose<'a>(&'a self, ctx: &'a RootContext) -> Proposal<'a, ArrayPlan> {
        Box::new(move |model| {
            let (rows, cols) = self.global_shape();
            let elem = std::mem::size_of::<T>() as f64;
            propose_tiling(ctx, self.plan(), elem, model, |s| {
                ctx.planner.decompose(rows, cols, s)
            })
        })
    }
    fn work_is_cells(&self) -> bool {
        DistArray2::cost_grid(self).is_none()
    }
    fn apply(&mut self, plan: ArrayPlan) -> Result<MoveStats> {
        self.remap_broadcast(plan)
    }
    fn cost_grid(&self) -> Option<CostGrid<'_>> {
        DistArray2::cost_grid(self)
    }
}

impl<T: GraphValue> Rebalance for DistGraph<T> {
    type Plan = GraphPlan;
    fn kind(&self) -> &'static str {
        "a graph"
    }
    fn local_work(&self) -> f64 {
        DistGraph::local_work(self)
    }
    fn global_len(&self) -> usize {
        DistGraph::global_len(self)
    }
    fn comm(&self) -> &SimpleCommunicator {
        DistGraph::comm(self)
    }
    fn exchanges(&self) -> u64 {
        DistGraph::exchanges(self)
    }
    fn plans_at_root(&self) -> bool {
        self.strategy() != GraphStrategy::Geometric
    }
    fn propose<'a>(&'a self, ctx: &'a RootContext) -> Proposal<'a, Self::Plan> {
        Box::new(move |model| {
            let index = self.index.as_ref().ok_or_else(|| {
                Error::invalid_input(
                    "maybe_remap: this graph was scattered with a partition of the caller's and has no coordinates (GraphStrategy::Manual): build it with DistGraph::scatter, or give it coordinates, to have it balanced"
                        ,
                )
            })?;
            let (policy, bandwidth) = ctx.policy;
            let (d, cut, candidate) = index.propose(model, &policy, ctx.ahead, bandwidth)?;
            Ok((d, GraphPlan::Index(cut, candidate)))
        })
    }
    fn propose_collective(&self, speeds: &[f64]) -> Result<LocalProposal<GraphPlan>> {
        let dest = self.prefix_cut(speeds)?;
        let (current, candidate, volume) = self.move_volume(&dest);
        Ok(LocalProposal {
            current,
            candidate,
            volume,
            plan: GraphPlan::Owners(dest),
        })
    }
    fn apply(&mut self, plan: GraphPlan) -> Result<MoveStats> {
        match plan {
            GraphPlan::Index(cut, partition) => {
                let stats = self.remap(&partition)?;
                if let (Some(index), Some(cut)) = (self.index.as_mut(), cut) {
                    index.cut = cut;
                    index.parts = partition.parts;
                }
                Ok(stats.moves)
            }
            GraphPlan::Owners(dest) => Ok(self.migrate(&dest)?.moves),
        }
    }
}

/// The new layout of a [`DistGraph`] at a balance point.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub enum GraphPlan {
    /// [`GraphStrategy::RootIndex`]: the new cut of the root's ordering
    /// (none when repartitioned otherwise) and the partition, broadcast.
    Index(Option<IntervalCut>, Partition),
    /// [`GraphStrategy::Geometric`]: the new owner of each of this rank's
    /// vertices (never leaves the rank).
    Owners(Vec<usize>),
}
