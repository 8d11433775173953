//! Parallel geometric partitioning of a [`DistGraph`] ([`DistGraph::partition_rcb`],
//! [`DistGraph::partition_sfc`]) and the index-based cut by prefix sums
//! ([`DistGraph::prefix_cut`]): each rank learns the new owner of its own
//! vertices only.

use super::{DistGraph, GraphValue};
use crate::error::{Error, Result};
use crate::runtime::clock::waiting;
use crate::runtime::comm::{agree, fingerprint};
use crate::runtime::geometric::{self, Points};

impl<T: GraphValue> DistGraph<T> {
    /// The checked entry of a partitioning verb: the same call with the same
    /// targets on every rank.
    fn check_targets(&self, verb: &str, targets: &[f64]) -> Result<()> {
        let fp = agree(&*self.core.comm, 0, fingerprint(targets))?;
        let n = self.part.n_global;
        self.core.cp.check(
            &*self.core.comm,
            &format!(
                "DistGraph::{verb}({n} vertices, {} targets {fp:016x})",
                targets.len()
            ),
        )
    }

    fn points(&self) -> Result<Points<'_>> {
        let p = &self.part;
        let ok = if p.dim == 0 {
            Err(Error::invalid_input(
                "geometric partitioning needs vertex coordinates",
            ))
        } else {
            Ok(())
        };
        agree(&*self.core.comm, 0, ok)?;
        Ok(Points {
            dim: p.dim,
            coords: &p.coords,
            weights: &p.vwgt,
            ids: &p.owned,
        })
    }

    /// Parallel recursive coordinate bisection (`geometric::rcb`) of the
    /// vertices by their coordinates and weights, the parts' weights in
    /// proportion to `targets` (one per rank, e.g. the measured speeds, the
    /// same on every rank): the new owner of each owned vertex, for
    /// [`Self::migrate`]. No rank sees another's coordinates. Collective.
    pub fn partition_rcb(&self, targets: &[f64]) -> Result<Vec<usize>> {
        let _w = waiting();
        self.check_targets("partition_rcb", targets)?;
        geometric::rcb(&*self.core.comm, &self.points()?, targets)
    }

    /// Parallel space-filling-curve partitioning (`geometric::sfc`): the
    /// Hilbert curve through the vertices cut into intervals of weights in
    /// proportion to `targets`. Collective.
    pub fn partition_sfc(&self, targets: &[f64]) -> Result<Vec<usize>> {
        let _w = waiting();
        self.check_targets("partition_sfc", targets)?;
        geometric::sfc(&*self.core.comm, &self.points()?, targets)
    }

    /// The index-based remap by prefix sums (`geometric::prefix_cut`): the
    /// vertices in the order rank by rank, each rank's along the Hilbert
    /// curve, cut into intervals of weights in proportion to `targets`. After
    /// [`Self::partition_sfc`] this is the curve's order and only vertices
    /// near the moved boundaries change owner (\[KOR95\] §3). Collective.
    pub fn prefix_cut(&self, targets: &[f64]) -> Result<Vec<usize>> {
        let _w = waiting();
        self.check_targets("prefix_cut", targets)?;
        let order = self.curve_order()?;
        geometric::prefix_cut(&*self.core.comm, &self.part.vwgt, &order, targets)
    }

    /// The owned vertices along the Hilbert curve through every rank's
    /// coordinates (ties by id): local indices. Collective.
    pub(super) fn curve_order(&self) -> Result<Vec<usize>> {
        let pts = self.points()?;
        let keys = geometric::hilbert_keys(&*self.core.comm, &pts);
        let mut order: Vec<usize> = (0..keys.len()).collect();
        order.sort_unstable_by(|&a, &b| {
            keys[a]
                .total_cmp(&keys[b])
                .then(pts.ids[a].cmp(&pts.ids[b]))
        });
        Ok(order)
    }
}
