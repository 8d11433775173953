//! Error codes and messages of the C API: the `NUCE_ERR_*` codes, the
//! thread's last message, [`guard`] (the body of every exported function:
//! an error becomes a code, a panic `NUCE_ERR_PANIC`), the runtime's call
//! names in the C functions' words, and the checked entry of a call.

use std::cell::RefCell;
use std::ffi::{c_char, c_int, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};

use mpi::topology::SimpleCommunicator;
use mpi::traits::*;
use nuce::{plan, Error, Result};

use crate::{caller, depart, grid, pool, saved_graph, savefile};

/// Success.
pub const NUCE_OK: c_int = 0;
/// A speed is zero, negative, NaN or infinite (`nuce::plan::Error::InvalidSpeed`).
pub const NUCE_ERR_INVALID_SPEED: c_int = 1;
/// No speeds, no parts or no work (`nuce::plan::Error::Empty`).
pub const NUCE_ERR_EMPTY: c_int = 2;
/// Shapes or lengths disagree, e.g. a buffer of the wrong length (`nuce::plan::Error::ShapeMismatch`).
pub const NUCE_ERR_SHAPE_MISMATCH: c_int = 3;
/// More ranks than cells (`nuce::plan::Error::TooManyParts`).
pub const NUCE_ERR_TOO_MANY_PARTS: c_int = 4;
/// An inconsistent plan (`nuce::plan::Error::InvalidPlan`).
pub const NUCE_ERR_INVALID_PLAN: c_int = 5;
/// Any other invalid argument: a NULL pointer, an unsupported element
/// size (`nuce::plan::Error::InvalidInput`).
pub const NUCE_ERR_INVALID_INPUT: c_int = 6;
/// A file could not be parsed (`nuce::plan::Error::Parse`).
pub const NUCE_ERR_PARSE: c_int = 7;
/// An I/O failure (`nuce::plan::Error::Io`).
pub const NUCE_ERR_IO: c_int = 8;
/// A solver failed (`nuce::plan::Error::Solver`).
pub const NUCE_ERR_SOLVER: c_int = 9;
/// A message from a peer could not be decoded (`nuce::Error::BadMessage`).
pub const NUCE_ERR_BAD_MESSAGE: c_int = 10;
/// A ghost exchange whose ranks all stopped waiting for their neighbours'
/// messages (`nuce::Error::Timeout`): every rank of it returns this code,
/// naming the ranks waited for. A rank that does not arrive at a collective
/// call ends the job instead, with `MPI_Abort` (exit code 75) and a message
/// naming the missing ranks.
pub const NUCE_ERR_TIMEOUT: c_int = 11;
/// A panic inside nuce was caught at the boundary (a bug of nuce).
pub const NUCE_ERR_PANIC: c_int = 12;
/// An error of a kind this version does not know.
pub const NUCE_ERR_UNKNOWN: c_int = 13;
/// The ranks made different collective calls, or the same call with
/// arguments that must match and differ (another shape, ghost width,
/// element size, algorithm, count of exchanges); every rank returns it, and
/// the message names each group of ranks' call (`nuce::Error::Disagreement`).
pub const NUCE_ERR_DISAGREEMENT: c_int = 14;
/// An MPI call failed; the message carries its MPI error class and string
/// (`nuce::Error::Mpi`).
pub const NUCE_ERR_MPI: c_int = 15;

/// The code of an error. `Remote` (another rank failed in a collective)
/// takes the code of that rank's error, so that every rank returns the
/// same code; planning errors (`Plan`) take their variant's code.
pub(crate) fn code_of(e: &Error) -> c_int {
    match e {
        Error::Plan(p) => plan_code_of(p),
        Error::BadMessage { .. } => NUCE_ERR_BAD_MESSAGE,
        Error::Remote { source, .. } => code_of(source),
        Error::Timeout { .. } => NUCE_ERR_TIMEOUT,
        Error::Disagreement { .. } => NUCE_ERR_DISAGREEMENT,
        Error::Mpi { .. } => NUCE_ERR_MPI,
        _ => NUCE_ERR_UNKNOWN,
    }
}

