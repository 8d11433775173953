//! The data of a 3D plan: [`Box3`] (a box of cells) and [`GridPlan3`] (one
//! box per part, in speed order), with the checks and measures every
//! decomposer's result is judged by: exact tiling ([`GridPlan3::validate`]),
//! volumes, imbalance, internal surface and the neighbours a halo exchange
//! talks to.
//!
//! (Over 600 lines with its unit tests at the end; the code is about 540.)

use serde::{Deserialize, Serialize};

use super::stencil::Stencil;
use crate::array2d::column::rescaled;
use crate::boxpairs::{near_pairs, Span};
use crate::error::{Error, Result};
use crate::tiling::check_disjoint;

/// The shape of a grid, `(nx, ny, nz)` cells; cell `(i, j, k)` has `i < nx`,
/// `j < ny`, `k < nz`, and C order (`k` fastest) where cells are listed.
pub type Shape3 = (usize, usize, usize);

/// A box of cells: first cell `(x, y, z)`, extents `nx × ny × nz`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
pub struct Box3 {
    /// First cell along x (0-based).
    pub x: usize,
    /// First cell along y.
    pub y: usize,
    /// First cell along z.
    pub z: usize,
    /// Extent along x (0 for an empty part).
    pub nx: usize,
    /// Extent along y (0 for an empty part).
    pub ny: usize,
    /// Extent along z (0 for an empty part).
    pub nz: usize,
}

impl Box3 {
    /// A new box.
    pub const fn new(x: usize, y: usize, z: usize, nx: usize, ny: usize, nz: usize) -> Self {
        Box3 {
            x,
            y,
            z,
            nx,
            ny,
            nz,
        }
    }

    /// A box from its first cell and extents indexed by axis (0 = x, 1 = y,
    /// 2 = z); [`Box3::default`] when empty.
    pub fn from_axes(lo: [usize; 3], len: [usize; 3]) -> Self {
        let b = Box3::new(lo[0], lo[1], lo[2], len[0], len[1], len[2]);
        if b.is_empty() {
            Box3::default()
        } else {
            b
        }
    }

    /// First cell along `axis` (0 = x, 1 = y, 2 = z).
    pub const fn lo(&self, axis: usize) -> usize {
        match axis {
            0 => self.x,
            1 => self.y,
            _ => self.z,
        }
    }

    /// Extent along `axis` (0 = x, 1 = y, 2 = z).
    pub const fn len(&self, axis: usize) -> usize {
        match axis {
            0 => self.nx,
            1 => self.ny,
            _ => self.nz,
        }
    }

    /// One past the last cell along `axis`.
    pub const fn hi(&self, axis: usize) -> usize {
        self.lo(axis) + self.len(axis)
    }

    /// Number of cells.
    pub const fn volume(&self) -> usize {
        self.nx * self.ny * self.nz
    }

    /// True when the box holds no cell.
    pub const fn is_empty(&self) -> bool {
        self.nx == 0 || self.ny == 0 || self.nz == 0
    }

    /// True when cell `(i, j, k)` lies inside.
    pub const fn contains(&self, i: usize, j: usize, k: usize) -> bool {
        i >= self.x
            && i < self.x + self.nx
            && j >= self.y
            && j < self.y + self.ny
            && k >= self.z
            && k < self.z + self.nz
    }

    /// The common cells of two boxes, `None` when they share none.
    pub fn intersect(&self, other: &Box3) -> Option<Box3> {
        let mut lo = [0; 3];
        let mut len = [0; 3];
        for a in 0..3 {
            lo[a] = self.lo(a).max(other.lo(a));
            let hi = self.hi(a).min(other.hi(a));
            if hi <= lo[a] {
                return None;
            }
            len[a] = hi - lo[a];
        }
        Some(Box3::from_axes(lo, len))
    }

    /// Area of the six faces, in cell faces (0 for an empty box).
    pub const fn surface(&self) -> usize {
        if self.is_empty() {
            0
        } else {
            2 * (self.nx * self.ny + self.ny * self.nz + self.nx * self.nz)
        }
    }
}

/// A decomposition of an `nx × ny × nz` grid into boxes, one per part.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GridPlan3 {
    /// Name of the algorithm that produced the plan.
    pub algorithm: String,
    /// Global shape `(nx, ny, nz)`.
    pub shape: Shape3,
    /// One box per part, in input (speed) order. Empty parts are allowed.
    pub boxes: Vec<Box3>,
}

