//! Vertices as they travel ([`Pieces`]): a rank's piece of a graph, or
//! what it sends to one rank, as flat arrays; their shipping in one flat
//! all-to-all-v, their checks, and the statistics of a move.

use crate::error::{Error, Result};
use crate::plan::graph::ids::vertex_id;
use crate::plan::graph::Graph;
use crate::runtime::comm::{alltoallv_flat, max_f64, sum_f64};
use crate::runtime::graph_value::GraphValue;
use crate::runtime::graph_value::{pack, unpack};
use crate::runtime::object::MoveStats;
use mpi::traits::*;
use std::time::Instant;

/// Vertices as they travel (a rank's piece of a graph, or what it sends to
/// one rank): flat arrays, vertex after vertex.
/// Also the records of a save file (`savefile::graphs`).
#[derive(Debug, Clone)]
pub(crate) struct Pieces<T> {
    pub(crate) ids: Vec<usize>,
    /// Degree of every vertex.
    pub(crate) deg: Vec<usize>,
    /// Neighbours (global ids), all vertices' one after the other.
    pub(crate) adj: Vec<usize>,
    /// Edge weights parallel to `adj` (empty when the graph is unweighted).
    pub(crate) ewgt: Vec<f64>,
    pub(crate) vwgt: Vec<f64>,
    /// `dim` coordinates per vertex (empty when `dim` is 0).
    pub(crate) coords: Vec<f64>,
    pub(crate) values: Vec<T>,
}

pub(super) fn stats<C: Communicator>(
    comm: &C,
    bytes: u64,
    messages: u64,
    mine: u64,
    t0: Instant,
) -> MoveStats {
    let max_rank = max_f64(comm, mine as f64) as u64;
    MoveStats {
        bytes: sum_f64(comm, bytes as f64) as u64,
        messages: sum_f64(comm, messages as f64) as u64,
        max_rank_bytes: max_rank,
        seconds: max_f64(comm, t0.elapsed().as_secs_f64()),
    }
}

/// Bytes one vertex of degree `deg` takes when it travels.
pub(super) fn record_bytes<T: GraphValue>(deg: usize, weighted: bool, dim: usize) -> u64 {
    let per_arc = if weighted { 16 } else { 8 };
    (24 + 8 * dim + T::BYTES + per_arc * deg) as u64
}

impl<T> Default for Pieces<T> {
    fn default() -> Self {
        Pieces {
            ids: Vec::new(),
            deg: Vec::new(),
            adj: Vec::new(),
            ewgt: Vec::new(),
            vwgt: Vec::new(),
            coords: Vec::new(),
            values: Vec::new(),
        }
    }
}

impl<T: GraphValue> Pieces<T> {
    pub(super) fn len(&self) -> usize {
        self.ids.len()
    }

    /// The vertices of `g` in `parts` order by part (each part's by id), with
    /// how many go to each of `p` parts.
    pub(super) fn from_graph(
        g: &Graph,
        parts: &[usize],
        p: usize,
        values: &[T],
    ) -> (Self, Vec<usize>) {
        let mut counts = vec![0usize; p];
        for &q in parts {
            counts[q] += 1;
        }
        let mut order: Vec<usize> = (0..g.n()).collect();
        order.sort_by_key(|&v| parts[v]);
        let mut out = Pieces::default();
        for v in order {
            out.push_from_graph(g, v, values[v].clone());
        }
        (out, counts)
    }

    pub(super) fn push_from_graph(&mut self, g: &Graph, v: usize, value: T) {
        self.ids.push(v);
        let nb = g.neighbors(v);
        self.deg.push(nb.len());
        self.adj.extend_from_slice(nb);
        if g.has_edge_weights() {
            self.ewgt.extend(g.weighted_neighbors(v).map(|(_, w)| w));
        }
        self.vwgt.push(g.vertex_weight(v));
        if let Some(c) = g.coords() {
            self.coords.extend_from_slice(c.of(v));
        }
        self.values.push(value);
    }

    /// Sends `counts[r]` consecutive vertices to rank `r` (all ranks agree on
    /// `weighted` and `dim`); returns what this rank received. Flat
    /// all-to-all-v's of ids, degrees, neighbours, weights, coordinates and
    /// value bytes.
    pub(super) fn ship<C: Communicator>(
        &self,
        comm: &C,
        counts: &[usize],
        weighted: bool,
        dim: usize,
    ) -> Result<Self> {
        let mut arcs = Vec::with_capacity(counts.len());
        let mut at = 0;
        for &c in counts {
            arcs.push(self.deg[at..at + c].iter().sum::<usize>());
            at += c;
        }
        let times = |k: usize| counts.iter().map(|&c| c * k).collect::<Vec<_>>();
        let (ids, _) = alltoallv_flat(comm, &self.ids, counts)?;
        let (deg, _) = alltoallv_flat(comm, &self.deg, counts)?;
        let (adj, _) = alltoallv_flat(comm, &self.adj, &arcs)?;
        let ewgt = if weighted {
            alltoallv_flat(comm, &self.ewgt, &arcs)?.0
        } else {
            Vec::new()
        };
        let (vwgt, _) = alltoallv_flat(comm, &self.vwgt, counts)?;
        let coords = if dim > 0 {
            alltoallv_flat(comm, &self.coords, &times(dim))?.0
        } else {
            Vec::new()
        };
        let mut bytes = Vec::with_capacity(self.len() * T::BYTES);
        pack(self.values.iter(), &mut bytes);
        let (bytes, _) = alltoallv_flat(comm, &bytes, &times(T::BYTES))?;
        Ok(Pieces {
            ids,
            deg,
            adj,
            ewgt,
            vwgt,
            coords,
            values: unpack(&bytes),
        })
    }

