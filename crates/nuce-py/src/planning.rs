//! The pure planning functions of nuce (no MPI, no balancer): the
//! decompositions of `nuce::plan` for speeds the caller gives, exposed as
//! `nuce.plan.*`. Invalid input (a speed that is zero, negative, NaN or
//! infinite, an unknown algorithm, a bad CSR graph) raises `InputError`.

use nuce::plan::array2d::registry::decomposer_with_latency;
use nuce::plan::array3d::{decomposer3_by_name, Stencil};
use nuce::plan::dist1d::distributor_by_name;
use nuce::plan::graph::{Algo, FmRefiner, Graph, Grouping};
use pyo3::prelude::*;

use crate::errors::to_py;

/// A planning result as a Python result.
fn ok<T>(r: nuce::plan::Result<T>) -> PyResult<T> {
    r.map_err(|e| to_py(nuce::Error::Plan(e)))
}

/// Decomposes a `rows x cols` array into one rectangle per speed, each in
/// proportion to its speed, with the 2D algorithm `algorithm` (`"best"`,
/// `"column"` — the optimal column DP —, `"kl"`, `"rb"`, `"xy"`, `"tile"`,
/// …; latency-aware ones weigh `latency` x internal edges). Returns the
/// rectangles `(row, col, rows, cols)`, one per speed.
#[pyfunction]
#[pyo3(signature = (rows, cols, speeds, algorithm = "best", latency = 0.0))]
fn decompose2d(
    py: Python<'_>,
    rows: usize,
    cols: usize,
    speeds: Vec<f64>,
    algorithm: &str,
    latency: f64,
) -> PyResult<Vec<(usize, usize, usize, usize)>> {
    let plan =
        py.detach(|| decomposer_with_latency(algorithm, latency)?.decompose(rows, cols, &speeds));
    Ok(ok(plan)?
        .parts
        .iter()
        .map(|r| (r.row, r.col, r.rows, r.cols))
        .collect())
}

/// Decomposes an `(n0, n1, n2)` grid into one box per speed with the 3D
/// algorithm `algorithm` (`"best"`, `"guillotine"`, …) for a 7-point
/// stencil of width `ghost`. Returns the boxes as `(lo, size)` triples.
#[pyfunction]
#[pyo3(signature = (shape, speeds, algorithm = "best", ghost = 1))]
#[allow(clippy::type_complexity)]
fn decompose3d(
    py: Python<'_>,
    shape: (usize, usize, usize),
    speeds: Vec<f64>,
    algorithm: &str,
    ghost: usize,
) -> PyResult<Vec<((usize, usize, usize), (usize, usize, usize))>> {
    let plan = py.detach(|| {
        decomposer3_by_name(algorithm, Stencil::seven(ghost))?.decompose(shape, &speeds)
    });
    Ok(ok(plan)?
        .boxes
        .iter()
        .map(|b| ((b.x, b.y, b.z), (b.nx, b.ny, b.nz)))
        .collect())
}

/// Distributes `chunks` chunks of one dimension over processors of the
/// given `cycle_times` (seconds per chunk, finite and > 0) with `mode`
/// (`"static"`: optimal counts, `"incremental"`, `"lu"`, `"panel"`; `period`
/// for the last two). Returns `(counts, owners)`: the chunks per processor
/// and the owner of every chunk.
#[pyfunction]
#[pyo3(signature = (chunks, cycle_times, mode = "static", period = 0))]
fn distribute(
    py: Python<'_>,
    chunks: usize,
    cycle_times: Vec<f64>,
    mode: &str,
    period: usize,
) -> PyResult<(Vec<usize>, Vec<usize>)> {
    let plan = py.detach(|| distributor_by_name(mode, period)?.distribute(chunks, &cycle_times));
    let plan = ok(plan)?;
    Ok((plan.counts, plan.owners))
}

/// Partitions an undirected graph in CSR form (`xadj`, `adjncy`, 0-based;
/// optional vertex weights `vwgt`, edge weights `ewgt`, coordinates `coords`
/// as `n x dim` nested sequences) into one part per speed, each in
/// proportion to its speed, with `algorithm` (`"multilevel"`, `"rcb"`,
/// `"hci"`, `"zci"`, `"rsb"`, `"rsbkl"`, `"rsbi"`, `"rcbi"`; the geometric
/// ones need coordinates). Returns the part of every vertex.
#[pyfunction]
#[pyo3(signature = (xadj, adjncy, speeds, algorithm = "multilevel", vwgt = None, ewgt = None, coords = None))]
#[allow(clippy::too_many_arguments)]
fn partition_graph(
    py: Python<'_>,
    xadj: Vec<usize>,
    adjncy: Vec<usize>,
    speeds: Vec<f64>,
    algorithm: &str,
    vwgt: Option<Vec<f64>>,
    ewgt: Option<Vec<f64>>,
    coords: Option<Vec<Vec<f64>>>,
) -> PyResult<Vec<usize>> {
    let algo = Algo::from_name(algorithm).ok_or_else(|| {
        to_py(nuce::Error::invalid_input(format!(
            "algorithm = {algorithm:?}: one of {:?}",
            Algo::ALL.map(Algo::name)
        )))
    })?;
    let parts = py.detach(|| {
        nuce::plan::check_speeds(&speeds)?;
        let g = crate::graph::with_coords(Graph::from_csr(xadj, adjncy, vwgt, ewgt)?, coords)?;
        algo.partition(&g, &speeds, Grouping::default(), Some(FmRefiner::default()))
    });
    Ok(ok(parts)?.parts)
}

/// Adds the planning functions to the module (prefixed `plan_`; the
/// package's `nuce.plan` names them without the prefix).
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(decompose2d, m)?)?;
    m.add_function(wrap_pyfunction!(decompose3d, m)?)?;
    m.add_function(wrap_pyfunction!(distribute, m)?)?;
    m.add_function(wrap_pyfunction!(partition_graph, m)?)?;
    Ok(())
}
