//! Throughput of `DistArray2` scatter and remap against plain MPI moving the
//! same bytes in the same run (`MPI_Scatterv` of pre-packed buffers, and
//! `MPI_Alltoallv` with the same per-pair counts).
//!
//! ```text
//! mpirun -np 4 target/release/examples/bench_remap --rows 4096 --cols 4096 --reps 5
//! ```
//! Prints one JSON line on the root: medians of each and the ratios
//! (plain time / nuce time: 1.0 means nuce is as fast as the raw collective).

use std::time::Instant;

use clap::Parser;
use mpi::datatype::Partition;
use mpi::traits::*;
use mpi::Count;
use ndarray::Array2;
use nuce::collective::max_f64;
use nuce::internals::comm::displacements;
use nuce::plan::array2d::{ArrayDecomposer, RecursiveBisection2};
use nuce::DistArray2;

#[path = "common/raw_move.rs"]
mod raw_move;
use raw_move::alltoallv_seconds;
#[path = "common/timing.rs"]
mod timing;
use timing::median;

#[derive(Parser)]
struct Args {
    #[arg(long, default_value_t = 2048)]
    rows: usize,
    #[arg(long, default_value_t = 2048)]
    cols: usize,
    #[arg(long, default_value_t = 5)]
    reps: usize,
}

fn main() {
    let args = Args::parse();
    let universe = mpi::initialize().expect("MPI init");
    let w = universe.world();
    let (rank, p) = (w.rank(), w.size() as usize);
    // Two plans for quite different speeds, so that much of the array moves.
    let a_speeds: Vec<f64> = (0..p).map(|i| 1.0 + i as f64).collect();
    let b_speeds: Vec<f64> = (0..p).map(|i| (p - i) as f64 * 1.5).collect();
    let plan_a = RecursiveBisection2
        .decompose(args.rows, args.cols, &a_speeds)
        .expect("plan");
    let plan_b = RecursiveBisection2
        .decompose(args.rows, args.cols, &b_speeds)
        .expect("plan");
    let global = (rank == 0).then(|| {
        Array2::from_shape_fn((args.rows, args.cols), |(r, c)| (r * args.cols + c) as f64)
    });

    let (mut t_scatter, mut t_scatter_raw, mut t_remap, mut t_remap_raw) =
        (vec![], vec![], vec![], vec![]);
    let mut bytes = 0;
    for _ in 0..args.reps {
        // nuce scatter
        w.barrier();
        let t = Instant::now();
        let (mut arr, _) = DistArray2::scatter_with_plan(&w, 0, plan_a.clone(), 0, global.as_ref())
            .expect("scatter");
        t_scatter.push(max_f64(&w, t.elapsed().as_secs_f64()));
        // raw scatterv of the same per-rank counts, pre-packed
        let counts: Vec<Count> = plan_a.parts.iter().map(|r| r.area() as Count).collect();
        let displs = displacements(&counts);
        let mut recv = vec![0f64; plan_a.parts[rank as usize].area()];
        let sendbuf: Vec<f64> = if rank == 0 {
            vec![1.0; args.rows * args.cols]
        } else {
            vec![]
        };
        w.barrier();
        let t = Instant::now();
        let root = w.process_at_rank(0);
        if rank == 0 {
            root.scatter_varcount_into_root(
                &Partition::new(&sendbuf[..], &counts[..], &displs[..]),
                &mut recv[..],
            );
        } else {
            root.scatter_varcount_into(&mut recv[..]);
        }
        t_scatter_raw.push(max_f64(&w, t.elapsed().as_secs_f64()));

        // nuce remap a -> b
        w.barrier();
        let t = Instant::now();
        let stats = arr.remap(&plan_b).expect("remap");
        t_remap.push(max_f64(&w, t.elapsed().as_secs_f64()));
        bytes = stats.bytes;
        // raw alltoallv with the same counts
        let me_old = plan_a.parts[rank as usize];
        let me_new = plan_b.parts[rank as usize];
        let sc: Vec<Count> = (0..p)
            .map(|q| {
                if q == rank as usize {
                    0
                } else {
                    me_old.intersect(&plan_b.parts[q]).map_or(0, |r| r.area()) as Count
                }
            })
            .collect();
        let rc: Vec<Count> = (0..p)
            .map(|q| {
                if q == rank as usize {
                    0
                } else {
                    plan_a.parts[q].intersect(&me_new).map_or(0, |r| r.area()) as Count
                }
            })
            .collect();
        t_remap_raw.push(alltoallv_seconds(&w, &sc, &rc));
    }
    if rank == 0 {
        let (s, sr, r, rr) = (
            median(t_scatter),
            median(t_scatter_raw),
            median(t_remap),
            median(t_remap_raw),
        );
        println!(
            "{{\"ranks\":{p},\"rows\":{},\"cols\":{},\"remap_bytes\":{bytes},\"scatter_s\":{s:.6},\"scatterv_raw_s\":{sr:.6},\"scatter_ratio\":{:.3},\"remap_s\":{r:.6},\"alltoallv_raw_s\":{rr:.6},\"remap_ratio\":{:.3}}}",
            args.rows,
            args.cols,
            sr / s,
            rr / r
        );
    }
}
