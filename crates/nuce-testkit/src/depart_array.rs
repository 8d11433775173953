//! Scenario for a `DistArray3` whose ranks leave (`Departure::plan_array3`,
//! `Departure::finish` with arrays):
//!
//! * `depart-array3 LEAVERS` — a 10 × 9 × 8 array of two `f64` components,
//!   ghost 1, planned for speeds `1, …, p`, holding its global values;
//!   the ranks of `LEAVERS` (comma-separated) leave: the array is moved to
//!   the others, `finish` splits the communicator, and on the ranks that
//!   stay the successor holds every own cell, its ghosts after an exchange,
//!   and takes a balance point on the new communicator. A leaving rank
//!   prints `RELEASED rank`; the new root `RESULT depart3 ranks=P'
//!   volumes=V`.
//! * `depart-array2 LEAVERS` — the same for a 23 × 17 `DistArray2<f64>`,
//!   ghost 1: every own cell after the move, every own cell and ghost on
//!   the new communicator and after a balance point. The new root prints
//!   `RESULT depart2 ranks=P' areas=A after_balance=B`
//!   (the rectangles' areas after the move, and after the balance point).

use mpi::traits::*;
use nuce::{Balancer, DistArray2, DistArray3};

use crate::Ctx;

pub fn run(name: &str, ctx: &Ctx) -> bool {
    match name {
        "depart-array3" => array3(ctx),
        "depart-array2" => array2(ctx),
        _ => return false,
    }
    true
}

pub(crate) const SHAPE: (usize, usize, usize) = (10, 9, 8);

fn value(i: usize, j: usize, k: usize, c: usize) -> f64 {
    (((i * 100 + j) * 100 + k) * 2 + c) as f64
}

/// Values of `a`'s own cells (and its face ghosts with `ghosts`) that
/// differ from the global ones.
pub(crate) fn wrong(a: &DistArray3<f64>, ghosts: bool) -> usize {
    let b = a.local_box();
    crate::array3::cells_and_ghosts(a, false)
        .into_iter()
        .filter(|&(i, j, k)| ghosts || b.contains(i, j, k))
        .map(|(i, j, k)| {
            (0..2)
                .filter(|&c| a.padded()[a.index(i, j, k, c)] != value(i, j, k, c))
                .count()
        })
        .sum()
}

/// The 3D array planned for the balancer's speeds, holding its global values.
pub(crate) fn filled3(bal: &Balancer) -> DistArray3<f64> {
    let plan = bal.plan3(SHAPE, 1).expect("plan");
    let mut a = DistArray3::<f64>::with_plan(bal.comm(), plan, 1, 2).expect("array");
    let b = a.local_box();
    for i in b.x..b.hi(0) {
        for j in b.y..b.hi(1) {
            for k in b.z..b.hi(2) {
                for c in 0..2 {
                    let at = a.index(i, j, k, c);
                    a.padded_mut()[at] = value(i, j, k, c);
                }
            }
        }
    }
    a
}

/// The 2D array planned for the balancer's speeds, holding its global values.
pub(crate) fn filled2(bal: &Balancer) -> DistArray2<f64> {
    let plan = bal.plan(SHAPE2.0, SHAPE2.1).expect("plan");
    let mut a = DistArray2::<f64>::with_plan(bal.comm(), plan, 1).expect("array");
    let r = a.rect();
    a.local_mut()
        .indexed_iter_mut()
        .for_each(|((i, j), v)| *v = value2(r.row + i, r.col + j));
    a
}

fn array3(ctx: &Ctx) {
    let (leavers, mut bal) = crate::depart::leavers_and_balancer(ctx, &ctx.args[0]);
    let mut a = filled3(&bal);
    let dep = bal
        .depart(leavers.contains(&(ctx.rank() as usize)))
        .expect("depart");
    dep.plan_array3(&bal, &mut a).expect("move the array");
    ctx.check(
        "depart3-moved",
        wrong(&a, false) == 0 && (!dep.is_leaving() || a.local_box().is_empty()),
        format!("{:?}", a.local_box()),
    );
    let Some(comm) = dep.finish(&mut bal, &mut [&mut a]).expect("finish") else {
        println!("RELEASED {}", ctx.rank());
        return;
    };
    a.exchange_ghosts().expect("exchange");
    ctx.check(
        "depart3-successor",
        a.comm().size() == comm.size() && wrong(&a, true) == 0,
        format!("{} wrong", wrong(&a, true)),
    );
    bal.maybe_remap(&mut a, 1).expect("a balance point");
    a.exchange_ghosts().expect("exchange");
    ctx.check("depart3-end", wrong(&a, true) == 0, "cells wrong");
    if comm.rank() == 0 {
        println!(
            "RESULT depart3 ranks={} volumes={}",
            comm.size(),
            crate::comma_list(&a.plan().volumes())
        );
    }
}

pub(crate) const SHAPE2: (usize, usize) = (23, 17);

fn value2(i: usize, j: usize) -> f64 {
    (i * 1000 + j) as f64 + 0.5
}

/// Values of `a`'s own cells and ghosts that differ from the global ones.
pub(crate) fn wrong2(a: &DistArray2<f64>) -> usize {
    let (r, g) = (a.rect(), a.ghost() as isize);
    if r.is_empty() {
        return 0;
    }
    a.padded()
        .indexed_iter()
        .filter(|&((i, j), &v)| {
            let (gi, gj) = (
                r.row as isize + i as isize - g,
                r.col as isize + j as isize - g,
            );
            let inside = gi >= 0 && gj >= 0 && (gi as usize) < SHAPE2.0 && (gj as usize) < SHAPE2.1;
            inside && v != value2(gi as usize, gj as usize)
        })
        .count()
}

fn array2(ctx: &Ctx) {
    let (leavers, mut bal) = crate::depart::leavers_and_balancer(ctx, &ctx.args[0]);
    let mut a = filled2(&bal);
    let dep = bal
        .depart(leavers.contains(&(ctx.rank() as usize)))
        .expect("depart");
    dep.plan_array2(&bal, &mut a).expect("move the array");
    let own_wrong = {
        let r = a.rect();
        a.local()
            .indexed_iter()
            .filter(|&((i, j), &v)| v != value2(r.row + i, r.col + j))
            .count()
    };
    ctx.check(
        "depart2-moved",
        own_wrong == 0 && (!dep.is_leaving() || a.rect().is_empty()),
        format!("{:?}, {own_wrong} wrong", a.rect()),
    );
    let Some(comm) = dep.finish(&mut bal, &mut [&mut a]).expect("finish") else {
        println!("RELEASED {}", ctx.rank());
        return;
    };
    let areas = |a: &DistArray2<f64>| {
        let v: Vec<usize> = a.plan().parts.iter().map(|r| r.rows * r.cols).collect();
        crate::comma_list(&v)
    };
    let moved = areas(&a);
    a.exchange_ghosts().expect("exchange");
    let wrong = wrong2(&a);
    ctx.check(
        "depart2-successor",
        a.comm().size() == comm.size() && wrong == 0,
        format!("{wrong} wrong"),
    );
    bal.maybe_remap(&mut a, 1).expect("a balance point");
    a.exchange_ghosts().expect("exchange");
    ctx.check("depart2-end", wrong2(&a) == 0, "cells wrong");
    if comm.rank() == 0 {
        println!(
            "RESULT depart2 ranks={} areas={moved} after_balance={}",
            comm.size(),
            areas(&a)
        );
    }
}
