//! A grid's field as one whole array at a root: [`Grid::gather`] brings
//! every rank's cells of a field into the root's array of the whole grid,
//! [`Grid::scatter`] sends the root's array out into every rank's field.
//! Both are a move ([`transfer`]) between the grid's layout and the layout
//! in which the root owns every cell: one derived-datatype message per
//! rank, straight between the application's buffers and the root's array,
//! no staging copy.

use std::ffi::c_void;

use super::super::transfer::{move_whole, root_layout, Way};
use super::super::{Plain, RawField};
use super::Grid;
use crate::error::{Error, Result};
use crate::runtime::clock::waiting;

impl Grid {
    /// Gathers one field at `root` (collective): every rank gives its
    /// `field` (its padded block with `pad` halo cells per side, as for
    /// [`Grid::exchange`]); the root receives the whole grid in `global`
    /// (`n0·n1·n2` cells, C order, axis 2 fastest; ignored and may be
    /// `None` elsewhere). Ghost cells are not read. Errors — a field that
    /// does not fit this rank's box, a missing or wrongly sized array at
    /// the root, a move pending or an exchange in flight, cells of another
    /// size on some rank — are the same on every rank, and nothing is
    /// written then.
    pub fn gather<T: Plain>(
        &self,
        root: i32,
        field: &[T],
        pad: [usize; 3],
        global: Option<&mut [T]>,
    ) -> Result<()> {
        let f = RawField {
            data: field.as_ptr().cast_mut().cast(),
            elem_size: size_of::<T>(),
            pad,
        };
        let (g, len) = global.map_or((std::ptr::null_mut(), 0), |g| (g.as_mut_ptr(), g.len()));
        // SAFETY: `field` is borrowed (read only) and `global` exclusively
        // for the call; both lengths are checked against the layouts.
        unsafe { self.whole(Way::Gather, root, f, Some(field.len()), g.cast(), len) }
    }

    /// Scatters the root's `global` array of the whole grid (`n0·n1·n2`
    /// cells, C order; read at the root only, may be `None` elsewhere)
    /// into every rank's `field` (its padded block with `pad` halo cells
    /// per side; ghost cells are not written) (collective). Errors as
    /// [`Grid::gather`]'s, the same on every rank, nothing written then.
    pub fn scatter<T: Plain>(
        &self,
        root: i32,
        global: Option<&[T]>,
        field: &mut [T],
        pad: [usize; 3],
    ) -> Result<()> {
        let f = RawField {
            data: field.as_mut_ptr().cast(),
            elem_size: size_of::<T>(),
            pad,
        };
        let (g, len) = global.map_or((std::ptr::null(), 0), |g| (g.as_ptr(), g.len()));
        // SAFETY: `field` is borrowed exclusively and `global` (read only)
        // for the call; both lengths are checked against the layouts.
        unsafe {
            self.whole(
                Way::Scatter,
                root,
                f,
                Some(field.len()),
                g.cast_mut().cast(),
                len,
            )
        }
    }

    /// [`Grid::gather`] on a raw field and the root's raw array of
    /// `global_len` cells of `field.elem_size` bytes (for bindings).
    ///
    /// # Safety
    /// `field.data` points to this rank's padded block
    /// ([`Grid::padded_len`] cells of `field.pad`), readable; at the root
    /// `global` is NULL or `global_len` writable cells not overlapping it.
    pub unsafe fn gather_raw(
        &self,
        root: i32,
        field: RawField,
        global: *mut c_void,
        global_len: usize,
    ) -> Result<()> {
        // SAFETY: the caller's contract.
        unsafe { self.whole(Way::Gather, root, field, None, global, global_len) }
    }

    /// [`Grid::scatter`] on the root's raw array of `global_len` cells and
    /// a raw field (for bindings).
    ///
    /// # Safety
    /// As [`Grid::gather_raw`], with `field` writable and `global` readable.
    pub unsafe fn scatter_raw(
        &self,
        root: i32,
        global: *const c_void,
        global_len: usize,
        field: RawField,
    ) -> Result<()> {
        // SAFETY: the caller's contract.
        unsafe {
            self.whole(
                Way::Scatter,
                root,
                field,
                None,
                global.cast_mut(),
                global_len,
            )
        }
    }

    /// The shared body of the gathers and scatters: the checked entry with
    /// this rank's own validation, then the move between the grid's layout
    /// and the root's.
    ///
    /// # Safety
    /// See [`Grid::gather_raw`] and [`Grid::scatter_raw`].
    unsafe fn whole(
        &self,
        way: Way,
        root: i32,
        field: RawField,
        field_len: Option<usize>,
        global: *mut c_void,
        global_len: usize,
    ) -> Result<()> {
        let _w = waiting();
        let (nx, ny, nz) = self.layout.plan.shape;
        let verb = match way {
            Way::Gather => "gather(to",
            Way::Scatter => "scatter(from",
        };
        let what = format!(
            "Grid::{verb} root {root}, {}-byte cells) on a {nx}x{ny}x{nz} grid after {} ghost exchanges",
            field.elem_size, self.core.exchanges()
        );
        let me = self.layout.rank;
        let root_layout = usize::try_from(root)
            .ok()
            .filter(|&r| r < self.layout.plan.len())
            .ok_or_else(|| {
                Error::invalid_input(format!(
                    "root {root} is not a rank of the grid's {} ranks",
                    self.layout.plan.len()
                ))
            })
            .and_then(|r| root_layout(&self.layout.plan, me, r));
        let global = RawField {
            data: global,
            elem_size: field.elem_size,
            pad: [0; 3],
        };
        let local = root_layout.as_ref().map_err(Clone::clone).and_then(|at| {
            if self.pending.is_some() {
                return Err(Error::invalid_input(
                    "a remap is pending (Grid::move_fields first)",
                ));
            }
            if self.in_flight > 0 {
                return Err(Error::invalid_input(
                    "a ghost exchange of the grid is still in flight: end it first",
                ));
            }
            let lens = field_len.map(|l| [l]);
            self.check_fields(&self.layout, &[field], lens.as_ref().map(|l| &l[..]))?;
            if root as usize == me {
                let cells = nx * ny * nz;
                if global.data.is_null() && cells > 0 {
                    return Err(Error::invalid_input("the root has no whole array"));
                }
                if global_len != cells {
                    return Err(Error::shape_mismatch(format!(
                        "the root's whole array has {global_len} cells, the {nx}x{ny}x{nz} grid has {cells}"
                    )));
                }
                at.check_field(0, &global, None)
                    .map_err(|e| Error::invalid_input(format!("the root's whole array: {e}")))?;
            }
            Ok(())
        });
        self.core
            .cp
            .check_refusing(&*self.core.comm, &what, local.as_ref().err())?;
        let at = root_layout?;
        // SAFETY: both fields were checked against their layouts (contract:
        // readable on the sending side, writable on the receiving one).
        unsafe { move_whole(&*self.core.comm, way, (&self.layout, &at), field, global) }.map(|_| ())
    }
}
