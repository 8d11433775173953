//! Scenario for standby ranks that join arrays and graphs (`Pool::admit`
//! with `DistArray3`, `DistArray2` and `DistGraph`, `Joined::array3`,
//! `array2`, `graph`):
//!
//! * `join-data ACTIVE` — the first `ACTIVE` ranks run (speeds `1, …`) the
//!   10 × 9 × 8 two-component array and the 23 × 17 array of
//!   `depart_array`, holding their global values, and the `geo` graph of
//!   `save_graph` (values `value(v)`); the others wait in the pool. Every
//!   standby rank is admitted: on every rank of the grown communicator
//!   every own cell and vertex holds its global value (the graph: its
//!   generator's neighbours, weights and coordinates), the ghosts after an
//!   exchange too, and every rank owns cells and vertices. The root prints `RESULT join-data ranks=P
//!   volumes3=V areas2=A vertices=N`.

use mpi::traits::*;
use nuce::{Balancer, DistArray2, DistArray3, Pool};

use crate::depart_array::{filled2, filled3, wrong, wrong2};
use crate::save_graph::{geo, same_graph, value, whole, G, GEO};
use crate::Ctx;

pub fn run(name: &str, ctx: &Ctx) -> bool {
    match name {
        "join-data" => join(ctx),
        _ => return false,
    }
    true
}

fn join(ctx: &Ctx) {
    let active: usize = ctx.arg(0, 2);
    let standby = ctx.rank() as usize >= active;
    let mut pool = Pool::new(&ctx.world, standby).expect("pool");
    let (bal, mut a3, mut a2, g): (Balancer, DistArray3<f64>, DistArray2<f64>, G) = if standby {
        let Some(mut j) = pool.wait().expect("wait") else {
            ctx.check("join-data-admitted", false, "released");
            return;
        };
        let a3 = j.array3::<f64>().expect("array3");
        let a2 = j.array2::<f64>().expect("array2");
        let g = j.graph::<(f64, u32)>().expect("graph");
        (j.balancer, a3, a2, g)
    } else {
        let comm = pool.active().expect("active").duplicate();
        let mut bal = Balancer::new(&comm).expect("balancer");
        let s: Vec<f64> = (1..=comm.size()).map(f64::from).collect();
        bal.set_speeds(&s).expect("speeds");
        let (mut a3, mut a2, mut g) = (filled3(&bal), filled2(&bal), geo(&mut bal));
        let waiting = pool.waiting();
        pool.admit(&mut bal, waiting, &mut [&mut a3, &mut a2, &mut g])
            .expect("admit");
        (bal, a3, a2, g)
    };
    let p = bal.comm().size() as usize;
    // Own cells (a 2D array's ghosts are checked after the exchange).
    ctx.check(
        "join-data-own",
        wrong(&a3, false) == 0,
        format!("{} wrong", wrong(&a3, false)),
    );
    a3.exchange_ghosts().expect("exchange");
    a2.exchange_ghosts().expect("exchange");
    let values_ok = g
        .owned()
        .iter()
        .zip(g.values())
        .all(|(&v, x)| x.0.to_bits() == value(v).0.to_bits() && x.1 == value(v).1);
    ctx.check(
        "join-data-after-exchange",
        wrong(&a3, true) == 0
            && wrong2(&a2) == 0
            && values_ok
            && same_graph(&g, &whole(GEO, true), true),
        "cells, ghosts or the graph wrong",
    );
    ctx.check(
        "join-data-work",
        p == ctx.world.size() as usize
            && a3.local_box().volume() > 0
            && a2.rect().rows * a2.rect().cols > 0
            && !g.owned().is_empty(),
        format!("{:?} {:?} {}", a3.local_box(), a2.rect(), g.owned().len()),
    );
    let mut owned = vec![0usize; p];
    bal.comm().all_gather_into(&g.owned().len(), &mut owned[..]);
    if bal.comm().rank() == 0 {
        let areas: Vec<usize> = a2.plan().parts.iter().map(|r| r.rows * r.cols).collect();
        println!(
            "RESULT join-data ranks={p} volumes3={} areas2={} vertices={}",
            crate::comma_list(&a3.plan().volumes()),
            crate::comma_list(&areas),
            crate::comma_list(&owned)
        );
    }
    pool.release(&bal).expect("release");
}
