//! XY and XY2 decompositions (\[KRW96\] §4, §5, §6.1,
//! Figure 13, Theorem 1, Lemma 3).
//!
//! An XY decomposition cuts the array along its longer axis X into vertical
//! subarrays (columns), then cuts each column along Y into its parts. By
//! Theorem 1 the search can be limited to the `pt(p)` *sorted* decompositions
//! (column counts nondecreasing, parts by nonincreasing size left to right and
//! top to bottom), one per partition of `p` ([`super::pt`]). [`Xy`] realises
//! each of them with [`ColumnLayout`] and keeps the cheapest plan, by Acost or,
//! with a latency, by `Acost + latency × internal edges` (§5: the same `pt(p)`
//! candidates, costed with the Euler count of internal edges).
//!
//! [`Xy2`] adds Lemma 3: writing a candidate's cost as `Acost = d·m + k·n`
//! (`m ≤ n`, `d = v − 1` vertical cuts of length `m`, `k = Σᵢ (countᵢ − 1) ·
//! Σ_{j∈i} aⱼ` horizontal cuts per unit of `n`, Proof 1), the candidate is
//! rotated (columns become bands along the shorter axis) when `k > d`.
//!
//! Complexity: O(pt(p) · p log p) (each candidate is realised by
//! [`ColumnLayout::realize`], whose largest-remainder rounding sorts)
//! (Table 8 of \[KRW96\]: XY2 is the cheaper of the exhaustive searches),
//! for at most [`XY_MAX_PARTS`] parts; above, the column DP's cost.

use super::checks::{check_latency, checked_speeds};
use super::columns::ColumnLayout;
use super::cost::plan_cost;
use super::guillotine::sorted_desc;
use super::pt::for_each_partition;
use super::{ArrayDecomposer, ArrayPlan, ColumnDp};
use crate::error::{Error, Result};

/// XY (\[KRW96\] §6.1, Figure 13): best of the `pt(p)` sorted XY decompositions.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Xy {
    /// Latency per internal edge (\[KRW96\] §5); 0 selects by Acost alone.
    pub latency: f64,
}

/// XY2 (\[KRW96\] §6.1): XY with the rotation rule of Lemma 3 applied to every
/// candidate before it is costed.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Xy2 {
    /// Latency per internal edge (\[KRW96\] §5); 0 selects by Acost alone.
    pub latency: f64,
}

/// The coefficients `(d, k)` of `Acost = d·m + k·n` (\[KRW96\] Proof 1, Lemma 3) of
/// the XY decomposition whose columns hold `counts[i]` consecutive parts of
/// `weights` (in layout order; normalised here). `m` is the length of a
/// vertical cut (the extent across the columns), `n` the extent along them.
/// Valid for any order, sorted or not. O(p).
pub fn xy_coefficients(counts: &[usize], weights: &[f64]) -> (f64, f64) {
    let total: f64 = weights.iter().sum();
    let mut k = 0.0;
    let mut start = 0;
    for &c in counts {
        let end = (start + c).min(weights.len());
        let col: f64 = weights[start..end].iter().sum();
        k += c.saturating_sub(1) as f64 * col / total;
        start = end;
    }
    (counts.len().saturating_sub(1) as f64, k)
}

/// The inherent `best_layout` and the [`ArrayDecomposer`] impl of one XY
/// variant (`rotate`: apply Lemma 3).
macro_rules! xy_variant {
    ($ty:ident, $name:literal, $rotate:literal) => {
        impl $ty {
            /// The chosen layout and its plan.
            pub fn best_layout(
                &self,
                rows: usize,
                cols: usize,
                speeds: &[f64],
            ) -> Result<(ColumnLayout, ArrayPlan)> {
                search($name, rows, cols, speeds, self.latency, $rotate)
            }
        }

        impl ArrayDecomposer for $ty {
            fn name(&self) -> &'static str {
                $name
            }

            fn decompose(&self, rows: usize, cols: usize, speeds: &[f64]) -> Result<ArrayPlan> {
                Ok(self.best_layout(rows, cols, speeds)?.1)
            }
        }
    };
}

xy_variant!(Xy, "xy", false);
xy_variant!(Xy2, "xy2", true);

/// Most parts for which [`Xy`] and [`Xy2`] enumerate their `pt(p)`
/// candidates: 43, the largest `p` with `pt(p) ≤ 2^16` (63 261 candidates,
/// under a second). With more parts the enumeration would grow without
/// bound in time (`pt(60)` ≈ 10^6 candidates took 14 s), so the column DP
/// ([`ColumnDp`], which searches the same class of column-based
/// decompositions, both orientations, with the same cost) stands in, and
/// the plan's `algorithm` reads `xy:column` (`xy2:column`).
pub const XY_MAX_PARTS: usize = 43;

