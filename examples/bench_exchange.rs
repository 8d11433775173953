//! Cost of a ghost exchange: `DistArray2::exchange_ghosts` against a
//! hand-written neighbour exchange of the same bytes in the same run
//! (pack the same rectangles, `MPI_Isend`/`MPI_Irecv` to and from the same
//! neighbours, unpack), and the checkpoint arrivals rank 0 receives.
//!
//! ```text
//! mpirun -np 4 target/release/examples/bench_exchange --n 64 --iters 2000 --rounds 7
//! ```
//! Rounds alternate the two ways; prints one JSON line on the root with the
//! median seconds per exchange of each (max over ranks), their ratio
//! (nuce / hand-written: 1.0 means no overhead) and the arrivals rank 0
//! received during nuce's exchanges. Both exchanges must leave the same
//! padded block (checked: owned cells carry their global index).
//!
//! With `--graph`: the same for `DistGraph::exchange_ghosts` of an `n × n`
//! grid graph cut into bands of rows, against a hand-written exchange of
//! the same owned values to the ranks that hold them as ghosts.

use std::time::Instant;

use clap::Parser;
use mpi::traits::*;
use ndarray::Array2;
use nuce::collective::max_f64;
use nuce::internals::watchdog::arrivals_received;
use nuce::plan::array2d::{ArrayDecomposer, ColumnDp};
use nuce::plan::graph::{grid_graph, Partition};
use nuce::DistArray2;
use nuce::DistGraph;
use nuce::Rect;

#[path = "common/timing.rs"]
mod timing;
use timing::{median, per_call};

#[derive(Parser)]
struct Args {
    /// Grid side (n × n).
    #[arg(long, default_value_t = 64)]
    n: usize,
    /// Exchanges per round.
    #[arg(long, default_value_t = 1000)]
    iters: usize,
    /// Rounds of each way (alternating).
    #[arg(long, default_value_t = 7)]
    rounds: usize,
    /// Ghost width.
    #[arg(long, default_value_t = 1)]
    ghost: usize,
    /// Also time this many balance points (`Balancer::maybe_remap` after
    /// one exchange each; equal work, so mostly no remap): median seconds.
    #[arg(long, default_value_t = 0)]
    balance: usize,
    /// Exchange the ghosts of a `DistGraph` (grid graph) instead of a `DistArray2`.
    #[arg(long)]
    graph: bool,
}

