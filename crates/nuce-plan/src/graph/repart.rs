//! Migration-aware repartitioning: a new partition for new target weights
//! that trades edge cut against the volume of data that changes owner, after
//! ParMETIS's adaptive repartitioning (\[SKK00\]) and its `itr` ratio.
//!
//! **Objective** (ParMETIS's convention): `itr · cut + moved`, where `cut` is
//! the weighted edge cut of the new partition and `moved` the summed
//! migration size of the vertices whose part differs from the current one
//! (`sizes`, 1 per vertex by default). `itr` is the ratio of the time one
//! cut edge costs over the remaining iterations to the time one unit of size
//! costs to move: a large `itr` (ParMETIS recommends 1000) cares for the cut
//! and moves freely; a small one moves as little as the new balance allows.
//! Every candidate must meet the balance tolerance first.
//!
//! Two candidates, the cheaper kept (as ParMETIS does):
//!
//! * **Diffusion** ([`Repartitioner::diffuse`]): the graph is coarsened by
//!   heavy-edge matching *inside the current parts*, so every coarse vertex
//!   has one home part and a migration size; on the coarsest graph the
//!   current partition is rebalanced along a diffusion solution of the part
//!   graph (the flows `x_a − x_b` on its edges where `L x = w − t`, `L` its
//!   Laplacian, `w` and `t` the parts' weights and targets; the first-order
//!   scheme of \[HB99\]), moving the vertices of least cut-plus-migration cost
//!   first; on the way back up every level is refined by the k-way refiner
//!   of [`crate::graph::multilevel`] whose gains include the migration cost
//!   (leaving home costs `size / itr` edge weights, returning earns it).
//! * **Scratch-remap** ([`scratch_remap`]): [`Multilevel`] partitions from
//!   scratch and the parts are relabelled to keep as much weight at home as
//!   possible (a maximum-weight assignment on the overlap matrix, \[Kuh55\]):
//!   either among parts of equal targets only, so that every part keeps its
//!   target, followed by the migration-aware refinement; or freely, followed
//!   by the diffusion above to restore the targets. The cheaper is kept.
//!
//! Cost: diffusion O((n + m) log(n / k)) on meshes plus O(k · iterations)
//! for the flows; scratch-remap one [`Multilevel`] run plus O(n + k³).

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

use super::bisect::check_targets;
use super::csr::Graph;
use super::ids::vertex_id;
use super::metrics::{target_weights, Partition};
use super::multilevel::refine_kway::{KwayRefiner, Migration};
use super::multilevel::{coarsen, Multilevel, View};
use super::GraphPartitioner;
use crate::error::{Error, Result};
use crate::tasks::matching::{Assignment, AssignmentSolver};

/// Which candidate a repartitioning chose.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RepartMethod {
    /// Rebalancing the current partition by diffusion and refinement.
    Diffusion,
    /// Partitioning from scratch, relabelled and refined.
    Scratch,
}

/// A repartitioning and its measures.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Repartition {
    /// The new partition.
    pub partition: Partition,
    /// The candidate it came from.
    pub method: RepartMethod,
    /// Weighted edge cut.
    pub edge_cut: f64,
    /// Summed migration size of the vertices that change part.
    pub moved: f64,
    /// Number of vertices that change part.
    pub moved_vertices: usize,
    /// `itr · edge_cut + moved`.
    pub cost: f64,
    /// Imbalance against the new targets (`max_i w_i / t_i − 1`).
    pub imbalance: f64,
}

/// Migration-aware repartitioner (see the module documentation).
/// Deterministic: the same input gives the same partition.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Repartitioner {
    /// Ratio of the cost of one unit of edge cut to that of moving one unit
    /// of size (ParMETIS's `itr`); > 0.
    pub itr: f64,
    /// Also partition from scratch ([`scratch_remap`]) and keep the cheaper.
    pub scratch: bool,
    /// Tolerance, seed and coarsening and refinement parameters (also those
    /// of the scratch candidate).
    pub multilevel: Multilevel,
}

