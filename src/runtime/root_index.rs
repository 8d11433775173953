//! The root's index of a graph balanced by a
//! [`Balancer`](super::balancer::Balancer) on the root-based path: the
//! ordering that makes remaps cheap (\[KOR95\] §3), the graph, and the
//! remap proposal that weighs a re-cut of the ordering against a
//! migration-aware repartitioning (\[SKK00\]).

use crate::error::Result;
use crate::plan::fpm::PlanningModel;
use crate::plan::graph::repart::Repartitioner;
use crate::plan::graph::{Graph, Grouping, IndexKind, IntervalCut, Ordering, Partition, Rsb};
use crate::plan::policy::{RemapDecision, RemapPolicy};

/// The root's index of a graph balanced by a
/// [`Balancer`](super::balancer::Balancer): the one-dimensional ordering, the
/// current cut of it, the graph itself, and what the remap decision needs of
/// every vertex.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub(crate) struct RootIndex {
    /// The graph (the root-based path holds it on the root anyway).
    pub(crate) graph: Graph,
    pub(crate) ordering: Ordering,
    pub(crate) cut: IntervalCut,
    pub(crate) grouping: Grouping,
    /// Vertex weights by global id.
    pub(crate) weights: Vec<f64>,
    /// Bytes a vertex takes when it moves (record size), by global id.
    pub(crate) bytes: Vec<f64>,
    /// The current part of every vertex (the root holds the whole graph anyway).
    pub(crate) parts: Vec<usize>,
}

impl RootIndex {
    /// Builds the index of `g` for `speeds`: a Hilbert-curve ordering (HCI)
    /// when the graph has coordinates, else recursive spectral bisection
    /// (RSBI), cut by [`Grouping::Binpacking`] (\[KOR95\] §3).
    pub(crate) fn build(g: &Graph, speeds: &[f64], value_bytes: usize) -> Result<RootIndex> {
        let kind = if g.coords().is_some() {
            IndexKind::Hci
        } else {
            IndexKind::Rsbi
        };
        let ordering = Ordering::build(g, kind, &Rsb::default(), 1024)?;
        let grouping = Grouping::Binpacking;
        let cut = ordering.cut(speeds, grouping)?;
        let weights = (0..g.n()).map(|v| g.vertex_weight(v)).collect();
        let per_edge = if g.has_edge_weights() { 16.0 } else { 8.0 };
        let bytes = (0..g.n())
            .map(|v| 32.0 + value_bytes as f64 + per_edge * g.neighbors(v).len() as f64)
            .collect();
        let parts = ordering.to_partition(&cut)?.parts;
        Ok(RootIndex {
            graph: g.clone(),
            ordering,
            cut,
            grouping,
            weights,
            bytes,
            parts,
        })
    }

    /// Work per part under `partition` (sum of vertex weights).
    pub(crate) fn loads(&self, partition: &[usize], nparts: usize) -> Vec<f64> {
        let mut l = vec![0.0; nparts];
        for (v, &q) in partition.iter().enumerate() {
            l[q] += self.weights[v];
        }
        l
    }

    /// What each rank sends plus receives (bytes, messages) to move from
    /// `old` to `new`. O(n + p²) worst case in messages, O(n) usually.
    pub(crate) fn volume(&self, old: &[usize], new: &[usize], nparts: usize) -> Vec<(f64, usize)> {
        let mut vol = vec![(0.0, 0usize); nparts];
        let mut pairs = std::collections::HashSet::new();
        for (v, (&a, &b)) in old.iter().zip(new).enumerate() {
            if a != b {
                vol[a].0 += self.bytes[v];
                vol[b].0 += self.bytes[v];
                if pairs.insert((a, b)) {
                    vol[a].1 += 1;
                    vol[b].1 += 1;
                }
            }
        }
        vol
    }

