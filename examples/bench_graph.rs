//! Evaluation of the graph partitioners against METIS, after
//! \[KOR95\] §2.1 and §3.1 (Tables 1–7). Run by
//! `scripts/bench_graph.sh`, which generates the meshes and installs `gpmetis`.
//!
//! ```text
//! bench_graph SAMPLES WORKDIR NAME=MESHFILE… [--remap NAME=MESHFILE]
//! ```
//!
//! For every mesh (nodal graph), p ∈ {4, 5, 10, 15, 20}, max/min speed ratio
//! ∈ {1, 2, 4, 8} and SAMPLES random speed vectors (min 1, max = ratio): edges
//! and setups of RCB, ZCI, HCI, RSB, RSBI with Simple and Binpacking grouping,
//! of METIS (`gpmetis -tpwgts`), and of the best refined nuce partition (those
//! five plus RSB+KL, each followed by multilevel FM); times.
//! Prints Markdown.

use std::collections::BTreeMap;
use std::time::Instant;

use nuce::plan::graph::{io, metrics, Algo, FmRefiner, Grouping, IndexKind, Ordering, Rsb};
use rand::{Rng, SeedableRng};

#[path = "common/metis_cli.rs"]
mod metis_cli;
use metis_cli::{load, metis};

const PS: [usize; 5] = [4, 5, 10, 15, 20];
const RATIOS: [f64; 4] = [1.0, 2.0, 4.0, 8.0];
const ALGOS: [Algo; 5] = [Algo::Rcb, Algo::Zci, Algo::Hci, Algo::Rsb, Algo::Rsbi];
const GROUPINGS: [Grouping; 2] = [Grouping::Binpacking, Grouping::Simple];

/// Sums of edges, setups, imbalance, seconds and a count, for averages.
#[derive(Default, Clone, Copy)]
struct Acc {
    edges: f64,
    setups: f64,
    imb: f64,
    secs: f64,
    n: f64,
}
impl Acc {
    fn add(&mut self, e: f64, s: f64, imb: f64, secs: f64) {
        self.edges += e;
        self.setups += s;
        self.imb = self.imb.max(imb);
        self.secs += secs;
        self.n += 1.0;
    }
    fn e(&self) -> f64 {
        self.edges / self.n.max(1.0)
    }
    fn s(&self) -> f64 {
        self.setups / self.n.max(1.0)
    }
    fn t(&self) -> f64 {
        self.secs / self.n.max(1.0)
    }
}

