//! Scenarios for `nuce::Grid`, grids on the application's own buffers:
//!
//! * `grid-halo NX NY NZ` — random box tilings; 1–3 fields of 1-, 8- and
//!   24-byte cells with paddings wider than the ghost; 7- and 27-point
//!   stencils, ghost 1 and 2, blocking and begin/end: every padded cell
//!   holds its global value if it is this rank's or a received ghost, and
//!   its sentinel otherwise (nothing written outside the regions).
//! * `grid-move NX NY NZ STEPS` — random successive remaps completed by
//!   `move_fields` into new buffers of other paddings: every cell carried,
//!   `RESULT gridmove steps= bytes= minimum= received=` for the minimum check.
//! * `grid-balancer` — a remap decided by the balancer from skewed phase
//!   records: exchanges are refused while it is pending, the move carries
//!   every cell.
//! * `grid-cost NX NY NZ` — a cost per cell (a band of expensive cells)
//!   and recorded speeds `1, 2, …, p`: the balance point remaps to the
//!   weighted bisection of the whole cost field for the decision's speeds,
//!   every rank's summed cost proportional to its speed (within the planes
//!   the cuts cannot split); the move carries every cell, the cost is set
//!   again for the new box, and the next balance point stays.
//! * `grid-cost-errors CASE` — a bad cost on the last rank (`nan`,
//!   `negative`, `infinite`, `length`, `some-ranks`, `zero`, `stale`: set
//!   for the box before a move): `ERR rank error` lines.
//! * `grid-errors CASE` — `fields` (the last rank exchanges 2 fields, the
//!   others 1), `elem` (another element size), `length` (a short slice on
//!   the last rank), `shape` (another grid): `ERR rank CASE error` lines;
//!   then every rank goes on with the same grid (3 right exchanges) and a
//!   new balancer and grid (exchanges, a balance point, a sum over the
//!   ranks): `AFTER rank same-grid=true|false|none|error … new-grid=…`.
//!
//! (Over 600 lines: scenarios only, one per bullet, for one type.)

use mpi::traits::*;
use nuce::collective::sum_f64;
use nuce::plan::array3d::{Box3, GridPlan3, Stencil};
use nuce::{Balancer, Field, Grid, Layout, Plain};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

use crate::array3::random_tiling3;
use crate::Ctx;

pub fn run(name: &str, ctx: &Ctx) -> bool {
    match name {
        "grid-halo" => halo(ctx),
        "grid-generations" => generations(ctx),
        "grid-move" => moves(ctx),
        "grid-balancer" => balancer_remap(ctx),
        "grid-errors" => errors(ctx),
        "grid-cost" => cost_balance(ctx),
        "grid-cost-errors" => cost_errors(ctx),
        _ => return false,
    }
    true
}

/// A cell type of the tests: its value for a global cell id and field, and
/// the sentinel of cells nothing should write.
pub(crate) trait TestCell: Plain + PartialEq + std::fmt::Debug {
    fn make(id: u64, field: u64) -> Self;
    fn sentinel() -> Self;
}

fn hash(id: u64, field: u64) -> u64 {
    (id + 1)
        .wrapping_mul(0x9E37_79B9_7F4A_7C15)
        .wrapping_add(field.wrapping_mul(0xBF58_476D_1CE4_E5B9))
        .rotate_left(29)
}

impl TestCell for u8 {
    fn make(id: u64, field: u64) -> Self {
        // Neighbouring ids differ in the low byte.
        (id as u8).wrapping_add(field as u8 * 17)
    }
    fn sentinel() -> Self {
        0xEE
    }
}
impl TestCell for u64 {
    fn make(id: u64, field: u64) -> Self {
        hash(id, field)
    }
    fn sentinel() -> Self {
        u64::MAX
    }
}
impl TestCell for [u64; 3] {
    fn make(id: u64, field: u64) -> Self {
        [hash(id, field), id, hash(id, field + 1)]
    }
    fn sentinel() -> Self {
        [u64::MAX; 3]
    }
}

