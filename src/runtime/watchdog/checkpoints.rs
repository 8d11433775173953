//! [`Checkpoints`]: the checked entries of one communicator (their
//! counter, root, timeout and two-level tree), kept by every nuce object that
//! owns a communicator.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use mpi::topology::SimpleCommunicator;
use mpi::traits::*;

use super::channels::{live, with_comm, Channel, RawComm};
use super::entry::{entry, Bringing};
use super::tree::Tree;
use super::{timeout_from_env, DEFAULT_TIMEOUT_S};
use crate::error::{Error, Result};

/// Joins the checkpoint under way on channel `channel` (see
/// [`checkpoint_under_way`](super::checkpoint_under_way)), or starts one on
/// `own`'s channel `comm`, as the call `op` bringing `bringing` (collective
/// with whoever is there): the root's verdict.
pub(crate) fn join_checkpoint<C: Communicator>(
    channel: Option<u64>,
    own: &Checkpoints,
    comm: &C,
    op: &str,
    bringing: Bringing,
) -> Result<()> {
    let found = channel.and_then(|id| {
        live().lock().ok().and_then(|l| {
            l.get(&id)
                .map(|c| (c.comm, c.root, c.seq.clone(), c.timeout, c.tree.clone()))
        })
    });
    match found {
        Some((h, root, seq, timeout, tree)) => {
            let n = seq.fetch_add(1, Ordering::SeqCst);
            with_comm(h, |c| {
                entry(c, root, op, n, timeout, tree.as_deref(), bringing)
            })
        }
        None => {
            let n = own.seq.fetch_add(1, Ordering::SeqCst);
            own.register(comm);
            let tree = own.tree.as_deref();
            entry(comm, own.root, op, n, own.timeout, tree, bringing)
        }
    }
}

/// The checkpoints of one communicator: their counter, root and timeout.
/// Every nuce object that owns a communicator ([`Balancer`], arrays,
/// graphs) keeps one and calls [`Checkpoints::check`] at the start of each
/// of its collective verbs.
///
/// [`Balancer`]: crate::runtime::balancer::Balancer
#[derive(Debug)]
pub struct Checkpoints {
    id: u64,
    seq: Arc<AtomicU64>,
    root: i32,
    timeout: Option<Duration>,
    /// The channel a stuck ghost exchange of this object escalates to when
    /// no checkpoint is under way: its balancer's, common to all the
    /// objects the balancer serves.
    parent: Option<u64>,
    /// The two-level entry through host leaders, once the hosts are known.
    tree: Option<Arc<Tree>>,
}

impl Checkpoints {
    /// Checkpoints with `root` and `timeout`, numbered from 0.
    pub fn new(root: i32, timeout: Option<Duration>) -> Checkpoints {
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        Checkpoints {
            id: NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
            seq: Arc::new(AtomicU64::new(0)),
            root,
            timeout,
            parent: None,
            tree: None,
        }
    }

    /// Makes this object's checks follow `parent` (a balancer's): its
    /// timeout, and the channel a stuck ghost exchange escalates to, so
    /// that ranks stuck in exchanges of different objects meet there.
    pub(crate) fn adopt(&mut self, parent: &Checkpoints) {
        self.timeout = parent.timeout;
        self.parent = Some(parent.id);
        self.tree = parent.tree.clone();
    }

    /// Makes the next checkpoints go through host leaders (local; every
    /// rank must do the same): this rank `rank`'s place among the ranks on
    /// hosts `host_of` ([`tree`](super::tree)); `None` makes them flat again. The root
    /// then receives one message per host instead of one per rank.
    pub(crate) fn set_hosts(&mut self, host_of: Option<&[usize]>, rank: i32) {
        self.tree = host_of.map(|h| Arc::new(Tree::new(h, self.root, rank)));
    }

    /// This object's number among the [`Checkpoints`] this process created
    /// (in creation order).
    pub(crate) fn id(&self) -> u64 {
        self.id
    }

    /// The channel a stuck exchange escalates to when none is under way
    /// (see [`Checkpoints::adopt`]).
    pub(crate) fn parent(&self) -> Option<u64> {
        self.parent
    }

