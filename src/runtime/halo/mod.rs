//! Neighbour-only ghost exchanges: nothing goes through the root between
//! balance points.
//!
//! A ghost exchange ([`DistArray2::exchange_ghosts`],
//! [`DistGraph::exchange_ghosts`], `nuce_array_exchange_ghosts` in C) sends
//! one message to each neighbour and receives one from each: no rank talks to
//! the root, so its cost does not grow with the number of ranks. Ranks that
//! disagree are still caught, from what the messages themselves carry:
//!
//! * **the tag is the call.** Every message's tag encodes the exchange's
//!   number on its object and a fingerprint of the call (the object's shape,
//!   ghost width, element size): [`Call::tag`]. A receive is posted for the
//!   tag this rank expects; a neighbour that is at another exchange (it
//!   skipped one, or exchanges another array, another ghost width) sends
//!   another tag, which the waiting rank sees by probing ([`Mismatch`]).
//! * **a stuck exchange escalates.** A rank waits for its neighbours at
//!   most half the timeout. While it waits, it watches nuce's checked
//!   channels (the communicators of the live [`Checkpoints`]): a checkpoint
//!   that starts elsewhere while this rank still waits for a neighbour (the
//!   neighbour went on to a balance point, or the root is there) bounds the
//!   wait by three quarters of the timeout from then, so that this rank
//!   arrives before the root gives up. When the wait ends without its
//!   messages — mismatch, deadline — the rank joins that checkpoint (or its
//!   balancer's, or its object's own) with its call and what it saw: the
//!   root compares the calls of every rank and returns the same error to
//!   all, naming each group's call. A rank that never arrives (stopped,
//!   dead) is named by the root's timeout, with its host. A neighbour that
//!   computes for more than half the timeout between two exchanges is taken
//!   for a departure; when every rank of the checkpoint then comes from a
//!   ghost exchange of the same call that ran out of time (none made
//!   another call, saw another exchange's message or refused), every rank
//!   returns the same [`Error::Timeout`], naming the ranks waited for at the
//!   earliest exchange and their hosts.
//! * **a refusal is told at once.** A rank that cannot take part in an
//!   exchange (its buffer is wrong: [`refuse`]) sends every rank of the
//!   checkpoint it joins an empty notice first; a rank waiting in an
//!   exchange looks for notices once it has waited [`QUIET`] and joins that
//!   checkpoint at once, so every rank returns the refusal within
//!   milliseconds — the refusing rank's neighbours in the same call, the
//!   ranks beyond them at their next exchange or balance point — instead of
//!   after half the timeout. The notices are received after the verdict.
//! * **an error leaves nothing behind.** An exchange that ends in an error
//!   leaves its neighbours' messages unreceived (its receives are
//!   cancelled). The object's next exchanges drain them: messages of its
//!   earlier exchanges of the same call, and, in the first exchange after
//!   the failed one, any message that is not of a later exchange of this
//!   call (the failed exchange may have been another call on some ranks).
//!   When the object goes, what still waits on its communicator is
//!   received, and a communicator with a failed exchange is kept, not
//!   freed (`object::OwnComm`), so that nothing left in
//!   flight reaches a communicator made later on the same MPI context. A
//!   program that catches the error can go on with the same object and
//!   make new ones, under Open MPI and MPICH alike.
//! * **balance points count the exchanges.** An object's checked verbs
//!   (remap, gather) carry its number of exchanges, so a rank that skipped
//!   one without blocking anybody is caught there.
//!
//! `NUCE_CHECK=full` ([`ENV_CHECK`]) makes every exchange a checked entry as
//! well (a round trip to the root per exchange, O(p) there), as MPI
//! correctness tools do: for debugging.
//!
//! Messages are typed MPI messages of the caller's buffers (no header, no
//! serialisation); the wait polls `MPI_Testall` (yielding the core now and
//! then, never sleeping: a rank whose core is shared keeps it as an MPI
//! wait would, and the time it spends off the CPU is measured,
//! see [`super::clock`]) and looks at the checked channels only once it has
//! waited [`QUIET`]. Every MPI return code is checked.
//!
//! [`DistArray2::exchange_ghosts`]: super::array::DistArray2::exchange_ghosts
//! [`DistGraph::exchange_ghosts`]: super::graph::DistGraph::exchange_ghosts

use std::ops::Range;
use std::os::raw::c_int;

use std::time::Duration;

use mpi::ffi;
use mpi::traits::*;
use mpi::Tag;

