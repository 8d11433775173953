//! TILE decomposition (\[KRW96\] §6.2, Figure 14).
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
//! (the first cheapest in \[KRW96\]'s order).
//!
//! Complexity: `Ω(pt(p))` candidates when no rotation happens, `O(2^{p−1})`
//! candidates in the worst case (§6.2), each O(p) to build (plus
//! O(p log p) for the internal edges with a latency) — but the search
//! spends at most [`TILE_MAX_WORK`] steps: when that budget runs out it
//! stops, and the cheaper of the best decomposition found so far and the
//! column DP's plan ([`ColumnDp`]) is returned, named `tile:capped` or
//! `tile:column`. Below the budget the result is the exhaustive search's.

use super::checks::{check_latency, checked_speeds};
use super::cost::plan_cost;
use super::guillotine::{cut_at, piece, slice, sorted_desc, Axis};
use super::{ArrayDecomposer, ArrayPlan, ColumnDp, Rect};
use crate::error::Result;

/// Most steps one TILE search spends: 2^26, about a second. A step is a
/// call of the recursion of Figure 14, a column tried, a part placed or a
/// complete decomposition costed. 40 parts on 1000 × 1000 ran for over
/// 40 s without it, 10 000 parts on 1 × 1000 for minutes (each call tries
/// up to `p` columns of up to `p` parts).
pub const TILE_MAX_WORK: usize = 1 << 26;

/// TILE (\[KRW96\] §6.2, Figure 14): XY search that switches axes whenever the
/// remaining subarray becomes taller than wide.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Tile {
    /// Latency per internal edge (\[KRW96\] §5); 0 selects by Acost alone.
    pub latency: f64,
}

impl ArrayDecomposer for Tile {
    fn name(&self) -> &'static str {
        "tile"
    }

    fn decompose(&self, rows: usize, cols: usize, speeds: &[f64]) -> Result<ArrayPlan> {
        Ok(self.search(rows, cols, speeds)?.1)
    }
}

impl Tile {
    /// The chosen plan and its cost (Acost, or `Acost + latency × internal
    /// edges`), as [`super::cost::plan_cost`] computes it.
    pub fn search(&self, rows: usize, cols: usize, speeds: &[f64]) -> Result<(f64, ArrayPlan)> {
        self.run(rows, cols, speeds, true)
    }

    /// The search, with or without branch-and-bound pruning (the plan is the
    /// same; `prune = false` is \[KRW96\]'s exhaustive enumeration).
    fn run(
        &self,
        rows: usize,
        cols: usize,
        speeds: &[f64],
        prune: bool,
    ) -> Result<(f64, ArrayPlan)> {
        // Speeds divided by their maximum: sums cannot overflow.
        let speeds = &checked_speeds(rows, cols, speeds)?;
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
            rows,
            cols,
            parts: vec![Rect::default(); speeds.len()],
            corners: Vec::new(),
            log: Vec::new(),
            nonempty: 0,
            prune,
            best_cost: f64::INFINITY,
            best: Vec::new(),
            work: 0,
        };
        let whole = Rect::new(0, 0, rows, cols);
        s.dfs(whole, 0, Axis::longer(&whole), 1, 0);
        if s.work <= TILE_MAX_WORK {
            return Ok((
                s.best_cost,
                ArrayPlan::new(self.name(), rows, cols, s.best)?,
            ));
        }
        // The budget ran out: the column DP's plan if it is cheaper.
        let dp = ColumnDp::with_latency(self.latency).decompose(rows, cols, speeds)?;
        let dp_cost = plan_cost(&dp, self.latency);
        if s.best.is_empty() || dp_cost < s.best_cost {
            let plan = ArrayPlan::new("tile:column", rows, cols, dp.parts)?;
            return Ok((dp_cost, plan));
        }
        let plan = ArrayPlan::new("tile:capped", rows, cols, s.best)?;
        Ok((s.best_cost, plan))
    }
}

