//! Divisible work on workers of different speeds and links.
//!
//! Beyond \[AJ88\], which assumes identical workers: here
//! worker `i` has its own `a_i(s)`, `y_i(s)`, `b_i(s)`. For a *given*
//! feeding order the LP of eq. (7) still gives the optimal sizes
//! ([`super::solve_ordered`]); outputs are taken in the input order (the
//! Order Maintenance Theorem is proved in \[AJ88\] for identical workers only;
//! here it is an assumption of the schedule, which the executor follows).
//! What remains is choosing which workers to use and in which order.

use serde::{Deserialize, Serialize};

use super::{solve_ordered, DivisiblePartitioner, DivisiblePlan, WorkerCosts};
use crate::error::{Error, Result};

/// Chooses workers and their feeding order, then sizes by the LP.
///
/// * `p ≤ exhaustive_up_to`: every ordered subset of the workers is tried
///   (`Σ_n p!/(p−n)!` LPs; 325 for `p = 5`): optimal under the model.
/// * Otherwise, a heuristic: three base orders (by input slope, by compute
///   slope, by total slope `a_1+y_1+b_1`; fast links first feeds the others
///   sooner), each cut at every prefix length `n` like the successive-`n`
///   search of \[AJ88\] §2.3 (stopping once the master's busy-time bound
///   `Σ_{i≤n}(a_0+b_0) + min(a_1+b_1)` reaches the best makespan), then a
///   local search that swaps adjacent workers, replaces a used worker by an
///   unused one, drops or appends one, while the makespan improves (at most
///   `max_rounds` rounds of `O(p²)` LPs).
///
/// Bounds: the LPs of one plan may cost at most [`MAX_HETERO_WORK`] in
/// all, counting `n³` for an LP of `n` pieces (the measured growth of its
/// time). An exhaustive search over more is refused at once
/// ([`Error::InvalidInput`]); the heuristic stops when the budget is spent
/// and returns the best plan found so far. At most
/// [`MAX_LP_WORKERS`](super::MAX_LP_WORKERS) workers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct HeteroDivisible {
    /// Exhaustive search up to this many workers.
    pub exhaustive_up_to: usize,
    /// Rounds of local search.
    pub max_rounds: usize,
}

impl Default for HeteroDivisible {
    fn default() -> Self {
        Self {
            exhaustive_up_to: 5,
            max_rounds: 30,
        }
    }
}

/// Budget of the LPs of one [`HeteroDivisible`] plan, `Σ n³` over LPs of
/// `n` pieces: 2^29, about 3 s on a busy machine.
pub const MAX_HETERO_WORK: u64 = 1 << 29;

/// Best plan so far, and the LP budget left.
struct Best {
    plan: Option<DivisiblePlan>,
    work_left: u64,
}

impl Best {
    fn makespan(&self) -> f64 {
        self.plan.as_ref().map_or(f64::INFINITY, |p| p.makespan)
    }

    /// True when the LP for `n` pieces still fits in the budget.
    fn affords(&self, n: usize) -> bool {
        (n as u64).pow(3) <= self.work_left
    }

    /// Solves the LP for `order` and keeps it if strictly better; false
    /// without solving when the budget is spent.
    fn try_order(&mut self, workers: &[WorkerCosts], order: &[usize]) -> Result<bool> {
        if !self.affords(order.len()) {
            return Ok(false);
        }
        self.work_left -= (order.len() as u64).pow(3);
        let costs: Vec<WorkerCosts> = order.iter().map(|&i| workers[i]).collect();
        let (fractions, makespan) = solve_ordered(&costs)?;
        if makespan < self.makespan() * (1.0 - 1e-9) {
            self.plan = Some(DivisiblePlan {
                workers: order.len(),
                order: order.to_vec(),
                fractions,
                makespan,
            });
            return Ok(true);
        }
        Ok(false)
    }
}

fn ordered_subsets(
    p: usize,
    prefix: &mut Vec<usize>,
    f: &mut impl FnMut(&[usize]) -> Result<()>,
) -> Result<()> {
    for i in 0..p {
        if !prefix.contains(&i) {
            prefix.push(i);
            f(prefix)?;
            ordered_subsets(p, prefix, f)?;
            prefix.pop();
        }
    }
    Ok(())
}

