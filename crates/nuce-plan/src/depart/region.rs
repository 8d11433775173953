//! The regions of an old plan around its leaving boxes and their re-cuts
//! (the `recut:<k>` candidates of [`super::depart_grid`]): a closed region
//! is one the old boxes tile exactly (each inside it or outside) — the
//! sub-tree, column or slab of the planner that made the plan.

use super::grid::{least_moving, MAX_REGIONS};
use crate::array3d::{Best3, Box3, GridDecomposer3, GridPlan3, Stencil};

/// The smallest box containing `a` and `b` (both non-empty).
pub(super) fn hull(a: &Box3, b: &Box3) -> Box3 {
    let lo: [usize; 3] = std::array::from_fn(|x| a.lo(x).min(b.lo(x)));
    Box3::from_axes(lo, std::array::from_fn(|x| a.hi(x).max(b.hi(x)) - lo[x]))
}

/// The smallest region containing `r` that the non-empty `boxes` tile
/// exactly (each inside it or outside).
fn closure(boxes: &[Box3], mut r: Box3) -> Box3 {
    loop {
        let grown = boxes
            .iter()
            .filter(|b| b.intersect(&r).is_some_and(|x| x != **b))
            .fold(r, |acc, b| hull(&acc, b));
        if grown == r {
            return r;
        }
        r = grown;
    }
}

/// Nested closed regions of `current` around its `leaving` boxes, the
/// smallest first, the whole grid left out, at most [`MAX_REGIONS`]: each
/// the smallest closed region that holds the previous one and one more box.
pub(super) fn regions(current: &GridPlan3, leaving: &[usize]) -> Vec<Box3> {
    let boxes = &current.boxes;
    let Some(start) = leaving
        .iter()
        .map(|&l| boxes[l])
        .filter(|b| !b.is_empty())
        .reduce(|a, b| hull(&a, &b))
    else {
        return Vec::new();
    };
    let (nx, ny, nz) = current.shape;
    let whole = Box3::new(0, 0, 0, nx, ny, nz);
    let mut r = closure(boxes, start);
    let mut out = Vec::new();
    while r != whole && out.len() < MAX_REGIONS {
        out.push(r);
        r = boxes
            .iter()
            .filter(|b| !b.is_empty() && b.intersect(&r).is_none())
            .map(|b| closure(boxes, hull(&r, b)))
            .min_by_key(Box3::volume)
            .unwrap_or(whole);
    }
    out
}

/// The `recut` candidate of the closed `region`: the staying boxes inside
/// it planned afresh by [`Best3`] for their speeds, mirrored to move the
/// least; the boxes outside untouched. `None` when no staying box lies
/// inside or the region cannot be planned.
pub(super) fn recut(
    current: &GridPlan3,
    gone: &[bool],
    speeds: &[f64],
    region: Box3,
    stencil: Stencil,
) -> Option<Vec<Box3>> {
    let boxes = &current.boxes;
    let members: Vec<usize> = (0..boxes.len())
        .filter(|&k| boxes[k].intersect(&region).is_some())
        .collect();
    let inside: Vec<f64> = members
        .iter()
        .filter(|&&k| !gone[k])
        .map(|&k| speeds[k])
        .collect();
    if inside.is_empty() {
        return None;
    }
    let shape = (region.nx, region.ny, region.nz);
    let fresh = Best3 { stencil }.decompose(shape, &inside).ok()?;
    let shift = |b: &Box3, back: bool| {
        if b.is_empty() {
            return *b;
        }
        let lo = std::array::from_fn(|a| {
            if back {
                b.lo(a) + region.lo(a)
            } else {
                b.lo(a) - region.lo(a)
            }
        });
        Box3::from_axes(lo, std::array::from_fn(|a| b.len(a)))
    };
    let local = GridPlan3 {
        algorithm: String::new(),
        shape,
        boxes: members.iter().map(|&k| shift(&boxes[k], false)).collect(),
    };
    let mut planned = vec![Box3::default(); members.len()];
    let mut next = fresh.boxes.iter();
    for (i, &k) in members.iter().enumerate() {
        if !gone[k] {
            planned[i] = *next.next()?;
        }
    }
    let plan = GridPlan3 {
        algorithm: String::new(),
        shape,
        boxes: planned,
    };
    let member_speeds: Vec<f64> = members.iter().map(|&k| speeds[k]).collect();
    let plan = least_moving(plan, &local, &member_speeds);
    let mut out = boxes.clone();
    for (i, &k) in members.iter().enumerate() {
        out[k] = shift(&plan.boxes[i], true);
    }
    Some(out)
}
