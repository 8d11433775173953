//! Non-uniform cost per cell in 2D: a `rows × cols` array whose cells carry
//! a cost (a flat slice in C order, `r·cols + c`), decomposed so that every
//! part's `Σ cost / speed` is balanced. The array is planned as the 3D grid
//! `rows × cols × 1` by [`WeightedBisection3d`] (prefix sums, cuts chosen
//! on cost — see [`crate::array3d::weighted`] for the balance guarantee:
//! within half a row's or column's cost per cut) and the boxes are read
//! back as rectangles. Without a cost field, the uniform decomposers of
//! this module apply.
//!
//! ```
//! use nuce_plan::array2d::WeightedBisection2d;
//! // 4 x 8 cells; columns 0 and 1 cost 3 per cell, the rest 1: the part
//! // holding the heavy columns gets 2 columns, the other 6, equal costs.
//! let costs: Vec<f64> = (0..32).map(|i| if i % 8 < 2 { 3.0 } else { 1.0 }).collect();
//! let plan = WeightedBisection2d.decompose(4, 8, &costs, &[1.0, 1.0])?;
//! assert_eq!(plan.areas(), vec![8, 24]);
//! assert_eq!(WeightedBisection2d::part_costs(&plan, &costs)?, vec![24.0, 24.0]);
//! # Ok::<(), nuce_plan::Error>(())
//! ```

use super::{ArrayPlan, Rect};
use crate::array3d::{Box3, CellCosts, GridPlan3, WeightedBisection3d};
use crate::error::Result;

/// Weighted recursive bisection of an array ([`WeightedBisection3d`] on
/// `rows × cols × 1`): cuts across the longer side, at the row or column
/// whose prefix cost is nearest the first group's share. `O(cells)` for
/// the prefix sums, then `O(log n)` per cut.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct WeightedBisection2d;

impl WeightedBisection2d {
    /// Short name.
    pub const fn name(&self) -> &'static str {
        "rb-weighted"
    }

    /// The prefix sums of an array's cell `costs` (C order), checked as
    /// [`crate::array3d::check_cell_costs`] does.
    pub fn costs(rows: usize, cols: usize, costs: &[f64]) -> Result<CellCosts> {
        CellCosts::new((rows, cols, 1), costs)
    }

    /// Decomposes a `rows × cols` array with cell `costs` for `speeds`.
    pub fn decompose(
        &self,
        rows: usize,
        cols: usize,
        costs: &[f64],
        speeds: &[f64],
    ) -> Result<ArrayPlan> {
        super::checks::check_args(rows, cols, speeds)?;
        self.decompose_costs(&Self::costs(rows, cols, costs)?, speeds)
    }

    /// Decomposes the array of `costs` ([`WeightedBisection2d::costs`]) for
    /// `speeds`.
    pub fn decompose_costs(&self, costs: &CellCosts, speeds: &[f64]) -> Result<ArrayPlan> {
        let plan = WeightedBisection3d.decompose_costs(costs, speeds)?;
        let (rows, cols, _) = plan.shape;
        let parts = plan.boxes.iter().map(rect_of).collect();
        ArrayPlan::new(self.name(), rows, cols, parts)
    }

    /// Each part's `Σ cost` in `plan` for the cell `costs` (C order).
    /// `O(cells)`.
    pub fn part_costs(plan: &ArrayPlan, costs: &[f64]) -> Result<Vec<f64>> {
        Ok(rect_costs(
            &Self::costs(plan.rows, plan.cols, costs)?,
            &plan.parts,
        ))
    }
}

/// The `Σ cost` of each rectangle for the prefix sums of an array
/// ([`WeightedBisection2d::costs`]). `O(1)` each.
pub fn rect_costs(costs: &CellCosts, rects: &[Rect]) -> Vec<f64> {
    rects.iter().map(|r| costs.of_box(&box_of(r))).collect()
}

