//! The README's quick start for graphs that no rank holds whole, compiled
//! and run as written (see `tests/quickstart.rs`, which also checks that the
//! README shows this code).
//!
//! The same Jacobi relaxation as `quickstart_graph`, on an `n × n` grid
//! graph that every rank builds its own rows of (as it would read its slice
//! of a file): nuce finds the ghosts' owners through a distributed
//! directory, partitions in parallel for the measured speeds (RCB by
//! weighted quantiles of collective histograms) and, between phases,
//! re-cuts by prefix sums when that pays off.
//!
//! ```text
//! mpirun -np 2 target/release/examples/quickstart_distgraph [N] [PHASES] [ITERS] [RANK:FACTOR@PHASE]
//! ```

#[path = "common/quickstart_args.rs"]
mod quickstart_args;
#[path = "common/quickstart_graph_common.rs"]
mod quickstart_graph_common;
use nuce::plan::graph::Coords;
use quickstart_args::{arg, extra_work};
use quickstart_graph_common::{relax, report_phase, report_result};

/// Rows `lo..hi` of an `n × n` grid graph: the global ids of its vertices
/// (`row · n + col`), their adjacency in global ids (CSR) and coordinates —
/// what a rank would read from its slice of a mesh file.
fn my_rows(n: usize, lo: usize, hi: usize) -> (Vec<usize>, Vec<usize>, Vec<usize>, Coords) {
    let (mut owned, mut xadj, mut adjncy, mut xy) = (Vec::new(), vec![0], Vec::new(), Vec::new());
    for r in lo..hi {
        for c in 0..n {
            owned.push(r * n + c);
            let up = r.checked_sub(1).map(|r| r * n + c);
            let left = c.checked_sub(1).map(|c| r * n + c);
            let right = (c + 1 < n).then(|| r * n + c + 1);
            let down = (r + 1 < n).then(|| (r + 1) * n + c);
            adjncy.extend([up, left, right, down].into_iter().flatten());
            xadj.push(adjncy.len());
            xy.extend([r as f64, c as f64]);
        }
    }
    (owned, xadj, adjncy, Coords { dim: 2, data: xy })
}

fn main() -> nuce::Result<()> {
    let (n, phases, iters) = (arg(1, 300), arg(2, 8), arg(3, 50));
    let extra = extra_work();
    // For the PHASE lines only:
    let mut t = std::time::Instant::now();

    // ANCHOR: quickstart_distgraph
    use mpi::traits::*; // world.rank(), world.size()
    use nuce::{Balancer, DistGraph};

    let universe = mpi::initialize().unwrap();
    let world = universe.world();
    let mut bal = Balancer::new(&world)?;
    bal.measure()?;
    // Every rank builds (or reads) only its own vertices, adjacency in global ids.
    let (rank, p) = (world.rank() as usize, world.size() as usize);
    let (owned, xadj, adjncy, coords) = my_rows(n, rank * n / p, (rank + 1) * n / p);
    let values: Vec<f64> = owned.iter().map(|&v| (v % 7) as f64).collect();
    let mut g = DistGraph::from_local(
        &world,
        owned,
        xadj,
        adjncy,
        None,
        None,
        Some(coords),
        values,
    )?;
    g.balance(&mut bal)?; // parallel RCB, parts ∝ speeds
    for phase in 0..phases {
        for _ in 0..iters {
            g.exchange_ghosts()?; // neighbour-only messages
            relax(&mut g, extra(world.rank(), phase)); // your solver's iteration
        }
        let report = bal.maybe_remap(&mut g, iters)?; // prefix-sum re-cut
                                                      // ANCHOR_END: quickstart_distgraph
        report_phase(&g, &mut t, phase, iters, &report);
    }
    report_result(&g)
}
