//! The 3D column-based class and its dynamic program: \[BBLRR01\] §3.2.4
//! (Algorithms 3–4) one dimension up.
//!
//! # The class and its model
//!
//! The grid is cut along axis `a` into slabs, each slab along axis `b` into
//! columns, each column along axis `c` into blocks, one per part. With the
//! weights normalised to sum 1, slab `s` of weight `W_s` has thickness
//! `N_a·W_s`, its column `j` of weight `U_j` has width `N_b·U_j/W_s`, and
//! its blocks heights proportional to their weights. The internal surface
//! (each shared face once) is
//!
//! ```text
//! (S − 1)·N_b·N_c  +  Σ_s N_a·W_s · Acost₂(slab s)
//! Acost₂(slab s) = (k_s − 1)·N_c + N_b·Σ_j (U_j/W_s)·(m_j − 1)
//! ```
//!
//! where `S` is the number of slabs, `k_s` the columns of slab `s` and
//! `m_j` the blocks of column `j`: a slab costs its thickness times the 2D
//! column-based Acost of its own parts on the `N_b × N_c` face
//! (\[BBLRR01\] §3.2.4's objective, scaled as in [`crate::array2d::column`]).
//!
//! # The dynamic program
//!
//! As in \[BBLRR01\] Theorem/Algorithms 3–4 (and \[KRW96\] Theorem 1), the
//! parts are sorted by speed and every slab, and every column within a slab,
//! holds a contiguous run of the sorted order. The slab problem is then
//! the 1D dynamic program `f(q) = min_{a<q} f(a) + N_b·N_c + N_a·W(a, q]·
//! Acost₂*(a, q]` over the sorted positions, with `Acost₂*` the optimum of
//! the 2D column DP ([`column_optimum`], `O(len log len)`) on the run
//! `(a, q]`; the number of slabs, the number of columns of each slab and
//! their contents all come out of the DP. The test
//! `column_dp_is_optimal_among_all_nested_layouts` checks by enumeration,
//! for `p ≤ 5`, that the result is optimal among **all** nested layouts
//! (any assignment of parts to slabs and columns, not only sorted runs).
//!
//! Slab boundaries range over every sorted position while `p ≤ 64`, each
//! slab priced by the exact 2D DP (`O(p³ log p)`). Above, they range over
//! 48 evenly spaced positions of the sorted order, and slabs are priced in
//! bulk: a slab `(a, q]` costs `Σ_columns (λ + N_b·U_j·m_j)` in its 2D part,
//! with the per-column constant `λ = N_c·W(a, q]` that depends on its end;
//! for a fixed `λ` one Monge pass (`monge_layer`, the 2D DP's) from `a`
//! solves every end at once, so 4 passes per start at geometrically spaced
//! `λ` (from the shortest to the longest slab from `a`) are run and each
//! end takes the best of their columns re-priced at its own `λ` (an upper
//! bound of the slab's optimum, exact at the sampled constants);
//! `O(48 · 4 · p log p)`. The slabs' contents are then multiples of about
//! `p/48` parts, while columns and blocks inside each chosen slab come
//! from the exact 2D DP again. At `p = 10^4` this prices slabs within
//! 0.1 % of the surface the exact per-slab DP gives, 20× faster
//! (`benchmarks/grid3.md`). Rounding to cells: [`Layout3::realize`].
//!
//! # The integer plan decides
//!
//! [`Column3`] runs the DP for the 6 axis orders, first with every part at
//! least one cell thick in each extent (slab thickness `≥ 1` and the 2D
//! whole-cell restriction, [`column_optimum_whole_cells`]), else without;
//! it realises each layout and keeps the least internal surface of the
//! integer plans, plans without empty parts first (above `p = 64`, the
//! orders are realised by increasing model value and the first plan
//! without an empty part wins). For `p ≤ 7` it instead
//! realises every nested sorted layout (`3^(p−1)` per axis order) and keeps
//! the best integer plan.

