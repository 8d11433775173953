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
//!   ranks have not arrived. If each waits at another of nuce's collectives
//!   (the ranks call them in different orders), every rank gets the same
//!   [`Error::Disagreement`] naming each rank's call (module `elsewhere`);
//!   otherwise (slow, stopped or dead) the root prints them with their
//!   hosts and the operation's name, and calls `MPI_Abort`; the other ranks
//!   wait a grace period longer (so that the root, which can name the
//!   missing ranks, speaks first) and then abort too, naming the root. Cost
//!   when all is well: `3(p − 1)` small messages to and from the root,
//!   polling (yielding the core now and then, never sleeping: see
//!   [`crate::runtime::clock`]); O(p) work at the root. Once a balancer
//!   knows its hosts the entry goes through host leaders (module `tree`): `3H`
//!   messages at the root for `H` hosts, each leader `3m` for its `m` ranks.
//! * [`guard()`] — a watchdog thread for code that blocks inside MPI where nuce
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
//! The parts, one a module: `entry` (the flat checked entry: arrivals,
//! verdicts, refusal notices), `tree` (the two-level entry through host
//! leaders), [`Checkpoints`] (`checkpoints`: the entries of one
//! communicator), `channels` (the registry of live communicators, where a
//! stuck exchange looks), `elsewhere` (a root that times out and finds the
//! missing ranks at other collectives), `hosts` (the hosts of
//! the ranks, for the messages), `errors` (the disagreements and timeouts
//! the watchdog reports), `guard` (the watchdog thread); this file holds
//! the timeout's setting and the end of a job ([`abort_message`]).
//!
//! [`Balancer`]: crate::runtime::balancer::Balancer
//! [`DistArray2`]: crate::runtime::array::DistArray2
//! [`DistGraph`]: crate::runtime::graph::DistGraph

use std::io::Write;
use std::time::Duration;

use crate::error::{Error, Result};

mod channels;
mod checkpoints;
mod elsewhere;
mod entry;
mod errors;
mod guard;
mod hosts;
mod tree;

pub(crate) use channels::{checkpoint_under_way, refusal_under_way};
pub use checkpoints::Checkpoints;
pub(crate) use checkpoints::{check_entry, join_checkpoint};
#[allow(unused_imports)] // the docs of the checked verbs link to it here
pub(crate) use entry::refusing_checkpoint;
pub use entry::{arrival_bytes_received, arrivals_received, checkpoint};
pub(crate) use entry::{Bringing, Stalled};
pub use guard::{guard, Guard};
pub(crate) use hosts::{host_name, learn_host};

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

/// Parses a timeout value: seconds as a positive decimal number, or `0` /
/// `off` for no timeout. `None` (unset) gives `DEFAULT_TIMEOUT_S`.
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

#[cfg(test)]
mod tests {
    use super::errors::inside_mpi;
    use super::*;
    use crate::runtime::comm::{decode, encode};

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
}
