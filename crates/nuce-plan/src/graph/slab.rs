//! A slab of a structured 3D grid graph, generated without the rest of the
//! grid: the vertices `lo..hi` (in the order `x + nx·(y + ny·z)`) of the
//! 7-point `nx × ny × nz` grid, their adjacency as global ids and jittered
//! coordinates. Each rank of a distributed run generates its own slab, so no
//! rank ever builds the whole graph. O(hi − lo) time and memory.

use crate::error::{Error, Result};

/// The vertices `lo..hi` of an `nx × ny × nz` 7-point grid.
#[derive(Debug, Clone, PartialEq)]
pub struct GridSlab {
    /// Global ids `lo..hi`.
    pub ids: Vec<usize>,
    /// CSR offsets into `adjncy` (`ids.len() + 1` entries).
    pub xadj: Vec<usize>,
    /// Neighbours (global ids), in increasing order per vertex.
    pub adjncy: Vec<usize>,
    /// Three coordinates per vertex: the grid point moved by at most
    /// `jitter` along each axis (a deterministic hash of the id).
    pub coords: Vec<f64>,
}

/// A deterministic number in `[-1, 1)` from `v` and `salt` (SplitMix64).
fn hash_unit(v: u64, salt: u64) -> f64 {
    let mut z = v.wrapping_add(salt.wrapping_mul(0x9e37_79b9_7f4a_7c15));
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^= z >> 31;
    (z >> 11) as f64 / (1u64 << 52) as f64 - 1.0
}

/// The block `[lo, hi)` of `n` ids that rank `r` of `p` generates (sizes
/// differ by at most one).
pub fn block_of(n: usize, r: usize, p: usize) -> (usize, usize) {
    let at = |k: usize| (k as u128 * n as u128 / p.max(1) as u128) as usize;
    (at(r), at(r + 1))
}

/// Generates vertices `lo..hi` of the `nx × ny × nz` grid (see the module).
pub fn grid_slab(
    (nx, ny, nz): (usize, usize, usize),
    lo: usize,
    hi: usize,
    jitter: f64,
) -> Result<GridSlab> {
    let n = nx
        .checked_mul(ny)
        .and_then(|a| a.checked_mul(nz))
        .ok_or_else(|| Error::InvalidInput("grid too large".into()))?;
    if lo > hi || hi > n {
        return Err(Error::InvalidInput(format!(
            "slab {lo}..{hi} outside a grid of {n} vertices"
        )));
    }
    if !jitter.is_finite() || !(0.0..0.5).contains(&jitter) {
        return Err(Error::InvalidInput(format!(
            "jitter {jitter} must be in [0, 0.5)"
        )));
    }
    let m = hi - lo;
    let mut s = GridSlab {
        ids: (lo..hi).collect(),
        xadj: Vec::with_capacity(m + 1),
        adjncy: Vec::with_capacity(6 * m),
        coords: Vec::with_capacity(3 * m),
    };
    s.xadj.push(0);
    let (sx, sxy) = (nx, nx * ny);
    for v in lo..hi {
        let (x, y, z) = (v % nx, (v / nx) % ny, v / sxy);
        if z > 0 {
            s.adjncy.push(v - sxy);
        }
        if y > 0 {
            s.adjncy.push(v - sx);
        }
        if x > 0 {
            s.adjncy.push(v - 1);
        }
        if x + 1 < nx {
            s.adjncy.push(v + 1);
        }
        if y + 1 < ny {
            s.adjncy.push(v + sx);
        }
        if z + 1 < nz {
            s.adjncy.push(v + sxy);
        }
        s.xadj.push(s.adjncy.len());
        for (axis, c) in [x, y, z].into_iter().enumerate() {
            s.coords
                .push(c as f64 + jitter * hash_unit(v as u64, axis as u64 + 1));
        }
    }
    Ok(s)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::Graph;

    #[test]
    fn slabs_make_the_grid() {
        let dims = (4, 3, 5);
        let n = 60;
        let mut xadj = vec![0];
        let mut adj = Vec::new();
        let mut coords = Vec::new();
        for r in 0..3 {
            let (lo, hi) = block_of(n, r, 3);
            let s = grid_slab(dims, lo, hi, 0.25).unwrap();
            assert_eq!(s.ids, (lo..hi).collect::<Vec<_>>());
            for w in s.xadj.windows(2) {
                adj.extend_from_slice(&s.adjncy[w[0]..w[1]]);
                xadj.push(adj.len());
            }
            coords.extend(s.coords);
        }
        // Symmetric, no loops, 7-point: the CSR validator accepts it.
        let g = Graph::from_csr(xadj, adj, None, None).unwrap();
        assert_eq!(g.num_edges(), 3 * 3 * 5 + 4 * 2 * 5 + 4 * 3 * 4);
        assert!(coords
            .chunks(3)
            .enumerate()
            .all(|(v, c)| (c[0] - (v % 4) as f64).abs() <= 0.25
                && (c[2] - (v / 12) as f64).abs() <= 0.25));
        assert!(grid_slab(dims, 10, 61, 0.1).is_err());
        assert!(grid_slab(dims, 0, 1, 0.5).is_err());
        assert_eq!(block_of(10, 2, 3), (6, 10));
    }
}
