//! Exhaustive search over guillotine tilings of small grids: every box is
//! cut in two by a plane, recursively, until each piece holds one part —
//! the 3D form of the exhaustive searches of \[KRW96\] §6.1–6.2 (XY, XY2,
//! TILE enumerate the 2D guillotine classes). For small grids, where
//! rounding to whole cells dominates, it finds what the model-based
//! decomposers miss.

use super::rb::split;
use super::{checked_speeds3, extents, Box3, GridDecomposer3, GridPlan3, Shape3};
use crate::error::{Error, Result};

/// The guillotine tiling of least `max_i volume_i / speed_i` (every part
/// non-empty), and among those the least internal surface — exact, by a
/// memoised search over (box extents, set of parts), for grids of at most
/// [`Guillotine3::MAX_CELLS`] cells and at most [`Guillotine3::MAX_PARTS`]
/// parts (larger input, or more parts than cells, is an
/// [`Error::InvalidInput`]).
///
/// The least feasible bound `T` on `volume_i / speed_i` is found by binary
/// search over the `N·p` candidate values `v / s_i` (`N` cells); for a
/// given `T`, the least surface of a box with extents `d` holding parts
/// `M` is `0` for one part whose speed allows the volume, else the minimum
/// over cutting planes (`d₀ + d₁ + d₂ − 3` of them) and proper subsets of
/// `M` sent to the first side of `area + F(first) + F(second)`.
/// `O(log(N·p) · N · 3^p · (d₀ + d₁ + d₂))` time.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Guillotine3;

impl Guillotine3 {
    /// Largest grid searched.
    pub const MAX_CELLS: usize = 216;
    /// Most parts searched.
    pub const MAX_PARTS: usize = 5;

    /// The guillotine tiling of least internal surface among those at least
    /// as balanced as `other` (no part's `volume_i / speed_i` above
    /// [`GridPlan3::slowest`] of `other`, every part non-empty): the exact
    /// optimum at `other`'s balance, so never more surface than `other` when
    /// `other` is a guillotine tiling itself (as every nuce decomposer's
    /// plan is). Named `guillotine`. `None` when no guillotine tiling with
    /// non-empty parts is that balanced (only when `other` has an empty part
    /// or is no guillotine tiling). Same limits and errors as
    /// [`GridDecomposer3::decompose`], and `speeds` must have one entry per
    /// box of `other`.
    pub fn at_balance_of(&self, other: &GridPlan3, speeds: &[f64]) -> Result<Option<GridPlan3>> {
        let shape = other.shape;
        let speeds = &checked_speeds3(shape, speeds)?;
        self.check_size(shape, speeds.len())?;
        let bound = other.slowest(speeds)?;
        solve(extents(shape), speeds, bound)
            .map(|boxes| GridPlan3::new(self.name(), shape, boxes))
            .transpose()
    }

    fn check_size(&self, shape: Shape3, p: usize) -> Result<()> {
        if Self::applies(shape, p) {
            return Ok(());
        }
        Err(Error::InvalidInput(format!(
            "guillotine search: at most {} cells, {} parts and one cell per part (got {}x{}x{}, {p} parts)",
            Self::MAX_CELLS,
            Self::MAX_PARTS,
            shape.0,
            shape.1,
            shape.2
        )))
    }

    /// True when [`Guillotine3`] accepts this input size.
    pub fn applies(shape: Shape3, parts: usize) -> bool {
        let cells = shape.0.saturating_mul(shape.1).saturating_mul(shape.2);
        cells <= Self::MAX_CELLS && parts <= Self::MAX_PARTS && parts <= cells
    }
}

/// A cut: axis, offset along it, the subset of parts sent to the first side.
type Cut = (usize, usize, u32);

/// The memoised search for one bound: surface and the choice per state.
struct Search<'a> {
    dims: [usize; 3],
    cap: &'a [f64],
    /// Per (extents, mask): least surface and (axis, offset, first subset).
    memo: Vec<Option<(f64, Cut)>>,
}

