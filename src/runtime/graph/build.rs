//! Building a [`DistGraph`]: from the root's graph ([`DistGraph::scatter`]),
//! from every rank's own vertices ([`DistGraph::from_local`]), or from
//! pieces that travelled (a save file, a membership change).

use mpi::topology::SimpleCommunicator;
use mpi::traits::*;

use super::part::{any_rank, GraphPart};
use super::{DistGraph, GraphStrategy, GraphValue, Pieces};
use crate::error::{Error, Result};
use crate::plan::graph::{Coords, Graph, Partition};
use crate::runtime::clock::waiting;
use crate::runtime::comm::agree;
use crate::runtime::object::Core;
use crate::runtime::watchdog::Checkpoints;

impl<T: GraphValue> DistGraph<T> {
    /// Scatters `graph`, `partition` and `values` (significant on `root`
    /// only) to every rank, on a duplicate of `comm`. The partition must have
    /// one part per rank. Collective; errors agree.
    pub fn scatter_with_partition<C: Communicator>(
        comm: &C,
        root: i32,
        graph: Option<&Graph>,
        partition: Option<&Partition>,
        values: Option<&[T]>,
    ) -> Result<Self> {
        let _w = waiting();
        let e = T::BYTES;
        let (comm, cp) = Checkpoints::duplicate_checked(
            comm,
            &format!("DistGraph::scatter_with_partition(from root {root}, {e}-byte values)"),
        )?;
        let size = comm.size() as usize;
        let check = if comm.rank() == root {
            match (graph, partition, values) {
                (Some(g), Some(p), Some(v)) => {
                    if let Some(&q) = p.parts.iter().find(|&&q| q >= size) {
                        Err(Error::invalid_plan(format!(
                            "partition assigns a vertex to part {q} of {size}"
                        )))
                    } else if p.nparts != size || p.len() != g.n() || v.len() != g.n() {
                        Err(Error::shape_mismatch(format!(
                            "graph of {} vertices, partition of {} into {} parts, {} values, {size} ranks",
                            g.n(),
                            p.len(),
                            p.nparts,
                            v.len()
                        )))
                    } else {
                        Ok((g, p, v))
                    }
                }
                _ => Err(Error::invalid_input(
                    "scatter: the root needs a graph, a partition and values",
                )),
            }
            .map(Some)
        } else {
            Ok(None)
        };
        let at_root = agree(&comm, root, check)?;
        let mut meta = [0usize; 3];
        if let Some((g, _, _)) = at_root {
            meta = [
                g.n(),
                usize::from(g.has_edge_weights()),
                g.coords().map_or(0, |c| c.dim),
            ];
        }
        comm.process_at_rank(root).broadcast_into(&mut meta[..]);
        let [n, weighted, dim] = meta;
        let (pieces, counts) = match at_root {
            Some((g, p, v)) => Pieces::from_graph(g, &p.parts, size, v),
            None => (Pieces::default(), vec![0; size]),
        };
        let got = pieces.ship(&comm, &counts, weighted == 1, dim)?;
        drop(pieces);
        let part = GraphPart::build(&comm, n, weighted == 1, dim, got)?;
        let strategy = if dim > 0 {
            GraphStrategy::Geometric
        } else {
            GraphStrategy::Manual
        };
        Ok(Self::of_part(comm, cp, part, strategy))
    }

    /// A graph of `part` on `comm` (its own duplicate) with no index.
    fn of_part(
        comm: SimpleCommunicator,
        cp: Checkpoints,
        part: GraphPart<T>,
        strategy: GraphStrategy,
    ) -> Self {
        DistGraph {
            core: Core::new(comm, cp),
            part,
            index: None,
            strategy,
            exchange_fp: None,
        }
    }

    /// A graph of `n` vertices built from each rank's `pieces` (any
    /// vertices, any order; `weighted` and `dim` the same on every rank)
    /// on a duplicate of `comm`, with `strategy` and no index: a restart
    /// from a save file. Collective; errors agree.
    pub(crate) fn from_pieces<C: Communicator>(
        comm: &C,
        n: usize,
        (weighted, dim): (bool, usize),
        pieces: Pieces<T>,
        strategy: GraphStrategy,
    ) -> Result<Self> {
        let (comm, cp) = Checkpoints::duplicate_checked(
            comm,
            &format!(
                "DistGraph::from_pieces({n} vertices, {}-byte values)",
                T::BYTES
            ),
        )?;
        let part = GraphPart::build(&comm, n, weighted, dim, pieces)?;
        Ok(Self::of_part(comm, cp, part, strategy))
    }

