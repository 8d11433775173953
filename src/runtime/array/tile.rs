//! [`Tiled`]: this rank's block of a [`DistArray2`](super::DistArray2) with
//! the plan (everything but the communicator): its padded storage, the
//! rectangles it exchanges, and the packing of rectangles in and out of it.

use std::mem::size_of;

use mpi::traits::*;
use ndarray::{s, Array2, ArrayView2, ArrayViewMut2};

use super::blocks::Block;
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

    /// The ghost exchange of `rank`'s block of `p` as the grid layer's
    /// datatypes: the plan as a `1 × rows × cols` grid, the block padded by
    /// the ghost width `g`.
    pub(super) fn halo_types(p: &ArrayPlan, rank: usize, g: usize) -> Result<HaloTypes> {
        let boxes = p
            .parts
            .iter()
            .map(|r| Box3::from_axes([0, r.row, r.col], [1, r.rows, r.cols]))
            .collect();
        // The array's plan tiles its grid (validated where it was made), so
        // its boxes tile the one-plane 3D grid: not checked again.
        let plan = GridPlan3 {
            algorithm: p.algorithm.clone(),
            shape: (1, p.rows, p.cols),
            boxes,
        };
        let layout = Layout::of_valid_plan(plan, rank, Stencil::twenty_seven(g))?;
        HaloTypes::new(&layout, size_of::<T>(), [0, g, g])
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

    /// Copies the cells of `region` (global coordinates, inside this rank's
    /// padded block) into `out`, row-major, one `memcpy` per row.
    pub(super) fn pack(&self, region: &Rect, out: &mut Vec<T>) {
        let (g, me) = (self.ghost, self.rect());
        copy_rows(
            &self.data,
            region.row + g - me.row,
            region.col + g - me.col,
            region,
            out,
        );
    }

    /// Writes `src` (row-major) into the cells of `region`, one `memcpy` per row.
    pub(super) fn unpack(&mut self, region: &Rect, src: &[T]) {
        let (g, me) = (self.ghost, self.rect());
        let (r0, c0) = (region.row + g - me.row, region.col + g - me.col);
        if region.is_empty() {
            return;
        }
        let n = self.data.ncols();
        if let Some(data) = self.data.as_slice_mut() {
            for (i, chunk) in src.chunks_exact(region.cols).take(region.rows).enumerate() {
                let at = (r0 + i) * n + c0;
                data[at..at + region.cols].copy_from_slice(chunk);
            }
        } else {
            let mut v = self
                .data
                .slice_mut(s![r0..r0 + region.rows, c0..c0 + region.cols]);
            v.iter_mut().zip(src).for_each(|(d, x)| *d = *x);
        }
    }

    /// A rectangle in global coordinates as a block of the padded array.
    pub(super) fn local_block(&self, r: &Option<Rect>) -> Block {
        let (g, me) = (self.ghost, self.rect());
        r.filter(|r| !r.is_empty())
            .map(|r| (r.row + g - me.row, r.col + g - me.col, r.rows, r.cols))
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

/// Appends the `region.rows × region.cols` cells of `a` starting at local
/// `(r0, c0)` to `out`, row by row (contiguous copies when `a` is standard layout).
pub(super) fn copy_rows<T: Copy>(
    a: &Array2<T>,
    r0: usize,
    c0: usize,
    region: &Rect,
    out: &mut Vec<T>,
) {
    if region.is_empty() {
        return;
    }
    match a.as_slice() {
        Some(data) => {
            let n = a.ncols();
            for i in 0..region.rows {
                let at = (r0 + i) * n + c0;
                out.extend_from_slice(&data[at..at + region.cols]);
            }
        }
        None => out.extend(
            a.slice(s![r0..r0 + region.rows, c0..c0 + region.cols])
                .iter()
                .copied(),
        ),
    }
}
