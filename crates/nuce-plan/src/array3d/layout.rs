//! Integer realisation of nested (column-class) 3D layouts: slabs along one
//! axis, columns inside each slab along a second, blocks inside each column
//! along the third — the 3D form of [`crate::array2d::ColumnLayout`]. Every
//! extent is apportioned by largest remainder
//! ([`crate::array2d::apportion`]), so totals are exact and each part's
//! extents differ from their real values by less than one cell: its volume
//! differs from its share by less than one layer of cells around its box.

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
        for (slab, ta) in self.slabs.iter().zip(apportion(ext[a], &slab_w)) {
            let col_w: Vec<f64> = slab.iter().map(|col| sum(col)).collect();
            let mut pb = 0;
            for (col, tb) in slab.iter().zip(apportion(ext[b], &col_w)) {
                let w: Vec<f64> = col.iter().map(|&i| weights[i]).collect();
                let mut pc = 0;
                for (&i, tc) in col.iter().zip(apportion(ext[c], &w)) {
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

#[cfg(test)]
mod tests {
    use super::*;

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
