//! Decompositions of an `rows × cols` array into `p` rectangles whose areas
//! follow the speeds (\[KRW96\], and \[BBLRR01\] §3).
//!
//! A plan is data: [`ArrayPlan`] lists one [`Rect`] per part, **in the order of
//! the speeds given** (part `i` belongs to speed `i`, whatever order an
//! algorithm works in internally). Parts may be empty (a rank with a tiny
//! speed, or more ranks than rows); every cell has exactly one owner.
//!
//! Every algorithm is a small struct implementing [`ArrayDecomposer`]. A
//! cost per cell (work that is not uniform in space) is planned by
//! [`WeightedBisection2d`] instead, which balances `Σ cost / speed`.

use serde::{Deserialize, Serialize};

use crate::boxpairs::Span;
use crate::error::{Error, Result};
use crate::tiling::check_disjoint;

pub mod best;
mod checks;
pub mod column;
pub mod columns;
pub mod cost;
pub mod guillotine;
pub mod hier;
pub mod kl;
pub mod overlay;
pub mod pt;
pub mod rb;
pub mod registry;
pub mod slices;
pub mod tile;
pub mod weighted;
pub mod xy;

pub use best::Best;
pub use checks::{check_args, MAX_CELLS};
pub use column::{acost_lower_bound, ColumnDp};
pub use columns::ColumnLayout;
pub use hier::Hierarchical;
pub use kl::KalinovLastovetsky;
pub use rb::{RecursiveBisection, RecursiveBisection2, RecursiveBisection3};
pub use registry::{all_decomposers, decomposer_by_name};
pub use slices::Slices;
pub use tile::Tile;
pub use weighted::WeightedBisection2d;
pub use xy::{Xy, Xy2};

/// A rectangle of cells: top-left `(row, col)`, extent `rows × cols`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
pub struct Rect {
    /// First row (0-based).
    pub row: usize,
    /// First column (0-based).
    pub col: usize,
    /// Number of rows (0 for an empty part).
    pub rows: usize,
    /// Number of columns (0 for an empty part).
    pub cols: usize,
}

impl Rect {
    /// A new rectangle.
    pub const fn new(row: usize, col: usize, rows: usize, cols: usize) -> Self {
        Rect {
            row,
            col,
            rows,
            cols,
        }
    }
    /// Number of cells.
    pub const fn area(&self) -> usize {
        self.rows * self.cols
    }
    /// True when the rectangle holds no cell.
    pub const fn is_empty(&self) -> bool {
        self.rows == 0 || self.cols == 0
    }
    /// One past the last row.
    pub const fn row_end(&self) -> usize {
        self.row + self.rows
    }
    /// One past the last column.
    pub const fn col_end(&self) -> usize {
        self.col + self.cols
    }
    /// True when cell `(r, c)` lies inside.
    pub const fn contains(&self, r: usize, c: usize) -> bool {
        r >= self.row && r < self.row_end() && c >= self.col && c < self.col_end()
    }
    /// The common cells of two rectangles, `None` when they share none.
    pub fn intersect(&self, other: &Rect) -> Option<Rect> {
        let r0 = self.row.max(other.row);
        let r1 = self.row_end().min(other.row_end());
        let c0 = self.col.max(other.col);
        let c1 = self.col_end().min(other.col_end());
        (r0 < r1 && c0 < c1).then(|| Rect::new(r0, c0, r1 - r0, c1 - c0))
    }
    /// Perimeter in cell edges (0 for an empty rectangle).
    pub const fn perimeter(&self) -> usize {
        if self.is_empty() {
            0
        } else {
            2 * (self.rows + self.cols)
        }
    }
}

/// A decomposition of a `rows × cols` array into rectangles, one per part.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ArrayPlan {
    /// Name of the algorithm that produced the plan.
    pub algorithm: String,
    /// Global number of rows.
    pub rows: usize,
    /// Global number of columns.
    pub cols: usize,
    /// One rectangle per part, in input (speed) order. Empty parts are allowed.
    pub parts: Vec<Rect>,
}

impl ArrayPlan {
    /// Of the four mirror images of this plan (flipped along rows, columns,
    /// both), the one that keeps the most cells with their owners in
    /// `current` (the plan itself on a tie): the 2D case of
    /// [`crate::array3d::GridPlan3::closest_mirror`]. A plan for another
    /// shape or part count comes back unchanged.
    pub fn closest_mirror(self, current: &ArrayPlan) -> Result<ArrayPlan> {
        use crate::array3d::GridPlan3;
        let as3 = |p: &ArrayPlan| GridPlan3 {
            algorithm: p.algorithm.clone(),
            shape: (p.rows, p.cols, 1),
            boxes: p.parts.iter().map(weighted::box_of).collect(),
        };
        let kept = as3(&self).closest_mirror(&as3(current));
        weighted::array_plan_of(&kept)
    }

