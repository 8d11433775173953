//! `nuce plan divisible`: optimal piece sizes for divisible work with input,
//! compute and output phases (\[AJ88\] §2.3, eq. 7; keys
//! documented in docs/cli-tasks.md).

use nuce_plan::divisible::{round_pieces, AffineCost, AgrawalJagadish, WorkerCosts, WorkerCount};
use nuce_plan::Error;
use serde::Serialize;

use crate::output::outln;

/// Arguments of this subcommand.
#[derive(clap::Args)]
pub struct Args {
    /// Input cost `a(s) = A0 + A1·s` (s: fraction of the whole work).
    #[arg(long, value_name = "A0,A1", allow_hyphen_values = true)]
    input: String,
    /// Compute cost `y(s) = Y0 + Y1·s`.
    #[arg(long, value_name = "Y0,Y1", allow_hyphen_values = true)]
    compute: String,
    /// Output cost `b(s) = B0 + B1·s`.
    #[arg(long, value_name = "B0,B1", allow_hyphen_values = true)]
    output: String,
    /// Number of workers, or `auto` for the best number.
    #[arg(long, default_value = "auto")]
    workers: String,
    /// Largest number of workers tried by `--workers auto`.
    #[arg(long, default_value_t = 64)]
    max_workers: usize,
    /// Also round the pieces to this many whole units (rows, records).
    #[arg(long)]
    units: Option<u64>,
    /// Print JSON.
    #[arg(long)]
    json: bool,
}

fn affine(s: &str, what: &str) -> nuce_plan::Result<AffineCost> {
    match crate::parse_list(s)?.as_slice() {
        [a, b] => Ok(AffineCost::new(*a, *b)),
        _ => Err(Error::InvalidInput(format!(
            "--{what} takes two numbers: intercept,slope"
        ))),
    }
}

/// The JSON answer.
#[derive(Serialize)]
struct Out {
    workers: usize,
    fractions: Vec<f64>,
    makespan: f64,
    equal_split_makespan: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    units: Option<Vec<u64>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    units_makespan: Option<f64>,
}

/// Runs the subcommand.
pub fn run(args: Args) -> nuce_plan::Result<()> {
    let costs = WorkerCosts::new(
        affine(&args.input, "input")?,
        affine(&args.compute, "compute")?,
        affine(&args.output, "output")?,
    )?;
    let workers = match args.workers.as_str() {
        "auto" => WorkerCount::Auto {
            max: args.max_workers,
        },
        n => WorkerCount::Fixed(n.parse().map_err(|_| {
            Error::InvalidInput(format!("--workers: not a number or 'auto': {n:?}"))
        })?),
    };
    let plan = AgrawalJagadish { workers }.plan(&costs)?;
    let rounded = match args.units {
        Some(u) => Some(round_pieces(
            &vec![costs; plan.workers],
            &plan.fractions,
            u,
        )?),
        None => None,
    };
    let out = Out {
        workers: plan.workers,
        equal_split_makespan: costs.equal_partition(plan.workers)?.makespan,
        fractions: plan.fractions,
        makespan: plan.makespan,
        units_makespan: rounded.as_ref().map(|r| r.makespan),
        units: rounded.map(|r| r.units),
    };
    crate::output::check_numbers(&out)?;
    if args.json {
        return crate::output::print_json(&out);
    }
    outln!(
        "{} workers, makespan {:.6} (equal split: {:.6})",
        out.workers,
        out.makespan,
        out.equal_split_makespan
    )?;
    for (k, f) in out.fractions.iter().enumerate() {
        let u = out
            .units
            .as_ref()
            .map_or(String::new(), |u| format!("  {} units", u[k]));
        outln!("piece {:>3}: {:.6}{u}", k + 1, f)?;
    }
    if let Some(m) = out.units_makespan {
        outln!("whole units: makespan {m:.6}")?;
    }
    Ok(())
}
