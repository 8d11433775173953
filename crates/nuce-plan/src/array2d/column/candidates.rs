//! Candidates beyond the model optima for [`ColumnDp`](super::ColumnDp)'s
//! search (module docs, "The integer plan decides"): the exact-corner DP
//! over sorted placements (`Model::aligned`, small `p`) and the enumeration
//! of segmentations within a bound of the best (`Model::within`).

use super::dp::closed;
use super::integer::{running_sums, shared};
use super::model::Model;
use crate::array2d::apportion;

impl Model {
    /// The segmentation minimising the cost of the *integer* plan in the
    /// sorted placement (slabs left to right in ascending weight order, as
    /// in \[KRW96\] Theorem 1 and XY2), with the corner points counted exactly:
    /// each slab's cut heights are those of [`ColumnLayout::realize`](crate::array2d::ColumnLayout::realize)
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
    pub(super) fn aligned(&self, weights: &[f64], along: usize, across: usize) -> Vec<usize> {
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
    pub(super) fn within(&self, limit: f64, cap: usize) -> Vec<Vec<usize>> {
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
