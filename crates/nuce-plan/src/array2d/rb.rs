//! Recursive bisection decompositions (\[KRW96\] §6.3,
//! Figure 15).
//!
//! All three work on the weights sorted in nonincreasing order (\[KRW96\]'s
//! `WeightList`), cut the current rectangle in two, give each side a group of
//! parts whose total weight sets the position of the cut, and recurse until a
//! group holds one part. They differ in how the list is split and which side
//! is cut:
//!
//! | algorithm | split of the sorted list | cut direction |
//! |---|---|---|
//! | [`RecursiveBisection`] (Crandall–Quinn) | first `⌈r/2⌉` parts vs the rest | alternates, first across the longer side |
//! | [`RecursiveBisection2`] | the prefix whose weight is nearest half | across the longer side of the current rectangle |
//! | [`RecursiveBisection3`] | two bins of near-equal weight (bin packing) | across the longer side |
//!
//! Cuts are rounded to whole cells ([`super::guillotine::cut_at`]), so every
//! part is a rectangle and its area differs from its share by the rounding of
//! at most `⌈log₂ p⌉` cuts per side. Plans list parts in input order.
//! Complexity: O(p log p) for p parts when the splits are balanced, O(p²) in
//! the worst case (a list split 1 : r − 1 at every level, e.g. one dominant
//! speed per level for RB2/RB3).

use super::checks::checked_speeds;
use super::guillotine::{cut_at, piece, sorted_desc, Axis};
use super::{ArrayDecomposer, ArrayPlan, Rect};
use crate::error::Result;

/// RecursiveBisection of Crandall and Quinn \[CQ93\] (\[KRW96\] §6.3, Figure 15): split the
/// sorted list into its first `⌈r/2⌉` parts and the rest, cut the array in
/// proportion to the two sums, alternating the cut direction at each level
/// (first cut across the longer side, \[KRW96\] `d = vertical` with `m ≤ n`).
///
/// The extracted Figure 15 reads `y := Σ_{i≤x} WeightListLeft_i / Σ_{i≤y}
/// WeightList_i`; the upper bound of the second sum is garbled and is
/// reconstructed as `r` (the whole current list). O(p log p).
#[derive(Debug, Clone, Copy, Default)]
pub struct RecursiveBisection;

/// RecursiveBisection2 (\[KRW96\] §6.3, variation 1): cut across the longer side of
/// the current rectangle, splitting the sorted list at the prefix whose weight
/// is nearest half of the total (on a tie, the heavier prefix: this reproduces
/// \[KRW96\] Figure 16 cost, 4666). O(p log p), O(p²) worst case.
#[derive(Debug, Clone, Copy, Default)]
pub struct RecursiveBisection2;

/// RecursiveBisection3 (\[KRW96\] §6.3, variation 2): as [`RecursiveBisection2`], but
/// the list is divided into two groups of near-equal weight by bin packing
/// (largest-first into the lighter of two bins, the classic LPT rule;
/// \[KRW96\] does not name its bin-packing heuristic). The group holding the
/// heaviest part goes first (left/top). O(p log p), O(p²) worst case.
#[derive(Debug, Clone, Copy, Default)]
pub struct RecursiveBisection3;

/// How a bisection splits the sorted list of the current rectangle.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Rule {
    /// Crandall–Quinn: first `⌈r/2⌉`, alternating directions.
    Halves,
    /// Prefix nearest half, longer side.
    NearHalf,
    /// Bin packing into two near-equal groups, longer side.
    BinPack,
}

impl ArrayDecomposer for RecursiveBisection {
    fn name(&self) -> &'static str {
        "rb"
    }

    fn decompose(&self, rows: usize, cols: usize, speeds: &[f64]) -> Result<ArrayPlan> {
        run(self.name(), Rule::Halves, rows, cols, speeds)
    }
}

impl ArrayDecomposer for RecursiveBisection2 {
    fn name(&self) -> &'static str {
        "rb2"
    }

    fn decompose(&self, rows: usize, cols: usize, speeds: &[f64]) -> Result<ArrayPlan> {
        run(self.name(), Rule::NearHalf, rows, cols, speeds)
    }
}

impl ArrayDecomposer for RecursiveBisection3 {
    fn name(&self) -> &'static str {
        "rb3"
    }

    fn decompose(&self, rows: usize, cols: usize, speeds: &[f64]) -> Result<ArrayPlan> {
        run(self.name(), Rule::BinPack, rows, cols, speeds)
    }
}

fn run(name: &str, rule: Rule, rows: usize, cols: usize, speeds: &[f64]) -> Result<ArrayPlan> {
    // Speeds divided by their maximum: sums cannot overflow.
    let speeds = &checked_speeds(rows, cols, speeds)?;
    let mut parts = vec![Rect::default(); speeds.len()];
    let whole = Rect::new(0, 0, rows, cols);
    let order = sorted_desc(speeds);
    bisect(
        whole,
        &order,
        speeds,
        rule,
        Axis::longer(&whole),
        &mut parts,
    );
    ArrayPlan::new(name, rows, cols, parts)
}

