//! Processor allocation on hypercubes (\[VH94\] §4.4):
//! a `2^da × 2^db` mesh is embedded in the `d = da + db` cube by reflected
//! Gray codes, mesh node `(i, j)` becoming cube node `a_i b_j` (the bits of
//! the `da`-bit code word `a_i` followed by those of the `db`-bit word `b_j`),
//! so mesh neighbours are cube neighbours. The cube holds the
//! `⌊d/2⌋ + 1` shapes `2^⌈d/2⌉ × 2^⌊d/2⌋ … 2^d × 2^0` (the longer side along x);
//! [`HypercubeAllocator`] packs for each shape's ratio and keeps the one
//! whose packing's `W/H` is closest to that ratio, as \[VH94\] suggests.
//! Code generation is `O(2^d)`; the allocator costs one allocation per shape.

use serde::{Deserialize, Serialize};

use super::{Allocation, Grid, Mesh, Packer, SubmeshAllocator};
use crate::error::{Error, Result};

/// The `d`-bit reflected Gray code by \[VH94\]'s recursive construction:
/// `{0b₁ … 0b_p, 1b_p … 1b₁}` from the `(d−1)`-bit code `{b₁ … b_p}`.
/// `O(2^d)`; `d ≤ 24`.
pub fn reflected_gray_code(d: u32) -> Result<Vec<u64>> {
    if d > 24 {
        return Err(Error::InvalidInput(format!(
            "{d}-bit Gray code is too large"
        )));
    }
    let mut code = vec![0u64];
    for bit in 0..d {
        let top = 1u64 << bit;
        let reflected: Vec<u64> = code.iter().rev().map(|b| top | b).collect();
        code.extend(reflected);
    }
    Ok(code)
}

/// The cube node of mesh node `(i, j)` in a `2^da × 2^db` mesh:
/// `gray(i)` in the high `da` bits, `gray(j)` in the low `db` bits, where
/// `gray(k) = k ⊕ (k ≫ 1)` is the closed form of [`reflected_gray_code`].
pub fn mesh_node(i: u64, j: u64, db: u32) -> u64 {
    ((i ^ (i >> 1)) << db) | (j ^ (j >> 1))
}

/// The mesh shapes `(da, db)`, `da ≥ db`, of a `d`-cube.
pub fn admissible_shapes(d: u32) -> Vec<(u32, u32)> {
    (d.div_ceil(2)..=d).map(|da| (da, d - da)).collect()
}

/// A hypercube allocation: the mesh shape chosen, the mesh allocation, and for
/// every grid the cube nodes of its submesh, column by column (x outer, y inner).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HypercubeAllocation {
    /// Bits along x (`P = 2^da`).
    pub da: u32,
    /// Bits along y (`Q = 2^db`).
    pub db: u32,
    /// The allocation on the `P × Q` mesh.
    pub allocation: Allocation,
    /// Cube nodes of each grid's submesh, input order.
    pub nodes: Vec<Vec<u64>>,
}

/// Allocates subcubes-as-submeshes on a `d`-dimensional hypercube (§4.4).
#[derive(Debug, Clone, Default)]
pub struct HypercubeAllocator<P> {
    /// The mesh allocator used for each admissible shape.
    pub mesh: SubmeshAllocator<P>,
}

impl<P: Packer> HypercubeAllocator<P> {
    /// Tries every admissible shape; keeps the packing with `W/H` closest
    /// (in log scale) to the shape's ratio, ties to the lower total cost.
    pub fn allocate(&self, grids: &[Grid], d: u32) -> Result<HypercubeAllocation> {
        if d > 24 {
            return Err(Error::InvalidInput(format!("{d}-cube is too large")));
        }
        let mut best: Option<(f64, f64, u32, u32, Allocation)> = None;
        let mut last_err = None;
        for (da, db) in admissible_shapes(d) {
            let mesh = Mesh::new(1 << da, 1 << db)?;
            let allocation = match self.mesh.allocate(grids, mesh) {
                Ok(a) => a,
                Err(e) => {
                    last_err = Some(e);
                    continue;
                }
            };
            let pk = &allocation.packing;
            let dev = ((pk.width as f64 / pk.height as f64) / mesh.ratio())
                .ln()
                .abs();
            let cost = allocation.cost.total;
            if best
                .as_ref()
                .is_some_and(|(bd, bc, ..)| (*bd, *bc) <= (dev, cost))
            {
                continue;
            }
            best = Some((dev, cost, da, db, allocation));
        }
        let (da, db, allocation) = match (best, last_err) {
            (Some((_, _, da, db, a)), _) => (da, db, a),
            (None, Some(e)) => return Err(e),
            (None, None) => return Err(Error::Empty("no mesh shape".into())),
        };
        // The node lists of the winner only (up to 2^d ids in all).
        let nodes = allocation
            .submeshes
            .iter()
            .map(|r| {
                (r.col..r.col_end())
                    .flat_map(|i| {
                        (r.row..r.row_end()).map(move |j| mesh_node(i as u64, j as u64, db))
                    })
                    .collect()
            })
            .collect();
        Ok(HypercubeAllocation {
            da,
            db,
            allocation,
            nodes,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_bit_code_is_the_vh94_one() {
        assert_eq!(
            reflected_gray_code(2).unwrap(),
            vec![0b00, 0b01, 0b11, 0b10]
        );
    }

    #[test]
    fn recursive_code_equals_closed_form() {
        for d in 0..10 {
            let code = reflected_gray_code(d).unwrap();
            for (k, &c) in code.iter().enumerate() {
                let k = k as u64;
                assert_eq!(c, k ^ (k >> 1));
            }
        }
    }

    #[test]
    fn shapes_of_a_6_cube() {
        assert_eq!(admissible_shapes(6), vec![(3, 3), (4, 2), (5, 1), (6, 0)]);
        assert_eq!(admissible_shapes(5), vec![(3, 2), (4, 1), (5, 0)]);
    }
}
