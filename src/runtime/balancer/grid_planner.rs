//! The 3D decomposer of a balancer's grids ([`DistArray3`](crate::DistArray3),
//! [`Grid`](crate::Grid)): `best` for the data's stencil unless the
//! application chose another one ([`Balancer::set_decomposer3`],
//! [`Balancer::set_algorithm3`]).

use std::sync::Arc;

use super::{Balancer, ROOT};
use crate::error::{Error, Result};
use crate::plan::array3d::{decomposer3_by_name, Best3, GridDecomposer3, Stencil};
use crate::runtime::clock::waiting;
use crate::runtime::comm::agree;

/// Which 3D decomposer plans the balancer's grids.
#[derive(Clone, Default)]
pub(super) enum GridPlanner {
    /// [`Best3`] for the stencil of the grid being planned.
    #[default]
    Best,
    /// A decomposer of [`crate::plan::array3d::NAMES3`] (`best` ranks for
    /// the grid's stencil).
    Named(String),
    /// The application's own.
    Given(Arc<dyn GridDecomposer3>),
}

impl GridPlanner {
    /// The decomposer for a grid with `stencil` (its ghost width at least 1).
    pub(super) fn for_stencil(&self, mut stencil: Stencil) -> Result<Arc<dyn GridDecomposer3>> {
        stencil.ghost = stencil.ghost.max(1);
        Ok(match self {
            GridPlanner::Best => Arc::new(Best3 { stencil }),
            GridPlanner::Named(name) => Arc::from(decomposer3_by_name(name, stencil)?),
            GridPlanner::Given(d) => Arc::clone(d),
        })
    }

    /// The decomposer for a grid with `ghost` layers and a 7-point stencil.
    pub(super) fn for_ghost(&self, ghost: usize) -> Result<Arc<dyn GridDecomposer3>> {
        self.for_stencil(Stencil::seven(ghost.max(1)))
    }
}

impl Balancer {
    /// Plans 3D grids ([`Balancer::plan3`], [`Balancer::new_grid`], the balance
    /// points of [`DistArray3`](crate::DistArray3) and
    /// [`Grid`](crate::Grid) without a cost field) with `decomposer` from
    /// now on (local; all ranks must do the same: every rank plans alike
    /// where the plan is not broadcast). The default is
    /// [`Best3`](crate::plan::array3d::Best3) for each grid's stencil. By
    /// name and checked on every rank: [`Balancer::set_algorithm3`].
    pub fn set_decomposer3(&mut self, decomposer: impl GridDecomposer3 + 'static) {
        self.planner3 = GridPlanner::Given(Arc::new(decomposer));
    }

    /// Sets the 3D decomposer by its name in
    /// [`crate::plan::array3d::NAMES3`] (`best`, the default, `column`,
    /// `pencils`, `rb`, `rectilinear`, `slabs`; `guillotine` only for tiny
    /// grids). Collective: the name is checked to be the same on every
    /// rank, and an unknown name is the same error on every rank. `rb` plans
    /// 10⁵ parts in milliseconds where `best` compares every candidate.
    pub fn set_algorithm3(&mut self, name: &str) -> Result<()> {
        let _w = waiting();
        self.arrive(&format!("Balancer::set_algorithm3({name})"))?;
        let known = decomposer3_by_name(name, Stencil::seven(1))
            .map(|_| ())
            .map_err(Error::from);
        agree(&self.comm, ROOT, known)?;
        self.planner3 = if name == "best" {
            GridPlanner::Best
        } else {
            GridPlanner::Named(name.to_string())
        };
        Ok(())
    }

    /// Name of the 3D decomposer of the balancer's grids.
    pub fn algorithm3(&self) -> String {
        match &self.planner3 {
            GridPlanner::Best => "best".to_string(),
            GridPlanner::Named(n) => n.clone(),
            GridPlanner::Given(d) => d.name().to_string(),
        }
    }
}