pub(crate) fn id(shape: (usize, usize, usize), i: usize, j: usize, k: usize) -> u64 {
    ((i * shape.1 + j) * shape.2 + k) as u64
}

/// The global cell of padded index `n` of a buffer for `b` with `pad`, if
/// inside the grid.
fn cell_of(
    b: &Box3,
    pad: [usize; 3],
    shape: (usize, usize, usize),
    n: usize,
) -> Option<(usize, usize, usize)> {
    let d = [b.nx + 2 * pad[0], b.ny + 2 * pad[1], b.nz + 2 * pad[2]];
    let at = [n / (d[1] * d[2]), n / d[2] % d[1], n % d[2]];
    let g = [0, 1, 2].map(|a| (b.lo(a) + at[a]).checked_sub(pad[a]));
    let ext = [shape.0, shape.1, shape.2];
    match g {
        [Some(i), Some(j), Some(k)] if i < ext[0] && j < ext[1] && k < ext[2] => Some((i, j, k)),
        _ => None,
    }
}

/// A buffer for this rank's box of `l` with `pad`: own cells hold their
/// values, the rest the sentinel.
pub(crate) fn filled<T: TestCell>(l: &Layout, pad: [usize; 3], field: u64) -> Vec<T> {
    let n = l.padded_len(pad).expect("padding");
    let (b, shape) = (l.local_box(), l.plan().shape);
    (0..n)
        .map(|x| match cell_of(&b, pad, shape, x) {
            Some((i, j, k)) if b.contains(i, j, k) => T::make(id(shape, i, j, k), field),
            _ => T::sentinel(),
        })
        .collect()
}

/// True when every cell of `buf` holds its value (own cells, and ghosts
/// inside a received region when `ghosts`) or the sentinel (elsewhere).
pub(crate) fn holds<T: TestCell>(
    l: &Layout,
    buf: &[T],
    pad: [usize; 3],
    field: u64,
    ghosts: bool,
) -> bool {
    let (b, shape) = (l.local_box(), l.plan().shape);
    buf.iter().enumerate().all(|(x, v)| {
        let want = match cell_of(&b, pad, shape, x) {
            Some((i, j, k))
                if b.contains(i, j, k)
                    || (ghosts && l.regions().iter().any(|r| r.recv.contains(i, j, k))) =>
            {
                T::make(id(shape, i, j, k), field)
            }
            _ => T::sentinel(),
        };
        *v == want
    })
}

pub(crate) fn shape_args(ctx: &Ctx) -> (usize, usize, usize) {
    (ctx.arg(0, 7), ctx.arg(1, 5), ctx.arg(2, 9))
}

fn halo(ctx: &Ctx) {
    let shape = shape_args(ctx);
    let p = ctx.world.size() as usize;
    let mut rng = ChaCha8Rng::seed_from_u64(23);
    let mut t = 0;
    for ghost in [1, 2] {
        for stencil in [Stencil::seven(ghost), Stencil::twenty_seven(ghost)] {
            for (nfields, split) in [(1, false), (3, false), (2, true), (3, true)] {
                t += 1;
                let plan = random_tiling3(shape, p, &mut rng);
                let mut grid = Grid::with_plan(&ctx.world, plan, stencil).expect("grid");
                let l = grid.layout().clone();
                // Paddings wider than the ghost, different per field and axis.
                let (p8, p1, p24) = (
                    [ghost + 1, ghost, ghost + 2],
                    [ghost, ghost + 1, ghost],
                    [ghost + 2, ghost + 2, ghost + 1],
                );
                let mut a: Vec<u64> = filled(&l, p8, 0);
                let mut b: Vec<u8> = filled(&l, p1, 1);
                let mut c: Vec<[u64; 3]> = filled(&l, p24, 2);
                // Two exchanges: the second finds its datatypes in the cache.
                for _ in 0..2 {
                    let mut fields = vec![Field::new(&mut a, p8)];
                    if nfields > 1 {
                        fields.push(Field::new(&mut b, p1));
                    }
                    if nfields > 2 {
                        fields.push(Field::new(&mut c, p24));
                    }
                    if split {
                        let x = grid.exchange_begin(&mut fields).expect("begin");
                        x.end().expect("end");
                    } else {
                        grid.exchange(&mut fields).expect("exchange");
                    }
                }
                let ok = holds(&l, &a, p8, 0, true)
                    && holds(&l, &b, p1, 1, nfields > 1)
                    && holds(&l, &c, p24, 2, nfields > 2);
                ctx.check(
                    &format!("halo{t}-g{ghost}-{}pt-{nfields}f", stencil.points()),
                    ok,
                    "a ghost or own cell differs",
                );
            }
        }
    }
}