fn speeds(p: usize, ratio: f64, rng: &mut impl Rng) -> Vec<f64> {
    let mut s: Vec<f64> = (0..p).map(|_| rng.gen_range(1.0..=ratio)).collect();
    if p >= 2 && ratio > 1.0 {
        s[0] = 1.0;
        s[1] = ratio;
        // Shuffle so that the extreme speeds are not always first.
        for i in (1..p).rev() {
            s.swap(i, rng.gen_range(0..=i));
        }
    }
    s
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let samples: usize = args.first().and_then(|s| s.parse().ok()).unwrap_or(3);
    let work = args
        .get(1)
        .cloned()
        .unwrap_or_else(|| "target/bench_graph".into());
    let mut meshes = Vec::new();
    let mut remap = None;
    let mut it = args.iter().skip(2);
    while let Some(a) = it.next() {
        if a == "--remap" {
            remap = it.next().cloned();
        } else {
            meshes.push(a.clone());
        }
    }
    println!("Samples per (p, ratio): {samples}. Times in seconds (this machine, 1 thread).\n");
    let mut summary = Vec::new();
    for spec in &meshes {
        let (name, file) = spec.split_once('=').expect("NAME=FILE");
        let g = load(file);
        let gf = format!("{work}/{name}.graph");
        std::fs::write(&gf, io::write_metis(&g)).expect("write graph");
        println!(
            "## {name}: {} vertices, {} edges (`{}`)\n",
            g.n(),
            g.num_edges(),
            file
        );
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(2024);
        // (algo name, grouping, p, ratio) → Acc
        let mut acc: BTreeMap<(String, String, usize, u64), Acc> = BTreeMap::new();
        let t = Instant::now();
        let rsbi = Ordering::build(&g, IndexKind::Rsbi, &Rsb::default(), 1024).expect("rsbi");
        let rsbi_time = t.elapsed().as_secs_f64();
        let fm = FmRefiner::default();
        let (mut ratio_sum, mut ratio_n, mut worst_imb) = (0.0, 0.0, 0.0f64);
        for &p in &PS {
            for &ratio in &RATIOS {
                for _ in 0..samples {
                    let s = speeds(p, ratio, &mut rng);
                    let key =
                        |a: &str, gname: &str| (a.to_string(), gname.to_string(), p, ratio as u64);
                    let mut best = f64::INFINITY;
                    let mut best_imb = 0.0;
                    let mut best_secs = 0.0;
                    for grouping in GROUPINGS {
                        let gname = format!("{grouping:?}");
                        for algo in ALGOS {
                            let t = Instant::now();
                            let part = if algo == Algo::Rsbi {
                                rsbi.to_partition(&rsbi.cut(&s, grouping).expect("cut"))
                                    .expect("p")
                            } else {
                                algo.partition(&g, &s, grouping, None).expect("partition")
                            };
                            let secs = t.elapsed().as_secs_f64();
                            let m = metrics(&g, &part, &s).expect("metrics");
                            acc.entry(key(algo.name(), &gname)).or_default().add(
                                m.edge_cut,
                                m.setups as f64,
                                m.imbalance,
                                secs,
                            );
                            let t = Instant::now();
                            let mut r = part.clone();
                            fm.refine(&g, &s, &mut r).expect("refine");
                            let rsecs = t.elapsed().as_secs_f64();
                            let mr = metrics(&g, &r, &s).expect("metrics");
                            if mr.imbalance <= fm.tolerance + 1e-9 && mr.edge_cut < best {
                                best = mr.edge_cut;
                                best_imb = mr.imbalance;
                                best_secs = secs + rsecs;
                            }
                        }
                    }
                    // RSB + KL (FM at every bisection) as one more start for the best.
                    for grouping in GROUPINGS {
                        let t = Instant::now();
                        let r = Algo::RsbKl
                            .partition(&g, &s, grouping, Some(fm))
                            .expect("rsbkl");
                        let secs = t.elapsed().as_secs_f64();
                        let mr = metrics(&g, &r, &s).expect("metrics");
                        if mr.imbalance <= fm.tolerance + 1e-9 && mr.edge_cut < best {
                            best = mr.edge_cut;
                            best_imb = mr.imbalance;
                            best_secs = secs;
                        }
                    }
                    let (mp, msecs) = metis(&gf, &work, &s, g.n());
                    let mm = metrics(&g, &mp, &s).expect("metrics");
                    acc.entry(key("metis", "-")).or_default().add(
                        mm.edge_cut,
                        mm.setups as f64,
                        mm.imbalance,
                        msecs,
                    );
                    acc.entry(key("best+FM", "-"))
                        .or_default()
                        .add(best, 0.0, best_imb, best_secs);
                    ratio_sum += best / mm.edge_cut;
                    ratio_n += 1.0;
                    worst_imb = worst_imb.max(best_imb);
                }
            }
        }
        let cols: Vec<(String, String)> = ALGOS
            .iter()
            .flat_map(|a| {
                GROUPINGS
                    .iter()
                    .map(move |g| (a.name().to_string(), format!("{g:?}")))
            })
            .collect();
        let avg = |a: &str, gname: &str, p: Option<usize>, r: Option<u64>| {
            let mut t = Acc::default();
            for ((ka, kg, kp, kr), v) in &acc {
                if ka == a
                    && kg == gname
                    && p.is_none_or(|p| p == *kp)
                    && r.is_none_or(|r| r == *kr)
                {
                    t.edges += v.edges;
                    t.setups += v.setups;
                    t.secs += v.secs;
                    t.n += v.n;
                    t.imb = t.imb.max(v.imb);
                }
            }
            t
        };
        let header = |first: &str| {
            let mut h = format!("| {first} |");
            let mut sep = String::from("|---|");
            for (a, g) in &cols {
                h += &format!(
                    " {} {} |",
                    a.to_uppercase(),
                    if g == "Simple" { "S" } else { "B" }
                );
                sep += "---|";
            }
            h += " METIS | best nuce+FM | best/METIS |";
            sep += "---|---|---|";
            println!("{h}\n{sep}");
        };
        let row = |label: String, p: Option<usize>, r: Option<u64>| {
            let mut line = format!("| {label} |");
            for (a, gname) in &cols {
                let v = avg(a, gname, p, r);
                line += &format!(" {:.0} / {:.1} |", v.e(), v.s());
            }
            let m = avg("metis", "-", p, r);
            let b = avg("best+FM", "-", p, r);
            line += &format!(
                " {:.0} / {:.1} | {:.0} | {:.3} |",
                m.e(),
                m.s(),
                b.e(),
                b.e() / m.e()
            );
            println!("{line}");
        };
        println!("Edges / Setups averaged over ratios 1, 2, 4, 8 (as [KOR95] Table 3; B = Binpacking, S = Simple):\n");
        header("p");
        for &p in &PS {
            row(p.to_string(), Some(p), None);
        }
        println!("\nEdges / Setups at p = 10 per max/min speed ratio (as [KOR95] Table 2):\n");
        header("ratio");
        for &r in &RATIOS {
            row(r.to_string(), Some(10), Some(r as u64));
        }
        println!("\nMean time per partition (s; RSBI: the cut only, its ordering took {rsbi_time:.3} s once, as [KOR95] Table 7):\n");
        println!("| p | RCB | ZCI | HCI | RSB | RSBI cut | METIS | RSB / METIS |\n|---|---|---|---|---|---|---|---|");
        for &p in &PS {
            let t = |a: &str| {
                (avg(a, "Simple", Some(p), None).t() + avg(a, "Binpacking", Some(p), None).t())
                    / 2.0
            };
            let m = avg("metis", "-", Some(p), None).t();
            println!(
                "| {p} | {:.4} | {:.4} | {:.4} | {:.3} | {:.6} | {:.4} | {:.1} |",
                t("rcb"),
                t("zci"),
                t("hci"),
                t("rsb"),
                t("rsbi"),
                m,
                t("rsb") / m
            );
        }
        let gain: Vec<String> = PS
            .iter()
            .map(|&p| {
                let a = avg("rsbi", "Binpacking", Some(p), None).e();
                let b = avg("rsb", "Binpacking", Some(p), None).e();
                format!("{p}: {:.0} %", 100.0 * (a - b) / a)
            })
            .collect();
        println!(
            "\nGain of RSB over RSBI (Binpacking, as [KOR95] Table 6): {}\n",
            gain.join(", ")
        );
        let ratio = ratio_sum / ratio_n;
        println!(
            "**Best refined nuce cut / METIS cut, mean over all {} runs: {ratio:.3}; worst imbalance of the best: {:.2} %.**\n",
            ratio_n,
            100.0 * worst_imb
        );
        summary.push((name.to_string(), g.n(), ratio, worst_imb));
    }
    if let Some(spec) = remap {
        let (name, file) = spec.split_once('=').expect("NAME=FILE");
        let g = load(file);
        let gf = format!("{work}/{name}.graph");
        std::fs::write(&gf, io::write_metis(&g)).expect("write graph");
        println!(
            "## Remapping on {name}: {} vertices, {} edges\n",
            g.n(),
            g.num_edges()
        );
        println!("| ordering | build (s, once) | recut, O(p log n) (s) | recut + part array, O(n) (s) | METIS from scratch (s) | METIS / recut | METIS / (recut + array) | moved by recut | moved by METIS anew |");
        println!("|---|---|---|---|---|---|---|---|---|");
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
        for kind in [IndexKind::Hci, IndexKind::Rsbi] {
            let t = Instant::now();
            let ord = Ordering::build(&g, kind, &Rsb::default(), 1024).expect("ordering");
            let build = t.elapsed().as_secs_f64();
            let p = 10;
            let mut s = speeds(p, 4.0, &mut rng);
            let mut cut = ord.cut(&s, Grouping::Binpacking).expect("cut");
            let (mut mp_prev, _) = metis(&gf, &work, &s, g.n());
            let (mut t_cut, mut t_arr, mut t_metis, mut mv, mut mv_m) = (0.0, 0.0, 0.0, 0, 0);
            let reps = 5;
            for _ in 0..reps {
                let i = rng.gen_range(0..p);
                s[i] *= rng.gen_range(0.5..2.0);
                let t = Instant::now();
                let mut new = cut.clone();
                for _ in 0..100 {
                    new = ord.recut(&cut, &s, Grouping::Binpacking).expect("recut");
                }
                t_cut += t.elapsed().as_secs_f64() / 100.0;
                let t = Instant::now();
                let _part = ord.to_partition(&new).expect("partition");
                t_arr += t.elapsed().as_secs_f64();
                mv += cut.moved(&new);
                cut = new;
                let (mp, ms) = metis(&gf, &work, &s, g.n());
                t_metis += ms;
                mv_m += mp_prev.moved_to(&mp).expect("moved").len();
                mp_prev = mp;
            }
            let r = reps as f64;
            println!(
                "| {kind:?} | {build:.3} | {:.2e} | {:.2e} | {:.4} | {:.0} | {:.0} | {} | {} |",
                t_cut / r,
                (t_cut + t_arr) / r,
                t_metis / r,
                t_metis / t_cut,
                t_metis / (t_cut + t_arr),
                mv / reps,
                mv_m / reps
            );
        }
        println!();
    }
    println!("## Summary\n\n| graph | vertices | best nuce+FM / METIS edge cut | worst imbalance |\n|---|---|---|---|");
    for (name, n, r, imb) in summary {
        println!("| {name} | {n} | {r:.3} | {:.2} % |", 100.0 * imb);
    }
}
