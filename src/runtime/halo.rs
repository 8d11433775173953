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
//! * **a stuck exchange escalates.** While it waits, a rank watches nuce's
//!   checked channels (the communicators of the live
//!   [`Checkpoints`]): a checkpoint that starts
//!   elsewhere while this rank still waits for a neighbour (the neighbour
//!   went on to a balance point, or the root is there) bounds the wait by
//!   three quarters of the timeout, so that this rank arrives before the root
//!   gives up. When the wait ends without its messages — mismatch, deadline —
//!   the rank joins that checkpoint (or its object's own) with its call and
//!   what it saw: the root compares the calls of every rank and returns the
//!   same error to all, naming each group's call. A rank that never arrives
//!   is named by the root's timeout, with its host.
//! * **balance points count the exchanges.** An object's checked verbs
//!   (remap, gather) carry its number of exchanges, so a rank that skipped
//!   one without blocking anybody is caught there.
//!
//! `NUCE_CHECK=full` ([`ENV_CHECK`]) makes every exchange a checked entry as
//! well (a round trip to the root per exchange, O(p) there), as MPI
//! correctness tools do: for debugging.
//!
//! Messages are typed MPI messages of the caller's buffers (no header, no
//! serialisation); the wait polls `MPI_Testsome` (yielding the core after a
//! spin) and looks at the checked channels only once it has waited
//! [`QUIET`]. Every MPI return code is checked.
//!
//! [`DistArray2::exchange_ghosts`]: super::array::DistArray2::exchange_ghosts
//! [`DistGraph::exchange_ghosts`]: super::graph::DistGraph::exchange_ghosts

use std::ops::Range;
use std::os::raw::c_int;
use std::time::{Duration, Instant};

use mpi::datatype::Equivalence;
use mpi::ffi;
use mpi::raw::AsRaw;
use mpi::traits::*;
use mpi::Tag;

use super::comm::fnv1a;
use super::tags::{HALO_COUNT, HALO_FIRST};
use super::watchdog::{self, Checkpoints};
use crate::error::{Error, Result};

/// Environment variable selecting the checking level of ghost exchanges:
/// `full` makes every exchange a checked entry (a round trip to the root);
/// anything else, or unset, checks from the messages (the default).
pub const ENV_CHECK: &str = "NUCE_CHECK";

/// True when [`ENV_CHECK`] asks for full per-call checking.
pub fn full_checks_from_env() -> bool {
    std::env::var(ENV_CHECK).is_ok_and(|v| v.trim().eq_ignore_ascii_case("full"))
}

/// How long an exchange waits before it also watches the checked channels.
pub const QUIET: Duration = Duration::from_millis(2);

/// Share of the timeout an exchange still waits once a checkpoint has started
/// elsewhere (the root's own wait is the whole timeout: this rank must arrive first).
const AFTER_CHECKPOINT: f64 = 0.75;

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

/// Fingerprint of a call's description ([`fnv1a`]).
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

/// Converts an MPI return code into an error naming the call.
pub fn mpi_check(code: c_int, what: &str) -> Result<()> {
    if code == ffi::MPI_SUCCESS as c_int {
        return Ok(());
    }
    let mut buf = vec![0u8; ffi::MPI_MAX_ERROR_STRING as usize + 1];
    let mut len: c_int = 0;
    let mut class: c_int = 0;
    // SAFETY: the buffer holds MPI_MAX_ERROR_STRING bytes; the out-pointers are valid.
    unsafe {
        ffi::MPI_Error_string(code, buf.as_mut_ptr().cast(), &mut len);
        ffi::MPI_Error_class(code, &mut class);
    }
    let text = String::from_utf8_lossy(&buf[..len.clamp(0, buf.len() as c_int) as usize]);
    Err(Error::InvalidInput(format!(
        "MPI error in {what}: class {class}, code {code}: {text}"
    )))
}

/// A neighbour exchange in flight: its requests and what they point at.
struct InFlight {
    reqs: Vec<ffi::MPI_Request>,
    /// The neighbour of each request.
    peers: Vec<i32>,
    /// How many of the requests are receives (they come first).
    nrecv: usize,
    done: Vec<bool>,
}

impl InFlight {
    fn pending_recv_peers(&self) -> Vec<i32> {
        (0..self.nrecv)
            .filter(|&k| !self.done[k])
            .map(|k| self.peers[k])
            .collect()
    }

    /// Completes what has completed; true when everything has.
    fn test(&mut self) -> Result<bool> {
        let n = self.reqs.len();
        if self.done.iter().all(|&d| d) {
            return Ok(true);
        }
        let mut outcount: c_int = 0;
        let mut indices = vec![0 as c_int; n];
        // SAFETY: `reqs` holds `n` requests (completed ones are MPI_REQUEST_NULL,
        // which MPI_Testsome ignores); `indices` has room for `n` entries.
        let code = unsafe {
            ffi::MPI_Testsome(
                n as c_int,
                self.reqs.as_mut_ptr(),
                &mut outcount,
                indices.as_mut_ptr(),
                ffi::RSMPI_STATUSES_IGNORE,
            )
        };
        mpi_check(code, "MPI_Testsome (ghost exchange)")?;
        if outcount > 0 {
            for &i in &indices[..outcount as usize] {
                self.done[i as usize] = true;
            }
        }
        Ok(self.done.iter().all(|&d| d))
    }