/// The code of a planning error.
fn plan_code_of(e: &plan::Error) -> c_int {
    match e {
        plan::Error::InvalidSpeed { .. } => NUCE_ERR_INVALID_SPEED,
        plan::Error::Empty(_) => NUCE_ERR_EMPTY,
        plan::Error::ShapeMismatch(_) => NUCE_ERR_SHAPE_MISMATCH,
        plan::Error::TooManyParts { .. } => NUCE_ERR_TOO_MANY_PARTS,
        plan::Error::InvalidPlan(_) => NUCE_ERR_INVALID_PLAN,
        plan::Error::InvalidInput(_) => NUCE_ERR_INVALID_INPUT,
        plan::Error::Parse { .. } => NUCE_ERR_PARSE,
        plan::Error::Io(_) => NUCE_ERR_IO,
        plan::Error::Solver(_) => NUCE_ERR_SOLVER,
        _ => NUCE_ERR_UNKNOWN,
    }
}

thread_local! {
    static LAST_ERROR: RefCell<CString> = RefCell::new(CString::default());
}

pub(crate) fn set_last_error(msg: &str) {
    let c = CString::new(msg.replace('\0', " ")).unwrap_or_default();
    LAST_ERROR.with(|e| *e.borrow_mut() = c);
}

/// Runs the body of an exported function: its error becomes a code and the
/// thread's last message (in the caller's words, see `caller`), a panic
/// becomes `NUCE_ERR_PANIC`. A refusal announced by the binding and not
/// taken by a checked entry (a local call) is the call's error.
pub(crate) fn guard(body: impl FnOnce() -> Result<()>) -> c_int {
    let call = caller::Call::begin();
    let result = catch_unwind(AssertUnwindSafe(body));
    let result = match call.untaken_refusal() {
        Some(e) if result.is_ok() => Ok(Err(e)),
        _ => result,
    };
    match result {
        Ok(Ok(())) => NUCE_OK,
        Ok(Err(e)) => {
            let shown = caller::in_callers_terms(e.clone()).to_string();
            set_last_error(&caller::in_callers_words(in_c_words(&shown)));
            code_of(&e)
        }
        Err(panic) => {
            let what = panic
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_default();
            set_last_error(&format!("internal error (panic) in nuce: {what}"));
            NUCE_ERR_PANIC
        }
    }
}

/// The runtime's names of the calls the C functions make, and the C
/// functions: messages name what the C (or Fortran) caller called.
const C_NAMES: [(&str, &str); 27] = [
    ("OwnershipRanges::new", "nuce_ownership_ranges"),
    ("Balancer::update_speeds", "nuce_update_speeds"),
    (
        "Balancer::set_memory_limit_from_machine",
        "nuce_set_memory_limit_from_machine",
    ),
    ("Balancer::set_memory_limit", "nuce_set_memory_limit"),
    ("Balancer::new", "nuce_balancer_create"),
    ("Balancer::set_speeds", "nuce_set_speeds"),
    ("Balancer::measure_network", "the network probe"),
    ("Balancer::measure_sizes", "nuce_measure_sizes"),
    ("Balancer::measure", "nuce_measure"),
    ("Balancer::set_algorithm3", "nuce_set_decomposer3"),
    ("Balancer::set_algorithm", "nuce_set_decomposer"),
    ("Balancer::record_phase", "nuce_record_phase"),
    ("Balancer::plan1d_weighted", "nuce_plan_1d_weighted"),
    ("Balancer::plan1d", "nuce_plan_1d"),
    ("Balancer::plan", "nuce_plan (the planning step)"),
    (
        "DistArray2::scatter_with_plan",
        "nuce_array_scatter (its data step)",
    ),
    ("DistArray2::scatter", "nuce_array_scatter"),
    (
        "DistGraph::scatter_with_partition",
        "nuce_graph_scatter (its data step)",
    ),
    ("DistGraph::scatter", "nuce_graph_scatter"),
    ("Balancer::maybe_remap", "nuce_maybe_remap"),
    ("DistArray2::gather", "nuce_array_gather"),
    ("DistArray2::exchange_ghosts", "nuce_array_exchange_ghosts"),
    ("DistArray2::remap", "nuce_maybe_remap (its data step)"),
    ("DistArray2::with_plan", "nuce_array_create (its data step)"),
    ("DistGraph::exchange_ghosts", "nuce_graph_exchange_ghosts"),
    ("DistGraph::gather", "nuce_graph_gather"),
    ("DistGraph::migrate", "nuce_graph_migrate"),
];

