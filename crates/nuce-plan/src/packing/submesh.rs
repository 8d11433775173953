//! From a packing to processor submeshes (seed `004_64c626e209e0545b.txt`
//! §4.3), with the minimum grid size bound, and the seed's cost model (§3.1,
//! objective of §4.5).
//!
//! A packing of width `W` and height `H` is scaled onto the `P × Q` mesh.
//! Grid `i` at `(xᵢ, yᵢ)` with extents `w'ᵢ × h'ᵢ` gets the processors
//! `⌊xᵢ·P/W⌋ .. ⌊(xᵢ+w'ᵢ)·P/W⌋` along x and `⌊yᵢ·Q/H⌋ .. ⌊(yᵢ+h'ᵢ)·Q/H⌋` along
//! y (*non-uniform scaling*), or the same with the one factor
//! `min(P/W, Q/H)` in both directions (*uniform scaling*, which keeps each
//! submesh's shape proportional to its grid but may leave processors idle).
//! Floors are monotone, so disjoint grids get disjoint submeshes, all inside
//! the mesh. A grid gets at least one processor when `w' ≥ W/P` and
//! `h' ≥ H/Q`; the seed ensures this by first raising every side below
//! `D/min(P, Q)`, with `D` the larger side of a quick `O(m)` packing that
//! only uses the two corners on the axes. As the final packing may exceed
//! `D`, we re-check and raise the bound until every submesh is non-empty
//! (an addition to the seed, so that the guarantee always holds).
//! Scaling is `O(m)`; the allocation costs one packing per bound tried.

use serde::{Deserialize, Serialize};

use super::{Grid, Mesh, Packer, Packing};
use crate::array2d::Rect;
use crate::error::{Error, Result};

/// The two ways of §4.3 to map a packing onto the mesh.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum Scaling {
    /// Different factors `P/W` and `Q/H` in x and y (uses the whole mesh).
    #[default]
    NonUniform,
    /// One factor `min(P/W, Q/H)` in both directions.
    Uniform,
}

impl Scaling {
    /// Name as used on the command line.
    pub fn name(&self) -> &'static str {
        match self {
            Scaling::NonUniform => "nonuniform",
            Scaling::Uniform => "uniform",
        }
    }
    /// Parses a command-line name.
    pub fn parse(s: &str) -> Result<Self> {
        match s {
            "nonuniform" => Ok(Scaling::NonUniform),
            "uniform" => Ok(Scaling::Uniform),
            _ => Err(Error::InvalidInput(format!("unknown scaling {s:?}"))),
        }
    }
}

/// The factors `(num_x/den_x, num_y/den_y)` that map packing coordinates to
/// processor indices.
fn factors(width: u64, height: u64, mesh: Mesh, scaling: Scaling) -> ((u128, u128), (u128, u128)) {
    let (p, q, w, h) = (
        mesh.p as u128,
        mesh.q as u128,
        width as u128,
        height as u128,
    );
    match scaling {
        Scaling::NonUniform => ((p, w), (q, h)),
        // Q/H ≤ P/W  <=>  Q·W ≤ P·H
        Scaling::Uniform if q * w <= p * h => ((q, h), (q, h)),
        Scaling::Uniform => ((p, w), (p, w)),
    }
}

/// Scales one packed box `[x0, x1) × [y0, y1)` of a `width × height` packing
/// onto `mesh` (§4.3); `row`/`rows` along y, `col`/`cols` along x. `O(1)`.
/// The packing must be non-empty.
pub fn scale_rect(
    (x0, y0, x1, y1): (u64, u64, u64, u64),
    width: u64,
    height: u64,
    mesh: Mesh,
    scaling: Scaling,
) -> Result<Rect> {
    if width == 0 || height == 0 {
        return Err(Error::InvalidPlan("empty packing".into()));
    }
    let ((nx, dx), (ny, dy)) = factors(width, height, mesh, scaling);
    let f = |v: u64, n: u128, d: u128| (v as u128 * n / d) as usize;
    let (c0, c1) = (f(x0, nx, dx), f(x1, nx, dx));
    let (r0, r1) = (f(y0, ny, dy), f(y1, ny, dy));
    Ok(Rect::new(
        r0,
        c0,
        r1.saturating_sub(r0),
        c1.saturating_sub(c0),
    ))
}

