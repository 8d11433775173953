//! Scaling benchmark of the array decomposers (\[BBLRR01\] §3.2.4, \[KRW96\] §6.4):
//! for p = 10 … 10 000 random speeds on a square array, each algorithm's
//! Acost against the lower bound (\[BBLRR01\] Lemma 1, scaled), its internal edges,
//! imbalance and plan time; then the timing goals of `ColumnDp` (the DP alone
//! and the whole plan) and of `Hierarchical` up to p = 100 000, and \[BBLRR01\]'s
//! O(p³) Algorithm 3 for comparison.
//!
//! ```text
//! cargo run --release --example array_scale            # full table (markdown)
//! cargo run --release --example array_scale -- --quick # p ≤ 1000
//! ```

use std::time::Instant;

use nuce::plan::array2d::column::{column_optimum, partition_table};
use nuce::plan::array2d::cost::{acost, internal_edges, latency_cost};
use nuce::plan::array2d::{
    acost_lower_bound, registry::practical_decomposers, ArrayDecomposer, Best, ColumnDp,
    Hierarchical,
};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Median wall time in milliseconds of `reps` runs of `f`.
fn time_ms<T>(reps: usize, mut f: impl FnMut() -> T) -> (f64, T) {
    let mut times = Vec::with_capacity(reps);
    let mut last = None;
    for _ in 0..reps.max(1) {
        let t = Instant::now();
        last = Some(f());
        times.push(t.elapsed().as_secs_f64() * 1e3);
    }
    times.sort_by(f64::total_cmp);
    (times[times.len() / 2], last.expect("at least one run"))
}

/// Neighbouring cell pairs whose owners sit on different hosts (cell scan).
fn inter_host_edges(plan: &nuce::plan::array2d::ArrayPlan, hosts: &[usize]) -> usize {
    let (m, n) = (plan.rows, plan.cols);
    let mut host = vec![0usize; m * n];
    for (i, r) in plan.parts.iter().enumerate() {
        for row in r.row..r.row_end() {
            host[row * n + r.col..row * n + r.col_end()].fill(hosts[i]);
        }
    }
    let mut count = 0;
    for row in 0..m {
        for col in 0..n {
            let h = host[row * n + col];
            count += usize::from(col + 1 < n && host[row * n + col + 1] != h);
            count += usize::from(row + 1 < m && host[(row + 1) * n + col] != h);
        }
    }
    count
}

fn speeds(p: usize, seed: u64) -> Vec<f64> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    (0..p).map(|_| rng.gen_range(1.0..10.0)).collect()
}

fn main() -> nuce::Result<()> {
    let quick = std::env::args().any(|a| a == "--quick");
    let ps: &[usize] = if quick {
        &[10, 100, 1000]
    } else {
        &[10, 100, 1000, 10_000]
    };
    let n = 4096;
    println!(
        "## Cost against the lower bound ({n}×{n} array, speeds uniform in [1, 10), seed = p)\n"
    );
    println!("| p | algorithm | Acost | Acost / bound | internal edges | imbalance | plan ms |");
    println!("|---:|---|---:|---:|---:|---:|---:|");
    for &p in ps {
        let s = speeds(p, p as u64);
        let bound = acost_lower_bound(n, n, &s)?;
        let mut algos: Vec<Box<dyn ArrayDecomposer>> = practical_decomposers(p, 0.0);
        algos.push(Box::new(Best::default()));
        for d in &algos {
            let reps = if p >= 10_000 { 3 } else { 5 };
            let (ms, plan) = time_ms(reps, || d.decompose(n, n, &s));
            let plan = plan?;
            println!(
                "| {p} | {} | {} | {:.4} | {} | {:.4} | {:.2} |",
                plan.algorithm,
                acost(&plan),
                acost(&plan) as f64 / bound,
                internal_edges(&plan),
                plan.imbalance(&s)?,
                ms
            );
        }
    }

    println!("\n## Latency cost (L = 200 per internal edge, {n}×{n})\n");
    println!("| p | plan | Acost | internal edges | Acost + L·edges |");
    println!("|---:|---|---:|---:|---:|");
    let lat = 200.0;
    for &p in &ps[..ps.len().min(3)] {
        let s = speeds(p, p as u64);
        let candidates: [(&str, Box<dyn ArrayDecomposer>); 3] = [
            ("column, L = 0", Box::new(ColumnDp::default())),
            ("column, L = 200", Box::new(ColumnDp::with_latency(lat))),
            ("best, L = 200", Box::new(Best::with_latency(lat))),
        ];
        for (label, d) in candidates {
            let plan = d.decompose(n, n, &s)?;
            println!(
                "| {p} | {label} ({}) | {} | {} | {:.0} |",
                plan.algorithm,
                acost(&plan),
                internal_edges(&plan),
                latency_cost(&plan, lat)
            );
        }
    }

    println!("\n## ColumnDp timing (goal: p = 1000 ≤ 50 ms, p = 10 000 ≤ 1 s)\n");
    println!("| p | DP only, L = 0 (ms) | DP only, L = 50 (ms) | whole plan (ms) | [BBLRR01] Algorithm 3, O(p³) (ms) |");
    println!("|---:|---:|---:|---:|---:|");
    let big: &[usize] = if quick {
        &[100, 1000]
    } else {
        &[100, 1000, 10_000, 100_000]
    };
    for &p in big {
        let s = speeds(p, 7);
        let (dp0, _) = time_ms(5, || column_optimum(&s, n as f64, n as f64, 0.0));
        let (dp1, _) = time_ms(5, || column_optimum(&s, n as f64, n as f64, 50.0));
        let side = (p as f64).sqrt().ceil() as usize * 40;
        let (whole, plan) = time_ms(3, || ColumnDp::default().decompose(side, side, &s));
        plan?;
        let seed = if p <= 1000 {
            let (ms, _) = time_ms(1, || partition_table(&s));
            format!("{ms:.1}")
        } else {
            "—".into()
        };
        println!("| {p} | {dp0:.2} | {dp1:.2} | {whole:.1} | {seed} |");
    }

    println!("\n## Hierarchical timing (goal: p = 100 000 ≤ 1 s; 32 parts per host)\n");
    println!("Inter-host edges: cell pairs owned by different hosts (the slow links); flat = ColumnDp on all parts.\n");
    println!("| p | hosts | array | plan ms | Acost / bound | imbalance | inter-host edges (hier / flat) |");
    println!("|---:|---:|---|---:|---:|---:|---:|");
    let hier_ps: &[usize] = if quick {
        &[1000, 10_000]
    } else {
        &[1000, 10_000, 100_000]
    };
    for &p in hier_ps {
        let s = speeds(p, 11);
        let hosts: Vec<usize> = (0..p).map(|i| i / 32).collect();
        let side = (p as f64).sqrt().ceil() as usize * 40;
        let h = Hierarchical::new(hosts);
        let (ms, plan) = time_ms(3, || h.decompose(side, side, &s));
        let plan = plan?;
        let inter = if p <= 10_000 {
            let flat = ColumnDp::default().decompose(side, side, &s)?;
            format!(
                "{} / {}",
                inter_host_edges(&plan, &h.hosts),
                inter_host_edges(&flat, &h.hosts)
            )
        } else {
            "—".into()
        };
        println!(
            "| {p} | {} | {side}×{side} | {ms:.1} | {:.3} | {:.4} | {inter} |",
            p.div_ceil(32),
            acost(&plan) as f64 / acost_lower_bound(side, side, &s)?,
            plan.imbalance(&s)?
        );
    }
    Ok(())
}
