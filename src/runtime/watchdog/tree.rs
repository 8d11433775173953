//! The checked entry in two levels, through host leaders.
//!
//! Once a balancer knows its hosts ([`Balancer::set_hosts`],
//! [`Balancer::detect_hosts`]) its checkpoints stop sending every arrival
//! to the root: each host's ranks (the root set apart, alone) send theirs
//! to their host's *leader*, the lowest of them; the leader compares
//! nothing, it tallies the calls by rank ([`Tally`], ranks kept as runs)
//! and sends the root one summary; the root merges the summaries, decides
//! the verdict exactly as a flat checkpoint does (refusals first, then a
//! stall in ghost exchanges, then differing calls), and answers the
//! leaders, who forward the verdict to their ranks unchanged. The root
//! sends and receives `3H` messages for `H` host groups instead of
//! `3(p − 1)`; a leader `3m` for its `m` ranks.
//!
//! Timeouts keep the rule that whoever can name the missing ranks speaks
//! first: a leader waits `T` for its ranks and then ends the job naming
//! those that did not arrive; the root waits `T +` [`ROOT_FIRST`] for the
//! leaders and names the leaders that did not report; a leader waits
//! `T + 2·ROOT_FIRST` for the verdict and a rank `T + 3·ROOT_FIRST`, each
//! naming the one above it when that one never announced itself.
//!
//! [`Balancer::set_hosts`]: crate::runtime::balancer::Balancer::set_hosts
//! [`Balancer::detect_hosts`]: crate::runtime::balancer::Balancer::detect_hosts

use std::collections::BTreeMap;
use std::convert::Infallible;
use std::time::{Duration, Instant};

use mpi::traits::*;
use serde::{Deserialize, Serialize};

use super::channels::channel_id;
use super::elsewhere::waiting_elsewhere;
use super::entry::{
    accept, await_verdict, decide, send_to, Arrival, Bringing, Stalled, ARRIVALS, ARRIVAL_BYTES,
};
use super::errors::{disagreement, missing_at_root, stalled_verdict};
use super::hosts::{host_name, learn_host};
use super::{abort_job, ROOT_FIRST};
use crate::error::{Error, Result};
use crate::runtime::clock::Poller;
use crate::runtime::comm::{decode, encode};
use crate::runtime::tags::{
    ARRIVE as TAG_ARRIVE, ROOT_HERE as TAG_ROOT_HERE, SUMMARY as TAG_SUMMARY,
    VERDICT as TAG_VERDICT,
};

/// This rank's place in the two-level checked entry of a communicator.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Tree {
    /// The communicator's size (the tree is used only on one of that size).
    size: i32,
    /// The checkpoints' root.
    root: i32,
    /// Where this rank's arrival goes: its host's leader, or the root for
    /// a leader (the root's own is the root).
    parent: i32,
    /// The ranks whose arrivals this rank collects, ascending: the leaders
    /// at the root, the host's other ranks at a leader, none elsewhere.
    children: Vec<i32>,
}

impl Tree {
    /// The tree of rank `rank` of a communicator whose ranks are on hosts
    /// `host_of` (the same table on every rank), with root `root`: the
    /// root alone, then each host's other ranks under their lowest rank.
    /// O(p).
    pub(crate) fn new(host_of: &[usize], root: i32, rank: i32) -> Tree {
        let mut leader: BTreeMap<usize, i32> = BTreeMap::new();
        for (r, &h) in host_of.iter().enumerate() {
            if r as i32 != root {
                leader.entry(h).or_insert(r as i32);
            }
        }
        let host = |r: i32| usize::try_from(r).ok().and_then(|i| host_of.get(i));
        let lead = |r: i32| host(r).and_then(|h| leader.get(h)).copied();
        let (parent, children) = if rank == root {
            let mut l: Vec<i32> = leader.values().copied().collect();
            l.sort_unstable();
            (root, l)
        } else if lead(rank) == Some(rank) {
            let mine = (0..host_of.len() as i32)
                .filter(|&r| r != root && r != rank && lead(r) == Some(rank))
                .collect();
            (root, mine)
        } else {
            (lead(rank).unwrap_or(root), Vec::new())
        };
        Tree {
            size: host_of.len() as i32,
            root,
            parent,
            children,
        }
    }

