//! Rectangles moved between ranks without packing: one `MPI_Alltoallw`
//! whose per-peer datatypes are strided vectors addressing the blocks in
//! place ([`alltoallw_blocks`]), and the checks that say when every rank
//! can take that path ([`direct_capable`], [`all_true`]).

use mpi::datatype::UserDatatype;
use mpi::raw::AsRaw;
use mpi::traits::*;
use mpi::Count;
use ndarray::Array2;

use super::Element;
use crate::error::{Error, Result};
use crate::plan::array2d::ArrayPlan;
use crate::runtime::comm::agree;
use crate::runtime::object::count;

/// A rectangle of a block in that block's own coordinates: `(row, col, rows, cols)`.
pub(super) type Block = Option<(usize, usize, usize, usize)>;

/// Every part of `plan` as a block of the global array, except `skip`'s
/// (the root's own part, which it copies locally).
pub(super) fn other_parts(plan: &ArrayPlan, skip: i32) -> Vec<Block> {
    plan.parts
        .iter()
        .enumerate()
        .map(|(q, p)| (q != skip as usize).then_some((p.row, p.col, p.rows, p.cols)))
        .collect()
}

/// True when `a` can be addressed in place by [`alltoallw_blocks`]: standard
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

/// Data movement without packing: one `MPI_Alltoallw` whose per-peer
/// datatypes are strided vectors addressing the rectangles in place —
/// `sends[q]` of `src` goes to rank `q`, what rank `q` sends lands in
/// `recvs[q]` of `dst`. Both arrays must be [`direct_capable`] and the blocks
/// inside them (checked here; a block outside is a bug, reported as an error
/// before any communication would be unsafe).
pub(super) fn alltoallw_blocks<C: Communicator, T: Element>(
    comm: &C,
    src: &Array2<T>,
    sends: &[Block],
    dst: &mut Array2<T>,
    recvs: &[Block],
) -> Result<()> {
    let elem = std::mem::size_of::<T>();
    let base = T::equivalent_datatype();
    let describe = |a: &Array2<T>, b: &Block| -> Result<(Count, Count, Option<UserDatatype>)> {
        match *b {
            Some((r0, c0, rows, cols)) if rows > 0 && cols > 0 => {
                if r0 + rows > a.nrows() || c0 + cols > a.ncols() || !direct_capable(a) {
                    return Err(Error::invalid_plan(format!(
                        "block {b:?} outside a {}x{} array",
                        a.nrows(),
                        a.ncols()
                    )));
                }
                let offset = (r0 * a.ncols() + c0) * elem;
                Ok((
                    1,
                    count(offset)?,
                    Some(strided_type::<T>(rows, cols, a.ncols())?),
                ))
            }
            _ => Ok((0, 0, None)),
        }
    };
    let size = comm.size() as usize;
    let local = (|| {
        if sends.len() != size || recvs.len() != size {
            return Err(Error::shape_mismatch(format!(
                "block lists for {size} ranks expected"
            )));
        }
        let s = sends
            .iter()
            .map(|b| describe(src, b))
            .collect::<Result<Vec<_>>>()?;
        let r = recvs
            .iter()
            .map(|b| describe(dst, b))
            .collect::<Result<Vec<_>>>()?;
        Ok((s, r))
    })();
    // Nobody enters the all-to-all unless everybody can.
    let (s, r) = agree(comm, 0, local)?;
    type Raw = (Vec<Count>, Vec<Count>, Vec<mpi::ffi::MPI_Datatype>);
    let raw = |v: &[(Count, Count, Option<UserDatatype>)]| -> Raw {
        (
            v.iter().map(|x| x.0).collect(),
            v.iter().map(|x| x.1).collect(),
            v.iter()
                .map(|x| x.2.as_ref().map_or(base.as_raw(), |t| t.as_raw()))
                .collect(),
        )
    };
    let (sc, sd, st) = raw(&s);
    let (rc, rd, rt) = raw(&r);
    // Empty arrays share one dangling address, which MPI would take for
    // `sendbuf == recvbuf`: give them distinct real addresses (nothing is
    // read or written through them, all their counts are 0).
    let (dummy_s, mut dummy_r) = ([0u64; 1], [0u64; 1]);
    let sptr = if src.is_empty() {
        dummy_s.as_ptr() as *const std::ffi::c_void
    } else {
        src.as_ptr() as *const std::ffi::c_void
    };
    let rptr = if dst.is_empty() {
        dummy_r.as_mut_ptr() as *mut std::ffi::c_void
    } else {
        dst.as_mut_ptr() as *mut std::ffi::c_void
    };
    // SAFETY: every (count, byte offset, datatype) triple addresses cells
    // inside its standard-layout array (checked in `describe`); the arrays
    // outlive the blocking call; the datatypes are committed and freed after it.
    let code = unsafe {
        mpi::ffi::MPI_Alltoallw(
            sptr,
            sc.as_ptr(),
            sd.as_ptr(),
            st.as_ptr(),
            rptr,
            rc.as_ptr(),
            rd.as_ptr(),
            rt.as_ptr(),
            comm.as_raw(),
        )
    };
    // With MPI's default error handler a failure aborts before returning;
    // under MPI_ERRORS_RETURN it is reported here, on every rank that saw it.
    if code != mpi::ffi::MPI_SUCCESS as i32 {
        return Err(Error::invalid_input(format!(
            "MPI_Alltoallw failed with MPI error code {code}"
        )));
    }
    Ok(())
}

/// A committed `MPI_Type_vector` of `rows` blocks of `cols` elements,
/// `stride` elements apart: one rectangle of a row-major block (rsmpi's safe
/// constructor; freed on drop).
fn strided_type<T: Element>(rows: usize, cols: usize, stride: usize) -> Result<UserDatatype> {
    Ok(UserDatatype::vector(
        count(rows)?,
        count(cols)?,
        count(stride)?,
        &T::equivalent_datatype(),
    ))
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
