//! `nuce.Grid`: a 2D or 3D grid distributed over a balancer's ranks whose
//! data lives in the caller's NumPy arrays ([`nuce::Grid`]). Made by
//! `Balancer.grid`; exchanges fill the arrays' ghost cells in place.

use mpi::traits::Communicator;
use nuce::plan::array3d::Box3;
use nuce::{Grid, Layout};
use numpy::PyUntypedArrayMethods;
use pyo3::prelude::*;
use pyo3::types::{PySlice, PyTuple};

use crate::errors::{ok, to_py};
use crate::fields::{self, padded_shape};
use crate::{detached, MpiOwned};

/// A grid distributed over the ranks of the balancer that made it
/// (`Balancer.grid`), whose fields are your NumPy arrays: each rank holds
/// its box plus `pad` ghost cells on each side (`padded_shape`), in C order.
/// Axes are yours: `(rows, cols)` for a 2D grid, `(n0, n1, n2)` for 3D.
#[pyclass(name = "Grid", module = "nuce", unsendable)]
pub(crate) struct PyGrid {
    pub(crate) grid: MpiOwned<Grid>,
    /// 2 or 3: the caller's axes are the last `dims` of nuce's three.
    pub(crate) dims: usize,
    /// Ghost cells allocated on each side, per nuce axis.
    pub(crate) pad: [usize; 3],
}

impl PyGrid {
    pub(crate) fn new(grid: Grid, dims: usize) -> Self {
        let pad = grid.layout().required_pad();
        PyGrid {
            grid: MpiOwned::new(grid),
            dims,
            pad,
        }
    }

    /// The layout the caller's arrays have now.
    pub(crate) fn layout(&self) -> &Layout {
        self.grid.layout()
    }

    /// The last `dims` values of three, as a tuple.
    fn tuple<'py>(&self, py: Python<'py>, v: [usize; 3]) -> PyResult<Bound<'py, PyTuple>> {
        PyTuple::new(py, &v[3 - self.dims..])
    }

    /// A box as `(lo, size)` tuples in the caller's axes.
    pub(crate) fn box_tuple<'py>(
        &self,
        py: Python<'py>,
        b: Box3,
    ) -> PyResult<(Bound<'py, PyTuple>, Bound<'py, PyTuple>)> {
        Ok((
            self.tuple(py, [b.x, b.y, b.z])?,
            self.tuple(py, [b.nx, b.ny, b.nz])?,
        ))
    }

    /// The global shape in the caller's axes.
    fn whole_shape(&self) -> Vec<usize> {
        let (a, b, c) = self.grid.global_shape();
        [a, b, c][3 - self.dims..].to_vec()
    }

    /// Cells of the whole grid.
    fn cells(&self) -> usize {
        self.whole_shape().iter().product()
    }

    /// The data and cells of the root's whole array (NULL and 0 elsewhere).
    fn whole_data(
        &self,
        whole: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<(*mut std::ffi::c_void, usize)> {
        Ok(match whole {
            Some(w) => (
                fields::data_ptr(w.cast::<numpy::PyUntypedArray>()?),
                self.cells(),
            ),
            None => (std::ptr::null_mut(), 0),
        })
    }

    /// The root's whole array for a scatter into field `f`: `w` as a
    /// C-contiguous array of `f`'s dtype (a copy when it is not one), of
    /// the global shape then `f`'s components.
    fn whole_array<'py>(
        &self,
        py: Python<'py>,
        w: &Bound<'py, PyAny>,
        f: &fields::ArrayField<'py>,
    ) -> Result<Bound<'py, PyAny>, nuce::Error> {
        let bad = |e: PyErr| nuce::Error::invalid_input(format!("the whole array: {e}"));
        let np = py.import("numpy").map_err(bad)?;
        let w = np
            .getattr("ascontiguousarray")
            .and_then(|a| a.call1((w, f.array.dtype())))
            .map_err(bad)?;
        let shape: Vec<usize> = w.getattr("shape").and_then(|s| s.extract()).map_err(bad)?;
        let mut want = self.whole_shape();
        want.extend(&f.components);
        if shape != want {
            return Err(nuce::Error::shape_mismatch(format!(
                "the whole array has shape {shape:?}, the grid with the field's components is {want:?}"
            )));
        }
        Ok(w)
    }

    /// The fields of a call, checked, or this rank's refusal joined by its
    /// neighbours (every rank of the exchange raises the same error).
    fn exchange_fields<'py>(
        &mut self,
        objs: &[Bound<'py, PyAny>],
    ) -> PyResult<Vec<fields::ArrayField<'py>>> {
        fields::fields(objs, self.grid.layout(), self.dims, self.pad)
            .map_err(|e| to_py(self.grid.refuse_exchange(e)))
    }
}

