//! The checksums of a save file's arrays: per array, the sum over its
//! cells of a hash of each 8-byte word and its position in the global
//! array, so that it does not depend on the plan that wrote or reads it,
//! and any change of one word changes it.

use mpi::collective::SystemOperation;
use mpi::traits::*;

use super::mpiio;
use crate::runtime::layout::{Layout, RawField};

/// This rank's sums of its cells' hashes, per array.
pub(super) fn local_sums(layout: &Layout, arrays: &[RawField]) -> Vec<u64> {
    let (_, n1, n2) = layout.plan().shape;
    let b = layout.local_box();
    arrays
        .iter()
        .map(|f| {
            let e = f.elem_size;
            let mut sum = 0u64;
            let row_len = b.nz * e;
            mpiio::for_rows(layout, f, &[b], |at, to, len| {
                // The row's first cell: `to / row_len` rows into the box.
                let r = to / row_len.max(1);
                let g = ((b.x + r / b.ny) * n1 + (b.y + r % b.ny)) * n2 + b.z;
                // SAFETY: the row's cells lie inside the checked buffer.
                let bytes = unsafe { std::slice::from_raw_parts(f.data.cast::<u8>().add(at), len) };
                sum = sum.wrapping_add(row_hash(g as u64, bytes, e));
            });
            sum
        })
        .collect()
}

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
fn row_hash(g: u64, bytes: &[u8], e: usize) -> u64 {
    let words = e.div_ceil(8) as u64;
    let word = |w: &[u8]| {
        let mut b = [0u8; 8];
        b[..w.len()].copy_from_slice(w);
        u64::from_le_bytes(b)
    };
    let mut sum = 0u64;
    if e % 8 == 0 {
        // Words never straddle cells: one run over the row.
        for (q, w) in bytes.chunks_exact(8).enumerate() {
            sum = sum.wrapping_add(word_hash(g * words + q as u64, word(w)));
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
    let h = (w ^ pos.wrapping_mul(0x9e37_79b9_7f4a_7c15)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
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
        }
    }
}
