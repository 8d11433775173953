//! Recursive bisection decompositions (seed `000_3b7f5c9969a269e5.txt` §6.3).
//!
//! [`RecursiveBisection2`]: cut the current rectangle across its longer side,
//! splitting the (input-ordered) list of parts into two prefix groups whose
//! weight sums are nearest to half, the cut placed in proportion to the two
//! sums and rounded to whole cells. O(p log p) for p parts.

use super::{check_args, ArrayDecomposer, ArrayPlan, Rect};
use crate::error::Result;

/// RB2: bisect along the longer side, weights split near half (000 §6.3).
#[derive(Debug, Clone, Copy, Default)]
pub struct RecursiveBisection2;

impl ArrayDecomposer for RecursiveBisection2 {
    fn name(&self) -> &'static str {
        "rb2"
    }

    fn decompose(&self, rows: usize, cols: usize, speeds: &[f64]) -> Result<ArrayPlan> {
        check_args(rows, cols, speeds)?;
        let mut parts = vec![Rect::default(); speeds.len()];
        let idx: Vec<usize> = (0..speeds.len()).collect();
        bisect(Rect::new(0, 0, rows, cols), &idx, speeds, &mut parts);
        ArrayPlan::new(self.name(), rows, cols, parts)
    }
}

fn bisect(rect: Rect, idx: &[usize], w: &[f64], out: &mut [Rect]) {
    if idx.len() == 1 {
        out[idx[0]] = if rect.is_empty() {
            Rect::default()
        } else {
            rect
        };
        return;
    }
    if rect.is_empty() {
        idx.iter().for_each(|&i| out[i] = Rect::default());
        return;
    }
    let total: f64 = idx.iter().map(|&i| w[i]).sum();
    // Prefix split whose weight is nearest to half.
    let (mut acc, mut best, mut k) = (0.0, f64::INFINITY, 1);
    for (j, &i) in idx[..idx.len() - 1].iter().enumerate() {
        acc += w[i];
        let d = (acc - total / 2.0).abs();
        if d < best {
            best = d;
            k = j + 1;
        }
    }
    let left: f64 = idx[..k].iter().map(|&i| w[i]).sum();
    let frac = left / total;
    let (a, b) = if rect.rows >= rect.cols {
        let cut = ((rect.rows as f64) * frac).round() as usize;
        (
            Rect::new(rect.row, rect.col, cut, rect.cols),
            Rect::new(rect.row + cut, rect.col, rect.rows - cut, rect.cols),
        )
    } else {
        let cut = ((rect.cols as f64) * frac).round() as usize;
        (
            Rect::new(rect.row, rect.col, rect.rows, cut),
            Rect::new(rect.row, rect.col + cut, rect.rows, rect.cols - cut),
        )
    };
    bisect(a, &idx[..k], w, out);
    bisect(b, &idx[k..], w, out);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tiles_and_balances() {
        let speeds = [1.0, 2.0, 3.0, 4.0, 1.5];
        let plan = RecursiveBisection2.decompose(100, 80, &speeds).unwrap();
        assert_eq!(plan.len(), 5);
        assert!(plan.imbalance(&speeds).unwrap() < 0.1);
    }

    #[test]
    fn more_parts_than_rows_is_legal() {
        let plan = RecursiveBisection2.decompose(1, 2, &[1.0; 5]).unwrap();
        assert_eq!(plan.areas().iter().sum::<usize>(), 2);
    }
}
