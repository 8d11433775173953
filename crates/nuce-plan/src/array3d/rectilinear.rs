//! Rectilinear (tensor) decompositions: `px × py × pz` processors, the
//! grid's x extent split into `px` ranges `lx`, y into `py` ranges `ly`,
//! z into `pz` ranges `lz` — the layout PETSc's `DMDACreate3d` takes as
//! `lx, ly, lz` — fitted to heterogeneous speeds.

use serde::{Deserialize, Serialize};

use super::{checked_speeds3, extents, Box3, GridDecomposer3, GridPlan3, Shape3};
use crate::array2d::apportion;
use crate::array2d::guillotine::sorted_desc;
use crate::error::{Error, Result};

/// A fitted tensor decomposition: the processor grid, the ownership
/// ranges along each axis and the part owning each slot.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RectilinearFit {
    /// Processors along x, y, z (`px·py·pz = p`).
    pub procs: [usize; 3],
    /// Ownership ranges: `ranges[0]` is `lx` (cells of each of the `px`
    /// x-ranges, summing to `nx`), then `ly`, `lz`. A range may be 0 when
    /// an axis has fewer cells than processors.
    pub ranges: [Vec<usize>; 3],
    /// `slot_owner[(a·py + b)·pz + c]`: the part (speed index) at processor
    /// slot `(a, b, c)`.
    pub slot_owner: Vec<usize>,
}

/// Tensor decomposition fitted to the speeds (module docs). For every
/// factorisation `p = px·py·pz` it estimates the homogeneous internal
/// surface `(px−1)·ny·nz + (py−1)·nx·nz + (pz−1)·nx·ny` and keeps the
/// [`Rectilinear3::FACTORISATIONS`] lowest; for each, the speeds sorted
/// by nonincreasing value fill the slots in C order under each of the 6
/// axis permutations, and the ranges are fitted by alternating scaling
/// (`ROUNDS` rounds): with the other two axes fixed, range `a` of an axis
/// gets a share proportional to `1 / max_{b,c} (ly_b·lz_c / s_abc)`, which
/// minimises the slowest slot's `volume/speed` along that axis; the ranges
/// are then apportioned to whole cells. The candidate of least
/// `max_i volume_i / speed_i` wins (then least internal surface). A
/// heuristic: the tensor structure cannot match arbitrary speeds, and
/// [`GridPlan3::imbalance`] reports what is left. `O(F·6·ROUNDS·p)` with
/// `F` the factorisations kept, plus `O(d₃(p) log)` to rank them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Rectilinear3;

/// Alternating-scaling rounds per candidate.
const ROUNDS: usize = 8;

impl Rectilinear3 {
    /// Factorisations `px·py·pz = p` fitted (lowest estimated surface first).
    pub const FACTORISATIONS: usize = 6;

    /// The fitted tensor decomposition and its plan.
    pub fn fit(&self, shape: Shape3, speeds: &[f64]) -> Result<(RectilinearFit, GridPlan3)> {
        let speeds = &checked_speeds3(shape, speeds)?;
        let p = speeds.len();
        let e = extents(shape).map(|v| v as f64);
        let mut facts = Vec::new();
        for px in (1..=p).filter(|d| p % d == 0) {
            for py in (1..=p / px).filter(|d| (p / px) % d == 0) {
                let pz = p / px / py;
                let est = (px - 1) as f64 * e[1] * e[2]
                    + (py - 1) as f64 * e[0] * e[2]
                    + (pz - 1) as f64 * e[0] * e[1];
                facts.push((est, [px, py, pz]));
            }
        }
        facts.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
        let sorted = sorted_desc(speeds);
        let mut best: Option<((f64, usize), RectilinearFit, GridPlan3)> = None;
        for &(_, procs) in facts.iter().take(Self::FACTORISATIONS) {
            for perm in super::column::ORDERS {
                let fit = fit_one(shape, speeds, procs, perm, &sorted);
                let plan = realize(self.name(), shape, &fit)?;
                let time = plan.slowest(speeds)?;
                let key = (time, plan.internal_surface());
                if best.as_ref().is_none_or(|b| key < b.0) {
                    best = Some((key, fit, plan));
                }
            }
        }
        let (_, fit, plan) = best.ok_or_else(|| Error::Solver("no factorisation of p".into()))?;
        Ok((fit, plan))
    }
}

/// Factorisations whose slowest part is within this fraction of the
/// fastest factorisation's count as equally fast in
/// [`Rectilinear3::fit_rank_order`] (the least surface among them wins).
pub const RANK_ORDER_TIE: f64 = 0.01;