impl Default for Repartitioner {
    fn default() -> Self {
        Repartitioner {
            itr: 1000.0,
            scratch: true,
            multilevel: Multilevel::default(),
        }
    }
}

/// Checks the inputs of a repartitioning; returns the migration sizes (1 per
/// vertex when `sizes` is `None`).
fn check(
    g: &Graph,
    current: &Partition,
    targets: &[f64],
    sizes: Option<&[f64]>,
) -> Result<Vec<f64>> {
    check_targets(g, targets)?;
    current.check_for(g, targets.len())?;
    match sizes {
        None => Ok(vec![1.0; g.n()]),
        Some(s) if s.len() != g.n() => Err(Error::ShapeMismatch(format!(
            "{} migration sizes for {} vertices",
            s.len(),
            g.n()
        ))),
        Some(s) => match s.iter().position(|x| !(x.is_finite() && *x >= 0.0)) {
            Some(v) => Err(Error::InvalidInput(format!(
                "migration size of vertex {} is {}, not finite and >= 0",
                vertex_id(v),
                s[v]
            ))),
            None => Ok(s.to_vec()),
        },
    }
}

/// Summed `sizes` (1 each when `None`) of the vertices whose part differs
/// between `current` and `new`. O(n).
pub fn moved_volume(current: &Partition, new: &Partition, sizes: Option<&[f64]>) -> Result<f64> {
    let moved = current.moved_to(new)?;
    Ok(moved.iter().map(|&v| sizes.map_or(1.0, |s| s[v])).sum())
}

impl Repartitioner {
    fn check_itr(&self) -> Result<()> {
        if self.itr.is_finite() && self.itr > 0.0 {
            Ok(())
        } else {
            Err(Error::InvalidInput(format!(
                "itr must be finite and > 0, not {}",
                self.itr
            )))
        }
    }

    fn refiner(&self) -> KwayRefiner {
        let m = &self.multilevel;
        KwayRefiner {
            tolerance: m.tolerance,
            passes: m.refine_passes,
            fm_passes: m.fm_passes,
            fm_bad_moves: m.fm_bad_moves,
        }
    }

    /// The repartitioning of `g` from `current` for `targets` (speeds, any
    /// positive scale), vertices of migration `sizes` (1 each when `None`):
    /// the diffusion candidate and, when [`Repartitioner::scratch`], the
    /// scratch-remap one; those within the tolerance first, then the least
    /// `itr · cut + moved`.
    pub fn repartition(
        &self,
        g: &Graph,
        current: &Partition,
        targets: &[f64],
        sizes: Option<&[f64]>,
    ) -> Result<Repartition> {
        let d = self.diffuse(g, current, targets, sizes)?;
        let d = self.measure(g, current, targets, sizes, d, RepartMethod::Diffusion)?;
        if !self.scratch {
            return Ok(d);
        }
        let s = scratch_remap(g, current, targets, sizes, self)?;
        let s = self.measure(g, current, targets, sizes, s, RepartMethod::Scratch)?;
        Ok(self.cheaper(d, s))
    }

    /// The better of two repartitionings: within the tolerance first, then
    /// the least cost (the least imbalance when neither is within it); `a`
    /// on ties.
    fn cheaper(&self, a: Repartition, b: Repartition) -> Repartition {
        let tol = self.multilevel.tolerance + 1e-9;
        let key = |r: &Repartition| {
            let over = r.imbalance > tol;
            (over, if over { r.imbalance } else { r.cost })
        };
        if key(&b) < key(&a) {
            b
        } else {
            a
        }
    }

    /// The measures of `p` as a repartitioning of `current`.
    fn measure(
        &self,
        g: &Graph,
        current: &Partition,
        targets: &[f64],
        sizes: Option<&[f64]>,
        p: Partition,
        method: RepartMethod,
    ) -> Result<Repartition> {
        let m = super::metrics(g, &p, targets)?;
        let moved = moved_volume(current, &p, sizes)?;
        Ok(Repartition {
            moved_vertices: current.moved_to(&p)?.len(),
            method,
            edge_cut: m.edge_cut,
            moved,
            cost: self.itr * m.edge_cut + moved,
            imbalance: m.imbalance,
            partition: p,
        })
    }

