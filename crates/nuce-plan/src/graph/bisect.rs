//! Recursive bisection over processor groups, shared by every partitioner of
//! \[KOR95\] §2: at each level the processors are split into
//! two groups ([`Grouping::Simple`] or [`Grouping::Binpacking`]), the vertex set
//! is split in the ratio of the groups' total speeds by a method-specific
//! bisector (coordinate, curve index, Fiedler vector), and both halves recurse.

use serde::{Deserialize, Serialize};

use super::csr::Graph;
use super::metrics::Partition;
use crate::error::{Error, Result};

/// How the processors' weights are grouped at each bisection
/// (\[KOR95\] §2, the "Simple" and "Binpacking" paragraph).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, Hash)]
#[serde(rename_all = "lowercase")]
pub enum Grouping {
    /// Take the first processors, in the given order, until their weights reach
    /// half of the total (the smallest such prefix, at least one processor and
    /// at most all but one). With weights 0.4, 0.4, 0.1, 0.1 this puts 80 % of the
    /// graph on one side, as in \[KOR95\]'s example. O(k) for k processors.
    #[default]
    Simple,
    /// Split the weights into two groups of sums as equal as possible, by the
    /// bin-packing rule "largest weight first into the lighter bin" (LPT). The
    /// sentence of \[KOR95\] is truncated in the extracted text ("such that the sum of
    /// the two groups"); we read it as "are as equal as possible", which its
    /// example (0.4, 0.4, 0.1, 0.1 → two equal halves) confirms. O(k log k).
    Binpacking,
}

impl Grouping {
    /// Splits the processor ids `parts` (with weights `targets[id]`) into two
    /// non-empty groups; `parts.len() >= 2`. Each group keeps the order of `parts`.
    pub fn split(&self, parts: &[usize], targets: &[f64]) -> (Vec<usize>, Vec<usize>) {
        debug_assert!(parts.len() >= 2);
        match self {
            Grouping::Simple => {
                let total: f64 = parts.iter().map(|&i| targets[i]).sum();
                let mut acc = 0.0;
                let mut k = parts.len() - 1;
                for (j, &i) in parts.iter().enumerate() {
                    acc += targets[i];
                    if acc >= total / 2.0 {
                        k = j + 1;
                        break;
                    }
                }
                let k = k.clamp(1, parts.len() - 1);
                (parts[..k].to_vec(), parts[k..].to_vec())
            }
            Grouping::Binpacking => {
                let mut order: Vec<usize> = (0..parts.len()).collect();
                order.sort_by(|&a, &b| {
                    targets[parts[b]]
                        .total_cmp(&targets[parts[a]])
                        .then(a.cmp(&b))
                });
                let mut side = vec![false; parts.len()];
                let (mut left, mut right) = (0.0, 0.0);
                for &j in &order {
                    if left <= right {
                        left += targets[parts[j]];
                    } else {
                        right += targets[parts[j]];
                        side[j] = true;
                    }
                }
                let l = (0..parts.len()).filter(|&j| !side[j]).map(|j| parts[j]);
                let r = (0..parts.len()).filter(|&j| side[j]).map(|j| parts[j]);
                (l.collect(), r.collect())
            }
        }
    }
}

/// One contiguous range `lo..hi` of positions, given to `part`.
pub(crate) type Interval = (usize, usize, usize);

/// Recursive bisection of the positions `lo..hi` among the processors `parts`.
/// `split(lo, hi, frac)` may reorder the items in `lo..hi` and returns `mid` such
/// that `lo..mid` holds about `frac` of the weight. Returns `(part, lo, hi)` for
/// every part. The recursion depth is ⌈log₂ p⌉ for Binpacking, at most p − 1 for
/// Simple.
pub(crate) fn bisect_parts(
    lo: usize,
    hi: usize,
    parts: &[usize],
    targets: &[f64],
    grouping: Grouping,
    split: &mut dyn FnMut(usize, usize, f64) -> Result<usize>,
    out: &mut Vec<Interval>,
) -> Result<()> {
    if parts.len() == 1 {
        out.push((parts[0], lo, hi));
        return Ok(());
    }
    let (l, r) = grouping.split(parts, targets);
    let wl: f64 = l.iter().map(|&i| targets[i]).sum();
    let wr: f64 = r.iter().map(|&i| targets[i]).sum();
    let mid = split(lo, hi, wl / (wl + wr))?;
    bisect_parts(lo, mid, &l, targets, grouping, split, out)?;
    bisect_parts(mid, hi, &r, targets, grouping, split, out)
}

