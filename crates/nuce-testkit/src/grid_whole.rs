//! Scenarios for a grid's field as one whole array at a root
//! (`Grid::scatter`, `Grid::gather`):
//!
//! * `grid-whole NX NY NZ` — random box tilings (empty boxes included),
//!   every rank the root in turn, fields of 1-, 8- and 24-byte cells with
//!   paddings up to 2 wider than the ghost: a scatter writes exactly this
//!   rank's cells (every padded and ghost cell keeps its sentinel), and a
//!   gather gives the root every cell's value (and writes nothing
//!   elsewhere).
//! * `grid-whole-errors CASE` — `root-length` (the root's array one cell
//!   short), `field-length` (the last rank's field one cell too long), `elem`
//!   (4-byte cells on the last rank, 8 elsewhere), `root` (a root that is no
//!   rank), `pending` (a remap pending): `ERR rank error` lines, then
//!   `AFTER rank gather=true|false` (the same grid still gathers).

use mpi::traits::*;
use nuce::plan::array3d::Stencil;
use nuce::{Grid, Layout};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

use crate::array3::random_tiling3;
use crate::grid::{filled, holds, id, shape_args, TestCell};
use crate::Ctx;

pub fn run(name: &str, ctx: &Ctx) -> bool {
    match name {
        "grid-whole" => whole(ctx),
        "grid-whole-errors" => errors(ctx),
        _ => return false,
    }
    true
}

/// The whole grid's values of `field` (C order).
fn global<T: TestCell>(l: &Layout, field: u64) -> Vec<T> {
    let (nx, ny, nz) = l.plan().shape;
    (0..nx * ny * nz)
        .map(|c| T::make(c as u64, field))
        .collect()
}

/// One scatter and one gather of a `T` field with `pad` on `grid`, with
/// `root`: true when both are exact.
fn round<T: TestCell>(grid: &Grid, root: i32, pad: [usize; 3], field: u64) -> bool {
    let l = grid.layout();
    let at_root = grid.comm().rank() == root;
    let g: Option<Vec<T>> = at_root.then(|| global(l, field));
    let mut u = vec![T::sentinel(); l.padded_len(pad).expect("padding")];
    grid.scatter(root, g.as_deref(), &mut u, pad)
        .expect("scatter");
    let mut ok = holds(l, &u, pad, field, false);
    // Gather other values: each rank's own cells of field + 1.
    let v: Vec<T> = filled(l, pad, field + 1);
    let mut back: Option<Vec<T>> = at_root.then(|| vec![T::sentinel(); g.map_or(0, |g| g.len())]);
    grid.gather(root, &v, pad, back.as_deref_mut())
        .expect("gather");
    if let Some(back) = back {
        let (_, ny, nz) = l.plan().shape;
        ok &= back.iter().enumerate().all(|(c, x)| {
            let (i, j, k) = (c / (ny * nz), c / nz % ny, c % nz);
            *x == T::make(id(l.plan().shape, i, j, k), field + 1)
        });
    }
    ok
}

fn whole(ctx: &Ctx) {
    let shape = shape_args(ctx);
    let p = ctx.world.size() as usize;
    let mut rng = ChaCha8Rng::seed_from_u64(59);
    let mut ok = true;
    for t in 0..6 {
        let ghost = 1 + t % 2;
        let stencil = if t % 3 == 0 {
            Stencil::twenty_seven(ghost)
        } else {
            Stencil::seven(ghost)
        };
        let plan = random_tiling3(shape, p, &mut rng);
        let grid = Grid::with_plan(&ctx.world, plan, stencil).expect("grid");
        let root = (t % p) as i32;
        ok &= round::<u64>(&grid, root, [ghost, ghost + 1, ghost], 0);
        ok &= round::<u8>(&grid, root, [ghost + 2, ghost, ghost + 1], 3);
        ok &= round::<[u64; 3]>(&grid, root, [ghost, ghost, ghost + 2], 5);
    }
    ctx.check(
        "grid-whole-data",
        ok,
        "a cell was lost, misplaced or written outside its box",
    );
}

fn errors(ctx: &Ctx) {
    let case = ctx.args.first().cloned().unwrap_or_default();
    let rank = ctx.rank() as usize;
    let last = ctx.world.size() as usize - 1;
    let p = ctx.world.size() as usize;
    let pad = [1, 1, 1];
    let mut rng = ChaCha8Rng::seed_from_u64(61);
    let plan = random_tiling3((6, 5, 7), p, &mut rng);
    let mut grid = Grid::with_plan(&ctx.world, plan, Stencil::seven(1)).expect("grid");
    let n = grid.padded_len(pad).expect("padding");
    let cells = 6 * 5 * 7;
    let r = (|| {
        let mut whole = vec![0u64; cells - usize::from(case == "root-length")];
        let mut u = vec![0u64; n + usize::from(case == "field-length" && rank == last)];
        match case.as_str() {
            "elem" if rank == last => {
                let v = vec![0u32; n];
                let mut w = vec![0u32; cells];
                return grid.gather(0, &v, pad, (rank == 0).then_some(&mut w[..]));
            }
            "root" => return grid.scatter(p as i32, Some(&whole), &mut u, pad),
            "pending" => {
                let next = grid.plan().clone();
                grid.start_remap(next)?;
            }
            _ => {}
        }
        grid.gather(0, &u, pad, (rank == 0).then_some(&mut whole[..]))
    })();
    match r {
        Err(e) => println!("ERR {rank} {e}"),
        Ok(()) => println!("ERR {rank} none"),
    }
    // The same grid still gathers (after the pending move is completed).
    if case == "pending" {
        let mut u = vec![0u64; n];
        let mut v = vec![0u64; grid.padded_len(pad).expect("padding")];
        grid.move_fields(
            &[nuce::Field::new(&mut u, pad)],
            &mut [nuce::Field::new(&mut v, pad)],
        )
        .expect("move");
    }
    let u: Vec<u64> = filled(grid.layout(), pad, 7);
    let mut whole = (rank == 0).then(|| vec![0u64; cells]);
    let ok = grid.gather(0, &u, pad, whole.as_deref_mut()).is_ok()
        && whole.is_none_or(|w| {
            w.iter()
                .enumerate()
                .all(|(c, x)| *x == u64::make(c as u64, 7))
        });
    println!("AFTER {rank} gather={ok}");
}
