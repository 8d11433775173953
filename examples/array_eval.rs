//! Reproduces the evaluation of \[KRW96\] §6.4
//! (Tables 2–8): percentage improvement of TILE and XY2 over
//! RecursiveBisection2 in average cost over random speed vectors, for
//! p ∈ {4, 5, 7, 10, 15, 20}, Max/Min speed ratio ∈ {1, 2, 3, 4, 8}, arrays
//! 1K × {1K, 2K, 3K, 5K, 10K, 20K} and latencies {0, 100, 1000}, plus the
//! average planning times (Table 8) and \[KRW96\]'s side remarks (RB worst, XY
//! ≈ XY2, RB3 ≈ RB2).
//!
//! The cost is the latency-aware cost of §5, `Acost + latency × internal
//! edges` (plain Acost at latency 0); TILE, XY and XY2 select their
//! decomposition by that cost. Speeds of one sample: one processor of speed
//! 1, one of speed `ratio`, the others uniform in `[1, ratio]`, shuffled.
//!
//! ```text
//! cargo run --release --example array_eval              # full grid, 20 samples
//! cargo run --release --example array_eval -- --quick   # small grid, 5 samples
//! ```

use std::time::Instant;

use clap::Parser;
use indicatif::{ProgressBar, ProgressStyle};
use nuce::plan::array2d::cost::{acost, internal_edges};
use nuce::plan::array2d::{
    ArrayDecomposer, ArrayPlan, ColumnDp, RecursiveBisection, RecursiveBisection2,
    RecursiveBisection3, Tile, Xy, Xy2,
};
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};

#[derive(Parser, Debug)]
#[command(about = "Reproduce [KRW96] §6.4 Tables 2-8 (array decompositions)")]
struct Args {
    /// Small grid (p <= 10, arrays 1Kx1K and 1Kx3K, 5 samples): a smoke run.
    #[arg(long)]
    quick: bool,
    /// Random speed vectors per cell ([KRW96] uses 20).
    #[arg(long)]
    samples: Option<usize>,
    /// Seed of the random speed vectors.
    #[arg(long, default_value_t = 2026)]
    seed: u64,
    /// A text extraction of [KRW96] (docs/references.md): when given, its
    /// Tables 2–7 are parsed and the differences (nuce − [KRW96]) printed.
    #[arg(long)]
    compare_seed: Option<std::path::PathBuf>,
}

const ALGOS: [&str; 7] = ["rb", "rb2", "rb3", "xy", "xy2", "tile", "column"];
/// Position of XY2 in [`ALGOS`]: the reference of the per-sample comparison.
const XY2: usize = 4;
/// Position of TILE in [`ALGOS`].
const TILE: usize = 5;
/// Position of the optimal column DP (`ColumnDp`, \[BBLRR01\] §3.2.4) in [`ALGOS`]:
/// the XY2-class algorithm measured against XY2.
const COLUMN: usize = 6;

fn algorithm(name: &str, latency: f64) -> Box<dyn ArrayDecomposer> {
    match name {
        "rb" => Box::new(RecursiveBisection),
        "rb2" => Box::new(RecursiveBisection2),
        "rb3" => Box::new(RecursiveBisection3),
        "xy" => Box::new(Xy { latency }),
        "xy2" => Box::new(Xy2 { latency }),
        "column" => Box::new(ColumnDp { latency }),
        _ => Box::new(Tile { latency }),
    }
}

fn cost(plan: &ArrayPlan, latency: f64) -> f64 {
    acost(plan) as f64 + latency * internal_edges(plan) as f64
}

/// Sum of costs and of planning seconds, per (latency, size, ratio, p, algo).
struct Grid {
    procs: Vec<usize>,
    ratios: Vec<f64>,
    sizes: Vec<usize>,
    latencies: Vec<f64>,
    cost: Vec<f64>,
    secs: Vec<f64>,
    /// Per algorithm: samples (speed vector × latency) where its cost exceeds
    /// XY2's, and the largest relative excess.
    worse_than_xy2: Vec<(usize, f64)>,
    /// Runs where ColumnDp costs more than XY2: (excess, description).
    column_losses: Vec<(f64, usize, String)>,
    /// Per algorithm: largest load imbalance after rounding over all runs.
    imbalance: Vec<f64>,
    runs: usize,
}

