//! The heterogeneous block distribution of Kalinov and Lastovetsky \[KaLa99\]
//! (\[BBLRR01\] §3.2.6, Figure 17).
//!
//! The processors are first placed in a *fixed* layout of processor columns
//! (here: in input order, column by column, `⌈p/C⌉` or `⌊p/C⌋` per column);
//! the load is then balanced *within* each column independently (heights
//! proportional to speeds) and *between* columns (widths proportional to the
//! columns' total speeds). Columns are cut along the longer array dimension
//! (\[KRW96\] §4: partition along the larger axis first). Unlike
//! [`ColumnDp`](super::ColumnDp), neither the grouping nor the order of the
//! processors is optimised. `O(p log p)`.

use super::checks::checked_speeds;
use super::column::model_half_perimeter;
use super::{ArrayDecomposer, ArrayPlan, ColumnLayout};
use crate::error::{Error, Result};

/// Kalinov–Lastovetsky heterogeneous block distribution (\[BBLRR01\] §3.2.6).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct KalinovLastovetsky {
    /// Number of processor columns; `None` picks `⌊c*⌋` or `⌈c*⌉` with
    /// `c* = √(p·La/Lc)` (the grid shape minimising `C·Lc + La·p/C`),
    /// whichever has the smaller model cost.
    pub columns: Option<usize>,
}

impl KalinovLastovetsky {
    /// The processor-column layout (input order, column-major) with `c` columns.
    pub fn grid(p: usize, c: usize) -> Vec<Vec<usize>> {
        let c = c.clamp(1, p.max(1));
        let (base, extra) = (p / c, p % c);
        let mut next = 0;
        (0..c)
            .map(|j| {
                let k = base + usize::from(j < extra);
                let col: Vec<usize> = (next..next + k).collect();
                next += k;
                col
            })
            .collect()
    }
}

impl ArrayDecomposer for KalinovLastovetsky {
    fn name(&self) -> &'static str {
        "kl"
    }

    fn decompose(&self, rows: usize, cols: usize, speeds: &[f64]) -> Result<ArrayPlan> {
        let speeds = &checked_speeds(rows, cols, speeds)?;
        let p = speeds.len();
        let transposed = rows > cols;
        let (along, across) = if transposed {
            (rows as f64, cols as f64)
        } else {
            (cols as f64, rows as f64)
        };
        let candidates: Vec<usize> = match self.columns {
            Some(0) => {
                return Err(Error::InvalidInput(
                    "Kalinov-Lastovetsky needs at least one processor column".into(),
                ))
            }
            Some(c) => vec![c.min(p)],
            None => {
                let c = (p as f64 * along / across).sqrt();
                let lo = (c.floor() as usize).clamp(1, p);
                let hi = (c.ceil() as usize).clamp(1, p);
                vec![lo, hi]
            }
        };
        let columns = candidates
            .into_iter()
            .map(|c| Self::grid(p, c))
            .min_by(|a, b| {
                model_half_perimeter(a, speeds, along, across)
                    .total_cmp(&model_half_perimeter(b, speeds, along, across))
            })
            .unwrap_or_default();
        ColumnLayout {
            columns,
            transposed,
        }
        .realize(self.name(), rows, cols, speeds)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grid_is_column_major() {
        assert_eq!(
            KalinovLastovetsky::grid(5, 2),
            vec![vec![0, 1, 2], vec![3, 4]]
        );
        assert_eq!(KalinovLastovetsky::grid(2, 9).len(), 2);
        let kl = KalinovLastovetsky { columns: Some(0) };
        assert!(kl.decompose(4, 4, &[1.0]).is_err());
    }
}
