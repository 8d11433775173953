//! Master–worker executor: runs a schedule of \[BBLRR01\] §4 or \[AJ88\] over MPI.
//!
//! The master holds the work; each worker rank receives one input message,
//! computes its share and sends one result back. The executor follows an
//! [`ExecPlan`]:
//!
//! * [`Dispatch::OneAtATime`] — the master sends the inputs one at a time in
//!   the plan's send order (σ1 of \[BBLRR01\] §4, the feeding order of \[AJ88\]), then
//!   receives the results in the plan's return order (σ2 of \[BBLRR01\] §4.2, the
//!   same order under \[AJ88\]'s Order Maintenance Theorem). This is the schedule
//!   the models assume ("one communication at a time", \[AJ88\] §2.1, §3.2).
//! * [`Dispatch::AllAtOnce`] — the "naive" approach of \[AJ88\] §3.4: all inputs
//!   are posted at once and results taken as they arrive.
//!
//! [`measure_worker_costs`] measures what the planners need, so that
//! nothing is ever *told* to the library: each worker's link to the master
//! (the ping-pong of [`crate::runtime::netprobe`], Hockney fit) and its
//! compute time per unit (timing the application's own kernel on a sample).
//!
//! Every function here is collective over the communicator. Waiting ranks
//! probe and sleep instead of spinning, so that ranks sharing a core (the
//! emulated heterogeneity of `docs/architecture.md`) leave it to the ones computing.

use std::time::{Duration, Instant};

use mpi::point_to_point::MatchedReceiveVec;

use super::watchdog::{check_entry, Checkpoints};
use mpi::traits::*;
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::plan::divisible::{AffineCost, DivisiblePlan, WorkerCosts};
use crate::plan::tasks::TaskSchedule;
use crate::runtime::comm::{agree, all_gather_values, bcast_value};
use crate::runtime::netprobe::link_to_root;
use crate::speed::network::ProbeConfig;

use crate::runtime::tags::{MW_INPUT as TAG_INPUT, MW_RESULT as TAG_RESULT};

/// How the master dispatches the inputs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Dispatch {
    /// One message at a time in the send order; results in the return order.
    OneAtATime,
    /// All inputs posted at once; results received as they arrive.
    AllAtOnce,
}

/// What each rank does in one master–worker run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExecPlan {
    /// Units of work of each rank (index = rank; 0 for the master and for
    /// idle workers, which receive nothing).
    pub units: Vec<u64>,
    /// Ranks in the order the master sends their inputs.
    pub send_order: Vec<i32>,
    /// Ranks in the order the master receives their results.
    pub return_order: Vec<i32>,
    /// Dispatch mode.
    pub dispatch: Dispatch,
}

impl ExecPlan {
    /// Worker ranks of a communicator of `size` ranks: all but `master`.
    pub fn worker_ranks(size: i32, master: i32) -> Vec<i32> {
        (0..size).filter(|&r| r != master).collect()
    }

    /// From a task schedule of \[BBLRR01\] §4 whose workers are the ranks other than
    /// `master`, in rank order: send order σ1, return order σ2 (or σ1).
    pub fn from_task_schedule(s: &TaskSchedule, size: i32, master: i32) -> Result<Self> {
        let ranks = Self::worker_ranks(size, master);
        if ranks.len() != s.counts.len() {
            return Err(Error::shape_mismatch(format!(
                "{} workers in the schedule, {} worker ranks",
                s.counts.len(),
                ranks.len()
            )));
        }
        let mut units = vec![0; size as usize];
        for (i, &r) in ranks.iter().enumerate() {
            units[r as usize] = s.counts[i];
        }
        Ok(Self {
            units,
            send_order: s.send_sequence().iter().map(|&i| ranks[i]).collect(),
            return_order: s.return_sequence().iter().map(|&i| ranks[i]).collect(),
            dispatch: Dispatch::OneAtATime,
        })
    }

