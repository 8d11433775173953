//! Bounded waits: no rank of a nuce job waits forever for a dead or hung peer.
//!
//! MPI itself waits forever in a collective when one rank never arrives (it
//! hangs, or it died and the launcher did not notice). nuce bounds those waits
//! in two ways, both configured by one timeout ([`timeout_from_env`],
//! environment variable [`ENV_TIMEOUT`], default [`DEFAULT_TIMEOUT_S`]):
//!
//! * [`checkpoint`] — a *checked entry* that every collective verb of nuce
//!   (the [`Balancer`]'s, [`DistArray2`]'s, [`DistGraph`]'s, through
//!   [`Checkpoints`]) passes first. Every rank sends the root an arrival
//!   message naming its call with the arguments that must match (shape,
//!   ghost width, element size, root, configuration) and its host; the root
//!   compares and answers every rank with the same verdict, so ranks that
//!   disagree get the same error naming each rank's call, before anyone
//!   waits on data. When the timeout expires the root knows exactly which
//!   ranks have not arrived (slow, stopped or dead), prints them with their
//!   hosts and the operation's name, and calls `MPI_Abort`; the other ranks
//!   wait a grace period longer (so that the root, which can name the
//!   missing ranks, speaks first) and then abort too, naming the root. Cost
//!   when all is well: `3(p − 1)` small messages to and from the root,
//!   polling (yielding the core now and then, never sleeping: see
//!   [`crate::runtime::clock`]); O(p) work at the root. Once a balancer
//!   knows its hosts the entry goes through host leaders (module `tree`): `3H`
//!   messages at the root for `H` hosts, each leader `3m` for its `m` ranks.
//! * [`guard`] — a watchdog thread for code that blocks inside MPI where nuce
//!   cannot poll (halo exchanges, the application's own calls). A guard arms a
//!   deadline; dropping it disarms it. If a deadline passes, the thread prints
//!   the operation and the rank and calls `MPI_Abort` on `MPI_COMM_WORLD`;
//!   should the abort not end the process within [`EXIT_GRACE`], it exits.
//!   The missing peer is not knowable there, the message says so; while a
//!   checkpoint is under way the guard lets the checkpoint, which can name
//!   the peer, end the job.
//!
//! `MPI_Abort` ends every process of the job (Open MPI's launcher kills them),
//! so a single rank that times out ends the job with a message: no rank is
//! left hanging. A rank that *dies* (killed, aborted) is normally noticed by
//! the launcher itself, which then ends the job; the two mechanisms above
//! cover the case where it is not.
//!
//! Calling `MPI_Abort` from the watchdog thread while the main thread is
//! blocked in MPI is outside the letter of `MPI_THREAD_SINGLE`; Open MPI 4.1
//! handles it (the abort goes through the launcher's out-of-band channel),
//! and the thread falls back to `exit` in any case.
//!
//! [`Balancer`]: crate::runtime::balancer::Balancer
//! [`DistArray2`]: crate::runtime::array::DistArray2
//! [`DistGraph`]: crate::runtime::graph::DistGraph

use std::collections::BTreeMap;
use std::io::Write;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, OnceLock};
use std::time::{Duration, Instant};

use mpi::point_to_point::MatchedReceiveVec;
use mpi::topology::SimpleCommunicator;
use mpi::traits::*;
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::runtime::clock::Poller;
use crate::runtime::comm::{decode, encode};

/// Environment variable holding the timeout in seconds (`0` or `off` disables it).
pub const ENV_TIMEOUT: &str = "NUCE_TIMEOUT_S";
/// Timeout used when [`ENV_TIMEOUT`] is not set (seconds).
pub const DEFAULT_TIMEOUT_S: f64 = 60.0;
/// Error code passed to `MPI_Abort` on a timeout.
pub(crate) const ABORT_CODE: i32 = 75;
/// How much longer than the root a non-root rank waits in a [`checkpoint`].
pub const ROOT_FIRST: Duration = Duration::from_secs(2);
/// How long the watchdog thread lets `MPI_Abort` work before it exits the process.
pub const EXIT_GRACE: Duration = Duration::from_secs(5);
/// How long a rank ending the job waits between printing its message and `MPI_Abort`,
/// so that the launcher forwards the message before it kills the job.
pub(crate) const FORWARD_GRACE: Duration = Duration::from_millis(500);
use crate::runtime::tags::{
    ARRIVE as TAG_ARRIVE, REFUSING as TAG_REFUSING, ROOT_HERE as TAG_ROOT_HERE,
    SUMMARY as TAG_SUMMARY, VERDICT as TAG_VERDICT,
};

