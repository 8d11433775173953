//! Index-based mapping and fast remapping for adaptive environments
//! (\[KOR95\] §3): the vertices are put once into a
//! one-dimensional order — along the Hilbert or Z curve (HCI, ZCI), or by
//! recursive coordinate or spectral bisection into equal halves (RCBI, RSBI,
//! Figure 5 (f)) — and every partition is then a cut of that order into
//! contiguous intervals whose weights follow the speeds.
//!
//! A cut costs O(p log n) (binary searches on prefix weights, [`Ordering::cut`]);
//! turning it into a part per vertex is O(n). When speeds change,
//! [`Ordering::recut`] chooses, among the cuts with the new sizes, one that keeps
//! the old order of the parts along the curve, so that only vertices near the
//! moved boundaries change owner.

use serde::{Deserialize, Serialize};

use super::bisect::{self, Grouping, Interval};
use super::csr::Graph;
use super::metrics::Partition;
use super::rcb::coordinate_bisect;
use super::rsb::Rsb;
use super::sfc::{curve_order, Curve};
use crate::error::{Error, Result};

/// A one-dimensional order of a graph's vertices with prefix weights.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Ordering {
    /// Vertices in order.
    pub perm: Vec<usize>,
    /// `prefix[i]` = weight of `perm[..i]` (`n + 1` entries).
    pub prefix: Vec<f64>,
}

/// Which one-dimensional index to build.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum IndexKind {
    /// Hilbert curve (HCI).
    Hci,
    /// Z-curve (ZCI).
    Zci,
    /// Recursive coordinate bisection index (RCBI).
    Rcbi,
    /// Recursive spectral bisection index (RSBI).
    Rsbi,
}

/// A cut of an [`Ordering`]: the parts in their order along it, each with its
/// interval of positions `lo..hi` (consecutive, covering `0..n`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct IntervalCut {
    /// Number of parts.
    pub nparts: usize,
    /// `(part, lo, hi)` in order along the ordering.
    pub intervals: Vec<(usize, usize, usize)>,
}

impl IntervalCut {
    /// Number of vertices that change part between `self` and `other` (two cuts
    /// of the same ordering): `n − Σ_i |I_i ∩ J_i|`. O(p).
    pub fn moved(&self, other: &IntervalCut) -> usize {
        let n = self.intervals.iter().map(|t| t.2 - t.1).sum::<usize>();
        let mut span = vec![(0, 0); self.nparts.max(other.nparts)];
        for &(p, lo, hi) in &self.intervals {
            span[p] = (lo, hi);
        }
        let kept: usize = other
            .intervals
            .iter()
            .map(|&(p, lo, hi)| {
                let (a, b) = span[p];
                hi.min(b).saturating_sub(lo.max(a))
            })
            .sum();
        n - kept
    }
}

impl Ordering {
    /// Builds an ordering from a permutation of `0..g.n()`.
    pub fn from_perm(g: &Graph, perm: Vec<usize>) -> Result<Self> {
        let mut seen = vec![false; g.n()];
        if perm.len() != g.n() {
            return Err(Error::ShapeMismatch(
                "ordering length differs from graph".into(),
            ));
        }
        for &v in &perm {
            if v >= g.n() || std::mem::replace(&mut seen[v], true) {
                return Err(Error::InvalidInput(format!(
                    "ordering repeats or exceeds vertex {v}"
                )));
            }
        }
        let mut prefix = Vec::with_capacity(perm.len() + 1);
        prefix.push(0.0);
        let mut acc = 0.0;
        for &v in &perm {
            acc += g.vertex_weight(v);
            prefix.push(acc);
        }
        Ok(Ordering { perm, prefix })
    }

    /// Builds the requested index. HCI/ZCI: O(n log n); RCBI: O(n log² n);
    /// RSBI: one Fiedler vector per bisection down to `rsb_leaves` leaves (\[KOR95\]
    /// uses 1024 leaves with random order inside; we keep the Fiedler order
    /// inside leaves, which costs nothing and is no worse).
    pub fn build(g: &Graph, kind: IndexKind, rsb: &Rsb, rsb_leaves: usize) -> Result<Self> {
        bisect::check_targets(g, &[1.0])?;
        let perm = match kind {
            IndexKind::Hci => curve_order(g, Curve::Hilbert)?,
            IndexKind::Zci => curve_order(g, Curve::Z)?,
            IndexKind::Rcbi => {
                let c = g.require_coords("RCBI")?;
                bisect::order_by_bisection(g.n(), 1, &mut |s, f| Ok(coordinate_bisect(g, c, s, f)))?
            }
            IndexKind::Rsbi => {
                let leaf = g.n().div_ceil(rsb_leaves.max(1));
                bisect::order_by_bisection(g.n(), leaf, &mut |s, f| rsb.bisect(g, s, f))?
            }
        };
        Ordering::from_perm(g, perm)
    }

    /// Number of vertices.
    pub fn len(&self) -> usize {
        self.perm.len()
    }
    /// True when empty.
    pub fn is_empty(&self) -> bool {
        self.perm.is_empty()
    }

