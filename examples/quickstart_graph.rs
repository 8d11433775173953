//! The README's graph quick start, compiled and run as written (see
//! `tests/quickstart.rs`, which also checks that the README shows this code).
//!
//! Jacobi relaxation on an unstructured graph (here a `n × n` grid graph
//! with coordinates; a mesh read by `nuce::plan::graph::io` works the same)
//! in phases; between phases `Balancer::maybe_remap` measures every rank's
//! compute time by itself and re-cuts the root's Hilbert-curve index when
//! that pays off, moving only the vertices whose owner changes.
//!
//! ```text
//! mpirun -np 2 target/release/examples/quickstart_graph [N] [PHASES] [ITERS] [RANK:FACTOR@PHASE]
//! ```

use mpi::traits::*;

#[path = "common/quickstart_args.rs"]
mod quickstart_args;
use nuce::DistGraph;
use quickstart_args::{arg, extra_work};

/// One Jacobi relaxation `x_v ← (x_v + Σ_u x_u) / (1 + deg v)` of every
/// owned vertex, repeated `repeat` times (the extra work of a slow rank).
fn relax(g: &mut DistGraph<f64>, repeat: usize) {
    let mut next = vec![0.0; g.owned().len()];
    for _ in 0..repeat {
        for (i, x) in next.iter_mut().enumerate() {
            let (mut acc, mut deg) = (g.values()[i], 1.0);
            for (s, w) in g.neighbors(i) {
                acc += w * g.slot_value(s);
                deg += w;
            }
            *x = acc / deg;
        }
        std::hint::black_box(&mut next);
    }
    g.values_mut().copy_from_slice(&next);
}

fn main() -> nuce::Result<()> {
    let (n, phases, iters) = (arg(1, 300), arg(2, 8), arg(3, 50));
    let extra = extra_work();
    // For the PHASE lines only:
    let mut t = std::time::Instant::now();

    // ANCHOR: quickstart_graph
    use nuce::{plan::graph::grid_graph, Balancer};

    let universe = mpi::initialize().unwrap();
    let world = universe.world();
    let mut bal = Balancer::new(&world)?;
    bal.measure()?;
    // The root holds the graph (here generated; or io::parse_mesh(..)?.nodal_graph()?.0).
    let graph = (world.rank() == 0).then(|| grid_graph(n, n));
    let values = graph.as_ref().map(|g| vec![1.0f64; g.n()]);
    let mut g = bal.scatter_graph(graph.as_ref(), values.as_deref())?; // parts ∝ speeds
    for phase in 0..phases {
        for _ in 0..iters {
            g.exchange_ghosts()?; // ghost values from their owners
            relax(&mut g, extra(world.rank(), phase)); // your solver's iteration
        }
        let report = bal.maybe_remap(&mut g, iters)?; // same decision on every rank
                                                      // ANCHOR_END: quickstart_graph
        let wall = {
            let _w = nuce::waiting();
            let w = nuce::runtime::comm::max_f64(bal.comm(), t.elapsed().as_secs_f64());
            t = std::time::Instant::now();
            w
        };
        // Each rank's vertex count (the graph holds no global owner array).
        let mut loads = vec![0usize; world.size() as usize];
        world.all_gather_into(&g.owned().len(), &mut loads[..]);
        if world.rank() == 0 {
            let ideal = (n * n) as f64 / report.speeds.iter().sum::<f64>();
            println!(
                "PHASE {phase} s_per_iter {:.6} ideal_s_per_iter {ideal:.6} remap {} imbalance_before {:.4} imbalance_after {:.4} areas {:?} speeds {:?}",
                wall / iters as f64,
                report.remap,
                report.imbalance_current,
                if report.remap { report.imbalance_candidate } else { report.imbalance_current },
                loads,
                report.speeds.iter().map(|s| s.round()).collect::<Vec<_>>()
            );
        }
    }
    if let Some(x) = g.gather(0)? {
        println!(
            "RESULT vertices {} sum {:.6}",
            x.len(),
            x.iter().sum::<f64>()
        );
    }
    Ok(())
}
