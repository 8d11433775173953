//! A graph bigger than one rank's memory: a distributed 3D 7-point grid of N
//! vertices with jittered coordinates, each rank generating its own slab
//! ([`nuce::plan::graph::slab`]); partitioned in parallel in proportion to
//! the speeds (RCB or Hilbert curve, [`DistGraph::partition_rcb`]); ghost
//! exchanges; one rank slows down (`--slowdown r:f`) and the graph is
//! remapped (index-based prefix-sum cut by default). No rank ever holds an
//! array of all N vertices. With `--root` the same run goes through the
//! root-based path instead (rank 0 builds the whole graph, partitions it
//! with the sequential RCB and scatters it), for comparison.
//!
//! Prints per rank its peak memory (`VmHWM`), vertices and ghosts, and the
//! run's partition, migration and remap times, moved vertices, cut and
//! imbalance; `--json` prints one JSON object per rank instead. Checks (each
//! a `CHECK name ok|FAIL` line, by collective sums, never by gathering):
//! every vertex owned exactly once (count, Σ id, Σ id²), every value still
//! its vertex's after migrations, the ghost-exchanged stencil sum
//! Σ_v Σ_{u ∈ N(v)} x_u equal to Σ_u x_u · deg(u), and each rank's load
//! within one vertex per cut of its target.
//!
//! ```text
//! mpirun -np 4 target/release/examples/graph_scale --n 1000000 --speeds 1,1,2,2 --slowdown 3:4
//! mpirun -np 4 target/release/examples/graph_scale --n 1000000 --root --json
//! mpirun -np 4 target/release/examples/graph_scale --n 10000000 --speeds 1,1,1,1
//! ```
//!
//! `scripts/bench_graph_scale.sh` runs it side by side with the root path and
//! Zoltan's parallel RCB (figures in `benchmarks/graph.md`).

use std::time::Instant;

#[path = "common/slab_graph.rs"]
mod slab_graph;
use slab_graph::slab_graph;

use clap::Parser;
use mpi::collective::SystemOperation;
use mpi::topology::SimpleCommunicator;
use mpi::traits::*;
use nuce::plan::graph::slab::grid_slab;
use nuce::plan::graph::{Algo, Graph, Grouping};
use nuce::{Balancer, DistGraph, Error, Result};

#[derive(Parser, Debug)]
#[command(about = "Distributed graph at scale: parallel partitioning, ghost exchange, remap")]
struct Opts {
    /// Number of vertices (the grid is about ∛N on a side).
    #[arg(long, default_value_t = 1_000_000)]
    n: usize,
    /// Target speeds, one per rank, comma-separated (default: measured).
    #[arg(long, value_delimiter = ',')]
    speeds: Option<Vec<f64>>,
    /// Rank `r` becomes `f` times slower before the remap (`r:f`).
    #[arg(long, default_value = "0:2")]
    slowdown: String,
    /// Initial partitioner: rcb or sfc.
    #[arg(long, default_value = "rcb")]
    algo: String,
    /// Remap: prefix (index-based, prefix sums), rcb or sfc (from scratch).
    #[arg(long, default_value = "prefix")]
    remap: String,
    /// Ghost exchanges per phase.
    #[arg(long, default_value_t = 10)]
    exchanges: usize,
    /// Coordinate jitter (fraction of the grid spacing, below 0.5).
    #[arg(long, default_value_t = 0.3)]
    jitter: f64,
    /// Partitions timed (the best is reported; the last one is used).
    #[arg(long, default_value_t = 1)]
    reps: usize,
    /// Root-based path: rank 0 builds, partitions and scatters the whole graph.
    #[arg(long)]
    root: bool,
    /// One JSON object per rank instead of text.
    #[arg(long)]
    json: bool,
}

fn main() {
    let universe = mpi::initialize().expect("MPI init");
    let world = universe.world();
    if let Err(e) = run(&world) {
        if world.rank() == 0 {
            eprintln!("graph_scale: {e}");
        }
        std::process::exit(2);
    }
}