use super::{checked_speeds3, extents, GridDecomposer3, GridPlan3, Layout3, Shape3};
use crate::array2d::column::{
    column_optimum, column_optimum_whole_cells, monge_layer, ColumnOptimum,
};
use crate::error::{Error, Result};

/// Largest `p` for which the slab DP tries every sorted position.
const EXACT_MAX: usize = 64;
/// Number of candidate slab boundaries above [`EXACT_MAX`].
const GRID: usize = 48;
/// Largest `p` for which [`Column3`] enumerates every nested sorted layout.
const ENUM_MAX: usize = 7;

/// The 3D column-based decomposition (slabs of columns of blocks) of least
/// internal surface, by a two-level dynamic program over the sorted speeds
/// (\[BBLRR01\] §3.2.4, Algorithms 3–4, one level up; module docs of
/// `array3d::column`). All 6 axis orders are tried.
///
/// Complexity: `O(p³ log p)` up to `p = 64` (every slab boundary), then
/// `O(48 · 4 · p log p)` (48 candidate boundaries, 4 sampled Monge passes
/// each), times 6 orders and at most 2 passes; `O(3^(p−1)·p)` for `p ≤ 7`. Volumes are within one layer of
/// cells of their shares ([`Layout3::realize`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Column3;

/// The 6 axis orders (slab axis, column axis, block axis).
pub(crate) const ORDERS: [[usize; 3]; 6] = [
    [0, 1, 2],
    [0, 2, 1],
    [1, 0, 2],
    [1, 2, 0],
    [2, 0, 1],
    [2, 1, 0],
];

/// The sorted weights (ascending, normalised to sum 1) and their order.
struct Sorted {
    order: Vec<usize>,
    w: Vec<f64>,
}

impl Sorted {
    fn new(speeds: &[f64]) -> Sorted {
        let mut order: Vec<usize> = (0..speeds.len()).collect();
        order.sort_by(|&a, &b| speeds[a].total_cmp(&speeds[b]).then(a.cmp(&b)));
        let total: f64 = speeds.iter().sum();
        let w = order.iter().map(|&i| speeds[i] / total).collect();
        Sorted { order, w }
    }
}

/// The 2D column optimum of sorted run `w` on a `nb × nc` face (with the
/// whole-cell restriction when `whole`; `None` when it has no solution).
fn inner(w: &[f64], nb: f64, nc: f64, whole: bool) -> Option<ColumnOptimum> {
    if whole {
        column_optimum_whole_cells(w, nb, nc, 0.0).ok().flatten()
    } else {
        column_optimum(w, nb, nc, 0.0).ok()
    }
}

/// Slab costs for every pair of candidate boundaries, exactly: the 2D
/// optimum of each run (`inner`). `cost[i·(g+1) + j]` for `i < j`.
fn exact_costs(
    sorted: &Sorted,
    prefix: &[f64],
    n: [f64; 3],
    bounds: &[usize],
    whole: bool,
) -> Vec<f64> {
    let [na, nb, nc] = n;
    let g = bounds.len() - 1;
    let mut cost = vec![f64::INFINITY; (g + 1) * (g + 1)];
    for i in 0..g {
        for j in i + 1..=g {
            let (a, q) = (bounds[i], bounds[j]);
            let weight = prefix[q] - prefix[a];
            if whole && na * weight < 1.0 {
                continue;
            }
            if let Some(opt) = inner(&sorted.w[a..q], nb, nc, whole) {
                let acost2 = (opt.half_perimeter - nb - nc).max(0.0);
                cost[i * (g + 1) + j] = nb * nc + na * weight * acost2;
            }
        }
    }
    cost
}

/// Number of per-column constants sampled per slab start by `sampled_costs`.
const SAMPLES: usize = 4;

