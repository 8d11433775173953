//! Scenarios for `Balancer::plan1d_weighted` (p4est's
//! `p4est_partition_given` counts): the counts of a weighted sequence
//! spread over the ranks sum to its length and equal the planner's on the
//! gathered sequence; they follow speeds recorded from phases and speeds
//! nuce times itself (one rank repeating its work); bad input gives the
//! same error on every rank.

use std::time::Duration;

use mpi::traits::*;
use nuce::plan::curve1d::partition;
use nuce::Balancer;

use crate::Ctx;

pub fn run(name: &str, ctx: &Ctx) -> bool {
    match name {
        "curve-match" => matches(ctx),
        "curve-phases" => phases(ctx),
        "curve-timed" => timed(ctx),
        "curve-errors" => errors(ctx),
        _ => return false,
    }
    true
}

/// Rank `r`'s piece: `n_r` integer weights 0..=4 from a small LCG (exact
/// sums); rank 1 has none when `empty_rank1`.
fn piece(rank: usize, empty_rank1: bool) -> Vec<f64> {
    let n = if empty_rank1 && rank == 1 {
        0
    } else {
        40 + 17 * rank
    };
    let mut x = 12345u64 + rank as u64;
    (0..n)
        .map(|_| {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((x >> 33) % 5) as f64
        })
        .collect()
}

/// Every rank's piece, concatenated in rank order (all ranks).
fn whole(ctx: &Ctx, mine: &[f64]) -> Vec<f64> {
    let p = ctx.world.size() as usize;
    let mut lens = vec![0i32; p];
    ctx.world
        .all_gather_into(&(mine.len() as i32), &mut lens[..]);
    let displs: Vec<i32> = lens
        .iter()
        .scan(0, |acc, &l| {
            let d = *acc;
            *acc += l;
            Some(d)
        })
        .collect();
    let mut all = vec![0.0; lens.iter().sum::<i32>() as usize];
    let mut part = mpi::datatype::PartitionMut::new(&mut all[..], &lens[..], &displs[..]);
    ctx.world.all_gather_varcount_into(mine, &mut part);
    all
}

/// The counts with speeds set by the application (no phase timed) equal
/// the planner's on the gathered sequence, with an empty rank and without.
fn matches(ctx: &Ctx) {
    let p = ctx.world.size() as usize;
    let speeds: Vec<f64> = (0..p).map(|r| 1.0 + (r % 3) as f64).collect();
    let mut bal = Balancer::new(&ctx.world).expect("balancer");
    bal.set_speeds(&speeds).expect("set_speeds");
    for empty in [false, true] {
        let mine = piece(ctx.rank() as usize, empty);
        let all = whole(ctx, &mine);
        let got = bal.plan1d_weighted(&mine, 0).expect("plan1d_weighted");
        let want = partition(&all, &speeds).expect("planner");
        ctx.check(
            &format!("curve-sum-{empty}"),
            got.counts.iter().sum::<usize>() == all.len() && got.counts.len() == p,
            format!("{:?} for {} items", got.counts, all.len()),
        );
        ctx.check(
            &format!("curve-planner-{empty}"),
            got == want,
            format!("{got:?} vs {want:?}"),
        );
        println!(
            "RESULT curve items={} counts={} imbalance={:.4}",
            all.len(),
            crate::comma_list(&got.counts),
            got.imbalance
        );
    }
}

/// Whether `loads` follow `speeds`: every load within the heaviest item
/// `wmax` of its share.
fn follows(loads: &[f64], speeds: &[f64], wmax: f64) -> bool {
    let total: f64 = loads.iter().sum();
    let sum: f64 = speeds.iter().sum();
    loads
        .iter()
        .zip(speeds)
        .all(|(l, s)| (l - total * s / sum).abs() <= wmax + 1e-9)
}