/// Own cells of `buf` set to field `field`'s values (the other cells untouched).
fn fill_own<T: TestCell>(l: &Layout, buf: &mut [T], pad: [usize; 3], field: u64) {
    let (b, shape) = (l.local_box(), l.plan().shape);
    for (x, v) in buf.iter_mut().enumerate() {
        if let Some((i, j, k)) = cell_of(&b, pad, shape, x) {
            if b.contains(i, j, k) {
                *v = T::make(id(shape, i, j, k), field);
            }
        }
    }
}

/// True when every ghost cell of `buf` inside a received region holds
/// field `field`'s value.
fn ghosts_hold<T: TestCell>(l: &Layout, buf: &[T], pad: [usize; 3], field: u64) -> bool {
    let (b, shape) = (l.local_box(), l.plan().shape);
    buf.iter()
        .enumerate()
        .all(|(x, v)| match cell_of(&b, pad, shape, x) {
            Some((i, j, k))
                if !b.contains(i, j, k) && l.regions().iter().any(|r| r.recv.contains(i, j, k)) =>
            {
                *v == T::make(id(shape, i, j, k), field)
            }
            _ => true,
        })
}

/// Exchanges whose senders overwrite their own cells as soon as each
/// exchange returns (ranks run ahead of each other, no barrier): every
/// ghost cell still holds its neighbour's value of that exchange's
/// generation — what a rank sends is the state of its cells at the call,
/// whether the exchange waited for its sends or left them in flight.
fn generations(ctx: &Ctx) {
    let shape = shape_args(ctx);
    let p = ctx.world.size() as usize;
    let mut rng = ChaCha8Rng::seed_from_u64(29);
    let plan = random_tiling3(shape, p, &mut rng);
    let mut grid = Grid::with_plan(&ctx.world, plan, Stencil::twenty_seven(1)).expect("grid");
    let l = grid.layout().clone();
    let (p8, p24) = ([1, 2, 1], [2, 1, 1]);
    let mut a: Vec<u64> = filled(&l, p8, 0);
    let mut c: Vec<[u64; 3]> = filled(&l, p24, 1);
    let mut ok = true;
    for gen in 0..12u64 {
        let (fa, fc) = (10 * gen, 10 * gen + 1);
        fill_own(&l, &mut a, p8, fa);
        fill_own(&l, &mut c, p24, fc);
        {
            let mut fields = [Field::new(&mut a, p8), Field::new(&mut c, p24)];
            if gen % 2 == 0 {
                grid.exchange(&mut fields).expect("exchange");
            } else {
                let x = grid.exchange_begin(&mut fields).expect("begin");
                x.end().expect("end");
            }
        }
        // Spoil the own cells at once: a neighbour still receiving must
        // not see this.
        fill_own(&l, &mut a, p8, 1_000_000 + gen);
        fill_own(&l, &mut c, p24, 1_000_000 + gen);
        ok &= ghosts_hold(&l, &a, p8, fa) && ghosts_hold(&l, &c, p24, fc);
    }
    ctx.check(
        "generations",
        ok,
        "a ghost cell holds another generation's value",
    );
}

