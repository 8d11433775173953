//! Divisible work with input, compute and output phases.
//!
//! Source: \[AJ88\] (Agrawal, Jagadish). A master splits the
//! separable phase of a job into `n` pieces of sizes `s_1 … s_n` (fractions of
//! the whole, `Σ s_i = 1`). Piece `i` is *input* to its worker (`a(s_i)`),
//! *computed* there (`y(s_i)`) and its result *output* back (`b(s_i)`); the
//! master communicates with one worker at a time (§2.1). By the Input
//! Precedence Lemma all inputs come first, and by the Order Maintenance
//! Theorem the outputs are taken in the input order (§2.2–2.3). Then the
//! separable phase ends at (eqs. 5a, 5b)
//!
//! ```text
//! T = max( max_k Σ_{i≤k} a(s_i) + y(s_k) + Σ_{i≥k} b(s_i),   Σ_i a(s_i) + b(s_i) )
//! ```
//!
//! and with affine costs the optimal sizes solve the linear programme of
//! eq. (7) ([`solve_ordered`]). The number of workers is chosen by trying
//! successive `n` (§2.3, last paragraph).
//!
//! Beyond \[AJ88\]: per-worker costs `a_i, y_i, b_i` ([`hetero`]), and whole
//! units of work (rows, records) with the rounded schedule re-evaluated
//! exactly ([`integer`]).

use good_lp::{microlp, variable, variables, Expression, Solution, SolverModel};
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

pub mod hetero;
pub mod integer;

pub use hetero::HeteroDivisible;

pub use integer::{round_pieces, IntegerPlan};

/// An affine cost `f(s) = intercept + slope·s` of a piece of size `s`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct AffineCost {
    /// Constant part (`a_0`, `y_0`, `b_0` in eq. 7), seconds.
    pub intercept: f64,
    /// Seconds per unit of size (the whole work has size 1).
    pub slope: f64,
}

impl AffineCost {
    /// A cost `intercept + slope·s` (not validated; see [`AffineCost::check`]).
    pub const fn new(intercept: f64, slope: f64) -> Self {
        Self { intercept, slope }
    }

    /// Cost of a piece of size `s`.
    pub fn at(&self, s: f64) -> f64 {
        self.intercept + self.slope * s
    }

    /// Both coefficients finite and `≥ 0` (non-decreasing costs, §2.1).
    pub fn check(&self, what: &str) -> Result<()> {
        if self.intercept.is_finite()
            && self.slope.is_finite()
            && self.intercept >= 0.0
            && self.slope >= 0.0
        {
            Ok(())
        } else {
            Err(Error::InvalidInput(format!(
                "{what} cost must have finite, non-negative coefficients, got {} + {}·s",
                self.intercept, self.slope
            )))
        }
    }
}

/// Input, compute and output costs of one worker.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct WorkerCosts {
    /// Input time `a(s)`: master → worker, including start-up overheads.
    pub input: AffineCost,
    /// Compute time `y(s)`.
    pub compute: AffineCost,
    /// Output time `b(s)`: worker → master.
    pub output: AffineCost,
}

impl WorkerCosts {
    /// Validates the three costs.
    pub fn check(&self) -> Result<()> {
        self.input.check("input")?;
        self.compute.check("compute")?;
        self.output.check("output")
    }
}

/// Identical workers (the setting of \[AJ88\]): one set of costs for all.
pub type DivisibleCosts = WorkerCosts;

/// A divisible-work plan: pieces in feeding order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DivisiblePlan {
    /// Number of pieces (= workers used).
    pub workers: usize,
    /// Worker of each piece, in feeding order (indices into the caller's
    /// worker list; `0..n` for identical workers).
    pub order: Vec<usize>,
    /// Piece sizes (fractions of the work, summing to 1), feeding order.
    pub fractions: Vec<f64>,
    /// Completion time of the separable phase, `T` of eq. (7).
    pub makespan: f64,
}

/// Makespan of pieces `sizes` fed to `workers` in this order, inputs first
/// and outputs in the same order (eqs. 5a–5b). A piece of size 0 is not
/// sent at all (its worker is idle). `O(n)`.
pub fn evaluate(workers: &[WorkerCosts], sizes: &[f64]) -> f64 {
    let used: Vec<(WorkerCosts, f64)> = workers
        .iter()
        .zip(sizes)
        .filter(|(_, &s)| s > 0.0)
        .map(|(w, &s)| (*w, s))
        .collect();
    let a: Vec<f64> = used.iter().map(|(w, s)| w.input.at(*s)).collect();
    let b: Vec<f64> = used.iter().map(|(w, s)| w.output.at(*s)).collect();
    let total_b: f64 = b.iter().sum();
    let (mut in_sum, mut out_before) = (0.0, 0.0);
    let mut t = a.iter().sum::<f64>() + total_b;
    for (k, (w, s)) in used.iter().enumerate() {
        in_sum += a[k];
        t = t.max(in_sum + w.compute.at(*s) + (total_b - out_before));
        out_before += b[k];
    }
    t
}

