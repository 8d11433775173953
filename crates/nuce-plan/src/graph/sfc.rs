//! Index-based partitioning (\[KOR95\] §2, item 2): map each
//! vertex's coordinates to a position on a space-filling curve, sort, and cut the
//! sorted list into contiguous pieces proportional to the speeds.
//!
//! * ZCI — bit interleaving (the Z-curve of Figure 1): `(13, 4)` → `178`.
//! * HCI — the Hilbert curve of Figure 2, computed with the table-driven
//!   algorithm of Figure 3 in 2D; in 3D with Skilling's transpose algorithm
//!   \[Ski04\] ("Programming the Hilbert curve", AIP Conf. Proc. 707, 2004), since
//!   \[KOR95\] gives only the 2D tables.
//!
//! Coordinates are scaled uniformly (same factor on every axis, so that the
//! curve's cells stay square) onto a `2^bits` grid: 16 bits per axis in 2D/3D,
//! 32 in 1D. Vertices falling into the same cell keep their id order.

use serde::{Deserialize, Serialize};

use super::bisect::{self, Grouping};
use super::csr::{Coords, Graph};
use super::interval::Ordering;
use super::metrics::Partition;
use super::GraphPartitioner;
use crate::error::Result;

/// Bits per axis used to quantise coordinates for 2D and 3D curves.
pub const BITS: u32 = 16;

/// The space-filling curve used to index vertices.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum Curve {
    /// Z-curve (Morton order, bit interleaving): ZCI.
    Z,
    /// Hilbert curve: HCI.
    #[default]
    Hilbert,
}

/// Z-curve index: interleaves the bits of the coordinates, most significant
/// first, the first axis first (\[KOR95\] §2: `(1101, 0100)` → `10110010`).
/// O(dim × bits).
pub fn zorder_index(p: &[u32], bits: u32) -> u64 {
    let mut h = 0u64;
    for b in (0..bits).rev() {
        for &x in p {
            h = (h << 1) | u64::from((x >> b) & 1);
        }
    }
    h
}

/// Rotation_Table of Figure 3.
const ROTATION_TABLE: [usize; 4] = [3, 0, 0, 1];
/// Sense_Table of Figure 3.
const SENSE_TABLE: [i32; 4] = [-1, 1, 1, -1];
/// Quad_Table\[rotation\]\[xbit\]\[ybit\] of Figure 3. The extracted text of the
/// table is garbled after its second entry; the four 2×2 blocks are
/// reconstructed from its legible start and end (`{{0,1},{3,2}}`,
/// `{{1,2},{0,3}}`, …, `{{2,3},{1,0}}`, `{{3,0},{2,1}}`): each is the previous
/// one with quadrant labels shifted by one, i.e. the curve rotated by 90°.
const QUAD_TABLE: [[[u64; 2]; 2]; 4] = [
    [[0, 1], [3, 2]],
    [[1, 2], [0, 3]],
    [[2, 3], [1, 0]],
    [[3, 0], [2, 1]],
];

/// The HCI procedure of \[KOR95\] Figure 3: Hilbert index of `(x, y)` on a
/// `2^bits × 2^bits` grid (side = `2^bits`). O(bits).
pub fn hilbert_index_2d(mut x: u32, mut y: u32, bits: u32) -> u64 {
    let mut sense = 1i32;
    let mut rotation = 0usize;
    let mut num = 0u64;
    for level in (0..bits).rev() {
        let k = 1u32 << level;
        let xbit = (x / k) as usize;
        let ybit = (y / k) as usize;
        x -= k * xbit as u32;
        y -= k * ybit as u32;
        let quad = QUAD_TABLE[rotation][xbit][ybit];
        let kk = u64::from(k) * u64::from(k);
        num += if sense == -1 {
            kk * (3 - quad)
        } else {
            kk * quad
        };
        rotation = (rotation + ROTATION_TABLE[quad as usize]) % 4;
        sense *= SENSE_TABLE[quad as usize];
    }
    num
}

