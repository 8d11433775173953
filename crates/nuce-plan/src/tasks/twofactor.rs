//! MaxTasks2(T): initial and final messages.
//!
//! Source: \[BBLRR01\] §4.2 (Definition 5), §4.4.1 (2-factor
//! approximation, Figure 24, Theorem 1) and §4.4.2 (exhaustive search is
//! `O((p!)²)`; the problem is at least as hard as Permutation Sums).

use serde::{Deserialize, Serialize};

use super::matching::{slot_matching, AssignmentSolver};
use super::{
    check_deadline, signed_tasks_within, tasks_within, MaxTasksSolver, TaskPlatform, TaskSchedule,
};
use crate::error::{Error, Result};

/// The 2-factor approximation of \[BBLRR01\] §4.4.1 for MaxTasks2(T).
///
/// The graph of Figure 24 has the first-message slots `F_j` on the left, the
/// workers `P_i` in the middle and the final-message slots `S_k` on the
/// right. The exact count `⌊(T − σ1(i)·t¹ − σ2(i)·t²)/t_i⌋` depends on both
/// permutations, so the paper splits the deadline in halves and weights
/// `F_j — P_i` by `⌊(T/2 − j·t¹)/t_i⌋` and `P_i — S_k` by
/// `⌊(T/2 − k·t²)/t_i⌋`. A maximum 2-factor (every `F`, `S` of degree 1,
/// every `P` of degree 2) is then two independent maximum matchings, each
/// `O(p³)`. The schedule keeps both permutations and recomputes each count
/// exactly, which can only add tasks (`⌊a⌋ + ⌊b⌋ ≤ ⌊a + b⌋`).
///
/// Theorem 1: the result is within `p` tasks of the optimum. (Its proof is
/// not in the extracted text; it follows from `⌊a + b⌋ ≤ ⌊a⌋ + ⌊b⌋ + 1`
/// applied to the optimal permutations, when every worker of the optimum
/// has a non-negative budget.)
///
/// With `refine` (not in the paper), the schedule is then improved by
/// alternating exact matchings: with `σ1` fixed the exact weights of `σ2`
/// are known, `⌊(T − σ1(i)·t¹ − k·t²)/t_i⌋`, and an optimal `σ2` is one
/// matching away; then `σ1` with `σ2` fixed, until no gain. Never worse
/// than the plain approximation; each round `O(p³)` worst case.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct TwoFactor {
    /// The assignment algorithm for the two matchings.
    pub solver: AssignmentSolver,
    /// Improve by alternating exact matchings (see above).
    pub refine: bool,
    /// At most this many refinement rounds.
    pub max_rounds: usize,
}

impl Default for TwoFactor {
    /// The paper's algorithm: no refinement.
    fn default() -> Self {
        Self {
            solver: AssignmentSolver::default(),
            refine: false,
            max_rounds: 20,
        }
    }
}

/// Exact counts of the workers for both permutations (Definition 5).
fn exact_counts(platform: &TaskPlatform, deadline: f64, s1: &[usize], s2: &[usize]) -> Vec<u64> {
    (0..platform.workers())
        .map(|i| {
            tasks_within(
                platform.budget(deadline, s1[i], s2[i]),
                platform.cycle_times[i],
            )
        })
        .collect()
}

