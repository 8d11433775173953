//! Save files of [`DistArray3`]s: the same file as a [`Grid`]'s with one
//! field of `ncomp` components per cell, so an array saved on some number
//! of ranks restarts on any other, as an array or as a grid on the
//! application's buffers (and a grid's one-field save as an array).
//!
//! The array's padded block has the layout of a grid's field padded by the
//! ghost width on every axis (C order, components fastest within a cell),
//! so both directions go through the grid's code: a temporary [`Grid`] of
//! the array's plan describes the blocks, and the array's own buffer is
//! the field.

use std::mem::size_of;
use std::path::Path;

use super::{SaveStats, SavedGrid};
use crate::error::Result;
use crate::plan::array3d::Stencil;
use crate::runtime::array::Element;
use crate::runtime::array3::DistArray3;
use crate::runtime::balancer::Balancer;
use crate::runtime::clock::waiting;
use crate::runtime::layout::{Grid, Plain, RawField};

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
        let _w = waiting();
        let mut grid = Grid::new(
            self.comm(),
            self.plan().clone(),
            Stencil::seven(self.ghost()),
        )?;
        if let Some(c) = self.cost().filter(|c| c.block() == self.local_box()) {
            grid.set_cost(c.values().to_vec());
        }
        let field = RawField {
            // Only read by the save.
            data: self.padded().as_ptr().cast_mut().cast(),
            elem_size: self.ncomp() * size_of::<T>(),
            pad: [self.ghost(); 3],
        };
        // SAFETY: the array's padded block is the grid's field padded by the
        // ghost width (the module's documentation), borrowed for the call.
        unsafe { grid.save_raw(path, &[field], user) }
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
        let mut grid = bal.new_grid(self.header.shape, Stencil::seven(ghost))?;
        let mut a = DistArray3::<T>::new(bal.comm(), grid.plan().clone(), ghost, ncomp)?;
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