/// Cells of `old` whose owner changes in `new`.
fn changing(old: &GridPlan3, new: &GridPlan3) -> u64 {
    let mut n = 0;
    for (q, ob) in old.boxes.iter().enumerate() {
        for (r, nb) in new.boxes.iter().enumerate() {
            if q != r {
                n += ob.intersect(nb).map_or(0, |x| x.volume() as u64);
            }
        }
    }
    n
}

fn moves(ctx: &Ctx) {
    let shape = shape_args(ctx);
    let steps: usize = ctx.arg(3, 20);
    let p = ctx.world.size() as usize;
    let rank = ctx.rank() as usize;
    let mut rng = ChaCha8Rng::seed_from_u64(41);
    let plan = random_tiling3(shape, p, &mut rng);
    let mut grid = Grid::with_plan(&ctx.world, plan, Stencil::twenty_seven(1)).expect("grid");
    let mut pads = ([1, 2, 1], [2, 2, 2]);
    let l = grid.layout().clone();
    let mut u: Vec<u64> = filled(&l, pads.0, 0);
    let mut w: Vec<[u64; 3]> = filled(&l, pads.1, 2);
    let cell = 8 + 24;
    let (mut bytes, mut minimum, mut received) = (0u64, 0u64, 0f64);
    let mut ok = true;
    for s in 0..steps {
        let next = random_tiling3(shape, p, &mut rng);
        let old = grid.layout().plan().clone();
        minimum += changing(&old, &next) * cell;
        let nb = next.boxes[rank];
        let kept = old.boxes[rank].intersect(&nb).map_or(0, |x| x.volume());
        received += sum_f64(&ctx.world, ((nb.volume() - kept) as u64 * cell) as f64);
        grid.start_remap(next).expect("start remap");
        let np = ([1 + s % 2, 1, 2], [2, 1 + s % 3, 1]);
        let target = grid.pending().expect("pending").clone();
        let mut u2 = vec![u64::sentinel(); target.padded_len(np.0).expect("len")];
        let mut w2 = vec![<[u64; 3]>::sentinel(); target.padded_len(np.1).expect("len")];
        let stats = grid
            .move_fields(
                &[Field::new(&mut u, pads.0), Field::new(&mut w, pads.1)],
                &mut [Field::new(&mut u2, np.0), Field::new(&mut w2, np.1)],
            )
            .expect("move");
        bytes += stats.bytes;
        let l = grid.layout().clone();
        ok &= holds(&l, &u2, np.0, 0, false) && holds(&l, &w2, np.1, 2, false);
        grid.exchange(&mut [Field::new(&mut u2, np.0), Field::new(&mut w2, np.1)])
            .expect("exchange");
        ok &= holds(&l, &u2, np.0, 0, true) && holds(&l, &w2, np.1, 2, true);
        (u, w, pads) = (u2, w2, np);
    }
    ctx.check("grid-move-data", ok, "a cell was lost or misplaced");
    if ctx.rank() == 0 {
        println!(
            "RESULT gridmove steps={steps} bytes={bytes} minimum={minimum} received={}",
            received as u64
        );
    }
}

