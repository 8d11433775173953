//! `best`: every 3D decomposer, ranked by predicted time per iteration
//! ([`predicted_time3`]) for a given [`Stencil`], the least internal
//! surface winning among the near-fastest — the 3D counterpart of
//! [`crate::array2d::Best`]. Also the decomposers by name
//! (`nuce plan grid3 --algo NAME`).

use std::cmp::Ordering;

use super::one_plane::{one_plane_within, within_one_plane, OnePlane};
use super::planes::largest_face;
use super::{
    check_args3, predicted_time3, Column3, GridDecomposer3, GridPlan3, Guillotine3, Pencils3,
    Rectilinear3, RecursiveBisection3d, Shape3, Slabs3, Stencil,
};
use crate::error::{Error, Result};

#[cfg(test)]
thread_local! {
    /// Test-only switch: `best` without the one-plane witnesses (the
    /// "before oracle" rows of benchmarks/grid3_balance.md).
    pub(crate) static NO_ONE_PLANE: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// True while a test asks for `best` without the one-plane witnesses.
fn no_one_plane() -> bool {
    #[cfg(test)]
    {
        NO_ONE_PLANE.with(std::cell::Cell::get)
    }
    #[cfg(not(test))]
    {
        false
    }
}

/// True when every part of `plan` is within one plane (its largest face)
/// of its speed share ([`super::one_plane`]).
pub(crate) fn is_one_plane(plan: &GridPlan3, speeds: &[f64]) -> Result<bool> {
    Ok(plan
        .boxes
        .iter()
        .zip(plan.shares(speeds)?)
        .all(|(b, s)| within_one_plane(b.volume(), largest_face(b), s)))
}

/// Names accepted by [`decomposer3_by_name`]: the concrete decomposers in
/// the order [`Best3`] tries them (ties go to the earlier), then `best`.
pub const NAMES3: &[&str] = &[
    "column",
    "pencils",
    "rb",
    "rectilinear",
    "slabs",
    "guillotine",
    "best",
];

/// Every concrete 3D decomposer that accepts any grid (neither `best` nor
/// the small-grid [`Guillotine3`]), in [`NAMES3`] order.
pub fn all_decomposers3() -> Vec<Box<dyn GridDecomposer3>> {
    vec![
        Box::new(Column3),
        Box::new(Pencils3),
        Box::new(RecursiveBisection3d),
        Box::new(Rectilinear3),
        Box::new(Slabs3),
    ]
}

/// The decomposer called `name`; `best` ranks by `stencil`. Unknown names
/// are an [`Error::InvalidInput`] listing the known ones.
pub fn decomposer3_by_name(name: &str, stencil: Stencil) -> Result<Box<dyn GridDecomposer3>> {
    stencil.check()?;
    match name {
        "best" => return Ok(Box::new(Best3 { stencil })),
        "guillotine" => return Ok(Box::new(Guillotine3)),
        _ => {}
    }
    all_decomposers3()
        .into_iter()
        .find(|d| d.name() == name)
        .ok_or_else(|| {
            Error::InvalidInput(format!(
                "unknown grid3 algorithm {name:?}; known: {}",
                NAMES3.join(", ")
            ))
        })
}

/// Every 3D decomposer's plan, ranked by [`predicted_time3`] for
/// [`Best3::stencil`], then by internal surface: let `F` be the candidate
/// of least predicted time (ties: the earlier in [`NAMES3`]); `best` takes,
/// among the candidates **at least as balanced as `F`** (no larger
/// [`GridPlan3::slowest`]) and predicted within
/// [`Best3::TIME_TOLERANCE`] of `F`'s time, the one of **least
/// [`GridPlan3::internal_surface`]** (ties: the faster, then the earlier).
/// Its `algorithm` reads `best:<winner>`.
///
/// Why not the fastest outright: the total internal surface is the volume
/// every iteration sends over the network, while the predicted time only
/// counts the halo of the part that finishes last, a rough model (one halo
/// cell costs one cell update; latency, contention and the other parts'
/// messages are left out). On a grid where halos are a large share of the
/// work it would trade a much larger total surface for a slightly smaller
/// largest halo: measured (benchmarks/grid3.md), up to 26 % more faces than
/// another candidate as balanced on large random bricks, 27 % more than the
/// least-surface guillotine tiling as balanced on grids of a few dozen
/// cells. Balance is never traded for surface: the winner's slowest part
/// is never slower than `F`'s (the one-plane step below may trade it, for
/// parts within one plane, at most 2 % of predicted time).
///
/// **Within one plane** (issue 30): a part is within one plane when
/// `|cells − share|` is at most the largest face of its box
/// ([`super::one_plane`]). On grids where [`Guillotine3`] does not apply and
/// up to [`Best3::ONE_PLANE_MAX_PARTS`] parts, when the winner above has a
/// part beyond one plane, every candidate with a part beyond one plane
/// (the fastest first) is handed to the exact oracle
/// [`one_plane_within`] (at most
/// [`Best3::ONE_PLANE_STEPS`] steps): where its guillotine tree admits
/// one plane, the witness — the tiling of the same tree with every part
/// within one plane and the least slowest part — joins the candidates,
/// named `<candidate>+one-plane` (for `rectilinear` a guillotine tiling
/// that need not be a tensor grid; valid as any box tiling), until the
/// pick is within one plane. Where the winner above has a part beyond one
/// plane, `best` takes instead the least-surface one-plane candidate
/// (witnesses included) predicted within [`Best3::BALANCE_TOLERANCE`]
/// (2 %) of the most balanced candidate's time (least slowest part, then
/// least time); if there is none, the winner stays. Measured on 200 random
/// bricks (benchmarks/grid3_balance.md): most such picks are another
/// candidate's own rounding; the misses left are all one-plane plans over
/// the 2 %.
///
/// Candidates: [`all_decomposers3`] and, where it applies
/// ([`Guillotine3::applies`]: tiny grids), the exhaustive [`Guillotine3`]
/// and, for each other candidate, the least-surface guillotine tiling at
/// its balance ([`Guillotine3::at_balance_of`]) — so on such grids `best`'s
/// surface is the exact guillotine optimum at its own balance whenever that
/// tiling is within the tolerance. [`Best3::choose`] returns every
/// candidate's time and surface. Cost: the sum of the candidates' (on
/// tiny grids up to six more guillotine searches at a fixed balance, each
/// cheaper than [`Guillotine3`]'s binary search), at most one bounded
/// oracle search per candidate elsewhere, plus `O(p)` each for the
/// evaluation.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Best3 {
    /// The stencil whose halo the predicted time counts.
    pub stencil: Stencil,
}

