//! [`Tiled`]: this rank's block of a [`DistArray2`](super::DistArray2) with
//! the plan (everything but the communicator): its padded storage, the
//! rectangles it exchanges, and its layout on the grid layer.

use std::mem::size_of;

use mpi::traits::*;
use ndarray::{s, Array2, ArrayView2, ArrayViewMut2};

use super::Element;
use crate::error::{Error, Result};
use crate::plan::array2d::{ArrayPlan, Rect};
use crate::plan::array3d::{Box3, GridPlan3, Stencil};
use crate::runtime::comm::{agree, check_identical};
use crate::runtime::layout::{HaloTypes, Layout};

/// This rank's block of a distributed array, with the plan: everything of a
/// [`DistArray2`](super::DistArray2) but its communicator.
#[derive(Debug, Clone)]
pub(super) struct Tiled<T> {
    pub(super) plan: ArrayPlan,
    pub(super) rank: usize,
    pub(super) ghost: usize,
    pub(super) data: Array2<T>,
    /// The same exchange as derived datatypes, for an application's buffer
    /// of this block's layout
    /// ([`DistArray2::exchange_ghosts_on`](super::DistArray2::exchange_ghosts_on)).
    pub(super) on_buffer: Option<HaloTypes>,
}

/// Expands a rectangle by `g` cells on every side, clipped to `rows × cols`.
fn expand(r: &Rect, g: usize, rows: usize, cols: usize) -> Rect {
    if r.is_empty() {
        return *r;
    }
    let r0 = r.row.saturating_sub(g);
    let c0 = r.col.saturating_sub(g);
    Rect::new(
        r0,
        c0,
        (r.row_end() + g).min(rows) - r0,
        (r.col_end() + g).min(cols) - c0,
    )
}

impl<T: Element> Tiled<T> {
    pub(super) fn check_plan<C: Communicator>(comm: &C, plan: &ArrayPlan) -> Result<()> {
        Self::check_parts(comm, plan)?;
        Ok(plan.validate()?)
    }

    /// The check of a plan that needs no pass over it: one part per rank.
    pub(super) fn check_parts<C: Communicator>(comm: &C, plan: &ArrayPlan) -> Result<()> {
        if plan.len() != comm.size() as usize {
            return Err(Error::shape_mismatch(format!(
                "plan has {} parts for {} ranks",
                plan.len(),
                comm.size()
            )));
        }
        Ok(())
    }

    /// An array of default values laid out by `plan` (collective only in its checks).
    pub(super) fn new<C: Communicator>(comm: &C, plan: ArrayPlan, ghost: usize) -> Result<Self> {
        agree(comm, 0, Self::check_plan(comm, &plan))?;
        check_identical(comm, 0, "plan", &plan)?;
        let rank = comm.rank() as usize;
        let me = plan.parts[rank];
        let data = Array2::default((me.rows + 2 * ghost, me.cols + 2 * ghost));
        Ok(Tiled {
            plan,
            rank,
            ghost,
            data,
            on_buffer: None,
        })
    }

    /// The plan as the grid layer's: a `1 × rows × cols` grid.
    pub(super) fn grid_plan(p: &ArrayPlan) -> GridPlan3 {
        let boxes = p
            .parts
            .iter()
            .map(|r| Box3::from_axes([0, r.row, r.col], [1, r.rows, r.cols]))
            .collect();
        GridPlan3 {
            algorithm: p.algorithm.clone(),
            shape: (1, p.rows, p.cols),
            boxes,
        }
    }

    /// This rank's layout of the plan on the grid layer, for a 9-point
    /// stencil of ghost width `g` (0: the layout of the moves).
    pub(super) fn layout(&self, g: usize) -> Result<Layout> {
        Self::layout_of(&self.plan, self.rank, g)
    }

    /// [`Tiled::layout`] of `rank`'s block of `p`.
    fn layout_of(p: &ArrayPlan, rank: usize, g: usize) -> Result<Layout> {
        // The array's plan tiles its grid (validated where it was made), so
        // its boxes tile the one-plane 3D grid: not checked again.
        Layout::of_valid_plan(Self::grid_plan(p), rank, Stencil::twenty_seven(g))
    }

    /// The ghost exchange of `rank`'s block of `p` as the grid layer's
    /// datatypes: the block padded by the ghost width `g` along both axes.
    pub(super) fn halo_types(p: &ArrayPlan, rank: usize, g: usize) -> Result<HaloTypes> {
        HaloTypes::new(&Self::layout_of(p, rank, g)?, size_of::<T>(), [0, g, g])
    }

    /// The shape of this rank's padded block.
    pub(super) fn padded_shape(&self) -> (usize, usize) {
        let (r, g) = (self.rect(), self.ghost);
        (r.rows + 2 * g, r.cols + 2 * g)
    }

    /// This rank's rectangle in global coordinates.
    pub(super) fn rect(&self) -> Rect {
        self.plan.parts[self.rank]
    }
    /// This rank's cells (without ghosts).
    pub(super) fn local(&self) -> ArrayView2<'_, T> {
        let (g, r) = (self.ghost, self.rect());
        self.data.slice(s![g..g + r.rows, g..g + r.cols])
    }
    /// This rank's cells (without ghosts), mutable.
    pub(super) fn local_mut(&mut self) -> ArrayViewMut2<'_, T> {
        let (g, r) = (self.ghost, self.rect());
        self.data.slice_mut(s![g..g + r.rows, g..g + r.cols])
    }

    /// The rectangles this rank sends to and receives from every rank in a
    /// halo exchange of width `ghost`: `(send[r], recv[r])`, empty for itself.
    pub(super) fn halo_regions(&self) -> (Vec<Option<Rect>>, Vec<Option<Rect>>) {
        let (m, n, g) = (self.plan.rows, self.plan.cols, self.ghost);
        let me = self.rect();
        let mine_x = expand(&me, g, m, n);
        let mut send = Vec::with_capacity(self.plan.len());
        let mut recv = Vec::with_capacity(self.plan.len());
        for (q, other) in self.plan.parts.iter().enumerate() {
            if q == self.rank || g == 0 || me.is_empty() || other.is_empty() {
                send.push(None);
                recv.push(None);
                continue;
            }
            send.push(me.intersect(&expand(other, g, m, n)));
            recv.push(mine_x.intersect(other));
        }
        (send, recv)
    }
}
