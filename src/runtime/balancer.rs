//! The [`Balancer`]: measure → gather → plan → broadcast → remap, collectively.
//!
//! ```no_run
//! use nuce::Balancer;
//!
//! let universe = mpi::initialize().unwrap();
//! let world = universe.world();
//! let mut bal = Balancer::new(&world).unwrap();  // arrays: ColumnDp unless set_decomposer
//! bal.measure().unwrap();                                  // built-in kernel on every rank
//! let mut a = bal.new_array::<f64>(1000, 800, 1).unwrap(); // planned for the measured speeds
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
//! **Speeds are measured by the library.** Between two balance points (any
//! balancer call that plans, scatters or remaps) every rank's compute time
//! is the wall time minus the time spent inside nuce's communication
//! ([`super::clock`]): ghost exchanges, remaps and the balancer's
//! collectives, waiting included. [`Balancer::maybe_remap`] divides the
//! rank's work (its cells × the iterations of the phase, or its summed
//! cost per cell × the iterations when the array carries a cost field:
//! [`super::cost`]) by that time. An
//! application that knows its work better calls
//! [`Balancer::record_phase`], which then takes precedence for that phase;
//! its own MPI calls can be kept out of the compute time with
//! [`super::clock::waiting`]. Speeds follow a real change within one phase
//! ([`PhaseTimer`]). Every speed reaches the root with its noise
//! ([`SpeedEstimate`]); speeds the noise cannot tell apart are planned as
//! equal ([`snap_speeds`]), and a remap must pay off for every speed within
//! the noise ([`RemapPolicy::decide_noisy`]), so equal ranks get equal shares
//! and never remap on noise ([`RemapReport::model`]). A rank with an empty
//! block probes the kernel instead ([`RankReport::Idle`]).
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
//!   [`Balancer::set_hierarchical`] plan in two levels, across hosts by
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

use super::array::{DistArray2, Element, MoveStats};
use super::array3::{migration_volume3, DistArray3};
use super::auction::{collective_max_tasks1, WorkerSelf};
use super::clock::{waiting, Phase};
use super::comm::{agree, gather_values, root_compute};
use super::cost::CostGrid;
use super::graph::{DistGraph, GraphStrategy, GraphValue, MigrateStats, RootIndex};
use super::hierarchy::{detect_hosts, Hosts, TwoLevel};
use super::layout::Grid as BufferGrid;
use super::master_worker::{run_master_worker, ExecPlan, ExecReport};
use super::netprobe::probe_links;
use super::packing::{allocate_collective, LocalAllocation};
use super::watchdog::Checkpoints;
use crate::error::{Error, Result};
use crate::plan::array2d::weighted::rect_costs;
use crate::plan::array2d::{
    registry, ArrayDecomposer, ArrayPlan, ColumnDp, Hierarchical, WeightedBisection2d,
};
use crate::plan::array3d::{
    Best3, CellCosts, GridDecomposer3, GridPlan3, Shape3, Stencil, WeightedBisection3d,
};
use crate::plan::fpm::{snap_speeds, Aging, PlanningModel, SpeedEstimate, SpeedFunction};
use crate::plan::graph::{Graph, IntervalCut, Partition};
use crate::plan::packing::{Grid, Mesh, Scaling, TightPacking};
use crate::plan::policy::{migration_volume, RemapDecision, RemapPolicy};
use crate::plan::tasks::{TaskPlatform, TaskSchedule};
use crate::speed::network::{LinkRecord, ProbeConfig};
use crate::speed::{
    measure_kernel, measure_sweep, topology, KernelConfig, PhaseTimer, SpeedRecord, SpeedSource,
    SweepPoint, MAX_NOISE,
};

/// The rank of a balancer's communicator that gathers the speeds, plans
/// and broadcasts: rank 0 of the communicator given to [`Balancer::new`]
/// (to have another rank plan, give a communicator that ranks it first).
pub const ROOT: i32 = 0;

/// Smallest per-rank move (bytes) from which a remap's time updates the bandwidth estimate.
pub const MIN_BANDWIDTH_SAMPLE: u64 = 1 << 20;

/// Which speed model decided a remap ([`RemapReport::model`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum SpeedModel {
    /// One constant speed per rank, known exactly (no rank reported any noise).
    Constant,
    /// Constant speeds known up to their measured noise: speeds the noise
    /// cannot tell apart were snapped to one value
    /// ([`crate::plan::fpm::snap_speeds`]) and the remap had to pay off for
    /// every speed within the noise ([`RemapPolicy::decide_noisy`]).
    NoisySnapped,
    /// The ranks' speed functions of their measured (work, time) points
    /// (issue 19, \[LR07\], \[CLR11\]): some rank's speed depends on the
    /// size of its work beyond the noise, so the plans were made for the
    /// functional shares ([`crate::plan::fpm::functional_shares`]) and the
    /// remap was decided on the times the functions predict
    /// ([`PlanningModel`]).
    Functional,
}

/// The environment variable that chooses the runtime's speed model:
/// `auto` (the default: the functional model when some rank's speed
/// depends on its work size beyond the noise, else constant speeds) or
/// `constant` (constant speeds always). Read by [`Balancer::new`]; any
/// other value is an error on every rank.
pub const ENV_SPEED_MODEL: &str = "NUCE_SPEED_MODEL";

/// Relative distance in work size within which a phase re-measures a point
/// of the rank's speed function ([`SpeedFunction::learn`]): a phase on the
/// same block (or one within 0.1 %, less than a row of a large array) that
/// runs at another speed is a change of speed; a phase on another size
/// teaches the function its shape.
pub const FUNCTION_REACH: f64 = 0.001;

/// Whether [`ENV_SPEED_MODEL`] allows the functional model (`auto`, unset or
/// empty: yes; `constant`: no); an error for any other value.
pub fn functional_from_env() -> Result<bool> {
    match std::env::var(ENV_SPEED_MODEL)
        .ok()
        .as_deref()
        .map(str::trim)
    {
        None | Some("") | Some("auto") => Ok(true),
        Some("constant") => Ok(false),
        Some(v) => Err(Error::InvalidInput(format!(
            "{ENV_SPEED_MODEL}={v:?}: expected auto or constant"
        ))),
    }
}

/// Outcome of [`Balancer::maybe_remap`]: the decision, its numbers, and what moved.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RemapReport {
    /// The decision taken at the root (identical on every rank). Its
    /// `speeds` are those the plans were made for (snapped within the noise,
    /// or the functional shares when [`SpeedModel::Functional`] decided).
    pub decision: RemapDecision,
    /// What the remap moved, when it happened.
    pub moved: Option<MoveStats>,
    /// The model that decided.
    pub model: SpeedModel,
    /// Every rank's speed estimate with its noise, as merged at the root
    /// before snapping.
    pub estimates: Vec<SpeedEstimate>,
}

impl std::ops::Deref for RemapReport {
    type Target = RemapDecision;
    fn deref(&self) -> &RemapDecision {
        &self.decision
    }
}

/// The network as measured by [`Balancer::measure_network`] (identical on every rank).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Network {
    /// Every non-root rank's link to the root, in rank order.
    pub links: Vec<LinkRecord>,
    /// Slowest link's bandwidth (bytes/s): the bottleneck of a remap, whose
    /// time is that of its slowest rank.
    pub bandwidth: f64,
    /// Largest link latency (s).
    pub latency_s: f64,
}

impl Network {
    /// Summarises links (slowest bandwidth, largest latency). With no link
    /// (one rank) the network is "infinitely" fast: bandwidth `f64::MAX`, latency 0.
    pub fn from_links(links: Vec<LinkRecord>) -> Result<Network> {
        let mut bandwidth = f64::MAX;
        let mut latency_s = 0.0f64;
        for l in &links {
            if !(l.bandwidth_bytes_per_s.is_finite()
                && l.bandwidth_bytes_per_s > 0.0
                && l.latency_s.is_finite()
                && l.latency_s >= 0.0)
            {
                return Err(Error::InvalidInput(format!("bad link record {l:?}")));
            }
            bandwidth = bandwidth.min(l.bandwidth_bytes_per_s);
            latency_s = latency_s.max(l.latency_s);
        }
        Ok(Network {
            links,
            bandwidth,
            latency_s,
        })
    }

    /// Master–worker communication time of every rank: sending `bytes`
    /// between the root (the master) and rank `r` costs `τ_r + bytes/β_r`
    /// over the rank's measured link (Hockney's model, \[KRW96\] §2); 0 for the
    /// root itself. `size` is the communicator size. The `t_com` input of a
    /// master–worker planner. O(p).
    pub fn t_com(&self, size: usize, root: usize, bytes: usize) -> Vec<f64> {
        let mut t = vec![0.0; size];
        for l in &self.links {
            if let Some(x) = usize::try_from(l.rank).ok().and_then(|r| t.get_mut(r)) {
                if l.rank as usize != root {
                    *x = l.transfer_time(bytes);
                }
            }
        }
        t
    }

    /// The latency in the unit of the latency-aware array decomposers
    /// ([`crate::plan::array2d::registry::decomposer_with_latency`]): the
    /// cost of one message expressed in cell transfers along a boundary,
    /// `latency_s × bandwidth / element_bytes` (the Acost of \[KRW96\] §5 counts
    /// cells; a message costs `τ + cells·e/β` seconds, i.e. `τβ/e + cells`
    /// cell-times). 0 when there is no link or `element_bytes` is 0.
    pub fn latency_cells(&self, element_bytes: usize) -> f64 {
        if self.links.is_empty() || element_bytes == 0 {
            return 0.0;
        }
        let x = self.latency_s * self.bandwidth / element_bytes as f64;
        if x.is_finite() {
            x
        } else {
            0.0
        }
    }
}

