//! The data that standby ranks join ([`super::Pool::admit`]): grids on the
//! application's buffers, [`DistArray3`]s, [`DistArray2`]s and
//! [`DistGraph`]s ([`Joining`], sealed). On the active ranks each item is
//! replaced by its successor on the grown communicator — the active ranks'
//! parts kept, an empty part on every admitted rank — and planned for the
//! measured speeds of every rank: a grid with its move pending (as after a
//! remap), an array or a graph moved at once (an array by its remap to the
//! new plan, mirrored to keep the most cells in place; a graph cut again
//! along its order for every rank, moving little). An admitted rank gets
//! the grids from [`super::Pool::wait`] and the other items, in their order,
//! from [`Joined::array3`], [`Joined::array2`] and [`Joined::graph`]: the
//! same steps with its empty part.

use std::collections::VecDeque;

use mpi::traits::*;
use serde::{Deserialize, Serialize};

use super::pool::Joined;
use super::Balancer;
use crate::error::{Error, Result};
use crate::plan::array2d::{ArrayPlan, Rect};
use crate::plan::array3d::{Box3, GridPlan3, Stencil};
use crate::runtime::array::{DistArray2, Element};
use crate::runtime::array3::DistArray3;
use crate::runtime::comm::{agree, root_compute};
use crate::runtime::graph::{DistGraph, GraphStrategy, GraphValue, Pieces};
use crate::runtime::layout::Grid;

/// What an admitted rank needs to make its empty part of one item (sent
/// with the admission). For nuce's use only.
#[doc(hidden)]
#[derive(Debug, Clone, Serialize, Deserialize)]
pub enum JoinItem {
    /// A grid: its plan and stencil.
    Grid(GridPlan3, Stencil),
    /// A `DistArray3`: plan, ghost width, components, bytes per element.
    Array3(GridPlan3, usize, usize, usize),
    /// A `DistArray2`: plan, ghost width, bytes per element.
    Array2(ArrayPlan, usize, usize),
    /// A `DistGraph`: vertices, bytes per value, strategy.
    Graph(usize, usize, GraphStrategy),
}

mod sealed {
    // Unnameable on purpose: no type outside nuce can implement `Joining`.
    #[allow(unnameable_types)]
    pub trait Sealed {}
    impl Sealed for super::Grid {}
    impl<T> Sealed for super::DistArray3<T> {}
    impl<T> Sealed for super::DistArray2<T> {}
    impl<T> Sealed for super::DistGraph<T> {}
}

/// Data that standby ranks join at [`super::Pool::admit`]: [`Grid`]s (no
/// move pending), [`DistArray3`]s, [`DistArray2`]s and [`DistGraph`]s (not
/// balanced by a root index). Sealed.
pub trait Joining: sealed::Sealed {
    /// What an admitted rank needs to make its part, or why this item
    /// cannot join (local).
    #[doc(hidden)]
    fn join_item(&self) -> Result<JoinItem>;
    /// Replaces the item by its successor on `next`'s (grown) communicator,
    /// planned for `next`'s speeds (collective with the admitted ranks).
    #[doc(hidden)]
    fn grow(&mut self, next: &Balancer) -> Result<()>;
}

/// `boxes` with an empty box for every admitted rank of `next`.
fn grown3(next: &Balancer, plan: &GridPlan3) -> GridPlan3 {
    let mut boxes = plan.boxes.clone();
    boxes.resize(next.comm.size() as usize, Box3::default());
    GridPlan3 {
        algorithm: plan.algorithm.clone(),
        shape: plan.shape,
        boxes,
    }
}

/// The same error on every rank of `next` unless every rank's `local` is
/// fine (the admitted ranks' type checks).
fn agreed(next: &Balancer, local: Result<()>) -> Result<()> {
    agree(&next.comm, 0, local)
}

impl Joining for Grid {
    fn join_item(&self) -> Result<JoinItem> {
        match self.pending() {
            Some(_) => Err(Error::invalid_input("a grid's move is pending")),
            None => Ok(JoinItem::Grid(self.plan().clone(), self.stencil())),
        }
    }

    fn grow(&mut self, next: &Balancer) -> Result<()> {
        *self = joined_grid(next, self.plan(), self.stencil())?;
        Ok(())
    }
}

/// A grid of the active ranks' `plan` on `next`'s communicator, planned
/// for its speeds with the move pending (on every rank of it).
pub(super) fn joined_grid(next: &Balancer, plan: &GridPlan3, stencil: Stencil) -> Result<Grid> {
    let mut g = next.grid_of(grown3(next, plan), stencil)?;
    let to = next.plan3(g.global_shape(), stencil.ghost)?;
    g.start_remap(to.closest_mirror(g.plan()))?;
    Ok(g)
}