/// Slab costs for every pair of candidate boundaries, from [`SAMPLES`]
/// column DPs per slab start (module docs, "The dynamic program"): the
/// 2D cost of a run `(a, q]` is `Σ_columns (λ + N_b·U_j·m_j)` with the
/// per-column constant `λ = N_c·W(a, q]`; one Monge pass
/// (`monge_layer`) with a fixed `λ` solves every end `q` at once, and
/// the cost at the true `λ` of each end is bounded by re-pricing the
/// columns each sampled pass chose. Upper bounds, exact at the sampled
/// constants. `O(g · SAMPLES · p log p)`.
fn sampled_costs(prefix: &[f64], n: [f64; 3], bounds: &[usize], whole: bool) -> Vec<f64> {
    let [na, nb, nc] = n;
    let g = bounds.len() - 1;
    let p = prefix.len() - 1;
    let mut cost = vec![f64::INFINITY; (g + 1) * (g + 1)];
    for i in 0..g {
        let a = bounds[i];
        let len = p - a;
        let lam_lo = nc * (prefix[bounds[i + 1]] - prefix[a]);
        let lam_hi = nc * (prefix[p] - prefix[a]);
        // Per end y: the least cost over the samples, each sample's columns
        // re-priced at the end's own constant λ_y = N_c·W(a, a + y].
        let mut best = vec![f64::INFINITY; len + 1];
        for t in 0..SAMPLES {
            let lam = lam_lo * (lam_hi / lam_lo).powf(t as f64 / (SAMPLES - 1) as f64);
            let w =
                |x: usize, y: usize| lam + nb * (y - x) as f64 * (prefix[a + y] - prefix[a + x]);
            let (f, arg) = monge_layer(len, |x, f: &[f64]| f[x].min(w(0, x)), w);
            // Columns of the optimum ending at y: `in_f` for F (two or
            // more columns), `in_g` for the better of F and one column.
            let mut in_f = vec![0usize; len + 1];
            let mut in_g = vec![0usize; len + 1];
            for y in 1..=len {
                in_f[y] = in_g[arg[y]] + 1;
                let (value, k) = if w(0, y) <= f[y] {
                    (w(0, y), 1)
                } else {
                    (f[y], in_f[y])
                };
                in_g[y] = k;
                let own = nc * (prefix[a + y] - prefix[a]);
                best[y] = best[y].min(value + (own - lam) * k as f64);
            }
        }
        for j in i + 1..=g {
            let q = bounds[j];
            let weight = prefix[q] - prefix[a];
            if whole && na * weight < 1.0 {
                continue;
            }
            let value = best[q - a];
            cost[i * (g + 1) + j] = nb * nc + na * (value - (nc + nb) * weight).max(0.0);
        }
    }
    cost
}

/// The slab DP for one axis order over the candidate `bounds` (sorted
/// positions, `0` first and `p` last): the layout and the DP's value of
/// its model surface (exact when `exact`, an upper bound otherwise).
/// `None` when no layout satisfies the whole-cell restriction.
fn slab_dp(
    sorted: &Sorted,
    n: [f64; 3],
    axes: [usize; 3],
    bounds: &[usize],
    whole: bool,
    exact: bool,
) -> Option<(Layout3, f64)> {
    let [_, nb, nc] = n;
    let g = bounds.len() - 1;
    let mut prefix = vec![0.0; sorted.w.len() + 1];
    for (i, w) in sorted.w.iter().enumerate() {
        prefix[i + 1] = prefix[i] + w;
    }
    let cost = if exact {
        exact_costs(sorted, &prefix, n, bounds, whole)
    } else {
        sampled_costs(&prefix, n, bounds, whole)
    };
    let mut f = vec![f64::INFINITY; g + 1];
    let mut arg = vec![0usize; g + 1];
    f[0] = 0.0;
    for j in 1..=g {
        for i in 0..j {
            let c = f[i] + cost[i * (g + 1) + j];
            if c < f[j] {
                f[j] = c;
                arg[j] = i;
            }
        }
    }
    if !f[g].is_finite() {
        return None;
    }
    let mut cuts = vec![g];
    while let Some(&j) = cuts.last().filter(|&&j| j > 0) {
        cuts.push(arg[j]);
    }
    cuts.reverse();
    let mut slabs = Vec::with_capacity(cuts.len() - 1);
    for pair in cuts.windows(2) {
        let (a, q) = (bounds[pair[0]], bounds[pair[1]]);
        let run = &sorted.w[a..q];
        let opt = inner(run, nb, nc, whole).or_else(|| inner(run, nb, nc, false))?;
        slabs.push(
            opt.columns
                .iter()
                .map(|col| col.iter().map(|&k| sorted.order[a + k]).collect())
                .collect(),
        );
    }
    Some((Layout3 { axes, slabs }, f[g] - nb * nc))
}

