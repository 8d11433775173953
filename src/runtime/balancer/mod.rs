//! The [`Balancer`]: measure → gather → plan → broadcast → remap, collectively.
//!
//! ```no_run
//! use nuce::{Balancer, DistArray2};
//!
//! let universe = mpi::initialize().unwrap();
//! let world = universe.world();
//! let mut bal = Balancer::new(&world).unwrap();  // default Settings: arrays by ColumnDp
//! bal.measure().unwrap();                                  // built-in kernel on every rank
//! let mut a = DistArray2::<f64>::new(&mut bal, 1000, 800, 1).unwrap(); // planned for the measured speeds
//! for _phase in 0..10 {
//!     for _ in 0..50 {
//!         a.exchange_ghosts().unwrap();
//!         // ... one iteration of the solver on a.local_mut() ...
//!     }
//!     let report = bal.maybe_remap(&mut a, 50).unwrap();  // timed by nuce itself
//!     if report.remap { /* the layout changed: a.rect() is new */ }
//! }
//! ```
//!
//! The verbs of a balance point, by step (every one collective unless
//! marked *local*):
//!
//! | step | verbs |
//! |---|---|
//! | create, settings | [`Balancer::new`]; [`Balancer::settings`] (*local*) and [`Balancer::configure`]: one [`Settings`] value, the same on every rank |
//! | this rank's facts | [`Balancer::set_kernel`] (*local*), [`Balancer::set_memory_limit`], [`Balancer::set_memory_limit_from_machine`], [`Balancer::detect_hosts`] / [`Balancer::set_hosts`] |
//! | speeds | [`Balancer::measure`], [`Balancer::measure_sizes`], [`Balancer::set_speeds`], [`Balancer::record_phase`] and [`Balancer::start_phase`] (*local*), [`Balancer::update_speeds`], [`Balancer::measure_network`]; read with [`Measured::speeds`], [`Measured::speed_estimates`] |
//! | plan only | [`Balancer::plan`] (2D), [`Balancer::plan3`] (3D), [`Balancer::plan1d`], [`Balancer::plan1d_weighted`], [`OwnershipRanges::new`] |
//! | plan and create data | [`DistArray2::new`], [`DistArray2::scatter_of`], [`DistArray3::scatter`], [`Grid::new`](BufferGrid::new), [`DistGraph::scatter`], [`DistGraph::balance`] |
//! | balance point | [`Balancer::maybe_remap`], [`Balancer::maybe_remap_ahead`], [`Balancer::depart`] |
//! | save | [`DistArray2::checkpoint`] (also `DistArray3`, `DistGraph`), [`Grid::checkpoint`](BufferGrid::checkpoint); restart: [`SavedSpeeds::restore`] |
//! | tasks, AMR | [`ExecPlan::run`], [`schedule_tasks`], [`LocalAllocation::new`] |
//! | the application's own calls | [`Balancer::check_call`], [`Balancer::comm`] |
//!
//! **Speeds are measured by the library.** Between two balance points (any
//! balancer call that plans, scatters or remaps) every rank's compute time
//! is the wall time minus the time spent inside nuce's communication
//! ([`super::clock`]): ghost exchanges, remaps and the balancer's
//! collectives, waiting for a neighbour included — except the time the
//! rank lost off its CPU while it waited (another process held its core),
//! which counts as compute. [`Balancer::maybe_remap`] divides the
//! rank's work (its cells × the iterations of the phase, or its summed
//! cost per cell × the iterations when the array carries a cost field:
//! [`super::cost`]) by that time. An
//! application that knows its work better calls
//! [`Balancer::record_phase`], which then takes precedence for that phase;
//! its own MPI calls can be kept out of the compute time with
//! [`super::clock::waiting`]. Speeds follow a real change within one phase
//! ([`PhaseTimer`](crate::speed::PhaseTimer)). Every speed reaches the root with its noise
//! ([`SpeedEstimate`]); speeds the noise cannot tell apart are planned as
//! equal ([`snap_speeds`]), and a remap must pay off for every speed within
//! the noise ([`RemapPolicy::decide_noisy`]), so equal ranks get equal shares
//! and never remap on noise ([`RemapReport::model`]) — unless the cost model
//! at the snapped speeds finds the same imbalance worth a remap at three
//! consecutive balance points ([`RemapDecision::persist`]): a persistent
//! measured imbalance is acted on ([`RemapDecision::rule`] says which rule
//! decided). A rank with an empty block probes the kernel instead
//! ([`RankReport::Idle`]).
//!
//! On clusters with slow or uneven links:
//!
//! * [`Balancer::measure_network`] measures every rank's link to the root
//!   (ping-pong, [`super::netprobe`]); remap decisions then price the
//!   migration with the slowest link's bandwidth and the largest latency
//!   ([`network_policy`]), and [`Network::latency_cells`] converts the
//!   latency for the latency-aware decomposers
//!   (`registry::decomposer_with_latency`);
//! * [`Balancer::detect_hosts`] (shared-memory split + host names) and
//!   [`Settings::hierarchical`] plan in two levels, across hosts by
//!   their total speed and then within each host ([`Hierarchical`], \[BBLRR01\]
//!   §3.2.2, Figure 14);
//! * every collective starts with an arrival-checked barrier
//!   ([`super::watchdog::checkpoint`]): a rank that never arrives ends the
//!   job after `NUCE_TIMEOUT_S` seconds with a message naming it.
//!
//! The application owns the MPI `Universe`; the balancer works on a duplicate
//! of the communicator it is given, so its messages never mix with the
//! application's. Every method is collective unless it says otherwise, and
//! either succeeds on every rank or returns the same error on every rank.