/// Index splitting `w` (in list order) at the prefix whose sum is nearest half
/// of the total; ties go to the longer prefix. Returns `k` in `1..len`. O(r).
pub(crate) fn near_half(w: &[f64]) -> usize {
    let total: f64 = w.iter().sum();
    let eps = 1e-12 * total;
    let (mut acc, mut best, mut k) = (0.0, f64::INFINITY, 1);
    for (j, x) in w[..w.len().saturating_sub(1)].iter().enumerate() {
        acc += x;
        let d = (acc - total / 2.0).abs();
        if d <= best + eps {
            best = best.min(d);
            k = j + 1;
        }
    }
    k
}

/// Largest-first bin packing of `group` (sorted nonincreasing by `w`) into two
/// bins of near-equal weight; the first bin holds `group[0]`. Both bins keep
/// the nonincreasing order. O(r).
pub(crate) fn binpack(group: &[usize], w: &[f64]) -> (Vec<usize>, Vec<usize>) {
    let (mut a, mut b) = (Vec::new(), Vec::new());
    let (mut wa, mut wb) = (0.0, 0.0);
    for &i in group {
        if wa <= wb {
            a.push(i);
            wa += w[i];
        } else {
            b.push(i);
            wb += w[i];
        }
    }
    (a, b)
}

fn bisect(rect: Rect, group: &[usize], w: &[f64], rule: Rule, axis: Axis, out: &mut [Rect]) {
    if let [only] = group {
        out[*only] = rect;
        return;
    }
    if rect.is_empty() {
        group.iter().for_each(|&i| out[i] = Rect::default());
        return;
    }
    let weights: Vec<f64> = group.iter().map(|&i| w[i]).collect();
    let (left, right): (Vec<usize>, Vec<usize>) = match rule {
        Rule::Halves => {
            let x = group.len().div_ceil(2);
            (group[..x].to_vec(), group[x..].to_vec())
        }
        Rule::NearHalf => {
            let k = near_half(&weights);
            (group[..k].to_vec(), group[k..].to_vec())
        }
        Rule::BinPack => binpack(group, w),
    };
    let axis = match rule {
        Rule::Halves => axis,
        Rule::NearHalf | Rule::BinPack => Axis::longer(&rect),
    };
    let wl: f64 = left.iter().map(|&i| w[i]).sum();
    let total: f64 = weights.iter().sum();
    let extent = axis.extent(&rect);
    let cut = cut_at(extent, wl, total);
    bisect(
        piece(&rect, axis, 0, cut),
        &left,
        w,
        rule,
        axis.other(),
        out,
    );
    bisect(
        piece(&rect, axis, cut, extent),
        &right,
        w,
        rule,
        axis.other(),
        out,
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::array2d::cost::acost;

    #[test]
    fn tiles_and_balances() {
        let speeds = [1.0, 2.0, 3.0, 4.0, 1.5];
        for algo in [
            &RecursiveBisection as &dyn ArrayDecomposer,
            &RecursiveBisection2,
            &RecursiveBisection3,
        ] {
            let plan = algo.decompose(100, 80, &speeds).unwrap();
            assert_eq!(plan.len(), 5);
            assert!(plan.imbalance(&speeds).unwrap() < 0.1, "{}", algo.name());
        }
    }

    #[test]
    fn more_parts_than_rows_is_legal() {
        for algo in [
            &RecursiveBisection as &dyn ArrayDecomposer,
            &RecursiveBisection2,
            &RecursiveBisection3,
        ] {
            let plan = algo.decompose(1, 2, &[1.0; 5]).unwrap();
            assert_eq!(plan.areas().iter().sum::<usize>(), 2);
        }
    }

    #[test]
    fn split_rules() {
        // Ties between 0.2 and 0.3 around 0.25 go to the heavier prefix.
        assert_eq!(near_half(&[0.1, 0.1, 0.1, 0.1, 0.05, 0.05]), 3);
        assert_eq!(near_half(&[0.4, 0.4, 0.1, 0.1]), 1);
        // [KRW96]'s example for RB3: 0.4, 0.4, 0.1, 0.1 -> two halves of 0.5.
        let w = [0.4, 0.4, 0.1, 0.1];
        let (a, b) = binpack(&[0, 1, 2, 3], &w);
        assert_eq!((a, b), (vec![0, 2], vec![1, 3]));
    }

    #[test]
    fn rb_alternates_and_rb2_follows_longer_side() {
        // 4 equal parts on a 10x100 strip: RB cuts columns then rows (a 2x2
        // grid, Acost 10 + 100), RB2 always cuts the longer side (4 slabs).
        let rb = RecursiveBisection.decompose(10, 100, &[1.0; 4]).unwrap();
        let rb2 = RecursiveBisection2.decompose(10, 100, &[1.0; 4]).unwrap();
        assert_eq!(acost(&rb), 110);
        assert_eq!(acost(&rb2), 30);
    }
}
