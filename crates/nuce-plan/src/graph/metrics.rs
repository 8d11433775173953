//! A partition of a graph's vertices and its quality measures
//! (\[KOR95\] §1): the weighted number of cross edges ("Edges"),
//! the number of edges of the supergraph of parts ("Setups": one message
//! start-up per pair of communicating parts), per-part weights and imbalance
//! against the targets.

use serde::{Deserialize, Serialize};

use super::csr::Graph;
use super::ids::vertex_id;
use crate::error::{Error, Result};

/// Part id of every vertex (`parts[v] < nparts`): part `i` belongs to the
/// processor whose speed was given `i`-th.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Partition {
    /// Number of parts (some may be empty).
    pub nparts: usize,
    /// Part of every vertex.
    pub parts: Vec<usize>,
}

impl Partition {
    /// A partition, checking that every part id is below `nparts`.
    pub fn new(nparts: usize, parts: Vec<usize>) -> Result<Self> {
        if let Some(v) = parts.iter().position(|&p| p >= nparts) {
            return Err(Error::InvalidPlan(format!(
                "vertex {} is in part {} but there are {nparts} parts",
                vertex_id(v),
                parts[v]
            )));
        }
        Ok(Partition { nparts, parts })
    }
    /// Part of vertex `v`.
    pub fn part_of(&self, v: usize) -> usize {
        self.parts[v]
    }
    /// Number of vertices.
    pub fn len(&self) -> usize {
        self.parts.len()
    }
    /// True for a partition of the empty graph.
    pub fn is_empty(&self) -> bool {
        self.parts.is_empty()
    }
    /// Vertices of every part, each list increasing. O(n).
    pub fn members(&self) -> Vec<Vec<usize>> {
        let mut out = vec![Vec::new(); self.nparts];
        for (v, &p) in self.parts.iter().enumerate() {
            out[p].push(v);
        }
        out
    }
    /// Vertices whose part differs in `other` (same vertex count required).
    pub fn moved_to(&self, other: &Partition) -> Result<Vec<usize>> {
        if other.len() != self.len() {
            return Err(Error::ShapeMismatch(format!(
                "partitions of {} and {} vertices",
                self.len(),
                other.len()
            )));
        }
        Ok((0..self.len())
            .filter(|&v| self.parts[v] != other.parts[v])
            .collect())
    }
    /// Checks that this partition fits `g` and has `nparts == targets.len()`.
    pub fn check_for(&self, g: &Graph, nparts: usize) -> Result<()> {
        if self.len() != g.n() || self.nparts != nparts {
            return Err(Error::ShapeMismatch(format!(
                "partition of {} vertices into {} parts for a graph of {} vertices and {nparts} targets",
                self.len(),
                self.nparts,
                g.n()
            )));
        }
        Ok(())
    }
}

/// The quality of a partition (serde; printed by `nuce plan graph --json`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Metrics {
    /// Total weight of the edges whose ends lie in different parts.
    pub edge_cut: f64,
    /// Number of cross edges (unweighted).
    pub cut_edges: usize,
    /// Number of edges of the supergraph of parts (pairs of parts joined by a cross edge).
    pub setups: usize,
    /// Vertex weight of every part, in the order of the targets.
    pub part_weights: Vec<f64>,
    /// Target weight of every part (`targets[i] / Σ targets × total weight`).
    pub target_weights: Vec<f64>,
    /// `max_i part_weights[i] / target_weights[i] − 1` (0 = perfect balance).
    pub imbalance: f64,
}

/// Target weights: `targets` (speeds) scaled to sum to `total`. Validates them.
pub fn target_weights(targets: &[f64], total: f64) -> Result<Vec<f64>> {
    Ok(crate::normalized(targets)?
        .into_iter()
        .map(|t| t * total)
        .collect())
}

/// Vertex weight of every part. O(n).
pub fn part_weights(g: &Graph, p: &Partition) -> Vec<f64> {
    let mut w = vec![0.0; p.nparts];
    for v in 0..g.n() {
        w[p.parts[v]] += g.vertex_weight(v);
    }
    w
}

/// `max_i w_i / t_i − 1` over parts with a positive target.
pub fn imbalance(weights: &[f64], target: &[f64]) -> f64 {
    weights
        .iter()
        .zip(target)
        .filter(|(_, &t)| t > 0.0)
        .map(|(&w, &t)| w / t - 1.0)
        .fold(f64::NEG_INFINITY, f64::max)
        .max(0.0)
}

