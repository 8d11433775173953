//! Functional 1D partitioning: `n` work units over ranks of speed functions,
//! equal times (\[LR07\], \[RCL11\]).

use std::collections::BinaryHeap;

use serde::{Deserialize, Serialize};

use super::SpeedFunction;
use crate::dist1d::{Next, MAX_COUNT_CHUNKS};
use crate::error::{Error, Result};

/// An integer functional partition.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FunctionalPlan {
    /// Work units of every rank, in input order; they sum to `n`.
    pub counts: Vec<usize>,
    /// Modelled time of every rank, `t_i(x_i)` ([`SpeedFunction::time`]).
    pub times: Vec<f64>,
    /// `max_i t_i(x_i)`.
    pub makespan: f64,
    /// The planned time `max_i t̄_i(x_i)` ([`SpeedFunction::envelope_time`]),
    /// which the plan minimises; `≥ makespan`, equal when every function's
    /// time is monotone.
    pub planned: f64,
}

/// Checks the functions and caps; the effective caps `min(cap_i, n)`.
fn effective_caps(n: usize, fns: &[SpeedFunction], caps: Option<&[usize]>) -> Result<Vec<usize>> {
    if fns.is_empty() {
        return Err(Error::Empty("no speed functions".into()));
    }
    if n > MAX_COUNT_CHUNKS {
        return Err(Error::InvalidInput(format!(
            "{n} work units: at most 2^53 = {MAX_COUNT_CHUNKS}"
        )));
    }
    let caps: Vec<usize> = match caps {
        None => vec![n; fns.len()],
        Some(c) if c.len() == fns.len() => c.iter().map(|&c| c.min(n)).collect(),
        Some(c) => {
            return Err(Error::ShapeMismatch(format!(
                "{} memory caps for {} speed functions",
                c.len(),
                fns.len()
            )))
        }
    };
    let room: u128 = caps.iter().map(|&c| c as u128).sum();
    if room < n as u128 {
        return Err(Error::InvalidInput(format!(
            "the memory caps hold {room} work units in all, fewer than the {n} to place"
        )));
    }
    Ok(caps)
}