use std::sync::Arc;
use std::time::Duration;

use mpi::topology::{CommunicatorRelation, SimpleCommunicator};
use mpi::traits::*;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use tracing::{info, info_span};

use super::array::{DistArray2, Element};
use super::array3::DistArray3;
use super::auction::{collective_max_tasks1, WorkerSelf};
use super::clock::{waiting, Phase};
use super::comm::{agree, gather_values, root_compute};
use super::cost::CostGrid;
use super::graph::{DistGraph, GraphStrategy, GraphValue, MigrateStats, RootIndex};
use super::hierarchy::{detect_hosts, Hosts, TwoLevel};
use super::layout::Grid as BufferGrid;
use super::master_worker::{run_master_worker, ExecPlan, ExecReport};
use super::netprobe::probe_links;
use super::object::{migration_volume3, MoveStats};
use super::packing::{allocate_collective, LocalAllocation};
use super::watchdog::Checkpoints;
use crate::error::{Error, Result};
use crate::plan::array2d::weighted::rect_costs;
use crate::plan::array2d::{ArrayDecomposer, ArrayPlan, Hierarchical, WeightedBisection2d};
use crate::plan::array3d::{CellCosts, GridPlan3, Shape3, Stencil, WeightedBisection3d};
use crate::plan::fpm::{snap_speeds, PlanningModel, SpeedEstimate, SpeedFunction};
use crate::plan::graph::{Graph, IntervalCut, Partition};
use crate::plan::packing::{Grid, Mesh, Scaling, TightPacking};
use crate::plan::policy::{migration_volume, RemapDecision, RemapPolicy};
use crate::plan::tasks::{TaskPlatform, TaskSchedule};
use crate::speed::network::{LinkRecord, ProbeConfig};
use crate::speed::{
    measure_kernel, measure_sweep, topology, KernelConfig, SpeedRecord, SpeedSource, SweepPoint,
    MAX_NOISE,
};

mod curve;
mod data;
mod deprecated;
mod joining;
mod measured;
mod membership;
mod memory;
mod network;
mod phase_point;
mod pool;
mod rank_speed;
mod rebalance;
mod remap;
mod saved_speeds;
mod settings;
mod speed_book;
mod speeds;
mod tasks;

use rank_speed::RankSpeed;
use speed_book::SpeedBook;

pub use joining::{JoinItem, Joining};
pub use measured::Measured;
pub use membership::{Departing, Departure};
pub use memory::MEMORY_FRACTION;
pub use network::Network;
pub use pool::{Joined, Pool};
pub use rebalance::{GraphPlan, LocalProposal, Proposal, Rebalance, RootContext};
use remap::policy_args;
pub use remap::RemapReport;
pub use saved_speeds::SavedSpeeds;
pub use settings::{ArrayAlgorithm, GridAlgorithm, Settings};
pub use speeds::{functional_from_env, RankReport, SpeedModel, ENV_SPEED_MODEL};
pub use tasks::schedule_tasks;

