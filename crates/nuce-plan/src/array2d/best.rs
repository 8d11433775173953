//! `best`: run every concrete decomposer and keep the cheapest plan for the
//! chosen cost — Acost (\[KRW96\] §2) or, with a
//! latency, `Acost + latency × internal edges` (\[KRW96\] §5). Costs are measured
//! on the integer plans. Cost: the sum of the candidates' costs plus
//! `O(p log p)` per candidate for the cost evaluation.

use super::checks::{check_latency, checked_speeds};
use super::cost::plan_cost;
use super::registry::practical_decomposers;
use super::{ArrayDecomposer, ArrayPlan, ColumnDp};
use crate::error::{Error, Result};

/// The cheapest plan of all concrete decomposers (ties: registry order; the
/// exhaustive XY/XY2/TILE only up to
/// [`EXHAUSTIVE_MAX_PARTS`](super::registry::EXHAUSTIVE_MAX_PARTS) parts);
/// with a latency, the plain Acost column DP is tried as well.
/// The plan's `algorithm` reads `best:<winner>`.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Best {
    /// Latency per internal edge; 0 compares plain Acost.
    pub latency: f64,
}

impl Best {
    /// `best` for the latency cost with this latency.
    pub fn with_latency(latency: f64) -> Self {
        Best { latency }
    }
}

impl ArrayDecomposer for Best {
    fn name(&self) -> &'static str {
        "best"
    }

    fn decompose(&self, rows: usize, cols: usize, speeds: &[f64]) -> Result<ArrayPlan> {
        let speeds = &checked_speeds(rows, cols, speeds)?;
        check_latency(self.latency)?;
        let mut best: Option<(f64, ArrayPlan)> = None;
        let mut candidates = practical_decomposers(speeds.len(), self.latency);
        if self.latency > 0.0 {
            // The latency-aware DP optimises a model of the edges; the plain
            // one can still win on the measured integer plan.
            candidates.push(Box::new(ColumnDp::default()));
        }
        for d in candidates {
            let plan = d.decompose(rows, cols, speeds)?;
            let cost = plan_cost(&plan, self.latency);
            if best.as_ref().is_none_or(|(c, _)| cost < *c) {
                best = Some((cost, plan));
            }
        }
        let (_, mut plan) =
            best.ok_or_else(|| Error::InvalidInput("no array decomposer available".into()))?;
        plan.algorithm = format!("best:{}", plan.algorithm);
        Ok(plan)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::array2d::registry::all_decomposers;

    #[test]
    fn best_is_no_worse_than_any() {
        let speeds = [1.0, 3.0, 2.0, 7.0, 1.5, 0.5];
        let b = Best::default().decompose(40, 60, &speeds).unwrap();
        assert!(b.algorithm.starts_with("best:"));
        for d in all_decomposers() {
            let p = d.decompose(40, 60, &speeds).unwrap();
            assert!(plan_cost(&b, 0.0) <= plan_cost(&p, 0.0));
        }
    }
}
