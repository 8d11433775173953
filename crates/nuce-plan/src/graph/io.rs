//! Text formats for graphs and meshes: METIS `.graph` (+ a coordinates file,
//! one vertex per line), METIS `.part` output, gmsh MSH 2.2 ASCII and Medit
//! `.mesh`. Meshes become the nodal graph (vertices = nodes, edges = element
//! edges) or the dual graph (vertices = elements, edges = shared facets).
//!
//! Parsers take the file's text and its name (for messages): they are pure, the
//! caller reads the file. A malformed input gives [`Error::Parse`] naming the
//! 1-based line, never a panic. All parsers are O(size of the input).

use std::collections::HashMap;

use super::csr::Graph;
use super::metrics::Partition;
use crate::error::{Error, Result};

fn perr(file: &str, line: usize, msg: impl Into<String>) -> Error {
    Error::Parse {
        file: file.to_string(),
        line,
        msg: msg.into(),
    }
}

fn num<T: std::str::FromStr>(tok: &str, file: &str, line: usize, what: &str) -> Result<T> {
    tok.parse::<T>()
        .map_err(|_| perr(file, line, format!("expected {what}, found {tok:?}")))
}

/// Parses a METIS graph file (METIS 5 manual §4.1.1): a header `n m [fmt
/// [ncon]]` then one line per vertex with `[size] [weights…] (neighbour
/// [edge weight])*`, neighbours 1-based, `%` comment lines. `fmt` digits: vertex
/// sizes (read and ignored), vertex weights, edge weights; with `ncon > 1` the
/// first constraint is used as the vertex weight. Checks the edge count and the
/// symmetry of the adjacency.
pub fn parse_metis(text: &str, file: &str) -> Result<Graph> {
    let mut lines = text
        .lines()
        .enumerate()
        .map(|(i, l)| (i + 1, l))
        .filter(|(_, l)| !l.trim_start().starts_with('%'));
    let (hline, header) = lines
        .by_ref()
        .find(|(_, l)| !l.trim().is_empty())
        .ok_or_else(|| perr(file, 1, "empty file: no header"))?;
    let h: Vec<&str> = header.split_whitespace().collect();
    if h.len() < 2 || h.len() > 4 {
        return Err(perr(file, hline, "header must be `n m [fmt [ncon]]`"));
    }
    let n: usize = num(h[0], file, hline, "vertex count")?;
    let m: usize = num(h[1], file, hline, "edge count")?;
    let fmt = h.get(2).copied().unwrap_or("0");
    if fmt.len() > 3 || !fmt.chars().all(|c| c == '0' || c == '1') {
        return Err(perr(file, hline, format!("bad fmt {fmt:?}")));
    }
    let fmt = format!("{fmt:0>3}");
    let has_size = fmt.as_bytes()[0] == b'1';
    let has_vw = fmt.as_bytes()[1] == b'1';
    let has_ew = fmt.as_bytes()[2] == b'1';
    let ncon: usize = match h.get(3) {
        Some(t) => num(t, file, hline, "ncon")?,
        None => usize::from(has_vw),
    };
    if has_vw && ncon == 0 {
        return Err(perr(file, hline, "ncon must be >= 1 with vertex weights"));
    }
    let ncon = if has_vw { ncon } else { 0 };
    // Capacities are bounded by the text size: a header announcing 10^18
    // vertices must give an error at the missing lines, not an allocation abort.
    let cap = text.len() / 2 + 1;
    let mut xadj = Vec::with_capacity(n.min(cap) + 1);
    xadj.push(0);
    let mut adjncy = Vec::with_capacity(m.min(cap).saturating_mul(2));
    let mut ewgt = Vec::new();
    let mut vwgt = Vec::new();
    let mut vline = Vec::with_capacity(n.min(cap));
    for v in 0..n {
        let (ln, l) = lines.next().ok_or_else(|| {
            perr(
                file,
                text.lines().count() + 1,
                format!("missing line of vertex {}", v + 1),
            )
        })?;
        vline.push(ln);
        let toks: Vec<&str> = l.split_whitespace().collect();
        let lead = usize::from(has_size) + ncon;
        if toks.len() < lead {
            return Err(perr(file, ln, "missing vertex size or weights"));
        }
        if has_vw {
            let w: f64 = num(toks[usize::from(has_size)], file, ln, "vertex weight")?;
            if !(w.is_finite() && w >= 0.0) {
                return Err(perr(file, ln, "vertex weight must be >= 0"));
            }
            vwgt.push(w);
        }
        let rest = &toks[lead..];
        let step = if has_ew { 2 } else { 1 };
        if rest.len() % step != 0 {
            return Err(perr(file, ln, "neighbour without its edge weight"));
        }
        for pair in rest.chunks(step) {
            let u: usize = num(pair[0], file, ln, "neighbour id")?;
            if u == 0 || u > n {
                return Err(perr(file, ln, format!("neighbour {u} out of 1..={n}")));
            }
            if u - 1 == v {
                return Err(perr(file, ln, "self-loop"));
            }
            adjncy.push(u - 1);
            if has_ew {
                let w: f64 = num(pair[1], file, ln, "edge weight")?;
                if !(w.is_finite() && w > 0.0) {
                    return Err(perr(file, ln, "edge weight must be > 0"));
                }
                ewgt.push(w);
            }
        }
        xadj.push(adjncy.len());
    }
    if let Some((ln, l)) = lines.find(|(_, l)| !l.trim().is_empty()) {
        return Err(perr(
            file,
            ln,
            format!("extra line after {n} vertices: {l:?}"),
        ));
    }
    if Some(adjncy.len()) != m.checked_mul(2) {
        return Err(perr(
            file,
            hline,
            format!(
                "header says {m} edges, adjacency lists hold {} arcs",
                adjncy.len()
            ),
        ));
    }
    Graph::from_csr(
        xadj.clone(),
        adjncy.clone(),
        has_vw.then_some(vwgt),
        has_ew.then_some(ewgt),
    )
    .map_err(|e| {
        // Name the line of the first vertex whose list is at fault.
        let bad = first_asymmetric(&xadj, &adjncy).unwrap_or(0);
        perr(
            file,
            vline.get(bad).copied().unwrap_or(hline),
            e.to_string(),
        )
    })
}