/// One candidate of [`Best3`]: its predicted time and internal surface.
#[derive(Debug, Clone, PartialEq)]
pub struct Candidate3 {
    /// The candidate's algorithm.
    pub algorithm: String,
    /// Its [`predicted_time3`].
    pub time: f64,
    /// Its [`GridPlan3::internal_surface`].
    pub surface: usize,
}

impl Best3 {
    /// How much slower (relative predicted time) than the fastest candidate
    /// `best`'s plan may be predicted to run to have less internal surface:
    /// 20 %. Measured (benchmarks/grid3.md): on large random cubes and
    /// bricks the winner was at most 7.3 % slower by prediction, and 10 %
    /// already removed every case where another decomposer had both less
    /// surface and no worse balance; grids of a few dozen cells need 20 %
    /// for a surface within 1.15 of the guillotine optimum.
    pub const TIME_TOLERANCE: f64 = 0.2;

    /// Parts from which [`Best3`]'s plan is the fast path ([`Best3::fast`]),
    /// recursive bisection alone ([`RecursiveBisection3d`], `O(p log p)`),
    /// named `best:rb`: every candidate of [`Best3::unhurried`] costs a
    /// fixed-point search or a DP whose time grows with `p` (at `p = 10⁵`
    /// on a 1000³ grid, seconds against milliseconds), and on large grids
    /// rb is within a few percent of the unhurried winner's surface
    /// (`examples/bench_plan_scale.rs`, BENCHMARKS.md).
    pub const FAST_FROM: usize = 20_000;

    /// Most parts for which `best` asks the one-plane oracle
    /// ([`super::one_plane`]) for a witness of each candidate whose parts
    /// are not all within one plane of their shares.
    pub const ONE_PLANE_MAX_PARTS: usize = 256;

    /// Most steps of one oracle search in `best`
    /// ([`one_plane_within`]; a
    /// candidate whose search would take more gets no witness).
    pub const ONE_PLANE_STEPS: usize = 10_000_000;

    /// How much slower than the most balanced candidate (least slowest
    /// part, then least time) a one-plane plan may be predicted to run to
    /// replace a winner that is not within one plane: 2 % (issue 30).
    pub const BALANCE_TOLERANCE: f64 = 0.02;

    /// The fast path at any `p`: [`RecursiveBisection3d`]'s plan named
    /// `best:rb`, the plan from [`Best3::FAST_FROM`] parts.
    pub fn fast(&self, shape: Shape3, speeds: &[f64]) -> Result<GridPlan3> {
        self.stencil.check()?;
        let mut plan = RecursiveBisection3d.decompose(shape, speeds)?;
        plan.algorithm = format!("best:{}", plan.algorithm);
        Ok(plan)
    }