/// Phases recorded by the application at speeds `1 + r`: the loads follow
/// them (the speeds are the recorded ones, exactly: no noise).
fn phases(ctx: &Ctx) {
    let p = ctx.world.size() as usize;
    let rank = ctx.rank() as usize;
    let mine = piece(rank, false);
    let mut bal = Balancer::new(&ctx.world).expect("balancer");
    let speed = 1.0 + rank as f64;
    let mut load = mine.iter().sum::<f64>();
    for step in 0..3 {
        bal.record_phase(load * 10.0, Duration::from_secs_f64(load * 10.0 / speed))
            .expect("record_phase");
        let got = bal.plan1d_weighted(&mine, 10).expect("plan1d_weighted");
        let want: Vec<f64> = (0..p).map(|r| 1.0 + r as f64).collect();
        let ratio = bal.measured().speeds().map(|s| s[0]).unwrap_or(0.0);
        let speeds: Vec<f64> = bal
            .measured()
            .speeds()
            .unwrap_or(&[])
            .iter()
            .map(|s| s / ratio)
            .collect();
        ctx.check(
            &format!("curve-phases-speeds-{step}"),
            speeds
                .iter()
                .zip(&want)
                .all(|(a, b)| (a - b).abs() < 1e-6 * b),
            format!("{speeds:?}"),
        );
        ctx.check(
            &format!("curve-phases-follow-{step}"),
            got.counts.iter().sum::<usize>() == whole(ctx, &mine).len()
                && follows(&got.loads, &want, 4.0),
            format!("{got:?}"),
        );
        load = got.loads[rank];
    }
}

/// Work proportional to the weights, done `reps` times on rank 1: the speeds
/// nuce times itself (`iterations` > 0, no record) give rank 1 the smaller
/// load. (A loose check: a 3× difference, far beyond timing noise.)
fn timed(ctx: &Ctx) {
    let p = ctx.world.size() as usize;
    let rank = ctx.rank() as usize;
    let reps = if rank == 1 { 3 } else { 1 };
    let mut bal = Balancer::new(&ctx.world).expect("balancer");
    let n = 2000 * p;
    // The whole sequence is the same on every rank: unit weights, each
    // rank owning its counts' range.
    let mut counts = vec![n / p; p];
    counts[p - 1] += n % p;
    let mut last = None;
    for _step in 0..4 {
        let mine = vec![1.0; counts[rank]];
        let mut acc = 0.0f64;
        for _ in 0..reps {
            for (i, w) in mine.iter().enumerate() {
                for k in 0..2000 {
                    acc += (w * (i + k) as f64).sqrt();
                }
            }
        }
        std::hint::black_box(acc);
        let got = bal.plan1d_weighted(&mine, 1).expect("plan1d_weighted");
        counts = got.counts.clone();
        last = Some(got);
    }
    let got = last.expect("four steps");
    ctx.check(
        "curve-timed-slow-rank-less",
        got.counts.iter().sum::<usize>() == n && got.loads[1] < 0.8 * got.loads[0],
        format!("{got:?}"),
    );
    println!(
        "RESULT curve-timed counts={} imbalance={:.4}",
        crate::comma_list(&got.counts),
        got.imbalance
    );
}

fn errors(ctx: &Ctx) {
    let case = ctx.args.first().cloned().unwrap_or_default();
    let rank = ctx.rank();
    let last = rank as usize == ctx.world.size() as usize - 1;
    let res = Balancer::new(&ctx.world).and_then(|mut bal| {
        let mut w = vec![1.0; 5];
        let mut iterations = 1;
        match case.as_str() {
            "nan" if last => w[2] = f64::NAN,
            "negative" if rank == 0 => w[0] = -1.0,
            "overflow" => w = vec![f64::MAX; 2],
            "iterations" if last => iterations = 2,
            "nan" | "negative" | "iterations" => {}
            other => return Err(nuce::Error::invalid_input(format!("unknown case {other}"))),
        }
        bal.plan1d_weighted(&w, iterations).map(|_| ())
    });
    match res {
        Ok(()) => println!("ERR {rank} none"),
        Err(e) => println!("ERR {rank} {e}"),
    }
}