    /// The same vertices in increasing id order (moved, not copied, when
    /// they already are).
    pub(crate) fn sorted(self, weighted: bool, dim: usize) -> Self {
        if self.ids.windows(2).all(|w| w[0] < w[1]) {
            return self;
        }
        let mut order: Vec<usize> = (0..self.len()).collect();
        order.sort_unstable_by_key(|&i| self.ids[i]);
        let mut start = Vec::with_capacity(self.len() + 1);
        start.push(0);
        for &d in &self.deg {
            start.push(start.last().copied().unwrap_or(0) + d);
        }
        // One array at a time, each old one dropped once permuted, so that
        // the peak is the input plus its largest array.
        let Pieces {
            ids,
            deg,
            adj,
            ewgt,
            vwgt,
            coords,
            values,
        } = self;
        let by_vertex = |a: Vec<usize>| order.iter().map(|&i| a[i]).collect::<Vec<_>>();
        let by_arc = |a: Vec<f64>| {
            let mut out = Vec::with_capacity(a.len());
            for &i in &order {
                out.extend_from_slice(&a[start[i]..start[i + 1]]);
            }
            out
        };
        let ids = by_vertex(ids);
        let deg = by_vertex(deg);
        let mut new_adj = Vec::with_capacity(adj.len());
        for &i in &order {
            new_adj.extend_from_slice(&adj[start[i]..start[i + 1]]);
        }
        drop(adj);
        let ewgt = if weighted { by_arc(ewgt) } else { ewgt };
        let vwgt: Vec<f64> = order.iter().map(|&i| vwgt[i]).collect();
        let mut new_coords = Vec::with_capacity(coords.len());
        for &i in &order {
            new_coords.extend_from_slice(&coords[i * dim..(i + 1) * dim]);
        }
        drop(coords);
        let mut values: Vec<Option<T>> = values.into_iter().map(Some).collect();
        let values = order.iter().filter_map(|&i| values[i].take()).collect();
        Pieces {
            ids,
            deg,
            adj: new_adj,
            ewgt,
            vwgt,
            coords: new_coords,
            values,
        }
    }

    /// Appends `other`'s vertices.
    pub(super) fn append(&mut self, mut other: Self) {
        self.ids.append(&mut other.ids);
        self.deg.append(&mut other.deg);
        self.adj.append(&mut other.adj);
        self.ewgt.append(&mut other.ewgt);
        self.vwgt.append(&mut other.vwgt);
        self.coords.append(&mut other.coords);
        self.values.append(&mut other.values);
    }

    /// Checks the piece's own consistency (lengths, ranges, weights).
    pub(super) fn check(&self, n: usize, weighted: bool, dim: usize) -> Result<()> {
        let nv = self.ids.len();
        let arcs: usize = self.deg.iter().sum();
        if self.deg.len() != nv
            || self.adj.len() != arcs
            || (weighted && self.ewgt.len() != arcs)
            || self.vwgt.len() != nv
            || self.coords.len() != dim * nv
            || self.values.len() != nv
        {
            return Err(Error::shape_mismatch(format!(
                "{nv} vertices with {} degrees, {} neighbours for {arcs} arcs, {} edge weights, {} vertex weights, {} coordinates in {dim}D, {} values",
                self.deg.len(),
                self.adj.len(),
                self.ewgt.len(),
                self.vwgt.len(),
                self.coords.len(),
                self.values.len()
            )));
        }
        if let Some(v) = self.ids.iter().chain(&self.adj).find(|&&v| v >= n) {
            return Err(Error::invalid_input(format!(
                "vertex id {} out of range for {n} vertices",
                vertex_id(*v)
            )));
        }
        if self.vwgt.iter().any(|w| !w.is_finite() || *w < 0.0) {
            return Err(Error::invalid_input(
                "vertex weights must be finite and >= 0",
            ));
        }
        if self.ewgt.iter().any(|w| !w.is_finite() || *w <= 0.0) {
            return Err(Error::invalid_input("edge weights must be finite and > 0"));
        }
        if self.coords.iter().any(|x| !x.is_finite()) {
            return Err(Error::invalid_input("non-finite coordinate"));
        }
        Ok(())
    }
}
