//! Scenarios for save files of grids (`Grid::save`, `SavedGrid`):
//!
//! * `save-write DIR NX NY NZ` — a grid planned for speeds `1, 2, …, p`,
//!   two fields (1-byte and 24-byte cells, padding 2,1,1) holding their
//!   global values, a cost per cell, saved to `DIR/grid.nuce` with the user
//!   bytes `step=42`.
//! * `save-read DIR` — on any number of ranks, speeds `p, …, 2, 1`: opens
//!   `DIR/grid.nuce`, plans a grid for them, reads into buffers of another
//!   padding (1,2,1) filled with sentinels: every own cell holds its
//!   global value, every padding cell its sentinel, the cost and the user
//!   bytes are the saved ones.
//! * `save-errors DIR CASE` — the root copies `DIR/grid.nuce` to
//!   `DIR/CASE.nuce` spoilt by `CASE` (`truncated`, `data`: a flipped data
//!   byte, `header`: a flipped header byte, `format`: another format,
//!   `missing`, `fields`: read with other element sizes, `shape`: read
//!   into a grid of another shape, `path`: a save to a path that differs
//!   on the last rank); every rank prints `ERR rank error`.

use mpi::traits::*;
use nuce::plan::array3d::{Box3, Stencil};
use nuce::{Balancer, Field, Grid, SavedGrid};

use crate::Ctx;

pub fn run(name: &str, ctx: &Ctx) -> bool {
    match name {
        "save-write" => write(ctx),
        "save-read" => read(ctx),
        "save-errors" => errors(ctx),
        _ => return false,
    }
    true
}

const SENTINEL: u8 = 0xEE;

/// The value of byte `b` of field `f`'s cell with global id `id`.
fn value(id: u64, f: u64, b: u64) -> u8 {
    let h = (id + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15)
        ^ (f * 31 + b).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    (h >> 32) as u8
}

fn cost_of(i: usize, j: usize, k: usize) -> f64 {
    1.0 + ((i * 7 + j * 3 + k) % 5) as f64 * 0.25
}

/// The buffers of fields with 1- and 24-byte cells for `b` padded by `pad`,
/// own cells set to their values, padding to the sentinel (or all sentinel).
fn buffers(grid: &Grid, pad: [usize; 3], fill: bool) -> (Vec<u8>, Vec<[u8; 24]>) {
    let n = grid.padded_len(pad).expect("padded length");
    let mut a = vec![SENTINEL; n];
    let mut c = vec![[SENTINEL; 24]; n];
    if fill {
        for_own(grid, pad, |idx, id| {
            a[idx] = value(id, 0, 0);
            for (b, byte) in c[idx].iter_mut().enumerate() {
                *byte = value(id, 1, b as u64);
            }
        });
    }
    (a, c)
}

/// Calls `f(padded index, global id)` for every own cell.
fn for_own(grid: &Grid, pad: [usize; 3], mut f: impl FnMut(usize, u64)) {
    let b: Box3 = grid.local_box();
    let (_, n1, n2) = grid.global_shape();
    let d = [b.nx + 2 * pad[0], b.ny + 2 * pad[1], b.nz + 2 * pad[2]];
    for i in 0..b.nx {
        for j in 0..b.ny {
            for k in 0..b.nz {
                let idx = ((i + pad[0]) * d[1] + j + pad[1]) * d[2] + k + pad[2];
                let id = (((b.x + i) * n1 + b.y + j) * n2 + b.z + k) as u64;
                f(idx, id);
            }
        }
    }
}

fn path(ctx: &Ctx, name: &str) -> std::path::PathBuf {
    std::path::Path::new(&ctx.args[0]).join(name)
}

fn balancer(ctx: &Ctx, speeds: impl Fn(usize) -> f64) -> Balancer {
    let mut bal = Balancer::new(&ctx.world).expect("balancer");
    let p = ctx.world.size() as usize;
    let s: Vec<f64> = (0..p).map(speeds).collect();
    bal.set_speeds(&s).expect("speeds");
    bal
}

fn write(ctx: &Ctx) {
    let shape = (ctx.arg(1, 13), ctx.arg(2, 17), ctx.arg(3, 9));
    let mut bal = balancer(ctx, |r| (r + 1) as f64);
    let mut grid = Grid::new(&mut bal, shape, Stencil::seven(1)).expect("grid");
    let pad = [2, 1, 1];
    let (mut a, mut c) = buffers(&grid, pad, true);
    grid.set_cost_with(cost_of);
    let stats = grid
        .save(
            path(ctx, "grid.nuce"),
            &[Field::new(&mut a, pad), Field::new(&mut c, pad)],
            b"step=42",
        )
        .expect("save");
    let cells = shape.0 * shape.1 * shape.2;
    ctx.check(
        "save-bytes",
        stats.bytes >= (cells * (1 + 24 + 8)) as u64,
        format!("{stats:?}"),
    );
    println!(
        "RESULT save bytes={} seconds={}",
        stats.bytes, stats.seconds
    );
}

