//! MaxTasks1(T) by maximum-weight bipartite matching.
//!
//! Source: \[BBLRR01\] §4.3.2, Figures 22–23, Proposition 1.
//! Processors `P_i` on the left, permutation values (message slots) `S_j` on
//! the right; the edge `P_i — S_j` weighs `⌊(T − j·t_com) / t_i⌋`, the tasks
//! `P_i` completes when its message is the `j`-th. A maximum-weight perfect
//! matching is an optimal `σ`, hence an optimal MaxTasks1(T) schedule.
//!
//! Four assignment solvers give the same optimum value:
//!
//! * [`AssignmentSolver::Staircase`] (default): the weights of Figure 22 are
//!   non-increasing staircases in the slot; [`super::staircase`] turns the
//!   matching into a sparse min-cost flow over deadlines, far below `O(p³)`
//!   (about 0.1 s at `p = 1000` against 2 s for the dense solver, see
//!   `benchmarks/tasks.md`).
//! * [`AssignmentSolver::Hungarian`]: shortest augmenting paths
//!   (Kuhn–Munkres \[Kuh55\] \[Mun57\] in the Jonker–Volgenant \[JV87\]/e-maxx form, `O(p³)` worst case)
//!   on weights computed on the fly (no `p²` matrix), warm-started with the
//!   slot potentials of the *continuous* problem. Without the floors the
//!   weights `(T − j·t_com)·(1/t_i)` form a product (Monge) matrix whose
//!   optimum is "fastest first" with explicit dual potentials (see
//!   [`monge_slot_potentials`]); the floors move each weight by less than one,
//!   so these potentials are nearly optimal; ties are broken towards free
//!   columns. Still `O(p³)`-like on these tie-heavy weights (about 1.5 s at
//!   `p = 1000`).
//! * [`AssignmentSolver::KuhnMunkres`]: `pathfinding::kuhn_munkres` on the
//!   dense `p × p` matrix, `O(p³)` (the reference of Proposition 1).
//! * [`AssignmentSolver::Auction`]: Bertsekas' auction with ε-scaling
//!   ([`super::auction`]), the algorithm run collectively by the runtime.

use serde::{Deserialize, Serialize};

use super::{check_deadline, tasks_within, MaxTasksSolver, TaskPlatform, TaskSchedule};
use crate::error::{Error, Result};

/// Which algorithm solves the `p × p` assignment problems.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum AssignmentSolver {
    /// Min-cost flow on the staircase structure of the weights
    /// ([`super::staircase`]); needs rows non-increasing in the slot.
    #[default]
    Staircase,
    /// Warm-started shortest augmenting paths on implicit weights.
    Hungarian,
    /// `pathfinding::kuhn_munkres` on a dense matrix.
    KuhnMunkres,
    /// Auction algorithm with ε-scaling (exact for integer weights).
    Auction,
}

/// A square assignment problem with integer weights given by a function:
/// `weight(row, col)` for `row, col < n`.
pub struct Assignment<F: Fn(usize, usize) -> i64> {
    /// Number of rows (= columns).
    pub n: usize,
    /// The weight of assigning `row` to `col`.
    pub weight: F,
    /// Optional column potentials for a warm start (maximisation form:
    /// a guess of the price of each column); any values are correct.
    pub col_prices: Option<Vec<i64>>,
    /// Optional order in which the Hungarian solver inserts rows.
    pub row_order: Option<Vec<usize>>,
}

impl<F: Fn(usize, usize) -> i64> Assignment<F> {
    /// A problem without warm start.
    pub fn new(n: usize, weight: F) -> Self {
        Self {
            n,
            weight,
            col_prices: None,
            row_order: None,
        }
    }

    /// Solves for a maximum-weight perfect assignment: returns the total
    /// weight and `col[row]`.
    pub fn solve(&self, solver: AssignmentSolver) -> Result<(i64, Vec<usize>)> {
        if self.n == 0 {
            return Ok((0, Vec::new()));
        }
        let cols = match solver {
            AssignmentSolver::Staircase => {
                for i in 0..self.n {
                    if (1..self.n).any(|j| (self.weight)(i, j) > (self.weight)(i, j - 1)) {
                        return Err(Error::InvalidInput(format!(
                            "staircase solver: row {i} is not non-increasing"
                        )));
                    }
                }
                let order = self
                    .row_order
                    .clone()
                    .unwrap_or_else(|| (0..self.n).collect());
                super::staircase::staircase_assignment(self.n, &self.weight, &order)?
            }
            AssignmentSolver::Hungarian => self.hungarian()?,
            AssignmentSolver::KuhnMunkres => {
                let m = pathfinding::matrix::Matrix::from_fn(self.n, self.n, |(i, j)| {
                    (self.weight)(i, j)
                });
                pathfinding::kuhn_munkres::kuhn_munkres(&m).1
            }
            AssignmentSolver::Auction => super::auction::auction(self.n, &self.weight)?,
        };
        let total = cols
            .iter()
            .enumerate()
            .map(|(i, &j)| (self.weight)(i, j))
            .sum();
        Ok((total, cols))
    }

