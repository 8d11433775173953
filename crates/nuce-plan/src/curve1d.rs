//! The one-dimensional partition of a weighted sequence — items in the
//! order of a space-filling curve (p4est's quadrants, a Hilbert order of
//! particles), each with a weight — into contiguous pieces whose weights
//! follow the speeds: part `k` gets the next `counts[k]` items (p4est's
//! `num_quadrants_in_proc`).
//!
//! The rule is the prefix-sum cut of index-based partitioning (\[KOR95\]
//! §3): with `W` the total weight and `S` the sum of the speeds, part `k`'s
//! target interval of the cumulative weight is `[W·S_k/S, W·S_{k+1}/S)`
//! (`S_k` the speeds before `k`), and every item goes to the part whose
//! interval holds the midpoint of its own weight interval. The midpoints
//! increase along the sequence, so the parts are contiguous and in rank
//! order, every item has exactly one part, and a part's load differs from
//! its target `W·s_k/S` by less than the heaviest item: `|load_k − W·s_k/S|
//! ≤ w_max`, so the slowest part's time is within `w_max / min_k s_k` of
//! the optimum `W/S`. Each item is placed from its own prefix sum alone:
//! the runtime cuts a sequence spread over the ranks with one exclusive
//! scan and one all-reduce of O(p) counts ([`count_parts`]), no item
//! leaving its rank. All weights zero: the items are cut by number
//! (weight 1 each). O(n log p) for `n` items.

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// A partition of a weighted sequence into contiguous parts in rank order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CurvePartition {
    /// Items of each part, in part order; they sum to the number of items
    /// (part `k` owns the items after those of parts `0..k`).
    pub counts: Vec<usize>,
    /// The weight of each part's items (counts when all weights are zero).
    pub loads: Vec<f64>,
    /// How far the slowest part's time is above the ideal, every part
    /// finishing together: `max_k (load_k / share_k) − 1` with `share_k =
    /// W·s_k/S` ([`imbalance`]). 0 is a perfect fit.
    pub imbalance: f64,
}

/// Checks that every weight is finite and `≥ 0`: the first that is not is
/// an [`Error::InvalidInput`] naming its position.
pub fn check_weights(weights: &[f64]) -> Result<()> {
    match weights.iter().position(|w| !(w.is_finite() && *w >= 0.0)) {
        Some(i) => Err(Error::InvalidInput(format!(
            "weight {i} is {} (finite and >= 0 expected)",
            weights[i]
        ))),
        None => Ok(()),
    }
}

/// The start of each part's target interval of the cumulative weight:
/// `total · S_k / S`, `S_k` the sum of the speeds before part `k` (`p`
/// entries, the first 0). Speeds must be valid ([`crate::check_speeds`]).
pub fn target_bounds(total: f64, speeds: &[f64]) -> Vec<f64> {
    let sum: f64 = speeds.iter().sum();
    let mut before = 0.0;
    speeds
        .iter()
        .map(|s| {
            let b = total * (before / sum);
            before += s;
            b
        })
        .collect()
}

/// The part of an item whose weight interval is `[at, at + weight)`: the
/// part whose target interval ([`target_bounds`]) holds its midpoint.
/// O(log p).
pub fn part_of(bounds: &[f64], at: f64, weight: f64) -> usize {
    let mid = at + weight / 2.0;
    bounds.partition_point(|&b| b <= mid).saturating_sub(1)
}

/// The number of items of each part among a piece of the sequence whose
/// cumulative weight starts at `before` (the weight of all items before
/// the piece), for the target `bounds` ([`target_bounds`]). Summed over
/// the pieces of a sequence, these are its [`partition`]'s counts (exactly,
/// when the prefix sums are exact, e.g. integer weights). O(n log p).
pub fn count_parts(before: f64, weights: &[f64], bounds: &[f64]) -> Vec<usize> {
    let mut counts = vec![0; bounds.len()];
    let mut at = before;
    for &w in weights {
        counts[part_of(bounds, at, w)] += 1;
        at += w;
    }
    counts
}

/// `max_k (loads[k] / share_k) − 1` with `share_k` part `k`'s share of the
/// total load by speed; 0 when the total is 0. Speeds must be valid.
pub fn imbalance(loads: &[f64], speeds: &[f64]) -> f64 {
    let total: f64 = loads.iter().sum();
    if total <= 0.0 {
        return 0.0;
    }
    let sum: f64 = speeds.iter().sum();
    loads
        .iter()
        .zip(speeds)
        .map(|(l, s)| l / (total * (s / sum)))
        .fold(0.0, f64::max)
        - 1.0
}

/// The weight of each part of `weights` cut into `counts` (in order).
pub fn part_loads(weights: &[f64], counts: &[usize]) -> Vec<f64> {
    let mut rest = weights;
    counts
        .iter()
        .map(|&c| {
            let (part, tail) = rest.split_at(c.min(rest.len()));
            rest = tail;
            part.iter().sum()
        })
        .collect()
}

/// Partitions `weights` (items in curve order) into contiguous parts, one
/// per speed, in proportion to the speeds (module docs). Errors: invalid
/// speeds ([`crate::check_speeds`]), a negative, NaN or infinite weight
/// ([`check_weights`]), weights whose sum overflows.
///
/// ```
/// use nuce_plan::curve1d::partition;
/// // Ten items of weight 1 and one of weight 10; the second part is twice as fast.
/// let mut w = vec![1.0; 10];
/// w.push(10.0);
/// let p = partition(&w, &[1.0, 2.0])?;
/// assert_eq!(p.counts, vec![7, 4]);
/// assert_eq!(p.loads, vec![7.0, 13.0]);
/// # Ok::<(), nuce_plan::Error>(())
/// ```
pub fn partition(weights: &[f64], speeds: &[f64]) -> Result<CurvePartition> {
    crate::check_speeds(speeds)?;
    check_weights(weights)?;
    let total: f64 = weights.iter().sum();
    if !total.is_finite() {
        return Err(Error::InvalidInput(
            "the sum of the weights overflows".into(),
        ));
    }
    let units;
    let w = if total > 0.0 {
        weights
    } else {
        units = vec![1.0; weights.len()];
        &units
    };
    let counts = count_parts(0.0, w, &target_bounds(w.iter().sum(), speeds));
    let loads = part_loads(w, &counts);
    Ok(CurvePartition {
        imbalance: imbalance(&loads, speeds),
        counts,
        loads,
    })
}

#[cfg(test)]
mod tests;
