//! Recursive spectral bisection (\[KOR95\] §2 item 3, after
//! Pothen, Simon and Liou \[PSL90\]): split a vertex set by sorting it along the
//! Fiedler vector (eigenvector of the second-smallest eigenvalue) of the
//! weighted Laplacian `L = D − A` of the subgraph it induces, and cut the sorted
//! list in the ratio of the two processor groups' speeds.
//!
//! The eigenvector comes from LOBPCG \[Kny01\] (the `linfa-linalg` crate), matrix-free on
//! the CSR Laplacian, Jacobi-preconditioned, constrained orthogonal to the
//! constant vector (the Laplacian's null vector). By default it is computed
//! multilevel, as in Barnard and Simon's extension \[BS93\] that \[KOR95\] cites:
//! the graph is coarsened by heavy-edge matching down to at most
//! [`Rsb::coarse_size`] vertices, the coarsest Fiedler vector is found by a dense
//! symmetric eigensolver, then interpolated level by level and polished by a
//! few LOBPCG iterations from that starting guess. Cost per bisection:
//! O(m × iterations) per level, levels ≈ log(n / coarse_size).

use linfa_linalg::eigh::Eigh;
use linfa_linalg::lobpcg::lobpcg;
use linfa_linalg::Order;
use ndarray::{Array1, Array2, ArrayView2, ArrayViewMut2, Axis};
use rand::{Rng, SeedableRng};
use serde::{Deserialize, Serialize};

use super::bisect::{self, Grouping};
use super::coarsen::coarsen;
use super::csr::Graph;
use super::metrics::Partition;
use super::refine::FmRefiner;
use super::GraphPartitioner;
use crate::error::{Error, Result};

/// The RSB partitioner. O(log p) levels of bisection, each costing one Fiedler
/// vector per subgraph plus a sort.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Rsb {
    /// Processor grouping at each bisection.
    pub grouping: Grouping,
    /// Multilevel eigenvector computation (Barnard–Simon); `false` runs LOBPCG
    /// on the full subgraph from a deterministic random start (classic RSB).
    pub multilevel: bool,
    /// Coarsest size solved densely in multilevel mode.
    pub coarse_size: usize,
    /// LOBPCG residual tolerance.
    pub tol: f32,
    /// LOBPCG iteration cap per level (the single-level mode uses 20 times it).
    pub max_iter: usize,
    /// Improve every spectral bisection with two-way FM (the "RSB + KL" \[KL70\]
    /// combination of Hendrickson and Leland \[HeLe92\], cited by \[KOR95\]) within
    /// this balance tolerance; `None` (the default) is \[KOR95\]'s plain RSB.
    pub refine_bisections: Option<f64>,
}

impl Default for Rsb {
    fn default() -> Self {
        Rsb {
            grouping: Grouping::Simple,
            multilevel: true,
            coarse_size: 96,
            tol: 1e-3,
            max_iter: 40,
            refine_bisections: None,
        }
    }
}

impl GraphPartitioner for Rsb {
    fn partition(&self, g: &Graph, targets: &[f64]) -> Result<Partition> {
        let verts = (0..g.n()).collect();
        bisect::partition_by_bisection(g, targets, self.grouping, verts, &mut |s, f| {
            self.bisect(g, s, f)
        })
    }
}

