//! Halo exchanges of a 3D stencil code and the predicted time per
//! iteration that [`Best3`](super::Best3) ranks plans by — the 3D analogue of
//! [`crate::array2d::cost::predicted_time`] (\[KRW96\] §2: one cell's data
//! sent across a part boundary costs one time unit).

use serde::{Deserialize, Serialize};

use super::GridPlan3;
use crate::array2d::column::rescaled;
use crate::error::{Error, Result};

/// The halo a stencil code exchanges: which neighbours of a cell it reads
/// and how many layers of ghost cells it keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Stencil {
    /// `false`: a 7-point (star) stencil, faces only — a part receives
    /// `ghost` layers on each face; `true`: a 27-point (box) stencil, faces,
    /// edges and corners.
    pub box_stencil: bool,
    /// Ghost width: layers of halo cells (at least 1).
    pub ghost: usize,
}

impl Default for Stencil {
    /// The 7-point stencil with one ghost layer.
    fn default() -> Self {
        Stencil::seven(1)
    }
}

impl Stencil {
    /// The 7-point stencil (faces only) with `ghost` layers.
    pub const fn seven(ghost: usize) -> Self {
        Stencil {
            box_stencil: false,
            ghost,
        }
    }

    /// The 27-point stencil (faces, edges, corners) with `ghost` layers.
    pub const fn twenty_seven(ghost: usize) -> Self {
        Stencil {
            box_stencil: true,
            ghost,
        }
    }

    /// The stencil of `points` = 7 or 27 points with `ghost ≥ 1` layers;
    /// anything else is an [`Error::InvalidInput`].
    pub fn from_points(points: usize, ghost: usize) -> Result<Self> {
        let s = match points {
            7 => Stencil::seven(ghost),
            27 => Stencil::twenty_seven(ghost),
            _ => {
                return Err(Error::InvalidInput(format!(
                    "stencil of {points} points: 7 or 27 are supported"
                )))
            }
        };
        s.check()?;
        Ok(s)
    }

    /// True for the 27-point stencil (edges and corners exchanged too).
    pub const fn corners(&self) -> bool {
        self.box_stencil
    }

    /// Number of points of the stencil, 7 or 27.
    pub const fn points(&self) -> usize {
        if self.box_stencil {
            27
        } else {
            7
        }
    }

    /// Rejects a ghost width of 0 with [`Error::InvalidInput`].
    pub fn check(&self) -> Result<()> {
        if self.ghost == 0 {
            return Err(Error::InvalidInput("ghost width must be >= 1".into()));
        }
        Ok(())
    }
}

/// Predicted time of one iteration of a stencil code running `plan` on
/// parts of relative `speeds`, the criterion [`Best3`](super::Best3) ranks by:
///
/// ```text
/// T = max_i ( volume_i / (s_i / s̄)  +  halo_i )
/// ```
///
/// with `s̄` the mean speed and `halo_i` = [`GridPlan3::halo_cells`] for the
/// stencil. The unit of time is the time a part of mean speed takes to
/// update one cell; receiving one halo cell costs one such unit (as one
/// cell edge does in the 2D model, \[KRW96\] §2). The slowest part sets the
/// pace: the others wait for it at the halo exchange. Errors: invalid
/// speeds, a speed count that differs from the plan's, a ghost width of 0.
/// `O(p)`.
pub fn predicted_time3(plan: &GridPlan3, speeds: &[f64], stencil: Stencil) -> Result<f64> {
    stencil.check()?;
    plan.check_speeds(speeds)?;
    let speeds = rescaled(speeds);
    let mean = speeds.iter().sum::<f64>() / speeds.len() as f64;
    Ok(plan
        .boxes
        .iter()
        .zip(&speeds)
        .enumerate()
        .map(|(i, (b, s))| b.volume() as f64 * (mean / s) + plan.halo_cells(i, stencil) as f64)
        .fold(0.0, f64::max))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::array3d::Box3;

    #[test]
    fn stencils_and_time() {
        assert!(Stencil::from_points(9, 1).is_err());
        assert!(Stencil::from_points(7, 0).is_err());
        assert_eq!(Stencil::from_points(27, 2).unwrap().points(), 27);
        // Two slabs of 2x4x4 in a 4x4x4 grid: each computes 32 cells and
        // receives one 4x4 plane (either stencil: the cut is a full plane).
        let plan = GridPlan3::new(
            "t",
            (4, 4, 4),
            vec![Box3::new(0, 0, 0, 2, 4, 4), Box3::new(2, 0, 0, 2, 4, 4)],
        )
        .unwrap();
        for s in [Stencil::seven(1), Stencil::twenty_seven(1)] {
            assert_eq!(predicted_time3(&plan, &[1.0, 1.0], s).unwrap(), 48.0);
        }
        // Ghost width 2 doubles the halo; a part twice as slow doubles its compute.
        let t = predicted_time3(&plan, &[1.0, 2.0], Stencil::seven(2)).unwrap();
        assert_eq!(t, 32.0 * 1.5 + 32.0);
        assert!(predicted_time3(&plan, &[1.0], Stencil::default()).is_err());
    }
}
