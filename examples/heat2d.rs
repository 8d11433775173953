//! heat2d — a Jacobi heat-diffusion solver that balances itself with nuce.
//!
//! The M×N grid is decomposed into rectangles in proportion to the ranks'
//! *measured* speeds. The solver runs in phases of K iterations; between
//! phases it calls `Balancer::maybe_remap`, which remaps the grid when the
//! measured speeds make it worth it. At the end the result is gathered and
//! compared with a serial solve of the same problem.
//!
//! Heterogeneity is real: ranks may share cores (see `scripts/bind_ranks.sh`),
//! and `--slowdown R:F@P` makes rank R do F times the work per cell from phase
//! P on (it really computes F times; the library is never told, it measures);
//! `--slowdown R:F@P:above=N` only while its block has more than N cells (a
//! speed that depends on the size of the work: nuce's functional model,
//! `NUCE_SPEED_MODEL=auto|constant`).
//!
//! ```text
//! mpirun -np 4 target/release/examples/heat2d --rows 512 --cols 512 --phases 8 \
//!        --iters 40 --slowdown 1:3@0,1:1@4,2:4@4
//! ```
//!
//! Planning: `--algo NAME` picks any array decomposer of
//! `nuce::plan::array2d::registry` (default `rb2`) or `hier`; `--hier` plans
//! in two levels over the detected hosts (shared-memory split), or over
//! `--hosts 0,0,1,…` (emulated); `--net` measures every rank's link to the
//! root first, so remap decisions use the measured bandwidth and latency and
//! latency-aware decomposers (`column`, `xy`, `xy2`, `tile`, `best`) weigh
//! the latency converted to cells (`Network::latency_cells`).
//!
//! Fault injection (tests of the watchdog, `NUCE_TIMEOUT_S`): `--die R@P`
//! makes rank R abort itself at the end of phase P, `--hang R@P` makes it
//! sleep forever there, `--kill R@P` / `--stop R@P` send it SIGKILL / SIGSTOP
//! in the middle of phase P; the job must end with a message naming R.

use nuce::DistArray2;
use std::hint::black_box;
use std::time::{Duration, Instant};

use clap::Parser;
use mpi::traits::*;
use ndarray::Array2;
use nuce::collective::{agree, max_f64};
use nuce::speed::network::ProbeConfig;
use nuce::speed::KernelConfig;
use nuce::{ArrayAlgorithm, Balancer, Settings};
use serde::Serialize;

#[path = "common/slowdown.rs"]
mod slowdown;
use slowdown::{factor_at, parse_slowdown, PhaseArgs, Slow};

#[derive(Parser, Debug)]
#[command(about = "Jacobi heat diffusion, load-balanced by nuce")]
struct Args {
    /// Grid rows.
    #[arg(long, default_value_t = 512)]
    rows: usize,
    /// Grid columns.
    #[arg(long, default_value_t = 512)]
    cols: usize,
    /// Phases, slowdowns, baseline and check.
    #[command(flatten)]
    run: PhaseArgs,
    /// Print one JSON document on the root instead of the table.
    #[arg(long)]
    json: bool,
    /// The first plan from the solver's own first phase instead of the
    /// built-in kernel: no `Balancer::measure`, an even first split, and a
    /// first phase of this many iterations (a warm-up) whose timing the
    /// first balance point plans from; 0 (default): measure the kernel.
    #[arg(long, default_value_t = 0)]
    warmup: usize,
    /// A static split (a baseline): plan once for these speeds (`S0,S1,…`,
    /// one per rank), never measure, never remap.
    #[arg(long, default_value = "")]
    static_speeds: String,
    /// Array decomposer: a registry name (column, xy2, xy, tile, kl, rb, rb2,
    /// rb3, slices, best) or `hier` (two levels, column DP within and across hosts).
    #[arg(long, default_value = "rb2")]
    algo: String,
    /// Plan in two levels: across hosts, then within each host.
    #[arg(long)]
    hier: bool,
    /// Host id of every rank (`0,0,1,…`), instead of detecting them.
    #[arg(long, default_value = "")]
    hosts: String,
    /// Measure the network (latency, bandwidth to the root) before planning.
    #[arg(long)]
    net: bool,
    /// Large probe message size in bytes (with `--net`).
    #[arg(long, default_value_t = 1 << 20)]
    net_bytes: usize,
    /// Speed model: `auto` (functional when a rank's speed depends on its
    /// block size beyond the noise) or `constant`; default: the
    /// `NUCE_SPEED_MODEL` environment variable, else `auto`.
    #[arg(long)]
    speed_model: Option<String>,
    /// Memory limits: `R:CELLS,…` = rank R holds at most CELLS cells
    /// (`Balancer::set_memory_limit`).
    #[arg(long, default_value = "")]
    mem_limit: String,
    /// Fault injection: `RANK@PHASE` aborts that rank at the end of that phase.
    #[arg(long)]
    die: Option<String>,
    /// Fault injection: `RANK@PHASE` makes that rank sleep forever at the end of that phase.
    #[arg(long)]
    hang: Option<String>,
    /// Fault injection: `RANK@PHASE` sends SIGKILL to that rank in the middle
    /// of that phase (between two halo exchanges).
    #[arg(long)]
    kill: Option<String>,
    /// Fault injection: `RANK@PHASE` sends SIGSTOP to that rank in the middle
    /// of that phase (it stays alive, stopped).
    #[arg(long)]
    stop: Option<String>,
}