fn balancer_remap(ctx: &Ctx) {
    let shape = (6, 10, 8);
    let mut bal = Balancer::new(&ctx.world).expect("balancer");
    let mut grid = Grid::new(&mut bal, shape, Stencil::seven(1)).expect("grid");
    let pad = [1, 1, 1];
    let l = grid.layout().clone();
    let mut u: Vec<u64> = filled(&l, pad, 0);
    let iters = 10;
    for _ in 0..iters {
        grid.exchange(&mut [Field::new(&mut u, pad)])
            .expect("exchange");
    }
    // Rank 0 reports a speed four times the others'.
    let work = (l.local_box().volume() * iters) as f64;
    let speed = if ctx.rank() == 0 { 4.0e6 } else { 1.0e6 };
    bal.record_phase(work, std::time::Duration::from_secs_f64(work / speed))
        .expect("record");
    let report = bal
        .maybe_remap_ahead(&mut grid, iters, 1_000_000)
        .expect("maybe_remap");
    let p = ctx.world.size();
    ctx.check(
        "balancer-decides",
        report.decision.remap == (p > 1) && grid.pending().is_some() == (p > 1),
        format!(
            "remap {} pending {}",
            report.decision.remap,
            grid.pending().is_some()
        ),
    );
    if p == 1 {
        return;
    }
    let refused = grid.exchange(&mut [Field::new(&mut u, pad)]);
    ctx.check(
        "exchange-refused-while-pending",
        refused
            .as_ref()
            .is_err_and(|e| e.to_string().contains("pending")),
        format!("{refused:?}"),
    );
    let mut v: Vec<u64> = vec![u64::sentinel(); grid.padded_len(pad).expect("len")];
    let moved = grid
        .move_fields(&[Field::new(&mut u, pad)], &mut [Field::new(&mut v, pad)])
        .expect("move");
    // The decision's report gives what the pending move will send: the
    // move's own bytes and messages (one u64 field, as exchanged).
    let planned = report.moved.unwrap_or_default();
    ctx.check(
        "balancer-report-planned-move",
        planned.bytes > 0
            && (planned.bytes, planned.messages, planned.max_rank_bytes)
                == (moved.bytes, moved.messages, moved.max_rank_bytes),
        format!("report {planned:?}, move {moved:?}"),
    );
    let l = grid.layout().clone();
    let bigger =
        ctx.rank() != 0 || l.local_box().volume() * p as usize > shape.0 * shape.1 * shape.2;
    ctx.check(
        "balancer-move",
        holds(&l, &v, pad, 0, false) && bigger,
        "cells",
    );
}

fn errors(ctx: &Ctx) {
    let case = ctx.args.first().cloned().unwrap_or_default();
    let rank = ctx.rank();
    let odd = rank == ctx.world.size() - 1;
    let pad = [1, 1, 1];
    let mut kept = None;
    let r = (|| {
        let mut bal = Balancer::new(&ctx.world)?;
        let shape = if case == "shape" && odd {
            (8, 6, 5)
        } else {
            (8, 6, 4)
        };
        let grid = kept.insert(Grid::new(&mut bal, shape, Stencil::seven(1))?);
        let n = grid.padded_len(pad)?;
        let mut a = vec![0f64; n];
        let mut b = vec![0f64; n];
        let mut c = vec![0f32; n];
        let mut d = vec![0i64; n];
        match (case.as_str(), odd) {
            ("fields", true) => {
                grid.exchange(&mut [Field::new(&mut a, pad), Field::new(&mut b, pad)])?
            }
            ("elem", true) => grid.exchange(&mut [Field::new(&mut c, pad)])?,
            // The same size, another type: exchanged as bytes unless seen.
            ("type", true) => grid.exchange(&mut [Field::new(&mut d, pad)])?,
            ("length", true) => grid.exchange(&mut [Field::new(&mut a[1..], pad)])?,
            _ => grid.exchange(&mut [Field::new(&mut a, pad)])?,
        }
        bal.maybe_remap(grid, 1).map(|_| ())
    })();
    match r {
        Err(e) => println!("ERR {rank} {case} {e}"),
        Ok(()) => println!("OK {rank} {case}"),
    }
    // A program that caught the error goes on: the same grid with the
    // right buffers on every rank (the messages the failed call left
    // behind must not be taken for a new disagreement), then new objects
    // on new communicators (the failed ones freed: nothing they left may
    // reach the new ones).
    let same = kept.as_mut().map(|g| exchanges_hold(g, 3));
    drop(kept);
    let fresh = (|| {
        let mut bal = Balancer::new(&ctx.world)?;
        let mut grid = Grid::new(&mut bal, (8, 6, 4), Stencil::seven(1))?;
        let ok = exchanges_hold(&mut grid, 2)?;
        bal.maybe_remap(&mut grid, 1)?;
        Ok::<_, nuce::Error>(ok && sum_f64(&ctx.world, 1.0) == ctx.world.size() as f64)
    })();
    let said = |r: Option<nuce::Result<bool>>| match r {
        None => "none".to_string(),
        Some(Ok(ok)) => ok.to_string(),
        Some(Err(e)) => format!("error {e}"),
    };
    println!(
        "AFTER {rank} same-grid={} new-grid={}",
        said(same),
        said(Some(fresh))
    );
}

