//! The checksums of a save file's arrays: per array, the sum over its
//! cells of a hash of each 8-byte word and its position in the global
//! array, so that it does not depend on the plan that wrote or reads it,
//! and any change of one word changes it. Each rank adds up its cells'
//! hashes row by row while it stages them for MPI-IO
//! (`mpiio::transfer`: one pass over the cells).

use mpi::collective::SystemOperation;
use mpi::traits::*;

/// The sums over every rank (wrapping).
pub(super) fn all_sums<C: Communicator>(comm: &C, local: &[u64]) -> Vec<u64> {
    // Split in 32-bit halves: a sum of u32s in u64 cannot overflow for
    // fewer than 2^32 ranks, and wrapping is then exact.
    let halves: Vec<u64> = local
        .iter()
        .flat_map(|&s| [s & 0xffff_ffff, s >> 32])
        .collect();
    let mut total = vec![0u64; halves.len()];
    comm.all_reduce_into(&halves[..], &mut total[..], SystemOperation::sum());
    total
        .chunks_exact(2)
        .map(|h| h[0].wrapping_add(h[1].wrapping_shl(32)))
        .collect()
}

/// The sum of the hashes of the cells of `bytes` (cells of `e` bytes, the
/// first at global index `g`): each 8-byte word of a cell (the last one
/// zero-padded) is hashed with its position ([`word_hash`]).
pub(super) fn row_hash(g: u64, bytes: &[u8], e: usize) -> u64 {
    let words = e.div_ceil(8) as u64;
    let word = |w: &[u8]| {
        let mut b = [0u8; 8];
        b[..w.len()].copy_from_slice(w);
        u64::from_le_bytes(b)
    };
    let mut sum = 0u64;
    if e % 8 == 0 {
        // Words never straddle cells: one run over the row, the positions'
        // multiples stepped by additions (`word_hash`'s, unrolled).
        let mut at = (g * words).wrapping_mul(POS);
        for w in bytes.chunks_exact(8) {
            let w = u64::from_le_bytes(w.try_into().expect("8 bytes"));
            sum = sum.wrapping_add(scramble(w ^ at));
            at = at.wrapping_add(POS);
        }
    } else {
        for (k, cell) in bytes.chunks_exact(e).enumerate() {
            for (q, w) in cell.chunks(8).enumerate() {
                sum = sum.wrapping_add(word_hash((g + k as u64) * words + q as u64, word(w)));
            }
        }
    }
    sum
}

/// The hash of the 8-byte word `w` at position `pos`: for a fixed position
/// a bijection of `w` (xor, an odd multiplier, an xor-shift), so that any
/// change of one word changes the sum.
pub(super) fn word_hash(pos: u64, w: u64) -> u64 {
    scramble(w ^ pos.wrapping_mul(POS))
}

/// The multiplier of a word's position in [`word_hash`].
const POS: u64 = 0x9e37_79b9_7f4a_7c15;

/// A bijection of 64-bit words: an odd multiplier, an xor-shift.
#[inline]
fn scramble(x: u64) -> u64 {
    let h = x.wrapping_mul(0xbf58_476d_1ce4_e5b9);
    h ^ (h >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_row_hash_depends_on_positions_and_bytes_and_not_on_rows() {
        for e in [1, 3, 8, 12, 24] {
            let bytes: Vec<u8> = (0..6 * e).map(|b| (b * 37 % 251) as u8).collect();
            let whole = row_hash(5, &bytes, e);
            // The same cells cut into two rows elsewhere.
            let cut = row_hash(5, &bytes[..2 * e], e).wrapping_add(row_hash(7, &bytes[2 * e..], e));
            assert_eq!(whole, cut, "e = {e}");
            assert_ne!(whole, row_hash(6, &bytes, e), "e = {e}");
            let mut one = bytes.clone();
            one[e + 1] ^= 0x40;
            assert_ne!(whole, row_hash(5, &one, e), "e = {e}");
            // Word by word, as files of every format hold it.
            let words = e.div_ceil(8);
            let mut by_word = 0u64;
            for (k, cell) in bytes.chunks_exact(e).enumerate() {
                for (q, w) in cell.chunks(8).enumerate() {
                    let mut b = [0u8; 8];
                    b[..w.len()].copy_from_slice(w);
                    let pos = ((5 + k) * words + q) as u64;
                    by_word = by_word.wrapping_add(word_hash(pos, u64::from_le_bytes(b)));
                }
            }
            assert_eq!(whole, by_word, "e = {e}");
        }
    }
}
