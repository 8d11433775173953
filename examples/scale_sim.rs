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
//! With `--fit P:SECONDS,…` (balance points measured by
//! `examples/bench_exchange.rs --balance`), the latency τ is not assumed but
//! fitted: each measured time minus the root's own compute at that p (timed
//! here) is taken as `τ · ((p − 1) + ⌈log₂ p⌉)` (flat gather, binomial
//! broadcast; the volumes at these p are a few KB), τ by least squares; the
//! table then uses the fitted τ.
//!
//! The two-level balance point (hosts known: the checked entry and the
//! gather through host leaders, `runtime::watchdog`'s `tree`) is modelled
//! beside it: the root receives `2(H − 1)` latency-bound messages (one
//! summary and one bundle per host, the root set apart) instead of
//! `2(p − 1)`, plus the
//! `K·⌈log₂ p⌉` of the tree collectives of a balance point (agreements,
//! broadcasts; `K` from `--tree-collectives`, counted with Open MPI's
//! message monitoring by `scripts/bench_scale.sh`), and each host's leader
//! `2(r − 1)` messages in shared memory (`--host-latency-us`) for its `r`
//! ranks. With `--oversub P:SECONDS,…` (two-level balance points measured
//! on this machine, `scripts/bench_scale.sh`, oversubscribed on `--cores`
//! cores) it fits the one constant of this machine's model instead, the
//! cost σ of a scheduling round per rank sharing a core at each tree level:
//! `T(p) = root compute + σ · ⌈p/c⌉ · ⌈log₂ p⌉`, on the points with
//! `p ≤ --fit-max-p`, and prints every point against it.
//!
//! ```text
//! cargo run --release --example scale_sim               # markdown tables
//! cargo run --release --example scale_sim -- --quick    # p ≤ 4096
//! cargo run --release --example scale_sim -- --fit 2:2.5e-5,4:1.2e-4,8:3.1e-4
//! cargo run --release --example scale_sim -- --per-host 32 --million   # to 10⁶
//! cargo run --release --example scale_sim -- --ps 1000,10000,100000,1000000
//! cargo run --release --example scale_sim -- --oversub 8:1.7e-3,16:2.2e-3,32:3.6e-2,64:4.8e-2,128:0.15
//! ```

use std::time::Instant;

use clap::Parser;
use nuce::internals::comm::{decode, encode};
use nuce::plan::array2d::{ArrayDecomposer, ArrayPlan, ColumnDp, Hierarchical};
use nuce::plan::policy::RemapPolicy;
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
    /// Measured balance points `P:SECONDS,…` to fit τ on (replaces `--latency-us`).
    #[arg(long, default_value = "")]
    fit: String,
    /// Latency of a message between two ranks of one host (µs).
    #[arg(long, default_value_t = 1.0)]
    host_latency_us: f64,
    /// Tree collectives of a balance point (each `⌈log₂ p⌉` messages at
    /// the root; 12 counted at 8–128 ranks by `scripts/bench_scale.sh`).
    #[arg(long, default_value_t = 12.0)]
    tree_collectives: f64,
    /// Two-level balance points measured on this machine, `P:SECONDS,…`:
    /// fit the oversubscribed model on them (and print nothing else).
    #[arg(long, default_value = "")]
    oversub: String,
    /// Cores the `--oversub` points ran on.
    #[arg(long, default_value_t = 2)]
    cores: usize,
    /// Largest p of the `--oversub` points the fit uses (the others are predicted).
    #[arg(long, default_value_t = 32)]
    fit_max_p: usize,
    /// Also simulate p = 10⁶ (the remap decision extrapolated).
    #[arg(long)]
    million: bool,
    /// The p to simulate, comma-separated (instead of the default list).
    #[arg(long, value_delimiter = ',')]
    ps: Vec<usize>,
}

/// The messages of one balance point on `p` ranks whose latency counts:
/// a flat gather's `p − 1` and a binomial broadcast's `⌈log₂ p⌉`.
fn latency_terms(p: usize) -> f64 {
    (p as f64 - 1.0) + (p as f64).log2().ceil()
}

