//! `nuce.Graph`: an unstructured graph scattered from rank 0 by the
//! balancer ([`nuce::DistGraph`] of `f64` values, one per vertex). nuce owns
//! the values (they travel with their vertices at a remap): the package
//! hands out NumPy copies (`values`, `ghost_values`) and takes new values
//! back (`set_values`); the local adjacency is given once as CSR arrays of
//! *slots* (an owned vertex's index, or `len(owned) +` a ghost's index).

use nuce::plan::graph::Graph;
use nuce::{DistGraph, Error};
use numpy::{IntoPyArray, PyArray1, PyReadonlyArray1};
use pyo3::prelude::*;

use crate::errors::{ok, to_py};
use crate::{detached, MpiOwned};

/// A graph distributed over the balancer's ranks (`Balancer.scatter_graph`),
/// with one `float64` value per vertex.
#[pyclass(name = "Graph", module = "nuce", unsendable)]
pub(crate) struct PyGraph {
    pub(crate) graph: MpiOwned<DistGraph<f64>>,
}

/// `g` with the coordinates `coords` (one sequence per vertex), if any.
pub(crate) fn with_coords(g: Graph, coords: Option<Vec<Vec<f64>>>) -> nuce::plan::Result<Graph> {
    let Some(c) = coords else { return Ok(g) };
    let dim = c.first().map_or(0, Vec::len);
    if c.iter().any(|p| p.len() != dim) {
        return Err(nuce::plan::Error::InvalidInput(
            "coords: every vertex needs the same number of coordinates".into(),
        ));
    }
    g.with_coords(dim, c.concat())
}

/// The root's graph for `Balancer.scatter_graph`, built and checked (its
/// refusal, if any, reaches every rank through the call's checked entry).
pub(crate) fn root_graph(
    xadj: Vec<usize>,
    adjncy: Vec<usize>,
    values: Vec<f64>,
    coords: Option<Vec<Vec<f64>>>,
) -> Result<(Graph, Vec<f64>), Error> {
    let g = with_coords(Graph::from_csr(xadj, adjncy, None, None)?, coords)?;
    if values.len() != g.n() {
        return Err(Error::shape_mismatch(format!(
            "values has {} entries for {} vertices",
            values.len(),
            g.n()
        )));
    }
    Ok((g, values))
}

#[pymethods]
impl PyGraph {
    /// The global ids of this rank's vertices (increasing).
    #[getter]
    fn owned<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<usize>> {
        self.graph.owned().to_vec().into_pyarray(py)
    }

    /// The global ids of this rank's ghost vertices (increasing).
    #[getter]
    fn ghosts<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<usize>> {
        self.graph.ghosts().to_vec().into_pyarray(py)
    }

    /// A copy of the values of this rank's vertices.
    #[getter]
    fn values<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<f64>> {
        self.graph.values().to_vec().into_pyarray(py)
    }

    /// A copy of the ghost values from the last `exchange` (empty before).
    #[getter]
    fn ghost_values<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<f64>> {
        self.graph.ghost_values().to_vec().into_pyarray(py)
    }

    /// Sets the values of this rank's vertices (local): a float64 array of
    /// `len(owned)` entries.
    fn set_values(&mut self, values: PyReadonlyArray1<'_, f64>) -> PyResult<()> {
        let v = values.as_slice()?;
        let dst = self.graph.values_mut();
        if v.len() != dst.len() {
            return Err(to_py(Error::shape_mismatch(format!(
                "values has {} entries, this rank owns {} vertices",
                v.len(),
                dst.len()
            ))));
        }
        dst.copy_from_slice(v);
        Ok(())
    }

    /// The local adjacency as CSR arrays `(xadj, slots, weights)`: the
    /// neighbours of owned vertex `i` are `slots[xadj[i]:xadj[i+1]]`, a slot
    /// `s < len(owned)` an owned vertex, otherwise ghost `s - len(owned)`
    /// (so `numpy.concatenate([values, ghost_values])[slots]` reads them).
    #[allow(clippy::type_complexity)]
    fn adjacency<'py>(
        &self,
        py: Python<'py>,
    ) -> (
        Bound<'py, PyArray1<usize>>,
        Bound<'py, PyArray1<usize>>,
        Bound<'py, PyArray1<f64>>,
    ) {
        let n = self.graph.owned().len();
        let (mut xadj, mut slots, mut w) = (vec![0], Vec::new(), Vec::new());
        for i in 0..n {
            for (s, x) in self.graph.neighbors(i) {
                slots.push(s);
                w.push(x);
            }
            xadj.push(slots.len());
        }
        (
            xadj.into_pyarray(py),
            slots.into_pyarray(py),
            w.into_pyarray(py),
        )
    }

    /// Fills the ghost values from their owners (neighbours only; the GIL
    /// released while waiting).
    fn exchange(&mut self, py: Python<'_>) -> PyResult<()> {
        let g = &mut *self.graph;
        ok(detached(py, || g.exchange_ghosts().map(drop)))
    }

    /// The values in global vertex order on rank 0 (collective), None
    /// on the other ranks.
    fn gather<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyArray1<f64>>>> {
        let g = &*self.graph;
        let v = ok(detached(py, || g.gather(0)))?;
        Ok(v.map(|v| v.into_pyarray(py)))
    }
}
