//! The compressed-sparse-row graph of \[KOR95\] §1: vertices are
//! computational tasks (optionally weighted, optionally placed in 2D/3D space),
//! edges are the communication between them (optionally weighted).

use serde::{Deserialize, Serialize};

use super::ids::vertex_id;
use crate::error::{Error, Result};

/// An undirected graph in CSR form: the neighbours of `v` are
/// `adjncy[xadj[v]..xadj[v + 1]]`, every edge is stored in both directions, there
/// are no self-loops and no repeated edges.
///
/// Vertex weights default to 1 (the `vwgt` field is `None`), edge weights too
/// (`ewgt` is `None`; otherwise parallel to `adjncy`). Coordinates, when known,
/// are `dim` (2 or 3) numbers per vertex.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Graph {
    xadj: Vec<usize>,
    adjncy: Vec<usize>,
    vwgt: Option<Vec<f64>>,
    ewgt: Option<Vec<f64>>,
    coords: Option<Coords>,
}

/// Vertex coordinates: `dim` values per vertex, row-major.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Coords {
    /// Number of dimensions (1, 2 or 3).
    pub dim: usize,
    /// `dim × n` values, vertex after vertex.
    pub data: Vec<f64>,
}

impl Coords {
    /// Coordinates of vertex `v` (`dim` values).
    pub fn of(&self, v: usize) -> &[f64] {
        &self.data[v * self.dim..(v + 1) * self.dim]
    }
    /// Number of points.
    pub fn len(&self) -> usize {
        self.data.len().checked_div(self.dim).unwrap_or(0)
    }
    /// True when there are no points.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl Graph {
    /// Builds a graph from raw CSR arrays, validating them: `xadj` has `n + 1`
    /// non-decreasing entries starting at 0, neighbours are in range, there are no
    /// self-loops or repeated edges, the adjacency (and edge weights) are
    /// symmetric, weights are finite and non-negative (vertex) / positive (edge).
    /// O(m log d) where d is the maximum degree.
    pub fn from_csr(
        xadj: Vec<usize>,
        adjncy: Vec<usize>,
        vwgt: Option<Vec<f64>>,
        ewgt: Option<Vec<f64>>,
    ) -> Result<Self> {
        let g = Graph {
            xadj,
            adjncy,
            vwgt,
            ewgt,
            coords: None,
        };
        g.validate()?;
        Ok(g)
    }

    /// Builds a graph with `n` vertices from undirected edges `(u, v, weight)`.
    /// Both directions are stored; repeated edges are merged (their weights must
    /// agree, the first one is kept), self-loops are rejected. With
    /// `weighted == false` all edge weights are 1 and `ewgt` stays `None`.
    /// O(m log m).
    pub fn from_edges(
        n: usize,
        edges: impl IntoIterator<Item = (usize, usize, f64)>,
        weighted: bool,
    ) -> Result<Self> {
        let mut arcs: Vec<(usize, usize, f64)> = Vec::new();
        for (u, v, w) in edges {
            if u >= n || v >= n {
                return Err(Error::InvalidInput(format!(
                    "edge ({}, {}) out of range for {n} vertices",
                    vertex_id(u),
                    vertex_id(v)
                )));
            }
            if u == v {
                return Err(Error::InvalidInput(format!(
                    "self-loop at vertex {}",
                    vertex_id(u)
                )));
            }
            if weighted && !(w.is_finite() && w > 0.0) {
                return Err(Error::InvalidInput(format!(
                    "edge ({}, {}) has weight {w}: must be finite and > 0",
                    vertex_id(u),
                    vertex_id(v)
                )));
            }
            arcs.push((u, v, w));
            arcs.push((v, u, w));
        }
        arcs.sort_by_key(|a| (a.0, a.1));
        arcs.dedup_by(|b, a| a.0 == b.0 && a.1 == b.1);
        let mut xadj = vec![0usize; n + 1];
        for &(u, _, _) in &arcs {
            xadj[u + 1] += 1;
        }
        for i in 0..n {
            xadj[i + 1] += xadj[i];
        }
        let adjncy = arcs.iter().map(|a| a.1).collect();
        let ewgt = weighted.then(|| arcs.iter().map(|a| a.2).collect());
        Graph::from_csr(xadj, adjncy, None, ewgt)
    }

