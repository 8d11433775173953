//! Integer realisation of nested (column-class) 3D layouts: slabs along one
//! axis, columns inside each slab along a second, blocks inside each column
//! along the third — the 3D form of [`crate::array2d::ColumnLayout`]. Every
//! extent is split so that the largest `layers / weight` is least
//! (\[BBLRR01\] §2.2's DISTRIBUTE: the pieces at one level share their other
//! extents), so totals are exact and the slowest piece is as fast as whole
//! layers allow; an extent then lies within about a layer of its share.

use super::{Box3, GridPlan3, Shape3};
use crate::array2d::apportion;
use crate::error::{Error, Result};

/// A nested layout: `slabs[s][c]` lists the parts of column `c` of slab
/// `s`, in placement order along `axes[2]`; slabs follow each other along
/// `axes[0]`, the columns of a slab along `axes[1]`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Layout3 {
    /// Slab axis, column axis, block axis (a permutation of 0, 1, 2).
    pub axes: [usize; 3],
    /// Part indices per slab, per column.
    pub slabs: Vec<Vec<Vec<usize>>>,
}

impl Layout3 {
    /// Rounds the layout to an integer plan of `shape` for `weights` (one
    /// per part, indexed by part; every part must appear exactly once).
    /// `O(p log p)`.
    pub fn realize(&self, name: &str, shape: Shape3, weights: &[f64]) -> Result<GridPlan3> {
        let mut seen = vec![false; weights.len()];
        for &i in self.slabs.iter().flatten().flatten() {
            if i >= weights.len() || std::mem::replace(&mut seen[i], true) {
                return Err(Error::InvalidPlan(format!(
                    "part {i} missing from or repeated in the layout"
                )));
            }
        }
        let mut axes = self.axes;
        axes.sort_unstable();
        if seen.iter().any(|s| !s) || axes != [0, 1, 2] {
            return Err(Error::InvalidPlan(
                "a part is missing from the layout, or its axes are no permutation".into(),
            ));
        }
        let ext = [shape.0, shape.1, shape.2];
        let [a, b, c] = self.axes;
        let sum = |ids: &[usize]| ids.iter().map(|&i| weights[i]).sum::<f64>();
        let slab_w: Vec<f64> = self
            .slabs
            .iter()
            .map(|s| s.iter().map(|col| sum(col)).sum())
            .collect();
        let mut boxes = vec![Box3::default(); weights.len()];
        let mut pa = 0;
        for (slab, ta) in self.slabs.iter().zip(minimax(ext[a], &slab_w)) {
            let col_w: Vec<f64> = slab.iter().map(|col| sum(col)).collect();
            let mut pb = 0;
            for (col, tb) in slab.iter().zip(minimax(ext[b], &col_w)) {
                let w: Vec<f64> = col.iter().map(|&i| weights[i]).collect();
                let mut pc = 0;
                for (&i, tc) in col.iter().zip(minimax(ext[c], &w)) {
                    let mut lo = [0; 3];
                    let mut len = [0; 3];
                    (lo[a], lo[b], lo[c]) = (pa, pb, pc);
                    (len[a], len[b], len[c]) = (ta, tb, tc);
                    boxes[i] = Box3::from_axes(lo, len);
                    pc += tc;
                }
                pb += tb;
            }
            pa += ta;
        }
        GridPlan3::new(name, shape, boxes)
    }
}

/// `total` layers split among pieces of `weights` (speeds) so that the
/// largest `layers / weight` is least (\[BBLRR01\] §2.2's DISTRIBUTE,
/// [`crate::dist1d::optimal_counts`]): the pieces share their other
/// extents, so this is the least time of the slowest. Nearest-share
/// rounding can miss it by a layer, and a decomposer comparing candidates
/// then prefers a worse cut. Non-positive weights: [`apportion`].
fn minimax(total: usize, weights: &[f64]) -> Vec<usize> {
    if weights.iter().all(|w| w.is_finite() && *w > 0.0) {
        let cycles: Vec<f64> = weights.iter().map(|w| 1.0 / w).collect();
        if let Ok(c) = crate::dist1d::optimal_counts(total, &cycles) {
            return c;
        }
    }
    apportion(total, weights)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layers_are_split_minimax_not_to_the_nearest_share() {
        // 128 planes for speeds 1 : 0.17: the nearest share gives the slow
        // piece 19 planes (19 / 0.17 = 111.8 > 109 / 1), the minimax 18
        // (18 / 0.17 = 105.9 < 110 / 1).
        assert_eq!(apportion(128, &[1.0, 0.17]), vec![109, 19]);
        assert_eq!(minimax(128, &[1.0, 0.17]), vec![110, 18]);
        // Brute force on small cases: no split of `total` has a smaller
        // largest layers / weight; every split sums to `total`.
        let worst = |c: &[usize], w: &[f64]| {
            c.iter()
                .zip(w)
                .map(|(&x, &w)| x as f64 / w)
                .fold(0.0, f64::max)
        };
        let weights = [[1.0, 0.17, 0.5], [3.0, 1.0, 1.0], [0.2, 0.9, 2.5]];
        for w in weights {
            for total in 0..=14usize {
                let c = minimax(total, &w);
                assert_eq!(c.iter().sum::<usize>(), total);
                let mut best = f64::INFINITY;
                for a in 0..=total {
                    for b in 0..=total - a {
                        best = best.min(worst(&[a, b, total - a - b], &w));
                    }
                }
                assert!(worst(&c, &w) <= best + 1e-12, "{total} {w:?}: {c:?}");
            }
        }
    }

    #[test]
    fn realizes_exact_tilings_and_rejects_bad_layouts() {
        let w = [3.0, 1.0, 1.0, 2.0, 2.0];
        let l = Layout3 {
            axes: [2, 0, 1],
            slabs: vec![vec![vec![0]], vec![vec![1, 2], vec![3, 4]]],
        };
        let p = l.realize("t", (6, 5, 9), &w).unwrap();
        assert_eq!(p.volumes().iter().sum::<usize>(), 270);
        // Slab 0 is 3/9 of z, whole in x and y.
        assert_eq!(p.boxes[0], Box3::new(0, 0, 0, 6, 5, 3));
        let bad = Layout3 {
            axes: [0, 0, 1],
            slabs: vec![vec![vec![0, 1]]],
        };
        assert!(bad.realize("t", (2, 2, 2), &[1.0, 1.0]).is_err());
        let twice = Layout3 {
            axes: [0, 1, 2],
            slabs: vec![vec![vec![0, 0]]],
        };
        assert!(twice.realize("t", (2, 2, 2), &[1.0, 1.0]).is_err());
    }
}
