//! Rectangles moved between ranks without packing: point-to-point messages,
//! with only the ranks that exchange cells, of subarray datatypes
//! addressing the blocks in place (the move primitive of the layout layer,
//! [`exchange_pieces`]: no O(p) arrays), and the checks that say when every
//! rank can take that path ([`direct_capable`], [`all_true`]).

use std::ffi::c_void;
use std::os::raw::c_int;
use std::time::Instant;

use mpi::raw::AsRaw;
use mpi::traits::*;
use mpi::Count;
use ndarray::Array2;

use super::Element;
use crate::error::{Error, Result};
use crate::plan::array2d::{ArrayPlan, Rect};
use crate::runtime::layout::{exchange_pieces, Dtype, Piece};

/// A rectangle of a block in that block's own coordinates: `(row, col, rows, cols)`.
pub(super) type Block = Option<(usize, usize, usize, usize)>;

/// The rectangles of a block exchanged with other ranks: `(peer, rectangle)`.
pub(super) type PeerBlocks = Vec<(usize, Block)>;

/// Every non-empty part of `plan` but `skip`'s (the root's own part, which
/// it copies locally) as a block of the global array, with its rank.
pub(super) fn other_parts(plan: &ArrayPlan, skip: i32) -> PeerBlocks {
    plan.parts
        .iter()
        .enumerate()
        .filter(|&(q, p)| q != skip as usize && !p.is_empty())
        .map(|(q, p)| (q, Some((p.row, p.col, p.rows, p.cols))))
        .collect()
}

/// The parts of `plan` (other than `me`'s) that overlap `mine`, with the
/// overlap (global coordinates): one pass over the plan, only the
/// overlapping ranks kept.
pub(super) fn overlaps(plan: &ArrayPlan, me: usize, mine: &Rect) -> Vec<(usize, Rect)> {
    plan.parts
        .iter()
        .enumerate()
        .filter(|&(q, _)| q != me)
        .filter_map(|(q, p)| p.intersect(mine).map(|x| (q, x)))
        .collect()
}

/// True when `a` can be addressed in place by [`move_blocks`]: standard
/// layout, every byte offset within MPI's `int`, and `T`'s MPI extent equal
/// to its size. Otherwise the packing path serves.
pub(super) fn direct_capable<T: Element>(a: &Array2<T>) -> bool {
    a.is_standard_layout()
        && Count::try_from(a.len().saturating_mul(std::mem::size_of::<T>())).is_ok()
        && extent_is_size::<T>()
}

/// True on every rank when `mine` is true on every rank (one all-reduce).
pub(super) fn all_true<C: Communicator>(comm: &C, mine: bool) -> bool {
    let mut refusing = 0i32;
    comm.all_reduce_into(
        &i32::from(!mine),
        &mut refusing,
        mpi::collective::SystemOperation::sum(),
    );
    refusing == 0
}

