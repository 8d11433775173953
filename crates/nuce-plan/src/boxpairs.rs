//! The pairs of near boxes of a plan, found through a bucket grid: the
//! pair search behind the exact-tiling checks
//! ([`GridPlan3::validate`](crate::array3d::GridPlan3::validate),
//! [`ArrayPlan::validate`](crate::array2d::ArrayPlan::validate)) and the
//! halo neighbours ([`GridPlan3::neighbour_lists`](crate::array3d::GridPlan3::neighbour_lists)).
//!
//! A plane sweep keeps every box that crosses the sweep plane active, a
//! whole plane of boxes (`p^(2/3)` of them in 3D): `O(p·p^(2/3))`. Here the
//! grid is cut into about `p` buckets whose widths along each axis are the
//! median extents of the boxes; each box is listed in the buckets it
//! crosses, and each box looks for its partners only in the buckets within
//! `margin` of it. Every pair is tested exactly ([`near`]), and handed to
//! the caller once (a stamp per box), so the result is exact whatever the
//! boxes: a bucket only limits where to look. With `R` the listings and
//! `m_b` the boxes listed in bucket `b`, the cost is `O(p + R + Σ_b m_b²)`,
//! `O(p)` for tilings by boxes of comparable shapes. Where the listings
//! would exceed [`MAX_LISTINGS_PER_BOX`] per box (very unequal shapes), the
//! plane sweep runs instead, so the worst case is the sweep's.

use crate::error::Result;

/// A half-open box of `D` dimensions: `lo[a] ≤ x_a < hi[a]`.
pub(crate) type Span<const D: usize> = ([usize; D], [usize; D]);

/// Listings of boxes in buckets, per box, above which the plane sweep runs.
pub(crate) const MAX_LISTINGS_PER_BOX: usize = 16;

/// True when boxes `a` and `b` are less than `margin` cells apart along
/// every axis (with `margin = 0`: when they share a cell).
fn near<const D: usize>(a: &Span<D>, b: &Span<D>, margin: usize) -> bool {
    (0..D).all(|x| b.0[x] < a.1[x].saturating_add(margin) && a.0[x] < b.1[x].saturating_add(margin))
}

/// Calls `visit(j, i)` with `j < i` exactly once for every pair of
/// non-empty boxes that are [`near`] within `margin` (and for no other
/// pair); stops at the first error. `extent` is the grid's shape (boxes
/// reaching past it are still handled exactly). Deterministic: the pairs
/// come in an order fixed by the boxes.
pub(crate) fn near_pairs<const D: usize>(
    boxes: &[Span<D>],
    extent: [usize; D],
    margin: usize,
    mut visit: impl FnMut(usize, usize) -> Result<()>,
) -> Result<()> {
    let live: Vec<usize> = (0..boxes.len())
        .filter(|&i| (0..D).all(|a| boxes[i].1[a] > boxes[i].0[a]))
        .collect();
    if live.len() < 2 {
        return Ok(());
    }
    let grid = Buckets::new(boxes, &live, extent, margin);
    let listings: usize = live.iter().map(|&i| grid.count(&boxes[i], 0)).sum();
    if listings > MAX_LISTINGS_PER_BOX * live.len() {
        return sweep(boxes, &live, margin, visit);
    }
    // The boxes renumbered in the order of the bucket of their first cell,
    // so that the boxes a search touches lie close in memory (parts come in
    // speed order, scattered over the grid).
    let mut order: Vec<(usize, usize)> =
        live.iter().map(|&i| (grid.index(&boxes[i].0), i)).collect();
    order.sort_unstable();
    let local: Vec<Span<D>> = order.iter().map(|&(_, i)| boxes[i]).collect();
    // Compressed lists: the boxes of bucket `b` are `members[start[b]..start[b + 1]]`.
    let mut start = vec![0usize; grid.total + 1];
    for b in &local {
        grid.each(b, 0, |k| start[k + 1] += 1);
    }
    for k in 0..grid.total {
        start[k + 1] += start[k];
    }
    let mut fill = start.clone();
    let mut members = vec![0usize; listings];
    for (i, b) in local.iter().enumerate() {
        grid.each(b, 0, |k| {
            members[fill[k]] = i;
            fill[k] += 1;
        });
    }
    let mut stamp = vec![usize::MAX; local.len()];
    let mut found = Ok(());
    for (i, b) in local.iter().enumerate() {
        grid.each(b, margin, |k| {
            if found.is_err() {
                return;
            }
            for &j in &members[start[k]..start[k + 1]] {
                // Lists are filled in ascending order: the rest are ≥ i.
                if j >= i {
                    break;
                }
                if stamp[j] != i && near(&local[j], b, margin) {
                    stamp[j] = i;
                    let (x, y) = (order[j].1, order[i].1);
                    if let Err(e) = visit(x.min(y), x.max(y)) {
                        found = Err(e);
                        return;
                    }
                }
            }
        });
        std::mem::replace(&mut found, Ok(()))?;
    }
    Ok(())
}

