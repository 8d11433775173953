//! Communication costs of an array decomposition (\[KRW96\]).
//!
//! * **Acost** (§2, Figure 4): total length, in cell edges, of the internal
//!   edges of the decomposition — the number of pairs of 4-neighbour cells with
//!   different owners. Computed as `(Σ perimeters − 2(m + n)) / 2`, O(p).
//! * **Bcost** (§2): internal plus external edges for wraparound (torus)
//!   interactions; two parallel external edges owned by the same part are not
//!   counted. Equals the number of 4-neighbour cell pairs *on the torus* with
//!   different owners. O(p log p).
//! * **Internal edges** (§5, eq. (1) and `E_i = V_i + p − 1`): the number of
//!   edges of the planar graph whose vertices are the partitions' corner
//!   points, found by the Euler formula from the unique internal corner points
//!   (by sorting, O(p log p)). Multiplied by a latency it gives the latency
//!   term of [`latency_cost`].

use super::{ArrayPlan, Rect};
use crate::error::Result;

/// Acost: number of internal cell edges (\[KRW96\] §2). O(p).
pub fn acost(plan: &ArrayPlan) -> usize {
    let perim: usize = plan.parts.iter().map(Rect::perimeter).sum();
    (perim - 2 * (plan.rows + plan.cols)) / 2
}

/// Bcost: internal cell edges plus wraparound edges between different parts
/// (\[KRW96\] §2, Figure 4: Acost = m + n', Bcost = 2m + 2n'). O(p log p).
pub fn bcost(plan: &ArrayPlan) -> usize {
    acost(plan) + wrap_mismatches(plan, true) + wrap_mismatches(plan, false)
}

/// Counts the rows (`horizontal = true`: cells `(r, 0)` vs `(r, n−1)`) or
/// columns (cells `(0, c)` vs `(m−1, c)`) whose two border cells have different owners.
fn wrap_mismatches(plan: &ArrayPlan, horizontal: bool) -> usize {
    // Intervals along the border, with their owner: (start, end, part).
    let side = |first: bool| -> Vec<(usize, usize, usize)> {
        let mut v: Vec<(usize, usize, usize)> = plan
            .parts
            .iter()
            .enumerate()
            .filter(|(_, p)| !p.is_empty())
            .filter(|(_, p)| match (horizontal, first) {
                (true, true) => p.col == 0,
                (true, false) => p.col_end() == plan.cols,
                (false, true) => p.row == 0,
                (false, false) => p.row_end() == plan.rows,
            })
            .map(|(i, p)| {
                if horizontal {
                    (p.row, p.row_end(), i)
                } else {
                    (p.col, p.col_end(), i)
                }
            })
            .collect();
        v.sort_unstable();
        v
    };
    let (a, b) = (side(true), side(false));
    let (mut i, mut j, mut count) = (0, 0, 0);
    while i < a.len() && j < b.len() {
        let lo = a[i].0.max(b[j].0);
        let hi = a[i].1.min(b[j].1);
        if hi > lo && a[i].2 != b[j].2 {
            count += hi - lo;
        }
        if a[i].1 <= b[j].1 {
            i += 1;
        } else {
            j += 1;
        }
    }
    count
}

/// Number of internal edges of the decomposition's planar graph, by the Euler
/// formula `E_i = V_i + p − 1` (\[KRW96\] §5), with `p` the non-empty parts and `V_i`
/// the unique corner points strictly inside the array. O(p log p).
pub fn internal_edges(plan: &ArrayPlan) -> usize {
    let mut corners: Vec<(usize, usize)> = Vec::with_capacity(4 * plan.parts.len());
    let mut nonempty = 0;
    for p in plan.parts.iter().filter(|p| !p.is_empty()) {
        nonempty += 1;
        for (r, c) in [
            (p.row, p.col),
            (p.row, p.col_end()),
            (p.row_end(), p.col),
            (p.row_end(), p.col_end()),
        ] {
            if r > 0 && r < plan.rows && c > 0 && c < plan.cols {
                corners.push((r, c));
            }
        }
    }
    corners.sort_unstable();
    corners.dedup();
    corners.len() + nonempty - 1
}

/// The latency-aware cost of \[KRW96\] §5: `Acost + latency × internal edges`.
pub fn latency_cost(plan: &ArrayPlan, latency: f64) -> f64 {
    acost(plan) as f64 + latency * internal_edges(plan) as f64
}

/// Acost of the integer plan plus, when `latency > 0`, the latency term
/// (\[KRW96\] §5) — the objective [`ColumnDp`](super::ColumnDp) and [`Best`](super::Best) minimise.
pub fn plan_cost(plan: &ArrayPlan, latency: f64) -> f64 {
    if latency > 0.0 {
        latency_cost(plan, latency)
    } else {
        acost(plan) as f64
    }
}

