//! Integer realisation of nested (column-class) 3D layouts: slabs along one
//! axis, columns inside each slab along a second, blocks inside each column
//! along the third — the 3D form of [`crate::array2d::ColumnLayout`]. Every
//! extent is split so that the largest `layers / weight` is least
//! (\[BBLRR01\] §2.2's DISTRIBUTE: the pieces at one level share their other
//! extents), so totals are exact and the slowest piece is as fast as whole
//! layers allow; an extent then lies within about a layer of its share.

use super::planes::balance_small_or_large;
use super::{Box3, GridPlan3, Shape3};
use crate::array2d::apportion;
use crate::error::{Error, Result};

/// A nested layout: `slabs[s][c]` lists the parts of column `c` of slab
/// `s`, in placement order along `axes[2]`; slabs follow each other along
/// `axes[0]`, the columns of a slab along `axes[1]`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Layout3 {
    /// Slab axis, column axis, block axis (a permutation of 0, 1, 2).
    pub axes: [usize; 3],
    /// Part indices per slab, per column.
    pub slabs: Vec<Vec<Vec<usize>>>,
}

impl Layout3 {
    /// Rounds the layout to an integer plan of `shape` for `weights` (one
    /// per part, indexed by part; every part must appear exactly once).
    ///
    /// The three levels are rounded together, not one after the other:
    /// each slab thickness (each column width) is chosen, within a cell or
    /// two of its proportional value, for what the levels below it can then
    /// reach, so a level's rounding error is carried down and absorbed
    /// there. The objective, per part, is its distance from its share in
    /// planes (`|cells − share| / largest face`), counted as 1 when below
    /// one plane, then `cells / weight`: the largest over the parts is made
    /// least by a binary search per level. The cut planes are then moved by
    /// [`balance_planes`](super::planes::balance_planes). On grids where
    /// [`Guillotine3`](super::Guillotine3) applies, and where a weight is
    /// not positive, each level is split minimax as below instead.
    /// `O(16·p log p)`.
    pub fn realize(&self, name: &str, shape: Shape3, weights: &[f64]) -> Result<GridPlan3> {
        let mut seen = vec![false; weights.len()];
        for &i in self.slabs.iter().flatten().flatten() {
            if i >= weights.len() || std::mem::replace(&mut seen[i], true) {
                return Err(Error::InvalidPlan(format!(
                    "part {i} missing from or repeated in the layout"
                )));
            }
        }
        let mut axes = self.axes;
        axes.sort_unstable();
        if seen.iter().any(|s| !s) || axes != [0, 1, 2] {
            return Err(Error::InvalidPlan(
                "a part is missing from the layout, or its axes are no permutation".into(),
            ));
        }
        let ext = [shape.0, shape.1, shape.2];
        let [a, b, c] = self.axes;
        let sum = |ids: &[usize]| ids.iter().map(|&i| weights[i]).sum::<f64>();
        let slab_w: Vec<f64> = self
            .slabs
            .iter()
            .map(|s| s.iter().map(|col| sum(col)).sum())
            .collect();
        let n = [ext[a], ext[b], ext[c]];
        let tiny = super::Guillotine3::applies(shape, weights.len());
        let nested = Nested::new(self, n, weights).filter(|_| !tiny && !super::planes::legacy());
        let slab_t = nested
            .as_ref()
            .and_then(|m| m.slabs())
            .unwrap_or_else(|| minimax(ext[a], &slab_w));
        let mut boxes = vec![Box3::default(); weights.len()];
        let mut pa = 0;
        for ((s, slab), ta) in self.slabs.iter().enumerate().zip(slab_t) {
            let col_w: Vec<f64> = slab.iter().map(|col| sum(col)).collect();
            let widths = nested
                .as_ref()
                .and_then(|m| m.columns(s, ta))
                .unwrap_or_else(|| minimax(ext[b], &col_w));
            let mut pb = 0;
            for ((j, col), tb) in slab.iter().enumerate().zip(widths) {
                let w: Vec<f64> = col.iter().map(|&i| weights[i]).collect();
                let heights = nested
                    .as_ref()
                    .and_then(|m| m.blocks(s, j, ta, tb))
                    .unwrap_or_else(|| minimax(ext[c], &w));
                let mut pc = 0;
                for (&i, tc) in col.iter().zip(heights) {
                    let mut lo = [0; 3];
                    let mut len = [0; 3];
                    (lo[a], lo[b], lo[c]) = (pa, pb, pc);
                    (len[a], len[b], len[c]) = (ta, tb, tc);
                    boxes[i] = Box3::from_axes(lo, len);
                    pc += tc;
                }
                pb += tb;
            }
            pa += ta;
        }
        let plan = GridPlan3::new(name, shape, boxes)?;
        Ok(balance_small_or_large(plan, weights))
    }
}

/// The cost of a piece or a group of pieces: its largest `|cells − share|`
/// in planes (largest faces), counted as 1 when below, then its largest
/// `cells / weight`; compared lexicographically.
type Cost = (f64, f64);

