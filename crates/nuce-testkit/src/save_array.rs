//! Scenarios for save files of `DistArray3` and `DistArray2`
//! (`DistArray3::save`, `SavedGrid::new_array3`, `DistArray2::save`,
//! `SavedGrid::new_array2`):
//!
//! * `save-array3-write DIR` — a 11 × 14 × 8 array, 3 components of `f64`,
//!   ghost 2, planned for speeds `1, 2, …, p`, holding its global values,
//!   with a cost per cell, saved to `DIR/array3.nuce` with the user bytes
//!   `t=0.5`.
//! * `save-array3-read DIR` — on any number of ranks, speeds `p, …, 1`:
//!   the array restarted with ghost 1 holds every own cell's value, the
//!   cost and the user bytes; the same file read as a grid of one 24-byte
//!   field holds the same cells; reading with 2 components is the same
//!   error on every rank.
//! * `save-array2-write DIR` — a 23 × 17 array of `f32`, ghost 1, speeds
//!   `1, …, p`, with a cost per cell, saved to `DIR/array2.nuce`.
//! * `save-array2-read DIR` — speeds `p, …, 1`, ghost 2: every own cell,
//!   the cost and the user bytes as saved; `f64` cells, or the 3D file
//!   read as a 2D array, are the same error on every rank.

use mpi::traits::*;
use nuce::plan::array3d::Box3;
use nuce::{Balancer, DistArray2, DistArray3, Field, SavedGrid};

use crate::Ctx;

pub fn run(name: &str, ctx: &Ctx) -> bool {
    match name {
        "save-array3-write" => write(ctx),
        "save-array3-read" => read(ctx),
        "save-array2-write" => write2(ctx),
        "save-array2-read" => read2(ctx),
        _ => return false,
    }
    true
}

const NCOMP: usize = 3;

fn value(i: usize, j: usize, k: usize, c: usize) -> f64 {
    (((i * 100 + j) * 100 + k) * 10 + c) as f64 + 0.25
}

fn cost_of(i: usize, j: usize, k: usize) -> f64 {
    1.0 + ((i + 2 * j + 3 * k) % 4) as f64 * 0.5
}

fn cells(b: &Box3) -> impl Iterator<Item = (usize, usize, usize)> + '_ {
    (b.x..b.x + b.nx).flat_map(move |i| {
        (b.y..b.y + b.ny).flat_map(move |j| (b.z..b.z + b.nz).map(move |k| (i, j, k)))
    })
}

fn file(ctx: &Ctx) -> std::path::PathBuf {
    std::path::Path::new(&ctx.args[0]).join("array3.nuce")
}

fn file2(ctx: &Ctx) -> std::path::PathBuf {
    std::path::Path::new(&ctx.args[0]).join("array2.nuce")
}

fn value2(i: usize, j: usize) -> f32 {
    (i * 100 + j) as f32 + 0.5
}

/// Every own cell of `a` holds its value.
fn holds2(a: &DistArray2<f32>) -> bool {
    let r = a.rect();
    a.local()
        .indexed_iter()
        .all(|((i, j), v)| *v == value2(r.row + i, r.col + j))
}

fn write2(ctx: &Ctx) {
    let bal = balancer(ctx, |r| (r + 1) as f64);
    let plan = bal.plan(23, 17).expect("plan");
    let mut a = DistArray2::<f32>::with_plan(bal.comm(), plan, 1).expect("array");
    let r = a.rect();
    a.local_mut()
        .indexed_iter_mut()
        .for_each(|((i, j), v)| *v = value2(r.row + i, r.col + j));
    a.set_cost_with(|i, j| cost_of(i, j, 0));
    let stats = a.save(file2(ctx), b"2d").expect("save");
    ctx.check(
        "array2-save-bytes",
        stats.bytes >= (23 * 17 * (4 + 8)) as u64,
        format!("{stats:?}"),
    );
}

fn read2(ctx: &Ctx) {
    let p = ctx.world.size() as usize;
    let mut bal = balancer(ctx, |r| (p - r) as f64);
    let saved = SavedGrid::open(&ctx.world, file2(ctx)).expect("open");
    let a: DistArray2<f32> = saved.new_array2(&mut bal, 2).expect("restart");
    ctx.check("array2-cells", holds2(&a), "cells differ");
    let r = a.rect();
    let want: Vec<f64> = (r.row..r.row + r.rows)
        .flat_map(|i| (r.col..r.col + r.cols).map(move |j| cost_of(i, j, 0)))
        .collect();
    let cost = a.cost().map(|c| c.values().to_vec());
    ctx.check(
        "array2-cost",
        cost.as_deref() == Some(&want[..]),
        format!("{cost:?}"),
    );
    ctx.check(
        "array2-user",
        saved.user() == b"2d",
        format!("{:?}", saved.user()),
    );
    let wide = saved.new_array2::<f64>(&mut bal, 1).map(|_| ());
    same_error(ctx, "array2-wrong-type", wide, &["8", "4"]);
    let three = SavedGrid::open(&ctx.world, file(ctx))
        .and_then(|s| s.new_array2::<f32>(&mut bal, 1))
        .map(|_| ());
    same_error(ctx, "array2-of-a-3d-file", three, &["not a 2D array"]);
    println!(
        "RESULT read2 ranks={p} saved_ranks={} areas={}",
        saved.saved_ranks(),
        crate::comma_list(
            &a.plan()
                .parts
                .iter()
                .map(|r| r.rows * r.cols)
                .collect::<Vec<_>>()
        )
    );
}

