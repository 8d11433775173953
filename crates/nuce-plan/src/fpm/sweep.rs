//! Size sweeps (issue 19): the block sizes a rank's speed is measured at
//! before the first plan, checked and shaped, and the [`SpeedFunction`]
//! of the measured speeds.
//!
//! A sweep runs the built-in 5-point stencil on square-ish blocks of
//! growing size (the runtime's `Balancer::measure_sizes`, the CLI's
//! `nuce measure --sweep`); a block of `w × h` interior cells sweeps two
//! arrays of `(w + 2)(h + 2)` `f64`s ([`block_bytes`]), so its speed falls
//! as the arrays leave each cache level. The speeds become the points
//! `(cells, cells / speed)` of a [`SpeedFunction`] ([`sweep_points`]): one
//! iteration of the kernel is one sweep of the block.

use super::SpeedFunction;
use crate::error::{Error, Result};

/// Smallest block of a sweep, in cells: a 4 × 4 block.
pub const MIN_SWEEP_CELLS: usize = 16;

/// Largest block of a sweep, in cells: 2²⁶ cells, two arrays of 512 MiB
/// each ([`block_bytes`]), far beyond any cache; a bound, so that a
/// mistyped size is a clear error, not an allocation of terabytes.
pub const MAX_SWEEP_CELLS: usize = 1 << 26;

/// Most sizes in one sweep.
pub const MAX_SWEEP_SIZES: usize = 64;

/// Checks a list of sweep sizes: 1 to [`MAX_SWEEP_SIZES`] sizes, each
/// between [`MIN_SWEEP_CELLS`] and [`MAX_SWEEP_CELLS`] cells; anything
/// else is an [`Error::InvalidInput`] naming the bound. O(n).
pub fn check_sweep_sizes(sizes: &[usize]) -> Result<()> {
    if sizes.is_empty() || sizes.len() > MAX_SWEEP_SIZES {
        return Err(Error::InvalidInput(format!(
            "a size sweep takes 1 to {MAX_SWEEP_SIZES} block sizes, not {}",
            sizes.len()
        )));
    }
    if let Some((i, &s)) = sizes
        .iter()
        .enumerate()
        .find(|(_, s)| !(MIN_SWEEP_CELLS..=MAX_SWEEP_CELLS).contains(*s))
    {
        return Err(Error::InvalidInput(format!(
            "sweep size {i} is {s} cells: a block size must be between {MIN_SWEEP_CELLS} and {MAX_SWEEP_CELLS} cells"
        )));
    }
    Ok(())
}

/// The interior shape `(width, height)` of the block swept for `cells`
/// cells: width `⌈√cells⌉`, height `⌈cells / width⌉`, so the block holds
/// at least `cells` and fewer than `cells + width` cells. `cells ≥ 1`.
pub fn block_shape(cells: usize) -> (usize, usize) {
    let cells = cells.max(1);
    let mut w = (cells as f64).sqrt().ceil() as usize;
    // Exact integer square root ceiling, whatever the float rounding.
    while w > 1 && (w - 1) * (w - 1) >= cells {
        w -= 1;
    }
    while w * w < cells {
        w += 1;
    }
    (w, cells.div_ceil(w))
}

/// Bytes the sweep of a `width × height` block touches: two arrays of
/// `(width + 2)(height + 2)` `f64`s (interior and fixed border).
pub fn block_bytes(width: usize, height: usize) -> u64 {
    2 * 8 * (width as u64 + 2) * (height as u64 + 2)
}

/// The default sizes of a sweep: powers of two from 256 cells (a few KiB,
/// inside any L1) up to the first power of two whose block
/// ([`block_bytes`]) holds four times `largest_cache` bytes (the L3, or
/// the largest cache known; 32 MiB when unknown), at most
/// [`MAX_SWEEP_CELLS`].
pub fn default_sweep_sizes(largest_cache: Option<u64>) -> Vec<usize> {
    let target = 4 * largest_cache.filter(|&b| b > 0).unwrap_or(32 << 20);
    let mut sizes = Vec::new();
    let mut cells = 256usize;
    loop {
        sizes.push(cells);
        let (w, h) = block_shape(cells);
        if block_bytes(w, h) >= target || cells >= MAX_SWEEP_CELLS {
            return sizes;
        }
        cells *= 2;
    }
}

