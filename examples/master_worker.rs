//! Master–worker matrix product in the spirit of \[AJ88\] §3:
//! naive, semi-naive and optimal partitions of `C = A·B` by rows.
//!
//! ```text
//! mpirun -np 5 target/release/examples/master_worker [--rows 1200] [--cols 200]
//!        [--mult 1,2,3,4] [--repeats 3] [--verbose]
//! ```
//!
//! Rank 0 is the master; it holds `A` (rows × cols) and `B` (cols × cols).
//! Each worker receives `B` and its rows of `A`, computes its rows of `C`
//! and sends them back (\[AJ88\] §3.3: "each slave reads selected rows of one
//! matrix and all of the second matrix"). Heterogeneity is real: worker `k`
//! repeats its product `mult[k]` times (`--mult`, cycled). The library is
//! never told these multipliers: [`measure_worker_costs`] times each worker's
//! kernel on a sample and probes its link to the master, and the planner
//! ([`HeteroDivisible`], the LP of \[AJ88\] eq. (7) with per-worker costs) chooses
//! which workers to use, their order and their pieces, rounded to whole rows.
//!
//! Three runs, each repeated `--repeats` times (median reported):
//! * naive — equal rows, all inputs posted at once (\[AJ88\] §3.4);
//! * semi-naive — equal rows, one message at a time (\[AJ88\] §3.5);
//! * optimal — the planned pieces, one at a time, outputs in input order.
//!
//! Prints a table and `RESULT <variant> predicted <s> measured <s>` lines;
//! `--verbose` prints each run's per-rank send, compute and receive times
//! on stderr.

use std::time::{Duration, Instant};

use mpi::traits::*;
use nuce::collective::{agree, root_compute};
use nuce::plan::divisible::{evaluate, round_pieces, HeteroDivisible, WorkerCosts};
use nuce::{measure_worker_costs, run_master_worker, Dispatch, ExecPlan, MessageSizes};

struct Opts {
    rows: usize,
    cols: usize,
    mult: Vec<u32>,
    repeats: usize,
    verbose: bool,
}

/// Largest `rows × cols` (and `cols × cols`) accepted: 2^27 values (1 GiB
/// of `f64` per matrix on the master).
const MAX_VALUES: usize = 1 << 27;

/// A positive integer option.
fn positive<T: std::str::FromStr + PartialOrd + Default>(name: &str, v: &str) -> Result<T, String> {
    match v.parse::<T>() {
        Ok(x) if x > T::default() => Ok(x),
        _ => Err(format!("{name} takes a positive integer, got {v:?}")),
    }
}

/// Parses the options; a bad one is a message, never a panic.
fn parse() -> Result<Opts, String> {
    let mut o = Opts {
        rows: 1200,
        cols: 200,
        mult: vec![1, 2, 3, 4, 5],
        repeats: 3,
        verbose: false,
    };
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    if let Some(i) = args.iter().position(|a| a == "--verbose") {
        o.verbose = true;
        args.remove(i);
    }
    for w in args.chunks(2) {
        let v = w.get(1).map(String::as_str).unwrap_or("");
        match w[0].as_str() {
            "--rows" => o.rows = positive("--rows", v)?,
            "--cols" => o.cols = positive("--cols", v)?,
            "--repeats" => o.repeats = positive("--repeats", v)?,
            "--mult" => {
                o.mult = v
                    .split(',')
                    .map(|x| positive("--mult", x.trim()))
                    .collect::<Result<_, _>>()?
            }
            other => return Err(format!("unknown option {other:?}")),
        }
    }
    for (what, n) in [
        ("rows x cols", o.rows.checked_mul(o.cols)),
        ("cols x cols", o.cols.checked_mul(o.cols)),
    ] {
        if n.is_none_or(|n| n > MAX_VALUES) {
            return Err(format!(
                "{what} = {} x {}: at most {MAX_VALUES} values",
                o.rows, o.cols
            ));
        }
    }
    Ok(o)
}

/// Rows of `A·B` for `a` (n × k, row-major) and `b` (k × m), `repeat` times.
fn product(a: &[f64], b: &[f64], k: usize, m: usize, repeat: u32) -> Vec<f64> {
    let n = a.len() / k;
    let mut c = vec![0.0; n * m];
    for _ in 0..repeat.max(1) {
        c.iter_mut().for_each(|x| *x = 0.0);
        for i in 0..n {
            let ci = &mut c[i * m..(i + 1) * m];
            for (p, &aip) in a[i * k..(i + 1) * k].iter().enumerate() {
                for (cij, &bpj) in ci.iter_mut().zip(&b[p * m..(p + 1) * m]) {
                    *cij += aip * bpj;
                }
            }
        }
        std::hint::black_box(&c);
    }
    c
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let universe = mpi::initialize().expect("MPI init");
    let world = universe.world();
    // Any error (a bad option on any rank, ranks that disagree) is printed
    // by every rank before MPI ends (it panicked: `--rows 0`, `--rows abc`).
    if let Err(e) = run(&world) {
        eprintln!("master_worker: rank {}: error: {e}", world.rank());
        drop(universe);
        std::process::exit(2);
    }
}

