//! Adaptive mesh refinement with submesh allocation by collective packing
//! (\[VH94\] §3–§4): between solver phases the ranks
//! generate fine grids, allocate one processor submesh per grid with the
//! collective TP packing, move each grid's data from the rank that generated
//! it to its submesh (a `DistArray2` remap), and run Jacobi sweeps on each
//! grid, every grid on its own sub-communicator. The allocation's predicted
//! cost (\[VH94\]'s objective, per sweep) is printed next to the measured
//! phase time.
//!
//! ```text
//! source scripts/env.sh
//! mpirun -np 8 --oversubscribe target/release/examples/amr [levels=5] [sweeps=40] [seed=1]
//! ```
//! The world's `p` ranks form a `P × Q` mesh (`P·Q = p`, `P ≥ Q`), rank
//! `row·P + col`.

use nuce::LocalAllocation;
use std::time::Instant;

use mpi::topology::Color;
use mpi::traits::*;
use ndarray::Array2;
use nuce::collective::{all_gather_values, max_f64, sum_f64};
use nuce::plan::array2d::{apportion, ArrayPlan, Rect};
use nuce::plan::packing::{Grid, Mesh, Placement, Scaling, TightPacking};
use nuce::DistArray2;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

type Res<T> = Result<T, Box<dyn std::error::Error>>;

/// The most square `P × Q = p` mesh with `P ≥ Q`.
fn mesh_shape(p: usize) -> Mesh {
    let q = (1..=p)
        .filter(|q| p % q == 0 && q * q <= p)
        .max()
        .unwrap_or(1);
    Mesh { p: p / q, q }
}

/// The pieces of a `h × w` grid array on the ranks of its submesh: the array
/// is cut uniformly into the submesh's processor grid (rotated grids have
/// their columns along the mesh's y).
fn submesh_plan(
    g: Grid,
    sub: Rect,
    rotated: bool,
    mesh: Mesh,
    p: usize,
) -> nuce::Result<ArrayPlan> {
    let (h, w) = (g.h as usize, g.w as usize);
    // Number of bands along the array's rows and columns.
    let (row_bands, col_bands) = if rotated {
        (sub.cols, sub.rows)
    } else {
        (sub.rows, sub.cols)
    };
    let rows = apportion(h, &vec![1.0; row_bands]);
    let cols = apportion(w, &vec![1.0; col_bands]);
    let mut parts = vec![Rect::default(); p];
    let mut r0 = 0;
    for (i, &nr) in rows.iter().enumerate() {
        let mut c0 = 0;
        for (j, &nc) in cols.iter().enumerate() {
            // Mesh position of band (i, j).
            let (my, mx) = if rotated { (j, i) } else { (i, j) };
            let rank = (sub.row + my) * mesh.p + sub.col + mx;
            parts[rank] = if nr == 0 || nc == 0 {
                Rect::default()
            } else {
                Rect::new(r0, c0, nr, nc)
            };
            c0 += nc;
        }
        r0 += nr;
    }
    Ok(ArrayPlan::new("submesh", h, w, parts)?)
}

/// One Jacobi sweep of the 5-point average on the local block (ghosts filled).
fn jacobi(a: &mut DistArray2<f64>) {
    let r = a.rect();
    let pad = a.padded().clone();
    let mut loc = a.local_mut();
    for i in 0..r.rows {
        for j in 0..r.cols {
            let (pi, pj) = (i + 1, j + 1);
            loc[[i, j]] = 0.2
                * (pad[[pi, pj]]
                    + pad[[pi - 1, pj]]
                    + pad[[pi + 1, pj]]
                    + pad[[pi, pj - 1]]
                    + pad[[pi, pj + 1]]);
        }
    }
}

