//! The `O(p log p)` column DP (module docs, "Beyond \[BBLRR01\]" and
//! "Latency term"): three chained Monge layers for the optimum over all
//! column counts, one layer per count for the optima with exactly `c`
//! columns (\[BBLRR01\] Algorithm 3 with its `C` index kept), and the public
//! [`column_optimum`] / [`column_optimum_whole_cells`].

use super::model::Model;
use super::monge::monge_layer;
use crate::error::Result;

/// The optimum of the column-based model for one orientation.
#[derive(Debug, Clone, PartialEq)]
pub struct ColumnOptimum {
    /// Part indices (into the input weights) of each slab, in placement
    /// order; parts inside a slab are sorted by decreasing weight.
    pub columns: Vec<Vec<usize>>,
    /// Model objective `C·Lc + La·Σ_j k_j·W_j + latency·E_i` (sum of
    /// half-perimeters plus the latency term, `E_i` the generic internal edge
    /// count); subtract `La + Lc` to get `Acost + latency·E_i`.
    pub half_perimeter: f64,
}

/// Solves the column-based DP for weights `w` (any positive scale), slab
/// direction length `along` (`La`, the extent shared out by slab widths) and
/// slab length `across` (`Lc`), with a latency per internal edge.
///
/// Returns the slabs ordered for the fewest internal edges (the two slabs
/// with most parts at the ends). `O(p log p)`; see the module docs for the
/// formulation and its optimality argument.
pub fn column_optimum(w: &[f64], along: f64, across: f64, latency: f64) -> Result<ColumnOptimum> {
    Ok(solve(w, along, across, latency, false)?.0)
}

/// Like [`column_optimum`], restricted to layouts whose parts are at least
/// one cell in both extents before rounding (slab width `La·W_j ≥ 1`,
/// every part's height `Lc·w_i/W_j ≥ 1`), so that rounding leaves no part
/// empty; `None` when no *sorted* layout (slabs = contiguous runs of the
/// sorted weights) satisfies them.
///
/// The result is optimal among sorted layouts only: \[KRW96\] Theorem 1's exchange
/// argument does not survive these constraints, and a mixed slab (say the
/// smallest part with the third smallest) can be feasible when no sorted one
/// is (the test `whole_cell_dp_equals_brute_force` checks optimality against
/// enumeration of the sorted layouts).
///
/// Both constraints keep the DP Monge: for sorted weights the infeasible
/// region of each is monotone, and they enter as convex penalties
/// `M·max(0, 1/La − X)` and `M·max(0, X − Lc·s_(a+1))` of the interval
/// weight `X = S_q − S_a` (a convex function of a difference of nondecreasing
/// sequences satisfies the quadrangle inequality). The penalised optimum is
/// the constrained optimum whenever it is itself feasible, which is checked.
/// `O(p log p)`.
pub fn column_optimum_whole_cells(
    w: &[f64],
    along: f64,
    across: f64,
    latency: f64,
) -> Result<Option<ColumnOptimum>> {
    let (opt, feasible) = solve(w, along, across, latency, true)?;
    Ok(feasible.then_some(opt))
}

/// The DP of [`column_optimum`]; with `whole`, the whole-cell constraints
/// of [`column_optimum_whole_cells`] as penalties. Returns the optimum and
/// whether it satisfies those constraints.
fn solve(
    w: &[f64],
    along: f64,
    across: f64,
    latency: f64,
    whole: bool,
) -> Result<(ColumnOptimum, bool)> {
    let model = Model::new(w, along, across, latency, whole)?;
    let (cuts, value) = model.optimum();
    let feasible = model.feasible(&cuts);
    // Model objective in latency-cost units: add the `p − 1` of E_i = V_i + p − 1.
    let half_perimeter = value - model.paid(&cuts) + latency * (model.order.len() as f64 - 1.0);
    Ok((
        ColumnOptimum {
            columns: ends_first(model.segments(&cuts)),
            half_perimeter,
        },
        feasible,
    ))
}

impl Model {
    /// The first Monge layer: `end(0, q)` (the first segment, an end slab).
    pub(super) fn first_layer(&self) -> Vec<f64> {
        let p = self.order.len();
        (0..=p)
            .map(|q| {
                if q == 0 {
                    f64::INFINITY
                } else {
                    self.end(0, q)
                }
            })
            .collect()
    }