    /// From integer pieces of a divisible plan (\[AJ88\]): `pieces[k]` units for
    /// the `k`-th worker of `plan.order` (indices into `worker_ranks`);
    /// outputs in the input order (Order Maintenance).
    pub fn from_pieces(
        plan: &DivisiblePlan,
        pieces: &[u64],
        worker_ranks: &[i32],
        size: i32,
    ) -> Result<Self> {
        if pieces.len() != plan.order.len() {
            return Err(Error::shape_mismatch(format!(
                "{} pieces for {} workers",
                pieces.len(),
                plan.order.len()
            )));
        }
        let mut units = vec![0; size as usize];
        let mut order = Vec::new();
        for (&w, &u) in plan.order.iter().zip(pieces) {
            let r = *worker_ranks
                .get(w)
                .ok_or_else(|| Error::invalid_plan(format!("worker {w} has no rank")))?;
            units[r as usize] = u;
            order.push(r);
        }
        Ok(Self {
            units,
            send_order: order.clone(),
            return_order: order,
            dispatch: Dispatch::OneAtATime,
        })
    }

    /// `total` units split as equally as possible over `worker_ranks`, sent
    /// in rank order: the naive (`AllAtOnce`) and semi-naive (`OneAtATime`)
    /// splits of \[AJ88\] §3.4–3.5.
    pub fn equal(total: u64, worker_ranks: &[i32], size: i32, dispatch: Dispatch) -> Self {
        let n = worker_ranks.len().max(1) as u64;
        let mut units = vec![0; size as usize];
        for (k, &r) in worker_ranks.iter().enumerate() {
            units[r as usize] = total / n + u64::from((k as u64) < total % n);
        }
        Self {
            units,
            send_order: worker_ranks.to_vec(),
            return_order: worker_ranks.to_vec(),
            dispatch,
        }
    }

    /// First unit of each rank: units are laid out contiguously in send order.
    pub fn offsets(&self) -> Vec<u64> {
        let mut off = vec![0; self.units.len()];
        let mut next = 0;
        for &r in &self.send_order {
            if let (Some(o), Some(&u)) = (off.get_mut(r as usize), self.units.get(r as usize)) {
                *o = next;
                next += u;
            }
        }
        off
    }

    /// Checks the plan for a communicator of `size` ranks.
    pub fn check(&self, size: i32, master: i32) -> Result<()> {
        if master < 0
            || master >= size
            || self.units.len() != size as usize
            || self.units[master as usize] != 0
        {
            return Err(Error::invalid_plan(
                "one unit count per rank, 0 for the master",
            ));
        }
        for order in [&self.send_order, &self.return_order] {
            let mut seen = vec![false; size as usize];
            for &r in order {
                if r < 0
                    || r >= size
                    || r == master
                    || std::mem::replace(&mut seen[r as usize], true)
                {
                    return Err(Error::invalid_plan(format!("bad rank {r} in an order")));
                }
            }
            if (0..size).any(|r| self.units[r as usize] > 0 && !seen[r as usize]) {
                return Err(Error::invalid_plan(
                    "a busy worker is missing from an order",
                ));
            }
        }
        Ok(())
    }
}

/// Waits for a message with `tag` from `src` without spinning: probes, and
/// sleeps 50 µs between probes, so that a waiting rank leaves its core to
/// ranks that compute (ranks may share cores). Returns the message and its
/// source rank.
fn receive_politely<S: Source>(src: &S, tag: i32) -> (Vec<f64>, i32) {
    loop {
        if let Some(ms) = src.immediate_matched_probe_with_tag(tag) {
            let status = ms.1;
            let (data, _) = ms.matched_receive_vec::<f64>();
            return (data, status.source_rank());
        }
        std::thread::sleep(Duration::from_micros(50));
    }
}

/// Timings of one run, known on every rank.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExecReport {
    /// Wall time at the master from the start (after a barrier) to the last
    /// result received, seconds.
    pub makespan: f64,
    /// Per rank: time at which its input was sent (master clock), seconds.
    pub input_sent: Vec<f64>,
    /// Per rank: time at which its result was received (master clock).
    pub result_received: Vec<f64>,
    /// Per rank: its own compute time, seconds.
    pub compute: Vec<f64>,
}