impl GridPlan3 {
    /// Builds a plan and checks that it tiles the grid ([`GridPlan3::validate`]).
    pub fn new(algorithm: impl Into<String>, shape: Shape3, boxes: Vec<Box3>) -> Result<Self> {
        let plan = GridPlan3 {
            algorithm: algorithm.into(),
            shape,
            boxes,
        };
        plan.validate()?;
        Ok(plan)
    }

    /// The plan mirrored along the axes where `axes` is true: every box
    /// moves to the mirror position in the grid; part volumes, surfaces and
    /// neighbour relations are those of the plan itself.
    pub fn reflected(&self, axes: [bool; 3]) -> GridPlan3 {
        let n = [self.shape.0, self.shape.1, self.shape.2];
        let boxes = self
            .boxes
            .iter()
            .map(|b| {
                if b.is_empty() {
                    return *b;
                }
                let lo: [usize; 3] =
                    std::array::from_fn(|a| if axes[a] { n[a] - b.hi(a) } else { b.lo(a) });
                Box3::from_axes(lo, std::array::from_fn(|a| b.len(a)))
            })
            .collect();
        GridPlan3 {
            algorithm: self.algorithm.clone(),
            shape: self.shape,
            boxes,
        }
    }

    /// Cells that keep their owner from `current` to this plan (Σ over the
    /// parts of their old box ∩ new box); 0 for plans of other shapes or
    /// part counts.
    pub fn kept_cells(&self, current: &GridPlan3) -> usize {
        if current.shape != self.shape || current.len() != self.len() {
            return 0;
        }
        self.boxes
            .iter()
            .zip(&current.boxes)
            .filter_map(|(a, b)| a.intersect(b).map(|x| x.volume()))
            .sum()
    }

    /// Of the eight mirror images of this plan ([`GridPlan3::reflected`]),
    /// the one that keeps the most cells with their owners in `current`
    /// ([`GridPlan3::kept_cells`]; the plan itself on a tie): a decomposer
    /// places the parts by speed, not by where the data lies, and a mirror
    /// image is as good a plan that can move far less. O(8 p).
    pub fn closest_mirror(self, current: &GridPlan3) -> GridPlan3 {
        let mut best_kept = self.kept_cells(current);
        let mut best = None;
        for m in 1..8u8 {
            let candidate = self.reflected([m & 1 != 0, m & 2 != 0, m & 4 != 0]);
            let kept = candidate.kept_cells(current);
            if kept > best_kept {
                (best_kept, best) = (kept, Some(candidate));
            }
        }
        best.unwrap_or(self)
    }

    /// This plan with the boxes of parts of equal `speeds` exchanged so that
    /// more cells keep their owner in `current` ([`GridPlan3::kept_cells`]):
    /// within each group of parts of exactly equal speed (and so of the
    /// same share), boxes are given greedily, the pair of part and box
    /// that share the most cells first. Volumes per speed are unchanged;
    /// the plan itself when `current` or `speeds` do not fit. O(p² log p).
    pub fn matched_to(self, current: &GridPlan3, speeds: &[f64]) -> GridPlan3 {
        if current.shape != self.shape || current.len() != self.len() || speeds.len() != self.len()
        {
            return self;
        }
        let mut boxes = self.boxes.clone();
        let mut done = vec![false; self.len()];
        for first in 0..self.len() {
            if done[first] {
                continue;
            }
            let group: Vec<usize> = (first..self.len())
                .filter(|&k| speeds[k] == speeds[first])
                .collect();
            for &k in &group {
                done[k] = true;
            }
            let shared = |part: usize, b: usize| {
                current.boxes[part]
                    .intersect(&self.boxes[b])
                    .map_or(0, |x| x.volume())
            };
            let mut pairs: Vec<(usize, usize, usize)> = group
                .iter()
                .flat_map(|&part| group.iter().map(move |&b| (part, b)))
                .map(|(part, b)| (shared(part, b), part, b))
                .collect();
            pairs.sort_by(|x, y| y.cmp(x));
            let (mut part_done, mut box_done) = (vec![false; self.len()], vec![false; self.len()]);
            for (_, part, b) in pairs {
                if !part_done[part] && !box_done[b] {
                    boxes[part] = self.boxes[b];
                    part_done[part] = true;
                    box_done[b] = true;
                }
            }
        }
        GridPlan3 {
            algorithm: self.algorithm,
            shape: self.shape,
            boxes,
        }
    }

    /// Number of parts.
    pub fn len(&self) -> usize {
        self.boxes.len()
    }