/// Collective load balancer for 2D arrays.
pub struct Balancer {
    comm: SimpleCommunicator,
    decomposer: Arc<dyn ArrayDecomposer>,
    policy: RemapPolicy,
    kernel: KernelConfig,
    timer: PhaseTimer,
    speeds: Option<Vec<f64>>,
    /// Every rank's estimate with its noise, before snapping (same on every rank).
    estimates: Option<Vec<SpeedEstimate>>,
    /// Whether `estimates` are in the units of the phases (else: the
    /// kernel's, or the application's of [`Balancer::set_speeds`]).
    phase_units: bool,
    /// This rank's noise of its last kernel measurement: the noise of its
    /// phase speed until the phases themselves say more.
    kernel_noise: f64,
    /// This rank's kernel speed and noise at its last probe (or
    /// [`Balancer::measure`]) while it has no work; `None` once it works.
    idle_kernel: Option<(f64, f64)>,
    records: Option<Vec<SpeedRecord>>,
    bandwidth: Option<f64>,
    network: Option<Network>,
    hosts: Option<Hosts>,
    two_level: Option<TwoLevel>,
    hierarchical: bool,
    /// The checkpoints of the balancer's collectives (and their timeout).
    cp: Checkpoints,
    /// Start of the current phase (the last balance point).
    phase: std::cell::Cell<Phase>,
    /// Whether the application recorded this phase itself.
    explicit: bool,
    /// This rank's speed function of its timed phases: (work per
    /// iteration, compute time per iteration) points.
    speed_fn: Option<SpeedFunction>,
    /// Whether the root may plan with the functional model ([`ENV_SPEED_MODEL`]).
    functional: bool,
    /// Every rank's memory limit in cells (on the root; `usize::MAX` for a
    /// rank without one), once some rank declared one.
    mem_caps: Option<Vec<usize>>,
    /// Every rank's speed function of its size sweep (on the root), from
    /// [`Balancer::measure_sizes`] until the next balance point: what the
    /// initial plans are made for.
    sweep_fns: Option<Vec<SpeedFunction>>,
    /// Whether this rank's speed function holds only the points of its size
    /// sweep, in the kernel's time per cell: its first timed phase rescales
    /// them to the application's ([`Aging::Rescale`]).
    unscaled_sweep: bool,
}

impl Balancer {
    /// Creates a balancer over a duplicate of `comm` (collective:
    /// `MPI_Comm_dup`), with rank 0 as the root ([`ROOT`]). Arrays are planned by the
    /// optimal column-based decomposition ([`ColumnDp`], \[BBLRR01\] §3.2.4)
    /// unless [`Balancer::set_decomposer`] says otherwise. The collectives'
    /// timeout comes from `NUCE_TIMEOUT_S` ([`super::watchdog`]); a malformed
    /// value is an error on every rank.
    pub fn new<C: Communicator>(comm: &C) -> Result<Self> {
        Balancer::new_as(comm, "Balancer::new")
    }

    /// [`Balancer::new`] where `call` names the caller's function in
    /// messages (e.g. a C or Fortran entry point). The blocking steps that
    /// cannot be polled (`MPI_Comm_dup`, the agreement on the timeout) are
    /// under a watchdog [`guard`](super::watchdog::guard) of the timeout of
    /// `NUCE_TIMEOUT_S`: a rank that never calls ends the job with a message
    /// instead of hanging the others.
    pub fn new_as<C: Communicator>(comm: &C, call: &str) -> Result<Self> {
        let decomposer = ColumnDp::default();
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
        let cp = Checkpoints::from_env(&comm)?;
        drop(dog);
        // The first checkpoint also tells the root every rank's host.
        cp.check(&comm, call)?;
        let functional = agree(&comm, 0, functional_from_env())?;
        Ok(Balancer {
            comm,
            decomposer: Arc::new(decomposer),
            policy: RemapPolicy::default(),
            kernel: KernelConfig::default(),
            timer: PhaseTimer::default(),
            speeds: None,
            estimates: None,
            phase_units: false,
            kernel_noise: 0.0,
            idle_kernel: None,
            records: None,
            bandwidth: None,
            network: None,
            hosts: None,
            two_level: None,
            hierarchical: false,
            cp,
            phase: std::cell::Cell::new(Phase::start()),
            explicit: false,
            speed_fn: None,
            functional,
            mem_caps: None,
            sweep_fns: None,
            unscaled_sweep: false,
        })
    }

    /// Sets the timeout of the balancer's collectives (local; all ranks
    /// should agree). `None`: wait forever, as MPI does.
    pub fn set_timeout(&mut self, timeout: Option<Duration>) {
        self.cp.set_timeout(timeout);
    }

    /// The timeout of the balancer's collectives.
    pub fn timeout(&self) -> Option<Duration> {
        self.cp.timeout()
    }

    /// Sets the array decomposer by its name in
    /// [`crate::plan::array2d::registry`] with the latency in cells of
    /// [`Network::latency_cells`] (0 without a measured network). Collective:
    /// the name is checked to be the same on every rank, and an unknown name
    /// is the same error on every rank.
    pub fn set_algorithm(&mut self, name: &str, latency_cells: f64) -> Result<()> {
        let _w = waiting();
        self.arrive(&format!("Balancer::set_algorithm({name})"))?;
        let d = registry::decomposer_with_latency(name, latency_cells);
        let d = agree(&self.comm, ROOT, d)?;
        self.set_decomposer(d);
        Ok(())
    }

