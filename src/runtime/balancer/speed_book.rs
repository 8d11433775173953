//! What the balancer knows of every rank's speed, and the root's decision
//! at a balance point: the [`SpeedBook`].
//!
//! The book holds the speeds the plans are made for, every rank's estimate
//! with its noise ([`SpeedEstimate`]) and their units, the kernel records
//! and size-sweep functions of the last measurement, the memory limits, the
//! streak of the persistence rule ([`RemapDecision::persist`]) and the
//! check of the last remap ([`Payoff`]). At a balance point the root calls
//! [`SpeedBook::decide`] on the gathered reports ([`PhaseReport`]): merge
//! them with the previous estimates ([`merge_estimates`]), build the
//! [`PlanningModel`] (snapped speeds or speed functions, memory caps),
//! check the last remap (undo it when it did not pay off), ask the data for
//! a proposal, let a persistent imbalance or one that has cost as much as
//! its migration remap, veto shares that failed,
//! and return the [`BalanceOutcome`]; every rank then learns it
//! ([`SpeedBook::learn`]).
//!
//! Pure: no MPI, no clock. The balancer gathers the reports, gives the
//! root's phase wall time, broadcasts the outcome and moves the data
//! (module `remap`). Tested on plain numbers below.

use serde::{Deserialize, Serialize};

use super::rebalance::{LocalProposal, Proposal};
use super::saved_speeds::SavedSpeeds;
use super::speeds::{merge_estimates, RankReport, SpeedModel};
use crate::error::{Error, Result};
use crate::plan::fpm::{snap_speeds, PlanningModel, SpeedEstimate, SpeedFunction};
use crate::plan::payoff::Payoff;
use crate::plan::policy::{DecisionRule, RemapDecision, RemapPolicy, Rent};
use crate::speed::SpeedRecord;

/// What one rank tells the root at a balance point (gathered in rank order).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct PhaseReport {
    /// Its phase speed with its noise, an idle rank's probe, or nothing.
    pub report: RankReport,
    /// Its speed function of the timed phases, if any (the functional model).
    pub function: Option<SpeedFunction>,
    /// Its work per iteration now: what an undone remap goes back to.
    pub load: f64,
}

/// A balance point as the root decides it: the gathered reports and what
/// the balancer knows of the phase and the data.
#[derive(Debug, Clone)]
pub(crate) struct BalancePoint {
    /// Every rank's report, in rank order.
    pub reports: Vec<PhaseReport>,
    /// The root's wall time of the phase (s): what the last remap is
    /// checked against. `None` when the application recorded the phase
    /// ([`super::Balancer::record_phase`]): it may have any wall time.
    pub wall_s: Option<f64>,
    /// Iterations of the phase.
    pub iterations: usize,
    /// Whether a rank's work is its cells (arrays and grids without a cost
    /// field): the work memory limits count.
    pub cells_are_work: bool,
    /// Whether the functional model may plan (the setting, and sizes that
    /// mean the same phase after phase: no cost field).
    pub functional: bool,
}

/// The root's decision at a balance point, broadcast to every rank.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct BalanceOutcome<P> {
    /// The decision (its `speeds`: those the plans were made for).
    pub decision: RemapDecision,
    /// The new layout, when the decision remaps (only what changed is
    /// broadcast).
    pub plan: Option<P>,
    /// The model that decided.
    pub model: SpeedModel,
    /// Every rank's estimate with its noise, merged before snapping.
    pub estimates: Vec<SpeedEstimate>,
}

/// The error of a balance point whose data's work is not its cells while
/// memory limits are set.
const LIMITS_COUNT_CELLS: &str = "maybe_remap: memory limits (Balancer::set_memory_limit) count cells; this data's work is not its cells (a graph, or an array with a cost field)";

