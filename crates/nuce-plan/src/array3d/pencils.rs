//! Pencils: the optimal 2D column-based decomposition of the largest face
//! (\[BBLRR01\] §3.2.4 through [`ColumnDp`]), extruded along the shortest
//! axis — every part spans the whole grid along that axis.

use super::{checked_speeds3, extents, Box3, GridDecomposer3, GridPlan3, Shape3};
use crate::array2d::{ArrayDecomposer, ColumnDp};
use crate::error::Result;

/// The 2D [`ColumnDp`] (\[BBLRR01\] §3.2.4, Algorithms 3–4, generalised as
/// in [`crate::array2d::column`]) on the face spanned by the two longest
/// axes, each rectangle extruded along the shortest axis (z on ties, then
/// y). Its internal surface is the 2D Acost times the shortest extent; the
/// rectangles' extents are within one cell of their real values, so each
/// volume is within one layer of cells of its share. Complexity: that of
/// [`ColumnDp::decompose`] plus `O(p)`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Pencils3;

impl GridDecomposer3 for Pencils3 {
    fn name(&self) -> &str {
        "pencils"
    }

    fn decompose(&self, shape: Shape3, speeds: &[f64]) -> Result<GridPlan3> {
        let speeds = &checked_speeds3(shape, speeds)?;
        let e = extents(shape);
        let short = (0..3)
            .min_by_key(|&a| (e[a], std::cmp::Reverse(a)))
            .unwrap_or(2);
        let (r, c) = ((short + 1) % 3, (short + 2) % 3);
        let face = ColumnDp::default().decompose(e[r], e[c], speeds)?;
        let boxes = face
            .parts
            .iter()
            .map(|rect| {
                let mut lo = [0; 3];
                let mut len = [0; 3];
                (lo[r], len[r]) = (rect.row, rect.rows);
                (lo[c], len[c]) = (rect.col, rect.cols);
                len[short] = e[short];
                Box3::from_axes(lo, len)
            })
            .collect();
        let plan = GridPlan3::new(self.name(), shape, boxes)?;
        Ok(super::planes::balance_small_or_large(plan, speeds))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn four_equal_pencils_are_a_two_by_two_face() {
        let plan = Pencils3.decompose((8, 8, 3), &[1.0; 4]).unwrap();
        assert!(plan.boxes.iter().all(|b| (b.nx, b.ny, b.nz) == (4, 4, 3)));
        assert_eq!(plan.internal_surface(), 2 * 8 * 3);
    }
}
