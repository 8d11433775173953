//! Initial partition of the coarsest graph by recursive bisection that
//! honours arbitrary targets (\[KK98\] grows bisections greedily, "GGGP";
//! the targets are those of \[KOR95\]): the parts are split into two halves by
//! count, the vertex set in the ratio of the two halves' summed targets.
//! Each bisection grows a region from `tries` random seeds, always adding the
//! frontier vertex whose move lowers the cut most, until the region holds its
//! share of the weight; two-way FM \[FM82\] ([`KwayRefiner`] with two parts) then improves it
//! within the balance tolerance, and the least cut within balance is kept.
//!
//! Cost per bisection: O(tries · (m log m + FM passes · m log m)) on the
//! subgraph; ⌈log₂ k⌉ levels of bisections, each level covering the coarsest
//! graph once.

use std::collections::BinaryHeap;

use rand::seq::SliceRandom;
use rand::Rng;

use super::refine_kway::KwayRefiner;
use super::{Best, Gain, View};
use crate::error::Result;
use crate::graph::csr::Graph;
use crate::graph::metrics::target_weights;

/// Above this many vertices a bisection is itself multilevel.
const MULTILEVEL_BISECTION: usize = 400;

/// Part of every vertex of `g` for the `targets`, by recursive bisection.
/// Each bisection is held to a tolerance of `(1 + tolerance)^(1 / levels) − 1`
/// so that the levels compound to about `tolerance`.
pub fn recursive_bisection(
    g: &Graph,
    targets: &[f64],
    tolerance: f64,
    tries: usize,
    rng: &mut impl Rng,
) -> Result<Vec<usize>> {
    let k = targets.len();
    let levels = usize::BITS - (k.max(2) - 1).leading_zeros();
    let tol = (1.0 + tolerance.max(0.0)).powf(1.0 / f64::from(levels)) - 1.0;
    let mut part = vec![0; g.n()];
    let ids: Vec<usize> = (0..k).collect();
    let verts: Vec<usize> = (0..g.n()).collect();
    split(g, &verts, &ids, targets, tol, tries, rng, &mut part)?;
    Ok(part)
}

/// Gives `verts` to the parts `ids`, bisecting recursively.
#[allow(clippy::too_many_arguments)]
fn split(
    g: &Graph,
    verts: &[usize],
    ids: &[usize],
    targets: &[f64],
    tol: f64,
    tries: usize,
    rng: &mut impl Rng,
    part: &mut [usize],
) -> Result<()> {
    if ids.len() == 1 || verts.is_empty() {
        for &v in verts {
            part[v] = ids[0];
        }
        return Ok(());
    }
    let (l, r) = ids.split_at(ids.len() / 2);
    let wl: f64 = l.iter().map(|&i| targets[i]).sum();
    let wr: f64 = r.iter().map(|&i| targets[i]).sum();
    let sub = g.induced(verts);
    let side = bisect(&sub, wl / (wl + wr), tol, tries, rng)?;
    let (mut vl, mut vr) = (Vec::new(), Vec::new());
    for (i, &v) in verts.iter().enumerate() {
        if side[i] == 0 {
            vl.push(v);
        } else {
            vr.push(v);
        }
    }
    split(g, &vl, l, targets, tol, tries, rng, part)?;
    split(g, &vr, r, targets, tol, tries, rng, part)
}

