//! MinTime(C) by binary search on the deadline.
//!
//! Source: \[BBLRR01\] §4.1, after Definition 3: "we find a
//! solution to MinTime(C) by using binary search on T, calling MaxTasks(T)
//! several times, and returning the smallest value of T for which the answer
//! is at least C".
//!
//! Two refinements keep the search short and exact: each feasible probe
//! `T` is replaced by the *actual* makespan of the schedule found (which is
//! `≤ T` and is one of the finitely many event times `σ1·t¹ + c·t_i + σ2·t²`),
//! and the schedule is trimmed to exactly `C` tasks, removing tasks from the
//! workers that finish last. The bracket starts at the bound
//! `C / Σ 1/t_i ≤ T*` and at `that + p·(t¹ + t²) + max t_i`, where any pair
//! of permutations already gives `C` tasks. With an exact MaxTasks solver the
//! result is optimal (its task count is non-decreasing in `T`) up to a
//! relative `1e-12` in `T`; with an approximation it is the best schedule
//! met. Without return messages every makespan is an event time
//! `j·t_com + k·t_i`, so once the bracket is narrower than `min t_i / 8` the
//! search continues over the sorted event times inside it: exact, and
//! about 25 solver calls at `p = 1000` instead of about 40 (`O(p²)` memory
//! for the events; plain bisection above `p = 2048` or with returns).

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use super::{MaxTasksSolver, TaskPlatform, TaskSchedule, MAX_COUNT};
use crate::error::{Error, Result};

/// Most solver calls of one search.
const MAX_PROBES: usize = 200;

/// MinTime(C): a schedule of exactly `tasks` tasks with the smallest
/// makespan found by binary search over `solver`'s MaxTasks(T). At most
/// [`MAX_COUNT`] = 2^40 tasks ([`Error::InvalidInput`] above); the whole
/// search shares one work limit ([`super::MAX_WORK`]). With fewer tasks
/// than workers only the `C` fastest workers are scheduled (an optimal
/// schedule exists among them), the others get the later slots.
pub fn min_time<S: MaxTasksSolver + ?Sized>(
    solver: &S,
    platform: &TaskPlatform,
    tasks: u64,
) -> Result<TaskSchedule> {
    platform.check()?;
    if tasks > MAX_COUNT as u64 {
        return Err(Error::InvalidInput(format!(
            "{tasks} tasks: at most 2^40 = {MAX_COUNT}"
        )));
    }
    let p = platform.workers();
    if tasks > 0 && tasks < p as u64 {
        // At most C workers get a task, and a faster worker in the same
        // slots finishes no later: an optimal schedule exists among the C
        // fastest (workers without tasks need no message). Their schedule,
        // with the others in the later slots, is the answer.
        let keep = &super::matching::fastest_first(&platform.cycle_times)[..tasks as usize];
        let sub = TaskPlatform::new(
            keep.iter().map(|&i| platform.cycle_times[i]).collect(),
            platform.tcom,
            platform.tcom_return,
        )?;
        let s = super::with_work_limit(super::MAX_WORK, || search(solver, &sub, tasks))?;
        let mut counts = vec![0; p];
        let mut send: Vec<usize> = (1..=p).collect();
        let mut ret = send.clone();
        let mut used = vec![false; p];
        for (k, &i) in keep.iter().enumerate() {
            counts[i] = s.counts[k];
            send[i] = s.send_slot[k];
            ret[i] = s.return_slot_of(k);
            used[i] = true;
        }
        for (next, i) in (keep.len() + 1..).zip((0..p).filter(|&i| !used[i])) {
            send[i] = next;
            ret[i] = next;
        }
        let ret = s.return_slot.as_ref().map(|_| ret);
        let full = TaskSchedule::new(platform, counts, send, ret);
        full.check(platform, None)?;
        return Ok(full);
    }
    super::with_work_limit(super::MAX_WORK, || search(solver, platform, tasks))
}

