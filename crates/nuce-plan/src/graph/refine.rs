//! k-way Fiduccia–Mattheyses refinement (beyond \[KOR95\],
//! whose partitioners it post-processes; FM \[FM82\]: "A linear-time heuristic
//! for improving network partitions", DAC 1982, in its k-way form as used by
//! multilevel partitioners such as METIS \[KK98\]).
//!
//! A pass repeatedly moves the unlocked boundary vertex with the largest gain
//! (decrease of the weighted cut) to an adjacent part, provided the receiving
//! part stays within `(1 + tolerance)` × its target weight; the vertex is then
//! locked. Negative-gain moves are allowed (hill climbing) up to
//! `max_bad_moves` in a row; at the end of the pass the moves after the best
//! cut seen are undone. Passes repeat until one brings no improvement. Before
//! the passes, parts heavier than the tolerance allows give vertices to
//! adjacent parts with room (best gain first). One pass costs O(m log m).

use std::cmp::Ordering as CmpOrdering;
use std::collections::BinaryHeap;

use serde::{Deserialize, Serialize};

use super::coarsen::coarsen;
use super::csr::Graph;
use super::metrics::{part_weights, target_weights, Partition};
use super::GraphPartitioner;
use crate::error::Result;

/// The k-way FM refiner.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct FmRefiner {
    /// Allowed relative overweight of a part over its target (0.03 = 3 %).
    pub tolerance: f64,
    /// Maximum number of passes.
    pub max_passes: usize,
    /// Consecutive moves without a new best cut before a pass stops.
    pub max_bad_moves: usize,
    /// Multilevel refinement: coarsen the graph by heavy-edge matching inside
    /// each part (so the partition survives coarsening), refine the coarsest
    /// graph, then project and refine level by level (the uncoarsening phase
    /// of multilevel partitioners, applied to a given partition). Moves of
    /// whole clusters at coarse levels escape local minima of single-vertex FM.
    pub multilevel: bool,
}

impl Default for FmRefiner {
    fn default() -> Self {
        FmRefiner {
            tolerance: 0.03,
            max_passes: 12,
            max_bad_moves: 64,
            multilevel: true,
        }
    }
}

/// A partitioner followed by FM refinement.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Refined<P> {
    /// The initial partitioner.
    pub partitioner: P,
    /// The refiner.
    pub refiner: FmRefiner,
}

impl<P: GraphPartitioner> GraphPartitioner for Refined<P> {
    fn partition(&self, g: &Graph, targets: &[f64]) -> Result<Partition> {
        let mut p = self.partitioner.partition(g, targets)?;
        self.refiner.refine(g, targets, &mut p)?;
        Ok(p)
    }
}

#[derive(PartialEq)]
struct Move {
    gain: f64,
    v: usize,
    to: usize,
    stamp: u32,
}
impl Eq for Move {}
impl PartialOrd for Move {
    fn partial_cmp(&self, o: &Self) -> Option<CmpOrdering> {
        Some(self.cmp(o))
    }
}
impl Ord for Move {
    fn cmp(&self, o: &Self) -> CmpOrdering {
        self.gain.total_cmp(&o.gain).then(o.v.cmp(&self.v))
    }
}

struct State<'a> {
    g: &'a Graph,
    part: Vec<usize>,
    w: Vec<f64>,
    cap: Vec<f64>,
    conn: Vec<f64>,
    stamp: Vec<u32>,
}

impl State<'_> {
    /// Best admissible move of `v` (to an adjacent part with room), if any.
    /// `only_over`: the balancing phase, where `v`'s part must be overweight.
    fn best_move(&mut self, v: usize, only_over: bool) -> Option<(f64, usize)> {
        let p = self.part[v];
        if only_over && self.w[p] <= self.cap[p] {
            return None;
        }
        let wv = self.g.vertex_weight(v);
        let mut touched = Vec::new();
        for (u, w) in self.g.weighted_neighbors(v) {
            let q = self.part[u];
            if self.conn[q] == 0.0 {
                touched.push(q);
            }
            self.conn[q] += w;
        }
        let internal = self.conn[p];
        let mut best: Option<(f64, usize)> = None;
        for &q in &touched {
            if q != p && self.w[q] + wv <= self.cap[q] {
                let gain = self.conn[q] - internal;
                if best.is_none_or(|(bg, bq)| gain > bg || (gain == bg && q < bq)) {
                    best = Some((gain, q));
                }
            }
        }
        for q in touched {
            self.conn[q] = 0.0;
        }
        best
    }

    fn push(&mut self, heap: &mut BinaryHeap<Move>, v: usize, only_over: bool) {
        self.stamp[v] = self.stamp[v].wrapping_add(1);
        if let Some((gain, to)) = self.best_move(v, only_over) {
            heap.push(Move {
                gain,
                v,
                to,
                stamp: self.stamp[v],
            });
        }
    }

    fn apply(&mut self, v: usize, to: usize) {
        let wv = self.g.vertex_weight(v);
        self.w[self.part[v]] -= wv;
        self.w[to] += wv;
        self.part[v] = to;
    }

    fn overshoot(&self) -> f64 {
        self.w
            .iter()
            .zip(&self.cap)
            .map(|(w, c)| (w - c).max(0.0))
            .sum()
    }

    fn is_boundary(&self, v: usize) -> bool {
        self.g
            .neighbors(v)
            .iter()
            .any(|&u| self.part[u] != self.part[v])
    }
}