    /// Builds a plan and checks that it tiles the array ([`ArrayPlan::validate`]).
    pub fn new(
        algorithm: impl Into<String>,
        rows: usize,
        cols: usize,
        parts: Vec<Rect>,
    ) -> Result<Self> {
        let plan = ArrayPlan {
            algorithm: algorithm.into(),
            rows,
            cols,
            parts,
        };
        plan.validate()?;
        Ok(plan)
    }

    /// Number of parts.
    pub fn len(&self) -> usize {
        self.parts.len()
    }

    /// True when the plan has no part.
    pub fn is_empty(&self) -> bool {
        self.parts.is_empty()
    }

    /// Number of cells of each part, in part order (of a valid plan).
    pub fn areas(&self) -> Vec<usize> {
        self.parts.iter().map(Rect::area).collect()
    }

    /// The part owning cell `(r, c)`, `None` outside the array. O(p).
    pub fn owner_of(&self, r: usize, c: usize) -> Option<usize> {
        self.parts.iter().position(|p| p.contains(r, c))
    }

    /// Checks that the parts tile the array exactly: every non-empty part lies
    /// inside, parts are pairwise disjoint and their areas sum to `rows × cols`.
    /// Disjointness is checked exactly by the parts' corners (their signed
    /// corners add up to the array's exactly when they tile it): O(p log p).
    pub fn validate(&self) -> Result<()> {
        if self.rows == 0 || self.cols == 0 {
            return Err(Error::Empty(format!(
                "array of {}x{} cells",
                self.rows, self.cols
            )));
        }
        if self.parts.is_empty() {
            return Err(Error::InvalidPlan("plan has no parts".into()));
        }
        let mut total = 0usize;
        for (i, p) in self.parts.iter().enumerate() {
            let outside = |start: usize, len: usize, max: usize| {
                start.checked_add(len).is_none_or(|e| e > max)
            };
            if !p.is_empty()
                && (outside(p.row, p.rows, self.rows) || outside(p.col, p.cols, self.cols))
            {
                return Err(Error::InvalidPlan(format!(
                    "part {i} {p:?} lies outside the {}x{} array",
                    self.rows, self.cols
                )));
            }
            total = total.saturating_add(p.rows.saturating_mul(p.cols));
        }
        let cells = self.rows.checked_mul(self.cols).ok_or_else(|| {
            Error::InvalidPlan(format!("{}x{} cells overflow", self.rows, self.cols))
        })?;
        if total != cells {
            return Err(Error::InvalidPlan(format!(
                "parts cover {total} cells, the array has {}",
                self.rows * self.cols
            )));
        }
        // Disjointness, exactly: by the corners, the pairs name an overlap.
        let spans: Vec<Span<2>> = self
            .parts
            .iter()
            .map(|p| {
                (
                    [p.row, p.col],
                    [p.row.saturating_add(p.rows), p.col.saturating_add(p.cols)],
                )
            })
            .collect();
        check_disjoint(&spans, [self.rows, self.cols])
    }

    /// Checks `speeds` for this plan: valid ([`crate::check_speeds`]) and
    /// one per part ([`Error::ShapeMismatch`] otherwise).
    pub fn check_speeds(&self, speeds: &[f64]) -> Result<()> {
        crate::check_speeds(speeds)?;
        if speeds.len() != self.parts.len() {
            return Err(Error::ShapeMismatch(format!(
                "{} speeds for a plan of {} parts",
                speeds.len(),
                self.parts.len()
            )));
        }
        Ok(())
    }

    /// Relative load imbalance: `max_i (area_i / speed_i) / (cells / Σ speed) - 1`.
    /// 0 means every part holds exactly its share.
    pub fn imbalance(&self, speeds: &[f64]) -> Result<f64> {
        self.check_speeds(speeds)?;
        // Speeds divided by their maximum: the sum cannot overflow.
        let speeds = column::rescaled(speeds);
        let total: f64 = speeds.iter().sum();
        let ideal = self.rows as f64 * self.cols as f64 / total;
        let worst = self
            .parts
            .iter()
            .zip(&speeds)
            .map(|(p, s)| p.rows as f64 * p.cols as f64 / s)
            .fold(0.0, f64::max);
        Ok(worst / ideal - 1.0)
    }
}

