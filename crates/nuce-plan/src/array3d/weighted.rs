//! Non-uniform cost per cell: the grid carries a cost per cell (a flat
//! slice in C order, `(i·ny + j)·nz + k`), and a part's load is the sum of
//! its cells' costs. [`CellCosts`] holds the inclusive prefix sums of the
//! costs, so the cost of any box is `O(1)` (eight terms of
//! inclusion–exclusion) and the plane nearest a target cost along an axis
//! of a box is a binary search. [`WeightedSlabs3`] and
//! [`WeightedBisection3d`] balance `Σ cost / speed` with it; the 2D
//! counterpart ([`crate::array2d::WeightedBisection2d`]) plans an
//! `rows × cols` array as the grid `rows × cols × 1`.
//!
//! An `ndarray::Array3<f64>` of shape `(nx, ny, nz)` passes as the slice
//! `a.as_slice()` returns (`Some` in standard layout, ndarray's default C
//! order).
//!
//! **Balance.** Each cut lies at the plane whose prefix cost is nearest the
//! target, so the cost on either side is within half a plane's cost of its
//! target; an error of the box being cut carries over to its sides scaled
//! by their share (≤ 1). A part reached through `d` cuts therefore holds
//! its share of `Σ cost` (in proportion to its speed) to within
//! `d · c_plane / 2`, `c_plane` the largest cost of one plane of a cut box
//! (`d = 1` for each slab's two cuts, `d ≤ ⌈log₂ p⌉` for balanced
//! bisections, `p − 1` at worst).

use super::rb::{longest, split};
use super::slabs::longest_axis;
use super::{checked_speeds3, extents, Box3, GridPlan3, Shape3};
use crate::array2d::guillotine::{cut_at, sorted_desc};
use crate::array2d::rb::near_half;
use crate::error::{Error, Result};

/// Checks a cost array for `shape`: one value per cell, each finite and
/// `≥ 0`, not all 0; NaN, negative or infinite costs, a wrong length and an
/// all-zero field are an [`Error`]. `O(cells)`.
pub fn check_cell_costs(shape: Shape3, costs: &[f64]) -> Result<()> {
    let cells = shape.0 as u128 * shape.1 as u128 * shape.2 as u128;
    if costs.len() as u128 != cells {
        return Err(Error::ShapeMismatch(format!(
            "{} cell costs for a {}x{}x{} grid",
            costs.len(),
            shape.0,
            shape.1,
            shape.2
        )));
    }
    check_cost_values(costs, 0)?;
    if costs.iter().all(|&c| c == 0.0) {
        return Err(Error::InvalidInput(
            "every cell costs 0: a cost field needs some work".into(),
        ));
    }
    Ok(())
}

/// Checks that every cost is finite and `≥ 0`; the error names the first
/// bad one by its index plus `first` (a block's offset, for messages).
/// `O(len)`.
pub fn check_cost_values(costs: &[f64], first: usize) -> Result<()> {
    if let Some((i, c)) = costs
        .iter()
        .enumerate()
        .find(|(_, c)| !(c.is_finite() && **c >= 0.0))
    {
        return Err(Error::InvalidInput(format!(
            "cost {c} of cell {}: costs must be finite and >= 0",
            first + i
        )));
    }
    Ok(())
}

/// The cell costs of a grid as inclusive prefix sums: `O(cells)` to build
/// (checked by [`check_cell_costs`]), then the cost of any box in `O(1)`.
#[derive(Debug, Clone, PartialEq)]
pub struct CellCosts {
    shape: Shape3,
    /// `(nx+1)·(ny+1)·(nz+1)` sums: entry `(i, j, k)` holds the cost of the
    /// box `[0, i) × [0, j) × [0, k)`.
    prefix: Vec<f64>,
}

impl CellCosts {
    /// Prefix sums of `costs` (C order) for a grid of `shape`.
    pub fn new(shape: Shape3, costs: &[f64]) -> Result<Self> {
        check_cell_costs(shape, costs)?;
        let (nx, ny, nz) = shape;
        let (sy, sz) = (ny + 1, nz + 1);
        let at = |i: usize, j: usize, k: usize| (i * sy + j) * sz + k;
        let mut prefix = vec![0.0; (nx + 1) * sy * sz];
        for i in 0..nx {
            for j in 0..ny {
                let mut row = 0.0;
                for k in 0..nz {
                    row += costs[(i * ny + j) * nz + k];
                    // Sum of the row, plus the two planes below, minus their overlap.
                    prefix[at(i + 1, j + 1, k + 1)] =
                        row + prefix[at(i, j + 1, k + 1)] + prefix[at(i + 1, j, k + 1)]
                            - prefix[at(i, j, k + 1)];
                }
            }
        }
        Ok(CellCosts { shape, prefix })
    }