/// Side (0 or 1) of every vertex of `g`, side 0 holding about `frac` of the
/// weight: the least cut within `tol` over `tries` grown and refined
/// bisections (the least overweight if none is within `tol`).
pub fn bisect(
    g: &Graph,
    frac: f64,
    tol: f64,
    tries: usize,
    rng: &mut impl Rng,
) -> Result<Vec<usize>> {
    let targets = [frac, 1.0 - frac];
    if g.n() > MULTILEVEL_BISECTION {
        // A large coarsest graph: bisect it multilevel (its own coarsening
        // goes below this size, so this does not recurse further).
        let ml = super::Multilevel {
            tolerance: tol,
            seed: rng.gen(),
            initial_tries: tries,
            geometric_start: false,
            ..super::Multilevel::default()
        };
        return Ok(super::super::GraphPartitioner::partition(&ml, g, &targets)?.parts);
    }
    let tw = target_weights(&targets, g.total_weight())?;
    let fm = KwayRefiner {
        tolerance: tol,
        passes: 10,
        fm_passes: 4,
        fm_bad_moves: 50,
    };
    // FM cannot swap vertices when the caps leave no room for one more: a
    // second candidate of every try lets a first run exceed them by one of
    // the heaviest vertices, and the strict run restores the balance.
    let heaviest = (0..g.n()).map(|v| g.vertex_weight(v)).fold(0.0, f64::max);
    let loose = KwayRefiner {
        tolerance: tol + heaviest / tw[0].min(tw[1]).max(f64::MIN_POSITIVE),
        ..fm
    };
    let view = View::of(g);
    let mut best = Best::new(tol);
    for _ in 0..tries.max(1) {
        let grown = grow(&view, frac, rng);
        for relax in [false, true] {
            let mut side = grown.clone();
            if relax {
                loose.refine(g, &tw, &mut side, false, rng);
            }
            fm.refine(g, &tw, &mut side, true, rng);
            best.offer(&view, &tw, side);
        }
    }
    Ok(best.take())
}

/// Greedy graph growing: side 0 grows from a random vertex by the frontier
/// vertex of largest gain (weighted edges into the region minus edges out),
/// restarting from a random outside vertex when the frontier empties, until
/// it holds about `frac` of the weight. O(m log m).
fn grow(v: &View, frac: f64, rng: &mut impl Rng) -> Vec<usize> {
    let n = v.n();
    let total: f64 = v.vw.iter().sum();
    let goal = frac * total;
    let mut side = vec![1usize; n];
    let wdeg: Vec<f64> = (0..n).map(|x| v.arcs(x).map(|a| v.ew[a]).sum()).collect();
    let mut conn = vec![0.0; n];
    let mut restart: Vec<usize> = (0..n).collect();
    restart.shuffle(rng);
    let mut heap = BinaryHeap::new();
    let mut w_in = 0.0;
    while w_in < goal {
        let u = loop {
            match heap.pop() {
                Some(Gain(g, u)) if side[u] == 1 && g == 2.0 * conn[u] - wdeg[u] => break Some(u),
                Some(_) => continue,
                None => {
                    let mut next = None;
                    while let Some(u) = restart.pop() {
                        if side[u] == 1 {
                            next = Some(u);
                            break;
                        }
                    }
                    break next;
                }
            }
        };
        let Some(u) = u else { break };
        if w_in > 0.0 && (w_in + v.vw[u] - goal) > (goal - w_in) {
            break;
        }
        side[u] = 0;
        w_in += v.vw[u];
        for a in v.arcs(u) {
            let x = v.adj[a];
            if side[x] == 1 {
                conn[x] += v.ew[a];
                heap.push(Gain(2.0 * conn[x] - wdeg[x], x));
            }
        }
    }
    side
}

#[cfg(test)]
mod tests {
    use super::super::cut;
    use super::*;
    use crate::graph::csr::grid_graph;
    use crate::graph::metrics::{imbalance, part_weights, Partition};
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;

    #[test]
    fn bisection_of_a_grid_is_a_straight_cut() {
        let g = grid_graph(10, 10);
        let side = bisect(&g, 0.5, 0.0, 8, &mut ChaCha8Rng::seed_from_u64(1)).unwrap();
        assert_eq!(side.iter().filter(|&&s| s == 0).count(), 50);
        assert_eq!(cut(&View::of(&g), &side), 10.0);
    }

    #[test]
    fn recursive_bisection_follows_uneven_targets() {
        let g = grid_graph(12, 20);
        let t = [1.0, 3.0, 2.0];
        let part = recursive_bisection(&g, &t, 0.03, 4, &mut ChaCha8Rng::seed_from_u64(2)).unwrap();
        let p = Partition::new(3, part).unwrap();
        let tw = target_weights(&t, 240.0).unwrap();
        assert!(imbalance(&part_weights(&g, &p), &tw) <= 0.03 + 1e-9);
    }
}
