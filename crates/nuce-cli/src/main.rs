//! `nuce` — the planner command line.
//!
//! `nuce plan …` runs the planning layer on numbers given on the command line
//! and prints the plan (JSON with `--json`); `nuce measure` measures this
//! machine's speed. Each subcommand lives in its own module; everything
//! they write goes through [`output`] (write failures are errors, a closed
//! pipe is a quiet end, no `null` for a number).

#![forbid(unsafe_code)]

use clap::{Parser, Subcommand};

mod array;
mod distribute;
mod divisible;
mod graph;
mod grid3;
#[cfg(feature = "measure")]
mod measure;
mod output;
mod pack;
mod tasks;

/// Load-balancing planner for heterogeneous clusters.
#[derive(Parser)]
#[command(name = "nuce", version, about)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Compute a decomposition (no MPI needed).
    #[command(subcommand)]
    Plan(PlanCmd),
    /// Measure this machine's speed with the built-in kernels.
    #[cfg(feature = "measure")]
    Measure(measure::Args),
}

#[derive(Subcommand)]
enum PlanCmd {
    /// Decompose a 2D array into rectangles proportional to speeds.
    Array(array::Args),
    /// Decompose a 3D grid into boxes proportional to speeds.
    Grid3(grid3::Args),
    /// Distribute independent chunks (1D) over processors with cycle times.
    Distribute(distribute::Args),
    /// Partition an unstructured graph or mesh in proportion to speeds.
    Graph(graph::Args),
    /// Master–worker schedule of independent equal tasks.
    Tasks(tasks::Args),
    /// Divisible-work partition with input/compute/output phases.
    Divisible(divisible::Args),
    /// Pack AMR grids onto a processor mesh.
    Pack(pack::Args),
}

fn main() {
    let cli = Cli::parse();
    let res = match cli.cmd {
        Cmd::Plan(PlanCmd::Array(a)) => array::run(a),
        Cmd::Plan(PlanCmd::Grid3(a)) => grid3::run(a),
        Cmd::Plan(PlanCmd::Distribute(a)) => distribute::run(a),
        Cmd::Plan(PlanCmd::Graph(a)) => graph::run(a),
        Cmd::Plan(PlanCmd::Tasks(a)) => tasks::run(a),
        Cmd::Plan(PlanCmd::Divisible(a)) => divisible::run(a),
        Cmd::Plan(PlanCmd::Pack(a)) => pack::run(a),
        #[cfg(feature = "measure")]
        Cmd::Measure(a) => measure::run(a),
    };
    if let Err(e) = res.and_then(|()| output::flush()) {
        output::warn(&format!("nuce: error: {e}"));
        std::process::exit(2);
    }
}

/// Parses a list of numbers: comma-separated on the command line
/// (`"1,2.5,3"`), or `@FILE` to read them from a file (`@-`: standard
/// input), separated by commas, spaces or newlines, with `#` comments — for
/// lists too long for a command line (10⁵ speeds).
#[allow(dead_code)]
pub(crate) fn parse_list(s: &str) -> nuce_plan::Result<Vec<f64>> {
    match s.strip_prefix('@') {
        Some(path) => parse_file_list(&read_list_file(path)?, path),
        None => s.split(',').map(|t| parse_number(t, s)).collect(),
    }
}

/// The text of a list file (`-` is standard input).
fn read_list_file(path: &str) -> nuce_plan::Result<String> {
    let read = if path == "-" {
        std::io::read_to_string(std::io::stdin())
    } else {
        std::fs::read_to_string(path)
    };
    read.map_err(|e| nuce_plan::Error::InvalidInput(format!("cannot read list file {path:?}: {e}")))
}

/// The numbers of a list file: separated by commas or white space, `#`
/// to the end of a line is a comment.
fn parse_file_list(text: &str, path: &str) -> nuce_plan::Result<Vec<f64>> {
    let mut out = Vec::new();
    for (no, line) in text.lines().enumerate() {
        let line = line.split('#').next().unwrap_or("");
        for t in line.split(|c: char| c == ',' || c.is_whitespace()) {
            if !t.is_empty() {
                out.push(parse_number(t, &format!("{path}:{}", no + 1))?);
            }
        }
    }
    if out.is_empty() {
        return Err(nuce_plan::Error::InvalidInput(format!(
            "list file {path:?} holds no numbers"
        )));
    }
    Ok(out)
}

/// One number of a list, named by `place` in the error.
fn parse_number(t: &str, place: &str) -> nuce_plan::Result<f64> {
    t.trim()
        .parse::<f64>()
        .map_err(|_| nuce_plan::Error::InvalidInput(format!("not a number: {t:?} in {place:?}")))
}