/// Predicted time of one iteration of a stencil code running `plan` on
/// parts of relative `speeds` — the criterion [`Best`](super::Best) ranks
/// by:
///
/// ```text
/// T = max_i area_i / (s_i / s̄)  +  Acost + latency × internal edges
/// ```
///
/// with `s̄` the mean speed. The unit of time is the time a part of mean
/// speed takes to update one cell; one internal cell edge (the data of one
/// cell sent across a part boundary, \[KRW96\] §2) costs one such unit, and
/// every internal edge of the decomposition's planar graph a further
/// `latency` units (\[KRW96\] §5). The first term is the slowest part's
/// compute time (the others wait for it at the halo exchange), so an
/// unbalanced plan — e.g. all cells on one part of four — costs what it
/// does, however small its communication. Errors: invalid speeds, a speed
/// count that differs from the plan's part count, an invalid latency.
/// `O(p log p)`.
pub fn predicted_time(plan: &ArrayPlan, speeds: &[f64], latency: f64) -> Result<f64> {
    super::checks::check_latency(latency)?;
    plan.check_speeds(speeds)?;
    // Divided by the maximum first: the mean cannot overflow.
    let speeds = super::checks::rescaled(speeds);
    let mean = speeds.iter().sum::<f64>() / speeds.len() as f64;
    let compute = plan
        .parts
        .iter()
        .zip(&speeds)
        .map(|(r, s)| r.rows as f64 * r.cols as f64 * (mean / s))
        .fold(0.0, f64::max);
    Ok(compute + latency_cost(plan, latency))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn owners(plan: &ArrayPlan) -> Vec<Vec<usize>> {
        (0..plan.rows)
            .map(|r| {
                (0..plan.cols)
                    .map(|c| plan.owner_of(r, c).unwrap())
                    .collect()
            })
            .collect()
    }

    fn brute(plan: &ArrayPlan, torus: bool) -> usize {
        let o = owners(plan);
        let (m, n) = (plan.rows, plan.cols);
        let mut count = 0;
        for r in 0..m {
            for c in 0..n {
                if c + 1 < n && o[r][c] != o[r][c + 1] {
                    count += 1;
                }
                if r + 1 < m && o[r][c] != o[r + 1][c] {
                    count += 1;
                }
            }
        }
        if torus {
            count += (0..m).filter(|&r| n > 1 && o[r][0] != o[r][n - 1]).count();
            count += (0..n).filter(|&c| m > 1 && o[0][c] != o[m - 1][c]).count();
        }
        count
    }

    #[test]
    fn figure4_like_costs() {
        // Vertical cut of an m×n array ([KRW96] Figure 5a): Acost = m, Bcost = 2m.
        let p = ArrayPlan::new(
            "t",
            4,
            6,
            vec![Rect::new(0, 0, 4, 2), Rect::new(0, 2, 4, 4)],
        )
        .unwrap();
        assert_eq!(acost(&p), 4);
        assert_eq!(bcost(&p), 8);
        assert_eq!(internal_edges(&p), 1);
        // Figure 4: one full vertical cut and a partial horizontal one.
        let p = ArrayPlan::new(
            "t",
            4,
            6,
            vec![
                Rect::new(0, 0, 4, 2),
                Rect::new(0, 2, 1, 4),
                Rect::new(1, 2, 3, 4),
            ],
        )
        .unwrap();
        assert_eq!(acost(&p), 4 + 4);
        assert_eq!(bcost(&p), 2 * 4 + 2 * 4);
        assert_eq!(brute(&p, true), bcost(&p));
        // One T-junction vertex: E_i = 1 + 3 - 1 = 3 segments.
        assert_eq!(internal_edges(&p), 3);
    }

    #[test]
    fn costs_match_brute_force() {
        let p = ArrayPlan::new(
            "t",
            5,
            7,
            vec![
                Rect::new(0, 0, 2, 3),
                Rect::new(2, 0, 3, 3),
                Rect::new(0, 3, 5, 2),
                Rect::new(0, 5, 1, 2),
                Rect::new(1, 5, 4, 2),
                Rect::default(),
            ],
        )
        .unwrap();
        assert_eq!(acost(&p), brute(&p, false));
        assert_eq!(bcost(&p), brute(&p, true));
        // Four-way crossing counts one vertex: 2x2 grid has 4 internal edges.
        let q = ArrayPlan::new(
            "t",
            2,
            2,
            vec![
                Rect::new(0, 0, 1, 1),
                Rect::new(0, 1, 1, 1),
                Rect::new(1, 0, 1, 1),
                Rect::new(1, 1, 1, 1),
            ],
        )
        .unwrap();
        assert_eq!(internal_edges(&q), 4);
    }
}
