//! The continuous column model of one orientation (module docs, "The
//! model"): slab costs over the sorted weights with the generic latency
//! term and the optional whole-cell penalties, and the model objective of a
//! layout. The dynamic programs over it live in `dp` and `candidates`.

use super::{check_latency, rescaled};
use crate::error::{Error, Result};

/// The column model of one orientation over the sorted weights: slab costs
/// (with the generic latency term and, optionally, the whole-cell penalties)
/// and the dynamic programs over them. A segmentation is given by its `cuts`
/// `0 = c_0 < c_1 < … < c_C = p` into the ascending order.
#[derive(Clone)]
pub(super) struct Model {
    /// Input indices in ascending weight order.
    pub(super) order: Vec<usize>,
    /// Prefix sums of the normalised sorted weights.
    pub(super) prefix: Vec<f64>,
    pub(super) along: f64,
    pub(super) across: f64,
    pub(super) lat: f64,
    /// Penalty factor of the whole-cell constraints (0: unconstrained).
    pub(super) big: f64,
}

impl Model {
    /// Validates and sorts; `O(p log p)`.
    pub(super) fn new(w: &[f64], along: f64, across: f64, lat: f64, whole: bool) -> Result<Model> {
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
        // A total order (ties by index): the unstable sort gives the stable one.
        order.sort_unstable_by(|&a, &b| w[a].total_cmp(&w[b]).then(a.cmp(&b)));
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

    /// This model with the whole-cell constraints (the same order and
    /// prefix sums: [`Model::new`] with `whole` set, without its sort).
    pub(super) fn whole_cells(&self) -> Model {
        Model {
            big: 1e9 * (self.along + self.across) * self.order.len() as f64,
            ..self.clone()
        }
    }

    /// Violation of the whole-cell constraints by slab `(a, q]`: width
    /// `La·X ≥ 1` and smallest part's height `Lc·s_(a+1)/X ≥ 1`, as the
    /// convex functions of `X = S_q − S_a` described at
    /// [`column_optimum_whole_cells`](super::column_optimum_whole_cells).
    pub(super) fn violation(&self, a: usize, q: usize) -> f64 {
        let x = self.prefix[q] - self.prefix[a];
        let smallest = self.prefix[a + 1] - self.prefix[a];
        (1.0 / self.along - x).max(0.0) + (x - self.across * smallest).max(0.0)
    }

    /// Slab holding sorted parts `(a, q]`: its half-perimeters, its generic
    /// internal corners counted on both sides (`2(k−1)`) and its penalty.
    pub(super) fn base(&self, a: usize, q: usize) -> f64 {
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
    pub(super) fn end(&self, a: usize, q: usize) -> f64 {
        self.base(a, q) - self.lat * ((q - a) as f64 - 1.0)
    }

    /// Penalties paid by a segmentation.
    pub(super) fn paid(&self, cuts: &[usize]) -> f64 {
        if self.big > 0.0 {
            cuts.windows(2)
                .map(|c| self.big * self.violation(c[0], c[1]))
                .sum()
        } else {
            0.0
        }
    }

    /// Whether every slab meets the whole-cell constraints (to rounding).
    pub(super) fn feasible(&self, cuts: &[usize]) -> bool {
        let tol = 1e-9;
        cuts.windows(2).all(|c| {
            let x = self.prefix[c[1]] - self.prefix[c[0]];
            let smallest = self.prefix[c[0] + 1] - self.prefix[c[0]];
            x * self.along >= 1.0 - tol && x <= self.across * smallest * (1.0 + tol)
        })
    }

    /// The slabs of a segmentation in sorted order, each listing its input
    /// indices by decreasing weight.
    pub(super) fn segments(&self, cuts: &[usize]) -> Vec<Vec<usize>> {
        cuts.windows(2)
            .map(|c| self.order[c[0]..c[1]].iter().rev().copied().collect())
            .collect()
    }
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

/// Model objective of a column layout: half-perimeter sum
/// ([`model_half_perimeter`]) plus `latency × E_i` with the generic count
/// `E_i = Σ_j (k_j − 1)·(shared sides of slab j) + p − 1` (module docs).
pub(super) fn model_cost(
    columns: &[Vec<usize>],
    w: &[f64],
    along: f64,
    across: f64,
    latency: f64,
) -> f64 {
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
