//! Master–worker scheduling of independent equal tasks.
//!
//! Source: \[BBLRR01\] §4 (Beaumont, Boudet, Legrand, Rastello,
//! Robert). A master holds a pool of identical, atomic tasks; worker `P_i`
//! needs `t_i` seconds per task (its *cycle time*). The master talks to one
//! worker at a time over a shared bus (Figure 20):
//!
//! * [`maxtasks::NoCommunication`] — MaxTasks(T) without communication
//!   (§4.1.1): `c_i = ⌊T / t_i⌋`;
//! * [`matching::Matching`] — MaxTasks1(T), one initial message of `t_com`
//!   per worker (§4.1.2), solved optimally as a maximum-weight bipartite
//!   matching (§4.3.2, Proposition 1); [`maxtasks::SortedOrder`] is the
//!   restricted search of Andonie et al. (§4.3.1) that it improves on;
//! * [`twofactor::TwoFactor`] — MaxTasks2(T), initial and final messages
//!   (§4.2), by the 2-factor approximation of §4.4.1 (within `p` tasks of the
//!   optimum, Theorem 1); [`twofactor::ExactSearch`] is an exact search for
//!   small `p`;
//! * [`mintime::min_time`] — MinTime(C) for any of them by binary search on
//!   `T` (§4.1, after Definition 3).
//!
//! Model (Definitions 4 and 5): the master sends the initial messages at
//! times `σ1(i)·t_com` (slots `1..=p`, in the paper's convention the message
//! to the worker in slot `j` is *complete* at `j·t_com`), worker `i` computes
//! `c_i` tasks, and sends its result back at `T − σ2(i)·t_com_return`
//! (`σ2(i) = 1` is the last message). A schedule meets the deadline `T` iff
//! `σ1(i)·t_com + c_i·t_i + σ2(i)·t_com_return ≤ T` for every worker.
//! A worker given no task needs no message; the paper sends all `p`
//! messages regardless, and both agree whenever every worker gets a task.
//!
//! # Bounds
//!
//! [`MaxTasksSolver::max_tasks`] and [`min_time`] are the entry points;
//! they check their input at once (finite, non-negative deadline; at most
//! [`MAX_COUNT`] = 2^40 tasks per worker, i.e. `T / min t_i ≤ 2^40`, and
//! for [`min_time`] at most 2^40 tasks in all) and return an
//! [`Error::InvalidInput`] instead of a silently capped count. The
//! matching solvers (everything with message costs) run under a work
//! limit of [`MAX_WORK`] steps of the staircase flow per call (about a
//! second; [`with_work_limit`] sets another): a platform of thousands of
//! workers whose messages cost as much as their tasks ends with an error
//! in bounded time rather than running for minutes. Every schedule is
//! checked before it is returned: the finish time of every worker, in the
//! `f64` arithmetic of [`TaskSchedule::finish_time`], is at most the
//! deadline **exactly** (no tolerance), and a violation is an
//! [`Error::InvalidPlan`], never a wrong answer.

use std::cell::Cell;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

pub mod auction;
pub mod matching;
pub mod maxtasks;
pub mod mintime;
pub mod staircase;
pub mod twofactor;

pub use matching::{AssignmentSolver, Matching};
pub use maxtasks::{NoCommunication, SortedOrder};
pub use mintime::min_time;
pub use twofactor::{ExactSearch, TwoFactor};

/// A master–worker platform: cycle times of the workers and bus costs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TaskPlatform {
    /// Seconds per task of each worker (`t_i`).
    pub cycle_times: Vec<f64>,
    /// Cost of one initial message from the master (`t_com`, `t¹_com`).
    pub tcom: f64,
    /// Cost of one final message back to the master (`t²_com`); 0 when
    /// results are not sent back (MaxTasks1).
    pub tcom_return: f64,
}

