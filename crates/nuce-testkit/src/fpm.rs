//! The functional speed model on modelled speeds: a rank whose speed drops
//! above a knee of its block size. Every rank sleeps its modelled compute
//! time instead of computing, so that the plans depend on the model and
//! hardly on the load of the machine (a sleep is late by the scheduler's
//! latency, not by the share of a core).

use std::time::Duration;

use mpi::traits::*;

use nuce::runtime::array::DistArray2;
use nuce::runtime::balancer::Balancer;

use crate::Ctx;

pub fn run(name: &str, ctx: &Ctx) -> bool {
    match name {
        "fpm-knee" => knee(ctx),
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
    bal.set_functional_model(functional);
    let mut a: DistArray2<f64> = bal.new_array(512, 512, 0).expect("array");
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
