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
//! P on (it really computes F times; the library is never told, it measures).
//!
//! ```text
//! mpirun -np 4 target/release/examples/heat2d --rows 512 --cols 512 --phases 8 \
//!        --iters 40 --slowdown 1:3@0,1:1@4,2:4@4
//! ```

use std::hint::black_box;
use std::time::{Duration, Instant};

use clap::Parser;
use mpi::traits::*;
use ndarray::Array2;
use nuce::plan::array2d::{ArrayPlan, RecursiveBisection2};
use nuce::runtime::array::DistArray2;
use nuce::runtime::balancer::Balancer;
use nuce::runtime::comm::max_f64;
use nuce::speed::KernelConfig;
use serde::Serialize;

#[derive(Parser, Debug)]
#[command(about = "Jacobi heat diffusion, load-balanced by nuce")]
struct Args {
    /// Grid rows.
    #[arg(long, default_value_t = 512)]
    rows: usize,
    /// Grid columns.
    #[arg(long, default_value_t = 512)]
    cols: usize,
    /// Number of phases.
    #[arg(long, default_value_t = 8)]
    phases: usize,
    /// Iterations per phase.
    #[arg(long, default_value_t = 40)]
    iters: usize,
    /// Work multipliers: `R:F@P,…` = rank R does F× the work from phase P on.
    #[arg(long, default_value = "")]
    slowdown: String,
    /// Never remap, and start from a uniform split (the HPF BLOCK baseline).
    #[arg(long)]
    uniform: bool,
    /// Hysteresis of the remap decision (fraction).
    #[arg(long, default_value_t = 0.05)]
    hysteresis: f64,
    /// Skip the serial check at the end.
    #[arg(long)]
    no_check: bool,
    /// Print one JSON document on the root instead of the table.
    #[arg(long)]
    json: bool,
}

/// A work multiplier change: rank, factor, first phase.
#[derive(Debug, Clone, Copy)]
struct Slow {
    rank: i32,
    factor: usize,
    phase: usize,
}

fn parse_slowdown(s: &str) -> Result<Vec<Slow>, String> {
    s.split(',')
        .filter(|t| !t.trim().is_empty())
        .map(|t| {
            let bad = || format!("bad --slowdown item {t:?}: expected RANK:FACTOR@PHASE");
            let (rf, p) = t.split_once('@').unwrap_or((t, "0"));
            let (r, f) = rf.split_once(':').ok_or_else(bad)?;
            Ok(Slow {
                rank: r.trim().parse().map_err(|_| bad())?,
                factor: f.trim().parse().map_err(|_| bad())?,
                phase: p.trim().parse().map_err(|_| bad())?,
            })
        })
        .collect()
}

