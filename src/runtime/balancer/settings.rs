//! The balancer's settings: one value ([`Settings`]) that is the same on
//! every rank — the collectives' timeout, the remap policy, the
//! decomposers of 2D arrays and 3D grids, two-level planning and the
//! functional speed model. [`Balancer::settings`] reads it;
//! [`Balancer::configure`] (collective) checks that every rank passes the
//! same one and applies it:
//!
//! ```no_run
//! use nuce::{ArrayAlgorithm, Balancer, GridAlgorithm};
//!
//! let universe = mpi::initialize().unwrap();
//! let mut bal = Balancer::new(&universe.world()).unwrap();
//! let mut s = bal.settings().clone();
//! s.policy.hysteresis = 0.1;
//! s.array_algorithm = ArrayAlgorithm::named("rb2");
//! s.grid_algorithm = GridAlgorithm::named("rb");
//! bal.configure(s).unwrap(); // the same settings on every rank, or the same error
//! ```
//!
//! What differs between ranks by nature stays with its own call: this
//! rank's kernel ([`Balancer::set_kernel`]: e.g. an emulated slowness),
//! memory limit ([`Balancer::set_memory_limit`]) and host
//! ([`Balancer::set_hosts`]).

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use super::{policy_args, Balancer, ROOT};
use crate::error::{Error, Result};
use crate::plan::array2d::{registry, ArrayDecomposer};
use crate::plan::array3d::{decomposer3_by_name, Best3, GridDecomposer3, Stencil};
use crate::plan::policy::RemapPolicy;
use crate::runtime::clock::waiting;
use crate::runtime::comm::agree;

/// The settings of a [`Balancer`], the same on every rank
/// ([`Balancer::configure`]); the module's documentation has an example.
#[derive(Clone, Debug)]
pub struct Settings {
    /// The timeout of the balancer's collectives; `None`: wait forever, as
    /// MPI does. Default: `NUCE_TIMEOUT_S` ([`crate::ENV_TIMEOUT`]), else 60 s.
    pub timeout: Option<Duration>,
    /// The remap policy of the balance points' decisions.
    pub policy: RemapPolicy,
    /// The decomposer of 2D arrays ([`Balancer::plan`], the balance points
    /// of [`DistArray2`](crate::DistArray2)). Default: `column`
    /// ([`ColumnDp`](crate::ColumnDp), \[BBLRR01\] §3.2.4).
    pub array_algorithm: ArrayAlgorithm,
    /// The decomposer of 3D grids ([`Balancer::plan3`],
    /// [`Grid::new`](crate::Grid::new), the balance points of
    /// [`DistArray3`](crate::DistArray3) and [`Grid`](crate::Grid) without
    /// a cost field; every rank plans alike where the plan is not
    /// broadcast). Default: `best` for each grid's stencil.
    pub grid_algorithm: GridAlgorithm,
    /// Plans 2D arrays in two levels: across hosts by their total speed,
    /// then within each host, both with [`Settings::array_algorithm`]
    /// ([`Hierarchical`](crate::plan::array2d::Hierarchical), \[BBLRR01\]
    /// §3.2.2, Figure 14). Needs hosts ([`Balancer::detect_hosts`] or
    /// [`Balancer::set_hosts`]); without them the plan is flat. Default: off.
    pub hierarchical: bool,
    /// Whether the root may plan with the functional speed model (the
    /// ranks' speed functions, when some rank's speed depends on its work
    /// size beyond the noise; else constant speeds). Default: on, unless
    /// [`ENV_SPEED_MODEL`](crate::ENV_SPEED_MODEL) says `constant`.
    pub functional_model: bool,
}

/// The decomposer of a balancer's 2D arrays ([`Settings::array_algorithm`]).
#[derive(Clone)]
pub enum ArrayAlgorithm {
    /// A decomposer of [`registry`] by its name (`column`, `xy2`, `xy`,
    /// `tile`, `kl`, `rb`, `rb2`, `rb3`, `slices`, `best`), with the latency
    /// in cells of [`Network::latency_cells`](super::Network::latency_cells)
    /// for the latency-aware ones (0 without a measured network). An
    /// unknown name is the same error on every rank at
    /// [`Balancer::configure`].
    Named {
        /// The name in [`registry`].
        name: String,
        /// The latency in cells (finite, ≥ 0).
        latency_cells: f64,
    },
    /// The application's own decomposer (ranks compare it by its
    /// [`ArrayDecomposer::name`]).
    Given(Arc<dyn ArrayDecomposer>),
}

impl ArrayAlgorithm {
    /// The decomposer of [`registry`] called `name`, latency 0.
    pub fn named(name: &str) -> ArrayAlgorithm {
        ArrayAlgorithm::Named {
            name: name.to_string(),
            latency_cells: 0.0,
        }
    }

    /// The application's own `decomposer`, e.g. a
    /// [`Best`](crate::plan::array2d::Best) with its own candidates.
    pub fn given(decomposer: impl ArrayDecomposer + 'static) -> ArrayAlgorithm {
        ArrayAlgorithm::Given(Arc::new(decomposer))
    }

    /// The decomposer's name.
    pub fn name(&self) -> &str {
        match self {
            ArrayAlgorithm::Named { name, .. } => name,
            ArrayAlgorithm::Given(d) => d.name(),
        }
    }

    /// The decomposer (an unknown name or a bad latency: an error).
    pub(super) fn decomposer(&self) -> Result<Arc<dyn ArrayDecomposer>> {
        Ok(match self {
            ArrayAlgorithm::Named {
                name,
                latency_cells,
            } => Arc::from(registry::decomposer_with_latency(name, *latency_cells)?),
            ArrayAlgorithm::Given(d) => Arc::clone(d),
        })
    }
}

