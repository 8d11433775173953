//! nuce's multilevel partitioner (\[KK98\]-style, `Algo::Multilevel`) side by
//! side with `gpmetis -tpwgts` on the same graphs and target weights. Run by
//! `scripts/bench_multilevel.sh`, which generates the meshes and installs
//! `gpmetis`.
//!
//! ```text
//! bench_multilevel REPS WORKDIR NAME=MESHFILE…
//! ```
//!
//! For every mesh (nodal graph, written for METIS by our own writer),
//! p ∈ {4, 8, 16} and three target-weight kinds (uniform; two classes 1:4,
//! alternating; random uniform in [1, 4], seeded), runs both partitioners
//! `REPS` times and keeps the least time of each (nuce: wall time of the call
//! in this process; METIS: its own "Partitioning:" line, file I/O excluded).
//! Prints one Markdown row per case (cut ratio, imbalances, time ratio) and
//! the geometric means and maxima.

use std::time::Instant;

use nuce::plan::graph::{io, metrics, GraphPartitioner, Multilevel};
use rand::SeedableRng;

#[path = "common/metis_cli.rs"]
mod metis_cli;
use metis_cli::{load, metis};
#[path = "common/compare.rs"]
mod compare;
use compare::{gmean, max, targets, KINDS, PS};

fn main() {
    let (args, reps, work) = compare::args();
    let ml = Multilevel::default();
    println!("nuce `Multilevel::default()` = {ml:?}; best of {reps} runs for both.\n");
    println!("| graph | vertices | p | targets | cut nuce | cut METIS | cut ratio | imb. nuce | imb. METIS | s nuce | s METIS | time ratio |");
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|");
    let (mut cuts, mut times) = (Vec::new(), Vec::new());
    let (mut worst_imb, mut worst_metis_imb) = (0.0f64, 0.0f64);
    let mut per_graph = Vec::new();
    for spec in args.iter().skip(2) {
        let (name, file) = spec.split_once('=').expect("NAME=FILE");
        let g = load(file);
        let gf = format!("{work}/{name}.graph");
        std::fs::write(&gf, io::write_metis(&g)).expect("write graph");
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(2025);
        let (mut gc, mut gt) = (Vec::new(), Vec::new());
        for &p in &PS {
            for kind in KINDS {
                let t = targets(kind, p, &mut rng);
                let mut secs = f64::INFINITY;
                let mut part = None;
                for _ in 0..reps {
                    let t0 = Instant::now();
                    let q = ml.partition(&g, &t).expect("multilevel");
                    secs = secs.min(t0.elapsed().as_secs_f64());
                    part = Some(q);
                }
                let m = metrics(&g, &part.expect("a run"), &t).expect("metrics");
                let mut msecs = f64::INFINITY;
                let mut mpart = None;
                for _ in 0..reps {
                    let (q, s) = metis(&gf, &work, &t, g.n());
                    msecs = msecs.min(s);
                    mpart = Some(q);
                }
                let mm = metrics(&g, &mpart.expect("a run"), &t).expect("metrics");
                // METIS prints milliseconds: a 0.000 reading counts as 0.5 ms.
                let msecs = msecs.max(0.0005);
                let (cr, tr) = (m.edge_cut / mm.edge_cut, secs / msecs);
                println!(
                    "| {name} | {} | {p} | {kind} | {} | {} | {cr:.3} | {:.2} % | {:.2} % | {secs:.4} | {msecs:.3} | {tr:.2} |",
                    g.n(),
                    m.edge_cut,
                    mm.edge_cut,
                    100.0 * m.imbalance,
                    100.0 * mm.imbalance,
                );
                cuts.push(cr);
                times.push(tr);
                gc.push(cr);
                gt.push(tr);
                worst_imb = worst_imb.max(m.imbalance);
                worst_metis_imb = worst_metis_imb.max(mm.imbalance);
            }
        }
        per_graph.push((name.to_string(), g.n(), gc, gt));
    }
    println!("\n| graph | vertices | cut ratio gmean | cut ratio max | time ratio gmean | time ratio max |\n|---|---|---|---|---|---|");
    for (name, n, c, t) in &per_graph {
        println!(
            "| {name} | {n} | {:.3} | {:.3} | {:.2} | {:.2} |",
            gmean(c),
            max(c),
            gmean(t),
            max(t),
        );
    }
    println!(
        "\n**All {} cases: cut nuce / METIS geometric mean {:.3}, max {:.3}; worst imbalance nuce {:.2} % (METIS {:.2} %); time nuce / METIS geometric mean {:.2}, max {:.2}.**",
        cuts.len(),
        gmean(&cuts),
        max(&cuts),
        100.0 * worst_imb,
        100.0 * worst_metis_imb,
        gmean(&times),
        max(&times),
    );
}