/// An algorithm that decomposes an array into rectangles proportional to speeds.
///
/// Implementations must return a plan that passes [`ArrayPlan::validate`],
/// with `speeds.len()` parts in input order, and must reject invalid speeds
/// with [`Error::InvalidSpeed`] (see [`crate::check_speeds`]).
pub trait ArrayDecomposer: Send + Sync {
    /// Short name (as used by `nuce plan array --algo`).
    fn name(&self) -> &'static str;
    /// Decomposes a `rows × cols` array for the given speeds.
    fn decompose(&self, rows: usize, cols: usize, speeds: &[f64]) -> Result<ArrayPlan>;
}

/// A boxed decomposer (e.g. from [`registry::decomposer_with_latency`]) is a
/// decomposer.
impl<D: ArrayDecomposer + ?Sized> ArrayDecomposer for Box<D> {
    fn name(&self) -> &'static str {
        (**self).name()
    }
    fn decompose(&self, rows: usize, cols: usize, speeds: &[f64]) -> Result<ArrayPlan> {
        (**self).decompose(rows, cols, speeds)
    }
}

/// Splits `total` integer units into `weights.len()` parts proportional to the
/// weights, by largest remainder: parts sum to `total` exactly and each differs
/// from its real share by less than one (up to the `f64` rounding of the
/// shares when `total` exceeds `2^53`).
///
/// Weights are scaled by their maximum first, so huge finite values cannot
/// overflow the sum; non-finite or non-positive weights count as 0 (all
/// zero: equal shares). Sums are taken in `u128` and corrections are made
/// in bulk, so any `total` up to `usize::MAX` costs `O(p log p)`.
pub fn apportion(total: usize, weights: &[f64]) -> Vec<usize> {
    if weights.is_empty() {
        return Vec::new();
    }
    let clean = |w: f64| if w.is_finite() && w > 0.0 { w } else { 0.0 };
    let max = weights.iter().map(|&w| clean(w)).fold(0.0, f64::max);
    let scaled: Vec<f64> = if max > 0.0 {
        weights.iter().map(|&w| clean(w) / max).collect()
    } else {
        vec![1.0; weights.len()]
    };
    let sum: f64 = scaled.iter().sum();
    let shares: Vec<f64> = scaled.iter().map(|w| total as f64 * w / sum).collect();
    let mut out: Vec<usize> = shares
        .iter()
        .map(|s| (s.floor() as usize).min(total))
        .collect();
    let assigned = |out: &[usize]| out.iter().map(|&c| c as u128).sum::<u128>();
    // Floating-point error could make the floors overshoot: take the excess
    // back from the largest parts, in bulk.
    let mut excess = assigned(&out).saturating_sub(total as u128);
    if excess > 0 {
        let mut by_size: Vec<usize> = (0..out.len()).collect();
        // Largest first, the later index on ties (as `max_by_key` picks).
        by_size.sort_by(|&a, &b| out[b].cmp(&out[a]).then(b.cmp(&a)));
        for i in by_size {
            let d = excess.min(out[i] as u128);
            out[i] -= d as usize;
            excess -= d;
        }
    }
    // What is left (less than p, plus rounding above 2^53) goes to the
    // largest remainders: first an equal number each, then one more each.
    let left = total as u128 - assigned(&out);
    let p = out.len() as u128;
    let (each, mut extra) = ((left / p) as usize, (left % p) as usize);
    let mut order: Vec<usize> = (0..weights.len()).collect();
    order.sort_by(|&a, &b| {
        let ra = shares[a] - shares[a].floor();
        let rb = shares[b] - shares[b].floor();
        rb.total_cmp(&ra).then(a.cmp(&b))
    });
    for &i in &order {
        out[i] += each;
        if extra > 0 {
            out[i] += 1;
            extra -= 1;
        }
    }
    out
}

