//! bench_plan_scale — the root's plan at 10³–10⁶ parts (issue 32).
//!
//! At every balance point the root plans alone; this times the default
//! planner of each kind of work on synthetic speeds (uniform in `[1, 4]`,
//! fixed seed), in CPU time of this thread (the machine may be loaded):
//!
//! * **3D**: [`Best3`] for the 7-point stencil of width 1 (the runtime's 3D
//!   decomposer) on a `--grid3`³ grid (default 1000³);
//! * **2D**: [`ColumnDp`] (the balancer's default array decomposer) on a
//!   `--grid2`² array (default 20000²);
//! * **1D**: [`apportion`] (sizes of 1D data by speed, `measure_sizes`),
//!   [`dist1d::optimal_counts`] (a 1D chunk distribution, 10 chunks per
//!   part) and [`Ordering::cut`] (a space-filling-curve order of `4·10⁶`
//!   vertices, at least `2p`, cut in the ratio of the speeds: the graph
//!   partitioners' part-size step).
//!
//! Each plan is timed with its checks (plans validate when built). Where a
//! planner has a fast path at large `p` (3D `best` and 2D `column`, from
//! [`Best3::FAST_FROM`] and [`ColumnDp::FAST_FROM`] parts), a second row
//! per `p` up to `--unhurried-max` (default 10⁵) gives the fast path and
//! the unhurried plan of the same decomposer side by side, forced at any
//! `p`: their CPU time, imbalance (`max volume/share − 1`) and internal
//! surface (3D: faces between parts; 2D: Acost, edges between parts).
//!
//! ```text
//! cargo run --release -p nuce-plan --example bench_plan_scale                # 10³ … 10⁶
//! cargo run --release -p nuce-plan --example bench_plan_scale -- 1000 100000 # chosen p
//! ```

use std::time::Instant;

use nuce_plan::array2d::cost::acost;
use nuce_plan::array2d::{apportion, ArrayDecomposer, ColumnDp};
use nuce_plan::array3d::{Best3, GridDecomposer3, Stencil};
use nuce_plan::dist1d;
use nuce_plan::graph::bisect::Grouping;
use nuce_plan::graph::order::Ordering;

/// This thread's CPU time in seconds (wall time where it cannot be read).
fn cpu_seconds() -> f64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec for the duration of the call.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    if rc == 0 {
        ts.tv_sec as f64 + 1e-9 * ts.tv_nsec as f64
    } else {
        thread_local!(static START: Instant = Instant::now());
        START.with(|s| s.elapsed().as_secs_f64())
    }
}

/// `f`'s result and its CPU seconds (the least of `reps` runs).
fn timed<T>(reps: usize, mut f: impl FnMut() -> T) -> (T, f64) {
    let mut best = f64::INFINITY;
    let mut out = None;
    for _ in 0..reps.max(1) {
        let t = cpu_seconds();
        out = Some(f());
        best = best.min(cpu_seconds() - t);
    }
    (out.expect("at least one run"), best)
}

/// `p` speeds uniform in `[1, 4]` (a fixed LCG: the same on every run).
fn speeds(p: usize) -> Vec<f64> {
    let mut x = 12345u64;
    (0..p)
        .map(|_| {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            1.0 + 3.0 * ((x >> 11) as f64 / (1u64 << 53) as f64)
        })
        .collect()
}

/// The value after `--name`, or `default`.
fn arg(name: &str, default: usize) -> usize {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .map_or(default, |v| v.parse().expect("a number"))
}

/// `max_i (size_i / share_i) − 1` of 1D sizes.
fn imbalance_1d(sizes: &[usize], speeds: &[f64]) -> f64 {
    let total: f64 = sizes.iter().map(|&c| c as f64).sum();
    let sum: f64 = speeds.iter().sum();
    sizes
        .iter()
        .zip(speeds)
        .map(|(&c, v)| c as f64 / (total * v / sum))
        .fold(0.0, f64::max)
        - 1.0
}

/// A plan's time, imbalance and surface, as table cells.
struct Row {
    cpu: f64,
    imbalance: f64,
    surface: Option<usize>,
}

impl Row {
    fn cells(&self) -> String {
        let surface = self.surface.map_or("–".into(), |s| s.to_string());
        format!("{:.4} | {:.4} | {surface}", self.cpu, self.imbalance)
    }
}

