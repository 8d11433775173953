//! Recursive bisection in 3D: \[KRW96\] §6.3's RecursiveBisection2 (cut
//! across the longer side, split the sorted list at the prefix nearest
//! half) with three axes.

use super::{checked_speeds3, extents, Box3, GridDecomposer3, GridPlan3, Shape3};
use crate::array2d::guillotine::{cut_at, sorted_desc};
use crate::array2d::rb::near_half;
use crate::error::Result;

/// Recursive bisection (\[KRW96\] §6.3, variation 1, in 3D): the parts are
/// sorted by nonincreasing speed; the current box is cut across its longest
/// axis (the lowest axis on ties) and the sorted group split at the prefix
/// whose weight is nearest half of the group's (the best balanced split
/// into a prefix and a suffix, as in the 2D `rb2`); the cut lies at the nearest
/// plane to the prefix's share of the extent, and both sides recurse until
/// a group holds one part. Each cut is within half a plane of its real
/// position, so volumes drift from their shares by the rounding of up to
/// `⌈log₂ p⌉` cuts (reported by [`GridPlan3::imbalance`]).
/// `O(p log p)` when splits are balanced, `O(p²)` worst case.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RecursiveBisection3d;

impl GridDecomposer3 for RecursiveBisection3d {
    fn name(&self) -> &str {
        "rb"
    }

    fn decompose(&self, shape: Shape3, speeds: &[f64]) -> Result<GridPlan3> {
        let speeds = &checked_speeds3(shape, speeds)?;
        let mut boxes = vec![Box3::default(); speeds.len()];
        let whole = Box3::from_axes([0; 3], extents(shape));
        bisect(whole, &sorted_desc(speeds), speeds, &mut boxes);
        let plan = GridPlan3::new(self.name(), shape, boxes)?;
        Ok(super::planes::balance_small_or_large(plan, speeds))
    }
}

/// The box's longest axis, the lowest on ties.
pub(crate) fn longest(b: &Box3) -> usize {
    (0..3).rev().max_by_key(|&a| b.len(a)).unwrap_or(0)
}

/// `b` cut across `axis` at offset `at`: the two sides (either may be empty).
pub(crate) fn split(b: &Box3, axis: usize, at: usize) -> (Box3, Box3) {
    let mut lo = [b.x, b.y, b.z];
    let mut len = [b.nx, b.ny, b.nz];
    len[axis] = at;
    let left = Box3::from_axes(lo, len);
    lo[axis] += at;
    len[axis] = b.len(axis) - at;
    (left, Box3::from_axes(lo, len))
}

fn bisect(b: Box3, group: &[usize], w: &[f64], out: &mut [Box3]) {
    if let [only] = group {
        out[*only] = b;
        return;
    }
    if b.is_empty() {
        group.iter().for_each(|&i| out[i] = Box3::default());
        return;
    }
    let weights: Vec<f64> = group.iter().map(|&i| w[i]).collect();
    let k = near_half(&weights);
    let axis = longest(&b);
    let total: f64 = weights.iter().sum();
    let first: f64 = weights[..k].iter().sum();
    let at = cut_at(b.len(axis), first, total);
    let (left, right) = split(&b, axis, at);
    bisect(left, &group[..k], w, out);
    bisect(right, &group[k..], w, out);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn eight_equal_parts_make_octants() {
        let plan = RecursiveBisection3d
            .decompose((8, 8, 8), &[1.0; 8])
            .unwrap();
        assert!(plan.boxes.iter().all(|b| (b.nx, b.ny, b.nz) == (4, 4, 4)));
        assert_eq!(plan.internal_surface(), 3 * 64);
        // More parts than cells: some are empty, the grid is still tiled.
        let tiny = RecursiveBisection3d
            .decompose((1, 2, 1), &[1.0; 5])
            .unwrap();
        assert_eq!(tiny.volumes().iter().sum::<usize>(), 2);
    }
}
