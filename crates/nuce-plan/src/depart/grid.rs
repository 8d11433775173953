//! Departure plans of box tilings ([`depart_grid`], [`depart_array`]).
//!
//! The least any move to new volumes must carry is what the parts that
//! grow receive, `Σ max(0, new − old)`: reached exactly when every part
//! that stays keeps its old box inside its new one. Whether a box tiling
//! that does so is balanced depends on the old plan: the middle of three
//! slabs can be split between its two neighbours, the last cannot (the
//! first slab cannot grow without taking from the second). So candidates
//! of both kinds are scored, by predicted time ([`predicted_time3`]:
//! volume over speed plus the halo, the quantity `best` ranks by) and by
//! cells moved:
//!
//! - `fresh:<name>`: the plan of the ranks that stay made afresh — the
//!   caller's (the reference), and every decomposer of
//!   [`all_decomposers3`] (up to [`MAX_FRESH_PARTS`] parts) — each the
//!   mirror image, with equal-speed boxes matched, that keeps the most
//!   cells ([`least_moving`]);
//! - `slid:<axis>`: slabs across one axis for the staying parts in the
//!   order of their old boxes along it (the boundaries of a 1D cut slid);
//! - `hand-over`: each leaving box given to the staying boxes that tile one
//!   of its faces, or cut by one plane across an axis between those that
//!   tile its two opposite faces (the plane placed to balance them), each
//!   taking the prism over its own face; a single neighbour sharing the
//!   whole face takes it all. Every staying box keeps its cells: it moves
//!   the minimum;
//! - `recut:<k>`: the smallest regions of the old plan around the leaving
//!   boxes that its boxes tile exactly (a closed region: every box inside
//!   or outside, the sub-tree, column or slab of the planner that made it),
//!   up to [`MAX_REGIONS`] of them, nested, each planned afresh by
//!   [`Best3`] for the staying boxes inside it, the others untouched.
//!
//! The choice: the fewest cells moved among the candidates predicted
//! within [`TIME_TOLERANCE`] of the reference (ties: the faster, then the
//! earlier); the reference always qualifies.

use super::region::{hull, recut, regions};
use crate::array2d::weighted::{array_plan_of, box_of};
use crate::array2d::ArrayPlan;
use crate::array3d::{all_decomposers3, predicted_time3, Box3, GridPlan3, Stencil};
use crate::error::{Error, Result};

/// How much slower (relative predicted time) than the reference plan a
/// candidate that moves fewer cells may be predicted to run: 2 %. A
/// departure's move happens once, the balance it leaves every iteration
/// after; 2 % is within the noise of a measured speed (the remap policy's
/// hysteresis is larger), so a plan this close is as balanced as the
/// measurements can tell.
pub const TIME_TOLERANCE: f64 = 0.02;

/// Parts that stay up to which every decomposer's fresh plan and the
/// region re-cuts are candidates (each costs a decomposition; beyond, the
/// reference and the hand-over only).
pub const MAX_FRESH_PARTS: usize = 256;

/// Nested regions around the leaving boxes re-cut at most (`recut:0` the
/// smallest).
pub const MAX_REGIONS: usize = 8;

/// One candidate of a departure: its name, predicted time and cells moved.
#[derive(Debug, Clone, PartialEq)]
pub struct GridCandidate {
    /// `fresh:<algorithm>`, `hand-over` or `recut:<k>`.
    pub name: String,
    /// [`predicted_time3`] of the staying parts at their speeds.
    pub time: f64,
    /// Cells whose owner changes (the leaving parts' included).
    pub moved: usize,
}

/// The plan of a departure and every candidate weighed.
#[derive(Debug, Clone)]
pub struct GridDeparture {
    /// One box per part of the old plan, empty for every leaving part;
    /// named `depart:<chosen candidate>`.
    pub plan: GridPlan3,
    /// The chosen candidate's index in `candidates`.
    pub chosen: usize,
    /// Every candidate, the reference (the caller's fresh plan) first.
    pub candidates: Vec<GridCandidate>,
}

impl GridDeparture {
    /// The chosen candidate.
    pub fn chosen(&self) -> &GridCandidate {
        &self.candidates[self.chosen]
    }
    /// The reference: the caller's fresh plan, mirrored to move the least.
    pub fn reference(&self) -> &GridCandidate {
        &self.candidates[0]
    }
}