    /// Whether this tree serves checkpoints on `comm` with root `root`.
    pub(crate) fn fits<C: Communicator>(&self, comm: &C, root: i32) -> bool {
        self.size == comm.size() && self.root == root
    }

    /// The ranks this rank collects arrivals from.
    #[cfg(test)]
    pub(crate) fn children(&self) -> &[i32] {
        &self.children
    }
}

/// A call as the arrivals name it: the checkpoint's number (`None` for an
/// arrival that could not be read, whose text then says why) and the call.
type Call = (Option<u64>, String);

/// What a collector (the root, or a host's leader) has learnt from the
/// arrivals so far: what the verdict is made of.
#[derive(Debug, Default, Serialize, Deserialize)]
pub(super) struct Tally {
    /// The lowest refusing rank and its error.
    refusal: Option<(i32, Error)>,
    /// The ranks that come stalled from a ghost exchange, with the number
    /// of the checkpoint they came to.
    stalls: Vec<(i32, u64, Stalled)>,
    /// The ranks that sent every rank a refusal notice.
    notifiers: Vec<i32>,
    /// The ranks of each call (as runs on the wire: a host's ranks making
    /// the same call are a few bytes).
    #[serde(with = "runs")]
    calls: BTreeMap<Call, Vec<i32>>,
}

impl Tally {
    /// A tally holding what rank `me` brings to checkpoint `seq` of `op`.
    pub(super) fn own(me: i32, seq: u64, op: &str, bringing: &Bringing) -> Tally {
        let mut t = Tally::default();
        t.add(
            me,
            Ok(Arrival {
                seq,
                op: op.to_string(),
                host: String::new(),
                world: -1,
                refused: bringing.refused.cloned(),
                stalled: bringing.stalled.cloned(),
                notified: bringing.notify,
            }),
        );
        t
    }

    /// Adds rank `src`'s arrival (or why it could not be read).
    pub(super) fn add(&mut self, src: i32, arrival: Result<Arrival>) {
        let call = match arrival {
            Ok(a) => {
                if a.world >= 0 {
                    learn_host(a.world, &a.host);
                }
                if let Some(e) = a.refused {
                    self.refuse(src, e);
                }
                if let Some(st) = a.stalled {
                    self.stalls.push((src, a.seq, st));
                }
                if a.notified {
                    self.notifiers.push(src);
                }
                (Some(a.seq), a.op)
            }
            Err(e) => (None, format!("an unreadable arrival message ({e})")),
        };
        self.calls.entry(call).or_default().push(src);
    }

    fn refuse(&mut self, src: i32, e: Error) {
        if self.refusal.as_ref().is_none_or(|(r, _)| src < *r) {
            self.refusal = Some((src, e));
        }
    }

    /// Adds a host's tally (from its leader's summary).
    fn merge(&mut self, other: Tally) {
        if let Some((r, e)) = other.refusal {
            self.refuse(r, e);
        }
        self.stalls.extend(other.stalls);
        self.notifiers.extend(other.notifiers);
        for (call, ranks) in other.calls {
            self.calls.entry(call).or_default().extend(ranks);
        }
    }

    /// The ranks that notified, ascending (what the verdict lists).
    pub(super) fn notifiers(&self) -> Vec<i32> {
        let mut n = self.notifiers.clone();
        n.sort_unstable();
        n
    }