    /// Name of the algorithm [`Balancer::plan`] uses (`"hier"` when hierarchical).
    pub fn algorithm(&self) -> &'static str {
        self.planner().name()
    }

    /// A balance point: the next phase's compute time is measured from now.
    fn mark(&mut self) {
        self.phase.set(Phase::start());
        self.explicit = false;
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
    pub fn entry(&self, op: &str, refused: Option<&Error>) -> Result<()> {
        let _w = waiting();
        self.cp.check_refusing(&self.comm, op, refused)
    }

    /// Checks that every rank makes the same call `op` of the application
    /// (collective): `op` names the call and its must-match arguments (e.g.
    /// `"solver: phase 3 of 5"`). A difference is the same
    /// [`Error::InvalidInput`] on every rank, naming each rank's call; a rank
    /// that does not arrive within the timeout ends the job with a message
    /// naming it and its host ([`super::watchdog::checkpoint`]). For the
    /// application's own collectives between nuce's.
    pub fn check_call(&self, op: &str) -> Result<()> {
        let _w = waiting();
        self.arrive(&format!("application: {op}"))
    }

    /// Measures every rank's link to the root with the ping-pong probe
    /// ([`super::netprobe`]) and keeps the result on every rank. From then
    /// on, remap decisions use the slowest link's bandwidth (until a large
    /// remap has been timed, see [`Balancer::bandwidth`]) and the largest
    /// latency as the per-message cost, and [`Network::latency_cells`]
    /// gives the latency for the latency-aware decomposers. Cost: see
    /// [`probe_links`], serialised at the root.
    pub fn measure_network(&mut self, cfg: &ProbeConfig) -> Result<&Network> {
        let _w = waiting();
        let _span = info_span!("measure_network").entered();
        self.arrive(&format!("Balancer::measure_network({cfg:?})"))?;
        let links = probe_links(&self.comm, ROOT, cfg)?;
        let net = root_compute(&self.comm, ROOT, || {
            Network::from_links(
                links.ok_or_else(|| Error::InvalidInput("no link records at the root".into()))?,
            )
        })?;
        info!(
            bandwidth = net.bandwidth,
            latency_s = net.latency_s,
            "measured network"
        );
        Ok(self.network.insert(net))
    }

    /// The measured network, once [`Balancer::measure_network`] ran.
    pub fn network(&self) -> Option<&Network> {
        self.network.as_ref()
    }

    /// Detects the hosts of the ranks (shared-memory split plus host names,
    /// [`super::hierarchy::detect_hosts`]) and keeps them.
    pub fn detect_hosts(&mut self) -> Result<&Hosts> {
        let _w = waiting();
        self.arrive("Balancer::detect_hosts")?;
        let h = detect_hosts(&self.comm)?;
        info!(hosts = h.len(), "detected hosts");
        self.two_level = Some(TwoLevel::new(&self.comm, &h)?);
        Ok(self.hosts.insert(h))
    }

    /// Sets the host of every rank explicitly (collective: the root's table
    /// is validated and broadcast), e.g. to emulate hosts on one machine.
    pub fn set_hosts(&mut self, host_of: &[usize]) -> Result<&Hosts> {
        let _w = waiting();
        self.arrive("Balancer::set_hosts")?;
        let p = self.comm.size() as usize;
        let h = root_compute(&self.comm, ROOT, || {
            if host_of.len() != p {
                return Err(Error::ShapeMismatch(format!(
                    "{} host ids for {p} ranks",
                    host_of.len()
                )));
            }
            // Leader of each rank: the first rank with the same host id.
            let leaders: Vec<i32> = host_of
                .iter()
                .map(|h| host_of.iter().position(|x| x == h).unwrap_or(0) as i32)
                .collect();
            let names: Vec<String> = host_of.iter().map(|h| format!("host{h}")).collect();
            Hosts::from_leaders(&leaders, &names)
        })?;
        self.two_level = Some(TwoLevel::new(&self.comm, &h)?);
        Ok(self.hosts.insert(h))
    }

    /// The hosts, once detected or set.
    pub fn hosts(&self) -> Option<&Hosts> {
        self.hosts.as_ref()
    }

    /// Plans in two levels (local; all ranks must do the same): across hosts
    /// by their total speed, then within each host, both with the current
    /// decomposer ([`Hierarchical`], \[BBLRR01\] §3.2.2, Figure 14). Needs hosts
    /// ([`Balancer::detect_hosts`] or [`Balancer::set_hosts`]); without them
    /// the plan is flat.
    pub fn set_hierarchical(&mut self, on: bool) {
        self.hierarchical = on;
    }

    /// The decomposer actually used: hierarchical over the hosts, or flat.
    fn planner(&self) -> Arc<dyn ArrayDecomposer> {
        match (&self.hosts, self.hierarchical) {
            (Some(h), true) => Arc::new(Hierarchical {
                hosts: h.host_of.clone(),
                across: self.decomposer.clone(),
                within: self.decomposer.clone(),
            }),
            _ => self.decomposer.clone(),
        }
    }

    /// The remap policy and bandwidth for the next decision ([`network_policy`]).
    fn network_policy(&self) -> (RemapPolicy, Option<f64>) {
        network_policy(&self.policy, self.bandwidth, self.network.as_ref())
    }

    /// Sets the remap policy of the next decisions (local; all ranks
    /// should agree).
    pub fn set_policy(&mut self, policy: RemapPolicy) {
        self.policy = policy;
    }

    /// The remap policy of the next decisions.
    pub fn policy(&self) -> RemapPolicy {
        self.policy
    }

    /// Sets the built-in kernel (local): the kernel of the next
    /// [`Balancer::measure`] and of the probes of idle ranks.
    pub fn set_kernel(&mut self, kernel: KernelConfig) {
        self.kernel = kernel;
    }

    /// Plans arrays with `decomposer` from now on (local; all ranks must do
    /// the same), e.g. a [`crate::plan::array2d::Best`] or a boxed one of
    /// [`crate::plan::array2d::registry`]. By name and checked on every
    /// rank: [`Balancer::set_algorithm`].
    pub fn set_decomposer(&mut self, decomposer: impl ArrayDecomposer + 'static) {
        self.decomposer = Arc::new(decomposer);
    }

    /// The balancer's communicator (a duplicate of the one given to [`Balancer::new`]).
    pub fn comm(&self) -> &SimpleCommunicator {
        &self.comm
    }

    /// The current speed estimate of every rank (work units per second), once known.
    pub fn speeds(&self) -> Option<&[f64]> {
        self.speeds.as_deref()
    }

    /// Every rank's speed record, on the root after [`Balancer::measure`].
    pub fn records(&self) -> Option<&[SpeedRecord]> {
        self.records.as_deref()
    }

    /// Last measured bandwidth of data movement (bytes/s per rank), if any.
    pub fn bandwidth(&self) -> Option<f64> {
        self.bandwidth
    }

    /// Learns the bandwidth from a data movement done outside the balancer
    /// (e.g. the initial scatter), when it is large enough to be meaningful (local).
    pub fn observe(&mut self, stats: &MoveStats) {
        if stats.max_rank_bytes >= MIN_BANDWIDTH_SAMPLE && stats.seconds > 0.0 {
            self.bandwidth = Some(stats.max_rank_bytes as f64 / stats.seconds);
        }
    }

    /// Measures every rank with the built-in kernel, gathers the records
    /// (with hwloc topology and host name) at the root — in two levels,
    /// through the host leaders, once the hosts are known
    /// ([`TwoLevel`]) — and broadcasts the speeds. Returns the speeds, one
    /// per rank.
    ///
    /// Each rank's speed is the median of the kernel's repeated samples,
    /// with their noise ([`crate::speed::KernelMeasurement::noise`]); the
    /// root snaps speeds whose noise intervals overlap to their common mean
    /// ([`snap_speeds`]), so ranks the measurement cannot tell apart get
    /// the same speed, hence the same share. [`Balancer::speed_estimates`]
    /// keeps the estimates before snapping.
    pub fn measure(&mut self) -> Result<Vec<f64>> {
        let _w = waiting();
        let _span = info_span!("measure").entered();
        self.arrive("Balancer::measure")?;
        let m = measure_kernel(&self.kernel);
        self.kernel_noise = m.noise();
        self.idle_kernel = Some((m.median, m.noise()));
        // A rank still in its kernel after the timeout is named (with its host).
        self.arrive("Balancer::measure (gathering the speeds)")?;
        let record = SpeedRecord {
            rank: self.comm.rank(),
            speed: m.median,
            source: SpeedSource::Kernel,
            kernel: Some(m),
            topology: topology(),
        };
        // Through the host leaders once the hosts are known (root 0 only).
        let records = match (&self.two_level, ROOT) {
            (Some(t), 0) => t.gather(&self.comm, &record)?,
            _ => gather_values(&self.comm, ROOT, &record)?,
        };
        let (speeds, estimates) = root_compute(&self.comm, ROOT, || {
            let recs = records
                .as_ref()
                .ok_or_else(|| Error::InvalidInput("no records at root".into()))?;
            let s: Vec<f64> = recs.iter().map(|r| r.speed).collect();
            crate::plan::check_speeds(&s)?;
            let est: Vec<SpeedEstimate> = recs
                .iter()
                .map(|r| match &r.kernel {
                    Some(k) => SpeedEstimate {
                        mean: r.speed,
                        noise: k.noise(),
                    },
                    None => SpeedEstimate {
                        mean: r.speed,
                        noise: 0.0,
                    },
                })
                .collect();
            Ok((snap_speeds(&est)?, est))
        })?;
        info!(?speeds, ?estimates, "measured speeds");
        self.records = records;
        self.set_estimates(estimates, false);
        self.speeds = Some(speeds.clone());
        Ok(speeds)
    }

    /// Measures every rank's speed on blocks of each of `sizes` cells — a
    /// size sweep (issue 19) — so that the first plan can already use the
    /// functional model. Collective; every rank passes the same sizes.
    ///
    /// Each rank runs the built-in 5-point stencil ([`measure_sweep`], with
    /// this balancer's [`KernelConfig`]: warm-up, repeats, sample time,
    /// work multiplier) on a square-ish block of each size, and its speed
    /// function ([`Balancer::speed_function`]) becomes the measured points
    /// `(cells, seconds per sweep)`, with the largest noise of the
    /// measurements: it replaces any earlier function. The root gathers the
    /// functions and sets every rank's speed to its function's mean speed,
    /// snapped within the noise ([`snap_speeds`]), as [`Balancer::measure`]
    /// does. Until the next balance point, [`Balancer::plan`] and
    /// [`Balancer::plan3`] plan with the functions: when some rank's speed
    /// depends on the size beyond the noise ([`PlanningModel`]), the shares
    /// equalise the times the functions predict for the array's cells (and
    /// [`ENV_SPEED_MODEL`]`=constant` keeps constant speeds). The sweep's
    /// points are in the kernel's time per cell; the rank's first timed
    /// phase rescales them to the application's ([`Aging::Rescale`]: the
    /// sweep gives the shape, the phases the scale).
    ///
    /// Returns this rank's points. Errors, the same on every rank: sizes out
    /// of bounds on some rank (1 to [`crate::plan::fpm::MAX_SWEEP_SIZES`]
    /// sizes of [`crate::plan::fpm::MIN_SWEEP_CELLS`] to
    /// [`crate::plan::fpm::MAX_SWEEP_CELLS`] cells, checked before anything
    /// is allocated; the lowest refusing rank's error), or sizes that differ
    /// between ranks. Time: about `sizes × (warm-up + repeats + 3) × min
    /// sample time` (8 sizes, the default kernel settings: about 1 s);
    /// memory: two arrays of the largest block.
    pub fn measure_sizes(&mut self, sizes: &[usize]) -> Result<Vec<SweepPoint>> {
        let _w = waiting();
        let _span = info_span!("measure_sizes", sizes = sizes.len()).entered();
        let refused = crate::plan::fpm::check_sweep_sizes(sizes).err();
        let list = if refused.is_none() {
            format!("{sizes:?}")
        } else {
            format!("{} sizes", sizes.len())
        };
        self.cp.check_refusing(
            &self.comm,
            &format!("Balancer::measure_sizes({list})"),
            refused.as_ref(),
        )?;
        let local = measure_sweep(&self.kernel.sanitized(), sizes).and_then(|points| {
            let noise = points
                .iter()
                .map(|p| p.measurement.noise())
                .fold(0.0, f64::max)
                .min(MAX_NOISE);
            let xs: Vec<(f64, f64)> = points
                .iter()
                .map(|p| (p.cells as f64, p.measurement.median))
                .collect();
            Ok((crate::plan::fpm::sweep_points(&xs, noise)?, points, noise))
        });
        let (f, points, noise) = agree(&self.comm, ROOT, local)?;
        self.arrive("Balancer::measure_sizes (gathering the speed functions)")?;
        let gathered = gather_values(&self.comm, ROOT, &f)?;
        let (speeds, estimates) = root_compute(&self.comm, ROOT, || {
            let fns = gathered
                .as_ref()
                .ok_or_else(|| Error::InvalidInput("no speed functions at root".into()))?;
            let est: Vec<SpeedEstimate> = fns
                .iter()
                .map(|f| SpeedEstimate {
                    mean: f.mean_speed(),
                    noise: f.noise(),
                })
                .collect();
            Ok((snap_speeds(&est)?, est))
        })?;
        info!(?speeds, ?estimates, "size sweep");
        self.kernel_noise = noise;
        self.speed_fn = Some(f);
        self.unscaled_sweep = true;
        self.sweep_fns = gathered;
        self.set_estimates(estimates, false);
        self.speeds = Some(speeds);
        Ok(points)
    }

    /// Every rank's latest speed estimate with its relative noise, before
    /// snapping (from [`Balancer::measure`], [`Balancer::set_speeds`] — with
    /// no noise — or the last balance point's phases), once known.
    pub fn speed_estimates(&self) -> Option<&[SpeedEstimate]> {
        self.estimates.as_deref()
    }

    fn set_estimates(&mut self, estimates: Vec<SpeedEstimate>, phase_units: bool) {
        self.estimates = Some(estimates);
        self.phase_units = phase_units;
    }

    /// What this rank tells the root at a balance point. A rank with work
    /// reports its phase speed ([`Balancer::phase_estimate`]). A rank with
    /// no work (an empty block) cannot time its phases, and waits for the
    /// others anyway: it runs the built-in kernel of [`Balancer::measure`]
    /// (about 100 ms by default) and reports how much its kernel speed
    /// changed since its previous probe (or [`Balancer::measure`]), with the
    /// noise of both, so that its estimate follows a real change and it gets
    /// work back once it is fast again. (The changes multiply up to the
    /// ratio of the last probe to the first: the estimate is as noisy as
    /// one probe, whatever their number.)
    fn local_report(&mut self, work: f64) -> RankReport {
        if work > 0.0 || self.explicit {
            self.idle_kernel = None;
            return self
                .phase_estimate()
                .map_or(RankReport::Unknown, RankReport::Phase);
        }
        let m = measure_kernel(&self.kernel);
        let (change, noise) = match self.idle_kernel.replace((m.median, m.noise())) {
            Some((then, then_noise)) => (m.median / then, m.noise() + then_noise),
            None => (1.0, m.noise()),
        };
        RankReport::Idle(SpeedEstimate {
            mean: change,
            noise: noise.min(MAX_NOISE),
        })
    }

    /// This rank's phase speed with its noise, for the root: the phase
    /// timer's noise of its estimate ([`PhaseTimer::estimate_noise`]: the
    /// spike of a real change is not noise), and while fewer than three
    /// phases were timed (one departure says little) at least the noise of
    /// the last kernel measurement. `None` before the rank's first timed phase.
    fn phase_estimate(&self) -> Option<SpeedEstimate> {
        let mean = self.timer.speed()?;
        let mut noise = self.timer.estimate_noise();
        if self.timer.samples() < 3 {
            noise = noise.max(self.kernel_noise);
        }
        Some(SpeedEstimate {
            mean,
            noise: if noise.is_finite() {
                noise.clamp(0.0, MAX_NOISE)
            } else {
                MAX_NOISE
            },
        })
    }

    /// Sets the speeds explicitly (collective: the root's values are broadcast
    /// and validated). For applications that measure by other means.
    pub fn set_speeds(&mut self, speeds: &[f64]) -> Result<()> {
        let _w = waiting();
        self.arrive("Balancer::set_speeds")?;
        let s = root_compute(&self.comm, ROOT, || {
            crate::plan::check_speeds(speeds)?;
            if speeds.len() != self.comm.size() as usize {
                return Err(Error::ShapeMismatch(format!(
                    "{} speeds for {} ranks",
                    speeds.len(),
                    self.comm.size()
                )));
            }
            Ok(speeds.to_vec())
        })?;
        let exact = s
            .iter()
            .map(|&mean| SpeedEstimate { mean, noise: 0.0 })
            .collect();
        self.set_estimates(exact, false);
        self.speeds = Some(s);
        self.sweep_fns = None;
        Ok(())
    }

    /// Decomposes a `rows × cols` array for the current speeds (uniform when
    /// none were measured yet): the root plans, every rank receives the plan.
    pub fn plan(&self, rows: usize, cols: usize) -> Result<ArrayPlan> {
        let _w = waiting();
        let _span = info_span!("plan", rows, cols).entered();
        let p = self.comm.size() as usize;
        let planner = self.planner();
        self.arrive(&format!(
            "Balancer::plan({rows}x{cols}, algorithm {}, {})",
            planner.name(),
            if self.speeds.is_some() {
                "measured speeds"
            } else {
                "uniform speeds"
            }
        ))?;
        let plan = root_compute(&self.comm, ROOT, || {
            if rows.saturating_mul(cols) < p {
                return Err(Error::TooManyParts {
                    parts: p,
                    units: rows * cols,
                });
            }
            self.initial_model(rows * cols)?
                .plan_within_caps(|s| planner.decompose(rows, cols, s), ArrayPlan::areas)
        });
        self.phase.set(Phase::start());
        plan
    }

    /// Plans a `rows × cols` array for the current speeds ([`Balancer::plan`])
    /// and creates it, default-initialised, with a ghost border of width
    /// `ghost`, on the balancer's communicator. A balance point.
    pub fn new_array<T: Element>(
        &mut self,
        rows: usize,
        cols: usize,
        ghost: usize,
    ) -> Result<DistArray2<T>> {
        let plan = self.plan(rows, cols)?;
        let mut a = DistArray2::new(&self.comm, plan, ghost)?;
        a.checks_mut().adopt(&self.cp);
        self.mark();
        Ok(a)
    }

    /// Plans the root's `global` array for the current speeds
    /// ([`Balancer::plan`]) and scatters it, with a ghost border of width
    /// `ghost`; `global` is read on the root only. A balance point. The other
    /// ranks do not state the shape they expect: [`Balancer::scatter_array_of`]
    /// checks it.
    pub fn scatter_array<T: Element>(
        &mut self,
        global: Option<&ndarray::Array2<T>>,
        ghost: usize,
    ) -> Result<DistArray2<T>> {
        self.scatter_checked(None, global, ghost)
    }

    /// [`Balancer::scatter_array`] where every rank states the global
    /// `shape` it expects: a rank that expects another shape, or a root
    /// whose array has another shape, is the same error on every rank
    /// (naming each rank's call) before any data moves.
    pub fn scatter_array_of<T: Element>(
        &mut self,
        shape: (usize, usize),
        global: Option<&ndarray::Array2<T>>,
        ghost: usize,
    ) -> Result<DistArray2<T>> {
        self.scatter_checked(Some(shape), global, ghost)
    }

    fn scatter_checked<T: Element>(
        &mut self,
        expect: Option<(usize, usize)>,
        global: Option<&ndarray::Array2<T>>,
        ghost: usize,
    ) -> Result<DistArray2<T>> {
        let _w = waiting();
        let shape_arg = expect.map_or(String::new(), |(r, c)| format!("{r}x{c}, "));
        self.arrive(&format!(
            "Balancer::scatter_array({shape_arg}ghost {ghost}, {}-byte elements)",
            std::mem::size_of::<T>()
        ))?;
        let shape = root_compute(&self.comm, ROOT, || {
            let dim = global.map(|g| g.dim()).ok_or_else(|| {
                Error::InvalidInput("scatter_array: the root has no array".into())
            })?;
            match expect {
                Some(e) if e != dim => Err(Error::ShapeMismatch(format!(
                    "scatter_array: the root's array is {}x{}, the ranks expect {}x{}",
                    dim.0, dim.1, e.0, e.1
                ))),
                _ => Ok(dim),
            }
        })?;
        let plan = self.plan(shape.0, shape.1)?;
        // The first data movement pays MPI's connection set-up: its time would
        // understate the bandwidth, so it does not teach the balancer (remaps do).
        let (mut a, _) = DistArray2::scatter(&self.comm, ROOT, plan, ghost, global)?;
        a.checks_mut().adopt(&self.cp);
        self.mark();
        Ok(a)
    }

    /// Decomposes an `nx × ny × nz` grid for the current speeds (uniform
    /// when none were measured yet) with [`Best3`] for a 7-point stencil of
    /// width `ghost`: the root plans, every rank receives the plan.
    pub fn plan3(&self, shape: Shape3, ghost: usize) -> Result<GridPlan3> {
        let _w = waiting();
        let (nx, ny, nz) = shape;
        self.arrive(&format!("Balancer::plan3({nx}x{ny}x{nz}, ghost {ghost})"))?;
        let p = self.comm.size() as usize;
        let plan = root_compute(&self.comm, ROOT, || {
            if nx.saturating_mul(ny).saturating_mul(nz) < p {
                return Err(Error::TooManyParts {
                    parts: p,
                    units: nx * ny * nz,
                });
            }
            self.initial_model(nx * ny * nz)?
                .plan_within_caps(|s| best3(ghost).decompose(shape, s), GridPlan3::volumes)
        });
        self.phase.set(Phase::start());
        plan
    }

    /// Plans a 3D grid of `shape` for the current speeds
    /// ([`Balancer::plan3`]) and scatters the root's `global` values
    /// (`nx·ny·nz·ncomp` in C order, components fastest; read on the root
    /// only) with `ghost` layers, on the balancer's communicator. Every rank
    /// states the shape and components; a difference is the same error on
    /// every rank. A balance point.
    pub fn scatter_array3<T: Element>(
        &mut self,
        shape: Shape3,
        ncomp: usize,
        global: Option<&[T]>,
        ghost: usize,
    ) -> Result<DistArray3<T>> {
        let _w = waiting();
        let (nx, ny, nz) = shape;
        self.arrive(&format!(
            "Balancer::scatter_array3({nx}x{ny}x{nz}, {ncomp} components, ghost {ghost}, {}-byte elements)",
            std::mem::size_of::<T>()
        ))?;
        let plan = self.plan3(shape, ghost)?;
        let (mut a, _) = DistArray3::scatter(&self.comm, ROOT, plan, ghost, ncomp, global)?;
        a.checks_mut().adopt(&self.cp);
        self.mark();
        Ok(a)
    }

    /// Plans a grid of `shape` for the current speeds ([`Balancer::plan3`])
    /// and makes its layout on the balancer's communicator for `stencil`
    /// (ghost width 0 to 4): a [`Grid`](super::layout::Grid) whose data
    /// lives in the application's buffers. Every rank states the shape and
    /// stencil; a difference is the same error on every rank. A balance point.
    pub fn new_grid(&mut self, shape: Shape3, stencil: Stencil) -> Result<BufferGrid> {
        let _w = waiting();
        let plan = self.plan3(shape, stencil.ghost)?;
        let mut g = BufferGrid::new(&self.comm, plan, stencil)?;
        g.checks_mut().adopt(&self.cp);
        self.mark();
        Ok(g)
    }

    /// Records this rank's phase explicitly (local): `work_units` done in
    /// `elapsed` (compute time only, excluding waits). Optional: without it,
    /// [`Balancer::maybe_remap`] measures the phase itself; with it, this
    /// record replaces the automatic one for the current phase. Noise is
    /// smoothed and real changes are followed at once ([`PhaseTimer`]). A
    /// recorded phase sets the rank's constant speed only: the functional
    /// model ([`Balancer::speed_function`]) learns from the phases nuce
    /// times itself, whose work per iteration is the data's. A rank with no
    /// work this phase records nothing.
    pub fn record_phase(&mut self, work_units: f64, elapsed: Duration) -> Result<()> {
        self.explicit = true;
        if work_units == 0.0 {
            return Ok(());
        }
        self.timer.record(work_units, elapsed).map(|_| ())
    }

    /// The compute time of the current phase so far on this rank: wall time
    /// since the last balance point minus the time inside nuce's
    /// communication ([`super::clock`]).
    pub fn phase_compute_time(&self) -> Duration {
        self.phase.get().compute()
    }

    /// Records the phase automatically (unless the application did):
    /// `work_per_iteration × iterations` units in the compute time since
    /// the last balance point.
    fn record_automatic(&mut self, work_per_iteration: f64, iterations: usize) -> Result<()> {
        if self.explicit || work_per_iteration == 0.0 || iterations == 0 {
            return Ok(());
        }
        let compute = self.phase.get().compute();
        if compute.is_zero() {
            return Ok(());
        }
        let changes = self.timer.changes();
        self.timer
            .record(work_per_iteration * iterations as f64, compute)?;
        let changed = self.timer.changes() > changes;
        self.learn(
            work_per_iteration,
            compute.as_secs_f64() / iterations as f64,
            changed,
        )
    }

    /// Adds a timed phase to this rank's speed function: `x` work units per
    /// iteration in `t` seconds per iteration. Its noise is the larger of the
    /// rank's kernel noise and its phase timer's
    /// ([`PhaseTimer::estimate_noise`]): the function counts as
    /// size-dependent only beyond both (on a loaded machine, phases on two
    /// sizes differ by the load alone). A phase on a block of about the same
    /// size that disagrees beyond that noise (at least
    /// [`crate::plan::fpm::MIN_FLAT_NOISE`]) is a change of speed, and the
    /// old points are dropped, when the phase timer saw a change too
    /// (`changed`: a departure beyond three times its noise); otherwise it
    /// is averaged in as noise ([`SpeedFunction::learn`],
    /// [`FUNCTION_REACH`]).
    fn learn(&mut self, x: f64, t: f64, changed: bool) -> Result<()> {
        let noise = self.kernel_noise.max(self.timer.estimate_noise());
        let noise = if noise.is_finite() {
            noise.clamp(0.0, MAX_NOISE)
        } else {
            MAX_NOISE
        };
        match self.speed_fn.take() {
            None => self.speed_fn = Some(SpeedFunction::new(&[(x, t)], noise)?),
            Some(f) => {
                let mut f = f.with_noise(noise)?;
                let seen = if std::mem::take(&mut self.unscaled_sweep) {
                    // The sweep's points, in the kernel's time per cell,
                    // scaled to this phase: the sweep's shape, the phase's scale.
                    f.observe(x, t, Aging::Rescale)
                } else {
                    let aging = if changed { Aging::Reset } else { Aging::Keep };
                    f.learn(x, t, FUNCTION_REACH, aging)
                };
                self.speed_fn = Some(f);
                seen?;
            }
        }
        Ok(())
    }

    /// Allows (`true`, the default unless [`ENV_SPEED_MODEL`] says
    /// `constant`) or forbids the functional speed model (local: the root's
    /// setting decides at every balance point).
    pub fn set_functional_model(&mut self, allowed: bool) {
        self.functional = allowed;
    }

    /// This rank's speed function of its timed phases (work units per
    /// iteration → seconds per iteration), once a phase was timed by
    /// [`Balancer::maybe_remap`] (local).
    pub fn speed_function(&self) -> Option<&SpeedFunction> {
        self.speed_fn.as_ref()
    }

    /// Declares the most cells this rank can hold (`None`: no limit).
    /// Collective: every rank passes its own limit, the root keeps them.
    /// From then on the plans of 2D arrays and 3D grids
    /// ([`Balancer::plan`], [`Balancer::plan3`] and the remaps of
    /// [`Balancer::maybe_remap`]) never give a rank more cells than its
    /// limit: the shares are capped ([`crate::plan::fpm::functional_shares`])
    /// and a layout whose rounding still exceeds a limit is planned again
    /// tighter ([`PlanningModel::plan_within_caps`]); when no layout fits
    /// (the limits hold fewer cells than the array) every rank gets the same
    /// error. Graphs and arrays with a cost field do not support limits
    /// (an error at their balance point).
    pub fn set_memory_limit(&mut self, cells: Option<usize>) -> Result<()> {
        let _w = waiting();
        self.arrive("Balancer::set_memory_limit")?;
        let all = gather_values(&self.comm, ROOT, &cells)?;
        let caps = root_compute(&self.comm, ROOT, || {
            let all = all.ok_or_else(|| Error::InvalidInput("no limits at root".into()))?;
            Ok(all
                .iter()
                .any(Option::is_some)
                .then(|| all.iter().map(|c| c.unwrap_or(usize::MAX)).collect()))
        })?;
        self.mem_caps = caps;
        Ok(())
    }

    /// Every rank's memory limit in cells (`usize::MAX`: none), once some
    /// rank declared one ([`Balancer::set_memory_limit`]; the same on every rank).
    pub fn memory_limits(&self) -> Option<&[usize]> {
        self.mem_caps.as_deref()
    }

    /// The model of the current speeds (uniform when none were measured)
    /// for `cells` cells with the memory limits — with the speed functions
    /// of a size sweep, if any ([`Balancer::measure_sizes`]): what the
    /// initial plans are made for.
    fn initial_model(&self, cells: usize) -> Result<PlanningModel> {
        let p = self.comm.size() as usize;
        let exact: Vec<SpeedEstimate> = match &self.speeds {
            Some(s) => s
                .iter()
                .map(|&mean| SpeedEstimate { mean, noise: 0.0 })
                .collect(),
            None => vec![
                SpeedEstimate {
                    mean: 1.0,
                    noise: 0.0
                };
                p
            ],
        };
        let sweep: Option<Vec<Option<SpeedFunction>>> = self
            .sweep_fns
            .as_ref()
            .map(|f| f.iter().cloned().map(Some).collect());
        PlanningModel::new(
            &exact,
            sweep.as_deref(),
            cells,
            self.mem_caps.as_deref(),
            self.functional && sweep.is_some(),
        )
    }

    /// A balance point, between phases of `iterations` iterations each, for
    /// a [`DistArray2`] or a [`DistGraph`]: measures this rank's phase (its
    /// work per iteration — cells, or vertex weights — × `iterations` in its
    /// compute time since the last balance point, unless
    /// [`Balancer::record_phase`] was called), gathers the speeds, lets the
    /// root decide whether a new layout pays off over the next `iterations`
    /// iterations (see [`RemapPolicy`]), and if so remaps `data`, moving only
    /// what changes owner. Arrays are re-planned by the balancer's
    /// decomposer — or, for an array with a cost field
    /// ([`DistArray3::set_cost`], [`DistArray2::set_cost`],
    /// [`Grid::set_cost`](BufferGrid::set_cost)), timed by its
    /// summed cost, planned by the weighted bisection and decided on
    /// `Σ cost / speed` ([`super::cost`]); graphs follow the
    /// [`GraphStrategy`] they were built with: made by
    /// [`Balancer::scatter_graph`], re-cut along the root's index ordering
    /// (\[KOR95\] §3, few vertices move); made by [`DistGraph::from_local`],
    /// re-cut by prefix sums along each rank's Hilbert order
    /// ([`DistGraph::prefix_cut`]) with no O(n) array anywhere. The decision
    /// and what moved are identical on every rank. `data` must live on this
    /// balancer's ranks in the same order.
    pub fn maybe_remap<D: Rebalance>(
        &mut self,
        data: &mut D,
        iterations: usize,
    ) -> Result<RemapReport> {
        self.maybe_remap_ahead(data, iterations, iterations)
    }

    /// [`Balancer::maybe_remap`] with a decision horizon other than one
    /// phase: the phase just done had `iterations` iterations, and the remap
    /// must pay off within the next `ahead` iterations (e.g. all those left
    /// in the run).
    pub fn maybe_remap_ahead<D: Rebalance>(
        &mut self,
        data: &mut D,
        iterations: usize,
        ahead: usize,
    ) -> Result<RemapReport> {
        let _w = waiting();
        let _span = info_span!("maybe_remap").entered();
        // With a cost field the work is the block's Σ cost (checked here,
        // agreed after the arrival check); without one, its cells.
        let cost_sum = data.cost_grid().map(|g| g.local_sum());
        let work = match &cost_sum {
            Some(sum) => *sum.as_ref().unwrap_or(&0.0),
            None => data.local_work(),
        };
        self.record_automatic(work, iterations)?;
        self.arrive(&format!(
            "Balancer::maybe_remap(iterations {iterations}, ahead {ahead}, {} elements after {} ghost exchanges, {}{})",
            data.global_len(),
            data.exchanges(),
            policy_args(&self.policy),
            if cost_sum.is_some() { ", with a cost field" } else { "" }
        ))?;
        self.same_ranks(data.comm(), "maybe_remap")?;
        let costs = match (cost_sum, data.cost_grid()) {
            (Some(sum), Some(grid)) => {
                agree(&self.comm, ROOT, sum)?;
                grid.gather(&self.comm, ROOT)?
            }
            _ => None,
        };
        let report = (self.local_report(work), self.speed_fn.clone(), work);
        let gathered = gather_values(&self.comm, ROOT, &report)?;
        let (previous, phase_units) = (self.estimates.clone(), self.phase_units);
        let ctx = RootContext {
            planner: self.planner(),
            policy: self.network_policy(),
            ahead,
            costs,
        };
        // Memory limits count cells: the work of arrays and grids without
        // a cost field.
        let cells_are_work = data.work_is_cells();
        // The functional model needs sizes that mean the same phase after phase:
        // not a cost field, whose sum moves with the costs (constant model).
        let functional = self.functional && data.cost_grid().is_none();
        let caps = self.mem_caps.as_deref();
        let model_of = |gathered: Option<Vec<(RankReport, Option<SpeedFunction>, f64)>>| {
            let g =
                gathered.ok_or_else(|| Error::InvalidInput("no phase speeds at root".into()))?;
            let phase: Vec<RankReport> = g.iter().map(|r| r.0).collect();
            let est = merge_estimates(&phase, previous.as_deref(), phase_units)?;
            let fns: Vec<Option<SpeedFunction>> = g.iter().map(|r| r.1.clone()).collect();
            let total = g.iter().map(|r| r.2).sum::<f64>().round().max(1.0) as usize;
            if caps.is_some() && !cells_are_work {
                return Err(Error::InvalidInput(
                    "maybe_remap: memory limits (Balancer::set_memory_limit) count cells; this data's work is not its cells (a graph, or an array with a cost field)".into(),
                ));
            }
            PlanningModel::new(&est, Some(&fns), total, caps, functional)
        };
        let (decision, plan, model) = if data.plans_at_root() {
            let proposal = data.propose(&ctx);
            root_compute(&self.comm, ROOT, || {
                let model = model_of(gathered)?;
                let (d, plan) = proposal(&model)?;
                Ok((d, plan, model))
            })?
        } else {
            // Every rank plans its own share for the broadcast speeds; the
            // root weighs the O(p) loads and volumes.
            let model = root_compute(&self.comm, ROOT, || model_of(gathered))?;
            let local = data.propose_collective(&model.speeds)?;
            let (policy, bandwidth) = ctx.policy;
            let decision = root_compute(&self.comm, ROOT, || {
                let d = model.decide(
                    &policy,
                    &local.current,
                    &local.candidate,
                    &local.volume,
                    ahead,
                    bandwidth,
                )?;
                Ok(d.decision)
            })?;
            (decision, local.plan, model)
        };
        let estimates = model.estimates.clone();
        let model = SpeedModel::of_model(&model);
        info!(
            ?model,
            remap = decision.remap,
            t_current = decision.t_current,
            t_candidate = decision.t_candidate,
            t_migration = decision.t_migration,
            "remap decision"
        );
        self.speeds = Some(decision.speeds.clone());
        self.sweep_fns = None;
        self.set_estimates(estimates.clone(), true);
        let moved = if decision.remap {
            let _s = info_span!("remap").entered();
            let stats = data.apply(plan)?;
            // Small moves are latency-bound and would underestimate the
            // bandwidth: learn it only from moves of at least 1 MiB per rank.
            self.observe(&stats);
            info!(
                bytes = stats.bytes,
                messages = stats.messages,
                seconds = stats.seconds,
                "remapped"
            );
            Some(stats)
        } else {
            None
        };
        agree(&self.comm, ROOT, Ok(()))?;
        self.mark();
        Ok(RemapReport {
            decision,
            moved,
            model,
            estimates,
        })
    }

    /// Partitions the root's `graph` for the current speeds (uniform when
    /// none were measured) and scatters it with the root's `values`, one per
    /// vertex, on the balancer's communicator. The root keeps an index
    /// ordering of the graph — Hilbert curve (HCI) when it has coordinates,
    /// spectral (RSBI) otherwise — so that [`Balancer::maybe_remap`] re-cuts
    /// it in O(p log n) and moves few vertices (\[KOR95\] §3). `graph` and
    /// `values` are read on the root only. A balance point.
    pub fn scatter_graph<T: GraphValue>(
        &mut self,
        graph: Option<&Graph>,
        values: Option<&[T]>,
    ) -> Result<DistGraph<T>> {
        let _w = waiting();
        let _span = info_span!("scatter_graph").entered();
        self.arrive(&format!(
            "Balancer::scatter_graph({}-byte values)",
            std::mem::size_of::<T>()
        ))?;
        let p = self.comm.size() as usize;
        let uniform = vec![1.0; p];
        let speeds = self.speeds.clone().unwrap_or(uniform);
        let at_root = self.comm.rank() == ROOT;
        // Built on the root only (the index is O(n)); every rank learns whether it worked.
        let built = at_root
            .then(|| {
                let g = graph.ok_or_else(|| {
                    Error::InvalidInput("scatter_graph: the root has no graph".into())
                })?;
                if g.n() < p {
                    return Err(Error::TooManyParts {
                        parts: p,
                        units: g.n(),
                    });
                }
                let index = RootIndex::build(g, &speeds, std::mem::size_of::<T>())?;
                let partition = index.ordering.to_partition(&index.cut)?;
                Ok((index, partition))
            })
            .transpose();
        let built = agree(&self.comm, ROOT, built)?;
        let (index, partition) = built.unzip();
        let mut dg = DistGraph::scatter(&self.comm, ROOT, graph, partition.as_ref(), values)?;
        dg.index = index;
        dg.strategy = GraphStrategy::RootIndex;
        dg.cp.adopt(&self.cp);
        self.mark();
        Ok(dg)
    }
}