/// Optimal piece sizes for workers fed in the given order: the linear
/// programme of \[AJ88\] eq. (7), generalised to per-worker costs.
///
/// Variables `T, s_1 … s_n ≥ 0`; minimise `T` subject to, for every `k`,
/// `T ≥ Σ_{i≤k} a_i(s_i) + y_k(s_k) + Σ_{i≥k} b_i(s_i)` (eq. 5a; rows 1…n
/// of the matrix of eq. 7, whose right-hand side `k·a_0 + y_0 + (n−k+1)·b_0`
/// collects the intercepts), `T ≥ Σ a_i(s_i) + b_i(s_i)` (eq. 5b, row n+1)
/// and `Σ s_i = 1` (row n+2, written `≥ 1` in the paper; equality here, the
/// same optimum for non-decreasing costs). The extracted text of eq. (5a)
/// reads `y(s_i)`; the matrix of eq. (6) shows it is `y(s_k)`. Every worker
/// pays its intercepts even for a piece of size 0, as in eq. (7).
/// `n + 1` variables, `n + 2` constraints; simplex (microlp).
///
/// **Scaling.** The programme is homogeneous in the costs, so they are
/// divided by the largest coefficient before solving and `T` is multiplied
/// back: costs of 10^10 (once "LP infeasible") or 10^300 (once a panic
/// inside the solver) solve like costs of 1. A makespan that overflows
/// `f64` is an [`Error::InvalidInput`].
///
/// **Bounds.** The rows are dense (`O(n²)` non-zeros): at most
/// [`MAX_LP_WORKERS`] workers, [`Error::InvalidInput`] above (10 000
/// workers took 27 s and 7 GB). The plan is checked before it is returned
/// (fractions finite, `≥ 0`, summing to 1; the makespan finite).
pub fn solve_ordered(workers: &[WorkerCosts]) -> Result<(Vec<f64>, f64)> {
    let n = workers.len();
    if n == 0 {
        return Err(Error::Empty("no workers".into()));
    }
    check_workers(n, MAX_LP_WORKERS)?;
    for w in workers {
        w.check()?;
    }
    let scale = workers
        .iter()
        .flat_map(|w| [w.input, w.compute, w.output])
        .flat_map(|c| [c.intercept, c.slope])
        .fold(0.0, f64::max);
    let scale = if scale > 0.0 { scale } else { 1.0 };
    let scaled = |c: AffineCost| AffineCost::new(c.intercept / scale, c.slope / scale);
    let workers: Vec<WorkerCosts> = workers
        .iter()
        .map(|w| WorkerCosts {
            input: scaled(w.input),
            compute: scaled(w.compute),
            output: scaled(w.output),
        })
        .collect();
    let mut vars = variables!();
    let t = vars.add(variable().min(0.0));
    let s: Vec<_> = (0..n).map(|_| vars.add(variable().min(0.0))).collect();
    let mut model = vars.minimise(t).using(microlp);
    let b_total: Expression = workers
        .iter()
        .zip(&s)
        .map(|(w, &v)| w.output.intercept + w.output.slope * v)
        .sum();
    let mut a_prefix = Expression::from(0.0);
    let mut b_before = Expression::from(0.0);
    for k in 0..n {
        let w = &workers[k];
        a_prefix += w.input.intercept + w.input.slope * s[k];
        let y = w.compute.intercept + w.compute.slope * s[k];
        let row = a_prefix.clone() + y + b_total.clone() - b_before.clone();
        model = model.with(row.leq(t));
        b_before += w.output.intercept + w.output.slope * s[k];
    }
    model = model.with((a_prefix + b_total).leq(t));
    let sum: Expression = s.iter().map(|&v| Expression::from(v)).sum();
    model = model.with(sum.eq(1.0));
    let sol = model
        .solve()
        .map_err(|e| Error::Solver(format!("divisible LP: {e}")))?;
    let mut fractions: Vec<f64> = s.iter().map(|&v| sol.value(v).max(0.0)).collect();
    let total: f64 = fractions.iter().sum();
    if !total.is_finite() || total <= 0.0 {
        return Err(Error::Solver("divisible LP returned no work".into()));
    }
    fractions.iter_mut().for_each(|f| *f /= total);
    let makespan = sol.value(t) * scale;
    if !makespan.is_finite() {
        return Err(Error::InvalidInput(format!(
            "the makespan overflows f64 (costs up to {scale:e})"
        )));
    }
    check_fractions(&fractions)?;
    Ok((fractions, makespan))
}