/// `rank`'s limit in a `R:CELLS,…` list (the last one given), and whether
/// the speed model option allows the functional model (`None`: not given,
/// `NUCE_SPEED_MODEL` decides).
fn parse_limits(
    s: &str,
    model: &Option<String>,
    rank: i32,
) -> Result<(Option<usize>, Option<bool>), String> {
    let mut mine = None;
    for t in s.split(',').filter(|t| !t.trim().is_empty()) {
        let bad = || format!("bad --mem-limit item {t:?}: expected RANK:CELLS");
        let (r, c) = t.split_once(':').ok_or_else(bad)?;
        let r: i32 = r.trim().parse().map_err(|_| bad())?;
        let c: usize = c.trim().parse().map_err(|_| bad())?;
        if r == rank {
            mine = Some(c);
        }
    }
    let functional = match model.as_deref() {
        // Unset: Balancer::new reads NUCE_SPEED_MODEL.
        None => None,
        Some("auto") => Some(true),
        Some("constant") => Some(false),
        Some(m) => return Err(format!("--speed-model {m:?}: expected auto or constant")),
    };
    Ok((mine, functional))
}

/// Parses `--static-speeds`: comma-separated speeds, empty for none.
fn parse_speeds(s: &str) -> nuce::Result<Option<Vec<f64>>> {
    if s.is_empty() {
        return Ok(None);
    }
    s.split(',')
        .map(|v| {
            v.trim()
                .parse::<f64>()
                .map_err(|e| nuce::Error::invalid_input(format!("--static-speeds {v:?}: {e}")))
        })
        .collect::<nuce::Result<Vec<f64>>>()
        .map(Some)
}

/// Parses a `RANK@PHASE` fault spec.
fn parse_fault(s: &Option<String>) -> Result<Option<(i32, usize)>, String> {
    let Some(s) = s else { return Ok(None) };
    let bad = || format!("bad fault spec {s:?}: expected RANK@PHASE");
    let (r, p) = s.split_once('@').ok_or_else(bad)?;
    Ok(Some((
        r.trim().parse().map_err(|_| bad())?,
        p.trim().parse().map_err(|_| bad())?,
    )))
}

/// Parses `--hosts`: comma-separated host ids, empty for none.
fn parse_hosts(s: &str) -> Result<Option<Vec<usize>>, String> {
    if s.trim().is_empty() {
        return Ok(None);
    }
    s.split(',')
        .map(|t| {
            t.trim()
                .parse()
                .map_err(|_| format!("bad --hosts item {t:?}: expected a host id"))
        })
        .collect::<Result<Vec<usize>, String>>()
        .map(Some)
}

fn initial(rows: usize, cols: usize) -> Array2<f64> {
    Array2::from_shape_fn((rows, cols), |(r, c)| {
        if r == 0 {
            1.0
        } else {
            let (x, y) = (r as f64 / rows as f64, c as f64 / cols as f64);
            0.5 * (-(((x - 0.6).powi(2) + (y - 0.3).powi(2)) * 40.0)).exp()
        }
    })
}