/// Runs one master–worker execution of `plan`.
///
/// * `make_input(rank, first_unit, units)` (master only) builds the input
///   message of a worker;
/// * `compute(input, units)` (workers) returns the result message;
/// * `on_result(rank, first_unit, result)` (master) consumes a result.
///
/// Workers with 0 units take no part. Collective over `comm`; an invalid
/// plan is the same `Err` on every rank.
pub fn run_master_worker<C, FI, FC, FR>(
    comm: &C,
    master: i32,
    plan: &ExecPlan,
    mut make_input: FI,
    mut compute: FC,
    mut on_result: FR,
) -> Result<ExecReport>
where
    C: Communicator,
    FI: FnMut(i32, u64, u64) -> Vec<f64>,
    FC: FnMut(&[f64], u64) -> Vec<f64>,
    FR: FnMut(i32, u64, Vec<f64>),
{
    // Point-to-point messages travel on nuce's own duplicate (tags never
    // meet the application's); the time is communication, not compute.
    // (A section that does not read its own time off the CPU: the run
    // includes the workers' compute and the master's polite sleeps.)
    let _w = crate::runtime::clock::polling();
    let comm = &comm.duplicate();
    // The checked entry first (bounded by the timeout): a plan that does not
    // fit on a rank is its refusal, and every rank must run the same plan
    // with the same master (the call names both).
    let (print, unprintable) = match crate::runtime::comm::fingerprint(plan) {
        Ok(p) => (p, None),
        Err(e) => (0, Some(e)),
    };
    Checkpoints::entered(
        comm,
        &format!("run_master_worker(master {master}, plan {print:016x})"),
        plan.check(comm.size(), master).err().or(unprintable),
    )?;
    let size = comm.size() as usize;
    let me = comm.rank();
    let offsets = plan.offsets();
    let mut input_sent = vec![0.0; size];
    let mut result_received = vec![0.0; size];
    let mut my_compute = 0.0;
    let _span = tracing::debug_span!("master_worker", rank = me).entered();
    comm.barrier();
    let t0 = Instant::now();
    if me == master {
        match plan.dispatch {
            Dispatch::OneAtATime => {
                for &r in &plan.send_order {
                    let u = plan.units[r as usize];
                    if u > 0 {
                        let msg = make_input(r, offsets[r as usize], u);
                        comm.process_at_rank(r).send_with_tag(&msg[..], TAG_INPUT);
                        input_sent[r as usize] = t0.elapsed().as_secs_f64();
                    }
                }
                for &r in &plan.return_order {
                    if plan.units[r as usize] > 0 {
                        let (msg, _) = receive_politely(&comm.process_at_rank(r), TAG_RESULT);
                        result_received[r as usize] = t0.elapsed().as_secs_f64();
                        on_result(r, offsets[r as usize], msg);
                    }
                }
            }
            Dispatch::AllAtOnce => {
                let busy: Vec<i32> = plan
                    .send_order
                    .iter()
                    .copied()
                    .filter(|&r| plan.units[r as usize] > 0)
                    .collect();
                let msgs: Vec<Vec<f64>> = busy
                    .iter()
                    .map(|&r| make_input(r, offsets[r as usize], plan.units[r as usize]))
                    .collect();
                mpi::request::multiple_scope(busy.len(), |scope, coll| {
                    for (&r, m) in busy.iter().zip(&msgs) {
                        coll.add(comm.process_at_rank(r).immediate_send_with_tag(
                            scope,
                            &m[..],
                            TAG_INPUT,
                        ));
                    }
                    let mut results = Vec::new();
                    for _ in 0..busy.len() {
                        let (msg, r) = receive_politely(&comm.any_process(), TAG_RESULT);
                        result_received[r as usize] = t0.elapsed().as_secs_f64();
                        results.push((r, msg));
                    }
                    coll.wait_all(&mut Vec::new());
                    for (r, msg) in results {
                        on_result(r, offsets[r as usize], msg);
                    }
                });
            }
        }
    } else if plan.units[me as usize] > 0 {
        let u = plan.units[me as usize];
        let (msg, _) = receive_politely(&comm.process_at_rank(master), TAG_INPUT);
        let tc = Instant::now();
        let out = compute(&msg, u);
        my_compute = tc.elapsed().as_secs_f64();
        comm.process_at_rank(master)
            .send_with_tag(&out[..], TAG_RESULT);
    }
    let makespan = if me == master {
        t0.elapsed().as_secs_f64()
    } else {
        0.0
    };
    let compute_all: Vec<f64> = all_gather_values(comm, &my_compute)?;
    let times = (me == master).then_some((makespan, input_sent, result_received));
    let (makespan, input_sent, result_received) = bcast_value(comm, master, times.as_ref())?;
    Ok(ExecReport {
        makespan,
        input_sent,
        result_received,
        compute: compute_all,
    })
}

