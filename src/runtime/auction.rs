//! Collective matching: the ranks solve an assignment problem together.
//!
//! Each participating rank is one *person* of the assignment and holds only
//! its own row of integer weights; no rank ever sees the whole matrix. The
//! ranks run the auction of [`crate::plan::tasks::auction`] in lockstep:
//! every round, each unassigned person computes its bid from the replicated
//! prices, the bids are combined by one max-reduction over the objects
//! (`MPI_Allreduce` of `n` 64-bit keys: highest price, then lowest person),
//! and every rank applies the same winners. The state stays replicated, so
//! every rank ends with the same assignment — the one the sequential
//! [`crate::plan::tasks::auction::auction`] computes — which is optimal for
//! integer weights (ε = 1/(n+1) < 1/n in the last phase).
//!
//! [`collective_max_tasks1`] uses it for MaxTasks1(T) of
//! \[BBLRR01\] §4.3.2 (Proposition 1): each worker rank
//! computes its own row `⌊(T − j·t_com)/t_i⌋` from its own cycle time.
//!
//! Cost: per round one all-reduce of `n` integers and `O(n)` work per
//! bidder; `O(log((n+1)·range))` ε-phases (see the plan module).

use mpi::collective::SystemOperation;
use mpi::traits::*;

use crate::error::{Error, Result};
use crate::plan::tasks::auction::{AuctionState, NO_BID};
use crate::plan::tasks::matching::maxtasks1_weight;
use crate::plan::tasks::{check_deadline, TaskPlatform, TaskSchedule};
use crate::runtime::comm::{agree, all_gather_values};
use crate::runtime::watchdog::check_entry;

/// Solves a maximum-weight assignment collectively. Ranks with `Some(row)`
/// are the persons, in rank order; every row must have one weight per
/// person. Returns on every rank the object of every rank (`None` for ranks
/// without a row). Collective over `comm`; a bad row is the same `Err`
/// everywhere.
pub fn collective_assignment<C: Communicator>(
    comm: &C,
    row: Option<&[i64]>,
) -> Result<Vec<Option<usize>>> {
    check_entry(comm, "collective_assignment")?;
    let has: Vec<bool> = all_gather_values(comm, &row.is_some())?;
    let n = has.iter().filter(|&&h| h).count();
    let me = comm.rank() as usize;
    let person = row.map(|_| has[..me].iter().filter(|&&h| h).count());
    let check = match row {
        Some(r) if r.len() != n => Err(Error::shape_mismatch(format!(
            "rank {me}: row of {} weights for {n} persons",
            r.len()
        ))),
        _ if n == 0 => Err(Error::empty("no rank has a row of weights")),
        _ => Ok(()),
    };
    agree(comm, 0, check)?;
    let row = row.unwrap_or(&[]);
    let (mut lo, mut hi) = (i64::MAX, i64::MIN);
    for &w in row {
        lo = lo.min(w);
        hi = hi.max(w);
    }
    let (mut glo, mut ghi) = (0i64, 0i64);
    comm.all_reduce_into(&lo, &mut glo, SystemOperation::min());
    comm.all_reduce_into(&hi, &mut ghi, SystemOperation::max());
    let mut state = AuctionState::new(n, glo, ghi)?;
    let mut keys = vec![NO_BID; n];
    let mut best = vec![NO_BID; n];
    let _span = tracing::debug_span!("collective_auction", n).entered();
    loop {
        while !state.all_assigned() {
            keys.iter_mut().for_each(|k| *k = NO_BID);
            if let Some(i) = person {
                if let Some((object, key)) = state.bid(i, |j| row[j]) {
                    keys[object] = key;
                }
            }
            comm.all_reduce_into(&keys[..], &mut best[..], SystemOperation::max());
            // Identical inputs on every rank: an error here is the same
            // everywhere, and the loop stays in lockstep.
            state.apply(&best)?;
        }
        if !state.next_phase() {
            break;
        }
    }
    let objects = state.assignment()?;
    let mut k = 0;
    Ok(has
        .iter()
        .map(|&h| {
            h.then(|| {
                k += 1;
                objects[k - 1]
            })
        })
        .collect())
}

/// What a worker rank knows about itself for `collective_max_tasks1`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct WorkerSelf {
    /// Its measured seconds per task.
    pub cycle_time: f64,
    /// Its measured cost of receiving the initial message from the master.
    pub tcom: f64,
}

/// Collective MaxTasks1(T) (\[BBLRR01\] §4.3.2): every rank but `master` is a
/// worker and passes `Some(WorkerSelf)` with its own measurements; the
/// master passes `None`. The bus cost is the largest measured `tcom` (one
/// value for all, as in the model). Each worker computes its own row of the
/// bipartite graph of Figure 22, the ranks solve the matching with the
/// collective auction, and every rank returns the same platform (the
/// gathered measurements) and schedule (workers in rank order, the master
/// skipped).
pub fn collective_max_tasks1<C: Communicator>(
    comm: &C,
    master: i32,
    me: Option<WorkerSelf>,
    deadline: f64,
) -> Result<(TaskPlatform, TaskSchedule)> {
    check_entry(
        comm,
        &format!("collective_max_tasks1(master {master}, deadline {deadline})"),
    )?;
    let local = match (comm.rank() == master, me) {
        (true, None) => Ok(()),
        (false, Some(w)) if w.cycle_time.is_finite() && w.cycle_time > 0.0 => {
            if w.tcom.is_finite() && w.tcom >= 0.0 {
                Ok(())
            } else {
                Err(Error::invalid_input(format!("bad tcom {}", w.tcom)))
            }
        }
        (false, Some(w)) => Err(Error::Plan(crate::plan::Error::InvalidSpeed {
            index: comm.rank() as usize,
            value: w.cycle_time,
        })),
        _ => Err(Error::invalid_input(
            "the master passes None, every worker Some",
        )),
    };
    agree(
        comm,
        master,
        local.and_then(|_| Ok(check_deadline(deadline)?)),
    )?;
    let mut tcom = 0.0;
    let my_tcom = me.map_or(0.0, |w| w.tcom);
    comm.all_reduce_into(&my_tcom, &mut tcom, SystemOperation::max());
    let workers = comm.size() as usize - 1;
    let row: Option<Vec<i64>> = me.map(|w| {
        let pf = TaskPlatform {
            cycle_times: vec![w.cycle_time],
            tcom,
            tcom_return: 0.0,
        };
        (1..=workers)
            .map(|slot| maxtasks1_weight(&pf, deadline, 0, slot))
            .collect()
    });
    let objects = collective_assignment(comm, row.as_deref())?;
    let cycle: Vec<f64> = all_gather_values(comm, &me.map_or(0.0, |w| w.cycle_time))?;
    let mut cycle_times = Vec::with_capacity(workers);
    let mut slots = Vec::with_capacity(workers);
    for (r, obj) in objects.iter().enumerate() {
        if let Some(o) = obj {
            cycle_times.push(cycle[r]);
            slots.push(o + 1);
        }
    }
    let platform = TaskPlatform::new(cycle_times, tcom, 0.0)?;
    let counts = (0..workers)
        .map(|i| maxtasks1_weight(&platform, deadline, i, slots[i]) as u64)
        .collect();
    let schedule = TaskSchedule::new(&platform, counts, slots, None);
    Ok((platform, schedule))
}
