//! Scenarios for save files of `DistArray3` (`DistArray3::save`,
//! `SavedGrid::new_array3`):
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

use mpi::traits::*;
use nuce::plan::array3d::Box3;
use nuce::{Balancer, DistArray3, Field, SavedGrid};

use crate::Ctx;

pub fn run(name: &str, ctx: &Ctx) -> bool {
    match name {
        "save-array3-write" => write(ctx),
        "save-array3-read" => read(ctx),
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

fn balancer(ctx: &Ctx, speeds: impl Fn(usize) -> f64) -> Balancer {
    let mut bal = Balancer::new(&ctx.world).expect("balancer");
    let s: Vec<f64> = (0..ctx.world.size() as usize).map(speeds).collect();
    bal.set_speeds(&s).expect("speeds");
    bal
}

fn write(ctx: &Ctx) {
    let bal = balancer(ctx, |r| (r + 1) as f64);
    let plan = bal.plan3((11, 14, 8), 2).expect("plan");
    let mut a = DistArray3::<f64>::new(bal.comm(), plan, 2, NCOMP).expect("array");
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
    let text = two
        .as_ref()
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default();
    ctx.check(
        "array3-wrong-ncomp",
        text.contains("16") && text.contains("24"),
        &text,
    );
    let all = nuce::collective::check_identical(&ctx.world, 0, "error", &text);
    ctx.check("array3-same-error", all.is_ok(), format!("{all:?}"));
    println!(
        "RESULT read ranks={p} saved_ranks={} volumes={}",
        saved.saved_ranks(),
        crate::comma_list(&a.plan().volumes())
    );
}