/// Message sizes of a divisible job, in bytes, as affine functions of the
/// number of units: input `fixed + per_unit·u`, output likewise.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct MessageSizes {
    /// Bytes sent to every worker whatever its share (e.g. a shared matrix).
    pub input_fixed: usize,
    /// Input bytes per unit.
    pub input_per_unit: usize,
    /// Output bytes per unit.
    pub output_per_unit: usize,
}

/// Measures every worker's costs for a divisible job of `total_units`:
/// its link to `master` by ping-pong (Hockney's `τ + B/β`, large message =
/// the input of an equal share) and its compute time per unit by running
/// `sample(sample_units)` back to back for `window` (all workers at once,
/// after a barrier, so that ranks sharing cores are measured sharing them,
/// as they will run). Returns on every rank the [`WorkerCosts`] of each
/// non-master rank in rank order, with sizes as fractions of the whole job
/// (`s = units / total_units`), as the LP of \[AJ88\] eq. (7) expects.
/// Collective.
pub fn measure_worker_costs<C, F>(
    comm: &C,
    master: i32,
    total_units: u64,
    sizes: MessageSizes,
    sample_units: u64,
    window: Duration,
    mut sample: F,
) -> Result<Vec<WorkerCosts>>
where
    C: Communicator,
    F: FnMut(u64) -> Duration,
{
    // Every rank must measure the same job (sizes, units, master).
    check_entry(
        comm,
        &format!(
            "measure_worker_costs(master {master}, {total_units} units, {sizes:?}, \
             sample {sample_units} units, window {window:?})"
        ),
    )?;
    let workers = (comm.size() - 1).max(1) as u64;
    let large = (sizes.input_fixed + sizes.input_per_unit * (total_units / workers) as usize)
        .clamp(64, 64 << 20);
    let cfg = ProbeConfig {
        small_bytes: 8,
        large_bytes: large,
        warmup: 2,
        repeats: 7,
    };
    let link = link_to_root(comm, master, &cfg)?;
    comm.barrier();
    let local = if comm.rank() == master {
        Ok(None)
    } else if sample_units == 0 {
        Err(Error::invalid_input("sample_units must be >= 1"))
    } else {
        let t0 = Instant::now();
        let mut busy = Duration::ZERO;
        let mut done = 0u64;
        while done == 0 || t0.elapsed() < window {
            busy += sample(sample_units);
            done += sample_units;
        }
        Ok(Some(busy.as_secs_f64() / done as f64))
    };
    let per_unit = agree(comm, master, local)?;
    // Per rank: (compute seconds per unit, (latency, bandwidth)).
    type Measured = (Option<f64>, Option<(f64, f64)>);
    let all: Vec<Measured> = all_gather_values(
        comm,
        &(
            per_unit,
            link.map(|l| (l.latency_s, l.bandwidth_bytes_per_s)),
        ),
    )?;
    let total = total_units as f64;
    Ok(all
        .into_iter()
        .enumerate()
        .filter(|(r, _)| *r as i32 != master)
        .map(|(r, v)| match v {
            (Some(y), Some((tau, beta))) => WorkerCosts::new(
                AffineCost::new(
                    tau + sizes.input_fixed as f64 / beta,
                    sizes.input_per_unit as f64 * total / beta,
                ),
                AffineCost::new(0.0, y * total),
                AffineCost::new(tau, sizes.output_per_unit as f64 * total / beta),
            ),
            _ => Err(crate::plan::Error::Solver(format!(
                "rank {r}: no measurement"
            ))),
        })
        .collect::<crate::plan::Result<_>>()?)
}