#[pymethods]
impl PyGrid {
    /// The global shape, in your axes.
    #[getter]
    fn shape<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        let (a, b, c) = self.grid.global_shape();
        self.tuple(py, [a, b, c])
    }

    /// The ghost width of the stencil.
    #[getter]
    fn ghost(&self) -> usize {
        self.grid.stencil().ghost
    }

    /// Ghost cells on each side of every field, per axis.
    #[getter]
    fn pad<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        self.tuple(py, self.pad)
    }

    /// This rank's box: `(lo, size)`, first global cell and extents per axis
    /// (sizes all 0 on a rank without cells).
    #[getter(r#box)]
    fn local_box<'py>(
        &self,
        py: Python<'py>,
    ) -> PyResult<(Bound<'py, PyTuple>, Bound<'py, PyTuple>)> {
        self.box_tuple(py, self.layout().local_box())
    }

    /// Rank `rank`'s box, as `box`.
    fn box_of<'py>(
        &self,
        py: Python<'py>,
        rank: usize,
    ) -> PyResult<(Bound<'py, PyTuple>, Bound<'py, PyTuple>)> {
        let b = self
            .layout()
            .plan()
            .boxes
            .get(rank)
            .copied()
            .ok_or_else(|| {
                to_py(nuce::Error::invalid_input(format!(
                    "rank {rank} is out of range"
                )))
            })?;
        self.box_tuple(py, b)
    }

    /// The shape of this rank's fields: its box plus `pad` on each side
    /// (all 0 on a rank without cells), before any component axes.
    #[getter]
    fn padded_shape<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        PyTuple::new(py, padded_shape(self.layout(), self.dims, self.pad))
    }

    /// The index of this rank's cells in a field: `u[grid.interior]` is the
    /// box without its ghost cells.
    #[getter]
    fn interior<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        let b = self.layout().local_box();
        let size = [b.nx, b.ny, b.nz];
        let slices = (3 - self.dims..3)
            .map(|a| {
                let lo = if size[a] == 0 { 0 } else { self.pad[a] };
                PySlice::new(py, lo as isize, (lo + size[a]) as isize, 1)
            })
            .collect::<Vec<_>>();
        PyTuple::new(py, slices)
    }

    /// A new field of this rank, zero-filled: `numpy.zeros(padded_shape +
    /// components, dtype)`.
    #[pyo3(signature = (dtype = None, components = None))]
    fn zeros<'py>(
        &self,
        py: Python<'py>,
        dtype: Option<&Bound<'py, PyAny>>,
        components: Option<Vec<usize>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let mut shape = padded_shape(self.layout(), self.dims, self.pad);
        shape.extend(components.unwrap_or_default());
        let np = py.import("numpy")?;
        let dtype = match dtype {
            Some(d) => d.clone(),
            None => np.getattr("float64")?,
        };
        np.getattr("zeros")?
            .call1((PyTuple::new(py, shape)?, dtype))
    }

    /// This rank's neighbours in the exchanges (ascending ranks).
    #[getter]
    fn neighbours(&self) -> Vec<usize> {
        self.layout().neighbours()
    }

    /// Ghost exchanges made so far.
    #[getter]
    fn exchanges(&self) -> u64 {
        self.grid.exchanges()
    }

    /// Fills the ghost cells of every field from the neighbours, in place
    /// (the arrays' own memory: nothing is copied; one message to and from
    /// each neighbour, the GIL released while waiting). Every rank passes
    /// the same number of fields with the same cell sizes. A field that is
    /// not a C-contiguous, writeable NumPy array of `padded_shape` (then
    /// components) and a plain dtype raises `InputError` on every rank of
    /// the exchange; other cell sizes on another rank `DisagreementError`.
    /// Ghost cells outside the grid are left untouched.
    #[pyo3(signature = (*fields))]
    fn exchange(&mut self, py: Python<'_>, fields: Vec<Bound<'_, PyAny>>) -> PyResult<()> {
        let checked = self.exchange_fields(&fields)?;
        let raw = fields::raw(&checked);
        let types = fields::cell_types(&checked);
        let grid = &mut *self.grid;
        // The arrays stay referenced by `fields` (and `checked`) meanwhile.
        ok(detached(py, || {
            // SAFETY: each field's buffer is the array's data, checked
            // against the layout, alive (referenced) until the exchange ends
            // below; no Python code runs on this thread meanwhile.
            let x = unsafe { grid.exchange_begin_raw_typed(&raw, &types) }?;
            grid.exchange_end_raw(x)
        }))
    }

    /// Gathers the field `u` (this rank's padded array, as for `exchange`;
    /// ghost cells are not read) at rank `root` (collective over the
    /// grid's ranks): returns there a new array of the whole grid,
    /// `shape` then `u`'s component axes, `u`'s dtype; `None` elsewhere. A
    /// bad field on any rank raises `InputError` on every rank; other cell
    /// sizes on another rank `DisagreementError`.
    #[pyo3(signature = (u, root = 0))]
    fn gather<'py>(
        &mut self,
        py: Python<'py>,
        u: &Bound<'py, PyAny>,
        root: i32,
    ) -> PyResult<Option<Bound<'py, PyAny>>> {
        let what = format!("Grid.gather(to root {root})");
        let f = fields::field(u, 0, self.layout(), self.dims, self.pad)
            .map_err(|e| to_py(self.grid.refuse_call(&what, e)))?;
        let at_root = self.grid.comm().rank() == root;
        let whole = if at_root {
            let mut shape = self.whole_shape();
            shape.extend(&f.components);
            let np = py.import("numpy")?;
            Some(
                np.getattr("empty")?
                    .call1((PyTuple::new(py, shape)?, f.array.dtype()))?,
            )
        } else {
            None
        };
        let (ptr, len) = self.whole_data(whole.as_ref())?;
        let (grid, raw) = (&*self.grid, f.raw);
        ok(detached(py, || {
            // SAFETY: `u` is checked against the layout and referenced
            // meanwhile; the root's new array holds `len` cells of the
            // field's size; no Python code runs on this thread meanwhile.
            unsafe { grid.gather_raw(root, raw, ptr, len) }
        }))?;
        Ok(whole)
    }

    /// Scatters rank `root`'s whole grid `whole` (an array of `shape` then
    /// `u`'s component axes, converted to `u`'s dtype; read at the root
    /// only, `None` elsewhere) into every rank's field `u` (its padded
    /// array; ghost cells are not written: exchange next) (collective over
    /// the grid's ranks). Errors as `gather`'s, on every rank.
    #[pyo3(signature = (whole, u, root = 0))]
    fn scatter<'py>(
        &mut self,
        py: Python<'py>,
        whole: Option<&Bound<'py, PyAny>>,
        u: &Bound<'py, PyAny>,
        root: i32,
    ) -> PyResult<()> {
        let what = format!("Grid.scatter(from root {root})");
        let at_root = self.grid.comm().rank() == root;
        let local = fields::field(u, 0, self.layout(), self.dims, self.pad).and_then(|f| {
            let whole = match whole.filter(|_| at_root) {
                Some(w) => Some(self.whole_array(py, w, &f)?),
                None if at_root => {
                    return Err(nuce::Error::invalid_input(
                        "the root has no whole array (None)",
                    ))
                }
                None => None,
            };
            Ok((f, whole))
        });
        let (f, whole) = local.map_err(|e| to_py(self.grid.refuse_call(&what, e)))?;
        let (ptr, len) = self.whole_data(whole.as_ref())?;
        let (grid, raw) = (&*self.grid, f.raw);
        ok(detached(py, || {
            // SAFETY: `u` is checked against the layout (writeable) and the
            // root's contiguous copy holds `len` cells of the field's size,
            // both referenced meanwhile; no Python code runs meanwhile.
            unsafe { grid.scatter_raw(root, ptr.cast_const(), len, raw) }
        }))
    }

    /// Sets the cost per cell of this rank's box (local): an array of the
    /// box's shape (`box[1]`, no ghost cells), values finite and >= 0, any
    /// unit. The balancer then plans and times by summed cost instead of
    /// cell counts. Checked at the next balance point (a bad cost on any
    /// rank raises `InputError` on every rank). The cost does not follow a
    /// remap: set it again for the new box.
    fn set_cost(&mut self, py: Python<'_>, cost: &Bound<'_, PyAny>) -> PyResult<()> {
        let np = py.import("numpy")?;
        let flat = np
            .getattr("ascontiguousarray")?
            .call1((cost, np.getattr("float64")?))?
            .call_method0("ravel")?;
        let values: numpy::PyReadonlyArray1<'_, f64> = flat.extract()?;
        self.grid.set_cost(values.as_slice()?.to_vec());
        Ok(())
    }

    /// Drops the cost per cell (local): cells count again.
    fn clear_cost(&mut self) {
        self.grid.clear_cost();
    }

    fn __repr__(&self) -> String {
        let b = self.layout().local_box();
        let s = self.grid.global_shape();
        format!(
            "nuce.Grid(shape {:?}, ghost {}, this rank's box at {:?} of {:?})",
            &[s.0, s.1, s.2][3 - self.dims..],
            self.grid.stencil().ghost,
            &[b.x, b.y, b.z][3 - self.dims..],
            &[b.nx, b.ny, b.nz][3 - self.dims..],
        )
    }
}