    fn validate(&self) -> Result<()> {
        let bad = |m: String| Err(Error::InvalidInput(m));
        let xadj = &self.xadj;
        if xadj.first() != Some(&0) {
            return bad("xadj must start with 0".into());
        }
        let n = xadj.len() - 1;
        if xadj.windows(2).any(|w| w[0] > w[1]) || xadj[n] != self.adjncy.len() {
            return bad("xadj must be non-decreasing and end at adjncy.len()".into());
        }
        if let Some(vw) = &self.vwgt {
            if vw.len() != n {
                return bad(format!("{} vertex weights for {n} vertices", vw.len()));
            }
            if let Some(i) = vw.iter().position(|w| !(w.is_finite() && *w >= 0.0)) {
                return bad(format!("vertex {} has weight {}", vertex_id(i), vw[i]));
            }
        }
        if let Some(ew) = &self.ewgt {
            if ew.len() != self.adjncy.len() {
                return bad("edge weights must be parallel to adjncy".into());
            }
            if let Some(i) = ew.iter().position(|w| !(w.is_finite() && *w > 0.0)) {
                return bad(format!("edge weight {} at arc {i}", ew[i]));
            }
        }
        // Duplicates via a marker array, symmetry by comparing the sorted arc list
        // with its transpose: O(m log m) whatever the degrees.
        let mut mark = vec![usize::MAX; n];
        let mut arcs = Vec::with_capacity(self.adjncy.len());
        for v in 0..n {
            for a in xadj[v]..xadj[v + 1] {
                let u = self.adjncy[a];
                if u >= n {
                    return bad(format!(
                        "vertex {} has neighbour {} out of range",
                        vertex_id(v),
                        vertex_id(u)
                    ));
                }
                if u == v {
                    return bad(format!("self-loop at vertex {}", vertex_id(v)));
                }
                if mark[u] == v {
                    return bad(format!(
                        "repeated edge ({}, {})",
                        vertex_id(v),
                        vertex_id(u)
                    ));
                }
                mark[u] = v;
                arcs.push((v, u, self.arc_weight(a).to_bits()));
            }
        }
        let mut rev: Vec<(usize, usize, u64)> = arcs.iter().map(|&(v, u, w)| (u, v, w)).collect();
        arcs.sort_unstable();
        rev.sort_unstable();
        if let Some((a, _)) = arcs.iter().zip(&rev).find(|(a, b)| a != b) {
            return bad(format!(
                "edge ({}, {}) has no reverse edge of the same weight",
                vertex_id(a.0),
                vertex_id(a.1)
            ));
        }
        Ok(())
    }

    /// Attaches coordinates (`dim` values per vertex, `dim` in 1..=3).
    pub fn with_coords(mut self, dim: usize, data: Vec<f64>) -> Result<Self> {
        if !(1..=3).contains(&dim) || data.len() != dim * self.n() {
            return Err(Error::ShapeMismatch(format!(
                "{} coordinate values for {} vertices in {dim}D",
                data.len(),
                self.n()
            )));
        }
        if data.iter().any(|x| !x.is_finite()) {
            return Err(Error::InvalidInput("non-finite coordinate".into()));
        }
        self.coords = Some(Coords { dim, data });
        Ok(self)
    }

    /// Attaches vertex weights (finite, `>= 0`, one per vertex).
    pub fn with_vertex_weights(mut self, w: Vec<f64>) -> Result<Self> {
        self.vwgt = Some(w);
        self.validate()?;
        Ok(self)
    }

    /// Number of vertices.
    pub fn n(&self) -> usize {
        self.xadj.len() - 1
    }
    /// Number of undirected edges.
    pub fn num_edges(&self) -> usize {
        self.adjncy.len() / 2
    }
    /// The CSR offsets (`n + 1` entries).
    pub fn xadj(&self) -> &[usize] {
        &self.xadj
    }
    /// The CSR neighbour array (each edge twice).
    pub fn adjncy(&self) -> &[usize] {
        &self.adjncy
    }
    /// Neighbours of `v`.
    pub fn neighbors(&self, v: usize) -> &[usize] {
        &self.adjncy[self.xadj[v]..self.xadj[v + 1]]
    }
    /// Neighbours of `v` with the weights of the connecting edges.
    pub fn weighted_neighbors(&self, v: usize) -> impl Iterator<Item = (usize, f64)> + '_ {
        (self.xadj[v]..self.xadj[v + 1]).map(move |a| (self.adjncy[a], self.arc_weight(a)))
    }
    /// Weight of arc `a` (an index into `adjncy`).
    pub fn arc_weight(&self, a: usize) -> f64 {
        self.ewgt.as_ref().map_or(1.0, |w| w[a])
    }
    /// The edge weights (parallel to `adjncy`), when given.
    pub fn edge_weights(&self) -> Option<&[f64]> {
        self.ewgt.as_deref()
    }
    /// The vertex weights, when given.
    pub fn vertex_weights(&self) -> Option<&[f64]> {
        self.vwgt.as_deref()
    }
    /// True when edge weights were given.
    pub fn has_edge_weights(&self) -> bool {
        self.ewgt.is_some()
    }
    /// True when vertex weights were given.
    pub fn has_vertex_weights(&self) -> bool {
        self.vwgt.is_some()
    }
    /// Weight of vertex `v` (1 unless weights were given).
    pub fn vertex_weight(&self, v: usize) -> f64 {
        self.vwgt.as_ref().map_or(1.0, |w| w[v])
    }
    /// Sum of the vertex weights.
    pub fn total_weight(&self) -> f64 {
        self.vwgt
            .as_ref()
            .map_or(self.n() as f64, |w| w.iter().sum())
    }
    /// The coordinates, if any.
    pub fn coords(&self) -> Option<&Coords> {
        self.coords.as_ref()
    }
    /// The coordinates, or an error saying that `what` needs them.
    pub fn require_coords(&self, what: &str) -> Result<&Coords> {
        self.coords
            .as_ref()
            .ok_or_else(|| Error::InvalidInput(format!("{what} needs vertex coordinates")))
    }

    /// The subgraph induced by `vertices` (global ids, distinct and in range):
    /// vertex `i` of the result is `vertices[i]`; weights and coordinates follow.
    /// O(n + Σ deg).
    pub fn induced(&self, vertices: &[usize]) -> Graph {
        let mut local = vec![usize::MAX; self.n()];
        for (i, &v) in vertices.iter().enumerate() {
            local[v] = i;
        }
        let mut xadj = Vec::with_capacity(vertices.len() + 1);
        xadj.push(0);
        let mut adjncy = Vec::new();
        let mut ewgt = self.ewgt.as_ref().map(|_| Vec::new());
        for &v in vertices {
            for a in self.xadj[v]..self.xadj[v + 1] {
                let u = local[self.adjncy[a]];
                if u != usize::MAX {
                    adjncy.push(u);
                    if let Some(e) = ewgt.as_mut() {
                        e.push(self.arc_weight(a));
                    }
                }
            }
            xadj.push(adjncy.len());
        }
        let vwgt = self
            .vwgt
            .as_ref()
            .map(|w| vertices.iter().map(|&v| w[v]).collect());
        let coords = self.coords.as_ref().map(|c| Coords {
            dim: c.dim,
            data: vertices.iter().flat_map(|&v| c.of(v).to_vec()).collect(),
        });
        Graph {
            xadj,
            adjncy,
            vwgt,
            ewgt,
            coords,
        }
    }

    /// Weighted Laplacian product `y = L x` with `L = D − A` (D the weighted
    /// degrees). O(m).
    pub fn laplacian_mul(&self, x: &[f64], y: &mut [f64]) {
        for v in 0..self.n() {
            let mut acc = 0.0;
            for (u, w) in self.weighted_neighbors(v) {
                acc += w * (x[v] - x[u]);
            }
            y[v] = acc;
        }
    }

    /// Weighted degree of every vertex.
    pub fn weighted_degrees(&self) -> Vec<f64> {
        (0..self.n())
            .map(|v| self.weighted_neighbors(v).map(|(_, w)| w).sum())
            .collect()
    }
}

