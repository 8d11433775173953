//! scale_sim — what the root of a nuce job does, as p grows to 100 000.
//!
//! nuce's runtime gathers one record per rank at the root, plans there, and
//! broadcasts the plan (see `src/runtime/balancer/`). This simulation runs
//! the root's share without MPI, on simulated speed vectors, and measures:
//!
//! * the bincode volume of the gathered [`SpeedRecord`]s (with this machine's
//!   real topology) and of the phase speeds, and their encode + decode time;
//! * the plan time of [`ColumnDp`] (flat) and [`Hierarchical`] (hosts of
//!   `--per-host` ranks, ColumnDp at both levels);
//! * the plan's bincode size (the broadcast volume), its encode/decode and
//!   validation time;
//! * the remap decision ([`RemapPolicy::decide`]; the old/new overlaps come
//!   from a bucket grid, near-linear in p — it was O(p²) before), measured up
//!   to `--max-decide-p` and extrapolated quadratically beyond (pessimistic).
//!
//! It then models the MPI time of the flat gather (`(p − 1)τ + V/β` into the
//! root's link) and of a binomial broadcast (`⌈log₂ p⌉ (τ + B/β)`), with
//! `τ`, `β` from `--latency-us` and `--bandwidth-gbs` (defaults: 10 GbE,
//! 50 µs), against the two-level gather that the hierarchy allows (leaders
//! gather their host by shared memory, then the root gathers one bundle per
//! host: `(H − 1)τ + V/β`).
//!
//! ```text
//! cargo run --release --example scale_sim               # markdown tables
//! cargo run --release --example scale_sim -- --quick    # p ≤ 4096
//! ```

use std::time::Instant;

use clap::Parser;
use nuce::plan::array2d::{ArrayDecomposer, ArrayPlan, ColumnDp, Hierarchical};
use nuce::plan::policy::RemapPolicy;
use nuce::runtime::comm::{decode, encode};
use nuce::speed::{topology, SpeedRecord, SpeedSource};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

#[derive(Parser, Debug)]
#[command(about = "Root-side cost of nuce's gather/plan/broadcast against p")]
struct Args {
    /// Only p ≤ 4096.
    #[arg(long)]
    quick: bool,
    /// Ranks per simulated host (for Hierarchical and the two-level gather).
    #[arg(long, default_value_t = 16)]
    per_host: usize,
    /// Largest p for which the remap decision is timed (extrapolated beyond).
    #[arg(long, default_value_t = 100_000)]
    max_decide_p: usize,
    /// Modelled network latency τ (µs).
    #[arg(long, default_value_t = 50.0)]
    latency_us: f64,
    /// Modelled network bandwidth β (GB/s).
    #[arg(long, default_value_t = 1.25)]
    bandwidth_gbs: f64,
}

/// Wall time of `f` in seconds, and its result.
fn timed<T>(f: impl FnOnce() -> T) -> (f64, T) {
    let t = Instant::now();
    let x = f();
    (t.elapsed().as_secs_f64(), x)
}

fn ms(s: f64) -> String {
    format!("{:.2}", s * 1e3)
}

fn main() -> nuce::Result<()> {
    let args = Args::parse();
    let ps: &[usize] = if args.quick {
        &[16, 256, 1024, 4096]
    } else {
        &[16, 256, 1024, 4096, 16384, 65536, 100_000]
    };
    let tau = args.latency_us * 1e-6;
    let beta = args.bandwidth_gbs * 1e9;
    let topo = topology();
    let mut rng = ChaCha8Rng::seed_from_u64(2026);
    println!(
        "Machine topology record of this host: {} PUs; per-host ranks {}; τ = {} µs, β = {} GB/s.\n",
        topo.pus, args.per_host, args.latency_us, args.bandwidth_gbs
    );
    println!("| p | array | records B | rec enc+dec ms | ColumnDp ms | Hier ms | plan B | plan enc+dec ms | validate ms | decide ms | gather model ms (flat / 2-level) | bcast model ms |");
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|");
    let mut last_decide: Option<(usize, f64)> = None;
    for &p in ps {
        let side = ((p as f64).sqrt().ceil() as usize * 16).max(1024);
        let speeds: Vec<f64> = (0..p).map(|_| rng.gen_range(1.0..4.0)).collect();
        let later: Vec<f64> = speeds.iter().map(|s| s * rng.gen_range(0.7..1.3)).collect();
        // Records as gathered by Balancer::measure (one per rank).
        let records: Vec<SpeedRecord> = speeds
            .iter()
            .enumerate()
            .map(|(r, &s)| SpeedRecord {
                rank: r as i32,
                speed: s,
                source: SpeedSource::Phase,
                kernel: None,
                topology: topo.clone(),
            })
            .collect();
        let (t_rec, rec_bytes) = timed(|| -> nuce::Result<usize> {
            let mut total = 0;
            for (r, rec) in records.iter().enumerate() {
                let b = encode(rec)?;
                total += b.len();
                let back: SpeedRecord = decode(&b, r as i32)?;
                debug_assert_eq!(back.rank, r as i32);
            }
            Ok(total)
        });
        let rec_bytes = rec_bytes?;
        let (t_col, plan) = timed(|| ColumnDp::default().decompose(side, side, &speeds));
        let plan: ArrayPlan = plan?;
        let hosts: Vec<usize> = (0..p).map(|r| r / args.per_host.max(1)).collect();
        let (t_hier, hplan) =
            timed(|| Hierarchical::new(hosts.clone()).decompose(side, side, &speeds));
        hplan?;
        let (t_plan_codec, plan_bytes) = timed(|| -> nuce::Result<usize> {
            let b = encode(&plan)?;
            let back: ArrayPlan = decode(&b, 0)?;
            debug_assert_eq!(back.parts.len(), p);
            Ok(b.len())
        });
        let plan_bytes = plan_bytes?;
        let (t_validate, v) = timed(|| plan.validate());
        v?;
        let candidate = ColumnDp::default().decompose(side, side, &later)?;
        let t_decide = if p <= args.max_decide_p {
            let (t, d) =
                timed(|| RemapPolicy::default().decide(&plan, &candidate, &later, 8, 100, None));
            d?;
            last_decide = Some((p, t));
            ms(t)
        } else {
            let (p0, t0) = last_decide.unwrap_or((1, 0.0));
            let est = t0 * (p as f64 / p0 as f64).powi(2);
            format!("≈{} (extrap.)", ms(est))
        };
        let h = p.div_ceil(args.per_host.max(1));
        let gather_flat = (p as f64 - 1.0) * tau + rec_bytes as f64 / beta;
        let gather_two = (h as f64 - 1.0) * tau + rec_bytes as f64 / beta;
        let bcast = (p as f64).log2().ceil() * (tau + plan_bytes as f64 / beta);
        println!(
            "| {p} | {side}² | {rec_bytes} | {} | {} | {} | {plan_bytes} | {} | {} | {t_decide} | {} / {} | {} |",
            ms(t_rec),
            ms(t_col),
            ms(t_hier),
            ms(t_plan_codec),
            ms(t_validate),
            ms(gather_flat),
            ms(gather_two),
            ms(bcast)
        );
    }
    Ok(())
}
