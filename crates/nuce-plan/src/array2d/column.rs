//! Optimal column-based decompositions by dynamic programming
//! (\[BBLRR01\] §3.2.4, Algorithms 3 and 4, Table 2,
//! Figure 16), generalised from the unit square to an `rows × cols` array,
//! with both orientations and an optional latency term
//! (\[KRW96\] §5).
//!
//! # The model
//!
//! A column-based decomposition cuts the array into `C` slabs ("columns")
//! along one dimension of length `La`, each slab spanning the other dimension
//! of length `Lc`; slab `j` holds `k_j` parts stacked across it, and its width
//! is proportional to its total weight `W_j` (weights normalised to sum 1).
//! Each part of slab `j` has half-perimeter `La·W_j + Lc·w_i/W_j`, so the sum
//! of half-perimeters is
//!
//! ```text
//! Ĉ = C·Lc + La · Σ_j k_j·W_j            (\[BBLRR01\] §3.2.4: "1 + k_i c_i" per column)
//! Acost = Ĉ − (rows + cols)               (\[KRW96\] §4, Theorem 1's proof)
//! ```
//!
//! With `La = Lc = 1` this is exactly the MM-COL(s) objective of \[BBLRR01\]. The
//! column-based class equals the XY class of \[KRW96\] §4 (partition along one
//! axis, then the other), and by \[KRW96\] Theorem 1 an optimal member has its
//! parts sorted by size with the slabs holding contiguous runs of the sorted
//! order, so the search is over the `2^(p−1)` segmentations of the sorted
//! weights — the \[BBLRR01\] dynamic program.
//!
//! # Beyond \[BBLRR01\]: an `O(p log p)` formulation
//!
//! \[BBLRR01\]'s Algorithm 3 indexes its table by the number of columns `C` and runs
//! in `O(p³)` (Table 2 is its trace; [`partition_table`] reproduces it
//! verbatim). But a slab's cost `Lc + La·(q−a)·(S_q − S_a)` does not depend
//! on how many slabs precede it, so the `C` index can be dropped:
//! `f(q) = min_{a<q} f(a) + w(a, q)`. The weight `w(a, q) = (q−a)(S_q−S_a)` is
//! a product of two interval-additive non-negative quantities and therefore
//! satisfies the quadrangle inequality `w(a,c) + w(b,d) ≤ w(a,d) + w(b,c)` for
//! `a ≤ b ≤ c ≤ d` (the difference is `x_ab·y_cd + x_cd·y_ab ≥ 0`). Hence a
//! later candidate split, once better, stays better, and the DP is solved
//! with the monotone candidate queue of the concave least-weight-subsequence
//! problem (Hirschberg–Larmore \[HiLa87\]; Galil–Giancarlo \[GG89\]) in `O(p log p)`
//! ([`column_optimum`]).
//!
//! # Latency term
//!
//! With point-to-point messages every internal edge of the decomposition's
//! planar graph costs a latency `L` (\[KRW96\] §5, `E_i = V_i + p − 1`). In a
//! column-based decomposition with no accidentally aligned cuts, slab `j`
//! contributes `k_j − 1` internal corner points per side it shares with
//! another slab: two sides for inner slabs, one for the two end slabs. The
//! order of the slabs does not change `Ĉ`, so the two slabs with the most
//! parts go to the ends, and `V_i = 2(p − C) − (k_(1) − 1) − (k_(2) − 1)`.
//! In the sorted optimum the slabs of the smallest parts hold the most parts
//! (\[KRW96\] Theorem 1), so the DP gives the end bonus to the first two segments:
//! three chained Monge layers, still `O(p log p)`.
//!
//! # The integer plan decides
//!
//! The model misses two effects of the integer plan that \[KRW96\]'s exhaustive
//! XY2 sees, because it costs every `pt(p)` candidate on the rounded plan:
//! **aligned cuts** — neighbouring slabs whose cut heights coincide share
//! corner points (a four-way crossing is one vertex), which equal parts in
//! slabs of equal counts always do (1000 × 1000, 20 equal parts, latency
//! 100: 5 slabs of 4, Acost 7000 + 31 edges, against the model's choice
//! with unequal slabs, 7200 + 39 edges) — and **rounding**: Acost of the
//! integer plan is `(C − 1)·Lc + Σ_j (k_j − 1)·width_j` with rounded widths,
//! which can reorder layouts whose model costs differ by less than `p − C`.
//! So [`ColumnDp`] uses the DP to propose candidates and the integer plan to
//! choose among them ([`ColumnDp::layout`]): the model optima, the optima
//! for each column count near the best (`Model::per_count`, \[BBLRR01\]'s
//! Algorithm 3 with Monge layers), an exact-corner DP over sorted placements
//! for small `p` (`Model::aligned`), and at latency 0 every segmentation
//! whose model cost is within the rounding bound of the best integer cost
//! found (`Model::within`); each is costed exactly (`integer_cost`),
//! and a descent on the integer cost finishes the search.
//!
//! # Whole cells
//!
//! On small arrays the continuous optimum may give a part less than one row
//! or column, which rounding turns into an empty part. [`ColumnDp`] first
//! restricts the DP to layouts where every part is at least one cell in each
//! extent ([`column_optimum_whole_cells`]; still Monge, still `O(p log p)`,
//! optimal among sorted layouts — the exchange argument of Theorem 1 does
//! not survive these constraints).