/// One Jacobi sweep of the cells of `rect` (global coordinates) from a padded
/// block `src` (ghost width `g`), written into `dst` (local, unpadded).
/// Global boundary cells keep their value (Dirichlet).
fn sweep(
    src: &Array2<f64>,
    dst: &mut Array2<f64>,
    g: usize,
    row0: usize,
    col0: usize,
    rows: usize,
    cols: usize,
) {
    let (m, n) = dst.dim();
    let w = src.ncols();
    // Row slices (both arrays are owned, hence row-major): no index checks
    // in the inner loop, the same operations in the same order as before.
    let s = src.as_slice().expect("a padded block is row-major");
    let d = dst.as_slice_mut().expect("a block is row-major");
    for (i, out) in d.chunks_exact_mut(n.max(1)).take(m).enumerate() {
        let gr = row0 + i;
        let c = (i + g) * w + g;
        let mid = &s[c - 1..c + n + 1];
        if gr == 0 || gr + 1 == rows {
            out.copy_from_slice(&mid[1..n + 1]);
            continue;
        }
        let (up, down) = (&s[c - w..c - w + n], &s[c + w..c + w + n]);
        let cells = out.iter_mut().zip(up.iter().zip(down)).zip(mid.windows(3));
        for (j, ((o, (u, d)), lr)) in cells.enumerate() {
            let gc = col0 + j;
            *o = if gc == 0 || gc + 1 == cols {
                lr[1]
            } else {
                0.25 * (u + d + lr[0] + lr[2])
            };
        }
    }
}

fn serial(rows: usize, cols: usize, iters: usize) -> Array2<f64> {
    let mut u = Array2::zeros((rows + 2, cols + 2));
    u.slice_mut(ndarray::s![1..rows + 1, 1..cols + 1])
        .assign(&initial(rows, cols));
    let mut next = Array2::zeros((rows, cols));
    for _ in 0..iters {
        sweep(&u, &mut next, 1, 0, 0, rows, cols);
        u.slice_mut(ndarray::s![1..rows + 1, 1..cols + 1])
            .assign(&next);
    }
    u.slice(ndarray::s![1..rows + 1, 1..cols + 1]).to_owned()
}

#[derive(Serialize)]
struct PhaseRow {
    phase: usize,
    time_per_iter: f64,
    compute_per_iter_max: f64,
    speeds: Vec<f64>,
    /// Every rank's relative noise of its speed estimate.
    noise: Vec<f64>,
    /// Which speed model decided (`Constant`, `NoisySnapped`, `Functional`).
    model: nuce::SpeedModel,
    /// Which rule decided (`Exact`, `WithinNoise`, `Persistent`, `Amortized`, `NoPayoff`, `Vetoed`).
    rule: nuce::plan::policy::DecisionRule,
    imbalance: f64,
    predicted_next: f64,
    t_candidate: f64,
    t_migration: f64,
    net_gain: f64,
    remapped: bool,
    bytes_moved: u64,
    messages: u64,
    remap_seconds: f64,
    areas: Vec<usize>,
}

#[derive(Serialize)]
struct NetSummary {
    bandwidth: f64,
    latency_s: f64,
    latency_cells: f64,
}

#[derive(Serialize)]
struct Summary {
    algorithm: String,
    network: Option<NetSummary>,
    hosts: Option<Vec<usize>>,
    ranks: i32,
    rows: usize,
    cols: usize,
    iters_per_phase: usize,
    /// Iterations of the warm-up first phase (0: the kernel planned first).
    warmup: usize,
    uniform: bool,
    initial_speeds: Vec<f64>,
    phases: Vec<PhaseRow>,
    max_abs_diff: Option<f64>,
    relative_diff: Option<f64>,
    total_seconds: f64,
    /// Mean time per iteration of the phases after the first (the steady state).
    steady_s_per_iter: f64,
    /// The ideal time per iteration for the last measured speeds: cells / Σ speeds.
    ideal_s_per_iter: f64,
    final_plan: Vec<nuce::plan::array2d::Rect>,
}