/// What the balancer knows of every rank's speed (see the module's
/// documentation). The speeds, estimates, their units, the memory limits
/// and the streak are the same on every rank; the records, the sweep's
/// functions and the payoff check are the root's.
#[derive(Debug, Clone, Default)]
pub(crate) struct SpeedBook {
    /// The speeds the plans are made for, snapped within the noise, once known.
    speeds: Option<Vec<f64>>,
    /// Every rank's estimate with its noise, before snapping.
    estimates: Option<Vec<SpeedEstimate>>,
    /// Whether `estimates` are in the units of the phases (else: the
    /// kernel's, or the application's of [`super::Balancer::set_speeds`]).
    phase_units: bool,
    /// Every rank's kernel record of the last [`super::Balancer::measure`] (root).
    records: Option<Vec<SpeedRecord>>,
    /// Every rank's speed function of its size sweep (root), from
    /// [`super::Balancer::measure_sizes`] until the next balance point:
    /// what the initial plans are made for.
    sweep_fns: Option<Vec<SpeedFunction>>,
    /// Every rank's memory limit in cells (`usize::MAX` for a rank without
    /// one), once some rank declared one.
    mem_caps: Option<Vec<usize>>,
    /// Consecutive balance points whose cost model said remap at the
    /// snapped speeds while none happened ([`RemapDecision::persist`]).
    remap_streak: u32,
    /// The time the current plan has lost by the model at consecutive
    /// balance points whose candidate won but did not pay for its
    /// migration within one horizon ([`RemapDecision::amortize`]).
    rent: Rent,
    /// The last remap, checked at the next balance point against the time
    /// per iteration it was for, and the shares vetoed after remaps that
    /// did not pay off (root).
    payoff: Payoff,
}

impl SpeedBook {
    /// The speeds the plans are made for, once known.
    pub fn speeds(&self) -> Option<&[f64]> {
        self.speeds.as_deref()
    }

    /// Every rank's estimate with its noise, before snapping, once known.
    pub fn estimates(&self) -> Option<&[SpeedEstimate]> {
        self.estimates.as_deref()
    }

    /// Every rank's kernel record (root, after a measurement).
    pub fn records(&self) -> Option<&[SpeedRecord]> {
        self.records.as_deref()
    }

    /// Every rank's memory limit in cells, once some rank declared one.
    pub fn memory_limits(&self) -> Option<&[usize]> {
        self.mem_caps.as_deref()
    }

    /// Sets the memory limits (`None`: no rank has one).
    pub fn set_memory_limits(&mut self, caps: Option<Vec<usize>>) {
        self.mem_caps = caps;
    }

    /// New speeds and estimates, in phase units or not; the sweep's
    /// functions no longer describe them.
    fn set(&mut self, speeds: Vec<f64>, estimates: Vec<SpeedEstimate>, phase_units: bool) {
        self.speeds = Some(speeds);
        self.estimates = Some(estimates);
        self.phase_units = phase_units;
        self.sweep_fns = None;
    }

    /// A kernel measurement: the snapped `speeds`, the `estimates` and
    /// the `records` (root; `None` elsewhere).
    pub fn measured(
        &mut self,
        speeds: Vec<f64>,
        estimates: Vec<SpeedEstimate>,
        records: Option<Vec<SpeedRecord>>,
    ) {
        self.records = records;
        self.estimates = Some(estimates);
        self.phase_units = false;
        self.speeds = Some(speeds);
    }

    /// A size sweep: the snapped `speeds`, the `estimates` and every
    /// rank's function (root; `None` elsewhere) for the initial plans.
    pub fn swept(
        &mut self,
        speeds: Vec<f64>,
        estimates: Vec<SpeedEstimate>,
        functions: Option<Vec<SpeedFunction>>,
    ) {
        self.set(speeds, estimates, false);
        self.sweep_fns = functions;
    }

    /// Speeds set by the application, known exactly (its units).
    pub fn set_exact(&mut self, speeds: Vec<f64>) {
        let exact = speeds
            .iter()
            .map(|&mean| SpeedEstimate { mean, noise: 0.0 })
            .collect();
        self.set(speeds, exact, false);
    }

    /// The speed state of a checkpoint.
    pub fn restore(&mut self, saved: &SavedSpeeds) {
        self.set(
            saved.speeds.clone(),
            saved.estimates.clone(),
            saved.phase_units,
        );
    }

