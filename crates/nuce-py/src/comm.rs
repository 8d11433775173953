//! An mpi4py communicator as an rsmpi one, borrowed: the C handle is read
//! from the address mpi4py gives (`MPI._addressof(comm)`: a pointer in Open
//! MPI, an integer in MPICH — the bytes of an `MPI_Comm` either way) and
//! wrapped without ever being freed, as the C API's `nuce_balancer_create`
//! does. nuce duplicates it; the caller's handle stays the caller's.

use std::mem::ManuallyDrop;

use mpi::raw::FromRaw;
use mpi::topology::SimpleCommunicator;
use nuce::Error;
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;

use crate::errors::to_py;

/// The caller's communicator, borrowed for the duration of a call (never
/// dropped: dropping it would `MPI_Comm_free` the caller's handle).
pub(crate) struct Borrowed(ManuallyDrop<SimpleCommunicator>);

impl std::ops::Deref for Borrowed {
    type Target = SimpleCommunicator;
    fn deref(&self) -> &SimpleCommunicator {
        &self.0
    }
}

/// Whether MPI runs (initialised and not finalised): nuce never starts it;
/// mpi4py does at `from mpi4py import MPI` (unless `mpi4py.rc.initialize`
/// is false, then the application calls `MPI.Init()`).
pub(crate) fn check_running() -> PyResult<()> {
    if mpi::environment::is_initialized() && !mpi::environment::is_finalized() {
        Ok(())
    } else {
        Err(to_py(Error::invalid_input(
            "MPI is not running: nuce neither initialises nor finalises MPI; \
             import mpi4py.MPI (which initialises it) and call nuce before MPI.Finalize()",
        )))
    }
}

/// Borrows the C handle of the mpi4py intra-communicator `comm`. Errors
/// (local: this rank cannot reach the others, which wait for it in the
/// communicator's duplication until the timeout, then end the job): not an
/// mpi4py `Intracomm` (`TypeError`), `MPI.COMM_NULL`, MPI not running.
pub(crate) fn borrow(comm: &Bound<'_, PyAny>) -> PyResult<Borrowed> {
    let py = comm.py();
    check_running()?;
    let mpi4py = py.import("mpi4py.MPI")?;
    if !comm.is_instance(&mpi4py.getattr("Comm")?)? {
        return Err(PyTypeError::new_err(format!(
            "comm must be an mpi4py communicator (mpi4py.MPI.Intracomm, e.g. MPI.COMM_WORLD), \
             not {}",
            comm.get_type().name()?
        )));
    }
    let addr: usize = mpi4py.getattr("_addressof")?.call1((comm,))?.extract()?;
    // SAFETY: mpi4py's `_addressof` gives the address of the communicator
    // object's `MPI_Comm` field, alive as long as `comm` (borrowed by the
    // caller for this call).
    let raw = unsafe { std::ptr::read(addr as *const mpi::ffi::MPI_Comm) };
    // SAFETY: reading the null-handle constant of the MPI library.
    if raw == unsafe { mpi::ffi::RSMPI_COMM_NULL } {
        return Err(to_py(Error::invalid_input(
            "comm is MPI.COMM_NULL: this rank cannot reach the other ranks, which wait for it \
             until the timeout (NUCE_TIMEOUT_S) and then end the job",
        )));
    }
    let mut inter = 0;
    // SAFETY: a non-null communicator handle of the caller; only read.
    let code = unsafe { mpi::ffi::MPI_Comm_test_inter(raw, &mut inter) };
    crate::errors::ok(nuce::internals::comm::mpi_check(
        code,
        "MPI_Comm_test_inter(comm)",
    ))?;
    if inter != 0 {
        return Err(to_py(Error::invalid_input(
            "comm is an inter-communicator: nuce balances over an intra-communicator",
        )));
    }
    // SAFETY: a live intra-communicator of the caller (checked above); the
    // wrapper is never dropped (ManuallyDrop), so the handle is not freed.
    Ok(Borrowed(ManuallyDrop::new(unsafe {
        SimpleCommunicator::from_raw(raw)
    })))
}