    /// True when the plan has no part.
    pub fn is_empty(&self) -> bool {
        self.boxes.is_empty()
    }

    /// Extent of the grid along `axis` (0 = x, 1 = y, 2 = z).
    pub const fn extent(&self, axis: usize) -> usize {
        match axis {
            0 => self.shape.0,
            1 => self.shape.1,
            _ => self.shape.2,
        }
    }

    /// Number of cells of the grid (of a valid plan: at most
    /// [`MAX_CELLS`](crate::array2d::MAX_CELLS)).
    pub const fn cells(&self) -> usize {
        self.shape.0 * self.shape.1 * self.shape.2
    }

    /// Number of cells of each part, in part order.
    pub fn volumes(&self) -> Vec<usize> {
        self.boxes.iter().map(Box3::volume).collect()
    }

    /// The part owning cell `(i, j, k)`, `None` outside the grid. `O(p)`.
    pub fn owner_of(&self, i: usize, j: usize, k: usize) -> Option<usize> {
        self.boxes.iter().position(|b| b.contains(i, j, k))
    }

    /// Checks that the boxes tile the grid exactly: every non-empty box lies
    /// inside, boxes are pairwise disjoint and their volumes sum to
    /// `nx·ny·nz`. Disjointness is checked exactly by the boxes' corners
    /// (their signed corners add up to the grid's exactly when they tile
    /// it): `O(p log p)` whatever their shapes.
    pub fn validate(&self) -> Result<()> {
        let (nx, ny, nz) = self.shape;
        if nx == 0 || ny == 0 || nz == 0 {
            return Err(Error::Empty(format!("grid of {nx}x{ny}x{nz} cells")));
        }
        if self.boxes.is_empty() {
            return Err(Error::InvalidPlan("plan has no parts".into()));
        }
        let mut total = 0u128;
        for (i, b) in self.boxes.iter().enumerate() {
            if b.is_empty() {
                continue;
            }
            let outside = (0..3).any(|a| {
                b.lo(a)
                    .checked_add(b.len(a))
                    .is_none_or(|e| e > self.extent(a))
            });
            if outside {
                return Err(Error::InvalidPlan(format!(
                    "part {i} {b:?} lies outside the {nx}x{ny}x{nz} grid"
                )));
            }
            total += b.nx as u128 * b.ny as u128 * b.nz as u128;
        }
        let cells = nx as u128 * ny as u128 * nz as u128;
        if total != cells {
            return Err(Error::InvalidPlan(format!(
                "parts cover {total} cells, the grid has {cells}"
            )));
        }
        let (nx, ny, nz) = self.shape;
        check_disjoint(&self.spans(), [nx, ny, nz])
    }

    /// Checks `speeds` for this plan: valid ([`crate::check_speeds`]) and
    /// one per part ([`Error::ShapeMismatch`] otherwise).
    pub fn check_speeds(&self, speeds: &[f64]) -> Result<()> {
        crate::check_speeds(speeds)?;
        if speeds.len() != self.boxes.len() {
            return Err(Error::ShapeMismatch(format!(
                "{} speeds for a plan of {} parts",
                speeds.len(),
                self.boxes.len()
            )));
        }
        Ok(())
    }

    /// Each part's real share of the cells, `cells · s_i / Σ s`. `O(p)`.
    pub fn shares(&self, speeds: &[f64]) -> Result<Vec<f64>> {
        self.check_speeds(speeds)?;
        let speeds = rescaled(speeds);
        let total: f64 = speeds.iter().sum();
        let n = self.cells() as f64;
        Ok(speeds.iter().map(|s| n * s / total).collect())
    }

    /// Relative load imbalance `max_i (volume_i / share_i) − 1`; 0 means
    /// every part holds exactly its share. `O(p)`.
    pub fn imbalance(&self, speeds: &[f64]) -> Result<f64> {
        let shares = self.shares(speeds)?;
        let worst = self
            .boxes
            .iter()
            .zip(&shares)
            .map(|(b, s)| b.volume() as f64 / s)
            .fold(0.0, f64::max);
        Ok(worst - 1.0)
    }

    /// The slowest part's time, `max_i volume_i / speed_i` (in cells per
    /// unit of speed; the quantity [`Rectilinear3`](super::Rectilinear3)
    /// and [`Guillotine3`](super::Guillotine3) minimise). `O(p)`.
    pub fn slowest(&self, speeds: &[f64]) -> Result<f64> {
        self.check_speeds(speeds)?;
        Ok(self
            .boxes
            .iter()
            .zip(speeds)
            .map(|(b, s)| b.volume() as f64 / s)
            .fold(0.0, f64::max))
    }