use super::cost::{acost, latency_cost};
use super::{apportion, check_args, ArrayDecomposer, ArrayPlan, ColumnLayout};
use crate::error::{Error, Result};

/// Optimal column-based decomposition (\[BBLRR01\] §3.2.4, Algorithms 3–4), both
/// orientations, minimising `Acost + latency × internal edges` (\[KRW96\] §5) of
/// the **integer** plan over candidates proposed by the continuous DP (see
/// the module docs and [`ColumnDp::layout`]).
///
/// Integer-aware: candidates include the DP restricted to layouts whose
/// parts are at least one cell in each extent
/// ([`column_optimum_whole_cells`]), so that rounding leaves no part empty,
/// and a plan without empty parts wins over a cheaper one with empty parts.
///
/// Complexity: `O(p log p)` plus `O(p log p)` per candidate for large `p`
/// (a constant number of candidates); below the budgets, `O((c* + 2) · p log p)`
/// for the per-count optima (`c*` the optimum's column count) and, for
/// `p ≤ 48`, `O(p³ + p²·k)` for the exact-corner DP, `O(p² · log p)` per
/// descent round and at most 64 near-optimal candidates at latency 0.
///
/// ```
/// use nuce::plan::array2d::{cost::acost, ArrayDecomposer, ColumnDp};
/// // The example of \[BBLRR01\] §3.2.4 (Figure 16): three columns, Ĉ = 5.5 on the
/// // unit square, i.e. Acost ≈ (5.5 − 2)·1000 on a 1000 × 1000 array.
/// let s = [0.05, 0.05, 0.08, 0.1, 0.1, 0.12, 0.2, 0.3];
/// let plan = ColumnDp::default().decompose(1000, 1000, &s)?;
/// assert!((acost(&plan) as i64 - 3500).abs() <= 8);
/// # Ok::<(), nuce::Error>(())
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct ColumnDp {
    /// Cost of one message start-up, in cell-edge units (\[KRW96\] §5); 0 minimises Acost.
    pub latency: f64,
}

impl ColumnDp {
    /// A column DP that also weighs `latency × internal edges`.
    pub fn with_latency(latency: f64) -> Self {
        ColumnDp { latency }
    }

    /// The cheapest placement of segmentation `cuts` (of `sorted`'s order)
    /// on the integer plan, with its rank: the DP's order (`ends_first`)
    /// and, with a latency, also `by_count` and the sorted order.
    /// `O(p log p)`.
    fn exact(
        &self,
        sorted: &Model,
        cuts: &[usize],
        transposed: bool,
        rows: usize,
        cols: usize,
        speeds: &[f64],
    ) -> Option<(Key, ColumnLayout)> {
        let segs = sorted.segments(cuts);
        let placements = if self.latency > 0.0 {
            vec![ends_first(segs.clone()), by_count(segs.clone()), segs]
        } else {
            vec![ends_first(segs)]
        };
        let mut best: Option<(Key, ColumnLayout)> = None;
        for columns in placements {
            let layout = ColumnLayout {
                columns,
                transposed,
            };
            let key = match integer_cost(&layout, rows, cols, speeds, self.latency) {
                Some(c) => (false, c),
                None => match layout.realize(self.name(), rows, cols, speeds) {
                    Ok(plan) => (
                        plan.parts.iter().any(|r| r.is_empty()),
                        plan_cost(&plan, self.latency),
                    ),
                    Err(_) => continue,
                },
            };
            if best.as_ref().is_none_or(|b| less(key, b.0)) {
                best = Some((key, layout));
            }
        }
        best
    }