mod tree;
use tree::Tally;
pub(crate) use tree::Tree;

/// Parses a timeout value: seconds as a positive decimal number, or `0` /
/// `off` for no timeout. `None` (unset) gives [`DEFAULT_TIMEOUT_S`].
pub fn parse_timeout(value: Option<&str>) -> Result<Option<Duration>> {
    let Some(v) = value.map(str::trim) else {
        return Ok(Some(Duration::from_secs_f64(DEFAULT_TIMEOUT_S)));
    };
    if v.eq_ignore_ascii_case("off") {
        return Ok(None);
    }
    let s: f64 = v.parse().map_err(|_| {
        Error::invalid_input(format!(
            "{ENV_TIMEOUT}={v:?}: expected seconds (e.g. 60 or 2.5), 0 or off"
        ))
    })?;
    if !(s.is_finite() && (0.0..=1.0e9).contains(&s)) {
        return Err(Error::invalid_input(format!(
            "{ENV_TIMEOUT}={v:?}: must be between 0 and 1e9 seconds"
        )));
    }
    Ok((s > 0.0).then(|| Duration::from_secs_f64(s)))
}

/// The timeout from [`ENV_TIMEOUT`] (see [`parse_timeout`]).
pub fn timeout_from_env() -> Result<Option<Duration>> {
    let v = std::env::var(ENV_TIMEOUT).ok();
    parse_timeout(v.as_deref())
}

/// The message of a job ended by `timeout` (an [`Error::Timeout`]): its
/// text, `nuce: ` before it and `; ending the job (MPI_Abort)` after it.
pub fn abort_message(timeout: &Error) -> String {
    format!("nuce: {timeout}; ending the job (MPI_Abort)")
}

/// Prints the [`abort_message`] of `timeout` on stderr (flushed) and ends
/// the whole job with `MPI_Abort` (only this process, with exit code
/// [`ABORT_CODE`], when MPI is not initialised or already finalised).
/// Crate-private: only the watchdog ends jobs.
pub(crate) fn abort_job(timeout: &Error) -> ! {
    let msg = abort_message(timeout);
    // One write of the whole line: stderr is unbuffered, and a line written
    // in pieces can be joined with another rank's by the launcher.
    let mut err = std::io::stderr().lock();
    let _ = err.write_all(format!("{msg}\n").as_bytes());
    let _ = err.flush();
    drop(err);
    let _ = std::io::stdout().flush();
    if mpi::environment::is_initialized() && !mpi::environment::is_finalized() {
        // Let the launcher forward the line before the abort: MPICH's hydra
        // kills the job on `MPI_Abort` and can drop what it has not yet read
        // from this process's stderr (seen in CI: the job ended, no message).
        std::thread::sleep(FORWARD_GRACE);
        // SAFETY: MPI is initialised and not finalised (checked just above);
        // MPI_Abort on MPI_COMM_WORLD takes no Rust-side buffers.
        unsafe {
            mpi::ffi::MPI_Abort(mpi::ffi::RSMPI_COMM_WORLD, ABORT_CODE);
        }
    }
    std::thread::sleep(EXIT_GRACE);
    std::process::exit(ABORT_CODE)
}

/// What a rank tells the root when it arrives at a [`checkpoint`].
#[derive(Serialize, Deserialize)]
struct Arrival {
    /// The checkpoint's number on this communicator.
    seq: u64,
    /// The call with its must-match arguments.
    op: String,
    /// This process's host (MPI processor name).
    host: String,
    /// This process's rank in `MPI_COMM_WORLD`.
    world: i32,
    /// Why this rank cannot make the call (its own input is wrong): the
    /// error every rank then returns.
    refused: Option<Error>,
    /// The ghost exchange this rank stopped waiting in, if it comes from one.
    stalled: Option<Stalled>,
    /// Whether this rank told every rank of the communicator that it
    /// refuses ([`Bringing::notify`]).
    notified: bool,
}