/// The plane sweep along the axis with the most distinct box starts
/// (`O(p log p + p·k)`, `k` the boxes within `margin` of a sweep plane),
/// for boxes too unequal for the buckets.
fn sweep<const D: usize>(
    boxes: &[Span<D>],
    live: &[usize],
    margin: usize,
    mut visit: impl FnMut(usize, usize) -> Result<()>,
) -> Result<()> {
    let distinct = |a: usize| {
        let mut s: Vec<usize> = live.iter().map(|&i| boxes[i].0[a]).collect();
        s.sort_unstable();
        s.dedup();
        s.len()
    };
    let axis = (0..D).max_by_key(|&a| distinct(a)).unwrap_or(0);
    let mut order = live.to_vec();
    order.sort_by_key(|&i| boxes[i].0[axis]);
    let mut active: Vec<usize> = Vec::new();
    for &i in &order {
        let lo = boxes[i].0[axis];
        active.retain(|&j| boxes[j].1[axis].saturating_add(margin) > lo);
        for &j in &active {
            if near(&boxes[j], &boxes[i], margin) {
                visit(j.min(i), j.max(i))?;
            }
        }
        active.push(i);
    }
    Ok(())
}

/// A grid of buckets over the plan's extent: `count[a]` buckets of `width[a]`
/// cells along axis `a` (the last one takes every cell beyond).
struct Buckets<const D: usize> {
    width: [usize; D],
    count: [usize; D],
    total: usize,
}

impl<const D: usize> Buckets<D> {
    /// Widths from the median extents of the live boxes (at least
    /// `margin`), widened until there are at most `2·live + 1` buckets.
    fn new(boxes: &[Span<D>], live: &[usize], extent: [usize; D], margin: usize) -> Self {
        let mut width = [1usize; D];
        let mut count = [1usize; D];
        for a in 0..D {
            let mut len: Vec<usize> = live
                .iter()
                .map(|&i| boxes[i].1[a] - boxes[i].0[a])
                .collect();
            let mid = len.len() / 2;
            let (_, median, _) = len.select_nth_unstable(mid);
            width[a] = (*median).max(margin).max(1);
            count[a] = extent[a].div_ceil(width[a]).max(1);
        }
        let cap = 2 * live.len() + 1;
        let product = |count: &[usize; D]| {
            count
                .iter()
                .try_fold(1usize, |acc, &c| acc.checked_mul(c))
                .unwrap_or(usize::MAX)
        };
        while product(&count) > cap {
            let a = (0..D).max_by_key(|&a| count[a]).unwrap_or(0);
            width[a] = width[a].saturating_mul(2);
            count[a] = extent[a].div_ceil(width[a]).max(1);
        }
        Buckets {
            width,
            count,
            total: product(&count),
        }
    }

    /// The buckets along axis `a` that hold a cell of `[lo, hi)` grown by
    /// `margin` on both sides.
    fn range(&self, a: usize, lo: usize, hi: usize, margin: usize) -> (usize, usize) {
        let last = self.count[a] - 1;
        let first = (lo.saturating_sub(margin) / self.width[a]).min(last);
        let end = ((hi.saturating_add(margin) - 1) / self.width[a]).min(last);
        (first, end)
    }

    /// The bucket holding cell `at`.
    fn index(&self, at: &[usize; D]) -> usize {
        (0..D).fold(0, |acc, a| {
            acc * self.count[a] + (at[a] / self.width[a]).min(self.count[a] - 1)
        })
    }

