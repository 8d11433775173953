//! Ghost exchanges between balance points: nothing through the root, and
//! ranks that disagree still caught.
//!
//! * `exchange-root N` — `N` ghost exchanges of a 2D array and of a graph:
//!   prints `RESULT root-arrivals=K`, the checkpoint arrivals rank 0
//!   received during them (0 unless `NUCE_CHECK=full`), and checks the
//!   ghosts against the neighbours' values. Around all of it (from before
//!   `Balancer::new` to after a forced remap and a gather) every rank keeps
//!   messages of its own pending on the world communicator, one per tag nuce
//!   uses, to its right neighbour: each must arrive intact, after nuce's
//!   collectives, and nothing else may be waiting on the world communicator
//!   (nuce never sends on, nor receives from, the application's communicator).
//! * `exchange-faults CASE` — the last rank departs from the others between
//!   two balance points: `skip` (one exchange fewer before `maybe_remap`),
//!   `extra` (one more), `other` (exchanges another array, of ghost width 2,
//!   once), `gskip` (a graph: one exchange fewer), `slow` (computes for
//!   0.65 of the timeout before its second of 8 exchanges: its neighbours
//!   stop waiting for it), `refuse` (refuses its second exchange, as the C
//!   API does for a NULL buffer; every rank whose call fails prints
//!   `FAILED_AFTER rank SECONDS`, the time that call took). Every rank prints `ERR rank CASE error` for the
//!   first call that failed (or `OK rank CASE`), and for `slow` also
//!   `TIMEOUT rank RANKS` when that error is an `Error::Timeout` naming
//!   `RANKS`; run with a small `NUCE_TIMEOUT_S`. `exchange-faults CASE H`:
//!   the same over `H` emulated hosts (`set_hosts`, contiguous blocks), the
//!   checkpoints that the stuck exchanges join going through host leaders.

use mpi::traits::*;
use ndarray::Array2;
use nuce::internals::tags;
use nuce::internals::watchdog::arrivals_received;
use nuce::plan::graph::grid_graph;
use nuce::DistArray2;
use nuce::DistGraph;
use nuce::{Balancer, Error};

use crate::Ctx;

pub fn run(name: &str, ctx: &Ctx) -> bool {
    match name {
        "exchange-root" => root_messages(ctx),
        "exchange-faults" => faults(ctx),
        "exchange-keeps-core" => keeps_core(ctx),
        _ => return false,
    }
    true
}

/// Distinct value of global cell `(r, c)`.
fn value(r: usize, c: usize) -> f64 {
    (r * 1000 + c) as f64
}

fn balancer(ctx: &Ctx) -> Balancer {
    let mut bal = Balancer::new(&ctx.world).expect("balancer");
    bal.set_speeds(&vec![1.0; ctx.world.size() as usize])
        .expect("speeds");
    bal
}

/// The tags of the application's own messages: every tag nuce uses, and a
/// few of its ghost-exchange range.
fn own_tags() -> Vec<mpi::Tag> {
    let mut t = tags::ALL.to_vec();
    t.extend([
        0,
        tags::HALO_FIRST,
        tags::HALO_FIRST + 1,
        tags::HALO_FIRST + 7,
    ]);
    t
}

/// The payload of the application's message with tag `tag` from `from`.
fn own_payload(from: i32, tag: mpi::Tag) -> Vec<i64> {
    vec![
        from as i64,
        tag as i64,
        1_000_003 * from as i64 + tag as i64,
    ]
}