/// Largest `x` in `[0, cap]` with `ok(x)`, for a predicate true on `0..=x*`
/// and false above, searched from `guess`: galloping then bisection, so an
/// accurate guess costs `O(1)` evaluations.
fn last_ok(guess: usize, cap: usize, ok: impl Fn(usize) -> bool) -> usize {
    let bisect = |mut lo: usize, mut hi: usize| {
        // ok(lo), !ok(hi)
        while hi - lo > 1 {
            let mid = lo + (hi - lo) / 2;
            if ok(mid) {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        lo
    };
    let g = guess.min(cap);
    let mut step = 1usize;
    if ok(g) {
        let mut lo = g;
        while lo < cap {
            let hi = lo.saturating_add(step).min(cap);
            if !ok(hi) {
                return bisect(lo, hi);
            }
            lo = hi;
            step = step.saturating_mul(2);
        }
        cap
    } else {
        let mut hi = g;
        loop {
            let lo = hi.saturating_sub(step);
            if lo == 0 || ok(lo) {
                return bisect(lo, hi);
            }
            hi = lo;
            step = step.saturating_mul(2);
        }
    }
}

/// Largest integer `x ≤ cap` with `t̄(x) ≤ t`.
fn units_within(f: &SpeedFunction, t: f64, cap: usize) -> usize {
    let est = f.max_work(t);
    let guess = if est.is_finite() && est >= 0.0 {
        // Saturating: estimates beyond usize are clamped to the cap.
        (est.floor() as usize).min(cap)
    } else {
        cap
    };
    last_ok(guess, cap, |x| x == 0 || f.envelope_time(x as f64) <= t)
}

/// Whether the ranks hold at least `n` units within time `t`.
fn holds(fns: &[SpeedFunction], caps: &[usize], t: f64, n: usize) -> bool {
    let mut total = 0usize;
    for (f, &cap) in fns.iter().zip(caps) {
        total += units_within(f, t, cap);
        if total >= n {
            return true;
        }
    }
    false
}

/// The integer functional partition of `n` work units (at most 2^53) over
/// ranks of speed functions `fns`, each rank `i` holding at most `caps[i]`
/// units (memory caps, `None`: no caps): `x_i` with `Σ x_i = n` minimising
/// the planned time `max_i t̄_i(x_i)` — exactly, over all integer solutions.
///
/// \[LR07\] intersects the speed graphs with lines `s = x / T` through the
/// origin and bisects the angle between two such lines until the
/// intersections sum to `n` (`O(p log n)`); \[RCL11\] writes the optimum as
/// the equations `x_i / s_i(x_i) = T`, `Σ x_i = n` and solves them with
/// multidimensional solvers, relaxing \[LR07\]'s conditions on the shape of
/// the functions. nuce solves the same equations with a search on `T` alone:
///
/// 1. *Continuous.* `T` is bisected on the bit patterns of the `f64` values
///    (at most 64 steps of `O(p log m)`, `m` points per function) until
///    `Σ min(cap_i, X_i(T))` reaches `n`, `X_i(T)` the line's intersection
///    ([`SpeedFunction::max_work`]) — \[LR07\]'s bisection, on `T` instead of
///    the angle.
/// 2. *Integer.* Every rank gets `N_i(T) = max{x ≤ cap_i : t̄_i(x) ≤ T}` at
///    the lower end of that search (from `X_i`, corrected by exact
///    evaluations of `t̄_i`): all units of planned time `≤ T`, fewer than
///    `n`. The units left (at most about `p`) go one by one, from a heap, to
///    the rank whose next unit has the least planned time, lowest index on
///    ties — a rank's units of equal time (a plateau of the envelope) at
///    once. Should rounding leave more than `4p + 64` units (or none) to
///    place, the integer counts themselves are bisected on `T` to two
///    adjacent values, and the units between them — each costing exactly
///    the upper value — go to the lowest indices.
///
/// Either way the ranks hold the first `n` of all units `(i, x)`,
/// `1 ≤ x ≤ cap_i`, ordered by `(t̄_i(x), i)`: the optimum, since each
/// `t̄_i` is nondecreasing (its `n`-th value is the least possible
/// maximum), with the tie rule of [`crate::dist1d::optimal_counts`], so that
/// constant functions ([`SpeedFunction::constant`]) give exactly its counts.
/// `O(p (64 log m + log p))`.
///
/// **Non-monotone times.** The planned time is the envelope `t̄_i` (see
/// [`SpeedFunction`]): where a measured time decreases with more work, the
/// plan does not count on the decrease. Finding the optimum of a
/// non-monotone `t_i` is a knapsack-like problem; the envelope keeps it
/// `O(p log n)` and the plan's true makespan is at most
/// [`FunctionalPlan::planned`].
///
/// Errors: no functions ([`Error::Empty`]), caps of another length
/// ([`Error::ShapeMismatch`]), caps holding fewer than `n` units or more than
/// 2^53 units or times overflowing `f64` ([`Error::InvalidInput`]).
///
/// ```
/// use nuce_plan::fpm::{partition, SpeedFunction};
/// // Rank 1 is twice as fast as rank 0 on small work, as fast beyond 100 units.
/// let slow = SpeedFunction::constant(1.0, 0.0)?;
/// let fast = SpeedFunction::new(&[(50.0, 25.0), (100.0, 100.0)], 0.0)?;
/// let plan = partition(150, &[slow, fast], None)?;
/// assert_eq!(plan.counts, vec![65, 85]);
/// assert_eq!(plan.counts.iter().sum::<usize>(), 150);
/// # Ok::<(), nuce_plan::Error>(())
/// ```
pub fn partition(
    n: usize,
    fns: &[SpeedFunction],
    caps: Option<&[usize]>,
) -> Result<FunctionalPlan> {
    let caps = effective_caps(n, fns, caps)?;
    let mut counts = vec![0usize; fns.len()];
    if n > 0 {
        let hi = upper_time(n, fns, &caps)?;
        // The continuous solution's lower end holds fewer than n real units,
        // so (up to rounding, checked) fewer than n integer ones.
        let (cont, _) = bisect_bits(0, hi, |t| {
            real_sizes(fns, &caps, t).iter().sum::<f64>() >= n as f64
        });
        let t = f64::from_bits(cont);
        for ((f, &cap), c) in fns.iter().zip(&caps).zip(counts.iter_mut()) {
            *c = units_within(f, t, cap);
        }
        let placed: usize = counts.iter().sum();
        if placed < n && n - placed <= 4 * fns.len() + 64 {
            greedy(fns, &caps, &mut counts, n - placed);
        } else {
            // Rounding put the start above n, or far below it: bisect the
            // integer counts themselves.
            let (lo, hi) = if placed < n { (cont, hi) } else { (0, cont) };
            fill(fns, &caps, &mut counts, (lo, hi), n)?;
        }
    }
    let planned = fns
        .iter()
        .zip(&counts)
        .map(|(f, &c)| f.envelope_time(c as f64))
        .fold(0.0, f64::max);
    let times: Vec<f64> = fns
        .iter()
        .zip(&counts)
        .map(|(f, &c)| f.time(c as f64))
        .collect();
    Ok(FunctionalPlan {
        makespan: times.iter().copied().fold(0.0, f64::max),
        times,
        counts,
        planned,
    })
}

/// [`partition`]'s counts by the bisection of the integer counts alone (no
/// continuous start, no heap): the reference its faster path is tested
/// against.
#[cfg(test)]
pub(crate) fn counts_by_bisection(
    n: usize,
    fns: &[SpeedFunction],
    caps: Option<&[usize]>,
) -> Result<Vec<usize>> {
    let caps = effective_caps(n, fns, caps)?;
    let mut counts = vec![0; fns.len()];
    if n > 0 {
        let hi = upper_time(n, fns, &caps)?;
        fill(fns, &caps, &mut counts, (0, hi), n)?;
    }
    Ok(counts)
}

/// The bits of the largest planned time of the caps (which hold `n` units),
/// an upper end for `T`; an error when it overflows.
fn upper_time(n: usize, fns: &[SpeedFunction], caps: &[usize]) -> Result<u64> {
    let hi = fns
        .iter()
        .zip(caps)
        .map(|(f, &c)| f.envelope_time(c as f64))
        .fold(0.0, f64::max);
    if hi.is_finite() {
        Ok(hi.to_bits())
    } else {
        Err(Error::InvalidInput(format!(
            "times of {n} work units overflow f64"
        )))
    }
}

/// Bisection of `T` on the bits of nonnegative `f64` values (which order as
/// the values), for a predicate false at `lo` (or `lo = 0`) and true at `hi`,
/// monotone in between: the adjacent pair `(lo, hi)` where it turns true. At
/// most 64 steps.
fn bisect_bits(mut lo: u64, mut hi: u64, ok: impl Fn(f64) -> bool) -> (u64, u64) {
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if ok(f64::from_bits(mid)) {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    (lo, hi)
}

/// Real sizes `min(cap_i, X_i(t))`.
fn real_sizes(fns: &[SpeedFunction], caps: &[usize], t: f64) -> Vec<f64> {
    fns.iter()
        .zip(caps)
        .map(|(f, &c)| f.max_work(t).min(c as f64))
        .collect()
}

/// Bisects the integer counts between the `T` of bits `range` (holding
/// fewer than `n` units at the low end, at least `n` at the high end) down to
/// adjacent `T_lo < T_hi`; the ranks hold `N_i(T_lo)`, then the units left
/// (each costing exactly `T_hi`) go to the ranks that can take one at
/// `T_hi`, lowest index first.
fn fill(
    fns: &[SpeedFunction],
    caps: &[usize],
    counts: &mut [usize],
    range: (u64, u64),
    n: usize,
) -> Result<()> {
    let (lo, hi) = bisect_bits(range.0, range.1, |t| holds(fns, caps, t, n));
    let (t_lo, t_hi) = (f64::from_bits(lo), f64::from_bits(hi));
    let mut left = n;
    for ((f, &cap), c) in fns.iter().zip(caps).zip(counts.iter_mut()) {
        *c = units_within(f, t_lo, cap);
        left -= *c;
    }
    for ((f, &cap), c) in fns.iter().zip(caps).zip(counts.iter_mut()) {
        let more = units_within(f, t_hi, cap).saturating_sub(*c).min(left);
        *c += more;
        left -= more;
    }
    if left == 0 {
        Ok(())
    } else {
        Err(Error::InvalidPlan(format!(
            "functional partition left {left} of {n} units unplaced"
        )))
    }
}

/// From counts holding every unit of planned time `≤ T` for some `T` (a
/// prefix of all units ordered by `(t̄_i(x), i)`), adds `left` units in that
/// order: the next unit of least time, lowest index on ties — all of a
/// rank's units of that same time at once (a plateau of the envelope).
/// `O((p + left) log p)`.
fn greedy(fns: &[SpeedFunction], caps: &[usize], counts: &mut [usize], mut left: usize) {
    // `Next` orders by `(t̄_i(x_i + 1), i)`, smallest first.
    let next = |i: usize, c: usize| Next(fns[i].envelope_time((c + 1) as f64), i);
    let mut heap: BinaryHeap<Next> = (0..fns.len())
        .filter(|&i| counts[i] < caps[i])
        .map(|i| next(i, counts[i]))
        .collect();
    while left > 0 {
        let Some(Next(t, i)) = heap.pop() else { break };
        let more = units_within(&fns[i], t, caps[i])
            .saturating_sub(counts[i])
            .clamp(1, left);
        counts[i] += more;
        left -= more;
        if counts[i] < caps[i] {
            heap.push(next(i, counts[i]));
        }
    }
}

/// Effective constant speeds for the decomposers that take speeds (the
/// arrays of [`crate::array2d`], the graph partitioners of [`crate::graph`],
/// the schedules of [`crate::tasks`]): `x_i / T`, where `x_i` (real) and `T`
/// solve the *continuous* functional problem for `total_work` units —
/// `Σ x_i = total_work`, `x_i = min(cap_i, X_i(T))`, `X_i(T)` the largest
/// work of planned time `≤ T` ([`SpeedFunction::max_work`]).
///
/// A decomposer given these speeds makes parts proportional to them, that is
/// of `x_i` units: the functional solution, with the decomposer's own shape
/// and rounding. The runtime uses it so for 2D/3D arrays (`total_work` =
/// cells), graphs (total vertex weight) and master–worker targets: measure a
/// [`SpeedFunction`] per rank, compute the shares for the whole work, hand
/// them to the usual decomposer as its speeds. The shares hold only for that
/// total: a different amount of work needs new shares, since `s_i` depends on
/// the size. For a rank at its cap the share is `cap_i / T`; caps are met up
/// to the decomposer's rounding (use [`partition`] for hard caps in 1D).
///
/// `T` is bisected on `f64` bit patterns (at most 64 steps of `O(p log m)`);
/// between the last two values `T_lo < T_hi` the sizes are interpolated so
/// that they sum to `total_work` even where an envelope plateau makes
/// `X_i` jump. Every share is finite and `> 0`.
///
/// Constant functions that no cap limits give their speeds themselves, bit
/// for bit (the exact solution, `x_i / T = s_i`, without the rounding of the
/// bisection): the decomposers then make exactly their constant-speed plans.
///
/// Errors: those of [`partition`], no work ([`Error::Empty`]) and a cap of
/// 0 ([`Error::InvalidInput`]: a rank that can hold nothing has no share —
/// leave it out).
pub fn functional_shares(
    total_work: usize,
    fns: &[SpeedFunction],
    caps: Option<&[usize]>,
) -> Result<Vec<f64>> {
    if total_work == 0 {
        return Err(Error::Empty("no work to share".into()));
    }
    let caps = effective_caps(total_work, fns, caps)?;
    if let Some(i) = caps.iter().position(|&c| c == 0) {
        return Err(Error::InvalidInput(format!(
            "rank {i} has a memory cap of 0 work units: it can have no share"
        )));
    }
    let n = total_work as f64;
    let sum = |x: &[f64]| x.iter().sum::<f64>();
    let hi = upper_time(total_work, fns, &caps)?;
    let (lo, hi) = bisect_bits(0, hi, |t| sum(&real_sizes(fns, &caps, t)) >= n);
    let t_hi = f64::from_bits(hi);
    let (x_lo, x_hi) = (
        real_sizes(fns, &caps, f64::from_bits(lo)),
        real_sizes(fns, &caps, t_hi),
    );
    let (s_lo, s_hi) = (sum(&x_lo), sum(&x_hi));
    let theta = if s_hi > s_lo {
        ((n - s_lo) / (s_hi - s_lo)).clamp(0.0, 1.0)
    } else {
        1.0
    };
    let free = x_hi.iter().zip(&caps).all(|(&x, &c)| x < c as f64);
    if free && fns.iter().all(SpeedFunction::is_constant) {
        return Ok(fns.iter().map(|f| f.speed(0.0)).collect());
    }
    let shares: Vec<f64> = x_lo
        .iter()
        .zip(&x_hi)
        .map(|(a, b)| (a + theta * (b - a)) / t_hi)
        .collect();
    match shares.iter().position(|s| !(s.is_finite() && *s > 0.0)) {
        Some(i) => Err(Error::InvalidInput(format!(
            "share {} of rank {i} is not finite and positive (total work {total_work})",
            shares[i]
        ))),
        None => Ok(shares),
    }
}