/// `times` exchanges of one `u64` field on `grid`: true when the last one
/// left every cell and ghost holding its value.
fn exchanges_hold(grid: &mut Grid, times: usize) -> nuce::Result<bool> {
    let pad = [1, 1, 1];
    let mut u: Vec<u64> = filled(grid.layout(), pad, 0);
    for _ in 0..times {
        grid.exchange(&mut [Field::new(&mut u, pad)])?;
    }
    Ok(holds(grid.layout(), &u, pad, 0, true))
}

/// The cost of cell `(i, j, k)` of the cost scenarios: 5 in a band of
/// `y`-planes, 1 elsewhere.
fn band_cost(shape: (usize, usize, usize)) -> impl Fn(usize, usize, usize) -> f64 + Copy {
    let (lo, hi) = (shape.1 / 5, shape.1 / 2);
    move |_, j, _| if (lo..hi).contains(&j) { 5.0 } else { 1.0 }
}

/// `Σ cost` of box `b`.
fn box_cost(b: &Box3, cost: impl Fn(usize, usize, usize) -> f64) -> f64 {
    let mut sum = 0.0;
    for i in b.x..b.x + b.nx {
        for j in b.y..b.y + b.ny {
            for k in b.z..b.z + b.nz {
                sum += cost(i, j, k);
            }
        }
    }
    sum
}

/// `Σ cost` of each box of `plan`.
fn box_costs(plan: &GridPlan3, cost: impl Fn(usize, usize, usize) -> f64 + Copy) -> Vec<f64> {
    plan.boxes.iter().map(|b| box_cost(b, cost)).collect()
}

fn cost_balance(ctx: &Ctx) {
    let shape = (ctx.arg(0, 12), ctx.arg(1, 20), ctx.arg(2, 10));
    let cost = band_cost(shape);
    let p = ctx.world.size() as usize;
    let rank = ctx.rank() as usize;
    let mut bal = Balancer::new(&ctx.world).expect("balancer");
    let mut grid = Grid::new(&mut bal, shape, Stencil::seven(1)).expect("grid");
    let pad = [1, 1, 1];
    let l = grid.layout().clone();
    let mut u: Vec<u64> = filled(&l, pad, 0);
    grid.set_cost_with(cost);
    // Rank r runs at speed r + 1 (cost units per second, times 10^6).
    let iters = 10;
    let speed = (rank + 1) as f64 * 1e6;
    let work = box_costs(l.plan(), cost)[rank] * iters as f64;
    bal.record_phase(work, std::time::Duration::from_secs_f64(work / speed))
        .expect("record");
    let report = bal
        .maybe_remap_ahead(&mut grid, iters, 1_000_000)
        .expect("maybe_remap");
    ctx.check(
        "cost-remapped",
        p == 1 || report.decision.remap,
        format!("{:?}", report.decision),
    );
    if p == 1 {
        return;
    }
    // The new layout is the weighted bisection of the whole cost field for
    // the speeds the decision used (the field gathered from every rank's
    // box, in the right places), and each part's cost is within the
    // heaviest plane along any axis per cut of its share of the total.
    let speeds = &report.decision.speeds;
    let (nx, ny, nz) = shape;
    let field: Vec<f64> = (0..nx * ny * nz)
        .map(|c| cost(c / (ny * nz), c / nz % ny, c % nz))
        .collect();
    let expected = nuce::plan::array3d::WeightedBisection3d
        .decompose(shape, &field, speeds)
        .expect("weighted plan");
    ctx.check(
        "cost-plan-is-the-weighted-bisection",
        grid.plan().boxes == expected.boxes,
        format!("{:?} vs {:?}", grid.plan().boxes, expected.boxes),
    );
    let total: f64 = field.iter().sum();
    let ext = [nx, ny, nz];
    let mut plane = 0.0f64;
    for a in 0..3 {
        for x in 0..ext[a] {
            let mut b = [0, 0, 0, ext[0], ext[1], ext[2]];
            (b[a], b[a + 3]) = (x, 1);
            plane = plane.max(box_cost(
                &Box3::new(b[0], b[1], b[2], b[3], b[4], b[5]),
                cost,
            ));
        }
    }
    let tol = (p - 1) as f64 * plane;
    let sum_s: f64 = speeds.iter().sum();
    let costs = box_costs(grid.plan(), cost);
    let off = costs
        .iter()
        .zip(speeds)
        .map(|(c, s)| (c - total * s / sum_s).abs())
        .fold(0.0, f64::max);
    ctx.check(
        "cost-proportional-to-speeds",
        off <= tol,
        format!("costs {costs:?} for speeds {speeds:?}: off by {off} > {tol}"),
    );
    // The cost follows the box only when set again.
    grid.set_cost_with(cost);
    let mut v: Vec<u64> = vec![u64::sentinel(); grid.padded_len(pad).expect("len")];
    grid.move_fields(&[Field::new(&mut u, pad)], &mut [Field::new(&mut v, pad)])
        .expect("move");
    let l = grid.layout().clone();
    ctx.check("cost-move", holds(&l, &v, pad, 0, false), "cells");
    let work = box_costs(l.plan(), cost)[rank] * iters as f64;
    bal.record_phase(work, std::time::Duration::from_secs_f64(work / speed))
        .expect("record");
    let again = bal.maybe_remap_ahead(&mut grid, iters, 1_000_000);
    ctx.check(
        "cost-balanced-stays",
        again.as_ref().is_ok_and(|r| !r.decision.remap),
        format!("{again:?}"),
    );
}

