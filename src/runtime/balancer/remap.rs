//! The balance point between phases: [`Balancer::maybe_remap`] (measure,
//! gather, model, propose, decide, apply) and its [`RemapReport`]; what it
//! asks of the data is the [`Rebalance`] trait (module `rebalance`).

use super::speed_book::{BalanceOutcome, BalancePoint, PhaseReport};
use super::*;

/// Outcome of [`Balancer::maybe_remap`]: the decision, its numbers, and what moved.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RemapReport {
    /// The decision taken at the root (identical on every rank). Its
    /// `speeds` are those the plans were made for (snapped within the noise,
    /// or the functional shares when [`SpeedModel::Functional`] decided).
    pub decision: RemapDecision,
    /// What the remap moved, when it happened. For a grid on the
    /// application's buffers the move is still pending: what it will send
    /// (bytes and messages; 0 seconds — [`Grid::move_fields`] reports its
    /// time).
    ///
    /// [`Grid::move_fields`]: crate::runtime::layout::Grid::move_fields
    pub moved: Option<MoveStats>,
    /// The model that decided.
    pub model: SpeedModel,
    /// Every rank's speed estimate with its noise, as merged at the root
    /// before snapping.
    pub estimates: Vec<SpeedEstimate>,
}

impl std::ops::Deref for RemapReport {
    type Target = RemapDecision;
    fn deref(&self) -> &RemapDecision {
        &self.decision
    }
}

/// The remap policy as the must-match arguments of a checked call: it is
/// used on the root only, so ranks that were given different ones would
/// otherwise never know.
pub(super) fn policy_args(p: &RemapPolicy) -> String {
    format!(
        "hysteresis {}, latency {} s, bandwidth {} B/s",
        p.hysteresis, p.latency, p.default_bandwidth
    )
}

impl Balancer {
    /// A balance point, between phases of `iterations` iterations each, for
    /// a [`DistArray2`] or a [`DistGraph`]: measures this rank's phase (its
    /// work per iteration — cells, or vertex weights — × `iterations` in its
    /// compute time since the last balance point, unless
    /// [`Balancer::record_phase`] was called), gathers the speeds, lets the
    /// root decide whether a new layout pays off over the next `iterations`
    /// iterations (see [`RemapPolicy`]), and if so remaps `data`, moving only
    /// what changes owner. Arrays are re-planned by the balancer's
    /// decomposer — or, for an array with a cost field
    /// ([`DistArray3::set_cost`], [`DistArray2::set_cost`],
    /// [`Grid::set_cost`](BufferGrid::set_cost)), timed by its
    /// summed cost, planned by the weighted bisection and decided on
    /// `Σ cost / speed` (module `cost`); graphs follow the
    /// [`GraphStrategy`] they were built with: made by
    /// [`DistGraph::scatter`], re-cut along the root's index ordering
    /// (\[KOR95\] §3, few vertices move); made by [`DistGraph::from_local`],
    /// re-cut by prefix sums along each rank's Hilbert order
    /// ([`DistGraph::prefix_cut`]) with no O(n) array anywhere. The decision
    /// and what moved are identical on every rank. `data` must live on this
    /// balancer's ranks in the same order.
    pub fn maybe_remap<D: Rebalance>(
        &mut self,
        data: &mut D,
        iterations: usize,
    ) -> Result<RemapReport> {
        self.maybe_remap_ahead(data, iterations, iterations)
    }