fn read(ctx: &Ctx) {
    let p = ctx.world.size() as usize;
    let mut bal = balancer(ctx, |r| (p - r) as f64);
    let saved = SavedGrid::open(&ctx.world, path(ctx, "grid.nuce")).expect("open");
    let mut grid = saved.new_grid(&mut bal).expect("grid");
    let pad = [1, 2, 1];
    let (mut a, mut c) = buffers(&grid, pad, false);
    saved
        .read(
            &mut grid,
            &mut [Field::new(&mut a, pad), Field::new(&mut c, pad)],
        )
        .expect("read");
    let (want_a, want_c) = buffers(&grid, pad, true);
    let wrong = a.iter().zip(&want_a).filter(|(x, y)| x != y).count()
        + c.iter().zip(&want_c).filter(|(x, y)| x != y).count();
    ctx.check("save-cells", wrong == 0, format!("{wrong} cells differ"));
    ctx.check(
        "save-user",
        saved.user() == b"step=42",
        format!("{:?}", saved.user()),
    );
    let b = grid.local_box();
    let mut want = Vec::new();
    for i in b.x..b.x + b.nx {
        for j in b.y..b.y + b.ny {
            for k in b.z..b.z + b.nz {
                want.push(cost_of(i, j, k));
            }
        }
    }
    let cost = grid.cost().map(|c| c.values().to_vec());
    ctx.check(
        "save-cost",
        cost.as_deref() == Some(&want[..]),
        format!("{cost:?}"),
    );
    println!(
        "RESULT read ranks={p} saved_ranks={} volumes={}",
        saved.saved_ranks(),
        crate::comma_list(&grid.plan().volumes())
    );
}

fn errors(ctx: &Ctx) {
    let case = ctx.args.get(1).cloned().unwrap_or_default();
    let src = path(ctx, "grid.nuce");
    let bad = path(ctx, &format!("{case}.nuce"));
    if ctx.rank() == 0 {
        let mut bytes = std::fs::read(&src).expect("the saved file");
        match case.as_str() {
            "truncated" => bytes.truncate(bytes.len() - 5),
            "data" => {
                let n = bytes.len();
                bytes[n.min(4096 + 3)] ^= 0x10;
            }
            "header" => bytes[30] ^= 0x01,
            "format" => bytes[8] = 7,
            _ => {}
        }
        if case != "missing" {
            std::fs::write(&bad, &bytes).expect("write the spoilt copy");
        }
    }
    ctx.world.barrier();
    let res = (|| -> nuce::Result<()> {
        let mut bal = Balancer::new(&ctx.world)?;
        if case == "path" {
            let grid = Grid::new(&mut bal, (4, 5, 6), Stencil::seven(1))?;
            let pad = [1, 1, 1];
            let mut a = vec![0u8; grid.padded_len(pad)?];
            let last = ctx.rank() == ctx.world.size() - 1;
            let name = if last { "other.nuce" } else { "path.nuce" };
            grid.save(path(ctx, name), &[Field::new(&mut a, pad)], b"")?;
            return Ok(());
        }
        let from = if matches!(case.as_str(), "fields" | "shape") {
            &src
        } else {
            &bad
        };
        let saved = SavedGrid::open(&ctx.world, from)?;
        let mut grid = if case == "shape" {
            Grid::new(&mut bal, (4, 5, 6), Stencil::seven(1))?
        } else {
            saved.new_grid(&mut bal)?
        };
        let pad = [1, 1, 1];
        let (mut a, mut c) = buffers(&grid, pad, false);
        if case == "fields" {
            let mut w = vec![0u64; grid.padded_len(pad)?];
            saved.read(
                &mut grid,
                &mut [Field::new(&mut a, pad), Field::new(&mut w, pad)],
            )
        } else {
            saved.read(
                &mut grid,
                &mut [Field::new(&mut a, pad), Field::new(&mut c, pad)],
            )
        }
    })();
    match res {
        Ok(()) => println!("ERR {} none", ctx.rank()),
        Err(e) => println!("ERR {} {e}", ctx.rank()),
    }
}