impl Arrival {
    /// This rank's arrival at checkpoint `seq` of the call `op`, with what
    /// it brings.
    fn own(seq: u64, op: &str, world: i32, bringing: &Bringing) -> Arrival {
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
/// waited for ([`stalled_verdict`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct Stalled {
    /// The exchange's call (object, shape, ghost width, ...), without its number.
    pub(crate) call: String,
    /// The exchanging object's [`Checkpoints::id`] (the same on every rank
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
    /// exchange join the checkpoint at once ([`refusal_under_way`]) instead
    /// of waiting out the timeout. Every rank receives those messages after
    /// the verdict (which lists the ranks that sent them).
    pub(crate) notify: bool,
}

/// The root's answer: its host and world rank, and the verdict.
#[derive(Serialize, Deserialize)]
struct Verdict {
    host: String,
    world: i32,
    error: Option<Error>,
    /// The ranks that sent every rank a refusal notice
    /// ([`Bringing::notify`]): each rank receives them after the verdict.
    notifiers: Vec<i32>,
}

/// This process's host name (MPI processor name, cached).
pub(crate) fn host_name() -> &'static str {
    static H: OnceLock<String> = OnceLock::new();
    H.get_or_init(|| {
        mpi::environment::processor_name().unwrap_or_else(|_| "unknown-host".to_string())
    })
}

/// Host of every world rank this process has heard from in a checkpoint.
fn hosts() -> &'static Mutex<BTreeMap<i32, String>> {
    static H: OnceLock<Mutex<BTreeMap<i32, String>>> = OnceLock::new();
    H.get_or_init(|| Mutex::new(BTreeMap::new()))
}

/// Records `host` as world rank `world`'s host (the first one learnt stays).
pub(crate) fn learn_host(world: i32, host: &str) {
    if let Ok(mut h) = hosts().lock() {
        h.entry(world).or_insert_with(|| host.to_string());
    }
}

/// The world rank of rank `r` of `comm`, and its host as far as this
/// process knows it (from an earlier checkpoint).
fn world_and_host<C: Communicator>(comm: &C, r: i32) -> (Option<i32>, Option<String>) {
    let world_comm = mpi::topology::SimpleCommunicator::world();
    let w = comm.group().translate_rank(r, &world_comm.group());
    let host = w.and_then(|w| hosts().lock().ok().and_then(|h| h.get(&w).cloned()));
    (w, host)
}

/// The host of rank `r` of `comm` ([`world_and_host`]), `unknown` if not known.
fn host_of<C: Communicator>(comm: &C, r: i32) -> String {
    world_and_host(comm, r)
        .1
        .unwrap_or_else(|| "unknown".to_string())
}

/// `rank R (world rank W) on host H` for rank `r` of `comm`, as far as this
/// process knows the host (from an earlier checkpoint).
fn describe_rank<C: Communicator>(comm: &C, r: i32) -> String {
    let (w, host) = world_and_host(comm, r);
    let host =
        host.unwrap_or_else(|| "an unknown host (never arrived at a checkpoint)".to_string());
    match w {
        Some(w) if w != r => format!("rank {r} (world rank {w}) on host {host}"),
        _ => format!("rank {r} on host {host}"),
    }
}

/// Whether this process is inside a [`checkpoint`] (the [`guard`] thread
/// then lets the checkpoint, which can name the missing ranks, speak first).
static IN_CHECKPOINT: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

struct InCheckpoint;
impl InCheckpoint {
    fn enter() -> InCheckpoint {
        IN_CHECKPOINT.store(true, std::sync::atomic::Ordering::SeqCst);
        InCheckpoint
    }
}
impl Drop for InCheckpoint {
    fn drop(&mut self) {
        IN_CHECKPOINT.store(false, std::sync::atomic::Ordering::SeqCst);
    }
}

