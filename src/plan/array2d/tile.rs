//! TILE decomposition (seed `000_3b7f5c9969a269e5.txt` §6.2, Figure 14).
//!
//! TILE searches the XY decompositions of Figure 13 with one change: whenever
//! the subarray left after cutting off a column is taller than wide
//! (`m_Sr > n_Sr`), the rest is decomposed with the axes exchanged (and the
//! least column count reset to 1). Each path of the search is one
//! decomposition; the cheapest (by Acost, or by `Acost + latency × internal
//! edges` with a latency, §5) is returned.
//!
//! Reconstruction of the extracted Figure 14: its loop has no `else` branch
//! for the last column; with `min = r` the right subarray is empty and the
//! test `m_Sr > n_Sr` holds, so the pseudo-code puts all `r` remaining parts
//! in one column, as XY does. A column of `c` parts is cut off when
//! `c ≤ r − c` (the rest keeps nondecreasing counts) or when the rest is
//! rotated; a rest of one part is that part.
//!
//! The search keeps the running sum of perimeters, so a candidate's Acost is
//! known in O(1) at its leaf, and skips a branch when the Acost lower bound
//! `(Σ placed perimeters + perimeter of the rest − 2(m + n)) / 2` cannot beat
//! the best found: the plan chosen is the same as the exhaustive search's
//! (the first cheapest in the seed's order).
//!
//! Complexity: `Ω(pt(p))` candidates when no rotation happens, `O(2^{p−1})`
//! candidates in the worst case (§6.2), each O(p) to build (plus
//! O(p log p) for the internal edges with a latency).

use super::cost::internal_edges;
use super::guillotine::{check_latency, cut_at, piece, slice, sorted_desc, Axis};
use super::{check_args, ArrayDecomposer, ArrayPlan, Rect};
use crate::error::Result;

/// TILE (000 §6.2, Figure 14): XY search that switches axes whenever the
/// remaining subarray becomes taller than wide.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Tile {
    /// Latency per internal edge (000 §5); 0 selects by Acost alone.
    pub latency: f64,
}

impl ArrayDecomposer for Tile {
    fn name(&self) -> &'static str {
        "tile"
    }

    fn decompose(&self, rows: usize, cols: usize, speeds: &[f64]) -> Result<ArrayPlan> {
        check_args(rows, cols, speeds)?;
        check_latency(self.latency)?;
        let order = sorted_desc(speeds);
        let sorted_w: Vec<f64> = order.iter().map(|&i| speeds[i]).collect();
        let mut prefix = vec![0.0; sorted_w.len() + 1];
        for (i, w) in sorted_w.iter().enumerate() {
            prefix[i + 1] = prefix[i] + w;
        }
        let mut s = Search {
            order: &order,
            sorted_w: &sorted_w,
            prefix,
            latency: self.latency,
            base: 2 * (rows + cols),
            scratch: ArrayPlan {
                algorithm: self.name().into(),
                rows,
                cols,
                parts: vec![Rect::default(); speeds.len()],
            },
            best_cost: f64::INFINITY,
            best: Vec::new(),
        };
        let whole = Rect::new(0, 0, rows, cols);
        s.dfs(whole, 0, Axis::longer(&whole), 1, 0);
        ArrayPlan::new(self.name(), rows, cols, s.best)
    }
}

/// State of the depth-first enumeration of Figure 14.
struct Search<'a> {
    /// Part indices by nonincreasing weight.
    order: &'a [usize],
    /// Weights in that order.
    sorted_w: &'a [f64],
    /// Prefix sums of `sorted_w`.
    prefix: Vec<f64>,
    latency: f64,
    /// `2(m + n)`: the outer perimeter.
    base: usize,
    /// Parts of the current path (input order).
    scratch: ArrayPlan,
    best_cost: f64,
    best: Vec<Rect>,
}

impl Search<'_> {
    /// Places sorted parts `start..start + count` stacked across `rect` along
    /// `axis`; returns the sum of their perimeters.
    fn stack(&mut self, rect: &Rect, axis: Axis, start: usize, count: usize) -> usize {
        let (order, parts) = (self.order, &mut self.scratch.parts);
        let mut perim = 0;
        slice(
            rect,
            axis,
            &self.sorted_w[start..start + count],
            |k, piece| {
                perim += piece.perimeter();
                parts[order[start + k]] = piece;
            },
        );
        perim
    }

    fn acost_bound(&self, perim: usize) -> f64 {
        (perim.saturating_sub(self.base) / 2) as f64
    }

    fn leaf(&mut self, perim: usize) {
        let mut cost = self.acost_bound(perim);
        if cost >= self.best_cost {
            return;
        }
        if self.latency != 0.0 {
            cost += self.latency * internal_edges(&self.scratch) as f64;
        }
        if cost < self.best_cost {
            self.best_cost = cost;
            self.best.clone_from(&self.scratch.parts);
        }
    }

    /// Figure 14's `TILE(WeightList[start..], r, m, n, min)` on `rect`, with
    /// `x` the axis the columns are cut along; `perim` sums the perimeters of
    /// the parts placed on the current path.
    fn dfs(&mut self, rect: Rect, start: usize, x: Axis, min: usize, perim: usize) {
        let p = self.order.len();
        let r = p - start;
        if r == 1 {
            self.scratch.parts[self.order[start]] = rect;
            self.leaf(perim + rect.perimeter());
            return;
        }
        let y = x.other();
        let total = self.prefix[p] - self.prefix[start];
        let extent = x.extent(&rect);
        for c in min..=r {
            if c == r {
                // Last column: all remaining parts stacked along Y.
                let per = perim + self.stack(&rect, y, start, r);
                self.leaf(per);
                break;
            }
            let wl = self.prefix[start + c] - self.prefix[start];
            let cut = cut_at(extent, wl, total);
            let (sl, sr) = (piece(&rect, x, 0, cut), piece(&rect, x, cut, extent));
            let rotate = y.extent(&sr) > x.extent(&sr);
            if !(c <= r - c || rotate) {
                continue;
            }
            let per = perim + self.stack(&sl, y, start, c);
            if self.acost_bound(per + sr.perimeter()) >= self.best_cost {
                continue;
            }
            if r - c == 1 {
                self.scratch.parts[self.order[start + c]] = sr;
                self.leaf(per + sr.perimeter());
            } else if rotate {
                self.dfs(sr, start + c, y, 1, per);
            } else {
                self.dfs(sr, start + c, x, c, per);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::array2d::cost::acost;

    #[test]
    fn figure8_shape_is_found() {
        // 000 Figure 8: with m > (a2 + a3 + a4) n, rotating the rest after a1
        // beats Figure 7 (b); with (a3 + a4) < (a2 + a3 + a4)^2 it also beats
        // 7 (c). m = n = 200, a = .65, .25, .05, .05: Acost = m + m(a3 + a4)
        // / (a2 + a3 + a4) + n(a2 + a3 + a4) = 200 + 57.1 + 70 (7 (c): 340).
        let plan = Tile::default()
            .decompose(200, 200, &[0.05, 0.65, 0.05, 0.25])
            .unwrap();
        assert_eq!(acost(&plan), 327);
        assert_eq!(plan.parts[1], Rect::new(0, 0, 200, 130));
    }

    #[test]
    fn single_part_and_bad_latency() {
        let plan = Tile::default().decompose(3, 5, &[2.0]).unwrap();
        assert_eq!(plan.parts[0], Rect::new(0, 0, 3, 5));
        assert!(Tile { latency: f64::NAN }.decompose(3, 5, &[2.0]).is_err());
    }
}
