//! The remap decision on injected timings: every rank reports phases whose
//! compute time is computed from a scripted true speed and a deterministic
//! jitter ([`Balancer::record_phase`]), so that what is checked is the
//! decision logic — noise, persistence, following a load that comes and
//! goes — and not the load of the machine the test runs on.

use std::time::Duration;

use mpi::traits::*;

use nuce::{waiting, Balancer, DistArray2};

use crate::Ctx;

pub fn run(name: &str, ctx: &Ctx) -> bool {
    match name {
        "decide-replay" => replay(ctx),
        "decide-payoff" => payoff(ctx),
        _ => return false,
    }
    true
}

/// Cells per second of a rank at speed 1.
const SPEED: f64 = 1.0e7;

/// A deterministic jitter in `[1 − amp, 1 + amp]` for balance point `bp`
/// of `rank` (a hash, so that no two ranks or points share a pattern).
fn jitter(seed: u64, bp: usize, rank: usize, amp: f64) -> f64 {
    // splitmix64 of (seed, bp, rank)
    let mut z = seed
        .wrapping_mul(1_000_003)
        .wrapping_add(bp as u64)
        .wrapping_mul(1_000_003)
        .wrapping_add(rank as u64)
        .wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^= z >> 31;
    let u = (z >> 11) as f64 / (1u64 << 53) as f64; // [0, 1)
    1.0 + amp * (2.0 * u - 1.0)
}

/// `decide-replay SPEEDS START BPS JITTER SEED [CHANGE]`: a 600 × 400
/// array planned for the start speeds `START` (`a:b:…`, one per rank) and
/// `BPS` balance points of 20 iterations (the first after three recorded
/// phases, the others after one) whose compute times are those of
/// the true speeds `SPEEDS` (`a:b:…`) times a jitter of ±`JITTER`
/// (fraction); `CHANGE` = `R*F@A-B` makes rank R's speed F times its own
/// from balance point A to B − 1 (a load that arrives and leaves). Rank 0
/// prints one `RESULT bp=K remap=B rule=R imbalance=I area=…` line per
/// balance point: the decision, its rule, the imbalance of the layout
/// *after* the balance point under the true speeds, and every rank's cells.
fn replay(ctx: &Ctx) {
    let list = |i: usize| -> Vec<f64> {
        ctx.args
            .get(i)
            .map(|s| s.split(':').filter_map(|x| x.parse().ok()).collect())
            .unwrap_or_default()
    };
    let (truth, start) = (list(0), list(1));
    let bps: usize = ctx.arg(2, 10);
    let amp: f64 = ctx.arg(3, 0.03);
    let seed: u64 = ctx.arg(4, 1);
    // R*F@A-B
    let change: Option<(usize, f64, usize, usize)> = ctx.args.get(5).and_then(|c| {
        let (r, rest) = c.split_once('*')?;
        let (f, span) = rest.split_once('@')?;
        let (a, b) = span.split_once('-')?;
        Some((
            r.parse().ok()?,
            f.parse().ok()?,
            a.parse().ok()?,
            b.parse().ok()?,
        ))
    });
    let (rank, p) = (ctx.rank() as usize, ctx.world.size() as usize);
    if truth.len() != p || start.len() != p {
        ctx.check("args", false, "one true and one start speed per rank");
        return;
    }
    let mut bal = Balancer::new(&ctx.world).expect("balancer");
    bal.set_speeds(&start).expect("set_speeds");
    let mut a: DistArray2<f64> = DistArray2::new(&mut bal, 600, 400, 1).expect("array");
    let iters = 20;
    let speed_at = |bp: usize, r: usize| match change {
        Some((cr, f, from, to)) if cr == r && (from..to).contains(&bp) => truth[r] * f,
        _ => truth[r],
    };
    for bp in 0..bps {
        let cells = a.rect().area();
        let work = (cells * iters) as f64;
        // Before the first balance point, three phases: the first noise
        // estimate (as `Balancer::measure` gives one from its samples).
        let records = if bp == 0 { 3 } else { 1 };
        for k in 0..records {
            if cells > 0 {
                let j = jitter(seed, bp * 4 + k, rank, amp);
                let t = work / (SPEED * speed_at(bp, rank)) * j;
                bal.record_phase(work, Duration::from_secs_f64(t))
                    .expect("record_phase");
            }
        }
        let report = bal.maybe_remap(&mut a, iters).expect("maybe_remap");
        let areas = a.plan().areas();
        // The layout's imbalance for the true speeds of the next phase.
        let times: Vec<f64> = (0..p)
            .map(|r| areas[r] as f64 / speed_at(bp + 1, r))
            .collect();
        let ideal =
            areas.iter().sum::<usize>() as f64 / (0..p).map(|r| speed_at(bp + 1, r)).sum::<f64>();
        let worst = times.iter().cloned().fold(0.0, f64::max);
        if rank == 0 {
            println!(
                "RESULT bp={bp} remap={} rule={:?} imbalance={:.4} area={areas:?} nominal={} speeds={:?} noise={:?}",
                report.decision.remap,
                report.decision.rule,
                worst / ideal - 1.0,
                report.decision.nominal,
                report.estimates.iter().map(|e| (e.mean / SPEED * 1e3).round() / 1e3).collect::<Vec<_>>(),
                report.estimates.iter().map(|e| (e.noise * 1e3).round() / 1e3).collect::<Vec<_>>(),
            );
        }
    }
    let areas = a.plan().areas();
    ctx.check(
        "replay-tiling",
        areas.iter().sum::<usize>() == 600 * 400 && areas[rank] == a.rect().area(),
        format!("{areas:?}"),
    );
}