    /// The optimal segmentation over all column counts and its objective
    /// (penalties included, without the `L(p − 1)` of `E_i`): three chained
    /// Monge layers (first end slab, second end slab, inner slabs).
    /// `O(p log p)`.
    pub(super) fn optimum(&self) -> (Vec<usize>, f64) {
        let p = self.order.len();
        let lat = self.lat;
        // Layer 1: the first segment (an end slab).
        let g1 = self.first_layer();
        // Layer 2: the second segment (the other end slab).
        let (g2, arg2) = monge_layer(p, |a, _| g1[a], |a, q| self.end(a, q));
        // Layer 3+: inner slabs, after at least two segments.
        let (f, arg3) = monge_layer(p, |a, f: &[f64]| g2[a].min(f[a]), |a, q| self.base(a, q));
        // C = 1: the single slab has no internal side at all.
        let mut best = self.end(0, p) - lat * (p as f64 - 1.0);
        let mut which = 1;
        if g2[p] < best {
            best = g2[p];
            which = 2;
        }
        if f[p] < best {
            best = f[p];
            which = 3;
        }
        // Backtrack: segments of the sorted order, first to last.
        let mut cuts = vec![p];
        let mut q = p;
        let mut layer = which;
        while layer >= 2 {
            let a = if layer == 3 { arg3[q] } else { arg2[q] };
            if layer == 3 && g2[a] <= f[a] {
                layer = 2;
            } else if layer == 2 {
                layer = 1;
            }
            cuts.push(a);
            q = a;
        }
        (closed(cuts), best)
    }

    /// For each column count `c = 1..=c_max`, the optimal segmentation into
    /// exactly `c` slabs (`None` where there is none): Algorithm 3 of \[BBLRR01\]
    /// §3.2.4 with its `C` index kept, each layer a Monge layer, so
    /// `O(c_max · p log p)` instead of `O(c_max · p²)`. The first two
    /// segments are the end slabs, as in `Model::optimum`.
    pub(super) fn per_count(&self, c_max: usize) -> Vec<Option<Vec<usize>>> {
        let p = self.order.len();
        let c_max = c_max.min(p);
        let mut out = Vec::with_capacity(c_max);
        let mut layers: Vec<Vec<usize>> = Vec::with_capacity(c_max);
        let mut prev = self.first_layer();
        for c in 1..=c_max {
            if c >= 2 {
                let (f, arg) = if c == 2 {
                    monge_layer(p, |a, _| prev[a], |a, q| self.end(a, q))
                } else {
                    monge_layer(p, |a, _| prev[a], |a, q| self.base(a, q))
                };
                prev = f;
                layers.push(arg);
            }
            if !prev[p].is_finite() {
                out.push(None);
                continue;
            }
            let mut cuts = vec![p];
            let mut q = p;
            for arg in layers.iter().rev() {
                q = arg[q];
                cuts.push(q);
            }
            let cuts = closed(cuts);
            out.push((cuts.len() == c + 1).then_some(cuts));
        }
        out
    }
}

/// Backtracked cut positions (last to first, without the leading 0) as
/// the ascending `0 = c_0 < … < c_C = p`.
pub(super) fn closed(mut cuts: Vec<usize>) -> Vec<usize> {
    cuts.push(0);
    cuts.dedup();
    cuts.reverse();
    cuts
}

/// Placement of the DP: first segment left, second segment right, inner
/// ones between (the two end slabs are the ones the model gives the
/// end bonus).
pub(super) fn ends_first(segs: Vec<Vec<usize>>) -> Vec<Vec<usize>> {
    let mut columns = Vec::with_capacity(segs.len());
    let mut it = segs.into_iter();
    let first = it.next();
    let second = it.next();
    columns.extend(first);
    columns.extend(it);
    columns.extend(second);
    columns
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Model objective of a segmentation, recomputed from the slab costs.
    fn objective(m: &Model, cuts: &[usize]) -> f64 {
        let c = cuts.len() - 1;
        let p = m.order.len();
        cuts.windows(2)
            .enumerate()
            .map(|(j, s)| {
                if c == 1 {
                    m.end(s[0], s[1]) - m.lat * (p as f64 - 1.0)
                } else if j < 2 {
                    m.end(s[0], s[1])
                } else {
                    m.base(s[0], s[1])
                }
            })
            .sum()
    }

    #[test]
    fn per_count_equals_brute_force() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(12);
        for _ in 0..40 {
            let p = rng.gen_range(1..=9);
            let w: Vec<f64> = (0..p).map(|_| rng.gen_range(0.2..5.0)).collect();
            let (along, across) = (rng.gen_range(5.0..50.0), rng.gen_range(5.0..50.0));
            let lat = [0.0, 2.0][rng.gen_range(0..2)];
            let m = Model::new(&w, along, across, lat, false).unwrap();
            let mut best = vec![f64::INFINITY; p + 1];
            for mask in 0u32..(1 << (p - 1)) {
                let mut cuts = vec![0];
                cuts.extend((1..p).filter(|i| mask >> (i - 1) & 1 == 1));
                cuts.push(p);
                let c = cuts.len() - 1;
                best[c] = best[c].min(objective(&m, &cuts));
            }
            let per = m.per_count(p);
            for (i, cuts) in per.iter().enumerate() {
                let cuts = cuts.as_ref().unwrap();
                assert_eq!(cuts.len(), i + 2);
                let got = objective(&m, cuts);
                assert!((got - best[i + 1]).abs() < 1e-9, "c = {}", i + 1);
            }
            // The global optimum is the best count's.
            let (cuts, value) = m.optimum();
            let min = best.iter().copied().fold(f64::INFINITY, f64::min);
            assert!((value - min).abs() < 1e-9 && (objective(&m, &cuts) - min).abs() < 1e-9);
        }
    }
}