/// Position `k` in `lo..=hi` such that the weight of `verts[lo..k]` is closest to
/// `frac` × the weight of `verts[lo..hi]` (ties: the smaller k). O(hi − lo).
pub(crate) fn weighted_split(g: &Graph, verts: &[usize], lo: usize, hi: usize, frac: f64) -> usize {
    let total: f64 = verts[lo..hi].iter().map(|&v| g.vertex_weight(v)).sum();
    let goal = frac * total;
    let mut acc = 0.0;
    let mut best = (goal.abs(), lo);
    for (k, &v) in verts[lo..hi].iter().enumerate() {
        acc += g.vertex_weight(v);
        let d = (acc - goal).abs();
        if d < best.0 {
            best = (d, lo + k + 1);
        }
    }
    best.1
}

/// Validates speeds against a graph: at least one part, every speed valid.
pub(crate) fn check_targets(g: &Graph, targets: &[f64]) -> Result<()> {
    crate::check_speeds(targets)?;
    if g.n() == 0 {
        return Err(Error::Empty("graph has no vertex".into()));
    }
    Ok(())
}

/// Runs [`bisect_parts`] over all vertices with a vertex-reordering bisector
/// and turns the intervals into a [`Partition`].
pub(crate) fn partition_by_bisection(
    g: &Graph,
    targets: &[f64],
    grouping: Grouping,
    mut verts: Vec<usize>,
    bisector: &mut dyn FnMut(&mut [usize], f64) -> Result<usize>,
) -> Result<Partition> {
    check_targets(g, targets)?;
    let all: Vec<usize> = (0..targets.len()).collect();
    let mut out = Vec::with_capacity(targets.len());
    let n = verts.len();
    {
        let verts_ref = &mut verts;
        let mut split = |lo: usize, hi: usize, frac: f64| -> Result<usize> {
            Ok(lo + bisector(&mut verts_ref[lo..hi], frac)?)
        };
        bisect_parts(0, n, &all, targets, grouping, &mut split, &mut out)?;
    }
    intervals_to_partition(&verts, &out, targets.len())
}

/// Gives `verts[lo..hi]` to `part` for every interval.
pub(crate) fn intervals_to_partition(
    verts: &[usize],
    intervals: &[Interval],
    nparts: usize,
) -> Result<Partition> {
    let mut parts = vec![usize::MAX; verts.len()];
    for &(p, lo, hi) in intervals {
        for &v in &verts[lo..hi] {
            parts[v] = p;
        }
    }
    if parts.contains(&usize::MAX) {
        return Err(Error::InvalidPlan(
            "a vertex was left without a part".into(),
        ));
    }
    Partition::new(nparts, parts)
}

/// Orders vertices by recursive bisection into halves of equal weight, down to
/// slices of at most `leaf` vertices (kept in the bisector's order): the
/// RCBI / RSBI orderings of \[KOR95\] §3 ("the index set
/// assigned to the first partition is from 1 to N/2, ..."). ⌈log₂(n/leaf)⌉ levels.
pub(crate) fn order_by_bisection(
    n: usize,
    leaf: usize,
    bisector: &mut dyn FnMut(&mut [usize], f64) -> Result<usize>,
) -> Result<Vec<usize>> {
    let mut verts: Vec<usize> = (0..n).collect();
    let mut stack = vec![(0usize, n)];
    while let Some((lo, hi)) = stack.pop() {
        if hi - lo <= leaf.max(1) {
            continue;
        }
        let mid = lo + bisector(&mut verts[lo..hi], 0.5)?;
        // A bisector that cannot split (e.g. equal keys) still halves the count.
        let mid = if mid == lo || mid == hi {
            (lo + hi) / 2
        } else {
            mid
        };
        stack.push((lo, mid));
        stack.push((mid, hi));
    }
    Ok(verts)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kor95_grouping_example() {
        // [KOR95] §2: weights 0.4, 0.4, 0.1, 0.1.
        let t = [0.4, 0.4, 0.1, 0.1];
        let (l, r) = Grouping::Simple.split(&[0, 1, 2, 3], &t);
        let s: f64 = l.iter().map(|&i| t[i]).sum();
        assert!((s - 0.8).abs() < 1e-12, "{l:?} {r:?}");
        let (l, r) = Grouping::Binpacking.split(&[0, 1, 2, 3], &t);
        let s: f64 = l.iter().map(|&i| t[i]).sum();
        assert!((s - 0.5).abs() < 1e-12, "{l:?} {r:?}");
    }

    #[test]
    fn groups_are_nonempty() {
        for g in [Grouping::Simple, Grouping::Binpacking] {
            let (l, r) = g.split(&[3, 5], &[0.0, 0.0, 0.0, 100.0, 0.0, 1.0]);
            assert_eq!((l.len(), r.len()), (1, 1));
            let (l, r) = g.split(&[0, 1, 2], &[1.0, 1.0, 100.0]);
            assert!(!l.is_empty() && !r.is_empty());
        }
    }
}
