//! \[BBLRR01\] §3.2.4, Algorithms 3 and 4 verbatim: the `O(p³)` table of the
//! column DP indexed by the number of columns, and its rebuild. Kept as the
//! paper's reference (its Table 2 is a trace of it) and as a test oracle
//! for the `O(p log p)` DP.

use crate::error::Result;

/// Algorithm 3 of \[BBLRR01\] §3.2.4 verbatim, on the unit square: the tables
/// `perimeter[C−1][q]` = `f_C^perimeter(q)` and `cut[C−1][q]` = `f_C^cut(q)`
/// for `1 ≤ C ≤ q ≤ p` (other entries are `∞` / 0), for areas `s` that are
/// sorted ascending first (their order is returned too). `O(p³)`.
///
/// The extracted text of line 8 reads `Σ_{q−a<i≤q}`; Table 2's caption and
/// values give `Σ_{a<i≤q} s_i`, used here. Line 9 reads `f^cut = q − a_opt`
/// but the caption ("blocks in the first C − 1 columns") and Algorithm 4 need
/// `f^cut(q) = a_opt`, used here (both reconstructed). Ties keep the smallest `a`.
pub fn partition_table(s: &[f64]) -> Result<PartitionTable> {
    crate::check_speeds(s)?;
    let p = s.len();
    let mut order: Vec<usize> = (0..p).collect();
    order.sort_by(|&a, &b| s[a].total_cmp(&s[b]).then(a.cmp(&b)));
    let mut prefix = vec![0.0; p + 1];
    for (q, &i) in order.iter().enumerate() {
        prefix[q + 1] = prefix[q] + s[i];
    }
    let mut perimeter = vec![vec![f64::INFINITY; p + 1]; p];
    let mut cut = vec![vec![0usize; p + 1]; p];
    for q in 1..=p {
        perimeter[0][q] = 1.0 + prefix[q] * q as f64;
    }
    for c in 2..=p {
        for q in c..=p {
            let mut best = (f64::INFINITY, 0);
            for a in (c - 1)..q {
                let v = 1.0 + (prefix[q] - prefix[a]) * (q - a) as f64 + perimeter[c - 2][a];
                if v < best.0 {
                    best = (v, a);
                }
            }
            perimeter[c - 1][q] = best.0;
            cut[c - 1][q] = best.1;
        }
    }
    Ok(PartitionTable {
        order,
        perimeter,
        cut,
    })
}

/// The tables of Algorithm 3 (\[BBLRR01\] §3.2.4); see [`partition_table`].
#[derive(Debug, Clone, PartialEq)]
pub struct PartitionTable {
    /// Input indices in ascending area order (the re-indexing of step 1).
    pub order: Vec<usize>,
    /// `perimeter[C−1][q]` = `f_C^perimeter(q)`.
    pub perimeter: Vec<Vec<f64>>,
    /// `cut[C−1][q]` = `f_C^cut(q)`: parts in the first `C − 1` columns.
    pub cut: Vec<Vec<usize>>,
}

impl PartitionTable {
    /// `C_opt`: the number of columns minimising `f_C^perimeter(p)` (smallest on ties).
    pub fn best_columns(&self) -> usize {
        let p = self.order.len();
        let mut best = (f64::INFINITY, 1);
        for c in 1..=p {
            if self.perimeter[c - 1][p] < best.0 {
                best = (self.perimeter[c - 1][p], c);
            }
        }
        best.1
    }

    /// Algorithm 4 (RE-BUILD): the counts `k_1, …, k_C` of the columns of
    /// the optimal partitioning with `c` columns, column 1 holding the
    /// smallest areas. `O(C)`.
    pub fn rebuild(&self, c: usize) -> Vec<usize> {
        let mut q = self.order.len();
        let mut k = vec![0; c];
        for col in (2..=c).rev() {
            let a = self.cut[col - 1][q];
            k[col - 1] = q - a;
            q = a;
        }
        if let Some(first) = k.first_mut() {
            *first = q;
        }
        k
    }
}
