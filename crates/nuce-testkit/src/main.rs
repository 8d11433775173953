//! `nuce-mpi-check`: MPI test scenarios, launched by the integration tests in
//! `tests/mpi_*.rs` as `mpirun -np N nuce-mpi-check <scenario> [args…]`.
//!
//! Each scenario checks its own results on every rank and prints
//! `CHECK <rank> <name> ok|FAIL …` lines plus scenario-specific `RESULT` lines
//! that the tests parse. The process exits non-zero when any check failed.

#![forbid(unsafe_code)]

use mpi::traits::*;

mod array;
mod array3;
mod curve;
mod decisions;
mod depart;
mod depart_array;
mod depart_graph;
mod dgraph;
mod exchange;
mod faults;
mod fpm;
mod graph;
mod grid;
mod grid_whole;
mod hierarchy;
mod join_data;
mod packing;
mod planner3;
mod ranges;
mod save;
mod save_array;
mod save_graph;
mod save_speeds;
mod settings;
mod tasks;

/// Context handed to every scenario.
pub struct Ctx {
    /// The world communicator.
    pub world: mpi::topology::SimpleCommunicator,
    /// Scenario arguments (after the scenario name).
    pub args: Vec<String>,
    failed: std::cell::Cell<bool>,
}

impl Ctx {
    /// This rank.
    pub fn rank(&self) -> i32 {
        self.world.rank()
    }
    /// Records a check on this rank.
    pub fn check(&self, name: &str, ok: bool, detail: impl std::fmt::Display) {
        if ok {
            println!("CHECK {} {name} ok", self.rank());
        } else {
            println!("CHECK {} {name} FAIL {detail}", self.rank());
            self.failed.set(true);
        }
    }
    /// Numeric argument `i` or a default.
    pub fn arg<T: std::str::FromStr>(&self, i: usize, default: T) -> T {
        self.args
            .get(i)
            .and_then(|s| s.parse().ok())
            .unwrap_or(default)
    }
}

/// `1,2,3`: a list for a `key=value` result field.
pub fn comma_list(v: &[usize]) -> String {
    v.iter()
        .map(|x| x.to_string())
        .collect::<Vec<_>>()
        .join(",")
}

fn main() {
    let universe = mpi::initialize().expect("MPI init");
    let mut argv = std::env::args().skip(1);
    let scenario = argv.next().unwrap_or_default();
    let ctx = Ctx {
        world: universe.world(),
        args: argv.collect(),
        failed: std::cell::Cell::new(false),
    };
    let known = match scenario.as_str() {
        s if s.starts_with("array-") => array::run(s, &ctx),
        s if s.starts_with("array3-") => array3::run(s, &ctx),
        s if s.starts_with("faults-") => faults::run(s, &ctx),
        s if s.starts_with("exchange-") => exchange::run(s, &ctx),
        s if s.starts_with("hier-") => hierarchy::run(s, &ctx),
        s if s.starts_with("graph-") => graph::run(s, &ctx),
        s if s.starts_with("fpm-") => fpm::run(s, &ctx),
        s if s.starts_with("decide-") => decisions::run(s, &ctx),
        s if s.starts_with("grid-whole") => grid_whole::run(s, &ctx),
        s if s.starts_with("grid-") => grid::run(s, &ctx),
        s if s.starts_with("planner3") => planner3::run(s, &ctx),
        s if s.starts_with("settings-") => settings::run(s, &ctx),
        s if s.starts_with("save-array") => save_array::run(s, &ctx),
        s if s.starts_with("save-graph") => save_graph::run(s, &ctx),
        s if s.starts_with("save-") => save::run(s, &ctx),
        s if s.starts_with("speeds-") => save_speeds::run(s, &ctx),
        s if s.starts_with("join-data") => join_data::run(s, &ctx),
        s if s.starts_with("depart-array") => depart_array::run(s, &ctx),
        s if s.starts_with("depart-graph") => depart_graph::run(s, &ctx),
        s if s.starts_with("depart-") => depart::run(s, &ctx),
        s if s.starts_with("dgraph-") => dgraph::run(s, &ctx),
        s if s.starts_with("packing-") => packing::run(s, &ctx),
        s if s.starts_with("tasks-") => tasks::run(s, &ctx),
        s if s.starts_with("ranges-") => ranges::run(s, &ctx),
        s if s.starts_with("curve-") => curve::run(s, &ctx),
        _ => false,
    };
    if !known {
        eprintln!("nuce-mpi-check: unknown scenario {scenario:?}");
        std::process::exit(3);
    }
    use std::io::Write;
    std::io::stdout().flush().ok();
    if ctx.failed.get() {
        std::process::exit(1);
    }
}