impl Balancer {
    /// Checks (collectively) that `other` has this balancer's ranks in the same order.
    fn same_ranks(&self, other: &SimpleCommunicator, what: &str) -> Result<()> {
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
                Err(Error::InvalidInput(format!(
                    "{what}: the data lives on other ranks than the balancer"
                )))
            },
        )
    }

    /// The first partition of a distributed graph (built by
    /// [`DistGraph::from_local`], [`GraphStrategy::Geometric`]) for the
    /// current speeds (uniform when none were measured): the parallel RCB
    /// ([`DistGraph::partition_rcb`]), then a migration; no rank gathers the
    /// graph. Later balance points are [`Balancer::maybe_remap`]. A balance
    /// point.
    pub fn partition_distributed<T: GraphValue>(
        &mut self,
        g: &mut DistGraph<T>,
    ) -> Result<MigrateStats> {
        let _w = waiting();
        self.arrive("Balancer::partition_distributed")?;
        self.same_ranks(g.comm(), "partition_distributed")?;
        g.cp.adopt(&self.cp);
        let p = self.comm.size() as usize;
        let speeds = self.speeds.clone().unwrap_or_else(|| vec![1.0; p]);
        let dest = g.partition_rcb(&speeds)?;
        let st = g.migrate(&dest)?;
        self.mark();
        Ok(st)
    }

    /// Runs one master–worker execution of `plan` on the balancer's
    /// communicator, the root as master ([`run_master_worker`]: inputs built
    /// by `make_input(rank, first_unit, units)` on the master, `compute` on
    /// the workers, results consumed by `on_result`). Its time is nuce's,
    /// not compute. Collective; an invalid plan is the same `Err` on every
    /// rank. A balance point.
    pub fn master_worker<FI, FC, FR>(
        &mut self,
        plan: &ExecPlan,
        make_input: FI,
        compute: FC,
        on_result: FR,
    ) -> Result<ExecReport>
    where
        FI: FnMut(i32, u64, u64) -> Vec<f64>,
        FC: FnMut(&[f64], u64) -> Vec<f64>,
        FR: FnMut(i32, u64, Vec<f64>),
    {
        let _w = waiting();
        self.arrive("Balancer::master_worker")?;
        let r = run_master_worker(&self.comm, ROOT, plan, make_input, compute, on_result);
        self.mark();
        r
    }

    /// The MaxTasks1 schedule of a master–worker run, solved collectively
    /// ([`collective_max_tasks1`], \[BBLRR01\] §4.3): every worker passes its
    /// own measured costs, the root (the master) `None`; every rank returns
    /// the same platform and schedule within `deadline`.
    pub fn schedule_tasks(
        &mut self,
        me: Option<WorkerSelf>,
        deadline: f64,
    ) -> Result<(TaskPlatform, TaskSchedule)> {
        let _w = waiting();
        self.arrive("Balancer::schedule_tasks")?;
        collective_max_tasks1(&self.comm, ROOT, me, deadline)
    }

    /// Allocates processor submeshes to the AMR grids of all ranks with the
    /// collective TP packing ([`allocate_collective`], \[VH94\] §4.2–4.3):
    /// every rank passes its own grids and gets the submeshes of its grids.
    pub fn allocate_grids(
        &mut self,
        grids: &[Grid],
        mesh: Mesh,
        tp: &TightPacking,
        scaling: Scaling,
    ) -> Result<LocalAllocation> {
        let _w = waiting();
        self.arrive("Balancer::allocate_grids")?;
        allocate_collective(&self.comm, grids, mesh, tp, scaling)
    }
}

