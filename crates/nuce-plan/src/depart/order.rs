//! The departure of parts cut along a one-dimensional order (a graph's
//! ordering, or its ranks' vertices one rank after the other): the minimum
//! move ([`hand_over`]).
//!
//! Sliding the boundaries of an interval cut over the parts that stay
//! moves more than the leaving parts' data: on four equal parts, the last
//! leaving, part 1 gives a twelfth to part 0 and takes a sixth from part 2
//! — half the order travels where a quarter must. Here every part keeps
//! what it may keep, and the parts that must grow each take one contiguous
//! piece of what the others give up, in proportion to what they must grow:
//! the vertices moved are the minimum, `Σ max(0, new − old)` (to the
//! rounding of vertices to pieces). The price: a part that grows holds two
//! (or more) intervals of the order, so the cut has more edges; the part
//! next to the leaving interval takes the piece next to its own, so at
//! least it stays one interval.

use crate::error::{Error, Result};

/// Positions `lo..hi` of the order's cumulative weight that go to part
/// `to`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Piece {
    /// First position (cumulative weight).
    pub lo: f64,
    /// One past the last position.
    pub hi: f64,
    /// The part they go to.
    pub to: usize,
}

/// The pieces of an order held as `runs` (`(part, weight)`, in order along
/// it; a part may hold several runs) once each part `r` is to hold
/// `targets[r]` (any scale: rescaled to the total weight; 0 for a part
/// that leaves). A part whose target is below what it holds keeps the
/// first part of its holdings along the order and gives up the rest; the
/// given-up pieces, in order, are cut among the parts that must grow by
/// prefix sums of what each must grow, each taking one contiguous piece:
/// first the growing parts before the first given-up piece, the nearest
/// first, then those after it, the farthest first (so the parts on both
/// sides of a single leaving interval take the pieces next to their own).
/// The pieces cover `0..total` in order, adjacent pieces of one part
/// merged. Errors: a part out of range of `targets`, negative or
/// non-finite weights or targets, targets summing to 0. O(runs + parts).
pub fn hand_over(runs: &[(usize, f64)], targets: &[f64]) -> Result<Vec<Piece>> {
    let p = targets.len();
    if let Some(&(r, w)) = runs
        .iter()
        .find(|&&(r, w)| r >= p || !w.is_finite() || w < 0.0)
    {
        return Err(Error::InvalidInput(format!(
            "run of part {r} with weight {w} for {p} parts"
        )));
    }
    if targets.iter().any(|t| !t.is_finite() || *t < 0.0) {
        return Err(Error::InvalidInput(format!(
            "targets {targets:?} must be finite and >= 0"
        )));
    }
    let sum: f64 = targets.iter().sum();
    if sum <= 0.0 {
        return Err(Error::InvalidInput("targets sum to 0".into()));
    }
    let total: f64 = runs.iter().map(|r| r.1).sum();
    let target: Vec<f64> = targets.iter().map(|t| total * t / sum).collect();
    let mut held = vec![0.0; p];
    let mut first = vec![usize::MAX; p];
    for (i, &(r, w)) in runs.iter().enumerate() {
        held[r] += w;
        first[r] = first[r].min(i);
    }
    // What each part keeps of its holdings, and the given-up pieces in order.
    let mut keep: Vec<f64> = (0..p).map(|r| held[r].min(target[r])).collect();
    let mut pieces = Vec::new();
    let mut given = Vec::new();
    let mut at = 0.0;
    let mut first_given = None;
    for (i, &(r, w)) in runs.iter().enumerate() {
        let kept = w.min(keep[r]);
        keep[r] -= kept;
        pieces.push(Piece {
            lo: at,
            hi: at + kept,
            to: r,
        });
        if kept < w {
            given.push((at + kept, at + w));
            first_given.get_or_insert(i);
        }
        at += w;
    }
    // The growing parts in the order they take pieces.
    let grow = |r: &usize| target[*r] > held[*r];
    let split = first_given.unwrap_or(runs.len());
    let mut before: Vec<usize> = (0..p).filter(|r| grow(r) && first[*r] < split).collect();
    let mut after: Vec<usize> = (0..p).filter(|r| grow(r) && first[*r] >= split).collect();
    before.sort_by_key(|&r| std::cmp::Reverse(first[r]));
    after.sort_by_key(|&r| std::cmp::Reverse(first[r]));
    let takers: Vec<usize> = before.into_iter().chain(after).collect();
    // Cut the given-up pieces among the takers, in order.
    let mut k = 0;
    let mut need = takers.first().map_or(0.0, |&r| target[r] - held[r]);
    for (mut lo, hi) in given {
        while lo < hi {
            let Some(&r) = takers.get(k) else {
                // Rounding left a sliver and nobody to take it: the last taker
                // (or, with none, the part of the largest target) does.
                let to = takers.last().copied().unwrap_or_else(|| {
                    (0..p)
                        .max_by(|&a, &b| target[a].total_cmp(&target[b]))
                        .unwrap_or(0)
                });
                pieces.push(Piece { lo, hi, to });
                break;
            };
            let last = k + 1 == takers.len();
            let end = if last { hi } else { hi.min(lo + need) };
            // No progress (a need below the positions' resolution): the
            // next taker.
            let stuck = end <= lo;
            pieces.push(Piece { lo, hi: end, to: r });
            need -= end - lo;
            lo = end;
            if !last && (need <= 0.0 || stuck) {
                k += 1;
                need = takers.get(k).map_or(0.0, |&r| target[r] - held[r]);
            }
        }
    }
    pieces.retain(|x| x.hi > x.lo);
    pieces.sort_by(|a, b| a.lo.total_cmp(&b.lo));
    let mut merged: Vec<Piece> = Vec::with_capacity(pieces.len());
    for x in pieces {
        match merged.last_mut() {
            Some(m) if m.to == x.to && m.hi == x.lo => m.hi = x.hi,
            _ => merged.push(x),
        }
    }
    Ok(merged)
}

/// The part of the item at position `at` of weight `w` along the order:
/// that of the piece holding its midpoint (the last piece beyond the end,
/// the first before the start). `pieces`: [`hand_over`]'s, non-empty.
/// O(log pieces).
pub fn piece_of(pieces: &[Piece], at: f64, w: f64) -> usize {
    let m = at + w / 2.0;
    let i = pieces.partition_point(|x| x.hi <= m);
    pieces[i.min(pieces.len().saturating_sub(1))].to
}
