//! `nuce plan distribute`: distribute `B` equal chunks over processors of
//! given cycle times (\[BBLRR01\] §2); JSON keys in `docs/cli.md`.

use nuce_plan::dist1d::{
    distributor_by_name, incremental_sequence, lu_update_costs, sweep_makespan, Panels,
};
use nuce_plan::Result;
use serde::Serialize;

use crate::output::outln;

/// Arguments of this subcommand.
#[derive(clap::Args)]
pub struct Args {
    /// Number of chunks B.
    #[arg(long)]
    chunks: usize,
    /// Cycle times (seconds per chunk), comma-separated, or `@FILE`.
    #[arg(long, allow_hyphen_values = true)]
    cycle_times: String,
    /// static (Algorithm 2), incremental (Figure 8), lu (reversed
    /// incremental in slices, Figures 9–10) or panel (periodic panels, §2.3).
    #[arg(long, default_value = "static")]
    mode: String,
    /// Slice length (lu) or panel period (panel); 0 = all chunks.
    #[arg(long, default_value_t = 0)]
    period: usize,
    /// panel mode: number of tile rows of the sweep, to report its simulated time.
    #[arg(long)]
    rows: Option<usize>,
    /// Print JSON instead of text.
    #[arg(long)]
    json: bool,
}

/// The JSON output (documented in `docs/cli.md`).
#[derive(Serialize)]
struct Output {
    mode: String,
    chunks: usize,
    counts: Vec<usize>,
    makespan: f64,
    owners: Vec<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    sequence: Option<Vec<usize>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    order: Option<Vec<usize>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    panel_counts: Option<Vec<usize>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    sweep_time: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    update_costs: Option<Vec<f64>>,
}

/// Runs the subcommand.
pub fn run(args: Args) -> Result<()> {
    let t = crate::parse_list(&args.cycle_times)?;
    let d = distributor_by_name(&args.mode, args.period)?;
    let plan = d.distribute(args.chunks, &t)?;
    let sequence = match args.mode.as_str() {
        "incremental" => Some(incremental_sequence(args.chunks, &t)?),
        _ => None,
    };
    let (order, panel_counts) = match args.mode.as_str() {
        "panel" => {
            let (o, c) = Panels {
                period: args.period,
            }
            .pattern(args.chunks, &t)?;
            (Some(o), Some(c))
        }
        _ => (None, None),
    };
    let sweep_time = match (args.mode.as_str(), args.rows) {
        ("panel", Some(rows)) => Some(sweep_makespan(&plan.owners, rows, &t)?),
        _ => None,
    };
    let update_costs = match args.mode.as_str() {
        "lu" => Some(lu_update_costs(&plan.owners, &t)?),
        _ => None,
    };
    let out = Output {
        mode: plan.algorithm,
        chunks: args.chunks,
        counts: plan.counts,
        makespan: plan.makespan,
        owners: plan.owners,
        sequence,
        order,
        panel_counts,
        sweep_time,
        update_costs,
    };
    crate::output::check_numbers(&out)?;
    if args.json {
        return crate::output::print_json(&out);
    }
    outln!("{} distribution of {} chunks", out.mode, out.chunks)?;
    outln!("counts:   {:?}", out.counts)?;
    outln!("makespan: {}", out.makespan)?;
    if let Some(s) = &out.sequence {
        outln!("sequence: {s:?}")?;
    }
    if let (Some(o), Some(c)) = (&out.order, &out.panel_counts) {
        outln!("panel order: {o:?}  per-panel counts: {c:?}")?;
    }
    if let Some(x) = out.sweep_time {
        outln!("simulated sweep time: {x}")?;
    }
    if let Some(u) = &out.update_costs {
        outln!("LU update cost per step: {u:?}")?;
    }
    if out.owners.len() <= 200 {
        outln!("owners:   {:?}", out.owners)?;
    }
    Ok(())
}