    /// Internal surface: the number of pairs of face-adjacent cells with
    /// different owners, i.e. each shared face counted **once** (the 3D
    /// Acost of \[KRW96\] §2), computed as `(Σ surface − boundary) / 2`. `O(p)`.
    pub fn internal_surface(&self) -> usize {
        let (nx, ny, nz) = self.shape;
        let total: u128 = self.boxes.iter().map(|b| b.surface() as u128).sum();
        let boundary =
            2 * (nx as u128 * ny as u128 + ny as u128 * nz as u128 + nx as u128 * nz as u128);
        ((total - boundary) / 2) as usize
    }

    /// Number of halo (ghost) cells part `part` receives per exchange with
    /// `stencil`: the cells of the grid outside its box within the stencil's
    /// reach (all belong to other parts, the tiling being exact). 0 for an
    /// empty part. `O(1)`.
    pub fn halo_cells(&self, part: usize, stencil: Stencil) -> usize {
        let Some(b) = self.boxes.get(part).filter(|b| !b.is_empty()) else {
            return 0;
        };
        let grown = |a: usize| {
            let lo = b.lo(a).saturating_sub(stencil.ghost);
            let hi = (b.hi(a) + stencil.ghost).min(self.extent(a));
            hi - lo
        };
        if stencil.corners() {
            grown(0) * grown(1) * grown(2) - b.volume()
        } else {
            (0..3)
                .map(|a| (grown(a) - b.len(a)) * b.len((a + 1) % 3) * b.len((a + 2) % 3))
                .sum()
        }
    }

    /// The parts a halo exchange of `part` with `stencil` talks to: the
    /// other non-empty parts owning a cell within the stencil's reach of
    /// `part`'s box. With ghost width 1 these are the boxes sharing a face
    /// (7-point) or a face, an edge or a corner (27-point) with it; wider
    /// ghosts reach further. Sorted ascending; empty for an empty part. `O(p)`
    /// (all parts at once: [`GridPlan3::neighbour_lists`]).
    pub fn neighbours(&self, part: usize, stencil: Stencil) -> Vec<usize> {
        let Some(b) = self.boxes.get(part).filter(|b| !b.is_empty()) else {
            return Vec::new();
        };
        (0..self.boxes.len())
            .filter(|&j| j != part && !self.boxes[j].is_empty())
            .filter(|&j| reaches(b, &self.boxes[j], stencil))
            .collect()
    }

    /// The cells part `part` exchanges with each neighbour in a halo
    /// exchange of `stencil` (any ghost width, 0 included): `(q, send,
    /// recv)` per neighbour `q` of [`GridPlan3::neighbours`], with `send` =
    /// the cells of `part` within the stencil's reach of `q`'s box and
    /// `recv` = the cells of `q` within its reach of `part`'s box (global
    /// coordinates, clipped to the grid). Each is one box: with the 27-point
    /// stencil `mine ∩ grow(theirs, g)` along all axes; with the 7-point
    /// stencil two disjoint boxes are apart along exactly one axis when one
    /// reaches the other, so growing along that axis alone gives the box.
    /// `O(p)`.
    pub fn halo_pairs(&self, part: usize, stencil: Stencil) -> Vec<(usize, Box3, Box3)> {
        let Some(me) = self.boxes.get(part).copied() else {
            return Vec::new();
        };
        let g = stencil.ghost;
        let axes: &[[bool; 3]] = if stencil.corners() {
            &[[true; 3]]
        } else {
            &[
                [true, false, false],
                [false, true, false],
                [false, false, true],
            ]
        };
        self.neighbours(part, stencil)
            .into_iter()
            .filter_map(|q| {
                let other = self.boxes[q];
                axes.iter().find_map(|&ax| {
                    let send = me.intersect(&self.grown(&other, g, ax))?;
                    let recv = self.grown(&me, g, ax).intersect(&other)?;
                    Some((q, send, recv))
                })
            })
            .collect()
    }

    /// `b` grown by `g` cells on both sides along the axes set in `axes`,
    /// clipped to the grid.
    pub fn grown(&self, b: &Box3, g: usize, axes: [bool; 3]) -> Box3 {
        if b.is_empty() {
            return *b;
        }
        let mut lo = [0; 3];
        let mut len = [0; 3];
        for a in 0..3 {
            let w = if axes[a] { g } else { 0 };
            lo[a] = b.lo(a).saturating_sub(w);
            len[a] = (b.hi(a) + w).min(self.extent(a)) - lo[a];
        }
        Box3::from_axes(lo, len)
    }