/// First vertex with a repeated neighbour or a neighbour that does not list it.
fn first_asymmetric(xadj: &[usize], adjncy: &[usize]) -> Option<usize> {
    let n = xadj.len() - 1;
    let mut set: std::collections::HashSet<(usize, usize)> = std::collections::HashSet::new();
    for v in 0..n {
        for &u in &adjncy[xadj[v]..xadj[v + 1]] {
            if !set.insert((v, u)) {
                return Some(v);
            }
        }
    }
    (0..n).find(|&v| {
        adjncy[xadj[v]..xadj[v + 1]]
            .iter()
            .any(|&u| !set.contains(&(u, v)))
    })
}

/// Parses a coordinates file: one vertex per line, 1 to 3 numbers each (the
/// same count on every line); blank lines and `%`/`#` comments are skipped.
/// Returns `(dim, values)`.
pub fn parse_coords(text: &str, file: &str, n: usize) -> Result<(usize, Vec<f64>)> {
    let mut dim = 0;
    let mut data = Vec::with_capacity(n.min(text.len()).saturating_mul(3));
    let mut count = 0;
    for (i, l) in text.lines().enumerate() {
        let t = l.trim();
        if t.is_empty() || t.starts_with('%') || t.starts_with('#') {
            continue;
        }
        let vals: Vec<f64> = t
            .split_whitespace()
            .map(|x| num::<f64>(x, file, i + 1, "a coordinate"))
            .collect::<Result<_>>()?;
        if vals.iter().any(|x| !x.is_finite()) {
            return Err(perr(file, i + 1, "non-finite coordinate"));
        }
        if dim == 0 {
            if !(1..=3).contains(&vals.len()) {
                return Err(perr(file, i + 1, "expected 1 to 3 coordinates"));
            }
            dim = vals.len();
        } else if vals.len() != dim {
            return Err(perr(
                file,
                i + 1,
                format!("expected {dim} coordinates, found {}", vals.len()),
            ));
        }
        count += 1;
        if count > n {
            return Err(perr(file, i + 1, format!("more than {n} coordinate lines")));
        }
        data.extend(vals);
    }
    if count != n {
        return Err(perr(
            file,
            text.lines().count() + 1,
            format!("{count} coordinate lines for {n} vertices"),
        ));
    }
    Ok((dim.max(1), data))
}