use crate::error::{Error, Result};
use crate::runtime::comm::{fnv1a, mpi_check};
use crate::runtime::tags::{HALO_COUNT, HALO_FIRST};
use crate::runtime::watchdog::Checkpoints;

mod leftovers;
mod stuck;

pub(crate) use leftovers::retire;
use leftovers::{foreign_message, must_drain, note_abandoned};
use stuck::{escalate, wait, Stuck};

/// Environment variable selecting the checking level of ghost exchanges:
/// `full` makes every exchange a checked entry (a round trip to the root);
/// anything else, or unset, checks from the messages (the default).
pub const ENV_CHECK: &str = "NUCE_CHECK";

/// True when [`ENV_CHECK`] asks for full per-call checking.
pub(crate) fn full_checks_from_env() -> bool {
    std::env::var(ENV_CHECK).is_ok_and(|v| v.trim().eq_ignore_ascii_case("full"))
}

/// How long an exchange waits before it also watches the checked channels.
pub const QUIET: Duration = Duration::from_millis(2);

/// One ghost exchange of one object: its number there and the fingerprint
/// of the call (shape, ghost width, element size, ...).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Call {
    /// The exchange's number on its object (0 for the first).
    pub seq: u64,
    /// Fingerprint of the call's must-match arguments ([`fingerprint`]).
    pub fingerprint: u64,
}

impl Call {
    /// The tag of this exchange's messages: in the halo range, different for
    /// consecutive exchanges of one object, and for different calls unless
    /// their fingerprints collide modulo [`HALO_COUNT`].
    pub fn tag(&self) -> Tag {
        let k = self.fingerprint.wrapping_add(self.seq) % HALO_COUNT as u64;
        HALO_FIRST + k as Tag
    }
}

/// Fingerprint of a call's description (`fnv1a`).
pub fn fingerprint(s: &str) -> u64 {
    fnv1a(s.as_bytes())
}

/// What a waiting rank saw from a neighbour: a message of another exchange.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mismatch {
    /// The neighbour.
    pub rank: i32,
    /// The tag it sent.
    pub tag: Tag,
}

/// A neighbour exchange in flight: its requests (completed ones are
/// `MPI_REQUEST_NULL`) and the neighbour of each.
struct InFlight {
    reqs: Vec<ffi::MPI_Request>,
    peers: Vec<i32>,
    /// How many of the requests are receives (they come first).
    nrecv: usize,
}

thread_local! {
    /// Vectors of finished exchanges, reused by the next ones: an exchange
    /// on the hot path allocates nothing once the first has run.
    static SPARE: std::cell::RefCell<Vec<InFlight>> = const { std::cell::RefCell::new(Vec::new()) };
}

impl InFlight {
    /// Empty vectors (from [`SPARE`] when one is there) for `n` requests.
    fn take(nrecv: usize) -> InFlight {
        SPARE
            .with(|s| s.borrow_mut().pop())
            .map(|mut f| {
                f.reqs.clear();
                f.peers.clear();
                f.nrecv = nrecv;
                f
            })
            .unwrap_or(InFlight {
                reqs: Vec::new(),
                peers: Vec::new(),
                nrecv,
            })
    }

    /// Gives the vectors of a completed exchange back for reuse.
    fn recycle(self) {
        SPARE.with(|s| {
            let mut s = s.borrow_mut();
            if s.len() < 8 {
                s.push(self);
            }
        });
    }
}

/// `MPI_REQUEST_NULL`.
fn null_request() -> ffi::MPI_Request {
    // SAFETY: reading an MPI handle constant exported by mpi-sys.
    unsafe { ffi::RSMPI_REQUEST_NULL }
}

impl InFlight {
    /// True when every request has completed (one `MPI_Testall`: the fast path).
    fn test(&mut self) -> Result<bool> {
        let mut flag: c_int = 0;
        // SAFETY: `reqs` holds `len` requests (null ones count as complete).
        let code = unsafe {
            ffi::MPI_Testall(
                self.reqs.len() as c_int,
                self.reqs.as_mut_ptr(),
                &mut flag,
                ffi::RSMPI_STATUSES_IGNORE,
            )
        };
        mpi_check(code, "MPI_Testall (ghost exchange)")?;
        Ok(flag != 0)
    }

