//! Bounded waits: no rank of a nuce job waits forever for a dead or hung peer.
//!
//! MPI itself waits forever in a collective when one rank never arrives (it
//! hangs, or it died and the launcher did not notice). nuce bounds those waits
//! in two ways, both configured by one timeout ([`timeout_from_env`],
//! environment variable [`ENV_TIMEOUT`], default [`DEFAULT_TIMEOUT_S`]):
//!
//! * [`checkpoint`] — an *arrival-checked barrier* that the [`Balancer`]
//!   calls at the start of each of its collectives. Every rank sends a tiny
//!   arrival message to the root and enters a non-blocking barrier; everyone
//!   polls. When the timeout expires the root knows exactly which ranks have
//!   not arrived, prints them with the operation's name, and calls
//!   `MPI_Abort`; the other ranks wait a grace period longer (so that the
//!   root, which can name the missing ranks, speaks first) and then abort too.
//!   The root also sends every rank an "I am here" message, so that a missing
//!   root is named too. Cost when all is well: one `MPI_Ibarrier` and
//!   `2(p − 1)` 8-byte messages to and from the root, plus polling every
//!   0.2 ms; O(p) work at the root.
//! * [`guard`] — a watchdog thread for code that blocks inside MPI where nuce
//!   cannot poll (halo exchanges, the application's own calls). A guard arms a
//!   deadline; dropping it disarms it. If a deadline passes, the thread prints
//!   the operation and the rank and calls `MPI_Abort` on `MPI_COMM_WORLD`;
//!   should the abort not end the process within [`EXIT_GRACE`], it exits.
//!   The missing peer is not knowable there, the message says so.
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

use std::collections::BTreeMap;
use std::io::Write;
use std::sync::{Condvar, Mutex, OnceLock};
use std::time::{Duration, Instant};

use mpi::traits::*;

use crate::error::{Error, Result};
use crate::runtime::comm::{gather_values, root_compute};

