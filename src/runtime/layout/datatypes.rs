//! The MPI datatypes of a layout's messages (one subarray per field and
//! region, combined over the fields into one struct type), the ghost
//! exchange posted on them, and the transfer of cells between two layouts
//! (a move) straight from the old buffers into the new ones.

use std::ffi::c_void;
use std::os::raw::c_int;
use std::rc::Rc;

use mpi::ffi;
use mpi::traits::*;

use super::{Layout, RawField, Region};
use crate::error::Result;
use crate::plan::array3d::Box3;
use crate::runtime::clock::Waiting;
use crate::runtime::comm::mpi_check;
use crate::runtime::halo::{self, Message, Posted};
use crate::runtime::tags::GRID_MOVE;
use crate::runtime::watchdog::Checkpoints;

/// An owned MPI datatype, freed on drop (MPI frees it once the messages
/// using it complete).
#[derive(Debug)]
pub(crate) struct Dtype(pub(crate) ffi::MPI_Datatype);

impl Dtype {
    fn null() -> Self {
        // SAFETY: reading an MPI handle constant.
        Dtype(unsafe { ffi::RSMPI_DATATYPE_NULL })
    }

    /// `MPI_Type_create_subarray` in C order on `base` (three axes; the
    /// caller keeps the numbers in range), not committed.
    pub(crate) fn subarray(
        sizes: [c_int; 3],
        subs: [c_int; 3],
        starts: [c_int; 3],
        base: ffi::MPI_Datatype,
    ) -> Result<Dtype> {
        let mut t = Dtype::null();
        // SAFETY: three sizes, subsizes and starts; `t.0` is an out-pointer.
        let code = unsafe {
            ffi::MPI_Type_create_subarray(
                3,
                sizes.as_ptr(),
                subs.as_ptr(),
                starts.as_ptr(),
                ffi::MPI_ORDER_C as c_int,
                base,
                &mut t.0,
            )
        };
        mpi_check(code, "MPI_Type_create_subarray")?;
        Ok(t)
    }

    /// `MPI_Type_create_struct` of one of each of `parts` at byte
    /// displacements `disps` (not committed).
    pub(crate) fn structure(parts: &[Dtype], disps: &[u64]) -> Result<Dtype> {
        let lens: Vec<c_int> = vec![1; parts.len()];
        let disps: Vec<ffi::MPI_Aint> = disps.iter().map(|&o| o as ffi::MPI_Aint).collect();
        let types: Vec<ffi::MPI_Datatype> = parts.iter().map(|t| t.0).collect();
        let mut t = Dtype::null();
        // SAFETY: `parts.len()` lengths, displacements and types; out-pointer.
        let code = unsafe {
            ffi::MPI_Type_create_struct(
                parts.len() as c_int,
                lens.as_ptr(),
                disps.as_ptr(),
                types.as_ptr(),
                &mut t.0,
            )
        };
        mpi_check(code, "MPI_Type_create_struct")?;
        Ok(t)
    }

    /// Commits the type.
    pub(crate) fn commit(mut self) -> Result<Dtype> {
        // SAFETY: a created, not yet freed type.
        mpi_check(
            unsafe { ffi::MPI_Type_commit(&mut self.0) },
            "MPI_Type_commit",
        )?;
        Ok(self)
    }
}

impl Drop for Dtype {
    fn drop(&mut self) {
        // SAFETY: reading an MPI handle constant; freeing a type this
        // object owns, while MPI runs.
        unsafe {
            if self.0 != ffi::RSMPI_DATATYPE_NULL
                && mpi::environment::is_initialized()
                && !mpi::environment::is_finalized()
            {
                ffi::MPI_Type_free(&mut self.0);
            }
        }
    }
}

/// The datatypes of one exchange of a field set: per neighbour, its rank,
/// what is sent and what is received.
pub(super) type PeerTypes = Vec<(i32, Dtype, Dtype)>;

/// The ghost exchange of one field on a layout: one subarray datatype per
/// neighbour and direction, and the bytes it moves. What the Rust arrays
/// keep to exchange on their own blocks (or on an application's buffer of
/// the same layout) with no packing.
#[derive(Clone)]
pub(crate) struct HaloTypes {
    peers: Rc<PeerTypes>,
    /// Bytes sent and received per exchange.
    bytes: (u64, u64),
}

impl HaloTypes {
    /// For a block of cells of `elem_size` bytes padded by `pad` on `layout`.
    pub(crate) fn new(layout: &Layout, elem_size: usize, pad: [usize; 3]) -> Result<Self> {
        layout.check_block(elem_size, pad)?;
        let field = RawField {
            data: std::ptr::NonNull::<u8>::dangling().as_ptr().cast(),
            elem_size,
            pad,
        };
        let total = |f: fn(&Region) -> Box3| {
            let cells: usize = layout.regions.iter().map(|r| f(r).volume()).sum();
            (cells * elem_size) as u64
        };
        Ok(HaloTypes {
            peers: Rc::new(layout.exchange_types(&[field])?),
            bytes: (total(|r| r.send), total(|r| r.recv)),
        })
    }
}

impl std::fmt::Debug for HaloTypes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HaloTypes")
            .field("neighbours", &self.peers.len())
            .field("bytes", &self.bytes)
            .finish()
    }
}

