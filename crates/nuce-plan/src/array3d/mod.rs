//! Decompositions of an `nx × ny × nz` grid into `p` boxes whose volumes
//! follow the speeds — the 3D counterpart of [`crate::array2d`]
//! (\[KRW96\], \[BBLRR01\] §3 generalised to three dimensions).
//!
//! A plan is data: [`GridPlan3`] lists one [`Box3`] per part, **in the order
//! of the speeds given** (part `i` belongs to speed `i`). Parts may be
//! empty (a rank with a tiny speed, or more ranks than cells); every cell
//! has exactly one owner ([`GridPlan3::validate`]). Cell `(i, j, k)` lies
//! at `i` along x, `j` along y, `k` along z.
//!
//! Every algorithm is a small struct implementing [`GridDecomposer3`]:
//!
//! | algorithm | name | class | complexity |
//! |---|---|---|---|
//! | [`Slabs3`] | `slabs` | 1D slabs along the longest axis, input order | `O(p log p)` |
//! | [`Pencils3`] | `pencils` | the 2D [`ColumnDp`](crate::array2d::ColumnDp) on the largest face, extruded | that of the 2D DP |
//! | [`Column3`] | `column` | slabs of columns of blocks, chosen by a two-level DP (\[BBLRR01\] §3.2.4 in 3D) | see [`Column3`] |
//! | [`RecursiveBisection3d`] | `rb` | recursive bisection of the longest axis (\[KRW96\] §6.3) | `O(p log p)` balanced, `O(p²)` worst |
//! | [`Rectilinear3`] | `rectilinear` | tensor grid `px × py × pz` (PETSc's `DMDACreate3d` `lx, ly, lz`) | see [`Rectilinear3`] |
//! | [`Guillotine3`] | `guillotine` | every guillotine tiling of a small grid (≤ 216 cells, ≤ 5 parts): best balance, then least surface | exponential in `p` |
//! | [`Best3`] | `best` | the least [`predicted_time3`] of the above (`guillotine` where it applies), then parts within one plane of their shares ([`one_plane`]) | their sum, plus bounded oracle searches |
//!
//! Measures: [`GridPlan3::internal_surface`] (cell faces between parts,
//! each counted once), [`GridPlan3::imbalance`], halo cells and neighbours
//! for a [`Stencil`] (7- or 27-point, any ghost width), and the lower bound
//! [`surface_lower_bound`] on the internal surface of any box tiling with
//! given volumes.
//!
//! The command line runs these as `nuce plan grid3` (`docs/cli.md`), with
//! the halo and neighbour lists per part in its JSON.
//!
//! ```
//! use nuce_plan::array3d::{Best3, GridDecomposer3, Stencil};
//! // Eight equal parts of a 64³ cube: octants, 3 internal planes of 64².
//! let plan = Best3::default().decompose((64, 64, 64), &[1.0; 8])?;
//! assert_eq!(plan.internal_surface(), 3 * 64 * 64);
//! assert_eq!(plan.neighbours(0, Stencil::twenty_seven(1)).len(), 7);
//! // A part twice as fast gets twice the cells (to one layer of cells).
//! let plan = Best3::default().decompose((64, 64, 64), &[2.0, 1.0, 1.0])?;
//! assert!(plan.imbalance(&[2.0, 1.0, 1.0])? < 0.05);
//! # Ok::<(), nuce_plan::Error>(())
//! ```
//!
//! Bad input — no speeds, a zero, negative, NaN or infinite speed, a zero
//! extent, `nx·ny·nz` overflowing or above [`MAX_CELLS`] — is an
//! [`Error`], never a panic ([`check_args3`]).
//!
//! # Files
//!
//! Each file is a public module (its docs hold the derivations: `column`
//! for the DP, `bound` for the lower bound); the items are re-exported here.
//!
//! | file | holds |
//! |---|---|
//! | `plan.rs` | [`Box3`], [`GridPlan3`]: tiling check, volumes, imbalance, surface, neighbours |
//! | `stencil.rs` | [`Stencil`], [`predicted_time3`] |
//! | `bound.rs` | [`surface_lower_bound`] and its derivation |
//! | `layout.rs` | [`Layout3`]: nested slab/column/block layouts rounded to cells |
//! | `one_plane.rs` | [`one_plane_tiling`]: an exact oracle, whether any cut positions of a plan's guillotine tree put every part within one plane of its share, with the least slowest part among such tilings; `best` takes its witnesses ([`Best3`]) |
//! | `planes.rs` | [`planes::balance_planes`]: cut planes moved so that parts lie within one plane (largest face) of their shares |
//! | `slabs.rs`, `pencils.rs`, `column.rs`, `rb.rs`, `rectilinear.rs`, `guillotine.rs`, `best.rs` | the decomposers |
//! | `weighted.rs` | non-uniform cost per cell: [`CellCosts`] (prefix sums), [`WeightedSlabs3`], [`WeightedBisection3d`] |