    /// The plan of every candidate ranked ([`Best3::choose`]) at any `p`:
    /// [`Best3`]'s plan below [`Best3::FAST_FROM`] parts.
    pub fn unhurried(&self, shape: Shape3, speeds: &[f64]) -> Result<GridPlan3> {
        Ok(self.choose(shape, speeds)?.0)
    }

    /// The winning plan (named `best:<winner>`) and every candidate with
    /// its predicted time and surface, in the order tried.
    pub fn choose(&self, shape: Shape3, speeds: &[f64]) -> Result<(GridPlan3, Vec<Candidate3>)> {
        self.choose_within(shape, speeds, Self::TIME_TOLERANCE)
    }

    /// [`Best3::choose`] with another tolerance than
    /// [`Best3::TIME_TOLERANCE`] (`0`: the least surface among the fastest
    /// only; the trade-off table of benchmarks/grid3.md).
    pub(crate) fn choose_within(
        &self,
        shape: Shape3,
        speeds: &[f64],
        tolerance: f64,
    ) -> Result<(GridPlan3, Vec<Candidate3>)> {
        check_args3(shape, speeds)?;
        self.stencil.check()?;
        let mut plans = Vec::new();
        for d in all_decomposers3() {
            plans.push(d.decompose(shape, speeds)?);
        }
        let tiny = Guillotine3::applies(shape, speeds.len());
        if tiny {
            plans.push(Guillotine3.decompose(shape, speeds)?);
            // The least surface at each other candidate's balance.
            for i in 0..plans.len() {
                if let Some(g) = Guillotine3.at_balance_of(&plans[i], speeds)? {
                    if plans.iter().all(|q| q.boxes != g.boxes) {
                        plans.push(g);
                    }
                }
            }
        }
        let oracle = !tiny && speeds.len() <= Self::ONE_PLANE_MAX_PARTS && !no_one_plane();
        let mut tried = self.evaluate(&plans, speeds)?;
        let mut w = pick(&plans, &tried, speeds, tolerance, oracle)?;
        if oracle && !is_one_plane(&plans[w], speeds)? {
            // The one-plane witness of each candidate that misses it, the
            // fastest first, until the pick is within one plane.
            let mut order: Vec<usize> = (0..plans.len()).collect();
            order.sort_by(|&a, &b| {
                tried[a]
                    .time
                    .partial_cmp(&tried[b].time)
                    .unwrap_or(Ordering::Equal)
            });
            for i in order {
                if is_one_plane(&plans[i], speeds)? {
                    continue;
                }
                let OnePlane::Reachable(mut o) =
                    one_plane_within(&plans[i], speeds, Self::ONE_PLANE_STEPS)
                else {
                    continue;
                };
                // A witness is a valid tiling (tested against brute force);
                // checked like every decomposer's plan, and left out if not.
                let valid = o.validate().is_ok();
                debug_assert!(valid, "one-plane witness is no tiling");
                if !valid || plans.iter().any(|q| q.boxes == o.boxes) {
                    continue;
                }
                o.algorithm = format!("{}+one-plane", plans[i].algorithm);
                tried.extend(self.evaluate(std::slice::from_ref(&o), speeds)?);
                plans.push(o);
                w = pick(&plans, &tried, speeds, tolerance, oracle)?;
                if is_one_plane(&plans[w], speeds)? {
                    break;
                }
            }
        }
        let mut plan = plans.swap_remove(w);
        plan.algorithm = format!("best:{}", plan.algorithm);
        Ok((plan, tried))
    }

    /// Each plan's predicted time and internal surface.
    fn evaluate(&self, plans: &[GridPlan3], speeds: &[f64]) -> Result<Vec<Candidate3>> {
        plans
            .iter()
            .map(|plan| {
                Ok(Candidate3 {
                    algorithm: plan.algorithm.clone(),
                    time: predicted_time3(plan, speeds, self.stencil)?,
                    surface: plan.internal_surface(),
                })
            })
            .collect()
    }
}

