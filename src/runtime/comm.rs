//! Collective building blocks over rsmpi, shared by every runtime module.
//!
//! Everything here is *collective*: every rank of the communicator must call
//! the same function in the same order. The functions keep the promise of
//! the architecture page (`docs/architecture.md`), "Collective errors agree": a call either succeeds on every
//! rank or returns the same [`Error`] on every rank.
//!
//! * [`agree`] turns a per-rank `Result` into a collective one;
//! * [`root_compute`] runs a closure on the root only (the planner) and
//!   broadcasts its `Result`, so a root-side failure is known to everyone
//!   before anyone waits on data;
//! * [`bcast_value`], [`gather_values`], [`all_gather_values`] move serde
//!   values, bincode-encoded with a size limit ([`MAX_MESSAGE`]): a
//!   corrupted or oversized message is an [`Error::BadMessage`], never an
//!   unbounded allocation;
//! * [`check_identical`] checks that every rank holds the same value;
//! * [`sum_f64`] and [`max_f64`] reduce one number (e.g. a phase's time).
//!
//! An application may use these for its own collectives, to keep the same
//! promise. The byte-level helpers the runtime builds on (encoding, all-to-all
//! of bytes, fingerprints) are hidden from these docs: nuce's internals, with
//! no stability promise.

use mpi::collective::SystemOperation;
use mpi::datatype::{Partition, PartitionMut};
use mpi::traits::*;
use mpi::Count;
use serde::de::DeserializeOwned;
use serde::Serialize;
use std::os::raw::c_int;

use crate::error::{Error, Result};

/// Largest message (bytes) nuce encodes or accepts from a peer: 1 GiB.
pub const MAX_MESSAGE: u64 = 1 << 30;

fn options() -> impl bincode::Options {
    use bincode::Options;
    bincode::DefaultOptions::new()
        .with_fixint_encoding()
        .with_limit(MAX_MESSAGE)
}

/// Serializes a value with bincode, refusing values over [`MAX_MESSAGE`].
#[doc(hidden)]
pub fn encode<T: Serialize + ?Sized>(value: &T) -> Result<Vec<u8>> {
    use bincode::Options;
    options().serialize(value).map_err(|e| Error::BadMessage {
        rank: -1,
        msg: format!("cannot encode: {e}"),
    })
}

/// Deserializes a value sent by `rank`, with the size limit of [`MAX_MESSAGE`].
#[doc(hidden)]
pub fn decode<T: DeserializeOwned>(bytes: &[u8], rank: i32) -> Result<T> {
    use bincode::Options;
    options().deserialize(bytes).map_err(|e| Error::BadMessage {
        rank,
        msg: e.to_string(),
    })
}

fn count(n: usize) -> Result<Count> {
    Count::try_from(n).map_err(|_| {
        Error::invalid_input(format!("message of {n} elements exceeds MPI's count range"))
    })
}

/// Makes a per-rank result collective: if any rank has an `Err`, every rank
/// returns the error of the lowest failing rank (wrapped in [`Error::Remote`]
/// unless that rank is `root`, whose error is returned as is). Otherwise every
/// rank keeps its own `Ok` value. Two small collectives (an all-reduce, and a
/// broadcast only on failure).
pub fn agree<C: Communicator, T>(comm: &C, root: i32, local: Result<T>) -> Result<T> {
    let mine: i32 = if local.is_err() {
        comm.rank()
    } else {
        i32::MAX
    };
    let mut first = i32::MAX;
    comm.all_reduce_into(&mine, &mut first, SystemOperation::min());
    if first == i32::MAX {
        return local;
    }
    let err = match &local {
        Err(e) if comm.rank() == first => Some(e.clone()),
        _ => None,
    };
    let err: Error = bcast_raw(comm, first, err.as_ref())?;
    Err(if first == root {
        err
    } else {
        Error::Remote {
            rank: first,
            source: Box::new(err),
        }
    })
}