/// The rank of a balancer's communicator that gathers the speeds, plans
/// and broadcasts: rank 0 of the communicator given to [`Balancer::new`]
/// (to have another rank plan, give a communicator that ranks it first).
pub const ROOT: i32 = 0;

/// The collective load balancer: measures the ranks' speeds, plans 2D
/// arrays ([`DistArray2`]), 3D grids ([`DistArray3`](crate::DistArray3),
/// grids on the application's buffers: [`Grid`](crate::Grid)) and graphs
/// ([`DistGraph`](crate::DistGraph)) in proportion to them, and at every
/// balance point ([`Balancer::maybe_remap`]) remaps them when that pays off.
pub struct Balancer {
    comm: SimpleCommunicator,
    /// The settings, the same on every rank ([`Balancer::configure`]).
    settings: Settings,
    /// This rank's kernel ([`Balancer::set_kernel`]).
    kernel: KernelConfig,
    /// This rank's own speed: phase timer, kernel noise, idle probe, speed
    /// function ([`RankSpeed`], pure).
    own: RankSpeed,
    /// Every rank's speed as planned, its estimate with its noise, the
    /// memory limits, and the root's decision at a balance point
    /// ([`SpeedBook`], pure).
    book: SpeedBook,
    bandwidth: Option<f64>,
    network: Option<Network>,
    hosts: Option<Hosts>,
    two_level: Option<TwoLevel>,
    /// The checkpoints of the balancer's collectives (and their timeout).
    cp: Checkpoints,
    /// Start of the current phase (the last balance point).
    phase: std::cell::Cell<Phase>,
    /// This rank's load under the last [`Balancer::plan1d_weighted`]: the
    /// work per iteration of its next phase.
    curve_load: Option<f64>,
}

impl Balancer {
    /// Creates a balancer over a duplicate of `comm` (collective:
    /// `MPI_Comm_dup`), with rank 0 as the root ([`ROOT`]) and the default
    /// [`Settings`]: arrays are planned by the optimal column-based
    /// decomposition ([`ColumnDp`](crate::ColumnDp), \[BBLRR01\] §3.2.4) unless
    /// [`Balancer::configure`] says otherwise. The collectives' timeout
    /// comes from `NUCE_TIMEOUT_S` (module `watchdog`), the speed model
    /// from [`ENV_SPEED_MODEL`] and whether waits yield the core from
    /// [`ENV_WAIT_YIELD`](crate::ENV_WAIT_YIELD); a malformed value is an
    /// error on every rank.
    pub fn new<C: Communicator>(comm: &C) -> Result<Self> {
        Balancer::new_as(comm, "Balancer::new")
    }

    /// [`Balancer::new`] where `call` names the caller's function in
    /// messages (e.g. a C or Fortran entry point). The blocking step that
    /// cannot be polled (`MPI_Comm_dup`) is under a watchdog
    /// [`guard`](super::watchdog::guard) of the timeout of `NUCE_TIMEOUT_S`:
    /// a rank that never calls ends the job with a message instead of
    /// hanging the others. Then one checkpoint
    /// ([`Checkpoints::entered`]) checks the call and this rank's
    /// environment at once: a malformed `NUCE_TIMEOUT_S`,
    /// [`ENV_SPEED_MODEL`] or `NUCE_WAIT_YIELD` on some rank is the same
    /// error on every rank.
    /// Two collective steps in all: the `MPI_Comm_dup` and that checkpoint.
    /// For nuce's C and Fortran bindings (hidden: no stability promise).
    #[doc(hidden)]
    pub fn new_as<C: Communicator>(comm: &C, call: &str) -> Result<Self> {
        let _w = waiting();
        let limit = super::watchdog::timeout_from_env().unwrap_or(Some(Duration::from_secs_f64(
            super::watchdog::DEFAULT_TIMEOUT_S,
        )));
        let dog = super::watchdog::guard(
            mpi::topology::SimpleCommunicator::world().rank(),
            format!("{call} (MPI_Comm_dup of the communicator: a rank of it did not call {call})"),
            limit,
        );
        let comm = comm.duplicate();
        drop(dog);
        // This rank's settings from the environment: its refusal of the
        // first checkpoint, which also tells the root every rank's host.
        let functional = functional_from_env();
        let refused = functional
            .as_ref()
            .err()
            .or(crate::runtime::yielding::wait_yield_from_env()
                .err()
                .as_ref())
            .cloned();
        let cp = Checkpoints::entered(&comm, call, refused)?;
        let settings = Settings::with_env(cp.timeout(), functional?);
        Ok(Balancer {
            comm,
            settings,
            kernel: KernelConfig::default(),
            own: RankSpeed::default(),
            book: SpeedBook::default(),
            bandwidth: None,
            network: None,
            hosts: None,
            two_level: None,
            cp,
            phase: std::cell::Cell::new(Phase::start()),
            curve_load: None,
        })
    }

