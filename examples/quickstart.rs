//! The README's quick start, compiled and run as written (see
//! `tests/quickstart.rs`, which also checks that the README shows this code).
//!
//! A Jacobi sweep on an `n × n` grid in phases; between phases
//! `Balancer::maybe_remap` measures every rank's compute time by itself,
//! decides, and remaps. The application times nothing.
//!
//! ```text
//! mpirun -np 2 target/release/examples/quickstart [N] [PHASES] [ITERS] [RANK:FACTOR@PHASE]
//! ```
//!
//! The optional last argument makes rank `RANK` do `FACTOR` times the work
//! of every sweep from phase `PHASE` on (real extra work; nuce is not told).
//! Rank 0 prints one `PHASE` line per phase (wall time per iteration, the
//! decision, the areas, the measured speeds and the ideal time per iteration
//! for those speeds) and a final `RESULT` line.

#[path = "common/quickstart_args.rs"]
mod quickstart_args;
use quickstart_args::{arg, extra_work};

/// One Jacobi sweep of the interior cells (the global boundary stays fixed),
/// repeated `repeat` times (the extra work of a slow rank).
fn sweep(u: &mut nuce::DistArray2<f64>, repeat: usize) {
    let (n, m) = u.global_shape();
    let r = u.rect();
    let mut next = u.local().to_owned();
    for _ in 0..repeat {
        let p = u.padded();
        for ((i, j), x) in next.indexed_iter_mut() {
            let (gi, gj) = (r.row + i, r.col + j);
            if gi > 0 && gj > 0 && gi + 1 < n && gj + 1 < m {
                *x = 0.25 * (p[[i, j + 1]] + p[[i + 2, j + 1]] + p[[i + 1, j]] + p[[i + 1, j + 2]]);
            }
        }
        std::hint::black_box(&mut next);
    }
    u.local_mut().assign(&next);
}

fn main() -> nuce::Result<()> {
    let (n, phases, iters) = (arg(1, 1024), arg(2, 8), arg(3, 50));
    let extra = extra_work();
    // For the PHASE lines only:
    let mut t = std::time::Instant::now();

    // ANCHOR: quickstart
    use mpi::traits::*; // world.rank(), world.size()
    use nuce::{Balancer, DistArray2};

    let universe = mpi::initialize().unwrap(); // the application owns MPI
    let world = universe.world();
    let mut bal = Balancer::new(&world)?; // duplicates the communicator; root = rank 0
    bal.measure()?; // built-in kernel on every rank: the first plan's speeds
    let global = (world.rank() == 0)
        .then(|| ndarray::Array2::from_shape_fn((n, n), |(i, j)| ((i + 2 * j) % 7) as f64));
    let mut u = DistArray2::scatter(&mut bal, global.as_ref(), 1)?; // planned by bal for its speeds, ghost width 1
    for phase in 0..phases {
        for _ in 0..iters {
            u.exchange_ghosts()?; // nuce's communication: never counted as compute
            sweep(&mut u, extra(world.rank(), phase)); // your solver's iteration
        }
        let report = bal.maybe_remap(&mut u, iters)?; // measure, decide, remap: same on every rank
                                                      // ANCHOR_END: quickstart
        let wall = {
            let _w = nuce::waiting();
            let w = nuce::collective::max_f64(bal.comm(), t.elapsed().as_secs_f64());
            t = std::time::Instant::now();
            w
        };
        if world.rank() == 0 {
            let ideal = (n * n) as f64 / report.speeds.iter().sum::<f64>();
            println!(
                "PHASE {phase} s_per_iter {:.6} ideal_s_per_iter {ideal:.6} remap {} imbalance_before {:.4} imbalance_after {:.4} areas {:?} speeds {:?}",
                wall / iters as f64,
                report.remap,
                report.imbalance_current,
                if report.remap { report.imbalance_candidate } else { report.imbalance_current },
                u.plan().areas(),
                report.speeds.iter().map(|s| s.round()).collect::<Vec<_>>()
            );
        }
    }
    let result = u.gather(0)?; // Some(array) on the root
    if let Some(a) = result {
        println!("RESULT cells {} sum {:.6}", a.len(), a.sum());
    }
    Ok(())
}
