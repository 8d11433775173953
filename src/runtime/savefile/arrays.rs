//! Save files of [`DistArray3`]s and [`DistArray2`]s: the same file as a
//! [`Grid`]'s with one field (of `ncomp` components per cell for a 3D
//! array), so an array saved on some number of ranks restarts on any
//! other, as an array or as a grid on the application's buffers (and a
//! grid's one-field save as an array).
//!
//! A 3D array's padded block has the layout of a grid's field padded by
//! the ghost width on every axis (C order, components fastest within a
//! cell); a 2D array of `rows × cols` is the grid `rows × cols × 1`, its
//! row-major padded block the field padded by `[ghost, ghost, 0]`. So both
//! directions go through the grid's code: a temporary [`Grid`] of the
//! array's plan describes the blocks, and the array's own buffer is the
//! field.

use std::mem::size_of;
use std::path::Path;

use super::{SaveStats, SavedGrid};
use crate::error::{Error, Result};
use crate::plan::array2d::weighted::box_of;
use crate::plan::array2d::ArrayPlan;
use crate::plan::array3d::{Box3, GridPlan3, Stencil};
use crate::runtime::array::{DistArray2, Element};
use crate::runtime::array3::DistArray3;
use crate::runtime::balancer::Balancer;
use crate::runtime::clock::waiting;
use crate::runtime::comm::agree;
use crate::runtime::layout::{Grid, Plain, RawField, MAX_GHOST};

impl<T: Element + Plain> DistArray3<T> {
    /// Saves the array (this rank's box of every component; ghost cells are
    /// not saved), its cost per cell if one is set for the current box, and
    /// the application's `user` bytes (at most 64 MiB) to `path`
    /// (collective; the same path on every rank), as [`Grid::save`] does:
    /// one field of `ncomp · size_of::<T>()`-byte cells. Read it back on any
    /// number of ranks with [`SavedGrid::new_array3`] (or as a grid with
    /// [`SavedGrid::new_grid`] and [`SavedGrid::read`]). Every rank returns
    /// the same error, and `path` is then unchanged.
    pub fn save(&self, path: impl AsRef<Path>, user: &[u8]) -> Result<SaveStats> {
        self.save_with(path.as_ref(), user, None)
    }

    /// [`DistArray3::save`], with `bal`'s speed state when given.
    pub(super) fn save_with(
        &self,
        path: &Path,
        user: &[u8],
        bal: Option<&Balancer>,
    ) -> Result<SaveStats> {
        let _w = waiting();
        let mut grid = Grid::with_plan(
            self.comm(),
            self.plan().clone(),
            Stencil::seven(self.ghost()),
        )?;
        if let Some(v) = self.cost().and_then(|c| c.values_for(self.local_box())) {
            grid.set_cost(v);
        }
        let field = RawField {
            // Only read by the save.
            data: self.padded().as_ptr().cast_mut().cast(),
            elem_size: self.ncomp() * size_of::<T>(),
            pad: [self.ghost(); 3],
        };
        // SAFETY: the array's padded block is the grid's field padded by the
        // ghost width (the module's documentation), borrowed for the call.
        unsafe { grid.save_checked(path, &[field], None, user, bal) }
    }
}

impl SavedGrid {
    /// A [`DistArray3`] of the saved grid, planned for the balancer's
    /// current speeds as [`SavedGrid::new_grid`] plans a grid, with `ghost`
    /// layers and `ncomp` components of `T` per cell, holding the saved
    /// cells (ghost cells default: exchange afterwards) and the saved cost
    /// per cell, if any (collective on the balancer's communicator, which
    /// may have any number of ranks). The file must hold one field of
    /// `ncomp · size_of::<T>()`-byte cells: an array's save, or a grid's
    /// save of one such field. Every rank returns the same error otherwise,
    /// and for a corrupt file.
    pub fn new_array3<T: Element + Plain>(
        &self,
        bal: &mut Balancer,
        ghost: usize,
        ncomp: usize,
    ) -> Result<DistArray3<T>> {
        let _w = waiting();
        bal.restore_if_unmeasured(self.speeds());
        let mut grid = Grid::new(bal, self.header.shape, Stencil::seven(ghost))?;
        let mut a = DistArray3::<T>::with_plan(bal.comm(), grid.plan().clone(), ghost, ncomp)?;
        bal.adopt_checks(a.checks_mut());
        // Cells of `ncomp` values each (ncomp is at least 1: checked by new).
        let len = a.padded().len() / ncomp;
        let field = RawField {
            data: a.padded_mut().as_mut_ptr().cast(),
            elem_size: ncomp * size_of::<T>(),
            pad: [ghost; 3],
        };
        // SAFETY: the array's padded block, `len` cells of the field's size
        // (checked against the grid's layout), borrowed for the call.
        unsafe { self.read_checked(&mut grid, &[field], Some(&[len])) }?;
        if let Some(c) = grid.cost() {
            a.set_cost(c.values().to_vec());
        }
        Ok(a)
    }
}

/// The grid plan `rows × cols × 1` of a 2D array's plan.
fn grid_plan(plan: &ArrayPlan) -> Result<GridPlan3> {
    let boxes = plan
        .parts
        .iter()
        .map(|r| {
            let b = box_of(r);
            if b.is_empty() {
                Box3::default()
            } else {
                b
            }
        })
        .collect();
    Ok(GridPlan3::new(
        plan.algorithm.clone(),
        (plan.rows, plan.cols, 1),
        boxes,
    )?)
}