    /// The root's verdict at checkpoint `seq` of its call `op`: the lowest
    /// refusal, else a stall every rank shares, else the calls that differ
    /// from the root's ([`disagreement`]), else none.
    pub(super) fn verdict<C: Communicator>(
        self,
        comm: &C,
        root: i32,
        op: &str,
        seq: u64,
    ) -> Option<Error> {
        let mut differ: BTreeMap<String, Vec<i32>> = BTreeMap::new();
        for ((s, call), mut ranks) in self.calls {
            let text = match s {
                Some(s) if s != seq => format!("{call} at checkpoint #{s}"),
                Some(_) if call != op => call,
                Some(_) => continue,
                None => call,
            };
            ranks.sort_unstable();
            differ.entry(text).or_default().extend(ranks);
        }
        let differing = (!differ.is_empty()).then(|| {
            let seq_note = if differ.keys().any(|c| c.contains(" at checkpoint #")) {
                format!(" at checkpoint #{seq}")
            } else {
                String::new()
            };
            disagreement(root, &format!("{op}{seq_note}"), &differ)
        });
        let stalls: Vec<(i32, Stalled)> = self
            .stalls
            .into_iter()
            .filter(|(_, s, _)| *s == seq)
            .map(|(r, _, st)| (r, st))
            .collect();
        match self.refusal {
            Some((r, e)) if r == root => Some(e),
            Some((r, e)) => Some(Error::Remote {
                rank: r,
                source: Box::new(e),
            }),
            None => stalled_verdict(comm, root, &stalls).or(differing),
        }
    }
}