/// The index of [`Best3`]'s pick among `plans` (their candidates in
/// `tried`): the least surface among the near-fastest at least as balanced
/// as the fastest, or, with `one_plane` and where that pick has a part
/// beyond one plane, the least-surface one-plane plan within
/// [`Best3::BALANCE_TOLERANCE`] of the most balanced plan's time, if any.
fn pick(
    plans: &[GridPlan3],
    tried: &[Candidate3],
    speeds: &[f64],
    tolerance: f64,
    one_plane: bool,
) -> Result<usize> {
    let slowest = plans
        .iter()
        .map(|q| q.slowest(speeds))
        .collect::<Result<Vec<_>>>()?;
    // The first of the least by `key` among the indices `pick` keeps.
    let least = |pick: &dyn Fn(usize) -> bool, key: &dyn Fn(usize) -> (f64, f64)| {
        (0..tried.len())
            .filter(|&i| pick(i))
            .min_by(|&a, &b| key(a).partial_cmp(&key(b)).unwrap_or(Ordering::Equal))
    };
    let surface = |i: usize| (tried[i].surface as f64, tried[i].time);
    let f = least(&|_| true, &|i| (tried[i].time, 0.0))
        .ok_or_else(|| Error::InvalidInput("no grid decomposer available".into()))?;
    let limit = tried[f].time * (1.0 + tolerance);
    let balance = slowest[f] * (1.0 + 1e-12);
    let eligible = |i: usize| tried[i].time <= limit && slowest[i] <= balance;
    let w = least(&eligible, &surface).unwrap_or(f);
    if !one_plane || is_one_plane(&plans[w], speeds)? {
        return Ok(w);
    }
    let b = least(&|_| true, &|i| (slowest[i], tried[i].time)).unwrap_or(w);
    let near = tried[b].time * (1.0 + Best3::BALANCE_TOLERANCE);
    let one = plans
        .iter()
        .map(|q| is_one_plane(q, speeds))
        .collect::<Result<Vec<_>>>()?;
    Ok(least(&|i| one[i] && tried[i].time <= near, &surface).unwrap_or(w))
}

impl GridDecomposer3 for Best3 {
    fn name(&self) -> &str {
        "best"
    }

    /// [`Best3::unhurried`] below [`Best3::FAST_FROM`] parts, recursive
    /// bisection (named `best:rb`) from there.
    fn decompose(&self, shape: Shape3, speeds: &[f64]) -> Result<GridPlan3> {
        if speeds.len() < Self::FAST_FROM {
            return self.unhurried(shape, speeds);
        }
        self.fast(shape, speeds)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for n in NAMES3 {
            assert_eq!(
                decomposer3_by_name(n, Stencil::default()).unwrap().name(),
                *n
            );
        }
        let e = decomposer3_by_name("nope", Stencil::default())
            .err()
            .unwrap();
        assert!(e.to_string().contains("rectilinear"));
        assert!(decomposer3_by_name("best", Stencil::seven(0)).is_err());
    }

    #[test]
    fn best_is_the_least_surface_among_the_near_fastest() {
        let speeds = [1.0, 3.0, 2.0, 7.0, 1.5, 0.5];
        for stencil in [Stencil::seven(1), Stencil::twenty_seven(2)] {
            let shape = (30, 20, 25);
            let (b, tried) = Best3 { stencil }.choose(shape, &speeds).unwrap();
            assert!(b.algorithm.starts_with("best:"));
            assert_eq!(tried.len(), 5);
            let plans: Vec<GridPlan3> = all_decomposers3()
                .iter()
                .map(|d| d.decompose(shape, &speeds).unwrap())
                .collect();
            let fastest = tried.iter().map(|c| c.time).fold(f64::INFINITY, f64::min);
            let f = tried.iter().position(|c| c.time == fastest).unwrap();
            let balance = plans[f].slowest(&speeds).unwrap();
            let tb = predicted_time3(&b, &speeds, stencil).unwrap();
            assert!(tb <= fastest * (1.0 + Best3::TIME_TOLERANCE));
            assert!(b.slowest(&speeds).unwrap() <= balance);
            for (c, p) in tried.iter().zip(&plans) {
                assert_eq!(c.surface, p.internal_surface());
                if c.time <= fastest * (1.0 + Best3::TIME_TOLERANCE)
                    && p.slowest(&speeds).unwrap() <= balance
                {
                    assert!(b.internal_surface() <= c.surface, "{c:?}");
                }
            }
        }
    }

    #[test]
    fn tiny_grids_add_the_guillotine_optimum_at_each_balance() {
        // 5x2x2, 5 parts: recursive bisection is the fastest by prediction
        // (16 faces); the least-surface guillotine tiling at its balance
        // has 13; slabs, as balanced and 12.6 % slower, 12.
        let speeds = [
            1.1429993345257117,
            1.6731309422249356,
            1.3160560748890386,
            0.663016698108367,
            1.185440855361524,
        ];
        let (b, tried) = Best3::default().choose((5, 2, 2), &speeds).unwrap();
        assert!(tried.len() > 6, "{tried:?}");
        let g = |c: &Candidate3| c.algorithm == "guillotine" && c.surface == 13;
        assert!(tried.iter().any(g), "{tried:?}");
        assert_eq!(b.internal_surface(), 12, "{tried:?}");
        let (fast, _) = Best3::default()
            .choose_within((5, 2, 2), &speeds, 0.0)
            .unwrap();
        assert_eq!(fast.internal_surface(), 16);
    }
}
