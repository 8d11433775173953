//! When to remap: a pure cost model, evaluated at the root between phases.
//!
//! A remap pays off when the time it saves over the next iterations exceeds
//! the time it costs to move the data:
//!
//! ```text
//! t_cur = max_i area_i(current) / s_i          (predicted time per iteration)
//! t_new = max_i area_i(candidate) / s_i
//! t_mig = max_r bytes_r / bandwidth + latency × max_r messages_r
//! remap  ⇔  t_new < (1 − hysteresis) · t_cur  and  (t_cur − t_new) · iterations > t_mig
//! ```
//!
//! `bytes_r` counts what rank `r` sends plus receives (cells whose owner
//! changes, × element size); the hysteresis keeps measurement noise from
//! triggering a remap every phase. O(p²) for p parts.

use serde::{Deserialize, Serialize};

use crate::array2d::overlay::overlaps;
use crate::array2d::ArrayPlan;
use crate::error::{Error, Result};

/// Parameters of the remap decision.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct RemapPolicy {
    /// Minimum relative gain in time per iteration before a remap is considered (0.05 = 5 %).
    pub hysteresis: f64,
    /// Bandwidth (bytes/s) assumed until one has been measured.
    pub default_bandwidth: f64,
    /// Cost of one message (s).
    pub latency: f64,
}

impl Default for RemapPolicy {
    fn default() -> Self {
        RemapPolicy {
            hysteresis: 0.05,
            default_bandwidth: 1.0e9,
            latency: 2.0e-5,
        }
    }
}

/// The decision and the numbers behind it (identical on every rank).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RemapDecision {
    /// Whether the data was (or should be) moved to `candidate`.
    pub remap: bool,
    /// Predicted time per iteration under the current plan (s).
    pub t_current: f64,
    /// Predicted time per iteration under the candidate plan (s).
    pub t_candidate: f64,
    /// Predicted migration time (s).
    pub t_migration: f64,
    /// Predicted time saved over the horizon, minus migration (s); > 0 when worth it.
    pub net_gain: f64,
    /// Load imbalance of the current plan for these speeds.
    pub imbalance_current: f64,
    /// Load imbalance of the candidate plan.
    pub imbalance_candidate: f64,
    /// Speeds the decision used (work units per second, one per part).
    pub speeds: Vec<f64>,
    /// Bandwidth used for the migration estimate (bytes/s).
    pub bandwidth: f64,
    /// Iterations expected before the next check.
    pub iterations: usize,
}

/// Predicted time per iteration: `max_i area_i / s_i` (cells per second speeds).
pub fn iteration_time(plan: &ArrayPlan, speeds: &[f64]) -> Result<f64> {
    crate::check_speeds(speeds)?;
    if speeds.len() != plan.len() {
        return Err(Error::ShapeMismatch(format!(
            "{} speeds for {} parts",
            speeds.len(),
            plan.len()
        )));
    }
    Ok(plan
        .parts
        .iter()
        .zip(speeds)
        .map(|(p, s)| p.area() as f64 / s)
        .fold(0.0, f64::max))
}

/// Per-rank migration volume between two plans: `(cells sent + received,
/// messages sent + received)` for every rank. Near-linear in p for ordinary
/// tilings ([`overlaps`]).
pub fn migration_volume(old: &ArrayPlan, new: &ArrayPlan) -> Vec<(usize, usize)> {
    let mut vol = vec![(0usize, 0usize); old.len().max(new.len())];
    for (a, b, x) in overlaps(old, new) {
        if a != b {
            vol[a].0 += x.area();
            vol[a].1 += 1;
            vol[b].0 += x.area();
            vol[b].1 += 1;
        }
    }
    vol.truncate(old.len());
    vol
}

impl RemapPolicy {
    /// Decides whether moving from `current` to `candidate` pays off within
    /// `iterations` iterations, for elements of `elem_bytes` bytes.
    pub fn decide(
        &self,
        current: &ArrayPlan,
        candidate: &ArrayPlan,
        speeds: &[f64],
        elem_bytes: usize,
        iterations: usize,
        bandwidth: Option<f64>,
    ) -> Result<RemapDecision> {
        if !(self.hysteresis.is_finite() && self.hysteresis >= 0.0 && self.latency >= 0.0) {
            return Err(Error::InvalidInput(format!("bad remap policy {self:?}")));
        }
        let bandwidth = bandwidth
            .filter(|b| b.is_finite() && *b > 0.0)
            .unwrap_or(self.default_bandwidth);
        let t_current = iteration_time(current, speeds)?;
        let t_candidate = iteration_time(candidate, speeds)?;
        let vol = migration_volume(current, candidate);
        let bytes = vol.iter().map(|v| v.0).max().unwrap_or(0) as f64 * elem_bytes as f64;
        let msgs = vol.iter().map(|v| v.1).max().unwrap_or(0) as f64;
        let t_migration = bytes / bandwidth + self.latency * msgs;
        let net_gain = (t_current - t_candidate) * iterations as f64 - t_migration;
        let remap = t_candidate < (1.0 - self.hysteresis) * t_current && net_gain > 0.0;
        Ok(RemapDecision {
            remap,
            t_current,
            t_candidate,
            t_migration,
            net_gain,
            imbalance_current: current.imbalance(speeds)?,
            imbalance_candidate: candidate.imbalance(speeds)?,
            speeds: speeds.to_vec(),
            bandwidth,
            iterations,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::array2d::{ArrayDecomposer, Rect, RecursiveBisection2};

    #[test]
    fn remaps_only_when_it_pays() {
        let halves = |c: usize| {
            ArrayPlan::new(
                "t",
                100,
                100,
                vec![Rect::new(0, 0, 100, c), Rect::new(0, c, 100, 100 - c)],
            )
            .unwrap()
        };
        let uniform = halves(50);
        let speeds = [1.0e4, 3.0e4];
        let skewed = halves(25);
        let pol = RemapPolicy::default();
        // 5000 cells at 1e4 cells/s = 0.5 s per iteration; balanced = 0.25 s.
        let d = pol
            .decide(&uniform, &skewed, &speeds, 8, 10, Some(1.0e6))
            .unwrap();
        assert!((d.t_current - 0.5).abs() < 1e-12);
        assert!((d.t_candidate - 0.25).abs() < 1e-12);
        // 2500 cells change owner: rank 0 sends and rank 1 receives 2500*8 bytes at 1 MB/s = 0.02 s, one message.
        assert!((d.t_migration - (0.02 + pol.latency)).abs() < 1e-12);
        assert!(d.remap);
        // With a horrible network, the same gain does not pay for the move.
        let d = pol
            .decide(&uniform, &skewed, &speeds, 8, 10, Some(1.0))
            .unwrap();
        assert!(!d.remap && d.net_gain < 0.0);
        // Within the hysteresis band nothing moves.
        let near = halves(49);
        let d = pol
            .decide(&uniform, &near, &[1.0, 1.04], 8, 1000, Some(1.0e12))
            .unwrap();
        assert!(!d.remap);
    }

    #[test]
    fn volume_is_symmetric_in_total() {
        let a = RecursiveBisection2
            .decompose(20, 30, &[1.0, 2.0, 3.0])
            .unwrap();
        let b = RecursiveBisection2
            .decompose(20, 30, &[3.0, 2.0, 1.0])
            .unwrap();
        let v = migration_volume(&a, &b);
        let total: usize = v.iter().map(|x| x.0).sum();
        assert_eq!(total, 2 * crate::array2d::cells_changing_owner(&a, &b));
    }
}
