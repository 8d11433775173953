//! Scenarios for `DistGraph`: scatter/gather round trip with the local
//! structure checked against the global graph, ghost exchange, random
//! successive migrations, and a bad partition giving the same error everywhere.

use mpi::traits::*;
use nuce::plan::graph::{Algo, Graph, Grouping, Partition};
use nuce::DistGraph;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::Ctx;

/// A deterministic irregular mesh graph (grid with holes and diagonals), the
/// same on every rank.
fn mesh(rows: usize, cols: usize, seed: u64) -> Graph {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let keep: Vec<bool> = (0..rows * cols).map(|_| rng.gen_bool(0.9)).collect();
    let mut id = vec![usize::MAX; rows * cols];
    let mut coords = Vec::new();
    let mut n = 0;
    for (k, &kept) in keep.iter().enumerate() {
        if kept {
            id[k] = n;
            n += 1;
            coords.extend([(k % cols) as f64, (k / cols) as f64]);
        }
    }
    let mut edges = Vec::new();
    for r in 0..rows {
        for c in 0..cols {
            for (dr, dc) in [(0, 1), (1, 0), (1, 1)] {
                if r + dr < rows && c + dc < cols {
                    let (a, b) = (id[r * cols + c], id[(r + dr) * cols + c + dc]);
                    if a != usize::MAX && b != usize::MAX {
                        edges.push((a, b, rng.gen_range(1..4) as f64));
                    }
                }
            }
        }
    }
    Graph::from_edges(n, edges, true)
        .and_then(|g| g.with_coords(2, coords))
        .expect("valid mesh")
}

