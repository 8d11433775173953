//! `nuce.Balancer`: one [`nuce::Balancer`] over a duplicate of an mpi4py
//! communicator — speeds, grids on NumPy arrays and the balance point
//! (`maybe_remap`), whose remap hands the caller new arrays.

use std::time::Duration;

use nuce::internals::layout::RawField;
use nuce::plan::array3d::Stencil;
use nuce::{Balancer, DistGraph, Error, Grid};
use numpy::PyUntypedArrayMethods;
use pyo3::prelude::*;
use pyo3::types::PyTuple;

use crate::errors::{ok, refusal, to_py};
use crate::fields::{self, ArrayField};
use crate::graph::{self, PyGraph};
use crate::grid::PyGrid;
use crate::{comm, detached, MpiOwned};

/// A load balancer over a duplicate of an mpi4py intra-communicator
/// (collective: every rank of `comm` creates it; `comm` stays yours, nuce
/// never frees it). MPI must be running (mpi4py initialises it at import);
/// nuce never initialises nor finalises it. Every collective method either
/// succeeds on every rank or raises the same exception on every rank.
#[pyclass(name = "Balancer", module = "nuce", unsendable)]
pub(crate) struct PyBalancer {
    bal: MpiOwned<Balancer>,
}

/// The outcome of a balance point (`Balancer.maybe_remap`).
#[pyclass(name = "Remap", module = "nuce", unsendable, get_all)]
pub(crate) struct PyRemap {
    /// Whether the grid was remapped (the same on every rank).
    remapped: bool,
    /// The fields, in the order given: the same arrays when this rank's box
    /// did not change, new ones (interior cells filled, ghost cells zero:
    /// exchange before reading them) when it did.
    fields: Py<PyTuple>,
    /// Bytes of cells that changed owner over all ranks (0 without a remap).
    moved_bytes: u64,
    /// The speeds the decision used, one per rank (work units per second).
    speeds: Vec<f64>,
    /// Load imbalance (max load / mean load - 1) of the layout before.
    imbalance_before: f64,
    /// Load imbalance of the proposed layout.
    imbalance_after: f64,
    /// The rule that decided (`Exact`, `WithinNoise`, `Persistent`, `Amortized`, `NoPayoff`, `Vetoed`).
    rule: String,
}

impl PyRemap {
    /// The outcome of decision `d` with the arrays to go on with.
    fn of(
        py: Python<'_>,
        d: &nuce::plan::policy::RemapDecision,
        fields: Vec<Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        Ok(PyRemap {
            remapped: d.remap,
            fields: PyTuple::new(py, fields)?.unbind(),
            moved_bytes: 0,
            speeds: d.speeds.clone(),
            imbalance_before: d.imbalance_current,
            imbalance_after: d.imbalance_candidate,
            rule: format!("{:?}", d.rule),
        })
    }
}

#[pymethods]
impl PyRemap {
    fn __repr__(&self) -> String {
        format!(
            "nuce.Remap(remapped={}, moved_bytes={}, imbalance_before={:.3}, imbalance_after={:.3}, rule={})",
            if self.remapped { "True" } else { "False" },
            self.moved_bytes,
            self.imbalance_before,
            self.imbalance_after,
            self.rule
        )
    }
}

/// A non-negative integer argument, or this rank's refusal.
fn count(v: &Bound<'_, PyAny>, what: &str) -> Result<usize, Error> {
    v.extract::<usize>().map_err(|_| {
        Error::invalid_input(format!("{what} = {v}: a non-negative integer is expected"))
    })
}

/// A grid's shape in nuce's three axes (a 2D `(rows, cols)` is `(1, rows,
/// cols)`), with its number of axes.
fn grid_shape(v: &Bound<'_, PyAny>) -> Result<((usize, usize, usize), usize), Error> {
    let s: Vec<usize> = v.extract().map_err(|_| {
        Error::invalid_input(format!(
            "shape = {v}: a tuple of 2 or 3 non-negative integers"
        ))
    })?;
    match s[..] {
        [a, b] => Ok(((1, a, b), 2)),
        [a, b, c] => Ok(((a, b, c), 3)),
        _ => Err(Error::invalid_input(format!(
            "shape = {s:?}: 2 or 3 axes are expected"
        ))),
    }
}

/// The stencil of `Balancer.grid`: `"faces"` (5 or 7 points) or `"box"`
/// (9 or 27 points).
fn stencil(name: &str, ghost: usize) -> Result<Stencil, Error> {
    match name {
        "faces" => Ok(Stencil::seven(ghost)),
        "box" => Ok(Stencil::twenty_seven(ghost)),
        _ => Err(Error::invalid_input(format!(
            "stencil = {name:?}: \"faces\" or \"box\""
        ))),
    }
}