/// A bad cost at the balance point on the last rank: the same error on
/// every rank.
fn cost_errors(ctx: &Ctx) {
    let case = ctx.args.first().cloned().unwrap_or_default();
    let rank = ctx.rank() as usize;
    let last = ctx.world.size() as usize - 1;
    let r = (|| {
        let mut bal = Balancer::new(&ctx.world)?;
        let mut grid = Grid::new(&mut bal, (7, 5, 9), Stencil::seven(1))?;
        let odd = |bad: f64| move |_, _, _| if rank == last { bad } else { 1.0 };
        match case.as_str() {
            "nan" => grid.set_cost_with(odd(f64::NAN)),
            "negative" => grid.set_cost_with(odd(-1.0)),
            "infinite" => grid.set_cost_with(odd(f64::INFINITY)),
            "zero" => grid.set_cost_with(|_, _, _| 0.0),
            "length" => {
                let n = grid.local_box().volume() + usize::from(rank == last);
                grid.set_cost(vec![1.0; n]);
            }
            "some-ranks" => {
                if rank == 0 {
                    grid.set_cost_with(|_, _, _| 1.0);
                }
            }
            "stale" => {
                // Set for the old boxes; every box moves to the next rank.
                grid.set_cost_with(|_, _, _| 1.0);
                let pad = [1, 1, 1];
                let mut u = vec![0f64; grid.padded_len(pad)?];
                let mut plan = grid.plan().clone();
                plan.boxes.rotate_left(1);
                grid.start_remap(plan)?;
                let mut v = vec![0f64; grid.padded_len(pad)?];
                grid.move_fields(&[Field::new(&mut u, pad)], &mut [Field::new(&mut v, pad)])?;
            }
            other => return Err(nuce::Error::invalid_input(format!("unknown case {other}"))),
        }
        bal.maybe_remap(&mut grid, 1).map(|_| ())
    })();
    match r {
        Err(e) => println!("ERR {rank} {e}"),
        Ok(()) => println!("ERR {rank} none"),
    }
}