    /// The diffusion candidate alone (see the module documentation).
    pub fn diffuse(
        &self,
        g: &Graph,
        current: &Partition,
        targets: &[f64],
        sizes: Option<&[f64]>,
    ) -> Result<Partition> {
        self.check_itr()?;
        let sizes = check(g, current, targets, sizes)?;
        self.diffuse_from(g, &current.parts, &current.parts, targets, &sizes)
    }

    /// Diffusion from the partition `start` with migration costs relative
    /// to `home` (`sizes` checked): coarsening matches vertices with the same
    /// start and home parts.
    fn diffuse_from(
        &self,
        g: &Graph,
        start: &[usize],
        home: &[usize],
        targets: &[f64],
        sizes: &[f64],
    ) -> Result<Partition> {
        let k = targets.len();
        let tw = target_weights(targets, g.total_weight())?;
        let ml = &self.multilevel;
        let mut rng = ChaCha8Rng::seed_from_u64(ml.seed);
        let coarse_to = ml.coarse_to(g.n(), k);
        let max_vw = 1.5 * g.total_weight() / coarse_to as f64;
        // levels[i] = (graph i + 1, map from graph i's vertices to it);
        // starts[i], homes[i] and costs[i] belong to graph i.
        let mut levels: Vec<(Graph, Vec<usize>)> = Vec::new();
        let mut starts = vec![start.to_vec()];
        let mut homes = vec![home.to_vec()];
        let mut costs = vec![sizes.iter().map(|s| s / self.itr).collect::<Vec<_>>()];
        loop {
            let i = levels.len();
            let fine = levels.last().map_or(g, |l| &l.0);
            if fine.n() <= coarse_to {
                break;
            }
            let label: Vec<usize> = (0..fine.n())
                .map(|x| starts[i][x] * k + homes[i][x])
                .collect();
            let (c, cmap) = coarsen::coarsen_within(fine, max_vw, Some(&label), true, &mut rng);
            if c.n() == fine.n() {
                break;
            }
            let (mut cstart, mut chome, mut ccost) =
                (vec![0; c.n()], vec![0; c.n()], vec![0.0; c.n()]);
            for (x, &cx) in cmap.iter().enumerate() {
                cstart[cx] = starts[i][x];
                chome[cx] = homes[i][x];
                ccost[cx] += costs[i][x];
            }
            let stalled = c.n() as f64 > 0.95 * fine.n() as f64;
            levels.push((c, cmap));
            starts.push(cstart);
            homes.push(chome);
            costs.push(ccost);
            if stalled {
                break;
            }
        }
        let refiner = self.refiner();
        let top = levels.len();
        let coarsest = levels.last().map_or(g, |l| &l.0);
        let mut part = starts.pop().unwrap_or_default();
        let flows = diffusion_flows(coarsest, &part, &tw);
        let mig = |i: usize| Migration {
            home: &homes[i],
            cost: &costs[i],
        };
        refiner.refine_migrating(
            coarsest,
            &tw,
            &mut part,
            top == 0,
            Some(mig(top)),
            &flows,
            &mut rng,
        );
        for i in (0..top).rev() {
            let fine = if i == 0 { g } else { &levels[i - 1].0 };
            part = levels[i].1.iter().map(|&c| part[c]).collect();
            refiner.refine_migrating(fine, &tw, &mut part, i == 0, Some(mig(i)), &[], &mut rng);
        }
        Partition::new(k, part)
    }
}

