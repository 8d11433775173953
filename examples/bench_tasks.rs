//! Benchmarks of the master–worker planners (\[BBLRR01\] §4, \[AJ88\]): prints a
//! Markdown report. Run with `scripts/bench_tasks.sh` or
//! `cargo run --release --example bench_tasks`.

use std::time::Instant;

use nuce::plan::divisible::{AffineCost, DivisibleCosts, HeteroDivisible, WorkerCosts};
use nuce::plan::tasks::{
    min_time, with_work_limit, AssignmentSolver, ExactSearch, Matching, MaxTasksSolver,
    SortedOrder, TaskPlatform, TwoFactor,
};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

fn time<T>(f: impl FnOnce() -> T) -> (T, f64) {
    let t0 = Instant::now();
    let v = f();
    (v, t0.elapsed().as_secs_f64())
}

fn platform(rng: &mut ChaCha8Rng, p: usize, tcom: f64, tret: f64) -> TaskPlatform {
    let t = (0..p).map(|_| rng.gen_range(1.0..10.0)).collect();
    TaskPlatform::new(t, tcom, tret).expect("valid platform")
}

fn main() -> nuce::plan::Result<()> {
    // MinTime with return messages at p = 1000 takes tens of seconds: more
    // than the planners' default work limit, which is lifted here.
    with_work_limit(u64::MAX, run)
}

fn run() -> nuce::plan::Result<()> {
    let mut rng = ChaCha8Rng::seed_from_u64(2001);
    println!("## MaxTasks1(T), p = 1000 (cycle times uniform in [1, 10), t_com = 0.05)\n");
    println!("| T | solver | tasks | time (ms) |\n|---|---|---|---|");
    let pf = platform(&mut rng, 1000, 0.05, 0.0);
    for deadline in [60.0, 200.0, 1000.0] {
        for (name, solver) in [
            (
                "staircase min-cost flow (default)",
                AssignmentSolver::Staircase,
            ),
            ("Hungarian, Monge warm start", AssignmentSolver::Hungarian),
            ("pathfinding kuhn_munkres", AssignmentSolver::KuhnMunkres),
        ] {
            let (s, dt) = time(|| Matching { solver }.max_tasks(&pf, deadline));
            println!("| {deadline} | {name} | {} | {:.1} |", s?.total(), dt * 1e3);
        }
        let (s, dt) = time(|| SortedOrder.max_tasks(&pf, deadline));
        println!(
            "| {deadline} | sorted order (Andonie, not optimal) | {} | {:.1} |",
            s?.total(),
            dt * 1e3
        );
    }
    println!("\n## MinTime(C), p = 1000\n");
    println!("| C | model | makespan | time (ms) |\n|---|---|---|---|");
    for tasks in [10_000u64, 100_000] {
        let (s, dt) = time(|| min_time(&Matching::default(), &pf, tasks));
        println!(
            "| {tasks} | MaxTasks1 (matching) | {:.3} | {:.0} |",
            s?.makespan,
            dt * 1e3
        );
        let pf2 = TaskPlatform::new(pf.cycle_times.clone(), 0.05, 0.02)?;
        let refined = TwoFactor {
            refine: true,
            ..TwoFactor::default()
        };
        let (s, dt) = time(|| min_time(&refined, &pf2, tasks));
        println!(
            "| {tasks} | MaxTasks2 (2-factor, refined) | {:.3} | {:.0} |",
            s?.makespan,
            dt * 1e3
        );
    }
    println!("\n## MaxTasks2(T): 2-factor approximation vs exact search\n");
    println!("Random integer cycle times in [1, 12], t¹ in [1, 4], t² in [1, 3], T in [p(t¹+t²)+12, +70).\n");
    println!("| p | instances | mean gap (plain) | max gap (plain) | mean gap (refined) | max gap (refined) | bound p |");
    println!("|---|---|---|---|---|---|---|");
    for p in [3usize, 5, 7] {
        let n = if p == 7 { 20 } else { 100 };
        let (mut sum0, mut max0, mut sum1, mut max1) = (0u64, 0u64, 0u64, 0u64);
        for _ in 0..n {
            let t = (0..p).map(|_| rng.gen_range(1..=12) as f64).collect();
            let (c1, c2) = (rng.gen_range(1..=4) as f64, rng.gen_range(1..=3) as f64);
            let base = p as f64 * (c1 + c2);
            let deadline = rng.gen_range(base + 12.0..base + 70.0);
            let pf = TaskPlatform::new(t, c1, c2)?;
            let opt = ExactSearch::default().max_tasks(&pf, deadline)?.total();
            let plain = TwoFactor::default().max_tasks(&pf, deadline)?.total();
            let refined = TwoFactor {
                refine: true,
                ..TwoFactor::default()
            }
            .max_tasks(&pf, deadline)?
            .total();
            sum0 += opt - plain;
            max0 = max0.max(opt - plain);
            sum1 += opt - refined;
            max1 = max1.max(opt - refined);
        }
        println!(
            "| {p} | {n} | {:.2} | {max0} | {:.2} | {max1} | {p} |",
            sum0 as f64 / n as f64,
            sum1 as f64 / n as f64
        );
    }
    println!("\n## Divisible work ([AJ88] eqs. 6–7), LP solve time\n");
    println!("| workers | kind | makespan | time (ms) |\n|---|---|---|---|");
    let costs = DivisibleCosts::new(
        AffineCost::new(1.21, 1.05),
        AffineCost::new(0.0, 44.52),
        AffineCost::new(0.10, 1.59),
    )?;
    for n in [4usize, 16, 64] {
        let (plan, dt) = time(|| costs.optimal_partition(n));
        println!(
            "| {n} | homogeneous LP | {:.3} | {:.1} |",
            plan?.makespan,
            dt * 1e3
        );
    }
    let workers: Vec<WorkerCosts> = (0..16)
        .map(|_| {
            let k = rng.gen_range(1.0..3.0);
            WorkerCosts {
                input: AffineCost::new(0.5, rng.gen_range(0.5..2.0)),
                compute: AffineCost::new(0.0, 20.0 * k),
                output: AffineCost::new(0.1, 1.0),
            }
        })
        .collect();
    let (plan, dt) = time(|| HeteroDivisible::default().plan(&workers));
    let plan = plan?;
    println!(
        "| 16 (uses {}) | heterogeneous, order search | {:.3} | {:.1} |",
        plan.order.len(),
        plan.makespan,
        dt * 1e3
    );
    Ok(())
}
