//! The registry of live checked channels (the communicators of nuce's
//! objects, by [`Checkpoints`](super::Checkpoints) id): where a stuck ghost exchange looks for a
//! checkpoint under way or a refusing rank, and where a root that times out
//! looks for ranks waiting at another of nuce's collectives.

use std::collections::BTreeMap;
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use mpi::topology::SimpleCommunicator;
use mpi::traits::*;

use super::tree::Tree;
use crate::runtime::tags::{
    ARRIVE as TAG_ARRIVE, REFUSING as TAG_REFUSING, ROOT_HERE as TAG_ROOT_HERE,
    SUMMARY as TAG_SUMMARY,
};

/// A live checked channel: the raw handle of a [`Checkpoints`](super::Checkpoints)'s
/// communicator, its root, checkpoint counter and timeout.
pub(super) struct Channel {
    pub(super) comm: RawComm,
    pub(super) root: i32,
    pub(super) seq: Arc<AtomicU64>,
    pub(super) timeout: Option<Duration>,
    pub(super) tree: Option<Arc<Tree>>,
}

/// A raw communicator handle in the registry. `MPI_Comm` is a pointer in
/// Open MPI and an integer in MPICH and its derivatives: it is only copied
/// and handed back to MPI, never interpreted.
#[derive(Clone, Copy)]
pub(super) struct RawComm(pub(super) mpi::ffi::MPI_Comm);
// SAFETY: the handle is used only by the thread that owns the communicator
// (the registry is read and written from nuce's calls, on the main thread);
// the registry needs `Send` for its static `Mutex`.
unsafe impl Send for RawComm {}

/// The live checked channels, by [`Checkpoints`](super::Checkpoints) id: a root that times out
/// looks there for ranks waiting at another of nuce's collectives instead,
/// and a stuck ghost exchange for a checkpoint under way
/// ([`checkpoint_under_way`]).
pub(super) fn live() -> &'static Mutex<BTreeMap<u64, Channel>> {
    static L: OnceLock<Mutex<BTreeMap<u64, Channel>>> = OnceLock::new();
    L.get_or_init(|| Mutex::new(BTreeMap::new()))
}

/// Runs `f` on a borrowed communicator for the registered raw handle `h`.
pub(super) fn with_comm<R>(h: RawComm, f: impl FnOnce(&SimpleCommunicator) -> R) -> R {
    // SAFETY: `h` is the handle of a live communicator (removed from the
    // registry when its Checkpoints drop, which happens before the owner
    // frees it); ManuallyDrop keeps this borrowed wrapper from freeing it.
    let comm = std::mem::ManuallyDrop::new(unsafe {
        <SimpleCommunicator as mpi::raw::FromRaw>::from_raw(h.0)
    });
    f(&comm)
}

/// The id of the registered channel whose communicator is `comm` (`u64::MAX` if none).
pub(super) fn channel_id<C: Communicator>(comm: &C) -> u64 {
    let raw = comm.as_raw();
    live()
        .lock()
        .ok()
        .and_then(|l| l.iter().find(|(_, c)| c.comm.0 == raw).map(|(&id, _)| id))
        .unwrap_or(u64::MAX)
}

/// Where a rank refuses a call and has told this rank
/// ([`Bringing::notify`](super::Bringing::notify)): `Some(channel)` — the
/// checked channel (its id) whose checkpoint it joined, or `None` when that
/// is `own`, the caller's own communicator, not (yet) a registered channel
/// on this rank. Probes
/// only; O(number of live channels).
pub(crate) fn refusal_under_way<C: Communicator>(own: &C) -> Option<Option<u64>> {
    live_channel_where(|comm, _| {
        comm.any_process()
            .immediate_probe_with_tag(TAG_REFUSING)
            .is_some()
    })
    .map(Some)
    .or_else(|| {
        own.any_process()
            .immediate_probe_with_tag(TAG_REFUSING)
            .is_some()
            .then(|| Some(channel_id(own)).filter(|&id| id != u64::MAX))
    })
}

/// The id of a checked channel on which a checkpoint has started without
/// this rank: its root has announced itself to this rank, or (when this
/// rank is its root) an arrival message waits. Probes only (nothing is
/// received); O(number of live channels).
pub(crate) fn checkpoint_under_way() -> Option<u64> {
    // Only collectors (the root, host leaders) receive arrivals and
    // summaries, and only they announce themselves: the same test holds
    // for flat and two-level checkpoints.
    live_channel_where(|comm, _| {
        [TAG_ARRIVE, TAG_SUMMARY, TAG_ROOT_HERE]
            .iter()
            .any(|&tag| comm.any_process().immediate_probe_with_tag(tag).is_some())
    })
}

/// The id of the first live checked channel whose communicator and root
/// satisfy `seen` (a probe; the registry's lock is not held meanwhile).
fn live_channel_where(seen: impl Fn(&SimpleCommunicator, i32) -> bool) -> Option<u64> {
    let channels: Vec<(u64, RawComm, i32)> = live()
        .lock()
        .ok()?
        .iter()
        .map(|(&id, c)| (id, c.comm, c.root))
        .collect();
    channels
        .into_iter()
        .find_map(|(id, h, root)| with_comm(h, |comm| seen(comm, root)).then_some(id))
}