/// Scales a packing of `grids` onto `mesh` (§4.3): one submesh per grid, in
/// input order ([`scale_rect`] for each). Submeshes may be empty when a grid
/// is below the minimum size (see [`min_side`]). `O(m)`.
pub fn scale(packing: &Packing, grids: &[Grid], mesh: Mesh, scaling: Scaling) -> Result<Vec<Rect>> {
    (0..grids.len())
        .map(|i| {
            let b = packing
                .rect_of(grids, i)
                .ok_or_else(|| Error::InvalidPlan(format!("no placement for grid {i}")))?;
            scale_rect(b, packing.width, packing.height, mesh, scaling)
        })
        .collect()
}

/// The side every grid needs so that no submesh is empty for this packing
/// size: `w' ≥ W/P` and `h' ≥ H/Q` (uniform: `≥ 1/scale`).
pub fn side_needed(width: u64, height: u64, mesh: Mesh, scaling: Scaling) -> u64 {
    let ((nx, dx), (ny, dy)) = factors(width, height, mesh, scaling);
    (dx.div_ceil(nx)).max(dy.div_ceil(ny)) as u64
}

/// The seed's quick `O(m)` packing for the bound `D`: each grid goes, in the
/// orientation and to the one of the two axis corners (`(a, 0)` or `(0, b)`)
/// that keeps `max(W, R·H)` smallest. Returns `max(W, H)`.
pub fn quick_extent(grids: &[Grid], ratio: f64) -> u64 {
    // (ax, 0) is the corner on the x-axis, (0, by) the one on the y-axis.
    let (mut ax, mut by, mut w, mut h) = (0u64, 0u64, 0u64, 0u64);
    for g in grids {
        let mut best = (f64::INFINITY, true, false);
        for on_x in [true, false] {
            for rot in [false, true] {
                let (gw, gh) = g.oriented(rot);
                let (nw, nh) = if on_x {
                    (w.max(ax + gw), h.max(gh))
                } else {
                    (w.max(gw), h.max(by + gh))
                };
                let m = (nw as f64).max(ratio * nh as f64);
                if m < best.0 {
                    best = (m, on_x, rot);
                }
            }
        }
        let (gw, gh) = g.oriented(best.2);
        if ax == 0 {
            // The first grid sits at the origin and opens both corners.
            (ax, by, w, h) = (gw, gh, gw, gh);
        } else if best.1 {
            ax += gw;
            (w, h) = (w.max(ax), h.max(gh));
        } else {
            by += gh;
            (w, h) = (w.max(gw), h.max(by));
        }
    }
    w.max(h)
}

/// The minimum grid side of §4.3: `⌈D / min(P, Q)⌉` with `D` from
/// [`quick_extent`].
pub fn min_side(grids: &[Grid], mesh: Mesh) -> u64 {
    let d = quick_extent(grids, mesh.ratio());
    d.div_ceil(mesh.p.min(mesh.q) as u64)
}

/// Which bound `D` on the packing's extent sets the minimum grid side
/// `⌈D / min(P, Q)⌉` of §4.3 before packing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum SizeBound {
    /// `D` from the seed's quick `O(m)` two-corner packing
    /// ([`quick_extent`]), the bound §4.3 recommends ("To achieve better
    /// bound on D, we can quickly pack the grids …"; default).
    #[default]
    QuickPacking,
    /// The seed's first, "very loose upper bound" `D = Σᵢ max(wᵢ, hᵢ)`.
    SumOfLongSides,
    /// No bound before packing: start from side 1 and only raise it while a
    /// submesh is empty (our re-check alone).
    None,
}

impl SizeBound {
    /// The minimum side this bound gives for `grids` on `mesh`. `O(m)`.
    pub fn min_side(&self, grids: &[Grid], mesh: Mesh) -> u64 {
        match self {
            SizeBound::QuickPacking => min_side(grids, mesh),
            SizeBound::SumOfLongSides => {
                let d: u64 = grids.iter().map(Grid::long).sum();
                d.div_ceil(mesh.p.min(mesh.q).max(1) as u64)
            }
            SizeBound::None => 1,
        }
    }
}

