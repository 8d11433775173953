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

#[path = "common/quickstart_args.rs"]
mod quickstart_args;
#[path = "common/quickstart_graph_common.rs"]
mod quickstart_graph_common;
use quickstart_args::{arg, extra_work};
use quickstart_graph_common::{relax, report_phase, report_result};

fn main() -> nuce::Result<()> {
    let (n, phases, iters) = (arg(1, 300), arg(2, 8), arg(3, 50));
    let extra = extra_work();
    // For the PHASE lines only:
    let mut t = std::time::Instant::now();

    // ANCHOR: quickstart_graph
    use mpi::traits::*; // world.rank(), world.size()
    use nuce::{plan::graph::grid_graph, Balancer, DistGraph};

    let universe = mpi::initialize().unwrap();
    let world = universe.world();
    let mut bal = Balancer::new(&world)?;
    bal.measure()?;
    // The root holds the graph (here generated; or io::parse_mesh(..)?.nodal_graph()?.0).
    let graph = (world.rank() == 0).then(|| grid_graph(n, n));
    let values = graph
        .as_ref()
        .map(|g| (0..g.n()).map(|v| (v % 7) as f64).collect::<Vec<_>>());
    let mut g = DistGraph::scatter(&mut bal, graph.as_ref(), values.as_deref())?; // parts ∝ speeds
    for phase in 0..phases {
        for _ in 0..iters {
            g.exchange_ghosts()?; // ghost values from their owners
            relax(&mut g, extra(world.rank(), phase)); // your solver's iteration
        }
        let report = bal.maybe_remap(&mut g, iters)?; // same decision on every rank
                                                      // ANCHOR_END: quickstart_graph
        report_phase(&g, &mut t, phase, iters, &report);
    }
    report_result(&g)
}
