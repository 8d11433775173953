//! # nuce — load balancing for MPI applications on Nonuniform Computational Environments
//!
//! nuce is linked into MPI solvers (stencils, unstructured meshes, dense linear
//! algebra, master–worker simulations, adaptive mesh refinement) that run on
//! machines of different speeds. Between solver phases the application calls
//! nuce, which
//!
//! ```text
//!  every rank                 root                           every rank
//!  measure speed ──gather──►  plan: decompose(speeds, work)
//!  (kernel or phase timing)   (pure function, no MPI)  ──bcast plan──►  scatter / remap data
//!                                                                      (only what changed owner)
//! ```
//!
//! Two layers are kept apart: [`plan`], pure and deterministic planning
//! functions (every algorithm of the papers, see `docs/references.md`),
//! usable without MPI and from the `nuce` command-line planner; and the thin
//! collective runtime over rsmpi (gather speeds, broadcast plans, scatter,
//! ghost exchange, remap), whose user-facing types are re-exported here.
//!
//! Conventions: speeds are relative throughputs (work units per second); a
//! collective call succeeds on every rank or returns the same [`Error`] on
//! every rank; remaps move only cells whose owner changed.
//!
//! ## An application's whole API
//!
//! One [`Balancer`] per communicator; every call below is collective
//! unless marked *local*.
//!
//! | step | calls |
//! |---|---|
//! | create | [`Balancer::new`] (rank [`ROOT`] of the communicator plans) |
//! | settings (the same on every rank; may change between phases) | [`Balancer::settings`] (*local*) → [`Settings`]: timeout, remap policy, decomposers of arrays and grids ([`ArrayAlgorithm`], [`GridAlgorithm`]: by name or the application's own), two-level planning, speed model; [`Balancer::configure`] checks that every rank passes the same and applies them |
//! | this rank's own facts | [`Balancer::set_kernel`] (*local*: the built-in kernel, e.g. an emulated slowness), [`Balancer::set_memory_limit`], [`Balancer::set_memory_limit_from_machine`] (a safe fraction: [`MEMORY_FRACTION`]) |
//! | speeds | [`Balancer::measure`] (built-in kernel), [`Balancer::measure_sizes`], [`Balancer::set_speeds`], or nothing: phases are timed between balance points; [`Balancer::record_phase`] (*local*) when the application knows its work better |
//! | network, hosts | [`Balancer::measure_network`] → [`Network`]; [`Balancer::detect_hosts`] / [`Balancer::set_hosts`] → [`Hosts`] |
//! | 2D arrays (nuce's container) | [`DistArray2::new`], [`DistArray2::scatter_of`] → [`DistArray2`]: `exchange_ghosts`, `local_mut`, `gather`, `set_cost` |
//! | 3D grids on the application's buffers | [`Grid::new`] → [`Grid`]: `exchange(&mut [Field])` or `exchange_begin` → [`Exchange`], after a remap `move_fields`; `set_cost` |
//! | 3D arrays (nuce's container) | [`DistArray3::scatter`] → [`DistArray3`] |
//! | ownership ranges only (the application moves its data) | 3D: [`OwnershipRanges::new`] → [`OwnershipRanges`]; 1D: [`Balancer::plan1d`] → counts per rank |
//! | graphs | whole on the root: [`DistGraph::scatter`]; in pieces: [`DistGraph::from_local`] + [`DistGraph::balance`] → [`DistGraph`]: `exchange_ghosts`, `gather` |
//! | between phases | [`Balancer::maybe_remap`] / [`Balancer::maybe_remap_ahead`] on any of the data above → [`RemapReport`] |
//! | tasks, AMR | [`ExecPlan::run`] → [`ExecReport`], [`schedule_tasks`], [`LocalAllocation::new`] → [`LocalAllocation`]; without a balancer: [`measure_worker_costs`], [`run_master_worker`] on an [`ExecPlan`] |
//! | the application's own collectives | [`Balancer::check_call`] (every rank makes the same call), [`collective`] ([`collective::agree`]: the same error on every rank; `root_compute`, `max_f64`, …), [`waiting`] (keep a wait out of the compute time), [`guard`] (a deadline on the application's own code, *local*) |
//! | errors | [`Error`]: `Plan` (the input is wrong: [`plan::Error`], e.g. `InvalidInput`), `Disagreement` (ranks made different calls), `Mpi`, `Remote` (another rank's error), `Timeout` (a ghost exchange that ran out of time on every rank); a rank that never arrives at a collective call ends the job after [`ENV_TIMEOUT`] seconds, naming it |
//!
//! ## Types
//!
//! | kind | types |
//! |---|---|
//! | the balancer and its answers | [`Balancer`], [`Settings`] ([`ArrayAlgorithm`], [`GridAlgorithm`]), [`RemapReport`], [`SpeedModel`], [`Network`], [`Hosts`], [`Rebalance`] (what `maybe_remap` accepts; sealed) |
//! | data | [`DistArray2`] (elements: [`Element`]), [`DistArray3`], [`Grid`] with [`Field`]s of [`Plain`] values ([`Layout`], [`Region`]), [`DistGraph`] (values: [`GraphValue`]; [`GraphStrategy`], [`LocalSizes`]), [`OwnershipRanges`], [`CostField`] |
//! | statistics | [`MoveStats`] (a remap of an array or grid), [`MigrateStats`] (a graph's), [`ExchangeStats`] (one ghost exchange), [`PackStats`] |
//! | plans (from [`plan`]) | [`ArrayPlan`], [`Rect`], [`ArrayDecomposer`], [`ColumnDp`], [`Graph`], [`Partition`] |
//! | tasks | [`WorkerSelf`] (a worker's row for [`schedule_tasks`]), [`ExecPlan`], [`Dispatch`], [`ExecReport`], [`MessageSizes`], [`LocalAllocation`] |
//! | timing | [`Waiting`], [`Guard`], [`PhaseTimer`] |
//! | settings from the environment | [`ENV_TIMEOUT`], [`ENV_CHECK`] (`full`: check every ghost exchange), [`ENV_SPEED_MODEL`], [`ENV_WAIT_YIELD`] (whether waits yield the core) |
//!
//! ## Modules
//!
//! * [`plan`] — the pure planners (decompositions, partitions, schedules),
//!   without MPI;
//! * [`speed`] — a rank's throughput (built-in kernels, or timing of the
//!   application's own phases) and its hwloc topology;
//! * [`collective`] — the application's own collectives, with nuce's
//!   error promise.
//!
//! **Stability.** The items above are the API. The hidden module
//! `nuce::internals` (not in these docs) exists for nuce's C API, test
//! driver, benchmarks and tests; it is not covered by semver.

