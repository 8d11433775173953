//! The exact cost of a column layout's integer plan, computed from the
//! rounded extents without building the plan (module docs, "The integer
//! plan decides").

use crate::array2d::apportion;
use crate::array2d::columns::ColumnLayout;

/// Exact cost ([`plan_cost`](crate::array2d::cost::plan_cost): Acost, plus `latency × internal edges` when
/// `latency > 0`) of `layout` realised on `rows × cols` for `weights` by
/// [`ColumnLayout::realize`], computed from the same integer extents without
/// building the plan; `None` when a part would be empty (the caller then
/// realises it).
///
/// With all parts non-empty, `Acost = (C − 1)·Lc + Σ_j (k_j − 1)·width_j`
/// exactly, and the interior corner points are each slab's `k_j − 1` cut
/// heights on each of its interior sides, less the heights two neighbouring
/// slabs share (aligned cuts, one vertex: \[KRW96\] §5), so `E_i = V_i + p − 1`
/// needs no sort. `O(p log p)` (the largest-remainder rounding sorts).
pub(super) fn integer_cost(
    layout: &ColumnLayout,
    rows: usize,
    cols: usize,
    weights: &[f64],
    latency: f64,
) -> Option<f64> {
    let (along, across) = if layout.transposed {
        (rows, cols)
    } else {
        (cols, rows)
    };
    let slabs = &layout.columns;
    let slab_w: Vec<f64> = slabs
        .iter()
        .map(|c| {
            c.iter()
                .map(|&i| weights.get(i).copied().unwrap_or(0.0))
                .sum()
        })
        .collect();
    let widths = apportion(along, &slab_w);
    if slabs.is_empty() || slabs.iter().any(Vec::is_empty) || widths.contains(&0) {
        return None;
    }
    let mut acost = (slabs.len() - 1) * across;
    let mut corners = 0usize;
    let mut parts = 0usize;
    let mut prev: Vec<usize> = Vec::new();
    let weight = |i: usize| weights.get(i).copied().unwrap_or(0.0);
    for (j, (slab, &width)) in slabs.iter().zip(&widths).enumerate() {
        let k = slab.len();
        parts += k;
        acost += (k - 1) * width;
        // Without a latency the heights matter only if one could round to
        // 0, i.e. if some part's share of `across` is below one cell.
        let thin = slab
            .iter()
            .any(|&i| across as f64 * weight(i) < (1.0 + 1e-9) * slab_w[j]);
        if latency == 0.0 && !thin {
            continue;
        }
        let w: Vec<f64> = slab.iter().map(|&i| weight(i)).collect();
        let heights = apportion(across, &w);
        if heights.contains(&0) {
            return None;
        }
        let cuts = running_sums(&heights[..k - 1]);
        let sides = usize::from(j > 0) + usize::from(j + 1 < slabs.len());
        corners += cuts.len() * sides;
        if j > 0 {
            corners -= shared(&prev, &cuts);
        }
        prev = cuts;
    }
    let acost = acost as f64;
    Some(if latency > 0.0 {
        acost + latency * (corners + parts - 1) as f64
    } else {
        acost
    })
}

/// Running sums `h_1, h_1 + h_2, …`: the cut heights of a slab. `O(k)`.
pub(super) fn running_sums(h: &[usize]) -> Vec<usize> {
    h.iter()
        .scan(0, |y, &x| {
            *y += x;
            Some(*y)
        })
        .collect()
}

/// Number of common values of two ascending sequences (merge). `O(a + b)`.
pub(super) fn shared(a: &[usize], b: &[usize]) -> usize {
    let (mut i, mut j, mut n) = (0, 0, 0);
    while i < a.len() && j < b.len() {
        match a[i].cmp(&b[j]) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                n += 1;
                i += 1;
                j += 1;
            }
        }
    }
    n
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::array2d::cost::plan_cost;

    /// Random layout: a shuffled assignment of `p` parts to slabs.
    fn random_layout(rng: &mut rand_chacha::ChaCha8Rng, p: usize) -> ColumnLayout {
        use rand::seq::SliceRandom;
        use rand::Rng;
        let mut idx: Vec<usize> = (0..p).collect();
        idx.shuffle(rng);
        let mut columns: Vec<Vec<usize>> = vec![Vec::new()];
        for i in idx {
            if !columns.last().is_some_and(Vec::is_empty) && rng.gen_bool(0.35) {
                columns.push(Vec::new());
            }
            if let Some(c) = columns.last_mut() {
                c.push(i);
            }
        }
        columns.retain(|c| !c.is_empty());
        ColumnLayout {
            columns,
            transposed: rng.gen_bool(0.5),
        }
    }

    #[test]
    fn integer_cost_matches_the_realised_plan() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(11);
        let mut compared = 0;
        for _ in 0..400 {
            let p = rng.gen_range(1..=12);
            // Equal weights half the time: aligned cuts.
            let w: Vec<f64> = if rng.gen_bool(0.5) {
                vec![1.0; p]
            } else {
                (0..p).map(|_| rng.gen_range(0.5..3.0)).collect()
            };
            let (rows, cols) = (rng.gen_range(1..60), rng.gen_range(1..60));
            let layout = random_layout(&mut rng, p);
            let plan = layout.realize("t", rows, cols, &w).unwrap();
            for lat in [0.0, 7.5] {
                match integer_cost(&layout, rows, cols, &w, lat) {
                    Some(c) => {
                        assert_eq!(c, plan_cost(&plan, lat), "{layout:?} {rows}x{cols}");
                        compared += 1;
                    }
                    None => assert!(plan.parts.iter().any(|r| r.is_empty())),
                }
            }
        }
        assert!(compared > 300);
    }
}
