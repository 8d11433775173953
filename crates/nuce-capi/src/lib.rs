//! The C API of nuce: `libnuce.so` / `libnuce.a` and `include/nuce.h`.
//!
//! It covers 2D arrays (this file and `staged`), 2D and 3D grids on the
//! application's own buffers (`grid`), graphs (`partition`:
//! partitioning a CSR graph; `graph`: the distributed graph handle),
//! master–worker schedules (`tasks`), AMR submesh allocation (`amr`) and
//! p4est's partition counts (`curve`).
//! Every function returns an `int` error code
//! (`NUCE_OK` = 0, otherwise one `NUCE_ERR_*` per kind of `nuce::Error`),
//! never unwinds across the boundary (a panic is caught and reported as
//! `NUCE_ERR_PANIC`), and sets a thread-local message readable with
//! [`nuce_last_error`]. Collective functions return the same code on every
//! rank. The application owns MPI (nuce never initialises nor finalises
//! it), its communicator (duplicated, never freed) and its memory (nuce
//! reads and writes the buffers it is given and allocates none for the
//! application). The reference is `docs/c-api.md`.

#![allow(non_camel_case_types)]
// The exported functions are for C, which has no `unsafe`: each checks every
// pointer for NULL and every buffer against its explicit length, and the
// remaining contract (a non-NULL pointer is valid for what it claims) is the
// C caller's, documented in docs/c-api.md. Every dereference is in an
// `unsafe` block with its SAFETY comment.
#![allow(clippy::not_unsafe_ptr_arg_deref)]

mod amr;
mod caller;
mod curve;
mod depart;
mod graph;
mod grid;
mod partition;
mod pool;
mod ranges;
mod saved_graph;
mod savefile;
mod settings;
mod staged;
mod tasks;

use std::cell::RefCell;
use std::ffi::{c_char, c_int, c_void, CString};
use std::mem::ManuallyDrop;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::time::Duration;

use mpi::raw::FromRaw;
use mpi::topology::SimpleCommunicator;
use mpi::traits::*;
use nuce::{plan, waiting, ArrayPlan, Balancer, Error, Rect, Result};

use staged::{check_elem_size, create_dyn, Init, Staged};

pub use amr::*;
pub use caller::{nuce_fortran_call, nuce_fortran_done, nuce_fortran_ids};
pub use curve::*;
pub use depart::*;
pub use graph::*;
pub use grid::*;
pub use partition::*;
pub use pool::*;
pub use ranges::*;
pub use saved_graph::*;
pub use savefile::*;
pub use tasks::*;

/// An MPI communicator, as `<mpi.h>` defines it.
pub type MPI_Comm = mpi::ffi::MPI_Comm;
/// A Fortran MPI handle, as `<mpi.h>` defines it.
pub type MPI_Fint = mpi::ffi::RSMPI_Fint;

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
fn code_of(e: &Error) -> c_int {
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

fn set_last_error(msg: &str) {
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
const C_NAMES: [(&str, &str); 26] = [
    ("Balancer::ownership_ranges", "nuce_ownership_ranges"),
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
    ("Balancer::scatter_array", "nuce_array_scatter"),
    ("Balancer::scatter_graph", "nuce_graph_scatter"),
    ("Balancer::maybe_remap", "nuce_maybe_remap"),
    ("DistArray2::gather", "nuce_array_gather"),
    ("DistArray2::exchange_ghosts", "nuce_array_exchange_ghosts"),
    ("DistArray2::remap", "nuce_maybe_remap (its data step)"),
    ("DistArray2::scatter", "nuce_array_scatter (its data step)"),
    ("DistArray2::new", "nuce_array_create (its data step)"),
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

/// `&mut *p`, or an error naming the argument.
///
/// # Safety
/// `p` is NULL or points to a live, exclusively borrowed `T`.
pub(crate) unsafe fn deref_mut<'a, T>(p: *mut T, what: &str) -> Result<&'a mut T> {
    // SAFETY: the caller's contract: NULL or valid and unaliased.
    unsafe { p.as_mut() }.ok_or_else(|| null(what))
}

/// `n` distinct live handles at `ptrs` (an array named `what`; NULL allowed
/// when `n` is 0).
///
/// # Safety
/// `ptrs` is NULL or `n` readable pointers, each NULL or a live handle.
pub(crate) unsafe fn handles<'a, H>(
    n: c_int,
    ptrs: *const *mut H,
    what: &str,
) -> Result<Vec<&'a mut H>> {
    let n = usize::try_from(n)
        .map_err(|_| Error::invalid_input(format!("n{what} = {n}: at least 0")))?;
    let all: &[*mut H] = if n == 0 {
        &[]
    } else if ptrs.is_null() {
        return Err(null(what));
    } else {
        // SAFETY: `n` readable handles (contract).
        unsafe { std::slice::from_raw_parts(ptrs, n) }
    };
    for (k, p) in all.iter().enumerate() {
        if all[..k].contains(p) {
            return Err(Error::invalid_input(format!("{what}[{k}] is given twice")));
        }
    }
    all.iter()
        .enumerate()
        // SAFETY: each NULL or a live, distinct handle (checked above).
        .map(|(k, &p)| unsafe { deref_mut(p, &format!("{what}[{k}]")) })
        .collect()
}

/// The bytes of a buffer of `len` elements of `elem` bytes, checked against
/// the expected number of elements.
///
/// # Safety
/// `p` is NULL or points to `len * elem` readable bytes.
pub(crate) unsafe fn buffer<'a>(
    p: *const c_void,
    len: usize,
    expected: usize,
    elem: usize,
    what: &str,
) -> Result<&'a [u8]> {
    if p.is_null() {
        return Err(null(what));
    }
    if len != expected {
        return Err(Error::shape_mismatch(format!(
            "{what} has {len} elements, {expected} expected"
        )));
    }
    // SAFETY: non-null, and the caller's contract gives `len * elem` bytes.
    Ok(unsafe { std::slice::from_raw_parts(p.cast::<u8>(), len * elem) })
}