/// Parses a METIS `.part` file (one part id per line) for `n` vertices.
pub fn parse_partition(text: &str, file: &str, n: usize, nparts: usize) -> Result<Partition> {
    let mut parts = Vec::with_capacity(n.min(text.len()));
    for (i, l) in text.lines().enumerate() {
        let t = l.trim();
        if t.is_empty() {
            continue;
        }
        let p: usize = num(t, file, i + 1, "a part id")?;
        if p >= nparts {
            return Err(perr(file, i + 1, format!("part {p} out of 0..{nparts}")));
        }
        parts.push(p);
    }
    if parts.len() != n {
        return Err(perr(
            file,
            text.lines().count() + 1,
            format!("{} part ids for {n} vertices", parts.len()),
        ));
    }
    Partition::new(nparts, parts)
}

/// Writes a graph in METIS format (edge weights rounded to integers ≥ 1 and
/// vertex weights to integers ≥ 0 when present, as METIS requires integers).
pub fn write_metis(g: &Graph) -> String {
    use std::fmt::Write;
    let mut s = String::new();
    let fmt = match (g.has_vertex_weights(), g.has_edge_weights()) {
        (false, false) => "",
        (false, true) => " 001",
        (true, false) => " 010",
        (true, true) => " 011",
    };
    let _ = writeln!(s, "{} {}{fmt}", g.n(), g.num_edges());
    for v in 0..g.n() {
        let mut first = true;
        if g.has_vertex_weights() {
            let _ = write!(s, "{}", g.vertex_weight(v).round().max(0.0) as u64);
            first = false;
        }
        for (u, w) in g.weighted_neighbors(v) {
            let _ = write!(s, "{}{}", if first { "" } else { " " }, u + 1);
            first = false;
            if g.has_edge_weights() {
                let _ = write!(s, " {}", w.round().max(1.0) as u64);
            }
        }
        s.push('\n');
    }
    s
}

/// Writes the coordinates of a graph, one vertex per line.
pub fn write_coords(g: &Graph) -> String {
    let Some(c) = g.coords() else {
        return String::new();
    };
    (0..g.n())
        .map(|v| {
            let xs: Vec<String> = c.of(v).iter().map(|x| format!("{x}")).collect();
            xs.join(" ") + "\n"
        })
        .collect()
}

