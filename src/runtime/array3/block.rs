//! This rank's padded block of a [`DistArray3`](super::DistArray3) and the
//! runs of cells of a region in it (packing for the collectives), and the
//! arguments every rank checks alone.

use std::mem::size_of;
use std::ops::Range;

use super::MAX_GHOST3;
use crate::error::{Error, Result};
use crate::plan::array3d::{Box3, GridPlan3};
use crate::runtime::array::Element;

/// A box with the number of components per cell: the region type of the
/// 3D halo lists.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Cells {
    pub(super) b: Box3,
    pub(super) ncomp: usize,
}

/// The flat index ranges (each one run along z, all components) of the box
/// of extents `len` starting at `at` inside a block of extents `dims`, in C order.
pub(super) fn runs(
    dims: [usize; 3],
    at: [usize; 3],
    len: [usize; 3],
    ncomp: usize,
) -> impl Iterator<Item = Range<usize>> {
    let run = len[2] * ncomp;
    (0..len[0]).flat_map(move |i| {
        (0..len[1]).map(move |j| {
            let start = (((at[0] + i) * dims[1] + at[1] + j) * dims[2] + at[2]) * ncomp;
            start..start + run
        })
    })
}

/// The extents of a box indexed by axis.
pub(super) fn lens(b: &Box3) -> [usize; 3] {
    [b.nx, b.ny, b.nz]
}

/// This rank's padded block and everything of a [`DistArray3`] but its
/// communicator and checks.
#[derive(Debug, Clone)]
pub(super) struct Block3<T> {
    pub(super) plan: GridPlan3,
    pub(super) rank: usize,
    pub(super) ghost: usize,
    pub(super) ncomp: usize,
    pub(super) data: Vec<T>,
}

impl<T: Element> Block3<T> {
    /// Appends the elements of `region` to `out`.
    pub(super) fn pack(&self, region: &Cells, out: &mut Vec<T>) {
        for r in self.runs(&region.b) {
            out.extend_from_slice(&self.data[r]);
        }
    }
    /// Writes `src` into the elements of `region`.
    pub(super) fn unpack(&mut self, region: &Cells, src: &[T]) {
        let mut at = 0;
        for r in self.runs(&region.b) {
            let n = r.len();
            self.data[r].copy_from_slice(&src[at..at + n]);
            at += n;
        }
    }
}

impl<T: Element> Block3<T> {
    /// A block of default values for `rank`'s box of `plan`.
    pub(super) fn new(plan: GridPlan3, rank: usize, ghost: usize, ncomp: usize) -> Self {
        let dims = Self::padded_dims(&plan.boxes[rank], ghost);
        Block3 {
            data: vec![T::default(); dims.iter().product::<usize>() * ncomp],
            plan,
            rank,
            ghost,
            ncomp,
        }
    }

    /// Padded extents of box `b` (zero for an empty box).
    pub(super) fn padded_dims(b: &Box3, g: usize) -> [usize; 3] {
        if b.is_empty() {
            [0; 3]
        } else {
            [b.nx + 2 * g, b.ny + 2 * g, b.nz + 2 * g]
        }
    }

    pub(super) fn me(&self) -> Box3 {
        self.plan.boxes[self.rank]
    }

    /// The runs of `region` (global coordinates, inside the padded block).
    pub(super) fn runs(&self, region: &Box3) -> impl Iterator<Item = Range<usize>> {
        let (me, g) = (self.me(), self.ghost);
        let at = [0, 1, 2].map(|a| region.lo(a) + g - me.lo(a));
        runs(Self::padded_dims(&me, g), at, lens(region), self.ncomp)
    }

    pub(super) fn cells(&self, b: Option<Box3>) -> Option<Cells> {
        b.map(|b| Cells {
            b,
            ncomp: self.ncomp,
        })
    }

    /// The elements of this rank's cells (no ghosts), packed in C order.
    pub(super) fn pack_own(&self) -> Vec<T> {
        let mut out = Vec::with_capacity(self.me().volume() * self.ncomp);
        if let Some(c) = self.cells(Some(self.me()).filter(|b| !b.is_empty())) {
            self.pack(&c, &mut out);
        }
        out
    }
}

/// Checks the arguments every rank can check alone: ghost width, components,
/// a plan with one part per rank tiling its grid.
pub(super) fn check_args<T>(
    plan: &GridPlan3,
    ranks: usize,
    ghost: usize,
    ncomp: usize,
) -> Result<()> {
    if !(1..=MAX_GHOST3).contains(&ghost) {
        return Err(Error::invalid_input(format!(
            "ghost width {ghost}: 1 to {MAX_GHOST3} supported"
        )));
    }
    if ncomp == 0 {
        return Err(Error::invalid_input("0 components per cell"));
    }
    if plan.len() != ranks {
        return Err(Error::shape_mismatch(format!(
            "plan has {} parts for {ranks} ranks",
            plan.len()
        )));
    }
    plan.validate()?;
    let (nx, ny, nz) = plan.shape;
    if ghost > nx.min(ny).min(nz) {
        return Err(Error::invalid_input(format!(
            "ghost width {ghost} is wider than the {nx}x{ny}x{nz} grid"
        )));
    }
    let elements = plan.cells().checked_mul(ncomp);
    if elements.is_none_or(|n| n.checked_mul(size_of::<T>()).is_none()) {
        return Err(Error::invalid_input(format!(
            "{nx}x{ny}x{nz} cells of {ncomp} components overflow"
        )));
    }
    Ok(())
}