    /// Shortest-augmenting-path Hungarian algorithm (minimisation of
    /// `−weight`), rows inserted one at a time; `O(n³)` worst case, `O(n)`
    /// memory besides the caller's weights.
    fn hungarian(&self) -> Result<Vec<usize>> {
        let n = self.n;
        const INF: i64 = i64::MAX / 4;
        // 1-based arrays; column 0 is the virtual start of each search.
        let mut u = vec![0i64; n + 1];
        let mut v = vec![0i64; n + 1];
        if let Some(prices) = &self.col_prices {
            if prices.len() != n {
                return Err(Error::ShapeMismatch(format!(
                    "{} column prices for {n} columns",
                    prices.len()
                )));
            }
            // Minimisation potentials are the negated prices.
            for (j, &pr) in prices.iter().enumerate() {
                v[j + 1] = -pr;
            }
        }
        let mut owner = vec![0usize; n + 1];
        let mut way = vec![0usize; n + 1];
        let mut minv = vec![INF; n + 1];
        let mut used = vec![false; n + 1];
        let order: Vec<usize> = match &self.row_order {
            Some(o) => {
                super::check_permutation(
                    &o.iter().map(|&r| r + 1).collect::<Vec<_>>(),
                    n,
                    "row order",
                )?;
                o.clone()
            }
            None => (0..n).collect(),
        };
        for &row in &order {
            owner[0] = row + 1;
            let mut j0 = 0usize;
            minv.iter_mut().for_each(|m| *m = INF);
            used.iter_mut().for_each(|b| *b = false);
            loop {
                used[j0] = true;
                let i0 = owner[j0];
                let mut delta = INF;
                let mut j1 = 0usize;
                for j in 1..=n {
                    if !used[j] {
                        let cur = -(self.weight)(i0 - 1, j - 1) - u[i0] - v[j];
                        if cur < minv[j] {
                            minv[j] = cur;
                            way[j] = j0;
                        }
                        // Among equal reduced costs prefer a free column:
                        // the search then stops at once (the weights of
                        // [BBLRR01] §4.3 have many ties).
                        if minv[j] < delta || (minv[j] == delta && owner[j] == 0 && owner[j1] != 0)
                        {
                            delta = minv[j];
                            j1 = j;
                        }
                    }
                }
                for j in 0..=n {
                    if used[j] {
                        u[owner[j]] += delta;
                        v[j] -= delta;
                    } else {
                        minv[j] -= delta;
                    }
                }
                j0 = j1;
                if owner[j0] == 0 {
                    break;
                }
            }
            loop {
                let j1 = way[j0];
                owner[j0] = owner[j1];
                j0 = j1;
                if j0 == 0 {
                    break;
                }
            }
        }
        let mut cols = vec![0usize; n];
        for j in 1..=n {
            cols[owner[j] - 1] = j - 1;
        }
        Ok(cols)
    }
}

/// Slot prices of the continuous relaxation of MaxTasks1 (\[BBLRR01\] §4.3.2).
///
/// Without floors the weight of worker `i` in slot `j` is `(T − j·c)·r_i`
/// with `r_i = 1/t_i`: a product matrix, whose optimal assignment puts the
/// `q`-th fastest worker in slot `q` (rearrangement inequality) — the
/// "fastest first" rule of §4.3.1. Dual potentials certifying it, in the
/// minimisation form with cost `j·c·r_i` (the `T·r_i` term goes into the
/// row potentials): `β_1 = 0`, `β_j = β_{j−1} + c·r_(j)` with `r_(q)` the
/// `q`-th largest rate; then `α_q = q·c·r_(q) − β_q` gives
/// `α_q + β_j ≤ j·c·r_(q)` for all `j`, with equality at `j = q`. The
/// returned slot prices are `−β_j`, rounded down. `O(p log p)`.
pub fn monge_slot_potentials(cycle_times: &[f64], tcom: f64) -> Vec<i64> {
    let mut rates: Vec<f64> = cycle_times.iter().map(|t| 1.0 / t).collect();
    rates.sort_by(|a, b| b.total_cmp(a));
    let mut beta = 0.0f64;
    let mut out = Vec::with_capacity(rates.len());
    for (j, r) in rates.iter().enumerate() {
        if j > 0 {
            beta += tcom * r;
        }
        out.push((-beta).floor().clamp(-4e18, 4e18) as i64);
    }
    out
}