impl TaskPlatform {
    /// Validates and builds a platform: cycle times finite and `> 0`,
    /// message costs finite and `≥ 0`.
    pub fn new(cycle_times: Vec<f64>, tcom: f64, tcom_return: f64) -> Result<Self> {
        crate::check_speeds(&cycle_times)?;
        for (name, v) in [("tcom", tcom), ("tcom-return", tcom_return)] {
            if !(v.is_finite() && v >= 0.0) {
                return Err(Error::InvalidInput(format!(
                    "{name} must be finite and >= 0, got {v}"
                )));
            }
        }
        Ok(Self {
            cycle_times,
            tcom,
            tcom_return,
        })
    }

    /// Number of workers `p`.
    pub fn workers(&self) -> usize {
        self.cycle_times.len()
    }

    /// Re-validates a platform whose fields were set directly.
    pub fn check(&self) -> Result<()> {
        Self::new(self.cycle_times.clone(), self.tcom, self.tcom_return).map(|_| ())
    }

    /// Time that worker `i` may spend computing when its initial message is
    /// in slot `send` and its final message in slot `ret` (1-based; `ret` is
    /// ignored without return messages).
    pub fn budget(&self, deadline: f64, send: usize, ret: usize) -> f64 {
        deadline - send as f64 * self.tcom - ret as f64 * self.tcom_return
    }
}

/// Largest number of tasks of cycle time `t` that fit in `budget` seconds:
/// the largest `c ≥ 0` with `c·t ≤ budget` **in `f64`**, exactly (the
/// rounding of `budget / t` is corrected both ways; `3 × 0.1` is
/// `0.30000000000000004`, so 2 tasks of 0.1 s fit in 0.3 s, not 3). A
/// tolerance relative to the budget once let `⌊10⁹/1⌋ + 1` tasks "fit" in
/// 10⁹ s. Saturates at [`MAX_COUNT`] (the entry points reject such inputs
/// before).
pub fn tasks_within(budget: f64, t: f64) -> u64 {
    signed_tasks_within(budget, t).max(0) as u64
}

/// Most tasks one worker may be given (`2⁴⁰`), far beyond any real pool,
/// so that sums of weights never overflow; inputs that would need more are
/// an [`Error::InvalidInput`] at the entry points.
pub const MAX_COUNT: i64 = 1 << 40;

/// `⌊budget / t⌋` as a signed integer (negative when the budget is),
/// exact in `f64` as [`tasks_within`]: `c·t ≤ budget < (c + 1)·t`.
/// Saturates at `±`[`MAX_COUNT`].
pub fn signed_tasks_within(budget: f64, t: f64) -> i64 {
    let q = (budget / t).clamp(-(MAX_COUNT as f64), MAX_COUNT as f64);
    let mut c = q.floor();
    // The quotient is correctly rounded, so its floor is off by at most one.
    if c * t > budget {
        c -= 1.0;
    } else if (c + 1.0) * t <= budget && c < MAX_COUNT as f64 {
        c += 1.0;
    }
    (c as i64).clamp(-MAX_COUNT, MAX_COUNT)
}

/// Steps of the staircase flow one entry point may spend by default
/// (2^25: about a second on a busy machine, and at most one heap entry of
/// 24 bytes per step, 800 MB, for Dijkstra's lazy deletions). Before this
/// bound MinTime with return messages on 1 000 workers ran for over 100 s.
pub const MAX_WORK: u64 = 1 << 28;

thread_local! {
    /// Steps left to the running entry point; `None` outside one.
    static WORK_LEFT: Cell<Option<u64>> = const { Cell::new(None) };
}

/// Runs `f` with a budget of `limit` steps of the matching solvers
/// ([`staircase`]); nested calls share the outermost budget. Exceeding it
/// is an [`Error::InvalidInput`]. `u64::MAX` lifts the bound.
pub fn with_work_limit<T>(limit: u64, f: impl FnOnce() -> Result<T>) -> Result<T> {
    if WORK_LEFT.get().is_some() {
        return f();
    }
    WORK_LEFT.set(Some(limit));
    let out = f();
    WORK_LEFT.set(None);
    out
}

