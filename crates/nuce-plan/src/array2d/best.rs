//! `best`: run every concrete decomposer and keep the plan with the least
//! **predicted time per iteration** ([`predicted_time`]): the slowest part's
//! compute time, `max_i area_i / (s_i / s̄)`, plus the communication cost,
//! Acost (\[KRW96\] §2) plus `latency × internal edges` (\[KRW96\] §5), all
//! measured on the integer plans. Ranking by Acost alone would prefer a plan
//! that gives every cell to one part (Acost 0) to a balanced one; the
//! compute term rules that out. Cost: the sum of the candidates' costs plus
//! `O(p log p)` per candidate for the evaluation.

use super::checks::{check_latency, checked_speeds};
use super::cost::predicted_time;
use super::registry::practical_decomposers;
use super::{ArrayDecomposer, ArrayPlan, ColumnDp};
use crate::error::{Error, Result};

/// The plan of least [`predicted_time`] among all concrete decomposers
/// (ties: registry order; the exhaustive XY/XY2/TILE only up to
/// [`EXHAUSTIVE_MAX_PARTS`](super::registry::EXHAUSTIVE_MAX_PARTS) parts);
/// with a latency, the plain Acost column DP is tried as well.
/// The plan's `algorithm` reads `best:<winner>`. By construction no
/// candidate has a smaller predicted time than the plan returned
/// ([`Best::choose`] returns every candidate's time).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Best {
    /// Latency per internal edge; 0 weighs the cell edges (Acost) alone.
    pub latency: f64,
}

/// One candidate of [`Best`] and its predicted time.
#[derive(Debug, Clone, PartialEq)]
pub struct Candidate {
    /// The candidate's algorithm (its plan's `algorithm`).
    pub algorithm: String,
    /// Its [`predicted_time`].
    pub time: f64,
}

impl Best {
    /// `best` for the latency cost with this latency.
    pub fn with_latency(latency: f64) -> Self {
        Best { latency }
    }

    /// The winning plan (named `best:<winner>`) and every candidate with
    /// its predicted time, in the order tried.
    pub fn choose(
        &self,
        rows: usize,
        cols: usize,
        speeds: &[f64],
    ) -> Result<(ArrayPlan, Vec<Candidate>)> {
        let speeds = &checked_speeds(rows, cols, speeds)?;
        check_latency(self.latency)?;
        let mut best: Option<(f64, ArrayPlan)> = None;
        let mut tried = Vec::new();
        let mut candidates = practical_decomposers(speeds.len(), self.latency);
        if self.latency > 0.0 {
            // The latency-aware DP optimises a model of the edges; the plain
            // one can still win on the measured integer plan.
            candidates.push(Box::new(ColumnDp::default()));
        }
        for d in candidates {
            let plan = d.decompose(rows, cols, speeds)?;
            let time = predicted_time(&plan, speeds, self.latency)?;
            tried.push(Candidate {
                algorithm: plan.algorithm.clone(),
                time,
            });
            if best.as_ref().is_none_or(|(t, _)| time < *t) {
                best = Some((time, plan));
            }
        }
        let (_, mut plan) =
            best.ok_or_else(|| Error::InvalidInput("no array decomposer available".into()))?;
        plan.algorithm = format!("best:{}", plan.algorithm);
        Ok((plan, tried))
    }
}

impl ArrayDecomposer for Best {
    fn name(&self) -> &'static str {
        "best"
    }

    fn decompose(&self, rows: usize, cols: usize, speeds: &[f64]) -> Result<ArrayPlan> {
        Ok(self.choose(rows, cols, speeds)?.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::array2d::registry::all_decomposers;

    #[test]
    fn best_is_no_worse_than_any() {
        let speeds = [1.0, 3.0, 2.0, 7.0, 1.5, 0.5];
        for latency in [0.0, 50.0] {
            let b = Best::with_latency(latency)
                .decompose(40, 60, &speeds)
                .unwrap();
            assert!(b.algorithm.starts_with("best:"));
            let tb = predicted_time(&b, &speeds, latency).unwrap();
            for d in all_decomposers() {
                let p = d.decompose(40, 60, &speeds).unwrap();
                assert!(tb <= predicted_time(&p, &speeds, latency).unwrap());
            }
        }
    }

    #[test]
    fn a_one_row_array_is_balanced() {
        // Issue 12: XY gave all 1000 cells of a 1 x 1000 array to one part
        // of four (Acost 0, imbalance 3.0) and `best` ranked by Acost alone
        // chose it; the column DP splits it evenly (Acost 3).
        let speeds = [1.0; 4];
        let b = Best::default().decompose(1, 1000, &speeds).unwrap();
        assert_eq!(b.imbalance(&speeds).unwrap(), 0.0, "{b:?}");
        assert!(b.parts.iter().all(|r| r.area() == 250));
        let (_, tried) = Best::default().choose(1, 1000, &speeds).unwrap();
        let winner = tried.iter().map(|c| c.time).fold(f64::INFINITY, f64::min);
        assert_eq!(predicted_time(&b, &speeds, 0.0).unwrap(), winner);
        // The unbalanced XY candidate is among them, and loses.
        assert!(tried
            .iter()
            .any(|c| c.algorithm == "xy" && c.time >= 1000.0));
    }
}
