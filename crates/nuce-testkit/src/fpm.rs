//! The functional speed model on modelled speeds: a rank whose speed drops
//! above a knee of its block size. Every rank sleeps its modelled compute
//! time instead of computing, so that the plans depend on the model and
//! hardly on the load of the machine (a sleep is late by the scheduler's
//! latency, not by the share of a core). And memory limits read from the
//! machine (`fpm-memory`).

use std::time::Duration;

use mpi::traits::*;

use nuce::{Balancer, DistArray2};

use crate::Ctx;

pub fn run(name: &str, ctx: &Ctx) -> bool {
    match name {
        "fpm-knee" => knee(ctx),
        "fpm-memory" => memory(ctx),
        _ => return false,
    }
    true
}

/// Cells per second of every rank below the knee: a phase of the even
/// split sleeps 0.13 s.
const SPEED: f64 = 1.0e7;

/// `fpm-knee [functional 0|1] [phases] [knee] [slowdown]`: a 512 × 512
/// array on every rank of the world; the last rank is `slowdown` times
/// slower (default 3) while its block has more than `knee` cells (default
/// 100 000; the even split of 2 ranks gives it 131 072). Every phase of 10
/// iterations sleeps the model's time, ±1 % of deterministic jitter, and
/// the balancer times it as it times an application's phase. Rank 0
/// prints one `RESULT knee` line a phase: the speed model of the decision,
/// whether it remapped, and the last rank's cells during the phase.
fn knee(ctx: &Ctx) {
    let functional = ctx.arg(0, 1u32) == 1;
    let phases = ctx.arg(1, 10usize);
    let knee = ctx.arg(2, 100_000usize);
    let slowdown = ctx.arg(3, 3.0f64);
    let (rank, p) = (ctx.rank() as usize, ctx.world.size() as usize);
    let mut bal = Balancer::new(&ctx.world).expect("balancer");
    bal.configure(nuce::Settings {
        functional_model: functional,
        ..bal.settings().clone()
    })
    .expect("settings");
    let mut a: DistArray2<f64> = DistArray2::new(&mut bal, 512, 512, 0).expect("array");
    let iters = 10;
    for phase in 0..phases {
        let cells = a.rect().area();
        let last = a.plan().areas()[p - 1];
        let slow = rank == p - 1 && cells > knee;
        let speed = if slow { SPEED / slowdown } else { SPEED };
        let jitter = 1.0 + 0.005 * ((phase * 7 + rank * 3) % 5) as f64 - 0.01;
        let work = (cells * iters) as f64;
        std::thread::sleep(Duration::from_secs_f64(work / speed * jitter));
        let report = bal.maybe_remap(&mut a, iters).expect("maybe_remap");
        if rank == 0 {
            println!(
                "RESULT knee phase={phase} model={:?} remapped={} cells={last}",
                report.model, report.decision.remap
            );
        }
    }
    let areas = a.plan().areas();
    ctx.check(
        "knee-tiling",
        areas.iter().sum::<usize>() == 512 * 512 && areas[rank] == a.rect().area(),
        format!("{areas:?}"),
    );
}

/// The machine's memory in bytes from `/proc/meminfo` (`MemTotal`, kB):
/// the oracle, independent of hwloc.
fn mem_total() -> Option<f64> {
    let info = std::fs::read_to_string("/proc/meminfo").ok()?;
    let kb: f64 = info
        .lines()
        .find_map(|l| l.strip_prefix("MemTotal:"))?
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .ok()?;
    Some(kb * 1024.0)
}

/// `fpm-memory`: `Balancer::set_memory_limit_from_machine` on every rank of
/// the world. The limit of 16-byte cells is positive, at most the machine's
/// memory (`/proc/meminfo`) over the ranks on the host (MPI's shared-memory
/// split), and known to every rank; a limit that binds (cells of a size
/// that makes it about 60 % of a 200 × 200 array, rank 0 four times
/// faster) holds in the plans of the array and of 40 000 units in 1D.
/// Then bad input, one `ERR <rank> <case> <error or none>` line per case:
/// `nan-one-rank` (bytes per cell NaN on the last rank), `fraction-root`
/// (fraction 1.5 on rank 0), `no-cell` (cells larger than the memory),
/// `too-small` (limits of 10 000 cells each, then the 200 × 200 plan).
fn memory(ctx: &Ctx) {
    let w = &ctx.world;
    let (rank, p) = (ctx.rank(), w.size() as usize);
    let on_host = w.split_shared(w.rank()).size() as f64;
    let mut bal = Balancer::new(w).expect("balancer");
    let cells = bal
        .set_memory_limit_from_machine(16.0, 1.0)
        .expect("a limit from the machine");
    ctx.check("memory-positive", cells > 0, cells);
    match mem_total() {
        Some(total) => ctx.check(
            "memory-within-the-host-share",
            cells as f64 * 16.0 <= total / on_host,
            format!("{cells} cells of 16 bytes, {total} bytes over {on_host} ranks"),
        ),
        None => println!("RESULT {rank} no /proc/meminfo: the limit is unchecked"),
    }
    let limits = bal.measured().memory_limits().map(<[usize]>::to_vec);
    ctx.check(
        "memory-limit-known",
        limits.as_ref().and_then(|l| l.get(rank as usize)) == Some(&cells)
            && limits.as_ref().map(Vec::len) == Some(p),
        format!("{limits:?}"),
    );
    // Cells of a size that makes the limit about 24 000 cells.
    let machine = nuce::speed::machine_memory().expect("hwloc's memory") as f64;
    let big = machine / on_host / 24_000.0;
    let cells = bal
        .set_memory_limit_from_machine(big, 1.0)
        .expect("a binding limit");
    ctx.check(
        "memory-binding-limit",
        (23_000..=24_000).contains(&cells),
        cells,
    );
    let speeds: Vec<f64> = (0..p).map(|r| if r == 0 { 4.0 } else { 1.0 }).collect();
    bal.set_speeds(&speeds).expect("speeds");
    let limits = bal.measured().memory_limits().expect("limits").to_vec();
    let areas = bal.plan(200, 200).expect("plan within the limits").areas();
    ctx.check(
        "memory-plan-within-limits",
        areas.iter().zip(&limits).all(|(a, l)| a <= l) && areas.iter().sum::<usize>() == 40_000,
        format!("{areas:?} vs {limits:?}"),
    );
    let counts = bal.plan1d(40_000).expect("plan1d within the limits");
    ctx.check(
        "memory-plan1d-within-limits",
        counts.iter().zip(&limits).all(|(c, l)| c <= l),
        format!("{counts:?} vs {limits:?}"),
    );
    let last = rank as usize == p - 1;
    let cases: [(&str, f64, f64); 3] = [
        ("nan-one-rank", if last { f64::NAN } else { 16.0 }, 0.5),
        ("fraction-root", 16.0, if rank == 0 { 1.5 } else { 0.5 }),
        ("no-cell", 1e300, 1.0),
    ];
    for (case, bytes, fraction) in cases {
        match bal.set_memory_limit_from_machine(bytes, fraction) {
            Ok(c) => println!("ERR {rank} {case} none ({c} cells)"),
            Err(e) => println!("ERR {rank} {case} {e}"),
        }
    }
    let small = machine / on_host / 10_000.0;
    match bal
        .set_memory_limit_from_machine(small, 1.0)
        .and_then(|_| bal.plan(200, 200))
    {
        Ok(_) => println!("ERR {rank} too-small none"),
        Err(e) => println!("ERR {rank} too-small {e}"),
    }
}