fn main() {
    let args = Args::parse();
    let universe = mpi::initialize().expect("MPI init");
    let world = universe.world();
    let rank = world.rank();
    let parsed = parse_slowdown(&args.run.slowdown)
        .and_then(|s| {
            Ok((
                s,
                parse_fault(&args.die)?,
                parse_fault(&args.hang)?,
                parse_fault(&args.kill)?,
                parse_fault(&args.stop)?,
                parse_hosts(&args.hosts)?,
                parse_limits(&args.mem_limit, &args.speed_model, rank)?,
            ))
        })
        .map_err(nuce::Error::invalid_input);
    // A bad argument on any rank is the same error on every rank.
    let result =
        agree(&world, 0, parsed).and_then(|(slow, die, hang, kill, stop, hosts, limits)| {
            let faults = Faults {
                die,
                hang,
                kill,
                stop,
            };
            run(&args, &world, &slow, hosts.as_deref(), faults, limits)
        });
    if let Err(e) = result {
        // One write of the whole line: the launcher may join the pieces of
        // two ranks' lines written in parts.
        let line = format!("heat2d: rank {rank}: error: {e}\n");
        let _ = std::io::Write::write_all(&mut std::io::stderr().lock(), line.as_bytes());
        drop(universe);
        std::process::exit(2);
    }
}

/// Injected faults: `(rank, phase)` of a rank that dies, hangs, is killed or stopped.
#[derive(Debug, Clone, Copy)]
struct Faults {
    die: Option<(i32, usize)>,
    hang: Option<(i32, usize)>,
    kill: Option<(i32, usize)>,
    stop: Option<(i32, usize)>,
}

impl Faults {
    /// Called by every rank in the middle of `phase`: SIGKILL itself if asked.
    fn kill_midway(&self, rank: i32, phase: usize) {
        for (fault, signal) in [(self.kill, "KILL"), (self.stop, "STOP")] {
            if fault == Some((rank, phase)) {
                eprintln!("heat2d: rank {rank} sends itself SIG{signal} in phase {phase}");
                let pid = std::process::id().to_string();
                let _ = std::process::Command::new("kill")
                    .args([&format!("-{signal}"), &pid])
                    .status();
                std::thread::sleep(Duration::from_secs(60));
            }
        }
    }

    /// Called by every rank at the end of `phase`, outside nuce's guards.
    fn inject(&self, rank: i32, phase: usize) {
        if self.die == Some((rank, phase)) {
            eprintln!("heat2d: rank {rank} aborts itself (--die) at the end of phase {phase}");
            std::process::abort();
        }
        if self.hang == Some((rank, phase)) {
            eprintln!("heat2d: rank {rank} hangs (--hang) at the end of phase {phase}");
            loop {
                std::thread::sleep(Duration::from_secs(3600));
            }
        }
    }
}

