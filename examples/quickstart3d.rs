//! The README's 3D quick start, compiled and run as written (see
//! `tests/quickstart.rs`, which also checks that the README shows this code
//! and the `RESULT` line's value).
//!
//! A 7-point Jacobi sweep on an `n × n × n` grid of two components per
//! cell, in phases; between phases `Balancer::maybe_remap` measures every
//! rank's compute time, decides, and remaps the boxes.
//!
//! ```text
//! mpirun -np 2 target/release/examples/quickstart3d [N] [PHASES] [ITERS] [RANK:FACTOR@PHASE]
//! ```
//!
//! Rank 0 prints one `PHASE` line per phase and a final `RESULT` line with
//! the sum of the gathered grid.

#[path = "common/quickstart_args.rs"]
mod quickstart_args;
use quickstart_args::{arg, extra_work};

/// One 7-point Jacobi sweep of the interior cells of every component (the
/// grid's faces stay fixed), repeated `repeat` times (a slow rank's extra work).
fn sweep(u: &mut nuce::DistArray3<f64>, repeat: usize) {
    let ((nx, ny, nz), b, nc) = (u.global_shape(), u.local_box(), u.ncomp());
    let mut next = u.local_values();
    for _ in 0..repeat {
        let p = u.padded();
        let mut at = 0;
        for i in b.x..b.x + b.nx {
            for j in b.y..b.y + b.ny {
                for k in b.z..b.z + b.nz {
                    for c in 0..nc {
                        if i > 0 && j > 0 && k > 0 && i + 1 < nx && j + 1 < ny && k + 1 < nz {
                            let s = p[u.index(i - 1, j, k, c)]
                                + p[u.index(i + 1, j, k, c)]
                                + p[u.index(i, j - 1, k, c)]
                                + p[u.index(i, j + 1, k, c)]
                                + p[u.index(i, j, k - 1, c)]
                                + p[u.index(i, j, k + 1, c)];
                            next[at] = s / 6.0;
                        }
                        at += 1;
                    }
                }
            }
        }
        std::hint::black_box(&mut next);
    }
    u.set_local_values(&next).unwrap();
}

fn main() -> nuce::Result<()> {
    let (n, phases, iters) = (arg(1, 48), arg(2, 6), arg(3, 10));
    let extra = extra_work();

    // ANCHOR: quickstart3d
    use mpi::traits::*; // world.rank(), world.size()
    use nuce::{Balancer, DistArray3};

    let universe = mpi::initialize().unwrap(); // the application owns MPI
    let world = universe.world();
    let mut bal = Balancer::new(&world)?;
    bal.measure()?; // built-in kernel on every rank: the first plan's speeds

    // The root holds the grid: n·n·n cells in C order (k fastest), ncomp values per cell.
    let ncomp = 2;
    let global = (world.rank() == 0).then(|| {
        (0..n * n * n * ncomp)
            .map(|x| (x % 7) as f64)
            .collect::<Vec<f64>>()
    });
    // Boxes ∝ speeds (Best3, 7-point stencil), ghost width 1, every rank states the shape.
    let mut u = DistArray3::scatter(&mut bal, (n, n, n), ncomp, global.as_deref(), 1)?;
    for phase in 0..phases {
        for _ in 0..iters {
            u.exchange_faces()?; // 7-point halo; exchange_ghosts() adds edges and corners
            sweep(&mut u, extra(world.rank(), phase)); // your solver's iteration
        }
        let report = bal.maybe_remap(&mut u, iters)?; // measure, decide, remap
                                                      // ANCHOR_END: quickstart3d
        if world.rank() == 0 {
            println!(
                "PHASE {phase} remap {} imbalance_before {:.4} imbalance_after {:.4} areas {:?}",
                report.remap,
                report.imbalance_current,
                if report.remap {
                    report.imbalance_candidate
                } else {
                    report.imbalance_current
                },
                u.plan().volumes(),
            );
        }
    }
    let result = u.gather(0)?; // Some(values) on the root
    if let Some(v) = result {
        println!(
            "RESULT cells {} sum {:.6}",
            v.len() / ncomp,
            v.iter().sum::<f64>()
        );
    }
    Ok(())
}