    /// [`GridPlan3::neighbours`] of every part, from the near pairs of a
    /// bucket grid (the relation is symmetric): `O(p)`
    /// for boxes of comparable shapes, at worst a plane sweep's.
    pub fn neighbour_lists(&self, stencil: Stencil) -> Vec<Vec<usize>> {
        let mut lists = vec![Vec::new(); self.boxes.len()];
        let found: Result<()> = self.near_pairs(stencil.ghost, |j, i| {
            if reaches(&self.boxes[i], &self.boxes[j], stencil) {
                lists[i].push(j);
                lists[j].push(i);
            }
            Ok(())
        });
        debug_assert!(found.is_ok());
        lists.iter_mut().for_each(|l| l.sort_unstable());
        lists
    }

    /// The boxes as half-open spans.
    fn spans(&self) -> Vec<Span<3>> {
        self.boxes
            .iter()
            .map(|b| {
                (
                    [b.x, b.y, b.z],
                    std::array::from_fn(|a| b.lo(a).saturating_add(b.len(a))),
                )
            })
            .collect()
    }

    /// The pairs `(j, i)`, `j < i`, of non-empty parts less than `margin`
    /// cells apart along every axis, each once ([`near_pairs`]).
    fn near_pairs(
        &self,
        margin: usize,
        visit: impl FnMut(usize, usize) -> Result<()>,
    ) -> Result<()> {
        let (nx, ny, nz) = self.shape;
        near_pairs(&self.spans(), [nx, ny, nz], margin, visit)
    }
}

/// True when non-empty box `b` owns a cell within `stencil`'s reach of a
/// cell of `a`: along each axis the boxes are at most `ghost` cells apart
/// (0 when they overlap), and for the 7-point stencil apart along at most
/// one axis. Symmetric.
fn reaches(a: &Box3, b: &Box3, stencil: Stencil) -> bool {
    let gap = |x: usize| {
        if b.lo(x) >= a.hi(x) {
            b.lo(x) - a.hi(x) + 1
        } else if a.lo(x) >= b.hi(x) {
            a.lo(x) - b.hi(x) + 1
        } else {
            0
        }
    };
    let gaps = [gap(0), gap(1), gap(2)];
    gaps.iter().all(|&d| d <= stencil.ghost)
        && (stencil.corners() || gaps.iter().filter(|&&d| d > 0).count() <= 1)
}

#[cfg(test)]
mod tests {
    #[test]
    fn matched_to_swaps_boxes_of_equal_speeds_only() {
        use super::{Box3, GridPlan3};
        let slab = |x: usize| Box3::from_axes([x, 0, 0], [4, 5, 6]);
        let current = GridPlan3::new("c", (12, 5, 6), vec![slab(0), slab(4), slab(8)]).unwrap();
        let moved = GridPlan3::new("n", (12, 5, 6), vec![slab(8), slab(0), slab(4)]).unwrap();
        let m = moved.clone().matched_to(&current, &[1.0, 1.0, 1.0]);
        assert_eq!(m.boxes, current.boxes);
        assert_eq!(m.kept_cells(&current), 12 * 5 * 6);
        // Parts 0 and 2 equal, part 1 faster: only 0 and 2 may swap.
        let m = moved.clone().matched_to(&current, &[1.0, 2.0, 1.0]);
        assert_eq!(m.boxes, vec![slab(4), slab(0), slab(8)]);
        // Plans that do not fit are left as they are.
        assert_eq!(
            moved.clone().matched_to(&current, &[1.0]).boxes,
            moved.boxes
        );
    }

    use super::*;

    fn two_by_two() -> GridPlan3 {
        // 4x4x2 grid cut into four 2x2x2 columns, plus an empty part.
        GridPlan3::new(
            "t",
            (4, 4, 2),
            vec![
                Box3::new(0, 0, 0, 2, 2, 2),
                Box3::new(2, 0, 0, 2, 2, 2),
                Box3::default(),
                Box3::new(0, 2, 0, 2, 2, 2),
                Box3::new(2, 2, 0, 2, 2, 2),
            ],
        )
        .unwrap()
    }