    /// Gives up the requests still pending: receives are cancelled and
    /// completed (their buffers are free again), sends are released to
    /// MPI (their buffer is leaked by the caller, see [`exchange`]).
    fn abandon(&mut self) {
        for k in 0..self.reqs.len() {
            if self.done[k] {
                continue;
            }
            // SAFETY: the request is active (not completed); a receive is
            // cancelled and waited for, a send is freed (MPI completes it
            // later, its buffer stays valid because the caller leaks it).
            unsafe {
                if k < self.nrecv {
                    ffi::MPI_Cancel(&mut self.reqs[k]);
                    ffi::MPI_Wait(&mut self.reqs[k], ffi::RSMPI_STATUS_IGNORE);
                } else {
                    ffi::MPI_Request_free(&mut self.reqs[k]);
                }
            }
            self.done[k] = true;
        }
    }
}

/// Looks for a message of another exchange from one of `peers` (probing
/// without receiving it): the first one found.
fn foreign_message<C: Communicator>(
    comm: &C,
    peers: &[i32],
    expected: Tag,
) -> Result<Option<Mismatch>> {
    for &q in peers {
        let mut flag: c_int = 0;
        let mut status = std::mem::MaybeUninit::<ffi::MPI_Status>::uninit();
        // SAFETY: valid communicator handle, flag and status out-pointers.
        let code = unsafe {
            ffi::MPI_Iprobe(
                q,
                ffi::RSMPI_ANY_TAG,
                comm.as_raw(),
                &mut flag,
                status.as_mut_ptr(),
            )
        };
        mpi_check(code, "MPI_Iprobe (ghost exchange)")?;
        if flag == 0 {
            continue;
        }
        // SAFETY: MPI_Iprobe set `status` when flag is true.
        let tag = unsafe { status.assume_init() }.MPI_TAG;
        if tag != expected && (HALO_FIRST..HALO_FIRST + HALO_COUNT).contains(&tag) {
            return Ok(Some(Mismatch { rank: q, tag }));
        }
    }
    Ok(None)
}

/// Why a wait ended without its messages.
enum Stuck {
    /// A neighbour sent a message of another exchange (and the checked
    /// channel where a checkpoint is under way, if one was seen).
    Mismatch(Mismatch, Option<u64>),
    /// The deadline passed (the timeout, or less once a checkpoint started
    /// on `channel`).
    Deadline { channel: Option<u64> },
}

/// Polls an exchange makes without yielding the core before it yields.
const SPIN: u32 = 64;