/// The graph calls whose C name is not the array's.
const GRAPH_NAMES: [(&str, &str); 1] = [(
    "Balancer::maybe_remap(a graph",
    "nuce_graph_maybe_remap(a graph",
)];

/// `msg` with the runtime's call names replaced by the C functions'.
pub(crate) fn in_c_words(msg: &str) -> String {
    // The grid's and graph's names first: they are the longer matches
    // (`Balancer::maybe_remap(a grid` before `Balancer::maybe_remap`).
    grid::GRID_NAMES
        .iter()
        .chain(GRAPH_NAMES.iter())
        .chain(savefile::SAVE_NAMES.iter())
        .chain(saved_graph::SAVED_GRAPH_NAMES.iter())
        .chain(depart::DEPART_NAMES.iter())
        .chain(pool::POOL_NAMES.iter())
        .chain(C_NAMES.iter())
        .fold(msg.to_string(), |m, (rust, c)| m.replace(rust, c))
}

/// Runs a call's checked entry (`entry`, collective, bounded by the
/// timeout) with this rank's own validation `local` as its refusal, then
/// gives `local` back: a wrong argument on any rank is the same error on
/// every rank, naming that rank, before any data step; a rank that does
/// not arrive ends the job within the timeout, named by the root. A refusal announced by the binding
/// ([`nuce_fortran_call`]) replaces `local`.
pub(crate) fn checked<T>(
    local: Result<T>,
    entry: impl FnOnce(Option<&Error>) -> Result<()>,
) -> Result<T> {
    let local = caller::refused_or(local);
    entry(local.as_ref().err())?;
    local
}

/// The error of a NULL handle on this rank: nuce cannot reach the
/// handle's other ranks, which wait for this one in `call` until the
/// timeout and then end the job (the checkpoint's root names this rank).
pub(crate) fn unreachable_null(what: &str, call: &str) -> Error {
    Error::invalid_input(format!(
        "{what} is NULL in {call} on {}: this rank cannot reach the other ranks of the call, \
         which wait for it until the timeout (NUCE_TIMEOUT_S) and then end the job \
         (MPI_Abort, exit code 75) naming this rank",
        world_rank()
    ))
}

/// `world rank R` for messages (`this rank` when MPI is not running).
pub(crate) fn world_rank() -> String {
    if mpi::environment::is_initialized() && !mpi::environment::is_finalized() {
        format!("world rank {}", SimpleCommunicator::world().rank())
    } else {
        "this rank".into()
    }
}

pub(crate) fn null(what: &str) -> Error {
    Error::invalid_input(format!("{what} is NULL"))
}

/// The version of nuce, e.g. `"0.1.0"` (a static string; never NULL).
#[no_mangle]
pub extern "C" fn nuce_version() -> *const c_char {
    concat!(env!("CARGO_PKG_VERSION"), "\0").as_ptr().cast()
}

/// The message of the last failed call on this thread (`""` if none). Valid
/// until the next failing call on this thread; never NULL.
#[no_mangle]
pub extern "C" fn nuce_last_error() -> *const c_char {
    // The CString lives in the thread-local until it is replaced.
    LAST_ERROR.with(|e| e.borrow().as_ptr())
}
