//! The C API of nuce: `libnuce.so` / `libnuce.a` and `include/nuce.h`.
//!
//! It covers the balancer (this file), 2D arrays (`array` and `staged`), 2D and 3D grids on the
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

// First: cbindgen writes the header in the order of these modules, and
// the error codes and `nuce_version` open it.
mod amr;
mod args;
mod array;
mod caller;
mod curve;
mod decision;
mod depart;
mod errors;
mod graph;
mod grid;
mod grid_whole;
mod partition;
mod pool;
mod ranges;
mod saved_graph;
mod savefile;
mod settings;
mod staged;
mod tasks;

use std::ffi::c_int;
use std::mem::ManuallyDrop;
use std::time::Duration;

use mpi::raw::FromRaw;
use mpi::topology::SimpleCommunicator;
use mpi::traits::*;
use nuce::{waiting, ArrayPlan, Balancer, Error, Result};

pub use amr::*;
pub(crate) use args::*;
pub use array::*;
pub use caller::{nuce_fortran_call, nuce_fortran_done, nuce_fortran_ids};
pub use curve::*;
pub use decision::*;
pub use depart::*;
pub use errors::*;
pub use graph::*;
pub use grid::*;
pub use grid_whole::*;
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

/// A load balancer (opaque): a duplicate of the application's communicator,
/// the speeds, the last plan made by [`nuce_plan`].
pub struct nuce_balancer {
    pub(crate) bal: Balancer,
    plan: Option<ArrayPlan>,
    /// The departure of the last `nuce_depart`, until `nuce_depart_finish`.
    pub(crate) departure: Option<nuce::Departure>,
    /// The decision of the last balance point (`nuce_last_decision`).
    pub(crate) last: Option<nuce_decision>,
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
        last: None,
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
            .measured()
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