/// Broadcasts `value` (significant at `root` only, serialized as `S`, decoded
/// as `T`) without error agreement on the payload.
fn bcast_raw<C: Communicator, S: Serialize, T: DeserializeOwned>(
    comm: &C,
    root: i32,
    value: Option<&S>,
) -> Result<T> {
    let bytes = match value {
        Some(v) if comm.rank() == root => encode(v).map(Some),
        _ => Ok(None),
    };
    // A failed encode at the root is sent as an empty payload with length u64::MAX.
    let mut len: u64 = match &bytes {
        Ok(Some(b)) => b.len() as u64,
        Ok(None) => 0,
        Err(_) => u64::MAX,
    };
    let proc = comm.process_at_rank(root);
    proc.broadcast_into(&mut len);
    if len == u64::MAX {
        return Err(Error::BadMessage {
            rank: root,
            msg: "the root could not encode its value".into(),
        });
    }
    if len > MAX_MESSAGE {
        return Err(Error::BadMessage {
            rank: root,
            msg: format!("announced {len} bytes, over the limit of {MAX_MESSAGE}"),
        });
    }
    let mut buf = match bytes {
        Ok(Some(b)) => b,
        _ => vec![0u8; len as usize],
    };
    proc.broadcast_into(&mut buf[..]);
    decode(&buf, root)
}

/// Broadcasts a serde value from `root` (where `value` must be `Some`) to every rank.
pub fn bcast_value<C: Communicator, T: Serialize + DeserializeOwned>(
    comm: &C,
    root: i32,
    value: Option<&T>,
) -> Result<T> {
    let at_root: Option<Result<&T>> = (comm.rank() == root)
        .then(|| value.ok_or_else(|| Error::invalid_input("bcast_value: the root has no value")));
    bcast_raw::<C, Result<&T>, Result<T>>(comm, root, at_root.as_ref())?
}

/// Runs `f` on `root` only and broadcasts its `Result`: every rank returns the
/// same `Ok` value or the same `Err`. The way to call the planning layer.
pub fn root_compute<C, T, F>(comm: &C, root: i32, f: F) -> Result<T>
where
    C: Communicator,
    T: Serialize + DeserializeOwned,
    F: FnOnce() -> Result<T>,
{
    let res: Option<Result<T>> = (comm.rank() == root).then(f);
    bcast_raw::<C, Result<T>, Result<T>>(comm, root, res.as_ref())?
}

/// Gathers one serde value from every rank at `root` (bincode + gatherv).
/// Returns `Some(values in rank order)` on the root, `None` elsewhere; errors
/// (a value that cannot be encoded or decoded) agree on every rank.
pub fn gather_values<C: Communicator, T: Serialize + DeserializeOwned>(
    comm: &C,
    root: i32,
    value: &T,
) -> Result<Option<Vec<T>>> {
    let bytes = agree(comm, root, encode(value))?;
    let len = agree(comm, root, count(bytes.len()))?;
    let proc = comm.process_at_rank(root);
    if comm.rank() == root {
        let mut counts = vec![0 as Count; comm.size() as usize];
        proc.gather_into_root(&len, &mut counts[..]);
        let displs = displacements(&counts);
        let total = counts.iter().map(|&c| c as usize).sum::<usize>();
        let mut buf = vec![0u8; total];
        {
            let mut part = PartitionMut::new(&mut buf[..], &counts[..], &displs[..]);
            proc.gather_varcount_into_root(&bytes[..], &mut part);
        }
        let decoded: Result<Vec<T>> = counts
            .iter()
            .zip(&displs)
            .enumerate()
            .map(|(r, (&c, &d))| decode(&buf[d as usize..(d + c) as usize], r as i32))
            .collect();
        agree(comm, root, decoded).map(Some)
    } else {
        proc.gather_into(&len);
        proc.gather_varcount_into(&bytes[..]);
        agree(comm, root, Ok(())).map(|_| None)
    }
}

/// Gathers one serde value from every rank on every rank (in rank order).
pub fn all_gather_values<C: Communicator, T: Serialize + DeserializeOwned>(
    comm: &C,
    value: &T,
) -> Result<Vec<T>> {
    let gathered = gather_values(comm, 0, value)?;
    bcast_value(comm, 0, gathered.as_ref())
}

/// Exclusive prefix sums of MPI counts.
#[doc(hidden)]
pub fn displacements(counts: &[Count]) -> Vec<Count> {
    counts
        .iter()
        .scan(0 as Count, |acc, &c| {
            let d = *acc;
            *acc += c;
            Some(d)
        })
        .collect()
}

