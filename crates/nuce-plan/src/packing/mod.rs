//! AMR processor allocation by two-dimensional packing
//! (\[VH94\], Varadarajan & Hwang 1994).
//!
//! At every level of adaptive mesh refinement new rectangular fine grids
//! (`w × h` mesh points) appear. Each grid gets its own submesh of a `P × Q`
//! processor mesh, no processor serving two grids. \[VH94\] (§3.1) reduces the
//! choice of submeshes to a packing problem: pack the grids, rotations allowed,
//! from the origin of an unbounded bin so that `max(W, R·H)` is small
//! (`R = P/Q`), then scale the packing onto the mesh (§4.3).
//!
//! * [`tp`] — the tight-packing heuristic TP (§4.1), its modified form
//!   (Theorems 3–4) and the small-hole removal of the Remark;
//! * [`level`] — the baseline: modified first-fit level packing LP with the
//!   width search of §4.5;
//! * [`submesh`] — non-uniform and uniform scaling of a packing onto the mesh,
//!   the minimum grid size bound, and \[VH94\]'s cost model (§3.1, §4.5);
//! * [`gray`] — reflected Gray codes and mesh-into-hypercube embedding (§4.4);
//! * [`oned`] — the one-dimensional iterative heuristic with inter-grid
//!   communication (§5.1);
//! * [`experiment`] — the random AMR workload of §4.5 and its cost sums.
//!
//! Algorithms are values: [`TightPacking`] and [`LevelPacking`] implement
//! [`Packer`]; a [`Packing`] is plain serde data with placements in input order.
//!
//! ```
//! use nuce_plan::packing::{Grid, Mesh, Packer, TightPacking, SubmeshAllocator, Scaling};
//! let grids = [Grid::new(30, 20), Grid::new(15, 40), Grid::new(10, 10)];
//! let mesh = Mesh::new(8, 8).unwrap();
//! let alloc = SubmeshAllocator::new(TightPacking::default(), Scaling::NonUniform)
//!     .allocate(&grids, mesh)
//!     .unwrap();
//! assert_eq!(alloc.submeshes.len(), 3);
//! assert!(alloc.submeshes.iter().all(|r| !r.is_empty()));
//! ```

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

pub mod experiment;
pub mod gray;
pub mod level;
pub mod oned;
pub mod submesh;
pub mod tp;

pub use level::LevelPacking;
pub use submesh::{Allocation, AmrCost, Scaling, SubmeshAllocator};
pub use tp::TightPacking;

/// A fine grid of `w × h` mesh points (\[VH94\] writes `w_i ≥ h_i`; any order
/// is accepted here).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Grid {
    /// Extent along x (mesh points).
    pub w: u64,
    /// Extent along y (mesh points).
    pub h: u64,
}

impl Grid {
    /// A new grid.
    pub const fn new(w: u64, h: u64) -> Self {
        Grid { w, h }
    }
    /// Number of mesh points, `w·h`.
    pub const fn area(&self) -> u64 {
        self.w * self.h
    }
    /// Longer side.
    pub fn long(&self) -> u64 {
        self.w.max(self.h)
    }
    /// Shorter side.
    pub fn short(&self) -> u64 {
        self.w.min(self.h)
    }
    /// Extents `(along x, along y)` when placed with the given orientation.
    pub const fn oriented(&self, rotated: bool) -> (u64, u64) {
        if rotated {
            (self.h, self.w)
        } else {
            (self.w, self.h)
        }
    }
}

/// Where one grid went: south-west corner `(x, y)` and orientation
/// (`rotated`: its `w` side lies along y; \[VH94\] `Orient_i = 1`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
pub struct Placement {
    /// x of the south-west corner.
    pub x: u64,
    /// y of the south-west corner.
    pub y: u64,
    /// True when the grid was turned by 90°.
    pub rotated: bool,
}

impl Placement {
    /// A new placement.
    pub const fn new(x: u64, y: u64, rotated: bool) -> Self {
        Placement { x, y, rotated }
    }
}

/// A packing of grids from the origin: bounding width and height, and one
/// [`Placement`] per grid **in input order**.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Packing {
    /// Name of the algorithm that made it.
    pub algo: String,
    /// Width `W` of the bounding box (max over grids of `x + extent along x`).
    pub width: u64,
    /// Height `H` of the bounding box.
    pub height: u64,
    /// One placement per grid, input order.
    pub placements: Vec<Placement>,
}