impl PyBalancer {
    /// The balancer (for the benchmark's Rust side).
    pub(crate) fn inner_mut(&mut self) -> &mut Balancer {
        &mut self.bal
    }

    /// Runs the checked entry of the collective call `op` with this rank's
    /// validation `local` as its refusal: a bad argument on any rank is the
    /// same `InputError` on every rank, before anything else happens.
    fn checked<T>(&self, py: Python<'_>, op: &str, local: Result<T, Error>) -> PyResult<T> {
        let bal = &*self.bal;
        let refused = local.as_ref().err().cloned();
        crate::errors::ok(detached(py, || bal.entry(op, refused.as_ref())))?;
        local.map_err(to_py)
    }
}

#[pymethods]
impl PyBalancer {
    /// A balancer over a duplicate of `comm` (an mpi4py intra-communicator,
    /// e.g. `MPI.COMM_WORLD` or one from `Split`); rank 0 of `comm` plans.
    #[new]
    fn new(py: Python<'_>, comm: &Bound<'_, PyAny>) -> PyResult<Self> {
        let borrowed = comm::borrow(comm)?;
        let bal = ok(detached(py, || {
            Balancer::new_as(&*borrowed, "Balancer::new")
        }))?;
        Ok(PyBalancer {
            bal: MpiOwned::new(bal),
        })
    }

    /// This rank in the balancer's communicator.
    #[getter]
    fn rank(&self) -> usize {
        use mpi::traits::Communicator;
        self.bal.comm().rank() as usize
    }

    /// The number of ranks.
    #[getter]
    fn size(&self) -> usize {
        use mpi::traits::Communicator;
        self.bal.comm().size() as usize
    }

    /// Measures every rank with the built-in kernel (collective; about
    /// 0.1 s) and returns the speeds, one per rank: the next plans follow them.
    fn measure(&mut self, py: Python<'_>) -> PyResult<Vec<f64>> {
        let bal = &mut *self.bal;
        ok(detached(py, || bal.measure()))
    }

    /// Sets every rank's speed (collective): the root's (rank 0's) `speeds`,
    /// one per rank, finite and > 0, are checked and broadcast; the other
    /// ranks may pass None.
    #[pyo3(signature = (speeds = None))]
    fn set_speeds(&mut self, py: Python<'_>, speeds: Option<&Bound<'_, PyAny>>) -> PyResult<()> {
        let root = self.rank() == nuce::ROOT as usize;
        let local = match speeds {
            Some(s) if root => s.extract::<Vec<f64>>().map_err(|_| {
                Error::invalid_input(format!("speeds = {s}: a sequence of numbers is expected"))
            }),
            None if root => Err(Error::invalid_input("speeds is None on the root (rank 0)")),
            _ => Ok(Vec::new()),
        };
        let s = self.checked(py, "Balancer::set_speeds", local)?;
        let bal = &mut *self.bal;
        ok(detached(py, || bal.set_speeds(&s)))
    }

    /// The current speed estimates (one per rank), or None before any.
    #[getter]
    fn speeds(&self) -> Option<Vec<f64>> {
        self.bal.measured().speeds().map(<[f64]>::to_vec)
    }

    /// Records this rank's phase explicitly (local): `work` units (e.g.
    /// cells x iterations) in `seconds` of compute. It replaces the
    /// automatic timing of the current phase at the next `maybe_remap`.
    fn record_phase(&mut self, work: f64, seconds: f64) -> PyResult<()> {
        if !(work.is_finite() && work >= 0.0) {
            return Err(to_py(Error::invalid_input(format!("work = {work}"))));
        }
        let elapsed = Duration::try_from_secs_f64(seconds)
            .map_err(|_| to_py(Error::invalid_input(format!("seconds = {seconds}"))))?;
        ok(self.bal.record_phase(work, elapsed))
    }

    /// Restarts this rank's phase timing now (local): the set-up since the
    /// last balance point (initial fields) does not count as compute.
    fn start_phase(&mut self) {
        self.bal.start_phase();
    }

    /// Splits `n` units of one dimension (rows, particles) among the ranks
    /// for the current speeds (collective; uniform before any): the count of
    /// every rank, adding up to `n`. A balance point; you move your data.
    fn counts_1d(&mut self, py: Python<'_>, n: &Bound<'_, PyAny>) -> PyResult<Vec<usize>> {
        let local = count(n, "n");
        let op = format!("Balancer.counts_1d(n {n})");
        let n = self.checked(py, &op, local)?;
        let bal = &*self.bal;
        ok(detached(py, || bal.plan1d(n)))
    }

