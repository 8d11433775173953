//! Scenario for a `DistGraph` whose ranks leave (`Departure::plan_graph`,
//! `Departure::finish` with graphs), on the graphs of `save_graph`:
//!
//! * `depart-graph KIND LEAVERS` — `KIND` is `geo` (strategy Geometric),
//!   `root` (RootIndex, the index on rank 0) or `manual` (scattered with a
//!   block partition, no coordinates); speeds `1, …, p`. `STEPS` steps of
//!   the neighbour average, then the ranks of `LEAVERS` (comma-separated)
//!   leave: the graph moves to the others (a leaving rank owns nothing),
//!   `finish` splits the communicator, and on the ranks that stay the
//!   successor is the same global graph; `STEPS` more steps (and, but for
//!   `manual`, a balance point) give values bit-identical to `2 · STEPS`
//!   steps of a serial run. A leaving rank prints `RELEASED rank`; the new
//!   root `RESULT depart-graph ranks=P' moved=M minimum=L works=W
//!   after_balance=B`, `L` the vertices the leaving ranks held, `W` the
//!   ranks' work (vertex weights) after the move, `B` after the balance
//!   point (for the measured speeds).

use mpi::traits::*;
use nuce::collective::sum_f64;
use nuce::{DistGraph, Partition};

use crate::save_graph::{flat, geo, same_graph, serial, step, value, whole, FLAT, G, GEO, STEPS};
use crate::Ctx;

pub fn run(name: &str, ctx: &Ctx) -> bool {
    match name {
        "depart-graph" => graph(ctx),
        _ => return false,
    }
    true
}

/// The `manual` graph: the flat grid scattered by blocks of ids.
fn manual(ctx: &Ctx) -> G {
    let p = ctx.world.size() as usize;
    let root = ctx.rank() == 0;
    let n = FLAT.0 * FLAT.1;
    let g = root.then(|| whole(FLAT, false));
    let part = Partition::new(p, (0..n).map(|v| v * p / n).collect()).expect("partition");
    let values: Vec<(f64, u32)> = (0..n).map(value).collect();
    DistGraph::scatter_with_partition(
        &ctx.world,
        0,
        g.as_ref(),
        root.then_some(&part),
        root.then_some(&values[..]),
    )
    .expect("scatter")
}

fn graph(ctx: &Ctx) {
    let kind = ctx.args[0].clone();
    let (leavers, mut bal) = crate::depart::leavers_and_balancer(ctx, &ctx.args[1]);
    let (mut g, dims) = match kind.as_str() {
        "geo" => (geo(&mut bal), GEO),
        "root" => (flat(&mut bal), FLAT),
        _ => (manual(ctx), FLAT),
    };
    let coords = kind == "geo";
    let w = whole(dims, coords);
    for _ in 0..STEPS {
        step(&mut g);
    }
    let leaving = leavers.contains(&(ctx.rank() as usize));
    let held = if leaving { g.owned().len() } else { 0 };
    let minimum = sum_f64(&ctx.world, held as f64) as u64;
    let dep = bal.depart(leaving).expect("depart");
    let st = dep.plan_graph(&bal, &mut g).expect("move the graph");
    ctx.check(
        "depart-graph-moved",
        (!leaving || g.owned().is_empty()) && same_graph(&g, &w, coords),
        format!("{} vertices left on a leaving rank", g.owned().len()),
    );
    let Some(comm) = dep.finish(&mut bal, &mut [&mut g]).expect("finish") else {
        println!("RELEASED {}", ctx.rank());
        return;
    };
    let mut moved_works = vec![0.0f64; comm.size() as usize];
    comm.all_gather_into(&g.local_work(), &mut moved_works[..]);
    ctx.check(
        "depart-graph-successor",
        g.comm().size() == comm.size() && same_graph(&g, &w, coords),
        "the graph differs",
    );
    for k in 0..STEPS {
        if k == 1 && kind != "manual" {
            bal.maybe_remap(&mut g, 1).expect("a balance point");
        }
        step(&mut g);
    }
    if let Some(got) = g.gather(0).expect("gather") {
        let want = serial(&w, 2 * STEPS);
        let same = got.len() == want.len()
            && got
                .iter()
                .zip(&want)
                .all(|(a, b)| a.0.to_bits() == b.0.to_bits() && a.1 == b.1);
        ctx.check(
            "depart-graph-values",
            same,
            "values differ from the serial run",
        );
    }
    let mut works = vec![0.0f64; comm.size() as usize];
    comm.all_gather_into(&g.local_work(), &mut works[..]);
    if comm.rank() == 0 {
        println!(
            "RESULT depart-graph ranks={} moved={} minimum={minimum} works={} after_balance={}",
            comm.size(),
            st.moved_vertices,
            list(&moved_works),
            list(&works)
        );
    }
}

fn list(v: &[f64]) -> String {
    v.iter()
        .map(|w| w.to_string())
        .collect::<Vec<_>>()
        .join(",")
}