/// The remap policy as the must-match arguments of a checked call: it is
/// used on the root only, so ranks that were given different ones would
/// otherwise never know.
fn policy_args(p: &RemapPolicy) -> String {
    format!(
        "hysteresis {}, latency {} s, bandwidth {} B/s",
        p.hysteresis, p.latency, p.default_bandwidth
    )
}

/// What the root needs from the balancer to propose a new layout.
pub struct RootContext {
    planner: Arc<dyn ArrayDecomposer>,
    policy: (RemapPolicy, Option<f64>),
    ahead: usize,
    /// The gathered cost field's prefix sums (at the root, when the data
    /// has a cost field).
    costs: Option<CellCosts>,
}

/// The root's proposal: for the balance point's [`PlanningModel`] (the
/// merged speed estimates, the speed functions, the memory limits), the
/// decision and the new layout (planned for the model's speeds).
pub type Proposal<'a, P> = Box<dyn FnOnce(&PlanningModel) -> Result<(RemapDecision, P)> + 'a>;

/// A candidate layout planned by every rank together
/// ([`Rebalance::propose_collective`]): what the root weighs (the same on
/// every rank) and this rank's share of the move.
#[derive(Debug, Clone)]
pub struct LocalProposal<P> {
    /// The work of every rank now.
    pub current: Vec<f64>,
    /// The work of every rank under the candidate.
    pub candidate: Vec<f64>,
    /// Every rank's move volume (bytes sent plus received, messages).
    pub volume: Vec<(f64, usize)>,
    /// This rank's share of the move.
    pub plan: P,
}