/// `DistGraph::exchange_ghosts` against a hand-written exchange of the same
/// values: medians (nuce, hand-written) over the rounds, and rank 0's arrivals.
fn graph_rounds(w: &mpi::topology::SimpleCommunicator, args: &Args) -> (f64, f64, u64) {
    let (n, p) = (args.n, w.size() as usize);
    let root = w.rank() == 0;
    let graph = root.then(|| grid_graph(n, n));
    let part = root
        .then(|| Partition::new(p, (0..n * n).map(|v| v / n * p / n).collect()).expect("bands"));
    let values: Option<Vec<f64>> = root.then(|| (0..n * n).map(|v| v as f64).collect());
    let mut g = DistGraph::<f64>::scatter_with_partition(
        w,
        0,
        graph.as_ref(),
        part.as_ref(),
        values.as_deref(),
    )
    .expect("scatter");
    // The hand-written lists: to each rank, the owned vertices it holds as
    // ghosts (ascending ids, the order of its ghost list); from each rank,
    // this rank's ghosts it owns.
    let no = g.owned().len();
    let mut sends: Vec<(i32, Vec<usize>)> = Vec::new();
    for i in 0..no {
        for (s, _) in g.neighbors(i) {
            if s >= no {
                let q = g.ghost_owners()[s - no] as i32;
                match sends.iter_mut().find(|(r, _)| *r == q) {
                    Some((_, v)) => v.push(i),
                    None => sends.push((q, vec![i])),
                }
            }
        }
    }
    for (_, v) in &mut sends {
        v.sort_unstable();
        v.dedup();
    }
    let mut recvs: Vec<(i32, Vec<usize>)> = Vec::new();
    for (k, &q) in g.ghost_owners().iter().enumerate() {
        match recvs.iter_mut().find(|(r, _)| *r == q as i32) {
            Some((_, v)) => v.push(k),
            None => recvs.push((q as i32, vec![k])),
        }
    }
    let hw = w.duplicate();
    let mut ghosts = vec![0.0f64; g.ghosts().len()];
    let (mut t_nuce, mut t_hand, mut arrivals) = (vec![], vec![], 0);
    for _ in 0..args.rounds {
        let before = arrivals_received();
        t_nuce.push(per_call(w, args.iters, || {
            g.exchange_ghosts().expect("exchange");
        }));
        arrivals += arrivals_received() - before;
        let vals = g.values().to_vec();
        t_hand.push(per_call(w, args.iters, || {
            let sendbufs: Vec<Vec<f64>> = sends
                .iter()
                .map(|(_, idx)| idx.iter().map(|&i| vals[i]).collect())
                .collect();
            let mut recvbufs: Vec<Vec<f64>> =
                recvs.iter().map(|(_, k)| vec![0.0; k.len()]).collect();
            mpi::request::scope(|scope| {
                let mut reqs = Vec::new();
                for ((q, _), buf) in recvs.iter().zip(recvbufs.iter_mut()) {
                    reqs.push(
                        hw.process_at_rank(*q)
                            .immediate_receive_into(scope, &mut buf[..]),
                    );
                }
                for ((q, _), buf) in sends.iter().zip(&sendbufs) {
                    reqs.push(hw.process_at_rank(*q).immediate_send(scope, &buf[..]));
                }
                for r in reqs {
                    r.wait();
                }
            });
            for ((_, k), buf) in recvs.iter().zip(&recvbufs) {
                for (&slot, &v) in k.iter().zip(buf) {
                    ghosts[slot] = v;
                }
            }
        }));
    }
    assert_eq!(
        ghosts,
        g.ghost_values(),
        "the hand-written exchange received other values"
    );
    (median(t_nuce), median(t_hand), arrivals)
}

/// Copies `region` (global coordinates) of the padded block `a` of the block
/// `me` with ghost width `g` into `out`, row by row.
fn pack(a: &Array2<f64>, me: Rect, g: usize, region: &Rect, out: &mut Vec<f64>) {
    let data = a.as_slice().expect("standard layout");
    let n = a.ncols();
    for i in 0..region.rows {
        let at = (region.row + g - me.row + i) * n + region.col + g - me.col;
        out.extend_from_slice(&data[at..at + region.cols]);
    }
}

fn unpack(a: &mut Array2<f64>, me: Rect, g: usize, region: &Rect, src: &[f64]) {
    let n = a.ncols();
    let data = a.as_slice_mut().expect("standard layout");
    for i in 0..region.rows {
        let at = (region.row + g - me.row + i) * n + region.col + g - me.col;
        data[at..at + region.cols].copy_from_slice(&src[i * region.cols..(i + 1) * region.cols]);
    }
}

/// Median time of a balance point (max over ranks) on a balancer's array.
fn balance_points(w: &mpi::topology::SimpleCommunicator, args: &Args) -> f64 {
    let mut bal = nuce::Balancer::new(w).expect("balancer");
    bal.set_speeds(&vec![1.0; w.size() as usize])
        .expect("speeds");
    let global = (w.rank() == 0).then(|| Array2::<f64>::zeros((args.n, args.n)));
    let mut u = DistArray2::scatter(&mut bal, global.as_ref(), args.ghost).expect("scatter");
    let mut times = Vec::with_capacity(args.balance);
    for _ in 0..args.balance {
        u.exchange_ghosts().expect("exchange");
        // Equal speeds reported (this measures the balance point, not a kernel).
        let cells = u.rect().area() as f64;
        bal.record_phase(cells, std::time::Duration::from_secs_f64(cells * 1e-8))
            .expect("phase");
        w.barrier();
        let t0 = Instant::now();
        bal.maybe_remap(&mut u, 1).expect("balance point");
        times.push(max_f64(w, t0.elapsed().as_secs_f64()));
    }
    median(times)
}