/// Personalised all-to-all of byte buffers: `sends[r]` goes to rank `r`;
/// returns what each rank sent to this one. One all-to-all of the counts, one
/// all-to-all-v of the bytes.
#[doc(hidden)]
pub(crate) fn alltoallv_bytes<C: Communicator>(
    comm: &C,
    sends: &[Vec<u8>],
) -> Result<Vec<Vec<u8>>> {
    let size = comm.size() as usize;
    let local = if sends.len() != size {
        Err(Error::shape_mismatch(format!(
            "{} send buffers for {size} ranks",
            sends.len()
        )))
    } else {
        sends
            .iter()
            .map(|b| count(b.len()))
            .collect::<Result<Vec<Count>>>()
    };
    let scounts = agree(comm, 0, local)?;
    let mut rcounts = vec![0 as Count; size];
    comm.all_to_all_into(&scounts[..], &mut rcounts[..]);
    let sdispls = displacements(&scounts);
    let rdispls = displacements(&rcounts);
    let sendbuf: Vec<u8> = non_aliasing(sends.concat());
    let mut recvbuf = zeroed_buffer(rcounts.iter().map(|&c| c as usize).sum());
    {
        let sp = Partition::new(&sendbuf[..], &scounts[..], &sdispls[..]);
        let mut rp = PartitionMut::new(&mut recvbuf[..], &rcounts[..], &rdispls[..]);
        comm.all_to_all_varcount_into(&sp, &mut rp);
    }
    Ok(rcounts
        .iter()
        .zip(&rdispls)
        .map(|(&c, &d)| recvbuf[d as usize..(d + c) as usize].to_vec())
        .collect())
}

/// Personalised all-to-all of flat typed buffers: `data` holds `counts[0]`
/// items for rank 0, then `counts[1]` for rank 1, …; returns the items
/// received (grouped by source rank, in rank order) and how many came from
/// each rank. One all-to-all of the counts, one all-to-all-v of the items.
/// Counts beyond MPI's range are the same `Err` on every rank.
#[doc(hidden)]
pub(crate) fn alltoallv_flat<C: Communicator, T: Equivalence + Copy + Default>(
    comm: &C,
    data: &[T],
    counts: &[usize],
) -> Result<(Vec<T>, Vec<usize>)> {
    let size = comm.size() as usize;
    let local = if counts.len() != size || counts.iter().sum::<usize>() != data.len() {
        Err(Error::shape_mismatch(format!(
            "{} items in {} counts for {size} ranks",
            data.len(),
            counts.len()
        )))
    } else {
        counts
            .iter()
            .map(|&c| count(c))
            .collect::<Result<Vec<Count>>>()
    };
    let scounts = agree(comm, 0, local)?;
    let mut rcounts = vec![0 as Count; size];
    comm.all_to_all_into(&scounts[..], &mut rcounts[..]);
    let total: usize = rcounts.iter().map(|&c| c as usize).sum();
    agree(comm, 0, count(total))?;
    let sdispls = displacements(&scounts);
    let rdispls = displacements(&rcounts);
    // An empty slice's dangling address could alias the receive buffer's.
    let empty = zeroed_buffer::<T>(0);
    let sendbuf = if data.is_empty() { &empty[..] } else { data };
    let mut recvbuf = zeroed_buffer(total);
    {
        let sp = Partition::new(sendbuf, &scounts[..], &sdispls[..]);
        let mut rp = PartitionMut::new(&mut recvbuf[..], &rcounts[..], &rdispls[..]);
        comm.all_to_all_varcount_into(&sp, &mut rp);
    }
    Ok((recvbuf, rcounts.iter().map(|&c| c as usize).collect()))
}

/// 64-bit FNV-1a hash of a value's bincode encoding (an agreement check
/// between ranks, not a cryptographic digest). O(encoded size).
#[doc(hidden)]
pub fn fingerprint<T: Serialize + ?Sized>(value: &T) -> Result<u64> {
    Ok(fnv1a(&encode(value)?))
}

/// 64-bit FNV-1a hash of `bytes`. O(len).
#[doc(hidden)]
pub fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// Checks that every rank passed an identical `value` (collective: two
/// all-reduces of the `fingerprint`, O(log p); only on a mismatch a gather
/// of the fingerprints at `root`). Otherwise every rank returns the same
/// [`Error::Disagreement`] naming the ranks whose `what` differs from `root`'s.
pub fn check_identical<C: Communicator, T: Serialize + ?Sized>(
    comm: &C,
    root: i32,
    what: &str,
    value: &T,
) -> Result<()> {
    let mine = agree(comm, root, fingerprint(value))?;
    let (mut lo, mut hi) = (0u64, 0u64);
    comm.all_reduce_into(&mine, &mut lo, SystemOperation::min());
    comm.all_reduce_into(&mine, &mut hi, SystemOperation::max());
    if lo == hi {
        return Ok(());
    }
    let proc = comm.process_at_rank(root);
    let local = if comm.rank() == root {
        let mut all = vec![0u64; comm.size() as usize];
        proc.gather_into_root(&mine, &mut all[..]);
        let differ: Vec<usize> = (0..all.len()).filter(|&r| all[r] != mine).collect();
        Err(Error::Disagreement {
            on: format!("the {what}"),
            calls: vec![format!(
                "ranks {differ:?} passed a different {what} than rank {root}"
            )],
        })
    } else {
        proc.gather_into(&mine);
        Ok(())
    };
    agree(comm, root, local)
}

