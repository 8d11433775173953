//! The weighted 1D partition of a sequence spread over the ranks in curve
//! order ([`Balancer::plan1d_weighted`]): the counts of p4est's
//! `p4est_partition_given` from the measured speeds and per-quadrant
//! weights, cut by prefix sums ([`crate::plan::curve1d`]) without
//! gathering the weights anywhere.
//!
//! ```no_run
//! let universe = mpi::initialize().unwrap();
//! let mut bal = nuce::Balancer::new(&universe.world()).unwrap();
//! let weights = vec![1.0; 1000]; // this rank's items, in curve order
//! for _step in 0..10 {
//!     // ... 5 iterations of work on this rank's items ...
//!     let cut = bal.plan1d_weighted(&weights, 5).unwrap();
//!     // rank r now owns cut.counts[r] items, after those of ranks 0..r
//!     assert_eq!(cut.counts.len(), universe.world().size() as usize);
//! #   let _ = cut;
//! }
//! # use mpi::traits::*;
//! ```

use mpi::collective::SystemOperation;

use super::*;
use crate::plan::curve1d::{check_weights, count_parts, imbalance, target_bounds, CurvePartition};
use crate::runtime::comm::weight_prefix;

impl Balancer {
    /// Partitions a sequence of weighted items spread over the ranks —
    /// rank 0's `weights`, then rank 1's, … each rank's in its own order
    /// (a space-filling curve: p4est's quadrants) — into contiguous counts
    /// whose weights follow the speeds measured from the phases: rank `r`
    /// is to own `counts[r]` items, after those of ranks `0..r`
    /// (`p4est_partition_given`'s `num_quadrants_in_proc`). The rule is
    /// [`crate::plan::curve1d`]'s (each part within the heaviest item of its
    /// share); the result reports every rank's load and the achieved
    /// imbalance. Collective, a balance point: one exclusive scan and
    /// all-reduces of O(p) numbers, no weight leaves its rank.
    ///
    /// The speeds: this rank's phase since the last balance point is timed
    /// as [`Balancer::maybe_remap`] times it — `iterations` iterations of
    /// the weight this rank received from the previous call (its load;
    /// at the first call, the sum of the `weights` given now) in its
    /// compute time — unless the application recorded it with
    /// [`Balancer::record_phase`]; `iterations = 0` with no record times
    /// nothing (the speeds stay those of [`Balancer::measure`],
    /// [`Balancer::set_speeds`] or the last balance point, uniform when
    /// none). The root merges the phase speeds with their noise and snaps
    /// those the noise cannot tell apart, as at every balance point. Unlike
    /// [`Balancer::maybe_remap`] it always returns the cut for the new
    /// speeds: the application decides whether to repartition.
    ///
    /// Errors, the same on every rank: a negative, NaN or infinite weight
    /// on some rank (the lowest such rank's), weights whose sum overflows,
    /// `iterations` that differ between ranks.
    pub fn plan1d_weighted(
        &mut self,
        weights: &[f64],
        iterations: usize,
    ) -> Result<CurvePartition> {
        let _w = waiting();
        let _span = info_span!("plan1d_weighted", items = weights.len()).entered();
        let mine: f64 = weights.iter().sum();
        let per_iteration = self.curve_load.unwrap_or(mine);
        let refused = check_weights(weights)
            .map_err(Error::from)
            .and_then(|()| match mine.is_finite() {
                true => Ok(()),
                false => Err(Error::invalid_input(
                    "Balancer::plan1d_weighted: the sum of this rank's weights overflows",
                )),
            })
            .and_then(|()| self.record_automatic(per_iteration, iterations))
            .err();
        self.cp.check_refusing(
            &self.comm,
            &format!("Balancer::plan1d_weighted(iterations {iterations})"),
            refused.as_ref(),
        )?;
        // With `iterations = 0` nothing was timed: a rank without work then
        // reports its last phase speed instead of probing the kernel.
        let work = match iterations {
            0 => 1.0,
            n => per_iteration * n as f64,
        };
        let report = self.local_report(work);
        let speeds = self.take_phase_speeds(report)?;
        let (mut before, mut total) = weight_prefix(&self.comm, mine);
        if !total.is_finite() {
            return Err(Error::invalid_input(
                "Balancer::plan1d_weighted: the sum of the weights overflows",
            ));
        }
        let units;
        let w = if total > 0.0 {
            weights
        } else {
            // All weights zero (or no items): cut by number.
            units = vec![1.0; weights.len()];
            (before, total) = weight_prefix(&self.comm, weights.len() as f64);
            &units
        };
        let p = speeds.len();
        let bounds = target_bounds(total, &speeds);
        let mut local: Vec<f64> = count_parts(before, w, &bounds)
            .into_iter()
            .map(|c| c as f64)
            .collect();
        // This rank's load under the cut: the weight of its items that go
        // to each part (its counts and loads summed over the ranks).
        let mut at = before;
        local.resize(2 * p, 0.0);
        for &x in w {
            local[p + crate::plan::curve1d::part_of(&bounds, at, x)] += x;
            at += x;
        }
        let mut all = vec![0.0; 2 * p];
        self.comm
            .all_reduce_into(&local[..], &mut all[..], SystemOperation::sum());
        // Counts below 2^53 are exact in f64 sums.
        let counts: Vec<usize> = all[..p].iter().map(|&c| c as usize).collect();
        let loads = all[p..].to_vec();
        let me = self.comm.rank() as usize;
        self.curve_load = Some(loads[me]);
        self.mark();
        info!(?counts, ?loads, "plan1d_weighted");
        Ok(CurvePartition {
            imbalance: imbalance(&loads, &speeds),
            counts,
            loads,
        })
    }
}