/// Ghost exchange `call` of the block at `base` with the datatypes in
/// `cache`, made by `make` at the first exchange (a failure to make them is
/// this rank's refusal of the exchange, the same error on every rank
/// involved): posted, waited for (errors as [`halo::finish`]), and this
/// rank's statistics, timed from `start`.
///
/// # Safety
/// `base` is a block of the layout and cell size the datatypes are (or
/// `make` makes them) for, not otherwise accessed until this returns.
pub(crate) unsafe fn exchange_on<C: Communicator>(
    comm: &C,
    cp: &Checkpoints,
    (call, section): (halo::Call, Waiting),
    op: &dyn Fn() -> String,
    base: *mut c_void,
    (cache, make): (&mut Option<HaloTypes>, impl FnOnce() -> Result<HaloTypes>),
) -> Result<halo::ExchangeStats> {
    let types = match cache {
        Some(t) => t,
        None => match make() {
            Ok(t) => cache.insert(t),
            Err(e) => return Err(halo::refuse(comm, cp, call, op, e)),
        },
    };
    // SAFETY: the caller's contract.
    let posted = unsafe { post_exchange(comm, call, base, &types.peers) }?;
    halo::finish(comm, cp, posted, op)?;
    Ok(halo::ExchangeStats {
        bytes_sent: types.bytes.0,
        bytes_received: types.bytes.1,
        messages_sent: types.peers.len() as u64,
        seconds: section.end().as_secs_f64(),
    })
}

/// Posts ghost exchange `call` of the field set at `base` (the first
/// field's buffer) with the datatypes `types` ([`Layout::exchange_types`]):
/// one message to and one from each neighbour, no staging copy; complete it
/// with [`halo::finish`].
///
/// # Safety
/// `types` were made for fields whose first buffer is `base`; every buffer
/// is valid for the layout (readable where sent, writable and not otherwise
/// accessed where received) and `types` stays alive until the exchange ends.
pub(super) unsafe fn post_exchange<C: Communicator>(
    comm: &C,
    call: halo::Call,
    base: *mut c_void,
    types: &PeerTypes,
) -> Result<Posted> {
    let msg = |peer: i32, t: &Dtype| Message {
        peer,
        buf: base,
        count: 1,
        dtype: t.0,
    };
    let recvs = types.iter().map(|(q, _, r)| msg(*q, r));
    let sends = types.iter().map(|(q, s, _)| msg(*q, s));
    // SAFETY: the caller's contract.
    unsafe { halo::post(comm, call, types.len(), recvs.chain(sends)) }
}

/// `MPI_REQUEST_NULL`.
fn null_request() -> ffi::MPI_Request {
    // SAFETY: reading an MPI handle constant.
    unsafe { ffi::RSMPI_REQUEST_NULL }
}

/// Moves fields from layout `from` to layout `next` on `comm` (every rank
/// with its own layouts of the same two plans): sends the cells that change
/// owner (one derived-datatype message per pair of ranks, from the old
/// buffers straight into the new ones) and copies those kept. Returns
/// (bytes sent, bytes sent and received, messages sent).
///
/// # Safety
/// See [`Grid::move_fields_raw`]: `old` fits `from`, `new` fits `next`.
pub(crate) unsafe fn transfer<C: Communicator>(
    comm: &C,
    from: &Layout,
    next: &Layout,
    old: &[RawField],
    new: &[RawField],
) -> Result<(usize, usize, usize)> {
    let rank = from.rank;
    let (was, now) = (from.local_box(), next.local_box());
    let cell: usize = old.iter().map(|f| f.elem_size).sum();
    let (oo, no) = (offsets(old), offsets(new));
    let mut reqs = Vec::new();
    let mut types = Vec::new();
    let (mut sent, mut got, mut msgs) = (0, 0, 0);
    let tag = GRID_MOVE;
    for q in 0..from.plan.len() {
        if q == rank {
            continue;
        }
        if let Some(b) = from.plan.boxes[q].intersect(&now) {
            let t = next.combined(new, &no, &b)?;
            let mut r = null_request();
            // SAFETY: the type addresses the new buffers (checked).
            let code = unsafe {
                ffi::MPI_Irecv(new[0].data, 1, t.0, q as c_int, tag, comm.as_raw(), &mut r)
            };
            mpi_check(code, "MPI_Irecv (grid move)")?;
            reqs.push(r);
            types.push(t);
            got += b.volume() * cell;
        }
    }
    for q in 0..next.plan.len() {
        if q == rank {
            continue;
        }
        if let Some(b) = was.intersect(&next.plan.boxes[q]) {
            let t = from.combined(old, &oo, &b)?;
            let mut r = null_request();
            // SAFETY: the type addresses the old buffers (checked).
            let code = unsafe {
                ffi::MPI_Isend(old[0].data, 1, t.0, q as c_int, tag, comm.as_raw(), &mut r)
            };
            mpi_check(code, "MPI_Isend (grid move)")?;
            reqs.push(r);
            types.push(t);
            sent += b.volume() * cell;
            msgs += 1;
        }
    }
    if let Some(keep) = was.intersect(&now) {
        for (o, n) in old.iter().zip(new) {
            // SAFETY: both buffers hold their layout's blocks (contract).
            unsafe { copy_kept(from, o, next, n, &keep) };
        }
    }
    // SAFETY: `reqs` holds the requests posted above.
    let code = unsafe {
        ffi::MPI_Waitall(
            reqs.len() as c_int,
            reqs.as_mut_ptr(),
            ffi::RSMPI_STATUSES_IGNORE,
        )
    };
    mpi_check(code, "MPI_Waitall (grid move)")?;
    drop(types);
    Ok((sent, sent + got, msgs))
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

/// Byte offsets of the fields' buffers from the first one's.
pub(super) fn offsets(fields: &[RawField]) -> Vec<isize> {
    let base = fields.first().map_or(0, |f| f.data as isize);
    fields
        .iter()
        .map(|f| (f.data as isize).wrapping_sub(base))
        .collect()
}