/// Sends `sendbuf[range]` to each `(rank, range)` of `sends` and receives
/// into `recvbuf[range]` from each of `recvs`, with tag [`Call::tag`]; every
/// rank of `comm` that shares a message with another must make the matching
/// call. `cp` is the object's checked channel and timeout; `op` describes the
/// call for errors (evaluated only on the error path).
///
/// Returns when every message has been sent and received. When a neighbour
/// is at another exchange, or the wait outlasts the timeout, the rank
/// escalates (see the module's documentation) and every rank involved
/// returns the same error. On error the send buffer is leaked (MPI may
/// still read it for a send that nobody will receive).
#[allow(clippy::too_many_arguments)]
pub fn exchange<C: Communicator, T: Equivalence>(
    comm: &C,
    cp: &Checkpoints,
    call: Call,
    op: &dyn Fn() -> String,
    sendbuf: Vec<T>,
    sends: &[(i32, Range<usize>)],
    recvbuf: &mut [T],
    recvs: &[(i32, Range<usize>)],
) -> Result<()> {
    let tag = call.tag();
    let dtype = T::equivalent_datatype();
    let n = recvs.len() + sends.len();
    let mut flight = InFlight {
        // SAFETY: reading an MPI handle constant exported by mpi-sys.
        reqs: vec![unsafe { ffi::RSMPI_REQUEST_NULL }; n],
        peers: Vec::with_capacity(n),
        nrecv: recvs.len(),
        done: vec![false; n],
    };
    let count = |r: &Range<usize>| {
        c_int::try_from(r.len()).map_err(|_| {
            Error::InvalidInput(format!("{} elements exceed MPI's count range", r.len()))
        })
    };
    // Every count is checked before anything is posted.
    let rcounts = recvs
        .iter()
        .map(|(_, r)| count(r))
        .collect::<Result<Vec<_>>>()?;
    let scounts = sends
        .iter()
        .map(|(_, r)| count(r))
        .collect::<Result<Vec<_>>>()?;
    let mut posted = Ok(());
    for (k, (q, r)) in recvs.iter().enumerate() {
        let c = rcounts[k];
        let buf = &mut recvbuf[r.clone()];
        // SAFETY: `buf` holds `c` elements of T, described by `dtype`; it
        // stays borrowed until the request completes or is cancelled below.
        let code = unsafe {
            ffi::MPI_Irecv(
                buf.as_mut_ptr().cast(),
                c,
                dtype.as_raw(),
                *q,
                tag,
                comm.as_raw(),
                &mut flight.reqs[k],
            )
        };
        flight.peers.push(*q);
        if let Err(e) = mpi_check(code, "MPI_Irecv (ghost exchange)") {
            flight.done[k] = true;
            posted = Err(e);
            break;
        }
    }
    if posted.is_ok() {
        for (k, (q, r)) in sends.iter().enumerate() {
            let at = recvs.len() + k;
            let c = scounts[k];
            let buf = &sendbuf[r.clone()];
            // SAFETY: `buf` holds `c` elements of T; `sendbuf` outlives the
            // request (it is leaked if the request is abandoned).
            let code = unsafe {
                ffi::MPI_Isend(
                    buf.as_ptr().cast(),
                    c,
                    dtype.as_raw(),
                    *q,
                    tag,
                    comm.as_raw(),
                    &mut flight.reqs[at],
                )
            };
            flight.peers.push(*q);
            if let Err(e) = mpi_check(code, "MPI_Isend (ghost exchange)") {
                flight.done[at] = true;
                posted = Err(e);
                break;
            }
        }
    }
    // Requests never posted (after an error) count as done.
    for k in flight.peers.len()..n {
        flight.done[k] = true;
    }
    let stuck = match posted.and_then(|()| wait(comm, cp, tag, &mut flight)) {
        Ok(None) => return Ok(()),
        Ok(Some(stuck)) => Ok(stuck),
        Err(e) => Err(e),
    };
    let waiting_for = flight.pending_recv_peers();
    flight.abandon();
    std::mem::forget(sendbuf);
    escalate(comm, cp, call, op, stuck?, &waiting_for)
}

/// Polls the exchange until it completes (`None`) or is stuck.
fn wait<C: Communicator>(
    comm: &C,
    cp: &Checkpoints,
    tag: Tag,
    flight: &mut InFlight,
) -> Result<Option<Stuck>> {
    let start = Instant::now();
    let mut deadline = cp.timeout().map(|t| start + t);
    let mut channel = None;
    let (mut spins, mut polls) = (0u32, 0u32);
    loop {
        if flight.test()? {
            return Ok(None);
        }
        let now = Instant::now();
        if now - start >= QUIET {
            let pending = flight.pending_recv_peers();
            if let Some(m) = foreign_message(comm, &pending, tag)? {
                // The message may belong to the next exchange of a neighbour
                // whose message for this one just arrived: test again.
                if !flight.test()? && flight.pending_recv_peers().contains(&m.rank) {
                    return Ok(Some(Stuck::Mismatch(m, channel)));
                }
            }
            if channel.is_none() {
                channel = watchdog::checkpoint_under_way();
                if let (Some(_), Some(t)) = (channel, cp.timeout()) {
                    let bound = now + t.mul_f64(AFTER_CHECKPOINT);
                    deadline = Some(deadline.map_or(bound, |d| d.min(bound)));
                }
            }
            if deadline.is_some_and(|d| now >= d) {
                return Ok(Some(Stuck::Deadline { channel }));
            }
        }
        if spins < SPIN {
            spins += 1;
        } else {
            watchdog::pause(&mut polls);
        }
    }
}

/// Turns a stuck exchange into the same error on every rank involved: joins
/// the checkpoint under way on one of nuce's channels (or starts one on the
/// object's own) with this rank's call and what it saw.
fn escalate<C: Communicator>(
    comm: &C,
    cp: &Checkpoints,
    call: Call,
    op: &dyn Fn() -> String,
    stuck: Stuck,
    waiting_for: &[i32],
) -> Result<()> {
    let what = op();
    let (seen, channel) = match stuck {
        Stuck::Mismatch(m, channel) => (
            format!(
                "{what} (exchange #{}): rank {} sent a ghost message of another exchange \
                 (another object, shape, ghost width or element type, or another count of exchanges)",
                call.seq, m.rank
            ),
            channel,
        ),
        Stuck::Deadline { channel } => (
            format!(
                "{what} (exchange #{}): no ghost message from rank(s) {waiting_for:?} within the timeout",
                call.seq
            ),
            channel,
        ),
    };
    let verdict = watchdog::join_checkpoint(channel.or(cp.parent()), cp, comm, &seen);
    // Every rank that arrives with the same text gets Ok from the root:
    // the exchange failed all the same, with the same text everywhere.
    verdict.and(Err(Error::InvalidInput(format!(
        "the ranks disagree on a ghost exchange: {seen}"
    ))))
}

#[cfg(test)]
mod tests {
    use super::*;

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