fn root_messages(ctx: &Ctx) {
    let p = ctx.world.size();
    let (right, left) = ((ctx.rank() + 1) % p, (ctx.rank() + p - 1) % p);
    let payloads: Vec<(mpi::Tag, Vec<i64>)> = own_tags()
        .into_iter()
        .map(|t| (t, own_payload(ctx.rank(), t)))
        .collect();
    mpi::request::scope(|scope| {
        let sends: Vec<_> = payloads
            .iter()
            .map(|(t, v)| {
                ctx.world
                    .process_at_rank(right)
                    .immediate_send_with_tag(scope, &v[..], *t)
            })
            .collect();
        nuce_calls(ctx);
        // The application's messages, untouched by nuce's collectives.
        let mut intact = Vec::new();
        for (t, _) in &payloads {
            let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
            let src = ctx.world.process_at_rank(left);
            while src.immediate_probe_with_tag(*t).is_none() && std::time::Instant::now() < deadline
            {
                std::thread::sleep(std::time::Duration::from_millis(1));
            }
            if src.immediate_probe_with_tag(*t).is_none() {
                intact.push(format!("tag {t:#x}: missing"));
                continue;
            }
            let (got, _) = src.receive_vec_with_tag::<i64>(*t);
            if got != own_payload(left, *t) {
                intact.push(format!("tag {t:#x}: {got:?}"));
            }
        }
        for s in sends {
            s.wait();
        }
        ctx.check(
            "own-messages-intact",
            intact.is_empty(),
            format!("{intact:?}"),
        );
        // Nothing else on the application's communicator.
        ctx.world.barrier();
        let stray = ctx.world.any_process().immediate_probe();
        ctx.check(
            "nothing-else-on-the-world-communicator",
            stray.is_none(),
            format!("{stray:?}"),
        );
    });
}

/// The balancer's collectives the `exchange-root` scenario calls between the
/// application's sends and receives.
fn nuce_calls(ctx: &Ctx) {
    let n: usize = ctx.arg(0, 50);
    let p = ctx.world.size();
    let (rows, cols) = (40, 30);
    let mut bal = balancer(ctx);
    let global = Array2::from_shape_fn((rows, cols), |(r, c)| value(r, c));
    let mut u =
        DistArray2::scatter(&mut bal, (ctx.rank() == 0).then_some(&global), 1).expect("scatter");
    let graph = (ctx.rank() == 0).then(|| grid_graph(rows, cols));
    let values = graph
        .as_ref()
        .map(|g| (0..g.n()).map(|v| v as f64).collect::<Vec<_>>());
    let mut g =
        DistGraph::scatter(&mut bal, graph.as_ref(), values.as_deref()).expect("scatter graph");
    let before = arrivals_received();
    for _ in 0..n {
        u.exchange_ghosts().expect("array exchange");
        g.exchange_ghosts().expect("graph exchange");
    }
    let during = arrivals_received() - before;
    if ctx.rank() == 0 {
        println!("RESULT root-arrivals={during}");
    }
    // The ghosts hold the neighbours' cells (inside the array).
    let r = u.rect();
    let pad = u.padded();
    let mut right = true;
    for i in 0..r.rows + 2 {
        for j in 0..r.cols + 2 {
            let (gr, gc) = ((r.row + i) as i64 - 1, (r.col + j) as i64 - 1);
            let inside = gr >= 0 && gc >= 0 && (gr as usize) < rows && (gc as usize) < cols;
            if inside && !r.is_empty() && pad[[i, j]] != value(gr as usize, gc as usize) {
                right = false;
            }
        }
    }
    ctx.check("exchange-root-array-ghosts", right, "a ghost cell differs");
    let ghosts_right = g
        .ghosts()
        .iter()
        .zip(g.ghost_values())
        .all(|(&id, &v)| v == id as f64);
    ctx.check(
        "exchange-root-graph-ghosts",
        ghosts_right,
        "a ghost value differs",
    );
    // A forced remap (rank 0 reports itself 5× faster), exchanges after it,
    // and gathers: the data survive.
    let slow = if ctx.rank() == 0 { 1 } else { 5 };
    let work = (r.rows * r.cols) as f64;
    bal.record_phase(work, std::time::Duration::from_millis(slow))
        .expect("record");
    let report = bal.maybe_remap(&mut u, 1).expect("maybe_remap");
    bal.maybe_remap(&mut g, 1).expect("graph maybe_remap");
    u.exchange_ghosts().expect("array exchange after the remap");
    g.exchange_ghosts().expect("graph exchange after the remap");
    let back = u.gather(0).expect("gather");
    let gback = g.gather(0).expect("graph gather");
    let same = back.is_none_or(|a| a == global)
        && gback.is_none_or(|v| v.iter().enumerate().all(|(i, &x)| x == i as f64));
    ctx.check(
        "exchange-root-remap-and-gather",
        (p == 1 || report.remap) && same,
        format!("remap {} same {same}", report.remap),
    );
}