impl Packing {
    /// The occupied rectangle `(x0, y0, x1, y1)` (half-open) of grid `i`.
    pub fn rect_of(&self, grids: &[Grid], i: usize) -> Option<(u64, u64, u64, u64)> {
        let p = self.placements.get(i)?;
        let (w, h) = grids.get(i)?.oriented(p.rotated);
        Some((p.x, p.y, p.x + w, p.y + h))
    }

    /// Checks the packing against its grids: one placement per grid, no two
    /// grids overlap, and every grid lies inside `width × height`.
    /// `O(m²)`.
    pub fn validate(&self, grids: &[Grid]) -> Result<()> {
        if self.placements.len() != grids.len() {
            return Err(Error::InvalidPlan(format!(
                "{} placements for {} grids",
                self.placements.len(),
                grids.len()
            )));
        }
        let rects: Vec<_> = (0..grids.len())
            .filter_map(|i| self.rect_of(grids, i))
            .collect();
        for (i, a) in rects.iter().enumerate() {
            if a.2 > self.width || a.3 > self.height {
                return Err(Error::InvalidPlan(format!(
                    "grid {i} exceeds the {}x{} packing",
                    self.width, self.height
                )));
            }
            for (j, b) in rects.iter().enumerate().skip(i + 1) {
                if a.0 < b.2 && b.0 < a.2 && a.1 < b.3 && b.1 < a.3 {
                    return Err(Error::InvalidPlan(format!("grids {i} and {j} overlap")));
                }
            }
        }
        Ok(())
    }

    /// Fraction of the bounding box covered by grids (0 for an empty packing).
    pub fn density(&self, grids: &[Grid]) -> f64 {
        let area = self.width as f64 * self.height as f64;
        if area == 0.0 {
            return 0.0;
        }
        grids.iter().map(|g| g.area() as f64).sum::<f64>() / area
    }
}

/// The four packing orders of §4.1 (all decreasing; ties keep input order).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum PackingOrder {
    /// Decreasing grid size `w·h` (best in \[VH94\] Figure 8; the default).
    #[default]
    Area,
    /// Decreasing longer side (the order of Theorems 3–4).
    Max,
    /// Decreasing shorter side.
    Min,
    /// Decreasing aspect ratio `long/short`.
    Ratio,
}

impl PackingOrder {
    /// All four orders.
    pub const ALL: [PackingOrder; 4] = [Self::Area, Self::Max, Self::Min, Self::Ratio];

    /// Name as used on the command line.
    pub fn name(&self) -> &'static str {
        match self {
            Self::Area => "area",
            Self::Max => "max",
            Self::Min => "min",
            Self::Ratio => "ratio",
        }
    }

    /// Parses a command-line name.
    pub fn parse(s: &str) -> Result<Self> {
        Self::ALL
            .into_iter()
            .find(|o| o.name() == s)
            .ok_or_else(|| Error::InvalidInput(format!("unknown packing order {s:?}")))
    }

    /// Compares two grids in this order: `Less` when `a` is packed first
    /// (strictly larger key); `Equal` on ties.
    pub fn compare(&self, a: &Grid, b: &Grid) -> std::cmp::Ordering {
        match self {
            Self::Area => b.area().cmp(&a.area()),
            Self::Max => b.long().cmp(&a.long()),
            Self::Min => b.short().cmp(&a.short()),
            // long_a/short_a > long_b/short_b  <=>  long_a·short_b > long_b·short_a
            Self::Ratio => {
                let ka = a.long() as u128 * b.short() as u128;
                let kb = b.long() as u128 * a.short() as u128;
                kb.cmp(&ka)
            }
        }
    }

    /// Indices of `grids` in packing order (stable sort, `O(m log m)`).
    pub fn sort(&self, grids: &[Grid]) -> Vec<usize> {
        let mut idx: Vec<usize> = (0..grids.len()).collect();
        idx.sort_by(|&a, &b| self.compare(&grids[a], &grids[b]));
        idx
    }
}

/// A processor mesh: `p` processors along x (columns), `q` along y (rows).
/// \[VH94\] `P × Q` mesh with mesh ratio `R = P/Q`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Mesh {
    /// Processors along x.
    pub p: usize,
    /// Processors along y.
    pub q: usize,
}

