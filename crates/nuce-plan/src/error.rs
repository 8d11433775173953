//! The one error type of nuce.
//!
//! Every fallible function returns [`Result`]. Errors are plain data (`Clone`,
//! `PartialEq`, serde) so that a collective call can broadcast the root's error
//! and every rank returns *the same* `Err` (see `docs/architecture.md`,
//! "Collective errors agree").

use serde::{Deserialize, Serialize};

/// Result alias used across nuce.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Everything that can go wrong in nuce.
#[non_exhaustive]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, thiserror::Error)]
pub enum Error {
    /// A speed (or cycle time) is zero, negative, NaN or infinite.
    #[error("invalid speed {value} at index {index}: speeds must be finite and > 0")]
    InvalidSpeed {
        /// Position of the offending value in the input.
        index: usize,
        /// The offending value.
        value: f64,
    },
    /// No speeds, no parts, or no work at all.
    #[error("empty input: {0}")]
    Empty(String),
    /// Shapes disagree (e.g. the local array does not match the plan).
    #[error("shape mismatch: {0}")]
    ShapeMismatch(String),
    /// More parts were asked for than there is work to give them.
    #[error("too many parts: {parts} parts for {units} work units")]
    TooManyParts {
        /// Number of parts requested.
        parts: usize,
        /// Number of indivisible work units available.
        units: usize,
    },
    /// A plan is inconsistent (does not tile the domain, wrong part count, ...).
    #[error("invalid plan: {0}")]
    InvalidPlan(String),
    /// Any other invalid argument.
    #[error("invalid input: {0}")]
    InvalidInput(String),
    /// A file could not be parsed; `line` is 1-based.
    #[error("{file}:{line}: {msg}")]
    Parse {
        /// File name (or `<input>`).
        file: String,
        /// 1-based line number.
        line: usize,
        /// What is wrong.
        msg: String,
    },
    /// I/O failure (message of the underlying error).
    #[error("i/o error: {0}")]
    Io(String),
    /// A solver (LP, eigen, matching) failed.
    #[error("solver failed: {0}")]
    Solver(String),
    /// A message received from a peer could not be decoded or was too large.
    #[error("bad message from rank {rank}: {msg}")]
    BadMessage {
        /// The sending rank.
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
    /// A collective operation did not complete in time (a peer died or hangs).
    ///
    /// Reserved: no call of this version returns it. A rank that does not
    /// arrive within the timeout ends the *job* instead (`MPI_Abort`, exit
    /// code 75), with a message naming the missing ranks and their hosts,
    /// because MPI cannot cancel the collective the others are blocked in.
    #[error("timeout after {seconds:.1} s in {what}")]
    Timeout {
        /// Which operation.
        what: String,
        /// How long we waited.
        seconds: f64,
    },
}

impl From<std::io::Error> for Error {
    fn from(e: std::io::Error) -> Self {
        Error::Io(e.to_string())
    }
}

impl From<bincode::Error> for Error {
    fn from(e: bincode::Error) -> Self {
        Error::BadMessage {
            rank: -1,
            msg: e.to_string(),
        }
    }
}
