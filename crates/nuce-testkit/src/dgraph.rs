//! Scenarios for the distributed construction and partitioning of
//! `DistGraph`: a 3D grid built from per-rank slabs (`from_local`), parallel
//! RCB / Hilbert partitioning for random targets (balance checked by
//! collective sums), migration preserving every vertex and value, the
//! prefix-sum remap, agreement with the root-based path, per-rank storage
//! bounded by the local size, and bad pieces failing alike on every rank.

use mpi::traits::*;
use nuce::collective::{max_f64, sum_f64};
use nuce::plan::graph::slab::{block_of, grid_slab};
use nuce::plan::graph::{Coords, Graph};
use nuce::{DistGraph, GraphStrategy};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::Ctx;

/// Value of vertex `v`: a distinct, non-trivial bit pattern.
fn value(v: usize) -> (f64, u32) {
    (
        f64::from_bits(
            0x3ff0_0000_0000_0000 | (v as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 12,
        ),
        v as u32 ^ 0xa5a5_a5a5,
    )
}

/// Weight of vertex `v`: 1, 2 or 3.
fn weight(v: usize) -> f64 {
    1.0 + (v % 3) as f64
}

type G = DistGraph<(f64, u32)>;

/// This rank's slab of the `dims` grid as a distributed graph (weighted
/// vertices, unit edges), or with a duplicate id when `corrupt`.
fn build(ctx: &Ctx, dims: (usize, usize, usize), corrupt: bool) -> nuce::Result<G> {
    let (p, r) = (ctx.world.size() as usize, ctx.rank() as usize);
    let n = dims.0 * dims.1 * dims.2;
    let (lo, hi) = block_of(n, r, p);
    let s = grid_slab(dims, lo, hi, 0.3)?;
    let mut ids = s.ids;
    if corrupt && r == p - 1 && !ids.is_empty() {
        ids[0] = 0; // vertex 0 also owned by rank 0
    }
    let vwgt = ids.iter().map(|&v| weight(v)).collect();
    let values = ids.iter().map(|&v| value(v)).collect();
    DistGraph::from_local(
        &ctx.world,
        ids,
        s.xadj,
        s.adjncy,
        Some(vwgt),
        None,
        Some(Coords {
            dim: 3,
            data: s.coords,
        }),
        values,
    )
}

/// Every vertex owned once (count, Σ id, Σ id²), every value its vertex's,
/// and the rank's storage bounded by its local size.
/// The whole grid graph and its values on the root (what the root-based
/// path starts from); `None` and no values elsewhere.
fn whole_at_root(
    root: bool,
    dims: (usize, usize, usize),
    n: usize,
) -> (Option<Graph>, Vec<(f64, u32)>) {
    if !root {
        return (None, Vec::new());
    }
    let s = grid_slab(dims, 0, n, 0.3).expect("grid");
    let vw = (0..n).map(weight).collect();
    let g = Graph::from_csr(s.xadj, s.adjncy, Some(vw), None)
        .and_then(|g| g.with_coords(3, s.coords))
        .expect("graph");
    (Some(g), (0..n).map(value).collect())
}

fn check_layout(ctx: &Ctx, g: &G, n: usize, when: &str) {
    let w = &ctx.world;
    let owned = g.owned();
    let nf = n as f64;
    let count = sum_f64(w, owned.len() as f64);
    let ids = sum_f64(w, owned.iter().map(|&v| v as f64).sum());
    let sq = sum_f64(w, owned.iter().map(|&v| (v * v) as f64).sum());
    ctx.check(
        &format!("{when}-owned-once"),
        count == nf
            && ids == nf * (nf - 1.0) / 2.0
            && sq == (nf - 1.0) * nf * (2.0 * nf - 1.0) / 6.0,
        format!("{count} vertices, Σ id {ids}, Σ id² {sq}"),
    );
    let vals = owned.iter().zip(g.values()).all(|(&v, x)| {
        let y = value(v);
        x.0.to_bits() == y.0.to_bits() && x.1 == y.1
    }) && owned.windows(2).all(|p| p[0] < p[1]);
    ctx.check(
        &format!("{when}-values"),
        vals,
        "a value moved without its vertex",
    );
    let s = g.local_sizes();
    let p = w.size() as usize;
    let bound = 7 * s.owned + 3 * s.arcs + 4 * s.ghosts + 4 * p + 4;
    ctx.check(
        &format!("{when}-local-storage"),
        s.total_elements <= bound && s.arcs == 6 * s.owned - boundary_arcs(g),
        format!("{s:?} over the bound {bound}"),
    );
    println!(
        "RESULT {} {when} owned {} ghosts {} held {} n {n}",
        ctx.rank(),
        s.owned,
        s.ghosts,
        s.total_elements
    );
}

/// Arcs missing from the owned vertices because they sit on the grid's boundary.
fn boundary_arcs(g: &G) -> usize {
    (0..g.owned().len())
        .map(|i| 6 - g.neighbors(i).count())
        .sum()
}

/// Each rank's weight within one heaviest vertex per bisection level of
/// its share of the targets.
fn check_balance(ctx: &Ctx, g: &G, targets: &[f64], what: &str) -> f64 {
    let w = &ctx.world;
    let mine: f64 = (0..g.owned().len()).map(|i| g.vertex_weight(i)).sum();
    let total = sum_f64(w, mine);
    let share = total * targets[ctx.rank() as usize] / targets.iter().sum::<f64>();
    let levels = (targets.len() as f64).log2().ceil();
    let err = (mine - share).abs();
    ctx.check(
        &format!("{what}-balance"),
        err <= 3.0 * levels.max(1.0),
        format!("weight {mine}, target {share}"),
    );
    max_f64(w, err / share)
}

/// Each rank's weight within 10 % (plus two heaviest vertices) of its
/// share of the `targets`.
fn check_share(ctx: &Ctx, g: &G, targets: &[f64], what: &str) {
    let mine = g.local_work();
    let total = sum_f64(&ctx.world, mine);
    let share = total * targets[ctx.rank() as usize] / targets.iter().sum::<f64>();
    ctx.check(
        &format!("{what}-share"),
        (mine - share).abs() <= 0.1 * share + 6.0,
        format!("weight {mine}, share {share}"),
    );
}

/// Runs a `dgraph-*` scenario; false when the name is unknown.
pub fn run(name: &str, ctx: &Ctx) -> bool {
    let w = &ctx.world;
    let p = w.size() as usize;
    let dims = (ctx.arg(0, 12usize), ctx.arg(1, 10usize), ctx.arg(2, 9usize));
    let n = dims.0 * dims.1 * dims.2;
    let mut rng = ChaCha8Rng::seed_from_u64(ctx.arg(3, 5u64));
    let mut targets = || -> Vec<f64> { (0..p).map(|_| rng.gen_range(1.0..6.0)).collect() };
    match name {
        "dgraph-partition" => {
            let mut g = build(ctx, dims, false).expect("from_local");
            check_layout(ctx, &g, n, "built");
            for (round, algo) in ["rcb", "sfc", "rcb", "sfc"].iter().enumerate() {
                let t = targets();
                let dest = match *algo {
                    "rcb" => g.partition_rcb(&t),
                    _ => g.partition_sfc(&t),
                }
                .expect("partition");
                let st = g.migrate(&dest).expect("migrate");
                let here = format!("{algo}{round}");
                check_layout(ctx, &g, n, &here);
                let err = check_balance(ctx, &g, &t, &here);
                let moved = sum_f64(
                    w,
                    dest.iter()
                        .enumerate()
                        .filter(|&(_, &q)| q != ctx.rank() as usize)
                        .count() as f64,
                );
                ctx.check(
                    &format!("{here}-moved"),
                    st.moved_vertices == moved as u64,
                    format!("moved {} of {moved}", st.moved_vertices),
                );
                println!("RESULT {} {here} max_rel_err {err:.3e}", ctx.rank());
            }
            // The prefix-sum remap after a Hilbert partition: the same targets
            // move at most one vertex per boundary; new ones stay balanced.
            let t = targets();
            let dest = g.partition_sfc(&t).expect("sfc");
            g.migrate(&dest).expect("migrate");
            let same = g.prefix_cut(&t).expect("prefix");
            let st = g.migrate(&same).expect("migrate");
            // Each bisection level may shift a boundary by one vertex.
            let slack = 2 * p as u64 * ((p as f64).log2().ceil() as u64 + 1);
            ctx.check(
                "prefix-same-targets",
                st.moved_vertices <= slack,
                format!("{} moved for unchanged targets", st.moved_vertices),
            );
            let mut t2 = t.clone();
            t2[p - 1] *= 3.0;
            let dest = g.prefix_cut(&t2).expect("prefix");
            let before = g.owned().len() as f64;
            let st = g.migrate(&dest).expect("migrate");
            check_layout(ctx, &g, n, "prefix");
            check_balance(ctx, &g, &t2, "prefix");
            // Order-preserving intervals: the last rank only gains vertices.
            let after = g.owned().len() as f64;
            let last = ctx.rank() as usize == p - 1;
            ctx.check(
                "prefix-last-grows",
                !last || p == 1 || after > before,
                format!("{before} → {after}"),
            );
            println!("RESULT {} prefix moved {}", ctx.rank(), st.moved_vertices);
        }
        "dgraph-root" => {
            // The same grid through the root-based path, with the partition
            // the parallel RCB found: identical local graphs and ghost values.
            let mut g = build(ctx, dims, false).expect("from_local");
            let dest = g.partition_rcb(&targets()).expect("rcb");
            g.migrate(&dest).expect("migrate");
            let part = g.partition();
            let root = ctx.rank() == 0;
            let (whole, vals) = whole_at_root(root, dims, n);
            let mut r: G = DistGraph::scatter_with_partition(
                w,
                0,
                whole.as_ref(),
                root.then_some(&part),
                root.then_some(vals.as_slice()),
            )
            .expect("scatter");
            ctx.check(
                "root-same-owned",
                r.owned() == g.owned()
                    && r.ghosts() == g.ghosts()
                    && r.ghost_owners() == g.ghost_owners(),
                "owned or ghost sets differ",
            );
            let adj_same = (0..g.owned().len())
                .all(|i| g.neighbors(i).eq(r.neighbors(i)) && g.coords(i) == r.coords(i));
            ctx.check("root-same-adjacency", adj_same, "adjacency differs");
            g.exchange_ghosts().expect("exchange");
            r.exchange_ghosts().expect("exchange");
            let same = g.ghost_values().len() == g.ghosts().len()
                && g.ghost_values()
                    .iter()
                    .zip(r.ghost_values())
                    .all(|(a, b)| a.0.to_bits() == b.0.to_bits() && a.1 == b.1)
                && g.ghosts()
                    .iter()
                    .zip(g.ghost_values())
                    .all(|(&u, x)| x.1 == value(u).1);
            ctx.check("root-same-ghost-values", same, "ghost values differ");
            let back = g.gather(0).expect("gather");
            if let Some(all) = back {
                ctx.check(
                    "gather",
                    all.len() == n && all.iter().enumerate().all(|(v, x)| x.1 == value(v).1),
                    "gathered values differ",
                );
            }
        }
        "dgraph-balancer" => {
            // Balancer verbs on a distributed graph: parallel RCB for the
            // (uniform) speeds, then phases recorded at speeds 1, 2, …, p
            // lead the prefix-sum remap to loads in proportion to them.
            let mut g = build(ctx, dims, false).expect("from_local");
            let mut bal = nuce::Balancer::new(w).expect("balancer");
            g.balance(&mut bal).expect("partition");
            check_balance(ctx, &g, &vec![1.0; p], "balancer-uniform");
            let speed = 1.0 + ctx.rank() as f64;
            let iters = 1000;
            let work = g.local_work() * iters as f64;
            bal.record_phase(work, std::time::Duration::from_secs_f64(work / speed / 1e6))
                .expect("record");
            let rep = bal.maybe_remap(&mut g, iters).expect("remap");
            ctx.check(
                "balancer-remapped",
                p == 1 || (rep.remap && rep.moved.is_some()),
                format!("{:?}", rep.decision),
            );
            check_layout(ctx, &g, n, "balancer");
            let targets: Vec<f64> = (1..=p).map(|r| r as f64).collect();
            check_balance(ctx, &g, &targets, "balancer-speeds");
            println!(
                "RESULT {} decision {} {:.6e}",
                ctx.rank(),
                rep.remap,
                rep.t_candidate
            );
        }
        "dgraph-index" => {
            // A graph from DistGraph::scatter (root index), moved by a
            // local migrate: the root's view of the owners follows, so the
            // next decision weighs the real current loads.
            let root = ctx.rank() == 0;
            let (whole, vals) = whole_at_root(root, dims, n);
            let mut bal = nuce::Balancer::new(w).expect("balancer");
            let mut g: G =
                DistGraph::scatter(&mut bal, whole.as_ref(), root.then_some(vals.as_slice()))
                    .expect("scatter_graph");
            let skew: Vec<f64> = (0..p).map(|r| 1.0 + 3.0 * r as f64).collect();
            let dest = g.partition_rcb(&skew).expect("rcb");
            g.migrate(&dest).expect("migrate");
            let iters = 1000;
            let work = g.local_work() * iters as f64;
            bal.record_phase(work, std::time::Duration::from_secs_f64(work / 1e6))
                .expect("record");
            let rep = bal.maybe_remap(&mut g, iters).expect("maybe_remap");
            // The imbalance of the current layout for the merged speeds, by collective sums.
            let mine = g.local_work();
            let total = sum_f64(w, mine);
            let s = &rep.speeds;
            let ideal = total / s.iter().sum::<f64>();
            let worst = max_f64(w, mine / s[ctx.rank() as usize]);
            let have = worst / ideal - 1.0;
            // Without a remap the root's view of the current loads must be the
            // layout's; after one, the layout is the candidate's. (A stale view
            // — the loads of the scatter — would see a balanced layout and
            // keep the skewed one.)
            let want = if rep.remap {
                rep.imbalance_candidate
            } else {
                rep.imbalance_current
            };
            ctx.check(
                "index-follows-migrate",
                (have - want).abs() < 1e-9 && (p == 1 || rep.remap),
                format!("root thinks {want}, layout has {have}, remap {}", rep.remap),
            );
            check_layout(ctx, &g, n, "index");
        }
        "dgraph-lifecycle" => {
            // One balancing lifecycle for both strategies: the first
            // partition follows set_speeds, then maybe_remap and
            // maybe_remap_ahead follow recorded phases at other speeds,
            // moving vertices with their values.
            let root = ctx.rank() == 0;
            let up: Vec<f64> = (1..=p).map(|r| r as f64).collect();
            let down: Vec<f64> = (0..p).map(|r| (p - r) as f64).collect();
            // Rank 0 ten times slower than in `down` (a real change, not smoothed away).
            let mut slow0 = down.clone();
            slow0[0] /= 10.0 * p as f64;
            for want in [GraphStrategy::RootIndex, GraphStrategy::Geometric] {
                let name = format!("{want:?}");
                let mut bal = nuce::Balancer::new(w).expect("balancer");
                bal.set_speeds(&up).expect("set_speeds");
                let mut g: G = if want == GraphStrategy::RootIndex {
                    let (whole, vals) = whole_at_root(root, dims, n);
                    DistGraph::scatter(&mut bal, whole.as_ref(), root.then_some(vals.as_slice()))
                        .expect("scatter_graph")
                } else {
                    let mut g = build(ctx, dims, false).expect("from_local");
                    g.balance(&mut bal).expect("partition");
                    g
                };
                ctx.check(
                    &format!("{name}-strategy"),
                    g.strategy() == want,
                    format!("{:?}", g.strategy()),
                );
                check_layout(ctx, &g, n, &format!("{name}-first"));
                check_share(ctx, &g, &up, &format!("{name}-first"));
                let iters = 1000;
                for (k, speeds) in [&down, &slow0].into_iter().enumerate() {
                    let speed = speeds[ctx.rank() as usize];
                    let work = g.local_work() * iters as f64;
                    bal.record_phase(work, std::time::Duration::from_secs_f64(work / speed / 1e6))
                        .expect("record");
                    let rep = if k == 0 {
                        bal.maybe_remap(&mut g, iters)
                    } else {
                        bal.maybe_remap_ahead(&mut g, iters, 10 * iters)
                    }
                    .expect("remap");
                    let when = format!("{name}-remap{k}");
                    ctx.check(
                        &format!("{when}-moved"),
                        p == 1 || (rep.remap && rep.moved.is_some_and(|m| m.bytes > 0)),
                        format!("{:?}", rep.decision),
                    );
                    check_layout(ctx, &g, n, &when);
                    if p > 1 {
                        check_share(ctx, &g, speeds, &when);
                    }
                    println!("RESULT {} {when} decision {}", ctx.rank(), rep.remap);
                }
                g.exchange_ghosts().expect("exchange");
                let ghosts_ok = g
                    .ghosts()
                    .iter()
                    .zip(g.ghost_values())
                    .all(|(&u, x)| x.0.to_bits() == value(u).0.to_bits() && x.1 == value(u).1);
                ctx.check(
                    &format!("{name}-ghost-values"),
                    ghosts_ok,
                    "a ghost value is not its vertex's",
                );
            }
            // A distributed graph without coordinates: refused when built.
            let (lo, hi) = block_of(n, ctx.rank() as usize, p);
            let s = grid_slab(dims, lo, hi, 0.3).expect("slab");
            let values = s.ids.iter().map(|&v| value(v)).collect();
            let r = G::from_local(w, s.ids, s.xadj, s.adjncy, None, None, None, values);
            ctx.check("no-coords-refused", r.is_err(), "built without coordinates");
            if let Err(e) = r {
                println!("RESULT {} error {e}", ctx.rank());
            }
        }
        "dgraph-bad" => {
            let r = build(ctx, dims, true);
            match r {
                Ok(_) => ctx.check("bad-duplicate", false, "accepted a vertex owned twice"),
                Err(e) => {
                    ctx.check("bad-duplicate", true, "");
                    println!("RESULT {} error {e}", ctx.rank());
                }
            }
            let g = build(ctx, dims, false).expect("from_local");
            let short = vec![1.0; p + 1];
            let r = g.partition_rcb(&short);
            ctx.check(
                "bad-targets",
                r.is_err(),
                "accepted targets of the wrong length",
            );
            if let Err(e) = r {
                println!("RESULT {} error {e}", ctx.rank());
            }
        }
        _ => return false,
    }
    true
}
