//! The collective runtime: a thin layer over rsmpi that measures, gathers,
//! plans (by calling [`crate::plan`] on the root), broadcasts, scatters and
//! remaps. A library never owns the MPI `Universe`: every entry point takes a
//! communicator.
//!
//! **Visibility.** This module is private. What applications use is
//! re-exported at the crate root (and [`crate::collective`]); what nuce's own
//! crates, benchmarks and tests need goes through the hidden
//! [`crate::internals`] module, with no stability promise; the rest is
//! crate-private.

pub mod array;
pub mod array3;
pub mod auction;
pub mod balancer;
pub mod clock;
pub mod comm;
pub mod cost;
pub(crate) mod directory;
pub(crate) mod geometric;
pub mod graph;
pub(crate) mod graph_value;
pub mod halo;
pub mod hierarchy;
pub mod layout;
pub mod master_worker;
pub mod netprobe;
pub(crate) mod notice;
pub(crate) mod object;
pub mod packing;
pub mod ranges;
mod root_index;
pub mod savefile;
pub mod tags;
pub mod watchdog;
pub mod yielding;