    /// This rank's vertices as records (increasing ids, neighbours as
    /// global ids, edge weights when the graph has them on some rank),
    /// with whether it has edge weights and its coordinates' dimension (the
    /// same on every rank). Collective (one all-reduce).
    pub(crate) fn pieces(&self) -> (Pieces<T>, bool, usize) {
        let weighted = any_rank(&*self.core.comm, !self.part.ewgt.is_empty());
        let p = &self.part;
        let (n, arcs) = (
            p.owned.len(),
            p.xadj.get(p.owned.len()).copied().unwrap_or(0),
        );
        let mut out = Pieces {
            ids: Vec::with_capacity(n),
            deg: Vec::with_capacity(n),
            adj: Vec::with_capacity(arcs),
            ewgt: Vec::with_capacity(if weighted { arcs } else { 0 }),
            vwgt: Vec::with_capacity(n),
            coords: Vec::with_capacity(n * p.dim),
            values: Vec::with_capacity(n),
        };
        for i in 0..self.part.owned.len() {
            self.part.push_vertex(i, weighted, &mut out);
        }
        (out, weighted, self.part.dim)
    }

    /// Builds a distributed graph from per-rank pieces, on a duplicate of
    /// `comm`: each rank passes the global ids of the vertices it owns (any
    /// order), their adjacency in CSR form (`xadj` of `owned.len() + 1`
    /// offsets into `adjncy`, neighbours as global ids), optional vertex
    /// weights (default 1), edge weights (parallel to `adjncy`, default 1),
    /// coordinates (`dim` ≥ 1 per owned vertex, the same `dim` on every
    /// rank: required, `None` is an error on every rank) and one value per
    /// owned vertex. The graph's strategy is [`GraphStrategy::Geometric`]:
    /// partition it by speeds once with
    /// [`DistGraph::balance`](DistGraph::balance),
    /// then balance it with
    /// [`Balancer::maybe_remap`](crate::runtime::balancer::Balancer::maybe_remap). The global number of vertices is the sum
    /// of the owned counts; the owned ids of all ranks must be exactly
    /// `0..n`, each once (checked by the distributed directory). The
    /// adjacency should be symmetric (as in [`Graph`]); the halo is built
    /// from the ghosts each rank needs. No rank holds more than its piece
    /// and ⌈n/p⌉ directory entries. Collective; errors agree.
    #[allow(clippy::too_many_arguments)]
    pub fn from_local<C: Communicator>(
        comm: &C,
        owned: Vec<usize>,
        xadj: Vec<usize>,
        adjncy: Vec<usize>,
        vwgt: Option<Vec<f64>>,
        ewgt: Option<Vec<f64>>,
        coords: Option<Coords>,
        values: Vec<T>,
    ) -> Result<Self> {
        let _w = waiting();
        let e = T::BYTES;
        let (comm, cp) = Checkpoints::duplicate_checked(
            comm,
            &format!("DistGraph::from_local({e}-byte values)"),
        )?;
        let nv = owned.len();
        let ok = if xadj.len() != nv + 1
            || xadj[0] != 0
            || xadj.windows(2).any(|w| w[0] > w[1])
            || xadj[nv] != adjncy.len()
        {
            Err(Error::shape_mismatch(format!(
                "xadj of {} offsets (ending at {:?}) for {nv} vertices and {} neighbours",
                xadj.len(),
                xadj.last(),
                adjncy.len()
            )))
        } else {
            Ok(())
        };
        agree(&comm, 0, ok)?;
        let weighted = any_rank(&comm, ewgt.is_some());
        let dim = coords.as_ref().map_or(0, |c| c.dim);
        let mut dims = [dim, usize::MAX - dim];
        let mut agreed = [0usize; 2];
        comm.all_reduce_into(
            &dims[..],
            &mut agreed[..],
            mpi::collective::SystemOperation::max(),
        );
        dims = [agreed[0], usize::MAX - agreed[1]];
        agree(
            &comm,
            0,
            if dims[0] == dims[1] {
                Ok(())
            } else {
                Err(Error::shape_mismatch(format!(
                    "coordinates in {}D on some ranks and {}D on others",
                    dims[1], dims[0]
                )))
            },
        )?;
        if dims[0] == 0 {
            // The same on every rank: the dimensions agree.
            return Err(Error::invalid_input(
                "DistGraph::from_local: no vertex coordinates; a graph built from per-rank pieces \
                 is partitioned and remapped geometrically (GraphStrategy::Geometric) and needs \
                 `dim` coordinates per vertex (dim >= 1); a graph without coordinates must be \
                 built whole on the root with DistGraph::scatter",
            ));
        }
        let mut n = 0usize;
        comm.all_reduce_into(&nv, &mut n, mpi::collective::SystemOperation::sum());
        let arcs = adjncy.len();
        let pieces = Pieces {
            ids: owned,
            deg: xadj.windows(2).map(|w| w[1] - w[0]).collect(),
            adj: adjncy,
            ewgt: if weighted {
                ewgt.unwrap_or_else(|| vec![1.0; arcs])
            } else {
                Vec::new()
            },
            vwgt: vwgt.unwrap_or_else(|| vec![1.0; nv]),
            coords: coords.map_or_else(Vec::new, |c| c.data),
            values,
        };
        drop(xadj);
        let part = GraphPart::build(&comm, n, weighted, dim, pieces)?;
        Ok(Self::of_part(comm, cp, part, GraphStrategy::Geometric))
    }
}
