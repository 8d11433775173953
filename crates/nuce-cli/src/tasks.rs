//! `nuce plan tasks`: master–worker schedule of independent equal tasks
//! (\[BBLRR01\] §4; keys documented in docs/cli-tasks.md).

use nuce_plan::tasks::{
    min_time, AutoSolver, ExactSearch, MaxTasksSolver, SortedOrder, TaskPlatform,
};
use nuce_plan::Error;
use serde::Serialize;

use crate::output::outln;

/// Arguments of this subcommand.
#[derive(clap::Args)]
#[command(group(clap::ArgGroup::new("goal").required(true).args(["deadline", "tasks"])))]
pub struct Args {
    /// Seconds per task of each worker, comma-separated (`t_i`).
    #[arg(long, value_name = "T1,T2,...")]
    cycle_times: String,
    /// Cost of one initial message from the master.
    #[arg(long, default_value_t = 0.0)]
    tcom: f64,
    /// Cost of one result message back to the master (MaxTasks2).
    #[arg(long)]
    tcom_return: Option<f64>,
    /// MaxTasks(T): the most tasks within this deadline.
    #[arg(long)]
    deadline: Option<f64>,
    /// MinTime(C): the shortest schedule of this many tasks.
    #[arg(long)]
    tasks: Option<u64>,
    /// Algorithm: auto (optimal matching; refined 2-factor with returns),
    /// sorted (fastest first, Andonie et al.), exact (exhaustive, small p).
    #[arg(long, default_value = "auto")]
    solver: String,
    /// Print JSON.
    #[arg(long)]
    json: bool,
}

/// The JSON answer.
#[derive(Serialize)]
struct Out {
    counts: Vec<u64>,
    total: u64,
    order: Vec<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    return_order: Option<Vec<usize>>,
    makespan: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    deadline: Option<f64>,
}

/// Runs the subcommand.
pub fn run(args: Args) -> nuce_plan::Result<()> {
    let cycle_times = crate::parse_list(&args.cycle_times)?;
    let platform = TaskPlatform::new(cycle_times, args.tcom, args.tcom_return.unwrap_or(0.0))?;
    let solver: Box<dyn MaxTasksSolver> = match args.solver.as_str() {
        "auto" => Box::new(AutoSolver),
        "sorted" => Box::new(SortedOrder),
        "exact" if args.tcom_return.is_some() => Box::new(ExactSearch::default()),
        "exact" => Box::new(AutoSolver), // MaxTasks1's matching is already exact
        other => {
            return Err(Error::InvalidInput(format!(
                "unknown solver {other:?} (auto, sorted, exact)"
            )))
        }
    };
    let schedule = match (args.deadline, args.tasks) {
        (Some(t), _) => solver.max_tasks(&platform, t)?,
        (None, Some(c)) => min_time(solver.as_ref(), &platform, c)?,
        (None, None) => return Err(Error::InvalidInput("give --deadline or --tasks".into())),
    };
    let out = Out {
        total: schedule.total(),
        order: schedule.send_slot.clone(),
        // With --tcom-return 0 results cost nothing: they come back in the
        // send order.
        return_order: args.tcom_return.map(|_| {
            schedule
                .return_order()
                .unwrap_or_else(|| schedule.send_slot.clone())
        }),
        makespan: schedule.makespan,
        deadline: args.deadline,
        counts: schedule.counts,
    };
    crate::output::check_numbers(&out)?;
    if args.json {
        return crate::output::print_json(&out);
    }
    outln!("{} tasks, makespan {}", out.total, out.makespan)?;
    outln!(
        "worker  cycle-time  tasks  send-slot{}",
        if out.return_order.is_some() {
            "  return-pos"
        } else {
            ""
        }
    )?;
    for i in 0..out.counts.len() {
        let ret = out
            .return_order
            .as_ref()
            .map_or(String::new(), |r| format!("  {:>10}", r[i]));
        outln!(
            "{:>6}  {:>10}  {:>5}  {:>9}{ret}",
            i,
            platform.cycle_times[i],
            out.counts[i],
            out.order[i]
        )?;
    }
    Ok(())
}