impl Rectilinear3 {
    /// The tensor decomposition in **PETSc DMDA's rank order**: part `r`
    /// sits at processor slot `(i, j, k)` with `r = i + px·(j + py·k)`
    /// (x fastest), the order in which `DMDACreate3d` gives rank `r` the
    /// box `lx[i] × ly[j] × lz[k]`. The placement is fixed, so only the
    /// ranges are fitted to the speeds (alternating scaling, as in
    /// [`Rectilinear3::fit`]); every range holds at least one cell (DMDA
    /// rejects empty ranges). With `procs = Some([px, py, pz])` that grid
    /// is used; with `None` every factorisation `px·py·pz = p` with no
    /// more processors than cells along each axis is fitted, and the one of
    /// least slowest-part time wins (those within [`RANK_ORDER_TIE`] of it
    /// tie; then least internal surface, then first in lexicographic order
    /// of `[px, py, pz]`). Returned as [`Rectilinear3::fit`] does: the fit
    /// (`slot_owner` is the DMDA order) and the plan, part `r` = rank `r`.
    ///
    /// A tensor grid cannot give every rank an arbitrary volume: a speed
    /// that differs from its row's and column's pattern leaves an
    /// imbalance, which [`GridPlan3::imbalance`] reports. Errors: those of
    /// [`check_args3`](super::check_args3); a grid with a zero entry or a
    /// product other than `p` ([`Error::InvalidInput`]); more processors
    /// than cells along an axis ([`Error::TooManyParts`]). `O(d₃(p)·p)`
    /// for `None`, `d₃(p)` the number of factorisations.
    pub fn fit_rank_order(
        &self,
        shape: Shape3,
        speeds: &[f64],
        procs: Option<[usize; 3]>,
    ) -> Result<(RectilinearFit, GridPlan3)> {
        let speeds = &checked_speeds3(shape, speeds)?;
        let p = speeds.len();
        let ext = extents(shape);
        let fits_axes = |g: &[usize; 3]| (0..3).all(|a| g[a] <= ext[a]);
        let grids: Vec<[usize; 3]> = match procs {
            Some(g) => {
                let product = g.iter().try_fold(1usize, |acc, &v| acc.checked_mul(v));
                if g.contains(&0) || product != Some(p) {
                    return Err(Error::InvalidInput(format!(
                        "processor grid {}x{}x{} does not multiply to the {p} ranks",
                        g[0], g[1], g[2]
                    )));
                }
                if let Some(a) = (0..3).find(|&a| g[a] > ext[a]) {
                    return Err(Error::TooManyParts {
                        parts: g[a],
                        units: ext[a],
                    });
                }
                vec![g]
            }
            None => (1..=p)
                .filter(|d| p % d == 0)
                .flat_map(|px| {
                    (1..=p / px)
                        .filter(move |d| (p / px) % d == 0)
                        .map(move |py| [px, py, p / px / py])
                })
                .filter(fits_axes)
                .collect(),
        };
        if grids.is_empty() {
            return Err(Error::TooManyParts {
                parts: p,
                units: ext.iter().product(),
            });
        }
        let mut cands = Vec::with_capacity(grids.len());
        for g in grids {
            let [px, py, pz] = g;
            let mut owner = vec![0; p];
            for a in 0..px {
                for b in 0..py {
                    for c in 0..pz {
                        owner[(a * py + b) * pz + c] = a + px * (b + py * c);
                    }
                }
            }
            let mut fit = fit_ranges(shape, speeds, g, owner);
            fit.ranges.iter_mut().for_each(|r| at_least_one(r));
            let plan = realize(self.name(), shape, &fit)?;
            let time = plan.slowest(speeds)?;
            cands.push((time, plan.internal_surface(), fit, plan));
        }
        let fastest = cands.iter().map(|c| c.0).fold(f64::INFINITY, f64::min);
        let limit = fastest * (1.0 + RANK_ORDER_TIE);
        let (_, _, fit, plan) = cands
            .into_iter()
            .filter(|c| c.0 <= limit)
            .min_by_key(|c| c.1)
            .ok_or_else(|| Error::Solver("no factorisation of p".into()))?;
        Ok((fit, plan))
    }
}