/// `P:SECONDS,…` as pairs, checked (`p ≥ 2`, a time > 0).
fn parse_points(flag: &str, spec: &str) -> nuce::Result<Vec<(usize, f64)>> {
    let bad = |m: String| nuce::Error::invalid_input(format!("{flag}: {m}"));
    spec.split(',')
        .map(|item| {
            let (p, t) = item
                .split_once(':')
                .ok_or_else(|| bad(format!("{item:?} is not P:SECONDS")))?;
            let p: usize = p.trim().parse().map_err(|e| bad(format!("{p:?}: {e}")))?;
            let t: f64 = t.trim().parse().map_err(|e| bad(format!("{t:?}: {e}")))?;
            if p < 2 || !(t.is_finite() && t > 0.0) {
                return Err(bad(format!("{item:?}: needs p ≥ 2 and a time > 0")));
            }
            Ok((p, t))
        })
        .collect()
}

/// The median of 5 timings of the root's compute at `p`.
fn root_compute_median(p: usize, rng: &mut ChaCha8Rng) -> nuce::Result<f64> {
    let mut c: Vec<f64> = (0..5)
        .map(|_| root_compute(p, rng))
        .collect::<nuce::Result<_>>()?;
    c.sort_by(f64::total_cmp);
    Ok(c[2])
}

/// Least-squares `a` of `t − c ≈ a·x` over `(x, t, c)`, at least 0.
fn fit_one(points: &[(f64, f64, f64)]) -> f64 {
    let (num, den) = points.iter().fold((0.0, 0.0), |(n, d), &(x, t, c)| {
        (n + x * (t - c), d + x * x)
    });
    (num / den).max(0.0)
}

/// This machine's model of a two-level balance point, fitted on the
/// measured points with `p ≤ fit_max_p`: prints σ and every point.
fn fit_oversubscribed(args: &Args, rng: &mut ChaCha8Rng) -> nuce::Result<()> {
    let rounds = |p: usize| p.div_ceil(args.cores.max(1)) as f64 * (p as f64).log2().ceil();
    let mut points = Vec::new();
    for (p, t) in parse_points("--oversub", &args.oversub)? {
        points.push((p, t, root_compute_median(p, rng)?));
    }
    let used: Vec<(f64, f64, f64)> = points
        .iter()
        .filter(|x| x.0 <= args.fit_max_p)
        .map(|&(p, t, c)| (rounds(p), t, c))
        .collect();
    let sigma = fit_one(&used);
    println!(
        "Oversubscribed model, fitted on p ≤ {}: σ = {:.2} µs per rank on a core and tree level\n",
        args.fit_max_p,
        sigma * 1e6
    );
    println!("| p | measured ms | root compute ms | model ms | measured / model | fitted on |");
    println!("|---|---|---|---|---|---|");
    for (p, t, c) in points {
        let m = c + sigma * rounds(p);
        let on = if p <= args.fit_max_p { "yes" } else { "no" };
        println!(
            "| {p} | {} | {} | {} | {:.2} | {on} |",
            ms(t),
            ms(c),
            ms(m),
            t / m
        );
    }
    Ok(())
}

/// The root's own compute at a balance point on `p` ranks (records decoded,
/// ColumnDp planned, plan validated, remap decided), in seconds.
fn root_compute(p: usize, rng: &mut ChaCha8Rng) -> nuce::Result<f64> {
    let side = ((p as f64).sqrt().ceil() as usize * 16).max(1024);
    let speeds: Vec<f64> = (0..p).map(|_| rng.gen_range(1.0..4.0)).collect();
    let later: Vec<f64> = speeds.iter().map(|s| s * rng.gen_range(0.7..1.3)).collect();
    let t = Instant::now();
    let plan = ColumnDp::default().decompose(side, side, &speeds)?;
    plan.validate()?;
    let candidate = ColumnDp::default().decompose(side, side, &later)?;
    RemapPolicy::default().decide(&plan, &candidate, &later, 8, 100, None)?;
    Ok(t.elapsed().as_secs_f64())
}

