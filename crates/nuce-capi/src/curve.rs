//! Counts for p4est's `p4est_partition_given` (`nuce_plan_1d_weighted`):
//! the weighted 1D partition of the items spread over the ranks in curve
//! order, from the speeds of the timed phases
//! (`nuce::Balancer::plan1d_weighted`).

use std::ffi::c_int;

use mpi::traits::*;
use nuce::{waiting, Result};

use crate::{
    balancer, buffer_mut, checked, guard, nuce_balancer, null, to_usize, unreachable_null,
};

/// Reads this rank's `nlocal` weights (NULL allowed when there are none).
///
/// # Safety
/// `weights` is NULL or points to `nlocal` readable doubles.
unsafe fn read_weights<'a>(weights: *const f64, nlocal: i64) -> Result<&'a [f64]> {
    let n = to_usize(nlocal, "nlocal")?;
    if n == 0 {
        return Ok(&[]);
    }
    if weights.is_null() {
        return Err(null("weights"));
    }
    // SAFETY: non-null, `nlocal` readable doubles (contract).
    Ok(unsafe { std::slice::from_raw_parts(weights, n) })
}

/// Partitions the items of all ranks — rank 0's `nlocal` items, then rank
/// 1's, … each rank's in curve order (p4est's local quadrants), with this
/// rank's `weights[nlocal]` (finite, >= 0; NULL when `nlocal` is 0) — into
/// contiguous counts whose weights follow the speeds of the timed phases
/// (collective; a balance point): `counts[ncounts]` (`ncounts` = the
/// number of ranks) gets every rank's number of items, summing to the
/// global number, for `p4est_partition_given` (convert to
/// `p4est_locidx_t`). Each rank's weight is within the heaviest item of
/// its share by speed; `*imbalance` (optional, NULL = not wanted): how far
/// the slowest rank's time is above the ideal, `max_r(load_r / share_r) − 1`.
/// The phase since the last balance point is timed as in
/// [`crate::nuce_maybe_remap`]: `iterations` iterations of the weight this
/// rank received from the previous call (the sum of `weights` at the first)
/// in its compute time, unless [`crate::nuce_record_phase`] recorded it;
/// `iterations` 0 and no record: the current speeds. The weights never
/// leave their rank (a prefix sum and all-reduces of `ncounts` numbers).
/// Errors, the same on every rank: a NULL argument, `nlocal` or
/// `iterations` negative, a negative, NaN or infinite weight, weights whose
/// sum overflows, `ncounts` not the number of ranks, `iterations` that
/// differ between ranks. See `docs/c-api.md`, "p4est".
#[no_mangle]
pub extern "C" fn nuce_plan_1d_weighted(
    b: *mut nuce_balancer,
    weights: *const f64,
    nlocal: i64,
    iterations: i64,
    counts: *mut i64,
    ncounts: usize,
    imbalance: *mut f64,
) -> c_int {
    guard(|| {
        // SAFETY: `b` is NULL or a live handle.
        let h = unsafe { balancer(b) }
            .map_err(|_| unreachable_null("the balancer", "nuce_plan_1d_weighted"))?;
        let _w = waiting();
        let p = h.bal.comm().size() as usize;
        let local = (|| {
            // SAFETY: `weights` NULL or `nlocal` readable doubles (contract).
            let w = unsafe { read_weights(weights, nlocal) }?;
            let iterations = to_usize(iterations, "iterations")?;
            // SAFETY: `counts` is NULL or `ncounts` writable int64_t (contract).
            let out = unsafe { buffer_mut(counts.cast(), ncounts, p, 8, "counts") }?;
            Ok((w, iterations, out))
        })();
        let op = format!("nuce_plan_1d_weighted(iterations {iterations}, ncounts {ncounts})");
        let (w, iterations, out) = checked(local, |r| h.bal.entry(&op, r))?;
        let cut = h.bal.plan1d_weighted(w, iterations)?;
        for (o, c) in out.chunks_exact_mut(8).zip(&cut.counts) {
            o.copy_from_slice(&(*c as i64).to_ne_bytes());
        }
        if !imbalance.is_null() {
            // SAFETY: non-null, one writable double (contract).
            unsafe { *imbalance = cut.imbalance };
        }
        Ok(())
    })
}
