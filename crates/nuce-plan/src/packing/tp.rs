//! The tight-packing heuristic TP (\[VH94\] §4.1,
//! "Algorithm Packing" with FindBestCorner, UpdateCornerList and
//! FindNewCornerSize, Figure 3), its modified form of Theorems 3–4 and the
//! small-hole removal of the Remark.
//!
//! Grids are packed one by one, in a chosen [`PackingOrder`], into *free
//! corners* `[(x, y), (p, q)]`: the corner at `(x, y)` has room for a grid of
//! up to `p × q` above and to its right (`p`, `q` may be infinite). The grid
//! goes, in either orientation, to the corner that minimises
//! `max(W, R·H)` of the packing after it is placed (`R` the mesh ratio);
//! ties go to the corner that was created first. Placing a grid removes its
//! corner, clips the room of the corners it blocks, and creates two corners
//! (its SE and NW corners) whose room is found by scanning the left and
//! bottom edges of the grids already placed (\[VH94\] XScanList and
//! YScanList). Each step is `O(m)`, the whole packing `O(m²)`.
//!
//! Reconstructions (the extracted text is garbled in places):
//! * the fit tests read `p − w ≥ 0` and `q − h ≥ 0` (a grid may fill a corner
//!   exactly);
//! * FindBestCorner's comment says "try to pack a grid at a free corner in
//!   both orientations", but its lines 4–8 read `if … else if …`, which would
//!   try the turned grid only when the upright one does not fit. We try both
//!   and keep lines 9–16 as printed: orientation 0 if `m1 < m2`, else 1;
//! * UpdateCornerList line 8, lost in extraction, is the mirror image of
//!   lines 6–7: `if xk ≤ xj < xk + w' and yj ≤ yk < yj + qj then qj = yk − yj`;
//! * corners of zero room are not inserted (\[VH94\] removes them in
//!   UpdateCornerList; no grid can use them, so results are unchanged).

use serde::{Deserialize, Serialize};

use super::{check_grids, Grid, Packer, Packing, PackingOrder, Placement};
use crate::error::{Error, Result};

/// Infinite room of a corner.
pub const INF: u64 = u64::MAX;

/// A free corner `[(x, y), (p, q)]` with its creation key: `0` for the initial
/// corner, `2t + 1` and `2t + 2` for the SE and NW corners made by the grid
/// packed at step `t`. CornerList order is key order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Corner {
    /// x of the corner.
    pub x: u64,
    /// y of the corner.
    pub y: u64,
    /// Room along x ([`INF`] when unbounded).
    pub p: u64,
    /// Room along y ([`INF`] when unbounded).
    pub q: u64,
    /// Creation key (tie-break order).
    pub key: u64,
}

/// A placed grid as a half-open box `[x0, x1) × [y0, y1)`: its left edge is
/// \[VH94\] XScanList element, its bottom edge the YScanList element.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Placed {
    /// Left.
    pub x0: u64,
    /// Bottom.
    pub y0: u64,
    /// Right (exclusive).
    pub x1: u64,
    /// Top (exclusive).
    pub y1: u64,
}

impl Placed {
    /// XScanList test (FindNewCornerSize lines 6 and 18): the left edge of this
    /// grid crosses the line `y = cy` at or right of `cx`; returns its x.
    pub fn blocks_right(&self, cx: u64, cy: u64) -> Option<u64> {
        (self.y0 <= cy && cy < self.y1 && cx <= self.x0).then_some(self.x0)
    }
    /// YScanList test (lines 10 and 22): the bottom edge of this grid crosses
    /// the line `x = cx` at or above `cy`; returns its y.
    pub fn blocks_up(&self, cx: u64, cy: u64) -> Option<u64> {
        (self.x0 <= cx && cx < self.x1 && cy <= self.y0).then_some(self.y0)
    }
}

/// The state of the packing after some steps, all in `O(m)` memory.
#[derive(Debug, Clone)]
pub struct TpState {
    ratio: f64,
    modified: bool,
    min_hole: u64,
    width: u64,
    height: u64,
    corners: Vec<Corner>,
    placed: Vec<Placed>,
}

/// The choice of FindBestCorner: which corner and which orientation.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Choice {
    /// The objective `max(W', R·H')` after placing.
    pub score: f64,
    /// Key of the chosen corner.
    pub key: u64,
    /// Orientation (`Orient_i = 1`).
    pub rotated: bool,
}