/// A buffer of `n` default values whose address is a real allocation even
/// when `n == 0`. Two empty `Vec`s share one dangling address, which MPI
/// takes for `sendbuf == recvbuf` and rejects (`MPI_ERR_ARG`).
#[doc(hidden)]
pub(crate) fn zeroed_buffer<T: Copy + Default>(n: usize) -> Vec<T> {
    let mut v = Vec::with_capacity(n.max(1));
    v.resize(n, T::default());
    v
}

/// `v` itself, or an empty buffer with a real allocation (see [`zeroed_buffer`]).
#[doc(hidden)]
pub(crate) fn non_aliasing<T: Copy + Default>(v: Vec<T>) -> Vec<T> {
    if v.capacity() == 0 {
        zeroed_buffer(0)
    } else {
        v
    }
}

/// Sum of an `f64` over all ranks.
pub fn sum_f64<C: Communicator>(comm: &C, x: f64) -> f64 {
    let mut out = 0.0;
    comm.all_reduce_into(&x, &mut out, SystemOperation::sum());
    out
}

/// The sum of `mine` over the ranks before this one (exclusive scan; 0 on
/// rank 0) and over all ranks (collective): where this rank's piece of a
/// sequence spread over the ranks starts, and the whole's weight.
pub fn weight_prefix<C: Communicator>(comm: &C, mine: f64) -> (f64, f64) {
    let mut before = 0.0;
    comm.exclusive_scan_into(&mine, &mut before, SystemOperation::sum());
    if comm.rank() == 0 {
        before = 0.0;
    }
    (before, sum_f64(comm, mine))
}

/// Maximum of an `f64` over all ranks.
pub fn max_f64<C: Communicator>(comm: &C, x: f64) -> f64 {
    let mut out = 0.0;
    comm.all_reduce_into(&x, &mut out, SystemOperation::max());
    out
}

/// Converts an MPI return code into an error naming the call.
#[doc(hidden)]
#[inline]
pub fn mpi_check(code: c_int, what: &str) -> Result<()> {
    if code == mpi::ffi::MPI_SUCCESS as c_int {
        Ok(())
    } else {
        mpi_error(code, what)
    }
}

/// The error of a failed MPI call (out of line: the hot paths only compare).
#[cold]
#[inline(never)]
fn mpi_error(code: c_int, what: &str) -> Result<()> {
    let mut buf = vec![0u8; mpi::ffi::MPI_MAX_ERROR_STRING as usize + 1];
    let mut len: c_int = 0;
    let mut class: c_int = 0;
    // SAFETY: the buffer holds MPI_MAX_ERROR_STRING bytes; the out-pointers are valid.
    unsafe {
        mpi::ffi::MPI_Error_string(code, buf.as_mut_ptr().cast(), &mut len);
        mpi::ffi::MPI_Error_class(code, &mut class);
    }
    let text = String::from_utf8_lossy(&buf[..len.clamp(0, buf.len() as c_int) as usize]);
    Err(Error::Mpi {
        what: what.to_string(),
        class,
        code,
        text: text.into_owned(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encode_decode_round_trip_and_limits() {
        let v = vec![1u32, 2, 3];
        let b = encode(&v).unwrap();
        assert_eq!(decode::<Vec<u32>>(&b, 0).unwrap(), v);
        // A length prefix announcing 2^40 elements must be refused, not allocated.
        let mut evil = (1u64 << 40).to_le_bytes().to_vec();
        evil.extend_from_slice(&[0; 16]);
        assert!(matches!(
            decode::<Vec<u8>>(&evil, 3),
            Err(Error::BadMessage { rank: 3, .. })
        ));
        assert!(decode::<Vec<u32>>(&b[..5], 1).is_err());
        assert_eq!(displacements(&[2, 0, 3]), vec![0, 2, 2]);
    }
}