    /// The neighbours whose message has not arrived yet (completes, one by
    /// one, the requests that have: the slow path).
    fn pending_recv_peers(&mut self) -> Result<Vec<i32>> {
        let mut pending = Vec::new();
        let null = null_request();
        for k in 0..self.reqs.len() {
            if self.reqs[k] == null {
                continue;
            }
            let mut flag: c_int = 0;
            // SAFETY: an active request; MPI_Test sets it to null when it completes.
            let code =
                unsafe { ffi::MPI_Test(&mut self.reqs[k], &mut flag, ffi::RSMPI_STATUS_IGNORE) };
            mpi_check(code, "MPI_Test (ghost exchange)")?;
            if flag == 0 && k < self.nrecv && !pending.contains(&self.peers[k]) {
                pending.push(self.peers[k]);
            }
        }
        Ok(pending)
    }

    /// Gives up the requests still pending: receives are cancelled and
    /// completed (their buffers are free again), sends are released to
    /// MPI (their buffer is leaked by the caller, see [`exchange_as`]).
    fn abandon(&mut self) {
        let null = null_request();
        for k in 0..self.reqs.len() {
            if self.reqs[k] == null {
                continue;
            }
            // SAFETY: the request is active; a receive is cancelled and
            // waited for, a send is freed (MPI completes it later, its
            // buffer stays valid because the caller leaks it).
            unsafe {
                if k < self.nrecv {
                    ffi::MPI_Cancel(&mut self.reqs[k]);
                    ffi::MPI_Wait(&mut self.reqs[k], ffi::RSMPI_STATUS_IGNORE);
                } else {
                    ffi::MPI_Request_free(&mut self.reqs[k]);
                }
            }
        }
    }
}

/// What one ghost exchange moved, as seen by **this rank** (an exchange
/// talks to the neighbours only, so no total over the ranks is formed; sum
/// them yourself with a reduction if you need one). Data movements that are
/// collective anyway (scatter, gather, remap) report global totals in
/// [`MoveStats`](super::object::MoveStats) instead.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct ExchangeStats {
    /// Bytes this rank sent to its neighbours.
    pub bytes_sent: u64,
    /// Bytes this rank received from its neighbours.
    pub bytes_received: u64,
    /// Messages this rank sent (one per neighbour it sends to).
    pub messages_sent: u64,
    /// Wall time of the exchange on this rank, in seconds.
    pub seconds: f64,
}

/// The MPI datatype the messages of an exchange are counted in, and how
/// many buffer elements make one of it.
pub(crate) struct Words {
    per: usize,
    dtype: ffi::MPI_Datatype,
}

impl Words {
    /// Byte buffers holding values of `value_bytes` bytes each (every range
    /// a whole number of values): the messages go as the widest unsigned
    /// words that divide a value, which MPI moves faster than bytes.
    pub(crate) fn values(value_bytes: usize) -> Self {
        let (n, dtype) = word_type(value_bytes);
        // Bytes per word (a zero-byte value has no bytes to send).
        let per = value_bytes.checked_div(n).unwrap_or(1);
        Words { per, dtype }
    }
}

/// A value of `bytes` bytes as a count of the widest predefined unsigned
/// word that divides it (8, 4, 2 or 1 bytes), and that word's MPI type.
pub(crate) fn word_type(bytes: usize) -> (usize, ffi::MPI_Datatype) {
    // SAFETY: reading MPI handle constants exported by mpi-sys.
    let (w, t) = unsafe {
        match bytes {
            b if b % 8 == 0 => (8, ffi::RSMPI_UINT64_T),
            b if b % 4 == 0 => (4, ffi::RSMPI_UINT32_T),
            b if b % 2 == 0 => (2, ffi::RSMPI_UINT16_T),
            _ => (1, ffi::RSMPI_UINT8_T),
        }
    };
    (bytes / w, t)
}

