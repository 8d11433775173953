//! Scenarios for checkpoints with the balancer's speed state
//! (`Grid::checkpoint`, `DistArray2::checkpoint`, `SavedSpeeds`):
//!
//! * `speeds-write DIR` — speeds `1, …, p`: a 13 × 17 × 9 grid with one
//!   field (each cell its global id) checkpointed to `DIR/grid.nuce`, the
//!   `root` graph of `save_graph` to `DIR/graph.nuce`; then a phase of the
//!   graph timed by `maybe_remap` (phase speeds with noise, every rank's
//!   speed function) checkpointed to `DIR/timed.nuce`, opened again: the
//!   speeds, estimates and this rank's function are bit-identical.
//!   `RESULT speeds-write grid=BOXES graph=WORKS` on the root.
//! * `speeds-read DIR` — any number of ranks, a balancer with no speeds:
//!   every file reports the saved ranks' speeds; the grid's cells come
//!   back. On as many ranks as saved: the balancer starts from the saved
//!   speeds bit-identical (no measurement) and the timed file gives back
//!   this rank's speed function; `RESULT speeds-read grid=BOXES
//!   graph=WORKS` (the writer's when the plans are the saved ones). On
//!   another number: the balancer still knows no speeds.
//! * `speeds-errors DIR CASE` — the root copies `DIR/grid.nuce` with a
//!   flipped byte of the saved speeds (`speeds`) or cut inside them
//!   (`cut`) to `DIR/CASE.nuce` and opens it: `ERR rank error` per rank.

use mpi::traits::*;
use nuce::plan::array3d::Stencil;
use nuce::Field;
use nuce::{Balancer, Grid, SavedGraph, SavedGrid, SavedSpeeds};

use crate::save_graph::{flat, step, G, STEPS};
use crate::Ctx;

pub fn run(name: &str, ctx: &Ctx) -> bool {
    match name {
        "speeds-write" => write(ctx),
        "speeds-read" => read(ctx),
        "speeds-errors" => errors(ctx),
        _ => return false,
    }
    true
}

const SHAPE: (usize, usize, usize) = (13, 17, 9);
const PAD: [usize; 3] = [1, 1, 1];

fn path(ctx: &Ctx, name: &str) -> std::path::PathBuf {
    std::path::Path::new(&ctx.args[0]).join(name)
}

/// The field of `grid`: every own cell its global id, padding 0.
fn field(grid: &Grid) -> Vec<u64> {
    let mut a = vec![0u64; grid.padded_len(PAD).expect("padded length")];
    let b = grid.local_box();
    let (_, n1, n2) = SHAPE;
    let d = [b.nx + 2, b.ny + 2, b.nz + 2];
    for i in 0..b.nx {
        for j in 0..b.ny {
            for k in 0..b.nz {
                a[((i + 1) * d[1] + j + 1) * d[2] + k + 1] =
                    (((b.x + i) * n1 + b.y + j) * n2 + b.z + k) as u64;
            }
        }
    }
    a
}

/// Every bit of the speeds and estimates.
fn bits(speeds: &[f64], estimates: &[nuce::plan::fpm::SpeedEstimate]) -> Vec<u64> {
    let mut v: Vec<u64> = speeds.iter().map(|x| x.to_bits()).collect();
    v.extend(
        estimates
            .iter()
            .flat_map(|e| [e.mean.to_bits(), e.noise.to_bits()]),
    );
    v
}

/// Every bit of a speed function's points and noise.
fn function_bits(f: Option<&nuce::plan::fpm::SpeedFunction>) -> Option<Vec<u64>> {
    f.map(|f| {
        let mut v: Vec<u64> = f
            .points()
            .iter()
            .flat_map(|&(x, t)| [x.to_bits(), t.to_bits()])
            .collect();
        v.push(f.noise().to_bits());
        v
    })
}

/// Whether the balancer's speed state is `saved`'s, bit for bit, this
/// rank's speed function included.
fn restored(ctx: &Ctx, bal: &Balancer, saved: &SavedSpeeds) -> bool {
    let now = bits(
        bal.measured().speeds().unwrap_or_default(),
        bal.measured().speed_estimates().unwrap_or_default(),
    );
    now == bits(&saved.speeds, &saved.estimates)
        && function_bits(bal.measured().speed_function())
            == function_bits(saved.functions[ctx.rank() as usize].as_ref())
}

/// The grid's boxes and the graph's work per rank, as the root prints them.
fn plans(ctx: &Ctx, grid: &Grid, g: &G) -> String {
    let mut works = vec![0.0f64; ctx.world.size() as usize];
    ctx.world.all_gather_into(&g.local_work(), &mut works[..]);
    let boxes: Vec<String> = grid
        .plan()
        .boxes
        .iter()
        .map(|b| format!("{},{},{}+{},{},{}", b.x, b.y, b.z, b.nx, b.ny, b.nz))
        .collect();
    let works: Vec<String> = works.iter().map(|w| w.to_string()).collect();
    format!("grid={} graph={}", boxes.join(";"), works.join(","))
}

