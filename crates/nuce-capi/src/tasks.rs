//! Master–worker schedules for C (\[BBLRR01\] §4): pure functions over a
//! [`nuce_task_platform`], writing the schedule into the caller's buffers.

use std::ffi::c_int;

use nuce::plan::tasks::{min_time, AutoSolver, MaxTasksSolver, TaskPlatform, TaskSchedule};
use nuce::{Error, Result};

use crate::{guard, null};

/// A master–worker platform (read only): worker `i` needs
/// `cycle_times[i]` seconds per task; the master sends one initial message
/// of `tcom` seconds to each worker with tasks, one at a time, and receives
/// one final message of `tcom_return` seconds from each (0: results cost
/// nothing).
#[repr(C)]
#[derive(Clone, Copy)]
pub struct nuce_task_platform {
    /// `workers` cycle times (finite, > 0).
    pub cycle_times: *const f64,
    /// Number of workers (> 0).
    pub workers: usize,
    /// Cost of an initial message (finite, >= 0).
    pub tcom: f64,
    /// Cost of a final message (finite, >= 0).
    pub tcom_return: f64,
}

/// The platform behind the C struct.
///
/// # Safety
/// `pf` is NULL or a readable struct whose `cycle_times` is NULL or
/// `workers` readable doubles.
unsafe fn platform(pf: *const nuce_task_platform) -> Result<TaskPlatform> {
    // SAFETY: the caller's contract.
    let pf = unsafe { pf.as_ref() }.ok_or_else(|| null("platform"))?;
    if pf.cycle_times.is_null() {
        return Err(null("cycle_times"));
    }
    if pf.workers == 0 {
        return Err(Error::empty("no workers"));
    }
    // SAFETY: non-null, `workers` readable doubles (contract).
    let t = unsafe { std::slice::from_raw_parts(pf.cycle_times, pf.workers) };
    Ok(TaskPlatform::new(t.to_vec(), pf.tcom, pf.tcom_return)?)
}

/// Writes a schedule into the caller's buffers of `p` elements each.
///
/// # Safety
/// `counts`, `send_order`, `return_order` are NULL or `p` writable
/// elements; `makespan` is NULL or writable.
unsafe fn write(
    s: &TaskSchedule,
    counts: *mut u64,
    send_order: *mut i64,
    return_order: *mut i64,
    makespan: *mut f64,
) -> Result<()> {
    let p = s.counts.len();
    let orders = [
        (send_order, s.send_sequence(), "send_order"),
        (return_order, s.return_sequence(), "return_order"),
    ];
    if counts.is_null() {
        return Err(null("counts"));
    }
    if let Some((_, _, what)) = orders.iter().find(|o| o.0.is_null()) {
        return Err(null(what));
    }
    // SAFETY: non-null (checked), p writable uint64_t / int64_t (contract).
    unsafe {
        std::ptr::copy_nonoverlapping(s.counts.as_ptr(), counts, p);
        for (out, seq, _) in orders {
            for (k, w) in seq.into_iter().enumerate() {
                *out.add(k) = w as i64;
            }
        }
        if let Some(m) = makespan.as_mut() {
            *m = s.makespan;
        }
    }
    Ok(())
}

/// The schedule of exactly `tasks` equal tasks with the least makespan
/// found (MinTime, \[BBLRR01\] §4.1; the solver of the platform's model:
/// no messages, initial messages only — optimal matching — or both —
/// refined 2-factor approximation). Writes, for `p = pf->workers`:
/// `counts[p]` tasks per worker; `send_order[p]`, the workers (0-based) in
/// the order the master sends their initial messages; `return_order[p]`,
/// the workers in the order the master receives their results (the send
/// order when `tcom_return` is 0); `*makespan` (NULL allowed) in seconds.
/// Workers given no task come last in both orders. Local and pure.
#[no_mangle]
pub extern "C" fn nuce_tasks_min_time(
    pf: *const nuce_task_platform,
    tasks: u64,
    counts: *mut u64,
    send_order: *mut i64,
    return_order: *mut i64,
    makespan: *mut f64,
) -> c_int {
    guard(|| {
        // SAFETY: `pf` is NULL or a valid platform (contract).
        let s = min_time(&AutoSolver, &unsafe { platform(pf) }?, tasks)?;
        // SAFETY: output buffers of `workers` elements (contract).
        unsafe { write(&s, counts, send_order, return_order, makespan) }
    })
}

/// The schedule of as many tasks as fit within `deadline` seconds
/// (MaxTasks, \[BBLRR01\] §4.1–4.2, same solvers and outputs as
/// [`nuce_tasks_min_time`]; every worker with tasks finishes by the
/// deadline exactly). Local and pure.
#[no_mangle]
pub extern "C" fn nuce_tasks_max_tasks(
    pf: *const nuce_task_platform,
    deadline: f64,
    counts: *mut u64,
    send_order: *mut i64,
    return_order: *mut i64,
    makespan: *mut f64,
) -> c_int {
    guard(|| {
        // SAFETY: `pf` is NULL or a valid platform (contract).
        let s = AutoSolver.max_tasks(&unsafe { platform(pf) }?, deadline)?;
        // SAFETY: output buffers of `workers` elements (contract).
        unsafe { write(&s, counts, send_order, return_order, makespan) }
    })
}