/// Weights of the seed's objective (§3.1); all 1 in the seed's experiments.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct CostModel {
    /// Computation cost per mesh point (`U_comp`).
    pub u_comp: f64,
    /// Cost of sending one mesh point value to a neighbour (`U_comm`).
    pub u_comm: f64,
    /// Frequency of intra-grid communication during a level (`F`).
    pub freq: f64,
}

impl Default for CostModel {
    fn default() -> Self {
        CostModel {
            u_comp: 1.0,
            u_comm: 1.0,
            freq: 1.0,
        }
    }
}

/// Costs of one allocation under the seed's objective, reconstructed from
/// §3.1 (the §4.5 formula is garbled in the text): for grid `j` of
/// `w × h` points on an `X × Y` submesh, computation `U_comp·wh/(XY)` and
/// intra-grid communication `2·U_comm·F·(w/X + h/Y)` (w along the submesh's
/// x). Each is the maximum over grids; `total` is the maximum of their sum.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct AmrCost {
    /// Largest computation time of a processor.
    pub comp: f64,
    /// Largest intra-grid communication time.
    pub comm: f64,
    /// Largest sum of both (the objective).
    pub total: f64,
}

impl CostModel {
    /// Evaluates the objective for grids (original sizes, placed with the
    /// packing's orientations) on their submeshes. Empty submeshes count as
    /// infinite cost. `O(m)`.
    pub fn cost(&self, grids: &[Grid], packing: &Packing, submeshes: &[Rect]) -> AmrCost {
        let mut c = AmrCost::default();
        for (i, (g, r)) in grids.iter().zip(submeshes).enumerate() {
            let rotated = packing.placements.get(i).is_some_and(|p| p.rotated);
            let (wx, hy) = g.oriented(rotated);
            let (x, y) = (r.cols as f64, r.rows as f64);
            let comp = self.u_comp * g.area() as f64 / (x * y);
            let comm = 2.0 * self.u_comm * self.freq * (wx as f64 / x + hy as f64 / y);
            let (comp, comm) = if r.is_empty() {
                (f64::INFINITY, f64::INFINITY)
            } else {
                (comp, comm)
            };
            c.comp = c.comp.max(comp);
            c.comm = c.comm.max(comm);
            c.total = c.total.max(comp + comm);
        }
        c
    }
}

/// The result of a submesh allocation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Allocation {
    /// The mesh allocated.
    pub mesh: Mesh,
    /// How the packing was scaled.
    pub scaling: Scaling,
    /// The minimum grid side applied before packing (grids smaller were
    /// enlarged to it for packing only).
    pub min_side: u64,
    /// The packing of the (enlarged) grids.
    pub packing: Packing,
    /// One submesh per grid, input order; pairwise disjoint, inside the mesh.
    pub submeshes: Vec<Rect>,
    /// Fraction of the mesh's processors given to some grid.
    pub utilization: f64,
    /// The objective for the original grids.
    pub cost: AmrCost,
}

/// Packs grids with a [`Packer`] and scales the packing onto a mesh.
#[derive(Debug, Clone, Default)]
pub struct SubmeshAllocator<P> {
    /// The packing algorithm.
    pub packer: P,
    /// Non-uniform or uniform scaling.
    pub scaling: Scaling,
    /// Weights of the objective.
    pub model: CostModel,
    /// The minimum-size bound applied before packing (default the quick
    /// packing's).
    pub bound: SizeBound,
}

impl<P: Packer> SubmeshAllocator<P> {
    /// An allocator with the default cost model.
    pub fn new(packer: P, scaling: Scaling) -> Self {
        SubmeshAllocator {
            packer,
            scaling,
            model: CostModel::default(),
            bound: SizeBound::default(),
        }
    }