/// Hilbert index of a point with any number of axes (used for 3D) by Skilling's
/// transpose algorithm: undo excess work, Gray-encode, then interleave the
/// transposed bits. O(dim × bits). `dim × bits` must be at most 64.
pub fn hilbert_index_nd(p: &[u32], bits: u32) -> u64 {
    let n = p.len();
    if n == 0 || bits == 0 {
        return 0;
    }
    let mut x: Vec<u32> = p.to_vec();
    let m = 1u32 << (bits - 1);
    let mut q = m;
    while q > 1 {
        let pm = q - 1;
        for i in 0..n {
            if x[i] & q != 0 {
                x[0] ^= pm;
            } else {
                let t = (x[0] ^ x[i]) & pm;
                x[0] ^= t;
                x[i] ^= t;
            }
        }
        q >>= 1;
    }
    for i in 1..n {
        x[i] ^= x[i - 1];
    }
    let mut t = 0;
    let mut q = m;
    while q > 1 {
        if x[n - 1] & q != 0 {
            t ^= q - 1;
        }
        q >>= 1;
    }
    for xi in &mut x {
        *xi ^= t;
    }
    zorder_index(&x, bits)
}

/// Quantises coordinates onto a `2^bits` grid per axis with one common scale.
pub fn quantize(c: &Coords, bits: u32) -> Vec<Vec<u32>> {
    let dim = c.dim;
    let n = c.len();
    let mut lo = vec![f64::INFINITY; dim];
    let mut hi = vec![f64::NEG_INFINITY; dim];
    for v in 0..n {
        for (d, &x) in c.of(v).iter().enumerate() {
            lo[d] = lo[d].min(x);
            hi[d] = hi[d].max(x);
        }
    }
    let extent = (0..dim).map(|d| hi[d] - lo[d]).fold(0.0, f64::max);
    let cells = (1u64 << bits) as f64;
    let top = ((1u64 << bits) - 1) as f64;
    (0..n)
        .map(|v| {
            c.of(v)
                .iter()
                .enumerate()
                .map(|(d, &x)| {
                    if extent > 0.0 {
                        ((x - lo[d]) / extent * cells).floor().clamp(0.0, top) as u32
                    } else {
                        0
                    }
                })
                .collect()
        })
        .collect()
}

/// Curve index of every vertex. O(n × dim × bits).
pub fn curve_indices(c: &Coords, curve: Curve) -> Vec<u64> {
    let bits = if c.dim == 1 { 32 } else { BITS };
    quantize(c, bits)
        .iter()
        .map(|p| match (curve, p.len()) {
            (Curve::Z, _) => zorder_index(p, bits),
            (Curve::Hilbert, 2) => hilbert_index_2d(p[0], p[1], bits),
            (Curve::Hilbert, _) => hilbert_index_nd(p, bits),
        })
        .collect()
}

/// Vertices sorted by their curve index (ties by id). O(n log n).
pub fn curve_order(g: &Graph, curve: Curve) -> Result<Vec<usize>> {
    let c = g.require_coords("a space-filling curve")?;
    let idx = curve_indices(c, curve);
    let mut order: Vec<usize> = (0..g.n()).collect();
    order.sort_by_key(|&v| (idx[v], v));
    Ok(order)
}

/// Partitions by cutting the curve order (\[KOR95\] §2: "sorted to rearrange the
/// vertices, and then partitioned into appropriate sizes of contiguous
/// sublists"), the pieces placed along the curve by recursive bisection with
/// `grouping`.
fn cut_curve(g: &Graph, curve: Curve, targets: &[f64], grouping: Grouping) -> Result<Partition> {
    bisect::check_targets(g, targets)?;
    let ord = Ordering::from_perm(g, curve_order(g, curve)?)?;
    ord.to_partition(&ord.cut(targets, grouping)?)
}