fn main() -> Res<()> {
    let universe = mpi::initialize().ok_or("MPI init failed")?;
    let world = universe.world();
    let (p, rank) = (world.size() as usize, world.rank() as usize);
    let args: Vec<String> = std::env::args().collect();
    let num = |i: usize, d: u64| args.get(i).and_then(|s| s.parse().ok()).unwrap_or(d);
    let (levels, sweeps, seed) = (num(1, 5) as usize, num(2, 40) as usize, num(3, 1));
    let mesh = mesh_shape(p);
    let tp = TightPacking::default();
    let mut bal = nuce::Balancer::new(&world)?;
    if rank == 0 {
        println!(
            "amr: {p} ranks as a {}x{} mesh, {levels} levels, {sweeps} sweeps per level",
            mesh.p, mesh.q
        );
        println!("level grids util%  predicted(cost/sweep)  moved(KiB)  phase(ms)  ns/(cost*sweep)  data");
    }
    let mut rng = ChaCha8Rng::seed_from_u64(seed * 1000 + rank as u64);
    for level in 0..levels {
        // 1. Refinement: this rank flags a region and defines a fine grid
        //    (rank 0 always does, so a level has at least one grid).
        let mine: Vec<Grid> = if rank == 0 || rng.gen_bool(0.5) {
            vec![Grid::new(rng.gen_range(60..400), rng.gen_range(40..250))]
        } else {
            Vec::new()
        };
        // 2. Collective allocation (collective TP packing + scaling).
        let alloc = LocalAllocation::new(&mut bal, &mine, mesh, &tp, Scaling::NonUniform)?;
        // Everyone learns every grid's size, source, submesh and orientation.
        let local: Vec<(Grid, u64, Rect, Placement)> = mine
            .iter()
            .zip(&alloc.submeshes)
            .zip(&alloc.placements)
            .map(|((g, s), pl)| (*g, rank as u64, *s, *pl))
            .collect();
        let all: Vec<(Grid, u64, Rect, Placement)> = all_gather_values(&world, &local)?.concat();
        // 3. Move each grid's data from its source rank to its submesh.
        let mut moved = 0u64;
        let mut data_ok = true;
        let mut my_grid: Option<(usize, DistArray2<f64>)> = None;
        for (gi, &(g, src, sub, pl)) in all.iter().enumerate() {
            let (h, w) = (g.h as usize, g.w as usize);
            let mut at_source = vec![Rect::default(); p];
            at_source[src as usize] = Rect::new(0, 0, h, w);
            let plan0 = ArrayPlan::new("source", h, w, at_source)?;
            let mut arr = DistArray2::<f64>::with_plan(&world, plan0, 1)?;
            let mut expect = 0.0;
            if rank as u64 == src {
                // The fine grid's initial values (interpolated from the coarse
                // level in a real solver).
                arr.local_mut()
                    .assign(&Array2::from_shape_fn((h, w), |(i, j)| {
                        ((i * 7 + j * 3 + level) % 17) as f64
                    }));
                expect = arr.local().sum();
            }
            let expect = sum_f64(&world, expect);
            let plan1 = submesh_plan(g, sub, pl.rotated, mesh, p)?;
            moved += arr.remap(&plan1)?.bytes;
            let got = sum_f64(&world, arr.local().sum());
            data_ok &= got == expect;
            if !arr.rect().is_empty() {
                my_grid = Some((gi, arr));
            }
        }
        // 4. The solver phase: every grid on its own sub-communicator.
        let color = my_grid
            .as_ref()
            .map_or(Color::undefined(), |(gi, _)| Color::with_value(*gi as i32));
        let sub = world.split_by_color(color);
        world.barrier();
        let t = Instant::now();
        if let (Some(comm), Some((_, arr))) = (sub.as_ref(), my_grid.as_ref()) {
            // The grid's plan restricted to the submesh's ranks (in rank order).
            let parts: Vec<Rect> = arr
                .plan()
                .parts
                .iter()
                .enumerate()
                .filter(|(r, x)| !x.is_empty() || *r == rank)
                .map(|(_, x)| *x)
                .collect();
            let (gr, gc) = arr.global_shape();
            let plan = ArrayPlan::new("grid", gr, gc, parts)?;
            let mut work = DistArray2::<f64>::with_plan(comm, plan, 1)?;
            work.local_mut().assign(&arr.local());
            for _ in 0..sweeps {
                work.exchange_ghosts()?;
                jacobi(&mut work);
            }
        }
        let phase = max_f64(&world, t.elapsed().as_secs_f64());
        if rank == 0 {
            println!(
                "{level:>5} {:>5} {:>5.1}  {:>21.1}  {:>10.1}  {:>9.2}  {:>15.2}  {}",
                all.len(),
                100.0 * alloc.utilization,
                alloc.cost.total,
                moved as f64 / 1024.0,
                phase * 1e3,
                phase * 1e9 / (alloc.cost.total * sweeps as f64),
                if data_ok { "ok" } else { "MISMATCH" }
            );
        }
    }
    Ok(())
}