/// Of `plan`'s eight mirror images, each with the boxes of equal-speed
/// parts matched to `current` ([`GridPlan3::matched_to`]; a part whose box
/// is empty in `plan` counts as speed 0, so it stays empty), the one that
/// keeps the most cells with their owners: a planner places parts by speed,
/// not by where the data lies. `speeds`: one per part.
pub fn least_moving(plan: GridPlan3, current: &GridPlan3, speeds: &[f64]) -> GridPlan3 {
    let speeds: Vec<f64> = plan
        .boxes
        .iter()
        .zip(speeds)
        .map(|(b, &s)| if b.is_empty() { 0.0 } else { s })
        .collect();
    (0..8u8)
        .map(|m| {
            plan.reflected([m & 1 != 0, m & 2 != 0, m & 4 != 0])
                .matched_to(current, &speeds)
        })
        .max_by_key(|p| p.kept_cells(current))
        .expect("eight candidates")
}

/// The plan of `current` (one box per part) when the parts `leaving`
/// (ascending) leave: the staying parts planned at their `speeds` (one per
/// part; the leaving parts' are ignored), moving as few cells as a plan
/// predicted within [`TIME_TOLERANCE`] of `fresh` allows (module docs).
/// `fresh`: the caller's plan of the whole grid for the staying parts, in
/// their order (the reference); `stencil`: the halo the predicted time
/// counts. Errors: plans that do not tile or do not fit, leaving parts out
/// of range or unsorted, every part leaving, invalid staying speeds.
pub fn depart_grid(
    current: &GridPlan3,
    speeds: &[f64],
    leaving: &[usize],
    fresh: &GridPlan3,
    stencil: Stencil,
) -> Result<GridDeparture> {
    let stay = check(current, speeds, leaving, fresh)?;
    let p = current.len();
    let gone: Vec<bool> = (0..p).map(|k| leaving.binary_search(&k).is_ok()).collect();
    let stay_speeds: Vec<f64> = stay.iter().map(|&k| speeds[k]).collect();
    let expand = |boxes: &[Box3]| {
        let mut all = vec![Box3::default(); p];
        for (k, &r) in stay.iter().enumerate() {
            all[r] = boxes[k];
        }
        let plan = GridPlan3 {
            algorithm: String::new(),
            shape: current.shape,
            boxes: all,
        };
        least_moving(plan, current, speeds).boxes
    };
    let mut named: Vec<(String, Vec<Box3>)> =
        vec![(format!("fresh:{}", fresh.algorithm), expand(&fresh.boxes))];
    let wide = stay.len() <= MAX_FRESH_PARTS;
    if wide {
        for d in all_decomposers3() {
            if let Ok(plan) = d.decompose(current.shape, &stay_speeds) {
                named.push((format!("fresh:{}", d.name()), expand(&plan.boxes)));
            }
        }
    }
    let time = |boxes: &[Box3]| {
        let staying = GridPlan3 {
            algorithm: String::new(),
            shape: current.shape,
            boxes: stay.iter().map(|&r| boxes[r]).collect(),
        };
        predicted_time3(&staying, &stay_speeds, stencil).unwrap_or(f64::INFINITY)
    };
    for axis in 0..3 {
        named.push((
            format!("slid:{}", ["x", "y", "z"][axis]),
            slid(current, &stay, speeds, axis),
        ));
    }
    if let Some(boxes) = hand_over_boxes(current, &gone, speeds, &time) {
        named.push(("hand-over".into(), boxes));
    }
    if wide {
        for (k, region) in regions(current, leaving).into_iter().enumerate() {
            if let Some(boxes) = recut(current, &gone, speeds, region, stencil) {
                named.push((format!("recut:{k}"), boxes));
            }
        }
    }
    let mut candidates = Vec::with_capacity(named.len());
    for (name, boxes) in &named {
        let staying = GridPlan3 {
            algorithm: String::new(),
            shape: current.shape,
            boxes: stay.iter().map(|&r| boxes[r]).collect(),
        };
        let kept: usize = boxes
            .iter()
            .zip(&current.boxes)
            .filter_map(|(a, b)| a.intersect(b).map(|x| x.volume()))
            .sum();
        candidates.push(GridCandidate {
            name: name.clone(),
            time: predicted_time3(&staying, &stay_speeds, stencil)?,
            moved: current.cells() - kept,
        });
    }
    let limit = candidates[0].time * (1.0 + TIME_TOLERANCE);
    let chosen = (0..candidates.len())
        .filter(|&i| candidates[i].time <= limit)
        .min_by(|&a, &b| {
            let (x, y) = (&candidates[a], &candidates[b]);
            x.moved
                .cmp(&y.moved)
                .then(x.time.total_cmp(&y.time))
                .then(a.cmp(&b))
        })
        .unwrap_or(0);
    let (name, boxes) = named.swap_remove(chosen);
    let plan = GridPlan3::new(format!("depart:{name}"), current.shape, boxes)?;
    Ok(GridDeparture {
        plan,
        chosen,
        candidates,
    })
}

