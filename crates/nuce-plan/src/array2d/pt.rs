//! Sorted XY decompositions as integer partitions
//! (\[KRW96\] §4, Theorem 1 and Table 1).
//!
//! By Theorem 1 an optimal XY decomposition can be taken with its vertical
//! subarrays in nondecreasing order of their `count` (number of parts) and the
//! parts sorted by nonincreasing size, left to right and top to bottom. Such a
//! decomposition is fixed by the column counts `x₁ ≤ x₂ ≤ … ≤ x_k` with
//! `Σ xᵢ = p`: a partition of `p`. There are `pt(p)` of them (5, 7, 15, 42
//! and 627 for p = 4, 5, 7, 10, 20).

/// Number of partitions of `p` into positive parts, `pt(p)` of \[KRW96\] Table 1
/// (`pt(0) = 1`). O(p²) dynamic programme; saturates at `u64::MAX`.
pub fn pt(p: usize) -> u64 {
    let mut ways = vec![0u64; p + 1];
    ways[0] = 1;
    for part in 1..=p {
        for total in part..=p {
            ways[total] = ways[total].saturating_add(ways[total - part]);
        }
    }
    ways[p]
}

/// Calls `visit(counts)` for every partition of `p` into nondecreasing parts,
/// in the order of \[KRW96\]'s XY recursion (Figure 13: the first column takes
/// `min = 1, 2, …` parts, the rest is partitioned with parts `≥ min`; the
/// last option puts all remaining parts in one column). O(pt(p) · p).
pub fn for_each_partition(p: usize, mut visit: impl FnMut(&[usize])) {
    let mut stack = Vec::with_capacity(p);
    if p > 0 {
        rec(p, 1, &mut stack, &mut visit);
    }
}

fn rec(r: usize, min: usize, stack: &mut Vec<usize>, visit: &mut impl FnMut(&[usize])) {
    // Columns of c parts with c <= r - c keep the rest partitionable with
    // parts >= c; otherwise all r parts form the last column (Figure 13 `else`).
    let mut c = min;
    while c <= r - c {
        stack.push(c);
        rec(r - c, c, stack, visit);
        stack.pop();
        c += 1;
    }
    stack.push(r);
    visit(stack);
    stack.pop();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table1_values() {
        // [KRW96] Table 1: pt(p) for p = 4, 5, 7, 10, 20.
        for (p, want) in [(4, 5), (5, 7), (7, 15), (10, 42), (20, 627)] {
            assert_eq!(pt(p), want);
            let mut n = 0u64;
            for_each_partition(p, |c| {
                assert_eq!(c.iter().sum::<usize>(), p);
                assert!(c.windows(2).all(|w| w[0] <= w[1]));
                n += 1;
            });
            assert_eq!(n, want);
        }
    }

    #[test]
    fn krw96_order_for_five() {
        // [KRW96] §4 lists pt(5) = 7: 5, 4+1, 3+2, 3+1+1, 2+2+1, 2+1+1+1, 1+1+1+1+1.
        let mut all = Vec::new();
        for_each_partition(5, |c| all.push(c.to_vec()));
        assert_eq!(
            all,
            vec![
                vec![1, 1, 1, 1, 1],
                vec![1, 1, 1, 2],
                vec![1, 1, 3],
                vec![1, 2, 2],
                vec![1, 4],
                vec![2, 3],
                vec![5],
            ]
        );
    }
}