/// Checked collective entry over `comm` (collective): returns when every
/// rank has called it with the same `root`, and checks that all make the
/// same call. `op` names the call and the arguments that must match (e.g.
/// `Balancer::plan(300x240)`); `seq` numbers the checkpoints of `comm` (the
/// caller keeps one counter per communicator, see [`Checkpoints`]).
///
/// Every rank sends the root an arrival message (`seq`, `op`, its host);
/// the root compares them with its own and answers every rank with the same
/// verdict: a different call or checkpoint number on any rank is the same
/// [`Error::Disagreement`] on every rank, naming the call of each group of
/// ranks, before anyone waits on data.
///
/// With a `timeout`, a rank that does not arrive in time — slow, stopped or
/// dead — ends the job: the root prints the [`abort_message`] of an
/// [`Error::Timeout`],
/// `nuce: timeout: rank(s) [..] of P did not reach <op> within T s (…)`, each
/// missing rank with its host (learnt from earlier checkpoints), and calls
/// `MPI_Abort`; the other ranks do the same [`ROOT_FIRST`] later, naming the
/// root, if the root did not. Without a timeout, the waits are unbounded,
/// as MPI's. Cost: `3(p − 1)` small messages to and from the root, O(p · |op|)
/// work at the root (flat: the two-level entry through host leaders is
/// for [`Checkpoints`] whose balancer knows its hosts, module `tree`).
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
fn entry<C: Communicator>(
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
static ARRIVALS: AtomicU64 = AtomicU64::new(0);
/// The bytes of those messages.
static ARRIVAL_BYTES: AtomicU64 = AtomicU64::new(0);

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
    tree::collect(
        comm,
        &others,
        TAG_ARRIVE,
        seq,
        timeout,
        |src, bytes| tally.add(src, bytes.and_then(|b| decode::<Arrival>(&b, src))),
        |missing| {
            missing_at_root(
                comm,
                root,
                op,
                timeout.unwrap_or_default(),
                missing,
                "the root",
            )
        },
    );
    decide(comm, root, op, seq, world, tally, &others)
}