/// τ fitted by least squares on measured balance points `P:SECONDS,…`;
/// prints each point's measured time, root compute and model residual.
fn fit_latency(spec: &str, rng: &mut ChaCha8Rng) -> nuce::Result<f64> {
    let mut points = Vec::new();
    for (p, t) in parse_points("--fit", spec)? {
        points.push((p, t, root_compute_median(p, rng)?));
    }
    let xs: Vec<(f64, f64, f64)> = points
        .iter()
        .map(|&(p, t, c)| (latency_terms(p), t, c))
        .collect();
    let tau = fit_one(&xs);
    println!(
        "Fit of τ on measured balance points: τ = {:.2} µs\n",
        tau * 1e6
    );
    println!("| p | measured ms | root compute ms | model ms | measured / model |");
    println!("|---|---|---|---|---|");
    for (p, t, c) in points {
        let m = c + tau * latency_terms(p);
        println!("| {p} | {} | {} | {} | {:.2} |", ms(t), ms(c), ms(m), t / m);
    }
    println!();
    Ok(tau)
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
    let million = [ps, &[1_000_000]].concat();
    let ps: &[usize] = if !args.ps.is_empty() {
        &args.ps
    } else if args.million {
        &million
    } else {
        ps
    };
    let beta = args.bandwidth_gbs * 1e9;
    let topo = topology();
    let mut rng = ChaCha8Rng::seed_from_u64(2026);
    if !args.oversub.is_empty() {
        return fit_oversubscribed(&args, &mut rng);
    }
    let tau = if args.fit.is_empty() {
        args.latency_us * 1e-6
    } else {
        fit_latency(&args.fit, &mut rng)?
    };
    println!(
        "Machine topology record of this host: {} PUs; per-host ranks {}; τ = {:.2} µs, β = {} GB/s.\n",
        topo.pus,
        args.per_host,
        tau * 1e6,
        args.bandwidth_gbs
    );
    println!("| p | array | records B | rec enc+dec ms | ColumnDp ms | Hier ms | plan B | plan enc+dec ms | validate ms | decide ms | gather model ms (flat / 2-level) | bcast model ms | balance point ms (flat) | with checked entry ms: flat / 2-level | root msgs (flat / 2-level) |");
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|");
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
        let (decide, t_decide) = if p <= args.max_decide_p {
            let (t, d) =
                timed(|| RemapPolicy::default().decide(&plan, &candidate, &later, 8, 100, None));
            d?;
            last_decide = Some((p, t));
            (t, ms(t))
        } else {
            let (p0, t0) = last_decide.unwrap_or((1, 0.0));
            let est = t0 * (p as f64 / p0 as f64).powi(2);
            (est, format!("≈{} (extrap.)", ms(est)))
        };
        let h = p.div_ceil(args.per_host.max(1));
        let gather_flat = (p as f64 - 1.0) * tau + rec_bytes as f64 / beta;
        let gather_two = (h as f64 - 1.0) * tau + rec_bytes as f64 / beta;
        let bcast = (p as f64).log2().ceil() * (tau + plan_bytes as f64 / beta);
        // A whole balance point: gather, decode, plan, validate, decide, broadcast.
        let whole = gather_flat + t_rec + t_col + t_validate + decide + t_plan_codec + bcast;
        // Two-level: the checked entry and the gather through the leaders
        // (one summary, one bundle per host at the root; each leader its
        // host's ranks in shared memory, in parallel), the tree collectives.
        let log = (p as f64).log2().ceil();
        let per_host = args.per_host.min(p) as f64;
        let msgs_flat = 2.0 * (p as f64 - 1.0) + args.tree_collectives * log;
        // The root leads no host: every host's leader reports to it.
        let msgs_two = 2.0 * h as f64 + args.tree_collectives * log;
        let leaders = 2.0 * (per_host - 1.0) * args.host_latency_us * 1e-6;
        // Both with the checked entry: latency-bound messages at the root,
        // the gathered and broadcast volumes, the root's own compute.
        let volume = (rec_bytes as f64 + log * plan_bytes as f64) / beta;
        let compute = t_rec + t_col + t_validate + decide + t_plan_codec;
        let checked_flat = msgs_flat * tau + volume + compute;
        let two_level = msgs_two * tau + leaders + volume + compute;
        println!(
            "| {p} | {side}² | {rec_bytes} | {} | {} | {} | {plan_bytes} | {} | {} | {t_decide} | {} / {} | {} | {} | {} / {} | {msgs_flat:.0} / {msgs_two:.0} |",
            ms(t_rec),
            ms(t_col),
            ms(t_hier),
            ms(t_plan_codec),
            ms(t_validate),
            ms(gather_flat),
            ms(gather_two),
            ms(bcast),
            ms(whole),
            ms(checked_flat),
            ms(two_level)
        );
    }
    Ok(())
}