    /// [`Balancer::maybe_remap`] with a decision horizon other than one
    /// phase: the phase just done had `iterations` iterations, and the remap
    /// must pay off within the next `ahead` iterations (e.g. all those left
    /// in the run).
    pub fn maybe_remap_ahead<D: Rebalance>(
        &mut self,
        data: &mut D,
        iterations: usize,
        ahead: usize,
    ) -> Result<RemapReport> {
        let _w = waiting();
        let _span = info_span!("maybe_remap").entered();
        // With a cost field the work is the block's Σ cost (checked here,
        // agreed after the arrival check); without one, its cells.
        let cost_sum = data.cost_grid().map(|g| g.local_sum());
        let work = match &cost_sum {
            Some(sum) => *sum.as_ref().unwrap_or(&0.0),
            None => data.local_work(),
        };
        self.record_automatic(work, iterations)?;
        // This rank's time off the CPU inside nuce's waits this phase:
        // another process held its core (a diagnostic; not compute).
        info!(
            lost_in_waits_s = self.phase.get().lost().as_secs_f64(),
            compute_s = self.phase.get().compute().as_secs_f64(),
            "phase timed"
        );
        self.arrive(&format!(
            "Balancer::maybe_remap({}, iterations {iterations}, ahead {ahead}, {} elements after {} ghost exchanges, {}{})",
            data.kind(),
            data.global_len(),
            data.exchanges(),
            policy_args(&self.settings.policy),
            if cost_sum.is_some() { ", with a cost field" } else { "" }
        ))?;
        self.same_ranks(data.comm(), "maybe_remap")?;
        let costs = match (cost_sum, data.cost_grid()) {
            (Some(sum), Some(grid)) => {
                agree(&self.comm, ROOT, sum)?;
                grid.gather(&self.comm, ROOT)?
            }
            _ => None,
        };
        let report = PhaseReport {
            report: self.local_report(work),
            function: self.own.speed_function().cloned(),
            load: work,
        };
        let gathered = self.gather_at_root(&report)?;
        let ctx = RootContext {
            planner: self.planner()?,
            planner3: self.settings.grid_algorithm.clone(),
            policy: self.network_policy(),
            ahead,
            costs,
        };
        // The root's wall time of the phase: what the last remap is checked
        // against — for phases nuce timed itself; a phase the application
        // recorded ([`Balancer::record_phase`]) may have any wall time.
        let wall_s = (!self.own.recorded()).then(|| self.phase.get().wall().as_secs_f64());
        // Memory limits count cells: the work of arrays and grids without a
        // cost field. The functional model needs sizes that mean the same
        // phase after phase: not a cost field, whose sum moves with the
        // costs (constant model).
        let (cells_are_work, functional) = (
            data.work_is_cells(),
            self.settings.functional_model && data.cost_grid().is_none(),
        );
        let point = |g: Option<Vec<PhaseReport>>| -> Result<BalancePoint> {
            Ok(BalancePoint {
                reports: g.ok_or_else(|| Error::invalid_input("no phase speeds at root"))?,
                wall_s,
                iterations,
                cells_are_work,
                functional,
            })
        };
        let book = &mut self.book;
        let outcome = if data.plans_at_root() {
            let proposal = data.propose(&ctx);
            root_compute(&self.comm, ROOT, || {
                book.decide(&point(gathered)?, proposal)
            })?
        } else {
            // Every rank plans its own share for the broadcast speeds; the
            // root weighs the O(p) loads and volumes.
            let model = root_compute(&self.comm, ROOT, || book.model(&point(gathered)?))?;
            let local = data.propose_collective(&model.speeds)?;
            let decision = root_compute(&self.comm, ROOT, || {
                book.weigh(&model, &local, &ctx.policy, ahead)
            })?;
            BalanceOutcome::of(model, decision, Some(local.plan))
        };
        let BalanceOutcome {
            decision,
            plan,
            model,
            estimates,
        } = outcome;
        self.book.learn(&decision, estimates.clone());
        info!(
            ?model,
            remap = decision.remap,
            rule = ?decision.rule,
            t_current = decision.t_current,
            t_candidate = decision.t_candidate,
            t_migration = decision.t_migration,
            "remap decision"
        );
        let moved = if decision.remap {
            let _s = info_span!("remap").entered();
            let plan = plan.ok_or_else(|| Error::invalid_input("a remap without a plan"))?;
            let stats = data.apply(plan)?;
            // Small moves are latency-bound and would underestimate the
            // bandwidth: learn it only from moves of at least 1 MiB per rank.
            self.learn_bandwidth(&stats);
            info!(
                bytes = stats.bytes,
                messages = stats.messages,
                seconds = stats.seconds,
                "remapped"
            );
            Some(stats)
        } else {
            None
        };
        agree(&self.comm, ROOT, Ok(()))?;
        self.mark();
        Ok(RemapReport {
            decision,
            moved,
            model,
            estimates,
        })
    }
}