/// State of the depth-first enumeration of Figure 14. Besides the parts of
/// the current path it keeps, incrementally and with undo on backtracking,
/// the multiset of interior corner points and the number of non-empty parts,
/// so a leaf's internal edges `V_i + p − 1` (\[KRW96\] §5) cost O(1) and a branch's
/// lower bound `Acost bound + latency × (V_i so far + parts so far − 1)` can
/// prune it (corners and parts are only ever added along a path). Corners
/// are kept only with a nonzero latency.
struct Search<'a> {
    /// Part indices by nonincreasing weight.
    order: &'a [usize],
    /// Weights in that order.
    sorted_w: &'a [f64],
    /// Prefix sums of `sorted_w`.
    prefix: Vec<f64>,
    latency: f64,
    rows: usize,
    cols: usize,
    /// Parts of the current path (input order).
    parts: Vec<Rect>,
    /// Interior corner points of the placed parts, with multiplicities.
    corners: Vec<((usize, usize), u32)>,
    /// Corner insertions of the current path, for undo.
    log: Vec<(usize, usize)>,
    /// Non-empty parts placed on the current path.
    nonempty: usize,
    /// Skip branches whose lower bound cannot beat the best found.
    prune: bool,
    best_cost: f64,
    best: Vec<Rect>,
    /// Steps spent; the search stops once they exceed [`TILE_MAX_WORK`].
    work: usize,
}

/// Undo point of a [`Search`]: lengths to roll back to.
#[derive(Clone, Copy)]
struct Mark {
    log: usize,
    nonempty: usize,
}