/// The temporary grid of a 2D array's plan with `ghost` layers (the
/// stencil a grid restart of the file will have: at most [`MAX_GHOST`]).
fn grid_of_array2<C: mpi::traits::Communicator>(
    comm: &C,
    plan: &ArrayPlan,
    ghost: usize,
) -> Result<Grid> {
    Grid::with_plan(comm, grid_plan(plan)?, Stencil::seven(ghost.min(MAX_GHOST)))
}

/// A 2D array's padded block as the grid's field, `len` cells (0 for an
/// empty rectangle, whose block holds only ghosts), or an error when the
/// block is not in row-major order.
fn field_of_array2<T: Element>(a: &mut DistArray2<T>) -> Result<(RawField, usize)> {
    let empty = a.rect().rows == 0 || a.rect().cols == 0;
    let ghost = a.ghost();
    let block = a.padded_mut().as_slice_mut().ok_or_else(|| {
        Error::invalid_input("the array's padded block is not in row-major order")
    })?;
    let len = if empty { 0 } else { block.len() };
    let field = RawField {
        data: block.as_mut_ptr().cast(),
        elem_size: size_of::<T>(),
        pad: [ghost, ghost, 0],
    };
    Ok((field, len))
}

impl<T: Element + Plain> DistArray2<T> {
    /// Saves the array (this rank's rectangle; ghost cells are not saved),
    /// its cost per cell if one is set for the current rectangle, and the
    /// application's `user` bytes (at most 64 MiB) to `path` (collective;
    /// the same path on every rank), as [`Grid::save`] does for a grid of
    /// `rows × cols × 1` cells. Read it back on any number of ranks with
    /// [`SavedGrid::new_array2`]. Every rank returns the same error (also
    /// when some rank's padded block is not in row-major order), and `path`
    /// is then unchanged.
    pub fn save(&self, path: impl AsRef<Path>, user: &[u8]) -> Result<SaveStats> {
        self.save_with(path.as_ref(), user, None)
    }

    /// [`DistArray2::save`], with `bal`'s speed state when given.
    pub(super) fn save_with(
        &self,
        path: &Path,
        user: &[u8],
        bal: Option<&Balancer>,
    ) -> Result<SaveStats> {
        let _w = waiting();
        let ordered = self.padded().as_slice().map(|_| ()).ok_or_else(|| {
            Error::invalid_input("the array's padded block is not in row-major order")
        });
        agree(self.comm(), 0, ordered)?;
        let mut grid = grid_of_array2(self.comm(), self.plan(), self.ghost())?;
        if let Some(v) = self.cost().and_then(|c| c.values_for(box_of(&self.rect()))) {
            grid.set_cost(v);
        }
        let block = self.padded().as_slice().unwrap_or_default();
        let field = RawField {
            // Only read by the save.
            data: block.as_ptr().cast_mut().cast(),
            elem_size: size_of::<T>(),
            pad: [self.ghost(), self.ghost(), 0],
        };
        // SAFETY: a row-major padded block (checked on every rank above) is
        // the grid's field padded by `[ghost, ghost, 0]` (the module's
        // documentation); an empty rectangle's block is not read.
        unsafe { grid.save_checked(path, &[field], None, user, bal) }
    }
}

impl SavedGrid {
    /// A [`DistArray2`] of a saved `rows × cols × 1` grid (a 2D array's
    /// save), planned by the balancer's 2D decomposer for its current
    /// speeds ([`Balancer::plan`]), with `ghost` layers, holding the saved
    /// cells (ghost cells default: exchange afterwards) and the saved cost
    /// per cell, if any (collective on the balancer's communicator, any
    /// number of ranks). The file must hold one field of
    /// `size_of::<T>()`-byte cells. Every rank returns the same error
    /// otherwise, and for a corrupt file.
    pub fn new_array2<T: Element + Plain>(
        &self,
        bal: &mut Balancer,
        ghost: usize,
    ) -> Result<DistArray2<T>> {
        let _w = waiting();
        let (rows, cols, nz) = self.header.shape;
        if nz != 1 {
            // The header is the same on every rank: so is this error.
            return Err(Error::shape_mismatch(format!(
                "the save file holds a {rows}x{cols}x{nz} grid, not a 2D array"
            )));
        }
        bal.restore_if_unmeasured(self.speeds());
        let plan = bal.plan(rows, cols)?;
        let mut a = DistArray2::<T>::with_plan(bal.comm(), plan, ghost)?;
        bal.adopt_checks(a.checks_mut());
        let mut grid = grid_of_array2(bal.comm(), a.plan(), ghost)?;
        // A new array's block is row-major.
        let (field, len) = field_of_array2(&mut a)?;
        // SAFETY: the array's padded block, `len` cells of the field's size
        // (checked against the grid's layout), borrowed for the call.
        unsafe { self.read_checked(&mut grid, &[field], Some(&[len])) }?;
        if let Some(c) = grid.cost() {
            a.set_cost(c.values().to_vec());
        }
        Ok(a)
    }
}