fn main() {
    let args = Args::parse();
    let universe = mpi::initialize().expect("MPI init");
    let w = universe.world();
    let p = w.size() as usize;
    if args.graph {
        let (a, b, arrivals) = graph_rounds(&w, &args);
        if w.rank() == 0 {
            println!(
                "{{\"ranks\":{p},\"graph\":\"grid {n}x{n}\",\"nuce_s\":{a:.3e},\"hand_s\":{b:.3e},\"ratio\":{:.3},\"root_arrivals\":{arrivals}}}",
                a / b,
                n = args.n
            );
        }
        return;
    }
    let plan = ColumnDp::default()
        .decompose(args.n, args.n, &vec![1.0; p])
        .expect("plan");
    let mut u = DistArray2::<f64>::with_plan(&w, plan, args.ghost).expect("array");
    let (me, g) = (u.rect(), u.ghost());
    let (send, recv) = u.halo_regions();
    let sends: Vec<(i32, Rect)> = send
        .iter()
        .enumerate()
        .filter_map(|(q, r)| r.filter(|r| !r.is_empty()).map(|r| (q as i32, r)))
        .collect();
    let recvs: Vec<(i32, Rect)> = recv
        .iter()
        .enumerate()
        .filter_map(|(q, r)| r.filter(|r| !r.is_empty()).map(|r| (q as i32, r)))
        .collect();
    // The hand-written exchange runs on its own duplicate, as nuce's does.
    let hw = w.duplicate();
    // Owned cells carry their global index, so that both exchanges can be
    // compared cell for cell at the end.
    for ((i, j), x) in u.padded_mut().indexed_iter_mut() {
        let (r, c) = (
            (me.row + i) as f64 - g as f64,
            (me.col + j) as f64 - g as f64,
        );
        *x = r * args.n as f64 + c;
    }
    let mut block = u.padded().clone();
    let (mut t_nuce, mut t_hand, mut arrivals) = (vec![], vec![], 0);
    for _ in 0..args.rounds {
        w.barrier();
        let before = arrivals_received();
        let t0 = Instant::now();
        for _ in 0..args.iters {
            u.exchange_ghosts().expect("exchange");
        }
        t_nuce.push(max_f64(&w, t0.elapsed().as_secs_f64()) / args.iters as f64);
        arrivals += arrivals_received() - before;
        w.barrier();
        let t0 = Instant::now();
        for _ in 0..args.iters {
            let mut sendbuf: Vec<f64> = Vec::new();
            let mut at = Vec::with_capacity(sends.len() + 1);
            for (_, r) in &sends {
                at.push(sendbuf.len());
                pack(&block, me, g, r, &mut sendbuf);
            }
            at.push(sendbuf.len());
            let total: usize = recvs.iter().map(|(_, r)| r.area()).sum();
            let mut recvbuf = vec![0.0f64; total];
            mpi::request::scope(|scope| {
                let mut reqs = Vec::new();
                let mut rest = &mut recvbuf[..];
                for (q, r) in &recvs {
                    let (head, tail) = rest.split_at_mut(r.area());
                    rest = tail;
                    reqs.push(hw.process_at_rank(*q).immediate_receive_into(scope, head));
                }
                for (k, (q, _)) in sends.iter().enumerate() {
                    let part = &sendbuf[at[k]..at[k + 1]];
                    reqs.push(hw.process_at_rank(*q).immediate_send(scope, part));
                }
                for r in reqs {
                    r.wait();
                }
            });
            let mut off = 0;
            for (_, r) in &recvs {
                unpack(&mut block, me, g, r, &recvbuf[off..off + r.area()]);
                off += r.area();
            }
        }
        t_hand.push(max_f64(&w, t0.elapsed().as_secs_f64()) / args.iters as f64);
    }
    assert_eq!(
        u.padded(),
        &block,
        "the hand-written exchange left another padded block"
    );
    let balance_s = (args.balance > 0).then(|| balance_points(&w, &args));
    if w.rank() == 0 {
        let (a, b) = (median(t_nuce), median(t_hand));
        println!(
            "{{\"ranks\":{p},\"n\":{},\"ghost\":{},\"nuce_s\":{a:.3e},\"hand_s\":{b:.3e},\"ratio\":{:.3},\"root_arrivals\":{arrivals},\"balance_point_s\":{}}}",
            args.n,
            args.ghost,
            a / b,
            balance_s.map_or("null".to_string(), |t| format!("{t:.3e}"))
        );
    }
}
