//! Scenarios for the collective TP packing (\[VH94\] §4.2): equality with the
//! sequential TP and allocator, agreed errors, and per-round timing.

use mpi::traits::*;
use nuce::collective::gather_values;
use nuce::internals::packing::{allocate_collective, collective_tp};
use nuce::plan::packing::{
    Grid, Mesh, Packer, PackingOrder, Scaling, SubmeshAllocator, TightPacking,
};
use nuce::Balancer;
use nuce::LocalAllocation;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::Ctx;

/// Every rank's grids, generated identically on all ranks from `seed`; some
/// ranks get none.
fn all_grids(p: usize, per_rank: usize, seed: u64, max_side: u64) -> Vec<Vec<Grid>> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    (0..p)
        .map(|_| {
            let n = if rng.gen_bool(0.2) {
                0
            } else {
                rng.gen_range(1..=2 * per_rank.max(1))
            };
            (0..n)
                .map(|_| Grid::new(rng.gen_range(1..=max_side), rng.gen_range(1..=max_side)))
                .collect()
        })
        .collect()
}

/// Runs a scenario; false when the name is unknown.
pub fn run(name: &str, ctx: &Ctx) -> bool {
    match name {
        "packing-equal" => equal(ctx),
        "packing-bad" => bad(ctx),
        "packing-bench" => bench(ctx),
        _ => return false,
    }
    true
}

fn equal(ctx: &Ctx) {
    let comm = &ctx.world;
    let (p, rank) = (comm.size() as usize, ctx.rank() as usize);
    let per_rank: usize = ctx.arg(0, 5);
    let seeds: u64 = ctx.arg(1, 4);
    let mut bal = Balancer::new(comm).expect("balancer");
    for seed in 0..seeds {
        let everyone = all_grids(p, per_rank, seed, 40);
        let all: Vec<Grid> = everyone.concat();
        if all.is_empty() {
            continue;
        }
        let mine = &everyone[rank];
        for order in PackingOrder::ALL {
            for (modified, ratio) in [(false, 1.0), (true, 1.0), (false, 1.7)] {
                let tp = TightPacking {
                    order,
                    modified,
                    remove_small_holes: seed % 2 == 0,
                };
                let name = format!("tp-{}-{modified}-{ratio}-seed{seed}", order.name());
                let got = match collective_tp(comm, mine, &tp, ratio) {
                    Ok(g) => g,
                    Err(e) => {
                        ctx.check(&name, false, e);
                        continue;
                    }
                };
                let gathered = gather_values(comm, 0, &got.placements).expect("gather");
                let want = tp.pack(&all, ratio).expect("sequential TP");
                let same_box = (got.width, got.height) == (want.width, want.height);
                let same = match gathered {
                    Some(parts) => parts.concat() == want.placements,
                    None => true,
                };
                ctx.check(
                    &name,
                    same && same_box,
                    format!(
                        "{}x{} vs {}x{}",
                        got.width, got.height, want.width, want.height
                    ),
                );
            }
        }
        // Submesh allocation: collective = sequential, for both scalings,
        // the non-uniform one by the free function, the uniform one through
        // the balancer (`LocalAllocation::new`).
        let mesh = Mesh::new(16, 8).expect("mesh");
        for scaling in [Scaling::NonUniform, Scaling::Uniform] {
            let tp = TightPacking::default();
            let name = format!("alloc-{}-seed{seed}", scaling.name());
            let seq = SubmeshAllocator::new(tp, scaling).allocate(&all, mesh);
            let col = match scaling {
                Scaling::Uniform => LocalAllocation::new(&mut bal, mine, mesh, &tp, scaling),
                _ => allocate_collective(comm, mine, mesh, &tp, scaling),
            };
            match (seq, col) {
                (Ok(s), Ok(c)) => {
                    let gathered = gather_values(comm, 0, &c.submeshes).expect("gather");
                    let same = gathered.is_none_or(|g| g.concat() == s.submeshes);
                    let util = (c.utilization - s.utilization).abs() < 1e-12 && c.cost == s.cost;
                    ctx.check(
                        &name,
                        same && util && c.min_side == s.min_side,
                        "submeshes differ",
                    );
                }
                (Err(a), Err(b)) => ctx.check(
                    &name,
                    nuce::Error::from(a.clone()) == b,
                    format!("{a} vs {b}"),
                ),
                (a, b) => ctx.check(&name, false, format!("{:?} vs {:?}", a.err(), b.err())),
            }
        }
    }
}

