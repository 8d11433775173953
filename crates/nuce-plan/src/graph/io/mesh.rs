//! Meshes of linear elements and the graphs made from them: the nodal graph
//! (vertices = nodes, edges = element edges) and the dual graph (vertices =
//! elements, edges = shared facets).

use crate::error::{Error, Result};
use crate::graph::csr::Graph;

/// The linear element types nuce reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ElementKind {
    /// 1 node.
    Point,
    /// 2 nodes.
    Line,
    /// 3 nodes.
    Triangle,
    /// 4 nodes.
    Quadrangle,
    /// 4 nodes.
    Tetrahedron,
    /// 8 nodes (bottom face 0-3, top face 4-7).
    Hexahedron,
    /// 6 nodes (bottom 0-2, top 3-5).
    Prism,
    /// 5 nodes (base 0-3, apex 4).
    Pyramid,
}

impl ElementKind {
    /// Number of nodes.
    pub fn nodes(self) -> usize {
        match self {
            ElementKind::Point => 1,
            ElementKind::Line => 2,
            ElementKind::Triangle => 3,
            ElementKind::Quadrangle | ElementKind::Tetrahedron => 4,
            ElementKind::Hexahedron => 8,
            ElementKind::Prism => 6,
            ElementKind::Pyramid => 5,
        }
    }
    /// Topological dimension.
    pub fn dim(self) -> usize {
        match self {
            ElementKind::Point => 0,
            ElementKind::Line => 1,
            ElementKind::Triangle | ElementKind::Quadrangle => 2,
            _ => 3,
        }
    }
    /// Element edges as pairs of local node indices.
    pub fn edges(self) -> &'static [(usize, usize)] {
        match self {
            ElementKind::Point => &[],
            ElementKind::Line => &[(0, 1)],
            ElementKind::Triangle => &[(0, 1), (1, 2), (2, 0)],
            ElementKind::Quadrangle => &[(0, 1), (1, 2), (2, 3), (3, 0)],
            ElementKind::Tetrahedron => &[(0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3)],
            ElementKind::Hexahedron => &[
                (0, 1),
                (1, 2),
                (2, 3),
                (3, 0),
                (4, 5),
                (5, 6),
                (6, 7),
                (7, 4),
                (0, 4),
                (1, 5),
                (2, 6),
                (3, 7),
            ],
            ElementKind::Prism => &[
                (0, 1),
                (1, 2),
                (2, 0),
                (3, 4),
                (4, 5),
                (5, 3),
                (0, 3),
                (1, 4),
                (2, 5),
            ],
            ElementKind::Pyramid => &[
                (0, 1),
                (1, 2),
                (2, 3),
                (3, 0),
                (0, 4),
                (1, 4),
                (2, 4),
                (3, 4),
            ],
        }
    }
}

/// A mesh: node coordinates (always 3 values; `z = 0` in 2D) and elements
/// (node indices 0-based into `nodes`).
#[derive(Debug, Clone, PartialEq)]
pub struct Mesh {
    /// Geometric dimension (2 when every z is 0, else 3; 1 for Medit 1D).
    pub dim: usize,
    /// Node coordinates.
    pub nodes: Vec<[f64; 3]>,
    /// Elements of every dimension.
    pub elements: Vec<(ElementKind, Vec<usize>)>,
}

impl Mesh {
    /// Topological dimension of the mesh (that of its highest elements).
    pub fn top_dim(&self) -> usize {
        self.elements.iter().map(|e| e.0.dim()).max().unwrap_or(0)
    }

    /// The elements of the highest dimension (the cells of the mesh).
    pub fn cells(&self) -> impl Iterator<Item = &(ElementKind, Vec<usize>)> {
        let d = self.top_dim();
        self.elements.iter().filter(move |e| e.0.dim() == d)
    }

    pub(super) fn coords_of(&self, pts: impl Iterator<Item = [f64; 3]>) -> Vec<f64> {
        pts.flat_map(|p| p[..self.dim.max(1)].to_vec()).collect()
    }

    /// The nodal graph: one vertex per node used by a cell (in node order),
    /// one edge per distinct cell edge, with the nodes' coordinates. Returns
    /// the graph and, for every graph vertex, its node index. O(cells + nodes).
    pub fn nodal_graph(&self) -> Result<(Graph, Vec<usize>)> {
        let mut used = vec![false; self.nodes.len()];
        for (_, nodes) in self.cells() {
            for &v in nodes {
                used[v] = true;
            }
        }
        let node_of: Vec<usize> = (0..self.nodes.len()).filter(|&i| used[i]).collect();
        if node_of.is_empty() {
            return Err(Error::Empty("mesh has no cell".into()));
        }
        let mut local = vec![usize::MAX; self.nodes.len()];
        for (i, &v) in node_of.iter().enumerate() {
            local[v] = i;
        }
        let edges = self.cells().flat_map(|(k, nodes)| {
            k.edges()
                .iter()
                .map(|&(a, b)| (local[nodes[a]], local[nodes[b]], 1.0))
                .collect::<Vec<_>>()
        });
        let edges: Vec<_> = edges.filter(|e| e.0 != e.1).collect();
        let g = Graph::from_edges(node_of.len(), edges, false)?;
        let coords = self.coords_of(node_of.iter().map(|&v| self.nodes[v]));
        Ok((g.with_coords(self.dim.max(1), coords)?, node_of))
    }

