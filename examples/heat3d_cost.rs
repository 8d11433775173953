//! heat3d_cost — the 7-point Jacobi solver of `heat3d` where the work is
//! not uniform in space: besides its stencil, every cell runs a
//! "chemistry" step of `--work` units of dependent arithmetic per iteration
//! (compute-bound, so that its time is proportional to the units and the
//! stencil's memory traffic is a few % of the work), and the cells of a
//! band of x-planes (a quarter of the grid by default) run `--band-factor`
//! (4) times as many units. The band moves between the two ends of the
//! grid every `--move-every` phases. The chemistry does not touch the
//! field, so the result is the serial solve's, bit for bit.
//!
//! The solver tells nuce each phase's cost per cell
//! ([`DistArray3::set_cost_with`], a closure on global indices); the
//! balancer times each rank by its summed cost, plans with the weighted
//! recursive bisection and decides on `Σ cost / speed`. The phase in which
//! the band moves runs on the old layout; the balance point after it moves
//! the data, and the next phase is balanced again.
//!
//! Rank 0 prints, per phase, the time per iteration (slowest rank, wall
//! time including the ghost exchange), the ideal time per iteration (total
//! cost / Σ measured speeds, compute only), their ratio, the remap decision,
//! and the predicted cost balance of the layout in effect after the balance
//! point (`imbalance`, `max_i (C_i/s_i) / (C/S) − 1` for this phase's cost;
//! the `COST` line adds the balance of the layout proposed, `candidate`,
//! adopted or not) with the bound the planner guarantees (`bound`: half the heaviest plane
//! per cut on a part's path, `p − 1` cuts at most, relative to the
//! slowest-speed share). At the end the grid is compared with a serial
//! solve, bit for bit.
//!
//! ```text
//! mpirun -np 2 target/release/examples/heat3d_cost --nx 96 --ny 64 --nz 64 \
//!        --phases 8 --iters 20
//! ```

use std::hint::black_box;
use std::time::Instant;

use clap::Parser;
use mpi::traits::*;
use nuce::collective::max_f64;
use nuce::{Balancer, DistArray3, Settings};

#[path = "common/jacobi3d.rs"]
mod jacobi3d;
#[path = "common/slowdown.rs"]
mod slowdown;
use jacobi3d::{initial, launch, serial, sweep};
use slowdown::{factor_at, PhaseArgs, Slow};

#[derive(Parser, Debug)]
#[command(about = "3D Jacobi heat diffusion with a moving expensive band, balanced by cost")]
struct Args {
    /// Cells along x (the band is a range of x-planes).
    #[arg(long, default_value_t = 64)]
    nx: usize,
    /// Cells along y.
    #[arg(long, default_value_t = 64)]
    ny: usize,
    /// Cells along z.
    #[arg(long, default_value_t = 64)]
    nz: usize,
    /// Work per cell in the band, relative to the rest.
    #[arg(long, default_value_t = 4)]
    band_factor: usize,
    /// Width of the band as a fraction of `nx`.
    #[arg(long, default_value_t = 0.25)]
    band_width: f64,
    /// Units of chemistry per cell and iteration outside the band.
    #[arg(long, default_value_t = 50)]
    work: usize,
    /// The band moves (to the other end of the grid) every this many phases.
    #[arg(long, default_value_t = 2)]
    move_every: usize,
    /// Phases, slowdowns, baseline and check.
    #[command(flatten)]
    run: PhaseArgs,
}

/// The x-planes `[lo, hi)` of the band in `phase`: at the low end of the
/// grid, then at the high end, alternating every `move_every` phases.
fn band(args: &Args, phase: usize) -> (usize, usize) {
    let w = ((args.nx as f64 * args.band_width).round() as usize).clamp(1, args.nx);
    if (phase / args.move_every.max(1)) % 2 == 0 {
        (0, w)
    } else {
        (args.nx - w, args.nx)
    }
}

/// The chemistry of `units` cell steps: a dependent multiply-add chain,
/// opaque to the optimiser, whose time is proportional to `units`.
fn chemistry(units: usize) -> f64 {
    let mut x = 1.0f64;
    for _ in 0..units {
        x = black_box(x).mul_add(0.999_999, 1e-9);
    }
    x
}

fn main() {
    let args = Args::parse();
    launch("heat3d_cost", &args.run.slowdown, |world, slow| {
        run(&args, world, slow)
    });
}