/// Environment variable holding the timeout in seconds (`0` or `off` disables it).
pub const ENV_TIMEOUT: &str = "NUCE_TIMEOUT_S";
/// Timeout used when [`ENV_TIMEOUT`] is not set (seconds).
pub const DEFAULT_TIMEOUT_S: f64 = 60.0;
/// Error code passed to `MPI_Abort` on a timeout.
pub const ABORT_CODE: i32 = 75;
/// How much longer than the root a non-root rank waits in a [`checkpoint`].
pub const ROOT_FIRST: Duration = Duration::from_secs(2);
/// How long the watchdog thread lets `MPI_Abort` work before it exits the process.
pub const EXIT_GRACE: Duration = Duration::from_secs(5);
use crate::runtime::tags::{ARRIVE as TAG_ARRIVE, ROOT_HERE as TAG_ROOT_HERE};

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
        Error::InvalidInput(format!(
            "{ENV_TIMEOUT}={v:?}: expected seconds (e.g. 60 or 2.5), 0 or off"
        ))
    })?;
    if !(s.is_finite() && (0.0..=1.0e9).contains(&s)) {
        return Err(Error::InvalidInput(format!(
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

/// Prints `msg` on stderr (flushed) and ends the whole job with `MPI_Abort`
/// (only this process, with exit code [`ABORT_CODE`], when MPI is not
/// initialised or already finalised). Crate-private: only the watchdog ends jobs.
pub(crate) fn abort_job(msg: &str) -> ! {
    let mut err = std::io::stderr().lock();
    let _ = writeln!(err, "{msg}");
    let _ = err.flush();
    drop(err);
    let _ = std::io::stdout().flush();
    if mpi::environment::is_initialized() && !mpi::environment::is_finalized() {
        // SAFETY: MPI is initialised and not finalised (checked just above);
        // MPI_Abort on MPI_COMM_WORLD takes no Rust-side buffers.
        unsafe {
            mpi::ffi::MPI_Abort(mpi::ffi::RSMPI_COMM_WORLD, ABORT_CODE);
        }
    }
    std::thread::sleep(EXIT_GRACE);
    std::process::exit(ABORT_CODE)
}

/// Ranks in `0..size` not marked in `arrived`.
pub fn missing_ranks(arrived: &[bool]) -> Vec<i32> {
    arrived
        .iter()
        .enumerate()
        .filter(|(_, a)| !**a)
        .map(|(r, _)| r as i32)
        .collect()
}

/// Polling interval of [`checkpoint`].
const POLL: Duration = Duration::from_micros(200);

/// Arrival-checked barrier over `comm` (collective): returns when every rank
/// has called it with the same `root`. With a `timeout`, a rank that does not
/// arrive in time ends the job: the root prints
/// `nuce: timeout: rank(s) [..] did not reach <op> within T s` and calls
/// `MPI_Abort`; the other ranks do the same [`ROOT_FIRST`] later if the root
/// did not. `seq` numbers the checkpoints of `comm` (the caller keeps one
/// counter per communicator); ranks that arrive with different numbers (a
/// collective called by only some ranks) are reported as such. Without a
/// timeout, a plain barrier. O(p) messages and work at the root.
///
/// Then every rank checks that all make the same call: `op` names the call
/// and the arguments that must match (e.g. `Balancer::plan(300x240)`); the
/// root gathers them and a difference is the same
/// [`Error::InvalidInput`] on every rank, naming the call of each group of
/// ranks ([`same_call`]).
pub fn checkpoint<C: Communicator>(
    comm: &C,
    root: i32,
    op: &str,
    seq: u64,
    timeout: Option<Duration>,
) -> Result<()> {
    arrival(comm, root, op, seq, timeout)?;
    same_call(comm, root, op)
}

/// Checks that every rank of `comm` makes the same call `op` (collective):
/// the root gathers the calls and broadcasts the verdict, so that a
/// difference is the same error on every rank, before anyone waits on data.
/// O(p · |op|) bytes at the root.
pub fn same_call<C: Communicator>(comm: &C, root: i32, op: &str) -> Result<()> {
    let calls = gather_values(comm, root, &op.to_string())?;
    root_compute(comm, root, || {
        let calls = calls.ok_or_else(|| Error::InvalidInput("no calls gathered".into()))?;
        let mine = &calls[root as usize];
        let mut groups: BTreeMap<&String, Vec<usize>> = BTreeMap::new();
        for (r, c) in calls.iter().enumerate() {
            if c != mine {
                groups.entry(c).or_default().push(r);
            }
        }
        if groups.is_empty() {
            return Ok(());
        }
        let others: Vec<String> = groups
            .iter()
            .map(|(c, ranks)| format!("rank(s) {ranks:?} call {c}"))
            .collect();
        Err(Error::InvalidInput(format!(
            "the ranks disagree on a collective call: the root (rank {root}) calls {mine}, {}",
            others.join(", ")
        )))
    })
}

/// The arrival-checked barrier of [`checkpoint`].
fn arrival<C: Communicator>(
    comm: &C,
    root: i32,
    op: &str,
    seq: u64,
    timeout: Option<Duration>,
) -> Result<()> {
    let Some(timeout) = timeout else {
        comm.barrier();
        return Ok(());
    };
    let size = comm.size();
    let rank = comm.rank();
    if !(0..size).contains(&root) {
        return Err(Error::InvalidInput(format!(
            "checkpoint root {root} is not a rank of a communicator of size {size}"
        )));
    }
    let start = Instant::now();
    if rank == root {
        let mut arrived = vec![false; size as usize];
        arrived[root as usize] = true;
        let mut count = 1;
        mpi::request::scope(|scope| {
            // Tell every rank the root is here, so that they can name a missing root.
            let here: Vec<_> = (0..size)
                .filter(|&r| r != root)
                .map(|r| {
                    comm.process_at_rank(r)
                        .immediate_send_with_tag(scope, &seq, TAG_ROOT_HERE)
                })
                .collect();
            let mut barrier = Some(comm.immediate_barrier());
            loop {
                while let Some((msg, status)) = comm
                    .any_process()
                    .immediate_matched_probe_with_tag(TAG_ARRIVE)
                {
                    let mut theirs = 0u64;
                    msg.matched_receive_into(&mut theirs);
                    let src = status.source_rank();
                    if theirs != seq {
                        abort_job(&format!(
                            "nuce: rank {src} arrived at checkpoint #{theirs} while the root \
                         (rank {root}) is at #{seq} ({op}): the ranks call nuce's collectives \
                         in different orders"
                        ));
                    }
                    if let Some(a) = arrived.get_mut(src as usize) {
                        if !*a {
                            *a = true;
                            count += 1;
                        }
                    }
                }
                if count == size {
                    if let Some(b) = barrier.take() {
                        match b.test() {
                            Ok(_) => break,
                            Err(b) => barrier = Some(b),
                        }
                    }
                }
                if start.elapsed() > timeout {
                    abort_job(&format!(
                        "nuce: timeout: rank(s) {:?} of {size} did not reach {op} within {:.1} s \
                     (the root, rank {root}, waited); ending the job (MPI_Abort)",
                        missing_ranks(&arrived),
                        timeout.as_secs_f64()
                    ));
                }
                std::thread::sleep(POLL);
            }
            for h in here {
                h.wait();
            }
        });
        Ok(())
    } else {
        let limit = timeout + ROOT_FIRST;
        mpi::request::scope(|scope| {
            let send = comm
                .process_at_rank(root)
                .immediate_send_with_tag(scope, &seq, TAG_ARRIVE);
            let mut barrier = Some(comm.immediate_barrier());
            let mut root_here = false;
            loop {
                if !root_here {
                    let from_root = comm.process_at_rank(root);
                    if let Some((msg, _)) =
                        from_root.immediate_matched_probe_with_tag(TAG_ROOT_HERE)
                    {
                        let mut theirs = 0u64;
                        msg.matched_receive_into(&mut theirs);
                        root_here = true;
                    }
                }
                if let Some(b) = barrier.take() {
                    match b.test() {
                        Ok(_) => {}
                        Err(b) => barrier = Some(b),
                    }
                }
                if barrier.is_none() && root_here {
                    break;
                }
                if start.elapsed() > limit {
                    let who = if root_here {
                        format!(
                            "ranks that did not arrive (the root, rank {root}, arrived and names them)"
                        )
                    } else {
                        format!("the root, rank {root}, which did not arrive")
                    };
                    abort_job(&format!(
                        "nuce: timeout: rank {rank} waited {:.1} s in {op} for {who}; \
                         ending the job (MPI_Abort)",
                        limit.as_secs_f64()
                    ));
                }
                std::thread::sleep(POLL);
            }
            send.wait();
        });
        Ok(())
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
            Some((deadline, op, rank, timeout)) if deadline <= now => {
                drop(board);
                abort_job(&format!(
                    "nuce: timeout: rank {rank}: {op} did not finish within {:.1} s \
                     (a peer it waits for died or hangs; which one is not knowable here); \
                     ending the job (MPI_Abort)",
                    timeout.as_secs_f64()
                ));
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
        assert_eq!(missing_ranks(&[true, false, true, false]), vec![1, 3]);
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
