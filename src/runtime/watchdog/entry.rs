//! The flat checked entry: every rank's arrival message to the root, the
//! root's verdict to every rank, and the refusal notices of a rank that
//! refuses the call ([`Bringing::notify`]). The two-level entry through host
//! leaders (module `tree`) reuses its messages and its halves.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use mpi::point_to_point::MatchedReceiveVec;
use mpi::traits::*;
use serde::{Deserialize, Serialize};

use super::elsewhere;
use super::errors::missing_at_member;
use super::guard::InCheckpoint;
use super::hosts::{host_name, learn_host};
use super::tree::{self, Tally, Tree};
use super::{abort_job, ROOT_FIRST};
use crate::error::{Error, Result};
use crate::runtime::clock::Poller;
use crate::runtime::comm::{decode, encode};
use crate::runtime::tags::{
    ARRIVE as TAG_ARRIVE, REFUSING as TAG_REFUSING, ROOT_HERE as TAG_ROOT_HERE,
    VERDICT as TAG_VERDICT,
};

/// What a rank tells the root when it arrives at a [`checkpoint`].
#[derive(Serialize, Deserialize)]
pub(super) struct Arrival {
    /// The checkpoint's number on this communicator.
    pub(super) seq: u64,
    /// The call with its must-match arguments.
    pub(super) op: String,
    /// This process's host (MPI processor name).
    pub(super) host: String,
    /// This process's rank in `MPI_COMM_WORLD`.
    pub(super) world: i32,
    /// Why this rank cannot make the call (its own input is wrong): the
    /// error every rank then returns.
    pub(super) refused: Option<Error>,
    /// The ghost exchange this rank stopped waiting in, if it comes from one.
    pub(super) stalled: Option<Stalled>,
    /// Whether this rank told every rank of the communicator that it
    /// refuses ([`Bringing::notify`]).
    pub(super) notified: bool,
}

impl Arrival {
    /// This rank's arrival at checkpoint `seq` of the call `op`, with what
    /// it brings.
    pub(super) fn own(seq: u64, op: &str, world: i32, bringing: &Bringing) -> Arrival {
        Arrival {
            seq,
            op: op.to_string(),
            host: host_name().to_string(),
            world,
            refused: bringing.refused.cloned(),
            stalled: bringing.stalled.cloned(),
            notified: bringing.notify,
        }
    }
}

/// A rank that stopped waiting for its neighbours' ghost messages and
/// comes to a checkpoint from its exchange (`runtime::halo`): when every
/// rank of the checkpoint comes stalled from an exchange of the same call
/// and object, and none refuses, the verdict is an [`Error::Timeout`] naming the ranks
/// waited for ([`stalled_verdict`](super::errors::stalled_verdict)).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct Stalled {
    /// The exchange's call (object, shape, ghost width, ...), without its number.
    pub(crate) call: String,
    /// The exchanging object's [`Checkpoints::id`](super::Checkpoints::id) (the same on every rank
    /// when the ranks create their objects in the same order; two objects
    /// of the same shape differ there).
    pub(crate) object: u64,
    /// The exchange's number on its object.
    pub(crate) seq: u64,
    /// The neighbours whose messages did not come.
    pub(crate) waiting_for: Vec<i32>,
    /// How long this rank waited, in seconds.
    pub(crate) waited: f64,
}

/// What a rank brings to a checkpoint besides its call.
#[derive(Clone, Copy, Default)]
pub(crate) struct Bringing<'a> {
    /// Its own input is wrong: the error every rank returns.
    pub(crate) refused: Option<&'a Error>,
    /// It comes stalled from a ghost exchange.
    pub(crate) stalled: Option<&'a Stalled>,
    /// With `refused`: tell every rank of the communicator first (an empty
    /// message each), so that ranks waiting for this rank in a ghost
    /// exchange join the checkpoint at once
    /// ([`refusal_under_way`](super::refusal_under_way)) instead of waiting
    /// out the timeout. Every rank receives those messages after the verdict
    /// (which lists the ranks that sent them).
    pub(crate) notify: bool,
}

/// The root's answer: its host and world rank, and the verdict.
#[derive(Serialize, Deserialize)]
pub(super) struct Verdict {
    host: String,
    world: i32,
    error: Option<Error>,
    /// The ranks that sent every rank a refusal notice
    /// ([`Bringing::notify`]): each rank receives them after the verdict.
    notifiers: Vec<i32>,
}