/// The lexicographically larger cost.
fn worse(x: Cost, y: Cost) -> Cost {
    if x.0.total_cmp(&y.0).then(x.1.total_cmp(&y.1)).is_ge() {
        x
    } else {
        y
    }
}

/// Layer counts for pieces whose ideal counts are `ideal` (summing to
/// `total`), each within `−1 … +2` of its floor, that sum to `total` and
/// make the largest `cost(k, count)` least (lexicographic [`Cost`]), by
/// binary search on the cost: for a bound, each piece may take the range
/// between its least and largest count within the bound. `None` if no
/// bound admits a split (then the caller splits minimax).
fn least_worst(
    total: usize,
    ideal: &[f64],
    cost: impl Fn(usize, usize) -> Cost,
) -> Option<(Vec<usize>, Cost)> {
    let cands: Vec<Vec<(usize, Cost)>> = ideal
        .iter()
        .enumerate()
        .map(|(k, &x)| {
            let f = x.max(0.0).floor() as usize;
            (f.saturating_sub(1)..=(f + 2).min(total))
                .map(|v| (v, cost(k, v)))
                .collect()
        })
        .collect();
    let mut bounds: Vec<Cost> = cands.iter().flatten().map(|c| c.1).collect();
    bounds.sort_by(|x, y| x.0.total_cmp(&y.0).then(x.1.total_cmp(&y.1)));
    bounds.dedup();
    let split = |bound: Cost| -> Option<Vec<usize>> {
        let within = |c: &Cost| worse(*c, bound) == bound;
        let mut lo = Vec::with_capacity(cands.len());
        let mut hi = Vec::with_capacity(cands.len());
        for cs in &cands {
            let ok = cs.iter().filter(|c| within(&c.1));
            lo.push(ok.clone().map(|c| c.0).min()?);
            hi.push(ok.map(|c| c.0).max()?);
        }
        let (sl, sh) = (lo.iter().sum::<usize>(), hi.iter().sum::<usize>());
        if sl > total || sh < total {
            return None;
        }
        let mut left = total - sl;
        for (l, h) in lo.iter_mut().zip(&hi) {
            let add = left.min(h - *l);
            *l += add;
            left -= add;
        }
        Some(lo)
    };
    let (mut l, mut h) = (0, bounds.len());
    while l < h {
        let mid = (l + h) / 2;
        if split(bounds[mid]).is_some() {
            h = mid;
        } else {
            l = mid + 1;
        }
    }
    let counts = split(*bounds.get(l)?)?;
    let worst = counts
        .iter()
        .enumerate()
        .map(|(k, &v)| cost(k, v))
        .fold((0.0, 0.0), worse);
    Some((counts, worst))
}

/// The nested rounding of [`Layout3::realize`]: slab thicknesses, column
/// widths and block heights chosen together so that the largest distance
/// of a part from its share, in planes, is least (then the slowest part),
/// each level looking at what the levels below it can reach.
struct Nested<'a> {
    layout: &'a Layout3,
    /// Extents along the slab, column and block axes.
    n: [usize; 3],
    weights: &'a [f64],
    /// Each part's share of the cells.
    shares: Vec<f64>,
}

impl<'a> Nested<'a> {
    fn new(layout: &'a Layout3, n: [usize; 3], weights: &'a [f64]) -> Option<Nested<'a>> {
        if !weights.iter().all(|w| w.is_finite() && *w > 0.0) {
            return None;
        }
        let total: f64 = weights.iter().sum();
        let cells = (n[0] * n[1] * n[2]) as f64;
        let shares = weights.iter().map(|w| cells * w / total).collect();
        Some(Nested {
            layout,
            n,
            weights,
            shares,
        })
    }

    fn weight(&self, ids: &[usize]) -> f64 {
        ids.iter().map(|&i| self.weights[i]).sum()
    }

    /// Cost of part `i` as a `ta × tb × tc` box.
    fn part(&self, i: usize, ta: usize, tb: usize, tc: usize) -> Cost {
        let v = (ta * tb * tc) as f64;
        let face = (ta * tb).max(tb * tc).max(ta * tc).max(1) as f64;
        (
            ((v - self.shares[i]).abs() / face).max(1.0),
            v / self.weights[i],
        )
    }

    /// Block heights of column `j` of slab `s` at `ta × tb`.
    fn blocks_cost(&self, s: usize, j: usize, ta: usize, tb: usize) -> Option<(Vec<usize>, Cost)> {
        let col = &self.layout.slabs[s][j];
        let w = self.weight(col);
        let ideal: Vec<f64> = col
            .iter()
            .map(|&i| self.n[2] as f64 * self.weights[i] / w)
            .collect();
        least_worst(self.n[2], &ideal, |k, h| self.part(col[k], ta, tb, h))
    }

    fn blocks(&self, s: usize, j: usize, ta: usize, tb: usize) -> Option<Vec<usize>> {
        self.blocks_cost(s, j, ta, tb).map(|r| r.0)
    }

    /// Column widths of slab `s` at thickness `ta`.
    fn columns_cost(&self, s: usize, ta: usize) -> Option<(Vec<usize>, Cost)> {
        let slab = &self.layout.slabs[s];
        let ws: f64 = slab.iter().map(|c| self.weight(c)).sum();
        let ideal: Vec<f64> = slab
            .iter()
            .map(|c| self.n[1] as f64 * self.weight(c) / ws)
            .collect();
        least_worst(self.n[1], &ideal, |j, tb| {
            self.blocks_cost(s, j, ta, tb)
                .map_or((f64::INFINITY, f64::INFINITY), |r| r.1)
        })
    }

    fn columns(&self, s: usize, ta: usize) -> Option<Vec<usize>> {
        self.columns_cost(s, ta).map(|r| r.0)
    }

    /// Slab thicknesses.
    fn slabs(&self) -> Option<Vec<usize>> {
        let w: Vec<f64> = self
            .layout
            .slabs
            .iter()
            .map(|s| s.iter().map(|c| self.weight(c)).sum())
            .collect();
        let total: f64 = w.iter().sum();
        let ideal: Vec<f64> = w.iter().map(|x| self.n[0] as f64 * x / total).collect();
        least_worst(self.n[0], &ideal, |s, ta| {
            self.columns_cost(s, ta)
                .map_or((f64::INFINITY, f64::INFINITY), |r| r.1)
        })
        .map(|r| r.0)
    }
}