/// Spends `steps` of the budget of [`with_work_limit`].
pub(crate) fn spend(steps: usize) -> Result<()> {
    match WORK_LEFT.get() {
        Some(left) if left < steps as u64 => Err(Error::InvalidInput(format!(
            "problem too large: the matching solver ran out of its work limit ({} steps; \
             many workers whose message costs are comparable to their cycle times). Use \
             fewer workers or tasks::with_work_limit",
            MAX_WORK
        ))),
        Some(left) => {
            WORK_LEFT.set(Some(left - steps as u64));
            Ok(())
        }
        None => Ok(()),
    }
}

/// The checks of every entry point: a valid platform, a finite
/// non-negative deadline, and at most [`MAX_COUNT`] tasks per worker
/// (`deadline / min t_i`).
pub fn check_problem(platform: &TaskPlatform, deadline: f64) -> Result<()> {
    platform.check()?;
    check_deadline(deadline)?;
    let fastest = platform
        .cycle_times
        .iter()
        .copied()
        .fold(f64::INFINITY, f64::min);
    if deadline / fastest > MAX_COUNT as f64 {
        return Err(Error::InvalidInput(format!(
            "deadline {deadline:e} allows {:e} tasks to a worker of cycle time {fastest:e}: \
             at most 2^40 = {MAX_COUNT} per worker",
            (deadline / fastest).floor()
        )));
    }
    Ok(())
}

/// A schedule of independent equal tasks (input order of the workers).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TaskSchedule {
    /// Tasks given to each worker (`c_i`).
    pub counts: Vec<u64>,
    /// `σ1(i)`: 1-based slot of worker `i`'s initial message.
    pub send_slot: Vec<usize>,
    /// `σ2(i)`: 1-based slot of worker `i`'s final message counted from the
    /// end (`1` = last message, finishing at the deadline), as in
    /// Definition 5; `None` without return messages.
    pub return_slot: Option<Vec<usize>>,
    /// Completion time of the schedule in the model of Definitions 4–5:
    /// `max_i σ1(i)·t_com + c_i·t_i + σ2(i)·t_com_return` over workers with
    /// `c_i > 0` (0 when there is no task).
    pub makespan: f64,
}

impl TaskSchedule {
    /// Builds a schedule and computes its model makespan.
    pub fn new(
        platform: &TaskPlatform,
        counts: Vec<u64>,
        send_slot: Vec<usize>,
        return_slot: Option<Vec<usize>>,
    ) -> Self {
        let mut s = Self {
            counts,
            send_slot,
            return_slot,
            makespan: 0.0,
        };
        s.makespan = s.model_makespan(platform);
        s
    }

    /// The schedule of no task: slots in worker order.
    pub fn empty(platform: &TaskPlatform) -> Self {
        let slots: Vec<usize> = (1..=platform.workers()).collect();
        let ret = (platform.tcom_return > 0.0).then(|| slots.clone());
        Self::new(platform, vec![0; platform.workers()], slots, ret)
    }

    /// Total number of tasks `Σ c_i`.
    pub fn total(&self) -> u64 {
        self.counts.iter().sum()
    }

    /// Final-message slot of worker `i` (1 when there are no return messages).
    pub fn return_slot_of(&self, i: usize) -> usize {
        self.return_slot
            .as_ref()
            .and_then(|r| r.get(i).copied())
            .unwrap_or(0)
    }

    /// Model finish time of worker `i` (including its final message).
    /// (An index outside the schedule or the platform counts as 0.)
    pub fn finish_time(&self, platform: &TaskPlatform, i: usize) -> f64 {
        let send = self.send_slot.get(i).copied().unwrap_or(0);
        let count = self.counts.get(i).copied().unwrap_or(0);
        let t = platform.cycle_times.get(i).copied().unwrap_or(0.0);
        send as f64 * platform.tcom
            + count as f64 * t
            + self.return_slot_of(i) as f64 * platform.tcom_return
    }

