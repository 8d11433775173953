//! Remaps of 3D grids against plain MPI moving the same bytes in the same
//! run: [`DistArray3::remap`] (nuce's container, `--fields` components per
//! cell), [`Grid::move_fields`] (the application's own buffers, `--fields`
//! separate arrays with a ghost layer of 1) and an `MPI_Alltoallv` of the
//! cells that change owner from and into pre-packed buffers.
//!
//! ```text
//! mpirun -np 4 target/release/examples/bench_remap3 --nx 128 --ny 128 --nz 128 --fields 3 --reps 7
//! ```
//! Two plans for different speeds (ranks 1, 2, …, p against p, …, 2, 1 ×
//! 1.5, both by `Best3`); every repetition remaps there and back. Prints
//! one JSON line on the root: the medians (seconds, slowest rank) and the
//! ratios nuce / raw (1.0: as fast as the raw collective).

use clap::Parser;
use mpi::traits::*;
use mpi::Count;
use nuce::collective::max_f64;
use nuce::plan::array3d::best::Best3;
use nuce::plan::array3d::plan::GridPlan3;
use nuce::plan::array3d::GridDecomposer3;
use nuce::plan::array3d::Stencil;
use nuce::{DistArray3, Field, Grid};

#[path = "common/raw_move.rs"]
mod raw_move;
use raw_move::alltoallv_seconds;
#[path = "common/timing.rs"]
mod timing;
use timing::median;

#[derive(Parser)]
struct Args {
    #[arg(long, default_value_t = 96)]
    nx: usize,
    #[arg(long, default_value_t = 96)]
    ny: usize,
    #[arg(long, default_value_t = 96)]
    nz: usize,
    /// Fields (components per cell of the `DistArray3`; arrays of the grid).
    #[arg(long, default_value_t = 3)]
    fields: usize,
    #[arg(long, default_value_t = 7)]
    reps: usize,
}

/// The `f64`s this rank sends to and receives from every other rank when
/// the grid goes from `from` to `to`, `fields` per cell.
fn counts(from: &GridPlan3, to: &GridPlan3, me: usize, fields: usize) -> (Vec<Count>, Vec<Count>) {
    // f64s from rank `a`'s old box to rank `b`'s new one (0 when a = b: kept).
    let moved = |a: usize, b: usize| match from.boxes[a].intersect(&to.boxes[b]) {
        Some(x) if a != b => (x.volume() * fields) as Count,
        _ => 0,
    };
    let p = from.len();
    (
        (0..p).map(|q| moved(me, q)).collect(),
        (0..p).map(|q| moved(q, me)).collect(),
    )
}

/// Times `f` as the slowest rank's seconds.
fn timed<C: Communicator>(w: &C, f: impl FnOnce()) -> f64 {
    w.barrier();
    let t = std::time::Instant::now();
    f();
    max_f64(w, t.elapsed().as_secs_f64())
}

fn main() {
    let args = Args::parse();
    let universe = mpi::initialize().expect("MPI init");
    let w = universe.world();
    let (me, p) = (w.rank() as usize, w.size() as usize);
    let shape = (args.nx, args.ny, args.nz);
    let best = Best3 {
        stencil: Stencil::seven(1),
    };
    let a_speeds: Vec<f64> = (0..p).map(|i| 1.0 + i as f64).collect();
    let b_speeds: Vec<f64> = (0..p).map(|i| (p - i) as f64 * 1.5).collect();
    let plan_a = best.decompose(shape, &a_speeds).expect("plan");
    let plan_b = best.decompose(shape, &b_speeds).expect("plan");
    let nf = args.fields;

    let mut arr = DistArray3::<f64>::with_plan(&w, plan_a.clone(), 1, nf).expect("array");
    let mut grid = Grid::with_plan(&w, plan_a.clone(), Stencil::seven(1)).expect("grid");
    let pad = [1, 1, 1];
    let mut bufs = buffers_for(&grid, nf, pad);
    let (mut t_arr, mut t_grid, mut t_raw) = (vec![], vec![], vec![]);
    let (mut bytes, mut raw_bytes) = (0, 0);
    for rep in 0..2 * args.reps {
        let (from, to) = if rep % 2 == 0 {
            (&plan_a, &plan_b)
        } else {
            (&plan_b, &plan_a)
        };
        let mut stats = None;
        t_arr.push(timed(&w, || stats = Some(arr.remap(to).expect("remap"))));
        bytes = stats.map_or(0, |s| s.bytes);
        // The application's part: start the remap, allocate the buffers of
        // the new box (not timed: a raw exchange has its buffers), move.
        let start = timed(&w, || grid.start_remap(to.clone()).expect("start_remap"));
        let mut new = buffers_for(&grid, nf, pad);
        let mut old = std::mem::take(&mut bufs);
        let move_s = timed(&w, || {
            let old_f: Vec<Field> = old.iter_mut().map(|b| Field::new(b, pad)).collect();
            let mut new_f: Vec<Field> = new.iter_mut().map(|b| Field::new(b, pad)).collect();
            grid.move_fields(&old_f, &mut new_f).expect("move_fields");
        });
        t_grid.push(start + move_s);
        bufs = new;
        let (send, recv) = counts(from, to, me, nf);
        raw_bytes = 8 * send.iter().sum::<Count>() as u64;
        t_raw.push(alltoallv_seconds(&w, &send, &recv));
    }
    let mut raw_total = 0u64;
    w.all_reduce_into(
        &raw_bytes,
        &mut raw_total,
        mpi::collective::SystemOperation::sum(),
    );
    if me == 0 {
        let (a, g, r) = (median(t_arr), median(t_grid), median(t_raw));
        println!(
            "{{\"ranks\":{p},\"shape\":[{},{},{}],\"fields\":{nf},\"remap_bytes\":{bytes},\"raw_bytes\":{raw_total},\"distarray3_s\":{a:.6},\"grid_move_s\":{g:.6},\"alltoallv_raw_s\":{r:.6},\"distarray3_ratio\":{:.3},\"grid_ratio\":{:.3}}}",
            args.nx,
            args.ny,
            args.nz,
            a / r,
            g / r
        );
    }
}

/// Zeroed buffers for the pending box of `grid` (the box a move fills).
fn buffers_for(grid: &Grid, fields: usize, pad: [usize; 3]) -> Vec<Vec<f64>> {
    let n = grid
        .pending()
        .map_or_else(|| grid.padded_len(pad), |l| l.padded_len(pad))
        .expect("padded length");
    vec![vec![0.0; n]; fields]
}