fn factor_at(slow: &[Slow], rank: i32, phase: usize) -> usize {
    slow.iter()
        .filter(|s| s.rank == rank && s.phase <= phase)
        .max_by_key(|s| s.phase)
        .map_or(1, |s| s.factor.max(1))
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
    for i in 0..m {
        let gr = row0 + i;
        for j in 0..n {
            let gc = col0 + j;
            let (pi, pj) = (i + g, j + g);
            dst[[i, j]] = if gr == 0 || gc == 0 || gr + 1 == rows || gc + 1 == cols {
                src[[pi, pj]]
            } else {
                0.25 * (src[[pi - 1, pj]]
                    + src[[pi + 1, pj]]
                    + src[[pi, pj - 1]]
                    + src[[pi, pj + 1]])
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
struct Summary {
    ranks: i32,
    rows: usize,
    cols: usize,
    iters_per_phase: usize,
    uniform: bool,
    initial_speeds: Vec<f64>,
    phases: Vec<PhaseRow>,
    max_abs_diff: Option<f64>,
    relative_diff: Option<f64>,
    total_seconds: f64,
}

fn main() {
    let args = Args::parse();
    let universe = mpi::initialize().expect("MPI init");
    let world = universe.world();
    let rank = world.rank();
    let slow = match parse_slowdown(&args.slowdown) {
        Ok(s) => s,
        Err(e) => {
            if rank == 0 {
                eprintln!("heat2d: {e}");
            }
            return;
        }
    };
    if let Err(e) = run(&args, &world, &slow) {
        if rank == 0 {
            eprintln!("heat2d: error: {e}");
        }
        drop(universe);
        std::process::exit(2);
    }
}

fn run(args: &Args, world: &mpi::topology::SimpleCommunicator, slow: &[Slow]) -> nuce::Result<()> {
    let rank = world.rank();
    let start = Instant::now();
    // The uniform baseline never remaps: a hysteresis of 100 % can never be beaten.
    let policy = nuce::plan::policy::RemapPolicy {
        hysteresis: if args.uniform { 1.0 } else { args.hysteresis },
        ..Default::default()
    };
    let kernel = KernelConfig {
        work_multiplier: factor_at(slow, rank, 0) as f64,
        ..Default::default()
    };
    let mut bal = Balancer::new(world, RecursiveBisection2)?
        .with_policy(policy)
        .with_kernel(kernel);
    let initial_speeds = if args.uniform {
        vec![1.0; world.size() as usize]
    } else {
        bal.measure()?
    };
    let plan: ArrayPlan = bal.plan(args.rows, args.cols)?;
    let global = (rank == 0).then(|| initial(args.rows, args.cols));
    let (mut a, _) = DistArray2::scatter_from_root(bal.comm(), 0, plan, 1, global.as_ref())?;
    let mut rows_out = Vec::new();
    if rank == 0 && !args.json {
        println!(
            "{:>5} {:>12} {:>10} {:>9} {:>8} {:>10}  speeds (Mcell/s)",
            "phase", "s/iter", "pred s/it", "imbal", "remap", "MB moved"
        );
    }
    for phase in 0..args.phases {
        let factor = factor_at(slow, rank, phase);
        let r = a.rect();
        let mut next = Array2::zeros((r.rows, r.cols));
        let mut compute = Duration::ZERO;
        let t_phase = Instant::now();
        for _ in 0..args.iters {
            a.halo_exchange(bal.comm())?;
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
            compute += t.elapsed();
            a.local_mut().assign(&next);
        }
        let phase_time = max_f64(bal.comm(), t_phase.elapsed().as_secs_f64());
        let compute_max = max_f64(bal.comm(), compute.as_secs_f64());
        bal.record_phase((r.area() * args.iters) as f64, compute)?;
        let areas = a.plan().areas();
        let rep = bal.maybe_remap(&mut a, args.iters * (args.phases - phase - 1).max(1))?;
        let row = PhaseRow {
            phase,
            time_per_iter: phase_time / args.iters as f64,
            compute_per_iter_max: compute_max / args.iters as f64,
            speeds: rep.speeds.clone(),
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
    let result = a.gather_to_root(bal.comm(), 0)?;
    let (mut max_abs, mut rel) = (None, None);
    if let (Some(res), false) = (result, args.no_check) {
        let reference = serial(args.rows, args.cols, args.phases * args.iters);
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
    let total = max_f64(bal.comm(), start.elapsed().as_secs_f64());
    if rank == 0 {
        let summary = Summary {
            ranks: world.size(),
            rows: args.rows,
            cols: args.cols,
            iters_per_phase: args.iters,
            uniform: args.uniform,
            initial_speeds,
            phases: rows_out,
            max_abs_diff: max_abs,
            relative_diff: rel,
            total_seconds: total,
        };
        if args.json {
            println!(
                "{}",
                serde_json::to_string(&summary).map_err(|e| nuce::Error::Io(e.to_string()))?
            );
        } else if let (Some(d), Some(r)) = (max_abs, rel) {
            println!(
                "serial check: max |diff| = {d:.3e} (relative {r:.3e}) {}",
                if r <= 1e-12 { "OK" } else { "MISMATCH" }
            );
        }
        if rel.is_some_and(|r| r > 1e-12) {
            return Err(nuce::Error::InvalidInput(
                "result differs from the serial solve".into(),
            ));
        }
    }
    Ok(())
}