impl Choice {
    /// True when `self` beats `other`: smaller score, then older corner.
    pub fn better_than(&self, other: &Choice) -> bool {
        self.score < other.score || (self.score == other.score && self.key < other.key)
    }
}

impl Corner {
    /// FindBestCorner lines 3–11 for one corner: the best objective and
    /// orientation for grid `g` here, given the current `width`/`height`,
    /// or `None` when it fits in no allowed orientation. With `modified`, the
    /// orientation rule of Theorem 3 (generalised to ratio `R`): long side
    /// along x if `x < R·y`, along y if `x > R·y`, either if equal.
    pub fn evaluate(
        &self,
        g: Grid,
        width: u64,
        height: u64,
        ratio: f64,
        modified: bool,
    ) -> Option<Choice> {
        let (long_x, long_y) = if modified {
            let ry = ratio * self.y as f64;
            let x = self.x as f64;
            (x <= ry, x >= ry)
        } else {
            (true, true)
        };
        let try_orient = |rotated: bool| -> f64 {
            let (w, h) = g.oriented(rotated);
            let along_x_is_long = w >= h;
            let allowed = (along_x_is_long && long_x) || (w <= h && long_y);
            if !allowed || self.p < w || self.q < h {
                return f64::INFINITY;
            }
            let mx = width.max(self.x + w) as f64;
            let my = height.max(self.y + h) as f64;
            mx.max(ratio * my)
        };
        let m1 = try_orient(false);
        let m2 = try_orient(true);
        let m = m1.min(m2);
        m.is_finite().then_some(Choice {
            score: m,
            key: self.key,
            rotated: m1 >= m2,
        })
    }

    /// UpdateCornerList lines 6–9: shrinks the room of this corner when the
    /// newly placed grid `r` stands in its way. Returns false when the corner
    /// must be removed (no room left, or below `min_hole`).
    pub fn clip(&mut self, r: &Placed, min_hole: u64) -> bool {
        if r.y0 <= self.y && self.y < r.y1 && self.x <= r.x0 && r.x0 < self.x.saturating_add(self.p)
        {
            self.p = r.x0 - self.x;
        }
        if r.x0 <= self.x && self.x < r.x1 && self.y <= r.y0 && r.y0 < self.y.saturating_add(self.q)
        {
            self.q = r.y0 - self.y;
        }
        self.p > 0 && self.q > 0 && self.p >= min_hole && self.q >= min_hole
    }
}

/// FindNewCornerSize for one new corner at `(cx, cy)`: its room from the
/// closest left edge to the right and closest bottom edge above, among the
/// grids `placed` (`O(m)`).
pub fn corner_room<'a>(
    placed: impl IntoIterator<Item = &'a Placed>,
    cx: u64,
    cy: u64,
) -> (u64, u64) {
    let (mut px, mut qy) = (INF, INF);
    for r in placed {
        if let Some(x) = r.blocks_right(cx, cy) {
            px = px.min(x);
        }
        if let Some(y) = r.blocks_up(cx, cy) {
            qy = qy.min(y);
        }
    }
    let p = if px == INF { INF } else { px - cx };
    let q = if qy == INF { INF } else { qy - cy };
    (p, q)
}

impl TpState {
    /// An empty packing with the single corner `[(0, 0), (∞, ∞)]`.
    /// `min_hole` is the Remark's MINHOLESIZE (0 disables the removal).
    pub fn new(ratio: f64, modified: bool, min_hole: u64) -> Self {
        TpState {
            ratio,
            modified,
            min_hole,
            width: 0,
            height: 0,
            corners: vec![Corner {
                x: 0,
                y: 0,
                p: INF,
                q: INF,
                key: 0,
            }],
            placed: Vec::new(),
        }
    }

    /// The free corners (CornerList), in key order.
    pub fn corners(&self) -> &[Corner] {
        &self.corners
    }
    /// The grids placed so far, in packing order.
    pub fn placed(&self) -> &[Placed] {
        &self.placed
    }
    /// Width of the packing so far.
    pub fn width(&self) -> u64 {
        self.width
    }
    /// Height of the packing so far.
    pub fn height(&self) -> u64 {
        self.height
    }

    /// FindBestCorner: the best corner and orientation for `g` (`O(m)`).
    pub fn find_best_corner(&self, g: Grid) -> Option<Choice> {
        let mut best: Option<Choice> = None;
        for c in &self.corners {
            if let Some(ch) = c.evaluate(g, self.width, self.height, self.ratio, self.modified) {
                if best.is_none_or(|b| ch.better_than(&b)) {
                    best = Some(ch);
                }
            }
        }
        best
    }