/// Moves cells from the largest ranges to empty ones until every range
/// holds at least one (the caller ensures `Σ r ≥ r.len()`).
fn at_least_one(r: &mut [usize]) {
    while let Some(z) = r.iter().position(|&v| v == 0) {
        let big = (0..r.len()).max_by_key(|&i| r[i]).unwrap_or(z);
        if r[big] < 2 {
            return;
        }
        r[big] -= 1;
        r[z] += 1;
    }
}

/// Slots in C order of `procs`, filled with `sorted` (fastest first) in the
/// order that varies axis `perm[2]` fastest; ranges by alternating scaling.
fn fit_one(
    shape: Shape3,
    speeds: &[f64],
    procs: [usize; 3],
    perm: [usize; 3],
    sorted: &[usize],
) -> RectilinearFit {
    let [_, py, pz] = procs;
    let slot = |s: [usize; 3]| (s[0] * py + s[1]) * pz + s[2];
    let mut slot_owner = vec![0; procs.iter().product()];
    let mut idx = [0usize; 3];
    for &part in sorted {
        slot_owner[slot(idx)] = part;
        // Odometer over the axes, perm[2] fastest.
        for &ax in perm.iter().rev() {
            idx[ax] += 1;
            if idx[ax] < procs[ax] {
                break;
            }
            idx[ax] = 0;
        }
    }
    fit_ranges(shape, speeds, procs, slot_owner)
}

/// The ranges for a fixed placement `slot_owner` (indexed as in
/// [`RectilinearFit::slot_owner`]), by alternating scaling (type docs).
fn fit_ranges(
    shape: Shape3,
    speeds: &[f64],
    procs: [usize; 3],
    slot_owner: Vec<usize>,
) -> RectilinearFit {
    let [px, py, pz] = procs;
    let slot = |s: [usize; 3]| (s[0] * py + s[1]) * pz + s[2];
    let e = extents(shape).map(|v| v as f64);
    let mut len: [Vec<f64>; 3] = [0, 1, 2].map(|a| vec![e[a] / procs[a] as f64; procs[a]]);
    for _ in 0..ROUNDS {
        for axis in 0..3 {
            let mut r = vec![0.0f64; procs[axis]];
            for a in 0..px {
                for b in 0..py {
                    for c in 0..pz {
                        let s = [a, b, c];
                        let others: f64 = (0..3)
                            .filter(|&x| x != axis)
                            .map(|x| len[x][s[x]])
                            .product();
                        let v = others / speeds[slot_owner[slot(s)]];
                        r[s[axis]] = r[s[axis]].max(v);
                    }
                }
            }
            let inv: Vec<f64> = r.iter().map(|v| 1.0 / v.max(f64::MIN_POSITIVE)).collect();
            let total: f64 = inv.iter().sum();
            len[axis] = inv.iter().map(|v| e[axis] * v / total).collect();
        }
    }
    let ext = extents(shape);
    RectilinearFit {
        procs,
        ranges: [0, 1, 2].map(|a| apportion(ext[a], &len[a])),
        slot_owner,
    }
}

/// The plan of a fit: part `slot_owner[slot]` gets the product of the
/// slot's three ranges.
fn realize(name: &str, shape: Shape3, fit: &RectilinearFit) -> Result<GridPlan3> {
    let [px, py, pz] = fit.procs;
    let starts = |r: &[usize]| -> Vec<usize> {
        r.iter()
            .scan(0, |acc, &l| {
                let s = *acc;
                *acc += l;
                Some(s)
            })
            .collect()
    };
    let st = [0, 1, 2].map(|a| starts(&fit.ranges[a]));
    let mut boxes = vec![Box3::default(); fit.slot_owner.len()];
    for a in 0..px {
        for b in 0..py {
            for c in 0..pz {
                let s = [a, b, c];
                let lo = [0, 1, 2].map(|x| st[x][s[x]]);
                let len = [0, 1, 2].map(|x| fit.ranges[x][s[x]]);
                boxes[fit.slot_owner[(a * py + b) * pz + c]] = Box3::from_axes(lo, len);
            }
        }
    }
    GridPlan3::new(name, shape, boxes)
}

impl GridDecomposer3 for Rectilinear3 {
    fn name(&self) -> &str {
        "rectilinear"
    }

