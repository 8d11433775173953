//! Scenarios for the collective matching scheduler and the master–worker
//! executor (\[BBLRR01\] §4, \[AJ88\]).
//!
//! * `tasks-auction <seed> <instances>` — random integer rows, one per rank
//!   (and again with rank 0 as a master without a row): the collective
//!   auction must give every rank the same assignment, equal to the
//!   sequential auction and optimal (Kuhn–Munkres value).
//! * `tasks-maxtasks1 <deadline>` — workers measure their cycle time (a
//!   Monte Carlo task, rank r repeating it r times) and their link to the
//!   master; the collective MaxTasks1 schedule must equal the sequential
//!   matching on the gathered measurements; the executor then runs it, and
//!   a MaxTasks2 (2-factor) schedule of the same platform, and every task
//!   must be computed exactly once, results received in the return order.
//!   The MaxTasks1 schedule and its run go through a `Balancer`
//!   (`schedule_tasks`, `master_worker`); the MaxTasks2 run calls the
//!   executor directly.
//! * `tasks-bad` — a rank with a wrong row length: the same error everywhere.

use std::time::Instant;

use mpi::traits::*;
use nuce::collective::all_gather_values;
use nuce::internals::auction::collective_assignment;
use nuce::internals::netprobe::link_to_root;
use nuce::plan::tasks::auction::auction;
use nuce::plan::tasks::matching::Assignment;
use nuce::plan::tasks::{
    AssignmentSolver, Matching, MaxTasksSolver, TaskPlatform, TaskSchedule, TwoFactor,
};
use nuce::speed::network::ProbeConfig;
use nuce::{run_master_worker, Balancer, ExecPlan, WorkerSelf};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::Ctx;

/// Runs a `tasks-*` scenario; false when the name is unknown.
pub fn run(name: &str, ctx: &Ctx) -> bool {
    match name {
        "tasks-auction" => auction_scenario(ctx),
        "tasks-maxtasks1" => maxtasks1_scenario(ctx),
        "tasks-bad" => bad_scenario(ctx),
        _ => return false,
    }
    true
}

fn auction_scenario(ctx: &Ctx) {
    let seed: u64 = ctx.arg(0, 1);
    let instances: usize = ctx.arg(1, 10);
    let size = ctx.world.size() as usize;
    for inst in 0..instances {
        for with_master in [false, true] {
            let persons = if with_master { size - 1 } else { size };
            if persons == 0 {
                continue;
            }
            // Every rank draws the full matrix from the same seed and keeps its
            // own row only for the collective call.
            let mut rng = ChaCha8Rng::seed_from_u64(seed * 1000 + inst as u64);
            let w: Vec<Vec<i64>> = (0..persons)
                .map(|_| (0..persons).map(|_| rng.gen_range(-3..60)).collect())
                .collect();
            let me = ctx.rank() as usize;
            let person = if with_master {
                me.checked_sub(1)
            } else {
                Some(me)
            };
            let row = person.map(|i| w[i].as_slice());
            let name = format!(
                "auction-{inst}-{}",
                if with_master { "master" } else { "all" }
            );
            match collective_assignment(&ctx.world, row) {
                Ok(objects) => {
                    let got: Vec<usize> = objects.iter().flatten().copied().collect();
                    let seq = auction(persons, |i, j| w[i][j]).expect("sequential auction");
                    let value: i64 = got.iter().enumerate().map(|(i, &j)| w[i][j]).sum();
                    let (opt, _) = Assignment::new(persons, |i, j| w[i][j])
                        .solve(AssignmentSolver::KuhnMunkres)
                        .expect("kuhn_munkres");
                    let same: Vec<Vec<usize>> =
                        all_gather_values(&ctx.world, &got).expect("all_gather");
                    ctx.check(
                        &name,
                        got == seq && value == opt && same.iter().all(|g| *g == got),
                        format!("got {got:?} seq {seq:?} value {value} opt {opt}"),
                    );
                    if ctx.rank() == 0 {
                        println!("RESULT {name} value {value} optimum {opt}");
                    }
                }
                Err(e) => ctx.check(&name, false, e),
            }
        }
    }
}

/// One Monte Carlo task: `SAMPLES` points, returns the hits in the unit disc.
fn mc_task(task: u64, repeat: u64) -> f64 {
    const SAMPLES: u32 = 20_000;
    let mut hits = 0u32;
    for _ in 0..repeat {
        let mut rng = ChaCha8Rng::seed_from_u64(task);
        hits = (0..SAMPLES)
            .filter(|_| {
                let (x, y): (f64, f64) = (rng.gen(), rng.gen());
                x * x + y * y <= 1.0
            })
            .count() as u32;
    }
    hits as f64
}