/// Remaps `a` (on `next`'s communicator) to `next`'s plan for its speeds,
/// the mirror image that keeps the most cells in place.
fn remap3<T: Element>(next: &Balancer, a: &mut DistArray3<T>) -> Result<()> {
    next.adopt_checks(a.checks_mut());
    let to = next.plan3(a.plan().shape, a.ghost())?;
    a.remap(&to.closest_mirror(a.plan())).map(drop)
}

impl<T: Element> Joining for DistArray3<T> {
    fn join_item(&self) -> Result<JoinItem> {
        Ok(JoinItem::Array3(
            self.plan().clone(),
            self.ghost(),
            self.ncomp(),
            std::mem::size_of::<T>(),
        ))
    }

    fn grow(&mut self, next: &Balancer) -> Result<()> {
        agreed(next, Ok(()))?;
        let mut n = self.successor(next.comm(), grown3(next, self.plan()))?;
        remap3(next, &mut n)?;
        *self = n;
        Ok(())
    }
}

/// Remaps `a` (on `next`'s communicator) to `next`'s 2D plan for its
/// speeds, the mirror image that keeps the most cells in place.
fn remap2<T: Element>(next: &Balancer, a: &mut DistArray2<T>) -> Result<()> {
    next.adopt_checks(a.checks_mut());
    let to = next.plan(a.plan().rows, a.plan().cols)?;
    let to = agree(
        &next.comm,
        0,
        to.closest_mirror(a.plan()).map_err(Error::from),
    )?;
    a.remap(&to).map(drop)
}

/// The active ranks' 2D `plan` with an empty rectangle for every admitted rank.
fn grown2(next: &Balancer, plan: &ArrayPlan) -> ArrayPlan {
    let mut parts = plan.parts.clone();
    parts.resize(next.comm.size() as usize, Rect::default());
    ArrayPlan {
        algorithm: plan.algorithm.clone(),
        rows: plan.rows,
        cols: plan.cols,
        parts,
    }
}

impl<T: Element> Joining for DistArray2<T> {
    fn join_item(&self) -> Result<JoinItem> {
        Ok(JoinItem::Array2(
            self.plan().clone(),
            self.ghost(),
            std::mem::size_of::<T>(),
        ))
    }

    fn grow(&mut self, next: &Balancer) -> Result<()> {
        agreed(next, Ok(()))?;
        let mut n = self.successor(next.comm(), grown2(next, self.plan()))?;
        remap2(next, &mut n)?;
        *self = n;
        Ok(())
    }
}

/// Cuts `g` (on `next`'s communicator) again for `next`'s speeds, every
/// rank getting a part.
fn spread<T: GraphValue>(next: &Balancer, g: &mut DistGraph<T>) -> Result<()> {
    next.adopt_checks(&mut g.core.cp);
    let p = next.comm.size() as usize;
    let speeds = next.speeds_or_uniform();
    let all: Vec<usize> = (0..p).collect();
    g.spread_to(&all, &speeds).map(drop)
}

impl<T: GraphValue> Joining for DistGraph<T> {
    fn join_item(&self) -> Result<JoinItem> {
        if self.strategy() == GraphStrategy::RootIndex {
            return Err(Error::invalid_input(
                "a graph balanced by a root index cannot join (only graphs of from_local)",
            ));
        }
        Ok(JoinItem::Graph(
            self.global_len(),
            T::BYTES,
            self.strategy(),
        ))
    }

    fn grow(&mut self, next: &Balancer) -> Result<()> {
        agreed(next, Ok(()))?;
        let (pieces, weighted, dim) = self.pieces();
        let shape = root_compute(&next.comm, 0, || Ok((weighted, dim)))?;
        let mut n = DistGraph::from_pieces(
            next.comm(),
            self.global_len(),
            shape,
            pieces,
            self.strategy(),
        )?;
        spread(next, &mut n)?;
        *self = n;
        Ok(())
    }
}

impl Joined {
    /// The items left to take, in order (what they are: for bindings that
    /// choose the type to take by it).
    #[doc(hidden)]
    pub fn items_left(&self) -> &VecDeque<JoinItem> {
        &self.rest
    }

