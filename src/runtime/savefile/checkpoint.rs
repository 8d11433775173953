//! Checkpoints: a save file of a grid, an array or a graph that also holds
//! the balancer's speed state ([`SavedSpeeds`]: every rank's speed, its
//! estimate and noise, and its speed function), so that a restart on the
//! same number of ranks starts from the saved plan without measuring, and
//! one on another number reports the old speeds
//! ([`SavedGrid::speeds`](super::SavedGrid::speeds),
//! [`SavedGraph::speeds`](super::SavedGraph::speeds)) and plans for the new
//! ranks' measured ones. Each is [`Grid::save`] ([`Grid::checkpoint`]),
//! or [`DistArray3::save`], [`DistArray2::save`] or [`DistGraph::save`]
//! (their `checkpoint`: [`DistArray2::checkpoint`], …) after one gather of
//! the ranks' speed functions at the root.

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

/// nuce's containers that save with a balancer's speed state (their
/// `checkpoint`): [`DistArray2`] and [`DistArray3`] of [`Plain`]
/// elements, and [`DistGraph`], for code generic over them. A [`Grid`]'s
/// data lives in the application's buffers: [`Grid::checkpoint`] takes its
/// fields.
/// Sealed: implemented by nuce's types only.
pub trait Checkpointable: sealed::Sealed {
    /// The data's own `save` with `bal`'s speed state (collective).
    #[doc(hidden)]
    fn save_with_speeds(&self, path: &Path, user: &[u8], bal: &Balancer) -> Result<SaveStats>;
}

mod sealed {
    // Unnameable on purpose: no type outside nuce can implement `Checkpointable`.
    #[allow(unnameable_types)]
    pub trait Sealed {}
    impl<T: super::Element + super::Plain> Sealed for super::DistArray2<T> {}
    impl<T: super::Element + super::Plain> Sealed for super::DistArray3<T> {}
    impl<T: super::GraphValue> Sealed for super::DistGraph<T> {}
}

/// `checkpoint`, one per container: its own `save` with the balancer's
/// speed state, and the same as [`Checkpointable`] for generic code.
macro_rules! checkpoint_methods {
    ($($data:ident<T: $($bound:path),+>;)+) => {
        $(
            impl<T: $($bound +)+> $data<T> {
                #[doc = concat!("Saves the ", stringify!($data), " with `balancer`'s speed state (collective on the")]
                #[doc = "balancer's ranks, which must be the data's): its own `save` with the"]
                #[doc = "application's `user` bytes; see the module's documentation. Every rank"]
                #[doc = "returns the same error, and `path` is then unchanged."]
                pub fn checkpoint(
                    &self,
                    balancer: &Balancer,
                    path: impl AsRef<Path>,
                    user: &[u8],
                ) -> Result<SaveStats> {
                    self.save_with(path.as_ref(), user, Some(balancer))
                }
            }

            impl<T: $($bound +)+> Checkpointable for $data<T> {
                fn save_with_speeds(
                    &self,
                    path: &Path,
                    user: &[u8],
                    bal: &Balancer,
                ) -> Result<SaveStats> {
                    self.checkpoint(bal, path, user)
                }
            }
        )+
    };
}

checkpoint_methods! {
    DistArray2<T: Element, Plain>;
    DistArray3<T: Element, Plain>;
    DistGraph<T: GraphValue>;
}

impl Grid {
    /// [`Grid::save`] of the grid's `fields` with `balancer`'s speed state
    /// (collective on the balancer's ranks, which must be the grid's): see
    /// the module's documentation. Every rank returns the same error, and
    /// `path` is then unchanged.
    pub fn checkpoint(
        &self,
        balancer: &Balancer,
        path: impl AsRef<Path>,
        fields: &[Field<'_>],
        user: &[u8],
    ) -> Result<SaveStats> {
        self.save_fields(path.as_ref(), fields, user, Some(balancer))
    }
}

impl Balancer {
    #[deprecated(note = "use data.checkpoint(&balancer, path, user)")]
    #[doc(hidden)]
    pub fn checkpoint<D: Checkpointable>(
        &self,
        data: &D,
        path: impl AsRef<Path>,
        user: &[u8],
    ) -> Result<SaveStats> {
        data.save_with_speeds(path.as_ref(), user, self)
    }

    #[deprecated(note = "use grid.checkpoint(&balancer, path, fields, user)")]
    #[doc(hidden)]
    pub fn checkpoint_grid(
        &self,
        grid: &Grid,
        path: impl AsRef<Path>,
        fields: &[Field<'_>],
        user: &[u8],
    ) -> Result<SaveStats> {
        grid.checkpoint(self, path, fields, user)
    }

    /// [`Grid::checkpoint`] on raw fields. For nuce's C and
    /// Fortran bindings (hidden: no stability promise).
    ///
    /// # Safety
    /// As [`Grid::save_raw`].
    #[doc(hidden)]
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
}
