//! The Python package of nuce: the extension module `nuce._nuce`, wrapped
//! by the pure-Python package `nuce` (`python/nuce/__init__.py`).
//!
//! It wraps the Rust API of nuce and re-implements none of it: a
//! [`nuce::Balancer`] over an mpi4py communicator (`comm`), [`nuce::Grid`]s
//! whose fields are the caller's NumPy arrays (`grid`, `fields`: exchanges
//! and remaps act on the arrays' own memory, no copy), the balance point
//! (`balancer`) and the pure planning functions (`planning`). Errors are
//! Python exceptions of one hierarchy (`errors`), the same on every rank of
//! a collective call. The GIL is released while nuce communicates
//! (`detached`). MPI belongs to the application (mpi4py initialises and
//! finalises it): nuce never does either, and objects still alive after
//! `MPI_Finalize` (module globals at interpreter exit) are leaked instead
//! of freed (`MpiOwned`). The guide is `docs/python.md`.

mod balancer;
mod bench;
mod comm;
mod errors;
mod fields;
mod graph;
mod grid;
mod planning;

use std::mem::ManuallyDrop;
use std::ops::{Deref, DerefMut};

use pyo3::prelude::*;

/// A value that is moved to the thread it came from only: the closure of
/// [`detached`] runs on the calling thread, so nuce's non-`Send` objects
/// (communicators, `Rc`s) may cross it.
struct SameThread<T>(T);

// SAFETY: `detached` runs the closure on the calling thread (PyO3's
// `Python::detach` calls it in place), so the value never changes thread.
unsafe impl<T> Send for SameThread<T> {}

impl<T> SameThread<T> {
    fn into_inner(self) -> T {
        self.0
    }
}

/// Runs `f` with the GIL released (other Python threads run meanwhile):
/// for nuce's calls that wait on MPI. `f` must not touch Python objects.
pub(crate) fn detached<R>(py: Python<'_>, f: impl FnOnce() -> R) -> R {
    let f = SameThread(f);
    py.detach(move || SameThread(f.into_inner()())).into_inner()
}

/// An object holding MPI handles (a duplicated communicator, datatypes):
/// dropped normally while MPI runs, leaked once MPI is finalised — mpi4py
/// finalises MPI at interpreter exit, before module globals are collected,
/// and freeing a communicator then would crash the process.
pub(crate) struct MpiOwned<T>(ManuallyDrop<T>);

impl<T> MpiOwned<T> {
    pub(crate) fn new(value: T) -> Self {
        MpiOwned(ManuallyDrop::new(value))
    }
}

impl<T> Deref for MpiOwned<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.0
    }
}

impl<T> DerefMut for MpiOwned<T> {
    fn deref_mut(&mut self) -> &mut T {
        &mut self.0
    }
}

impl<T> Drop for MpiOwned<T> {
    fn drop(&mut self) {
        if mpi::environment::is_initialized() && !mpi::environment::is_finalized() {
            // SAFETY: dropped once, here; never used afterwards.
            unsafe { ManuallyDrop::drop(&mut self.0) };
        }
    }
}

/// The extension module `nuce._nuce`.
#[pymodule]
fn _nuce(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    errors::register(m)?;
    m.add_class::<balancer::PyBalancer>()?;
    m.add_class::<balancer::PyRemap>()?;
    m.add_class::<grid::PyGrid>()?;
    m.add_class::<graph::PyGraph>()?;
    planning::register(m)?;
    m.add_function(wrap_pyfunction!(bench::_rust_rounds, m)?)?;
    Ok(())
}