/// `res` is an error containing each of `needles`, the same on every rank.
fn same_error(ctx: &Ctx, name: &str, res: nuce::Result<()>, needles: &[&str]) {
    let text = res.err().map(|e| e.to_string()).unwrap_or_default();
    ctx.check(
        name,
        !text.is_empty() && needles.iter().all(|n| text.contains(n)),
        &text,
    );
    let all = nuce::collective::check_identical(&ctx.world, 0, "error", &text);
    ctx.check(
        &format!("{name}-everywhere"),
        all.is_ok(),
        format!("{all:?}"),
    );
}

fn balancer(ctx: &Ctx, speeds: impl Fn(usize) -> f64) -> Balancer {
    let mut bal = Balancer::new(&ctx.world).expect("balancer");
    let s: Vec<f64> = (0..ctx.world.size() as usize).map(speeds).collect();
    bal.set_speeds(&s).expect("speeds");
    bal
}

fn write(ctx: &Ctx) {
    let bal = balancer(ctx, |r| (r + 1) as f64);
    let plan = bal.plan3((11, 14, 8), 2).expect("plan");
    let mut a = DistArray3::<f64>::with_plan(bal.comm(), plan, 2, NCOMP).expect("array");
    let b = a.local_box();
    for (i, j, k) in cells(&b) {
        for c in 0..NCOMP {
            let at = a.index(i, j, k, c);
            a.padded_mut()[at] = value(i, j, k, c);
        }
    }
    a.set_cost_with(cost_of);
    let stats = a.save(file(ctx), b"t=0.5").expect("save");
    // Every cell's 3 values and its cost, and the header.
    ctx.check(
        "array3-save-bytes",
        stats.bytes >= (11 * 14 * 8 * (NCOMP + 1) * 8) as u64,
        format!("{stats:?}"),
    );
    println!("RESULT save bytes={}", stats.bytes);
}

fn read(ctx: &Ctx) {
    let p = ctx.world.size() as usize;
    let mut bal = balancer(ctx, |r| (p - r) as f64);
    let saved = SavedGrid::open(&ctx.world, file(ctx)).expect("open");
    let a: DistArray3<f64> = saved.new_array3(&mut bal, 1, NCOMP).expect("restart");
    let b = a.local_box();
    let wrong = cells(&b)
        .filter(|&(i, j, k)| {
            (0..NCOMP).any(|c| a.padded()[a.index(i, j, k, c)] != value(i, j, k, c))
        })
        .count();
    ctx.check("array3-cells", wrong == 0, format!("{wrong} cells differ"));
    let want: Vec<f64> = cells(&b).map(|(i, j, k)| cost_of(i, j, k)).collect();
    let cost = a.cost().map(|c| c.values().to_vec());
    ctx.check(
        "array3-cost",
        cost.as_deref() == Some(&want[..]),
        format!("{cost:?}"),
    );
    ctx.check(
        "array3-user",
        saved.user() == b"t=0.5",
        format!("{:?}", saved.user()),
    );
    // The same file as a grid of one 24-byte field (the saved ghost
    // width, 2, as its padding).
    let mut grid = saved.new_grid(&mut bal).expect("grid");
    let pad = [2; 3];
    let mut cells3 = vec![[0.0f64; NCOMP]; grid.padded_len(pad).expect("len")];
    saved
        .read(&mut grid, &mut [Field::new(&mut cells3, pad)])
        .expect("read as a grid");
    let gb = grid.local_box();
    let (d1, d2) = (gb.ny + 4, gb.nz + 4);
    let same = cells(&gb).all(|(i, j, k)| {
        let v = cells3[((i - gb.x + 2) * d1 + (j - gb.y + 2)) * d2 + (k - gb.z + 2)];
        (0..NCOMP).all(|c| v[c] == value(i, j, k, c))
    });
    ctx.check("array3-as-grid", same, "cells differ");
    // Two components where three were saved: the same error everywhere.
    let two = saved.new_array3::<f64>(&mut bal, 1, 2).map(|_| ());
    same_error(ctx, "array3-wrong-ncomp", two, &["16", "24"]);
    println!(
        "RESULT read ranks={p} saved_ranks={} volumes={}",
        saved.saved_ranks(),
        crate::comma_list(&a.plan().volumes())
    );
}