    /// The layout [`ColumnDp::decompose`] realises and its model cost
    /// (continuous `Acost + latency × E_i` with the generic edge count of
    /// the module docs, in cells), before integer rounding.
    ///
    /// The DP proposes, the integer plan disposes. In each orientation the
    /// candidates are the model optima (with and without the whole-cell
    /// restriction; with a latency, also those of the latency-free model,
    /// which keeps equal parts in columns of equal counts) and, while
    /// `c_max · p ≤ 2^18`, the optima with exactly `c` columns for `c`
    /// within 2 of the optimum's (`Model::per_count`), and for `p ≤ 48`
    /// the exact-corner DP's choice (`Model::aligned`); with a latency,
    /// each is placed in three orders (`ends_first`, `by_count`, sorted).
    /// Every candidate is costed exactly on its integer realisation
    /// (`integer_cost`: the rounding of [`ColumnLayout::realize`], aligned
    /// cuts sharing corner points); for `p ≤ 48` a descent (move or drop
    /// one cut, `neighbours`) continues from the cheapest, and at latency
    /// 0 every segmentation that could beat it despite rounding
    /// (`Model::within`, at most 64) is costed too. The cheapest plan
    /// without empty parts wins (the cheapest overall if every candidate
    /// has one). Complexity: see [`ColumnDp`].
    pub fn layout(&self, rows: usize, cols: usize, speeds: &[f64]) -> Result<(ColumnLayout, f64)> {
        check_args(rows, cols, speeds)?;
        check_latency(self.latency)?;
        let (m, n) = (rows as f64, cols as f64);
        let p = speeds.len();
        let lats: &[f64] = if self.latency > 0.0 {
            &[self.latency, 0.0]
        } else {
            &[0.0]
        };
        // (has an empty part, integer cost, layout, model cost)
        let mut best: Option<(bool, f64, ColumnLayout, f64)> = None;
        for transposed in [false, true] {
            // Vertical slabs: along = cols, across = rows; transposed: the reverse.
            let (along, across) = if transposed { (m, n) } else { (n, m) };
            let mut cands: Vec<Vec<usize>> = Vec::new();
            let mut add = |c: Vec<usize>| {
                if !cands.contains(&c) {
                    cands.push(c);
                }
            };
            let mut sorted = None;
            for &lat in lats {
                let whole = Model::new(speeds, along, across, lat, true)?;
                let free = Model::new(speeds, along, across, lat, false)?;
                let (wc, _) = whole.optimum();
                let (fc, _) = free.optimum();
                let ok = whole.feasible(&wc);
                let model = if ok { &whole } else { &free };
                let c_star = if ok { wc.len() } else { fc.len() } - 1;
                add(wc);
                add(fc);
                let c_hi = (c_star + COUNT_WINDOW).min(p);
                if c_hi.saturating_mul(p) <= PER_COUNT_BUDGET {
                    let lo = c_star.saturating_sub(COUNT_WINDOW).max(1);
                    for cuts in model.per_count(c_hi).into_iter().skip(lo - 1).flatten() {
                        add(cuts);
                    }
                }
                if p <= ALIGNED_MAX_P {
                    let cells = |x: f64| x as usize;
                    add(free.aligned(speeds, cells(along), cells(across)));
                }
                sorted = Some(free);
            }
            let Some(sorted) = sorted else { continue };
            // The orientation's cheapest candidate, then a descent on the
            // integer cost from it (small p): move one cut by one part or
            // drop it, while that helps.
            let mut here: Option<(Key, Vec<usize>, ColumnLayout)> = None;
            for cuts in cands {
                if let Some((key, layout)) =
                    self.exact(&sorted, &cuts, transposed, rows, cols, speeds)
                {
                    if here.as_ref().is_none_or(|h| less(key, h.0)) {
                        here = Some((key, cuts, layout));
                    }
                }
            }
            let Some(mut here) = here else { continue };
            if self.latency == 0.0 && p <= ALIGNED_MAX_P && !here.0 .0 {
                // Integer and model Acost differ by less than p − C (each
                // width is within one cell of its share), so a cheaper
                // integer plan has model cost below here + p − 1: cost them all.
                let free = Model::new(speeds, along, across, 0.0, false)?;
                let limit = here.0 .1 + along + across + (p - 1) as f64;
                for cuts in free.within(limit, NEAR_CAP) {
                    if let Some((key, layout)) =
                        self.exact(&sorted, &cuts, transposed, rows, cols, speeds)
                    {
                        if less(key, here.0) {
                            here = (key, cuts, layout);
                        }
                    }
                }
            }
            let mut rounds = if p <= ALIGNED_MAX_P { p } else { 0 };
            while rounds > 0 {
                rounds -= 1;
                let mut next: Option<(Key, Vec<usize>, ColumnLayout)> = None;
                for cuts in neighbours(&here.1) {
                    if let Some((key, layout)) =
                        self.exact(&sorted, &cuts, transposed, rows, cols, speeds)
                    {
                        let bar = next.as_ref().map_or(here.0, |n| n.0);
                        if less(key, bar) {
                            next = Some((key, cuts, layout));
                        }
                    }
                }
                match next {
                    Some(n) => here = n,
                    None => break,
                }
            }
            if best.as_ref().is_none_or(|b| less(here.0, (b.0, b.1))) {
                let model = model_cost(&here.2.columns, speeds, along, across, self.latency);
                best = Some((here.0 .0, here.0 .1, here.2, model));
            }
        }
        let (_, _, layout, model) =
            best.ok_or_else(|| Error::Empty("no column-based layout".into()))?;
        Ok((layout, model - (m + n)))
    }
}

