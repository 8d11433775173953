//! Two-way FM refinement of a bisection around its target split, as METIS's
//! recursive bisection refines (\[FM82\], \[KK98\] §4; METIS 5's
//! `FM_2WayCutRefine`).
//!
//! Unlike the k-way refiner ([`super::refine_kway`]), which moves a vertex
//! only into a part with room under its cap, a pass here has no caps: every
//! move takes the best-gain boundary vertex of the side that is *over its
//! target*, so the pass swings around the target split and swaps vertices
//! across the cut even when both sides are at their caps (where a capped FM
//! cannot move anything). A prefix of the moves is kept: the one of least cut
//! whose distance from the target split is at most the starting distance
//! plus one average vertex weight (or equal cut and closer to the target).
//! After `limit = min(max(n / 100, 15), 100)` moves without such a prefix the
//! pass stops and the later moves are undone. The caller restores the exact
//! caps afterwards (the k-way refiner's balancing).
//!
//! Cost: O(moves · deg · log n) per pass, at most `passes` passes, each
//! stopping early when it finds no lower cut.

use std::collections::BinaryHeap;

use rand::seq::SliceRandom;
use rand::Rng;

use super::{Gain, View};

/// Refines the bisection `side` (0 or 1 per vertex) of `v` towards the least
/// cut around the target weights `tw` (two entries summing to the total
/// weight) by at most `passes` FM passes. The cut never increases.
pub(crate) fn refine(v: &View, tw: &[f64], side: &mut [usize], passes: usize, rng: &mut impl Rng) {
    let n = v.n();
    if n < 2 {
        return;
    }
    let total: f64 = v.vw.iter().sum();
    let limit = (n / 100).clamp(15, 100);
    let avg = (total / 20.0).min(2.0 * total / n as f64);
    let mut pw = [0.0; 2];
    // gain[x] = weight of x's edges to the other side minus to its own.
    let mut gain = vec![0.0; n];
    for x in 0..n {
        pw[side[x]] += v.vw[x];
        for a in v.arcs(x) {
            gain[x] += if side[v.adj[a]] == side[x] {
                -v.ew[a]
            } else {
                v.ew[a]
            };
        }
    }
    let mut moved = vec![false; n];
    let mut ver = vec![0u32; n];
    let mut log: Vec<usize> = Vec::new();
    let mut heaps = [BinaryHeap::new(), BinaryHeap::new()];
    let mut order: Vec<usize> = Vec::new();
    for _ in 0..passes {
        heaps[0].clear();
        heaps[1].clear();
        log.clear();
        order.clear();
        order.extend((0..n).filter(|&x| is_boundary(v, side, x)));
        order.shuffle(rng);
        for &x in &order {
            heaps[side[x]].push((Gain(gain[x], x), ver[x]));
        }
        let dist = |pw: &[f64; 2]| (tw[0] - pw[0]).abs();
        let orig = dist(&pw);
        let (mut cut_delta, mut best_delta, mut best_dist, mut best_len) = (0.0, 0.0, orig, 0);
        loop {
            let from = usize::from(tw[0] - pw[0] >= tw[1] - pw[1]);
            let Some(x) = pop(&mut heaps[from], &moved, &ver) else {
                break;
            };
            cut_delta -= gain[x];
            flip(v, side, &mut pw, &mut gain, x);
            moved[x] = true;
            log.push(x);
            let d = dist(&pw);
            if (cut_delta < best_delta - 1e-9 && d <= orig + avg)
                || ((cut_delta - best_delta).abs() <= 1e-9 && d < best_dist)
            {
                (best_delta, best_dist, best_len) = (cut_delta, d, log.len());
            } else if log.len() - best_len > limit {
                break;
            }
            for a in v.arcs(x) {
                let u = v.adj[a];
                if !moved[u] {
                    ver[u] = ver[u].wrapping_add(1);
                    if is_boundary(v, side, u) {
                        heaps[side[u]].push((Gain(gain[u], u), ver[u]));
                    }
                }
            }
        }
        // Undo the moves after the best prefix.
        for &x in log[best_len..].iter().rev() {
            flip(v, side, &mut pw, &mut gain, x);
        }
        for &x in &log {
            moved[x] = false;
            ver[x] = ver[x].wrapping_add(1);
        }
        if best_len == 0 || best_delta > -1e-9 {
            break;
        }
    }
}

/// Moves `x` to the other side, updating the side weights `pw` and the
/// gains of `x` and its neighbours. O(deg x).
fn flip(v: &View, side: &mut [usize], pw: &mut [f64; 2], gain: &mut [f64], x: usize) {
    let to = 1 - side[x];
    pw[1 - to] -= v.vw[x];
    pw[to] += v.vw[x];
    side[x] = to;
    gain[x] = -gain[x];
    for a in v.arcs(x) {
        let u = v.adj[a];
        gain[u] += if side[u] == to { -2.0 } else { 2.0 } * v.ew[a];
    }
}

/// True when `x` has a neighbour on the other side. O(deg x).
fn is_boundary(v: &View, side: &[usize], x: usize) -> bool {
    v.arcs(x).any(|a| side[v.adj[a]] != side[x])
}

/// The unmoved vertex of largest current gain in `heap` (stale entries
/// skipped).
fn pop(heap: &mut BinaryHeap<(Gain, u32)>, moved: &[bool], ver: &[u32]) -> Option<usize> {
    while let Some((Gain(_, x), version)) = heap.pop() {
        if !moved[x] && version == ver[x] {
            return Some(x);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::super::cut;
    use super::*;
    use crate::graph::csr::grid_graph;
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;

    #[test]
    fn straightens_a_jagged_bisection_of_a_grid() {
        // A 10 × 10 grid split into its left and right halves, with a
        // jagged boundary: columns 4 and 5 alternate sides row by row.
        let g = grid_graph(10, 10);
        let v = View::of(&g);
        let mut side: Vec<usize> = (0..100)
            .map(|i| {
                let (r, c) = (i / 10, i % 10);
                usize::from(c > 5 || (c >= 4 && (r + c) % 2 == 1))
            })
            .collect();
        let before = cut(&v, &side);
        refine(
            &v,
            &[50.0, 50.0],
            &mut side,
            10,
            &mut ChaCha8Rng::seed_from_u64(3),
        );
        let w0 = side.iter().filter(|&&s| s == 0).count();
        let after = cut(&v, &side);
        assert!(after < before, "cut {before} -> {after}");
        assert!(after <= 12.0, "cut {after}");
        assert!((48..=52).contains(&w0), "side 0 holds {w0}");
    }

    #[test]
    fn never_raises_the_cut_and_keeps_near_the_target() {
        let g = grid_graph(12, 9);
        let v = View::of(&g);
        let mut rng = ChaCha8Rng::seed_from_u64(5);
        for _ in 0..20 {
            let mut side: Vec<usize> = (0..g.n()).map(|_| rng.gen_range(0..2)).collect();
            let w0 = side.iter().filter(|&&s| s == 0).count() as f64;
            let tw = [27.0, 81.0];
            let before = cut(&v, &side);
            let d0 = (tw[0] - w0).abs();
            // One pass: within one average vertex weight (2 here) of the
            // starting distance from the target split.
            refine(&v, &tw, &mut side, 1, &mut rng);
            let w1 = side.iter().filter(|&&s| s == 0).count() as f64;
            assert!(cut(&v, &side) <= before);
            assert!((tw[0] - w1).abs() <= d0 + 2.0 + 1e-9);
        }
    }
}
