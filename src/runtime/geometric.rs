//! Parallel geometric partitioning of distributed points (the vertices of a
//! [`DistGraph`](super::graph::DistGraph)), in proportion to target weights,
//! with no rank gathering the coordinates:
//!
//! * [`rcb`] — recursive coordinate bisection: the parts are halved
//!   recursively, each group of points is cut across the longest side of its
//!   bounding box at the weighted quantile of its targets;
//! * [`sfc`] — the same bisection on the points' Hilbert keys (a
//!   space-filling curve; the parts are intervals of the curve, \[KOR95\] §3);
//! * [`prefix_cut`] — the index-based remap: the points in a global order
//!   (rank by rank, each rank's in Hilbert order) are cut into intervals of
//!   the new target weights by an exclusive scan of the weights.
//!
//! The weighted quantiles are found as Zoltan's RCB finds them: by
//! collective histograms. Each round every rank bins its undecided points of
//! every group into [`BINS`] bins of the group's current key interval; one
//! all-reduce sums the bins' weights and counts over all ranks; the bin where
//! the cumulative weight crosses the target becomes the next interval, the
//! points before it go left and those after it right. When keys cannot be
//! told apart any more (equal coordinates), the search goes on with the
//! global ids as the key, until at most one point is undecided, which goes
//! to the side that leaves the smaller error. The split is therefore exact to
//! within the weight of one point. All groups of one level of the recursion
//! share each all-reduce: O(log p · rounds) collectives, O(local points)
//! work per round, about 12 rounds per level.

use mpi::collective::SystemOperation;
use mpi::traits::*;

use super::comm::agree;
use crate::error::{Error, Result};
use crate::plan::curve1d::{part_of, target_bounds};
use crate::plan::graph::sfc::{hilbert_index_2d, hilbert_index_nd};

/// Bins of a histogram round.
pub(crate) const BINS: usize = 256;

/// Rounds on the coordinate before the ids break the ties: 256^8 = 2^64
/// exceeds the resolution of an `f64`.
const KEY_ROUNDS: usize = 8;

/// Points of this rank: coordinates (`dim` per point), weights and global ids.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Points<'a> {
    /// Number of coordinates per point (1 to 3).
    pub dim: usize,
    /// `dim × len` coordinates, point after point.
    pub coords: &'a [f64],
    /// One weight (finite, ≥ 0) per point.
    pub weights: &'a [f64],
    /// Global id of each point (distinct over all ranks, below 2^53).
    pub ids: &'a [usize],
}

impl Points<'_> {
    fn len(&self) -> usize {
        self.weights.len()
    }
    fn check(&self) -> Result<()> {
        let n = self.len();
        if !(1..=3).contains(&self.dim) || self.coords.len() != self.dim * n || self.ids.len() != n
        {
            return Err(Error::shape_mismatch(format!(
                "{} coordinates in {}D, {} ids for {n} points",
                self.coords.len(),
                self.dim,
                self.ids.len()
            )));
        }
        if self.coords.iter().any(|x| !x.is_finite()) {
            return Err(Error::invalid_input("non-finite coordinate"));
        }
        if self.weights.iter().any(|w| !w.is_finite() || *w < 0.0) {
            return Err(Error::invalid_input(
                "vertex weights must be finite and >= 0",
            ));
        }
        Ok(())
    }
}

fn check_targets(targets: &[f64], p: usize) -> Result<()> {
    if targets.len() != p {
        return Err(Error::shape_mismatch(format!(
            "{} target weights for {p} ranks",
            targets.len()
        )));
    }
    Ok(crate::plan::check_speeds(targets)?)
}

/// The per-point state of a quantile search.
#[derive(Clone, Copy, PartialEq)]
enum Side {
    Left,
    Right,
    Open,
}

/// One group's search: its key interval, the weight already sent left, the
/// weight it must send left, and whether it searches on the ids.
#[derive(Clone, Copy)]
struct Search {
    lo: f64,
    hi: f64,
    below: f64,
    need: f64,
    rounds: usize,
    /// The id interval `[ilo, ihi)` once the search goes on by id.
    by_id: Option<(u64, u64)>,
    done: bool,
}