impl Grid {
    fn index(&self, l: usize, s: usize, r: usize, p: usize, a: usize) -> usize {
        (((l * self.sizes.len() + s) * self.ratios.len() + r) * self.procs.len() + p) * ALGOS.len()
            + a
    }

    /// Percentage improvement of algorithm `a` over RB2 in average cost.
    fn improvement(&self, l: usize, s: usize, r: usize, p: usize, a: usize) -> f64 {
        let base = self.cost[self.index(l, s, r, p, 1)];
        let x = self.cost[self.index(l, s, r, p, a)];
        if base > 0.0 {
            100.0 * (base - x) / base
        } else {
            0.0
        }
    }
}

fn size_label(cols: usize) -> String {
    format!("1K x {}K", cols / 1000)
}

/// Prints one of Tables 2–7 in \[KRW96\]'s layout: blocks of three array sizes,
/// rows = Max/Min ratio, columns = processors.
fn print_table(g: &Grid, number: usize, a: usize, l: usize) {
    let label = if ALGOS[a] == "tile" { "Tile" } else { "XY2" };
    println!(
        "Table {number}: Percentage improvement of {label} over RecursiveBisection2 (Latency={}).",
        g.latencies[l]
    );
    for block in g.sizes.chunks(3).enumerate() {
        let (bi, sizes) = block;
        let mut line = String::from("Max/Min ");
        for &cols in sizes {
            let w = 4 * g.procs.len();
            line += &format!("| {:<w$}", format!("Array Size = {}", size_label(cols)));
        }
        println!("{line}");
        let mut line = String::from("Ratio   ");
        for _ in sizes {
            line += "| ";
            for &p in &g.procs {
                line += &format!("{p:>3} ");
            }
        }
        println!("{line}");
        for (ri, ratio) in g.ratios.iter().enumerate() {
            let mut line = format!("{ratio:<8}");
            for (k, _) in sizes.iter().enumerate() {
                let si = bi * 3 + k;
                line += "| ";
                for pi in 0..g.procs.len() {
                    line += &format!("{:>3.0} ", g.improvement(l, si, ri, pi, a));
                }
            }
            println!("{line}");
        }
    }
    println!();
}

/// \[KRW96\] Figure 16: 1000 × 3000, seven parts; \[KRW96\]'s costs.
fn print_figure16() {
    let speeds = [0.5, 0.1, 0.1, 0.1, 0.1, 0.05, 0.05];
    let seed = [
        ("rb", 5750),
        ("xy2", 4500),
        ("tile", 4500),
        ("rb2", 4666),
        ("rb3", 4700),
    ];
    println!("Figure 16 (1000 x 3000, a = .5 .1 .1 .1 .1 .05 .05): Acost [KRW96] / nuce");
    for (name, want) in seed {
        match algorithm(name, 0.0).decompose(1000, 3000, &speeds) {
            Ok(plan) => println!(
                "  {name:<5} {want:>5} / {:>5}  (internal edges {})",
                acost(&plan),
                internal_edges(&plan)
            ),
            Err(e) => println!("  {name:<5} error: {e}"),
        }
    }
    println!();
}