/// Checked collective entry over `comm` (collective): returns when every
/// rank has called it with the same `root`, and checks that all make the
/// same call. `op` names the call and the arguments that must match (e.g.
/// `Balancer::plan(300x240)`); `seq` numbers the checkpoints of `comm` (the
/// caller keeps one counter per communicator, see `Checkpoints`).
///
/// Every rank sends the root an arrival message (`seq`, `op`, its host);
/// the root compares them with its own and answers every rank with the same
/// verdict: a different call or checkpoint number on any rank is the same
/// [`Error::Disagreement`] on every rank, naming the call of each group of
/// ranks, before anyone waits on data.
///
/// With a `timeout`, a rank that does not arrive in time — slow, stopped or
/// dead — ends the job: the root prints the `abort_message` of an
/// [`Error::Timeout`],
/// `nuce: timeout: rank(s) [..] of P did not reach <op> within T s (…)`, each
/// missing rank with its host (learnt from earlier checkpoints), and calls
/// `MPI_Abort`; the other ranks do the same `ROOT_FIRST` later, naming the
/// root, if the root did not. Without a timeout, the waits are unbounded,
/// as MPI's. Cost: `3(p − 1)` small messages to and from the root, O(p · |op|)
/// work at the root (flat: the two-level entry through host leaders is
/// for `Checkpoints` whose balancer knows its hosts, module `tree`).
pub fn checkpoint<C: Communicator>(
    comm: &C,
    root: i32,
    op: &str,
    seq: u64,
    timeout: Option<Duration>,
) -> Result<()> {
    refusing_checkpoint(comm, root, op, seq, timeout, None)
}

/// [`checkpoint`] where this rank may *refuse* the call (`refused`: its own
/// input is wrong, e.g. a buffer of the wrong size): then every rank
/// returns the lowest refusing rank's error (wrapped in
/// [`Error::Remote`] unless it is the root's), as
/// [`agree`](crate::runtime::comm::agree) does — the refusal takes
/// precedence over calls that differ.
pub(crate) fn refusing_checkpoint<C: Communicator>(
    comm: &C,
    root: i32,
    op: &str,
    seq: u64,
    timeout: Option<Duration>,
    refused: Option<&Error>,
) -> Result<()> {
    let bringing = Bringing {
        refused,
        ..Bringing::default()
    };
    entry(comm, root, op, seq, timeout, None, bringing)
}

/// [`refusing_checkpoint`] with all a rank may bring ([`Bringing`]): in
/// two levels through `tree` when it fits the communicator and root
/// ([`tree`]), flat otherwise.
pub(super) fn entry<C: Communicator>(
    comm: &C,
    root: i32,
    op: &str,
    seq: u64,
    timeout: Option<Duration>,
    tree: Option<&Tree>,
    bringing: Bringing,
) -> Result<()> {
    let size = comm.size();
    if !(0..size).contains(&root) {
        return Err(Error::invalid_input(format!(
            "checkpoint root {root} is not a rank of a communicator of size {size}"
        )));
    }
    let _in = InCheckpoint::enter();
    let world = mpi::topology::SimpleCommunicator::world().rank();
    learn_host(world, host_name());
    let bringing = Bringing {
        notify: bringing.notify && bringing.refused.is_some(),
        ..bringing
    };
    if bringing.notify {
        notify_refusal(comm);
    }
    if let Some(t) = tree.filter(|t| t.fits(comm, root)) {
        return tree::entry(comm, t, op, seq, timeout, world, bringing);
    }
    if comm.rank() == root {
        root_side(comm, root, op, seq, timeout, world, bringing)
    } else {
        let arrival = encode(&Arrival::own(seq, op, world, &bringing))?;
        member_side(comm, root, op, timeout, &arrival)
    }
}

/// Arrival messages this process has received as the root of a checkpoint.
pub(super) static ARRIVALS: AtomicU64 = AtomicU64::new(0);
/// The bytes of those messages.
pub(super) static ARRIVAL_BYTES: AtomicU64 = AtomicU64::new(0);

/// How many checkpoint arrival messages this process has received as a
/// collector: as a root, or as a host's leader in two-level checkpoints,
/// where the root receives one summary per host (module `tree`) (a diagnostic:
/// ghost exchanges add none, unless `NUCE_CHECK=full`).
pub fn arrivals_received() -> u64 {
    ARRIVALS.load(Ordering::Relaxed)
}

/// The bytes of the checkpoint messages counted by [`arrivals_received`].
pub fn arrival_bytes_received() -> u64 {
    ARRIVAL_BYTES.load(Ordering::Relaxed)
}

/// The root's part of a flat [`checkpoint`]: every other rank's arrival,
/// then the verdict to each.
fn root_side<C: Communicator>(
    comm: &C,
    root: i32,
    op: &str,
    seq: u64,
    timeout: Option<Duration>,
    world: i32,
    bringing: Bringing,
) -> Result<()> {
    let others: Vec<i32> = (0..comm.size()).filter(|&r| r != root).collect();
    let mut tally = Tally::own(root, seq, op, &bringing);
    let limit = timeout.unwrap_or_default();
    let late = |missing| elsewhere::found_or_end(comm, root, op, limit, missing);
    match tree::collect_arrivals(comm, &others, seq, timeout, &mut tally, late) {
        Ok(()) => decide(comm, root, op, seq, world, tally, &others),
        Err(found) => elsewhere::settle(comm, (root, world), (op, seq), tally, &others, found),
    }
}