    /// The dual graph: one vertex per cell, an edge between two cells sharing
    /// at least `ncommon` nodes (default: the cell dimension, i.e. a shared
    /// face in 3D, a shared edge in 2D), coordinates at cell centroids.
    /// O(Σ cells sharing a node²), which is bounded: when that sum
    /// exceeds [`DUAL_WORK_PER_INCIDENCE`] times the number of (cell, node)
    /// incidences plus [`DUAL_WORK_BASE`], the mesh is rejected with
    /// [`Error::InvalidInput`] before any edge is built, and so it is as
    /// soon as the edges exceed [`DUAL_EDGES_PER_CELL`] per cell plus
    /// [`DUAL_EDGES_BASE`]. Meshes of real elements share a node among a
    /// few dozen cells at most; a star of 13 000 triangles around one edge
    /// (a 417 KB file) asked for a dual graph of 8.4·10^7 edges and grew to
    /// gigabytes.
    pub fn dual_graph(&self, ncommon: Option<usize>) -> Result<Graph> {
        let cells: Vec<&Vec<usize>> = self.cells().map(|c| &c.1).collect();
        if cells.is_empty() {
            return Err(Error::Empty("mesh has no cell".into()));
        }
        let need = ncommon.unwrap_or(self.top_dim()).max(1);
        let mut incident = vec![Vec::new(); self.nodes.len()];
        for (c, nodes) in cells.iter().enumerate() {
            for &v in nodes.iter() {
                incident[v].push(c);
            }
        }
        let incidences: u128 = incident.iter().map(|c| c.len() as u128).sum();
        let work: u128 = incident.iter().map(|c| (c.len() as u128).pow(2)).sum();
        let limit = DUAL_WORK_PER_INCIDENCE as u128 * incidences + DUAL_WORK_BASE as u128;
        if work > limit {
            let (node, shared) = incident
                .iter()
                .enumerate()
                .map(|(v, c)| (v, c.len()))
                .max_by_key(|&(_, k)| k)
                .unwrap_or((0, 0));
            return Err(Error::InvalidInput(format!(
                "dual graph too costly: node {} is shared by {shared} cells; the cells \
                 sharing each node give {work} pairs to compare, over the limit of {limit} \
                 ({DUAL_WORK_PER_INCIDENCE} per cell-node incidence + {DUAL_WORK_BASE})",
                node + 1
            )));
        }
        let edge_limit =
            DUAL_EDGES_PER_CELL as u128 * cells.len() as u128 + DUAL_EDGES_BASE as u128;
        // Shared-node counts per later cell: a dense array reset through
        // the list of the cells touched (no hashing in the O(Σ k²) loop).
        let mut count = vec![0usize; cells.len()];
        let mut touched: Vec<usize> = Vec::new();
        let mut edges = Vec::new();
        for (c, nodes) in cells.iter().enumerate() {
            for &v in nodes.iter() {
                for &d in &incident[v] {
                    if d > c {
                        if count[d] == 0 {
                            touched.push(d);
                        }
                        count[d] += 1;
                    }
                }
            }
            let mut nb: Vec<usize> = touched
                .iter()
                .copied()
                .filter(|&d| count[d] >= need)
                .collect();
            for d in touched.drain(..) {
                count[d] = 0;
            }
            nb.sort_unstable();
            edges.extend(nb.into_iter().map(|d| (c, d, 1.0)));
            if edges.len() as u128 > edge_limit {
                return Err(Error::InvalidInput(format!(
                    "dual graph too large: over {edge_limit} edges for {} cells \
                     ({DUAL_EDGES_PER_CELL} per cell + {DUAL_EDGES_BASE}); cells share \
                     too many nodes",
                    cells.len()
                )));
            }
        }
        let g = Graph::from_edges(cells.len(), edges, false)?;
        let centroids = cells.iter().map(|nodes| {
            let mut s = [0.0; 3];
            for &v in nodes.iter() {
                for (a, b) in s.iter_mut().zip(self.nodes[v]) {
                    *a += b / nodes.len() as f64;
                }
            }
            s
        });
        let coords = self.coords_of(centroids);
        g.with_coords(self.dim.max(1), coords)
    }

    pub(super) fn set_dim_from_z(&mut self) {
        self.dim = if self.nodes.iter().all(|p| p[2] == 0.0) {
            2
        } else {
            3
        };
    }
}

/// Bound of [`Mesh::dual_graph`]: the pairs of cells sharing a node it may
/// compare, per (cell, node) incidence (a node of a tetrahedral mesh is
/// shared by about 24 cells, of a hexahedral one by 8).
pub const DUAL_WORK_PER_INCIDENCE: u64 = 64;

/// Bound of [`Mesh::dual_graph`]: pairs always allowed, whatever the mesh
/// size (2^28, a few seconds).
pub const DUAL_WORK_BASE: u64 = 1 << 28;

/// Bound of [`Mesh::dual_graph`]: most edges per cell (plus
/// [`DUAL_EDGES_BASE`]); a conforming mesh has at most 3 per cell with the
/// default `ncommon` (a face per neighbour), a few dozen with `ncommon = 1`.
pub const DUAL_EDGES_PER_CELL: u64 = 64;

/// Bound of [`Mesh::dual_graph`]: edges always allowed (2^22, about 200 MB
/// with the graph built from them).
pub const DUAL_EDGES_BASE: u64 = 1 << 22;