fn run(world: &mpi::topology::SimpleCommunicator) -> nuce::Result<()> {
    let (rank, size) = (world.rank(), world.size());
    // A bad option on any rank is the same error on every rank.
    let o = agree(world, 0, parse().map_err(nuce::Error::invalid_input))?;
    if size < 2 {
        eprintln!("master_worker: run with at least 2 ranks");
        return Ok(());
    }
    let (n, k) = (o.rows, o.cols);
    let master = 0;
    let workers = ExecPlan::worker_ranks(size, master);
    let repeat = if rank == master {
        1
    } else {
        o.mult[(rank as usize - 1) % o.mult.len()]
    };
    // The master's data (deterministic values; workers only see messages).
    let a: Vec<f64> = (0..n * k)
        .map(|x| ((x * 7 + 3) % 13) as f64 - 6.0)
        .collect();
    let b: Vec<f64> = (0..k * k)
        .map(|x| ((x * 5 + 1) % 11) as f64 - 5.0)
        .collect();
    let input = |first: u64, units: u64| -> Vec<f64> {
        let mut msg = b.clone();
        msg.extend_from_slice(&a[first as usize * k..(first + units) as usize * k]);
        msg
    };
    let compute = |msg: &[f64], _units: u64| -> Vec<f64> {
        let (bb, aa) = msg.split_at(k * k);
        product(aa, bb, k, k, repeat)
    };

    // 1. Measure (the library is never told the multipliers).
    let sizes = MessageSizes {
        input_fixed: k * k * 8,
        input_per_unit: k * 8,
        output_per_unit: k * 8,
    };
    let sample_rows = (n / 100).max(1) as u64;
    let sample_a: Vec<f64> = a[..sample_rows as usize * k].to_vec();
    let window = Duration::from_millis(400);
    let costs: Vec<WorkerCosts> =
        measure_worker_costs(world, master, n as u64, sizes, sample_rows, window, |_| {
            let t0 = Instant::now();
            std::hint::black_box(product(&sample_a, &b, k, k, repeat));
            t0.elapsed()
        })?;

    // 2. Plan at the master, broadcast.
    let (plan, pieces) = root_compute(world, master, || {
        let plan = HeteroDivisible::default().plan(&costs)?;
        let ordered: Vec<WorkerCosts> = plan.order.iter().map(|&i| costs[i]).collect();
        let rounded = round_pieces(&ordered, &plan.fractions, n as u64)?;
        Ok((plan, rounded))
    })?;
    let equal = ExecPlan::equal(n as u64, &workers, size, Dispatch::OneAtATime);
    let equal_sizes: Vec<f64> = workers
        .iter()
        .map(|&r| equal.units[r as usize] as f64 / n as f64)
        .collect();
    let predicted_equal = evaluate(&costs, &equal_sizes);
    let variants = [
        (
            "naive",
            ExecPlan::equal(n as u64, &workers, size, Dispatch::AllAtOnce),
            f64::NAN,
        ),
        ("semi-naive", equal, predicted_equal),
        (
            "optimal",
            ExecPlan::from_pieces(&plan, &pieces.units, &workers, size)?,
            pieces.makespan,
        ),
    ];

    // 3. Run each variant; check the product.
    let reference = if rank == master {
        product(&a, &b, k, k, 1)
    } else {
        Vec::new()
    };
    let mut rows_out = Vec::new();
    for (name, exec, predicted) in variants {
        let mut times = Vec::new();
        for _ in 0..o.repeats.max(1) {
            let mut c = vec![f64::NAN; if rank == master { n * k } else { 0 }];
            let report = run_master_worker(
                world,
                master,
                &exec,
                |_, first, units| input(first, units),
                compute,
                |_, first, rows| {
                    let at = first as usize * k;
                    c[at..at + rows.len()].copy_from_slice(&rows);
                },
            )?;
            if rank == master && c != reference {
                eprintln!("master_worker: {name}: wrong product");
                std::process::exit(1);
            }
            if rank == master && o.verbose {
                eprintln!(
                    "{name}: makespan {:.4} compute {:?} sent {:?} recv {:?}",
                    report.makespan, report.compute, report.input_sent, report.result_received
                );
            }
            times.push(report.makespan);
            std::thread::sleep(Duration::from_millis(20));
        }
        rows_out.push((name, median(times), predicted, exec));
    }
    if rank == master {
        println!(
            "# master_worker: {n}x{k} times {k}x{k}, {} workers, multipliers {:?}",
            workers.len(),
            o.mult
        );
        println!("\nMeasured costs (s, as functions of the fraction s of the rows):\n");
        println!("| rank | input a(s) | compute y(s) | output b(s) |\n|---|---|---|---|");
        for (w, c) in workers.iter().zip(&costs) {
            println!(
                "| {w} | {:.2e} + {:.2e}·s | {:.3}·s | {:.2e} + {:.2e}·s |",
                c.input.intercept,
                c.input.slope,
                c.compute.slope,
                c.output.intercept,
                c.output.slope
            );
        }
        println!(
            "\nOptimal plan: order {:?} (ranks), rows {:?}, LP makespan {:.4} s\n",
            plan.order.iter().map(|&i| workers[i]).collect::<Vec<_>>(),
            pieces.units,
            plan.makespan
        );
        println!("| variant | rows per rank | predicted (s) | measured (s) | error |\n|---|---|---|---|---|");
        for (name, measured, predicted, exec) in &rows_out {
            let units: Vec<u64> = workers.iter().map(|&r| exec.units[r as usize]).collect();
            let err = if predicted.is_nan() {
                "—".to_string()
            } else {
                format!("{:+.1} %", 100.0 * (measured - predicted) / predicted)
            };
            let pred = if predicted.is_nan() {
                "—".into()
            } else {
                format!("{predicted:.4}")
            };
            println!("| {name} | {units:?} | {pred} | {measured:.4} | {err} |");
        }
        for (name, measured, predicted, _) in &rows_out {
            println!("RESULT {name} predicted {predicted:.6} measured {measured:.6}");
        }
    }
    Ok(())
}
