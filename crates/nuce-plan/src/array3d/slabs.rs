//! 1D slabs along the longest axis: the 3D form of the horizontal slices
//! of \[BBLRR01\] §3.2.1 (HPF `BLOCK` of one dimension, block sizes
//! proportional to speed).

use super::{checked_speeds3, extents, GridDecomposer3, GridPlan3, Layout3, Shape3};
use crate::error::Result;

/// Slabs along the longest axis (x on ties, then y), in input order,
/// thicknesses split so that the largest `thickness / speed` is least
/// (\[BBLRR01\] §3.2.1 with §2.2's DISTRIBUTE): whole planes, the slowest
/// slab as fast as they allow.
/// `O(p log p)`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Slabs3;

/// The longest axis of `shape` (the lowest index on ties).
pub(crate) fn longest_axis(shape: Shape3) -> usize {
    let e = extents(shape);
    (0..3).rev().max_by_key(|&a| e[a]).unwrap_or(0)
}

impl GridDecomposer3 for Slabs3 {
    fn name(&self) -> &str {
        "slabs"
    }

    fn decompose(&self, shape: Shape3, speeds: &[f64]) -> Result<GridPlan3> {
        let speeds = &checked_speeds3(shape, speeds)?;
        let a = longest_axis(shape);
        Layout3 {
            axes: [a, (a + 1) % 3, (a + 2) % 3],
            slabs: (0..speeds.len()).map(|i| vec![vec![i]]).collect(),
        }
        .realize(self.name(), shape, speeds)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::array3d::Box3;

    #[test]
    fn slabs_follow_the_longest_axis_in_order() {
        let plan = Slabs3.decompose((4, 10, 3), &[1.0, 4.0]).unwrap();
        assert_eq!(plan.boxes[0], Box3::new(0, 0, 0, 4, 2, 3));
        assert_eq!(plan.boxes[1], Box3::new(0, 2, 0, 4, 8, 3));
        assert_eq!(longest_axis((5, 5, 5)), 0);
        assert_eq!(longest_axis((1, 5, 5)), 1);
    }
}