/// The `slid:<axis>` candidate: slabs across `axis` for the staying parts
/// at their speeds, in the order of their old boxes' centres along it
/// (boundaries rounded to cells): the boundaries of a one-dimensional cut
/// slid, which keeps much of parts that lay side by side along the axis.
fn slid(current: &GridPlan3, stay: &[usize], speeds: &[f64], axis: usize) -> Vec<Box3> {
    let mut order = stay.to_vec();
    order.sort_by_key(|&k| {
        let b = current.boxes[k];
        (2 * b.lo(axis) + b.len(axis), k)
    });
    let n = current.extent(axis);
    let total: f64 = order.iter().map(|&k| speeds[k]).sum();
    let (mut boxes, mut acc, mut at) = (vec![Box3::default(); current.len()], 0.0, 0);
    for (i, &k) in order.iter().enumerate() {
        acc += speeds[k];
        let end = if i + 1 == order.len() {
            n
        } else {
            ((n as f64 * acc / total).round() as usize).clamp(at, n)
        };
        let mut lo = [0; 3];
        let mut len = [current.shape.0, current.shape.1, current.shape.2];
        lo[axis] = at;
        len[axis] = end - at;
        boxes[k] = Box3::from_axes(lo, len);
        at = end;
    }
    boxes
}

/// [`depart_grid`] for a 2D array's plan (the grid `rows × cols × 1`):
/// the new plan and every candidate.
pub fn depart_array(
    current: &ArrayPlan,
    speeds: &[f64],
    leaving: &[usize],
    fresh: &ArrayPlan,
    stencil: Stencil,
) -> Result<(ArrayPlan, GridDeparture)> {
    let as3 = |p: &ArrayPlan| GridPlan3 {
        algorithm: p.algorithm.clone(),
        shape: (p.rows, p.cols, 1),
        boxes: p.parts.iter().map(box_of).collect(),
    };
    let d = depart_grid(&as3(current), speeds, leaving, &as3(fresh), stencil)?;
    Ok((array_plan_of(&d.plan)?, d))
}

/// Checks the input of [`depart_grid`]; the staying parts, ascending.
fn check(
    current: &GridPlan3,
    speeds: &[f64],
    leaving: &[usize],
    fresh: &GridPlan3,
) -> Result<Vec<usize>> {
    current.validate()?;
    let p = current.len();
    if speeds.len() != p {
        return Err(Error::ShapeMismatch(format!(
            "{} speeds for a plan of {p} parts",
            speeds.len()
        )));
    }
    if leaving.windows(2).any(|w| w[0] >= w[1]) || leaving.iter().any(|&l| l >= p) {
        return Err(Error::InvalidInput(format!(
            "leaving parts {leaving:?} are not ascending parts of {p}"
        )));
    }
    let stay: Vec<usize> = (0..p)
        .filter(|k| leaving.binary_search(k).is_err())
        .collect();
    if stay.is_empty() {
        return Err(Error::InvalidInput(format!("all {p} parts would leave")));
    }
    crate::check_speeds(&stay.iter().map(|&k| speeds[k]).collect::<Vec<_>>())?;
    if fresh.shape != current.shape || fresh.len() != stay.len() {
        return Err(Error::ShapeMismatch(format!(
            "the fresh plan has {} parts of a {:?} grid, {} stay of a {:?} grid",
            fresh.len(),
            fresh.shape,
            stay.len(),
            current.shape
        )));
    }
    fresh.validate()?;
    Ok(stay)
}