impl HeteroDivisible {
    /// Plans the pieces for `workers` (any subset may be left idle).
    pub fn plan(&self, workers: &[WorkerCosts]) -> Result<DivisiblePlan> {
        let p = workers.len();
        if p == 0 {
            return Err(Error::Empty("no workers".into()));
        }
        super::check_workers(p, super::MAX_LP_WORKERS)?;
        for w in workers {
            w.check()?;
        }
        let mut best = Best {
            plan: None,
            work_left: MAX_HETERO_WORK,
        };
        if p <= self.exhaustive_up_to {
            // Σ_n p!/(p−n)! ordered subsets, n³ each: refused at once
            // beyond the budget.
            let (mut work, mut count) = (0u64, 1u64);
            for n in 1..=p as u64 {
                count = count.saturating_mul(p as u64 - n + 1);
                work = work.saturating_add(count.saturating_mul(n.pow(3)));
            }
            if work > MAX_HETERO_WORK {
                return Err(Error::InvalidInput(format!(
                    "exhaustive order search over {p} workers needs {work} LP work units, \
                     over the limit {MAX_HETERO_WORK}; lower exhaustive_up_to"
                )));
            }
            ordered_subsets(p, &mut Vec::new(), &mut |o| {
                best.try_order(workers, o).map(|_| ())
            })?;
        } else {
            self.heuristic(workers, &mut best)?;
        }
        best.plan
            .ok_or_else(|| Error::Solver("no feasible plan".into()))
    }

    fn heuristic(&self, workers: &[WorkerCosts], best: &mut Best) -> Result<()> {
        let p = workers.len();
        let keys: [fn(&WorkerCosts) -> f64; 3] = [
            |w| w.input.slope,
            |w| w.compute.slope,
            |w| w.input.slope + w.compute.slope + w.output.slope,
        ];
        let min_slope = workers
            .iter()
            .map(|w| w.input.slope + w.output.slope)
            .fold(f64::INFINITY, f64::min);
        for key in keys {
            let mut order: Vec<usize> = (0..p).collect();
            order.sort_by(|&a, &b| {
                key(&workers[a])
                    .total_cmp(&key(&workers[b]))
                    .then(a.cmp(&b))
            });
            let mut intercepts = 0.0;
            for n in 1..=p {
                let w = &workers[order[n - 1]];
                intercepts += w.input.intercept + w.output.intercept;
                if intercepts + min_slope >= best.makespan() || !best.affords(n) {
                    break;
                }
                best.try_order(workers, &order[..n])?;
            }
        }
        for _ in 0..self.max_rounds {
            if best.work_left == 0 {
                break;
            }
            let Some(cur) = best.plan.as_ref().map(|b| b.order.clone()) else {
                break;
            };
            let unused: Vec<usize> = (0..p).filter(|i| !cur.contains(i)).collect();
            let mut candidates: Vec<Vec<usize>> = Vec::new();
            for k in 0..cur.len().saturating_sub(1) {
                let mut o = cur.clone();
                o.swap(k, k + 1);
                candidates.push(o);
            }
            for k in 0..cur.len() {
                for &u in &unused {
                    let mut o = cur.clone();
                    o[k] = u;
                    candidates.push(o);
                }
                if cur.len() > 1 {
                    let mut o = cur.clone();
                    o.remove(k);
                    candidates.push(o);
                }
            }
            for &u in &unused {
                let mut o = cur.clone();
                o.push(u);
                candidates.push(o);
            }
            let mut improved = false;
            for o in candidates {
                improved |= best.try_order(workers, &o)?;
            }
            if !improved {
                break;
            }
        }
        Ok(())
    }
}

impl DivisiblePartitioner for HeteroDivisible {
    fn partition(&self, workers: &[WorkerCosts]) -> Result<DivisiblePlan> {
        self.plan(workers)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::divisible::AffineCost;

    fn workers(p: usize) -> Vec<WorkerCosts> {
        (0..p)
            .map(|i| {
                let k = 1.0 + i as f64 * 0.1;
                WorkerCosts::new(
                    AffineCost::new(0.1, k),
                    AffineCost::new(0.2, 5.0 * k),
                    AffineCost::new(0.1, k),
                )
                .unwrap()
            })
            .collect()
    }

    #[test]
    fn the_lp_budget_bounds_both_searches() {
        // An exhaustive search over 12 workers (1.3·10^9 ordered subsets)
        // is refused at once; the heuristic on 200 workers stops within its
        // budget with a plan.
        let t = std::time::Instant::now();
        let exhaustive = HeteroDivisible {
            exhaustive_up_to: 12,
            ..HeteroDivisible::default()
        };
        assert!(matches!(
            exhaustive.plan(&workers(12)),
            Err(Error::InvalidInput(_))
        ));
        let plan = HeteroDivisible::default().plan(&workers(200)).unwrap();
        super::super::check_fractions(&plan.fractions).unwrap();
        assert!(t.elapsed().as_secs_f64() < 60.0, "{:?}", t.elapsed());
    }
}