/// ZCI: Z-curve index partitioning (\[KOR95\] §2 item 2, Figure 1). O(n log n).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Zci {
    /// Processor grouping at each cut.
    pub grouping: Grouping,
}

/// HCI: Hilbert-curve index partitioning (\[KOR95\] §2 item 2, Figures 2–3).
/// O(n log n).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Hci {
    /// Processor grouping at each cut.
    pub grouping: Grouping,
}

impl GraphPartitioner for Zci {
    fn partition(&self, g: &Graph, targets: &[f64]) -> Result<Partition> {
        cut_curve(g, Curve::Z, targets, self.grouping)
    }
}

impl GraphPartitioner for Hci {
    fn partition(&self, g: &Graph, targets: &[f64]) -> Result<Partition> {
        cut_curve(g, Curve::Hilbert, targets, self.grouping)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kor95_zcurve_example() {
        // [KOR95] §2: (13, 4) = (1101, 0100) → 10110010 = 178.
        assert_eq!(zorder_index(&[13, 4], 4), 178);
    }

    /// The classic "xy2d" rotate-and-flip algorithm, an independent Hilbert
    /// implementation written from its usual textbook form.
    fn xy2d(n: u32, mut x: u32, mut y: u32) -> u64 {
        let mut d = 0u64;
        let mut s = n / 2;
        while s > 0 {
            let rx = u32::from(x & s > 0);
            let ry = u32::from(y & s > 0);
            d += u64::from(s) * u64::from(s) * u64::from((3 * rx) ^ ry);
            if ry == 0 {
                if rx == 1 {
                    x = n - 1 - x;
                    y = n - 1 - y;
                }
                std::mem::swap(&mut x, &mut y);
            }
            s /= 2;
        }
        d
    }

    #[test]
    fn figure3_equals_xy2d() {
        for bits in 1..=6 {
            let n = 1u32 << bits;
            for x in 0..n {
                for y in 0..n {
                    assert_eq!(
                        hilbert_index_2d(x, y, bits),
                        xy2d(n, x, y),
                        "({x},{y}) {bits}"
                    );
                }
            }
        }
        // A few far points on the full 16-bit grid.
        for (x, y) in [(65535, 0), (12345, 54321), (40000, 40001)] {
            assert_eq!(hilbert_index_2d(x, y, 16), xy2d(1 << 16, x, y));
        }
    }

    /// A Hilbert curve visits every cell once and moves by one unit step.
    fn hilbert_walk(dim: usize, bits: u32, f: impl Fn(&[u32]) -> u64) -> Result<(), String> {
        let side = 1usize << bits;
        let cells = side.pow(dim as u32);
        let mut pos = vec![None; cells];
        for c in 0..cells {
            let p: Vec<u32> = (0..dim)
                .map(|d| ((c / side.pow(d as u32)) % side) as u32)
                .collect();
            let h = f(&p) as usize;
            if h >= cells || pos[h].is_some() {
                return Err(format!("not a bijection at {p:?}"));
            }
            pos[h] = Some(p);
        }
        for w in pos.windows(2) {
            let (a, b) = (w[0].as_ref().unwrap(), w[1].as_ref().unwrap());
            let step: u32 = a.iter().zip(b).map(|(x, y)| x.abs_diff(*y)).sum();
            if step != 1 {
                return Err(format!("jump from {a:?} to {b:?}"));
            }
        }
        Ok(())
    }

    #[test]
    fn hilbert_walks_are_continuous() {
        hilbert_walk(2, 5, |p| hilbert_index_2d(p[0], p[1], 5)).unwrap();
        hilbert_walk(2, 4, |p| hilbert_index_nd(p, 4)).unwrap();
        hilbert_walk(3, 4, |p| hilbert_index_nd(p, 4)).unwrap();
    }

    #[test]
    fn zcurve_jumps() {
        // The Z-curve is a bijection but not continuous: it must fail the walk test.
        assert!(hilbert_walk(2, 3, |p| zorder_index(p, 3)).is_err());
    }
}