/// Data movement without packing (collective): `sends` of `src` go to
/// their ranks, what those in `recvs` send lands in their rectangles of
/// `dst`, each one message of a subarray datatype addressing the
/// rectangle in place. Both arrays must be [`direct_capable`] and the
/// blocks inside them (checked here; a block outside is a bug, reported —
/// the same error on every rank — before anything is sent). Returns when
/// the messages were posted (the start of the movement).
pub(super) fn move_blocks<C: Communicator, T: Element>(
    comm: &C,
    src: &Array2<T>,
    sends: &[(usize, Block)],
    dst: &mut Array2<T>,
    recvs: &[(usize, Block)],
) -> Result<Instant> {
    let base = T::equivalent_datatype();
    // The pieces of `list` in an array of `dims` at `buf` (`capable`: the
    // array is `direct_capable`).
    let describe = |(nrows, ncols): (usize, usize),
                    capable: bool,
                    buf: *mut c_void,
                    list: &[(usize, Block)]|
     -> Result<Vec<Piece>> {
        let mut pieces = Vec::with_capacity(list.len());
        for &(peer, b) in list {
            let Some((r0, c0, rows, cols)) = b.filter(|b| b.2 > 0 && b.3 > 0) else {
                continue;
            };
            if r0 + rows > nrows || c0 + cols > ncols || !capable {
                return Err(Error::invalid_plan(format!(
                    "block {b:?} outside a {nrows}x{ncols} array"
                )));
            }
            // In `int` range: the whole array's bytes are (direct_capable).
            let int = |x: usize| x as c_int;
            let dtype = Dtype::subarray(
                [1, int(nrows), int(ncols)],
                [1, int(rows), int(cols)],
                [0, int(r0), int(c0)],
                base.as_raw(),
            )?
            .commit()?;
            pieces.push(Piece { peer, buf, dtype });
        }
        Ok(pieces)
    };
    let (sdims, scap, sbuf) = (src.dim(), direct_capable(src), src.as_ptr().cast_mut());
    let (ddims, dcap, dbuf) = (dst.dim(), direct_capable(dst), dst.as_mut_ptr());
    let pieces = describe(ddims, dcap, dbuf.cast(), recvs)
        .and_then(|r| Ok((r, describe(sdims, scap, sbuf.cast(), sends)?)));
    // SAFETY: every datatype addresses cells inside its standard-layout
    // array (checked in `describe`); MPI only reads `src`, and `dst` is
    // borrowed exclusively until the call returns.
    unsafe { exchange_pieces(comm, pieces, || {}) }
}

/// True when `T`'s MPI datatype has lower bound 0 and extent `size_of::<T>()`,
/// so that byte offsets of Rust elements address MPI elements (checked once
/// per call before the in-place path uses byte displacements).
fn extent_is_size<T: Element>() -> bool {
    let (mut lb, mut extent): (mpi::ffi::MPI_Aint, mpi::ffi::MPI_Aint) = (0, 0);
    // SAFETY: a query on a valid predefined or committed datatype, writing two integers.
    let rc = unsafe {
        mpi::ffi::MPI_Type_get_extent(T::equivalent_datatype().as_raw(), &mut lb, &mut extent)
    };
    rc == mpi::ffi::MPI_SUCCESS as i32
        && lb == 0
        && usize::try_from(extent).is_ok_and(|e| e == std::mem::size_of::<T>())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A 4×4 array in four 2×2 quadrants (ranks 0–3 row by row) and an
    /// empty part (rank 4).
    fn quadrants() -> ArrayPlan {
        let parts = vec![
            Rect::new(0, 0, 2, 2),
            Rect::new(0, 2, 2, 2),
            Rect::new(2, 0, 2, 2),
            Rect::new(2, 2, 2, 2),
            Rect::new(0, 0, 0, 0),
        ];
        ArrayPlan {
            algorithm: "test".into(),
            rows: 4,
            cols: 4,
            parts,
        }
    }

    #[test]
    fn overlaps_name_only_the_ranks_whose_parts_meet_the_rectangle() {
        let plan = quadrants();
        // The centre 2×2 meets every quadrant in one cell; rank 1 leaves itself out.
        let centre = Rect::new(1, 1, 2, 2);
        assert_eq!(
            overlaps(&plan, 1, &centre),
            vec![
                (0, Rect::new(1, 1, 1, 1)),
                (2, Rect::new(2, 1, 1, 1)),
                (3, Rect::new(2, 2, 1, 1)),
            ]
        );
        // The bottom row meets ranks 2 and 3 only (not the empty part).
        assert_eq!(
            overlaps(&plan, 9, &Rect::new(3, 0, 1, 4)),
            vec![(2, Rect::new(3, 0, 1, 2)), (3, Rect::new(3, 2, 1, 2))]
        );
        assert!(overlaps(&plan, 0, &Rect::new(0, 0, 0, 0)).is_empty());
    }

    #[test]
    fn the_root_sends_every_other_non_empty_part() {
        let parts = other_parts(&quadrants(), 2);
        let ranks: Vec<usize> = parts.iter().map(|p| p.0).collect();
        assert_eq!(ranks, vec![0, 1, 3]);
        assert_eq!(parts[1].1, Some((0, 2, 2, 2)));
    }
}
