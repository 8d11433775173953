//! Argument checks shared by the decomposers: valid speeds and a non-empty
//! array ([`check_args`]), speeds rescaled so that sums cannot overflow
//! ([`rescaled`], [`checked_speeds`]) and a valid latency ([`check_latency`]).
//! All return an [`Error`] instead of panicking.

use crate::error::{Error, Result};

/// Largest number of cells (`rows × cols`) a decomposer accepts: `2^53`, the
/// largest integer range in which every area, perimeter sum and cost is
/// exact both as `usize` and as `f64` (areas are divided by speeds in
/// `f64`). Larger arrays are an [`Error::InvalidInput`] at once, before any
/// work; so is a product that overflows `usize`.
pub const MAX_CELLS: usize = 1 << 53;

/// Common argument checks for decomposers: valid speeds and a non-empty
/// array of at most [`MAX_CELLS`] cells. Every `ArrayDecomposer` of this
/// module calls it first (directly or through
/// [`checked_speeds`]), so the bound holds for all of them.
pub fn check_args(rows: usize, cols: usize, speeds: &[f64]) -> Result<()> {
    crate::check_speeds(speeds)?;
    if rows == 0 || cols == 0 {
        return Err(Error::Empty(format!("array of {rows}x{cols} cells")));
    }
    if rows.checked_mul(cols).is_none_or(|n| n > MAX_CELLS) {
        return Err(Error::InvalidInput(format!(
            "array of {rows}x{cols} cells: at most 2^53 = {MAX_CELLS} cells are supported"
        )));
    }
    Ok(())
}

/// Speeds divided by their maximum, so that sums cannot overflow (speeds
/// near `f64::MAX` are valid input); decompositions are scale-invariant.
/// Ratios that would underflow to 0 become `f64::MIN_POSITIVE`.
/// Call after validation. `O(p)`.
pub fn rescaled(speeds: &[f64]) -> Vec<f64> {
    let max = speeds.iter().copied().fold(0.0, f64::max);
    if max > 0.0 && max.is_finite() {
        // A ratio below the smallest positive f64 is clamped, not zeroed.
        speeds
            .iter()
            .map(|s| (s / max).max(f64::MIN_POSITIVE))
            .collect()
    } else {
        speeds.to_vec()
    }
}

/// [`check_args`] then [`rescaled`]: the common prologue of the decomposers.
pub fn checked_speeds(rows: usize, cols: usize, speeds: &[f64]) -> Result<Vec<f64>> {
    check_args(rows, cols, speeds)?;
    Ok(rescaled(speeds))
}

/// Rejects a negative or non-finite latency with [`Error::InvalidInput`].
pub fn check_latency(latency: f64) -> Result<()> {
    if latency.is_finite() && latency >= 0.0 {
        Ok(())
    } else {
        Err(Error::InvalidInput(format!(
            "latency must be finite and >= 0, got {latency}"
        )))
    }
}