/// Distributed data a [`Balancer`] can rebalance: [`DistArray2`],
/// [`DistGraph`], [`DistArray3`], and a [`Grid`](super::layout::Grid) on the
/// application's buffers (its remap is pending until the application's
/// move). Sealed: implemented by nuce's types only.
pub trait Rebalance: sealed::Sealed {
    /// The new layout, broadcast from the root.
    type Plan: Serialize + DeserializeOwned;
    /// This rank's work per iteration (cells; sum of vertex weights).
    fn local_work(&self) -> f64;
    /// Number of elements of the whole data (cells; vertices): must be the same on every rank.
    fn global_len(&self) -> usize;
    /// The container's communicator.
    fn comm(&self) -> &SimpleCommunicator;
    /// Ghost exchanges made so far (compared at the balance point: a rank
    /// that skipped one is caught there).
    fn exchanges(&self) -> u64;
    /// Whether the root plans the new layout ([`Rebalance::propose`]), or
    /// every rank its own share ([`Rebalance::propose_collective`]). The
    /// same on every rank.
    fn plans_at_root(&self) -> bool {
        true
    }
    /// The root's decision for given speeds (called on the root only, when
    /// [`Rebalance::plans_at_root`]).
    fn propose<'a>(&'a self, ctx: &'a RootContext) -> Proposal<'a, Self::Plan>;
    /// The candidate layout for the snapped `speeds` (the same on every
    /// rank), planned by every rank together when not
    /// [`Rebalance::plans_at_root`]: collective.
    fn propose_collective(&self, _speeds: &[f64]) -> Result<LocalProposal<Self::Plan>> {
        Err(Error::InvalidInput(
            "propose_collective: this data is planned at the root".into(),
        ))
    }
    /// Moves the data to the new layout (collective).
    fn apply(&mut self, plan: Self::Plan) -> Result<MoveStats>;
    /// The grid and cost field of a grid container (`None` for graphs).
    fn cost_grid(&self) -> Option<CostGrid<'_>> {
        None
    }
    /// Whether the work of a rank is the number of its cells (arrays and
    /// grids without a cost field): the data memory limits apply to.
    fn work_is_cells(&self) -> bool {
        false
    }
}

mod sealed {
    pub trait Sealed {}
    impl<T> Sealed for super::DistArray2<T> {}
    impl<T> Sealed for super::DistGraph<T> {}
    impl<T> Sealed for super::DistArray3<T> {}
    impl Sealed for super::BufferGrid {}
}

/// The 3D decomposer of the balancer: [`Best3`] for a 7-point stencil of
/// width `ghost` (at least 1).
fn best3(ghost: usize) -> Best3 {
    Best3 {
        stencil: Stencil::seven(ghost.max(1)),
    }
}

/// The root's decision for a 3D grid laid out by `current` (a
/// [`DistArray3`] or a [`BufferGrid`]) whose cells move `bytes` each: the
/// candidate is the balancer's 3D `best` for `stencil` (ghost at least 1)
/// by cells, or — with a cost field — the weighted bisection of the
/// gathered costs, and the loads compared are cells or `Σ cost` per part
/// ([`super::cost`]).
fn propose_grid3(
    ctx: &RootContext,
    current: &GridPlan3,
    mut stencil: Stencil,
    bytes: f64,
    model: &PlanningModel,
) -> Result<(RemapDecision, GridPlan3)> {
    stencil.ghost = stencil.ghost.max(1);
    let candidate = match &ctx.costs {
        Some(c) => WeightedBisection3d.decompose_costs(c, &model.speeds)?,
        None => model.plan_within_caps(
            |s| Best3 { stencil }.decompose(current.shape, s),
            GridPlan3::volumes,
        )?,
    };
    let loads = |p: &GridPlan3| match &ctx.costs {
        Some(c) => c.part_costs(p),
        None => Ok(p.volumes().into_iter().map(|v| v as f64).collect()),
    };
    let volume: Vec<(f64, usize)> = migration_volume3(current, &candidate)
        .into_iter()
        .map(|(cells, msgs)| (cells as f64 * bytes, msgs))
        .collect();
    let (policy, bandwidth) = ctx.policy;
    let d = model.decide(
        &policy,
        &loads(current)?,
        &loads(&candidate)?,
        &volume,
        ctx.ahead,
        bandwidth,
    )?;
    Ok((d.decision, candidate))
}