/// The bin of id `v` in `[lo, hi)`, exactly.
fn id_bin(v: u64, lo: u64, hi: u64) -> usize {
    let len = u128::from(hi.saturating_sub(lo).max(1));
    ((u128::from(v.saturating_sub(lo)) * BINS as u128 / len) as usize).min(BINS - 1)
}

/// The ids of bin `j` of `[lo, hi)`: `[lo + ⌈j·len/B⌉, lo + ⌈(j+1)·len/B⌉)`.
fn id_range(j: usize, lo: u64, hi: u64) -> (u64, u64) {
    let len = u128::from(hi - lo);
    let at = |k: usize| lo + (k as u128 * len).div_ceil(BINS as u128) as u64;
    (at(j), at(j + 1))
}

fn bin_of(x: f64, lo: f64, hi: f64) -> usize {
    if hi <= lo {
        return 0;
    }
    (((x - lo) / (hi - lo) * BINS as f64).floor().max(0.0) as usize).min(BINS - 1)
}

/// Splits every group of points in two: for each group `g`, the points of
/// `group` equal to `g` (`u32::MAX`: none) are divided so that the weight
/// sent left is `need[g]` to within one point's weight, the left side being
/// the points of smallest `(key, id)`. Every rank passes the same `need`.
/// Returns `true` for the points sent left. Collective.
fn split<C: Communicator>(
    comm: &C,
    group: &[u32],
    key: &[f64],
    w: &[f64],
    ids: &[usize],
    need: &[f64],
    n_global: usize,
) -> Vec<bool> {
    let ng = need.len();
    let mut side = vec![Side::Open; key.len()];
    for (s, &g) in side.iter_mut().zip(group) {
        if g == u32::MAX {
            *s = Side::Right;
        }
    }
    // Key intervals: [min, max] of every group.
    let mut ext = vec![f64::INFINITY; 2 * ng];
    for (i, &g) in group.iter().enumerate() {
        if g != u32::MAX {
            let g = g as usize;
            ext[2 * g] = ext[2 * g].min(key[i]);
            ext[2 * g + 1] = ext[2 * g + 1].min(-key[i]);
        }
    }
    let mut gext = vec![0.0; 2 * ng];
    comm.all_reduce_into(&ext[..], &mut gext[..], SystemOperation::min());
    let mut s: Vec<Search> = (0..ng)
        .map(|g| Search {
            lo: gext[2 * g],
            hi: -gext[2 * g + 1],
            below: 0.0,
            need: need[g],
            rounds: 0,
            by_id: None,
            done: !gext[2 * g].is_finite(),
        })
        .collect();
    let mut hist = vec![0.0; 2 * BINS * ng];
    let mut ghist = vec![0.0; 2 * BINS * ng];
    let mut bins = vec![0u16; key.len()];
    while s.iter().any(|st| !st.done) {
        hist.iter_mut().for_each(|h| *h = 0.0);
        for i in 0..key.len() {
            if side[i] != Side::Open {
                continue;
            }
            let g = group[i] as usize;
            let st = &s[g];
            if st.done {
                continue;
            }
            let b = match st.by_id {
                Some((lo, hi)) => id_bin(ids[i] as u64, lo, hi),
                None => bin_of(key[i], st.lo, st.hi),
            };
            bins[i] = b as u16;
            hist[2 * BINS * g + b] += w[i];
            hist[2 * BINS * g + BINS + b] += 1.0;
        }
        comm.all_reduce_into(&hist[..], &mut ghist[..], SystemOperation::sum());
        // Per group: the bin that stays open (`BINS`: the last point decides alone).
        let mut chosen = vec![usize::MAX; ng];
        for (g, st) in s.iter_mut().enumerate() {
            if st.done {
                continue;
            }
            let (wt, ct) = ghist[2 * BINS * g..2 * BINS * (g + 1)].split_at(BINS);
            let open: f64 = ct.iter().sum();
            if open <= 1.0 {
                chosen[g] = BINS;
                st.done = true;
                continue;
            }
            let mut acc = st.below;
            let mut j = 0;
            while j + 1 < BINS && (ct[j] == 0.0 || acc + wt[j] < st.need) {
                acc += wt[j];
                j += 1;
            }
            while ct[j] == 0.0 {
                // Only empty bins from here on: the last non-empty one stays open.
                j -= 1;
                acc -= wt[j];
            }
            chosen[g] = j;
            st.below = acc;
            st.rounds += 1;
            if let Some((lo, hi)) = st.by_id {
                st.by_id = Some(id_range(j, lo, hi));
                continue;
            }
            let width = (st.hi - st.lo) / BINS as f64;
            let (lo, hi) = (st.lo + j as f64 * width, st.lo + (j + 1) as f64 * width);
            if lo >= hi || st.rounds >= KEY_ROUNDS {
                // The keys of the open points cannot be told apart: go on by id.
                st.by_id = Some((0, n_global as u64));
            } else {
                st.lo = lo;
                st.hi = hi;
            }
        }
        for i in 0..key.len() {
            if side[i] != Side::Open {
                continue;
            }
            let g = group[i] as usize;
            let c = chosen[g];
            if c == usize::MAX {
                continue;
            }
            let b = bins[i] as usize;
            side[i] = if c == BINS {
                if s[g].below + w[i] / 2.0 < s[g].need {
                    Side::Left
                } else {
                    Side::Right
                }
            } else if b < c {
                Side::Left
            } else if b > c {
                Side::Right
            } else {
                Side::Open
            };
        }
    }
    side.iter().map(|&x| x == Side::Left).collect()
}