/// What every part sends plus receives, `(bytes, messages)`, in one ghost
/// exchange of `p` on `g`: each vertex goes once to every other part among
/// its neighbours' (`bytes[v]` bytes), one message per ordered pair of
/// adjacent parts. O(m + cut edges · log).
pub fn halo_traffic(g: &Graph, p: &Partition, bytes: &[f64]) -> Result<Vec<(f64, usize)>> {
    p.check_for(g, p.nparts)?;
    if bytes.len() != g.n() {
        return Err(Error::ShapeMismatch(format!(
            "{} byte sizes for {} vertices",
            bytes.len(),
            g.n()
        )));
    }
    let mut vol = vec![(0.0, 0usize); p.nparts];
    let mut pairs: Vec<(usize, usize)> = Vec::new();
    let mut seen: Vec<usize> = Vec::new();
    for (v, &bv) in bytes.iter().enumerate() {
        let a = p.parts[v];
        seen.clear();
        for &u in g.neighbors(v) {
            let b = p.parts[u];
            if b != a && !seen.contains(&b) {
                seen.push(b);
                vol[a].0 += bv;
                vol[b].0 += bv;
                pairs.push((a, b));
            }
        }
    }
    count_messages(&mut vol, pairs);
    Ok(vol)
}

/// What every part sends plus receives, `(bytes, messages)`, to move from
/// `old` to `new` (`bytes[v]` per vertex that changes part; one message per
/// ordered pair of parts that exchange vertices). O(n + pairs · log).
pub fn migration_traffic(
    old: &Partition,
    new: &Partition,
    bytes: &[f64],
) -> Result<Vec<(f64, usize)>> {
    let moved = old.moved_to(new)?;
    if bytes.len() != old.len() || old.nparts != new.nparts {
        return Err(Error::ShapeMismatch(format!(
            "{} byte sizes for {} vertices, {} and {} parts",
            bytes.len(),
            old.len(),
            old.nparts,
            new.nparts
        )));
    }
    let mut vol = vec![(0.0, 0usize); old.nparts];
    let mut pairs: Vec<(usize, usize)> = Vec::with_capacity(moved.len());
    for v in moved {
        let (a, b) = (old.parts[v], new.parts[v]);
        vol[a].0 += bytes[v];
        vol[b].0 += bytes[v];
        pairs.push((a, b));
    }
    count_messages(&mut vol, pairs);
    Ok(vol)
}

/// Adds one message to both ends of every distinct ordered pair.
fn count_messages(vol: &mut [(f64, usize)], mut pairs: Vec<(usize, usize)>) {
    pairs.sort_unstable();
    pairs.dedup();
    for (a, b) in pairs {
        vol[a].1 += 1;
        vol[b].1 += 1;
    }
}

/// Computes every measure of `p` on `g` against `targets` (speeds).
/// O(p + m log m) time, O(p + cut edges) memory (the former `p × p`
/// table of part pairs would need 10 GB at p = 100 000).
pub fn metrics(g: &Graph, p: &Partition, targets: &[f64]) -> Result<Metrics> {
    p.check_for(g, targets.len())?;
    let target = target_weights(targets, g.total_weight())?;
    let mut edge_cut = 0.0;
    let mut cut_edges = 0;
    let mut pairs: Vec<(usize, usize)> = Vec::new();
    for v in 0..g.n() {
        let pv = p.parts[v];
        for (u, w) in g.weighted_neighbors(v) {
            let pu = p.parts[u];
            if u > v && pu != pv {
                edge_cut += w;
                cut_edges += 1;
                pairs.push((pv.min(pu), pv.max(pu)));
            }
        }
    }
    pairs.sort_unstable();
    pairs.dedup();
    let part_weights = part_weights(g, p);
    Ok(Metrics {
        edge_cut,
        cut_edges,
        setups: pairs.len(),
        imbalance: imbalance(&part_weights, &target),
        part_weights,
        target_weights: target,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::csr::grid_graph;

    #[test]
    fn halo_and_migration_traffic() {
        // A 3 × 4 grid (row-major), columns 0–1 in part 0, column 2 in part 1,
        // column 3 in part 2: part 0 sends its 3 vertices of column 1 to part
        // 1, part 1 sends column 2 to both, part 2 column 3 to part 1.
        let g = grid_graph(3, 4);
        let p = Partition::new(3, (0..12).map(|v| [0, 0, 1, 2][v % 4]).collect()).unwrap();
        let bytes: Vec<f64> = (0..12).map(|v| 1.0 + v as f64).collect();
        let col = |c: usize| -> f64 { (0..3).map(|r| bytes[4 * r + c]).sum() };
        let h = halo_traffic(&g, &p, &bytes).unwrap();
        assert_eq!(h[0], (col(1) + col(2), 2));
        assert_eq!(h[1], (col(1) + 2.0 * col(2) + col(3), 4));
        assert_eq!(h[2], (col(2) + col(3), 2));
        // Column 1 moves to part 2: one message 0 → 2.
        let mut q = p.clone();
        for r in 0..3 {
            q.parts[4 * r + 1] = 2;
        }
        let m = migration_traffic(&p, &q, &bytes).unwrap();
        assert_eq!(m, vec![(col(1), 1), (0.0, 0), (col(1), 1)]);
        assert!(migration_traffic(&p, &q, &bytes[1..]).is_err());
        assert!(halo_traffic(&g, &p, &bytes[1..]).is_err());
    }
}