/// The staying parts (not `gone`) whose boxes touch `l`'s face at the low
/// (or `high`) end of `axis` from outside, when their faces tile that face
/// exactly; `None` when they do not (a box overlapping the face's edge
/// included).
fn face_tilers(
    boxes: &[Box3],
    gone: &[bool],
    l: &Box3,
    axis: usize,
    high: bool,
) -> Option<Vec<usize>> {
    let (o1, o2) = ((axis + 1) % 3, (axis + 2) % 3);
    let (mut area, mut found) = (0usize, Vec::new());
    for (k, b) in boxes.iter().enumerate() {
        let touches = if high {
            b.lo(axis) == l.hi(axis)
        } else {
            b.hi(axis) == l.lo(axis)
        };
        let overlaps = |o: usize| b.lo(o) < l.hi(o) && l.lo(o) < b.hi(o);
        if gone[k] || b.is_empty() || !touches || !overlaps(o1) || !overlaps(o2) {
            continue;
        }
        let inside = |o: usize| b.lo(o) >= l.lo(o) && b.hi(o) <= l.hi(o);
        if !inside(o1) || !inside(o2) {
            return None;
        }
        area += b.len(o1) * b.len(o2);
        found.push(k);
    }
    (!found.is_empty() && area == l.len(o1) * l.len(o2)).then_some(found)
}

/// `b` grown by `d` cells along `axis`: upwards, or downwards when
/// `down`.
fn grown(b: Box3, axis: usize, down: bool, d: usize) -> Box3 {
    let mut lo: [usize; 3] = std::array::from_fn(|a| b.lo(a));
    let mut len: [usize; 3] = std::array::from_fn(|a| b.len(a));
    if down {
        lo[axis] -= d;
    }
    len[axis] += d;
    Box3::from_axes(lo, len)
}

/// The `hand-over` candidate: the leaving boxes (those whose union is a
/// box merged) given in turn to the staying boxes that tile their faces
/// across one axis (module docs), or cut by one plane into two boxes given
/// so one after the other; of all these, the least `time` (of the whole
/// plan). `None` when some leaving box has no such neighbours.
fn hand_over_boxes(
    current: &GridPlan3,
    gone: &[bool],
    speeds: &[f64],
    time: &dyn Fn(&[Box3]) -> f64,
) -> Option<Vec<Box3>> {
    let mut boxes = current.boxes.clone();
    let mut leaving: Vec<Box3> = (0..boxes.len())
        .filter(|&k| gone[k] && !boxes[k].is_empty())
        .map(|k| boxes[k])
        .collect();
    while let Some((i, j)) = (0..leaving.len())
        .flat_map(|i| (i + 1..leaving.len()).map(move |j| (i, j)))
        .find(|&(i, j)| {
            hull(&leaving[i], &leaving[j]).volume() == leaving[i].volume() + leaving[j].volume()
        })
    {
        leaving[i] = hull(&leaving[i], &leaving[j]);
        leaving.swap_remove(j);
    }
    for (k, b) in boxes.iter_mut().enumerate() {
        if gone[k] {
            *b = Box3::default();
        }
    }
    // Beam search over the leaving boxes in every order (up to three boxes;
    // one order beyond), keeping the `BEAM` fastest plans after each box,
    // at most `PLANS` plans of O(p) each tried in all.
    const BEAM: usize = 6;
    const PLANS: usize = 4_000_000;
    let time_of = |b: &Vec<Box3>| time(b);
    let orders = orders(leaving.len());
    let cap = (PLANS / boxes.len().max(1) / (orders.len() * leaving.len()).max(1)).max(16);
    let mut finished: Vec<Vec<Box3>> = Vec::new();
    for order in orders {
        let mut beam = vec![boxes.clone()];
        for &i in &order {
            let lb = leaving[i];
            let mut tried: Vec<Vec<Box3>> = Vec::new();
            for from in &beam {
                for receivers in face_options(from, gone, &lb, speeds) {
                    tried.push(given(from, receivers));
                }
                for (a, b) in halves(&lb) {
                    if tried.len() >= cap {
                        break;
                    }
                    for ra in face_options(from, gone, &a, speeds) {
                        let after = given(from, ra);
                        for rb in face_options(&after, gone, &b, speeds) {
                            tried.push(given(&after, rb));
                        }
                    }
                }
            }
            let mut scored: Vec<(f64, Vec<Box3>)> =
                tried.into_iter().map(|b| (time_of(&b), b)).collect();
            scored.sort_by(|x, y| x.0.total_cmp(&y.0));
            beam = scored.into_iter().take(BEAM).map(|x| x.1).collect();
        }
        finished.extend(beam.into_iter().take(1));
    }
    finished
        .into_iter()
        .min_by(|a, b| time(a).total_cmp(&time(b)))
}

