//! The random AMR workload of \[VH94\]'s experiments
//! (\[VH94\] §4.5, Figures 7–24) and its cost sums.
//!
//! At each of `levels` refinement levels, every one of the `coarse_grids`
//! coarse grids spawns a number of fine grids drawn from the discrete
//! exponential (geometric) law with mean 1, `P(n) = 2^−(n+1)`; each fine grid
//! has `U[k(1−VAR), k(1+VAR)]` mesh points and aspect ratio `U[1, MAXRATIO]`,
//! where `k = 300·P·Q / coarse_grids` makes the average load 300 points per
//! processor (\[VH94\] MINSIZE, MAXSIZE = `k·0.7`, `k·1.3` is VAR = 0.3).
//! Every level is allocated independently and its computation,
//! communication and total costs (see [`super::AmrCost`]) are summed over
//! the levels, with the mean processor utilisation, as in \[VH94\]'s
//! figures. Generation is `O(levels · m)`; the run costs one allocation per
//! level.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

use super::{Grid, Mesh, Packer, SubmeshAllocator};
use crate::error::{Error, Result};

/// The law of the number of fine grids each coarse grid spawns per level.
///
/// \[VH94\] (§4.5) says "exponentially distributed with a mean value of 1";
/// for a count, the discrete exponential law is the geometric one (default).
/// Poisson with mean 1 is the other common reading.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum CountLaw {
    /// `P(n) = 2^−(n+1)` (mean 1, variance 2).
    #[default]
    Geometric,
    /// `P(n) = e^−1 / n!` (mean 1, variance 1).
    Poisson,
}

impl CountLaw {
    /// Draws one count. `O(n)` for a draw of `n`.
    pub fn draw(&self, rng: &mut impl Rng) -> usize {
        let mut n = 0;
        match self {
            CountLaw::Geometric => {
                while rng.gen_bool(0.5) {
                    n += 1;
                }
            }
            CountLaw::Poisson => {
                // Knuth: multiply uniforms until the product drops below e^−1.
                let limit = (-1.0f64).exp();
                let mut prod: f64 = rng.gen();
                while prod > limit {
                    n += 1;
                    prod *= rng.gen::<f64>();
                }
            }
        }
        n
    }
}

/// Parameters of the random workload.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct AmrWorkload {
    /// Refinement levels (200 in \[VH94\]).
    pub levels: usize,
    /// Coarse grids, each spawning fine grids at every level (40 in \[VH94\]).
    pub coarse_grids: usize,
    /// Processor mesh (32 × 32 in \[VH94\]).
    pub mesh: Mesh,
    /// Relative spread of grid sizes, VAR (0.3 in Figures 7–8).
    pub var: f64,
    /// Largest aspect ratio, MAXRATIO.
    pub max_ratio: f64,
    /// Average mesh points per processor (300 in \[VH94\]).
    pub points_per_proc: f64,
    /// Random seed.
    pub seed: u64,
    /// Law of the number of fine grids per coarse grid (default geometric).
    #[serde(default)]
    pub count: CountLaw,
}

impl Default for AmrWorkload {
    fn default() -> Self {
        AmrWorkload {
            levels: 200,
            coarse_grids: 40,
            mesh: Mesh { p: 32, q: 32 },
            var: 0.3,
            max_ratio: 3.0,
            points_per_proc: 300.0,
            seed: 1,
            count: CountLaw::Geometric,
        }
    }
}

impl AmrWorkload {
    /// The mean grid size `k`.
    pub fn k(&self) -> f64 {
        self.points_per_proc * self.mesh.size() as f64 / self.coarse_grids.max(1) as f64
    }