/// The `n` entries of an argument array (`n` = 0: none, `p` may be NULL).
///
/// # Safety
/// `p` is NULL or points to `n` readable entries.
pub(crate) unsafe fn entries<'a, T>(p: *const T, n: usize, what: &str) -> Result<&'a [T]> {
    match n {
        0 => Ok(&[]),
        _ if p.is_null() => Err(null(what)),
        // SAFETY: non-null and `n` readable entries (contract).
        _ => Ok(unsafe { std::slice::from_raw_parts(p, n) }),
    }
}

/// [`buffer`], writable.
///
/// # Safety
/// `p` is NULL or points to `len * elem` writable bytes not otherwise borrowed.
pub(crate) unsafe fn buffer_mut<'a>(
    p: *mut c_void,
    len: usize,
    expected: usize,
    elem: usize,
    what: &str,
) -> Result<&'a mut [u8]> {
    // SAFETY: same contract as `buffer`, which checks NULL and the length.
    unsafe { buffer(p, len, expected, elem, what)? };
    // SAFETY: non-null and `len * elem` writable, unaliased bytes (contract).
    Ok(unsafe { std::slice::from_raw_parts_mut(p.cast::<u8>(), len * elem) })
}

pub(crate) fn to_usize(x: i64, what: &str) -> Result<usize> {
    usize::try_from(x).map_err(|_| Error::invalid_input(format!("{what} = {x} is negative")))
}