/// Every order of `n ≤ 3` items; the order `0..n` alone for more.
fn orders(n: usize) -> Vec<Vec<usize>> {
    match n {
        2 => vec![vec![0, 1], vec![1, 0]],
        3 => vec![
            vec![0, 1, 2],
            vec![0, 2, 1],
            vec![1, 0, 2],
            vec![1, 2, 0],
            vec![2, 0, 1],
            vec![2, 1, 0],
        ],
        _ => vec![(0..n).collect()],
    }
}

/// The box `lb` cut by one plane into two boxes, every plane along every
/// axis, each pair in both orders.
fn halves(lb: &Box3) -> Vec<(Box3, Box3)> {
    let mut out = Vec::new();
    for axis in 0..3 {
        for c in 1..lb.len(axis) {
            let mut lo: [usize; 3] = std::array::from_fn(|a| lb.lo(a));
            let mut len: [usize; 3] = std::array::from_fn(|a| lb.len(a));
            len[axis] = c;
            let first = Box3::from_axes(lo, len);
            lo[axis] += c;
            len[axis] = lb.len(axis) - c;
            let second = Box3::from_axes(lo, len);
            out.push((first, second));
            out.push((second, first));
        }
    }
    out
}

/// `boxes` with the `receivers`' boxes replaced.
fn given(boxes: &[Box3], receivers: Vec<(usize, Box3)>) -> Vec<Box3> {
    let mut out = boxes.to_vec();
    for (k, b) in receivers {
        out[k] = b;
    }
    out
}

/// The ways to give the box `lb` to the staying boxes that tile its faces
/// across one axis: per axis, the receivers and their grown boxes, the
/// plane between two opposite sides placed to balance them; the option of
/// least `max volume / speed` among the receivers last.
fn face_options(
    boxes: &[Box3],
    gone: &[bool],
    lb: &Box3,
    speeds: &[f64],
) -> Vec<Vec<(usize, Box3)>> {
    let slowest = |side: &[(usize, Box3)]| {
        side.iter()
            .map(|&(k, b)| b.volume() as f64 / speeds[k])
            .fold(0.0, f64::max)
    };
    let mut out: Vec<(f64, Vec<(usize, Box3)>)> = Vec::new();
    for axis in 0..3 {
        let low = face_tilers(boxes, gone, lb, axis, false).unwrap_or_default();
        let high = face_tilers(boxes, gone, lb, axis, true).unwrap_or_default();
        let len = lb.len(axis);
        // The receivers' boxes when the low side takes depth `c`.
        let at = |c: usize| -> Vec<(usize, Box3)> {
            let lows = low
                .iter()
                .filter(|_| c > 0)
                .map(|&k| (k, grown(boxes[k], axis, false, c)));
            let highs = high
                .iter()
                .filter(|_| c < len)
                .map(|&k| (k, grown(boxes[k], axis, true, len - c)));
            lows.chain(highs).collect()
        };
        let cuts: Vec<usize> = match (low.is_empty(), high.is_empty()) {
            (true, true) => continue,
            (false, true) => vec![len],
            (true, false) => vec![0],
            // The low side's time grows with c, the high side's falls: the
            // first c where the low side is the slower, its neighbours
            // (the halo may tip the balance) and both ends.
            (false, false) => {
                let sides = |c: usize| {
                    let (l, h): (Vec<_>, Vec<_>) =
                        at(c).into_iter().partition(|(k, _)| low.contains(k));
                    (slowest(&l), slowest(&h))
                };
                let (mut a, mut b) = (0usize, len);
                while a < b {
                    let m = (a + b) / 2;
                    let (tl, th) = sides(m);
                    if tl >= th {
                        b = m;
                    } else {
                        a = m + 1;
                    }
                }
                let mut cuts = vec![0, a.saturating_sub(1), a, (a + 1).min(len), len];
                cuts.dedup();
                cuts
            }
        };
        for c in cuts {
            let g = at(c);
            out.push((slowest(&g), g));
        }
    }
    out.sort_by(|a, b| b.0.total_cmp(&a.0));
    out.into_iter().map(|x| x.1).collect()
}
