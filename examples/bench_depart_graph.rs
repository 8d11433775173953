//! The vertices a graph's departure moves against the minimum (issue 29's
//! goal: bytes moved ≤ 1.1× the minimum): the `N³` grid graph (unit vertex
//! weights, 3D coordinates) on P ranks, built in two ways — from every
//! rank's slab and partitioned in parallel for the measured speeds
//! (`from_local`, `partition_distributed`: the geometric strategy), and
//! scattered by the root (`scatter_graph`: a root index) — then the last
//! rank leaves (`Balancer::depart`, `Departure::plan_graph`). "Minimum" is
//! what any move to the new parts must carry: the vertices that the ranks
//! that grow receive (the leaving rank's among them), `Σ max(0, new − old)`
//! over the ranks' vertex counts; the bytes' minimum is that many vertices
//! at the move's mean bytes per vertex (every vertex of a grid graph
//! carries about as many bytes). `--rounds` repetitions, medians.
//!
//! ```sh
//! mpirun -np 3 target/release/examples/bench_depart_graph --n 64 --rounds 3
//! ```

#[path = "common/cli.rs"]
mod cli;

use mpi::traits::*;
use nuce::plan::graph::slab::{block_of, grid_slab};
use nuce::plan::graph::{Coords, Graph};
use nuce::{Balancer, DistGraph};

type G = DistGraph<f64>;

/// This rank's slab of the `n³` grid graph, partitioned for the speeds.
fn geometric(bal: &mut Balancer, n: usize) -> nuce::Result<G> {
    let (p, r) = (bal.comm().size() as usize, bal.comm().rank() as usize);
    let (lo, hi) = block_of(n * n * n, r, p);
    let s = grid_slab((n, n, n), lo, hi, 0.0)?;
    let values = vec![1.0; s.ids.len()];
    let coords = Some(Coords {
        dim: 3,
        data: s.coords,
    });
    let mut g = DistGraph::from_local(
        bal.comm(),
        s.ids,
        s.xadj,
        s.adjncy,
        None,
        None,
        coords,
        values,
    )?;
    g.balance(bal)?;
    Ok(g)
}

/// The `n³` grid graph scattered by the root for the speeds.
fn root_index(bal: &mut Balancer, n: usize) -> nuce::Result<G> {
    let root = bal.comm().rank() == 0;
    let whole = if root {
        let s = grid_slab((n, n, n), 0, n * n * n, 0.0)?;
        Some(Graph::from_csr(s.xadj, s.adjncy, None, None)?.with_coords(3, s.coords)?)
    } else {
        None
    };
    let values = vec![1.0; if root { n * n * n } else { 0 }];
    DistGraph::scatter(bal, whole.as_ref(), root.then_some(&values[..]))
}

fn counts(g: &G) -> Vec<u64> {
    let mut all = vec![0u64; g.comm().size() as usize];
    g.comm()
        .all_gather_into(&(g.owned().len() as u64), &mut all[..]);
    all
}

/// Edges between vertices of different ranks (each counted once).
fn cut_edges(g: &G) -> u64 {
    let own = g.owned().len();
    let mine: u64 = (0..own)
        .map(|i| g.neighbors(i).filter(|&(s, _)| s >= own).count() as u64)
        .sum();
    let mut all = vec![0u64; g.comm().size() as usize];
    g.comm().all_gather_into(&mine, &mut all[..]);
    all.iter().sum::<u64>() / 2
}

fn main() -> nuce::Result<()> {
    let universe = mpi::initialize().unwrap();
    let world = universe.world();
    let args: Vec<String> = std::env::args().collect();
    let n: usize = cli::option(&args, "--n", "64").parse().unwrap();
    let rounds: usize = cli::option(&args, "--rounds", "3").parse().unwrap();
    let p = world.size() as usize;
    let me = world.rank() as usize;
    for (name, build) in [
        (
            "geometric",
            geometric as fn(&mut Balancer, usize) -> nuce::Result<G>,
        ),
        ("root index", root_index),
    ] {
        let (mut ratios, mut moved, mut minimum, mut bytes, mut cuts) =
            (Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new());
        for _ in 0..rounds {
            let mut bal = Balancer::new(&world)?;
            bal.measure()?;
            let mut g = build(&mut bal, n)?;
            let before = counts(&g);
            let dep = bal.depart(me == p - 1)?;
            let stats = dep.plan_graph(&bal, &mut g)?;
            let after = counts(&g);
            cuts.push(cut_edges(&g) as f64);
            let least: u64 = before
                .iter()
                .zip(&after)
                .map(|(b, a)| a.saturating_sub(*b))
                .sum();
            ratios.push(stats.moved_vertices as f64 / least.max(1) as f64);
            moved.push(stats.moved_vertices as f64);
            minimum.push(least as f64);
            bytes.push(stats.moves.bytes as f64);
            let _ = dep.finish(&mut bal, &mut [&mut g])?;
        }
        if me == 0 {
            let median = |v: &mut Vec<f64>| {
                v.sort_by(f64::total_cmp);
                v[v.len() / 2]
            };
            println!(
                "bench_depart_graph: {n}^3 grid graph ({name}) on {p} ranks, the last leaves, {rounds} rounds: moved {:.0} vertices ({:.1} MB), minimum {:.0}; moved / minimum {:.3}; cut edges after {:.0}",
                median(&mut moved),
                median(&mut bytes) / 1e6,
                median(&mut minimum),
                median(&mut ratios),
                median(&mut cuts)
            );
        }
    }
    Ok(())
}
