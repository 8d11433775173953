//! [`PlanningModel`]: which speed model plans a balance point — the ranks'
//! constant speeds (snapped within their noise) or their speed functions —
//! the speeds handed to the decomposers, the remap decision, and memory caps.

use serde::{Deserialize, Serialize};

use super::{functional_shares, snap_speeds, SpeedEstimate, SpeedFunction};
use crate::error::{Error, Result};
use crate::policy::{NoisyDecision, RemapPolicy};

/// The least relative noise at which [`PlanningModel::new`] tests a speed
/// function for flatness ([`SpeedFunction::is_flat`]): speeds measured at
/// different sizes in different phases differ by more than the noise of
/// repeated phases at one size (other jobs come and go), so a function is
/// taken as size-dependent only beyond 10 %.
pub const MIN_FLAT_NOISE: f64 = 0.1;

/// The relative gap below which two adjacent points of a speed function
/// that disagree beyond the noise are taken as a knee between them, planned
/// on its slow side ([`SpeedFunction::cautious`]): without it, plans on a
/// step of speed creep towards the step by ever smaller remaps, each landing
/// just on its slow side.
pub const CAUTIOUS_GAP: f64 = 0.05;

/// How a balance point plans: the model, the speeds the decomposers get,
/// and the memory caps.
///
/// * **Constant**: every rank's speed estimate, snapped within the noise
///   ([`snap_speeds`]). Without caps the planning speeds are the snapped
///   speeds themselves, bit for bit: the plans of nuce's constant model.
/// * **Functional**: every rank's [`SpeedFunction`] of its measured
///   (work, time) points, cautious where two points are close
///   ([`CAUTIOUS_GAP`]); the planning speeds are the
///   [`functional_shares`] for the whole work, and the remap decision
///   compares the two layouts' times *under the functions* (a rank's time
///   for its load is `t̄_i(load_i)`, [`SpeedFunction::envelope_time`]), each
///   rank's time uncertain by the noise of its speed estimate, as in the
///   constant model ([`RemapPolicy::decide_noisy`] on times).
///
/// Caps (the most work units each rank may hold) make the planning speeds
/// the capped [`functional_shares`] in both models (of constant functions
/// for the constant model; identical to the snapped speeds when no cap
/// binds).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PlanningModel {
    /// The speed estimates (constant model; also kept for reports).
    pub estimates: Vec<SpeedEstimate>,
    /// The speed functions when the functional model plans, else `None`.
    pub functions: Option<Vec<SpeedFunction>>,
    /// The speeds handed to the decomposers.
    pub speeds: Vec<f64>,
    /// Work units to share (the whole work of one iteration).
    pub total_work: usize,
    /// Memory caps in work units, one per rank, if any.
    pub caps: Option<Vec<usize>>,
}

impl PlanningModel {
    /// The model of a balance point for `estimates`, the ranks' speed
    /// `functions` if known (one per rank; `None` for a rank without one),
    /// `total_work` units per iteration and memory `caps`. The functional
    /// model plans when `functional` is allowed, every rank has a function
    /// and some function is not flat within its noise (at least
    /// [`MIN_FLAT_NOISE`]); otherwise the constant model plans. Errors: bad
    /// estimates, functions or caps of another length than the estimates
    /// ([`Error::ShapeMismatch`]), caps that hold less than the work
    /// ([`Error::InvalidInput`]).
    pub fn new(
        estimates: &[SpeedEstimate],
        functions: Option<&[Option<SpeedFunction>]>,
        total_work: usize,
        caps: Option<&[usize]>,
        functional: bool,
    ) -> Result<PlanningModel> {
        let p = estimates.len();
        for (what, len) in [
            ("speed functions", functions.map(<[_]>::len)),
            ("memory caps", caps.map(<[_]>::len)),
        ] {
            if len.is_some_and(|l| l != p) {
                return Err(Error::ShapeMismatch(format!(
                    "{} {what} for {p} speed estimates",
                    len.unwrap_or(0)
                )));
            }
        }
        let all: Option<Vec<SpeedFunction>> = functions
            .filter(|_| functional)
            .and_then(|f| f.iter().cloned().collect());
        let functions = all
            .filter(|f| f.iter().any(|g| !g.is_flat(g.noise().max(MIN_FLAT_NOISE))))
            .map(|f| f.iter().map(|g| g.cautious(CAUTIOUS_GAP)).collect());
        let mut model = PlanningModel {
            estimates: estimates.to_vec(),
            functions,
            speeds: Vec::new(),
            total_work,
            caps: caps.map(<[_]>::to_vec),
        };
        model.speeds = model.shares(model.caps.as_deref())?;
        Ok(model)
    }

    /// Whether the functional model plans.
    pub fn is_functional(&self) -> bool {
        self.functions.is_some()
    }

