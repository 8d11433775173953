//! Scenarios for `OwnershipRanges::new` (PETSc DMDA ranges): the
//! ranges sum to the extents, equal the planner's on every rank, place rank
//! `r = i + px·(j + py·k)` at slot `(i, j, k)`, and bad input gives the same
//! error on every rank; recorded phases (no speeds given) are what the
//! ranges follow.

use mpi::traits::*;
use nuce::plan::array3d::Rectilinear3;
use nuce::Balancer;
use nuce::OwnershipRanges;

use crate::Ctx;

pub fn run(name: &str, ctx: &Ctx) -> bool {
    match name {
        "ranges-match" => matches(ctx),
        "ranges-errors" => errors(ctx),
        "ranges-phases" => phases(ctx),
        _ => return false,
    }
    true
}

/// Speeds `1 + (r mod 3)`: uneven, not a tensor pattern for every grid.
fn speeds(p: usize) -> Vec<f64> {
    (0..p).map(|r| 1.0 + (r % 3) as f64).collect()
}

fn matches(ctx: &Ctx) {
    let shape = (ctx.arg(0, 30), ctx.arg(1, 17), ctx.arg(2, 11));
    let p = ctx.world.size() as usize;
    let s = speeds(p);
    let mut bal = Balancer::new(&ctx.world).expect("balancer");
    bal.set_speeds(&s).expect("set_speeds");
    for procs in [None, Some([1, p, 1])] {
        let tag = if procs.is_none() { "chosen" } else { "given" };
        let r = OwnershipRanges::new(&mut bal, shape, procs).expect("ownership_ranges");
        let (fit, plan) = Rectilinear3
            .fit_rank_order(shape, &s, procs)
            .expect("planner");
        ctx.check(
            &format!("ranges-{tag}-planner"),
            fit.procs == r.procs && fit.ranges == [r.lx.clone(), r.ly.clone(), r.lz.clone()],
            format!("{r:?} vs {fit:?}"),
        );
        let sums = [&r.lx, &r.ly, &r.lz].map(|v| v.iter().sum::<usize>());
        ctx.check(
            &format!("ranges-{tag}-sums"),
            sums == [shape.0, shape.1, shape.2]
                && r.procs.iter().product::<usize>() == p
                && [&r.lx, &r.ly, &r.lz]
                    .iter()
                    .zip(r.procs)
                    .all(|(v, n)| v.len() == n && v.iter().all(|&c| c >= 1)),
            format!("{r:?}"),
        );
        // This rank's box is the DMDA slot i + px·(j + py·k).
        let me = ctx.rank() as usize;
        let [px, py, _] = r.procs;
        let (i, j, k) = (me % px, (me / px) % py, me / (px * py));
        let start = |v: &[usize], n: usize| v[..n].iter().sum::<usize>();
        let b = r.plan.boxes[me];
        let want = (
            start(&r.lx, i),
            start(&r.ly, j),
            start(&r.lz, k),
            r.lx[i],
            r.ly[j],
            r.lz[k],
        );
        ctx.check(
            &format!("ranges-{tag}-slot"),
            (b.x, b.y, b.z, b.nx, b.ny, b.nz) == want && r.plan == plan,
            format!("{b:?} vs {want:?}"),
        );
        let imb = plan.imbalance(&s).expect("imbalance");
        ctx.check(
            &format!("ranges-{tag}-imbalance"),
            r.imbalance == imb && imb >= 0.0,
            format!("{} vs {imb}", r.imbalance),
        );
        println!(
            "RESULT ranges {tag} procs={:?} lx={:?} ly={:?} lz={:?} imbalance={:.4}",
            r.procs, r.lx, r.ly, r.lz, r.imbalance
        );
    }
}

/// A DMDA program that only times its phases: rank `r` records its work
/// at speed `1 + 2r` (1 : 3 on two ranks). The first call, with nothing
/// measured, gives even ranges; after the recorded phase the x-ranges
/// follow the speeds (a slab per rank along x fits them exactly up to a
/// cell); a second phase at swapped speeds moves them back.
fn phases(ctx: &Ctx) {
    let p = ctx.world.size() as usize;
    let me = ctx.rank() as usize;
    let shape = (60 * p, 8, 8);
    let mut bal = Balancer::new(&ctx.world).expect("balancer");
    let even = OwnershipRanges::new(&mut bal, shape, Some([p, 1, 1])).expect("ownership_ranges");
    ctx.check(
        "phases-even-first",
        even.lx.iter().all(|&c| c == 60),
        format!("{:?}", even.lx),
    );
    for round in 0..2 {
        let speed = |r: usize| (1 + 2 * if round == 0 { r } else { p - 1 - r }) as f64;
        let s: Vec<f64> = (0..p).map(speed).collect();
        // 1000 work units at this rank's speed (1000 units per second).
        let secs = 1.0 / s[me];
        bal.record_phase(1000.0, std::time::Duration::from_secs_f64(secs))
            .expect("record_phase");
        let r = OwnershipRanges::new(&mut bal, shape, Some([p, 1, 1])).expect("ownership_ranges");
        let total: f64 = s.iter().sum();
        let ok =
            r.lx.iter()
                .zip(&s)
                .all(|(&c, &v)| (c as f64 - shape.0 as f64 * v / total).abs() <= 1.0);
        ctx.check(
            &format!("phases-follow-speeds-{round}"),
            ok,
            format!("lx {:?} for speeds {s:?}", r.lx),
        );
        println!("RESULT phases round {round} speeds={s:?} lx={:?}", r.lx);
    }
}

fn errors(ctx: &Ctx) {
    let case = ctx.args.first().cloned().unwrap_or_default();
    let rank = ctx.rank();
    let p = ctx.world.size() as usize;
    let last = rank as usize == p - 1;
    let res = Balancer::new(&ctx.world).and_then(|mut bal| {
        let r = match case.as_str() {
            "zero" => OwnershipRanges::new(&mut bal, (8, 0, 8), None),
            "product" => OwnershipRanges::new(&mut bal, (8, 8, 8), Some([p + 1, 1, 1])),
            "too-many" => OwnershipRanges::new(&mut bal, (1, 1, 8), Some([1, p, 1])),
            "shape" => OwnershipRanges::new(&mut bal, (8, if last { 7 } else { 8 }, 8), None),
            other => {
                return Err(nuce::Error::invalid_input(format!("unknown case {other}")));
            }
        };
        r.map(|_| ())
    });
    match res {
        Ok(()) => println!("ERR {rank} none"),
        Err(e) => println!("ERR {rank} {e}"),
    }
}
