//! The hosts of the ranks, as far as this process knows them: its own, and
//! those learnt from the messages of earlier checkpoints (for the messages
//! that name a missing rank).

use std::collections::BTreeMap;
use std::sync::{Mutex, OnceLock};

use mpi::traits::*;

/// This process's host name (MPI processor name, cached).
pub(crate) fn host_name() -> &'static str {
    static H: OnceLock<String> = OnceLock::new();
    H.get_or_init(|| {
        mpi::environment::processor_name().unwrap_or_else(|_| "unknown-host".to_string())
    })
}

/// Host of every world rank this process has heard from in a checkpoint.
fn hosts() -> &'static Mutex<BTreeMap<i32, String>> {
    static H: OnceLock<Mutex<BTreeMap<i32, String>>> = OnceLock::new();
    H.get_or_init(|| Mutex::new(BTreeMap::new()))
}

/// Records `host` as world rank `world`'s host (the first one learnt stays).
pub(crate) fn learn_host(world: i32, host: &str) {
    if let Ok(mut h) = hosts().lock() {
        h.entry(world).or_insert_with(|| host.to_string());
    }
}

/// The world rank of rank `r` of `comm`, and its host as far as this
/// process knows it (from an earlier checkpoint).
fn world_and_host<C: Communicator>(comm: &C, r: i32) -> (Option<i32>, Option<String>) {
    let w = world_rank(comm, r);
    let host = w.and_then(|w| hosts().lock().ok().and_then(|h| h.get(&w).cloned()));
    (w, host)
}

/// The rank in `MPI_COMM_WORLD` of rank `r` of `comm`.
pub(super) fn world_rank<C: Communicator>(comm: &C, r: i32) -> Option<i32> {
    let world_comm = mpi::topology::SimpleCommunicator::world();
    comm.group().translate_rank(r, &world_comm.group())
}

/// The host of rank `r` of `comm` ([`world_and_host`]), `unknown` if not known.
pub(super) fn host_of<C: Communicator>(comm: &C, r: i32) -> String {
    world_and_host(comm, r)
        .1
        .unwrap_or_else(|| "unknown".to_string())
}

/// `rank R (world rank W) on host H` for rank `r` of `comm`, as far as this
/// process knows the host (from an earlier checkpoint).
pub(super) fn describe_rank<C: Communicator>(comm: &C, r: i32) -> String {
    let (w, host) = world_and_host(comm, r);
    let host =
        host.unwrap_or_else(|| "an unknown host (never arrived at a checkpoint)".to_string());
    match w {
        Some(w) if w != r => format!("rank {r} (world rank {w}) on host {host}"),
        _ => format!("rank {r} on host {host}"),
    }
}