    #[test]
    fn mirror_images_tile_and_the_closest_keeps_the_most_cells() {
        let p = two_by_two();
        for m in 0..8u8 {
            let r = p.reflected([m & 1 != 0, m & 2 != 0, m & 4 != 0]);
            assert!(r.validate().is_ok(), "{m}: {r:?}");
            assert_eq!(r.volumes(), p.volumes());
            assert_eq!(r.internal_surface(), p.internal_surface());
        }
        // Mirrored along x, the plan swaps parts 0 and 1: as a new plan for
        // the layout `current`, it keeps nothing; its mirror keeps all.
        let current = p.clone();
        let swapped = p.reflected([true, false, false]);
        assert_eq!(swapped.kept_cells(&current), 0);
        assert_eq!(swapped.clone().closest_mirror(&current), current);
        // Brute force over the eight images, slabs of 3:1 over an even
        // layout: the plan as made keeps 24 of 32 cells, its mirror along x
        // 8; from either, the closest mirror keeps the most (24).
        let even = GridPlan3::new(
            "t",
            (8, 2, 2),
            vec![Box3::new(0, 0, 0, 4, 2, 2), Box3::new(4, 0, 0, 4, 2, 2)],
        )
        .unwrap();
        let made = GridPlan3::new(
            "t",
            (8, 2, 2),
            vec![Box3::new(0, 0, 0, 6, 2, 2), Box3::new(6, 0, 0, 2, 2, 2)],
        )
        .unwrap();
        let best = (0..8u8)
            .map(|m| made.reflected([m & 1 != 0, m & 2 != 0, m & 4 != 0]))
            .map(|r| r.kept_cells(&even))
            .max()
            .unwrap();
        let closest = made.clone().closest_mirror(&even);
        assert_eq!(closest.kept_cells(&even), best);
        assert_eq!((made.kept_cells(&even), best), (24, 24));
        let made_rev = made.reflected([true, false, false]);
        assert_eq!(made_rev.kept_cells(&even), 8);
        assert_eq!(made_rev.closest_mirror(&even).kept_cells(&even), 24);
    }

    #[test]
    fn validate_catches_overlap_gaps_and_outside() {
        assert!(two_by_two().validate().is_ok());
        let overlap = GridPlan3::new(
            "t",
            (2, 1, 1),
            vec![Box3::new(0, 0, 0, 2, 1, 1), Box3::new(1, 0, 0, 1, 1, 1)],
        );
        assert!(overlap.is_err());
        // Same total volume as the grid, but one cell twice and one never.
        let shifted = GridPlan3::new(
            "t",
            (3, 1, 1),
            vec![Box3::new(0, 0, 0, 2, 1, 1), Box3::new(1, 0, 0, 1, 1, 1)],
        );
        assert!(shifted.is_err());
        let gap = GridPlan3::new("t", (2, 1, 1), vec![Box3::new(0, 0, 0, 1, 1, 1)]);
        assert!(gap.is_err());
        let outside = GridPlan3::new(
            "t",
            (2, 1, 1),
            vec![Box3::new(0, 0, 0, 1, 1, 1), Box3::new(2, 0, 0, 1, 1, 1)],
        );
        assert!(outside.is_err());
        let huge = GridPlan3::new("t", (2, 1, 1), vec![Box3::new(usize::MAX, 0, 0, 2, 1, 1)]);
        assert!(huge.is_err());
        assert!(GridPlan3::new("t", (0, 1, 1), vec![Box3::default()]).is_err());
    }

    #[test]
    fn measures_of_a_two_by_two_plan() {
        let p = two_by_two();
        assert_eq!(p.owner_of(3, 1, 1), Some(1));
        assert_eq!(p.owner_of(1, 3, 0), Some(3));
        assert_eq!(p.owner_of(4, 0, 0), None);
        assert_eq!(p.volumes(), vec![8, 8, 0, 8, 8]);
        // Two internal planes of 4x2 faces each.
        assert_eq!(p.internal_surface(), 16);
        let s7 = Stencil::seven(1);
        let s27 = Stencil::twenty_seven(1);
        assert_eq!(p.neighbours(0, s7), vec![1, 3]);
        assert_eq!(p.neighbours(0, s27), vec![1, 3, 4]);
        assert!(p.neighbours(2, s27).is_empty());
        // Faces: 2 planes of 2x2 cells; corners add the 1x1x2 edge column.
        assert_eq!(p.halo_cells(0, s7), 8);
        assert_eq!(p.halo_cells(0, s27), 10);
        let speeds = [1.0, 1.0, 1e-9, 1.0, 1.0];
        assert!(p.imbalance(&speeds).unwrap().abs() < 1e-6);
        assert!(p.imbalance(&[1.0; 4]).is_err());
    }
}