    /// The next item of the admission, which must be `want` and pass
    /// `check` (one collective check, the active ranks' `agreed` in
    /// [`Joining::grow`]: the same error on every rank otherwise).
    fn next_item(
        &mut self,
        want: &str,
        check: impl FnOnce(&JoinItem) -> Result<()>,
    ) -> Result<JoinItem> {
        let item = self.rest.pop_front();
        let local = match &item {
            Some(i) if kind(i) == want => check(i),
            Some(i) => Err(Error::invalid_input(format!(
                "Joined::{want}: the next joined item is a {}",
                kind(i)
            ))),
            None => Err(Error::invalid_input(format!(
                "Joined::{want}: no joined item is left"
            ))),
        };
        agreed(&self.balancer, local)?;
        Ok(item.expect("checked above"))
    }

    /// On an admitted rank: the next [`DistArray3`] of the admission (the
    /// active ranks' items in their order, grids left out), this rank's
    /// part moved in (collective with the active ranks' [`super::Pool::admit`]).
    /// Elements of another size than the active ranks' are the same error
    /// on every rank.
    pub fn array3<T: Element>(&mut self) -> Result<DistArray3<T>> {
        let item = self.next_item("array3", |i| match i {
            JoinItem::Array3(.., elem) => same_size::<T>(*elem),
            _ => Ok(()),
        })?;
        let JoinItem::Array3(plan, ghost, ncomp, _) = item else {
            unreachable!("checked by next_item")
        };
        let next = &self.balancer;
        let mut a = DistArray3::with_plan(next.comm(), grown3(next, &plan), ghost, ncomp)?;
        // The active ranks' successor checks its box (on the array's
        // communicator): nothing to check here.
        agree(a.comm(), 0, Ok(()))?;
        remap3(next, &mut a)?;
        Ok(a)
    }

    /// On an admitted rank: the next [`DistArray2`] of the admission, as
    /// [`Joined::array3`].
    pub fn array2<T: Element>(&mut self) -> Result<DistArray2<T>> {
        let item = self.next_item("array2", |i| match i {
            JoinItem::Array2(.., elem) => same_size::<T>(*elem),
            _ => Ok(()),
        })?;
        let JoinItem::Array2(plan, ghost, _) = item else {
            unreachable!("checked by next_item")
        };
        let next = &self.balancer;
        let mut a = DistArray2::with_plan(next.comm(), grown2(next, &plan), ghost)?;
        // The active ranks' successor checks its rectangle (on the array's
        // communicator).
        agree(a.comm(), 0, Ok(()))?;
        remap2(next, &mut a)?;
        Ok(a)
    }

    /// On an admitted rank: the next [`DistGraph`] of the admission, as
    /// [`Joined::array3`]: its share of the vertices for its speed.
    pub fn graph<T: GraphValue>(&mut self) -> Result<DistGraph<T>> {
        let item = self.next_item("graph", |i| match i {
            JoinItem::Graph(_, bytes, _) if *bytes != T::BYTES => {
                Err(Error::shape_mismatch(format!(
                    "{}-byte values, the active ranks' are {bytes}-byte",
                    T::BYTES
                )))
            }
            _ => Ok(()),
        })?;
        let JoinItem::Graph(n, _, strategy) = item else {
            unreachable!("checked by next_item")
        };
        let next = &self.balancer;
        // The active root's edge weights and dimension (an admitted rank is
        // never the root), then an empty part.
        let shape = root_compute(&next.comm, 0, || {
            Err(Error::invalid_input("an admitted rank is not the root"))
        })?;
        let mut g = DistGraph::from_pieces(next.comm(), n, shape, Pieces::default(), strategy)?;
        spread(next, &mut g)?;
        Ok(g)
    }
}

/// An error unless `T` has `elem` bytes.
fn same_size<T>(elem: usize) -> Result<()> {
    let have = std::mem::size_of::<T>();
    if have == elem {
        Ok(())
    } else {
        Err(Error::shape_mismatch(format!(
            "{have}-byte elements, the active ranks' are {elem}-byte"
        )))
    }
}

/// The name of an item's kind (as the `Joined` methods).
fn kind(i: &JoinItem) -> &'static str {
    match i {
        JoinItem::Grid(..) => "grid",
        JoinItem::Array3(..) => "array3",
        JoinItem::Array2(..) => "array2",
        JoinItem::Graph(..) => "graph",
    }
}

/// The items other than grids, in order (what [`Joined`]'s methods take).
pub(super) fn rest(items: &[JoinItem]) -> VecDeque<JoinItem> {
    items
        .iter()
        .filter(|i| !matches!(i, JoinItem::Grid(..)))
        .cloned()
        .collect()
}