/// Cells whose owner differs between two plans of the same array — the
/// minimum any remap must move. O(p).
pub fn cells_changing_owner(old: &ArrayPlan, new: &ArrayPlan) -> usize {
    let mut stay = 0;
    for (o, n) in old.parts.iter().zip(&new.parts) {
        stay += o.intersect(n).map_or(0, |r| r.area());
    }
    old.rows * old.cols - stay
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_closest_mirror_keeps_the_most_cells() {
        // 8 × 6 split 6 : 2 rows after an even split: as made, part 0 keeps
        // rows 0..4 and part 1 rows 6..8 (36 cells); flipped along the rows,
        // part 0 keeps rows 2..4 and part 1 nothing (12). From either, the
        // closest mirror keeps 36 (brute force over the images).
        let even = ArrayPlan::new(
            "t",
            8,
            6,
            vec![Rect::new(0, 0, 4, 6), Rect::new(4, 0, 4, 6)],
        )
        .unwrap();
        let made = ArrayPlan::new(
            "t",
            8,
            6,
            vec![Rect::new(0, 0, 6, 6), Rect::new(6, 0, 2, 6)],
        )
        .unwrap();
        let kept = |p: &ArrayPlan| 8 * 6 - cells_changing_owner(&even, p);
        let flip = |p: &ArrayPlan| {
            let parts = p
                .parts
                .iter()
                .map(|r| Rect::new(p.rows - r.row_end(), r.col, r.rows, r.cols))
                .collect();
            ArrayPlan::new("t", p.rows, p.cols, parts).unwrap()
        };
        let flipped = flip(&made);
        assert_eq!((kept(&made), kept(&flipped)), (36, 12));
        for start in [made.clone(), flipped] {
            let best = start.closest_mirror(&even).unwrap();
            assert!(best.validate().is_ok());
            assert_eq!(best.areas(), made.areas());
            assert_eq!(kept(&best), 36, "{best:?}");
        }
    }

    #[test]
    fn apportion_sums_exactly() {
        assert_eq!(apportion(10, &[1.0, 1.0, 1.0]).iter().sum::<usize>(), 10);
        assert_eq!(apportion(7, &[3.0, 1.0]), vec![5, 2]);
        assert_eq!(apportion(0, &[1.0, 2.0]), vec![0, 0]);
    }

    #[test]
    fn apportion_of_huge_totals_is_exact_and_fast() {
        // Sums of counts near usize::MAX wrapped, and the correction loop
        // then ran one unit at a time (issue 12: `--rows 2^64-1` ran > 60 s).
        for total in [usize::MAX, usize::MAX - 7, 1 << 60] {
            let out = apportion(total, &[1.0, 2.0, 3.0, 1e-300]);
            assert_eq!(out.iter().map(|&c| c as u128).sum::<u128>(), total as u128);
            assert!(out[2] > out[1] && out[1] > out[0]);
        }
    }

    #[test]
    fn arrays_beyond_2_pow_53_cells_are_rejected_at_once() {
        let t = std::time::Instant::now();
        let mut algos = registry::all_decomposers();
        algos.push(Box::new(Best::default()));
        for d in &algos {
            for (rows, cols) in [(usize::MAX, 1), (1, usize::MAX), (1 << 32, 1 << 32)] {
                let e = d.decompose(rows, cols, &[1.0, 2.0, 3.0]).unwrap_err();
                assert!(matches!(e, Error::InvalidInput(_)), "{}: {e}", d.name());
            }
            // At the limit every algorithm tiles the array.
            let plan = d.decompose(MAX_CELLS, 1, &[1.0, 2.0, 3.0]).unwrap();
            assert_eq!(plan.areas().iter().sum::<usize>(), MAX_CELLS);
        }
        assert!(t.elapsed().as_secs_f64() < 10.0, "{:?}", t.elapsed());
    }

    #[test]
    fn validate_catches_overlap_and_gaps() {
        let ok = ArrayPlan::new(
            "t",
            2,
            2,
            vec![Rect::new(0, 0, 2, 1), Rect::new(0, 1, 2, 1)],
        );
        assert!(ok.is_ok());
        let overlap = ArrayPlan::new(
            "t",
            2,
            2,
            vec![Rect::new(0, 0, 2, 2), Rect::new(0, 1, 1, 1)],
        );
        assert!(overlap.is_err());
        let gap = ArrayPlan::new("t", 2, 2, vec![Rect::new(0, 0, 2, 1)]);
        assert!(gap.is_err());
        let outside = ArrayPlan::new(
            "t",
            2,
            2,
            vec![Rect::new(0, 0, 2, 1), Rect::new(0, 2, 2, 1)],
        );
        assert!(outside.is_err());
    }

    #[test]
    fn owner_and_empty_parts() {
        let p = ArrayPlan::new(
            "t",
            3,
            3,
            vec![
                Rect::new(0, 0, 3, 2),
                Rect::default(),
                Rect::new(0, 2, 3, 1),
            ],
        )
        .unwrap();
        assert_eq!(p.owner_of(1, 1), Some(0));
        assert_eq!(p.owner_of(2, 2), Some(2));
        assert_eq!(p.owner_of(3, 0), None);
    }
}
