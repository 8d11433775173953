//! What every distributed object shares (2D and 3D arrays, grids on the
//! application's buffers, graphs): the statistics of a collective data
//! movement, the numbering of ghost exchanges, MPI counts. Kept apart from
//! the containers so that none of them imports another for it.

use std::mem::ManuallyDrop;
use std::ops::Deref;
use std::time::Instant;

use mpi::topology::SimpleCommunicator;
use mpi::traits::*;
use serde::{Deserialize, Serialize};

use super::comm::{max_f64, sum_f64};
use super::halo;
use super::watchdog::Checkpoints;
use crate::error::Result;
use crate::plan::array3d::GridPlan3;

/// The communicator an object keeps for itself (a duplicate of its
/// balancer's), for its ghost exchanges and movements. It is freed with the
/// object unless a ghost exchange on it ended in an error on this rank or a
/// message was still waiting on it (which it then receives): such a communicator
/// is kept, never freed, so that MPI cannot hand its context to a new
/// communicator that a message the failed call left behind would reach
/// (MPICH reuses contexts at once; the message would then be taken for a
/// disagreement on the new object, or block its collectives).
pub struct OwnComm(ManuallyDrop<SimpleCommunicator>);

impl OwnComm {
    /// Takes ownership of `comm`.
    pub(crate) fn new(comm: SimpleCommunicator) -> Self {
        OwnComm(ManuallyDrop::new(comm))
    }
}

impl Deref for OwnComm {
    type Target = SimpleCommunicator;
    fn deref(&self) -> &SimpleCommunicator {
        &self.0
    }
}

impl Drop for OwnComm {
    fn drop(&mut self) {
        if halo::retire(&*self.0) {
            // SAFETY: dropped once, here; the field is never used again.
            unsafe { ManuallyDrop::drop(&mut self.0) }
        }
    }
}

/// What a collective data movement (scatter, gather, remap) moved, summed
/// over all ranks (identical on every rank). A ghost exchange reports this
/// rank's own numbers instead: [`ExchangeStats`](super::halo::ExchangeStats).
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct MoveStats {
    /// Bytes sent between different ranks (data kept in place is not counted).
    pub bytes: u64,
    /// Number of non-empty (sender, receiver) messages between different ranks.
    pub messages: u64,
    /// Largest number of bytes sent plus received by one rank.
    pub max_rank_bytes: u64,
    /// Wall time of the operation, maximum over ranks, in seconds.
    pub seconds: f64,
}

/// Global statistics of one movement: this rank sent `sent` bytes and moved
/// `mine` bytes in all (sent + received) in `msgs` messages since `start`.
pub(crate) fn global_stats<C: Communicator>(
    comm: &C,
    sent: usize,
    mine: usize,
    msgs: usize,
    start: Instant,
) -> MoveStats {
    MoveStats {
        bytes: sum_f64(comm, sent as f64) as u64,
        messages: sum_f64(comm, msgs as f64) as u64,
        max_rank_bytes: max_f64(comm, mine as f64) as u64,
        seconds: max_f64(comm, start.elapsed().as_secs_f64()),
    }
}

/// The identity of an object's next ghost exchange (its number `*exchanges`,
/// then incremented, and the call's `fingerprint`); with `full = Some(call
/// description)` ([`halo::ENV_CHECK`]`=full`) a checked entry first.
pub(crate) fn next_call<C: Communicator>(
    comm: &C,
    cp: &Checkpoints,
    full: Option<&str>,
    exchanges: &mut u64,
    fingerprint: u64,
) -> Result<halo::Call> {
    if let Some(what) = full {
        cp.check(comm, &format!("{what} (exchange #{exchanges})"))?;
    }
    let call = halo::Call {
        seq: *exchanges,
        fingerprint,
    };
    *exchanges += 1;
    Ok(call)
}

/// Per-rank `(cells sent + received, messages sent + received)` of a move
/// from `old` to `new` (cells that change owner only). `O(p²)`.
pub(crate) fn migration_volume3(old: &GridPlan3, new: &GridPlan3) -> Vec<(usize, usize)> {
    let mut vol = vec![(0, 0); old.len()];
    for (a, ob) in old.boxes.iter().enumerate() {
        for (b, nb) in new.boxes.iter().enumerate().filter(|(b, _)| *b != a) {
            if let Some(x) = ob.intersect(nb) {
                for r in [a, b] {
                    if let Some(v) = vol.get_mut(r) {
                        v.0 += x.volume();
                        v.1 += 1;
                    }
                }
            }
        }
    }
    vol
}