/// Unchecked constructor for code in this module tree that builds graphs whose
/// invariants hold by construction (coarsening, subgraphs).
pub(crate) fn graph_unchecked(
    xadj: Vec<usize>,
    adjncy: Vec<usize>,
    vwgt: Option<Vec<f64>>,
    ewgt: Option<Vec<f64>>,
) -> Graph {
    Graph {
        xadj,
        adjncy,
        vwgt,
        ewgt,
        coords: None,
    }
}

/// The `rows × cols` grid graph (4-neighbour), with coordinates `(col, row)`;
/// handy for tests and examples.
pub fn grid_graph(rows: usize, cols: usize) -> Graph {
    let id = |r: usize, c: usize| r * cols + c;
    let mut edges = Vec::new();
    for r in 0..rows {
        for c in 0..cols {
            if c + 1 < cols {
                edges.push((id(r, c), id(r, c + 1), 1.0));
            }
            if r + 1 < rows {
                edges.push((id(r, c), id(r + 1, c), 1.0));
            }
        }
    }
    let coords = (0..rows * cols)
        .flat_map(|v| [(v % cols) as f64, (v / cols) as f64])
        .collect();
    Graph::from_edges(rows * cols, edges, false)
        .and_then(|g| g.with_coords(2, coords))
        .unwrap_or_else(|_| unreachable!("grid graphs are valid by construction"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builds_symmetric_csr() {
        let g = Graph::from_edges(3, [(0, 1, 1.0), (1, 2, 1.0), (1, 0, 1.0)], false).unwrap();
        assert_eq!(g.n(), 3);
        assert_eq!(g.num_edges(), 2);
        assert_eq!(g.neighbors(1), &[0, 2]);
    }

    #[test]
    fn rejects_bad_csr() {
        assert!(Graph::from_csr(vec![0, 1, 1], vec![1], None, None).is_err()); // asymmetric
        assert!(Graph::from_csr(vec![0, 1], vec![0], None, None).is_err()); // self loop
        assert!(Graph::from_csr(vec![0, 2, 2], vec![5, 1], None, None).is_err());
        assert!(Graph::from_edges(2, [(0, 0, 1.0)], false).is_err());
        assert!(Graph::from_edges(2, [(0, 1, -1.0)], true).is_err());
        assert!(
            Graph::from_csr(vec![0, 1, 2], vec![1, 0], Some(vec![f64::NAN, 1.0]), None).is_err()
        );
    }

    #[test]
    fn induced_subgraph() {
        let g = grid_graph(3, 3);
        let s = g.induced(&[0, 1, 3, 4]);
        assert_eq!(s.n(), 4);
        assert_eq!(s.num_edges(), 4);
        assert_eq!(s.coords().unwrap().of(3), &[1.0, 1.0]);
    }
}
