//! A lower bound on the internal surface of any tiling of a grid by boxes
//! of given volumes — the 3D counterpart of \[BBLRR01\] §3.2.3, Lemma 1
//! (there: a rectangle of area `A` has half-perimeter `≥ 2√A`).
//!
//! # Derivation
//!
//! Let a part be a box of extents `(a, b, c)` in a grid of extents
//! `(N₀, N₁, N₂)`, volume `V = abc`. Call its *internal area* the area of
//! its faces not on the grid's boundary. Along an axis where the box is
//! shorter than the grid (`a < N₀`), at most one of its two faces
//! perpendicular to that axis can lie on the boundary, so at least one
//! (area `bc`) is internal; along a full axis both may lie on it. Hence
//!
//! ```text
//! internal area ≥ Σ over non-full axes of the cross-section perpendicular to it
//! ```
//!
//! and, minimising over every box of volume `V` that fits, by how many
//! axes are full:
//!
//! * three full: only if `V = N₀N₁N₂` (the whole grid), area 0;
//! * two full (`b = N₁`, `c = N₂`): area `≥ N₁N₂` — the cross-section it cuts;
//! * one full (`c = N₂`): area `≥ N₂(a + b)` with `ab = V/N₂`, `a ≤ N₀`,
//!   `b ≤ N₁`; `a + V/(N₂a)` is convex, so its minimum is at `√(V/N₂)`
//!   clamped into `[V/(N₂N₁), N₀]`;
//! * none full: area `≥ ab + bc + ca ≥ 3·V^(2/3)` (AM–GM, as
//!   `ab·bc·ca = V²`).
//!
//! The part's bound ([`part_surface_lower_bound`]) is the least of the
//! cases over every choice of axes. Every internal face of a tiling lies
//! between exactly two parts, so the internal surface (each shared face
//! counted once, [`GridPlan3::internal_surface`](super::GridPlan3::internal_surface))
//! is at least **half the sum of the parts' bounds**
//! ([`surface_lower_bound`]). The bound is sound for every box tiling
//! with these volumes (not only the column class). It is tight for, e.g.,
//! two halves (the smallest cross-section) and four equal pencils of a
//! cube (`2·N²` for an `N³` cube); for equal octants it is below the
//! optimum (`3N²`): a pencil `N × (N/√8)²` of the same volume has less
//! internal area than a cube of side `N/2`, but does not tile.

use super::{check_args3, extents, Shape3};
use crate::error::{Error, Result};

/// Lower bound on the internal area of one box of volume `volume` in a
/// grid of `shape` (module docs, "Derivation"); 0 for the whole grid or
/// an empty part. `O(1)`.
pub fn part_surface_lower_bound(shape: Shape3, volume: f64) -> f64 {
    let n = extents(shape).map(|e| e as f64);
    let cells = n[0] * n[1] * n[2];
    if volume <= 0.0 {
        return 0.0;
    }
    if volume >= cells {
        return 0.0;
    }
    let mut best = 3.0 * volume.powf(2.0 / 3.0);
    for full in 0..3 {
        let (a, b) = ((full + 1) % 3, (full + 2) % 3);
        // Two full axes, the box cut across `full`: the cross-section n[a]·n[b].
        best = best.min(n[a] * n[b]);
        // One full axis `full`: n[full]·(x + y) with x·y = volume / n[full].
        let area = volume / n[full];
        let lo = area / n[b];
        let x = area.sqrt().clamp(lo, n[a].max(lo));
        best = best.min(n[full] * (x + area / x));
    }
    best
}

/// Lower bound on the internal surface (each shared face counted once) of
/// any tiling of `shape` by boxes of the given `volumes`: half the sum of
/// [`part_surface_lower_bound`] (module docs, "Derivation"). Volumes are
/// real (e.g. the shares `N·s_i/Σs`, or a plan's integer volumes); they
/// must be finite and `≥ 0`. `O(p)`.
pub fn surface_lower_bound(shape: Shape3, volumes: &[f64]) -> Result<f64> {
    check_args3(shape, &[1.0])?;
    if let Some((i, v)) = volumes
        .iter()
        .enumerate()
        .find(|(_, v)| !(v.is_finite() && **v >= 0.0))
    {
        return Err(Error::InvalidInput(format!(
            "volume {v} of part {i}: volumes must be finite and >= 0"
        )));
    }
    Ok(0.5
        * volumes
            .iter()
            .map(|&v| part_surface_lower_bound(shape, v))
            .sum::<f64>())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bound_is_tight_for_octants_and_halves() {
        assert_eq!(surface_lower_bound((8, 8, 8), &[128.0; 4]).unwrap(), 128.0);
        // Octants: a pencil 8 x √8 x √8 has internal area 16·√8 ≈ 45.3 < 48.
        let oct = surface_lower_bound((8, 8, 8), &[64.0; 8]).unwrap();
        assert!(oct > 180.0 && oct < 192.0, "{oct}");
        // Two halves of a 4x6x10 brick: the smallest cross-section, 24.
        assert_eq!(surface_lower_bound((4, 6, 10), &[120.0; 2]).unwrap(), 24.0);
        assert_eq!(surface_lower_bound((4, 6, 10), &[240.0]).unwrap(), 0.0);
        assert!(surface_lower_bound((4, 6, 10), &[f64::NAN]).is_err());
        assert!(surface_lower_bound((0, 6, 10), &[1.0]).is_err());
    }

    #[test]
    fn bound_never_exceeds_any_box_of_that_volume() {
        // Every box that fits a 5x4x3 grid, at every position: its internal
        // area is at least the bound for its volume.
        let shape = (5, 4, 3);
        let n = extents(shape);
        for a in 1..=5 {
            for b in 1..=4 {
                for c in 1..=3 {
                    let len = [a, b, c];
                    for x in 0..=5 - a {
                        for y in 0..=4 - b {
                            for z in 0..=3 - c {
                                let lo = [x, y, z];
                                let mut area = 0;
                                for ax in 0..3 {
                                    let cs = len[(ax + 1) % 3] * len[(ax + 2) % 3];
                                    area += cs * usize::from(lo[ax] > 0);
                                    area += cs * usize::from(lo[ax] + len[ax] < n[ax]);
                                }
                                let v = (a * b * c) as f64;
                                assert!(
                                    area as f64 >= part_surface_lower_bound(shape, v) - 1e-9,
                                    "{len:?} at {lo:?}"
                                );
                            }
                        }
                    }
                }
            }
        }
    }
}
