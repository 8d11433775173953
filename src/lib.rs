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
//! Two layers are kept apart:
//!
//! * [`plan`] — pure, deterministic planning functions (every algorithm of the
//!   papers, see `docs/references.md`), usable without MPI and from the `nuce` command-line planner;
//! * [`runtime`] — the thin collective layer over rsmpi: gather speeds,
//!   broadcast plans, scatter, halo exchange, remap.
//!
//! [`speed`] measures a rank's throughput (built-in kernels, or timing of the
//! application's own phases) and its hwloc topology.
//!
//! Conventions: speeds are relative throughputs (work units per second); a
//! collective call succeeds on every rank or returns the same [`Error`] on
//! every rank; remaps move only cells whose owner changed.

#![warn(missing_docs)]

pub use nuce_plan as plan;
pub use nuce_plan::error;
pub mod runtime;
pub mod speed;

pub use error::{Error, Result};

// What an application needs, at the crate root.
pub use plan::array2d::{ArrayDecomposer, ArrayPlan, ColumnDp, Rect};
pub use plan::graph::{Graph, Partition};
pub use runtime::array::{DistArray2, Element, MoveStats};
pub use runtime::array3::DistArray3;
pub use runtime::balancer::{Balancer, Rebalance, RemapReport, SpeedModel};
pub use runtime::clock::waiting;
pub use runtime::graph::{DistGraph, GraphStrategy, GraphValue};
pub use runtime::halo::ExchangeStats;
pub use runtime::layout::{Field, Grid};
pub use runtime::ranges::OwnershipRanges;
pub use speed::PhaseTimer;
