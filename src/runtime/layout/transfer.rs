//! Moves of cells between ranks (remaps, scatters, gathers): point-to-point
//! messages with only the ranks whose blocks overlap, each one item of a
//! derived datatype addressing the cells in place ([`exchange_pieces`]; no
//! O(p) arrays, no collective over the world but one agreement), the
//! grid layer's move between two layouts on it ([`transfer`]), and the move
//! between a layout and one whole array at a root ([`move_whole`]), which
//! every grid container's scatter and gather is.

use std::ffi::c_void;
use std::os::raw::c_int;
use std::time::Instant;

use mpi::ffi;
use mpi::traits::*;

use super::{offsets, Dtype, Layout, RawField};
use crate::error::{Error, Result};
use crate::plan::array3d::{Box3, GridPlan3, Stencil};
use crate::runtime::comm::{agree, mpi_check};
use crate::runtime::tags::GRID_MOVE;

/// One message of a move: the peer, and the cells as one item of the
/// committed datatype `dtype` on the buffer at `buf`.
#[derive(Debug)]
struct Piece {
    /// The other rank.
    peer: usize,
    /// The buffer the datatype addresses (read for a send, written for a receive).
    buf: *mut c_void,
    /// The cells, committed (freed when the move is done).
    dtype: Dtype,
}

/// This rank's messages of a move: what it receives, what it sends.
type Pieces = (Vec<Piece>, Vec<Piece>);

/// A move on `comm` (collective): first one agreement — when any rank
/// could not describe its messages (`pieces` is an `Err`), every rank
/// returns the same error and nothing is sent — then the receives and the
/// sends are posted, `local` runs while they travel (the cells this rank
/// keeps), and all are waited for. Only the peers named in `pieces` are
/// talked to. Returns when the messages were posted (every rank past the
/// agreement: the start of the movement, for its timing).
///
/// # Safety
/// Every piece's datatype addresses cells inside its buffer, readable
/// (sends) or writable and not otherwise accessed (receives) until this
/// returns; `local` does not touch the receive buffers' cells that pieces
/// write.
unsafe fn exchange_pieces<C: Communicator>(
    comm: &C,
    pieces: Result<Pieces>,
    local: impl FnOnce(),
) -> Result<Instant> {
    let (recvs, sends) = agree(comm, 0, pieces)?;
    let start = Instant::now();
    // SAFETY: reading an MPI handle constant.
    let mut reqs = vec![unsafe { ffi::RSMPI_REQUEST_NULL }; recvs.len() + sends.len()];
    let posts = recvs
        .iter()
        .map(|p| (p, true))
        .chain(sends.iter().map(|p| (p, false)));
    for ((p, recv), r) in posts.zip(reqs.iter_mut()) {
        let peer = p.peer as c_int;
        // SAFETY: the datatype addresses the buffer (caller's contract).
        let code = unsafe {
            if recv {
                ffi::MPI_Irecv(p.buf, 1, p.dtype.0, peer, GRID_MOVE, comm.as_raw(), r)
            } else {
                ffi::MPI_Isend(p.buf, 1, p.dtype.0, peer, GRID_MOVE, comm.as_raw(), r)
            }
        };
        mpi_check(code, "MPI_Irecv/MPI_Isend (move)")?;
    }
    local();
    // SAFETY: `reqs` holds the requests posted above (or null ones).
    let code = unsafe {
        ffi::MPI_Waitall(
            reqs.len() as c_int,
            reqs.as_mut_ptr(),
            ffi::RSMPI_STATUSES_IGNORE,
        )
    };
    mpi_check(code, "MPI_Waitall (move)")?;
    drop((recvs, sends));
    Ok(start)
}

/// What a move did on this rank: bytes sent, bytes sent and received,
/// messages sent; and when it started (after the agreement).
pub(crate) type Moved = (usize, usize, usize, Instant);

/// Moves fields from layout `from` to layout `next` on `comm` (every rank
/// with its own layouts of the same two plans): sends the cells that change
/// owner (one derived-datatype message per pair of ranks whose boxes
/// overlap, from the old buffers straight into the new ones) and copies
/// those kept. Collective as [`exchange_pieces`]: a rank that cannot make
/// its datatypes makes every rank return its error, nothing moved.
///
/// # Safety
/// See [`Grid::move_fields_raw`](super::Grid::move_fields_raw): `old` fits
/// `from`, `new` fits `next`.
pub(crate) unsafe fn transfer<C: Communicator>(
    comm: &C,
    from: &Layout,
    next: &Layout,
    old: &[RawField],
    new: &[RawField],
) -> Result<Moved> {
    let rank = from.rank;
    let (was, now) = (from.local_box(), next.local_box());
    let cell: usize = old.iter().map(|f| f.elem_size).sum();
    let (oo, no) = (offsets(old), offsets(new));
    // Received: where the old plan's boxes overlap this rank's new box,
    // into the new buffers; sent: this rank's old box where it overlaps
    // the new plan's, from the old buffers.
    let recvs = pieces_of(next, new, &no, (&from.plan.boxes, &now), rank);
    let sends = pieces_of(from, old, &oo, (&next.plan.boxes, &was), rank);
    let cells = |v: &Result<(Vec<Piece>, usize)>| v.as_ref().map_or(0, |v| v.1);
    let (sent, got) = (cells(&sends) * cell, cells(&recvs) * cell);
    let msgs = sends.as_ref().map_or(0, |v| v.0.len());
    let pieces = recvs.and_then(|r| Ok((r.0, sends?.0)));
    let keep = || {
        if let Some(keep) = was.intersect(&now) {
            for (o, n) in old.iter().zip(new) {
                // SAFETY: both buffers hold their layout's blocks (contract).
                unsafe { copy_kept(from, o, next, n, &keep) };
            }
        }
    };
    // SAFETY: the types address the old and the new buffers (contract).
    let start = unsafe { exchange_pieces(comm, pieces, keep) }?;
    Ok((sent, sent + got, msgs, start))
}

