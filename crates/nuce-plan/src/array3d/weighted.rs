//! Non-uniform cost per cell: the grid carries a cost per cell (a flat
//! slice in C order, `(i·ny + j)·nz + k`), and a part's load is the sum of
//! its cells' costs. [`WeightedSlabs3`] and [`WeightedBisection3d`] balance
//! `Σ cost / speed` with prefix sums of plane costs. An `ndarray::Array3<f64>`
//! of shape `(nx, ny, nz)` passes as the slice `a.as_slice()` returns
//! (`Some` in standard layout, ndarray's default C order).

use super::rb::{longest, split};
use super::slabs::longest_axis;
use super::{checked_speeds3, extents, Box3, GridPlan3, Shape3};
use crate::array2d::guillotine::{cut_at, sorted_desc};
use crate::array2d::rb::near_half;
use crate::error::{Error, Result};

/// Checks a cost array for `shape`: one value per cell, each finite and
/// `≥ 0`; NaN, negative or infinite costs and a wrong length are an
/// [`Error`]. `O(cells)`.
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
    if let Some((i, c)) = costs
        .iter()
        .enumerate()
        .find(|(_, c)| !(c.is_finite() && **c >= 0.0))
    {
        return Err(Error::InvalidInput(format!(
            "cost {c} of cell {i}: costs must be finite and >= 0"
        )));
    }
    Ok(())
}

/// Sum of the costs of each plane of box `b` across `axis`. `O(volume)`.
fn plane_sums(shape: Shape3, costs: &[f64], b: &Box3, axis: usize) -> Vec<f64> {
    let mut out = vec![0.0; b.len(axis)];
    for i in b.x..b.x + b.nx {
        for j in b.y..b.y + b.ny {
            let row = (i * shape.1 + j) * shape.2;
            for k in b.z..b.z + b.nz {
                let t = [i, j, k][axis] - b.lo(axis);
                out[t] += costs[row + k];
            }
        }
    }
    out
}

/// The offset in `0..=planes.len()` whose prefix cost is nearest
/// `fraction` of the total (the volume share when all costs are 0).
/// `O(len)`.
fn nearest_cut(planes: &[f64], fraction: f64) -> usize {
    let total: f64 = planes.iter().sum();
    if total <= 0.0 {
        return cut_at(planes.len(), fraction, 1.0);
    }
    let target = total * fraction;
    let (mut acc, mut best, mut at) = (0.0, target, 0);
    for (t, c) in planes.iter().enumerate() {
        acc += c;
        if (acc - target).abs() < best {
            best = (acc - target).abs();
            at = t + 1;
        }
    }
    at
}

/// Slabs along the longest axis in input order (as [`super::Slabs3`]),
/// each cut at the plane whose prefix cost is nearest the parts' share of
/// the total cost: every part's cost is within one plane's cost of its
/// share of `Σ cost`, at each of its two cuts. `O(cells + p)`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct WeightedSlabs3;

impl WeightedSlabs3 {
    /// Short name.
    pub const fn name(&self) -> &'static str {
        "slabs-weighted"
    }

    /// Decomposes `shape` with cell `costs` (C order) for `speeds`.
    pub fn decompose(&self, shape: Shape3, costs: &[f64], speeds: &[f64]) -> Result<GridPlan3> {
        let speeds = &checked_speeds3(shape, speeds)?;
        check_cell_costs(shape, costs)?;
        let a = longest_axis(shape);
        let whole = Box3::from_axes([0; 3], extents(shape));
        let planes = plane_sums(shape, costs, &whole, a);
        let total: f64 = speeds.iter().sum();
        let (mut acc, mut from) = (0.0, 0);
        let mut boxes = Vec::with_capacity(speeds.len());
        for (i, s) in speeds.iter().enumerate() {
            acc += s;
            let to = if i + 1 == speeds.len() {
                planes.len()
            } else {
                nearest_cut(&planes, acc / total).max(from)
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
/// the box is nearest the first group's share of the box's cost.
/// `O(cells · depth)`, depth `⌈log₂ p⌉` for balanced splits.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct WeightedBisection3d;

impl WeightedBisection3d {
    /// Short name.
    pub const fn name(&self) -> &'static str {
        "rb-weighted"
    }

    /// Decomposes `shape` with cell `costs` (C order) for `speeds`.
    pub fn decompose(&self, shape: Shape3, costs: &[f64], speeds: &[f64]) -> Result<GridPlan3> {
        let speeds = &checked_speeds3(shape, speeds)?;
        check_cell_costs(shape, costs)?;
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
            let at = nearest_cut(&plane_sums(shape, costs, &b, axis), fraction);
            let (left, right) = split(&b, axis, at);
            stack.push((right, group[k..].to_vec()));
            stack.push((left, group[..k].to_vec()));
        }
        GridPlan3::new(self.name(), shape, boxes)
    }
}

/// Each part's total cell cost in `plan`. `O(cells)`.
pub fn part_costs(plan: &GridPlan3, costs: &[f64]) -> Result<Vec<f64>> {
    check_cell_costs(plan.shape, costs)?;
    Ok(plan
        .boxes
        .iter()
        .map(|b| plane_sums(plan.shape, costs, b, 0).iter().sum())
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

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
        for bad in [vec![1.0, f64::NAN], vec![1.0, -1.0], vec![1.0]] {
            assert!(WeightedSlabs3.decompose(shape, &bad, &[1.0]).is_err());
            assert!(WeightedBisection3d.decompose(shape, &bad, &[1.0]).is_err());
        }
        // All-zero costs fall back to volumes.
        let plan = WeightedBisection3d
            .decompose((4, 1, 1), &[0.0; 4], &[1.0, 1.0])
            .unwrap();
        assert_eq!(plan.volumes(), vec![2, 2]);
    }
}
