//! # nuce-plan — the planning layer of nuce
//!
//! Pure, deterministic, sequential functions: speeds and a description of the
//! work go in, a plan comes out. No MPI, no hwloc, no I/O besides the graph
//! readers: this crate builds on a laptop and is what the `nuce` planner
//! command line runs. The MPI runtime (`nuce`) re-exports it as `nuce::plan`.
//!
//! | work | module |
//! |---|---|
//! | 2D arrays into rectangles | [`array2d`] |
//! | 3D grids into boxes (slabs, pencils, column DP, bisection, tensor) | [`array3d`] |
//! | 1D chunks, LU slices, panels | [`dist1d`] |
//! | weighted sequences (space-filling curves, p4est) into contiguous counts | [`curve1d`] |
//! | speeds that depend on the work's size (functional models) | [`fpm`] |
//! | unstructured graphs | [`graph`] |
//! | master–worker tasks | [`tasks`] |
//! | divisible work (LP) | [`divisible`] |
//! | AMR grids onto processor meshes | [`packing`] |
//! | whether a remap pays off | [`policy`] |
//! | ranks that leave: plans that keep what stays | [`depart`] |
//!
//! Speeds are *relative throughputs* (work units per second); cycle times are
//! their inverses. [`check_speeds`] and [`speeds_from_cycle_times`] validate
//! them: zero, negative, NaN or infinite values are an [`Error`], never a panic.
//!
//! Papers are cited by key and section (`[KRW96] §6.2`); the keys are listed
//! in `docs/references.md`, and `docs/architecture.md` describes the two layers
//! and the conventions (both in the repository).

#![warn(missing_docs)]
#![forbid(unsafe_code)]

pub mod error;
pub use error::{Error, Result};

pub mod array2d;
pub mod array3d;
mod boxpairs;
pub mod curve1d;
pub mod depart;
pub mod dist1d;
pub mod divisible;
pub mod fpm;
pub mod graph;
pub mod packing;
pub mod payoff;
pub mod policy;
#[cfg(test)]
mod scale_tests;
pub mod tasks;
mod tiling;

/// Checks that `speeds` is non-empty and every value is finite and `> 0`.
pub fn check_speeds(speeds: &[f64]) -> Result<()> {
    if speeds.is_empty() {
        return Err(Error::Empty("no speeds given".into()));
    }
    for (index, &value) in speeds.iter().enumerate() {
        if !(value.is_finite() && value > 0.0) {
            return Err(Error::InvalidSpeed { index, value });
        }
    }
    Ok(())
}

/// Converts cycle times (seconds per work unit) into speeds, validating them.
pub fn speeds_from_cycle_times(cycle_times: &[f64]) -> Result<Vec<f64>> {
    check_speeds(cycle_times)?;
    Ok(cycle_times.iter().map(|t| 1.0 / t).collect())
}

/// Speeds normalised to sum to 1 (after validation). When the sum of
/// valid speeds near `f64::MAX` overflows, they are divided by their
/// maximum first.
pub fn normalized(speeds: &[f64]) -> Result<Vec<f64>> {
    check_speeds(speeds)?;
    let total: f64 = speeds.iter().sum();
    if total.is_finite() {
        return Ok(speeds.iter().map(|s| s / total).collect());
    }
    let max = speeds.iter().copied().fold(0.0, f64::max);
    let total: f64 = speeds.iter().map(|s| s / max).sum();
    Ok(speeds.iter().map(|s| s / max / total).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rejects_bad_speeds() {
        assert!(check_speeds(&[]).is_err());
        for bad in [0.0, -1.0, f64::NAN, f64::INFINITY] {
            assert!(matches!(
                check_speeds(&[1.0, bad]),
                Err(Error::InvalidSpeed { index: 1, .. })
            ));
        }
        assert!(check_speeds(&[1.0, 2.0]).is_ok());
    }

    #[test]
    fn huge_speeds_normalise() {
        // The sum of 1e308 + 1e308 overflowed to inf: every share was 0.
        assert_eq!(normalized(&[1e308, 1e308]).unwrap(), vec![0.5, 0.5]);
    }

    #[test]
    fn cycle_times_invert() {
        assert_eq!(
            speeds_from_cycle_times(&[2.0, 4.0]).unwrap(),
            vec![0.5, 0.25]
        );
    }
}