/// Prints the row of `what` at `p`, and `vs` (fast path against unhurried).
fn print(what: &str, path: &str, p: usize, row: &Row, vs: Option<(Row, Row)>) {
    println!("| {what} | {p} | {path} | {} | | |", row.cells());
    if let Some((fast, slow)) = vs {
        let ratio = |a: Option<usize>, b: Option<usize>| match (a, b) {
            (Some(a), Some(b)) if b > 0 => format!("{:.4}", a as f64 / b as f64),
            _ => "–".into(),
        };
        println!(
            "| {what}: fast path vs unhurried | {p} | fast | {} | unhurried: {} | {} |",
            fast.cells(),
            slow.cells(),
            ratio(fast.surface, slow.surface)
        );
    }
}

fn main() {
    let mut ps: Vec<usize> = std::env::args()
        .skip(1)
        .take_while(|a| !a.starts_with("--"))
        .map(|a| a.parse().expect("p"))
        .collect();
    if ps.is_empty() {
        ps = vec![1_000, 10_000, 100_000, 1_000_000];
    }
    let n3 = arg("--grid3", 1000);
    let n2 = arg("--grid2", 20_000);
    let unhurried_max = arg("--unhurried-max", 100_000);
    println!("| plan | p | path | CPU s | imbalance | surface | unhurried: CPU s \\| imbalance \\| surface | surface fast/unhurried |");
    println!("|---|---:|---|---:|---:|---:|---|---:|");
    for &p in &ps {
        let s = speeds(p);
        let reps = if p <= 10_000 { 3 } else { 1 };
        let compare = (10_000..=unhurried_max).contains(&p);
        // 3D.
        let best3 = Best3 {
            stencil: Stencil::seven(1),
        };
        let row3 = |plan: &nuce_plan::array3d::GridPlan3, cpu: f64| Row {
            cpu,
            imbalance: plan.imbalance(&s).expect("speeds"),
            surface: Some(plan.internal_surface()),
        };
        let shape = (n3, n3, n3);
        let (plan, t) = timed(reps, || best3.decompose(shape, &s).expect("3D plan"));
        let vs = compare.then(|| {
            let (f, ft) = timed(1, || best3.fast(shape, &s).expect("3D plan"));
            let (u, ut) = timed(1, || best3.unhurried(shape, &s).expect("3D plan"));
            (row3(&f, ft), row3(&u, ut))
        });
        let what = format!("3D `best` {n3}³");
        print(&what, &plan.algorithm, p, &row3(&plan, t), vs);
        // 2D.
        let column = ColumnDp::default();
        let row2 = |plan: &nuce_plan::array2d::ArrayPlan, cpu: f64| Row {
            cpu,
            imbalance: plan.imbalance(&s).expect("speeds"),
            surface: Some(acost(plan)),
        };
        let (plan, t) = timed(reps, || column.decompose(n2, n2, &s).expect("2D plan"));
        let vs = compare.then(|| {
            let (f, ft) = timed(1, || column.fast(n2, n2, &s).expect("2D plan"));
            let (u, ut) = timed(1, || column.unhurried(n2, n2, &s).expect("2D plan"));
            (row2(&f, ft), row2(&u, ut))
        });
        let path = if p >= ColumnDp::FAST_FROM {
            "fast"
        } else {
            "unhurried"
        };
        print(&format!("2D `column` {n2}²"), path, p, &row2(&plan, t), vs);
        // 1D.
        let row1 = |sizes: &[usize], cpu: f64| Row {
            cpu,
            imbalance: imbalance_1d(sizes, &s),
            surface: None,
        };
        let (sizes, t) = timed(reps, || apportion(1 << 40, &s));
        print(
            "1D `apportion` 2⁴⁰ cells",
            "exact",
            p,
            &row1(&sizes, t),
            None,
        );
        let cycle: Vec<f64> = s.iter().map(|v| 1.0 / v).collect();
        let (counts, t) = timed(reps, || dist1d::optimal_counts(10 * p, &cycle).expect("1D"));
        let what = "1D `optimal_counts`, 10 chunks a part";
        print(what, "exact", p, &row1(&counts, t), None);
        let n = 4_000_000usize.max(2 * p);
        let order = Ordering {
            perm: (0..n).collect(),
            prefix: (0..=n).map(|k| k as f64).collect(),
        };
        let (cut, t) = timed(reps, || order.cut(&s, Grouping::default()).expect("cut"));
        let mut sizes = vec![0; p];
        for &(part, lo, hi) in &cut.intervals {
            sizes[part] = hi - lo;
        }
        let what = format!("SFC order cut, {n} vertices");
        print(&what, "exact", p, &row1(&sizes, t), None);
    }
}