fn write(ctx: &Ctx) {
    let p = ctx.world.size() as usize;
    let mut bal = Balancer::new(&ctx.world).expect("balancer");
    let s: Vec<f64> = (1..=p).map(|r| r as f64).collect();
    bal.set_speeds(&s).expect("speeds");
    let grid = Grid::new(&mut bal, SHAPE, Stencil::seven(1)).expect("grid");
    let mut a = field(&grid);
    grid.checkpoint(
        &bal,
        path(ctx, "grid.nuce"),
        &[Field::new(&mut a, PAD)],
        b"",
    )
    .expect("checkpoint the grid");
    let mut g = flat(&mut bal);
    g.checkpoint(&bal, path(ctx, "graph.nuce"), b"")
        .expect("checkpoint the graph");
    let line = plans(ctx, &grid, &g);
    // A timed phase: phase speeds with their noise, speed functions.
    for _ in 0..STEPS {
        step(&mut g);
    }
    bal.maybe_remap(&mut g, STEPS).expect("balance point");
    g.checkpoint(&bal, path(ctx, "timed.nuce"), b"")
        .expect("checkpoint the timed graph");
    let saved = SavedGraph::open(&ctx.world, path(ctx, "timed.nuce")).expect("open");
    let sv = saved.speeds().expect("saved speeds");
    ctx.check(
        "speeds-round-trip",
        sv.ranks() == p && restored(ctx, &bal, sv) && bal.measured().speed_function().is_some(),
        format!("{sv:?} {:?}", bal.measured().speed_estimates()),
    );
    if ctx.rank() == 0 {
        println!("RESULT speeds-write {line}");
    }
}

fn read(ctx: &Ctx) {
    let p = ctx.world.size() as usize;
    let mut bal = Balancer::new(&ctx.world).expect("balancer");
    let saved = SavedGrid::open(&ctx.world, path(ctx, "grid.nuce")).expect("open");
    let saved_ranks = saved.speeds().map_or(0, SavedSpeeds::ranks);
    let mut grid = saved.new_grid(&mut bal).expect("grid");
    let mut a = vec![0u64; grid.padded_len(PAD).expect("padded length")];
    saved
        .read(&mut grid, &mut [Field::new(&mut a, PAD)])
        .expect("read");
    ctx.check("speeds-cells", a == field(&grid), "cells differ");
    let same = p == saved_ranks;
    ctx.check(
        "speeds-grid",
        saved_ranks == 3
            && if same {
                saved.speeds().is_some_and(|s| restored(ctx, &bal, s))
            } else {
                bal.measured().speeds().is_none()
            },
        format!("{:?} {:?}", saved.speeds(), bal.measured().speeds()),
    );
    let sg = SavedGraph::open(&ctx.world, path(ctx, "graph.nuce")).expect("open");
    let g: G = sg.new_graph(&mut bal).expect("graph");
    ctx.check(
        "speeds-graph",
        sg.speeds() == saved.speeds(),
        format!("{:?}", sg.speeds()),
    );
    let line = plans(ctx, &grid, &g);
    if same {
        let mut fresh = Balancer::new(&ctx.world).expect("balancer");
        let timed = SavedGraph::open(&ctx.world, path(ctx, "timed.nuce")).expect("open");
        let _: G = timed.new_graph(&mut fresh).expect("graph");
        let sv = timed.speeds().expect("saved speeds");
        ctx.check(
            "speeds-timed",
            restored(ctx, &fresh, sv) && sv.functions.iter().all(Option::is_some),
            format!("{sv:?}"),
        );
    }
    if ctx.rank() == 0 {
        println!("RESULT speeds-read {line}");
    }
}

fn errors(ctx: &Ctx) {
    let case = ctx.args.get(1).cloned().unwrap_or_default();
    let bad = path(ctx, &format!("{case}.nuce"));
    if ctx.rank() == 0 {
        let mut bytes = std::fs::read(path(ctx, "grid.nuce")).expect("the saved file");
        // The saved speeds 1, 2, 3 are in the header: rank 2's speed.
        let three = 3.0f64.to_bits().to_le_bytes();
        let at = bytes
            .windows(8)
            .position(|w| w == three)
            .expect("the speed 3 in the header");
        match case.as_str() {
            "speeds" => bytes[at + 6] ^= 0x01,
            "cut" => bytes.truncate(at + 4),
            _ => {}
        }
        std::fs::write(&bad, &bytes).expect("write the spoilt copy");
    }
    ctx.world.barrier();
    let res = (|| -> nuce::Result<()> {
        let mut bal = Balancer::new(&ctx.world)?;
        let saved = SavedGrid::open(&ctx.world, &bad)?;
        saved.new_grid(&mut bal).map(|_| ())
    })();
    match res {
        Ok(()) => println!("ERR {} none", ctx.rank()),
        Err(e) => println!("ERR {} {e}", ctx.rank()),
    }
}
