//! Whether boxes tile a grid exactly, by their corners: `O(p log p)`
//! however the boxes are shaped.
//!
//! The indicator function of a half-open box `[lo, hi)` has, as its mixed
//! finite difference along every axis, `+1` or `−1` at each of its `2^D`
//! corners: `(−1)^h` at the corner taking `hi` along `h` of the axes. The
//! difference operator is invertible on functions of finite support (the
//! function is the sum of its differences over the lower orthant), so the
//! boxes cover every cell of the grid exactly once — they tile it — if and
//! only if the signed corners of all the boxes add up to those of the grid.
//! As multisets: the boxes' positive corners with the grid's negative ones
//! equal the boxes' negative corners with the grid's positive ones. Two
//! radix sorts of `2^(D−1)·(p + 1)` keys (each corner packed into a `u64`).

use crate::boxpairs::{near_pairs, Span};
use crate::error::{Error, Result};

/// For boxes inside the grid whose volumes sum to its cells (the caller
/// checks both): `Ok` when they tile it, else an [`Error::InvalidPlan`]
/// naming two parts that overlap. The corners decide ([`tiles`]); only a
/// plan that fails (or whose corners do not fit a key) pays for the pair
/// search that names the parts.
pub(crate) fn check_disjoint<const D: usize>(boxes: &[Span<D>], extent: [usize; D]) -> Result<()> {
    let tiled = tiles(boxes, extent);
    if tiled == Some(true) {
        return Ok(());
    }
    near_pairs(boxes, extent, 0, |j, i| {
        Err(Error::InvalidPlan(format!("parts {j} and {i} overlap")))
    })?;
    match tiled {
        Some(false) => Err(Error::InvalidPlan("the parts do not tile the grid".into())),
        _ => Ok(()),
    }
}

/// `Some(true)` when the non-empty boxes tile `[0, extent)` exactly (every
/// cell in exactly one box), `Some(false)` when they do not, `None` when a
/// corner does not fit a `u64` key (the grid's coordinates need more than
/// 64 bits together) or a box reaches past the grid.
pub(crate) fn tiles<const D: usize>(boxes: &[Span<D>], extent: [usize; D]) -> Option<bool> {
    // Coordinates run over 0..=extent[a]: bits[a] bits each.
    let bits: [u32; D] = std::array::from_fn(|a| usize::BITS - extent[a].leading_zeros());
    if bits.iter().sum::<u32>() > 64 {
        return None;
    }
    let key = |corner: [usize; D]| (0..D).fold(0u64, |acc, a| (acc << bits[a]) | corner[a] as u64);
    let half = 1usize << (D - 1);
    let live = boxes
        .iter()
        .filter(|b| (0..D).all(|a| b.1[a] > b.0[a]))
        .count();
    let mut plus = Vec::with_capacity(half * (live + 1));
    let mut minus = Vec::with_capacity(half * (live + 1));
    let mut add = |b: &Span<D>, flip: bool| {
        for m in 0..1usize << D {
            let corner: [usize; D] =
                std::array::from_fn(|a| if m >> a & 1 == 1 { b.1[a] } else { b.0[a] });
            if (m.count_ones() % 2 == 1) == flip {
                plus.push(key(corner));
            } else {
                minus.push(key(corner));
            }
        }
    };
    for b in boxes {
        if (0..D).any(|a| b.1[a] > extent[a] && b.1[a] > b.0[a]) {
            return None;
        }
        if (0..D).all(|a| b.1[a] > b.0[a]) {
            add(b, false);
        }
    }
    add(&([0; D], extent), true);
    let width = bits.iter().sum::<u32>();
    radix_sort(&mut plus, width);
    radix_sort(&mut minus, width);
    Some(plus == minus)
}

/// Sorts keys of `width` significant bits: least significant digit first,
/// in passes of at most 11 bits (three for a 1000³ grid's 30-bit keys), so
/// that the counts take at most 16 KiB whatever the grid (16-bit digits
/// took 512 KiB, the largest transient allocation of a balance point on
/// every rank, which validates the plan).
fn radix_sort(keys: &mut Vec<u64>, width: u32) {
    let passes = width.div_ceil(11).max(1);
    let bits = width.div_ceil(passes).max(1);
    let mut other = vec![0u64; keys.len()];
    let mut shift = 0;
    while shift < width {
        let mut count = vec![0usize; (1 << bits) + 1];
        let digit = |k: u64| ((k >> shift) & ((1 << bits) - 1)) as usize;
        for &k in keys.iter() {
            count[digit(k) + 1] += 1;
        }
        for d in 0..1 << bits {
            count[d + 1] += count[d];
        }
        for &k in keys.iter() {
            let d = digit(k);
            other[count[d]] = k;
            count[d] += 1;
        }
        std::mem::swap(keys, &mut other);
        shift += bits;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Tilings of a 6×5×4 grid and their defects: exact answers.
    #[test]
    fn tilings_and_defects() {
        let ext = [6, 5, 4];
        let slab = |x: usize, w: usize| ([x, 0, 0], [x + w, 5, 4]);
        let ok = vec![slab(0, 2), slab(2, 3), slab(5, 1), ([0, 0, 0], [0, 0, 0])];
        assert_eq!(tiles(&ok, ext), Some(true));
        // One slab too wide: overlap and (with another narrowed) the same volume.
        let overlap = vec![slab(0, 3), slab(2, 2), slab(5, 1)];
        assert_eq!(tiles(&overlap, ext), Some(false));
        // A cell twice and another never: same total volume.
        let mut shifted = ok.clone();
        shifted[2] = ([4, 0, 0], [5, 5, 4]);
        assert_eq!(tiles(&shifted, ext), Some(false));
        // A box split into two along y tiles too.
        let split = vec![
            slab(0, 2),
            ([2, 0, 0], [5, 2, 4]),
            ([2, 2, 0], [5, 5, 4]),
            slab(5, 1),
        ];
        assert_eq!(tiles(&split, ext), Some(true));
        // The same box twice (corners cancel pairwise, not with the grid).
        let twice = vec![slab(0, 6), slab(0, 6)];
        assert_eq!(tiles(&twice, ext), Some(false));
        // Keys past 64 bits, boxes past the grid: no answer.
        assert_eq!(tiles::<2>(&[([0, 0], [1, 1])], [usize::MAX, 4]), None);
        assert_eq!(tiles::<2>(&[([0, 0], [3, 1])], [2, 1]), None);
    }

    #[test]
    fn radix_sort_sorts() {
        let mut x = 3u64;
        let mut keys: Vec<u64> = (0..5000)
            .map(|_| {
                x = x.wrapping_mul(6364136223846793005).wrapping_add(1);
                x >> 24
            })
            .collect();
        let mut want = keys.clone();
        want.sort_unstable();
        radix_sort(&mut keys, 40);
        assert_eq!(keys, want);
    }
}