/// The scratch-remap candidate: `rp.multilevel` partitions `g` for
/// `targets` from scratch; the parts are relabelled to keep as much at home
/// as possible in two ways, and the cheaper result (within the tolerance
/// first, then `itr · cut + moved`) is returned:
///
/// * among parts of equal targets only ([`relabel`]), then refined with
///   migration costs (`size / itr` per vertex away from its current part);
/// * freely (any label for any part, [`relabel_free`]), which leaves parts
///   off their targets when the targets differ; diffusion from there, with
///   the same migration costs, restores the balance.
pub fn scratch_remap(
    g: &Graph,
    current: &Partition,
    targets: &[f64],
    sizes: Option<&[f64]>,
    rp: &Repartitioner,
) -> Result<Partition> {
    rp.check_itr()?;
    let sz = check(g, current, targets, sizes)?;
    let fresh = rp.multilevel.partition(g, targets)?;
    let k = targets.len();
    let mut part = relabel(current, &fresh, targets, Some(&sz))?.parts;
    let tw = target_weights(targets, g.total_weight())?;
    let cost: Vec<f64> = sz.iter().map(|s| s / rp.itr).collect();
    let mig = Migration {
        home: &current.parts,
        cost: &cost,
    };
    let mut rng = ChaCha8Rng::seed_from_u64(rp.multilevel.seed);
    rp.refiner()
        .refine_migrating(g, &tw, &mut part, true, Some(mig), &[], &mut rng);
    let same = Partition::new(k, part)?;
    let free = relabel_free(current, &fresh, Some(&sz))?;
    if free == same {
        return Ok(same);
    }
    let free = rp.diffuse_from(g, &free.parts, &current.parts, targets, &sz)?;
    let a = rp.measure(g, current, targets, Some(&sz), same, RepartMethod::Scratch)?;
    let b = rp.measure(g, current, targets, Some(&sz), free, RepartMethod::Scratch)?;
    Ok(rp.cheaper(a, b).partition)
}

/// Relabels the parts of `new` so that as much `sizes` (1 each when `None`)
/// as possible stays in its part of `current`, whatever the targets: a
/// maximum-weight assignment on the overlap matrix (\[Kuh55\]). O(n + k³).
pub fn relabel_free(
    current: &Partition,
    new: &Partition,
    sizes: Option<&[f64]>,
) -> Result<Partition> {
    let k = current.nparts;
    relabel(current, new, &vec![1.0; k], sizes)
}

/// Relabels the parts of `new` so that as much `sizes` (1 each when `None`)
/// as possible stays in its part of `current`: a maximum-weight assignment
/// of new labels to old ones on their overlap matrix (\[Kuh55\]), where part
/// `j` may take label `c` only when their targets are equal (within 1e-9
/// relative), so that every part keeps its target. O(n + k³).
pub fn relabel(
    current: &Partition,
    new: &Partition,
    targets: &[f64],
    sizes: Option<&[f64]>,
) -> Result<Partition> {
    let k = targets.len();
    if current.nparts != k || new.nparts != k || current.len() != new.len() {
        return Err(Error::ShapeMismatch(format!(
            "relabel: partitions into {} and {} parts of {} and {} vertices for {k} targets",
            current.nparts,
            new.nparts,
            current.len(),
            new.len()
        )));
    }
    crate::check_speeds(targets)?;
    let mut overlap = vec![0.0; k * k];
    for v in 0..new.len() {
        overlap[new.parts[v] * k + current.parts[v]] += sizes.map_or(1.0, |s| s[v]);
    }
    let total: f64 = overlap.iter().sum::<f64>().max(f64::MIN_POSITIVE);
    let same = |a: f64, b: f64| (a - b).abs() <= 1e-9 * a.abs().max(b.abs());
    // Overlaps in units of 1e-9 of the total; forbidden pairs far below any
    // feasible assignment (the identity always is one).
    let forbid = -(1i64 << 52);
    let weight = |j: usize, c: usize| {
        if same(targets[j], targets[c]) {
            (overlap[j * k + c] / total * 1e9).round() as i64
        } else {
            forbid
        }
    };
    let (_, label) = Assignment::new(k, weight).solve(AssignmentSolver::Hungarian)?;
    Partition::new(k, new.parts.iter().map(|&j| label[j]).collect())
}