/// Sends `sendbuf[range]` to each `(rank, range)` of `sends` and receives
/// into `recvbuf[range]` from each of `recvs`, counted in `words` of the
/// buffers' elements (e.g. [`Words::values`] on byte buffers), with tag
/// [`Call::tag`]; every rank of `comm` that shares a message with another
/// must make the matching call. `cp` is the object's checked channel and
/// timeout; `op` describes the call for errors (evaluated only on the error
/// path).
///
/// Returns when every message has been sent and received. When a neighbour
/// is at another exchange, or the wait outlasts the timeout, the rank
/// escalates (see the module's documentation) and every rank involved
/// returns the same error. Gives the send buffer back for reuse; on error
/// it is leaked (MPI may still read it for a send that nobody will receive).
#[allow(clippy::too_many_arguments)]
pub(crate) fn exchange_as<C: Communicator, T>(
    comm: &C,
    cp: &Checkpoints,
    call: Call,
    op: &dyn Fn() -> String,
    sendbuf: Vec<T>,
    sends: &[(i32, Range<usize>)],
    recvbuf: &mut [T],
    recvs: &[(i32, Range<usize>)],
    words: Words,
) -> Result<Vec<T>> {
    let Words { per, dtype } = words;
    // Every count is checked before anything is posted.
    if let Some((_, r)) = recvs
        .iter()
        .chain(sends)
        .find(|(_, r)| c_int::try_from(r.len() / per).is_err())
    {
        return Err(Error::invalid_input(format!(
            "{} elements exceed MPI's count range",
            r.len()
        )));
    }
    let msg = |(q, r): &(i32, Range<usize>), base: *mut T| Message {
        peer: *q,
        // In bounds: the ranges lie in their buffers (caller's contract).
        buf: base.wrapping_add(r.start).cast(),
        count: (r.len() / per) as c_int,
        dtype,
    };
    let (rbase, sbase) = (recvbuf.as_mut_ptr(), sendbuf.as_ptr().cast_mut());
    let msgs =
        (recvs.iter().map(move |m| msg(m, rbase))).chain(sends.iter().map(move |m| msg(m, sbase)));
    // SAFETY: every message describes `count` elements of T inside
    // `recvbuf` (written) or `sendbuf` (read only), both kept alive until
    // `finish` returns (`sendbuf` is leaked if it fails).
    let posted = unsafe { post(comm, call, recvs.len(), msgs) };
    match posted.and_then(|p| finish(comm, cp, p, op)) {
        Ok(()) => Ok(sendbuf),
        Err(e) => {
            std::mem::forget(sendbuf);
            Err(e)
        }
    }
}

/// One message of a neighbour exchange: `count` items of `dtype` at `buf`,
/// to or from `peer`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Message {
    /// The neighbour's rank.
    pub peer: i32,
    /// Start of the message's data (an MPI buffer address).
    pub buf: *mut std::ffi::c_void,
    /// Number of items of `dtype`.
    pub count: c_int,
    /// A committed MPI datatype (derived ones allowed).
    pub dtype: ffi::MPI_Datatype,
}

/// A neighbour exchange posted by [`post`], to be completed by [`finish`]
/// (between the two the caller may compute on cells the messages do not touch).
pub(crate) struct Posted {
    flight: InFlight,
    call: Call,
}

impl std::fmt::Debug for Posted {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Posted")
            .field("call", &self.call)
            .field("requests", &self.flight.reqs.len())
            .finish()
    }
}

/// Posts the messages `msgs` of exchange `call` (tag [`Call::tag`]) on
/// `comm`: the first `nrecv` are receives, the others sends. Drains first
/// the leftovers of an abandoned exchange. On error nothing stays posted
/// that could write into a receive buffer.
///
/// # Safety
/// Every message's buffer holds `count` items of its datatype, readable
/// (sends) or writable and not otherwise accessed (receives), until
/// [`finish`] returns; after a failing `finish` the send buffers may still
/// be read by MPI (keep them alive or leak them).
pub(crate) unsafe fn post<C: Communicator>(
    comm: &C,
    call: Call,
    nrecv: usize,
    msgs: impl Iterator<Item = Message> + Clone,
) -> Result<Posted> {
    let tag = call.tag();
    if must_drain(comm, call.seq) {
        let peers: Vec<i32> = msgs.clone().take(nrecv).map(|m| m.peer).collect();
        // Leftovers of the abandoned exchange are drained; anything else
        // waiting is left for the wait loop to judge.
        foreign_message(comm, &peers, call)?;
    }
    let mut flight = InFlight::take(nrecv);
    flight.peers.extend(msgs.clone().map(|m| m.peer));
    flight.reqs.resize(flight.peers.len(), null_request());
    let mut posted = Ok(());
    for (k, m) in msgs.enumerate() {
        // SAFETY: the buffer holds `count` items of `dtype` (caller's
        // contract) until the request completes or is cancelled.
        let code = unsafe {
            if k < nrecv {
                ffi::MPI_Irecv(
                    m.buf,
                    m.count,
                    m.dtype,
                    m.peer,
                    tag,
                    comm.as_raw(),
                    &mut flight.reqs[k],
                )
            } else {
                ffi::MPI_Isend(
                    m.buf,
                    m.count,
                    m.dtype,
                    m.peer,
                    tag,
                    comm.as_raw(),
                    &mut flight.reqs[k],
                )
            }
        };
        posted = mpi_check(code, "MPI_Irecv/MPI_Isend (ghost exchange)");
        if posted.is_err() {
            break;
        }
    }
    match posted {
        Ok(()) => Ok(Posted { flight, call }),
        Err(e) => {
            // Requests never posted stay MPI_REQUEST_NULL.
            flight.abandon();
            note_abandoned(comm, call.seq);
            Err(e)
        }
    }
}

