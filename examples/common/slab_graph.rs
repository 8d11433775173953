//! This rank's slab of a 3D grid graph as a distributed graph (shared by
//! examples that build a graph from per-rank pieces).

use mpi::traits::Communicator;
use nuce::plan::graph::slab::{block_of, grid_slab};
use nuce::plan::graph::Coords;
use nuce::DistGraph;

/// The `dims` grid graph's vertices `block_of(n, rank, p)` (with `jitter`
/// on the coordinates), each valued by its id, built with
/// `DistGraph::from_local` on `comm` (collective).
pub fn slab_graph<C: Communicator>(
    comm: &C,
    dims: (usize, usize, usize),
    jitter: f64,
) -> nuce::Result<DistGraph<f64>> {
    let (rank, p) = (comm.rank() as usize, comm.size() as usize);
    let (lo, hi) = block_of(dims.0 * dims.1 * dims.2, rank, p);
    let s = grid_slab(dims, lo, hi, jitter)?;
    let values: Vec<f64> = s.ids.iter().map(|&v| v as f64).collect();
    let coords = Coords {
        dim: 3,
        data: s.coords,
    };
    DistGraph::from_local(
        comm,
        s.ids,
        s.xadj,
        s.adjncy,
        None,
        None,
        Some(coords),
        values,
    )
}
