//! Checkpoints: a save file of a grid, an array or a graph that also holds
//! the balancer's speed state ([`SavedSpeeds`]: every rank's speed, its
//! estimate and noise, and its speed function), so that a restart on the
//! same number of ranks starts from the saved plan without measuring, and
//! one on another number reports the old speeds
//! ([`SavedGrid::speeds`](super::SavedGrid::speeds),
//! [`SavedGraph::speeds`](super::SavedGraph::speeds)) and plans for the new
//! ranks' measured ones. Each is [`Grid::save`], [`DistArray3::save`],
//! [`DistArray2::save`] or [`DistGraph::save`] after one gather of the
//! ranks' speed functions at the root.

use std::path::Path;

use crate::error::Result;
use crate::runtime::array::{DistArray2, Element};
use crate::runtime::array3::DistArray3;
use crate::runtime::balancer::{Balancer, SavedSpeeds};
use crate::runtime::clock::waiting;
use crate::runtime::graph::{DistGraph, GraphValue};
use crate::runtime::layout::{Field, Grid, Plain, RawField};

use super::SaveStats;

impl Balancer {
    /// The speed state for a checkpoint of data on `comm` (collective):
    /// the data must live on the balancer's ranks.
    fn speeds_for(
        &self,
        comm: &mpi::topology::SimpleCommunicator,
        what: &str,
    ) -> Result<Option<SavedSpeeds>> {
        self.same_ranks(comm, what)?;
        self.saved_speeds()
    }

    /// [`Grid::save`] with the balancer's speed state (collective on the
    /// balancer's ranks, which must be the grid's): see the module's
    /// documentation. Every rank returns the same error, and `path` is
    /// then unchanged.
    pub fn checkpoint_grid(
        &self,
        grid: &Grid,
        path: impl AsRef<Path>,
        fields: &[Field<'_>],
        user: &[u8],
    ) -> Result<SaveStats> {
        let _w = waiting();
        let speeds = self.speeds_for(grid.comm(), "Balancer::checkpoint_grid")?;
        let raw: Vec<RawField> = fields.iter().map(|f| f.raw()).collect();
        let lens: Vec<usize> = fields.iter().map(|f| f.len()).collect();
        // SAFETY: the slices are borrowed for the call, lengths checked.
        unsafe { grid.save_checked(path.as_ref(), &raw, Some(&lens), user, speeds) }
    }

    /// [`Balancer::checkpoint_grid`] on raw fields (the C API).
    ///
    /// # Safety
    /// As [`Grid::save_raw`].
    pub unsafe fn checkpoint_grid_raw(
        &self,
        grid: &Grid,
        path: impl AsRef<Path>,
        fields: &[RawField],
        user: &[u8],
    ) -> Result<SaveStats> {
        let _w = waiting();
        let speeds = self.speeds_for(grid.comm(), "Balancer::checkpoint_grid")?;
        // SAFETY: the caller's contract.
        unsafe { grid.save_checked(path.as_ref(), fields, None, user, speeds) }
    }

    /// [`DistArray3::save`] with the balancer's speed state (collective on
    /// the balancer's ranks, which must be the array's).
    pub fn checkpoint_array3<T: Element + Plain>(
        &self,
        a: &DistArray3<T>,
        path: impl AsRef<Path>,
        user: &[u8],
    ) -> Result<SaveStats> {
        let _w = waiting();
        let speeds = self.speeds_for(a.comm(), "Balancer::checkpoint_array3")?;
        a.save_with(path.as_ref(), user, speeds)
    }

    /// [`DistArray2::save`] with the balancer's speed state (collective on
    /// the balancer's ranks, which must be the array's).
    pub fn checkpoint_array2<T: Element + Plain>(
        &self,
        a: &DistArray2<T>,
        path: impl AsRef<Path>,
        user: &[u8],
    ) -> Result<SaveStats> {
        let _w = waiting();
        let speeds = self.speeds_for(a.comm(), "Balancer::checkpoint_array2")?;
        a.save_with(path.as_ref(), user, speeds)
    }

    /// [`DistGraph::save`] with the balancer's speed state (collective on
    /// the balancer's ranks, which must be the graph's).
    pub fn checkpoint_graph<T: GraphValue>(
        &self,
        g: &DistGraph<T>,
        path: impl AsRef<Path>,
        user: &[u8],
    ) -> Result<SaveStats> {
        let _w = waiting();
        let speeds = self.speeds_for(g.comm(), "Balancer::checkpoint_graph")?;
        g.save_with(path.as_ref(), user, speeds)
    }
}
