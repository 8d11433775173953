//! Integer realisation of *column-based* decompositions (the XY class of
//! \[KRW96\] §4, the column-based class of
//! \[BBLRR01\] §3.2): the array is cut into vertical slabs
//! (columns), and each slab into rectangles stacked top to bottom.
//!
//! Given the continuous structure (which parts go in which column, in which
//! order), [`ColumnLayout::realize`] rounds it to whole cells: slab widths are
//! apportioned by largest remainder from the slabs' total weights, then each
//! slab's rows are apportioned among its parts. Totals are preserved exactly,
//! every part stays a rectangle, and each extent differs from its real value
//! by less than one cell. O(p log p).

use super::{apportion, ArrayPlan, Rect};
use crate::error::{Error, Result};

/// A column-based layout: `columns[k]` lists the parts of slab `k`, top to
/// bottom. With `transposed`, slabs are horizontal bands (rows) instead.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ColumnLayout {
    /// Part indices of each slab, in placement order.
    pub columns: Vec<Vec<usize>>,
    /// Slabs are horizontal bands when true.
    pub transposed: bool,
}

impl ColumnLayout {
    /// Rounds the layout to an integer plan of `rows × cols` cells for `weights`
    /// (one per part, indexed by part). Every part must appear exactly once.
    pub fn realize(
        &self,
        name: &str,
        rows: usize,
        cols: usize,
        weights: &[f64],
    ) -> Result<ArrayPlan> {
        let mut seen = vec![false; weights.len()];
        for &i in self.columns.iter().flatten() {
            if i >= weights.len() || std::mem::replace(&mut seen[i], true) {
                return Err(Error::InvalidPlan(format!(
                    "part {i} missing from or repeated in the layout"
                )));
            }
        }
        if seen.iter().any(|s| !s) {
            return Err(Error::InvalidPlan(
                "a part is missing from the layout".into(),
            ));
        }
        let (along, across) = if self.transposed {
            (rows, cols)
        } else {
            (cols, rows)
        };
        let slab_w: Vec<f64> = self
            .columns
            .iter()
            .map(|c| c.iter().map(|&i| weights[i]).sum())
            .collect();
        let widths = apportion(along, &slab_w);
        let mut parts = vec![Rect::default(); weights.len()];
        let mut offset = 0;
        for (slab, &width) in self.columns.iter().zip(&widths) {
            let w: Vec<f64> = slab.iter().map(|&i| weights[i]).collect();
            let heights = apportion(across, &w);
            let mut pos = 0;
            for (&i, &h) in slab.iter().zip(&heights) {
                let r = if self.transposed {
                    Rect::new(offset, pos, width, h)
                } else {
                    Rect::new(pos, offset, h, width)
                };
                parts[i] = if r.is_empty() { Rect::default() } else { r };
                pos += h;
            }
            offset += width;
        }
        ArrayPlan::new(name, rows, cols, parts)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn realizes_exact_tiling() {
        let w = [3.0, 1.0, 1.0, 2.0, 2.0];
        let l = ColumnLayout {
            columns: vec![vec![0], vec![1, 2], vec![3, 4]],
            transposed: false,
        };
        let p = l.realize("t", 10, 9, &w).unwrap();
        assert_eq!(p.areas().iter().sum::<usize>(), 90);
        assert_eq!(p.parts[0], Rect::new(0, 0, 10, 3));
        let t = ColumnLayout {
            transposed: true,
            ..l
        };
        assert!(t.realize("t", 10, 9, &w).is_ok());
        let bad = ColumnLayout {
            columns: vec![vec![0, 0]],
            transposed: false,
        };
        assert!(bad.realize("t", 2, 2, &[1.0, 1.0]).is_err());
    }
}
