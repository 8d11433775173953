//! nuce's multilevel partitioner (\[KK98\]-style, `Multilevel`) side by side
//! with `gpmetis -tpwgts` on every graph named on the command line (issues
//! 13 and 21), MPI-free: p ∈ {4, 8, 16, 32, 64} (or `NUCE_PS=4,8,16`),
//! uniform / two-class 1:4 (alternating) / random in [1, 4] (seeded)
//! targets. Run by `scripts/bench_multilevel.sh` (the six development
//! meshes, p ≤ 16) and `scripts/bench_multilevel_wide.sh` (issue 21's
//! widened set), which generate the meshes and install `gpmetis`.
//!
//! ```text
//! bench_multilevel REPS WORKDIR SPEC…
//! SPEC = NAME=MESH[:nodal|:dual|:weighted|:dualweighted]
//! ```
//!
//! `nodal` is the mesh's nodal graph, `dual` its dual graph (elements sharing
//! a facet), `weighted` / `dualweighted` the same graph with integer vertex
//! weights in 1..=4 and edge weights in 1..=8 (seeded, symmetric). Prints one
//! Markdown row per case, worst cut ratio first, then per-graph and overall
//! summaries. `NUCE_ML='{"cycles": 2}'` overrides fields of the defaults;
//! `NUCE_ML_VS='{"two_hop": false}'` also runs that variant of the defaults
//! on every case in the same run and prints its summary next to the first
//! (a change measured side by side).
//! Times: the least of `REPS` runs each. METIS: its "Partitioning:" line,
//! which is CPU time (`getrusage`); nuce: the CPU time of the call in this
//! thread, the same measure (`s nuce`, `time ratio`), and its wall time
//! (`s nuce wall`, `wall ratio`: what issue 21's first six rounds reported;
//! on a loaded machine it grows with the load while METIS's CPU time does
//! not).

use std::time::Instant;

use nuce_plan::graph::{io, metrics, Graph, GraphPartitioner, Metrics, Multilevel};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

// Shared with the root package's graph benchmarks.
#[allow(dead_code)]
#[path = "../../../examples/common/metis_cli.rs"]
mod metis_cli;
use metis_cli::metis;
#[allow(dead_code)]
#[path = "../../../examples/common/compare.rs"]
mod compare;
use compare::{gmean, max, targets, KINDS};

/// `g` with seeded integer vertex weights 1..=4 and symmetric edge weights
/// 1..=8 (a hash of the two ends).
fn weighted(g: &Graph) -> Graph {
    let mut rng = ChaCha8Rng::seed_from_u64(21);
    let vw: Vec<f64> = (0..g.n())
        .map(|_| f64::from(rng.gen_range(1..=4u32)))
        .collect();
    let mut ew = Vec::with_capacity(g.adjncy().len());
    for v in 0..g.n() {
        for &u in g.neighbors(v) {
            let (a, b) = (v.min(u) as u64, v.max(u) as u64);
            let h = (a.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ b.wrapping_mul(0xC2B2_AE3D_27D4_EB4F))
                .rotate_left(29)
                .wrapping_mul(0x1656_67B1_9E37_79F9);
            ew.push((1 + (h >> 32) % 8) as f64);
        }
    }
    Graph::from_csr(g.xadj().to_vec(), g.adjncy().to_vec(), Some(vw), Some(ew))
        .expect("weighted graph")
}