fn maxtasks1_scenario(ctx: &Ctx) {
    let deadline: f64 = ctx.arg(0, 0.5);
    let comm = &ctx.world;
    let master = 0;
    let repeat = ctx.rank().max(1) as u64; // emulated heterogeneity
                                           // Measure: a task's time (median of 5) and the link to the master.
    let cycle_time = {
        let mut t: Vec<f64> = (0..5)
            .map(|k| {
                let t0 = Instant::now();
                std::hint::black_box(mc_task(k, repeat));
                t0.elapsed().as_secs_f64()
            })
            .collect();
        t.sort_by(f64::total_cmp);
        t[2]
    };
    let cfg = ProbeConfig {
        small_bytes: 8,
        large_bytes: 64,
        warmup: 2,
        repeats: 5,
    };
    let link = link_to_root(comm, master, &cfg).expect("netprobe");
    let me = link.map(|l| WorkerSelf {
        cycle_time,
        tcom: l.transfer_time(16),
    });
    let mut bal = match Balancer::new(comm) {
        Ok(b) => b,
        Err(e) => return ctx.check("maxtasks1-balancer", false, e),
    };
    let (platform, sched) = match nuce::schedule_tasks(&mut bal, me, deadline) {
        Ok(s) => s,
        Err(e) => return ctx.check("maxtasks1-collective", false, e),
    };
    // The sequential solver on the gathered measurements, independently.
    let gathered: Vec<Option<(f64, f64)>> =
        all_gather_values(comm, &me.map(|w| (w.cycle_time, w.tcom))).expect("gather");
    let cycles: Vec<f64> = gathered.iter().flatten().map(|w| w.0).collect();
    let tcom = gathered.iter().flatten().map(|w| w.1).fold(0.0, f64::max);
    ctx.check(
        "maxtasks1-platform",
        platform.cycle_times == cycles && platform.tcom == tcom,
        format!("{platform:?}"),
    );
    let seq = Matching::default().max_tasks(
        &TaskPlatform::new(cycles, tcom, 0.0).expect("platform"),
        deadline,
    );
    let all: Vec<Vec<u64>> = all_gather_values(comm, &sched.counts).expect("gather");
    ctx.check(
        "maxtasks1-same-everywhere",
        all.iter().all(|c| *c == sched.counts),
        "schedules differ",
    );
    match seq {
        Ok(s) => ctx.check(
            "maxtasks1-equals-sequential",
            s.total() == sched.total(),
            format!("collective {} sequential {}", sched.total(), s.total()),
        ),
        Err(e) => ctx.check("maxtasks1-equals-sequential", false, e),
    }
    execute(ctx, &sched, "maxtasks1", repeat, Some(&mut bal));
    // MaxTasks2 on the same measurements (results cost as much as inputs):
    // the executor must receive the results in the second order σ2.
    let pf2 = TaskPlatform::new(platform.cycle_times.clone(), platform.tcom, platform.tcom)
        .expect("platform");
    match (TwoFactor {
        refine: true,
        ..TwoFactor::default()
    })
    .max_tasks(&pf2, deadline)
    {
        Ok(s2) => execute(ctx, &s2, "maxtasks2", repeat, None),
        Err(e) => ctx.check("maxtasks2-plan", false, e),
    }
}

/// Runs a task schedule with the executor: input = [first task, count],
/// result = hits per task. Checks that every task ran exactly once with the
/// right value and that results arrived in the schedule's return order.
/// Through `bal` (its root is the master) when given, else the executor
/// directly on the world communicator.
fn execute(ctx: &Ctx, sched: &TaskSchedule, name: &str, repeat: u64, bal: Option<&mut Balancer>) {
    let comm = &ctx.world;
    let master = 0;
    let plan = ExecPlan::from_task_schedule(sched, comm.size(), master).expect("exec plan");
    let mut results: Vec<(u64, Vec<f64>)> = Vec::new();
    let input = |_: i32, first: u64, n: u64| vec![first as f64, n as f64];
    let compute = |input: &[f64], _: u64| -> Vec<f64> {
        let (first, n) = (input[0] as u64, input[1] as u64);
        (first..first + n).map(|t| mc_task(t, repeat)).collect()
    };
    let keep = |_: i32, first: u64, result: Vec<f64>| results.push((first, result));
    let report = match bal {
        Some(b) => plan.run(b, input, compute, keep),
        None => run_master_worker(comm, master, &plan, input, compute, keep),
    };
    let r = match report {
        Ok(r) => r,
        Err(e) => return ctx.check(&format!("{name}-exec"), false, e),
    };
    if ctx.rank() != master {
        return;
    }
    // Verify outside the timed run: every task exactly once, right values.
    let mut done = vec![0u32; sched.total() as usize];
    let mut ok_values = true;
    for (first, result) in &results {
        for (k, &hits) in result.iter().enumerate() {
            let t = *first as usize + k;
            if let Some(d) = done.get_mut(t) {
                *d += 1;
            }
            ok_values &= hits == mc_task(t as u64, 1);
        }
    }
    ctx.check(
        &format!("{name}-executed-once"),
        done.iter().all(|&d| d == 1) && ok_values,
        format!("{done:?}"),
    );
    let busy: Vec<i32> = plan
        .return_order
        .iter()
        .copied()
        .filter(|&q| plan.units[q as usize] > 0)
        .collect();
    let in_order = busy
        .windows(2)
        .all(|w| r.result_received[w[0] as usize] <= r.result_received[w[1] as usize]);
    ctx.check(
        &format!("{name}-return-order"),
        in_order,
        format!("{:?}", r.result_received),
    );
    println!(
        "RESULT {name} tasks {} predicted {:.4} measured {:.4}",
        sched.total(),
        sched.makespan,
        r.makespan
    );
}

fn bad_scenario(ctx: &Ctx) {
    let size = ctx.world.size() as usize;
    let len = if ctx.rank() == 1 { size + 1 } else { size };
    let row = vec![1i64; len];
    let res = collective_assignment(&ctx.world, Some(&row));
    let msg = format!("{res:?}");
    let all: Vec<String> = all_gather_values(&ctx.world, &msg).expect("gather");
    ctx.check(
        "bad-row-same-error",
        res.is_err() && all.iter().all(|m| *m == msg),
        msg.clone(),
    );
}
