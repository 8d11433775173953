//! The MPI datatypes of a layout's messages (one subarray per field and
//! region, combined over consecutive fields into struct types of at most
//! [`COMBINE_BYTES`] each) and the ghost exchange posted on them.

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

/// The messages of one exchange of a field set with one neighbour.
#[derive(Debug)]
pub(super) struct PeerMessages {
    /// The neighbour.
    pub(super) rank: i32,
    /// The datatypes of the messages sent to it, in order.
    pub(super) send: Vec<Dtype>,
    /// The datatypes of the messages received from it, in order.
    pub(super) recv: Vec<Dtype>,
}

/// The datatypes of one exchange of a field set, per neighbour.
pub(super) type PeerTypes = Vec<PeerMessages>;

/// Largest message (bytes) into which the ghost exchange combines the
/// regions of several fields; a field whose region is larger goes alone.
///
/// Small messages are cheaper combined (one message's latency for all the
/// fields). Large ones are cheaper apart where a rank is not always running
/// (another job shares its core): MPI moves a large message in fragments,
/// with round trips between the two ranks, and a rank that finds nothing to
/// do in its wait gives its core away for a scheduler turn (Open MPI with
/// `mpi_yield_when_idle`); messages of one field each travel side by side
/// and need fewer turns. Measured with 5 fields and a busy loop on one
/// rank's core (BENCHMARKS.md, "Real load"): one message per neighbour for
/// all the fields took 1.7–2.3× as long as one per field on 64³ blocks,
/// whether nuce or a hand-written `MPI_Waitall` sent it, and 32 KiB
/// messages were as slow as one; on quiet cores the two ways are equal
/// within the noise. 4 KiB is Open MPI's eager limit in shared memory: a
/// message up to it goes in one fragment, no round trip.
pub const COMBINE_BYTES: usize = 4 * 1024;

/// The fields (ranges of `elem_sizes`' indices, in order, covering them
/// all) that share a message of a region of `cells` cells: consecutive
/// fields while the message stays within [`COMBINE_BYTES`], a field alone
/// when its own bytes exceed it. A function of the sizes only, so that the
/// sender and the receiver of a region (the same cells, the same fields)
/// cut it alike.
pub(super) fn message_groups(elem_sizes: &[usize], cells: usize) -> Vec<std::ops::Range<usize>> {
    let mut groups: Vec<std::ops::Range<usize>> = Vec::new();
    let mut bytes = 0usize;
    for (k, &e) in elem_sizes.iter().enumerate() {
        let b = e.saturating_mul(cells);
        match groups.last_mut() {
            Some(g) if bytes.saturating_add(b) <= COMBINE_BYTES => {
                g.end = k + 1;
                bytes += b;
            }
            _ => {
                groups.push(k..k + 1);
                bytes = b;
            }
        }
    }
    groups
}

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

    /// Messages this rank sends per exchange.
    fn messages_sent(&self) -> u64 {
        self.peers.iter().map(|p| p.send.len() as u64).sum()
    }
}

impl std::fmt::Debug for HaloTypes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HaloTypes")
            .field("neighbours", &self.peers.len())
            .field("messages", &self.messages_sent())
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
        messages_sent: types.messages_sent(),
        seconds: section.end().as_secs_f64(),
    })
}

/// Posts ghost exchange `call` of the field set at `base` (the first
/// field's buffer) with the datatypes `types` ([`Layout::exchange_types`]):
/// the messages of each neighbour in order, no staging copy; complete it
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
    let recvs = types
        .iter()
        .flat_map(|p| p.recv.iter().map(move |t| msg(p.rank, t)));
    let sends = types
        .iter()
        .flat_map(|p| p.send.iter().map(move |t| msg(p.rank, t)));
    let nrecv = types.iter().map(|p| p.recv.len()).sum();
    // SAFETY: the caller's contract.
    unsafe { halo::post(comm, call, nrecv, recvs.chain(sends)) }
}

/// Byte offsets of the fields' buffers from the first one's.
pub(super) fn offsets(fields: &[RawField]) -> Vec<isize> {
    let base = fields.first().map_or(0, |f| f.data as isize);
    fields
        .iter()
        .map(|f| (f.data as isize).wrapping_sub(base))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_share_a_message_while_it_stays_small() {
        // 5 fields of doubles on 32×32 faces: 8 KiB each, one message each.
        assert_eq!(
            message_groups(&[8; 5], 32 * 32),
            vec![0..1, 1..2, 2..3, 3..4, 4..5]
        );
        // 8×8 faces: 512 bytes each, all in one message.
        assert_eq!(message_groups(&[8; 5], 8 * 8), vec![0..5]);
        // 16×12 faces of 1.5 KiB: two fit in 4 KiB, then two more, then one.
        assert_eq!(message_groups(&[8; 5], 16 * 12), vec![0..2, 2..4, 4..5]);
        // A field larger than the limit goes alone, and those after it start anew.
        assert_eq!(message_groups(&[1, 64, 1, 1], 128), vec![0..1, 1..2, 2..4]);
        assert_eq!(message_groups(&[4, 4, 4], 256), vec![0..3]);
        // No cells: everything in one (empty) message; no fields: none.
        assert_eq!(message_groups(&[8, 8], 0), vec![0..2]);
        assert!(message_groups(&[], 100).is_empty());
    }
}