    /// Model makespan (see [`TaskSchedule::makespan`]).
    pub fn model_makespan(&self, platform: &TaskPlatform) -> f64 {
        (0..self.counts.len())
            .filter(|&i| self.counts[i] > 0)
            .map(|i| self.finish_time(platform, i))
            .fold(0.0, f64::max)
    }

    /// Workers in the order the master sends their initial messages.
    pub fn send_sequence(&self) -> Vec<usize> {
        order_of_slots(&self.send_slot)
    }

    /// 1-based position of each worker's final message in the order the
    /// master receives them (`p + 1 − σ2(i)`), or `None`.
    pub fn return_order(&self) -> Option<Vec<usize>> {
        let p = self.counts.len();
        self.return_slot
            .as_ref()
            .map(|r| r.iter().map(|&k| (p + 1).saturating_sub(k)).collect())
    }

    /// Workers in the order the master receives their results (send order
    /// when there are no return messages).
    pub fn return_sequence(&self) -> Vec<usize> {
        match self.return_order() {
            Some(r) => order_of_slots(&r),
            None => self.send_sequence(),
        }
    }

    /// Lowers the count of every worker whose finish time, in `f64`,
    /// exceeds `deadline` (an ulp-level effect of adding the message times
    /// to `c·t_i ≤ budget`), then recomputes the makespan.
    pub fn fit(&mut self, platform: &TaskPlatform, deadline: f64) {
        for i in 0..self.counts.len() {
            while self.counts[i] > 0 && self.finish_time(platform, i) > deadline {
                self.counts[i] -= 1;
            }
        }
        self.makespan = self.model_makespan(platform);
    }

    /// Checks the schedule against `platform`: permutations of `1..=p`, and
    /// every worker's constraint of Definitions 4–5 when `deadline` is given,
    /// exactly (no tolerance).
    pub fn check(&self, platform: &TaskPlatform, deadline: Option<f64>) -> Result<()> {
        let p = platform.workers();
        if self.counts.len() != p {
            return Err(Error::InvalidPlan(format!(
                "{} counts for {p} workers",
                self.counts.len()
            )));
        }
        check_permutation(&self.send_slot, p, "send slots")?;
        match (&self.return_slot, platform.tcom_return > 0.0) {
            (Some(r), _) => check_permutation(r, p, "return slots")?,
            (None, true) => {
                return Err(Error::InvalidPlan(
                    "return messages cost time but the schedule has no return order".into(),
                ))
            }
            (None, false) => {}
        }
        if let Some(t) = deadline {
            for i in (0..p).filter(|&i| self.counts[i] > 0) {
                let f = self.finish_time(platform, i);
                if f > t {
                    return Err(Error::InvalidPlan(format!(
                        "worker {i} finishes at {f} > deadline {t}"
                    )));
                }
            }
        }
        Ok(())
    }
}

/// Checks that `slots` is a permutation of `1..=p`.
pub fn check_permutation(slots: &[usize], p: usize, what: &str) -> Result<()> {
    if slots.len() != p {
        return Err(Error::InvalidPlan(format!(
            "{what}: {} for {p}",
            slots.len()
        )));
    }
    let mut seen = vec![false; p];
    for &s in slots {
        if s == 0 || s > p || std::mem::replace(&mut seen[s - 1], true) {
            return Err(Error::InvalidPlan(format!(
                "{what} are not a permutation of 1..={p}"
            )));
        }
    }
    Ok(())
}

/// Inverse of a slot permutation: `out[k]` is the worker in slot `k + 1`.
pub fn order_of_slots(slots: &[usize]) -> Vec<usize> {
    let mut out = vec![0; slots.len()];
    for (i, &s) in slots.iter().enumerate() {
        if let Some(o) = s.checked_sub(1).and_then(|k| out.get_mut(k)) {
            *o = i;
        }
    }
    out
}