/// The box of a rectangle in the grid `rows × cols × 1`.
pub fn box_of(r: &Rect) -> Box3 {
    Box3::from_axes([r.row, r.col, 0], [r.rows, r.cols, 1])
}

/// The rectangle of a box of the grid `rows × cols × 1` (empty boxes give
/// the empty rectangle).
pub fn rect_of(b: &Box3) -> Rect {
    if b.is_empty() {
        Rect::default()
    } else {
        Rect::new(b.x, b.y, b.nx, b.ny)
    }
}

/// The plan of a [`GridPlan3`] of `rows × cols × 1` as an [`ArrayPlan`].
pub fn array_plan_of(plan: &GridPlan3) -> Result<ArrayPlan> {
    let (rows, cols, _) = plan.shape;
    ArrayPlan::new(
        plan.algorithm.clone(),
        rows,
        cols,
        plan.boxes.iter().map(rect_of).collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Brute-force cost of a rectangle.
    fn brute(costs: &[f64], cols: usize, r: &Rect) -> f64 {
        let mut s = 0.0;
        for i in r.row..r.row_end() {
            for j in r.col..r.col_end() {
                s += costs[i * cols + j];
            }
        }
        s
    }

    #[test]
    fn bad_costs_are_errors_and_name_the_cell() {
        for bad in [
            vec![1.0, f64::NAN, 1.0, 1.0],
            vec![1.0, 1.0, -2.0, 1.0],
            vec![f64::NEG_INFINITY, 1.0, 1.0, 1.0],
            vec![0.0; 4],
            vec![1.0; 3],
        ] {
            let e = WeightedBisection2d
                .decompose(2, 2, &bad, &[1.0, 1.0])
                .unwrap_err();
            assert!(!e.to_string().is_empty());
        }
        assert!(WeightedBisection2d
            .decompose(2, 2, &[1.0; 4], &[1.0, f64::NAN])
            .is_err());
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        #[test]
        fn plans_tile_and_balance_cost_within_a_row_per_cut(
            rows in 1usize..12, cols in 1usize..12, seed in any::<u64>(),
            speeds in prop::collection::vec(0.2f64..5.0, 1..7),
        ) {
            let costs: Vec<f64> = (0..(rows * cols) as u64)
                .map(|c| ((c.wrapping_mul(2654435761) ^ seed) % 9) as f64)
                .collect();
            prop_assume!(costs.iter().any(|&c| c > 0.0));
            let plan = WeightedBisection2d.decompose(rows, cols, &costs, &speeds).unwrap();
            // Cell by cell: every cell has one owner.
            let mut owner = vec![usize::MAX; rows * cols];
            for (p, r) in plan.parts.iter().enumerate() {
                for i in r.row..r.row_end() {
                    for j in r.col..r.col_end() {
                        prop_assert_eq!(owner[i * cols + j], usize::MAX);
                        owner[i * cols + j] = p;
                    }
                }
            }
            prop_assert!(owner.iter().all(|&o| o != usize::MAX));
            // Loads against brute force, and balanced within half the
            // heaviest row or column per cut (at most p − 1 cuts).
            let loads = WeightedBisection2d::part_costs(&plan, &costs).unwrap();
            let total: f64 = costs.iter().sum();
            let row_max = (0..rows).map(|i| brute(&costs, cols, &Rect::new(i, 0, 1, cols))).fold(0.0, f64::max);
            let col_max = (0..cols).map(|j| brute(&costs, cols, &Rect::new(0, j, rows, 1))).fold(0.0, f64::max);
            let tol = (speeds.len() - 1) as f64 * row_max.max(col_max) / 2.0 + 1e-9 * total;
            let sum: f64 = speeds.iter().sum();
            for ((r, load), s) in plan.parts.iter().zip(&loads).zip(&speeds) {
                prop_assert!((load - brute(&costs, cols, r)).abs() <= 1e-9 * (1.0 + total));
                prop_assert!((load - total * s / sum).abs() <= tol, "{r:?}: {load} vs {}", total * s / sum);
            }
        }
    }
}