impl<T: Element> Rebalance for DistArray3<T> {
    type Plan = GridPlan3;
    fn local_work(&self) -> f64 {
        self.local_box().volume() as f64
    }
    fn global_len(&self) -> usize {
        self.global_cells()
    }
    fn comm(&self) -> &SimpleCommunicator {
        DistArray3::comm(self)
    }
    fn exchanges(&self) -> u64 {
        DistArray3::exchanges(self)
    }
    fn propose<'a>(&'a self, ctx: &'a RootContext) -> Proposal<'a, GridPlan3> {
        let bytes = (self.ncomp() * std::mem::size_of::<T>()) as f64;
        Box::new(move |model| {
            propose_grid3(ctx, self.plan(), Stencil::seven(self.ghost()), bytes, model)
        })
    }
    fn apply(&mut self, plan: GridPlan3) -> Result<MoveStats> {
        self.remap(&plan)
    }
    fn cost_grid(&self) -> Option<CostGrid<'_>> {
        DistArray3::cost_grid(self)
    }
    fn work_is_cells(&self) -> bool {
        DistArray3::cost_grid(self).is_none()
    }
}

/// A grid on the application's buffers: a decision to remap makes the new
/// plan pending, and the application completes it with
/// [`Grid::move_fields`](super::layout::Grid::move_fields) into new buffers
/// (so `apply` moves nothing itself and reports nothing moved). The cost
/// model counts the bytes per cell of the grid's last exchange (8 before
/// any). The root refuses a new decision while a move is pending.
impl Rebalance for BufferGrid {
    type Plan = GridPlan3;
    fn local_work(&self) -> f64 {
        self.layout().local_box().volume() as f64
    }
    fn global_len(&self) -> usize {
        self.layout().plan().cells()
    }
    fn comm(&self) -> &SimpleCommunicator {
        BufferGrid::comm(self)
    }
    fn exchanges(&self) -> u64 {
        BufferGrid::exchanges(self)
    }
    fn propose<'a>(&'a self, ctx: &'a RootContext) -> Proposal<'a, GridPlan3> {
        let bytes = match self.cell_bytes() {
            0 => 8.0,
            b => b as f64,
        };
        Box::new(move |model| {
            if self.pending().is_some() {
                return Err(Error::InvalidInput(
                    "maybe_remap: the grid's previous remap is still pending (call Grid::move_fields first)"
                        .into(),
                ));
            }
            propose_grid3(ctx, self.layout().plan(), self.stencil(), bytes, model)
        })
    }
    fn apply(&mut self, plan: GridPlan3) -> Result<MoveStats> {
        self.set_pending(plan)?;
        Ok(MoveStats::default())
    }
    fn cost_grid(&self) -> Option<CostGrid<'_>> {
        BufferGrid::cost_grid(self)
    }
    fn work_is_cells(&self) -> bool {
        BufferGrid::cost_grid(self).is_none()
    }
}

impl<T: Element> Rebalance for DistArray2<T> {
    type Plan = ArrayPlan;
    fn local_work(&self) -> f64 {
        self.rect().area() as f64
    }
    fn global_len(&self) -> usize {
        DistArray2::global_len(self)
    }
    fn comm(&self) -> &SimpleCommunicator {
        DistArray2::comm(self)
    }
    fn exchanges(&self) -> u64 {
        DistArray2::exchanges(self)
    }
    fn propose<'a>(&'a self, ctx: &'a RootContext) -> Proposal<'a, ArrayPlan> {
        Box::new(move |model| {
            let (rows, cols) = self.global_shape();
            let (policy, bandwidth) = ctx.policy;
            let elem = std::mem::size_of::<T>() as f64;
            let candidate = match &ctx.costs {
                Some(c) => WeightedBisection2d.decompose_costs(c, &model.speeds)?,
                None => model
                    .plan_within_caps(|s| ctx.planner.decompose(rows, cols, s), ArrayPlan::areas)?,
            };
            let loads = |p: &ArrayPlan| match &ctx.costs {
                Some(c) => rect_costs(c, &p.parts),
                None => p.areas().into_iter().map(|a| a as f64).collect(),
            };
            let volume: Vec<(f64, usize)> = migration_volume(self.plan(), &candidate)
                .into_iter()
                .map(|(cells, msgs)| (cells as f64 * elem, msgs))
                .collect();
            let d = model.decide(
                &policy,
                &loads(self.plan()),
                &loads(&candidate),
                &volume,
                ctx.ahead,
                bandwidth,
            )?;
            Ok((d.decision, candidate))
        })
    }
    fn work_is_cells(&self) -> bool {
        DistArray2::cost_grid(self).is_none()
    }
    fn apply(&mut self, plan: ArrayPlan) -> Result<MoveStats> {
        self.remap(&plan)
    }
    fn cost_grid(&self) -> Option<CostGrid<'_>> {
        DistArray2::cost_grid(self)
    }
}

impl<T: GraphValue> Rebalance for DistGraph<T> {
    type Plan = GraphPlan;
    fn local_work(&self) -> f64 {
        DistGraph::local_work(self)
    }
    fn global_len(&self) -> usize {
        DistGraph::global_len(self)
    }
    fn comm(&self) -> &SimpleCommunicator {
        DistGraph::comm(self)
    }
    fn exchanges(&self) -> u64 {
        DistGraph::exchanges(self)
    }
    fn plans_at_root(&self) -> bool {
        self.strategy() != GraphStrategy::Geometric
    }
    fn propose<'a>(&'a self, ctx: &'a RootContext) -> Proposal<'a, Self::Plan> {
        Box::new(move |model| {
            let index = self.index.as_ref().ok_or_else(|| {
                Error::InvalidInput(
                    "maybe_remap: this graph was scattered with a partition of the caller's and has no coordinates (GraphStrategy::Manual): build it with Balancer::scatter_graph, or give it coordinates, to have it balanced"
                        .into(),
                )
            })?;
            let (policy, bandwidth) = ctx.policy;
            let (d, cut, candidate) = index.propose(model, &policy, ctx.ahead, bandwidth)?;
            Ok((d, GraphPlan::Index(cut, candidate)))
        })
    }
    fn propose_collective(&self, speeds: &[f64]) -> Result<LocalProposal<GraphPlan>> {
        let dest = self.prefix_cut(speeds)?;
        let (current, candidate, volume) = self.move_volume(&dest);
        Ok(LocalProposal {
            current,
            candidate,
            volume,
            plan: GraphPlan::Owners(dest),
        })
    }
    fn apply(&mut self, plan: GraphPlan) -> Result<MoveStats> {
        match plan {
            GraphPlan::Index(cut, partition) => {
                let stats = self.remap(&partition)?;
                if let (Some(index), Some(cut)) = (self.index.as_mut(), cut) {
                    index.cut = cut;
                    index.parts = partition.parts;
                }
                Ok(stats.moves)
            }
            GraphPlan::Owners(dest) => Ok(self.migrate(&dest)?.moves),
        }
    }
}

/// The new layout of a [`DistGraph`] at a balance point.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub enum GraphPlan {
    /// [`GraphStrategy::RootIndex`]: the new cut of the root's ordering
    /// (none when repartitioned otherwise) and the partition, broadcast.
    Index(Option<IntervalCut>, Partition),
    /// [`GraphStrategy::Geometric`]: the new owner of each of this rank's
    /// vertices (never leaves the rank).
    Owners(Vec<usize>),
}

/// The remap policy with the measured network: the per-message latency is
/// the measured largest link latency, and the bandwidth is the one learnt
/// from a large remap (`observed`) if any, else the measured slowest link's.
/// Without a measured network (or with no link) both stay as they are.
pub fn network_policy(
    policy: &RemapPolicy,
    observed: Option<f64>,
    network: Option<&Network>,
) -> (RemapPolicy, Option<f64>) {
    let mut policy = *policy;
    let mut bandwidth = observed;
    if let Some(n) = network.filter(|n| !n.links.is_empty()) {
        policy.latency = n.latency_s;
        bandwidth = bandwidth.or(Some(n.bandwidth));
    }
    (policy, bandwidth)
}

/// What one rank tells the root at a balance point ([`merge_estimates`]).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub enum RankReport {
    /// Its phase speed (work units per second) with its noise.
    Phase(SpeedEstimate),
    /// It had no work: the factor by which its kernel speed changed since
    /// the previous balance point (`mean`, now / then) and the probe's noise.
    Idle(SpeedEstimate),
    /// Nothing known (no phase timed yet).
    Unknown,
}

impl SpeedModel {
    /// The model that planned with `model`: [`SpeedModel::Functional`] when
    /// its functions did, else [`SpeedModel::of`] its estimates.
    pub fn of_model(model: &PlanningModel) -> SpeedModel {
        if model.is_functional() {
            SpeedModel::Functional
        } else {
            SpeedModel::of(&model.estimates)
        }
    }

    /// The model of a decision on `estimates`: noisy as soon as one has noise.
    pub fn of(estimates: &[SpeedEstimate]) -> SpeedModel {
        if estimates.iter().any(|e| e.noise > 0.0) {
            SpeedModel::NoisySnapped
        } else {
            SpeedModel::Constant
        }
    }
}

/// [`merge_estimates`] of exact speeds whose previous values are in other
/// units than the phases' (e.g. the kernel's): a rank that had no work (no
/// phase speed) keeps its previous speed, rescaled into phase units by the
/// median ratio phase/previous of the ranks that have both. Without any
/// phase speed the previous speeds are kept.
pub fn merge_speeds(phase: &[Option<f64>], previous: Option<&[f64]>) -> Result<Vec<f64>> {
    let exact = |mean: f64| SpeedEstimate { mean, noise: 0.0 };
    let phase: Vec<RankReport> = phase
        .iter()
        .map(|p| p.map_or(RankReport::Unknown, |m| RankReport::Phase(exact(m))))
        .collect();
    let previous: Option<Vec<SpeedEstimate>> =
        previous.map(|p| p.iter().map(|&m| exact(m)).collect());
    let merged = merge_estimates(&phase, previous.as_deref(), false)?;
    Ok(merged.iter().map(|e| e.mean).collect())
}

