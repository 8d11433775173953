//! A root that times out at a checkpoint and finds the ranks it waits for
//! at nuce's other collectives: the ranks call nuce's collectives in
//! different orders (rank 0 gathers an array while rank 1 is already at the
//! next balance point, say). On one communicator the checkpoint compares
//! the calls and every rank gets the same [`Error::Disagreement`]; across
//! communicators no checkpoint meets them all, so the root, whose wait has
//! expired, looks at the arrival messages waiting on the other channels it
//! is the root of ([`waiting_elsewhere`]).
//!
//! When every missing rank is found there ([`settle`]), the root counts
//! their calls, marked as made at another collective, as arrivals at its
//! own checkpoint, and answers every rank with the one verdict: the ranks
//! at its checkpoint on its communicator, the others on the communicator
//! where they wait. Every rank returns the same error naming each rank's
//! call, within the timeout. Otherwise — a rank found nowhere (slow,
//! stopped or dead), or a two-level checkpoint whose host leaders summarise
//! their ranks — the job ends as before, the message naming the calls
//! found.

use std::time::Duration;

use mpi::point_to_point::MatchedReceiveVec;
use mpi::traits::*;

use super::abort_job;
use super::channels::{channel_id, live, with_comm, RawComm};
use super::entry::{answer, Arrival};
use super::errors::missing_at_root;
use super::hosts::world_rank;
use super::tree::{self, Tally};
use crate::error::Result;
use crate::runtime::comm::decode;
use crate::runtime::tags::{
    ARRIVE as TAG_ARRIVE, ROOT_HERE as TAG_ROOT_HERE, SUMMARY as TAG_SUMMARY,
};

/// A rank's arrival message found on another channel: the channel, the
/// rank there, and what it brought.
struct Seen {
    channel: RawComm,
    src: i32,
    arrival: Arrival,
}

/// What waits on nuce's other channels: the arrivals found (received now),
/// and the calls named by host leaders' summaries.
pub(super) struct Elsewhere {
    found: Vec<Seen>,
    summaries: Vec<String>,
}

impl Elsewhere {
    /// Each call found, as `world rank W (host H) is at OP` (a summary's
    /// as `rank(s) [..] (host H) are at OP`).
    pub(super) fn describe(&self) -> Vec<String> {
        self.found
            .iter()
            .map(|f| {
                let a = &f.arrival;
                format!("world rank {} (host {}) is at {}", a.world, a.host, a.op)
            })
            .chain(self.summaries.iter().cloned())
            .collect()
    }
}

/// Receives the arrival messages (and host leaders' summaries) waiting on
/// nuce's live channels other than `this`: called only by a collector
/// that timed out, which either ends the job or answers them
/// ([`found_or_end`]).
pub(super) fn waiting_elsewhere(this: u64) -> Elsewhere {
    let handles: Vec<RawComm> = match live().lock() {
        Ok(l) => l
            .iter()
            .filter(|(&id, _)| id != this)
            .map(|(_, c)| c.comm)
            .collect(),
        Err(_) => Vec::new(),
    };
    let mut out = Elsewhere {
        found: Vec::new(),
        summaries: Vec::new(),
    };
    for h in handles {
        with_comm(h, |comm| {
            while let Some((msg, status)) = comm
                .any_process()
                .immediate_matched_probe_with_tag(TAG_ARRIVE)
            {
                let (bytes, _) = (msg, status).matched_receive_vec::<u8>();
                let src = status.source_rank();
                if let Ok(arrival) = decode::<Arrival>(&bytes, src) {
                    out.found.push(Seen {
                        channel: h,
                        src,
                        arrival,
                    });
                }
            }
            // Two-level checkpoints: a host leader's summary.
            while let Some((msg, status)) = comm
                .any_process()
                .immediate_matched_probe_with_tag(TAG_SUMMARY)
            {
                let (bytes, _) = (msg, status).matched_receive_vec::<u8>();
                out.summaries
                    .extend(tree::calls_in_summary(&bytes, status.source_rank()));
            }
        });
    }
    out
}

/// The missing ranks of a checkpoint and where each waits, for [`settle`].
pub(super) struct Found {
    missing: Vec<i32>,
    elsewhere: Elsewhere,
    /// For each missing rank, the index of its arrival in `elsewhere`.
    at: Vec<usize>,
}

/// The flat root `root` of `comm` waited `limit` in vain for `missing` at
/// the checkpoint of its call `op`: where each of them waits at another of
/// nuce's collectives, or, when one waits nowhere (slow, stopped or dead),
/// the end of the job naming them.
pub(super) fn found_or_end<C: Communicator>(
    comm: &C,
    root: i32,
    op: &str,
    limit: Duration,
    missing: Vec<i32>,
) -> Found {
    let elsewhere = waiting_elsewhere(channel_id(comm));
    let at: Option<Vec<usize>> = missing
        .iter()
        .map(|&r| {
            let w = world_rank(comm, r)?;
            elsewhere.found.iter().position(|f| f.arrival.world == w)
        })
        .collect();
    match at {
        Some(at) if elsewhere.summaries.is_empty() => Found {
            missing,
            elsewhere,
            at,
        },
        _ => {
            let described = elsewhere.describe();
            abort_job(&missing_at_root(
                comm, root, op, limit, missing, "the root", &described,
            ))
        }
    }
}

/// The flat root `root` (world rank `world`) of `comm` found every rank
/// missing at checkpoint `seq` of its call `op` waiting at another of
/// nuce's collectives (`found`), with `tally` from the ranks that came
/// (`others`: every rank but the root): every rank gets the same verdict
/// (module doc).
pub(super) fn settle<C: Communicator>(
    comm: &C,
    (root, world): (i32, i32),
    (op, seq): (&str, u64),
    mut tally: Tally,
    others: &[i32],
    found: Found,
) -> Result<()> {
    let Found {
        missing,
        elsewhere,
        at,
    } = found;
    for (&r, &i) in missing.iter().zip(&at) {
        let a = &elsewhere.found[i].arrival;
        let here = Arrival {
            seq,
            op: format!("{} (at another of nuce's collectives)", a.op),
            host: a.host.clone(),
            world: a.world,
            refused: a.refused.clone(),
            stalled: None,
            notified: false,
        };
        tally.add(r, Ok(here));
    }
    let notifiers = tally.notifiers();
    // Never `None`: the calls found are marked, so they differ from `op`.
    let error = tally.verdict(comm, root, op, seq);
    // The ranks waiting elsewhere, by channel: the root announces itself
    // there, then gives the same verdict.
    let mut by_channel: Vec<(RawComm, Vec<i32>, Vec<i32>)> = Vec::new();
    for f in &elsewhere.found {
        let i = match by_channel.iter().position(|(h, ..)| h.0 == f.channel.0) {
            Some(i) => i,
            None => {
                by_channel.push((f.channel, Vec::new(), Vec::new()));
                by_channel.len() - 1
            }
        };
        by_channel[i].1.push(f.src);
        if f.arrival.notified {
            by_channel[i].2.push(f.src);
        }
    }
    for (h, ranks, notifiers) in by_channel {
        with_comm(h, |c| {
            for &r in &ranks {
                c.process_at_rank(r).send_with_tag(&seq, TAG_ROOT_HERE);
            }
            let _ = answer(c, &ranks, world, error.clone(), &notifiers);
        });
    }
    let came: Vec<i32> = others
        .iter()
        .copied()
        .filter(|r| !missing.contains(r))
        .collect();
    answer(comm, &came, world, error, &notifiers)
}