    /// Number of buckets [`Buckets::each`] visits.
    fn count(&self, b: &Span<D>, margin: usize) -> usize {
        (0..D)
            .map(|a| {
                let (f, e) = self.range(a, b.0[a], b.1[a], margin);
                e - f + 1
            })
            .try_fold(1usize, |acc, n| acc.checked_mul(n))
            .unwrap_or(usize::MAX)
    }

    /// Calls `f` with the index of every bucket holding a cell of `b` grown
    /// by `margin`, in ascending index order.
    fn each(&self, b: &Span<D>, margin: usize, mut f: impl FnMut(usize)) {
        let ranges: [(usize, usize); D] =
            std::array::from_fn(|a| self.range(a, b.0[a], b.1[a], margin));
        let mut at: [usize; D] = std::array::from_fn(|a| ranges[a].0);
        loop {
            let index = (0..D).fold(0, |acc, a| acc * self.count[a] + at[a]);
            f(index);
            // Odometer, last axis fastest.
            let mut a = D;
            loop {
                if a == 0 {
                    return;
                }
                a -= 1;
                if at[a] < ranges[a].1 {
                    at[a] += 1;
                    break;
                }
                at[a] = ranges[a].0;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every near pair by brute force.
    fn brute<const D: usize>(boxes: &[Span<D>], margin: usize) -> Vec<(usize, usize)> {
        let live = |i: usize| (0..D).all(|a| boxes[i].1[a] > boxes[i].0[a]);
        let mut out = Vec::new();
        for i in 0..boxes.len() {
            for j in 0..i {
                if live(i) && live(j) && near(&boxes[j], &boxes[i], margin) {
                    out.push((j, i));
                }
            }
        }
        out.sort_unstable();
        out
    }

    fn found<const D: usize>(
        boxes: &[Span<D>],
        extent: [usize; D],
        margin: usize,
    ) -> Vec<(usize, usize)> {
        let mut out = Vec::new();
        near_pairs(boxes, extent, margin, |j, i| {
            assert!(j < i);
            out.push((j, i));
            Ok(())
        })
        .unwrap();
        out.sort_unstable();
        out
    }

    /// Pseudo-random boxes (some empty, some overlapping, some past the
    /// extent, some huge): the bucket search and the sweep find exactly
    /// the brute-force pairs, each once.
    #[test]
    fn finds_exactly_the_near_pairs() {
        let mut x = 7u64;
        let mut next = |m: usize| {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((x >> 33) as usize) % m
        };
        for round in 0..40 {
            let n = 2 + next(120);
            let big = round % 5 == 0;
            let boxes: Vec<Span<3>> = (0..n)
                .map(|_| {
                    let lo: [usize; 3] = std::array::from_fn(|_| next(40));
                    let len: [usize; 3] =
                        std::array::from_fn(|_| if big && next(10) == 0 { 60 } else { next(8) });
                    (lo, std::array::from_fn(|a| lo[a] + len[a]))
                })
                .collect();
            for margin in [0, 1, 2, 5] {
                let want = brute(&boxes, margin);
                assert_eq!(
                    found(&boxes, [40, 40, 40], margin),
                    want,
                    "round {round} margin {margin}"
                );
                let live: Vec<usize> = (0..n)
                    .filter(|&i| (0..3).all(|a| boxes[i].1[a] > boxes[i].0[a]))
                    .collect();
                let mut swept = Vec::new();
                sweep(&boxes, &live, margin, |j, i| {
                    swept.push((j, i));
                    Ok(())
                })
                .unwrap();
                swept.sort_unstable();
                assert_eq!(swept, want);
            }
        }
    }

    #[test]
    fn stops_at_the_first_error_and_handles_few_boxes() {
        let boxes: Vec<Span<2>> = vec![([0, 0], [2, 2]), ([1, 1], [3, 3]), ([0, 0], [3, 3])];
        let mut calls = 0;
        let r = near_pairs(&boxes, [3, 3], 0, |_, _| {
            calls += 1;
            Err(crate::Error::InvalidPlan("x".into()))
        });
        assert!(r.is_err());
        assert_eq!(calls, 1);
        assert_eq!(found::<2>(&[([0, 0], [1, 1])], [1, 1], 3), vec![]);
        assert_eq!(found::<2>(&[], [1, 1], 0), vec![]);
    }
}
