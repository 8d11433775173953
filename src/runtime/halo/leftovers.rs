//! What a failed exchange leaves behind, and how it is cleared: the
//! messages of its neighbours that nobody received. The object's next
//! exchanges drain them ([`STALE_WINDOW`]; in the first exchange after the
//! failed one, anything not of a later exchange of the call), and when the
//! object goes its communicator is drained and, after a failure, kept
//! ([`retire`]). See the parent module's "an error leaves nothing behind".

use std::os::raw::c_int;
use std::sync::atomic::{AtomicBool, Ordering};

use mpi::ffi;
use mpi::traits::*;
use mpi::Tag;

use super::{Call, Mismatch};
use crate::error::Result;
use crate::runtime::comm::mpi_check;
use crate::runtime::tags::{HALO_COUNT, HALO_FIRST};

/// How many earlier exchanges of an object a leftover message may belong to:
/// an exchange that ended in an error leaves its neighbours' messages
/// unreceived (sends released, receives cancelled), and they are drained,
/// not taken for a departure, by the exchanges that follow.
pub(super) const STALE_WINDOW: u64 = 64;

impl Call {
    /// True when `tag` is the tag of one of the [`STALE_WINDOW`] exchanges
    /// before this one (of the same call).
    pub(super) fn is_stale(&self, tag: Tag) -> bool {
        let d = (self.tag() - tag).rem_euclid(HALO_COUNT) as u64;
        (1..=STALE_WINDOW).contains(&d)
    }
}

impl Call {
    /// True when `tag` is the tag of one of the [`STALE_WINDOW`] exchanges
    /// after this one (of the same call): a neighbour ahead.
    pub(super) fn is_ahead(&self, tag: Tag) -> bool {
        let d = (tag - self.tag()).rem_euclid(HALO_COUNT) as u64;
        (1..=STALE_WINDOW).contains(&d)
    }
}

thread_local! {
    /// Communicators with an exchange that ended in an error, and its number.
    static ABANDONED: std::cell::RefCell<Vec<(ffi::MPI_Comm, u64)>> =
        const { std::cell::RefCell::new(Vec::new()) };
}

/// Records that exchange `seq` on `comm` ended in an error (its leftovers
/// are drained by the next [`STALE_WINDOW`] exchanges).
pub(super) fn note_abandoned<C: Communicator>(comm: &C, seq: u64) {
    ANY_ABANDONED.store(true, Ordering::Relaxed);
    let raw = comm.as_raw();
    ABANDONED.with(|a| {
        let mut a = a.borrow_mut();
        a.retain(|(c, _)| *c != raw);
        a.push((raw, seq));
    });
}

/// Set once any exchange of this process has been abandoned: until then
/// [`must_drain`] needs no look at [`ABANDONED`].
static ANY_ABANDONED: AtomicBool = AtomicBool::new(false);

/// True when exchange `seq` on `comm` follows an abandoned one closely.
pub(super) fn must_drain<C: Communicator>(comm: &C, seq: u64) -> bool {
    if !ANY_ABANDONED.load(Ordering::Relaxed) {
        return false;
    }
    let raw = comm.as_raw();
    ABANDONED.with(|a| {
        a.borrow()
            .iter()
            .any(|&(c, at)| c == raw && seq > at && seq - at <= STALE_WINDOW)
    })
}

/// True when exchange `seq` on `comm` is the first after an abandoned one
/// on this rank: every message there that is not of this call's exchanges
/// is a leftover of the failed one (see [`foreign_message`]).
fn first_after_abandoned<C: Communicator>(comm: &C, seq: u64) -> bool {
    if !ANY_ABANDONED.load(Ordering::Relaxed) {
        return false;
    }
    let raw = comm.as_raw();
    ABANDONED.with(|a| a.borrow().iter().any(|&(c, at)| c == raw && seq == at + 1))
}

