//! The exceptions of the package, one per kind of [`nuce::Error`]:
//!
//! ```text
//! nuce.Error                    every error of nuce
//! ├── nuce.InputError           the input is wrong (also a ValueError): nuce::Error::Plan
//! ├── nuce.DisagreementError    the ranks made different calls
//! ├── nuce.MpiError             an MPI call failed
//! ├── nuce.TimeoutError         a ghost exchange ran out of time (also a builtin TimeoutError)
//! └── nuce.InternalError        a corrupted message, or a bug of nuce
//! ```
//!
//! Another rank's error (`nuce::Error::Remote`) takes the class of that
//! rank's error, so that every rank of a collective call raises the same
//! class; its message names the rank.

use nuce::Error;
use pyo3::create_exception;
use pyo3::exceptions::{PyException, PyTimeoutError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyTuple;

create_exception!(nuce, NuceError, PyException, "Every error of nuce.");
create_exception!(
    nuce,
    DisagreementError,
    NuceError,
    "The ranks made different collective calls, or the same call with arguments that must match and differ."
);
create_exception!(
    nuce,
    MpiError,
    NuceError,
    "An MPI call failed (the message has MPI's error class and string)."
);
create_exception!(
    nuce,
    InternalError,
    NuceError,
    "A message from a peer could not be decoded, or a bug of nuce."
);

/// `nuce.InputError` and `nuce.TimeoutError` have two bases (nuce's and a
/// builtin one): made at import by `type(...)`, kept here.
static INPUT_ERROR: pyo3::sync::PyOnceLock<Py<PyAny>> = pyo3::sync::PyOnceLock::new();
static TIMEOUT_ERROR: pyo3::sync::PyOnceLock<Py<PyAny>> = pyo3::sync::PyOnceLock::new();

/// A class `name(*bases)` with a docstring.
fn subclass<'py>(
    py: Python<'py>,
    name: &str,
    bases: Bound<'py, PyTuple>,
    doc: &str,
) -> PyResult<Bound<'py, PyAny>> {
    let ns = pyo3::types::PyDict::new(py);
    ns.set_item("__doc__", doc)?;
    ns.set_item("__module__", "nuce")?;
    py.import("builtins")?
        .getattr("type")?
        .call1((name, bases, ns))
}

/// Adds the exception classes to the module.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    let base = py.get_type::<NuceError>();
    m.add("Error", &base)?;
    let input = subclass(
        py,
        "InputError",
        PyTuple::new(py, [base.as_any(), py.get_type::<PyValueError>().as_any()])?,
        "The input is wrong: an array's dtype, layout or shape, a speed, a shape that \
         differs between ranks (nuce::Error::Plan).",
    )?;
    let timeout = subclass(
        py,
        "TimeoutError",
        PyTuple::new(
            py,
            [base.as_any(), py.get_type::<PyTimeoutError>().as_any()],
        )?,
        "A ghost exchange whose ranks all stopped waiting for their neighbours (NUCE_TIMEOUT_S).",
    )?;
    m.add("InputError", &input)?;
    m.add("TimeoutError", &timeout)?;
    let _ = INPUT_ERROR.set(py, input.unbind());
    let _ = TIMEOUT_ERROR.set(py, timeout.unbind());
    m.add("DisagreementError", py.get_type::<DisagreementError>())?;
    m.add("MpiError", py.get_type::<MpiError>())?;
    m.add("InternalError", py.get_type::<InternalError>())?;
    Ok(())
}

/// The class of `e` (another rank's error: the class of its source).
fn class_of<'py>(py: Python<'py>, e: &Error) -> Bound<'py, PyAny> {
    let stored = |cell: &pyo3::sync::PyOnceLock<Py<PyAny>>| {
        cell.get(py)
            .map(|c| c.bind(py).clone())
            .unwrap_or_else(|| py.get_type::<NuceError>().into_any())
    };
    match e {
        Error::Plan(_) => stored(&INPUT_ERROR),
        Error::Remote { source, .. } => class_of(py, source),
        Error::Timeout { .. } => stored(&TIMEOUT_ERROR),
        Error::Disagreement { .. } => py.get_type::<DisagreementError>().into_any(),
        Error::Mpi { .. } => py.get_type::<MpiError>().into_any(),
        _ => py.get_type::<InternalError>().into_any(),
    }
}

/// The runtime's call names in the package's words.
const PY_NAMES: [(&str, &str); 14] = [
    (
        "Balancer::maybe_remap(a grid",
        "Balancer.maybe_remap(a grid",
    ),
    ("Balancer::maybe_remap", "Balancer.maybe_remap"),
    ("Balancer::set_speeds", "Balancer.set_speeds"),
    ("Balancer::measure", "Balancer.measure"),
    ("Balancer::record_phase", "Balancer.record_phase"),
    ("Balancer::plan1d", "Balancer.counts_1d"),
    ("Balancer::plan3", "Balancer.grid (the planning step)"),
    ("Balancer::new", "nuce.Balancer"),
    ("Balancer::set_algorithm", "Balancer.set_algorithm"),
    ("Grid::exchange", "Grid.exchange"),
    ("Grid::move_fields", "Balancer.maybe_remap (its move)"),
    ("Grid::new", "Balancer.grid (its layout step)"),
    ("Grid::start_remap", "Balancer.maybe_remap"),
    ("Grid::set_cost", "Grid.set_cost"),
];

/// `msg` with the runtime's call names replaced by the package's.
fn in_py_words(msg: &str) -> String {
    PY_NAMES
        .iter()
        .fold(msg.to_string(), |m, (rust, py)| m.replace(rust, py))
}

/// The Python exception of a nuce error.
pub(crate) fn to_py(e: Error) -> PyErr {
    Python::attach(|py| {
        let msg = in_py_words(&e.to_string());
        match class_of(py, &e).call1((msg.clone(),)) {
            Ok(obj) => PyErr::from_value(obj),
            Err(_) => NuceError::new_err(msg),
        }
    })
}

/// `r` with its error as a Python exception.
pub(crate) fn ok<T>(r: nuce::Result<T>) -> PyResult<T> {
    r.map_err(to_py)
}

/// A Python exception of this rank as a nuce error: its refusal of a
/// collective call (the call then raises `InputError` on every rank).
pub(crate) fn refusal(e: PyErr) -> Error {
    Python::attach(|py| Error::invalid_input(e.value(py).to_string()))
}