impl Rsb {
    /// Sorts `verts` by the Fiedler vector of the subgraph they induce (ties by
    /// id) and returns the split position for fraction `frac` of their weight.
    pub(crate) fn bisect(&self, g: &Graph, verts: &mut [usize], frac: f64) -> Result<usize> {
        let sub = g.induced(verts);
        let f = self.fiedler(&sub)?;
        let ids = verts.to_vec();
        let mut idx: Vec<usize> = (0..ids.len()).collect();
        idx.sort_by(|&a, &b| f[a].total_cmp(&f[b]).then(ids[a].cmp(&ids[b])));
        for (slot, &i) in verts.iter_mut().zip(&idx) {
            *slot = ids[i];
        }
        let k = bisect::weighted_split(g, verts, 0, verts.len(), frac);
        let Some(tol) = self.refine_bisections else {
            return Ok(k);
        };
        if k == 0 || k == verts.len() {
            return Ok(k);
        }
        // Two-way FM on the subgraph (sub vertex i is ids[i]).
        let mut side = vec![1usize; ids.len()];
        for &i in &idx[..k] {
            side[i] = 0;
        }
        let mut p = Partition {
            nparts: 2,
            parts: side,
        };
        let fm = FmRefiner {
            tolerance: tol,
            ..FmRefiner::default()
        };
        fm.refine(&sub, &[frac, 1.0 - frac], &mut p)?;
        let left: Vec<usize> = idx.iter().copied().filter(|&i| p.parts[i] == 0).collect();
        let right = idx.iter().copied().filter(|&i| p.parts[i] == 1);
        let nleft = left.len();
        for (slot, i) in verts.iter_mut().zip(left.into_iter().chain(right)) {
            *slot = ids[i];
        }
        Ok(nleft)
    }

    /// An approximate Fiedler vector of `g` (any sign and scale).
    pub fn fiedler(&self, g: &Graph) -> Result<Vec<f64>> {
        let n = g.n();
        if n <= 2 {
            return Ok((0..n).map(|i| i as f64).collect());
        }
        if n <= self.coarse_size.max(8) {
            return dense_fiedler(g);
        }
        if !self.multilevel {
            let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(0x5eed);
            let x0: Vec<f64> = (0..n).map(|_| rng.gen::<f64>() - 0.5).collect();
            return lobpcg_fiedler(g, x0, self.tol, self.max_iter * 20);
        }
        let (coarse, cmap) = coarsen(g, None);
        let xc = if coarse.n() as f64 > 0.95 * n as f64 {
            // Matching stalled (e.g. a star): solve this level directly.
            let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(0x5eed);
            let x0: Vec<f64> = (0..n).map(|_| rng.gen::<f64>() - 0.5).collect();
            return lobpcg_fiedler(g, x0, self.tol, self.max_iter * 20);
        } else {
            self.fiedler(&coarse)?
        };
        let x0: Vec<f64> = cmap.iter().map(|&c| xc[c]).collect();
        lobpcg_fiedler(g, x0, self.tol, self.max_iter)
    }
}

/// Dense solution for small graphs: the smallest eigenvector of
/// `L + s·11ᵀ/n` with `s` above the spectrum, which moves the constant vector
/// out of the way. O(n³).
fn dense_fiedler(g: &Graph) -> Result<Vec<f64>> {
    let n = g.n();
    let deg = g.weighted_degrees();
    let shift = 2.0 * deg.iter().fold(0.0, |a: f64, &b| a.max(b)) + 1.0;
    let mut a = Array2::<f64>::from_elem((n, n), 2.0 * shift / n as f64);
    for v in 0..n {
        a[[v, v]] += deg[v];
        for (u, w) in g.weighted_neighbors(v) {
            a[[v, u]] -= w;
        }
    }
    let (vals, vecs) = a
        .eigh()
        .map_err(|e| Error::Solver(format!("dense eigensolver: {e}")))?;
    let k = (0..n)
        .min_by(|&i, &j| vals[i].total_cmp(&vals[j]))
        .ok_or_else(|| Error::Solver("no eigenvalue".into()))?;
    Ok(vecs.column(k).to_vec())
}