fn bad(ctx: &Ctx) {
    let comm = &ctx.world;
    let last = comm.size() - 1;
    // One rank brings an empty grid: every rank must return the same error.
    let mine = if ctx.rank() == last {
        vec![Grid::new(0, 5)]
    } else {
        vec![Grid::new(3, 4)]
    };
    let r = collective_tp(comm, &mine, &TightPacking::default(), 1.0);
    println!(
        "RESULT bad-grid {}",
        r.map(|_| "ok".to_string())
            .unwrap_or_else(|e| e.to_string())
    );
    // No grids anywhere.
    let r = collective_tp(comm, &[], &TightPacking::default(), 1.0);
    println!(
        "RESULT no-grids {}",
        r.map(|_| "ok".to_string())
            .unwrap_or_else(|e| e.to_string())
    );
    // Too many grids for the mesh.
    let mesh = Mesh::new(2, 2).expect("mesh");
    let r = allocate_collective(
        comm,
        &[Grid::new(3, 3); 5],
        mesh,
        &TightPacking::default(),
        Scaling::NonUniform,
    );
    println!(
        "RESULT too-many {}",
        r.map(|_| "ok".to_string())
            .unwrap_or_else(|e| e.to_string())
    );
    ctx.check("bad", true, "");
}

fn bench(ctx: &Ctx) {
    let comm = &ctx.world;
    let p = comm.size() as usize;
    let m: usize = ctx.arg(0, 64);
    let reps: usize = ctx.arg(1, 5);
    // m grids spread evenly, sizes of the AMR workload's range.
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    let all: Vec<Grid> = (0..m)
        .map(|_| Grid::new(rng.gen_range(40..140), rng.gen_range(30..90)))
        .collect();
    let (lo, hi) = (
        ctx.rank() as usize * m / p,
        (ctx.rank() as usize + 1) * m / p,
    );
    let tp = TightPacking::default();
    let mut per_round = Vec::new();
    let mut comm_round = Vec::new();
    let mut total = Vec::new();
    let mut last = None;
    for _ in 0..reps {
        comm.barrier();
        let t = std::time::Instant::now();
        let r = collective_tp(comm, &all[lo..hi], &tp, 1.0).expect("collective TP");
        total.push(t.elapsed().as_secs_f64());
        per_round.push(r.stats.rounds_s / r.stats.rounds as f64);
        comm_round.push(r.stats.rounds_comm_s / r.stats.rounds as f64);
        last = Some(r.stats);
    }
    per_round.sort_by(f64::total_cmp);
    comm_round.sort_by(f64::total_cmp);
    total.sort_by(f64::total_cmp);
    // Reference: latency of one small all-reduce on this many ranks.
    let n_ref = 2000;
    comm.barrier();
    let t0 = std::time::Instant::now();
    let mut x = 0u64;
    for i in 0..n_ref {
        comm.all_reduce_into(&(i as u64), &mut x, mpi::collective::SystemOperation::min());
    }
    let allreduce_us = t0.elapsed().as_secs_f64() * 1e6 / n_ref as f64;
    let t0 = std::time::Instant::now();
    let seq = tp.pack(&all, 1.0).expect("sequential");
    let seq_s = t0.elapsed().as_secs_f64();
    if ctx.rank() == 0 {
        if let Some(s) = last {
            println!(
                "RESULT bench np={p} m={m} per_round_us={:.1} in_collectives_us={:.1} allreduce_us={allreduce_us:.2} total_ms={:.3} sort_ms={:.3} route_ms={:.3} return_ms={:.3} sort_phases={} seq_ms={:.3} box={}x{}",
                per_round[reps / 2] * 1e6,
                comm_round[reps / 2] * 1e6,
                total[reps / 2] * 1e3,
                s.sort_s * 1e3,
                s.route_s * 1e3,
                s.return_s * 1e3,
                s.sort_phases,
                seq_s * 1e3,
                seq.width,
                seq.height
            );
        }
    }
    ctx.check("bench", true, "");
}
