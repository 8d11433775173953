//! A one-dimensional order of a graph's vertices and its cuts into
//! contiguous intervals whose weights follow the speeds (\[KOR95\] §3): the
//! data structure behind index-based partitioning. The `order` module builds
//! the orders (Hilbert and Z curves, RCBI, RSBI) and documents the costs and
//! the remapping rule (and re-exports these types); `sfc` cuts the curve
//! orders directly, so it depends on this module and not on `order`.

use serde::{Deserialize, Serialize};

use super::bisect::{self, Grouping, Interval};
use super::csr::Graph;
use super::ids::vertex_id;
use super::metrics::Partition;
use crate::error::{Error, Result};

/// A one-dimensional order of a graph's vertices with prefix weights.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Ordering {
    /// Vertices in order.
    pub perm: Vec<usize>,
    /// `prefix[i]` = weight of `perm[..i]` (`n + 1` entries).
    pub prefix: Vec<f64>,
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
                    "ordering repeats or exceeds vertex {}",
                    vertex_id(v)
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