/// The candidate slab boundaries for `p` parts: every position up to
/// [`EXACT_MAX`], else [`GRID`] evenly spaced ones.
fn bounds(p: usize) -> Vec<usize> {
    if p <= EXACT_MAX {
        (0..=p).collect()
    } else {
        let mut b: Vec<usize> = (0..=GRID).map(|k| k * p / GRID).collect();
        b.dedup();
        b
    }
}

/// Model internal surface (module docs, "The class and its model") of a
/// nested layout of `shape` for `weights` (any positive scale), before
/// rounding to cells. `O(p)`.
pub fn column_model_surface(layout: &Layout3, shape: Shape3, weights: &[f64]) -> f64 {
    let e = extents(shape);
    let [na, nb, nc] = layout.axes.map(|a| e[a] as f64);
    let total: f64 = weights.iter().sum();
    let sum = |ids: &[usize]| ids.iter().map(|&i| weights[i]).sum::<f64>() / total;
    let mut cost = (layout.slabs.len() as f64 - 1.0) * nb * nc;
    for slab in &layout.slabs {
        let ws: f64 = slab.iter().map(|c| sum(c)).sum();
        cost += na * ws * nc * (slab.len() as f64 - 1.0);
        for col in slab {
            cost += na * nb * sum(col) * (col.len() as f64 - 1.0);
        }
    }
    cost
}

/// Every nested layout of the sorted order for one axis order: each gap
/// between neighbours in the sorted order is a block, column or slab cut.
fn all_sorted_layouts(order: &[usize], axes: [usize; 3]) -> Vec<Layout3> {
    let p = order.len();
    let count = 3usize.pow(p.saturating_sub(1) as u32);
    (0..count)
        .map(|mut code| {
            let mut slabs = vec![vec![vec![order[0]]]];
            for &i in &order[1..] {
                let cut = code % 3;
                code /= 3;
                match cut {
                    2 => slabs.push(vec![vec![i]]),
                    1 => slabs.last_mut().into_iter().for_each(|s| s.push(vec![i])),
                    _ => slabs
                        .last_mut()
                        .and_then(|s| s.last_mut())
                        .into_iter()
                        .for_each(|c| c.push(i)),
                }
            }
            Layout3 { axes, slabs }
        })
        .collect()
}

/// Rank of an integer plan: empty parts last, then less internal surface.
fn key(plan: &GridPlan3) -> (bool, usize) {
    (
        plan.boxes.iter().any(|b| b.is_empty()),
        plan.internal_surface(),
    )
}

impl Column3 {
    /// The optimum of the continuous model (module docs) for one axis
    /// order, without the whole-cell restriction: the layout and its model
    /// internal surface ([`column_model_surface`]). Errors: bad input
    /// ([`super::check_args3`]), axes that are no permutation of 0, 1, 2.
    pub fn model_optimum(
        &self,
        shape: Shape3,
        speeds: &[f64],
        axes: [usize; 3],
    ) -> Result<(Layout3, f64)> {
        let speeds = &checked_speeds3(shape, speeds)?;
        if !ORDERS.contains(&axes) {
            return Err(Error::InvalidInput(format!(
                "axes {axes:?} are no permutation of 0, 1, 2"
            )));
        }
        let e = extents(shape);
        let sorted = Sorted::new(speeds);
        slab_dp(
            &sorted,
            axes.map(|a| e[a] as f64),
            axes,
            &bounds(speeds.len()),
            false,
            speeds.len() <= EXACT_MAX,
        )
        .ok_or_else(|| Error::Solver("column DP found no layout".into()))
    }