impl FmRefiner {
    /// Refines `p` in place. Never makes a part heavier than `max(its weight
    /// before, (1 + tolerance) × target)`; never raises the cut of a partition
    /// that was within the tolerance (one that was not may pay some cut for
    /// balance).
    pub fn refine(&self, g: &Graph, targets: &[f64], p: &mut Partition) -> Result<()> {
        p.check_for(g, targets.len())?;
        if !self.multilevel {
            return self.refine_level(g, targets, p);
        }
        let k = targets.len();
        let mut graphs: Vec<Graph> = Vec::new();
        let mut maps: Vec<Vec<usize>> = Vec::new();
        let mut parts: Vec<Vec<usize>> = vec![p.parts.clone()];
        loop {
            let fine = graphs.last().unwrap_or(g);
            let fine_part = &parts[parts.len() - 1];
            if fine.n() <= 20 * k {
                break;
            }
            let (c, cmap) = coarsen(fine, Some(fine_part));
            if c.n() as f64 > 0.9 * fine.n() as f64 {
                break;
            }
            let mut cp = vec![0; c.n()];
            for (v, &cv) in cmap.iter().enumerate() {
                cp[cv] = fine_part[v];
            }
            graphs.push(c);
            maps.push(cmap);
            parts.push(cp);
        }
        for level in (0..parts.len()).rev() {
            let gl = if level == 0 { g } else { &graphs[level - 1] };
            let mut pl = Partition {
                nparts: k,
                parts: std::mem::take(&mut parts[level]),
            };
            self.refine_level(gl, targets, &mut pl)?;
            if level > 0 {
                parts[level - 1] = maps[level - 1].iter().map(|&c| pl.parts[c]).collect();
            } else {
                p.parts = pl.parts;
            }
        }
        Ok(())
    }

    /// Single-level FM on `g` (balancing, then passes).
    fn refine_level(&self, g: &Graph, targets: &[f64], p: &mut Partition) -> Result<()> {
        let tw = target_weights(targets, g.total_weight())?;
        let cap: Vec<f64> = tw
            .iter()
            .map(|t| t * (1.0 + self.tolerance.max(0.0)) * (1.0 + 1e-12))
            .collect();
        let n = g.n();
        let mut st = State {
            g,
            part: std::mem::take(&mut p.parts),
            w: Vec::new(),
            cap,
            conn: vec![0.0; targets.len()],
            stamp: vec![0; n],
        };
        st.w = part_weights(
            g,
            &Partition {
                nparts: targets.len(),
                parts: st.part.clone(),
            },
        );
        self.balance(&mut st);
        for _ in 0..self.max_passes {
            if !self.pass(&mut st) {
                break;
            }
        }
        p.parts = st.part;
        Ok(())
    }

    /// Moves vertices out of overweight parts, best gain first.
    fn balance(&self, st: &mut State) {
        if st.overshoot() <= 0.0 {
            return;
        }
        let mut heap = BinaryHeap::new();
        for v in 0..st.g.n() {
            if st.is_boundary(v) {
                st.push(&mut heap, v, true);
            }
        }
        while let Some(m) = heap.pop() {
            if m.stamp != st.stamp[m.v] {
                continue;
            }
            let wv = st.g.vertex_weight(m.v);
            let from = st.part[m.v];
            if st.w[from] <= st.cap[from] || st.w[m.to] + wv > st.cap[m.to] {
                st.push(&mut heap, m.v, true);
                continue;
            }
            st.apply(m.v, m.to);
            st.stamp[m.v] = st.stamp[m.v].wrapping_add(1);
            for i in st.g.xadj()[m.v]..st.g.xadj()[m.v + 1] {
                let u = st.g.adjncy()[i];
                st.push(&mut heap, u, true);
            }
            if st.overshoot() <= 0.0 {
                break;
            }
        }
    }

    /// One FM pass; returns true when the cut decreased.
    fn pass(&self, st: &mut State) -> bool {
        let n = st.g.n();
        let mut heap = BinaryHeap::new();
        for v in 0..n {
            if st.is_boundary(v) {
                st.push(&mut heap, v, false);
            }
        }
        let mut locked = vec![false; n];
        let mut log: Vec<(usize, usize)> = Vec::new();
        let (mut delta, mut best_delta, mut best_len) = (0.0, 0.0, 0);
        let mut since_best = 0;
        while let Some(m) = heap.pop() {
            if locked[m.v] || m.stamp != st.stamp[m.v] {
                continue;
            }
            let wv = st.g.vertex_weight(m.v);
            if st.w[m.to] + wv > st.cap[m.to] {
                st.push(&mut heap, m.v, false);
                continue;
            }
            let from = st.part[m.v];
            st.apply(m.v, m.to);
            locked[m.v] = true;
            log.push((m.v, from));
            delta -= m.gain;
            if delta < best_delta - 1e-9 {
                best_delta = delta;
                best_len = log.len();
                since_best = 0;
            } else {
                since_best += 1;
                if since_best > self.max_bad_moves {
                    break;
                }
            }
            for i in st.g.xadj()[m.v]..st.g.xadj()[m.v + 1] {
                let u = st.g.adjncy()[i];
                if !locked[u] {
                    st.push(&mut heap, u, false);
                }
            }
        }
        for &(v, from) in log[best_len..].iter().rev() {
            st.apply(v, from);
        }
        best_len > 0
    }
}