    /// The speed state of a checkpoint, with every rank's speed function
    /// of its phases (`functions`, gathered at the root): `None` until some
    /// speeds are known.
    pub fn saved(&self, functions: Vec<Option<SpeedFunction>>) -> Option<SavedSpeeds> {
        match (&self.speeds, &self.estimates) {
            (Some(speeds), Some(estimates)) => Some(SavedSpeeds {
                speeds: speeds.clone(),
                estimates: estimates.clone(),
                phase_units: self.phase_units,
                functions,
            }),
            _ => None,
        }
    }

    /// The book of the ranks `stay` (old ranks, ascending, in their
    /// order): their speeds, estimates and records; what depends on the
    /// layout of the machine or on the data (memory limits, sweeps, the
    /// streak and the payoff check) starts afresh.
    pub fn restricted(&self, stay: &[usize]) -> SpeedBook {
        fn keep<T: Clone>(v: &Option<Vec<T>>, stay: &[usize]) -> Option<Vec<T>> {
            v.as_ref()
                .map(|v| stay.iter().map(|&r| v[r].clone()).collect())
        }
        SpeedBook {
            speeds: keep(&self.speeds, stay),
            estimates: keep(&self.estimates, stay),
            phase_units: self.phase_units,
            records: keep(&self.records, stay),
            ..SpeedBook::default()
        }
    }

    /// The phase speeds of a balance point that holds no data (root): the
    /// `phase` reports merged with the previous estimates
    /// ([`merge_estimates`]) and snapped within the noise ([`snap_speeds`]);
    /// `None` when no rank reported anything.
    pub fn merge_phase(
        &self,
        phase: &[RankReport],
    ) -> Result<Option<(Vec<f64>, Vec<SpeedEstimate>)>> {
        if phase.iter().all(|r| matches!(r, RankReport::Unknown)) {
            return Ok(None);
        }
        let est = merge_estimates(phase, self.estimates.as_deref(), self.phase_units)?;
        Ok(Some((snap_speeds(&est)?, est)))
    }

    /// Phase speeds learnt at a balance point that holds no data.
    pub fn learn_phase(&mut self, speeds: Vec<f64>, estimates: Vec<SpeedEstimate>) {
        self.set(speeds, estimates, true);
    }

    /// The model of the current speeds (uniform over `ranks` when none are
    /// known) for `cells` cells with the memory limits, and the speed
    /// functions of a size sweep if any (`functional`: the setting allows
    /// the functional model): what the initial plans are made for.
    pub fn initial_model(
        &self,
        ranks: usize,
        cells: usize,
        functional: bool,
    ) -> Result<PlanningModel> {
        let exact: Vec<SpeedEstimate> = match &self.speeds {
            Some(s) => s
                .iter()
                .map(|&mean| SpeedEstimate { mean, noise: 0.0 })
                .collect(),
            None => vec![
                SpeedEstimate {
                    mean: 1.0,
                    noise: 0.0
                };
                ranks
            ],
        };
        let sweep: Option<Vec<Option<SpeedFunction>>> = self
            .sweep_fns
            .as_ref()
            .map(|f| f.iter().cloned().map(Some).collect());
        Ok(PlanningModel::new(
            &exact,
            sweep.as_deref(),
            cells,
            self.mem_caps.as_deref(),
            functional && sweep.is_some(),
        )?)
    }

    /// The model of a balance point (root): the reports merged with the
    /// previous estimates, the speed functions, the whole work and the
    /// memory limits. Errors: estimates that cannot be merged, memory
    /// limits for data whose work is not its cells, caps that cannot hold
    /// the work.
    pub fn model(&self, point: &BalancePoint) -> Result<PlanningModel> {
        let phase: Vec<RankReport> = point.reports.iter().map(|r| r.report).collect();
        let est = merge_estimates(&phase, self.estimates.as_deref(), self.phase_units)?;
        let fns: Vec<Option<SpeedFunction>> =
            point.reports.iter().map(|r| r.function.clone()).collect();
        let total = point.reports.iter().map(|r| r.load).sum::<f64>();
        let total = total.round().max(1.0) as usize;
        let caps = self.mem_caps.as_deref();
        if caps.is_some() && !point.cells_are_work {
            return Err(Error::invalid_input(LIMITS_COUNT_CELLS));
        }
        Ok(PlanningModel::new(
            &est,
            Some(&fns),
            total,
            caps,
            point.functional,
        )?)
    }