/// The root's verdict from `tally`, sent to `to` (every other rank, or
/// the host leaders, who forward it); then the refusal notices.
pub(super) fn decide<C: Communicator>(
    comm: &C,
    root: i32,
    op: &str,
    seq: u64,
    world: i32,
    tally: Tally,
    to: &[i32],
) -> Result<()> {
    let notifiers = tally.notifiers();
    let error = tally.verdict(comm, root, op, seq);
    answer(comm, to, world, error, &notifiers)
}

/// Sends the verdict `error` (with the refusal notices' senders
/// `notifiers`) of root `world` (its world rank) to `to`, ranks of `comm`;
/// then receives the notices; returns the verdict.
pub(super) fn answer<C: Communicator>(
    comm: &C,
    to: &[i32],
    world: i32,
    error: Option<Error>,
    notifiers: &[i32],
) -> Result<()> {
    let verdict = encode(&Verdict {
        host: host_name().to_string(),
        world,
        error: error.clone(),
        notifiers: notifiers.to_vec(),
    })?;
    send_to(comm, to, &verdict, TAG_VERDICT);
    receive_notices(comm, notifiers);
    match error {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

/// A non-root rank's part of a flat [`checkpoint`].
fn member_side<C: Communicator>(
    comm: &C,
    root: i32,
    op: &str,
    timeout: Option<Duration>,
    arrival: &[u8],
) -> Result<()> {
    let limit = timeout.map(|t| t + ROOT_FIRST);
    let (verdict, _) = await_verdict(comm, (root, "the root"), op, limit, (arrival, TAG_ARRIVE))?;
    accept(comm, verdict)
}

/// Sends `bytes` with `tag` to `parent` (the root, or this rank's host
/// leader, with the words that name its role) and waits for its "here" and
/// its verdict: the verdict, decoded and as received. Past `limit` it ends
/// the job naming `parent` if it never announced itself.
pub(super) fn await_verdict<C: Communicator>(
    comm: &C,
    (parent, role): (i32, &str),
    op: &str,
    limit: Option<Duration>,
    (bytes, tag): (&[u8], mpi::Tag),
) -> Result<(Verdict, Vec<u8>)> {
    let start = Instant::now();
    let raw = mpi::request::scope(|scope| {
        let send = comm
            .process_at_rank(parent)
            .immediate_send_with_tag(scope, bytes, tag);
        let from = comm.process_at_rank(parent);
        let mut here = false;
        let mut polls = Poller::default();
        let raw = loop {
            if !here {
                if let Some((msg, _)) = from.immediate_matched_probe_with_tag(TAG_ROOT_HERE) {
                    let mut theirs = 0u64;
                    msg.matched_receive_into(&mut theirs);
                    here = true;
                }
            }
            if here {
                if let Some(m) = from.immediate_matched_probe_with_tag(TAG_VERDICT) {
                    break m.matched_receive_vec::<u8>().0;
                }
            }
            if let Some(limit) = limit.filter(|l| start.elapsed() > *l) {
                abort_job(&missing_at_member(comm, parent, op, limit, here, role));
            }
            polls.pause();
        };
        send.wait();
        raw
    });
    Ok((decode::<Verdict>(&raw, parent)?, raw))
}

/// A rank's end of a checkpoint with the root's verdict: learns the root's
/// host, receives the refusal notices, returns the verdict's error.
pub(super) fn accept<C: Communicator>(comm: &C, verdict: Verdict) -> Result<()> {
    learn_host(verdict.world, &verdict.host);
    receive_notices(comm, &verdict.notifiers);
    match verdict.error {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

/// Sends `bytes` with `tag` to each of `ranks` of `comm`, and waits until
/// the sends complete.
pub(super) fn send_to<C: Communicator>(comm: &C, ranks: &[i32], bytes: &[u8], tag: mpi::Tag) {
    mpi::request::scope(|scope| {
        let sends: Vec<_> = ranks
            .iter()
            .map(|&r| {
                comm.process_at_rank(r)
                    .immediate_send_with_tag(scope, bytes, tag)
            })
            .collect();
        for s in sends {
            s.wait();
        }
    });
}

/// Tells every other rank of `comm` that this rank refuses the call it
/// brings to the checkpoint (an empty message each; [`Bringing::notify`]).
fn notify_refusal<C: Communicator>(comm: &C) {
    let me = comm.rank();
    let others: Vec<i32> = (0..comm.size()).filter(|&r| r != me).collect();
    send_to(comm, &others, &[], TAG_REFUSING);
}

/// Receives the refusal notice of each of `notifiers` (other than this
/// rank): each sent one to every rank before its arrival.
fn receive_notices<C: Communicator>(comm: &C, notifiers: &[i32]) {
    for &r in notifiers.iter().filter(|&&r| r != comm.rank()) {
        let _ = comm
            .process_at_rank(r)
            .receive_vec_with_tag::<u8>(TAG_REFUSING);
    }
}
