//! Ranks that join against a job started with them (issue 29's goal: one
//! phase after a join, time per iteration within 1.10× of a job started on
//! that many ranks with the same speeds). On P ranks, alternating rounds:
//!
//! * **started**: every rank active from the start: balancer, kernel
//!   measurement, a grid of `N³` f64 planned for the speeds, one warm-up
//!   phase, then one timed phase;
//! * **joined**: the last rank waits in a standby pool (`nuce::Pool`); the
//!   others run the grid for one phase, admit it (speeds measured, the grid
//!   planned for every rank, the move), then one timed phase.
//!
//! A phase is `--iters` iterations of a ghost exchange and a 7-point sweep.
//! Prints the medians of the timed phases' time per iteration and their
//! ratio.
//!
//! ```sh
//! mpirun -np 3 target/release/examples/bench_join --n 96 --iters 20 --rounds 5
//! ```

#[path = "common/cli.rs"]
mod cli;
#[path = "common/timing.rs"]
mod timing;

use mpi::topology::SimpleCommunicator;
use mpi::traits::*;
use nuce::plan::array3d::Stencil;
use nuce::{Balancer, Field, Grid, Pool};

/// `iters` iterations on `grid` (u padded by 1, v its twin): seconds per
/// iteration, the slowest rank's.
fn phase(
    comm: &SimpleCommunicator,
    grid: &mut Grid,
    u: &mut Vec<f64>,
    v: &mut Vec<f64>,
    iters: usize,
) -> f64 {
    let b = grid.local_box();
    let (py, pz) = (b.ny + 2, b.nz + 2);
    timing::per_call(comm, iters, || {
        grid.exchange(&mut [Field::new(u, [1; 3])])
            .expect("exchange");
        for i in 1..=b.nx {
            for j in 1..=b.ny {
                for k in 1..=b.nz {
                    let c = (i * py + j) * pz + k;
                    v[c] = (u[c - py * pz]
                        + u[c + py * pz]
                        + u[c - pz]
                        + u[c + pz]
                        + u[c - 1]
                        + u[c + 1])
                        / 6.0;
                }
            }
        }
        std::mem::swap(u, v);
    })
}

fn buffers(grid: &Grid) -> (Vec<f64>, Vec<f64>) {
    let n = grid.padded_len([1; 3]).expect("padded length");
    (vec![1.0; n], vec![0.0; n])
}

fn main() -> nuce::Result<()> {
    let universe = mpi::initialize().unwrap();
    let world = universe.world();
    let args: Vec<String> = std::env::args().collect();
    let n: usize = cli::option(&args, "--n", "96").parse().unwrap();
    let iters: usize = cli::option(&args, "--iters", "20").parse().unwrap();
    let rounds: usize = cli::option(&args, "--rounds", "5").parse().unwrap();
    let shape = (n, n, n);
    let last = world.rank() == world.size() - 1;
    let (mut started, mut joined) = (Vec::new(), Vec::new());
    for _ in 0..rounds {
        // Started with every rank.
        let mut bal = Balancer::new(&world)?;
        bal.measure()?;
        let mut grid = Grid::new(&mut bal, shape, Stencil::seven(1))?;
        let (mut u, mut v) = buffers(&grid);
        phase(&world, &mut grid, &mut u, &mut v, iters);
        started.push(phase(&world, &mut grid, &mut u, &mut v, iters));
        // The last rank joins after a phase.
        let mut pool = Pool::new(&world, last)?;
        let t = if last {
            let Some(mut j) = pool.wait()? else { continue };
            let mut grid = j.grids.pop().expect("the grid");
            let (mut u, mut v) = buffers(&grid);
            grid.move_fields(
                &[Field::new(&mut Vec::<f64>::new(), [1; 3])],
                &mut [Field::new(&mut u, [1; 3])],
            )?;
            let t = phase(&j.comm, &mut grid, &mut u, &mut v, iters);
            pool.release(&j.balancer)?;
            t
        } else {
            let comm = pool.active().expect("active").duplicate();
            let mut bal = Balancer::new(&comm)?;
            bal.measure()?;
            let mut grid = Grid::new(&mut bal, shape, Stencil::seven(1))?;
            let (mut u, mut v) = buffers(&grid);
            phase(&comm, &mut grid, &mut u, &mut v, iters);
            let grown = pool.admit(&mut bal, 1, &mut [&mut grid])?;
            let (mut nu, nv) = buffers(&grid);
            grid.move_fields(
                &[Field::new(&mut u, [1; 3])],
                &mut [Field::new(&mut nu, [1; 3])],
            )?;
            let (mut u, mut v) = (nu, nv);
            let t = phase(&grown, &mut grid, &mut u, &mut v, iters);
            pool.release(&bal)?;
            t
        };
        joined.push(t);
    }
    if world.rank() == 0 {
        let (s, j) = (timing::median(started), timing::median(joined));
        println!(
            "bench_join: {n}^3 f64 on {} ranks, {iters} iterations a phase, {rounds} rounds: started with every rank {:.3} ms/iter, one phase after the last joined {:.3} ms/iter (ratio {:.3})",
            world.size(),
            s * 1e3,
            j * 1e3,
            j / s
        );
    }
    Ok(())
}
