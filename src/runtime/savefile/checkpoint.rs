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

use mpi::topology::SimpleCommunicator;

use crate::error::Result;
use crate::runtime::array::{DistArray2, Element};
use crate::runtime::array3::DistArray3;
use crate::runtime::balancer::{Balancer, SavedSpeeds};
use crate::runtime::graph::{DistGraph, GraphValue};
use crate::runtime::layout::{Field, Grid, Plain, RawField};

use super::SaveStats;

/// The speed state of `bal`, if given, for a save of data on `comm`
/// (collective, after the save's checked entry): the data must live on the
/// balancer's ranks; every rank's speed function is gathered at the root.
pub(super) fn speeds_of(
    bal: Option<&Balancer>,
    comm: &SimpleCommunicator,
) -> Result<Option<SavedSpeeds>> {
    match bal {
        Some(b) => {
            b.same_ranks(comm, "a checkpoint")?;
            b.saved_speeds()
        }
        None => Ok(None),
    }
}

impl Balancer {
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
        grid.save_fields(path.as_ref(), fields, user, Some(self))
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
        // SAFETY: the caller's contract.
        unsafe { grid.save_checked(path.as_ref(), fields, None, user, Some(self)) }
    }

    /// [`DistArray3::save`] with the balancer's speed state (collective on
    /// the balancer's ranks, which must be the array's).
    pub fn checkpoint_array3<T: Element + Plain>(
        &self,
        a: &DistArray3<T>,
        path: impl AsRef<Path>,
        user: &[u8],
    ) -> Result<SaveStats> {
        a.save_with(path.as_ref(), user, Some(self))
    }

    /// [`DistArray2::save`] with the balancer's speed state (collective on
    /// the balancer's ranks, which must be the array's).
    pub fn checkpoint_array2<T: Element + Plain>(
        &self,
        a: &DistArray2<T>,
        path: impl AsRef<Path>,
        user: &[u8],
    ) -> Result<SaveStats> {
        a.save_with(path.as_ref(), user, Some(self))
    }

    /// [`DistGraph::save`] with the balancer's speed state (collective on
    /// the balancer's ranks, which must be the graph's).
    pub fn checkpoint_graph<T: GraphValue>(
        &self,
        g: &DistGraph<T>,
        path: impl AsRef<Path>,
        user: &[u8],
    ) -> Result<SaveStats> {
        g.save_with(path.as_ref(), user, Some(self))
    }
}
