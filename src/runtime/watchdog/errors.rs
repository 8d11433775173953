//! The errors of the watchdog: the [`Error::Disagreement`] of ranks that
//! make different calls, and the [`Error::Timeout`]s that name the ranks
//! waited for (at a checkpoint, in a stuck ghost exchange, inside MPI).

use std::collections::BTreeMap;
use std::time::Duration;

use mpi::traits::*;

use super::entry::Stalled;
use super::hosts::{describe_rank, host_name, host_of};
use crate::error::Error;

/// The verdict of a checkpoint where every rank of `comm` came stalled
/// (`stalls`) from a ghost exchange of the same call and object and none
/// refused: an
/// [`Error::Timeout`] naming the ranks that the ranks at the earliest
/// exchange waited for (the others went on, then waited for ranks already
/// here), with their hosts; `None` otherwise (the calls are then compared
/// as any others').
pub(super) fn stalled_verdict<C: Communicator>(
    comm: &C,
    root: i32,
    stalls: &[(i32, Stalled)],
) -> Option<Error> {
    let first = &stalls.first()?.1;
    let mut ranks: Vec<i32> = stalls.iter().map(|(r, _)| *r).collect();
    ranks.sort_unstable();
    ranks.dedup();
    if ranks.len() != comm.size() as usize
        || stalls
            .iter()
            .any(|(_, s)| (&s.call, s.object) != (&first.call, first.object))
    {
        return None;
    }
    let earliest = stalls.iter().map(|(_, s)| s.seq).min()?;
    let at_earliest = || {
        stalls
            .iter()
            .map(|(_, s)| s)
            .filter(move |s| s.seq == earliest)
    };
    let mut waited_for: Vec<i32> = at_earliest()
        .flat_map(|s| s.waiting_for.iter().copied())
        .collect();
    waited_for.sort_unstable();
    waited_for.dedup();
    let waited = at_earliest().map(|s| s.waited).fold(0.0, f64::max);
    let named: Vec<String> = waited_for.iter().map(|&r| describe_rank(comm, r)).collect();
    Some(Error::Timeout {
        what: format!("{} (exchange #{earliest})", first.call),
        seconds: waited,
        hosts: waited_for.iter().map(|&r| host_of(comm, r)).collect(),
        ranks: waited_for,
        size: comm.size(),
        waiter: root,
        note: format!(
            "slow: no ghost message in time from {}; every rank then stopped waiting in a \
             ghost exchange of this call, none made another call",
            named.join(", ")
        ),
    })
}

/// The [`Error::Timeout`] of a collector (`role`: the root, or a host's
/// leader, rank `root`) that waited `t` in vain for `ranks` of `comm` at
/// the checkpoint of `op`: it names them
/// with their hosts and the calls of the ranks waiting at nuce's other
/// collectives meanwhile (`elsewhere`, [`Elsewhere::describe`]).
///
/// [`Elsewhere::describe`]: super::elsewhere::Elsewhere::describe
pub(super) fn missing_at_root<C: Communicator>(
    comm: &C,
    root: i32,
    op: &str,
    t: Duration,
    ranks: Vec<i32>,
    role: &str,
    elsewhere: &[String],
) -> Error {
    let missing: Vec<String> = ranks.iter().map(|&r| describe_rank(comm, r)).collect();
    let why = if elsewhere.is_empty() {
        format!("slow, stopped or dead: {}", missing.join(", "))
    } else {
        format!(
            "{}; meanwhile, at another of nuce's collectives, {}: the ranks \
             call nuce's collectives in different orders",
            missing.join(", "),
            elsewhere.join(", ")
        )
    };
    Error::Timeout {
        what: op.to_string(),
        seconds: t.as_secs_f64(),
        hosts: ranks.iter().map(|&r| host_of(comm, r)).collect(),
        ranks,
        size: comm.size(),
        waiter: root,
        note: format!("{why}; {role}, rank {root} on host {}, waited", host_name()),
    }
}

/// The [`Error::Timeout`] of rank `rank` of `comm` that waited `limit` in
/// vain for the verdict at the checkpoint of `op` from `root` (`role`: the
/// root, or its host's leader): it names `root` if that did not arrive
/// (`root_here` false), else tells that it names the missing ranks.
pub(super) fn missing_at_member<C: Communicator>(
    comm: &C,
    root: i32,
    op: &str,
    limit: Duration,
    root_here: bool,
    role: &str,
) -> Error {
    let rank = comm.rank();
    let (ranks, hosts, note) = if root_here {
        (
            Vec::new(),
            Vec::new(),
            format!(
                "rank {rank} is on host {} and waited for ranks that did not arrive; \
                 {role}, {}, arrived and names them",
                host_name(),
                describe_rank(comm, root)
            ),
        )
    } else {
        (
            vec![root],
            vec![host_of(comm, root)],
            format!(
                "rank {rank} on host {} waited for {role}, {}, which did not arrive \
                 (slow, stopped or dead)",
                host_name(),
                describe_rank(comm, root)
            ),
        )
    };
    Error::Timeout {
        what: op.to_string(),
        seconds: limit.as_secs_f64(),
        ranks,
        hosts,
        size: comm.size(),
        waiter: rank,
        note,
    }
}

/// The [`Error::Disagreement`] of a collective call: the root's call `mine`,
/// then each group of ranks' call (by call text).
pub(super) fn disagreement<C: std::fmt::Display, R: std::fmt::Debug>(
    root: i32,
    mine: &str,
    groups: &BTreeMap<C, R>,
) -> Error {
    let mut calls = vec![format!("the root (rank {root}) calls {mine}")];
    calls.extend(
        groups
            .iter()
            .map(|(c, ranks)| format!("rank(s) {ranks:?} call {c}")),
    );
    Error::Disagreement {
        on: "a collective call".into(),
        calls,
    }
}

/// The [`Error::Timeout`] of rank `rank` whose wait inside MPI in `op`
/// outlasted `timeout` (a [`guard`](super::guard()) fired): the peer it waits for is not
/// knowable there, nor the communicator's size (`size` 0).
pub(super) fn inside_mpi(rank: i32, op: String, timeout: Duration) -> Error {
    Error::Timeout {
        what: op,
        seconds: timeout.as_secs_f64(),
        ranks: Vec::new(),
        hosts: Vec::new(),
        size: 0,
        waiter: rank,
        note: "a peer it waits for died or hangs; which one is not knowable here".into(),
    }
}