fn run(
    args: &Args,
    world: &mpi::topology::SimpleCommunicator,
    slow: &[Slow],
    hosts: Option<&[usize]>,
    faults: Faults,
    (limit, functional): (Option<usize>, Option<bool>),
) -> nuce::Result<()> {
    let rank = world.rank();
    let start = Instant::now();
    let (mut policy, kernel) = args.run.policy_and_kernel(slow, rank);
    let fixed = parse_speeds(&args.static_speeds)?;
    if fixed.is_some() {
        // A hysteresis of 100 % is never beaten: the split stays.
        policy.hysteresis = 1.0;
    }
    let mut bal = Balancer::new(world)?;
    bal.set_kernel(kernel);
    bal.set_memory_limit(limit)?;
    // Ghost exchanges travel on the array's communicator, the phase's end on
    // the balancer's: ranks that ran other numbers of iterations would wait
    // on different communicators, so the count is checked up front.
    bal.check_call(&format!(
        "heat2d: {} iterations per phase, warm-up {}",
        args.run.iters, args.warmup
    ))?;
    // Hosts first: the speed records are then gathered through the host leaders.
    let hier = args.hier || args.algo == "hier";
    if hier {
        match hosts {
            Some(h) => bal.set_hosts(h)?,
            None => bal.detect_hosts()?,
        };
    }
    let initial_speeds = if let Some(v) = fixed {
        bal.set_speeds(&v)?;
        v
    } else if args.run.uniform || args.warmup > 0 {
        vec![1.0; world.size() as usize]
    } else {
        bal.measure()?
    };
    let mut network = None;
    if args.net {
        let cfg = ProbeConfig {
            large_bytes: args.net_bytes,
            repeats: 5,
            ..Default::default()
        };
        let n = bal.measure_network(&cfg)?;
        network = Some(NetSummary {
            bandwidth: n.bandwidth,
            latency_s: n.latency_s,
            latency_cells: n.latency_cells(std::mem::size_of::<f64>()),
        });
    }
    let latency = network.as_ref().map_or(0.0, |n| n.latency_cells);
    let base = if args.algo == "hier" {
        "column"
    } else {
        &args.algo
    };
    // Other settings or an unknown name on one rank are the same error on every rank.
    bal.configure(Settings {
        policy,
        array_algorithm: ArrayAlgorithm::Named {
            name: base.to_string(),
            latency_cells: latency,
        },
        hierarchical: hier,
        functional_model: functional.unwrap_or(bal.settings().functional_model),
        ..bal.settings().clone()
    })?;
    let host_ids = bal.measured().hosts().map(|h| h.host_of.clone());
    let global = (rank == 0).then(|| initial(args.rows, args.cols));
    // Every rank states the shape it expects (its `--rows`, `--cols`).
    let mut a = DistArray2::scatter_of(&mut bal, (args.rows, args.cols), global.as_ref(), 1)?;
    let mut rows_out = Vec::new();
    if rank == 0 && !args.json {
        println!(
            "{:>5} {:>12} {:>10} {:>9} {:>8} {:>10}  speeds (Mcell/s)",
            "phase", "s/iter", "pred s/it", "imbal", "remap", "MB moved"
        );
    }
    let iters_of = |phase: usize| {
        if phase == 0 && args.warmup > 0 {
            args.warmup
        } else {
            args.run.iters
        }
    };
    for phase in 0..args.run.phases {
        let iters = iters_of(phase);
        let r = a.rect();
        let factor = factor_at(slow, rank, phase, r.area());
        // The emulated slowness is the rank's: a rank with an empty block
        // probes the kernel at the balance point, and sees it too.
        bal.set_kernel(KernelConfig {
            work_multiplier: factor as f64,
            ..Default::default()
        });
        let mut next = Array2::zeros((r.rows, r.cols));
        let mut scratch = Array2::zeros((r.rows, r.cols));
        let mut compute = Duration::ZERO;
        let t_phase = Instant::now();
        let guard = nuce::guard(
            rank,
            format!("heat2d phase {phase}"),
            bal.settings().timeout,
        );
        for it in 0..iters {
            if it == iters / 2 {
                faults.kill_midway(rank, phase);
            }
            a.exchange_ghosts()?;
            let t = Instant::now();
            for _ in 0..factor {
                sweep(
                    black_box(a.padded()),
                    &mut next,
                    1,
                    r.row,
                    r.col,
                    args.rows,
                    args.cols,
                );
                black_box(&mut next);
            }
            // The copy back is part of an iteration's work too: a slowed rank
            // repeats it (into scratch) so that its per-cell cost is really F×.
            for _ in 1..factor {
                scratch.assign(black_box(&next));
                black_box(&mut scratch);
            }
            a.local_mut().assign(&next);
            compute += t.elapsed();
        }
        drop(guard);
        // nuce times the phase by itself (compute = wall time outside its
        // communication); `compute` is kept only for the table. The solver's
        // own reporting collectives are kept out of the compute time.
        let (phase_time, compute_max) = {
            let _w = nuce::waiting();
            // The solver's own collectives are checked like nuce's: a rank
            // that runs another number of phases is named here at once.
            bal.check_call(&format!(
                "heat2d phase {phase} of {} timing",
                args.run.phases
            ))?;
            let _g = nuce::guard(
                rank,
                format!("heat2d phase {phase} timing"),
                bal.settings().timeout,
            );
            let wall = t_phase.elapsed().as_secs_f64();
            (
                max_f64(bal.comm(), wall),
                max_f64(bal.comm(), compute.as_secs_f64()),
            )
        };
        faults.inject(rank, phase);
        let areas = a.plan().areas();
        let ahead = args.run.iters * (args.run.phases - phase - 1).max(1);
        let rep = bal.maybe_remap_ahead(&mut a, iters, ahead)?;
        let row = PhaseRow {
            phase,
            time_per_iter: phase_time / iters as f64,
            compute_per_iter_max: compute_max / iters as f64,
            speeds: rep.speeds.clone(),
            noise: rep.estimates.iter().map(|e| e.noise).collect(),
            model: rep.model,
            rule: rep.rule,
            imbalance: rep.imbalance_current,
            predicted_next: if rep.remap {
                rep.t_candidate
            } else {
                rep.t_current
            },
            t_candidate: rep.t_candidate,
            t_migration: rep.t_migration,
            net_gain: rep.net_gain,
            remapped: rep.remap,
            bytes_moved: rep.moved.map_or(0, |m| m.bytes),
            messages: rep.moved.map_or(0, |m| m.messages),
            remap_seconds: rep.moved.map_or(0.0, |m| m.seconds),
            areas,
        };
        if rank == 0 && !args.json {
            let sp: Vec<String> = row
                .speeds
                .iter()
                .map(|s| format!("{:.1}", s / 1e6))
                .collect();
            println!(
                "{:>5} {:>12.6} {:>10.6} {:>8.1}% {:>8} {:>10.3}  [{}]",
                phase,
                row.time_per_iter,
                row.predicted_next,
                row.imbalance * 100.0,
                if row.remapped { "yes" } else { "no" },
                row.bytes_moved as f64 / 1e6,
                sp.join(", ")
            );
        }
        rows_out.push(row);
    }
    let result = a.gather(0)?;
    let (mut max_abs, mut rel) = (None, None);
    if let (Some(res), false) = (result, args.run.no_check) {
        let total: usize = (0..args.run.phases).map(iters_of).sum();
        let reference = serial(args.rows, args.cols, total);
        let diff = (&res - &reference)
            .iter()
            .fold(0.0f64, |m, d| m.max(d.abs()));
        let scale = reference
            .iter()
            .fold(0.0f64, |m, d| m.max(d.abs()))
            .max(f64::MIN_POSITIVE);
        max_abs = Some(diff);
        rel = Some(diff / scale);
    }
    bal.check_call("heat2d total time")?;
    let total = max_f64(bal.comm(), start.elapsed().as_secs_f64());
    let steady: Vec<f64> = rows_out.iter().skip(1).map(|r| r.time_per_iter).collect();
    let steady_s_per_iter = if steady.is_empty() {
        rows_out.first().map_or(0.0, |r| r.time_per_iter)
    } else {
        steady.iter().sum::<f64>() / steady.len() as f64
    };
    let ideal_s_per_iter = rows_out.last().map_or(0.0, |r| {
        (args.rows * args.cols) as f64 / r.speeds.iter().sum::<f64>()
    });
    if rank == 0 {
        let summary = Summary {
            algorithm: match bal.measured().hosts() {
                Some(_) if hier => "hier".to_string(),
                _ => bal.settings().array_algorithm.name().to_string(),
            },
            network,
            hosts: host_ids,
            ranks: world.size(),
            rows: args.rows,
            cols: args.cols,
            iters_per_phase: args.run.iters,
            warmup: args.warmup,
            uniform: args.run.uniform,
            initial_speeds,
            phases: rows_out,
            max_abs_diff: max_abs,
            relative_diff: rel,
            total_seconds: total,
            steady_s_per_iter,
            ideal_s_per_iter,
            final_plan: a.plan().parts.clone(),
        };
        if args.json {
            println!(
                "{}",
                serde_json::to_string(&summary)
                    .map_err(|e| nuce::Error::Plan(nuce::plan::Error::Io(e.to_string())))?
            );
        } else {
            if let (Some(d), Some(r)) = (max_abs, rel) {
                println!(
                    "serial check: max |diff| = {d:.3e} (relative {r:.3e}) {}",
                    if r <= 1e-12 { "OK" } else { "MISMATCH" }
                );
            }
            println!(
                "SUMMARY steady_s_per_iter {steady_s_per_iter:.6} ideal_s_per_iter {ideal_s_per_iter:.6}"
            );
        }
        if rel.is_some_and(|r| r > 1e-12) {
            return Err(nuce::Error::invalid_input(
                "result differs from the serial solve",
            ));
        }
    }
    Ok(())
}