    /// The planning speeds for `caps`.
    fn shares(&self, caps: Option<&[usize]>) -> Result<Vec<f64>> {
        let snapped = snap_speeds(&self.estimates)?;
        match (&self.functions, caps) {
            (None, None) => Ok(snapped),
            _ if self.total_work == 0 => Err(Error::Empty("no work to share".into())),
            (Some(f), _) => functional_shares(self.total_work, f, caps),
            (None, Some(_)) => {
                let f = snapped
                    .iter()
                    .map(|&s| SpeedFunction::constant(s, 0.0))
                    .collect::<Result<Vec<_>>>()?;
                functional_shares(self.total_work, &f, caps)
            }
        }
    }

    /// Whether moving from `current` loads (work units per iteration, per
    /// rank) to `candidate` loads pays off within `iterations`, for the
    /// move `volume` (see [`RemapPolicy::decide_noisy`]). Constant model:
    /// [`RemapPolicy::decide_noisy`] on the loads and estimates. Functional
    /// model: the same on the ranks' *times* `t̄_i(load_i)`, each of speed
    /// `1 ± noise_i` (the noise of its speed estimate), the imbalances measured against
    /// the functional optimum `total_work / Σ speeds`. Either way the
    /// decision's `speeds` are the planning speeds.
    pub fn decide(
        &self,
        policy: &RemapPolicy,
        current: &[f64],
        candidate: &[f64],
        volume: &[(f64, usize)],
        iterations: usize,
        bandwidth: Option<f64>,
    ) -> Result<NoisyDecision> {
        let Some(f) = &self.functions else {
            let mut d = policy.decide_noisy(
                current,
                candidate,
                &self.estimates,
                volume,
                iterations,
                bandwidth,
            )?;
            d.decision.speeds = self.speeds.clone();
            return Ok(d);
        };
        let p = f.len();
        if current.len() != p || candidate.len() != p {
            return Err(Error::ShapeMismatch(format!(
                "{} and {} loads for {p} speed functions",
                current.len(),
                candidate.len()
            )));
        }
        let times = |loads: &[f64]| -> Vec<f64> {
            loads
                .iter()
                .zip(f)
                .map(|(&l, g)| g.envelope_time(l))
                .collect()
        };
        let unit: Vec<SpeedEstimate> = self
            .estimates
            .iter()
            .map(|e| SpeedEstimate::new(1.0, e.noise))
            .collect::<Result<_>>()?;
        let mut d = policy.decide_noisy(
            &times(current),
            &times(candidate),
            &unit,
            volume,
            iterations,
            bandwidth,
        )?;
        let ideal = self.total_work as f64 / self.speeds.iter().sum::<f64>();
        let imbalance = |t: f64| {
            if ideal > 0.0 {
                t / ideal - 1.0
            } else {
                0.0
            }
        };
        d.decision.imbalance_current = imbalance(d.decision.t_current);
        d.decision.imbalance_candidate = imbalance(d.decision.t_candidate);
        d.decision.speeds = self.speeds.clone();
        Ok(d)
    }

    /// A plan within the memory caps: `plan` makes a layout for planning
    /// speeds, `sizes` says how many units each rank holds under it. Without
    /// caps: `plan(speeds)`. With caps, a layout that gives a rank more than
    /// its cap (the decomposers round shares to rectangles or boxes) is made
    /// again with that rank's cap lowered by its excess, doubled at every
    /// attempt (up to 8 times);
    /// when no layout fits, an [`Error::InvalidInput`] naming the rank, its
    /// size and its cap.
    pub fn plan_within_caps<P>(
        &self,
        mut plan: impl FnMut(&[f64]) -> Result<P>,
        sizes: impl Fn(&P) -> Vec<usize>,
    ) -> Result<P> {
        let Some(caps) = &self.caps else {
            return plan(&self.speeds);
        };
        let mut target = caps.clone();
        let mut speeds = self.speeds.clone();
        let mut attempt = 0;
        loop {
            let layout = plan(&speeds)?;
            let got = sizes(&layout);
            let over: Vec<usize> = (0..caps.len()).filter(|&i| got[i] > caps[i]).collect();
            match over.first() {
                None => return Ok(layout),
                Some(&worst) if attempt == 8 => {
                    return Err(Error::InvalidInput(format!(
                        "no plan fits the memory limits: rank {worst} would hold {} units, its limit is {} \
                         ({} units in all, limits {:?})",
                        got[worst], caps[worst], self.total_work, caps
                    )))
                }
                Some(_) => {}
            }
            // The overshoot doubles at every attempt: a planner that rounds
            // to whole rows or planes (a 200-cell row under a cap of 23 999)
            // is under its cap within a logarithmic number of attempts.
            for &i in &over {
                let step = (got[i] - caps[i]).saturating_mul(1 << attempt);
                target[i] = target[i].saturating_sub(step).max(1);
            }
            speeds = self.shares(Some(&target))?;
            attempt += 1;
        }
    }
}