    /// The grid's shape.
    pub const fn shape(&self) -> Shape3 {
        self.shape
    }

    /// `Σ cost` of the whole grid.
    pub fn total(&self) -> f64 {
        *self.prefix.last().unwrap_or(&0.0)
    }

    fn sum_to(&self, i: usize, j: usize, k: usize) -> f64 {
        self.prefix[(i * (self.shape.1 + 1) + j) * (self.shape.2 + 1) + k]
    }

    /// `Σ cost` of the cells of `b` (0 for an empty box; clamped at 0
    /// against rounding). `O(1)`.
    pub fn of_box(&self, b: &Box3) -> f64 {
        if b.is_empty() {
            return 0.0;
        }
        let (x0, y0, z0) = (b.x, b.y, b.z);
        let (x1, y1, z1) = (b.x + b.nx, b.y + b.ny, b.z + b.nz);
        let s = self.sum_to(x1, y1, z1)
            - self.sum_to(x0, y1, z1)
            - self.sum_to(x1, y0, z1)
            - self.sum_to(x1, y1, z0)
            + self.sum_to(x0, y0, z1)
            + self.sum_to(x0, y1, z0)
            + self.sum_to(x1, y0, z0)
            - self.sum_to(x0, y0, z0);
        s.max(0.0)
    }

    /// Each part's `Σ cost` in `plan` (a plan of this grid). `O(p)`.
    pub fn part_costs(&self, plan: &GridPlan3) -> Result<Vec<f64>> {
        if plan.shape != self.shape {
            return Err(Error::ShapeMismatch(format!(
                "a plan of {:?} for costs of {:?}",
                plan.shape, self.shape
            )));
        }
        Ok(plan.boxes.iter().map(|b| self.of_box(b)).collect())
    }

    /// The offset in `0..=b.len(axis)` at which cutting `b` across `axis`
    /// leaves a first side whose cost is nearest `fraction` of the box's
    /// (the earlier offset on ties; the volume share when the box costs
    /// nothing). `O(log len)`.
    pub fn nearest_cut(&self, b: &Box3, axis: usize, fraction: f64) -> usize {
        let len = b.len(axis);
        let whole = self.of_box(b);
        if whole <= 0.0 {
            return cut_at(len, fraction, 1.0);
        }
        let target = whole * fraction;
        let first = |t: usize| self.of_box(&split(b, axis, t).0);
        // The first offset whose side reaches the target (monotone in t).
        let (mut lo, mut hi) = (0, len);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if first(mid) >= target {
                hi = mid;
            } else {
                lo = mid + 1;
            }
        }
        if lo > 0 && target - first(lo - 1) <= first(lo) - target {
            lo - 1
        } else {
            lo
        }
    }
}

/// Slabs along the longest axis in input order (as [`super::Slabs3`]),
/// each cut at the plane whose prefix cost is nearest the parts' share of
/// the total cost: every part's cost is within one plane's cost of its
/// share of `Σ cost`, at each of its two cuts. `O(cells)` for the prefix
/// sums, then `O(p log n)`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct WeightedSlabs3;

impl WeightedSlabs3 {
    /// Short name.
    pub const fn name(&self) -> &'static str {
        "slabs-weighted"
    }

    /// Decomposes `shape` with cell `costs` (C order) for `speeds`.
    pub fn decompose(&self, shape: Shape3, costs: &[f64], speeds: &[f64]) -> Result<GridPlan3> {
        checked_speeds3(shape, speeds)?;
        self.decompose_costs(&CellCosts::new(shape, costs)?, speeds)
    }

    /// Decomposes the grid of `costs` for `speeds` (prefix sums built once).
    pub fn decompose_costs(&self, costs: &CellCosts, speeds: &[f64]) -> Result<GridPlan3> {
        let shape = costs.shape();
        let speeds = &checked_speeds3(shape, speeds)?;
        let a = longest_axis(shape);
        let whole = Box3::from_axes([0; 3], extents(shape));
        let total: f64 = speeds.iter().sum();
        let (mut acc, mut from) = (0.0, 0);
        let mut boxes = Vec::with_capacity(speeds.len());
        for (i, s) in speeds.iter().enumerate() {
            acc += s;
            let to = if i + 1 == speeds.len() {
                whole.len(a)
            } else {
                costs.nearest_cut(&whole, a, acc / total).max(from)
            };
            let (_, rest) = split(&whole, a, from);
            let (part, _) = split(&rest, a, to - from);
            boxes.push(part);
            from = to;
        }
        GridPlan3::new(self.name(), shape, boxes)
    }
}