/// Most workers (pieces) of one LP of [`solve_ordered`]: 500, about a
/// second in the worst case measured (zero intercepts, compute-bound) on a
/// busy machine; the LP's time grows about as `n³`.
pub const MAX_LP_WORKERS: usize = 500;

/// Most pieces of [`WorkerCosts::equal_partition`] (no LP; 2^24, 128 MiB
/// of fractions).
pub const MAX_EQUAL_WORKERS: usize = 1 << 24;

/// Rejects 0 workers ([`Error::Empty`]) and more than `limit`
/// ([`Error::InvalidInput`]) before anything is allocated for them.
pub(crate) fn check_workers(n: usize, limit: usize) -> Result<()> {
    if n == 0 {
        return Err(Error::Empty("zero workers".into()));
    }
    if n > limit {
        return Err(Error::InvalidInput(format!(
            "{n} workers: at most {limit} here (the LP of eq. (7) has dense rows)"
        )));
    }
    Ok(())
}

/// Most workers [`WorkerCount::Auto`] tries (one LP per count, `1..=max`):
/// 128, under a second; 400 took 43 s.
pub const MAX_AUTO_WORKERS: usize = 128;

/// Checks piece sizes: finite, `≥ 0`, summing to 1 (to `1e-9`); a
/// violation is an internal error ([`Error::InvalidPlan`]).
pub fn check_fractions(fractions: &[f64]) -> Result<()> {
    let sum: f64 = fractions.iter().sum();
    if fractions.iter().any(|f| !(f.is_finite() && *f >= 0.0)) || (sum - 1.0).abs() > 1e-9 {
        return Err(Error::InvalidPlan(format!(
            "piece sizes do not sum to 1 (sum {sum})"
        )));
    }
    Ok(())
}

/// A divisible-work partitioner: chooses the workers used, their feeding
/// order and their piece sizes.
pub trait DivisiblePartitioner {
    /// Plans the pieces for `workers` (indices of `DivisiblePlan::order`
    /// refer to this slice).
    fn partition(&self, workers: &[WorkerCosts]) -> Result<DivisiblePlan>;
}

/// How many workers the [`AgrawalJagadish`] partitioner uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum WorkerCount {
    /// Exactly this many pieces.
    Fixed(usize),
    /// The best `n` in `1..=max` (\[AJ88\] §2.3: "try successively large values").
    Auto {
        /// Largest `n` tried.
        max: usize,
    },
}

/// The optimal partition of \[AJ88\] §2.3 for identical workers: the LP of
/// eq. (7) for a given `n`, or the best `n` found by trying successive
/// values. The search stops early once the lower bound of §2.2,
/// `T(n) ≥ n·(a_0 + b_0) + a_1 + b_1` (the master's own busy time), reaches
/// the best makespan found, since it only grows with `n`. `O(n_max)` LPs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct AgrawalJagadish {
    /// Number of pieces.
    pub workers: WorkerCount,
}

impl Default for AgrawalJagadish {
    fn default() -> Self {
        Self {
            workers: WorkerCount::Auto { max: 64 },
        }
    }
}

impl AgrawalJagadish {
    /// Plans the partition for identical workers with `costs`.
    pub fn plan(&self, costs: &DivisibleCosts) -> Result<DivisiblePlan> {
        costs.check()?;
        match self.workers {
            WorkerCount::Fixed(n) => costs.optimal_partition(n),
            WorkerCount::Auto { max } => costs.optimal_workers(max),
        }
    }
}

impl DivisiblePartitioner for AgrawalJagadish {
    /// \[AJ88\]'s setting needs identical workers: errors otherwise. Uses at
    /// most `workers.len()` of them.
    fn partition(&self, workers: &[WorkerCosts]) -> Result<DivisiblePlan> {
        let first = *workers
            .first()
            .ok_or_else(|| Error::Empty("no workers".into()))?;
        if workers.iter().any(|w| *w != first) {
            return Err(Error::InvalidInput(
                "AgrawalJagadish assumes identical workers; use HeteroDivisible".into(),
            ));
        }
        let workers = match self.workers {
            WorkerCount::Fixed(n) if n > workers.len() => {
                return Err(Error::TooManyParts {
                    parts: n,
                    units: workers.len(),
                })
            }
            WorkerCount::Auto { max } => WorkerCount::Auto {
                max: max.min(workers.len()),
            },
            fixed => fixed,
        };
        AgrawalJagadish { workers }.plan(&first)
    }
}