    /// The remap proposal for the balance point's `model` (pure; runs on
    /// the root), planned for its speeds ([`PlanningModel::speeds`]: the
    /// snapped estimates, or the functional shares): the re-cut of the
    /// ordering (\[KOR95\] §3), weighed by [`PlanningModel::decide`]; and, when the current partition is
    /// imbalanced beyond the hysteresis, the migration-aware repartitioning
    /// of the graph (\[SKK00\], [`Repartitioner`]), the two weighed against
    /// staying by [`RemapPolicy::choose_graph`] (compute, one ghost exchange
    /// per iteration over `ahead` iterations, and the migration). The
    /// repartitioning is taken when that choice prefers it and it pays off
    /// for every speed within the noise; otherwise the re-cut's decision
    /// stands. Returns the decision, the new cut of the ordering (`None` for
    /// a repartitioning) and the partition.
    pub(crate) fn propose(
        &self,
        model: &PlanningModel,
        policy: &RemapPolicy,
        ahead: usize,
        bandwidth: Option<f64>,
    ) -> Result<(RemapDecision, Option<IntervalCut>, Partition)> {
        let speeds = &model.speeds[..];
        let p = speeds.len();
        let cut = self.ordering.recut(&self.cut, speeds, self.grouping)?;
        let recut = self.ordering.to_partition(&cut)?;
        let noisy = |candidate: &[usize]| {
            model.decide(
                policy,
                &self.loads(&self.parts, p),
                &self.loads(candidate, p),
                &self.volume(&self.parts, candidate, p),
                ahead,
                bandwidth,
            )
        };
        let d = noisy(&recut.parts)?.decision;
        if d.imbalance_current <= policy.hysteresis {
            return Ok((d, Some(cut), recut));
        }
        let current = Partition::new(p, self.parts.clone())?;
        let rep = Repartitioner::default().repartition(
            &self.graph,
            &current,
            speeds,
            Some(&self.bytes),
        )?;
        let choice = policy.choose_graph(
            &self.graph,
            &current,
            &[recut.clone(), rep.partition.clone()],
            speeds,
            &self.bytes,
            ahead,
            bandwidth,
        )?;
        tracing::info!(
            chosen = ?choice.chosen,
            recut_total = choice.candidates[0].total,
            repartition_total = choice.candidates[1].total,
            current_total = choice.current.total,
            "graph remap candidates"
        );
        // The repartitioning too must pay off whatever the speeds within the noise.
        if choice.chosen != Some(1) || !noisy(&rep.partition.parts)?.decision.remap {
            return Ok((d, Some(cut), recut));
        }
        let (cur, new) = (&choice.current, &choice.candidates[1]);
        let decision = RemapDecision {
            remap: true,
            t_current: cur.t_compute + cur.t_halo,
            t_candidate: new.t_compute + new.t_halo,
            t_migration: new.t_migration,
            net_gain: cur.total - new.total,
            imbalance_candidate: rep.imbalance,
            ..d
        };
        Ok((decision, None, rep.partition))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::graph::grid_graph;

    /// A 40 × 30 grid with coordinates, indexed for 4 equal speeds.
    fn index() -> RootIndex {
        let (rows, cols) = (40, 30);
        let xy = (0..rows * cols)
            .flat_map(|v| [(v / cols) as f64, (v % cols) as f64])
            .collect();
        let g = grid_graph(rows, cols)
            .with_coords(2, xy)
            .expect("coordinates");
        RootIndex::build(&g, &[1.0; 4], 8).expect("index")
    }

    /// Predicted totals (compute + halo over `ahead` iterations + migration)
    /// of the partitions `a` and `b`, from the index's current partition.
    fn totals(
        ix: &RootIndex,
        a: &Partition,
        b: &Partition,
        speeds: &[f64],
        ahead: usize,
    ) -> (f64, f64) {
        let current = Partition::new(speeds.len(), ix.parts.clone()).expect("current");
        let c = RemapPolicy::default()
            .choose_graph(
                &ix.graph,
                &current,
                &[a.clone(), b.clone()],
                speeds,
                &ix.bytes,
                ahead,
                Some(1e8),
            )
            .expect("choice");
        (c.candidates[0].total, c.candidates[1].total)
    }

    /// The constant model of speeds known exactly (no noise).
    fn exact(speeds: &[f64]) -> PlanningModel {
        let est: Vec<_> = speeds
            .iter()
            .map(|&mean| crate::plan::fpm::SpeedEstimate { mean, noise: 0.0 })
            .collect();
        PlanningModel::new(&est, None, 1, None, false).expect("model")
    }

    #[test]
    fn a_balanced_partition_stays() {
        let ix = index();
        let (d, cut, _) = ix
            .propose(&exact(&[1.0; 4]), &RemapPolicy::default(), 100, Some(1e8))
            .unwrap();
        assert!(!d.remap, "{d:?}");
        assert!(cut.is_some());
    }

    #[test]
    fn the_proposal_is_never_worse_than_the_recut_and_is_balanced() {
        let ix = index();
        for (speeds, ahead) in [
            (vec![1.0, 1.0, 1.0, 3.0], 1000),
            (vec![1.0, 1.0, 1.0, 1.3], 20),
            (vec![2.0, 1.0, 1.0, 1.0], 5),
            (vec![1.0, 4.0, 2.0, 1.0], 200),
        ] {
            // Work units per second: 3–10 ms of compute per iteration, so
            // that the migration (at 100 MB/s) weighs in.
            let speeds: Vec<f64> = speeds.iter().map(|s| s * 1e5).collect();
            let policy = RemapPolicy::default();
            let (d, cut, proposed) = ix
                .propose(&exact(&speeds), &policy, ahead, Some(1e8))
                .unwrap();
            let recut = ix
                .ordering
                .to_partition(&ix.ordering.recut(&ix.cut, &speeds, ix.grouping).unwrap())
                .unwrap();
            let (t_proposed, t_recut) = totals(&ix, &proposed, &recut, &speeds, ahead);
            assert!(
                t_proposed <= t_recut * (1.0 + 1e-12),
                "{speeds:?}: {t_proposed} > {t_recut}"
            );
            // A repartitioning is reported as such, and only when it was chosen.
            assert_eq!(cut.is_none(), proposed.parts != recut.parts, "{speeds:?}");
            if d.remap {
                let total: f64 = speeds.iter().sum();
                let loads = ix.loads(&proposed.parts, 4);
                let n = ix.parts.len() as f64;
                for (l, s) in loads.iter().zip(&speeds) {
                    assert!(
                        *l <= 1.03 * n * s / total + 1.0,
                        "{speeds:?}: loads {loads:?}"
                    );
                }
            }
        }
    }
}