/// Recursive bisection of the longest axis (as
/// [`super::RecursiveBisection3d`]: speed-sorted parts, the prefix of
/// nearest half weight) with the cut at the plane whose prefix cost within
/// the box is nearest the first group's share of the box's cost — cuts
/// chosen on cost, not on cell counts. `O(cells)` for the prefix sums, then
/// `O(log n)` per cut: `O(p log p + p log n)` for balanced splits.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct WeightedBisection3d;

impl WeightedBisection3d {
    /// Short name.
    pub const fn name(&self) -> &'static str {
        "rb-weighted"
    }

    /// Decomposes `shape` with cell `costs` (C order) for `speeds`.
    pub fn decompose(&self, shape: Shape3, costs: &[f64], speeds: &[f64]) -> Result<GridPlan3> {
        checked_speeds3(shape, speeds)?;
        self.decompose_costs(&CellCosts::new(shape, costs)?, speeds)
    }

    /// Decomposes the grid of `costs` for `speeds` (prefix sums built once).
    pub fn decompose_costs(&self, costs: &CellCosts, speeds: &[f64]) -> Result<GridPlan3> {
        let shape = costs.shape();
        let speeds = &checked_speeds3(shape, speeds)?;
        let mut boxes = vec![Box3::default(); speeds.len()];
        let whole = Box3::from_axes([0; 3], extents(shape));
        let mut stack = vec![(whole, sorted_desc(speeds))];
        while let Some((b, group)) = stack.pop() {
            if let [only] = group[..] {
                boxes[only] = b;
                continue;
            }
            if b.is_empty() {
                continue;
            }
            let w: Vec<f64> = group.iter().map(|&i| speeds[i]).collect();
            let k = near_half(&w);
            let fraction = w[..k].iter().sum::<f64>() / w.iter().sum::<f64>();
            let axis = longest(&b);
            let at = costs.nearest_cut(&b, axis, fraction);
            let (left, right) = split(&b, axis, at);
            stack.push((right, group[k..].to_vec()));
            stack.push((left, group[..k].to_vec()));
        }
        GridPlan3::new(self.name(), shape, boxes)
    }
}