    fn decompose(&self, shape: Shape3, speeds: &[f64]) -> Result<GridPlan3> {
        Ok(self.fit(shape, speeds)?.1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn homogeneous_cube_is_a_regular_grid() {
        let (fit, plan) = Rectilinear3.fit((8, 8, 8), &[1.0; 8]).unwrap();
        assert_eq!(fit.procs, [2, 2, 2]);
        assert_eq!(fit.ranges, [vec![4, 4], vec![4, 4], vec![4, 4]]);
        assert_eq!(plan.imbalance(&[1.0; 8]).unwrap(), 0.0);
    }

    #[test]
    fn rank_order_places_rank_r_at_dmda_slot() {
        // Rank 1 three times as fast as rank 0 on 2 ranks: one cut along
        // the longest axis, rank 1 (x-fastest order: i = 1) owning 3/4.
        let speeds = [1.0, 3.0];
        let (fit, plan) = Rectilinear3
            .fit_rank_order((16, 8, 4), &speeds, None)
            .unwrap();
        assert_eq!(fit.procs, [2, 1, 1]);
        assert_eq!(fit.ranges[0], vec![4, 12]);
        assert_eq!(plan.boxes[1].x, 4);
        assert!(plan.imbalance(&speeds).unwrap() < 1e-9);
        // A given grid is kept, and rank r = i + px·(j + py·k) owns the
        // box at (i, j, k) for every rank.
        let speeds: Vec<f64> = (0..12).map(|r| 1.0 + (r % 3) as f64).collect();
        let (fit, plan) = Rectilinear3
            .fit_rank_order((30, 20, 10), &speeds, Some([3, 2, 2]))
            .unwrap();
        assert_eq!(fit.procs, [3, 2, 2]);
        plan.validate().unwrap();
        let start = |r: &[usize], i: usize| r[..i].iter().sum::<usize>();
        for k in 0..2 {
            for j in 0..2 {
                for i in 0..3 {
                    let b = plan.boxes[i + 3 * (j + 2 * k)];
                    assert_eq!((b.x, b.nx), (start(&fit.ranges[0], i), fit.ranges[0][i]));
                    assert_eq!((b.y, b.ny), (start(&fit.ranges[1], j), fit.ranges[1][j]));
                    assert_eq!((b.z, b.nz), (start(&fit.ranges[2], k), fit.ranges[2][k]));
                }
            }
        }
        // Speeds varying along x only (rank-one pattern) are fitted exactly
        // up to whole cells: lx in proportion 1:2:3 of 30.
        assert_eq!(fit.ranges[0], vec![5, 10, 15]);
    }

    #[test]
    fn rank_order_rejects_bad_grids_and_keeps_ranges_nonempty() {
        let r = Rectilinear3;
        assert!(matches!(
            r.fit_rank_order((8, 8, 8), &[1.0; 4], Some([3, 1, 1])),
            Err(Error::InvalidInput(_))
        ));
        assert!(matches!(
            r.fit_rank_order((8, 8, 8), &[1.0; 4], Some([0, 4, 1])),
            Err(Error::InvalidInput(_))
        ));
        assert!(matches!(
            r.fit_rank_order((2, 8, 8), &[1.0; 4], Some([4, 1, 1])),
            Err(Error::TooManyParts { .. })
        ));
        assert!(r.fit_rank_order((0, 8, 8), &[1.0; 4], None).is_err());
        assert!(matches!(
            r.fit_rank_order((1, 1, 2), &[1.0; 3], None),
            Err(Error::TooManyParts { .. })
        ));
        // A very slow rank still gets one cell per range (DMDA needs it).
        let (fit, _) = r
            .fit_rank_order((4, 1, 1), &[1e-9, 1.0, 1.0, 1.0], None)
            .unwrap();
        assert_eq!(fit.ranges[0].iter().sum::<usize>(), 4);
        assert!(fit.ranges.iter().all(|a| a.iter().all(|&v| v >= 1)));
        // Equal speeds on a cube choose the cube grid.
        let (fit, _) = r.fit_rank_order((12, 12, 12), &[1.0; 8], None).unwrap();
        assert_eq!(fit.procs, [2, 2, 2]);
    }

    #[test]
    fn rank_one_speeds_are_matched_exactly() {
        // s_abc = x_a·y_b with x = (1, 3), y = (1, 1): 1,1,3,3 fit a 2x2x1
        // grid with lx = (4, 12) on a 16x8x1 grid, no imbalance left.
        let speeds = [3.0, 1.0, 3.0, 1.0];
        let (fit, plan) = Rectilinear3.fit((16, 8, 1), &speeds).unwrap();
        assert_eq!(fit.procs.iter().product::<usize>(), 4);
        assert!(plan.imbalance(&speeds).unwrap() < 1e-9, "{fit:?}");
    }
}