/// Checks a deadline: finite and `≥ 0`.
pub fn check_deadline(deadline: f64) -> Result<()> {
    if deadline.is_finite() && deadline >= 0.0 {
        Ok(())
    } else {
        Err(Error::InvalidInput(format!(
            "deadline must be finite and >= 0, got {deadline}"
        )))
    }
}

/// An algorithm for MaxTasks(T) in one of the models of \[BBLRR01\] §4.1–4.2:
/// given a deadline, a schedule with as many tasks as it can find.
pub trait MaxTasksSolver {
    /// The algorithm itself, called by [`MaxTasksSolver::max_tasks`] after
    /// the checks of [`check_problem`].
    fn schedule(&self, platform: &TaskPlatform, deadline: f64) -> Result<TaskSchedule>;

    /// Schedules as many tasks as possible within `deadline`: checks the
    /// input ([`check_problem`]), runs [`MaxTasksSolver::schedule`] within
    /// the work limit ([`MAX_WORK`]), makes every worker finish by the
    /// deadline exactly ([`TaskSchedule::fit`]) and checks the schedule
    /// ([`TaskSchedule::check`]) before returning it.
    fn max_tasks(&self, platform: &TaskPlatform, deadline: f64) -> Result<TaskSchedule> {
        check_problem(platform, deadline)?;
        // No worker fits one task even with the first messages: nothing
        // to match (a deadline of 0 on 10 000 workers kept the matching
        // busy for its whole work limit).
        if platform
            .cycle_times
            .iter()
            .all(|t| platform.tcom + t + platform.tcom_return > deadline)
        {
            return Ok(TaskSchedule::empty(platform));
        }
        let mut s = with_work_limit(MAX_WORK, || self.schedule(platform, deadline))?;
        s.fit(platform, deadline);
        s.check(platform, Some(deadline))?;
        Ok(s)
    }
}

/// Picks the algorithm of \[BBLRR01\] §4 for the platform's model: MaxTasks when
/// there is no communication, the optimal matching (MaxTasks1) with initial
/// messages only, the refined 2-factor approximation (MaxTasks2) otherwise.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct AutoSolver;

