//! Index-based mapping and fast remapping for adaptive environments
//! (\[KOR95\] §3): the vertices are put once into a
//! one-dimensional order — along the Hilbert or Z curve (HCI, ZCI), or by
//! recursive coordinate or spectral bisection into equal halves (RCBI, RSBI,
//! Figure 5 (f)) — and every partition is then a cut of that order into
//! contiguous intervals whose weights follow the speeds.
//!
//! A cut costs O(p log n) (binary searches on prefix weights, [`Ordering::cut`]);
//! turning it into a part per vertex is O(n). When speeds change,
//! [`Ordering::recut`] chooses, among the cuts with the new sizes, one that keeps
//! the old order of the parts along the curve, so that only vertices near the
//! moved boundaries change owner.

use serde::{Deserialize, Serialize};

pub use super::interval::{IntervalCut, Ordering};

use super::bisect::{self, Grouping};
use super::csr::Graph;
use super::metrics::Partition;
use super::rcb::coordinate_bisect;
use super::rsb::Rsb;
use super::sfc::{curve_order, Curve};
use crate::error::Result;

/// Which one-dimensional index to build.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum IndexKind {
    /// Hilbert curve (HCI).
    Hci,
    /// Z-curve (ZCI).
    Zci,
    /// Recursive coordinate bisection index (RCBI).
    Rcbi,
    /// Recursive spectral bisection index (RSBI).
    Rsbi,
}

impl Ordering {
    /// Builds the requested index. HCI/ZCI: O(n log n); RCBI: O(n log² n);
    /// RSBI: one Fiedler vector per bisection down to `rsb_leaves` leaves (\[KOR95\]
    /// uses 1024 leaves with random order inside; we keep the Fiedler order
    /// inside leaves, which costs nothing and is no worse).
    pub fn build(g: &Graph, kind: IndexKind, rsb: &Rsb, rsb_leaves: usize) -> Result<Self> {
        bisect::check_targets(g, &[1.0])?;
        let perm = match kind {
            IndexKind::Hci => curve_order(g, Curve::Hilbert)?,
            IndexKind::Zci => curve_order(g, Curve::Z)?,
            IndexKind::Rcbi => {
                let c = g.require_coords("RCBI")?;
                bisect::order_by_bisection(g.n(), 1, &mut |s, f| Ok(coordinate_bisect(g, c, s, f)))?
            }
            IndexKind::Rsbi => {
                let leaf = g.n().div_ceil(rsb_leaves.max(1));
                bisect::order_by_bisection(g.n(), leaf, &mut |s, f| rsb.bisect(g, s, f))?
            }
        };
        Ordering::from_perm(g, perm)
    }
}

/// An index-based partitioner: builds the ordering, then cuts it (\[KOR95\] §3,
/// "RSBI", "RCBI", and HCI/ZCI of §2).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct IndexPartitioner {
    /// Which ordering.
    pub kind: IndexKind,
    /// Processor grouping when cutting.
    pub grouping: Grouping,
    /// RSB parameters for RSBI.
    pub rsb: Rsb,
    /// Number of RSBI leaves (\[KOR95\] uses 1024).
    pub rsb_leaves: usize,
}

impl Default for IndexPartitioner {
    fn default() -> Self {
        IndexPartitioner {
            kind: IndexKind::Hci,
            grouping: Grouping::Simple,
            rsb: Rsb::default(),
            rsb_leaves: 1024,
        }
    }
}

impl super::GraphPartitioner for IndexPartitioner {
    fn partition(&self, g: &Graph, targets: &[f64]) -> Result<Partition> {
        bisect::check_targets(g, targets)?;
        let ord = Ordering::build(g, self.kind, &self.rsb, self.rsb_leaves)?;
        ord.to_partition(&ord.cut(targets, self.grouping)?)
    }
}