impl Mesh {
    /// A mesh of `p × q` processors; both must be positive.
    pub fn new(p: usize, q: usize) -> Result<Self> {
        if p == 0 || q == 0 {
            return Err(Error::Empty(format!("processor mesh {p}x{q}")));
        }
        Ok(Mesh { p, q })
    }
    /// Mesh ratio `R = P/Q`.
    pub fn ratio(&self) -> f64 {
        self.p as f64 / self.q as f64
    }
    /// Number of processors (saturating: a mesh built directly with
    /// sides near `usize::MAX` cannot overflow it).
    pub fn size(&self) -> usize {
        self.p.saturating_mul(self.q)
    }
}

/// A packing algorithm: packs grids from the origin, aiming at a bounding box
/// with `W ≈ R·H` that is as small as possible.
pub trait Packer: Send + Sync {
    /// Short name (as used by `nuce plan pack --algo`).
    fn name(&self) -> &'static str;
    /// Packs `grids` for mesh ratio `ratio` (`> 0`, finite).
    fn pack(&self, grids: &[Grid], ratio: f64) -> Result<Packing>;
}

/// Most grids one packing takes: 10 000. The packers grow faster than
/// linearly (TP packed 20 000 grids in about 1.4 s, and the hypercube
/// allocator packs once per mesh shape: `--cube 24` took 18 s for 20 000
/// grids, 6 s for 10 000 on a busy machine).
pub const MAX_GRIDS: usize = 10_000;

/// Common argument checks: at least one grid and at most [`MAX_GRIDS`], no
/// empty grid, sizes small enough that coordinates cannot overflow, and a
/// finite positive ratio.
pub fn check_grids(grids: &[Grid], ratio: f64) -> Result<()> {
    if grids.is_empty() {
        return Err(Error::Empty("no grids to pack".into()));
    }
    if grids.len() > MAX_GRIDS {
        return Err(Error::InvalidInput(format!(
            "{} grids: at most {MAX_GRIDS} are packed",
            grids.len()
        )));
    }
    if !(ratio.is_finite() && ratio > 0.0) {
        return Err(Error::InvalidInput(format!(
            "mesh ratio must be finite and > 0, got {ratio}"
        )));
    }
    let mut total: u64 = 0;
    for (i, g) in grids.iter().enumerate() {
        if g.w == 0 || g.h == 0 {
            return Err(Error::InvalidInput(format!(
                "grid {i} is empty ({}x{})",
                g.w, g.h
            )));
        }
        total = total
            .checked_add(g.long())
            .filter(|&t| t <= 1 << 40)
            .ok_or_else(|| Error::InvalidInput("grid sizes too large".into()))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn orders_are_decreasing_and_stable() {
        let g = [
            Grid::new(4, 1),
            Grid::new(3, 3),
            Grid::new(2, 2),
            Grid::new(1, 4),
        ];
        assert_eq!(PackingOrder::Area.sort(&g), vec![1, 0, 2, 3]);
        assert_eq!(PackingOrder::Max.sort(&g), vec![0, 3, 1, 2]);
        assert_eq!(PackingOrder::Min.sort(&g), vec![1, 2, 0, 3]);
        assert_eq!(PackingOrder::Ratio.sort(&g), vec![0, 3, 1, 2]);
    }

    #[test]
    fn validate_detects_overlap() {
        let g = [Grid::new(2, 2), Grid::new(2, 2)];
        let mut p = Packing {
            algo: "t".into(),
            width: 4,
            height: 2,
            placements: vec![Placement::new(0, 0, false), Placement::new(2, 0, false)],
        };
        assert!(p.validate(&g).is_ok());
        p.placements[1].x = 1;
        assert!(p.validate(&g).is_err());
    }

    #[test]
    fn bad_input_is_an_error() {
        assert!(check_grids(&[], 1.0).is_err());
        assert!(check_grids(&[Grid::new(0, 3)], 1.0).is_err());
        assert!(check_grids(&[Grid::new(1, 3)], f64::NAN).is_err());
        assert!(check_grids(&[Grid::new(u64::MAX, 3)], 1.0).is_err());
        assert!(check_grids(&vec![Grid::new(3, 4); MAX_GRIDS], 1.0).is_ok());
        assert!(check_grids(&vec![Grid::new(3, 4); MAX_GRIDS + 1], 1.0).is_err());
        assert!(Mesh::new(0, 3).is_err());
    }
}