/// The first error of a sequence of calls, as the line a rank prints.
fn outcome(ctx: &Ctx, case: &str, r: Result<(), Error>) {
    match r {
        Err(e) => println!("ERR {} {case} {e}", ctx.rank()),
        Ok(()) => println!("OK {} {case}", ctx.rank()),
    }
}

fn faults(ctx: &Ctx) {
    let case = ctx.args.first().cloned().unwrap_or_default();
    let odd = ctx.rank() == ctx.world.size() - 1 && ctx.world.size() > 1;
    let (rows, cols, iters) = (32, 24, 5);
    let mut bal = balancer(ctx);
    if let Some(h) = ctx.args.get(1).and_then(|h| h.parse::<usize>().ok()) {
        let p = ctx.world.size() as usize;
        bal.set_hosts(&crate::hierarchy::block_hosts(p, h))
            .expect("hosts");
    }
    let global = Array2::from_shape_fn((rows, cols), |(r, c)| value(r, c));
    let root_global = (ctx.rank() == 0).then_some(&global);
    let r = match case.as_str() {
        "skip" | "extra" => (|| {
            let mut u = DistArray2::scatter(&mut bal, root_global, 1)?;
            let n = match (odd, case.as_str()) {
                (true, "skip") => iters - 1,
                (true, _) => iters + 1,
                _ => iters,
            };
            for _ in 0..n {
                u.exchange_ghosts()?;
            }
            bal.maybe_remap(&mut u, iters).map(|_| ())
        })(),
        "other" => (|| {
            let mut a = DistArray2::scatter(&mut bal, root_global, 1)?;
            let mut b = DistArray2::scatter(&mut bal, root_global, 2)?;
            if odd {
                b.exchange_ghosts()?;
            } else {
                a.exchange_ghosts()?;
            }
            a.gather(0).map(|_| ())
        })(),
        "slow" => (|| {
            let mut u = DistArray2::scatter(&mut bal, root_global, 1)?;
            let timeout = nuce::internals::watchdog::timeout_from_env()?.unwrap_or_default();
            for k in 0..8 {
                if odd && k == 1 {
                    std::thread::sleep(timeout.mul_f64(0.65));
                }
                u.exchange_ghosts()?;
            }
            bal.maybe_remap(&mut u, 8).map(|_| ())
        })(),
        "refuse" => (|| {
            // The last rank refuses its second exchange (as the C API does
            // for a NULL buffer); the others make it. Each rank prints how
            // long its failing call took.
            let mut u = DistArray2::scatter(&mut bal, root_global, 1)?;
            for k in 0..iters {
                let start = std::time::Instant::now();
                let r = if odd && k == 1 {
                    Err(u.refuse_exchange(Error::invalid_input("exchange-faults: refused")))
                } else {
                    u.exchange_ghosts().map(|_| ())
                };
                if r.is_err() {
                    println!(
                        "FAILED_AFTER {} {:.3}",
                        ctx.rank(),
                        start.elapsed().as_secs_f64()
                    );
                }
                r?;
            }
            bal.maybe_remap(&mut u, iters).map(|_| ())
        })(),
        "gskip" => (|| {
            let graph = (ctx.rank() == 0).then(|| grid_graph(rows, cols));
            let values = graph.as_ref().map(|g| vec![1.0f64; g.n()]);
            let mut g = DistGraph::scatter(&mut bal, graph.as_ref(), values.as_deref())?;
            for _ in 0..iters - usize::from(odd) {
                g.exchange_ghosts()?;
            }
            bal.maybe_remap(&mut g, iters).map(|_| ())
        })(),
        other => {
            eprintln!("exchange-faults: unknown case {other:?}");
            std::process::exit(3);
        }
    };
    if let Err(Error::Timeout { ranks, .. }) = &r {
        println!("TIMEOUT {} {ranks:?}", ctx.rank());
    }
    outcome(ctx, &case, r);
}