/// Combines the ranks' reports (phase speed and noise, or an idle rank's
/// change of kernel speed) with the previous estimates. A rank without a
/// phase speed starts from its previous estimate:
///
/// * as it is when the previous estimates are phase speeds too
///   (`phase_units`): an idle rank's speed does not follow the others', so
///   when they slow down it is relatively faster and gets work back;
/// * otherwise (kernel speeds, or speeds set by the application) converted
///   into phase units by the median ratio phase/previous of the ranks that
///   have both;
///
/// and an idle rank ([`RankReport::Idle`]) multiplies it by the change of
/// its kernel speed, its noise the larger of the two. Without any phase
/// speed the previous estimates are kept. O(p log p).
pub fn merge_estimates(
    phase: &[RankReport],
    previous: Option<&[SpeedEstimate]>,
    phase_units: bool,
) -> Result<Vec<SpeedEstimate>> {
    let timed = |r: &RankReport| match r {
        RankReport::Phase(e) => Some(*e),
        _ => None,
    };
    let means = |s: &[SpeedEstimate]| s.iter().map(|e| e.mean).collect::<Vec<_>>();
    if let Some(s) = phase.iter().map(timed).collect::<Option<Vec<_>>>() {
        crate::plan::check_speeds(&means(&s))?;
        return Ok(s);
    }
    let prev = previous.ok_or_else(|| {
        Error::InvalidInput(
            "some ranks have neither a phase timing nor a measured speed: call measure() first"
                .into(),
        )
    })?;
    if prev.len() != phase.len() {
        return Err(Error::ShapeMismatch(format!(
            "{} previous speeds for {} ranks",
            prev.len(),
            phase.len()
        )));
    }
    let mut ratios: Vec<f64> = phase
        .iter()
        .zip(prev)
        .filter_map(|(p, q)| timed(p).map(|p| p.mean / q.mean))
        .collect();
    ratios.sort_by(f64::total_cmp);
    let scale = if phase_units || ratios.is_empty() {
        1.0
    } else {
        ratios[ratios.len() / 2]
    };
    let s: Vec<SpeedEstimate> = phase
        .iter()
        .zip(prev)
        .map(|(p, q)| match *p {
            RankReport::Phase(e) => e,
            RankReport::Idle(change) => SpeedEstimate {
                mean: q.mean * scale * change.mean,
                noise: q.noise.max(change.noise),
            },
            RankReport::Unknown => SpeedEstimate {
                mean: q.mean * scale,
                noise: q.noise,
            },
        })
        .collect();
    crate::plan::check_speeds(&means(&s))?;
    Ok(s)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::speed::network::{LinkRecord, ProbeConfig};

    fn link(rank: i32, latency: f64, bandwidth: f64) -> LinkRecord {
        // Exact one-way times of Hockney's model for the default sizes.
        let cfg = ProbeConfig::default();
        let t = |b: usize| latency + b as f64 / bandwidth;
        LinkRecord::from_one_way_times(rank, 0, &cfg, &[t(cfg.small_bytes)], &[t(cfg.large_bytes)])
            .unwrap()
    }

    #[test]
    fn network_summary_and_latency_in_cells() {
        let n = Network::from_links(vec![link(1, 1e-4, 1e8), link(2, 5e-5, 2e7)]).unwrap();
        assert_eq!(n.latency_s, 1e-4 + 8.0 / 1e8);
        assert!((n.bandwidth - 2e7).abs() < 1.0);
        // τβ/e: 1e-4 s at 20 MB/s is 2000 bytes, 250 doubles.
        assert!((n.latency_cells(8) - (1e-4 + 8.0 / 1e8) * n.bandwidth / 8.0).abs() < 1e-9);
        assert!((n.latency_cells(8) - 250.0).abs() < 0.5);
        assert_eq!(n.latency_cells(0), 0.0);
        // t_com: τ + B/β of each rank's own link, 0 at the root.
        let t = n.t_com(3, 0, 1000);
        assert_eq!(t[0], 0.0);
        assert!((t[1] - (1e-4 + 8.0 / 1e8 + 1000.0 / 1e8)).abs() < 1e-12);
        assert!((t[2] - (5e-5 + 8.0 / 2e7 + 1000.0 / 2e7)).abs() < 1e-12);
        let none = Network::from_links(vec![]).unwrap();
        assert_eq!(none.latency_cells(8), 0.0);
        let mut bad = link(1, 1e-4, 1e8);
        bad.bandwidth_bytes_per_s = f64::NAN;
        assert!(Network::from_links(vec![bad]).is_err());
    }

    #[test]
    fn measured_network_drives_the_remap_decision() {
        use crate::plan::array2d::ColumnDp;
        let split = |s: &[f64]| ColumnDp::default().decompose(100, 100, s).unwrap();
        let (even, skewed) = (split(&[1.0, 1.0]), split(&[1.0, 3.0]));
        let speeds = [1.0e6, 3.0e6];
        let pol = RemapPolicy::default();
        // Default 1 GB/s: moving a quarter of the cells pays off over 10 iterations.
        let (p, bw) = network_policy(&pol, None, None);
        assert_eq!((p, bw), (pol, None));
        let d = p.decide(&even, &skewed, &speeds, 8, 10, bw).unwrap();
        assert!(d.remap);
        // A measured 10 kB/s link: 20 kB take 2 s, more than the 25 ms gained.
        assert_eq!(even.areas(), vec![5000, 5000]);
        assert_eq!(skewed.areas(), vec![2500, 7500]);
        let slow = Network::from_links(vec![link(1, 1e-3, 1e4)]).unwrap();
        let (p, bw) = network_policy(&pol, None, Some(&slow));
        assert_eq!(p.latency, slow.latency_s);
        assert_eq!(bw, Some(slow.bandwidth));
        let d = p.decide(&even, &skewed, &speeds, 8, 10, bw).unwrap();
        assert!(!d.remap && d.bandwidth == slow.bandwidth, "{d:?}");
        // A bandwidth learnt from a large remap takes precedence.
        let (_, bw) = network_policy(&pol, Some(5e8), Some(&slow));
        assert_eq!(bw, Some(5e8));
    }

    fn est(mean: f64, noise: f64) -> SpeedEstimate {
        SpeedEstimate { mean, noise }
    }

    #[test]
    fn idle_ranks_keep_their_own_phase_estimate() {
        // Rank 1 is idle; the others slowed down 2× since the last balance point.
        let prev = [est(2.0, 0.05), est(4.0, 0.1), est(6.0, 0.02)];
        let phase = [
            RankReport::Phase(est(1.0, 0.04)),
            RankReport::Unknown,
            RankReport::Phase(est(3.0, 0.03)),
        ];
        // In phase units the idle rank keeps its estimate, noise included:
        // it is now the fastest, and the plan gives it work back.
        let s = merge_estimates(&phase, Some(&prev), true).unwrap();
        assert_eq!(s, vec![est(1.0, 0.04), est(4.0, 0.1), est(3.0, 0.03)]);
        let plan = ColumnDp::default()
            .decompose(60, 60, &snap_speeds(&s).unwrap())
            .unwrap();
        assert!(plan.areas()[1] > plan.areas()[2], "{:?}", plan.areas());
        // In kernel units it is converted by the others' median ratio (½).
        let s = merge_estimates(&phase, Some(&prev), false).unwrap();
        assert_eq!(s[1], est(2.0, 0.1));
        assert_eq!(SpeedModel::of(&s), SpeedModel::NoisySnapped);
        assert_eq!(SpeedModel::of(&[est(1.0, 0.0)]), SpeedModel::Constant);
        assert!(merge_estimates(&phase, None, true).is_err());
        let nan = [RankReport::Phase(est(f64::NAN, 0.0))];
        assert!(merge_estimates(&nan, None, true).is_err());
        // An idle rank whose kernel got 3× faster (the job that shared its
        // core ended): its estimate follows, noise the larger one.
        let mut idle = phase;
        idle[1] = RankReport::Idle(est(3.0, 0.2));
        let s = merge_estimates(&idle, Some(&prev), true).unwrap();
        assert_eq!(s[1], est(12.0, 0.2));
        // A probe that says "no change" keeps the estimate as it is.
        idle[1] = RankReport::Idle(est(1.0, 0.02));
        let s = merge_estimates(&idle, Some(&prev), true).unwrap();
        assert_eq!(s[1], est(4.0, 0.1));
    }

    #[test]
    fn equal_ranks_within_noise_never_remap_but_different_ones_do() {
        let split = |s: &[f64]| ColumnDp::default().decompose(100, 100, s).unwrap();
        let pol = RemapPolicy::default();
        let decide = |e: &[SpeedEstimate]| {
            let candidate = split(&snap_speeds(e).unwrap());
            pol.decide_plans_noisy(&split(&[1.0, 1.0]), &candidate, e, 8, 100, None)
                .unwrap()
                .decision
        };
        // Two equal cores measured 15 % apart with 10 % noise: snapped to one
        // speed, the candidate is the current even split, no remap.
        let noisy = [est(1.0e6, 0.1), est(0.85e6, 0.1)];
        let d = decide(&noisy);
        assert!(!d.remap, "{d:?}");
        assert_eq!(d.speeds[0], d.speeds[1]);
        // The same speeds known exactly would remap (the model without noise).
        let exact = [est(1.0e6, 0.0), est(0.85e6, 0.0)];
        assert!(decide(&exact).remap);
        // A rank 3× slower is rebalanced despite the noise.
        let d = decide(&[est(3.0e6, 0.1), est(1.0e6, 0.1)]);
        assert!(d.remap, "{d:?}");
        assert!(split(&d.speeds).areas()[1] < 3000, "{d:?}");
    }

    #[test]
    fn merge_fills_idle_ranks() {
        let s = merge_speeds(&[Some(2.0), None, Some(6.0)], Some(&[1.0, 1.0, 3.0])).unwrap();
        assert_eq!(s, vec![2.0, 2.0, 6.0]);
        assert_eq!(
            merge_speeds(&[Some(1.0), Some(3.0)], None).unwrap(),
            vec![1.0, 3.0]
        );
        assert!(merge_speeds(&[None, Some(3.0)], None).is_err());
        assert!(merge_speeds(&[Some(f64::NAN)], None).is_err());
    }
}
