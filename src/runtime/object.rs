//! What every distributed object shares (2D and 3D arrays, grids on the
//! application's buffers, graphs): its [`Core`] (its own communicator, the
//! checked channel of its collective verbs, the numbering of its ghost
//! exchanges) and the statistics of a collective data movement. Kept apart
//! from the containers so that none of them imports another for it.

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

/// What every distributed object holds besides its data and layout: its
/// own duplicate of the communicator, the checked channel of its
/// collective verbs ([`Checkpoints`]), and the ghost exchanges made so far,
/// whose numbers are the exchanges' identities ([`halo::Call`]).
pub(crate) struct Core {
    /// The object's communicator.
    pub(crate) comm: OwnComm,
    /// Checked entry of every collective verb ([`super::watchdog::checkpoint`]).
    pub(crate) cp: Checkpoints,
    /// Ghost exchanges made so far (their messages' tags, and the count
    /// the checked verbs compare).
    exchanges: u64,
    /// Every exchange a checked entry too ([`halo::ENV_CHECK`]`=full`).
    full_checks: bool,
}

impl Core {
    /// The core of an object on `comm` (its own duplicate) checked through `cp`.
    pub(crate) fn new(comm: SimpleCommunicator, cp: Checkpoints) -> Self {
        Core {
            comm: OwnComm::new(comm),
            cp,
            exchanges: 0,
            full_checks: halo::full_checks_from_env(),
        }
    }

    /// Ghost exchanges made so far.
    pub(crate) fn exchanges(&self) -> u64 {
        self.exchanges
    }

    /// The identity of the next ghost exchange (its number, then counted,
    /// and the call's `fingerprint`); with [`halo::ENV_CHECK`]`=full` a
    /// checked entry first, naming the call `what()` (made only then).
    pub(crate) fn next_exchange(
        &mut self,
        what: impl FnOnce() -> String,
        fingerprint: u64,
    ) -> Result<halo::Call> {
        if self.full_checks {
            let what = what();
            self.cp.check(
                &*self.comm,
                &format!("{what} (exchange #{})", self.exchanges),
            )?;
        }
        Ok(self.count_exchange(fingerprint))
    }

    /// The identity of the next ghost exchange without any checked entry
    /// (a rank that refuses the exchange takes its place in the sequence).
    pub(crate) fn count_exchange(&mut self, fingerprint: u64) -> halo::Call {
        let call = halo::Call {
            seq: self.exchanges,
            fingerprint,
        };
        self.exchanges += 1;
        call
    }
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
