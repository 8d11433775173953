//! heat3d — a 7-point Jacobi heat-diffusion solver on a 3D grid
//! ([`nuce::DistArray3`]) that balances itself with nuce.
//!
//! The `nx × ny × nz` grid is decomposed into boxes in proportion to the
//! ranks' measured speeds ([`DistArray3::scatter`], `Best3` for a
//! 7-point stencil). The solver runs in phases of `--iters` iterations, each
//! a face exchange (`exchange_faces`) and a sweep; between phases
//! `Balancer::maybe_remap` remaps when the measured speeds make it pay off.
//! At the end the grid is gathered and compared with a serial solve, bit
//! for bit.
//!
//! `--slowdown R:F@P` makes rank R do F times the work per cell from phase P
//! on (it really computes F times; nuce is never told, it measures), as in
//! `heat2d`; `--slowdown R:F@P:above=N` only while its box has more than N
//! cells (a speed that depends on the size of the work, planned by nuce's
//! functional model unless `NUCE_SPEED_MODEL=constant`). `--uniform` starts from a uniform split and never remaps (the
//! baseline).
//!
//! ```text
//! mpirun -np 2 target/release/examples/heat3d --nx 96 --ny 96 --nz 96 \
//!        --phases 6 --iters 20 --slowdown 1:3@0
//! ```
//!
//! Rank 0 prints a line per phase and `RESULT heat3d …` at the end.

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
#[command(about = "3D Jacobi heat diffusion, load-balanced by nuce")]
struct Args {
    /// Cells along x.
    #[arg(long, default_value_t = 64)]
    nx: usize,
    /// Cells along y.
    #[arg(long, default_value_t = 64)]
    ny: usize,
    /// Cells along z.
    #[arg(long, default_value_t = 64)]
    nz: usize,
    /// Phases, slowdowns, baseline and check.
    #[command(flatten)]
    run: PhaseArgs,
}

fn main() {
    let args = Args::parse();
    launch("heat3d", &args.run.slowdown, |world, slow| {
        run(&args, world, slow)
    });
}

fn run(args: &Args, world: &mpi::topology::SimpleCommunicator, slow: &[Slow]) -> nuce::Result<()> {
    let rank = world.rank();
    let shape = (args.nx, args.ny, args.nz);
    let cells = args.nx * args.ny * args.nz;
    let start = Instant::now();
    let (policy, kernel) = args.run.policy_and_kernel(slow, rank);
    let mut bal = Balancer::new(world)?;
    bal.set_kernel(kernel);
    bal.check_call(&format!(
        "heat3d: {} phases of {} iterations",
        args.run.phases, args.run.iters
    ))?;
    bal.configure(Settings {
        policy,
        ..bal.settings().clone()
    })?;
    if !args.run.uniform {
        bal.measure()?;
    }
    let global = (rank == 0).then(|| initial(args.nx, args.ny, args.nz));
    let mut u: DistArray3<f64> = DistArray3::scatter(&mut bal, shape, 1, global.as_deref(), 1)?;
    if rank == 0 {
        println!(
            "{:>5} {:>12} {:>9} {:>6} {:>10}  volumes / speeds (Mcell/s) / rule",
            "phase", "s/iter", "imbal", "remap", "MB moved"
        );
    }
    let (mut steady, mut remaps) = (Vec::new(), 0);
    for phase in 0..args.run.phases {
        let b = u.local_box();
        let factor = factor_at(slow, rank, phase, b.volume());
        let mut next = vec![0.0; b.volume()];
        let mut scratch = vec![0.0; b.volume()];
        let t_phase = Instant::now();
        for _ in 0..args.run.iters {
            u.exchange_faces()?;
            for _ in 0..factor {
                sweep(black_box(u.padded()), &b, shape, &mut next);
                black_box(&mut next);
            }
            // A slowed rank repeats the copy back too: its per-cell cost is really F×.
            for _ in 1..factor {
                scratch.copy_from_slice(black_box(&next));
                black_box(&mut scratch);
            }
            u.set_local_values(&next)?;
        }
        let wall = {
            let _w = nuce::waiting();
            bal.check_call(&format!("heat3d phase {phase} timing"))?;
            max_f64(bal.comm(), t_phase.elapsed().as_secs_f64())
        };
        let volumes = u.plan().volumes();
        let ahead = args.run.iters * (args.run.phases - phase - 1).max(1);
        let rep = bal.maybe_remap_ahead(&mut u, args.run.iters, ahead)?;
        let per_iter = wall / args.run.iters as f64;
        if phase > 0 {
            steady.push(per_iter);
        }
        remaps += usize::from(rep.remap);
        if rank == 0 {
            let sp: Vec<String> = rep
                .speeds
                .iter()
                .map(|s| format!("{:.1}", s / 1e6))
                .collect();
            println!(
                "{:>5} {:>12.6} {:>8.1}% {:>6} {:>10.3}  {:?} [{}] {:?}",
                phase,
                per_iter,
                rep.imbalance_current * 100.0,
                if rep.remap { "yes" } else { "no" },
                rep.moved.map_or(0, |m| m.bytes) as f64 / 1e6,
                volumes,
                sp.join(", "),
                rep.decision.rule
            );
        }
    }
    let result = u.gather(0)?;
    let mut diff = None;
    if let (Some(res), false) = (result, args.run.no_check) {
        let reference = serial(shape, args.run.phases * args.run.iters);
        let same = res
            .iter()
            .zip(&reference)
            .filter(|(a, b)| a.to_bits() != b.to_bits())
            .count();
        diff = Some(same);
    }
    bal.check_call("heat3d total time")?;
    let total = max_f64(bal.comm(), start.elapsed().as_secs_f64());
    // The steady state: the median time per iteration of the phases after
    // the first (robust to a phase slowed by another job on shared cores).
    steady.sort_by(f64::total_cmp);
    let steady_s = steady.get(steady.len() / 2).copied().unwrap_or(0.0);
    if rank == 0 {
        if let Some(d) = diff {
            println!(
                "serial check: {d} of {cells} cells differ {}",
                if d == 0 {
                    "OK (bit for bit)"
                } else {
                    "MISMATCH"
                }
            );
        }
        println!(
            "RESULT heat3d ranks {} cells {cells} steady_s_per_iter {steady_s:.6} total_s {total:.3} remaps {remaps} differing_cells {} uniform {}",
            world.size(),
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