impl Search<'_> {
    fn index(&self, d: [usize; 3], mask: u32) -> usize {
        let [_, ny, nz] = self.dims;
        (((d[0] * (ny + 1) + d[1]) * (nz + 1) + d[2]) << self.cap.len()) | mask as usize
    }

    fn best(&mut self, d: [usize; 3], mask: u32) -> f64 {
        if mask.count_ones() == 1 {
            let v = (d[0] * d[1] * d[2]) as f64;
            return if v <= self.cap[mask.trailing_zeros() as usize] {
                0.0
            } else {
                f64::INFINITY
            };
        }
        let at = self.index(d, mask);
        if let Some((c, _)) = self.memo[at] {
            return c;
        }
        let mut best = (f64::INFINITY, (0, 0, 0));
        for axis in 0..3 {
            let area = (d[(axis + 1) % 3] * d[(axis + 2) % 3]) as f64;
            for cut in 1..d[axis] {
                let (mut l, mut r) = (d, d);
                l[axis] = cut;
                r[axis] = d[axis] - cut;
                let mut sub = (mask - 1) & mask;
                while sub > 0 {
                    let c = area + self.best(l, sub);
                    if c < best.0 {
                        let c = c + self.best(r, mask ^ sub);
                        if c < best.0 {
                            best = (c, (axis, cut, sub));
                        }
                    }
                    sub = (sub - 1) & mask;
                }
            }
        }
        self.memo[at] = Some(best);
        best.0
    }

    /// Places the parts of `mask` in box `b` following the memoised choices.
    fn place(&self, b: Box3, mask: u32, out: &mut [Box3]) {
        if mask.count_ones() == 1 {
            out[mask.trailing_zeros() as usize] = b;
            return;
        }
        let d = [b.nx, b.ny, b.nz];
        if let Some((_, (axis, cut, sub))) = self.memo[self.index(d, mask)] {
            let (l, r) = split(&b, axis, cut);
            self.place(l, sub, out);
            self.place(r, mask ^ sub, out);
        }
    }
}

/// The least-surface guillotine tiling of a grid of extents `dims` in
/// which part `i` holds at most `t · speeds[i]` cells (every part
/// non-empty), or `None` when there is none.
fn solve(dims: [usize; 3], speeds: &[f64], t: f64) -> Option<Vec<Box3>> {
    let p = speeds.len();
    let cap: Vec<f64> = speeds.iter().map(|s| t * s * (1.0 + 1e-12)).collect();
    let states = ((dims[0] + 1) * (dims[1] + 1) * (dims[2] + 1)) << p;
    let mut s = Search {
        dims,
        cap: &cap,
        memo: vec![None; states],
    };
    if !s.best(dims, (1u32 << p) - 1).is_finite() {
        return None;
    }
    let mut boxes = vec![Box3::default(); p];
    s.place(Box3::from_axes([0; 3], dims), (1u32 << p) - 1, &mut boxes);
    Some(boxes)
}

impl GridDecomposer3 for Guillotine3 {
    fn name(&self) -> &str {
        "guillotine"
    }

    fn decompose(&self, shape: Shape3, speeds: &[f64]) -> Result<GridPlan3> {
        let speeds = &checked_speeds3(shape, speeds)?;
        self.check_size(shape, speeds.len())?;
        let dims = extents(shape);
        let n = dims.iter().product::<usize>();
        let mut bounds: Vec<f64> = speeds
            .iter()
            .flat_map(|s| (1..=n).map(move |v| v as f64 / s))
            .collect();
        bounds.sort_by(f64::total_cmp);
        bounds.dedup();
        // The largest bound is always feasible (slabs of one or more planes).
        let (mut lo, mut hi) = (0, bounds.len() - 1);
        while lo < hi {
            let mid = (lo + hi) / 2;
            if solve(dims, speeds, bounds[mid]).is_some() {
                hi = mid;
            } else {
                lo = mid + 1;
            }
        }
        let boxes = solve(dims, speeds, bounds[lo])
            .ok_or_else(|| Error::InvalidInput("guillotine search found no tiling".into()))?;
        GridPlan3::new(self.name(), shape, boxes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rounding_on_a_tiny_grid() {
        // 5x3x3, shares 9.8 / 13.4 / 22.0: rounding the column layout gives
        // 9, 18, 18 cells (slowest 18 / 1.19 = 15.1, surface 18); a
        // guillotine tiling of 6, 12, 27 cells does 13.8 with 9 + 6 faces.
        let speeds = [0.8697650782402153, 1.1888305847898895, 1.955258907522139];
        let plan = Guillotine3.decompose((5, 3, 3), &speeds).unwrap();
        let time = plan.slowest(&speeds).unwrap();
        // Better: 9, 12, 24 cells, slowest 24 / 1.96 = 12.3 (surface 21).
        assert!(time < 12.3, "{plan:?}");
        // At the column DP's balance: no slower, no more surface.
        let col = crate::array3d::Column3
            .decompose((5, 3, 3), &speeds)
            .unwrap();
        let g = Guillotine3.at_balance_of(&col, &speeds).unwrap().unwrap();
        assert!(g.slowest(&speeds).unwrap() <= col.slowest(&speeds).unwrap());
        assert!(g.internal_surface() <= col.internal_surface());
        assert!(g.internal_surface() <= plan.internal_surface());
        assert!(Guillotine3.at_balance_of(&col, &[1.0; 46]).is_err());
        assert!(Guillotine3.decompose((10, 10, 10), &[1.0]).is_err());
        assert!(Guillotine3.decompose((1, 1, 2), &[1.0; 3]).is_err());
    }
}