#![warn(missing_docs)]
#![warn(unnameable_types)]

pub use nuce_plan as plan;
mod error;
mod runtime;
pub mod speed;

pub use error::{Error, Result};

// What an application needs, at the crate root: the types and verbs of the
// table above, and every type their signatures name.
pub use plan::array2d::{ArrayDecomposer, ArrayPlan, ColumnDp, Rect};
pub use plan::graph::{Graph, Partition};
pub use runtime::array::{DistArray2, Element};
pub use runtime::array3::{DistArray3, MAX_GHOST3};
pub use runtime::auction::WorkerSelf;
/// In [`Joining`]'s signature only (what an admitted rank receives).
#[doc(hidden)]
pub use runtime::balancer::JoinItem;
pub use runtime::balancer::{
    schedule_tasks, ArrayAlgorithm, Balancer, Departing, Departure, GridAlgorithm, Joined, Joining,
    Measured, Network, Pool, Rebalance, RemapReport, SavedSpeeds, Settings, SpeedModel,
    ENV_SPEED_MODEL, MEMORY_FRACTION, ROOT,
};
pub use runtime::clock::{waiting, Waiting};
pub use runtime::cost::CostField;
pub use runtime::graph::{DistGraph, GraphStrategy, GraphValue, LocalSizes, MigrateStats};
pub use runtime::halo::{ExchangeStats, ENV_CHECK};
pub use runtime::hierarchy::Hosts;
pub use runtime::layout::{Exchange, Field, Grid, Layout, Plain, Region, MAX_GHOST};
pub use runtime::master_worker::{
    measure_worker_costs, run_master_worker, Dispatch, ExecPlan, ExecReport, MessageSizes,
};
pub use runtime::notice::{catch_leave_signal, leave_signalled};
pub use runtime::object::MoveStats;
pub use runtime::packing::{LocalAllocation, PackStats};
pub use runtime::ranges::OwnershipRanges;
pub use runtime::savefile::{Checkpointable, SaveStats, SavedGraph, SavedGrid, SAVE_FORMAT};
pub use runtime::watchdog::{guard, Guard, ENV_TIMEOUT};
pub use runtime::yielding::ENV_WAIT_YIELD;
pub use speed::PhaseTimer;