/// Each part's total cell cost in `plan`. `O(cells)`.
pub fn part_costs(plan: &GridPlan3, costs: &[f64]) -> Result<Vec<f64>> {
    CellCosts::new(plan.shape, costs)?.part_costs(plan)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn heavy_half_gets_fewer_planes() {
        // 8x2x2 grid, the first 4 x-planes cost 3 per cell (12 a plane),
        // the rest 1 (4 a plane): total 64, the cut nearest 32 is after
        // plane 3 (36), not plane 2 (24).
        let shape = (8, 2, 2);
        let costs: Vec<f64> = (0..32).map(|c| if c / 4 < 4 { 3.0 } else { 1.0 }).collect();
        for plan in [
            WeightedSlabs3
                .decompose(shape, &costs, &[1.0, 1.0])
                .unwrap(),
            WeightedBisection3d
                .decompose(shape, &costs, &[1.0, 1.0])
                .unwrap(),
        ] {
            let loads = part_costs(&plan, &costs).unwrap();
            assert_eq!(loads[0] + loads[1], 64.0);
            assert_eq!(loads[0], 36.0, "{plan:?}");
        }
    }

    #[test]
    fn bad_costs_are_errors() {
        let shape = (2, 1, 1);
        for bad in [
            vec![1.0, f64::NAN],
            vec![1.0, -1.0],
            vec![1.0, f64::INFINITY],
            vec![1.0],
            vec![0.0, 0.0],
        ] {
            assert!(WeightedSlabs3.decompose(shape, &bad, &[1.0]).is_err());
            assert!(WeightedBisection3d.decompose(shape, &bad, &[1.0]).is_err());
        }
        let e = CellCosts::new(shape, &[1.0, f64::NAN]).unwrap_err();
        assert!(e.to_string().contains("cost NaN of cell 1"), "{e}");
        // Zero-cost boxes are cut by volume.
        let plan = WeightedBisection3d
            .decompose((4, 1, 1), &[0.0, 0.0, 0.0, 1.0], &[1.0, 1.0, 1.0])
            .unwrap();
        assert_eq!(plan.volumes().iter().sum::<usize>(), 4);
    }

    /// Costs with a few zeros and a heavy band, from a seed.
    fn field(cells: usize, seed: u64) -> Vec<f64> {
        (0..cells as u64)
            .map(|c| ((c.wrapping_mul(2654435761) ^ seed) % 7) as f64)
            .collect()
    }

    /// The largest cost of one plane of the grid across any axis: a bound
    /// on a plane of any box.
    fn max_plane(shape: Shape3, costs: &CellCosts) -> f64 {
        let whole = Box3::from_axes([0; 3], extents(shape));
        (0..3)
            .flat_map(|a| {
                (0..whole.len(a)).map(move |t| {
                    let (_, rest) = split(&whole, a, t);
                    split(&rest, a, 1).0
                })
            })
            .map(|b| costs.of_box(&b))
            .fold(0.0, f64::max)
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        #[test]
        fn box_costs_are_the_brute_force_sums(
            nx in 1usize..7, ny in 1usize..7, nz in 1usize..7, seed in any::<u64>(),
            lo in prop::array::uniform3(0usize..7), len in prop::array::uniform3(0usize..7),
        ) {
            let shape = (nx, ny, nz);
            let raw = field(nx * ny * nz, seed);
            prop_assume!(raw.iter().any(|&c| c > 0.0));
            let costs = CellCosts::new(shape, &raw).unwrap();
            let ext = extents(shape);
            let lo: Vec<usize> = (0..3).map(|a| lo[a] % ext[a]).collect();
            let len: Vec<usize> = (0..3).map(|a| len[a].min(ext[a] - lo[a])).collect();
            let b = Box3::from_axes([lo[0], lo[1], lo[2]], [len[0], len[1], len[2]]);
            let mut brute = 0.0;
            for i in b.x..b.x + b.nx {
                for j in b.y..b.y + b.ny {
                    for k in b.z..b.z + b.nz {
                        brute += raw[(i * ny + j) * nz + k];
                    }
                }
            }
            prop_assert!((costs.of_box(&b) - brute).abs() <= 1e-9 * (1.0 + brute));
        }

        #[test]
        fn cuts_are_the_brute_force_nearest(
            nx in 1usize..9, ny in 1usize..9, nz in 1usize..9, seed in any::<u64>(),
            fraction in 0.0f64..1.0, axis in 0usize..3,
        ) {
            let shape = (nx, ny, nz);
            let raw = field(nx * ny * nz, seed);
            prop_assume!(raw.iter().any(|&c| c > 0.0));
            let costs = CellCosts::new(shape, &raw).unwrap();
            let whole = Box3::from_axes([0; 3], extents(shape));
            let target = costs.total() * fraction;
            let at = costs.nearest_cut(&whole, axis, fraction);
            let err = |t: usize| (costs.of_box(&split(&whole, axis, t).0) - target).abs();
            let best = (0..=whole.len(axis)).map(err).fold(f64::INFINITY, f64::min);
            prop_assert!(err(at) <= best + 1e-9, "cut {at}: {} vs best {best}", err(at));
        }

        #[test]
        fn parts_hold_their_cost_share_within_a_plane_per_cut(
            nx in 1usize..10, ny in 1usize..10, nz in 1usize..10, seed in any::<u64>(),
            speeds in prop::collection::vec(0.2f64..5.0, 1..7),
        ) {
            let shape = (nx, ny, nz);
            let raw = field(nx * ny * nz, seed);
            prop_assume!(raw.iter().any(|&c| c > 0.0));
            let costs = CellCosts::new(shape, &raw).unwrap();
            let plane = max_plane(shape, &costs);
            let sum: f64 = speeds.iter().sum();
            // Bisection: at most p − 1 cuts on a part's path, half a plane
            // each; slabs: two cuts of half a plane.
            let cuts = [(WeightedBisection3d.decompose_costs(&costs, &speeds).unwrap(), (speeds.len() - 1) as f64 * plane / 2.0),
                        (WeightedSlabs3.decompose_costs(&costs, &speeds).unwrap(), plane)];
            for (plan, tol) in cuts {
                plan.validate().unwrap();
                prop_assert_eq!(plan.volumes().iter().sum::<usize>(), nx * ny * nz);
                let loads = costs.part_costs(&plan).unwrap();
                for (load, s) in loads.iter().zip(&speeds) {
                    let share = costs.total() * s / sum;
                    prop_assert!((load - share).abs() <= tol + 1e-9 * costs.total(),
                        "{}: load {load} share {share} plane {plane}", plan.algorithm);
                }
            }
        }
    }
}