/// The status of a message from `source` (any tag) waiting on `comm`, if one is.
fn probe<C: Communicator>(comm: &C, source: i32) -> Result<Option<ffi::MPI_Status>> {
    let mut flag: c_int = 0;
    let mut status = std::mem::MaybeUninit::<ffi::MPI_Status>::uninit();
    // SAFETY: valid communicator handle, flag and status out-pointers.
    let code = unsafe {
        ffi::MPI_Iprobe(
            source,
            ffi::RSMPI_ANY_TAG,
            comm.as_raw(),
            &mut flag,
            status.as_mut_ptr(),
        )
    };
    mpi_check(code, "MPI_Iprobe (ghost exchange)")?;
    // SAFETY: MPI_Iprobe set `status` when flag is true.
    Ok((flag != 0).then(|| unsafe { status.assume_init() }))
}

/// Called when an object's communicator goes: receives and discards every
/// message still waiting on it, and returns whether it may be freed (false
/// when an exchange on it failed on this rank or something was waiting: a
/// message still in flight could otherwise reach the communicator MPI
/// builds next on the same context). Nothing is touched after
/// `MPI_Finalize` (the communicator is then kept).
pub(crate) fn retire<C: Communicator>(comm: &C) -> bool {
    let mut finalized: c_int = 0;
    // SAFETY: MPI_Finalized may be called at any time.
    unsafe { ffi::MPI_Finalized(&mut finalized) };
    if finalized != 0 {
        return false;
    }
    let raw = comm.as_raw();
    let failed = ANY_ABANDONED.load(Ordering::Relaxed)
        && ABANDONED.with(|a| a.borrow().iter().any(|&(c, _)| c == raw));
    let mut waiting = false;
    // SAFETY: reading an MPI constant exported by mpi-sys.
    let any = unsafe { ffi::RSMPI_ANY_SOURCE };
    while let Ok(Some(status)) = probe(comm, any) {
        waiting = true;
        if discard(comm, status.MPI_SOURCE, status.MPI_TAG, &status).is_err() {
            break;
        }
    }
    !(failed || waiting)
}

/// Receives and discards the leftover messages of earlier exchanges
/// ([`Call::is_stale`]; in the first exchange after an abandoned one,
/// every message that is not of a later exchange of this call, since the
/// failed exchange may have been another call on some ranks) that wait
/// from `peers`; returns the first message of another exchange found
/// instead (a departure), if any.
pub(super) fn foreign_message<C: Communicator>(
    comm: &C,
    peers: &[i32],
    call: Call,
) -> Result<Option<Mismatch>> {
    let expected = call.tag();
    let after_failure = first_after_abandoned(comm, call.seq);
    for &q in peers {
        while let Some(status) = probe(comm, q)? {
            let tag = status.MPI_TAG;
            if tag == expected || !(HALO_FIRST..HALO_FIRST + HALO_COUNT).contains(&tag) {
                break;
            }
            if !(call.is_stale(tag) || after_failure && !call.is_ahead(tag)) {
                return Ok(Some(Mismatch { rank: q, tag }));
            }
            discard(comm, q, tag, &status)?;
        }
    }
    Ok(None)
}

/// Receives the probed message (`status`) from `q` with `tag` as bytes and drops it.
fn discard<C: Communicator>(comm: &C, q: i32, tag: Tag, status: &ffi::MPI_Status) -> Result<()> {
    let mut count: c_int = 0;
    // SAFETY: `status` comes from a successful probe; `count` is an out-pointer.
    let code = unsafe { ffi::MPI_Get_count(status, ffi::RSMPI_UINT8_T, &mut count) };
    mpi_check(code, "MPI_Get_count (stale ghost message)")?;
    let mut buf = vec![0u8; count.max(0) as usize];
    // SAFETY: `buf` holds `count` bytes; the message probed above is received.
    let code = unsafe {
        ffi::MPI_Recv(
            buf.as_mut_ptr().cast(),
            count.max(0),
            ffi::RSMPI_UINT8_T,
            q,
            tag,
            comm.as_raw(),
            ffi::RSMPI_STATUS_IGNORE,
        )
    };
    mpi_check(code, "MPI_Recv (stale ghost message)")
}