impl WorkerCosts {
    /// Builds and validates a set of costs.
    pub fn new(input: AffineCost, compute: AffineCost, output: AffineCost) -> Result<Self> {
        let c = Self {
            input,
            compute,
            output,
        };
        c.check()?;
        Ok(c)
    }

    /// The LP of eq. (7) for `n` identical workers with these costs.
    pub fn optimal_partition(&self, n: usize) -> Result<DivisiblePlan> {
        check_workers(n, MAX_LP_WORKERS)?;
        let (fractions, makespan) = solve_ordered(&vec![*self; n])?;
        Ok(DivisiblePlan {
            workers: n,
            order: (0..n).collect(),
            fractions,
            makespan,
        })
    }

    /// The best number of identical workers in `1..=max` (see
    /// [`AgrawalJagadish`]); ties go to the smaller `n`. At most
    /// [`MAX_AUTO_WORKERS`] ([`Error::InvalidInput`] above).
    pub fn optimal_workers(&self, max: usize) -> Result<DivisiblePlan> {
        if max == 0 {
            return Err(Error::Empty("zero workers".into()));
        }
        if max > MAX_AUTO_WORKERS {
            return Err(Error::InvalidInput(format!(
                "up to {max} workers: the search over worker counts tries at most {MAX_AUTO_WORKERS}"
            )));
        }
        let mut best = self.optimal_partition(1)?;
        for n in 2..=max {
            let bound = n as f64 * (self.input.intercept + self.output.intercept)
                + self.input.slope
                + self.output.slope;
            if bound >= best.makespan {
                break;
            }
            let plan = self.optimal_partition(n)?;
            if plan.makespan < best.makespan * (1.0 - 1e-12) {
                best = plan;
            }
        }
        Ok(best)
    }

    /// Equal pieces, `1/n` each (the "naive" and "semi-naive" splits of \[AJ88\]
    /// §3.4–3.5), with their makespan under one-at-a-time communication.
    pub fn equal_partition(&self, n: usize) -> Result<DivisiblePlan> {
        check_workers(n, MAX_EQUAL_WORKERS)?;
        let fractions = vec![1.0 / n as f64; n];
        let makespan = evaluate(&vec![*self; n], &fractions);
        Ok(DivisiblePlan {
            workers: n,
            order: (0..n).collect(),
            fractions,
            makespan,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn single_worker_is_the_sum_of_its_phases() {
        let c = WorkerCosts::new(
            AffineCost::new(1.0, 2.0),
            AffineCost::new(0.5, 10.0),
            AffineCost::new(0.2, 1.0),
        )
        .unwrap();
        let p = c.optimal_partition(1).unwrap();
        assert!((p.makespan - 14.7).abs() < 1e-9);
        assert!((evaluate(&[c], &[1.0]) - 14.7).abs() < 1e-12);
    }

    /// Input, compute and output all `v + v·s`.
    fn uniform(v: f64) -> WorkerCosts {
        let unit = AffineCost::new(v, v);
        WorkerCosts::new(unit, unit, unit).unwrap()
    }

    #[test]
    fn costs_are_scaled() {
        // Issue 12: all costs 1e10 made the LP "infeasible" (1e9 worked),
        // 1e308 panicked inside the solver.
        let plan = uniform;
        let one = plan(1.0).optimal_partition(4).unwrap();
        for v in [1e9, 1e10, 1e200] {
            let p = plan(v).optimal_partition(4).unwrap();
            assert!((p.makespan / v - one.makespan).abs() < 1e-9 * one.makespan);
            for (a, b) in p.fractions.iter().zip(&one.fractions) {
                assert!((a - b).abs() < 1e-9, "{v}: {:?}", p.fractions);
            }
        }
        let e = plan(1e308).optimal_partition(4).unwrap_err();
        assert!(matches!(e, Error::InvalidInput(_)), "{e}");
    }

    #[test]
    fn worker_counts_are_bounded() {
        // Issue 12: 10 000 workers took 27 s and 7 GB.
        let c = uniform(1.0);
        let e = c.optimal_partition(10_000).unwrap_err();
        assert!(matches!(e, Error::InvalidInput(_)), "{e}");
        // Refused before a vector of that many workers is built (it was a
        // capacity-overflow panic).
        assert!(c.optimal_partition(usize::MAX).is_err());
        assert!(c.equal_partition(usize::MAX).is_err());
        assert!(c.optimal_workers(MAX_AUTO_WORKERS + 1).is_err());
        assert!(c.optimal_partition(MAX_LP_WORKERS).is_ok());
    }

    #[test]
    fn rejects_negative_costs() {
        assert!(WorkerCosts::new(
            AffineCost::new(-1.0, 2.0),
            AffineCost::new(0.0, 1.0),
            AffineCost::new(0.0, 1.0)
        )
        .is_err());
    }
}