impl Search<'_> {
    fn mark(&self) -> Mark {
        Mark {
            log: self.log.len(),
            nonempty: self.nonempty,
        }
    }

    fn undo(&mut self, m: Mark) {
        while self.log.len() > m.log {
            let Some(pt) = self.log.pop() else { break };
            if let Some(k) = self.corners.iter().position(|(q, _)| *q == pt) {
                self.corners[k].1 -= 1;
                if self.corners[k].1 == 0 {
                    self.corners.swap_remove(k);
                }
            }
        }
        self.nonempty = m.nonempty;
    }

    /// Places part `idx` (input index) at `rect`, recording its corners.
    fn place(&mut self, idx: usize, rect: Rect) {
        self.parts[idx] = rect;
        if rect.is_empty() {
            return;
        }
        self.nonempty += 1;
        if self.latency == 0.0 {
            return; // Acost alone: no corner bookkeeping.
        }
        for pt in [
            (rect.row, rect.col),
            (rect.row, rect.col_end()),
            (rect.row_end(), rect.col),
            (rect.row_end(), rect.col_end()),
        ] {
            if pt.0 > 0 && pt.0 < self.rows && pt.1 > 0 && pt.1 < self.cols {
                match self.corners.iter_mut().find(|(q, _)| *q == pt) {
                    Some(entry) => entry.1 += 1,
                    None => self.corners.push((pt, 1)),
                }
                self.log.push(pt);
            }
        }
    }

    /// Places sorted parts `start..start + count` stacked across `rect` along
    /// `axis`; returns the sum of their perimeters.
    fn stack(&mut self, rect: &Rect, axis: Axis, start: usize, count: usize) -> usize {
        let (order, w) = (self.order, self.sorted_w);
        self.work += count;
        let mut perim = 0;
        slice(rect, axis, &w[start..start + count], |k, piece| {
            perim += piece.perimeter();
            self.place(order[start + k], piece);
        });
        perim
    }

    /// Lower bound of the cost of any completion: `perim` bounds the final
    /// sum of perimeters, `more` parts are still to be placed non-empty.
    fn bound(&self, perim: usize, more: usize) -> f64 {
        let acost = perim.saturating_sub(2 * (self.rows + self.cols)) / 2;
        if self.latency == 0.0 {
            return acost as f64;
        }
        let parts = self.nonempty + more;
        let edges = (self.corners.len() + parts).saturating_sub(1);
        acost as f64 + self.latency * edges as f64
    }

    /// A complete decomposition: its cost is exactly [`Self::bound`].
    fn leaf(&mut self, perim: usize) {
        self.work += 1;
        let cost = self.bound(perim, 0);
        if cost < self.best_cost {
            self.best_cost = cost;
            self.best.clone_from(&self.parts);
            self.work += self.parts.len();
        }
    }

    /// Figure 14's `TILE(WeightList[start..], r, m, n, min)` on `rect`, with
    /// `x` the axis the columns are cut along; `perim` sums the perimeters of
    /// the parts placed on the current path.
    fn dfs(&mut self, rect: Rect, start: usize, x: Axis, min: usize, perim: usize) {
        self.work += 1;
        if self.work > TILE_MAX_WORK {
            return;
        }
        let p = self.order.len();
        let r = p - start;
        let m0 = self.mark();
        if r == 1 {
            self.place(self.order[start], rect);
            self.leaf(perim + rect.perimeter());
            self.undo(m0);
            return;
        }
        let y = x.other();
        let total = self.prefix[p] - self.prefix[start];
        let extent = x.extent(&rect);
        for c in min..=r {
            self.work += 1;
            if c == r {
                // Last column: all remaining parts stacked along Y.
                let per = perim + self.stack(&rect, y, start, r);
                self.leaf(per);
                self.undo(m0);
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
            let rest = usize::from(!sr.is_empty());
            if !self.prune || self.bound(per + sr.perimeter(), rest) < self.best_cost {
                if r - c == 1 {
                    self.place(self.order[start + c], sr);
                    self.leaf(per + sr.perimeter());
                } else if rotate {
                    self.dfs(sr, start + c, y, 1, per);
                } else {
                    self.dfs(sr, start + c, x, c, per);
                }
            }
            self.undo(m0);
            if self.work > TILE_MAX_WORK {
                break;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::array2d::cost::acost;

    #[test]
    fn figure8_shape_is_found() {
        // [KRW96] Figure 8: with m > (a2 + a3 + a4) n, rotating the rest after a1
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
    fn incremental_cost_is_the_objective() {
        use crate::array2d::cost::plan_cost as objective;
        let speeds = [3.0, 1.0, 2.5, 1.2, 0.7, 2.0, 1.1];
        for latency in [0.0, 10.0, 1000.0] {
            for (m, n) in [(100, 100), (50, 300), (300, 40), (3, 4)] {
                let (cost, plan) = Tile { latency }.search(m, n, &speeds).unwrap();
                assert_eq!(cost, objective(&plan, latency), "{m}x{n} L={latency}");
            }
        }
    }

    #[test]
    fn pruning_keeps_the_exhaustive_choice() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(5);
        for _ in 0..60 {
            let p = rng.gen_range(1..10);
            let speeds: Vec<f64> = (0..p).map(|_| rng.gen_range(1.0..8.0)).collect();
            let (m, n) = (rng.gen_range(1..400), rng.gen_range(1..400));
            let latency = [0.0, 7.0, 1000.0][rng.gen_range(0..3)];
            let t = Tile { latency };
            let fast = t.run(m, n, &speeds, true).unwrap();
            let full = t.run(m, n, &speeds, false).unwrap();
            assert_eq!(fast, full, "{m}x{n} {speeds:?} L={latency}");
        }
    }

    #[test]
    fn the_search_is_capped() {
        // Issue 12: 40 parts on 1000 x 1000 ran for over 40 s.
        let speeds: Vec<f64> = (0..40).map(|i| 1.0 + (i % 7) as f64 * 0.37).collect();
        let t = std::time::Instant::now();
        let (cost, plan) = Tile::default().search(1000, 1000, &speeds).unwrap();
        assert!(t.elapsed().as_secs_f64() < 20.0, "{:?}", t.elapsed());
        assert!(plan.algorithm.starts_with("tile:"), "{}", plan.algorithm);
        // Never worse than the column DP it falls back on.
        let dp = ColumnDp::default().decompose(1000, 1000, &speeds).unwrap();
        assert!(cost <= plan_cost(&dp, 0.0));
        assert_eq!(cost, plan_cost(&plan, 0.0));
    }

    #[test]
    fn single_part_and_bad_latency() {
        let plan = Tile::default().decompose(3, 5, &[2.0]).unwrap();
        assert_eq!(plan.parts[0], Rect::new(0, 0, 3, 5));
        assert!(Tile { latency: f64::NAN }.decompose(3, 5, &[2.0]).is_err());
    }
}
