//! nuce's geometric partitioners side by side with Zoltan's (issue 13 item
//! 5): [`Rcb`] against Zoltan's `LB_METHOD=RCB` and [`Hci`] against Zoltan's
//! `LB_METHOD=HSFC`, on the same graphs, coordinates and part sizes. Run by
//! `scripts/bench_zoltan.sh`, which generates the meshes, installs Zoltan and
//! builds its driver `benchmarks/zoltan_geom.c`.
//!
//! ```text
//! bench_zoltan REPS WORKDIR ZOLTAN_GEOM NAME=MESHFILE…
//! ```
//!
//! For every mesh (nodal graph with its node coordinates, written by our own
//! `io::write_metis` and `io::write_coords`), p ∈ {4, 8, 16} and three
//! target-weight kinds (uniform; two classes 1:4, alternating; random uniform
//! in [1, 4], seeded), runs both sides `REPS` times and keeps the least time of
//! each (nuce: wall time of the call in this process; Zoltan: wall time of
//! `Zoltan_LB_Partition` in its driver, one rank, file I/O excluded). Cut and
//! imbalance of both are measured here by the same `metrics` (imbalance =
//! max over parts of weight / target − 1). nuce runs with both processor
//! groupings (`Simple`, the default, and `Binpacking`, rows "-B"); Zoltan has
//! its own. Also reports the cut of nuce's partition after
//! `FmRefiner::default()` (3 % tolerance), for reference. Prints one Markdown
//! row per case and the geometric means and maxima.

use std::process::Command;
use std::time::Instant;

use nuce::plan::graph::{
    io, metrics, FmRefiner, Graph, GraphPartitioner, Grouping, Hci, Metrics, Partition, Rcb,
};
use rand::SeedableRng;

#[path = "common/metis_cli.rs"]
#[allow(dead_code)]
mod metis_cli;
use metis_cli::load;
#[path = "common/compare.rs"]
mod compare;
use compare::{gmean, max, targets, KINDS, PS};

/// The largest imbalance either side may have for its cut to be compared
/// (both measure below 0.6 % on the meshes of `scripts/bench_zoltan.sh`).
const MAX_IMBALANCE: f64 = 0.05;

/// One side of a comparison: its partition, its best time, its metrics.
struct Run {
    part: Partition,
    secs: f64,
    m: Metrics,
}

/// Runs Zoltan's driver: `method` on the graph and coordinates files with
/// part sizes `t`, `reps` times inside the driver (it reports the least).
fn zoltan(
    exe: &str,
    method: &str,
    files: (&str, &str, &str),
    g: &Graph,
    t: &[f64],
    reps: usize,
) -> Run {
    let (graph, coords, out) = files;
    let tl: Vec<String> = t.iter().map(|x| format!("{x}")).collect();
    let o = Command::new(exe)
        .args([method, graph, coords, &tl.join(","), out, &reps.to_string()])
        .output()
        .expect("zoltan_geom (built by scripts/bench_zoltan.sh)");
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success(),
        "zoltan_geom {method} failed: {text}{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let secs = text
        .split_whitespace()
        .skip_while(|w| *w != "seconds")
        .nth(1)
        .and_then(|s| s.parse().ok())
        .expect("zoltan_geom prints its seconds");
    let text = std::fs::read_to_string(out).expect("zoltan part file");
    let part = io::parse_partition(&text, "zoltan", g.n(), t.len()).expect("zoltan partition");
    let m = metrics(g, &part, t).expect("metrics");
    Run { part, secs, m }
}

/// Runs nuce's partitioner `reps` times and keeps the least time.
fn nuce(alg: &dyn GraphPartitioner, g: &Graph, t: &[f64], reps: usize) -> Run {
    let mut secs = f64::INFINITY;
    let mut part = None;
    for _ in 0..reps {
        let t0 = Instant::now();
        let q = alg.partition(g, t).expect("partition");
        secs = secs.min(t0.elapsed().as_secs_f64());
        part = Some(q);
    }
    let part = part.expect("a run");
    let m = metrics(g, &part, t).expect("metrics");
    Run { part, secs, m }
}

/// Ratios of one method pair over all cases, and the worst imbalances.
#[derive(Default)]
struct Tally {
    cut: Vec<f64>,
    refined: Vec<f64>,
    time: Vec<f64>,
    imb: f64,
    zimb: f64,
}