use crate::error::{Error, Result};

pub use crate::array2d::MAX_CELLS;

#[cfg(test)]
mod balance_tests;
pub mod best;
pub mod bound;
pub mod column;
pub mod guillotine;
pub mod layout;
pub mod one_plane;
pub mod pencils;
pub mod plan;
pub mod planes;
pub mod rb;
pub mod rectilinear;
pub mod slabs;
pub mod stencil;
#[cfg(test)]
mod tests;
pub mod weighted;

pub use best::{all_decomposers3, decomposer3_by_name, Best3, Candidate3, NAMES3};
pub use bound::{part_surface_lower_bound, surface_lower_bound};
pub use column::{column_model_surface, Column3};
pub use guillotine::Guillotine3;
pub use layout::Layout3;
pub use one_plane::{one_plane_tiling, one_plane_within, OnePlane};
pub use pencils::Pencils3;
pub use plan::{Box3, GridPlan3, Shape3};
pub use rb::RecursiveBisection3d;
pub use rectilinear::{Rectilinear3, RectilinearFit, RANK_ORDER_TIE};
pub use slabs::Slabs3;
pub use stencil::{predicted_time3, Stencil};
pub use weighted::{
    check_cell_costs, check_cost_values, part_costs, CellCosts, WeightedBisection3d, WeightedSlabs3,
};

/// An algorithm that decomposes a 3D grid into boxes proportional to speeds.
///
/// Implementations return a plan that passes [`GridPlan3::validate`], with
/// `speeds.len()` parts in input order, and reject bad input with an
/// [`Error`] ([`check_args3`]).
pub trait GridDecomposer3: Send + Sync {
    /// Decomposes a grid of `shape = (nx, ny, nz)` cells for the given speeds.
    fn decompose(&self, shape: Shape3, speeds: &[f64]) -> Result<GridPlan3>;
    /// Short name (as used by `nuce plan grid3 --algo`).
    fn name(&self) -> &str;
}

/// Common argument checks of the 3D decomposers: valid speeds
/// ([`crate::check_speeds`]) and a non-empty grid of at most [`MAX_CELLS`]
/// cells (`nx·ny·nz` computed without overflow).
pub fn check_args3(shape: Shape3, speeds: &[f64]) -> Result<()> {
    crate::check_speeds(speeds)?;
    let (nx, ny, nz) = shape;
    if nx == 0 || ny == 0 || nz == 0 {
        return Err(Error::Empty(format!("grid of {nx}x{ny}x{nz} cells")));
    }
    if nx
        .checked_mul(ny)
        .and_then(|c| c.checked_mul(nz))
        .is_none_or(|n| n > MAX_CELLS)
    {
        return Err(Error::InvalidInput(format!(
            "grid of {nx}x{ny}x{nz} cells: at most 2^53 = {MAX_CELLS} cells are supported"
        )));
    }
    Ok(())
}

/// [`check_args3`], then the speeds divided by their maximum (sums cannot
/// overflow; decompositions are scale-invariant).
pub(crate) fn checked_speeds3(shape: Shape3, speeds: &[f64]) -> Result<Vec<f64>> {
    check_args3(shape, speeds)?;
    Ok(crate::array2d::column::rescaled(speeds))
}

/// The extents of `shape` indexed by axis.
pub(crate) const fn extents(shape: Shape3) -> [usize; 3] {
    [shape.0, shape.1, shape.2]
}