/// Waits for the exchange [`post`] started. When a neighbour is at another
/// exchange, or the wait outlasts the timeout, the rank escalates (see the
/// module's documentation) and every rank involved returns the same error;
/// the pending receives are then cancelled and the sends released.
pub(crate) fn finish<C: Communicator>(
    comm: &C,
    cp: &Checkpoints,
    posted: Posted,
    op: &dyn Fn() -> String,
) -> Result<()> {
    let Posted { mut flight, call } = posted;
    let stuck = match wait(comm, cp, call, &mut flight) {
        Ok(None) => {
            flight.recycle();
            return Ok(());
        }
        Ok(Some(stuck)) => Ok(stuck),
        Err(e) => Err(e),
    };
    let waiting_for = flight.pending_recv_peers().unwrap_or_default();
    flight.abandon();
    note_abandoned(comm, call.seq);
    Err(escalate(comm, cp, call, op, stuck?, &waiting_for))
}

/// The exchange `call` that this rank cannot take part in (`why`: e.g. its
/// buffer is wrong): instead of returning alone — its neighbours would wait
/// for its messages until the timeout — it tells every rank and joins the
/// escalation at once, and every rank returns `why` (as [`Error::Remote`]
/// from this rank unless it is the root; see the module's documentation).
pub fn refuse<C: Communicator>(
    comm: &C,
    cp: &Checkpoints,
    call: Call,
    op: &dyn Fn() -> String,
    why: Error,
) -> Error {
    note_abandoned(comm, call.seq);
    escalate(comm, cp, call, op, Stuck::Refused(why), &[])
}

#[cfg(test)]
mod tests {
    use super::*;
    use leftovers::STALE_WINDOW;

    #[test]
    fn tags_stay_in_the_halo_range_and_differ_between_consecutive_exchanges() {
        for fp in [
            0u64,
            1,
            u64::MAX,
            fingerprint("a"),
            fingerprint("DistArray2 64x64"),
        ] {
            let mut last = None;
            for seq in 0..3 * HALO_COUNT as u64 {
                let t = Call {
                    seq,
                    fingerprint: fp,
                }
                .tag();
                assert!((HALO_FIRST..HALO_FIRST + HALO_COUNT).contains(&t));
                assert_ne!(Some(t), last, "fp {fp} seq {seq}");
                last = Some(t);
            }
        }
    }

    #[test]
    fn stale_tags_are_the_window_before_the_call() {
        let fp = fingerprint("DistArray2 64x64");
        for seq in [
            0u64,
            5,
            100,
            HALO_COUNT as u64 - 1,
            3 * HALO_COUNT as u64 + 7,
        ] {
            let call = Call {
                seq,
                fingerprint: fp,
            };
            for d in 1..=STALE_WINDOW {
                let past = Call {
                    seq: seq.wrapping_sub(d),
                    fingerprint: fp,
                };
                assert!(call.is_stale(past.tag()), "seq {seq} d {d}");
            }
            assert!(!call.is_stale(call.tag()));
            for d in 1..=3 {
                let future = Call {
                    seq: seq + d,
                    fingerprint: fp,
                };
                assert!(!call.is_stale(future.tag()), "seq {seq} future {d}");
                assert!(call.is_ahead(future.tag()), "seq {seq} future {d}");
            }
            // A neighbour ahead is never a leftover, one behind never ahead.
            for d in 1..=STALE_WINDOW {
                let past = Call {
                    seq: seq.wrapping_sub(d),
                    fingerprint: fp,
                };
                assert!(!call.is_ahead(past.tag()), "seq {seq} d {d}");
            }
            assert!(!call.is_ahead(call.tag()));
            let far = Call {
                seq: seq.wrapping_sub(STALE_WINDOW + 1),
                fingerprint: fp,
            };
            assert!(!call.is_stale(far.tag()));
        }
    }

    #[test]
    fn fingerprints_differ_for_different_calls() {
        let a = fingerprint("DistArray2::exchange_ghosts on a 64x64 array, ghost 1");
        let b = fingerprint("DistArray2::exchange_ghosts on a 64x64 array, ghost 2");
        assert_ne!(a, b);
        assert_ne!(
            Call {
                seq: 0,
                fingerprint: a
            }
            .tag(),
            Call {
                seq: 0,
                fingerprint: b
            }
            .tag()
        );
    }
}