    /// Position `k` in `lo..=hi` whose prefix weight is nearest to `goal`. O(log n).
    fn nearest(&self, lo: usize, hi: usize, goal: f64) -> usize {
        let k = lo + self.prefix[lo..=hi].partition_point(|&w| w < goal);
        let k = k.min(hi);
        if k > lo && (goal - self.prefix[k - 1]).abs() <= (self.prefix[k] - goal).abs() {
            k - 1
        } else {
            k
        }
    }

    /// Cuts the ordering in the ratio of `targets`, the parts placed along it by
    /// recursive bisection with `grouping`. O(p log n).
    pub fn cut(&self, targets: &[f64], grouping: Grouping) -> Result<IntervalCut> {
        crate::check_speeds(targets)?;
        let all: Vec<usize> = (0..targets.len()).collect();
        let mut out: Vec<Interval> = Vec::with_capacity(targets.len());
        let mut split = |lo: usize, hi: usize, frac: f64| -> Result<usize> {
            let goal = self.prefix[lo] + frac * (self.prefix[hi] - self.prefix[lo]);
            Ok(self.nearest(lo, hi, goal))
        };
        bisect::bisect_parts(0, self.len(), &all, targets, grouping, &mut split, &mut out)?;
        Ok(IntervalCut {
            nparts: targets.len(),
            intervals: out,
        })
    }

    /// Cuts the ordering into intervals in the given part `sequence`, the
    /// boundaries at the nearest prefix weights. O(p log n).
    pub fn cut_in_sequence(&self, sequence: &[usize], targets: &[f64]) -> Result<IntervalCut> {
        let norm = crate::normalized(targets)?;
        if sequence.len() != targets.len() {
            return Err(Error::ShapeMismatch(
                "sequence and targets differ in length".into(),
            ));
        }
        let total = self.prefix[self.len()];
        let mut acc = 0.0;
        let mut lo = 0;
        let mut intervals = Vec::with_capacity(sequence.len());
        for (j, &p) in sequence.iter().enumerate() {
            let share = norm
                .get(p)
                .ok_or_else(|| Error::InvalidInput(format!("part {p} out of range")))?;
            acc += share * total;
            let hi = if j + 1 == sequence.len() {
                self.len()
            } else {
                self.nearest(lo, self.len(), acc)
            };
            intervals.push((p, lo, hi));
            lo = hi;
        }
        Ok(IntervalCut {
            nparts: targets.len(),
            intervals,
        })
    }

    /// Remaps after a change of speeds (\[KOR95\] §3): the new cut has interval
    /// weights following `targets`; of the two candidate part sequences — the
    /// one of `old` (boundaries slide, only vertices between an old and a new
    /// boundary move) and the fresh one of `grouping` — the one moving fewer
    /// vertices is returned. O(p log n).
    pub fn recut(
        &self,
        old: &IntervalCut,
        targets: &[f64],
        grouping: Grouping,
    ) -> Result<IntervalCut> {
        if old.nparts != targets.len() || old.intervals.len() != targets.len() {
            return Err(Error::ShapeMismatch(format!(
                "old cut has {} parts, {} targets given",
                old.nparts,
                targets.len()
            )));
        }
        let seq: Vec<usize> = old.intervals.iter().map(|t| t.0).collect();
        let keep = self.cut_in_sequence(&seq, targets)?;
        let fresh = self.cut(targets, grouping)?;
        Ok(if old.moved(&fresh) < old.moved(&keep) {
            fresh
        } else {
            keep
        })
    }

    /// The part of every vertex under `cut`. O(n).
    pub fn to_partition(&self, cut: &IntervalCut) -> Result<Partition> {
        bisect::intervals_to_partition(&self.perm, &cut.intervals, cut.nparts)
    }
}

/// An index-based partitioner: builds the ordering, then cuts it (\[KOR95\] §3,
/// "RSBI", "RCBI", and HCI/ZCI of §2).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct IndexPartitioner {
    /// Which ordering.
    pub kind: IndexKind,
    /// Processor grouping when cutting.
    pub grouping: Grouping,
    /// RSB parameters for RSBI.
    pub rsb: Rsb,
    /// Number of RSBI leaves (\[KOR95\] uses 1024).
    pub rsb_leaves: usize,
}

impl Default for IndexPartitioner {
    fn default() -> Self {
        IndexPartitioner {
            kind: IndexKind::Hci,
            grouping: Grouping::Simple,
            rsb: Rsb::default(),
            rsb_leaves: 1024,
        }
    }
}

impl super::GraphPartitioner for IndexPartitioner {
    fn partition(&self, g: &Graph, targets: &[f64]) -> Result<Partition> {
        bisect::check_targets(g, targets)?;
        let ord = Ordering::build(g, self.kind, &self.rsb, self.rsb_leaves)?;
        ord.to_partition(&ord.cut(targets, self.grouping)?)
    }
}