/// The speed function of a sweep's measured `(cells, speed)` points
/// (speeds in cells per second): the points `(cells, cells / speed)`, with
/// relative `noise`. Errors as [`SpeedFunction::new`] (no point, a
/// non-finite or non-positive size or speed, a bad noise).
pub fn sweep_points(points: &[(f64, f64)], noise: f64) -> Result<SpeedFunction> {
    let xt: Vec<(f64, f64)> = points.iter().map(|&(x, s)| (x, x / s)).collect();
    SpeedFunction::new(&xt, noise)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_are_bounded() {
        assert!(check_sweep_sizes(&[16, 1024, MAX_SWEEP_CELLS]).is_ok());
        for bad in [
            vec![],
            vec![15],
            vec![0],
            vec![1024, MAX_SWEEP_CELLS + 1],
            vec![usize::MAX],
            vec![64; MAX_SWEEP_SIZES + 1],
        ] {
            let e = check_sweep_sizes(&bad).unwrap_err().to_string();
            assert!(e.contains("size"), "{bad:?}: {e}");
        }
        let e = check_sweep_sizes(&[64, 3]).unwrap_err().to_string();
        assert!(e.contains("sweep size 1 is 3 cells"), "{e}");
    }

    #[test]
    fn blocks_are_square_ish_and_hold_the_cells() {
        for cells in [1, 2, 16, 17, 255, 256, 1000, 4096, 99_999, MAX_SWEEP_CELLS] {
            let (w, h) = block_shape(cells);
            assert!(w * h >= cells && w * h < cells + w, "{cells}: {w}x{h}");
            assert!(h <= w, "{cells}: {w}x{h}");
            assert!((w - 1) * (w - 1) < cells, "{cells}: {w}");
        }
        assert_eq!(block_shape(256), (16, 16));
        assert_eq!(block_bytes(16, 16), 2 * 8 * 18 * 18);
    }

    #[test]
    fn default_sizes_pass_the_largest_cache() {
        let l3 = 32u64 << 20;
        let s = default_sweep_sizes(Some(l3));
        assert_eq!(s[0], 256);
        assert!(s.windows(2).all(|w| w[1] == 2 * w[0]));
        let last = *s.last().unwrap();
        let (w, h) = block_shape(last);
        assert!(block_bytes(w, h) >= 4 * l3);
        let (w, h) = block_shape(last / 2);
        assert!(block_bytes(w, h) < 4 * l3);
        assert!(check_sweep_sizes(&s).is_ok());
        assert_eq!(default_sweep_sizes(None), s);
        // A cache larger than any sweep stops at the bound.
        let huge = default_sweep_sizes(Some(1 << 40));
        assert_eq!(*huge.last().unwrap(), MAX_SWEEP_CELLS);
        assert!(check_sweep_sizes(&huge).is_ok());
    }

    #[test]
    fn sweep_points_give_the_measured_speeds() {
        let f = sweep_points(&[(256.0, 4e9), (1e6, 1e9)], 0.05).unwrap();
        assert_eq!(f.points().len(), 2);
        assert!((f.speed(256.0) - 4e9).abs() < 1.0);
        assert!((f.speed(1e6) - 1e9).abs() < 1.0);
        assert!(!f.is_flat(0.1));
        assert!(sweep_points(&[], 0.05).is_err());
        assert!(sweep_points(&[(256.0, f64::NAN)], 0.05).is_err());
        assert!(sweep_points(&[(256.0, -1.0)], 0.05).is_err());
    }
}
