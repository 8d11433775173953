//! Horizontal slices: the HPF `BLOCK` distribution of the first dimension
//! with block sizes proportional to speed — the baseline of
//! \[BBLRR01\] §3.2.1 ("tile the unit square into p
//! horizontal slices of height s_i") and §3.2.6 (Figure 17's comparison).
//! Part `i` gets full-width rows, in input order, top to bottom. `O(p log p)`.

use super::checks::checked_speeds;
use super::{ArrayDecomposer, ArrayPlan, ColumnLayout};
use crate::error::Result;

/// Horizontal slices in input order, heights proportional to speeds (\[BBLRR01\] §3.2.1).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Slices;

impl ArrayDecomposer for Slices {
    fn name(&self) -> &'static str {
        "slices"
    }

    fn decompose(&self, rows: usize, cols: usize, speeds: &[f64]) -> Result<ArrayPlan> {
        let speeds = &checked_speeds(rows, cols, speeds)?;
        // One vertical slab spanning all columns, parts stacked top to bottom.
        ColumnLayout {
            columns: vec![(0..speeds.len()).collect()],
            transposed: false,
        }
        .realize(self.name(), rows, cols, speeds)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slices_are_full_width_in_order() {
        let plan = Slices.decompose(10, 3, &[1.0, 4.0]).unwrap();
        assert_eq!(plan.parts[0], crate::array2d::Rect::new(0, 0, 2, 3));
        assert_eq!(plan.parts[1], crate::array2d::Rect::new(2, 0, 8, 3));
    }
}
