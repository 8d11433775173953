//! The wait of an exchange, and what happens when it does not complete: a
//! neighbour at another exchange, a refusal told by another rank, or the
//! deadline; the escalation joins a checkpoint so that every rank involved
//! returns the same error (the parent module's documentation).

use std::time::Instant;

use mpi::traits::*;

use super::leftovers::foreign_message;
use super::{Call, InFlight, Mismatch};
use crate::error::{Error, Result};
use crate::runtime::clock::Poller;
use crate::runtime::halo::QUIET;
use crate::runtime::watchdog::{self, Bringing, Checkpoints, Stalled};

/// Share of the timeout an exchange still waits once a checkpoint has started
/// elsewhere (the root's own wait is the whole timeout: this rank must arrive first).
const AFTER_CHECKPOINT: f64 = 0.75;

/// Share of the timeout an exchange waits for its neighbours when no
/// checkpoint is under way: the escalation's checkpoint then still has a
/// whole timeout to name a neighbour that never comes, and starts before a
/// watchdog guard armed by the application for the whole phase fires.
const ALONE: f64 = 0.5;

/// Why a wait ended without its messages.
pub(super) enum Stuck {
    /// A neighbour sent a message of another exchange (and the checked
    /// channel where a checkpoint is under way, if one was seen).
    Mismatch(Mismatch, Option<u64>),
    /// The deadline passed (the timeout, or less once a checkpoint started
    /// on `channel`) after `waited` seconds.
    Deadline { channel: Option<u64>, waited: f64 },
    /// This rank cannot take part (e.g. its buffer is wrong): why.
    Refused(Error),
    /// Another rank refused a call and told this one
    /// ([`watchdog::refusal_under_way`]): the checked channel whose
    /// checkpoint it joined (`None`: the object's own).
    Notified(Option<u64>),
}

/// How often a waiting exchange looks around once it has waited [`QUIET`].
const LOOK_EVERY: std::time::Duration = std::time::Duration::from_micros(500);

/// Polls an exchange makes without yielding the core before it yields.
const SPIN: u32 = 64;

/// Polls between two readings of the clock while an exchange waits (a
/// reading costs about as much as a poll).
const POLLS_PER_CLOCK: u32 = 16;

/// Polls the exchange until it completes (`None`) or is stuck.
pub(super) fn wait<C: Communicator>(
    comm: &C,
    cp: &Checkpoints,
    call: Call,
    flight: &mut InFlight,
) -> Result<Option<Stuck>> {
    // The clock starts at the first reading, a few polls in: most
    // exchanges complete before it (the wait's bounds are milliseconds).
    let mut start = None;
    let mut deadline = None;
    let mut channel = None;
    let (mut spins, mut unread) = (0u32, 0u32);
    let mut next_look: Option<Instant> = None;
    // The time off the CPU from the first clock reading on (booked when
    // the wait returns): another process's, charged to this rank's speed.
    let mut polls = Poller::default();
    loop {
        if flight.test()? {
            return Ok(None);
        }
        unread += 1;
        if unread >= POLLS_PER_CLOCK {
            unread = 0;
            let now = Instant::now();
            let start = *start.get_or_insert_with(|| {
                deadline = cp.timeout().map(|t| now + t.mul_f64(ALONE));
                polls.measure_from(now);
                now
            });
            // Once QUIET has passed, look around at most every LOOK_EVERY:
            // each look is a few MPI calls, and with Open MPI's
            // `mpi_yield_when_idle` every one of them yields the core.
            if now - start >= QUIET && next_look.is_none_or(|t| now >= t) {
                next_look = Some(now + LOOK_EVERY);
                if let Some(stuck) = look(
                    comm,
                    cp,
                    call,
                    flight,
                    &mut channel,
                    &mut deadline,
                    start,
                    now,
                )? {
                    return Ok(Some(stuck));
                }
            }
        }
        if spins < SPIN {
            spins += 1;
        } else {
            polls.pause();
        }
    }
}

/// What a waiting exchange checks once it has waited [`QUIET`]: a refusal
/// told by another rank, a neighbour's message of another exchange, a
/// checkpoint under way elsewhere (which bounds the wait), the deadline.
#[allow(clippy::too_many_arguments)]
fn look<C: Communicator>(
    comm: &C,
    cp: &Checkpoints,
    call: Call,
    flight: &mut InFlight,
    channel: &mut Option<u64>,
    deadline: &mut Option<Instant>,
    start: Instant,
    now: Instant,
) -> Result<Option<Stuck>> {
    if let Some(channel) = watchdog::refusal_under_way(comm) {
        return Ok(Some(Stuck::Notified(channel)));
    }
    let pending = flight.pending_recv_peers()?;
    if let Some(m) = foreign_message(comm, &pending, call)? {
        // The message may belong to the next exchange of a neighbour
        // whose message for this one just arrived: test again.
        if !flight.test()? && flight.pending_recv_peers()?.contains(&m.rank) {
            return Ok(Some(Stuck::Mismatch(m, *channel)));
        }
    }
    if channel.is_none() {
        *channel = watchdog::checkpoint_under_way();
        if let (Some(_), Some(t)) = (*channel, cp.timeout()) {
            let bound = now + t.mul_f64(AFTER_CHECKPOINT);
            *deadline = Some(deadline.map_or(bound, |d| d.min(bound)));
        }
    }
    if deadline.is_some_and(|d| now >= d) {
        return Ok(Some(Stuck::Deadline {
            channel: *channel,
            waited: (now - start).as_secs_f64(),
        }));
    }
    Ok(None)
}

/// Turns a stuck exchange into the same error on every rank involved: joins
/// the checkpoint under way on one of nuce's channels (or starts one on the
/// object's own) with this rank's call and what it saw.
pub(super) fn escalate<C: Communicator>(
    comm: &C,
    cp: &Checkpoints,
    call: Call,
    op: &dyn Fn() -> String,
    stuck: Stuck,
    waiting_for: &[i32],
) -> Error {
    let what = op();
    let refused = match &stuck {
        Stuck::Refused(e) => Some(e.clone()),
        _ => None,
    };
    let mut stalled = None;
    let (seen, channel) = match stuck {
        Stuck::Mismatch(m, channel) => (
            format!(
                "{what} (exchange #{}): rank {} sent a ghost message of another exchange \
                 (another object, shape, ghost width or element type, or another count of exchanges)",
                call.seq, m.rank
            ),
            channel,
        ),
        Stuck::Refused(_) => (format!("{what} (exchange #{})", call.seq), None),
        Stuck::Notified(channel) => (
            format!("{what} (exchange #{}): another rank refused a call", call.seq),
            channel,
        ),
        Stuck::Deadline { channel, waited } => {
            stalled = Some(Stalled {
                call: what.clone(),
                object: cp.id(),
                seq: call.seq,
                waiting_for: waiting_for.to_vec(),
                waited,
            });
            (
                format!(
                    "{what} (exchange #{}): no ghost message from rank(s) {waiting_for:?} within the timeout",
                    call.seq
                ),
                channel,
            )
        }
    };
    let bringing = Bringing {
        refused: refused.as_ref(),
        stalled: stalled.as_ref(),
        notify: true,
    };
    let verdict = watchdog::join_checkpoint(channel.or(cp.parent()), cp, comm, &seen, bringing);
    // Every rank that arrives with the same text gets Ok from the root:
    // the exchange failed all the same, with the same text everywhere.
    match verdict {
        Err(e) => e,
        Ok(()) => refused.unwrap_or_else(|| Error::Disagreement {
            on: "a ghost exchange".into(),
            calls: vec![seen],
        }),
    }
}