fn main() {
    let (args, reps, work) = compare::args();
    let exe = args
        .get(2)
        .cloned()
        .unwrap_or_else(|| format!("{work}/zoltan_geom"));
    let fm = FmRefiner::default();
    let (s, b) = (Grouping::Simple, Grouping::Binpacking);
    let (rcb, rcbb) = (Rcb { grouping: s }, Rcb { grouping: b });
    let (hci, hcib) = (Hci { grouping: s }, Hci { grouping: b });
    let pairs: [(&str, &dyn GraphPartitioner, &str); 4] = [
        ("RCB", &rcb, "RCB"),
        ("RCB-B", &rcbb, "RCB"),
        ("HCI", &hci, "HSFC"),
        ("HCI-B", &hcib, "HSFC"),
    ];
    println!("nuce `Rcb` and `Hci` (no refinement; -B: `Grouping::Binpacking`, else the default `Simple`) against Zoltan RCB and HSFC; best of {reps} runs for both.\n");
    println!("| graph | vertices | p | targets | nuce / Zoltan | cut nuce | cut Zoltan | cut ratio | imb. nuce | imb. Zoltan | s nuce | s Zoltan | time ratio | cut nuce+FM / Zoltan |");
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|");
    let mut tally: [Tally; 4] = Default::default();
    let mut per_graph = Vec::new();
    for spec in args.iter().skip(3) {
        let (name, file) = spec.split_once('=').expect("NAME=FILE");
        let g = load(file);
        let (gf, cf, pf) = (
            format!("{work}/{name}.graph"),
            format!("{work}/{name}.xyz"),
            format!("{work}/{name}.zoltan.part"),
        );
        std::fs::write(&gf, io::write_metis(&g)).expect("write graph");
        std::fs::write(&cf, io::write_coords(&g)).expect("write coords");
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(2025);
        let mut gc: [Vec<f64>; 4] = Default::default();
        for &p in &PS {
            for kind in KINDS {
                let t = targets(kind, p, &mut rng);
                for (k, &(label, alg, method)) in pairs.iter().enumerate() {
                    let a = nuce(alg, &g, &t, reps);
                    let z = zoltan(&exe, method, (&gf, &cf, &pf), &g, &t, reps);
                    // A cut comparison means something only at the same part sizes: a
                    // misread target list would show here first.
                    for (side, imb) in [("nuce", a.m.imbalance), ("Zoltan", z.m.imbalance)] {
                        assert!(
                            imb <= MAX_IMBALANCE,
                            "{name} p = {p} {kind} {label}/{method}: {side} is {:.1} % off its targets",
                            100.0 * imb
                        );
                    }
                    let mut r = a.part.clone();
                    fm.refine(&g, &t, &mut r).expect("refine");
                    let rm = metrics(&g, &r, &t).expect("metrics");
                    // Both clocks read microseconds at best: a 0 counts as 1 µs.
                    let (zs, ns) = (z.secs.max(1e-6), a.secs.max(1e-6));
                    let (cr, tr, rr) = (
                        a.m.edge_cut / z.m.edge_cut,
                        ns / zs,
                        rm.edge_cut / z.m.edge_cut,
                    );
                    println!(
                        "| {name} | {} | {p} | {kind} | {label} / {method} | {} | {} | {cr:.3} | {:.2} % | {:.2} % | {ns:.4} | {zs:.4} | {tr:.2} | {rr:.3} |",
                        g.n(),
                        a.m.edge_cut,
                        z.m.edge_cut,
                        100.0 * a.m.imbalance,
                        100.0 * z.m.imbalance,
                    );
                    let s = &mut tally[k];
                    s.cut.push(cr);
                    s.refined.push(rr);
                    s.time.push(tr);
                    s.imb = s.imb.max(a.m.imbalance);
                    s.zimb = s.zimb.max(z.m.imbalance);
                    gc[k].push(cr);
                }
            }
        }
        per_graph.push((name.to_string(), g.n(), g.coords().map_or(0, |c| c.dim), gc));
    }
    print!("\n| graph | vertices | dim |");
    for (label, _, method) in pairs {
        print!(" {label} / {method} cut gmean (max) |");
    }
    println!("\n|---|---|---|---|---|---|---|");
    for (name, n, dim, gc) in &per_graph {
        print!("| {name} | {n} | {dim} |");
        for c in gc {
            print!(" {:.3} ({:.3}) |", gmean(c), max(c));
        }
        println!();
    }
    println!();
    for (s, (label, _, method)) in tally.iter().zip(pairs) {
        let below = s.cut.iter().filter(|&&c| c < 1.0).count();
        println!(
            "**{label} / Zoltan {method}, {} cases: cut geometric mean {:.3} (min {:.3}, max {:.3}; nuce lower in {below}), time geometric mean {:.2} (max {:.2}); worst imbalance nuce {:.2} %, Zoltan {:.2} %; after FM the cut is {:.3} × Zoltan's (geometric mean).**\n",
            s.cut.len(),
            gmean(&s.cut),
            s.cut.iter().fold(f64::INFINITY, |a, &b| a.min(b)),
            max(&s.cut),
            gmean(&s.time),
            max(&s.time),
            100.0 * s.imb,
            100.0 * s.zimb,
            gmean(&s.refined),
        );
    }
}
