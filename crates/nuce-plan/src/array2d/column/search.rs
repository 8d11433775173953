//! [`ColumnDp`]: the DP proposes candidates, the integer plan chooses among
//! them (module docs, "The integer plan decides" and "Whole cells").

use super::dp::ends_first;
use super::integer::integer_cost;
use super::model::{model_cost, Model};
use super::{check_latency, checked_speeds, plan_cost};
use crate::array2d::{check_args, ArrayDecomposer, ArrayPlan, ColumnLayout};
use crate::error::{Error, Result};

/// Optimal column-based decomposition (\[BBLRR01\] §3.2.4, Algorithms 3–4), both
/// orientations, minimising `Acost + latency × internal edges` (\[KRW96\] §5) of
/// the **integer** plan over candidates proposed by the continuous DP (see
/// the module docs and [`ColumnDp::layout`]).
///
/// Integer-aware: candidates include the DP restricted to layouts whose
/// parts are at least one cell in each extent
/// ([`column_optimum_whole_cells`](super::column_optimum_whole_cells)), so that rounding leaves no part empty,
/// and a plan without empty parts wins over a cheaper one with empty parts.
///
/// Complexity: `O(p log p)` plus `O(p log p)` per candidate for large `p`
/// (a constant number of candidates); below the budgets, `O((c* + 2) · p log p)`
/// for the per-count optima (`c*` the optimum's column count) and, for
/// `p ≤ 48`, `O(p³ + p²·k)` for the exact-corner DP, `O(p² · log p)` per
/// descent round and at most 64 near-optimal candidates at latency 0.
///
/// ```
/// use nuce_plan::array2d::{cost::acost, ArrayDecomposer, ColumnDp};
/// // The example of \[BBLRR01\] §3.2.4 (Figure 16): three columns, Ĉ = 5.5 on the
/// // unit square, i.e. Acost ≈ (5.5 − 2)·1000 on a 1000 × 1000 array.
/// let s = [0.05, 0.05, 0.08, 0.1, 0.1, 0.12, 0.2, 0.3];
/// let plan = ColumnDp::default().decompose(1000, 1000, &s)?;
/// assert!((acost(&plan) as i64 - 3500).abs() <= 8);
/// # Ok::<(), nuce_plan::Error>(())
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct ColumnDp {
    /// Cost of one message start-up, in cell-edge units (\[KRW96\] §5); 0 minimises Acost.
    pub latency: f64,
}

impl ColumnDp {
    /// Parts from which [`ColumnDp`] takes its fast path: on a square array
    /// one orientation only (the other is its mirror image, of the same
    /// cost), and the whole-cell model optimum alone where it is feasible
    /// (without the unrestricted one as a second candidate). At `p = 10⁵`
    /// it plans in about a third of the time, within a fraction of a
    /// percent of the unhurried cost ([`ColumnDp::unhurried`];
    /// `examples/bench_plan_scale.rs`, BENCHMARKS.md).
    pub const FAST_FROM: usize = 20_000;

    /// [`ArrayDecomposer::decompose`] without the fast path at any `p`.
    pub fn unhurried(&self, rows: usize, cols: usize, speeds: &[f64]) -> Result<ArrayPlan> {
        let speeds = &checked_speeds(rows, cols, speeds)?;
        let (layout, _) = self.layout_within(rows, cols, speeds, usize::MAX)?;
        layout.realize(self.name(), rows, cols, speeds)
    }

    /// The fast path at any `p` (the plan [`ArrayDecomposer::decompose`]
    /// gives from [`ColumnDp::FAST_FROM`] parts): to compare it with
    /// [`ColumnDp::unhurried`] where both run.
    pub fn fast(&self, rows: usize, cols: usize, speeds: &[f64]) -> Result<ArrayPlan> {
        let speeds = &checked_speeds(rows, cols, speeds)?;
        let (layout, _) = self.layout_within(rows, cols, speeds, 0)?;
        layout.realize(self.name(), rows, cols, speeds)
    }

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
    /// From [`ColumnDp::FAST_FROM`] parts, the fast path's candidates only.
    pub fn layout(&self, rows: usize, cols: usize, speeds: &[f64]) -> Result<(ColumnLayout, f64)> {
        self.layout_within(rows, cols, speeds, Self::FAST_FROM)
    }

    /// [`ColumnDp::layout`] with the fast path from `fast_from` parts.
    fn layout_within(
        &self,
        rows: usize,
        cols: usize,
        speeds: &[f64],
        fast_from: usize,
    ) -> Result<(ColumnLayout, f64)> {
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
        let fast = p >= fast_from;
        let orientations: &[bool] = if fast && rows == cols {
            &[false]
        } else {
            &[false, true]
        };
        for &transposed in orientations {
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
                let free = Model::new(speeds, along, across, lat, false)?;
                let whole = free.whole_cells();
                let (wc, _) = whole.optimum();
                let ok = whole.feasible(&wc);
                // The fast path keeps the whole-cell optimum alone when feasible.
                let fc = (!fast || !ok).then(|| free.optimum().0);
                let model = if ok { &whole } else { &free };
                let c_star = match (&fc, ok) {
                    (Some(fc), false) => fc.len(),
                    _ => wc.len(),
                } - 1;
                add(wc);
                if let Some(fc) = fc {
                    add(fc);
                }
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

/// Placement grouping slabs by decreasing part count (sorted order within a
/// count): slabs of equally many equal parts become neighbours, whose
/// horizontal cuts line up and share corner points (\[KRW96\] §5).
fn by_count(mut segs: Vec<Vec<usize>>) -> Vec<Vec<usize>> {
    segs.sort_by_key(|s| std::cmp::Reverse(s.len()));
    segs
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::array2d::cost::acost;

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
}
