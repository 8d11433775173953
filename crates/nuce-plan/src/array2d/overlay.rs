//! The overlay of two tilings: every pair of parts (one from each plan) that
//! share cells, with their common rectangle.
//!
//! Used to price a remap ([`crate::policy`]): the cells that change
//! owner are exactly the overlaps of different parts. Comparing every part
//! with every part is O(p²) (1 s at p ≈ 16 000); here the second plan's parts
//! are registered in a grid of ≈ p buckets and each part of the first plan
//! looks only at the buckets it covers: O(p + k) for tilings whose parts are
//! not much more elongated than the buckets, with k the number of overlapping
//! pairs (O(p^1.5) in the worst case of full-width slices against columns).

use super::{ArrayPlan, Rect};

/// Every `(i, j, common)` with part `i` of `a` and part `j` of `b` sharing
/// the non-empty rectangle `common`, in increasing `(i, j)` order.
pub fn overlaps(a: &ArrayPlan, b: &ArrayPlan) -> Vec<(usize, usize, Rect)> {
    let rows = a.rows.max(b.rows).max(1);
    let cols = a.cols.max(b.cols).max(1);
    let side = ((b.parts.len() as f64).sqrt().ceil() as usize).max(1);
    let (br, bc) = (rows.div_ceil(side).max(1), cols.div_ceil(side).max(1));
    let (nr, nc) = (rows.div_ceil(br), cols.div_ceil(bc));
    let span = |r: &Rect| {
        (
            r.row / br..(r.row_end().min(rows) - 1) / br + 1,
            r.col / bc..(r.col_end().min(cols) - 1) / bc + 1,
        )
    };
    let inside = |r: &Rect| !r.is_empty() && r.row < rows && r.col < cols;
    let mut buckets: Vec<Vec<usize>> = vec![Vec::new(); nr * nc];
    for (j, r) in b.parts.iter().enumerate().filter(|(_, r)| inside(r)) {
        let (rs, cs) = span(r);
        for y in rs {
            for x in cs.clone() {
                buckets[y * nc + x].push(j);
            }
        }
    }
    let mut seen = vec![usize::MAX; b.parts.len()];
    let mut out = Vec::new();
    for (i, r) in a.parts.iter().enumerate().filter(|(_, r)| inside(r)) {
        let (rs, cs) = span(r);
        let mut found: Vec<(usize, Rect)> = Vec::new();
        for y in rs {
            for x in cs.clone() {
                for &j in &buckets[y * nc + x] {
                    if std::mem::replace(&mut seen[j], i) != i {
                        if let Some(c) = r.intersect(&b.parts[j]) {
                            found.push((j, c));
                        }
                    }
                }
            }
        }
        found.sort_unstable_by_key(|&(j, _)| j);
        out.extend(found.into_iter().map(|(j, c)| (i, j, c)));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::array2d::{ArrayDecomposer, RecursiveBisection2, Slices};

    fn brute(a: &ArrayPlan, b: &ArrayPlan) -> Vec<(usize, usize, Rect)> {
        let mut v = Vec::new();
        for (i, r) in a.parts.iter().enumerate() {
            for (j, s) in b.parts.iter().enumerate() {
                if let Some(c) = r.intersect(s) {
                    v.push((i, j, c));
                }
            }
        }
        v
    }

    #[test]
    fn equals_all_pairs() {
        for p in [1usize, 2, 3, 7, 20, 61] {
            let s1: Vec<f64> = (0..p).map(|i| 1.0 + (i * 7 % 5) as f64).collect();
            let s2: Vec<f64> = (0..p).map(|i| 1.0 + (i * 3 % 4) as f64).collect();
            for (m, n) in [(50, 80), (3, 200), (97, 13)] {
                let a = RecursiveBisection2.decompose(m, n, &s1).unwrap();
                let b = RecursiveBisection2.decompose(m, n, &s2).unwrap();
                let c = Slices.decompose(m, n, &s2).unwrap();
                assert_eq!(overlaps(&a, &b), brute(&a, &b), "p={p} {m}x{n}");
                assert_eq!(overlaps(&a, &c), brute(&a, &c), "p={p} {m}x{n} slices");
                assert_eq!(overlaps(&c, &a), brute(&c, &a), "p={p} {m}x{n} slices");
            }
        }
    }
}