    /// Allocates one non-empty submesh per grid (`m ≤ P·Q` required): raises
    /// small sides to the bound of [`min_side`], packs, scales, and raises the
    /// bound further while some submesh is empty.
    pub fn allocate(&self, grids: &[Grid], mesh: Mesh) -> Result<Allocation> {
        super::check_grids(grids, mesh.ratio())?;
        if grids.len() > mesh.size() {
            return Err(Error::TooManyParts {
                parts: grids.len(),
                units: mesh.size(),
            });
        }
        let mut side = self.bound.min_side(grids, mesh);
        for _ in 0..64 {
            let big: Vec<Grid> = grids
                .iter()
                .map(|g| Grid::new(g.w.max(side), g.h.max(side)))
                .collect();
            let packing = self.packer.pack(&big, mesh.ratio())?;
            let submeshes = scale(&packing, &big, mesh, self.scaling)?;
            if submeshes.iter().all(|r| !r.is_empty()) {
                let used: usize = submeshes.iter().map(Rect::area).sum();
                return Ok(Allocation {
                    mesh,
                    scaling: self.scaling,
                    min_side: side,
                    cost: self.model.cost(grids, &packing, &submeshes),
                    utilization: used as f64 / mesh.size() as f64,
                    packing,
                    submeshes,
                });
            }
            let need = side_needed(packing.width, packing.height, mesh, self.scaling);
            side = need.max(side + 1);
        }
        Err(Error::TooManyParts {
            parts: grids.len(),
            units: mesh.size(),
        })
    }
}

impl<T: Packer + ?Sized> Packer for &T {
    fn name(&self) -> &'static str {
        (**self).name()
    }
    fn pack(&self, grids: &[Grid], ratio: f64) -> Result<Packing> {
        (**self).pack(grids, ratio)
    }
}

impl<T: Packer + ?Sized> Packer for Box<T> {
    fn name(&self) -> &'static str {
        (**self).name()
    }
    fn pack(&self, grids: &[Grid], ratio: f64) -> Result<Packing> {
        (**self).pack(grids, ratio)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packing::{Placement, TightPacking};

    #[test]
    fn scaling_matches_hand_computation() {
        // Two 5x5 grids side by side: W = 10, H = 5 onto a 4x2 mesh.
        let g = [Grid::new(5, 5), Grid::new(5, 5)];
        let pk = Packing {
            algo: "t".into(),
            width: 10,
            height: 5,
            placements: vec![Placement::new(0, 0, false), Placement::new(5, 0, false)],
        };
        let mesh = Mesh::new(4, 2).unwrap();
        let s = scale(&pk, &g, mesh, Scaling::NonUniform).unwrap();
        assert_eq!(s, vec![Rect::new(0, 0, 2, 2), Rect::new(0, 2, 2, 2)]);
        // Uniform: min(4/10, 2/5) = 0.4 in both directions, same here.
        let u = scale(&pk, &g, mesh, Scaling::Uniform).unwrap();
        assert_eq!(u, s);
        // On a 6x2 mesh non-uniform gives 3 columns each, uniform 2/5 → 2.
        let mesh = Mesh::new(6, 2).unwrap();
        let s = scale(&pk, &g, mesh, Scaling::NonUniform).unwrap();
        assert_eq!(s[1], Rect::new(0, 3, 2, 3));
        let u = scale(&pk, &g, mesh, Scaling::Uniform).unwrap();
        assert_eq!(u[1], Rect::new(0, 2, 2, 2));
    }

    #[test]
    fn tiny_grids_still_get_a_processor() {
        let mut g = vec![Grid::new(1000, 1000)];
        g.extend((0..15).map(|_| Grid::new(1, 1)));
        let mesh = Mesh::new(4, 4).unwrap();
        for scaling in [Scaling::NonUniform, Scaling::Uniform] {
            let a = SubmeshAllocator::new(TightPacking::default(), scaling)
                .allocate(&g, mesh)
                .unwrap();
            assert!(a.submeshes.iter().all(|r| !r.is_empty()));
            assert!(a.cost.total.is_finite());
        }
        let too_many = vec![Grid::new(3, 3); 17];
        assert!(
            SubmeshAllocator::new(TightPacking::default(), Scaling::NonUniform)
                .allocate(&too_many, mesh)
                .is_err()
        );
    }
}
