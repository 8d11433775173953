//! The collective runtime: a thin layer over rsmpi that measures, gathers,
//! plans (by calling [`crate::plan`] on the root), broadcasts, scatters and
//! remaps. A library never owns the MPI `Universe`: every entry point takes a
//! communicator.
//!
//! **Stability.** What these docs show is the API applications use. Items
//! hidden from them (`#[doc(hidden)]`: the message tags, the vertex
//! directory, the byte-level collectives of [`comm`], the checked-entry
//! hooks of the C and Fortran bindings) are public only for nuce's own
//! crates and tools, with no stability promise.

pub mod array;
pub mod array3;
pub mod auction;
pub mod balancer;
pub mod clock;
pub mod comm;
pub mod cost;
#[doc(hidden)]
pub mod directory;
pub mod geometric;
pub mod graph;
pub mod graph_value;
pub mod halo;
pub mod hierarchy;
pub mod layout;
pub mod master_worker;
pub mod netprobe;
pub mod packing;
pub mod ranges;
mod root_index;
#[doc(hidden)]
pub mod tags;
pub mod watchdog;
