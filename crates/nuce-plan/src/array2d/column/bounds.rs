//! Lower bounds on Acost from \[BBLRR01\] §3.2.3, Lemma 1: every part's
//! half-perimeter is at least twice the square root of its area.

use super::rescaled;
use crate::array2d::check_args;
use crate::error::Result;

/// Lower bound on Acost for any rectangle decomposition of `rows × cols`
/// with areas proportional to `speeds` (\[BBLRR01\] §3.2.3, Lemma 1, scaled):
/// part `i` of area `A_i = s_i·m·n` has half-perimeter at least `2√A_i`,
/// and — a valid strengthening — at least `min_{h ∈ [A_i/n, m]} h + A_i/h`
/// since it must fit in the array. `Acost ≥ Σ_i that − (m + n)`. `O(p)`.
pub fn acost_lower_bound(rows: usize, cols: usize, speeds: &[f64]) -> Result<f64> {
    check_args(rows, cols, speeds)?;
    let speeds = &rescaled(speeds);
    let (m, n) = (rows as f64, cols as f64);
    let total: f64 = speeds.iter().sum();
    let hp: f64 = speeds
        .iter()
        .map(|s| {
            let a = s / total * m * n;
            // h + a/h is convex in h, minimised at √a; clamp into [a/n, m].
            let h = a.sqrt().clamp(a / n, m);
            h + a / h
        })
        .sum();
    Ok((hp - (m + n)).max(0.0))
}

/// The plain Lemma 1 bound on the unit square, `2·Σ√s_i` for areas
/// normalised to sum 1 (\[BBLRR01\] §3.2.3).
pub fn lemma1_bound(speeds: &[f64]) -> Result<f64> {
    crate::check_speeds(speeds)?;
    let speeds = &rescaled(speeds);
    let total: f64 = speeds.iter().sum();
    Ok(2.0 * speeds.iter().map(|s| (s / total).sqrt()).sum::<f64>())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lower_bound_is_tight_for_squares() {
        // Four equal squares tile 8×8 exactly: Acost 16 = 4·(4+4) − 16.
        assert_eq!(acost_lower_bound(8, 8, &[1.0; 4]).unwrap(), 16.0);
        assert_eq!(acost_lower_bound(8, 8, &[1.0]).unwrap(), 0.0);
        // A thin array forces thin parts: 2 parts of 1×4 in a 1×8 array.
        assert_eq!(acost_lower_bound(1, 8, &[1.0, 1.0]).unwrap(), 1.0);
    }
}
