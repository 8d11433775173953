//! The runtime's error type: what can go wrong in a running MPI job.
//!
//! Every fallible function of the runtime returns [`Result`]. Its [`Error`]
//! wraps the planning layer's error ([`Error::Plan`]: wrong input, shapes,
//! plans, files, a failed solver) and adds what only a job of several ranks
//! can meet: a peer's message that cannot be decoded ([`Error::BadMessage`]),
//! another rank's failure ([`Error::Remote`]), ranks that make different calls
//! ([`Error::Disagreement`]), a failed MPI call ([`Error::Mpi`]) and a wait
//! that outlasts the timeout ([`Error::Timeout`]).
//!
//! Errors are plain data (`Clone`, `PartialEq`, serde) so that a collective
//! call can broadcast the root's error and every rank returns *the same*
//! `Err` (see `docs/architecture.md`, "Collective errors agree").

use serde::{Deserialize, Serialize};

use crate::plan;

/// Result alias of the runtime.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Everything that can go wrong in a nuce job.
///
/// Planning errors (invalid speeds, shapes, plans, ...) are
/// [`Error::Plan`]; match them through it:
///
/// ```
/// use nuce::plan;
///
/// fn explain(r: nuce::Result<()>) -> &'static str {
///     match r {
///         Ok(()) => "fine",
///         Err(nuce::Error::Plan(plan::Error::InvalidInput(_))) => "a wrong argument",
///         Err(nuce::Error::Plan(plan::Error::ShapeMismatch(_))) => "a wrong shape",
///         Err(nuce::Error::Disagreement { .. }) => "the ranks made different calls",
///         Err(nuce::Error::Timeout { .. }) => "a peer did not come in time",
///         Err(_) => "something else",
///     }
/// }
/// let e: nuce::Error = plan::Error::InvalidInput("ghost width 0".into()).into();
/// assert_eq!(explain(Err(e)), "a wrong argument");
/// assert_eq!(explain(Err(nuce::Error::invalid_input("no rows"))), "a wrong argument");
/// ```
///
/// [`Error::plan`] gives the planning error whichever rank it came from
/// (it looks through [`Error::Remote`]).
#[non_exhaustive]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, thiserror::Error)]
pub enum Error {
    /// A planning error: the input is wrong (speeds, shapes, plans, files)
    /// or a solver failed. Its text is the planning error's.
    #[error(transparent)]
    Plan(#[from] plan::Error),
    /// A message received from a peer could not be decoded or was too large.
    #[error("bad message from rank {rank}: {msg}")]
    BadMessage {
        /// The sending rank (`-1`: this rank could not encode its own).
        rank: i32,
        /// What is wrong.
        msg: String,
    },
    /// Some rank failed in a collective call; every rank reports the same error.
    #[error("rank {rank} failed: {source}")]
    Remote {
        /// The lowest rank that failed.
        rank: i32,
        /// Its error.
        source: Box<Error>,
    },
    /// The ranks of one communicator made different collective calls, or the
    /// same call with arguments that must match and do not (another shape,
    /// ghost width, element size, algorithm, count of exchanges). Every rank
    /// returns the same error, naming each group of ranks' call.
    #[error("the ranks disagree on {on}: {}", calls.join(", "))]
    Disagreement {
        /// What they disagree on (`a collective call`, `a ghost exchange`).
        on: String,
        /// The calls: the root's first, then each group of ranks' call.
        calls: Vec<String>,
    },
    /// An MPI call returned an error (only with an error handler that returns
    /// errors; MPI's default ends the job).
    #[error("MPI error in {what}: class {class}, code {code}: {text}")]
    Mpi {
        /// The MPI call, with nuce's operation.
        what: String,
        /// The MPI error class (`MPI_Error_class`).
        class: i32,
        /// The MPI error code.
        code: i32,
        /// MPI's error string (`MPI_Error_string`).
        text: String,
    },
    /// A wait outlasted the timeout (`NUCE_TIMEOUT_S`,
    /// `Settings::timeout`): a rank did not arrive, or sent nothing, in
    /// time (slow, stopped or dead).
    ///
    /// **Returned** only where every rank can return it and none is left
    /// blocked: a ghost exchange (`DistArray2::exchange_ghosts`,
    /// `DistGraph::exchange_ghosts`, `Grid::exchange`) whose ranks all
    /// stopped waiting for their neighbours' messages and met at the checked
    /// entry they escalate to, where no rank made another call (that would be
    /// [`Error::Disagreement`]) and none refused (that rank's error): every
    /// rank returns the same `Timeout`, naming the ranks waited for and their
    /// hosts.
    ///
    /// **The job ends instead** (`MPI_Abort`, exit code 75) when a rank does
    /// not arrive at a checked entry (the balance points, every collective
    /// verb) within the timeout and is not found waiting at another of
    /// nuce's collectives (that is an [`Error::Disagreement`] on every rank), or a wait inside MPI (`MPI_Comm_dup`, an
    /// application's call under a watchdog guard) outlasts it: MPI cannot
    /// cancel the collective the other ranks are blocked in. The message
    /// printed then is this variant's text, `nuce: ` before it and
    /// `; ending the job (MPI_Abort)` after it: the root names the missing
    /// ranks and their hosts; a rank still waiting for the root's answer
    /// names the root, or tells that the root names them; a wait inside MPI
    /// cannot name the peer.
    #[error("{}", timeout_text(*waiter, what, *seconds, ranks, *size, note))]
    Timeout {
        /// The operation that waited (nuce's call with its must-match arguments).
        what: String,
        /// How long it waited, in seconds.
        seconds: f64,
        /// The ranks (of the operation's communicator) waited for in vain;
        /// empty when the rank that gave up cannot know them.
        ranks: Vec<i32>,
        /// The host of each of `ranks`, as far as nuce learnt it (`unknown`
        /// where not).
        hosts: Vec<String>,
        /// The size of the operation's communicator (0 where not known: a
        /// wait inside MPI).
        size: i32,
        /// The rank that gave up waiting (in the operation's communicator).
        waiter: i32,
        /// What else the rank that gave up knows (the hosts, who waited, what
        /// the other ranks were doing).
        note: String,
    },
}

/// The text of [`Error::Timeout`].
fn timeout_text(
    waiter: i32,
    what: &str,
    seconds: f64,
    ranks: &[i32],
    size: i32,
    note: &str,
) -> String {
    let note = if note.is_empty() {
        String::new()
    } else {
        format!(" ({note})")
    };
    if ranks.is_empty() {
        format!("timeout: rank {waiter}: {what} did not finish within {seconds:.1} s{note}")
    } else {
        format!(
            "timeout: rank(s) {ranks:?} of {size} did not reach {what} within {seconds:.1} s{note}"
        )
    }
}

impl Error {
    /// [`plan::Error::InvalidInput`]: any invalid argument.
    pub fn invalid_input(msg: impl Into<String>) -> Error {
        Error::Plan(plan::Error::InvalidInput(msg.into()))
    }