    /// A duplicate of `comm` with its checkpoints ([`Checkpoints::entered`]),
    /// after the checked entry of the call `op` on it (collective): how an
    /// object that keeps its own communicator is created.
    pub fn duplicate_checked<C: Communicator>(
        comm: &C,
        op: &str,
    ) -> Result<(SimpleCommunicator, Checkpoints)> {
        let dup = comm.duplicate();
        let cp = Checkpoints::entered(&dup, op, None)?;
        Ok((dup, cp))
    }

    /// Checkpoints of `comm` with root 0 and the timeout of
    /// [`timeout_from_env`], after their first checkpoint, the checked
    /// entry of the call `op` (collective). A malformed timeout is this
    /// rank's refusal of that checkpoint (it waits with
    /// [`DEFAULT_TIMEOUT_S`] meanwhile), as is `refused` (the caller's own
    /// check of this rank's settings): every rank returns the lowest
    /// refusing rank's error. One collective step: the timeout needs no
    /// agreement of its own.
    pub fn entered<C: Communicator>(
        comm: &C,
        op: &str,
        refused: Option<Error>,
    ) -> Result<Checkpoints> {
        let (timeout, bad) = match timeout_from_env() {
            Ok(t) => (t, None),
            Err(e) => (Some(Duration::from_secs_f64(DEFAULT_TIMEOUT_S)), Some(e)),
        };
        let cp = Checkpoints::new(0, timeout);
        cp.check_refusing(comm, op, bad.or(refused).as_ref())?;
        Ok(cp)
    }

    /// Makes the channel known to the registry (for a stuck exchange and a
    /// root that times out); called by every check.
    pub(crate) fn register<C: Communicator>(&self, comm: &C) {
        if let Ok(mut l) = live().lock() {
            l.insert(
                self.id,
                Channel {
                    comm: RawComm(comm.as_raw()),
                    root: self.root,
                    seq: self.seq.clone(),
                    timeout: self.timeout,
                    tree: self.tree.clone(),
                },
            );
        }
    }

    /// The timeout.
    pub fn timeout(&self) -> Option<Duration> {
        self.timeout
    }

    /// Replaces the timeout (local; every rank must do the same).
    pub fn set_timeout(&mut self, timeout: Option<Duration>) {
        self.timeout = timeout;
    }

    /// The next [`checkpoint`](super::checkpoint) on `comm` for the call `op` (collective).
    pub fn check<C: Communicator>(&self, comm: &C, op: &str) -> Result<()> {
        self.check_refusing(comm, op, None)
    }

    /// The next [`refusing_checkpoint`](super::refusing_checkpoint) on `comm` for the call `op`
    /// (collective): a rank whose own input is wrong passes its error as
    /// `refused`, and every rank returns the lowest refusing rank's error,
    /// within the timeout.
    pub fn check_refusing<C: Communicator>(
        &self,
        comm: &C,
        op: &str,
        refused: Option<&Error>,
    ) -> Result<()> {
        let seq = self.seq.fetch_add(1, Ordering::SeqCst);
        self.register(comm);
        let bringing = Bringing {
            refused,
            ..Bringing::default()
        };
        let tree = self.tree.as_deref();
        entry(comm, self.root, op, seq, self.timeout, tree, bringing)
    }
}

impl Drop for Checkpoints {
    fn drop(&mut self) {
        if let Ok(mut l) = live().lock() {
            l.remove(&self.id);
        }
    }
}

/// The checked entry of a free collective function over `comm` (collective):
/// one [`checkpoint`](super::checkpoint) for the call `op` on a duplicate of `comm` (so that its
/// messages never meet the application's), with the timeout of
/// [`timeout_from_env`]. Costs an `MPI_Comm_dup` besides the checkpoint: for
/// coarse calls, not for per-iteration ones (objects keep [`Checkpoints`]).
pub(crate) fn check_entry<C: Communicator>(comm: &C, op: &str) -> Result<()> {
    Checkpoints::duplicate_checked(comm, op).map(drop)
}
