//! Recursive coordinate bisection (\[KOR95\] §2 item 1,
//! after Williams \[17\], Figure 5 (a)–(e)): cut the vertex set by a hyperplane
//! orthogonal to the longest side of its bounding box, placed so that the two
//! sides' weights are in the ratio of the two processor groups' speeds, and
//! recurse.

use serde::{Deserialize, Serialize};

use super::bisect::{self, Grouping};
use super::csr::{Coords, Graph};
use super::metrics::Partition;
use super::GraphPartitioner;
use crate::error::Result;

/// The RCB partitioner. Each level sorts its vertices along one axis:
/// O(n log n) per level, O(n log n log p) in all (\[KOR95\] finds a median
/// instead; a weighted split point needs the order, and sorting keeps the
/// result deterministic).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Rcb {
    /// Processor grouping at each bisection.
    pub grouping: Grouping,
}

impl GraphPartitioner for Rcb {
    fn partition(&self, g: &Graph, targets: &[f64]) -> Result<Partition> {
        let c = g.require_coords("RCB")?;
        let verts = (0..g.n()).collect();
        bisect::partition_by_bisection(g, targets, self.grouping, verts, &mut |s, f| {
            Ok(coordinate_bisect(g, c, s, f))
        })
    }
}

/// Sorts `verts` along the longest side of their bounding box (ties by id)
/// and returns the split position for fraction `frac` of their weight.
pub(crate) fn coordinate_bisect(g: &Graph, c: &Coords, verts: &mut [usize], frac: f64) -> usize {
    let axis = longest_axis(c, verts);
    verts.sort_by(|&a, &b| c.of(a)[axis].total_cmp(&c.of(b)[axis]).then(a.cmp(&b)));
    bisect::weighted_split(g, verts, 0, verts.len(), frac)
}

/// Axis of the largest extent of the points `verts` (the first on ties).
fn longest_axis(c: &Coords, verts: &[usize]) -> usize {
    (0..c.dim)
        .map(|d| {
            let (lo, hi) = verts
                .iter()
                .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &v| {
                    (lo.min(c.of(v)[d]), hi.max(c.of(v)[d]))
                });
            (d, hi - lo)
        })
        .fold((0, f64::NEG_INFINITY), |b, x| if x.1 > b.1 { x } else { b })
        .0
}