    /// The root's decision at a balance point where it plans the layout
    /// (`proposal`: the data's decision and layout for a model). In order:
    /// the model ([`SpeedBook::model`]); the check of the last remap
    /// against the phase's time per iteration and work unit
    /// ([`Payoff::check`]) — when it did not pay off, back to the loads
    /// before it ([`DecisionRule::NoPayoff`]); else the proposal, a
    /// persistent imbalance ([`RemapDecision::persist`]), the time the plan
    /// has lost so far ([`RemapDecision::amortize`]) and the veto of
    /// shares that failed ([`DecisionRule::Vetoed`]); a remap is recorded
    /// for its check at the next balance point.
    pub fn decide<P>(
        &mut self,
        point: &BalancePoint,
        proposal: Proposal<'_, P>,
    ) -> Result<BalanceOutcome<P>> {
        let model = self.model(point)?;
        let now = point
            .wall_s
            .map(|w| w / point.iterations.max(1) as f64 / model.total_work as f64);
        let undo_to = match now {
            Some(now) => {
                let loads: Vec<f64> = point.reports.iter().map(|r| r.load).collect();
                self.payoff.check(now, &model.speeds, &loads)
            }
            None => {
                self.payoff.forget();
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
            return Ok(BalanceOutcome::of(model, d, Some(plan)));
        }
        let (d, plan) = proposal(&model)?;
        let mut d = self.over_time(d);
        if d.remap && self.payoff.vetoes(&d.speeds) {
            (d.remap, d.rule) = (false, DecisionRule::Vetoed);
        }
        if d.remap {
            let loads = point.reports.iter().map(|r| r.load).collect();
            self.payoff.remapped(loads, &d.speeds);
        }
        // Only what changed is broadcast: no plan unless it remaps.
        let plan = d.remap.then_some(plan);
        Ok(BalanceOutcome::of(model, d, plan))
    }

    /// The root's decision on a layout every rank planned its share of
    /// ([`super::Rebalance::propose_collective`]) for `model`'s speeds: the
    /// cost model on the O(p) loads and volumes, then the rules over
    /// consecutive balance points ([`SpeedBook::over_time`]; no payoff
    /// check: the plan before a remap is not the root's to make again).
    pub fn weigh<P>(
        &self,
        model: &PlanningModel,
        local: &LocalProposal<P>,
        (policy, bandwidth): &(RemapPolicy, Option<f64>),
        ahead: usize,
    ) -> Result<RemapDecision> {
        let d = model.decide(
            policy,
            &local.current,
            &local.candidate,
            &local.volume,
            ahead,
            *bandwidth,
        )?;
        Ok(self.over_time(d.decision))
    }

    /// A balance point's decision with the rules that weigh consecutive
    /// balance points: a persistent imbalance ([`RemapDecision::persist`])
    /// and the time the plan has lost so far ([`RemapDecision::amortize`]).
    fn over_time(&self, d: RemapDecision) -> RemapDecision {
        d.persist(self.remap_streak).amortize(self.rent)
    }

    /// What every rank learns of a balance point's `decision` (broadcast):
    /// its speeds, the merged `estimates` (in phase units) and the streak
    /// of the persistence rule; the sweep's functions are spent.
    pub fn learn(&mut self, decision: &RemapDecision, estimates: Vec<SpeedEstimate>) {
        self.remap_streak = decision.next_streak(self.remap_streak);
        self.rent = decision.next_rent(self.rent);
        self.set(decision.speeds.clone(), estimates, true);
    }
}

impl<P> BalanceOutcome<P> {
    /// The outcome of `decision` on `model`: what every rank needs of the
    /// root's model is its kind and the estimates (reported), not the
    /// planning inputs (speeds, functions, caps: the root's).
    pub fn of(model: PlanningModel, decision: RemapDecision, plan: Option<P>) -> Self {
        BalanceOutcome {
            decision,
            plan,
            model: SpeedModel::of_model(&model),
            estimates: model.estimates,
        }
    }
}

#[cfg(test)]
mod tests;