    /// [`plan::Error::ShapeMismatch`]: shapes or lengths disagree.
    pub fn shape_mismatch(msg: impl Into<String>) -> Error {
        Error::Plan(plan::Error::ShapeMismatch(msg.into()))
    }

    /// [`plan::Error::InvalidPlan`]: an inconsistent plan.
    pub fn invalid_plan(msg: impl Into<String>) -> Error {
        Error::Plan(plan::Error::InvalidPlan(msg.into()))
    }

    /// [`plan::Error::Empty`]: no speeds, no parts or no work.
    pub fn empty(msg: impl Into<String>) -> Error {
        Error::Plan(plan::Error::Empty(msg.into()))
    }

    /// The planning error, if this is one, also when another rank had it
    /// (through [`Error::Remote`]).
    pub fn plan(&self) -> Option<&plan::Error> {
        match self {
            Error::Plan(e) => Some(e),
            Error::Remote { source, .. } => source.plan(),
            _ => None,
        }
    }
}

impl From<std::io::Error> for Error {
    fn from(e: std::io::Error) -> Self {
        Error::Plan(e.into())
    }
}

/// A bincode failure of this rank's own bytes: a [`Error::BadMessage`] of
/// rank `-1` (decoding a peer's message names the peer instead:
/// `runtime::comm::decode`).
impl From<bincode::Error> for Error {
    fn from(e: bincode::Error) -> Self {
        Error::BadMessage {
            rank: -1,
            msg: e.to_string(),
        }
    }
}

/// A test's timeout: rank 2 of 3 (on host `vm`) missed `Balancer::plan(64x64)`
/// for 3 s, seen by the root, with `note`.
#[cfg(test)]
pub(crate) fn rank_2_missed_plan(note: &str) -> Error {
    Error::Timeout {
        what: "Balancer::plan(64x64)".into(),
        seconds: 3.0,
        ranks: vec![2],
        hosts: vec!["vm".into()],
        size: 3,
        waiter: 0,
        note: note.into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn planning_errors_keep_their_text_and_are_found_through_remote() {
        let e = Error::shape_mismatch("3 rows, expected 4");
        assert_eq!(e.to_string(), "shape mismatch: 3 rows, expected 4");
        let r = Error::Remote {
            rank: 2,
            source: Box::new(e.clone()),
        };
        assert_eq!(r.plan(), e.plan());
        assert!(matches!(
            r.plan(),
            Some(plan::Error::ShapeMismatch(m)) if m == "3 rows, expected 4"
        ));
        assert_eq!(
            Error::invalid_input("x"),
            Error::from(plan::Error::InvalidInput("x".into()))
        );
        assert!(Error::Disagreement {
            on: "a collective call".into(),
            calls: vec![]
        }
        .plan()
        .is_none());
    }

    #[test]
    fn errors_survive_a_broadcast() {
        let all = [
            Error::invalid_input("bad"),
            Error::Plan(plan::Error::InvalidSpeed {
                index: 3,
                value: -1.0,
            }),
            Error::BadMessage {
                rank: 1,
                msg: "truncated".into(),
            },
            Error::Remote {
                rank: 2,
                source: Box::new(Error::Mpi {
                    what: "MPI_Isend".into(),
                    class: 5,
                    code: 5,
                    text: "invalid rank".into(),
                }),
            },
            Error::Disagreement {
                on: "a collective call".into(),
                calls: vec![
                    "the root (rank 0) calls a".into(),
                    "rank(s) [1] call b".into(),
                ],
            },
            Error::Timeout {
                what: "Balancer::plan".into(),
                seconds: 2.5,
                ranks: vec![1, 3],
                hosts: vec!["n1".into(), "unknown".into()],
                size: 4,
                waiter: 0,
                note: String::new(),
            },
        ];
        for e in all {
            let bytes = crate::runtime::comm::encode(&e).unwrap();
            let back: Error = crate::runtime::comm::decode(&bytes, 0).unwrap();
            assert_eq!(back, e);
            assert_eq!(back.to_string(), e.to_string());
        }
    }

    #[test]
    fn timeout_texts() {
        let t = rank_2_missed_plan("slow, stopped or dead: rank 2 on host vm");
        assert_eq!(
            t.to_string(),
            "timeout: rank(s) [2] of 3 did not reach Balancer::plan(64x64) within 3.0 s \
             (slow, stopped or dead: rank 2 on host vm)"
        );
        let t = Error::Timeout {
            what: "nuce_balancer_create".into(),
            seconds: 5.0,
            ranks: vec![],
            hosts: vec![],
            size: 2,
            waiter: 1,
            note: String::new(),
        };
        assert_eq!(
            t.to_string(),
            "timeout: rank 1: nuce_balancer_create did not finish within 5.0 s"
        );
    }
}