/// The tallied calls as runs of consecutive ranks on the wire.
mod runs {
    use super::{BTreeMap, Call};
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    pub(super) fn serialize<S: Serializer>(
        calls: &BTreeMap<Call, Vec<i32>>,
        s: S,
    ) -> Result<S::Ok, S::Error> {
        let runs: Vec<(&Call, Vec<(i32, i32)>)> =
            calls.iter().map(|(c, r)| (c, to_runs(r))).collect();
        runs.serialize(s)
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(
        d: D,
    ) -> Result<BTreeMap<Call, Vec<i32>>, D::Error> {
        let runs: Vec<(Call, Vec<(i32, i32)>)> = Vec::deserialize(d)?;
        Ok(runs
            .into_iter()
            .map(|(c, r)| (c, r.into_iter().flat_map(|(a, b)| a..=b).collect()))
            .collect())
    }

    /// `ranks` (any order) as ascending runs `(first, last)`.
    pub(super) fn to_runs(ranks: &[i32]) -> Vec<(i32, i32)> {
        let mut sorted = ranks.to_vec();
        sorted.sort_unstable();
        let mut out: Vec<(i32, i32)> = Vec::new();
        for r in sorted {
            match out.last_mut() {
                Some((_, last)) if r == *last + 1 => *last = r,
                Some((_, last)) if r == *last => {}
                _ => out.push((r, r)),
            }
        }
        out
    }
}

/// A leader's summary of its host: who it is, and its host's tally.
#[derive(Serialize, Deserialize)]
struct Summary {
    world: i32,
    host: String,
    tally: Tally,
}

/// The calls a host leader's summary (`bytes`, from rank `src`) reports,
/// as `rank(s) [..] (host H) are at OP`, for a root that timed out
/// ([`super::channels::calls_elsewhere`]).
pub(super) fn calls_in_summary(bytes: &[u8], src: i32) -> Vec<String> {
    decode::<Summary>(bytes, src).map_or_else(
        |_| Vec::new(),
        |s| {
            s.tally
                .calls
                .into_iter()
                .map(|((_, op), ranks)| {
                    format!(
                        "rank(s) {:?} (host {}) are at {op}",
                        runs::to_runs(&ranks),
                        s.host
                    )
                })
                .collect()
        },
    )
}

/// Receives one message with `tag` from each of `from` (ranks of `comm`,
/// ascending) after telling each of them, with a `ROOT_HERE` message, that
/// this rank is here; hands each to `got`. Past `limit` it hands the ranks
/// still missing to `late` and returns what that gives (`Err`), or `late`
/// ends the job. `late` runs before this rank waits for its `ROOT_HERE`
/// sends to complete: a send to a dead rank over a network may never
/// complete, and a `late` that ends the job must not wait for it. Polls.
pub(super) fn collect<C: Communicator, T>(
    comm: &C,
    from: &[i32],
    tag: mpi::Tag,
    seq: u64,
    limit: Option<Duration>,
    mut got: impl FnMut(i32, Result<Vec<u8>>),
    late: impl FnOnce(Vec<i32>) -> T,
) -> std::result::Result<(), T> {
    let start = Instant::now();
    let mut arrived = vec![false; from.len()];
    let mut count = 0;
    let mut late = Some(late);
    let mut outcome = None;
    mpi::request::scope(|scope| {
        let here: Vec<_> = from
            .iter()
            .map(|&r| {
                comm.process_at_rank(r)
                    .immediate_send_with_tag(scope, &seq, TAG_ROOT_HERE)
            })
            .collect();
        let mut polls = Poller::default();
        while count < from.len() {
            let mut any = false;
            while let Some((msg, status)) = comm.any_process().immediate_matched_probe_with_tag(tag)
            {
                any = true;
                let src = status.source_rank();
                let (bytes, _) = (msg, status).matched_receive_vec::<u8>();
                ARRIVALS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                ARRIVAL_BYTES.fetch_add(bytes.len() as u64, std::sync::atomic::Ordering::Relaxed);
                if let Ok(i) = from.binary_search(&src) {
                    if !arrived[i] {
                        arrived[i] = true;
                        count += 1;
                    }
                }
                got(src, Ok(bytes));
            }
            if count == from.len() {
                break;
            }
            if limit.is_some_and(|t| start.elapsed() > t) {
                let missing = from
                    .iter()
                    .zip(&arrived)
                    .filter(|(_, a)| !**a)
                    .map(|(&r, _)| r)
                    .collect();
                outcome = late.take().map(|f| f(missing));
                break;
            }
            if !any {
                polls.pause();
            }
        }
        // Past `late`, the missing ranks are alive and waiting elsewhere:
        // the 8-byte `ROOT_HERE` messages to them go out eagerly.
        for h in here {
            h.wait();
        }
    });
    match outcome {
        Some(t) => Err(t),
        None => Ok(()),
    }
}

/// Receives the [`Arrival`] of each of `from` into `tally` ([`collect`]);
/// past `timeout` it hands the ranks still missing to `late`.
pub(super) fn collect_arrivals<C: Communicator, T>(
    comm: &C,
    from: &[i32],
    seq: u64,
    timeout: Option<Duration>,
    tally: &mut Tally,
    late: impl FnOnce(Vec<i32>) -> T,
) -> std::result::Result<(), T> {
    let got = |src, bytes: Result<Vec<u8>>| {
        tally.add(src, bytes.and_then(|b| decode::<Arrival>(&b, src)))
    };
    collect(comm, from, TAG_ARRIVE, seq, timeout, got, late)
}

/// Ends the job: the collector `me` of `comm` (`role`: the root, or a
/// host's leader) waited `limit` in vain for `missing` at the checkpoint of
/// `op`; the message names the calls of the ranks waiting at nuce's other
/// collectives meanwhile.
fn end_missing<C: Communicator>(
    comm: &C,
    (me, role): (i32, &str),
    op: &str,
    limit: Option<Duration>,
    missing: Vec<i32>,
) -> ! {
    let elsewhere = waiting_elsewhere(channel_id(comm)).describe();
    let t = limit.unwrap_or_default();
    abort_job(&missing_at_root(comm, me, op, t, missing, role, &elsewhere))
}

/// The two-level checked entry ([`super::checkpoint`]'s semantics) on
/// `comm` by `tree`: this rank's part, as root, leader or member.
pub(super) fn entry<C: Communicator>(
    comm: &C,
    tree: &Tree,
    op: &str,
    seq: u64,
    timeout: Option<Duration>,
    world: i32,
    bringing: Bringing,
) -> Result<()> {
    let me = comm.rank();
    let root = tree.root;
    let arrival = || encode(&Arrival::own(seq, op, world, &bringing));
    if me != root && tree.children.is_empty() {
        // A member (or a leader alone on its host: its arrival is its summary).
        let limit = timeout.map(|t| t + 3 * ROOT_FIRST);
        let (bytes, tag) = if tree.parent == root {
            let summary = Summary {
                world,
                host: host_name().to_string(),
                tally: Tally::own(me, seq, op, &bringing),
            };
            (encode(&summary)?, TAG_SUMMARY)
        } else {
            (arrival()?, TAG_ARRIVE)
        };
        let role = if tree.parent == root {
            "the root"
        } else {
            "its host's leader"
        };
        let parent = (tree.parent, role);
        let (verdict, _) = await_verdict(comm, parent, op, limit, (&bytes, tag))?;
        return accept(comm, verdict);
    }
    let mut tally = Tally::own(me, seq, op, &bringing);
    if me == root {
        let limit = timeout.map(|t| t + ROOT_FIRST);
        let got = |src, bytes: Result<Vec<u8>>| match bytes.and_then(|b| decode::<Summary>(&b, src))
        {
            Ok(s) => {
                learn_host(s.world, &s.host);
                tally.merge(s.tally);
            }
            Err(e) => tally.add(src, Err(e)),
        };
        let late =
            |missing| -> Infallible { end_missing(comm, (root, "the root"), op, limit, missing) };
        if let Err(never) = collect(comm, &tree.children, TAG_SUMMARY, seq, limit, got, late) {
            match never {}
        }
        return decide(comm, root, op, seq, world, tally, &tree.children);
    }
    // A leader: its host's arrivals, one summary to the root, the verdict back.
    let leader = (me, "its host's leader");
    let late = |missing| -> Infallible { end_missing(comm, leader, op, timeout, missing) };
    if let Err(never) = collect_arrivals(comm, &tree.children, seq, timeout, &mut tally, late) {
        match never {}
    }
    let summary = encode(&Summary {
        world,
        host: host_name().to_string(),
        tally,
    })?;
    let limit = timeout.map(|t| t + 2 * ROOT_FIRST);
    let up = (&summary[..], TAG_SUMMARY);
    let (verdict, bytes) = await_verdict(comm, (root, "the root"), op, limit, up)?;
    send_to(comm, &tree.children, &bytes, TAG_VERDICT);
    accept(comm, verdict)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trees_set_the_root_apart_and_lead_by_the_lowest_rank() {
        // Hosts 0,0,1,1,0,2 with root 0: host 0's others (1, 4) under 1.
        let hosts = [0, 0, 1, 1, 0, 2];
        let t = |r| Tree::new(&hosts, 0, r);
        assert_eq!(t(0).children(), &[1, 2, 5]);
        assert_eq!((t(1).parent, t(1).children()), (0, &[4][..]));
        assert_eq!((t(2).parent, t(2).children()), (0, &[3][..]));
        assert_eq!((t(3).parent, t(3).children()), (2, &[][..]));
        assert_eq!((t(4).parent, t(4).children()), (1, &[][..]));
        assert_eq!((t(5).parent, t(5).children()), (0, &[][..]));
        // Root 3: host 1 is led by 2 alone.
        let u = Tree::new(&hosts, 3, 2);
        assert_eq!((u.parent, u.children()), (3, &[][..]));
        assert_eq!(Tree::new(&hosts, 3, 3).children(), &[0, 2, 5]);
    }

    #[test]
    fn calls_travel_as_runs() {
        assert_eq!(runs::to_runs(&[5, 1, 2, 3, 7, 6, 2]), vec![(1, 3), (5, 7)]);
        let mut t = Tally::default();
        for r in [4, 2, 3, 9] {
            t.add(
                r,
                Ok(Arrival {
                    seq: 1,
                    op: "x".into(),
                    host: String::new(),
                    world: -1,
                    refused: None,
                    stalled: None,
                    notified: false,
                }),
            );
        }
        let bytes = encode(&t).unwrap();
        let back: Tally = decode(&bytes, 0).unwrap();
        let mut ranks = back.calls[&(Some(1), "x".to_string())].clone();
        ranks.sort_unstable();
        assert_eq!(ranks, vec![2, 3, 4, 9]);
    }
}