/// Recursive bisection of the parts `0..p` (`p` = ranks) over the points,
/// each group cut at the weighted quantile of its targets on the keys that
/// `keys(group of every point, part ranges of the groups)` returns (called
/// collectively once per level). Returns the part of every point.
fn bisect<C, F>(comm: &C, pts: &Points, targets: &[f64], n_global: usize, mut keys: F) -> Vec<usize>
where
    C: Communicator,
    F: FnMut(&[u32], &[(usize, usize)]) -> Vec<f64>,
{
    let p = targets.len();
    let mut groups = vec![(0usize, p)];
    let mut group = vec![0u32; pts.len()];
    loop {
        let active: Vec<usize> = (0..groups.len())
            .filter(|&g| groups[g].1 - groups[g].0 > 1)
            .collect();
        if active.is_empty() {
            break;
        }
        let mut slot = vec![u32::MAX; groups.len()];
        for (k, &g) in active.iter().enumerate() {
            slot[g] = k as u32;
        }
        let act: Vec<u32> = group.iter().map(|&g| slot[g as usize]).collect();
        let ranges: Vec<(usize, usize)> = active.iter().map(|&g| groups[g]).collect();
        let mut w = vec![0.0; active.len()];
        for (i, &a) in act.iter().enumerate() {
            if a != u32::MAX {
                w[a as usize] += pts.weights[i];
            }
        }
        let mut gw = vec![0.0; active.len()];
        comm.all_reduce_into(&w[..], &mut gw[..], SystemOperation::sum());
        let need: Vec<f64> = ranges
            .iter()
            .zip(&gw)
            .map(|(&(lo, hi), &total)| {
                let mid = (lo + hi) / 2;
                let left: f64 = targets[lo..mid].iter().sum();
                let all: f64 = targets[lo..hi].iter().sum();
                total * left / all
            })
            .collect();
        let key = keys(&act, &ranges);
        let left = split(comm, &act, &key, pts.weights, pts.ids, &need, n_global);
        // Children: every group of more than one part becomes two.
        let mut first = vec![0u32; groups.len()];
        let mut next = Vec::with_capacity(2 * groups.len());
        for (g, &(lo, hi)) in groups.iter().enumerate() {
            first[g] = next.len() as u32;
            if hi - lo > 1 {
                let mid = (lo + hi) / 2;
                next.push((lo, mid));
                next.push((mid, hi));
            } else {
                next.push((lo, hi));
            }
        }
        for (i, g) in group.iter_mut().enumerate() {
            let split_here = act[i] != u32::MAX;
            *g = first[*g as usize] + u32::from(split_here && !left[i]);
        }
        groups = next;
    }
    group.iter().map(|&g| groups[g as usize].0).collect()
}