    /// Plans a grid of `shape` — `(rows, cols)` or `(n0, n1, n2)` — for the
    /// current speeds and makes its layout for `stencil` (`"faces"`: 5/7
    /// points, or `"box"`: 9/27 points) with `ghost` layers (0 to 4)
    /// (collective; the same arguments on every rank, else `InputError` or
    /// `DisagreementError` on every rank). A balance point. Allocate your
    /// fields with `Grid.zeros` (or of `Grid.padded_shape`).
    #[pyo3(signature = (shape, ghost = None, stencil = None))]
    fn grid(
        &mut self,
        py: Python<'_>,
        shape: &Bound<'_, PyAny>,
        ghost: Option<&Bound<'_, PyAny>>,
        stencil: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PyGrid> {
        let text =
            |v: Option<&Bound<'_, PyAny>>, d: &str| v.map_or(d.to_string(), |v| v.to_string());
        let op = format!(
            "Balancer.grid(shape {shape}, ghost {}, stencil {})",
            text(ghost, "1"),
            text(stencil, "faces")
        );
        let local = grid_shape(shape).and_then(|(s, dims)| {
            let g = ghost.map_or(Ok(1), |g| count(g, "ghost"))?;
            let name: String = match stencil {
                None => "faces".into(),
                Some(st) => st
                    .extract()
                    .map_err(|_| Error::invalid_input(format!("stencil = {st}")))?,
            };
            Ok((s, dims, self::stencil(&name, g)?))
        });
        let (s, dims, st) = self.checked(py, &op, local)?;
        let bal = &mut *self.bal;
        let grid = ok(detached(py, || Grid::new(bal, s, st)))?;
        Ok(PyGrid::new(grid, dims))
    }

    /// Partitions rank 0's graph for the current speeds and scatters it with
    /// its values (collective): on rank 0 the CSR arrays `xadj`, `adjncy`
    /// (0-based, symmetric), one `float64` value per vertex and optionally
    /// coordinates (`n x dim`); None on the other ranks. A bad graph on rank
    /// 0 raises `InputError` on every rank. A balance point; the graph is
    /// re-cut by `maybe_remap(graph, iterations)`.
    #[pyo3(signature = (xadj = None, adjncy = None, values = None, coords = None))]
    fn scatter_graph(
        &mut self,
        py: Python<'_>,
        xadj: Option<Vec<usize>>,
        adjncy: Option<Vec<usize>>,
        values: Option<Vec<f64>>,
        coords: Option<Vec<Vec<f64>>>,
    ) -> PyResult<PyGraph> {
        let local = if self.rank() == nuce::ROOT as usize {
            match (xadj, adjncy, values) {
                (Some(x), Some(a), Some(v)) => graph::root_graph(x, a, v, coords).map(Some),
                _ => Err(Error::invalid_input(
                    "rank 0 gives xadj, adjncy and values to scatter_graph",
                )),
            }
        } else {
            Ok(None)
        };
        let root = self.checked(py, "Balancer.scatter_graph", local)?;
        let bal = &mut *self.bal;
        let g = ok(detached(py, || {
            let (g, v) = root.as_ref().map(|(g, v)| (g, v.as_slice())).unzip();
            DistGraph::scatter(bal, g, v)
        }))?;
        Ok(PyGraph {
            graph: MpiOwned::new(g),
        })
    }

    /// A balance point between phases of `iterations` iterations
    /// (collective; `grid` made by this balancer): measures this rank's
    /// phase by itself (its cells, or summed cost, x `iterations` in its
    /// compute time since the last balance point — everything outside
    /// nuce's calls; or the phase given to `record_phase`), lets rank 0
    /// decide whether a new layout pays off over the next `ahead`
    /// iterations (default `iterations`) and, if so, moves `fields` (your
    /// arrays, all of the grid's fields) to it: only the cells that change
    /// owner travel. Returns a `Remap`: `remapped`, and `fields`, the arrays
    /// to go on with — the same ones where this rank's box did not change,
    /// new ones (ghost cells zero: exchange before reading them) where it
    /// did. A bad field on any rank raises `InputError` on every rank.
    /// `grid` may be a `nuce.Graph` instead (no fields: its values move
    /// inside nuce; `Remap.fields` is empty).
    #[pyo3(signature = (grid, iterations, fields = None, ahead = None))]
    fn maybe_remap(
        &mut self,
        py: Python<'_>,
        grid: &Bound<'_, PyAny>,
        iterations: &Bound<'_, PyAny>,
        fields: Option<Vec<Bound<'_, PyAny>>>,
        ahead: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PyRemap> {
        let fields = fields.unwrap_or_default();
        let op = format!(
            "Balancer.maybe_remap(iterations {iterations}, {} fields)",
            fields.len()
        );
        if let Ok(graph) = grid.cast::<PyGraph>() {
            let local = (|| {
                let it = count(iterations, "iterations")?;
                let ahead = ahead.map_or(Ok(it), |a| count(a, "ahead"))?;
                if !fields.is_empty() {
                    return Err(Error::invalid_input(
                        "fields are for grids: a graph's values move with it",
                    ));
                }
                let g = graph.try_borrow_mut().map_err(|e| refusal(e.into()))?;
                Ok((it, ahead, g))
            })();
            let (it, ahead, mut g) = self.checked(py, &op, local)?;
            let bal = &mut *self.bal;
            let inner = &mut *g.graph;
            let report = ok(detached(py, || bal.maybe_remap_ahead(inner, it, ahead)))?;
            let mut out = PyRemap::of(py, &report.decision, Vec::new())?;
            out.moved_bytes = report.moved.map_or(0, |m| m.bytes);
            return Ok(out);
        }
        let g = grid.cast::<PyGrid>().map_err(|_| {
            // Without a grid this rank cannot take part: it refuses the
            // balancer's call, so that every rank raises the same error.
            let e = Error::invalid_input(format!("grid = {grid}: a nuce.Grid is expected"));
            let r: PyResult<()> = self.checked(py, &op, Err(e));
            r.unwrap_err()
        })?;
        let mut g = g.try_borrow_mut().map_err(|e| {
            let r: PyResult<()> = self.checked(py, &op, Err(refusal(e.into())));
            r.unwrap_err()
        })?;
        let local = (|| {
            let it = count(iterations, "iterations")?;
            let ahead = match ahead {
                Some(a) => count(a, "ahead")?,
                None => it,
            };
            let f = fields::fields(&fields, g.layout(), g.dims, g.pad)?;
            Ok((it, ahead, f))
        })();
        let (it, ahead, old) = self.checked(py, &op, local)?;
        let bal = &mut *self.bal;
        let inner = &mut *g.grid;
        let report = ok(detached(py, || bal.maybe_remap_ahead(inner, it, ahead)))?;
        let d = &report.decision;
        let arrays = old.iter().map(|f| f.array.clone().into_any()).collect();
        let mut out = PyRemap::of(py, d, arrays)?;
        if d.remap {
            let (new, stats) = move_fields(py, &mut g, &old)?;
            out.fields = new;
            out.moved_bytes = stats.bytes;
        }
        Ok(out)
    }

    fn __repr__(&self) -> String {
        format!("nuce.Balancer(rank {} of {})", self.rank(), self.size())
    }
}

/// Completes the pending move of `g`: new arrays for a box that changed
/// (the same ones otherwise), filled from `old`. A rank that cannot
/// allocate them refuses the move: every rank raises its error.
fn move_fields(
    py: Python<'_>,
    g: &mut PyGrid,
    old: &[ArrayField<'_>],
) -> PyResult<(Py<PyTuple>, nuce::MoveStats)> {
    let same = g.grid.pending().map(|l| l.local_box()) == Some(g.layout().local_box());
    let made: PyResult<Vec<Bound<'_, PyAny>>> = old
        .iter()
        .map(|f| {
            if same {
                return Ok(f.array.clone().into_any());
            }
            let np = py.import("numpy")?;
            let mut shape =
                fields::padded_shape(g.grid.pending().unwrap_or(g.layout()), g.dims, g.pad);
            shape.extend(&f.components);
            np.getattr("zeros")?
                .call1((PyTuple::new(py, shape)?, f.array.dtype()))
        })
        .collect();
    let new = match made {
        Ok(n) => n,
        Err(e) => return Err(to_py(g.grid.refuse_move(refusal(e)))),
    };
    let new_raw: Vec<RawField> = new
        .iter()
        .zip(old)
        .map(|(a, f)| RawField {
            // numpy.zeros made it: a C-contiguous, writeable ndarray.
            data: a
                .cast::<numpy::PyUntypedArray>()
                .map_or(std::ptr::null_mut(), fields::data_ptr),
            ..f.raw
        })
        .collect();
    let old_raw = fields::raw(old);
    let inner = &mut *g.grid;
    // SAFETY: old and new buffers are the arrays' data, of the old and new
    // layouts' padded shapes (old checked, new made for the pending box),
    // alive (referenced) during the call; distinct arrays do not overlap,
    // and the same array is passed as both only when the box is unchanged.
    let stats = ok(detached(py, || unsafe {
        inner.move_fields_raw(&old_raw, &new_raw)
    }))?;
    Ok((PyTuple::new(py, new)?.unbind(), stats))
}