fn load(spec: &str) -> Graph {
    let (file, kind) = spec.rsplit_once(':').unwrap_or((spec, "nodal"));
    let text = std::fs::read_to_string(file).expect("mesh file");
    let mesh = io::parse_mesh(&text, file).expect("mesh");
    match kind {
        "nodal" => mesh.nodal_graph().expect("nodal").0,
        "dual" => mesh.dual_graph(None).expect("dual"),
        "weighted" => weighted(&mesh.nodal_graph().expect("nodal").0),
        "dualweighted" => weighted(&mesh.dual_graph(None).expect("dual")),
        k => panic!("unknown graph kind {k}"),
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let reps: usize = args.first().and_then(|s| s.parse().ok()).unwrap_or(1);
    let work = args
        .get(1)
        .cloned()
        .unwrap_or_else(|| "target/bench_ml".into());
    let ps: Vec<usize> = std::env::var("NUCE_PS")
        .ok()
        .map(|s| s.split(',').map(|x| x.parse().expect("p")).collect())
        .unwrap_or_else(|| vec![4, 8, 16, 32, 64]);
    // NUCE_ML='{"field": value, …}' overrides fields of the defaults.
    let ml = variant("NUCE_ML").unwrap_or_default();
    let vs = variant("NUCE_ML_VS");
    println!("nuce `Multilevel::default()` = {ml:?}; least time of {reps} runs for both.\n");
    if let Some(b) = &vs {
        println!("Variant B (`NUCE_ML_VS`) = {b:?}, same cases, same run.\n");
    }
    let mut rows = Vec::new();
    let mut per_graph = Vec::new();
    let (mut worst_imb, mut worst_metis_imb) = (0.0f64, 0.0f64);
    let mut walls = Vec::new();
    for spec in args.iter().skip(2) {
        let (name, file) = spec.split_once('=').expect("NAME=FILE");
        let g = load(file);
        let gf = format!("{work}/{name}.graph");
        std::fs::write(&gf, io::write_metis(&g)).expect("write graph");
        let mut rng = ChaCha8Rng::seed_from_u64(2025);
        let (mut gc, mut gt) = (Vec::new(), Vec::new());
        let (mut bc, mut bt) = (Vec::new(), Vec::new());
        for &p in &ps {
            for kind in KINDS {
                let t = targets(kind, p, &mut rng);
                let (secs, wall, m) = timed(&ml, &g, &t, reps);
                let (mut msecs, mut mpart) = (f64::INFINITY, None);
                for _ in 0..reps {
                    let (q, s) = metis(&gf, &work, &t, g.n());
                    msecs = msecs.min(s);
                    mpart = Some(q);
                }
                let mm = metrics(&g, &mpart.expect("a run"), &t).expect("metrics");
                let msecs = msecs.max(0.0005);
                let (cr, tr) = (m.edge_cut / mm.edge_cut, secs / msecs);
                let wr = wall / msecs;
                if let Some(b) = &vs {
                    let (bs, _, bm) = timed(b, &g, &t, reps);
                    bc.push(bm.edge_cut / mm.edge_cut);
                    bt.push(bs / msecs);
                }
                rows.push((
                    cr,
                    format!(
                        "| {name} | {} | {p} | {kind} | {} | {} | {cr:.3} | {:.2} % | {:.2} % | {secs:.4} | {msecs:.3} | {tr:.2} | {wall:.4} | {wr:.2} |",
                        g.n(),
                        m.edge_cut,
                        mm.edge_cut,
                        100.0 * m.imbalance,
                        100.0 * mm.imbalance,
                    ),
                ));
                eprintln!("{}", rows.last().expect("row").1);
                gc.push(cr);
                gt.push(tr);
                walls.push(wr);
                worst_imb = worst_imb.max(m.imbalance);
                worst_metis_imb = worst_metis_imb.max(mm.imbalance);
            }
        }
        per_graph.push((name.to_string(), g.n(), gc, gt, bc, bt));
    }
    rows.sort_by(|a, b| b.0.total_cmp(&a.0));
    println!("| graph | vertices | p | targets | cut nuce | cut METIS | cut ratio | imb. nuce | imb. METIS | s nuce | s METIS | time ratio | s nuce wall | wall ratio |");
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|");
    for (_, r) in &rows {
        println!("{r}");
    }
    println!("\n| graph | vertices | cut ratio gmean | cut ratio max | cases > 1.10 | time ratio gmean | time ratio max |\n|---|---|---|---|---|---|---|");
    let (mut cuts, mut times) = (Vec::new(), Vec::new());
    let (mut bcuts, mut btimes) = (Vec::new(), Vec::new());
    for (name, n, c, t, b, bt) in &per_graph {
        println!("| {name} | {n} | {} |", summary(c, t));
        if vs.is_some() {
            println!("| {name} (B) | {n} | {} |", summary(b, bt));
        }
        cuts.extend_from_slice(c);
        times.extend_from_slice(t);
        bcuts.extend_from_slice(b);
        btimes.extend_from_slice(bt);
    }
    if vs.is_some() {
        println!(
            "\n**Variant B, all {} cases: {}** (cut gmean | max | > 1.10 | time gmean | max)",
            bcuts.len(),
            summary(&bcuts, &btimes)
        );
    }
    println!(
        "\n**All {} cases: cut nuce / METIS geometric mean {:.3}, max {:.3}, {} above 1.10; worst imbalance nuce {:.2} % (METIS {:.2} %); time nuce / METIS geometric mean {:.2}, max {:.2}, {} above 3 (nuce's wall time: {:.2}, {:.2}, {}).**",
        cuts.len(),
        gmean(&cuts),
        max(&cuts),
        cuts.iter().filter(|&&x| x > 1.10).count(),
        100.0 * worst_imb,
        100.0 * worst_metis_imb,
        gmean(&times),
        max(&times),
        times.iter().filter(|&&x| x > 3.0).count(),
        gmean(&walls),
        max(&walls),
        walls.iter().filter(|&&x| x > 3.0).count(),
    );
}

/// The defaults with the fields of the JSON object in the environment
/// variable `var` (`None` when unset).
fn variant(var: &str) -> Option<Multilevel> {
    let j = std::env::var(var).ok()?;
    let mut v = serde_json::to_value(Multilevel::default()).expect("json");
    let o: serde_json::Map<String, serde_json::Value> =
        serde_json::from_str(&j).unwrap_or_else(|e| panic!("{var}: a JSON object: {e}"));
    for (key, val) in o {
        v[key] = val;
    }
    Some(serde_json::from_value(v).unwrap_or_else(|e| panic!("{var} fields: {e}")))
}

/// CPU seconds the calling thread has run (`CLOCK_THREAD_CPUTIME_ID`),
/// `None` where that clock cannot be read. gpmetis's "Partitioning:" time is
/// CPU time, not wall time (GKlib's `gk_CPUSeconds`: `getrusage`; under
/// three busy loops on two cores it reported 0.18–0.21 s for a run of 1.15 s
/// wall time), so nuce's side of the time ratio is measured the same way.
fn thread_cpu_seconds() -> Option<f64> {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec for the duration of the call.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    (rc == 0).then_some(ts.tv_sec as f64 + 1e-9 * ts.tv_nsec as f64)
}

/// The least CPU time and the least wall time of `reps` runs of `ml` on `g`
/// (the wall time stands in for the CPU time where that cannot be read),
/// and the metrics of its partition.
fn timed(ml: &Multilevel, g: &Graph, t: &[f64], reps: usize) -> (f64, f64, Metrics) {
    let (mut cpu, mut wall, mut part) = (f64::INFINITY, f64::INFINITY, None);
    for _ in 0..reps.max(1) {
        let c0 = thread_cpu_seconds();
        let t0 = Instant::now();
        let q = ml.partition(g, t).expect("multilevel");
        let w = t0.elapsed().as_secs_f64();
        let c = match (c0, thread_cpu_seconds()) {
            (Some(a), Some(b)) => b - a,
            _ => w,
        };
        wall = wall.min(w);
        cpu = cpu.min(c);
        part = Some(q);
    }
    let m = metrics(g, &part.expect("a run"), t).expect("metrics");
    (cpu, wall, m)
}

/// Cut ratio gmean | max | cases above 1.10 | time ratio gmean | max.
fn summary(c: &[f64], t: &[f64]) -> String {
    format!(
        "{:.3} | {:.3} | {} | {:.2} | {:.2}",
        gmean(c),
        max(c),
        c.iter().filter(|&&x| x > 1.10).count(),
        gmean(t),
        max(t)
    )
}