/// `total` layers split among pieces of `weights` (speeds) so that the
/// largest `layers / weight` is least (\[BBLRR01\] §2.2's DISTRIBUTE,
/// [`crate::dist1d::optimal_counts`]): the pieces share their other
/// extents, so this is the least time of the slowest. Nearest-share
/// rounding can miss it by a layer, and a decomposer comparing candidates
/// then prefers a worse cut. Non-positive weights: [`apportion`].
fn minimax(total: usize, weights: &[f64]) -> Vec<usize> {
    if weights.iter().all(|w| w.is_finite() && *w > 0.0) {
        let cycles: Vec<f64> = weights.iter().map(|w| 1.0 / w).collect();
        if let Ok(c) = crate::dist1d::optimal_counts(total, &cycles) {
            return c;
        }
    }
    apportion(total, weights)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layers_are_split_minimax_not_to_the_nearest_share() {
        // 128 planes for speeds 1 : 0.17: the nearest share gives the slow
        // piece 19 planes (19 / 0.17 = 111.8 > 109 / 1), the minimax 18
        // (18 / 0.17 = 105.9 < 110 / 1).
        assert_eq!(apportion(128, &[1.0, 0.17]), vec![109, 19]);
        assert_eq!(minimax(128, &[1.0, 0.17]), vec![110, 18]);
        // Brute force on small cases: no split of `total` has a smaller
        // largest layers / weight; every split sums to `total`.
        let worst = |c: &[usize], w: &[f64]| {
            c.iter()
                .zip(w)
                .map(|(&x, &w)| x as f64 / w)
                .fold(0.0, f64::max)
        };
        let weights = [[1.0, 0.17, 0.5], [3.0, 1.0, 1.0], [0.2, 0.9, 2.5]];
        for w in weights {
            for total in 0..=14usize {
                let c = minimax(total, &w);
                assert_eq!(c.iter().sum::<usize>(), total);
                let mut best = f64::INFINITY;
                for a in 0..=total {
                    for b in 0..=total - a {
                        best = best.min(worst(&[a, b, total - a - b], &w));
                    }
                }
                assert!(worst(&c, &w) <= best + 1e-12, "{total} {w:?}: {c:?}");
            }
        }
    }

    #[test]
    fn realizes_exact_tilings_and_rejects_bad_layouts() {
        let w = [3.0, 1.0, 1.0, 2.0, 2.0];
        let l = Layout3 {
            axes: [2, 0, 1],
            slabs: vec![vec![vec![0]], vec![vec![1, 2], vec![3, 4]]],
        };
        let p = l.realize("t", (6, 5, 9), &w).unwrap();
        assert_eq!(p.volumes().iter().sum::<usize>(), 270);
        // Slab 0 is 3/9 of z, whole in x and y.
        assert_eq!(p.boxes[0], Box3::new(0, 0, 0, 6, 5, 3));
        let bad = Layout3 {
            axes: [0, 0, 1],
            slabs: vec![vec![vec![0, 1]]],
        };
        assert!(bad.realize("t", (2, 2, 2), &[1.0, 1.0]).is_err());
        let twice = Layout3 {
            axes: [0, 1, 2],
            slabs: vec![vec![vec![0, 0]]],
        };
        assert!(twice.realize("t", (2, 2, 2), &[1.0, 1.0]).is_err());
    }
}