    /// The layout [`Column3::decompose`] realises (module docs, "The
    /// integer plan decides") and its integer plan.
    pub fn layout(&self, shape: Shape3, speeds: &[f64]) -> Result<(Layout3, GridPlan3)> {
        let speeds = &checked_speeds3(shape, speeds)?;
        let e = extents(shape);
        let sorted = Sorted::new(speeds);
        let p = speeds.len();
        let bounds = bounds(p);
        let mut best: Option<((bool, usize), Layout3, GridPlan3)> = None;
        // (model value, layout); every nested sorted layout for small p.
        let mut candidates: Vec<(f64, Layout3)> = Vec::new();
        for axes in ORDERS {
            if p <= ENUM_MAX {
                candidates.extend(
                    all_sorted_layouts(&sorted.order, axes)
                        .into_iter()
                        .map(|l| (0.0, l)),
                );
            } else {
                let n = axes.map(|a| e[a] as f64);
                let exact = p <= EXACT_MAX;
                let found = slab_dp(&sorted, n, axes, &bounds, true, exact)
                    .or_else(|| slab_dp(&sorted, n, axes, &bounds, false, exact));
                candidates.extend(found.map(|(l, v)| (v, l)));
            }
        }
        // Above EXACT_MAX, orders by model value, the first plan without an
        // empty part wins (realising and checking a plan is O(p·k)).
        candidates.sort_by(|a, b| a.0.total_cmp(&b.0));
        for (_, layout) in candidates {
            let plan = layout.realize(self.name(), shape, speeds)?;
            let k = key(&plan);
            if best.as_ref().is_none_or(|b| k < b.0) {
                best = Some((k, layout, plan));
            }
            if p > EXACT_MAX && !k.0 {
                break;
            }
        }
        let (_, layout, plan) =
            best.ok_or_else(|| Error::Solver("column DP found no layout".into()))?;
        Ok((layout, plan))
    }
}

impl GridDecomposer3 for Column3 {
    fn name(&self) -> &str {
        "column"
    }

    fn decompose(&self, shape: Shape3, speeds: &[f64]) -> Result<GridPlan3> {
        Ok(self.layout(shape, speeds)?.1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn eight_equal_parts_make_octants() {
        let plan = Column3.decompose((8, 8, 8), &[1.0; 8]).unwrap();
        assert!(plan.boxes.iter().all(|b| (b.nx, b.ny, b.nz) == (4, 4, 4)));
        assert_eq!(plan.internal_surface(), 192);
        let (_, model) = Column3
            .model_optimum((8, 8, 8), &[1.0; 8], [0, 1, 2])
            .unwrap();
        assert!((model - 192.0).abs() < 1e-9);
        assert!(Column3.model_optimum((8, 8, 8), &[1.0], [0, 0, 2]).is_err());
    }

    #[test]
    fn sorted_enumeration_counts() {
        assert_eq!(all_sorted_layouts(&[0, 1, 2], [0, 1, 2]).len(), 9);
        assert_eq!(all_sorted_layouts(&[0], [0, 1, 2]).len(), 1);
    }

    #[test]
    fn large_p_plans_tile() {
        let speeds: Vec<f64> = (0..300).map(|i| 1.0 + (i % 7) as f64).collect();
        let plan = Column3.decompose((60, 50, 40), &speeds).unwrap();
        assert_eq!(plan.len(), 300);
        // About 400 cells a part, extents near 7: rounding each of three
        // extents by up to half a cell moves a volume by up to ~20 %.
        let imb = plan.imbalance(&speeds).unwrap();
        assert!(imb < 0.3, "{imb}");
    }
}