/// Writes a partition in METIS `.part` format (one part id per line).
pub fn write_partition(p: &Partition) -> String {
    p.parts.iter().map(|x| format!("{x}\n")).collect()
}

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
    /// gmsh MSH 2.2 element type code, for linear types.
    fn from_gmsh(code: u32) -> Option<Self> {
        Some(match code {
            15 => ElementKind::Point,
            1 => ElementKind::Line,
            2 => ElementKind::Triangle,
            3 => ElementKind::Quadrangle,
            4 => ElementKind::Tetrahedron,
            5 => ElementKind::Hexahedron,
            6 => ElementKind::Prism,
            7 => ElementKind::Pyramid,
            _ => return None,
        })
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

    fn coords_of(&self, pts: impl Iterator<Item = [f64; 3]>) -> Vec<f64> {
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

    fn set_dim_from_z(&mut self) {
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

/// Parses a gmsh MSH 2.2 ASCII file (`$MeshFormat`, `$Nodes`, `$Elements`;
/// other sections are skipped). Only linear elements are accepted.
pub fn parse_msh2(text: &str, file: &str) -> Result<Mesh> {
    let mut it = text.lines().enumerate().map(|(i, l)| (i + 1, l.trim()));
    let last = text.lines().count() + 1;
    let mut next = |what: &str| -> Result<(usize, &str)> {
        it.next().ok_or_else(|| {
            perr(
                file,
                last,
                format!("unexpected end of file, expected {what}"),
            )
        })
    };
    let mut mesh = Mesh {
        dim: 3,
        nodes: Vec::new(),
        elements: Vec::new(),
    };
    let mut id_to_idx: HashMap<u64, usize> = HashMap::new();
    let (mut seen_format, mut seen_nodes, mut seen_elements) = (false, false, false);
    while let Ok((ln, l)) = next("a section") {
        if l.is_empty() {
            continue;
        }
        match l {
            "$MeshFormat" => {
                let (ln, v) = next("the format line")?;
                let t: Vec<&str> = v.split_whitespace().collect();
                if t.len() < 3 || !t[0].starts_with('2') {
                    return Err(perr(
                        file,
                        ln,
                        format!("only MSH 2.x is supported, found {v:?}"),
                    ));
                }
                if t[1] != "0" {
                    return Err(perr(file, ln, "binary MSH is not supported"));
                }
                let (ln, e) = next("$EndMeshFormat")?;
                if e != "$EndMeshFormat" {
                    return Err(perr(file, ln, "expected $EndMeshFormat"));
                }
                seen_format = true;
            }
            "$Nodes" => {
                let (ln, c) = next("the node count")?;
                let count: usize = num(c, file, ln, "node count")?;
                for _ in 0..count {
                    let (ln, l) = next("a node line")?;
                    let t: Vec<&str> = l.split_whitespace().collect();
                    if t.len() != 4 {
                        return Err(perr(file, ln, "node line must be `id x y z`"));
                    }
                    let id: u64 = num(t[0], file, ln, "node id")?;
                    let mut p = [0.0f64; 3];
                    for (d, x) in p.iter_mut().enumerate() {
                        *x = num(t[d + 1], file, ln, "coordinate")?;
                        if !x.is_finite() {
                            return Err(perr(file, ln, "non-finite coordinate"));
                        }
                    }
                    if id_to_idx.insert(id, mesh.nodes.len()).is_some() {
                        return Err(perr(file, ln, format!("node {id} defined twice")));
                    }
                    mesh.nodes.push(p);
                }
                let (ln, e) = next("$EndNodes")?;
                if e != "$EndNodes" {
                    return Err(perr(file, ln, "expected $EndNodes"));
                }
                seen_nodes = true;
            }
            "$Elements" => {
                if !seen_nodes {
                    return Err(perr(file, ln, "$Elements before $Nodes"));
                }
                let (ln, c) = next("the element count")?;
                let count: usize = num(c, file, ln, "element count")?;
                for _ in 0..count {
                    let (ln, l) = next("an element line")?;
                    let t: Vec<&str> = l.split_whitespace().collect();
                    if t.len() < 3 {
                        return Err(perr(
                            file,
                            ln,
                            "element line must be `id type ntags tags… nodes…`",
                        ));
                    }
                    let code: u32 = num(t[1], file, ln, "element type")?;
                    let kind = ElementKind::from_gmsh(code).ok_or_else(|| {
                        perr(
                            file,
                            ln,
                            format!("unsupported element type {code} (only linear elements)"),
                        )
                    })?;
                    let ntags: usize = num(t[2], file, ln, "tag count")?;
                    let first = 3usize.saturating_add(ntags);
                    if t.len() != first.saturating_add(kind.nodes()) {
                        return Err(perr(
                            file,
                            ln,
                            format!("element of type {code} needs {} nodes", kind.nodes()),
                        ));
                    }
                    let nodes = t[first..]
                        .iter()
                        .map(|x| {
                            let id: u64 = num(x, file, ln, "node id")?;
                            id_to_idx
                                .get(&id)
                                .copied()
                                .ok_or_else(|| perr(file, ln, format!("unknown node {id}")))
                        })
                        .collect::<Result<Vec<_>>>()?;
                    mesh.elements.push((kind, nodes));
                }
                let (ln, e) = next("$EndElements")?;
                if e != "$EndElements" {
                    return Err(perr(file, ln, "expected $EndElements"));
                }
                seen_elements = true;
            }
            s if s.starts_with('$') => {
                let end = format!("$End{}", &s[1..]);
                loop {
                    let (_, l) = next(&end)?;
                    if l == end {
                        break;
                    }
                }
            }
            other => return Err(perr(file, ln, format!("unexpected line {other:?}"))),
        }
    }
    if !(seen_format && seen_nodes && seen_elements) {
        return Err(perr(file, last, "missing $MeshFormat, $Nodes or $Elements"));
    }
    mesh.set_dim_from_z();
    Ok(mesh)
}

/// Parses a Medit `.mesh` ASCII file (keywords `MeshVersionFormatted`,
/// `Dimension`, `Vertices`, `Edges`, `Triangles`, `Quadrilaterals`,
/// `Tetrahedra`, `Hexahedra`, `Prisms`, `Pyramids`, a few per-entity lists that
/// are skipped, `End`). Indices are 1-based; every entity ends with a reference
/// number.
pub fn parse_medit(text: &str, file: &str) -> Result<Mesh> {
    let mut toks = text.lines().enumerate().flat_map(|(i, l)| {
        let l = l.split('#').next().unwrap_or("");
        l.split_whitespace().map(move |t| (i + 1, t))
    });
    let last = text.lines().count() + 1;
    let mut next = |what: &str| -> Result<(usize, &str)> {
        toks.next().ok_or_else(|| {
            perr(
                file,
                last,
                format!("unexpected end of file, expected {what}"),
            )
        })
    };
    let mut mesh = Mesh {
        dim: 0,
        nodes: Vec::new(),
        elements: Vec::new(),
    };
    while let Ok((ln, kw)) = next("a keyword") {
        let kind = match kw {
            "MeshVersionFormatted" => {
                let (ln, v) = next("a version")?;
                let _: u32 = num(v, file, ln, "a version number")?;
                continue;
            }
            "Dimension" => {
                let (ln, d) = next("a dimension")?;
                mesh.dim = num(d, file, ln, "a dimension")?;
                if !(1..=3).contains(&mesh.dim) {
                    return Err(perr(file, ln, "dimension must be 1, 2 or 3"));
                }
                continue;
            }
            "End" => break,
            "Vertices" => None,
            "Edges" => Some(ElementKind::Line),
            "Triangles" => Some(ElementKind::Triangle),
            "Quadrilaterals" => Some(ElementKind::Quadrangle),
            "Tetrahedra" => Some(ElementKind::Tetrahedron),
            "Hexahedra" => Some(ElementKind::Hexahedron),
            "Prisms" => Some(ElementKind::Prism),
            "Pyramids" => Some(ElementKind::Pyramid),
            "Corners" | "Ridges" | "RequiredVertices" | "RequiredEdges" | "RequiredTriangles" => {
                let (ln, c) = next("a count")?;
                let count: usize = num(c, file, ln, "a count")?;
                for _ in 0..count {
                    next("an index")?;
                }
                continue;
            }
            other => return Err(perr(file, ln, format!("unknown Medit keyword {other:?}"))),
        };
        let (ln, c) = next("a count")?;
        let count: usize = num(c, file, ln, "a count")?;
        match kind {
            None => {
                if mesh.dim == 0 {
                    return Err(perr(file, ln, "Vertices before Dimension"));
                }
                for _ in 0..count {
                    let mut p = [0.0f64; 3];
                    for x in p.iter_mut().take(mesh.dim) {
                        let (ln, t) = next("a coordinate")?;
                        *x = num(t, file, ln, "a coordinate")?;
                        if !x.is_finite() {
                            return Err(perr(file, ln, "non-finite coordinate"));
                        }
                    }
                    let (ln, r) = next("a reference")?;
                    let _: f64 = num(r, file, ln, "a reference number")?;
                    mesh.nodes.push(p);
                }
            }
            Some(k) => {
                for _ in 0..count {
                    let mut nodes = Vec::with_capacity(k.nodes());
                    for _ in 0..k.nodes() {
                        let (ln, t) = next("a vertex index")?;
                        let i: usize = num(t, file, ln, "a vertex index")?;
                        if i == 0 || i > mesh.nodes.len() {
                            return Err(perr(
                                file,
                                ln,
                                format!("vertex {i} out of 1..={}", mesh.nodes.len()),
                            ));
                        }
                        nodes.push(i - 1);
                    }
                    let (ln, r) = next("a reference")?;
                    let _: i64 = num(r, file, ln, "a reference number")?;
                    mesh.elements.push((k, nodes));
                }
            }
        }
    }
    if mesh.nodes.is_empty() {
        return Err(perr(file, last, "no Vertices"));
    }
    Ok(mesh)
}

/// Reads a mesh by file name: `.msh` → gmsh MSH 2.2, `.mesh` → Medit.
pub fn parse_mesh(text: &str, file: &str) -> Result<Mesh> {
    if file.ends_with(".msh") {
        parse_msh2(text, file)
    } else if file.ends_with(".mesh") {
        parse_medit(text, file)
    } else {
        Err(Error::InvalidInput(format!(
            "{file}: unknown mesh extension (.msh or .mesh)"
        )))
    }
}