/// Indices of the workers sorted by cycle time, fastest first (ties by index).
pub fn fastest_first(cycle_times: &[f64]) -> Vec<usize> {
    let mut idx: Vec<usize> = (0..cycle_times.len()).collect();
    idx.sort_by(|&a, &b| cycle_times[a].total_cmp(&cycle_times[b]).then(a.cmp(&b)));
    idx
}

/// Edge weight of Figure 22: tasks worker `i` completes by `deadline` when
/// its message is in slot `slot` (1-based): `max(0, ⌊(T − j·t_com)/t_i⌋)`.
pub fn maxtasks1_weight(platform: &TaskPlatform, deadline: f64, i: usize, slot: usize) -> i64 {
    tasks_within(platform.budget(deadline, slot, 0), platform.cycle_times[i]) as i64
}

/// Solves the matching of Figure 22 for one side of a schedule: rows are the
/// workers, columns the slots `1..=p`, `weight(i, slot)` given. Warm-started
/// with [`monge_slot_potentials`] for `cost` per slot. Returns the slot of
/// each worker (1-based).
pub fn slot_matching(
    cycle_times: &[f64],
    cost: f64,
    solver: AssignmentSolver,
    weight: impl Fn(usize, usize) -> i64,
) -> Result<Vec<usize>> {
    let p = cycle_times.len();
    if solver == AssignmentSolver::Staircase {
        // Every weight of [BBLRR01] §4 is non-increasing in the slot.
        // Slowest first: measured faster than fastest first.
        let mut order = fastest_first(cycle_times);
        order.reverse();
        let cols = super::staircase::staircase_assignment(p, |i, j| weight(i, j + 1), &order)?;
        return Ok(cols.into_iter().map(|j| j + 1).collect());
    }
    let problem = Assignment {
        n: p,
        weight: |i: usize, j: usize| weight(i, j + 1),
        col_prices: Some(monge_slot_potentials(cycle_times, cost)),
        row_order: Some(fastest_first(cycle_times)),
    };
    let (_, cols) = problem.solve(solver)?;
    Ok(cols.into_iter().map(|j| j + 1).collect())
}

/// MaxTasks1(T): optimal schedule with initial messages only, by weighted
/// bipartite matching (\[BBLRR01\] §4.3.2, Proposition 1; `O(p³)` worst case, about
/// `O(p²)` with the default warm-started solver).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Matching {
    /// The assignment algorithm.
    pub solver: AssignmentSolver,
}

impl MaxTasksSolver for Matching {
    fn schedule(&self, platform: &TaskPlatform, deadline: f64) -> Result<TaskSchedule> {
        platform.check()?;
        check_deadline(deadline)?;
        if platform.tcom_return > 0.0 {
            return Err(Error::InvalidInput(
                "MaxTasks1 has no return messages; use TwoFactor for MaxTasks2".into(),
            ));
        }
        let slots = slot_matching(&platform.cycle_times, platform.tcom, self.solver, |i, j| {
            maxtasks1_weight(platform, deadline, i, j)
        })?;
        let counts = (0..platform.workers())
            .map(|i| maxtasks1_weight(platform, deadline, i, slots[i]) as u64)
            .collect();
        Ok(TaskSchedule::new(platform, counts, slots, None))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn solvers_agree_on_a_small_matrix() {
        let w = [[7i64, 3, 1], [8, 5, 2], [9, 6, 4]];
        for s in [
            AssignmentSolver::Staircase,
            AssignmentSolver::Hungarian,
            AssignmentSolver::KuhnMunkres,
            AssignmentSolver::Auction,
        ] {
            let (total, cols) = Assignment::new(3, |i, j| w[i][j]).solve(s).unwrap();
            assert_eq!(total, 16, "{s:?}");
            assert_eq!(cols, vec![0, 1, 2]);
        }
    }

    #[test]
    fn monge_potentials_are_dual_feasible_for_the_continuous_problem() {
        let t = [3.0, 1.0, 2.0, 5.0];
        let c = 0.7;
        let pr = monge_slot_potentials(&t, c);
        assert_eq!(pr[0], 0);
        assert!(pr.windows(2).all(|w| w[1] <= w[0]));
    }
}