/// Enumerates the sorted XY decompositions in the order of Figure 13, keeping
/// the first cheapest (above [`XY_MAX_PARTS`] parts: the column DP's plan).
fn search(
    name: &str,
    rows: usize,
    cols: usize,
    speeds: &[f64],
    latency: f64,
    rotate: bool,
) -> Result<(ColumnLayout, ArrayPlan)> {
    // Speeds divided by their maximum: sums cannot overflow.
    let speeds = &checked_speeds(rows, cols, speeds)?;
    check_latency(latency)?;
    if speeds.len() > XY_MAX_PARTS {
        // pt(p) candidates would take too long: the column DP, which
        // searches the same class, stands in (named `xy:column`).
        let (layout, _) = ColumnDp::with_latency(latency).layout(rows, cols, speeds)?;
        let plan = layout.realize(&format!("{name}:column"), rows, cols, speeds)?;
        return Ok((layout, plan));
    }
    let order = sorted_desc(speeds);
    let sorted_w: Vec<f64> = order.iter().map(|&i| speeds[i]).collect();
    // X is the longer axis: vertical slabs when cols >= rows.
    let base = rows > cols;
    let mut best: Option<(f64, ColumnLayout, ArrayPlan)> = None;
    let mut failure: Option<Error> = None;
    for_each_partition(speeds.len(), |counts| {
        let mut columns = Vec::with_capacity(counts.len());
        let mut start = 0;
        for &c in counts {
            columns.push(order[start..start + c].to_vec());
            start += c;
        }
        let mut transposed = base;
        if rotate {
            let (d, k) = xy_coefficients(counts, &sorted_w);
            if k > d {
                transposed = !transposed;
            }
        }
        let layout = ColumnLayout {
            columns,
            transposed,
        };
        match layout.realize(name, rows, cols, speeds) {
            Ok(plan) => {
                let cost = plan_cost(&plan, latency);
                if best.as_ref().is_none_or(|(b, _, _)| cost < *b) {
                    best = Some((cost, layout, plan));
                }
            }
            Err(e) => failure = failure.take().or(Some(e)),
        }
    });
    match (best, failure) {
        (Some((_, layout, plan)), _) => Ok((layout, plan)),
        (None, Some(e)) => Err(e),
        (None, None) => Err(Error::Empty("no XY decomposition".into())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::array2d::cost::acost;

    #[test]
    fn coefficients_match_proof1() {
        // Figure 7 (b): counts (1, 1, 2) -> Acost = 2m + n(a3 + a4).
        let w = [0.4, 0.3, 0.2, 0.1];
        let (d, k) = xy_coefficients(&[1, 1, 2], &w);
        assert_eq!(d, 2.0);
        assert!((k - 0.3).abs() < 1e-12);
        // Figure 7 (d): 2 x 2 -> m + n.
        let (d, k) = xy_coefficients(&[2, 2], &w);
        assert_eq!(d, 1.0);
        assert!((k - 1.0).abs() < 1e-12);
    }

    #[test]
    fn xy2_rotates_when_cheaper() {
        // 4 equal parts on a square: 2x2 grid (Acost m + n) beats 4 slabs.
        let plan = Xy::default().decompose(100, 100, &[1.0; 4]).unwrap();
        assert_eq!(acost(&plan), 200);
        // Strip 10 x 1000, 2 parts: XY cuts across the long axis (cost 10);
        // XY2 never rotates that (k = 0 < d = 1).
        let plan = Xy2::default().decompose(10, 1000, &[1.0, 2.0]).unwrap();
        assert_eq!(acost(&plan), 10);
        assert!(Xy { latency: -1.0 }.decompose(4, 4, &[1.0]).is_err());
    }

    #[test]
    fn many_parts_fall_back_to_the_column_dp() {
        // Issue 12: 60 parts on 1000 x 1000 took 14 s (pt(60) = 966 467
        // candidates); now the column DP stands in, at once.
        let speeds: Vec<f64> = (0..60).map(|i| 1.0 + (i % 7) as f64 * 0.37).collect();
        let t = std::time::Instant::now();
        for d in [&Xy::default() as &dyn ArrayDecomposer, &Xy2::default()] {
            let plan = d.decompose(1000, 1000, &speeds).unwrap();
            assert_eq!(plan.algorithm, format!("{}:column", d.name()));
            let dp = ColumnDp::default().decompose(1000, 1000, &speeds).unwrap();
            assert_eq!(plan.parts, dp.parts);
        }
        assert!(t.elapsed().as_secs_f64() < 5.0, "{:?}", t.elapsed());
        // At the limit the enumeration still runs.
        let speeds = &speeds[..XY_MAX_PARTS];
        assert_eq!(
            Xy::default().decompose(50, 70, speeds).unwrap().algorithm,
            "xy"
        );
    }
}
