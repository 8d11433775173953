//! The balance point between phases: [`Balancer::maybe_remap`] (measure,
//! gather, model, propose, decide, apply) and its [`RemapReport`]; what it
//! asks of the data is the [`Rebalance`] trait (module `rebalance`).

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
    /// [`Balancer::scatter_graph`], re-cut along the root's index ordering
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
        let report = (
            self.local_report(work),
            self.own.speed_function().cloned(),
            work,
        );
        let gathered = self.gather_at_root(&report)?;
        // The previous estimates serve the root's model only.
        let previous = if self.comm.rank() == ROOT {
            self.estimates.clone()
        } else {
            None
        };
        let phase_units = self.phase_units;
        let ctx = RootContext {
            planner: self.planner()?,
            planner3: self.settings.grid_algorithm.clone(),
            policy: self.network_policy(),
            ahead,
            costs,
        };
        // Memory limits count cells: the work of arrays and grids without
        // a cost field.
        let cells_are_work = data.work_is_cells();
        // The functional model needs sizes that mean the same phase after phase:
        // not a cost field, whose sum moves with the costs (constant model).
        let functional = self.settings.functional_model && data.cost_grid().is_none();
        let caps = self.mem_caps.as_deref();
        // Every rank's work now (on the root: what an undone remap goes
        // back to) with the model.
        let model_of = |gathered: Option<Vec<(RankReport, Option<SpeedFunction>, f64)>>| {
            let g = gathered.ok_or_else(|| Error::invalid_input("no phase speeds at root"))?;
            let phase: Vec<RankReport> = g.iter().map(|r| r.0).collect();
            let est = merge_estimates(&phase, previous.as_deref(), phase_units)?;
            let fns: Vec<Option<SpeedFunction>> = g.iter().map(|r| r.1.clone()).collect();
            let loads: Vec<f64> = g.iter().map(|r| r.2).collect();
            let total = loads.iter().sum::<f64>().round().max(1.0) as usize;
            if caps.is_some() && !cells_are_work {
                return Err(Error::invalid_input(
                    "maybe_remap: memory limits (Balancer::set_memory_limit) count cells; this data's work is not its cells (a graph, or an array with a cost field)",
                ));
            }
            let model = PlanningModel::new(&est, Some(&fns), total, caps, functional)?;
            Ok((model, loads))
        };
        let streak = self.remap_streak;
        // The root's wall time of the phase, per iteration (per work unit
        // once the total is known): what the last remap is checked against
        // — for phases nuce timed itself; a phase the application recorded
        // ([`Balancer::record_phase`]) may have any wall time.
        let wall = (!self.own.recorded())
            .then(|| self.phase.get().wall().as_secs_f64() / iterations.max(1) as f64);
        let payoff = &mut self.payoff;
        // What every rank needs of the root's model: its kind and the
        // estimates (reported), not the planning inputs (speeds, functions,
        // caps: the root's).
        let outcome = |m: PlanningModel| (SpeedModel::of_model(&m), m.estimates);
        let (decision, plan, (model, estimates)) = if data.plans_at_root() {
            let proposal = data.propose(&ctx);
            root_compute(&self.comm, ROOT, || {
                let (model, loads) = model_of(gathered)?;
                let now = wall.map(|w| w / model.total_work as f64);
                let undo_to = match now {
                    Some(now) => payoff.check(now, &model.speeds),
                    None => {
                        payoff.forget();
                        None
                    }
                };
                if let Some(loads) = undo_to {
                    // Back to the shares before the last remap: speeds in
                    // proportion to the work every rank had then.
                    let scale = model.speeds.iter().sum::<f64>() / loads.iter().sum::<f64>();
                    let back: Vec<f64> = loads.iter().map(|l| l * scale).collect();
                    let before = PlanningModel {
                        functions: None,
                        speeds: back.clone(),
                        ..model.clone()
                    };
                    let (mut d, plan) = proposal(&before)?;
                    (d.remap, d.rule, d.speeds) = (true, DecisionRule::NoPayoff, back);
                    return Ok((d, Some(plan), outcome(model)));
                }
                let (d, plan) = proposal(&model)?;
                let mut d = d.persist(streak);
                if d.remap && payoff.vetoes(&d.speeds) {
                    (d.remap, d.rule) = (false, DecisionRule::Vetoed);
                }
                if d.remap {
                    payoff.remapped(loads, &d.speeds);
                }
                // Only what changed is broadcast: no plan unless it remaps.
                let plan = d.remap.then_some(plan);
                Ok((d, plan, outcome(model)))
            })?
        } else {
            // Every rank plans its own share for the broadcast speeds; the
            // root weighs the O(p) loads and volumes (no payoff check: the
            // plan before a remap is not the root's to make again).
            let model = root_compute(&self.comm, ROOT, || model_of(gathered).map(|m| m.0))?;
            let local = data.propose_collective(&model.speeds)?;
            let (policy, bandwidth) = ctx.policy;
            let decision = root_compute(&self.comm, ROOT, || {
                let d = model.decide(
                    &policy,
                    &local.current,
                    &local.candidate,
                    &local.volume,
                    ahead,
                    bandwidth,
                )?;
                Ok(d.decision.persist(streak))
            })?;
            (decision, Some(local.plan), outcome(model))
        };
        self.remap_streak = decision.next_streak(streak);
        info!(
            ?model,
            remap = decision.remap,
            rule = ?decision.rule,
            t_current = decision.t_current,
            t_candidate = decision.t_candidate,
            t_migration = decision.t_migration,
            "remap decision"
        );
        self.speeds = Some(decision.speeds.clone());
        self.sweep_fns = None;
        self.set_estimates(estimates.clone(), true);
        let moved = if decision.remap {
            let _s = info_span!("remap").entered();
            let plan = plan.ok_or_else(|| Error::invalid_input("a remap without a plan"))?;
            let stats = data.apply(plan)?;
            // Small moves are latency-bound and would underestimate the
            // bandwidth: learn it only from moves of at least 1 MiB per rank.
            self.observe(&stats);
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