/// Unique, bit-distinct value of vertex `v` (includes non-trivial mantissas).
fn value(v: usize, salt: u64) -> f64 {
    f64::from_bits(
        0x3ff0_0000_0000_0000 | ((v as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ salt) >> 12,
    )
}

fn random_partition(g: &Graph, p: usize, rng: &mut ChaCha8Rng) -> Partition {
    let speeds: Vec<f64> = (0..p).map(|_| rng.gen_range(1.0..8.0)).collect();
    match rng.gen_range(0..3) {
        0 => Algo::Hci
            .partition(g, &speeds, Grouping::Binpacking, None)
            .expect("hci"),
        1 => Algo::Rcb
            .partition(g, &speeds, Grouping::Simple, None)
            .expect("rcb"),
        _ => Partition::new(p, (0..g.n()).map(|_| rng.gen_range(0..p)).collect()).expect("random"),
    }
}

/// Checks owned set, local adjacency (in global CSR order) and values.
fn check_local(ctx: &Ctx, name: &str, g: &Graph, p: &Partition, dg: &DistGraph<f64>, salt: u64) {
    let me = ctx.rank() as usize;
    let want: Vec<usize> = (0..g.n()).filter(|&v| p.parts[v] == me).collect();
    ctx.check(
        &format!("{name}-owned"),
        dg.owned() == want.as_slice(),
        format!("{} owned", dg.owned().len()),
    );
    let no = dg.owned().len();
    let slot_id = |s: usize| {
        if s < no {
            dg.owned()[s]
        } else {
            dg.ghosts()[s - no]
        }
    };
    let adj_ok = dg.owned().iter().enumerate().all(|(i, &v)| {
        let local: Vec<(usize, f64)> = dg.neighbors(i).map(|(s, w)| (slot_id(s), w)).collect();
        let global: Vec<(usize, f64)> = g.weighted_neighbors(v).collect();
        local == global
    });
    ctx.check(
        &format!("{name}-adjacency"),
        adj_ok,
        "local adjacency differs",
    );
    let mut ghosts: Vec<usize> = want
        .iter()
        .flat_map(|&v| g.neighbors(v).iter().copied())
        .filter(|&u| p.parts[u] != me)
        .collect();
    ghosts.sort_unstable();
    ghosts.dedup();
    ctx.check(
        &format!("{name}-ghosts"),
        dg.ghosts() == ghosts.as_slice(),
        "ghost set differs",
    );
    let owners_ok = dg.ghosts().len() == dg.ghost_owners().len()
        && dg
            .ghosts()
            .iter()
            .zip(dg.ghost_owners())
            .all(|(&u, &o)| p.parts[u] == o as usize);
    ctx.check(
        &format!("{name}-ghost-owners"),
        owners_ok,
        "ghost owners differ from the partition",
    );
    let vals_ok = dg
        .owned()
        .iter()
        .zip(dg.values())
        .all(|(&v, x)| x.to_bits() == value(v, salt).to_bits());
    ctx.check(&format!("{name}-values"), vals_ok, "values differ");
}

/// Runs a `graph-*` scenario; false when the name is unknown.
pub fn run(name: &str, ctx: &Ctx) -> bool {
    let world = &ctx.world;
    let np = world.size() as usize;
    let rows = ctx.arg(0, 30usize);
    let cols = ctx.arg(1, 40usize);
    let g = mesh(rows, cols, 17);
    let salt = 0x1234_5678;
    let values: Vec<f64> = (0..g.n()).map(|v| value(v, salt)).collect();
    let mut rng = ChaCha8Rng::seed_from_u64(99);
    let root = 0;
    let is_root = ctx.rank() == root;
    match name {
        "graph-scatter" | "graph-ghost" | "graph-migrate" => {
            let p = random_partition(&g, np, &mut rng);
            let dg = DistGraph::scatter_with_partition(
                world,
                root,
                is_root.then_some(&g),
                is_root.then_some(&p),
                is_root.then_some(values.as_slice()),
            );
            let mut dg = match dg {
                Ok(d) => d,
                Err(e) => {
                    ctx.check("scatter", false, e);
                    return true;
                }
            };
            check_local(ctx, "scatter", &g, &p, &dg, salt);
            let back = dg.gather(root).expect("gather");
            if let Some(all) = back {
                let same = all
                    .iter()
                    .zip(&values)
                    .all(|(a, b)| a.to_bits() == b.to_bits());
                ctx.check(
                    "gather-bit-exact",
                    same && all.len() == values.len(),
                    "gathered values differ",
                );
            }
            if name == "graph-ghost" {
                let st = dg.exchange_ghosts().expect("ghost exchange");
                let ok = dg
                    .ghosts()
                    .iter()
                    .zip(dg.ghost_values())
                    .all(|(&u, x)| x.to_bits() == value(u, salt).to_bits())
                    && dg.ghost_values().len() == dg.ghosts().len();
                ctx.check("ghost-values", ok, "ghost values differ");
                // Bytes on the wire: one f64 (8 bytes) per ghost, no framing;
                // the figures are this rank's own (no collective per exchange).
                let ghosts = nuce::collective::sum_f64(world, dg.ghosts().len() as f64) as u64;
                let sent = nuce::collective::sum_f64(world, st.bytes_sent as f64) as u64;
                let owners: std::collections::BTreeSet<u32> =
                    dg.ghost_owners().iter().copied().collect();
                ctx.check(
                    "ghost-bytes",
                    sent == 8 * ghosts && st.bytes_received == 8 * dg.ghosts().len() as u64,
                    format!("{sent} bytes sent, expected {}", 8 * ghosts),
                );
                let msgs = nuce::collective::sum_f64(world, st.messages_sent as f64) as u64;
                let pairs = nuce::collective::sum_f64(world, owners.len() as f64) as u64;
                ctx.check(
                    "ghost-neighbour-only",
                    msgs == pairs && !owners.contains(&(ctx.rank() as u32)),
                    format!("{msgs} messages for {pairs} (receiver, owner) pairs"),
                );
                println!(
                    "RESULT {} ghosts {} messages {}",
                    ctx.rank(),
                    dg.ghosts().len(),
                    st.messages_sent
                );
            }
            if name == "graph-migrate" {
                let rounds = ctx.arg(2, 20usize);
                let mut cur = p;
                for round in 0..rounds {
                    let new = random_partition(&g, np, &mut rng);
                    let changed = cur.moved_to(&new).expect("same size").len() as u64;
                    let st = dg.remap(&new).expect("migrate");
                    ctx.check(
                        "migrate-moved",
                        st.moved_vertices == changed,
                        format!(
                            "round {round}: moved {} expected {changed}",
                            st.moved_vertices
                        ),
                    );
                    if changed == 0 {
                        ctx.check(
                            "migrate-nothing",
                            st.moves.bytes == 0,
                            "bytes moved for nothing",
                        );
                    }
                    check_local(ctx, "migrate", &g, &new, &dg, salt);
                    cur = new;
                }
                // Migrating to the same partition moves nothing.
                let st = dg.remap(&cur).expect("migrate");
                ctx.check(
                    "migrate-idempotent",
                    st.moved_vertices == 0 && st.moves.bytes == 0,
                    "moved",
                );
                dg.exchange_ghosts().expect("ghost exchange");
                let ok = dg
                    .ghosts()
                    .iter()
                    .zip(dg.ghost_values())
                    .all(|(&u, x)| x.to_bits() == value(u, salt).to_bits());
                ctx.check("migrate-ghosts", ok, "ghost values differ after migration");
            }
        }
        "graph-bad" => {
            // The root's partition has the wrong number of parts: every rank
            // must get the same error, nobody hangs.
            let p = Partition::new(np + 1, vec![0; g.n()]).expect("partition");
            let r = DistGraph::scatter_with_partition(
                world,
                root,
                is_root.then_some(&g),
                is_root.then_some(&p),
                is_root.then_some(values.as_slice()),
            );
            match r {
                Ok(_) => ctx.check("bad-scatter", false, "accepted a bad partition"),
                Err(e) => {
                    ctx.check("bad-scatter", true, "");
                    println!("RESULT {} error {e}", ctx.rank());
                }
            }
            let p = random_partition(&g, np, &mut rng);
            let mut dg = DistGraph::scatter_with_partition(
                world,
                root,
                is_root.then_some(&g),
                is_root.then_some(&p),
                is_root.then_some(values.as_slice()),
            )
            .expect("scatter");
            let short = Partition::new(np, vec![0; g.n() - 1]).expect("partition");
            let r = dg.remap(&short);
            ctx.check("bad-migrate", r.is_err(), "accepted a short partition");
            if let Err(e) = r {
                println!("RESULT {} error {e}", ctx.rank());
            }
        }
        _ => return false,
    }
    true
}
