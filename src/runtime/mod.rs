//! The collective runtime: a thin layer over rsmpi that measures, gathers,
//! plans (by calling [`crate::plan`] on the root), broadcasts, scatters and
//! remaps. A library never owns the MPI `Universe`: every entry point takes a
//! communicator.

pub mod array;
pub mod array3;
pub mod auction;
pub mod balancer;
pub mod clock;
pub mod comm;
pub mod cost;
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
pub mod tags;
pub mod watchdog;
