//! Repartitioning after a change of speeds (issue 13 item 2): the cut and
//! the moved volume of the index-based remap, migration-aware
//! repartitioning (`graph::Repartitioner`) at three `itr` settings, and
//! partitioning from scratch (with and without relabelling). Run by
//! `scripts/bench_repart.sh`, which generates the meshes.
//!
//! ```text
//! bench_repart NAME=MESHFILE…
//! ```
//!
//! Two changes per mesh: 4 equal parts, then part 0 three times slower
//! (targets 1/3, 1, 1, 1); and 8 parts of random speeds in [1, 4], then
//! other random speeds (seeded). The index-based remap re-cuts its own
//! Hilbert order ([`Ordering::recut`], \[KOR95\] §3) from its own cut for the
//! old speeds; every other method starts from `Multilevel`'s partition for
//! the old speeds. Moved = vertices whose part changes (migration size 1).

use std::time::Instant;

use nuce::plan::graph::repart::{moved_volume, relabel, scratch_remap};
use nuce::plan::graph::{
    metrics, Graph, GraphPartitioner, Grouping, IndexKind, Multilevel, Ordering, Partition,
    Repartitioner, Rsb,
};
use rand::{Rng, SeedableRng};

#[path = "common/metis_cli.rs"]
#[allow(dead_code)]
mod metis_cli;

struct Row {
    method: String,
    current_cut: f64,
    p: Partition,
    secs: f64,
}

fn timed<T>(f: impl FnOnce() -> T) -> (T, f64) {
    let t0 = Instant::now();
    let x = f();
    (x, t0.elapsed().as_secs_f64())
}

fn case(name: &str, g: &Graph, change: &str, old: &[f64], new: &[f64]) {
    let ml = Multilevel::default();
    let cur = ml.partition(g, old).expect("multilevel");
    let cur_cut = metrics(g, &cur, old).expect("metrics").edge_cut;
    let mut rows = Vec::new();
    // Index-based remap of a Hilbert order.
    let ord = Ordering::build(g, IndexKind::Hci, &Rsb::default(), 1024).expect("order");
    let old_cut = ord.cut(old, Grouping::Simple).expect("cut");
    let idx_cur = ord.to_partition(&old_cut).expect("partition");
    let (idx_new, idx_secs) = timed(|| {
        let c = ord.recut(&old_cut, new, Grouping::Simple).expect("recut");
        ord.to_partition(&c).expect("partition")
    });
    let idx_cur_cut = metrics(g, &idx_cur, old).expect("metrics").edge_cut;
    let idx_moved = moved_volume(&idx_cur, &idx_new, None).expect("moved");
    for itr in [1.0, 10.0, 1000.0] {
        let rp = Repartitioner {
            itr,
            ..Repartitioner::default()
        };
        let (r, secs) = timed(|| rp.repartition(g, &cur, new, None).expect("repartition"));
        rows.push(Row {
            method: format!("migration-aware, itr = {itr} ({:?})", r.method).to_lowercase(),
            current_cut: cur_cut,
            p: r.partition,
            secs,
        });
    }
    let (fresh, fresh_secs) = timed(|| ml.partition(g, new).expect("multilevel"));
    rows.push(Row {
        method: "scratch, relabelled among equal targets".into(),
        current_cut: cur_cut,
        p: relabel(&cur, &fresh, new, None).expect("relabel"),
        secs: fresh_secs,
    });
    let rp = Repartitioner::default();
    let (sr, secs) = timed(|| scratch_remap(g, &cur, new, None, &rp).expect("scratch"));
    rows.push(Row {
        method: "scratch-remap alone (itr = 1000)".into(),
        current_cut: cur_cut,
        p: sr,
        secs,
    });
    rows.push(Row {
        method: "scratch, labels as they come".into(),
        current_cut: cur_cut,
        p: fresh,
        secs: fresh_secs,
    });
    let scratch_cut = metrics(g, &rows[3].p, new).expect("metrics").edge_cut;
    let n = g.n() as f64;
    let print = |method: &str, cc: f64, m: &nuce::plan::graph::Metrics, moved: f64, secs: f64| {
        println!(
            "| {name} | {change} | {method} | {cc} | {} | {:.3} | {} | {:.1} % | {:.2} % | {secs:.4} |",
            m.edge_cut,
            m.edge_cut / scratch_cut,
            moved,
            100.0 * moved / n,
            100.0 * m.imbalance
        );
    };
    let mi = metrics(g, &idx_new, new).expect("metrics");
    print(
        "index-based remap (HCI recut)",
        idx_cur_cut,
        &mi,
        idx_moved,
        idx_secs,
    );
    for r in &rows {
        let m = metrics(g, &r.p, new).expect("metrics");
        let moved = moved_volume(&cur, &r.p, None).expect("moved");
        print(&r.method, r.current_cut, &m, moved, r.secs);
    }
}

fn main() {
    println!("| mesh | change | method | cut before | cut after | cut / scratch | moved | moved % | imbalance | s |");
    println!("|---|---|---|---|---|---|---|---|---|---|");
    for spec in std::env::args().skip(1) {
        let (name, file) = spec.split_once('=').expect("NAME=FILE");
        let g = metis_cli::load(file);
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(13);
        case(
            name,
            &g,
            "4 parts: part 0 3× slower",
            &[1.0; 4],
            &[1.0 / 3.0, 1.0, 1.0, 1.0],
        );
        let old: Vec<f64> = (0..8).map(|_| rng.gen_range(1.0..=4.0)).collect();
        let new: Vec<f64> = (0..8).map(|_| rng.gen_range(1.0..=4.0)).collect();
        case(name, &g, "8 parts: random → random", &old, &new);
    }
}