/// LOBPCG for the smallest nontrivial eigenvector of `L`, starting from `x0`.
fn lobpcg_fiedler(g: &Graph, x0: Vec<f64>, tol: f32, max_iter: usize) -> Result<Vec<f64>> {
    let n = g.n();
    let deg = g.weighted_degrees();
    // L + σ·11ᵀ/n with σ above λ_max(L) ≤ 2·max degree: the constant vector
    // leaves the bottom of the spectrum, so no constraint is needed (LOBPCG's
    // constraint projection let rounding pull the iterate back to the null
    // vector, whose residual is exactly 0).
    let sigma = 2.0 * deg.iter().fold(0.0, |a: f64, &b| a.max(b)) + 1.0;
    let op = |x: ArrayView2<f64>| -> Array2<f64> {
        let mut y = Array2::<f64>::zeros(x.raw_dim());
        for (xc, mut yc) in x.columns().into_iter().zip(y.columns_mut()) {
            let xc: Vec<f64> = xc.to_vec();
            let shift = sigma * xc.iter().sum::<f64>() / n as f64;
            for (v, yv) in yc.iter_mut().enumerate() {
                let mut acc = shift;
                for (u, w) in g.weighted_neighbors(v) {
                    acc += w * (xc[v] - xc[u]);
                }
                *yv = acc;
            }
        }
        y
    };
    let inv: Vec<f64> = deg.iter().map(|d| 1.0 / (d + sigma / n as f64)).collect();
    let precond = |mut r: ArrayViewMut2<f64>| {
        for mut col in r.columns_mut() {
            for (x, i) in col.iter_mut().zip(&inv) {
                *x *= i;
            }
        }
    };
    let mean = x0.iter().sum::<f64>() / n as f64;
    let x = Array1::from_iter(x0.iter().map(|v| v - mean)).insert_axis(Axis(1));
    let res = lobpcg(op, x, precond, None, tol, max_iter, Order::Smallest);
    let best = match res {
        Ok(r) => r,
        Err((_, Some(r))) => r,
        Err((e, None)) => return Err(Error::Solver(format!("LOBPCG: {e}"))),
    };
    let v = best.eigvecs.column(0).to_vec();
    if v.iter().any(|x| !x.is_finite()) {
        return Err(Error::Solver("LOBPCG returned a non-finite vector".into()));
    }
    Ok(v)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::csr::grid_graph;

    #[test]
    fn fiedler_of_a_path_is_monotone() {
        let n = 300;
        let g = Graph::from_edges(n, (0..n - 1).map(|i| (i, i + 1, 1.0)), false).unwrap();
        // A tight tolerance: this checks the eigensolver, not partition quality.
        let tight = Rsb {
            tol: 1e-9,
            max_iter: 400,
            ..Rsb::default()
        };
        for rsb in [
            tight,
            Rsb {
                multilevel: false,
                ..tight
            },
        ] {
            let f = rsb.fiedler(&g).unwrap();
            let inc = f.windows(2).all(|w| w[0] <= w[1] + 1e-9);
            let dec = f.windows(2).all(|w| w[0] + 1e-9 >= w[1]);
            assert!(inc || dec, "{:?}", &f[..10]);
        }
    }

    #[test]
    fn dense_and_lobpcg_agree_on_rayleigh_quotient() {
        let g = grid_graph(8, 20);
        let rq = |x: &[f64]| {
            let mean = x.iter().sum::<f64>() / x.len() as f64;
            let x: Vec<f64> = x.iter().map(|v| v - mean).collect();
            let mut y = vec![0.0; x.len()];
            g.laplacian_mul(&x, &mut y);
            x.iter().zip(&y).map(|(a, b)| a * b).sum::<f64>() / x.iter().map(|a| a * a).sum::<f64>()
        };
        let exact = 2.0 - 2.0 * (std::f64::consts::PI / 20.0).cos(); // λ₂ of P20 × P8
        let d = rq(&dense_fiedler(&g).unwrap());
        let l = rq(&Rsb {
            coarse_size: 8,
            ..Rsb::default()
        }
        .fiedler(&g)
        .unwrap());
        assert!((d - exact).abs() < 1e-8, "{d} vs {exact}");
        assert!((l - exact).abs() < 1e-4, "{l} vs {exact}");
    }
}