fn main() {
    let args = Args::parse();
    print_figure16();
    let (procs, sizes, default_samples): (Vec<usize>, Vec<usize>, usize) = if args.quick {
        (vec![4, 5, 7, 10], vec![1000, 3000], 5)
    } else {
        (
            vec![4, 5, 7, 10, 15, 20],
            vec![1000, 2000, 3000, 5000, 10000, 20000],
            20,
        )
    };
    let samples = args.samples.unwrap_or(default_samples).max(1);
    let ratios = vec![1.0, 2.0, 3.0, 4.0, 8.0];
    let latencies = vec![0.0, 100.0, 1000.0];
    let n = latencies.len() * sizes.len() * ratios.len() * procs.len() * ALGOS.len();
    let mut g = Grid {
        procs,
        ratios,
        sizes,
        latencies,
        cost: vec![0.0; n],
        secs: vec![0.0; n],
        worse_than_xy2: vec![(0, 0.0); ALGOS.len()],
        column_losses: Vec::new(),
        imbalance: vec![0.0; ALGOS.len()],
        runs: 0,
    };
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(args.seed);
    let total = (g.sizes.len() * g.ratios.len() * g.procs.len() * samples) as u64;
    let bar = ProgressBar::new(total);
    bar.set_style(
        ProgressStyle::with_template("{bar:40} {pos}/{len} speed vectors, {elapsed} (eta {eta})")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    let wall = Instant::now();
    for si in 0..g.sizes.len() {
        for ri in 0..g.ratios.len() {
            for pi in 0..g.procs.len() {
                for _ in 0..samples {
                    let p = g.procs[pi];
                    let ratio = g.ratios[ri];
                    let mut speeds: Vec<f64> = (0..p)
                        .map(|i| match i {
                            0 => 1.0,
                            1 => ratio,
                            _ => rng.gen_range(1.0..=ratio),
                        })
                        .collect();
                    speeds.shuffle(&mut rng);
                    for li in 0..g.latencies.len() {
                        let latency = g.latencies[li];
                        let mut costs = [0.0; ALGOS.len()];
                        for (a, name) in ALGOS.iter().enumerate() {
                            let algo = algorithm(name, latency);
                            let t = Instant::now();
                            let plan = algo
                                .decompose(1000, g.sizes[si], &speeds)
                                .expect("valid grid input");
                            let dt = t.elapsed().as_secs_f64();
                            let k = g.index(li, si, ri, pi, a);
                            costs[a] = cost(&plan, latency);
                            let imb = plan.imbalance(&speeds).unwrap_or(f64::INFINITY);
                            g.imbalance[a] = g.imbalance[a].max(imb);
                            g.cost[k] += costs[a] / samples as f64;
                            g.secs[k] += dt;
                        }
                        g.runs += 1;
                        let reference = costs[XY2];
                        if costs[COLUMN] > reference {
                            g.column_losses.push((
                                (costs[COLUMN] - reference) / reference,
                                li,
                                format!(
                                    "1000x{} p={p} ratio={ratio} latency={latency}: column {} xy2 {} speeds {speeds:.3?}",
                                    g.sizes[si], costs[COLUMN], reference
                                ),
                            ));
                        }
                        for (a, &c) in costs.iter().enumerate() {
                            if c > reference {
                                let w = &mut g.worse_than_xy2[a];
                                w.0 += 1;
                                w.1 = w.1.max((c - reference) / reference);
                            }
                        }
                    }
                    bar.inc(1);
                }
            }
        }
    }
    bar.finish_and_clear();
    println!(
        "[KRW96] §6.4 reproduction: {samples} random speed vectors per cell, seed {}, {:.1} s\n",
        args.seed,
        wall.elapsed().as_secs_f64()
    );
    for (li, _) in g.latencies.iter().enumerate() {
        print_table(&g, 2 + li, TILE, li);
    }
    for (li, _) in g.latencies.iter().enumerate() {
        print_table(&g, 5 + li, XY2, li);
    }
    print_times(&g, samples);
    print_side_remarks(&g);
    if let Some(path) = &args.compare_seed {
        match std::fs::read_to_string(path) {
            Ok(text) => compare_with_seed(&g, &text),
            Err(e) => eprintln!("cannot read {}: {e}", path.display()),
        }
    }
}

/// \[KRW96\]'s grid, in the order its tables list it.
const SEED_PROCS: [usize; 6] = [4, 5, 7, 10, 15, 20];
const SEED_SIZES: [usize; 6] = [1000, 2000, 3000, 5000, 10000, 20000];
const SEED_RATIOS: [f64; 5] = [1.0, 2.0, 3.0, 4.0, 8.0];

/// Parses Tables 2–7 of \[KRW96\] text: each is two blocks of five rows
/// `ratio` + 18 integers (three array sizes × six processor counts).
/// Returns `tables[t][size][ratio][procs]`, `t = 0` for Table 2.
fn parse_seed_tables(text: &str) -> Vec<Vec<Vec<Vec<f64>>>> {
    let rows: Vec<Vec<f64>> = text
        .lines()
        .filter_map(|line| {
            let f: Vec<&str> = line.split_whitespace().collect();
            let ok = f.len() == 19 && f.iter().all(|x| x.parse::<i64>().is_ok());
            ok.then(|| f.iter().filter_map(|x| x.parse::<f64>().ok()).collect())
        })
        .collect();
    rows.chunks_exact(10)
        .map(|table| {
            let mut out = vec![vec![vec![0.0; 6]; 5]; 6];
            for (k, row) in table.iter().enumerate() {
                let (block, ratio) = (k / 5, k % 5);
                for (j, v) in row[1..].iter().enumerate() {
                    out[block * 3 + j / 6][ratio][j % 6] = *v;
                }
            }
            out
        })
        .collect()
}

/// Prints, for each of Tables 2–7, the mean and largest |nuce − \[KRW96\]| over the
/// cells both grids share, and the cells that differ in sign by > 2 points.
fn compare_with_seed(g: &Grid, text: &str) {
    let tables = parse_seed_tables(text);
    if tables.len() < 6 {
        eprintln!("found {} [KRW96] tables, expected 6", tables.len());
        return;
    }
    println!();
    println!("Differences nuce - [KRW96] (percentage points) over the shared cells:");
    for (t, table) in tables.iter().take(6).enumerate() {
        let a = if t < 3 { TILE } else { XY2 };
        let li = t % 3;
        let (mut sum, mut worst, mut n, mut flips) = (0.0, 0.0f64, 0, 0);
        for (ssi, &size) in SEED_SIZES.iter().enumerate() {
            let Some(si) = g.sizes.iter().position(|&x| x == size) else {
                continue;
            };
            for (sri, &ratio) in SEED_RATIOS.iter().enumerate() {
                let Some(ri) = g.ratios.iter().position(|&x| x == ratio) else {
                    continue;
                };
                for (spi, &p) in SEED_PROCS.iter().enumerate() {
                    let Some(pi) = g.procs.iter().position(|&x| x == p) else {
                        continue;
                    };
                    let ours = g.improvement(li, si, ri, pi, a).round();
                    let theirs = table[ssi][sri][spi];
                    let d = ours - theirs;
                    sum += d.abs();
                    worst = worst.max(d.abs());
                    n += 1;
                    if d.abs() > 2.0
                        && ours.signum() != theirs.signum()
                        && ours != 0.0
                        && theirs != 0.0
                    {
                        flips += 1;
                    }
                }
            }
        }
        println!(
            "Table {}: mean |diff| {:.2}, max |diff| {worst:.0}, {flips} sign flips, {n} cells",
            t + 2,
            sum / n.max(1) as f64
        );
    }
}

/// Table 8: average planning time per decomposition, zero vs nonzero latency.
fn print_times(g: &Grid, samples: usize) {
    println!("Table 8: The average execution time of different algorithms (in seconds).");
    let shown = ["tile", "xy2", "rb2", "rb3", "xy", "rb", "column"];
    let mut line = String::from("Procs ");
    for name in shown {
        line += &format!("| {name:<21}");
    }
    println!("{line}");
    let mut line = String::from("      ");
    for _ in shown {
        line += "| NonZero    Zero       ";
    }
    println!("{line}");
    for (pi, p) in g.procs.iter().enumerate() {
        let mut line = format!("{p:<6}");
        for name in shown {
            let a = ALGOS.iter().position(|&x| x == name).unwrap_or(0);
            let mut zero = 0.0;
            let mut nonzero = 0.0;
            for li in 0..g.latencies.len() {
                for si in 0..g.sizes.len() {
                    for ri in 0..g.ratios.len() {
                        let s = g.secs[g.index(li, si, ri, pi, a)];
                        if g.latencies[li] == 0.0 {
                            zero += s;
                        } else {
                            nonzero += s;
                        }
                    }
                }
            }
            let runs = (g.sizes.len() * g.ratios.len() * samples) as f64;
            let nz_lat = g.latencies.iter().filter(|&&l| l != 0.0).count().max(1) as f64;
            line += &format!(
                "| {:<10.6} {:<10.6}",
                nonzero / (runs * nz_lat),
                zero / runs
            );
        }
        println!("{line}");
    }
    println!();
}

/// \[KRW96\]'s remarks on the algorithms it did not tabulate: average
/// improvement over RB2 of each algorithm across the whole grid, per latency.
fn print_side_remarks(g: &Grid) {
    println!("Mean improvement over RecursiveBisection2 across the grid (%), and cells where the");
    println!("algorithm is worse than RB2 by more than 0.5%:");
    for (li, lat) in g.latencies.iter().enumerate() {
        let mut line = format!("latency {lat:<6}");
        for (a, name) in ALGOS.iter().enumerate() {
            let mut sum = 0.0;
            let mut worse = 0;
            let mut cells = 0;
            for si in 0..g.sizes.len() {
                for ri in 0..g.ratios.len() {
                    for pi in 0..g.procs.len() {
                        let imp = g.improvement(li, si, ri, pi, a);
                        sum += imp;
                        cells += 1;
                        if imp < -0.5 {
                            worse += 1;
                        }
                    }
                }
            }
            line += &format!("  {name}: {:6.2} ({worse:>3} worse)", sum / cells as f64);
        }
        println!("{line}");
    }
    println!();
    // XY2 vs XY ([KRW96]: "XY2 produced the same as or marginally better").
    let mut xy2_better = 0;
    let mut xy_better = 0;
    let mut cells = 0;
    for li in 0..g.latencies.len() {
        for si in 0..g.sizes.len() {
            for ri in 0..g.ratios.len() {
                for pi in 0..g.procs.len() {
                    let xy = g.cost[g.index(li, si, ri, pi, 3)];
                    let xy2 = g.cost[g.index(li, si, ri, pi, 4)];
                    cells += 1;
                    if xy2 < xy - 1e-9 {
                        xy2_better += 1;
                    } else if xy < xy2 - 1e-9 {
                        xy_better += 1;
                    }
                }
            }
        }
    }
    println!("XY2 vs XY average cost per cell: XY2 cheaper in {xy2_better}, XY cheaper in {xy_better}, of {cells} cells.");
    println!();
    println!(
        "Per sample (speed vector x latency, {} runs): cost above XY2's (count, worst excess):",
        g.runs
    );
    let mut line = String::new();
    for (a, name) in ALGOS.iter().enumerate() {
        let (count, worst) = g.worse_than_xy2[a];
        line += &format!("  {name}: {count} ({:.2}%)", 100.0 * worst);
    }
    println!("{line}");
    let mut line =
        String::from("Largest load imbalance after rounding (max_i (area_i/speed_i) / ideal - 1):");
    for (a, name) in ALGOS.iter().enumerate() {
        line += &format!("  {name}: {:.2e}", g.imbalance[a]);
    }
    println!("{line}");
    let (count, worst) = g.worse_than_xy2[COLUMN];
    println!(
        "Goal \"XY2-class cost never worse than [KRW96] XY2\": ColumnDp above XY2 in {count} of {} runs (worst {:.3}%): {}",
        g.runs,
        100.0 * worst,
        if count == 0 { "met" } else { "NOT met" }
    );
    let mut losses = g.column_losses.clone();
    losses.sort_by(|a, b| b.0.total_cmp(&a.0));
    for (li, lat) in g.latencies.iter().enumerate() {
        let at: Vec<f64> = losses.iter().filter(|l| l.1 == li).map(|l| l.0).collect();
        let worst = at.iter().copied().fold(0.0, f64::max);
        let equal = losses
            .iter()
            .filter(|l| l.1 == li && l.2.contains("ratio=1 "))
            .count();
        println!(
            "  latency {lat}: {} runs (worst +{:.3}%), {equal} of them with equal speeds",
            at.len(),
            100.0 * worst
        );
    }
    for (excess, _, what) in losses.iter().take(3) {
        println!("  +{:.3}% {what}", 100.0 * excess);
    }
    let unequal: Vec<&(f64, usize, String)> = losses
        .iter()
        .filter(|l| !l.2.contains("ratio=1 "))
        .take(3)
        .collect();
    for (excess, _, what) in unequal {
        println!("  +{:.3}% {what}", 100.0 * excess);
    }
}