/// This thread's CPU time from `/proc/thread-self/schedstat` (nanoseconds
/// on a CPU), `None` where the kernel does not provide it.
fn thread_cpu() -> Option<std::time::Duration> {
    let s = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    let ns: u64 = s.split_whitespace().next()?.parse().ok()?;
    Some(std::time::Duration::from_nanos(ns))
}

/// Another job on CPU `cpu`: this process (all its threads) pinned there
/// with `taskset`, and a busy loop pinned there beside it (a shell loop;
/// killed by the caller). `None` if `taskset` failed.
fn share_cpu_with_a_busy_loop(cpu: usize) -> Option<std::process::Child> {
    use std::process::{Command, Stdio};
    let c = cpu.to_string();
    let pinned = Command::new("taskset")
        .args(["-a", "-p", "-c", &c, &std::process::id().to_string()])
        .stdout(Stdio::null())
        .status()
        .ok()?
        .success();
    if !pinned {
        return None;
    }
    Command::new("taskset")
        .args(["-c", &c, "sh", "-c", "while :; do :; done"])
        .spawn()
        .ok()
}

/// `exchange-keeps-core [rounds] [seconds]` (2 ranks): rank 0 shares its
/// core (CPU 0) with a busy loop (another job on that core); rank 1 sleeps `seconds` (default 0.4) before it sends, while
/// rank 0 waits for it — alternately in `DistArray2::exchange_ghosts` and
/// in a plain blocking `MPI_Recv` — and rank 0 measures the share of the
/// wait its thread spent on a CPU. Rank 0 prints `RESULT keeps-core nuce=S
/// mpi=S` (the median shares over `rounds`, default 3): nuce's waits must
/// keep the core as an MPI wait does (they poll, never sleep, and yield
/// only when the job oversubscribes the host), so that a rank whose core
/// another process shares does not give it away while it waits.
fn keeps_core(ctx: &Ctx) {
    use std::time::{Duration, Instant};
    let rounds: usize = ctx.arg(0, 3);
    let nap = Duration::from_secs_f64(ctx.arg(1, 0.4));
    if ctx.world.size() != 2 {
        ctx.check("two-ranks", false, "exchange-keeps-core runs on 2 ranks");
        return;
    }
    let mut bal = balancer(ctx);
    let global = (ctx.rank() == 0).then(|| Array2::from_shape_fn((64, 64), |(r, c)| value(r, c)));
    let mut u = DistArray2::scatter(&mut bal, global.as_ref(), 1).expect("scatter");
    let share = |wait: &mut dyn FnMut()| -> Option<f64> {
        let (t, c) = (Instant::now(), thread_cpu()?);
        wait();
        let (wall, cpu) = (t.elapsed(), thread_cpu()? - c);
        Some(cpu.as_secs_f64() / wall.as_secs_f64())
    };
    let mut busy = if ctx.rank() == 0 {
        share_cpu_with_a_busy_loop(0)
    } else {
        None
    };
    let (mut nuce, mut mpi) = (Vec::new(), Vec::new());
    for _ in 0..rounds {
        if ctx.rank() == 1 {
            std::thread::sleep(nap);
            u.exchange_ghosts().expect("exchange");
            std::thread::sleep(nap);
            ctx.world.process_at_rank(0).send(&1u8);
        } else {
            nuce.push(share(&mut || {
                u.exchange_ghosts().expect("exchange");
            }));
            mpi.push(share(&mut || {
                let (_x, _) = ctx.world.process_at_rank(1).receive::<u8>();
            }));
        }
    }
    if let Some(b) = busy.as_mut() {
        b.kill().ok();
        b.wait().ok();
    }
    if ctx.rank() == 0 {
        let median = |v: &mut Vec<Option<f64>>| -> Option<f64> {
            let mut v: Vec<f64> = v.iter().copied().collect::<Option<_>>()?;
            v.sort_by(f64::total_cmp);
            Some(v[v.len() / 2])
        };
        match (median(&mut nuce), median(&mut mpi)) {
            (Some(n), Some(m)) => println!("RESULT keeps-core nuce={n:.3} mpi={m:.3}"),
            _ => println!("RESULT keeps-core unavailable"),
        }
    }
    ctx.check("keeps-core-ran", true, "");
}