/// The application's own collective calls, with nuce's promise: each one
/// succeeds on every rank or returns the same [`Error`] on every rank.
///
/// * [`agree`](collective::agree) turns a per-rank `Result` into a
///   collective one (e.g. after parsing options on every rank);
/// * [`root_compute`](collective::root_compute) runs a closure on the root
///   only and broadcasts its `Result`;
/// * [`bcast_value`](collective::bcast_value),
///   [`gather_values`](collective::gather_values),
///   [`all_gather_values`](collective::all_gather_values) move serde values
///   (size-limited: a corrupted message is an [`Error::BadMessage`]);
/// * [`check_identical`](collective::check_identical) checks that every rank
///   holds the same value;
/// * [`sum_f64`](collective::sum_f64), [`max_f64`](collective::max_f64)
///   reduce one number (e.g. a phase's time).
pub mod collective {
    pub use crate::runtime::comm::{
        agree, all_gather_values, bcast_value, check_identical, gather_values, max_f64,
        root_compute, sum_f64, MAX_MESSAGE,
    };
}

/// nuce's internals, public only for nuce's own crates: the C API
/// (`nuce-capi`), the Python bindings (`nuce-py`), the test driver
/// (`nuce-testkit`), the benchmarks (`examples/`) and the integration tests.
/// **Not covered by semver**: anything here may change or disappear in any
/// release. Applications use the crate root, [`collective`], [`speed`] and
/// [`plan`] only.
///
/// Only what those crates use and the crate root does not offer: they take
/// every public type (`Balancer`, `Grid`, `DistArray2`, …) and the
/// collectives ([`collective`]) from there.
#[doc(hidden)]
pub mod internals {
    // Whole modules: `clock` (the C API's `polling`) and `halo`, which the
    // public docs of `DistGraph` (runtime/graph/) link to.
    pub use crate::runtime::notice::leave_signal_number;
    pub use crate::runtime::{clock, halo};
    /// The bindings' view of a grid's fields and a split exchange.
    pub mod layout {
        pub use crate::runtime::layout::{PendingExchange, RawField};
    }
    /// Serde messages and MPI return codes.
    pub mod comm {
        pub use crate::runtime::comm::{decode, displacements, encode, mpi_check};
    }
    /// The checked entry and its diagnostics (`Checkpoints`: the type the
    /// functions of `halo` take).
    pub mod watchdog {
        pub use crate::runtime::watchdog::{
            arrival_bytes_received, arrivals_received, checkpoint, parse_timeout, timeout_from_env,
            Checkpoints,
        };
    }
    /// The speed model's setting from the environment, and the types of
    /// [`Rebalance`](crate::Rebalance)'s hidden methods.
    pub mod balancer {
        pub use crate::runtime::balancer::{
            functional_from_env, GraphPlan, LocalProposal, Proposal, RootContext,
        };
    }
    /// The tasks' auction without a balancer.
    pub mod auction {
        pub use crate::runtime::auction::collective_assignment;
    }
    /// Host detection and the two-level collectives.
    pub mod hierarchy {
        pub use crate::runtime::hierarchy::{detect_hosts, TwoLevel};
    }
    /// A link's measurement to the root.
    pub mod netprobe {
        pub use crate::runtime::netprobe::link_to_root;
    }
    /// The AMR packing's collectives without a balancer.
    pub mod packing {
        pub use crate::runtime::packing::{allocate_collective, collective_tp, CollectivePacking};
    }
    /// The message tags nuce uses.
    pub mod tags {
        pub use crate::runtime::tags::{ALL, HALO_FIRST};
    }
}