impl fmt::Debug for ArrayAlgorithm {
    /// The must-match form: the name, with the latency of a named one.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ArrayAlgorithm::Named {
                name,
                latency_cells,
            } => write!(f, "{name} (latency {latency_cells} cells)"),
            ArrayAlgorithm::Given(d) => write!(f, "{} (the application's)", d.name()),
        }
    }
}

/// The decomposer of a balancer's 3D grids ([`Settings::grid_algorithm`]).
#[derive(Clone)]
pub enum GridAlgorithm {
    /// A decomposer of [`crate::plan::array3d::NAMES3`] by its name: `best`
    /// (the default: the least surface among the most balanced candidates,
    /// for each grid's stencil), `column`, `pencils`, `rb` (plans 10⁵ parts
    /// in milliseconds where `best` compares every candidate),
    /// `rectilinear`, `slabs`; `guillotine` only for tiny grids. An unknown
    /// name is the same error on every rank at [`Balancer::configure`].
    Named(String),
    /// The application's own decomposer (ranks compare it by its
    /// [`GridDecomposer3::name`]).
    Given(Arc<dyn GridDecomposer3>),
}

impl GridAlgorithm {
    /// The decomposer of [`crate::plan::array3d::NAMES3`] called `name`.
    pub fn named(name: &str) -> GridAlgorithm {
        GridAlgorithm::Named(name.to_string())
    }

    /// The application's own `decomposer`.
    pub fn given(decomposer: impl GridDecomposer3 + 'static) -> GridAlgorithm {
        GridAlgorithm::Given(Arc::new(decomposer))
    }

    /// The decomposer's name.
    pub fn name(&self) -> &str {
        match self {
            GridAlgorithm::Named(name) => name,
            GridAlgorithm::Given(d) => d.name(),
        }
    }

    /// An error unless the name is known.
    fn check(&self) -> Result<()> {
        match self {
            GridAlgorithm::Named(name) => decomposer3_by_name(name, Stencil::seven(1))
                .map(|_| ())
                .map_err(Error::from),
            GridAlgorithm::Given(_) => Ok(()),
        }
    }

    /// The decomposer for a grid with `stencil` (its ghost width at least 1).
    pub(super) fn for_stencil(&self, mut stencil: Stencil) -> Result<Arc<dyn GridDecomposer3>> {
        stencil.ghost = stencil.ghost.max(1);
        Ok(match self {
            GridAlgorithm::Named(name) if name == "best" => Arc::new(Best3 { stencil }),
            GridAlgorithm::Named(name) => Arc::from(decomposer3_by_name(name, stencil)?),
            GridAlgorithm::Given(d) => Arc::clone(d),
        })
    }

    /// The decomposer for a grid with `ghost` layers and a 7-point stencil.
    pub(super) fn for_ghost(&self, ghost: usize) -> Result<Arc<dyn GridDecomposer3>> {
        self.for_stencil(Stencil::seven(ghost.max(1)))
    }
}

impl fmt::Debug for GridAlgorithm {
    /// The must-match form: the name.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GridAlgorithm::Named(name) => write!(f, "{name}"),
            GridAlgorithm::Given(d) => write!(f, "{} (the application's)", d.name()),
        }
    }
}

impl Settings {
    /// The defaults, with the timeout and the speed model read from the
    /// environment by [`Balancer::new`].
    pub(super) fn with_env(timeout: Option<Duration>, functional_model: bool) -> Settings {
        Settings {
            timeout,
            policy: RemapPolicy::default(),
            array_algorithm: ArrayAlgorithm::named("column"),
            grid_algorithm: GridAlgorithm::named("best"),
            hierarchical: false,
            functional_model,
        }
    }

    /// What every rank must pass alike, for the checked entry of
    /// [`Balancer::configure`]: every setting, decomposers by name.
    fn must_match(&self) -> String {
        let timeout = self
            .timeout
            .map_or("none".to_string(), |t| format!("{} s", t.as_secs_f64()));
        format!(
            "timeout {timeout}, {}, arrays {:?}, grids {:?}, hierarchical {}, functional model {}",
            policy_args(&self.policy),
            self.array_algorithm,
            self.grid_algorithm,
            self.hierarchical,
            self.functional_model
        )
    }

    /// This rank's own check of the settings: the decomposers' names known,
    /// the latency finite and ≥ 0.
    fn check(&self) -> Result<()> {
        self.array_algorithm.decomposer()?;
        self.grid_algorithm.check()
    }
}

impl Balancer {
    /// The balancer's settings (local; the same on every rank).
    pub fn settings(&self) -> &Settings {
        &self.settings
    }

    /// Replaces the balancer's settings (collective): every rank passes the
    /// same `settings` — every field, decomposers compared by name — and
    /// they apply from the next call on. Errors, the same on every rank,
    /// with the settings unchanged: settings that differ between ranks
    /// ([`Error::Disagreement`], naming each rank's), then an unknown
    /// decomposer name or a bad latency (the root's error, or the lowest
    /// such rank's). This call waits with the timeout set before it. Two
    /// collective steps: the checked entry and one agreement.
    pub fn configure(&mut self, settings: Settings) -> Result<()> {
        let _w = waiting();
        self.arrive(&format!("Balancer::configure({})", settings.must_match()))?;
        agree(&self.comm, ROOT, settings.check())?;
        self.install(settings);
        Ok(())
    }

    /// Applies `settings` (local; checked by [`Balancer::configure`], or
    /// this rank's own in the deprecated local setters).
    pub(super) fn install(&mut self, settings: Settings) {
        self.cp.set_timeout(settings.timeout);
        self.settings = settings;
    }
}