fn search<S: MaxTasksSolver + ?Sized>(
    solver: &S,
    platform: &TaskPlatform,
    tasks: u64,
) -> Result<TaskSchedule> {
    let p = platform.workers();
    if tasks == 0 {
        return Ok(TaskSchedule::empty(platform));
    }
    let rate: f64 = platform.cycle_times.iter().map(|t| 1.0 / t).sum();
    let max_t = platform.cycle_times.iter().cloned().fold(0.0, f64::max);
    let min_t = platform
        .cycle_times
        .iter()
        .cloned()
        .fold(f64::INFINITY, f64::min);
    let mut lo = tasks as f64 / rate;
    // Any pair of permutations reaches C tasks by the first bound; the
    // fastest worker alone, first in both orders, by the second (workers
    // without tasks need no message). The second keeps a huge cycle time
    // (1e308) from making the bracket, and the event search, absurd.
    let mut hi = (lo + p as f64 * (platform.tcom + platform.tcom_return) + max_t)
        .min(tasks as f64 * min_t + platform.tcom + platform.tcom_return);
    if !hi.is_finite() {
        return Err(Error::InvalidInput(format!(
            "the makespan of {tasks} tasks overflows f64 (cycle times up to {max_t:e})"
        )));
    }
    let mut probes = 0;
    let mut best = loop {
        let s = solver.max_tasks(platform, hi)?;
        probes += 1;
        if s.total() >= tasks {
            break trim(platform, s, tasks);
        }
        if probes > 64 || !hi.is_finite() {
            return Err(Error::Solver(format!(
                "MinTime: no deadline up to {hi} reaches {tasks} tasks"
            )));
        }
        lo = hi;
        hi *= 2.0;
    };
    hi = best.makespan;
    // Without return messages every makespan is an event time j·t_com + k·t_i:
    // bisect on reals only until the bracket is narrower than min t_i / 8,
    // then bisect over the sorted event times inside it (exact, fewer probes).
    let enumerable = platform.tcom_return == 0.0 && p <= 2048;
    let stop = |lo: f64, hi: f64| {
        hi - lo <= 1e-12 * hi.abs().max(1e-300) || (enumerable && hi - lo <= min_t / 8.0)
    };
    while !stop(lo, hi) && probes < MAX_PROBES {
        let mid = 0.5 * (lo + hi);
        if mid <= lo || mid >= hi {
            break;
        }
        let s = solver.max_tasks(platform, mid)?;
        probes += 1;
        if s.total() >= tasks {
            let s = trim(platform, s, tasks);
            if s.makespan <= best.makespan {
                best = s;
            }
            hi = best.makespan.min(mid);
        } else {
            lo = mid;
        }
    }
    // Only once the bracket is narrow (the probes may have run out before).
    if enumerable && hi - lo <= min_t / 8.0 {
        let events = event_times(platform, lo, hi)?;
        // The first feasible event time (hi, feasible, is the sentinel).
        let (mut a, mut b) = (0usize, events.len());
        while a < b && probes < MAX_PROBES {
            let m = (a + b) / 2;
            let s = solver.max_tasks(platform, events[m])?;
            probes += 1;
            if s.total() >= tasks {
                let s = trim(platform, s, tasks);
                if s.makespan <= best.makespan {
                    best = s;
                }
                b = m;
            } else {
                a = m + 1;
            }
        }
    }
    Ok(best)
}

/// Event times `j·t_com + k·t_i` (`1 ≤ j ≤ p`, `k ≥ 1`) in `(lo, hi)`,
/// sorted and deduplicated: the only possible MaxTasks1 makespans there.
/// `O(p² · (1 + (hi − lo)/min t))` time and memory, each event a step of
/// the work limit.
fn event_times(platform: &TaskPlatform, lo: f64, hi: f64) -> Result<Vec<f64>> {
    let p = platform.workers();
    let slots: Vec<f64> = if platform.tcom == 0.0 {
        vec![0.0]
    } else {
        (1..=p).map(|j| j as f64 * platform.tcom).collect()
    };
    let mut out = Vec::new();
    for &t in &platform.cycle_times {
        for &start in &slots {
            let mut k = ((lo - start) / t).floor().max(0.0) + 1.0;
            loop {
                super::spend(1)?;
                let e = start + k * t;
                if e >= hi {
                    break;
                }
                if e > lo {
                    out.push(e);
                }
                k += 1.0;
            }
        }
    }
    out.sort_by(f64::total_cmp);
    out.dedup();
    Ok(out)
}

/// Finish-time key of the trimming heap (max-heap on finish time).
struct Finish(f64, usize);
impl PartialEq for Finish {
    fn eq(&self, o: &Self) -> bool {
        self.cmp(o) == Ordering::Equal
    }
}
impl Eq for Finish {}
impl PartialOrd for Finish {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Finish {
    fn cmp(&self, o: &Self) -> Ordering {
        self.0.total_cmp(&o.0).then(o.1.cmp(&self.1))
    }
}

/// Reduces a schedule with `total ≥ tasks` to exactly `tasks` tasks with the
/// smallest makespan for its permutations: first cap every worker at a common
/// finish time `M` (bisection on `M`, `O(p)` per step), then remove the few
/// remaining surplus tasks from the latest-finishing workers (heap).
pub fn trim(platform: &TaskPlatform, mut s: TaskSchedule, tasks: u64) -> TaskSchedule {
    let p = s.counts.len();
    let total = s.total();
    if total <= tasks {
        return s;
    }
    let offset =
        |i: usize| s.finish_time(platform, i) - s.counts[i] as f64 * platform.cycle_times[i];
    let capped = |m: f64| -> Vec<u64> {
        (0..p)
            .map(|i| s.counts[i].min(super::tasks_within(m - offset(i), platform.cycle_times[i])))
            .collect()
    };
    if total > tasks + 4 * p as u64 {
        let (mut lo, mut hi) = (0.0, s.makespan);
        for _ in 0..100 {
            let mid = 0.5 * (lo + hi);
            if capped(mid).iter().sum::<u64>() >= tasks {
                hi = mid;
            } else {
                lo = mid;
            }
        }
        s.counts = capped(hi);
    }
    let mut heap: BinaryHeap<Finish> = (0..p)
        .filter(|&i| s.counts[i] > 0)
        .map(|i| Finish(s.finish_time(platform, i), i))
        .collect();
    let mut surplus = s.total().saturating_sub(tasks);
    while surplus > 0 {
        let Some(Finish(_, i)) = heap.pop() else {
            break;
        };
        s.counts[i] -= 1;
        surplus -= 1;
        if s.counts[i] > 0 {
            heap.push(Finish(s.finish_time(platform, i), i));
        }
    }
    s.makespan = s.model_makespan(platform);
    s
}