/// Peak resident memory of this process in KiB (`VmHWM`), 0 when unknown.
fn vm_hwm_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("VmHWM:"))
                .and_then(|v| v.split_whitespace().next()?.parse().ok())
        })
        .unwrap_or(0)
}

/// Grid sides for about `n` vertices: nx = ny = ⌊∛n⌉, nz = ⌈n / (nx·ny)⌉.
fn dims(n: usize) -> (usize, usize, usize) {
    let s = (n as f64).cbrt().round().max(1.0) as usize;
    (s, s, n.div_ceil(s * s).max(1))
}

fn sum(comm: &SimpleCommunicator, x: f64) -> f64 {
    nuce::collective::sum_f64(comm, x)
}

fn max(comm: &SimpleCommunicator, x: f64) -> f64 {
    nuce::collective::max_f64(comm, x)
}

fn all_ranks(comm: &SimpleCommunicator, ok: bool) -> bool {
    let mut out = 0i32;
    comm.all_reduce_into(&i32::from(ok), &mut out, SystemOperation::min());
    out == 1
}

fn check(comm: &SimpleCommunicator, name: &str, ok: bool, detail: String) -> bool {
    let ok = all_ranks(comm, ok);
    if comm.rank() == 0 {
        println!("CHECK {name} {}", if ok { "ok" } else { "FAIL" });
        if !ok {
            println!("  {detail}");
        }
    }
    ok
}

/// Edges between ranks (each counted once), summed over ranks.
fn cut(g: &DistGraph<f64>) -> u64 {
    let no = g.owned().len();
    let local = (0..no)
        .map(|i| g.neighbors(i).filter(|&(s, _)| s >= no).count())
        .sum::<usize>();
    (sum(g.comm(), local as f64) / 2.0) as u64
}

/// Largest load over target: max_r w_r / (W t_r / Σt) − 1.
fn imbalance(g: &DistGraph<f64>, targets: &[f64]) -> f64 {
    let comm = g.comm();
    let w = g.local_work();
    let total = sum(comm, w);
    let t = targets[comm.rank() as usize] / targets.iter().sum::<f64>();
    max(comm, w / (total * t)) - 1.0
}

/// The run's checks on the current layout (collective sums only).
/// `exact`: the parallel partitioners are exact to one vertex per cut; the
/// root path's sequential RCB is checked to 1 %.
fn checks(
    g: &mut DistGraph<f64>,
    n: usize,
    targets: &[f64],
    when: &str,
    exact: bool,
) -> Result<bool> {
    let comm = g.comm().duplicate();
    let owned = g.owned();
    let count = sum(&comm, owned.len() as f64);
    let ids = sum(&comm, owned.iter().map(|&v| v as f64).sum());
    let sq = sum(&comm, owned.iter().map(|&v| (v as f64) * (v as f64)).sum());
    let nf = n as f64;
    let mut ok = check(
        &comm,
        &format!("{when}-owned-once"),
        count == nf
            && ids == nf * (nf - 1.0) / 2.0
            && (sq - (nf - 1.0) * nf * (2.0 * nf - 1.0) / 6.0).abs() <= 1e-9 * sq,
        format!("{count} vertices, id sum {ids}"),
    );
    let values_ok = owned.iter().zip(g.values()).all(|(&v, &x)| x == v as f64);
    ok &= check(
        &comm,
        &format!("{when}-values"),
        values_ok,
        "a value is not its vertex's".into(),
    );
    g.exchange_ghosts()?;
    let no = g.owned().len();
    let mut stencil = 0.0;
    let mut degree = 0.0;
    for i in 0..no {
        for (s, _) in g.neighbors(i) {
            stencil += *g.slot_value(s);
            degree += g.values()[i];
        }
    }
    let (stencil, degree) = (sum(&comm, stencil), sum(&comm, degree));
    ok &= check(
        &comm,
        &format!("{when}-stencil"),
        stencil == degree,
        format!("stencil sum {stencil}, expected {degree}"),
    );
    // Each cut is exact to one vertex: at most ⌈log2 p⌉ vertices off.
    let w = g.local_work();
    let total = sum(&comm, w);
    let t = targets[comm.rank() as usize] / targets.iter().sum::<f64>();
    let levels = (targets.len() as f64).log2().ceil() + 1.0;
    ok &= check(
        &comm,
        &format!("{when}-balance"),
        (w - total * t).abs() <= if exact { levels } else { 0.01 * total * t },
        format!("load {w}, target {}", total * t),
    );
    Ok(ok)
}

