//! The error type of the planning layer.
//!
//! Every fallible planning function returns [`Result`]: what is wrong with
//! the input (speeds, shapes, plans, files) or a solver that failed. What can
//! go wrong only in a running MPI job (a peer's bad message, ranks that
//! disagree, an MPI failure, a timeout) is the runtime's error, `nuce::Error`,
//! which wraps this one (`nuce::Error::Plan`). Errors are plain data (`Clone`,
//! `PartialEq`, serde) so that a collective call can broadcast the root's error
//! and every rank returns *the same* `Err` (see `docs/architecture.md`,
//! "Collective errors agree").

use serde::{Deserialize, Serialize};

/// Result alias of the planning layer.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Everything that can go wrong in planning.
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
}

impl From<std::io::Error> for Error {
    fn from(e: std::io::Error) -> Self {
        Error::Io(e.to_string())
    }
}