/// Writes `r` as `row, col, rows, cols` into `out[4]`.
///
/// # Safety
/// `out` is NULL or points to 4 writable `int64_t`.
unsafe fn write_rect(r: Option<Rect>, out: *mut i64, rank: c_int) -> Result<()> {
    let r = r.ok_or_else(|| Error::invalid_input(format!("rank {rank} is out of range")))?;
    if out.is_null() {
        return Err(null("out"));
    }
    let v = [r.row, r.col, r.rows, r.cols].map(|x| x as i64);
    // SAFETY: non-null, and 4 writable int64_t (contract).
    unsafe { std::ptr::copy_nonoverlapping(v.as_ptr(), out, 4) };
    Ok(())
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

/// A load balancer (opaque): a duplicate of the application's communicator,
/// the speeds, the last plan made by [`nuce_plan`].
pub struct nuce_balancer {
    pub(crate) bal: Balancer,
    plan: Option<ArrayPlan>,
    /// The departure of the last `nuce_depart`, until `nuce_depart_finish`.
    pub(crate) departure: Option<nuce::Departure>,
}

/// A distributed 2D array (opaque), bound to the balancer that created it:
/// the layout, and the library's staging block (see `docs/c-api.md`).
pub struct nuce_array {
    inner: Box<dyn Staged>,
}

/// Creates a balancer over a duplicate of `comm` (collective over `comm`:
/// `MPI_Comm_dup`), root rank 0, writing it to `*out` (`NULL` on failure).
/// `comm` stays the caller's: nuce never frees it. MPI must be initialised.
#[no_mangle]
pub extern "C" fn nuce_balancer_create(comm: MPI_Comm, out: *mut *mut nuce_balancer) -> c_int {
    guard(|| {
        // SAFETY: `out` is NULL or a writable pointer (caller's contract).
        let out = unsafe { deref_mut(out, "out") }?;
        *out = std::ptr::null_mut();
        if !mpi::environment::is_initialized() || mpi::environment::is_finalized() {
            return Err(Error::invalid_input("MPI is not initialised"));
        }
        // SAFETY: reading the null-handle constant of the MPI library.
        if comm == unsafe { mpi::ffi::RSMPI_COMM_NULL } {
            return Err(Error::invalid_input(format!(
                "comm is MPI_COMM_NULL in nuce_balancer_create on {}: the other ranks, \
                 in MPI_Comm_dup, wait for this one until the timeout (NUCE_TIMEOUT_S) \
                 and then end the job (MPI_Abort, exit code 75)",
                world_rank()
            )));
        }
        let mut inter: c_int = 0;
        // SAFETY: `comm` is a non-null communicator handle from the caller;
        // MPI_Comm_test_inter only reads it.
        let code = unsafe { mpi::ffi::MPI_Comm_test_inter(comm, &mut inter) };
        nuce::internals::comm::mpi_check(code, "MPI_Comm_test_inter(comm)")?;
        if inter != 0 {
            return Err(Error::invalid_input("comm is an inter-communicator"));
        }
        // SAFETY: `comm` is a live intra-communicator (checked above). The
        // wrapper's Drop would MPI_Comm_free it: ManuallyDrop makes sure it
        // is never dropped, so the caller's handle is never freed; it is only
        // borrowed here for Balancer::new, which duplicates it.
        let borrowed = ManuallyDrop::new(unsafe { SimpleCommunicator::from_raw(comm) });
        let bal = Balancer::new_as(&*borrowed, "nuce_balancer_create")?;
        *out = new_balancer_handle(bal);
        Ok(())
    })
}

/// A new handle owning `bal`.
pub(crate) fn new_balancer_handle(bal: Balancer) -> *mut nuce_balancer {
    Box::into_raw(Box::new(nuce_balancer {
        bal,
        plan: None,
        departure: None,
    }))
}

/// [`nuce_balancer_create`] for a Fortran communicator handle (converted
/// with `MPI_Comm_f2c`).
#[no_mangle]
pub extern "C" fn nuce_balancer_create_f(comm: MPI_Fint, out: *mut *mut nuce_balancer) -> c_int {
    // SAFETY: MPI_Comm_f2c converts a handle value; an invalid one gives
    // MPI_COMM_NULL, which nuce_balancer_create rejects.
    let c = unsafe { mpi::ffi::RSMPI_Comm_f2c(comm) };
    nuce_balancer_create(c, out)
}

/// Frees a balancer (local; NULL is ignored). Its arrays must be freed first
/// or after, in any order; they must not be used with another balancer.
#[no_mangle]
pub extern "C" fn nuce_balancer_free(b: *mut nuce_balancer) -> c_int {
    // SAFETY: `b` is NULL or came from nuce_balancer_create, freed once (contract).
    unsafe { free_handle(b) }
}

/// Drops a handle made by `Box::into_raw` (NULL is ignored).
///
/// # Safety
/// `p` is NULL or a live handle of this library, not used afterwards.
pub(crate) unsafe fn free_handle<T>(p: *mut T) -> c_int {
    guard(|| {
        if !p.is_null() {
            // SAFETY: the caller's contract: a Box::into_raw pointer, freed once.
            drop(unsafe { Box::from_raw(p) });
        }
        Ok(())
    })
}

/// The balancer behind a handle.
///
/// # Safety
/// `b` is NULL or a live handle from [`nuce_balancer_create`].
pub(crate) unsafe fn balancer<'a>(b: *mut nuce_balancer) -> Result<&'a mut nuce_balancer> {
    // SAFETY: the caller's contract.
    unsafe { deref_mut(b, "balancer") }
}

/// The array behind a handle.
///
/// # Safety
/// `a` is NULL or a live handle from [`nuce_array_create`] or [`nuce_array_scatter`].
unsafe fn array<'a>(a: *mut nuce_array) -> Result<&'a mut nuce_array> {
    // SAFETY: the caller's contract.
    unsafe { deref_mut(a, "array") }
}

/// Measures every rank with the built-in kernel (collective); the next plans
/// are in proportion to these speeds.
#[no_mangle]
pub extern "C" fn nuce_measure(b: *mut nuce_balancer) -> c_int {
    // SAFETY: `b` is NULL or a live handle (contract of the C API).
    guard(|| unsafe { balancer(b) }?.bal.measure().map(|_| ()))
}

/// Measures every rank's speed on blocks of each of the `n` sizes (cells)
/// of `sizes` — a size sweep (collective; every rank passes the same
/// sizes): every rank runs the built-in stencil on each block size and
/// keeps the points as its speed function, so that the first plan can
/// already use the functional speed model (Rust `Balancer::measure_sizes`).
/// The speeds of the next plans are the functions' mean speeds. Errors, the
/// same `NUCE_ERR_INVALID_INPUT` on every rank: `sizes` NULL with `n > 0`,
/// a size below 16 or above 67 108 864 cells, `n` of 0 or above 64, or
/// sizes that differ between ranks.
#[no_mangle]
pub extern "C" fn nuce_measure_sizes(b: *mut nuce_balancer, sizes: *const i64, n: usize) -> c_int {
    guard(|| {
        // SAFETY: `b` is NULL or a live handle.
        let h = unsafe { balancer(b) }
            .map_err(|_| unreachable_null("the balancer", "nuce_measure_sizes"))?;
        let max = nuce::plan::fpm::MAX_SWEEP_SIZES;
        let local = if sizes.is_null() && n > 0 {
            Err(null("sizes"))
        } else if n == 0 || n > max {
            Err(Error::invalid_input(format!(
                "nuce_measure_sizes takes 1 to {max} block sizes, not {n}"
            )))
        } else {
            // SAFETY: non-null, `n` (at most 64) readable int64_t (contract).
            let s = unsafe { std::slice::from_raw_parts(sizes, n) };
            s.iter()
                .enumerate()
                .map(|(i, &c)| sweep_size(i, c))
                .collect::<Result<Vec<usize>>>()
        };
        let list = checked(local, |r| h.bal.entry("nuce_measure_sizes", r))?;
        h.bal.measure_sizes(&list).map(drop)
    })
}

/// Block size `i` of a sweep, `c` cells, as a count, or the error naming
/// it as the caller wrote it (`sizes[i]`, Fortran's `sizes(i + 1)`).
fn sweep_size(i: usize, c: i64) -> Result<usize> {
    use nuce::plan::fpm::{MAX_SWEEP_CELLS, MIN_SWEEP_CELLS};
    usize::try_from(c)
        .ok()
        .filter(|x| (MIN_SWEEP_CELLS..=MAX_SWEEP_CELLS).contains(x))
        .ok_or_else(|| {
            Error::invalid_input(format!(
                "{} is {c} cells: a block size must be between {MIN_SWEEP_CELLS} and \
                 {MAX_SWEEP_CELLS} cells",
                caller::element("sizes", i)
            ))
        })
}

/// Sets every rank's speed (collective): the root's `n` values are
/// validated (finite, > 0, one per rank) and broadcast; `speeds` is read on
/// rank 0 only (may be NULL elsewhere).
#[no_mangle]
pub extern "C" fn nuce_set_speeds(b: *mut nuce_balancer, speeds: *const f64, n: usize) -> c_int {
    guard(|| {
        // SAFETY: `b` is NULL or a live handle.
        let h = unsafe { balancer(b) }
            .map_err(|_| unreachable_null("the balancer", "nuce_set_speeds"))?;
        let root = h.bal.comm().rank() == nuce::ROOT;
        let local = if root && speeds.is_null() {
            Err(null("speeds"))
        } else {
            Ok(())
        };
        checked(local, |r| h.bal.entry("nuce_set_speeds", r))?;
        let s: &[f64] = if root {
            // SAFETY: non-null on the root, `n` readable doubles (contract).
            unsafe { std::slice::from_raw_parts(speeds, n) }
        } else {
            &[]
        };
        h.bal.set_speeds(s)
    })
}

/// Copies the current speed estimates (one per rank, work units per second)
/// into `out[n]` (local). Fails when no speed is known yet or `n` is not
/// the number of ranks.
#[no_mangle]
pub extern "C" fn nuce_speeds(b: *mut nuce_balancer, out: *mut f64, n: usize) -> c_int {
    guard(|| {
        // SAFETY: `b` is NULL or a live handle.
        let h = unsafe { balancer(b) }?;
        let s = h
            .bal
            .speeds()
            .ok_or_else(|| Error::empty("no speeds measured yet"))?;
        // SAFETY: `out` is NULL or `n` writable doubles (contract).
        let o = unsafe { buffer_mut(out.cast(), n, s.len(), 8, "out") }?;
        for (d, x) in o.chunks_exact_mut(8).zip(s) {
            d.copy_from_slice(&x.to_ne_bytes());
        }
        Ok(())
    })
}

/// Plans a `rows × cols` array for the current speeds (collective; uniform
/// when none were measured) and keeps the plan for [`nuce_plan_rect`].
#[no_mangle]
pub extern "C" fn nuce_plan(b: *mut nuce_balancer, rows: i64, cols: i64) -> c_int {
    guard(|| {
        // SAFETY: `b` is NULL or a live handle.
        let h =
            unsafe { balancer(b) }.map_err(|_| unreachable_null("the balancer", "nuce_plan"))?;
        let _w = waiting();
        let [rn, cn] = caller::extent_names();
        let shape = to_usize(rows, rn).and_then(|r| Ok((r, to_usize(cols, cn)?)));
        let op = format!("nuce_plan({})", caller::extents(rows, cols));
        let (rows, cols) = checked(shape, |r| h.bal.entry(&op, r))?;
        h.plan = Some(h.bal.plan(rows, cols)?);
        Ok(())
    })
}

/// Splits `n` units of one dimension (matrix rows, particles, vector
/// entries) among the balancer's ranks for the current speeds (collective;
/// uniform when none were measured): writes every rank's count into
/// `counts[ncounts]` (`ncounts` = the number of ranks). Rank `r` owns the
/// units from the sum of the counts before it, `counts[r]` of them; the
/// counts add up to `n`, each within one unit of its share (the functional
/// shares after [`nuce_measure_sizes`]), within the memory limits of
/// `nuce_set_memory_limit` (in units here). The application moves its
/// own data; a balance point (the next phase is timed from here). Errors,
/// the same on every rank: `n` negative, below the number of ranks or
/// different between ranks; `counts` NULL or `ncounts` not the number of
/// ranks on some rank; limits that hold less than `n`.
#[no_mangle]
pub extern "C" fn nuce_plan_1d(
    b: *mut nuce_balancer,
    n: i64,
    counts: *mut i64,
    ncounts: usize,
) -> c_int {
    guard(|| {
        // SAFETY: `b` is NULL or a live handle.
        let h =
            unsafe { balancer(b) }.map_err(|_| unreachable_null("the balancer", "nuce_plan_1d"))?;
        let _w = waiting();
        let p = h.bal.comm().size() as usize;
        let local = to_usize(n, "n").and_then(|n| {
            // SAFETY: `counts` is NULL or `ncounts` writable int64_t (contract).
            Ok((n, unsafe {
                buffer_mut(counts.cast(), ncounts, p, 8, "counts")
            }?))
        });
        let op = format!("nuce_plan_1d(n {n}, ncounts {ncounts})");
        let (n, out) = checked(local, |r| h.bal.entry(&op, r))?;
        let got = h.bal.plan1d(n)?;
        for (o, c) in out.chunks_exact_mut(8).zip(got) {
            o.copy_from_slice(&(c as i64).to_ne_bytes());
        }
        Ok(())
    })
}

/// Rank `rank`'s rectangle of the last [`nuce_plan`] (local):
/// `out[4] = {row, col, rows, cols}` in global coordinates.
#[no_mangle]
pub extern "C" fn nuce_plan_rect(b: *mut nuce_balancer, rank: c_int, out: *mut i64) -> c_int {
    guard(|| {
        // SAFETY: `b` is NULL or a live handle.
        let h = unsafe { balancer(b) }?;
        let plan = h
            .plan
            .as_ref()
            .ok_or_else(|| Error::invalid_input("no plan yet: call nuce_plan first"))?;
        let part = usize::try_from(rank)
            .ok()
            .and_then(|r| plan.parts.get(r))
            .copied();
        // SAFETY: `out` is NULL or 4 writable int64_t (contract).
        unsafe { write_rect(part, out, rank) }
    })
}

/// Restarts this rank's phase timing now (local): the application's
/// set-up since the last balance point (initial fields, input files) is not
/// counted as compute of the phase, so it does not make the rank look slow
/// at the first [`nuce_maybe_remap`]. Call it after the set-up that follows
/// `nuce_grid_create`, `nuce_array_create` or a scatter.
#[no_mangle]
pub extern "C" fn nuce_start_phase(b: *mut nuce_balancer) -> c_int {
    guard(|| {
        // SAFETY: `b` is NULL or a live handle.
        let h = unsafe { balancer(b) }?;
        h.bal.start_phase();
        Ok(())
    })
}

/// Records this rank's phase explicitly (local): `work` units (e.g. cells ×
/// iterations) done in `seconds` of compute. Replaces the automatic timing
/// of the current phase in the next [`nuce_maybe_remap`]. A recorded phase
/// sets the rank's constant speed only: the speed functions of the
/// functional model (`NUCE_SPEED_MODEL`) learn from the phases nuce times
/// itself.
#[no_mangle]
pub extern "C" fn nuce_record_phase(b: *mut nuce_balancer, work: f64, seconds: f64) -> c_int {
    guard(|| {
        // SAFETY: `b` is NULL or a live handle.
        let h = unsafe { balancer(b) }?;
        if !(work.is_finite() && work >= 0.0) {
            return Err(Error::invalid_input(format!("work = {work}")));
        }
        let elapsed = Duration::try_from_secs_f64(seconds)
            .map_err(|_| Error::invalid_input(format!("seconds = {seconds}")))?;
        h.bal.record_phase(work, elapsed)
    })
}

/// Shared body of the two array constructors.
fn new_array(
    b: *mut nuce_balancer,
    (rows, cols, elem_size, ghost): (i64, i64, usize, i64),
    global: Option<(*const c_void, usize)>,
    out: *mut *mut nuce_array,
) -> c_int {
    let call = if global.is_some() {
        "nuce_array_scatter"
    } else {
        "nuce_array_create"
    };
    guard(|| {
        // SAFETY: `out` is NULL or a writable pointer (contract).
        let out = unsafe { out.as_mut() };
        // SAFETY: `b` is NULL or a live handle.
        let h = unsafe { balancer(b) }.map_err(|_| unreachable_null("the balancer", call))?;
        let _w = waiting();
        let root = h.bal.comm().rank() == nuce::ROOT;
        // This rank's own validation: its refusal at the checked entry.
        let [rn, cn] = caller::extent_names();
        let local = to_usize(rows, rn).and_then(|r| {
            let out = out.ok_or_else(|| null("out"))?;
            *out = std::ptr::null_mut();
            let shape = (r, to_usize(cols, cn)?, to_usize(ghost, "ghost")?);
            check_elem_size(elem_size)?;
            let data = match global {
                None => Init::Zero,
                Some((p, len)) => Init::Scatter(if root {
                    let cells = shape.0.saturating_mul(shape.1);
                    // SAFETY: `p` is NULL or `len * elem_size` readable bytes
                    // on the root (contract); checked against rows × cols.
                    Some(unsafe { buffer(p, len, cells, elem_size, "global") }?)
                } else {
                    None
                }),
            };
            Ok((shape, out, data))
        });
        let op = format!(
            "{call}({}, {}ghost {ghost})",
            caller::extents(rows, cols),
            caller::array_elem_size(elem_size)
        );
        let (shape, out, init) = checked(local, |r| h.bal.entry(&op, r))?;
        let inner = create_dyn(&mut h.bal, elem_size, shape, init)?;
        *out = Box::into_raw(Box::new(nuce_array { inner }));
        Ok(())
    })
}

/// Plans a `rows × cols` array of `elem_size`-byte elements (1, 2, 4, 8, 16
/// or 32) for the current speeds and creates it, zero-filled, with a ghost
/// border of width `ghost` (collective; all arguments identical on every
/// rank). A balance point. Copy this rank's block out with
/// [`nuce_array_read`].
#[no_mangle]
pub extern "C" fn nuce_array_create(
    b: *mut nuce_balancer,
    rows: i64,
    cols: i64,
    elem_size: usize,
    ghost: i64,
    out: *mut *mut nuce_array,
) -> c_int {
    new_array(b, (rows, cols, elem_size, ghost), None, out)
}

/// Plans a `rows × cols` array for the current speeds and scatters the
/// root's `global` buffer (`global_len` = rows × cols elements, row-major;
/// read on rank 0 only, may be NULL elsewhere) with a ghost border of width
/// `ghost` (collective; `rows`, `cols`, `elem_size`, `ghost` identical on
/// every rank). A balance point. Copy this rank's block out with
/// [`nuce_array_read`].
#[no_mangle]
pub extern "C" fn nuce_array_scatter(
    b: *mut nuce_balancer,
    rows: i64,
    cols: i64,
    elem_size: usize,
    ghost: i64,
    global: *const c_void,
    global_len: usize,
    out: *mut *mut nuce_array,
) -> c_int {
    new_array(
        b,
        (rows, cols, elem_size, ghost),
        Some((global, global_len)),
        out,
    )
}

/// Frees an array (local; NULL is ignored).
#[no_mangle]
pub extern "C" fn nuce_array_free(a: *mut nuce_array) -> c_int {
    // SAFETY: `a` is NULL or came from an array constructor, freed once (contract).
    unsafe { free_handle(a) }
}

/// Rank `rank`'s rectangle in the array's current layout (local):
/// `out[4] = {row, col, rows, cols}` in global coordinates.
#[no_mangle]
pub extern "C" fn nuce_array_rect(a: *mut nuce_array, rank: c_int, out: *mut i64) -> c_int {
    guard(|| {
        // SAFETY: `a` is NULL or a live handle.
        let a = unsafe { array(a) }?;
        let part = usize::try_from(rank).ok().and_then(|r| a.inner.part(r));
        // SAFETY: `out` is NULL or 4 writable int64_t (contract).
        unsafe { write_rect(part, out, rank) }
    })
}

/// The number of elements of this rank's padded block, `(rows + 2g) ×
/// (cols + 2g)` (local): the length of the buffer the application allocates
/// for it.
#[no_mangle]
pub extern "C" fn nuce_array_padded_len(a: *mut nuce_array, len: *mut usize) -> c_int {
    guard(|| {
        // SAFETY: `a` is NULL or a live handle.
        let a = unsafe { array(a) }?;
        // SAFETY: `len` is NULL or writable (contract).
        *unsafe { deref_mut(len, "len") }? = a.inner.padded_len();
        Ok(())
    })
}

/// Copies this rank's current block, ghost border included, into the
/// application's `padded` buffer of `len` elements (local): after
/// [`nuce_array_create`], [`nuce_array_scatter`] or a remap.
#[no_mangle]
pub extern "C" fn nuce_array_read(a: *mut nuce_array, padded: *mut c_void, len: usize) -> c_int {
    guard(|| {
        // SAFETY: `a` is NULL or a live handle.
        let a = unsafe { array(a) }?;
        let (n, e) = (a.inner.padded_len(), a.inner.elem_size());
        // SAFETY: `padded` is NULL or `len * elem_size` writable bytes.
        let app = unsafe { buffer_mut(padded, len, n, e, caller::padded_name()) }?;
        a.inner.store_all(app);
        Ok(())
    })
}

/// Fills the ghost border of the application's `padded` buffer (`len`
/// elements, this rank's block) with the neighbours' cells (collective over
/// the array's ranks). Ghosts outside the global array are left untouched.
#[no_mangle]
pub extern "C" fn nuce_array_exchange_ghosts(
    a: *mut nuce_array,
    padded: *mut c_void,
    len: usize,
) -> c_int {
    guard(|| {
        // SAFETY: `a` is NULL or a live handle.
        let a = unsafe { array(a) }?;
        // The exchange opens its own communication section (a nested one
        // here would cost a clock reading per call for nothing).
        let (n, e) = (a.inner.padded_len(), a.inner.elem_size());
        // Neighbours only: a wrong buffer is not agreed on through the root
        // first; this rank joins the exchange's escalation instead.
        // SAFETY: `padded` is NULL or `len * elem_size` writable bytes.
        let app = match unsafe { buffer_mut(padded, len, n, e, caller::padded_name()) } {
            Ok(app) => app,
            Err(err) => return Err(a.inner.refuse_exchange(err)),
        };
        a.inner.exchange_ghosts_on(app)
    })
}

/// Gathers the array on rank 0 into `global` (`global_len` = rows × cols
/// elements, row-major; written on rank 0 only, may be NULL elsewhere) from
/// every rank's `padded` buffer of `len` elements (collective).
#[no_mangle]
pub extern "C" fn nuce_array_gather(
    a: *mut nuce_array,
    padded: *const c_void,
    len: usize,
    global: *mut c_void,
    global_len: usize,
) -> c_int {
    guard(|| {
        // SAFETY: `a` is NULL or a live handle.
        let a =
            unsafe { array(a) }.map_err(|_| unreachable_null("the array", "nuce_array_gather"))?;
        let _w = waiting();
        let ((rows, cols), e, n) = (
            a.inner.global_shape(),
            a.inner.elem_size(),
            a.inner.padded_len(),
        );
        let root = a.inner.comm().rank() == 0;
        // SAFETY: `padded` is NULL or `len * elem_size` readable bytes.
        let local = unsafe { buffer(padded, len, n, e, caller::padded_name()) }.and_then(|app| {
            let out = root.then(|| {
                // SAFETY: `global` is NULL or `global_len * elem_size`
                // writable bytes on the root (contract).
                unsafe { buffer_mut(global, global_len, rows * cols, e, "global") }
            });
            Ok((app, out.transpose()?))
        });
        let (app, out) = checked(local, |r| a.inner.entry("nuce_array_gather", r))?;
        let me = a.inner.rect();
        a.inner.load(app, &[me]);
        a.inner.gather_into(0, out)
    })
}

/// A balance point between phases of `iterations` iterations (collective
/// over the balancer's ranks; `a` made by this balancer): measures this
/// rank's phase (its cells × `iterations` in its compute time since the last
/// balance point — everything outside nuce's calls — unless
/// [`nuce_record_phase`] was called), lets the root decide whether a new
/// layout pays off over the next `iterations` iterations, and if so remaps
/// the array. `padded` (`len` elements) is this rank's current block, read
/// only. `*remapped` is set to 1 when the layout changed (same on every
/// rank): the application then asks [`nuce_array_padded_len`], allocates a
/// buffer of that size, copies the new block into it with
/// [`nuce_array_read`] and exchanges ghosts.
///
/// The balance point of a 2D array (`nuce_array`) only, despite its name
/// without `array_` (kept for existing callers): a grid's is
/// `nuce_grid_maybe_remap`, a graph's `nuce_graph_maybe_remap`.
#[no_mangle]
pub extern "C" fn nuce_maybe_remap(
    b: *mut nuce_balancer,
    a: *mut nuce_array,
    iterations: i64,
    padded: *const c_void,
    len: usize,
    remapped: *mut c_int,
) -> c_int {
    remap(b, a, (iterations, None), (padded, len), remapped)
}

/// [`nuce_maybe_remap`] with another decision horizon: the phase just done
/// had `iterations` iterations, and a remap must pay off within the next
/// `ahead` iterations (e.g. all those left in the run).
#[no_mangle]
pub extern "C" fn nuce_maybe_remap_ahead(
    b: *mut nuce_balancer,
    a: *mut nuce_array,
    iterations: i64,
    ahead: i64,
    padded: *const c_void,
    len: usize,
    remapped: *mut c_int,
) -> c_int {
    remap(b, a, (iterations, Some(ahead)), (padded, len), remapped)
}

/// Shared body of [`nuce_maybe_remap`] (`ahead` = `None`) and
/// [`nuce_maybe_remap_ahead`].
fn remap(
    b: *mut nuce_balancer,
    a: *mut nuce_array,
    (iterations, ahead): (i64, Option<i64>),
    (padded, len): (*const c_void, usize),
    remapped: *mut c_int,
) -> c_int {
    let (call, op) = match ahead {
        None => (
            "nuce_maybe_remap",
            format!("nuce_maybe_remap(iterations {iterations})"),
        ),
        Some(x) => (
            "nuce_maybe_remap_ahead",
            format!("nuce_maybe_remap_ahead(iterations {iterations}, ahead {x})"),
        ),
    };
    guard(|| {
        // SAFETY: `b` is NULL or a live handle.
        let h = unsafe { balancer(b) }.map_err(|_| unreachable_null("the balancer", call))?;
        let _w = waiting();
        // This rank's own validation, its refusal at the checked entry: the
        // array handle (a NULL one is refused on the balancer's ranks), the
        // counts, the output and the buffer.
        let local = (|| {
            // SAFETY: `a` is NULL or a live handle; `remapped` NULL or writable.
            let (a, remapped) = unsafe {
                (
                    deref_mut(a, &format!("the array (in {call})"))?,
                    remapped.as_mut(),
                )
            };
            let iterations = to_usize(iterations, "iterations")?;
            let ahead = to_usize(ahead.unwrap_or(iterations as i64), "ahead")?;
            let r = remapped.ok_or_else(|| null("remapped"))?;
            *r = 0;
            let (n, e) = (a.inner.padded_len(), a.inner.elem_size());
            // SAFETY: `padded` is NULL or `len * elem_size` readable bytes.
            let app = unsafe { buffer(padded, len, n, e, caller::padded_name()) }?;
            Ok((a, iterations, ahead, r, app))
        })();
        let (a, iterations, ahead, remapped, app) = checked(local, |r| h.bal.entry(&op, r))?;
        let me = a.inner.rect();
        a.inner.load(app, &[me]);
        *remapped = c_int::from(a.inner.maybe_remap(&mut h.bal, iterations, ahead)?);
        Ok(())
    })
}
