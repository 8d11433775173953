//! NumPy arrays as the grid's fields ([`RawField`]s on the arrays' own
//! memory: nothing is copied). A field is this rank's padded block in C
//! order: shape `(d1, d2)` for a 2D grid, `(d0, d1, d2)` for a 3D one,
//! `d = size + 2 pad` per axis (`Grid.padded_shape`), followed by any
//! trailing component axes (a cell of several values is one element of
//! `itemsize × components` bytes). Checks give a [`nuce::Error`] naming the
//! field, which the collective call passes to every rank.

use nuce::internals::layout::RawField;
use nuce::{Error, Layout};
use numpy::{PyArrayDescrMethods, PyUntypedArray, PyUntypedArrayMethods};
use pyo3::prelude::*;

/// A field checked against a layout: the array, its raw description and
/// the shape of its cells' components.
pub(crate) struct ArrayField<'py> {
    pub(crate) array: Bound<'py, PyUntypedArray>,
    pub(crate) raw: RawField,
    pub(crate) components: Vec<usize>,
    /// The cells' type as exchanges name it (dtype and component shape):
    /// ranks that differ get the same error.
    pub(crate) cell_type: String,
}

/// The grid's padded block shape in the caller's axes (2 or 3 of them).
pub(crate) fn padded_shape(layout: &Layout, dims: usize, pad: [usize; 3]) -> Vec<usize> {
    layout.padded_dims(pad)[3 - dims..].to_vec()
}

/// Field `k`, `obj`, checked against `layout`: a NumPy array of a plain
/// dtype (no Python objects), C-contiguous, writeable, aligned, of the
/// padded shape with trailing components.
pub(crate) fn field<'py>(
    obj: &Bound<'py, PyAny>,
    k: usize,
    layout: &Layout,
    dims: usize,
    pad: [usize; 3],
) -> Result<ArrayField<'py>, Error> {
    let bad = |m: String| Error::invalid_input(format!("field {k}: {m}"));
    let array = obj
        .cast::<PyUntypedArray>()
        .map_err(|_| {
            bad(format!(
                "a NumPy array is expected, not {}",
                obj.get_type()
                    .name()
                    .map(|n| n.to_string())
                    .unwrap_or_default()
            ))
        })?
        .clone();
    let dtype = array.dtype();
    if dtype.has_object() {
        return Err(bad(format!(
            "dtype {dtype} holds Python objects: a plain dtype (numbers) is expected"
        )));
    }
    if !array.is_c_contiguous() {
        return Err(bad(
            "the array is not C-contiguous (a view with strides, or Fortran order): \
             pass the array itself, or numpy.ascontiguousarray(a)"
                .into(),
        ));
    }
    // SAFETY: a live array object (bound): reading its flags field.
    let flags = unsafe { (*array.as_array_ptr()).fields.flags };
    if flags & numpy::npyffi::NPY_ARRAY_WRITEABLE == 0 {
        return Err(bad("the array is read-only".into()));
    }
    if !array.is_aligned() {
        return Err(bad("the array's data is not aligned for its dtype".into()));
    }
    let want = padded_shape(layout, dims, pad);
    let shape = array.shape().to_vec();
    if shape.len() < dims || shape[..dims] != want[..] {
        return Err(Error::shape_mismatch(format!(
            "field {k}: shape {shape:?}, this rank's padded block is {want:?} \
             (Grid.padded_shape, then any component axes)"
        )));
    }
    let components = shape[dims..].to_vec();
    let elem_size = components
        .iter()
        .product::<usize>()
        .saturating_mul(dtype.itemsize());
    if elem_size == 0 {
        return Err(bad(format!(
            "cells of 0 bytes (dtype {dtype}, components {components:?})"
        )));
    }
    let data = data_ptr(&array);
    // NumPy's kind and size ("f8", "i8"): read from the descriptor, no
    // Python call on the exchange's path.
    let kind = format!("{}{}", char::from(dtype.kind()), dtype.itemsize());
    let cell_type = if components.is_empty() {
        kind
    } else {
        format!("{kind} x {components:?}")
    };
    Ok(ArrayField {
        cell_type,
        array,
        raw: RawField {
            data,
            elem_size,
            pad,
        },
        components,
    })
}

/// The start of an array's data (its element 0).
pub(crate) fn data_ptr(array: &Bound<'_, PyUntypedArray>) -> *mut std::ffi::c_void {
    // SAFETY: a live array object (bound): reading its data pointer.
    unsafe { (*array.as_array_ptr()).fields.data }.cast()
}

/// Every field of `objs` checked ([`field`]); at least one.
pub(crate) fn fields<'py>(
    objs: &[Bound<'py, PyAny>],
    layout: &Layout,
    dims: usize,
    pad: [usize; 3],
) -> Result<Vec<ArrayField<'py>>, Error> {
    if objs.is_empty() {
        return Err(Error::invalid_input("no fields: pass at least one array"));
    }
    objs.iter()
        .enumerate()
        .map(|(k, o)| field(o, k, layout, dims, pad))
        .collect()
}

/// The raw descriptions of checked fields.
pub(crate) fn raw(fields: &[ArrayField<'_>]) -> Vec<RawField> {
    fields.iter().map(|f| f.raw).collect()
}

/// The cell type of each field ([`ArrayField::cell_type`]).
pub(crate) fn cell_types<'a>(fields: &'a [ArrayField<'_>]) -> Vec<&'a str> {
    fields.iter().map(|f| f.cell_type.as_str()).collect()
}