/// A candidate's rank: (has an empty part, exact integer cost).
type Key = (bool, f64);

/// Strictly better rank (no empty part first, then cheaper).
fn less(a: Key, b: Key) -> bool {
    a.partial_cmp(&b) == Some(std::cmp::Ordering::Less)
}

/// The segmentations one step from `cuts`: one inner cut moved by one part
/// either way, or removed. `O(C)` of them.
fn neighbours(cuts: &[usize]) -> Vec<Vec<usize>> {
    let mut out = Vec::new();
    for i in 1..cuts.len().saturating_sub(1) {
        for moved in [cuts[i] - 1, cuts[i] + 1] {
            if moved > cuts[i - 1] && moved < cuts[i + 1] {
                let mut c = cuts.to_vec();
                c[i] = moved;
                out.push(c);
            }
        }
        let mut c = cuts.to_vec();
        c.remove(i);
        out.push(c);
    }
    out
}

/// Half-width of the window of column counts around the model optimum's
/// whose exact-`c` optima [`ColumnDp`] also costs on the integer plan.
const COUNT_WINDOW: usize = 2;
/// Largest `c_max · p` for which [`ColumnDp`] runs the per-count layers.
const PER_COUNT_BUDGET: usize = 1 << 18;
/// Most near-optimal segmentations [`ColumnDp`] costs at latency 0.
const NEAR_CAP: usize = 64;
/// Largest `p` for which [`ColumnDp`] runs the exact-corner DP
/// (`Model::aligned`, `O(p³)` with a latency).
const ALIGNED_MAX_P: usize = 48;

/// Model objective of a column layout: half-perimeter sum
/// ([`model_half_perimeter`]) plus `latency × E_i` with the generic count
/// `E_i = Σ_j (k_j − 1)·(shared sides of slab j) + p − 1` (module docs).
fn model_cost(columns: &[Vec<usize>], w: &[f64], along: f64, across: f64, latency: f64) -> f64 {
    let c = columns.len();
    let corners: usize = columns
        .iter()
        .enumerate()
        .map(|(j, s)| s.len().saturating_sub(1) * (usize::from(j > 0) + usize::from(j + 1 < c)))
        .sum();
    let p: usize = columns.iter().map(Vec::len).sum();
    model_half_perimeter(columns, w, along, across)
        + latency * (corners + p.saturating_sub(1)) as f64
}