/// The root's verdict from `tally`, sent to `to` (every other rank, or
/// the host leaders, who forward it); then the refusal notices.
fn decide<C: Communicator>(
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
    let verdict = encode(&Verdict {
        host: host_name().to_string(),
        world,
        error: error.clone(),
        notifiers: notifiers.clone(),
    })?;
    send_to(comm, to, &verdict, TAG_VERDICT);
    receive_notices(comm, &notifiers);
    match error {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

/// The verdict of a checkpoint where every rank of `comm` came stalled
/// (`stalls`) from a ghost exchange of the same call and object and none
/// refused: an
/// [`Error::Timeout`] naming the ranks that the ranks at the earliest
/// exchange waited for (the others went on, then waited for ranks already
/// here), with their hosts; `None` otherwise (the calls are then compared
/// as any others').
fn stalled_verdict<C: Communicator>(
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
/// with their hosts and, when they wait at another of nuce's collectives,
/// which (their arrival messages there are received now: the job ends).
fn missing_at_root<C: Communicator>(
    comm: &C,
    root: i32,
    op: &str,
    t: Duration,
    ranks: Vec<i32>,
    role: &str,
) -> Error {
    let missing: Vec<String> = ranks.iter().map(|&r| describe_rank(comm, r)).collect();
    let elsewhere = calls_elsewhere(channel_id(comm));
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
fn missing_at_member<C: Communicator>(
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
/// leader, with the words that name its role) and waits for its "here" and its verdict: the verdict, decoded
/// and as received. Past `limit` it ends the job naming `parent` if it
/// never announced itself.
fn await_verdict<C: Communicator>(
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
fn accept<C: Communicator>(comm: &C, verdict: Verdict) -> Result<()> {
    learn_host(verdict.world, &verdict.host);
    receive_notices(comm, &verdict.notifiers);
    match verdict.error {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

/// A live checked channel: the raw handle of a [`Checkpoints`]'s
/// communicator, its root, checkpoint counter and timeout.
struct Channel {
    comm: RawComm,
    root: i32,
    seq: Arc<AtomicU64>,
    timeout: Option<Duration>,
    tree: Option<Arc<Tree>>,
}

/// A raw communicator handle in the registry. `MPI_Comm` is a pointer in
/// Open MPI and an integer in MPICH and its derivatives: it is only copied
/// and handed back to MPI, never interpreted.
#[derive(Clone, Copy)]
struct RawComm(mpi::ffi::MPI_Comm);
// SAFETY: the handle is used only by the thread that owns the communicator
// (the registry is read and written from nuce's calls, on the main thread);
// the registry needs `Send` for its static `Mutex`.
unsafe impl Send for RawComm {}

/// The live checked channels, by [`Checkpoints`] id: a root that times out
/// looks there for ranks waiting at another of nuce's collectives instead,
/// and a stuck ghost exchange for a checkpoint under way
/// ([`checkpoint_under_way`]).
fn live() -> &'static Mutex<BTreeMap<u64, Channel>> {
    static L: OnceLock<Mutex<BTreeMap<u64, Channel>>> = OnceLock::new();
    L.get_or_init(|| Mutex::new(BTreeMap::new()))
}

/// Runs `f` on a borrowed communicator for the registered raw handle `h`.
fn with_comm<R>(h: RawComm, f: impl FnOnce(&SimpleCommunicator) -> R) -> R {
    // SAFETY: `h` is the handle of a live communicator (removed from the
    // registry when its Checkpoints drop, which happens before the owner
    // frees it); ManuallyDrop keeps this borrowed wrapper from freeing it.
    let comm = std::mem::ManuallyDrop::new(unsafe {
        <SimpleCommunicator as mpi::raw::FromRaw>::from_raw(h.0)
    });
    f(&comm)
}

/// The id of the registered channel whose communicator is `comm` (`u64::MAX` if none).
fn channel_id<C: Communicator>(comm: &C) -> u64 {
    let raw = comm.as_raw();
    live()
        .lock()
        .ok()
        .and_then(|l| l.iter().find(|(_, c)| c.comm.0 == raw).map(|(&id, _)| id))
        .unwrap_or(u64::MAX)
}

/// The calls at which ranks wait on nuce's other communicators (their
/// arrival messages, received now: the job is about to end), as
/// `world rank W is at OP`. Called only by a root that timed out.
fn calls_elsewhere(this: u64) -> Vec<String> {
    let handles: Vec<RawComm> = match live().lock() {
        Ok(l) => l
            .iter()
            .filter(|(&id, _)| id != this)
            .map(|(_, c)| c.comm)
            .collect(),
        Err(_) => return Vec::new(),
    };
    let mut out = Vec::new();
    for h in handles {
        with_comm(h, |comm| {
            while let Some((msg, status)) = comm
                .any_process()
                .immediate_matched_probe_with_tag(TAG_ARRIVE)
            {
                let (bytes, _) = (msg, status).matched_receive_vec::<u8>();
                if let Ok(a) = decode::<Arrival>(&bytes, status.source_rank()) {
                    out.push(format!(
                        "world rank {} (host {}) is at {}",
                        a.world, a.host, a.op
                    ));
                }
            }
            // Two-level checkpoints: a host leader's summary.
            while let Some((msg, status)) = comm
                .any_process()
                .immediate_matched_probe_with_tag(TAG_SUMMARY)
            {
                let (bytes, _) = (msg, status).matched_receive_vec::<u8>();
                out.extend(tree::calls_in_summary(&bytes, status.source_rank()));
            }
        });
    }
    out
}

/// Sends `bytes` with `tag` to each of `ranks` of `comm`, and waits until
/// the sends complete.
fn send_to<C: Communicator>(comm: &C, ranks: &[i32], bytes: &[u8], tag: mpi::Tag) {
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

/// Where a rank refuses a call and has told this rank
/// ([`Bringing::notify`]): `Some(channel)` — the checked channel (its id)
/// whose checkpoint it joined, or `None` when that is `own`, the caller's
/// own communicator, not (yet) a registered channel on this rank. Probes
/// only; O(number of live channels).
pub(crate) fn refusal_under_way<C: Communicator>(own: &C) -> Option<Option<u64>> {
    live_channel_where(|comm, _| {
        comm.any_process()
            .immediate_probe_with_tag(TAG_REFUSING)
            .is_some()
    })
    .map(Some)
    .or_else(|| {
        own.any_process()
            .immediate_probe_with_tag(TAG_REFUSING)
            .is_some()
            .then(|| Some(channel_id(own)).filter(|&id| id != u64::MAX))
    })
}

/// The id of a checked channel on which a checkpoint has started without
/// this rank: its root has announced itself to this rank, or (when this
/// rank is its root) an arrival message waits. Probes only (nothing is
/// received); O(number of live channels).
pub(crate) fn checkpoint_under_way() -> Option<u64> {
    // Only collectors (the root, host leaders) receive arrivals and
    // summaries, and only they announce themselves: the same test holds
    // for flat and two-level checkpoints.
    live_channel_where(|comm, _| {
        [TAG_ARRIVE, TAG_SUMMARY, TAG_ROOT_HERE]
            .iter()
            .any(|&tag| comm.any_process().immediate_probe_with_tag(tag).is_some())
    })
}

/// The id of the first live checked channel whose communicator and root
/// satisfy `seen` (a probe; the registry's lock is not held meanwhile).
fn live_channel_where(seen: impl Fn(&SimpleCommunicator, i32) -> bool) -> Option<u64> {
    let channels: Vec<(u64, RawComm, i32)> = live()
        .lock()
        .ok()?
        .iter()
        .map(|(&id, c)| (id, c.comm, c.root))
        .collect();
    channels
        .into_iter()
        .find_map(|(id, h, root)| with_comm(h, |comm| seen(comm, root)).then_some(id))
}

/// Joins the checkpoint under way on channel `channel` (see
/// [`checkpoint_under_way`]), or starts one on `own`'s channel `comm`, as
/// the call `op` bringing `bringing` (collective with whoever is there):
/// the root's verdict.
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
    /// hosts `host_of` ([`tree`]); `None` makes them flat again. The root
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

    /// The next [`checkpoint`] on `comm` for the call `op` (collective).
    pub fn check<C: Communicator>(&self, comm: &C, op: &str) -> Result<()> {
        self.check_refusing(comm, op, None)
    }

    /// The next [`refusing_checkpoint`] on `comm` for the call `op`
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
/// one [`checkpoint`] for the call `op` on a duplicate of `comm` (so that its
/// messages never meet the application's), with the timeout of
/// [`timeout_from_env`]. Costs an `MPI_Comm_dup` besides the checkpoint: for
/// coarse calls, not for per-iteration ones (objects keep [`Checkpoints`]).
pub(crate) fn check_entry<C: Communicator>(comm: &C, op: &str) -> Result<()> {
    Checkpoints::duplicate_checked(comm, op).map(drop)
}

/// The [`Error::Disagreement`] of a collective call: the root's call `mine`,
/// then each group of ranks' call (by call text).
fn disagreement<C: std::fmt::Display, R: std::fmt::Debug>(
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
/// outlasted `timeout` (a [`guard`] fired): the peer it waits for is not
/// knowable there, nor the communicator's size (`size` 0).
fn inside_mpi(rank: i32, op: String, timeout: Duration) -> Error {
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

struct Armed {
    op: String,
    rank: i32,
    deadline: Instant,
    timeout: Duration,
}

#[derive(Default)]
struct Board {
    next: u64,
    armed: BTreeMap<u64, Armed>,
}

struct Shared {
    board: Mutex<Board>,
    wake: Condvar,
}

fn shared() -> &'static Shared {
    static S: OnceLock<&'static Shared> = OnceLock::new();
    S.get_or_init(|| {
        let s: &'static Shared = Box::leak(Box::new(Shared {
            board: Mutex::new(Board::default()),
            wake: Condvar::new(),
        }));
        std::thread::Builder::new()
            .name("nuce-watchdog".into())
            .spawn(move || watch(s))
            .ok();
        s
    })
}

/// The watchdog thread: sleeps until the earliest deadline, fires if it passed.
fn watch(s: &'static Shared) {
    let mut board = match s.board.lock() {
        Ok(b) => b,
        Err(p) => p.into_inner(),
    };
    loop {
        let now = Instant::now();
        let due = board
            .armed
            .values()
            .min_by_key(|a| a.deadline)
            .map(|a| (a.deadline, a.op.clone(), a.rank, a.timeout));
        match due {
            Some((deadline, ..))
                if deadline <= now && IN_CHECKPOINT.load(std::sync::atomic::Ordering::SeqCst) =>
            {
                // A checkpoint is under way: it ends the job itself within its
                // own timeout, naming the missing ranks and their hosts.
                board = match s.wake.wait_timeout(board, Duration::from_millis(50)) {
                    Ok((b, _)) => b,
                    Err(p) => p.into_inner().0,
                };
            }
            Some((deadline, op, rank, timeout)) if deadline <= now => {
                drop(board);
                abort_job(&inside_mpi(rank, op, timeout));
            }
            Some((deadline, ..)) => {
                board = match s.wake.wait_timeout(board, deadline - now) {
                    Ok((b, _)) => b,
                    Err(p) => p.into_inner().0,
                };
            }
            None => {
                board = match s.wake.wait(board) {
                    Ok(b) => b,
                    Err(p) => p.into_inner(),
                };
            }
        }
    }
}

/// An armed deadline; dropping it disarms it.
#[must_use = "the deadline is disarmed when the guard is dropped"]
pub struct Guard {
    id: Option<u64>,
}

impl Drop for Guard {
    fn drop(&mut self) {
        if let Some(id) = self.id {
            let s = shared();
            if let Ok(mut b) = s.board.lock() {
                b.armed.remove(&id);
            }
        }
    }
}

/// Arms the watchdog: unless the returned [`Guard`] is dropped within
/// `timeout`, the job is ended with a message naming `op` and `rank`
/// (local; starts the watchdog thread on first use). `None` arms nothing.
pub fn guard(rank: i32, op: impl Into<String>, timeout: Option<Duration>) -> Guard {
    let Some(timeout) = timeout else {
        return Guard { id: None };
    };
    let s = shared();
    let Ok(mut b) = s.board.lock() else {
        return Guard { id: None };
    };
    let id = b.next;
    b.next += 1;
    b.armed.insert(
        id,
        Armed {
            op: op.into(),
            rank,
            deadline: Instant::now() + timeout,
            timeout,
        },
    );
    s.wake.notify_all();
    Guard { id: Some(id) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timeout_values() {
        assert_eq!(parse_timeout(None).unwrap(), Some(Duration::from_secs(60)));
        assert_eq!(
            parse_timeout(Some(" 2.5 ")).unwrap(),
            Some(Duration::from_millis(2500))
        );
        assert_eq!(parse_timeout(Some("0")).unwrap(), None);
        assert_eq!(parse_timeout(Some("OFF")).unwrap(), None);
        for bad in ["", "-1", "NaN", "inf", "1e10", "5s"] {
            assert!(parse_timeout(Some(bad)).is_err(), "{bad}");
        }
    }

    /// The messages of a job ended by a timeout are [`Error::Timeout`]'s
    /// text (the texts that users, scripts and tests know).
    #[test]
    fn abort_messages_are_the_timeout_text() {
        let root = crate::error::rank_2_missed_plan(
            "slow, stopped or dead: rank 2 on host vm; the root, rank 0 on host vm, waited",
        );
        assert_eq!(
            abort_message(&root),
            "nuce: timeout: rank(s) [2] of 3 did not reach Balancer::plan(64x64) within 3.0 s \
             (slow, stopped or dead: rank 2 on host vm; the root, rank 0 on host vm, waited); \
             ending the job (MPI_Abort)"
        );
        assert_eq!(
            abort_message(&root),
            format!("nuce: {root}; ending the job (MPI_Abort)")
        );
        let guard = inside_mpi(
            1,
            "nuce_balancer_create (MPI_Comm_dup of the communicator)".into(),
            Duration::from_secs(5),
        );
        assert_eq!(
            abort_message(&guard),
            "nuce: timeout: rank 1: nuce_balancer_create (MPI_Comm_dup of the communicator) \
             did not finish within 5.0 s (a peer it waits for died or hangs; which one is not \
             knowable here); ending the job (MPI_Abort)"
        );
        let back: Error = decode(&encode(&guard).unwrap(), 0).unwrap();
        assert_eq!(back, guard);
    }

    #[test]
    fn guards_disarm_on_drop() {
        // A guard dropped before its deadline never fires (the test process
        // would be aborted otherwise).
        for _ in 0..3 {
            let g = guard(0, "test", Some(Duration::from_millis(200)));
            std::thread::sleep(Duration::from_millis(20));
            drop(g);
        }
        std::thread::sleep(Duration::from_millis(400));
        assert!(shared().board.lock().unwrap().armed.is_empty());
    }
}