impl MaxTasksSolver for AutoSolver {
    fn schedule(&self, platform: &TaskPlatform, deadline: f64) -> Result<TaskSchedule> {
        if platform.tcom_return > 0.0 {
            TwoFactor {
                refine: true,
                ..TwoFactor::default()
            }
            .max_tasks(platform, deadline)
        } else if platform.tcom > 0.0 {
            Matching::default().max_tasks(platform, deadline)
        } else {
            NoCommunication.max_tasks(platform, deadline)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tasks_within_is_exact_on_boundaries() {
        assert_eq!(tasks_within(116.0, 4.0), 29);
        // 3 × 0.1 = 0.30000000000000004 > 0.3 in f64.
        assert_eq!(tasks_within(0.3, 0.1), 2);
        assert_eq!(tasks_within(0.30000000000000004, 0.1), 3);
        assert_eq!(tasks_within(-1.0, 2.0), 0);
        assert_eq!(signed_tasks_within(-1.0, 2.0), -1);
        // Issue 12: the tolerance relative to the budget let 10^9 + 1
        // tasks of 1 s fit in 10^9 s.
        assert_eq!(tasks_within(1e9, 1.0), 1_000_000_000);
        for (b, t) in [(1e9, 3.0), (0.7, 0.1), (1e11, 0.3), (5e-324, 1e-300)] {
            let c = tasks_within(b, t) as f64;
            assert!(c * t <= b && (c + 1.0) * t > b, "{b} / {t}: {c}");
        }
    }

    #[test]
    fn makespans_never_exceed_the_deadline() {
        // Issue 12: `--cycle-times 1,3 --deadline 1e9` returned a makespan
        // of 1e9 + 1.
        let pf = TaskPlatform::new(vec![1.0, 3.0], 0.0, 0.0).unwrap();
        let s = AutoSolver.max_tasks(&pf, 1e9).unwrap();
        assert!(s.makespan <= 1e9, "{}", s.makespan);
        assert_eq!(s.counts, vec![1_000_000_000, 333_333_333]);
        for (t, tcom, tret, deadline) in [
            (vec![0.1, 0.3, 0.7], 0.1, 0.0, 0.9),
            (vec![0.1, 0.3, 0.7], 0.1, 0.2, 3.3),
            (vec![1e-3, 7.0], 0.01, 0.0, 1234.5678),
        ] {
            let pf = TaskPlatform::new(t, tcom, tret).unwrap();
            let s = AutoSolver.max_tasks(&pf, deadline).unwrap();
            for i in (0..2).filter(|&i| s.counts[i] > 0) {
                assert!(s.finish_time(&pf, i) <= deadline);
            }
        }
    }

    #[test]
    fn counts_beyond_2_pow_40_are_errors() {
        // Issue 12: `--deadline 1e13` silently capped counts at 2^40.
        let pf = TaskPlatform::new(vec![1.0, 3.0], 0.0, 0.0).unwrap();
        let e = AutoSolver.max_tasks(&pf, 1e13).unwrap_err();
        assert!(matches!(e, Error::InvalidInput(_)), "{e}");
        assert!(AutoSolver.max_tasks(&pf, (1u64 << 40) as f64).is_ok());
        assert!(min_time(&AutoSolver, &pf, u64::MAX).is_err());
    }

    #[test]
    fn few_tasks_on_many_workers_use_the_fastest() {
        // 3 tasks on 10 000 workers ran into the work limit of the full
        // matching; the 3 fastest workers are enough, and optimal.
        let t: Vec<f64> = (0..10_000).map(|i| 1.0 + (i % 13) as f64 * 0.37).collect();
        for tret in [0.0, 1.0] {
            let pf = TaskPlatform::new(t.clone(), 1.0, tret).unwrap();
            let s = min_time(&AutoSolver, &pf, 3).unwrap();
            assert_eq!(s.total(), 3);
            s.check(&pf, Some(s.makespan)).unwrap();
            let small = TaskPlatform::new(vec![1.0; 3], 1.0, tret).unwrap();
            let best = min_time(&AutoSolver, &small, 3).unwrap();
            assert_eq!(s.makespan, best.makespan);
        }
    }

    #[test]
    fn the_work_limit_ends_large_matchings() {
        // 3000 workers whose messages cost as much as their tasks: minutes
        // before; now an error within the work limit.
        let t: Vec<f64> = (0..3000).map(|i| 1.0 + (i % 13) as f64 * 0.37).collect();
        let pf = TaskPlatform::new(t, 1.0, 0.0).unwrap();
        let start = std::time::Instant::now();
        let e = Matching::default().max_tasks(&pf, 1e6).unwrap_err();
        assert!(e.to_string().contains("work limit"), "{e}");
        assert!(
            start.elapsed().as_secs_f64() < 30.0,
            "{:?}",
            start.elapsed()
        );
        // A small budget is enough for a small platform.
        let small = TaskPlatform::new(vec![1.0, 2.0, 3.0], 1.0, 0.0).unwrap();
        assert!(with_work_limit(1000, || Matching::default().max_tasks(&small, 20.0)).is_ok());
    }

    #[test]
    fn platform_rejects_bad_values() {
        assert!(TaskPlatform::new(vec![], 1.0, 0.0).is_err());
        assert!(TaskPlatform::new(vec![1.0, 0.0], 1.0, 0.0).is_err());
        assert!(TaskPlatform::new(vec![1.0], -1.0, 0.0).is_err());
        assert!(TaskPlatform::new(vec![1.0], 1.0, f64::NAN).is_err());
    }

    #[test]
    fn permutation_check() {
        assert!(check_permutation(&[2, 1, 3], 3, "x").is_ok());
        assert!(check_permutation(&[2, 2, 3], 3, "x").is_err());
        assert!(check_permutation(&[0, 1], 2, "x").is_err());
        assert_eq!(order_of_slots(&[2, 3, 1]), vec![2, 0, 1]);
    }
}
