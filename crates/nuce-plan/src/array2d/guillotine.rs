//! Shared pieces of the guillotine-cut decompositions of
//! \[KRW96\] §6 (XY, XY2, TILE, RecursiveBisection 1/2/3):
//! the weight order all of them work in and integer slicing of a rectangle.
//! (Argument checks and the cost a search minimises are shared with the
//! column DP: [`super::check_args`] and `checks::checked_speeds`, [`super::cost::plan_cost`].)
//!
//! **Rounding.** [`slice()`] cuts a rectangle into consecutive pieces by
//! *cumulative rounding*: the `k`-th cut lies at `round(extent · W_k / W)` with
//! `W_k` the prefix weight. Extents sum exactly, each piece differs from its
//! real share by at most one cell, and cuts that coincide in the continuous
//! decomposition coincide after rounding (so corner points, hence internal
//! edge counts, are not disturbed by rounding noise).

use super::Rect;

/// Which extent of a rectangle a cut divides.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Axis {
    /// Pieces side by side, left to right, each of full height (vertical cuts,
    /// \[KRW96\]'s "partitioning along X").
    Cols,
    /// Pieces stacked top to bottom, each of full width (horizontal cuts).
    Rows,
}

impl Axis {
    /// The other axis.
    pub const fn other(self) -> Axis {
        match self {
            Axis::Cols => Axis::Rows,
            Axis::Rows => Axis::Cols,
        }
    }

    /// The axis of the longer side of `rect` (columns on ties, \[KRW96\]'s
    /// convention `m ≤ n` with X the longer axis).
    pub const fn longer(rect: &Rect) -> Axis {
        if rect.cols >= rect.rows {
            Axis::Cols
        } else {
            Axis::Rows
        }
    }

    /// Extent of `rect` along this axis (the length the cuts divide).
    pub const fn extent(self, rect: &Rect) -> usize {
        match self {
            Axis::Cols => rect.cols,
            Axis::Rows => rect.rows,
        }
    }
}

/// The sub-rectangle of `rect` between offsets `from` and `to` along `axis`;
/// [`Rect::default`] when empty.
pub fn piece(rect: &Rect, axis: Axis, from: usize, to: usize) -> Rect {
    let r = match axis {
        Axis::Cols => Rect::new(rect.row, rect.col + from, rect.rows, to - from),
        Axis::Rows => Rect::new(rect.row + from, rect.col, to - from, rect.cols),
    };
    if r.is_empty() {
        Rect::default()
    } else {
        r
    }
}

/// Offset of the cut after prefix weight `prefix` of `total` along an extent
/// (cumulative rounding, clamped to `[0, extent]`). O(1).
pub fn cut_at(extent: usize, prefix: f64, total: f64) -> usize {
    if total <= 0.0 || extent == 0 {
        return 0;
    }
    let x = (extent as f64 * prefix / total).round();
    if x <= 0.0 {
        0
    } else {
        (x as usize).min(extent)
    }
}

/// Cuts `rect` along `axis` into `weights.len()` consecutive pieces whose
/// extents follow the weights (cumulative rounding, see the module doc) and
/// calls `place(k, piece)` for each. O(k).
pub fn slice(rect: &Rect, axis: Axis, weights: &[f64], mut place: impl FnMut(usize, Rect)) {
    let total: f64 = weights.iter().sum();
    let extent = axis.extent(rect);
    let (mut prefix, mut from) = (0.0, 0);
    for (k, w) in weights.iter().enumerate() {
        prefix += w;
        let to = if k + 1 == weights.len() {
            extent
        } else {
            cut_at(extent, prefix, total).max(from)
        };
        place(k, piece(rect, axis, from, to));
        from = to;
    }
}

/// Part indices sorted by nonincreasing speed (ties by index): the
/// `WeightList` order of \[KRW96\] Figures 13–15. O(p log p).
pub fn sorted_desc(speeds: &[f64]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..speeds.len()).collect();
    // A total order (ties by index): the unstable sort gives the stable one.
    order.sort_unstable_by(|&a, &b| speeds[b].total_cmp(&speeds[a]).then(a.cmp(&b)));
    order
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slice_is_exact_and_close() {
        let r = Rect::new(2, 3, 10, 7);
        let mut got = Vec::new();
        slice(&r, Axis::Cols, &[1.0, 2.0, 0.5, 3.5], |k, p| {
            got.push((k, p))
        });
        let widths: Vec<usize> = got.iter().map(|(_, p)| p.cols).collect();
        assert_eq!(widths.iter().sum::<usize>(), 7);
        for (w, share) in widths.iter().zip([1.0, 2.0, 0.5, 3.5]) {
            assert!((*w as f64 - share).abs() <= 1.0);
        }
        assert!(got.iter().all(|(_, p)| p.is_empty() || p.rows == 10));
        let mut rows = 0;
        slice(&r, Axis::Rows, &[1.0; 3], |_, p| rows += p.rows);
        assert_eq!(rows, 10);
    }

    #[test]
    fn sorted_order() {
        assert_eq!(sorted_desc(&[1.0, 3.0, 2.0, 3.0]), vec![1, 3, 2, 0]);
    }
}