/// Per group, the minimum and maximum of every coordinate (all-reduced).
fn boxes<C: Communicator>(comm: &C, pts: &Points, group: &[u32], ng: usize) -> Vec<f64> {
    let d = pts.dim;
    let mut ext = vec![f64::INFINITY; 2 * d * ng];
    for (i, &g) in group.iter().enumerate() {
        if g == u32::MAX {
            continue;
        }
        let at = 2 * d * g as usize;
        for k in 0..d {
            let x = pts.coords[i * d + k];
            ext[at + k] = ext[at + k].min(x);
            ext[at + d + k] = ext[at + d + k].min(-x);
        }
    }
    let mut out = vec![0.0; ext.len()];
    comm.all_reduce_into(&ext[..], &mut out[..], SystemOperation::min());
    out
}

/// Checks the points and targets collectively (errors agree).
fn checked<C: Communicator>(comm: &C, pts: &Points, targets: &[f64]) -> Result<usize> {
    let ok = pts
        .check()
        .and_then(|()| check_targets(targets, comm.size() as usize));
    agree(comm, 0, ok)?;
    let mut n = 0usize;
    comm.all_reduce_into(&pts.len(), &mut n, SystemOperation::sum());
    let mut top = 0usize;
    let local_top = pts.ids.iter().copied().max().map_or(0, |v| v + 1);
    comm.all_reduce_into(&local_top, &mut top, SystemOperation::max());
    Ok(top.max(n))
}

/// Runs `f` on the points, with unit weights when every point of every rank
/// weighs 0 (the parts are then cut by point counts). Collective.
fn weighted<C: Communicator, R>(comm: &C, pts: &Points, f: impl FnOnce(&Points) -> R) -> R {
    let total = super::comm::sum_f64(comm, pts.weights.iter().sum());
    if total > 0.0 {
        return f(pts);
    }
    let ones = vec![1.0; pts.len()];
    f(&Points {
        weights: &ones,
        ..*pts
    })
}

/// Recursive coordinate bisection in parallel: the part (rank) of every
/// point of this rank, the parts' weights in proportion to `targets` (one per
/// rank, the same on every rank) to within one point's weight per cut. Each
/// group is cut across the longest side of its bounding box. No rank sees
/// other ranks' points. Collective; errors agree.
pub fn rcb<C: Communicator>(comm: &C, pts: &Points, targets: &[f64]) -> Result<Vec<usize>> {
    let n = checked(comm, pts, targets)?;
    Ok(weighted(comm, pts, |pts| {
        let d = pts.dim;
        bisect(comm, pts, targets, n, |group, ranges| {
            let b = boxes(comm, pts, group, ranges.len());
            let axis: Vec<usize> = (0..ranges.len())
                .map(|g| {
                    let at = 2 * d * g;
                    (0..d)
                        .max_by(|&a, &c| {
                            let ea = -b[at + d + a] - b[at + a];
                            let ec = -b[at + d + c] - b[at + c];
                            ea.total_cmp(&ec)
                        })
                        .unwrap_or(0)
                })
                .collect();
            group
                .iter()
                .enumerate()
                .map(|(i, &g)| {
                    if g == u32::MAX {
                        0.0
                    } else {
                        pts.coords[i * d + axis[g as usize]]
                    }
                })
                .collect()
        })
    }))
}

/// Hilbert keys of the points in the global bounding box (all-reduced):
/// coordinates quantised to 2^26 cells per axis in 2D, 2^17 in 3D (keys
/// below 2^52, exact as `f64`); in 1D the coordinate itself.
pub(crate) fn hilbert_keys<C: Communicator>(comm: &C, pts: &Points) -> Vec<f64> {
    let d = pts.dim;
    let all = vec![0u32; pts.len()];
    let b = boxes(comm, pts, &all, 1);
    if d == 1 {
        return pts.coords.to_vec();
    }
    let bits: u32 = if d == 2 { 26 } else { 17 };
    let cells = f64::from((1u32 << bits) - 1);
    let q = |k: usize, x: f64| {
        let (lo, hi) = (b[k], -b[d + k]);
        if hi > lo {
            ((x - lo) / (hi - lo) * cells).round().clamp(0.0, cells) as u32
        } else {
            0
        }
    };
    (0..pts.len())
        .map(|i| {
            let c = &pts.coords[i * d..(i + 1) * d];
            let key = if d == 2 {
                hilbert_index_2d(q(0, c[0]), q(1, c[1]), bits)
            } else {
                let p = [q(0, c[0]), q(1, c[1]), q(2, c[2])];
                hilbert_index_nd(&p, bits)
            };
            key as f64
        })
        .collect()
}