impl MaxTasksSolver for TwoFactor {
    fn schedule(&self, platform: &TaskPlatform, deadline: f64) -> Result<TaskSchedule> {
        platform.check()?;
        check_deadline(deadline)?;
        let t = &platform.cycle_times;
        let half = deadline / 2.0;
        let mut s1 = slot_matching(t, platform.tcom, self.solver, |i, j| {
            signed_tasks_within(half - j as f64 * platform.tcom, t[i])
        })?;
        let mut s2 = slot_matching(t, platform.tcom_return, self.solver, |i, k| {
            signed_tasks_within(half - k as f64 * platform.tcom_return, t[i])
        })?;
        let mut counts = exact_counts(platform, deadline, &s1, &s2);
        if self.refine {
            let mut best: u64 = counts.iter().sum();
            for _ in 0..self.max_rounds {
                let n2 = slot_matching(t, platform.tcom_return, self.solver, |i, k| {
                    tasks_within(platform.budget(deadline, s1[i], k), t[i]) as i64
                })?;
                let n1 = slot_matching(t, platform.tcom, self.solver, |i, j| {
                    tasks_within(platform.budget(deadline, j, n2[i]), t[i]) as i64
                })?;
                let c = exact_counts(platform, deadline, &n1, &n2);
                let total: u64 = c.iter().sum();
                if total <= best {
                    break;
                }
                (s1, s2, counts, best) = (n1, n2, c, total);
            }
        }
        Ok(TaskSchedule::new(platform, counts, s1, Some(s2)))
    }
}

/// Exact MaxTasks2(T) for small `p` (\[BBLRR01\] §4.4.2 notes that exhaustive search
/// over both permutations is `O((p!)²)`). Here every `σ1` is enumerated and
/// the best `σ2` for it is found by one exact matching (weights
/// `⌊(T − σ1(i)·t¹ − k·t²)/t_i⌋`), so the search is `O(p!·p³)`: fine up to
/// `p ≈ 9`. Used to measure how far [`TwoFactor`] is from the optimum.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExactSearch {
    /// Refuse platforms with more workers than this.
    pub max_workers: usize,
}

impl Default for ExactSearch {
    fn default() -> Self {
        Self { max_workers: 9 }
    }
}

/// Calls `f` on every permutation of `0..p` (Heap's algorithm, `O(p!)`).
pub fn for_each_permutation(p: usize, mut f: impl FnMut(&[usize]) -> Result<()>) -> Result<()> {
    let mut a: Vec<usize> = (0..p).collect();
    let mut c = vec![0usize; p];
    f(&a)?;
    let mut i = 0;
    while i < p {
        if c[i] < i {
            if i % 2 == 0 {
                a.swap(0, i);
            } else {
                a.swap(c[i], i);
            }
            f(&a)?;
            c[i] += 1;
            i = 0;
        } else {
            c[i] = 0;
            i += 1;
        }
    }
    Ok(())
}

impl MaxTasksSolver for ExactSearch {
    fn schedule(&self, platform: &TaskPlatform, deadline: f64) -> Result<TaskSchedule> {
        platform.check()?;
        check_deadline(deadline)?;
        let p = platform.workers();
        if p > self.max_workers {
            return Err(Error::InvalidInput(format!(
                "exact MaxTasks2 search is O(p!·p³); {p} workers > limit {}",
                self.max_workers
            )));
        }
        let t = &platform.cycle_times;
        let mut best: Option<(u64, Vec<usize>, Vec<usize>)> = None;
        for_each_permutation(p, |perm| {
            let s1: Vec<usize> = perm.iter().map(|&k| k + 1).collect();
            let s2 = slot_matching(
                t,
                platform.tcom_return,
                AssignmentSolver::Hungarian,
                |i, k| tasks_within(platform.budget(deadline, s1[i], k), t[i]) as i64,
            )?;
            let total = exact_counts(platform, deadline, &s1, &s2).iter().sum();
            if best.as_ref().is_none_or(|b| total > b.0) {
                best = Some((total, s1, s2));
            }
            Ok(())
        })?;
        let (_, s1, s2) = best.ok_or_else(|| Error::Empty("no workers".into()))?;
        let counts = exact_counts(platform, deadline, &s1, &s2);
        Ok(TaskSchedule::new(platform, counts, s1, Some(s2)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn heap_enumerates_all_permutations() {
        let mut seen = std::collections::HashSet::new();
        for_each_permutation(4, |p| {
            seen.insert(p.to_vec());
            Ok(())
        })
        .unwrap();
        assert_eq!(seen.len(), 24);
    }
}