/// The diffusion flows `(from, to, weight)` between adjacent parts of `part`
/// on `g` that bring every part to its target weight `tw`: `x_a − x_b` for
/// the edge `(a, b)` of the part graph (unit weights), where `L x = w − t`
/// (Laplacian `L`, solved by conjugate gradients; within each connected
/// component of the part graph the excesses are shifted to sum to zero).
fn diffusion_flows(g: &Graph, part: &[usize], tw: &[f64]) -> Vec<(usize, usize, f64)> {
    let k = tw.len();
    let v = View::of(g);
    let mut w = vec![0.0; k];
    let mut adj = vec![Vec::new(); k];
    let mut mark = vec![usize::MAX; k];
    for x in 0..v.n() {
        w[part[x]] += v.vw[x];
    }
    // Part adjacency by one sweep over the vertices grouped by part.
    let mut by_part = vec![Vec::new(); k];
    for (x, &p) in part.iter().enumerate() {
        by_part[p].push(x);
    }
    for a in 0..k {
        for &x in &by_part[a] {
            for e in v.arcs(x) {
                let b = part[v.adj[e]];
                if b != a && mark[b] != a {
                    mark[b] = a;
                    adj[a].push(b);
                }
            }
        }
    }
    let mut e: Vec<f64> = (0..k).map(|a| w[a] - tw[a]).collect();
    // Components of the part graph: shift each one's excess to sum to zero.
    let mut comp = vec![usize::MAX; k];
    for s in 0..k {
        if comp[s] != usize::MAX {
            continue;
        }
        let mut stack = vec![s];
        let mut members = Vec::new();
        comp[s] = s;
        while let Some(a) = stack.pop() {
            members.push(a);
            for &b in &adj[a] {
                if comp[b] == usize::MAX {
                    comp[b] = s;
                    stack.push(b);
                }
            }
        }
        let mean = members.iter().map(|&a| e[a]).sum::<f64>() / members.len() as f64;
        for &a in &members {
            e[a] -= mean;
        }
    }
    let x = solve_laplacian(&adj, &e);
    let mut flows = Vec::new();
    for a in 0..k {
        for &b in &adj[a] {
            let f = x[a] - x[b];
            if f > 0.0 {
                flows.push((a, b, f));
            }
        }
    }
    flows
}

/// Conjugate gradients for `L x = e` on the unit-weight Laplacian of the
/// graph `adj` (`e` summing to zero on every component). O(k + Σ deg) per
/// iteration, at most `10 k + 100` iterations.
fn solve_laplacian(adj: &[Vec<usize>], e: &[f64]) -> Vec<f64> {
    let k = adj.len();
    let apply = |p: &[f64], out: &mut [f64]| {
        for a in 0..k {
            out[a] = adj[a].len() as f64 * p[a] - adj[a].iter().map(|&b| p[b]).sum::<f64>();
        }
    };
    let dot = |a: &[f64], b: &[f64]| a.iter().zip(b).map(|(x, y)| x * y).sum::<f64>();
    let mut x = vec![0.0; k];
    let mut r = e.to_vec();
    let mut p = r.clone();
    let mut q = vec![0.0; k];
    let mut rr = dot(&r, &r);
    let stop = rr * 1e-20;
    for _ in 0..10 * k + 100 {
        if rr <= stop || rr == 0.0 {
            break;
        }
        apply(&p, &mut q);
        let pq = dot(&p, &q);
        if pq <= 0.0 {
            break;
        }
        let alpha = rr / pq;
        for a in 0..k {
            x[a] += alpha * p[a];
            r[a] -= alpha * q[a];
        }
        let rr2 = dot(&r, &r);
        for a in 0..k {
            p[a] = r[a] + rr2 / rr * p[a];
        }
        rr = rr2;
    }
    x
}

#[cfg(test)]
mod tests;