fn parse_slowdown(s: &str, p: usize) -> Result<(usize, f64)> {
    let bad = || Error::invalid_input(format!("--slowdown {s}: expected r:f with r < {p}, f > 0"));
    let (r, f) = s.split_once(':').ok_or_else(bad)?;
    let r: usize = r.parse().map_err(|_| bad())?;
    let f: f64 = f.parse().map_err(|_| bad())?;
    if r >= p || !(f.is_finite() && f > 0.0) {
        return Err(bad());
    }
    Ok((r, f))
}

fn new_owners(g: &DistGraph<f64>, algo: &str, targets: &[f64]) -> Result<Vec<usize>> {
    match algo {
        "rcb" => g.partition_rcb(targets),
        "sfc" => g.partition_sfc(targets),
        "prefix" => g.prefix_cut(targets),
        _ => Err(Error::invalid_input(format!("unknown partitioner {algo}"))),
    }
}

fn run(world: &SimpleCommunicator) -> Result<()> {
    let o = Opts::parse();
    let (p, rank) = (world.size() as usize, world.rank() as usize);
    let (nx, ny, nz) = dims(o.n);
    let n = nx * ny * nz;
    let speeds = match &o.speeds {
        Some(s) if s.len() == p => s.clone(),
        Some(s) => {
            return Err(Error::invalid_input(format!(
                "{} speeds for {p} ranks",
                s.len()
            )))
        }
        None => Balancer::new(world)?.measure()?,
    };
    let (slow, factor) = parse_slowdown(&o.slowdown, p)?;
    world.barrier();
    let t_total = Instant::now();
    // Build and partition.
    let t = Instant::now();
    let (mut g, t_build, t_part, migrated) = if o.root {
        let built = (rank == 0)
            .then(|| -> Result<(Graph, nuce::Partition)> {
                let s = grid_slab((nx, ny, nz), 0, n, o.jitter)?;
                let g = Graph::from_csr(s.xadj, s.adjncy, None, None)?.with_coords(3, s.coords)?;
                let part = Algo::Rcb.partition(&g, &speeds, Grouping::Simple, None)?;
                Ok((g, part))
            })
            .transpose();
        let built = nuce::collective::agree(world, 0, built)?;
        let t_part = t.elapsed().as_secs_f64();
        let values: Option<Vec<f64>> = built.as_ref().map(|_| (0..n).map(|v| v as f64).collect());
        let tm = Instant::now();
        let g = DistGraph::scatter_with_partition(
            world,
            0,
            built.as_ref().map(|b| &b.0),
            built.as_ref().map(|b| &b.1),
            values.as_deref(),
        )?;
        drop(built);
        drop(values);
        (g, 0.0, t_part, (0u64, tm.elapsed().as_secs_f64()))
    } else {
        let mut g = slab_graph(world, (nx, ny, nz), o.jitter)?;
        let t_build = max(world, t.elapsed().as_secs_f64());
        let mut t_part = f64::INFINITY;
        let mut dest = Vec::new();
        for _ in 0..o.reps.max(1) {
            world.barrier();
            let t = Instant::now();
            dest = new_owners(&g, &o.algo, &speeds)?;
            t_part = t_part.min(max(world, t.elapsed().as_secs_f64()));
        }
        let st = g.migrate(&dest)?;
        (g, t_build, t_part, (st.moved_vertices, st.moves.seconds))
    };
    let t_part = max(world, t_part);
    let mut ok = checks(&mut g, n, &speeds, "partition", !o.root)?;
    let cut0 = cut(&g);
    let imb0 = imbalance(&g, &speeds);
    // Ghost exchanges.
    world.barrier();
    let t = Instant::now();
    for _ in 0..o.exchanges {
        g.exchange_ghosts()?;
    }
    let t_exchange = max(world, t.elapsed().as_secs_f64()) / o.exchanges.max(1) as f64;
    // One rank slows down: remap.
    let mut targets = speeds.clone();
    targets[slow] /= factor;
    let t = Instant::now();
    let dest = if o.root {
        // The root-based path: the root re-partitions the whole graph.
        None
    } else {
        Some(new_owners(&g, &o.remap, &targets)?)
    };
    let t_remap_plan = max(world, t.elapsed().as_secs_f64());
    let (remap_moved, t_remap_move) = match dest {
        Some(d) => {
            let st = g.migrate(&d)?;
            (st.moved_vertices, st.moves.seconds)
        }
        None => (0, 0.0),
    };
    if !o.root {
        ok &= checks(&mut g, n, &targets, "remap", true)?;
    }
    let cut1 = cut(&g);
    let imb1 = imbalance(&g, &targets);
    let sizes = g.local_sizes();
    let hwm = vm_hwm_kib();
    let t_total = max(world, t_total.elapsed().as_secs_f64());
    let line = format!(
        "{{\"rank\":{rank},\"ranks\":{p},\"n\":{n},\"path\":\"{}\",\"algo\":\"{}\",\"remap\":\"{}\",\"vmhwm_kib\":{hwm},\"owned\":{},\"ghosts\":{},\"arcs\":{},\"held_elements\":{},\"neighbour_ranks\":{},\"t_build_s\":{t_build:.4},\"t_partition_s\":{t_part:.4},\"t_migrate_s\":{:.4},\"partition_moved\":{},\"t_exchange_s\":{t_exchange:.6},\"t_remap_plan_s\":{t_remap_plan:.4},\"t_remap_move_s\":{t_remap_move:.4},\"remap_moved\":{remap_moved},\"cut\":{cut0},\"cut_after_remap\":{cut1},\"imbalance\":{imb0:.5},\"imbalance_after_remap\":{imb1:.5},\"t_total_s\":{t_total:.3},\"checks_ok\":{ok}}}",
        if o.root { "root" } else { "distributed" },
        if o.root { "rcb-root" } else { &o.algo },
        if o.root { "none" } else { &o.remap },
        sizes.owned,
        sizes.ghosts,
        sizes.arcs,
        sizes.total_elements,
        sizes.send_ranks.max(sizes.recv_ranks),
        migrated.1,
        migrated.0,
    );
    // One line per rank, in rank order.
    for r in 0..p {
        if r == rank {
            if o.json {
                println!("{line}");
            } else {
                println!(
                    "RANK {rank} vmhwm_kib {hwm} owned {} ghosts {} held_elements {}",
                    sizes.owned, sizes.ghosts, sizes.total_elements
                );
            }
        }
        world.barrier();
    }
    if rank == 0 && !o.json {
        println!(
            "RESULT n {n} ranks {p} path {} partition_s {t_part:.4} migrate_s {:.4} exchange_s {t_exchange:.6} remap_plan_s {t_remap_plan:.4} remap_move_s {t_remap_move:.4} remap_moved {remap_moved} cut {cut0} cut_after {cut1} imbalance {imb0:.5} imbalance_after {imb1:.5} checks_ok {ok}",
            if o.root { "root" } else { "distributed" },
            migrated.1
        );
    }
    if ok {
        Ok(())
    } else {
        Err(Error::invalid_input("a check failed"))
    }
}