    /// A balance point: the next phase's compute time is measured from now.
    fn mark(&mut self) {
        self.phase.set(Phase::start());
        self.own.start_phase();
    }

    /// Checked entry of a collective (see [`super::watchdog::checkpoint`]).
    fn arrive(&self, op: &str) -> Result<()> {
        self.cp.check(&self.comm, op)
    }

    /// The checked entry of a collective call `op` named in the caller's
    /// words (e.g. a C function with its must-match arguments), where this
    /// rank may refuse (`refused`: its own input is wrong): every rank
    /// returns the same result, within the timeout
    /// ([`super::watchdog::refusing_checkpoint`]). For bindings that
    /// validate their arguments before the call's data steps.
    #[doc(hidden)]
    pub fn entry(&self, op: &str, refused: Option<&Error>) -> Result<()> {
        let _w = waiting();
        self.cp.check_refusing(&self.comm, op, refused)
    }

    /// Checks that every rank makes the same call `op` of the application
    /// (collective): `op` names the call and its must-match arguments (e.g.
    /// `"solver: phase 3 of 5"`). A difference is the same
    /// [`Error::Disagreement`] on every rank, naming each rank's call; a rank
    /// that does not arrive within the timeout ends the job with a message
    /// naming it and its host ([`super::watchdog::checkpoint`]). For the
    /// application's own collectives between nuce's.
    pub fn check_call(&self, op: &str) -> Result<()> {
        let _w = waiting();
        self.arrive(&format!("application: {op}"))
    }

    /// Gathers one value from every rank at the root, in rank order
    /// (`None` elsewhere; errors agree): through the host leaders once the
    /// hosts are known ([`Balancer::detect_hosts`], [`Balancer::set_hosts`]:
    /// the root receives one bundle per host), flat otherwise.
    fn gather_at_root<T: Serialize + DeserializeOwned>(&self, value: &T) -> Result<Option<Vec<T>>> {
        match &self.two_level {
            // The two-level gather collects at rank 0 of the communicator.
            Some(t) if ROOT == 0 => t.gather(&self.comm, value),
            _ => gather_values(&self.comm, ROOT, value),
        }
    }

    /// The decomposer actually used: hierarchical over the hosts, or flat
    /// (an error only for a name [`Balancer::configure`] would refuse).
    fn planner(&self) -> Result<Arc<dyn ArrayDecomposer>> {
        let flat = self.settings.array_algorithm.decomposer()?;
        Ok(match (&self.hosts, self.settings.hierarchical) {
            (Some(h), true) => Arc::new(Hierarchical {
                hosts: h.host_of.clone(),
                across: flat.clone(),
                within: flat,
            }),
            _ => flat,
        })
    }

    /// Sets this rank's built-in kernel (local: it may differ between
    /// ranks, e.g. an emulated slowness): the kernel of the next
    /// [`Balancer::measure`] and [`Balancer::measure_sizes`] and of the
    /// probes of idle ranks.
    pub fn set_kernel(&mut self, kernel: KernelConfig) {
        self.kernel = kernel;
    }

    /// The balancer's communicator (a duplicate of the one given to [`Balancer::new`]).
    pub fn comm(&self) -> &SimpleCommunicator {
        &self.comm
    }

    /// Checks (collectively) that `other` has this balancer's ranks in the same order.
    pub(crate) fn same_ranks(&self, other: &SimpleCommunicator, what: &str) -> Result<()> {
        let same = matches!(
            self.comm.compare(other),
            CommunicatorRelation::Identical | CommunicatorRelation::Congruent
        );
        agree(
            &self.comm,
            ROOT,
            if same {
                Ok(())
            } else {
                Err(Error::invalid_input(format!(
                    "{what}: the data lives on other ranks than the balancer"
                )))
            },
        )
    }
}