/// Space-filling-curve partitioning in parallel: the points' Hilbert keys
/// ([`hilbert_keys`]) cut into `p` intervals of the curve whose weights are
/// in proportion to `targets`, by the same collective bisection as [`rcb`];
/// part `r` is the `r`-th interval. Collective; errors agree.
pub fn sfc<C: Communicator>(comm: &C, pts: &Points, targets: &[f64]) -> Result<Vec<usize>> {
    let n = checked(comm, pts, targets)?;
    Ok(weighted(comm, pts, |pts| {
        let keys = hilbert_keys(comm, pts);
        bisect(comm, pts, targets, n, |_, _| keys.clone())
    }))
}

/// The index-based remap by prefix sums (\[KOR95\] §3 across ranks): the
/// points in the global order — rank 0's, then rank 1's, …, each rank's in
/// the order `order` (a permutation of its local indices) — are cut into
/// `p` consecutive intervals whose weights are in proportion to `targets`.
/// A point belongs to the interval holding the middle of its weight. One
/// exclusive scan and one all-reduce; returns the new part of every point.
/// After [`sfc`] with `order` the Hilbert order, the global order is the
/// curve's and only points near moved boundaries change part. Collective;
/// errors agree.
pub fn prefix_cut<C: Communicator>(
    comm: &C,
    weights: &[f64],
    order: &[usize],
    targets: &[f64],
) -> Result<Vec<usize>> {
    let all: Vec<usize> = (0..comm.size() as usize).collect();
    prefix_cut_onto(comm, weights, order, targets, &all)
}

/// [`prefix_cut`] into the intervals of the parts `onto` (ranks, in the
/// order of the cut), `targets[k]` the weight of part `onto[k]`: the other
/// ranks get no point (e.g. ranks that leave). Collective; errors agree.
pub fn prefix_cut_onto<C: Communicator>(
    comm: &C,
    weights: &[f64],
    order: &[usize],
    targets: &[f64],
    onto: &[usize],
) -> Result<Vec<usize>> {
    let p = comm.size() as usize;
    let ok = check_targets(targets, onto.len())
        .and_then(|()| {
            if onto.iter().all(|&r| r < p) {
                Ok(())
            } else {
                Err(Error::invalid_input(format!(
                    "prefix_cut: parts {onto:?} for {p} ranks"
                )))
            }
        })
        .and_then(|()| {
            let mut seen = vec![false; weights.len()];
            let perm = order.len() == weights.len()
                && order
                    .iter()
                    .all(|&i| i < seen.len() && !std::mem::replace(&mut seen[i], true));
            if !perm {
                Err(Error::invalid_input(
                    "prefix_cut: order is not a permutation of the local points",
                ))
            } else if weights.iter().any(|w| !w.is_finite() || *w < 0.0) {
                Err(Error::invalid_input(
                    "vertex weights must be finite and >= 0",
                ))
            } else {
                Ok(())
            }
        });
    agree(comm, 0, ok)?;
    let (before, total) = super::comm::weight_prefix(comm, weights.iter().sum());
    if total <= 0.0 && super::comm::sum_f64(comm, weights.len() as f64) > 0.0 {
        // All weights zero: cut by vertex counts instead.
        return prefix_cut_onto(comm, &vec![1.0; weights.len()], order, targets, onto);
    }
    // Each point in the target interval of its weight's midpoint (plan::curve1d).
    let bounds = target_bounds(total, targets);
    let mut part = vec![0usize; weights.len()];
    let mut at = before;
    for &i in order {
        part[i] = onto[part_of(&bounds, at, weights[i])];
        at += weights[i];
    }
    Ok(part)
}