/// `decide-payoff PENALTY_MS BPS [SWAP_AT]`: phases timed by nuce itself
/// (no `record_phase`) on 2 ranks, each rank sleeping its cells' time of 4
/// iterations at its true speed (rank 1 three times slower than rank 0;
/// from balance point `SWAP_AT` on, rank 0 three times slower instead),
/// then both waiting `PENALTY_MS` in a communication section whenever
/// rank 1 holds fewer cells than rank 0 — what a rank whose core another
/// job shares costs its neighbours at every exchange, whatever its share
/// (the wait is not compute: the measured speeds stay 3 : 1). Rank 0
/// prints one `RESULT bp=K remap=B rule=R area=A0:A1` line per balance point.
fn payoff(ctx: &Ctx) {
    let penalty = Duration::from_millis(ctx.arg(0, 0));
    let bps: usize = ctx.arg(1, 10);
    let swap_at: usize = ctx.arg(2, usize::MAX);
    let rank = ctx.rank() as usize;
    if ctx.world.size() != 2 {
        ctx.check("args", false, "2 ranks");
        return;
    }
    let mut bal = Balancer::new(&ctx.world).expect("balancer");
    let mut a: DistArray2<f64> = DistArray2::new(&mut bal, 600, 400, 1).expect("array");
    let iters = 4;
    for bp in 0..bps {
        let slow = if bp >= swap_at { 0 } else { 1 };
        // Cells per second: 6 M for a fast rank, 2 M for the slow one, so
        // a balanced phase takes 120 ms: the 10 % a remap must lose to be
        // undone is 12 ms, beyond a loaded machine's late wake-ups (at
        // 30 ms phases two of them undid a correction in CI).
        let speed = if rank == slow { 2.0e6 } else { 6.0e6 };
        let cells = a.rect().area();
        std::thread::sleep(Duration::from_secs_f64((cells * iters) as f64 / speed));
        let areas = a.plan().areas();
        {
            let _w = waiting();
            if areas[1] < areas[0] {
                std::thread::sleep(penalty);
            }
            ctx.world.barrier();
        }
        let report = bal.maybe_remap(&mut a, iters).expect("maybe_remap");
        if rank == 0 {
            let areas: Vec<String> = a.plan().areas().iter().map(|x| x.to_string()).collect();
            println!(
                "RESULT bp={bp} remap={} rule={:?} area={}",
                report.decision.remap,
                report.decision.rule,
                areas.join(":"),
            );
        }
    }
    let areas = a.plan().areas();
    ctx.check(
        "payoff-tiling",
        areas.iter().sum::<usize>() == 600 * 400 && areas[rank] == a.rect().area(),
        format!("{areas:?}"),
    );
}