/// Exact cost ([`plan_cost`]: Acost, plus `latency × internal edges` when
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
fn integer_cost(
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
fn running_sums(h: &[usize]) -> Vec<usize> {
    h.iter()
        .scan(0, |y, &x| {
            *y += x;
            Some(*y)
        })
        .collect()
}

/// Number of common values of two ascending sequences (merge). `O(a + b)`.
fn shared(a: &[usize], b: &[usize]) -> usize {
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

impl ArrayDecomposer for ColumnDp {
    fn name(&self) -> &'static str {
        "column"
    }

    fn decompose(&self, rows: usize, cols: usize, speeds: &[f64]) -> Result<ArrayPlan> {
        let speeds = &checked_speeds(rows, cols, speeds)?;
        let (layout, _) = self.layout(rows, cols, speeds)?;
        layout.realize(self.name(), rows, cols, speeds)
    }
}

/// Speeds divided by their maximum, so that sums cannot overflow (speeds
/// near `f64::MAX` are valid input); decompositions are scale-invariant.
/// Ratios that would underflow to 0 become `f64::MIN_POSITIVE`.
/// Call after validation. `O(p)`.
pub fn rescaled(speeds: &[f64]) -> Vec<f64> {
    let max = speeds.iter().copied().fold(0.0, f64::max);
    if max > 0.0 && max.is_finite() {
        // A ratio below the smallest positive f64 is clamped, not zeroed.
        speeds
            .iter()
            .map(|s| (s / max).max(f64::MIN_POSITIVE))
            .collect()
    } else {
        speeds.to_vec()
    }
}

/// [`check_args`] then [`rescaled`]: the common prologue of the decomposers.
pub fn checked_speeds(rows: usize, cols: usize, speeds: &[f64]) -> Result<Vec<f64>> {
    check_args(rows, cols, speeds)?;
    Ok(rescaled(speeds))
}

/// Rejects a negative or non-finite latency with [`Error::InvalidInput`].
pub fn check_latency(latency: f64) -> Result<()> {
    if latency.is_finite() && latency >= 0.0 {
        Ok(())
    } else {
        Err(Error::InvalidInput(format!(
            "latency must be finite and >= 0, got {latency}"
        )))
    }
}

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

/// The column model of one orientation over the sorted weights: slab costs
/// (with the generic latency term and, optionally, the whole-cell penalties)
/// and the dynamic programs over them. A segmentation is given by its `cuts`
/// `0 = c_0 < c_1 < … < c_C = p` into the ascending order.
struct Model {
    /// Input indices in ascending weight order.
    order: Vec<usize>,
    /// Prefix sums of the normalised sorted weights.
    prefix: Vec<f64>,
    along: f64,
    across: f64,
    lat: f64,
    /// Penalty factor of the whole-cell constraints (0: unconstrained).
    big: f64,
}

impl Model {
    /// Validates and sorts; `O(p log p)`.
    fn new(w: &[f64], along: f64, across: f64, lat: f64, whole: bool) -> Result<Model> {
        crate::check_speeds(w)?;
        let w = &rescaled(w);
        if !(along.is_finite() && along > 0.0 && across.is_finite() && across > 0.0) {
            return Err(Error::InvalidInput(format!(
                "array extents must be finite and > 0, got {along} x {across}"
            )));
        }
        check_latency(lat)?;
        let p = w.len();
        let total: f64 = w.iter().sum();
        let mut order: Vec<usize> = (0..p).collect();
        order.sort_by(|&a, &b| w[a].total_cmp(&w[b]).then(a.cmp(&b)));
        let mut prefix = Vec::with_capacity(p + 1);
        prefix.push(0.0);
        let mut acc = 0.0;
        for &i in &order {
            acc += w[i] / total;
            prefix.push(acc);
        }
        let big = if whole {
            1e9 * (along + across) * p as f64
        } else {
            0.0
        };
        Ok(Model {
            order,
            prefix,
            along,
            across,
            lat,
            big,
        })
    }

    /// Violation of the whole-cell constraints by slab `(a, q]`: width
    /// `La·X ≥ 1` and smallest part's height `Lc·s_(a+1)/X ≥ 1`, as the
    /// convex functions of `X = S_q − S_a` described at
    /// [`column_optimum_whole_cells`].
    fn violation(&self, a: usize, q: usize) -> f64 {
        let x = self.prefix[q] - self.prefix[a];
        let smallest = self.prefix[a + 1] - self.prefix[a];
        (1.0 / self.along - x).max(0.0) + (x - self.across * smallest).max(0.0)
    }

    /// Slab holding sorted parts `(a, q]`: its half-perimeters, its generic
    /// internal corners counted on both sides (`2(k−1)`) and its penalty.
    fn base(&self, a: usize, q: usize) -> f64 {
        let k = (q - a) as f64;
        let pen = if self.big > 0.0 {
            self.big * self.violation(a, q)
        } else {
            0.0
        };
        self.across
            + self.along * k * (self.prefix[q] - self.prefix[a])
            + 2.0 * self.lat * (k - 1.0)
            + pen
    }

    /// An end slab shares only one side: bonus `−L(k−1)`.
    fn end(&self, a: usize, q: usize) -> f64 {
        self.base(a, q) - self.lat * ((q - a) as f64 - 1.0)
    }

    /// Penalties paid by a segmentation.
    fn paid(&self, cuts: &[usize]) -> f64 {
        if self.big > 0.0 {
            cuts.windows(2)
                .map(|c| self.big * self.violation(c[0], c[1]))
                .sum()
        } else {
            0.0
        }
    }

    /// Whether every slab meets the whole-cell constraints (to rounding).
    fn feasible(&self, cuts: &[usize]) -> bool {
        let tol = 1e-9;
        cuts.windows(2).all(|c| {
            let x = self.prefix[c[1]] - self.prefix[c[0]];
            let smallest = self.prefix[c[0] + 1] - self.prefix[c[0]];
            x * self.along >= 1.0 - tol && x <= self.across * smallest * (1.0 + tol)
        })
    }

    /// The first Monge layer: `end(0, q)` (the first segment, an end slab).
    fn first_layer(&self) -> Vec<f64> {
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
    fn optimum(&self) -> (Vec<usize>, f64) {
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
    fn per_count(&self, c_max: usize) -> Vec<Option<Vec<usize>>> {
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

    /// The segmentation minimising the cost of the *integer* plan in the
    /// sorted placement (slabs left to right in ascending weight order, as
    /// in \[KRW96\] Theorem 1 and XY2), with the corner points counted exactly:
    /// each slab's cut heights are those of [`ColumnLayout::realize`]
    /// (largest remainder of `across` cells among its parts, by
    /// decreasing weight), two neighbouring slabs' equal cut heights are one
    /// vertex (\[KRW96\] §5), and a slab's width is its share of `along` rounded
    /// to the nearest cell (`realize` rounds by largest remainder over all
    /// slabs, so the result is a candidate, costed exactly afterwards).
    ///
    /// The shared corners couple neighbouring slabs, so the DP state is the
    /// last slab `(a, q]`: `F(a, q) = slab(a, q) + min_{b<a} F(b, a) −
    /// L·|cuts(b, a) ∩ cuts(a, q)|`. `O(p³ + p²·k)` time with a latency
    /// (`k` the largest slab), `O(p²)` without (no coupling), `O(p³)` space
    /// for the cut lists; used for small `p` only (`ALIGNED_MAX_P`).
    /// `weights` are the parts' weights as `realize` receives them.
    fn aligned(&self, weights: &[f64], along: usize, across: usize) -> Vec<usize> {
        let p = self.order.len();
        let lat = self.lat;
        let at = |a: usize, q: usize| a * (p + 1) + q;
        // Interior cut heights of each slab (only needed with a latency).
        let mut cut_sets: Vec<Vec<usize>> = vec![Vec::new(); (p + 1) * (p + 1)];
        if lat > 0.0 {
            for a in 0..p {
                for q in a + 1..=p {
                    let w: Vec<f64> = self.order[a..q]
                        .iter()
                        .rev()
                        .map(|&i| weights.get(i).copied().unwrap_or(0.0))
                        .collect();
                    let h = apportion(across, &w);
                    cut_sets[at(a, q)] = running_sums(&h[..q - a - 1]);
                }
            }
        }
        let slab = |a: usize, q: usize| -> f64 {
            let k = (q - a - 1) as f64;
            let width = (along as f64 * (self.prefix[q] - self.prefix[a])).round();
            across as f64 + k * width + 2.0 * lat * k
        };
        let mut f = vec![f64::INFINITY; (p + 1) * (p + 1)];
        let mut arg = vec![0usize; (p + 1) * (p + 1)];
        // Without a latency, the best predecessor of a slab starting at a
        // does not depend on the slab: min_b F(b, a), once per a.
        let mut min_to = vec![(f64::INFINITY, 0usize); p + 1];
        for q in 1..=p {
            f[at(0, q)] = slab(0, q) - lat * (q - 1) as f64;
            for a in 1..q {
                let (best, b) = if lat > 0.0 {
                    (0..a)
                        .map(|b| {
                            let s = shared(&cut_sets[at(b, a)], &cut_sets[at(a, q)]);
                            (f[at(b, a)] - lat * s as f64, b)
                        })
                        .fold((f64::INFINITY, 0), |x, y| if y.0 < x.0 { y } else { x })
                } else {
                    min_to[a]
                };
                f[at(a, q)] = best + slab(a, q);
                arg[at(a, q)] = b;
            }
            min_to[q] = (0..q)
                .map(|b| (f[at(b, q)], b))
                .fold((f64::INFINITY, 0), |x, y| if y.0 < x.0 { y } else { x });
        }
        // One slab: no internal corner at all; otherwise the last slab is
        // an end slab too.
        let mut best = slab(0, p) - 2.0 * lat * (p - 1) as f64;
        let mut last = 0;
        for a in 1..p {
            let v = f[at(a, p)] - lat * (p - a - 1) as f64;
            if v < best {
                best = v;
                last = a;
            }
        }
        let mut cuts = vec![p];
        let (mut a, mut q) = (last, p);
        while a > 0 {
            cuts.push(a);
            let b = arg[at(a, q)];
            q = a;
            a = b;
        }
        closed(cuts)
    }

    /// Up to `cap` segmentations whose objective (sum of `Model::base`
    /// over their slabs: the half-perimeter sum, plus the generic latency
    /// and penalties if any) is at most `limit`, depth first with the
    /// suffix optimum as bound. `O(p² + cap · p²)`.
    fn within(&self, limit: f64, cap: usize) -> Vec<Vec<usize>> {
        let p = self.order.len();
        let at = |a: usize, q: usize| a * (p + 1) + q;
        let mut slab = vec![f64::INFINITY; (p + 1) * (p + 1)];
        let mut suffix = vec![f64::INFINITY; p + 1];
        suffix[p] = 0.0;
        for a in (0..p).rev() {
            for q in a + 1..=p {
                slab[at(a, q)] = self.base(a, q);
                suffix[a] = suffix[a].min(slab[at(a, q)] + suffix[q]);
            }
        }
        let limit = limit + 1e-9 * limit.abs();
        let mut out = Vec::new();
        let mut path = vec![0];
        let bounds = Bounds {
            slab: &slab,
            suffix: &suffix,
            limit,
            cap,
        };
        bounds.enumerate(0.0, &mut path, &mut out);
        out
    }

    /// The slabs of a segmentation in sorted order, each listing its input
    /// indices by decreasing weight.
    fn segments(&self, cuts: &[usize]) -> Vec<Vec<usize>> {
        cuts.windows(2)
            .map(|c| self.order[c[0]..c[1]].iter().rev().copied().collect())
            .collect()
    }
}

/// The tables of `Model::within`'s depth-first search.
struct Bounds<'a> {
    /// `slab[a·(p+1) + q]`: objective of slab `(a, q]`.
    slab: &'a [f64],
    /// Optimal objective of the parts after each position.
    suffix: &'a [f64],
    limit: f64,
    cap: usize,
}

impl Bounds<'_> {
    /// Extends `path` (cuts so far) in every way that can stay within the limit.
    fn enumerate(&self, spent: f64, path: &mut Vec<usize>, out: &mut Vec<Vec<usize>>) {
        let p = self.suffix.len() - 1;
        let a = path.last().copied().unwrap_or(0);
        if a == p {
            out.push(path.clone());
            return;
        }
        for q in a + 1..=p {
            if out.len() >= self.cap {
                return;
            }
            let s = spent + self.slab[a * (p + 1) + q];
            if s + self.suffix[q] <= self.limit {
                path.push(q);
                self.enumerate(s, path, out);
                path.pop();
            }
        }
    }
}

/// Backtracked cut positions (last to first, without the leading 0) as
/// the ascending `0 = c_0 < … < c_C = p`.
fn closed(mut cuts: Vec<usize>) -> Vec<usize> {
    cuts.push(0);
    cuts.dedup();
    cuts.reverse();
    cuts
}

/// Placement of the DP: first segment left, second segment right, inner
/// ones between (the two end slabs are the ones the model gives the
/// end bonus).
fn ends_first(segs: Vec<Vec<usize>>) -> Vec<Vec<usize>> {
    let mut columns = Vec::with_capacity(segs.len());
    let mut it = segs.into_iter();
    let first = it.next();
    let second = it.next();
    columns.extend(first);
    columns.extend(it);
    columns.extend(second);
    columns
}

/// Placement grouping slabs by decreasing part count (sorted order within a
/// count): slabs of equally many equal parts become neighbours, whose
/// horizontal cuts line up and share corner points (\[KRW96\] §5).
fn by_count(mut segs: Vec<Vec<usize>>) -> Vec<Vec<usize>> {
    segs.sort_by_key(|s| std::cmp::Reverse(s.len()));
    segs
}

/// One layer of the concave (Monge) 1D/1D dynamic program
/// `F(q) = min_{1 ≤ a < q} h(a, F) + w(a, q)` for `q = 1..=n`, where `h(a, F)`
/// may read `F[..=a]` (Hirschberg–Larmore monotone candidate queue with
/// binary search, `O(n log n)`).
///
/// Requires `w` to satisfy the quadrangle inequality, so that a later
/// candidate `b > a` that beats `a` at some `q` beats it at every `q' > q`.
/// Candidates with `h = ∞` are skipped. Returns `F` and the argmin `a` of each `q`.
fn monge_layer(
    n: usize,
    h: impl Fn(usize, &[f64]) -> f64,
    w: impl Fn(usize, usize) -> f64,
) -> (Vec<f64>, Vec<usize>) {
    let mut f = vec![f64::INFINITY; n + 1];
    let mut arg = vec![0usize; n + 1];
    let mut hv = vec![f64::INFINITY; n + 1];
    // Deque of (candidate a, first q where it is best), as a Vec plus head.
    let mut queue: Vec<(usize, usize)> = Vec::with_capacity(n);
    let mut head = 0usize;
    let val = |hv: &[f64], a: usize, q: usize| hv[a] + w(a, q);
    for q in 1..=n {
        // Candidate a = q − 1 becomes usable now (F[..q] known).
        let b = q - 1;
        if b >= 1 {
            hv[b] = h(b, &f);
            if hv[b].is_finite() {
                loop {
                    if queue.len() == head {
                        queue.push((b, q));
                        break;
                    }
                    let (a, start) = queue[queue.len() - 1];
                    let s = start.max(q);
                    if val(&hv, b, s) <= val(&hv, a, s) {
                        queue.pop();
                        continue;
                    }
                    // Smallest x in (s, n] where b beats a, if any.
                    let (mut lo, mut hi) = (s + 1, n + 1);
                    while lo < hi {
                        let mid = lo + (hi - lo) / 2;
                        if val(&hv, b, mid) <= val(&hv, a, mid) {
                            hi = mid;
                        } else {
                            lo = mid + 1;
                        }
                    }
                    if lo <= n {
                        queue.push((b, lo));
                    }
                    break;
                }
            }
        }
        while queue.len() > head + 1 && queue[head + 1].1 <= q {
            head += 1;
        }
        if let Some(&(a, _)) = queue.get(head) {
            f[q] = val(&hv, a, q);
            arg[q] = a;
        }
    }
    (f, arg)
}

/// Model half-perimeter sum `C·Lc + La·Σ_j k_j·W_j` of a column layout
/// (weights normalised to sum 1), \[BBLRR01\] §3.2.4. `O(p)`.
pub fn model_half_perimeter(columns: &[Vec<usize>], w: &[f64], along: f64, across: f64) -> f64 {
    let w = &rescaled(w);
    let total: f64 = w.iter().sum();
    columns
        .iter()
        .map(|c| {
            let wj: f64 = c.iter().map(|&i| w[i]).sum::<f64>() / total;
            across + along * c.len() as f64 * wj
        })
        .sum()
}

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

/// Lower bound on Acost for any rectangle decomposition of `rows × cols`
/// with areas proportional to `speeds` (\[BBLRR01\] §3.2.3, Lemma 1, scaled):
/// part `i` of area `A_i = s_i·m·n` has half-perimeter at least `2√A_i`,
/// and — a valid strengthening — at least `min_{h ∈ [A_i/n, m]} h + A_i/h`
/// since it must fit in the array. `Acost ≥ Σ_i that − (m + n)`. `O(p)`.
pub fn acost_lower_bound(rows: usize, cols: usize, speeds: &[f64]) -> Result<f64> {
    check_args(rows, cols, speeds)?;
    let speeds = &rescaled(speeds);
    let (m, n) = (rows as f64, cols as f64);
    let total: f64 = speeds.iter().sum();
    let hp: f64 = speeds
        .iter()
        .map(|s| {
            let a = s / total * m * n;
            // h + a/h is convex in h, minimised at √a; clamp into [a/n, m].
            let h = a.sqrt().clamp(a / n, m);
            h + a / h
        })
        .sum();
    Ok((hp - (m + n)).max(0.0))
}

/// The plain Lemma 1 bound on the unit square, `2·Σ√s_i` for areas
/// normalised to sum 1 (\[BBLRR01\] §3.2.3).
pub fn lemma1_bound(speeds: &[f64]) -> Result<f64> {
    crate::check_speeds(speeds)?;
    let speeds = &rescaled(speeds);
    let total: f64 = speeds.iter().sum();
    Ok(2.0 * speeds.iter().map(|s| (s / total).sqrt()).sum::<f64>())
}

/// Acost of the integer plan plus, when `latency > 0`, the latency term
/// (\[KRW96\] §5) — the objective [`ColumnDp`] and `Best` minimise.
pub fn plan_cost(plan: &ArrayPlan, latency: f64) -> f64 {
    if latency > 0.0 {
        latency_cost(plan, latency)
    } else {
        acost(plan) as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn single_part_and_bad_latency() {
        let plan = ColumnDp::default().decompose(3, 4, &[2.0]).unwrap();
        assert_eq!(plan.parts[0].area(), 12);
        assert!(ColumnDp::with_latency(-1.0)
            .decompose(3, 4, &[1.0])
            .is_err());
        assert!(ColumnDp::default().decompose(3, 4, &[1.0, 0.0]).is_err());
        assert!(ColumnDp::default().decompose(0, 4, &[1.0]).is_err());
    }

    #[test]
    fn homogeneous_four_is_two_by_two() {
        let plan = ColumnDp::default().decompose(8, 8, &[1.0; 4]).unwrap();
        assert!(plan.parts.iter().all(|r| r.rows == 4 && r.cols == 4));
        assert_eq!(acost(&plan), 16);
    }

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

    #[test]
    fn lower_bound_is_tight_for_squares() {
        // Four equal squares tile 8×8 exactly: Acost 16 = 4·(4+4) − 16.
        assert_eq!(acost_lower_bound(8, 8, &[1.0; 4]).unwrap(), 16.0);
        assert_eq!(acost_lower_bound(8, 8, &[1.0]).unwrap(), 0.0);
        // A thin array forces thin parts: 2 parts of 1×4 in a 1×8 array.
        assert_eq!(acost_lower_bound(1, 8, &[1.0, 1.0]).unwrap(), 1.0);
    }
}