    /// Packs one grid: FindBestCorner, UpdateCornerList, FindNewCornerSize.
    /// `O(m)` for `m` grids already placed.
    pub fn place(&mut self, g: Grid) -> Result<Placement> {
        let choice = self
            .find_best_corner(g)
            .ok_or_else(|| Error::Solver("TP: no free corner fits the grid".into()))?;
        let pos = self
            .corners
            .iter()
            .position(|c| c.key == choice.key)
            .ok_or_else(|| Error::Solver("TP: lost corner".into()))?;
        let corner = self.corners.remove(pos);
        let (w, h) = g.oriented(choice.rotated);
        let r = Placed {
            x0: corner.x,
            y0: corner.y,
            x1: corner.x + w,
            y1: corner.y + h,
        };
        self.width = self.width.max(r.x1);
        self.height = self.height.max(r.y1);
        let min_hole = self.min_hole;
        self.corners.retain_mut(|c| c.clip(&r, min_hole));
        let step = self.placed.len() as u64;
        for (slot, (cx, cy)) in [(r.x1, r.y0), (r.x0, r.y1)].into_iter().enumerate() {
            let (p, q) = corner_room(&self.placed, cx, cy);
            if p > 0 && q > 0 && p >= min_hole && q >= min_hole {
                self.corners.push(Corner {
                    x: cx,
                    y: cy,
                    p,
                    q,
                    key: 2 * step + 1 + slot as u64,
                });
            }
        }
        self.placed.push(r);
        Ok(Placement {
            x: corner.x,
            y: corner.y,
            rotated: choice.rotated,
        })
    }
}

/// The TP heuristic as a [`Packer`] (\[VH94\] §4.1; `O(m²)`).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct TightPacking {
    /// Order in which grids are packed.
    pub order: PackingOrder,
    /// Use the orientation rule of the modified TP (Theorems 3–4).
    pub modified: bool,
    /// Drop corners smaller than the smallest grid side (the Remark). Such a
    /// corner can hold no grid, so the packing is the same, only faster.
    pub remove_small_holes: bool,
}

impl Default for TightPacking {
    fn default() -> Self {
        TightPacking {
            order: PackingOrder::Area,
            modified: false,
            remove_small_holes: true,
        }
    }
}

impl TightPacking {
    /// The Remark's MINHOLESIZE for these grids (0 when removal is off).
    pub fn min_hole(&self, grids: &[Grid]) -> u64 {
        if self.remove_small_holes {
            grids.iter().map(Grid::short).min().unwrap_or(0)
        } else {
            0
        }
    }
}

impl Packer for TightPacking {
    fn name(&self) -> &'static str {
        "tp"
    }

    fn pack(&self, grids: &[Grid], ratio: f64) -> Result<Packing> {
        check_grids(grids, ratio)?;
        let mut st = TpState::new(ratio, self.modified, self.min_hole(grids));
        let mut placements = vec![Placement::default(); grids.len()];
        for i in self.order.sort(grids) {
            placements[i] = st.place(grids[i])?;
        }
        Ok(Packing {
            algo: self.name().into(),
            width: st.width(),
            height: st.height(),
            placements,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_grids_side_by_side_on_square_mesh() {
        // 4x2 then 4x2: the second goes on top (4x4) rather than right (8x2).
        let g = [Grid::new(4, 2), Grid::new(4, 2)];
        let p = TightPacking::default().pack(&g, 1.0).unwrap();
        p.validate(&g).unwrap();
        assert_eq!((p.width, p.height), (4, 4));
        // With R = 4, max(W, 4H) prefers a wide packing: 8x2 → 8 vs 4x4 → 16.
        let p = TightPacking::default().pack(&g, 4.0).unwrap();
        assert_eq!((p.width, p.height), (8, 2));
    }

    #[test]
    fn small_grid_fills_hole() {
        // 3x3 at origin, 2x1 above? Use a known hole: 4x4, 2x6 (turned 6x2
        // beside would widen), then 2x2 fits a hole without growing the box.
        let g = [Grid::new(4, 4), Grid::new(6, 2), Grid::new(2, 2)];
        let p = TightPacking::default().pack(&g, 1.0).unwrap();
        p.validate(&g).unwrap();
        let total: u64 = g.iter().map(Grid::area).sum();
        assert!(p.width * p.height >= total);
        assert_eq!(p.width.max(p.height), 6);
    }
}