fn run(args: &Args, world: &mpi::topology::SimpleCommunicator, slow: &[Slow]) -> nuce::Result<()> {
    let rank = world.rank();
    let p = world.size() as usize;
    let (nx, ny, nz) = (args.nx, args.ny, args.nz);
    let shape = (nx, ny, nz);
    let f = args.band_factor.max(1);
    let (policy, kernel) = args.run.policy_and_kernel(slow, rank);
    let mut bal = Balancer::new(world)?;
    bal.set_kernel(kernel);
    bal.check_call(&format!(
        "heat3d_cost: {nx}x{ny}x{nz}, {} phases of {} iterations, band x{f} of {} moving every {}",
        args.run.phases, args.run.iters, args.band_width, args.move_every
    ))?;
    bal.configure(Settings {
        policy,
        ..bal.settings().clone()
    })?;
    let global = (rank == 0).then(|| initial(nx, ny, nz));
    let mut u: DistArray3<f64> = DistArray3::scatter(&mut bal, shape, 1, global.as_deref(), 1)?;
    if rank == 0 {
        println!(
            "{:>5} {:>9} {:>11} {:>11} {:>6} {:>6} {:>9} {:>8}  volumes",
            "phase", "band", "s/iter", "ideal", "ratio", "remap", "imbal", "bound"
        );
    }
    let mut after_move = Vec::new();
    for phase in 0..args.run.phases {
        let (lo, hi) = band(args, phase);
        let in_band = move |i: usize| (lo..hi).contains(&i);
        let cost = move |i: usize| if in_band(i) { f as f64 } else { 1.0 };
        // This phase's cost per cell, on this rank's box (a closure on
        // global indices; set again after every remap).
        u.set_cost_with(move |i, _, _| cost(i));
        let b = u.local_box();
        let slowdown = factor_at(slow, rank, phase, b.volume());
        let mut next = vec![0.0; b.volume()];
        let t_phase = Instant::now();
        for _ in 0..args.run.iters {
            u.exchange_faces()?;
            sweep(u.padded(), &b, shape, &mut next);
            let mut acc = 0.0;
            for i in b.x..b.x + b.nx {
                let units = slowdown * args.work * if in_band(i) { f } else { 1 };
                acc += chemistry(units * b.ny * b.nz);
            }
            black_box(acc);
            u.set_local_values(&next)?;
        }
        let wall = {
            let _w = nuce::waiting();
            bal.check_call(&format!("heat3d_cost phase {phase} timing"))?;
            max_f64(bal.comm(), t_phase.elapsed().as_secs_f64())
        };
        let volumes = u.plan().volumes();
        let ahead = args.run.iters * (args.run.phases - phase - 1).max(1);
        let rep = bal.maybe_remap_ahead(&mut u, args.run.iters, ahead)?;
        // The cost of this phase: the total, the heaviest plane across any
        // axis, and the bound of the planner on the imbalance.
        let w = (hi - lo) as f64;
        let total = (ny * nz) as f64 * (nx as f64 + (f as f64 - 1.0) * w);
        let plane = ((f * ny * nz) as f64)
            .max(nz as f64 * (nx as f64 + (f as f64 - 1.0) * w))
            .max(ny as f64 * (nx as f64 + (f as f64 - 1.0) * w));
        let sum_s: f64 = rep.speeds.iter().sum();
        let min_s = rep.speeds.iter().copied().fold(f64::INFINITY, f64::min);
        let bound = (p - 1) as f64 * plane / 2.0 / (total * min_s / sum_s);
        let imbalance = if rep.remap {
            rep.imbalance_candidate
        } else {
            rep.imbalance_current
        };
        let per_iter = wall / args.run.iters as f64;
        let ideal = total / sum_s;
        if phase % args.move_every.max(1) == 1 {
            after_move.push(per_iter / ideal);
        }
        if rank == 0 {
            println!(
                "{:>5} {:>4}..{:<4} {:>11.6} {:>11.6} {:>6.3} {:>6} {:>8.2}% {:>7.2}%  {:?}",
                phase,
                lo,
                hi,
                per_iter,
                ideal,
                per_iter / ideal,
                if rep.remap { "yes" } else { "no" },
                imbalance * 100.0,
                bound * 100.0,
                volumes
            );
            println!(
                "COST phase {phase} moved {} remap {} imbalance {imbalance:.6} candidate {:.6} bound {bound:.6} ratio {:.4} rule {:?}",
                phase % args.move_every.max(1) == 0,
                rep.remap,
                rep.imbalance_candidate,
                per_iter / ideal,
                rep.decision.rule
            );
        }
    }
    let result = u.gather(0)?;
    let mut diff = None;
    if let (Some(res), false) = (result, args.run.no_check) {
        let reference = serial(shape, args.run.phases * args.run.iters);
        let differ = res
            .iter()
            .zip(&reference)
            .filter(|(a, b)| a.to_bits() != b.to_bits())
            .count();
        diff = Some(differ);
    }
    if rank == 0 {
        let ratios: Vec<String> = after_move.iter().map(|r| format!("{r:.3}")).collect();
        let worst = after_move.iter().copied().fold(0.0, f64::max);
        println!(
            "RESULT heat3d_cost ranks {p} cells {} after_move_ratios {} worst_after_move {worst:.3} differing_cells {} uniform {}",
            nx * ny * nz,
            ratios.join(","),
            diff.map_or("unchecked".to_string(), |d| d.to_string()),
            args.run.uniform
        );
        if diff.is_some_and(|d| d > 0) {
            return Err(nuce::Error::invalid_input(
                "result differs from the serial solve",
            ));
        }
    }
    Ok(())
}