    /// The fine grids of every level (long side first). At most `P·Q` grids
    /// are kept per level.
    pub fn generate(&self) -> Result<Vec<Vec<Grid>>> {
        if self.coarse_grids == 0 || self.mesh.p == 0 || self.mesh.q == 0 {
            return Err(Error::Empty("no coarse grids or processors".into()));
        }
        let ok = self.var >= 0.0
            && self.var < 1.0
            && self.max_ratio >= 1.0
            && self.max_ratio.is_finite()
            && self.points_per_proc.is_finite()
            && self.points_per_proc > 0.0;
        if !ok {
            return Err(Error::InvalidInput(
                "need 0 ≤ VAR < 1, finite MAXRATIO ≥ 1 and points per processor > 0".into(),
            ));
        }
        let mut rng = ChaCha8Rng::seed_from_u64(self.seed);
        let k = self.k();
        let (lo, hi) = (k * (1.0 - self.var), k * (1.0 + self.var));
        let mut out = Vec::with_capacity(self.levels);
        for _ in 0..self.levels {
            let mut level = Vec::new();
            // One fine grid: size and aspect ratio, long side along x.
            let grid = |rng: &mut ChaCha8Rng| {
                let size = if hi > lo { rng.gen_range(lo..=hi) } else { lo };
                let ratio = if self.max_ratio > 1.0 {
                    rng.gen_range(1.0..=self.max_ratio)
                } else {
                    1.0
                };
                let w = ((size * ratio).sqrt().round() as u64).max(1);
                let h = ((size / ratio).sqrt().round() as u64).clamp(1, w);
                Grid::new(w, h)
            };
            for _ in 0..self.coarse_grids {
                match self.count {
                    // Interleaved coin flips and grids (the original stream).
                    CountLaw::Geometric => {
                        while rng.gen_bool(0.5) {
                            level.push(grid(&mut rng));
                        }
                    }
                    CountLaw::Poisson => {
                        for _ in 0..self.count.draw(&mut rng) {
                            level.push(grid(&mut rng));
                        }
                    }
                }
            }
            level.truncate(self.mesh.size());
            out.push(level);
        }
        Ok(out)
    }
}

/// Costs summed over the levels, and the mean utilisation.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct ExperimentTotals {
    /// Cumulative computation cost.
    pub comp: f64,
    /// Cumulative communication cost.
    pub comm: f64,
    /// Cumulative total cost.
    pub total: f64,
    /// Mean processor utilisation over non-empty levels, in percent.
    pub utilization: f64,
    /// Levels that had at least one grid.
    pub levels: usize,
}

/// Allocates every level with `alloc` and sums the costs; `on_level` is
/// called after each level (for a progress bar).
pub fn run<P: Packer>(
    levels: &[Vec<Grid>],
    alloc: &SubmeshAllocator<P>,
    mesh: Mesh,
    mut on_level: impl FnMut(),
) -> Result<ExperimentTotals> {
    let mut t = ExperimentTotals::default();
    for grids in levels {
        if !grids.is_empty() {
            let a = alloc.allocate(grids, mesh)?;
            t.comp += a.cost.comp;
            t.comm += a.cost.comm;
            t.total += a.cost.total;
            t.utilization += 100.0 * a.utilization;
            t.levels += 1;
        }
        on_level();
    }
    if t.levels > 0 {
        t.utilization /= t.levels as f64;
    }
    Ok(t)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn workload_has_the_vh94_statistics() {
        let w = AmrWorkload {
            levels: 400,
            ..Default::default()
        };
        let levels = w.generate().unwrap();
        let grids: Vec<&Grid> = levels.iter().flatten().collect();
        // Mean count per coarse grid is 1 → about 40 grids per level.
        let per_level = grids.len() as f64 / 400.0;
        assert!((per_level - 40.0).abs() < 2.0, "{per_level}");
        let k = w.k();
        for g in &grids {
            let a = g.area() as f64;
            assert!(a > 0.6 * k && a < 1.4 * k);
            let r = g.w as f64 / g.h as f64;
            assert!(r > 0.9 && r < 3.3);
        }
        let mean: f64 = grids.iter().map(|g| g.area() as f64).sum::<f64>() / grids.len() as f64;
        assert!((mean / k - 1.0).abs() < 0.03);
    }
}