/// Which way a whole-array move goes ([`move_whole`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Way {
    /// From the ranks' blocks to the root's whole array.
    Gather,
    /// From the root's whole array to the ranks' blocks.
    Scatter,
}

/// The layout, on `rank`, of `plan`'s grid in which `root` (a part of the
/// plan) owns every cell: the layout of a whole array at the root.
pub(crate) fn root_layout(plan: &GridPlan3, rank: usize, root: usize) -> Result<Layout> {
    let (nx, ny, nz) = plan.shape;
    let all = Box3::from_axes([0; 3], [nx, ny, nz]);
    let boxes = (0..plan.len())
        .map(|r| if r == root { all } else { Box3::default() })
        .collect();
    let at = GridPlan3 {
        algorithm: "root".into(),
        shape: plan.shape,
        boxes,
    };
    Layout::of_valid_plan(at, rank, Stencil::seven(0))
}

/// The layouts of a move between `rank`'s block of `plan` (cells of
/// `elem_size` bytes padded by `pad`) and the whole array at `root`: the
/// block's layout without halo and [`root_layout`], each checked to hold
/// its buffer (the whole array on the root only). Errors: a root that is
/// not a part of the plan, a block or whole array beyond MPI's ranges.
pub(crate) fn whole_layouts(
    plan: &GridPlan3,
    rank: usize,
    root: i32,
    (elem_size, pad): (usize, [usize; 3]),
) -> Result<(Layout, Layout)> {
    let parts = plan.len();
    let r = usize::try_from(root)
        .ok()
        .filter(|&r| r < parts)
        .ok_or_else(|| {
            Error::invalid_input(format!("root {root} is not one of the {parts} ranks"))
        })?;
    let layout = Layout::of_valid_plan(plan.clone(), rank, Stencil::seven(0))?;
    layout.check_block(elem_size, pad)?;
    let at = root_layout(plan, rank, r)?;
    if r == rank {
        at.check_block(elem_size, [0; 3])?;
    }
    Ok((layout, at))
}

/// Moves one field between `layout` and the whole array `global` laid out
/// by `at` ([`root_layout`] of the same plan; `global` is read or written
/// at the root only) on `comm`: one derived-datatype message per rank with
/// cells, straight between the buffers; the root's own cells copied
/// locally. Collective as [`transfer`].
///
/// # Safety
/// `field` holds this rank's padded block of `layout`, `global` at the
/// root the whole grid (no padding) of cells of the same size; the side
/// written (`field` for a scatter, `global` for a gather) is writable and
/// not otherwise accessed until this returns.
pub(crate) unsafe fn move_whole<C: Communicator>(
    comm: &C,
    way: Way,
    (layout, at): (&Layout, &Layout),
    field: RawField,
    global: RawField,
) -> Result<Moved> {
    // SAFETY: the caller's contract.
    unsafe {
        match way {
            Way::Gather => transfer(comm, layout, at, &[field], &[global]),
            Way::Scatter => transfer(comm, at, layout, &[global], &[field]),
        }
    }
}

/// The messages of `fields` (laid out by `layout`, at byte offsets `offs`
/// from the first) with the ranks whose boxes overlap `mine` (`boxes` of
/// the other plan; one pass over it, only the overlapping ranks kept, none
/// for `rank` itself), and the cells they carry.
fn pieces_of(
    layout: &Layout,
    fields: &[RawField],
    offs: &[isize],
    (boxes, mine): (&[Box3], &Box3),
    rank: usize,
) -> Result<(Vec<Piece>, usize)> {
    let mut cells = 0;
    let mut pieces = Vec::new();
    for (peer, b) in boxes.iter().enumerate().filter(|&(q, _)| q != rank) {
        if let Some(b) = b.intersect(mine) {
            cells += b.volume();
            let dtype = layout.combined(fields, offs, &b)?;
            pieces.push(Piece {
                peer,
                buf: fields[0].data,
                dtype,
            });
        }
    }
    Ok((pieces, cells))
}

/// Copies the cells of `keep` from field `o` (laid out by `from`) to field
/// `n` (laid out by `to`), one contiguous run along axis 2 at a time;
/// nothing when both are the same buffer (same box and padding, checked).
///
/// # Safety
/// Both buffers hold their layout's padded block; `keep` lies in both boxes.
unsafe fn copy_kept(from: &Layout, o: &RawField, to: &Layout, n: &RawField, keep: &Box3) {
    if o.data == n.data {
        return;
    }
    let e = o.elem_size;
    let index = |l: &Layout, f: &RawField, i: usize, j: usize| {
        let (b, d) = (l.local_box(), l.padded_dims(f.pad));
        let (i, j, k) = (
            i + f.pad[0] - b.x,
            j + f.pad[1] - b.y,
            keep.z + f.pad[2] - b.z,
        );
        ((i * d[1] + j) * d[2] + k) * e
    };
    let run = keep.nz * e;
    for i in keep.x..keep.x + keep.nx {
        for j in keep.y..keep.y + keep.ny {
            let (src, dst) = (index(from, o, i, j), index(to, n, i, j));
            // SAFETY: both runs lie inside their buffers (contract); the
            // buffers are distinct.
            unsafe {
                std::ptr::copy(
                    o.data.cast::<u8>().add(src),
                    n.data.cast::<u8>().add(dst),
                    run,
                )
            };
        }
    }
}
