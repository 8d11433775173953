//! Tests of the multilevel partitioner as a whole.

use proptest::prelude::*;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::*;
use crate::graph::csr::grid_graph;
use crate::graph::metrics::{metrics, target_weights};
use crate::graph::{Algo, Grouping, Rcb};

/// Random geometric graph: `n` points in the unit square, joined when closer
/// than `radius` (may have isolated vertices and several components).
fn geometric_graph(n: usize, radius: f64, seed: u64) -> Graph {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let pts: Vec<[f64; 2]> = (0..n).map(|_| [rng.gen(), rng.gen()]).collect();
    let mut edges = Vec::new();
    for i in 0..n {
        for j in i + 1..n {
            let (dx, dy) = (pts[i][0] - pts[j][0], pts[i][1] - pts[j][1]);
            if dx * dx + dy * dy < radius * radius {
                edges.push((i, j, 1.0));
            }
        }
    }
    let coords = pts.iter().flatten().copied().collect();
    Graph::from_edges(n, edges, false)
        .and_then(|g| g.with_coords(2, coords))
        .unwrap()
}

/// True when unit-weight vertices can meet every cap `(1 + tol) × target`.
fn unit_feasible(n: usize, targets: &[f64], tol: f64) -> bool {
    let tw = target_weights(targets, n as f64).unwrap();
    let room: f64 = tw.iter().map(|t| (t * (1.0 + tol) + 1e-9).floor()).sum();
    room >= n as f64
}

fn check(g: &Graph, p: &Partition, targets: &[f64]) -> Metrics {
    assert_eq!(p.len(), g.n());
    assert_eq!(p.nparts, targets.len());
    assert!(p.parts.iter().all(|&q| q < targets.len()));
    metrics(g, p, targets).unwrap()
}

use crate::graph::metrics::Metrics;

/// Least cut over all 2-colourings within the caps. O(2^n · m).
fn brute_force_cut(g: &Graph, targets: &[f64], tol: f64) -> f64 {
    let n = g.n();
    let tw = target_weights(targets, g.total_weight()).unwrap();
    let view = View::of(g);
    let mut best = f64::INFINITY;
    let mut part = vec![0; n];
    for mask in 0u32..(1 << n) {
        let mut w = [0.0; 2];
        for (v, p) in part.iter_mut().enumerate() {
            *p = ((mask >> v) & 1) as usize;
            w[*p] += g.vertex_weight(v);
        }
        if (0..2).all(|i| w[i] <= tw[i] * (1.0 + tol) + 1e-9) {
            best = best.min(cut(&view, &part));
        }
    }
    best
}

#[test]
fn grid_quarters_and_uneven_targets() {
    let g = grid_graph(32, 32);
    let t = [1.0; 4];
    let coordinate_free = Multilevel {
        geometric_start: false,
        ..Multilevel::default()
    };
    let p = coordinate_free.partition(&g, &t).unwrap();
    let m = check(&g, &p, &t);
    assert!(m.imbalance <= 0.03 + 1e-9);
    assert!(m.edge_cut <= 80.0, "cut {}", m.edge_cut); // straight quarters: 64, METIS 77
    let t = [1.0, 4.0, 1.0, 4.0, 2.0];
    let p = Multilevel::default().partition(&g, &t).unwrap();
    assert!(check(&g, &p, &t).imbalance <= 0.03 + 1e-9);
}

#[test]
fn deterministic() {
    let g = geometric_graph(600, 0.06, 9);
    let t = [1.0, 2.0, 3.0, 1.5, 1.0, 1.0];
    let ml = Multilevel::default();
    let a = ml.partition(&g, &t).unwrap();
    let b = ml.partition(&g, &t).unwrap();
    assert_eq!(a, b);
    let c = Multilevel {
        seed: 2,
        ..Multilevel::default()
    }
    .partition(&g, &t)
    .unwrap();
    // Another seed is another run (not necessarily another result; this one is).
    assert_ne!(a, c);
    // Several tries (METIS's `-ncuts`) are deterministic too, and the first
    // try is the default run: two never cut more than one.
    let one = Multilevel {
        geometric_start: false,
        ..Multilevel::default()
    };
    let two = Multilevel { cycles: 2, ..one };
    let (p1, p2) = (
        one.partition(&g, &t).unwrap(),
        two.partition(&g, &t).unwrap(),
    );
    assert_eq!(p2, two.partition(&g, &t).unwrap());
    let (m1, m2) = (check(&g, &p1, &t), check(&g, &p2, &t));
    assert!(
        m2.edge_cut <= m1.edge_cut,
        "{} > {}",
        m2.edge_cut,
        m1.edge_cut
    );
}

#[test]
fn not_worse_than_rcb_on_grids() {
    for (r, c) in [(20, 20), (30, 50), (64, 16), (45, 45)] {
        let g = grid_graph(r, c);
        for t in [
            vec![1.0, 1.0],
            vec![1.0, 3.0],
            vec![1.0; 4],
            vec![1.0, 4.0, 1.0, 4.0],
            vec![1.0; 8],
            vec![2.0, 1.0, 1.0, 3.0, 1.0, 1.0, 2.0, 1.0],
        ] {
            // With the geometric candidate (off by default).
            let ml = Multilevel {
                geometric_start: true,
                ..Multilevel::default()
            }
            .partition(&g, &t)
            .unwrap();
            let core = Multilevel::default().partition(&g, &t).unwrap();
            let rcb = Rcb {
                grouping: Grouping::Binpacking,
            }
            .partition(&g, &t)
            .unwrap();
            let (m, b) = (check(&g, &ml, &t), metrics(&g, &rcb, &t).unwrap());
            assert!(m.imbalance <= 0.03 + 1e-9);
            assert!(
                m.edge_cut <= b.edge_cut,
                "{r}x{c} {t:?}: multilevel {} > RCB {}",
                m.edge_cut,
                b.edge_cut
            );
            // Without it (the default), within 35 % of RCB's straight cuts
            // (gpmetis on these grids: up to 1.31 × RCB, 45×45, k = 2).
            let mc = check(&g, &core, &t);
            assert!(mc.imbalance <= 0.03 + 1e-9);
            assert!(
                mc.edge_cut <= 1.35 * b.edge_cut,
                "{r}x{c} {t:?}: multilevel alone {} vs RCB {}",
                mc.edge_cut,
                b.edge_cut
            );
        }
    }
}

#[test]
fn optimal_on_simple_tiny_graphs() {
    let path = Graph::from_edges(10, (0..9).map(|i| (i, i + 1, 1.0)), false).unwrap();
    let cycle = Graph::from_edges(12, (0..12).map(|i| (i, (i + 1) % 12, 1.0)), false).unwrap();
    let mut cl = Vec::new();
    for base in [0, 6] {
        for i in 0..6 {
            for j in i + 1..6 {
                cl.push((base + i, base + j, 1.0));
            }
        }
    }
    cl.push((5, 6, 1.0));
    let cliques = Graph::from_edges(12, cl, false).unwrap();
    let grid = grid_graph(3, 4);
    for (name, g) in [
        ("path", path),
        ("cycle", cycle),
        ("cliques", cliques),
        ("grid", grid),
    ] {
        for t in [[1.0, 1.0], [1.0, 2.0]] {
            let tol = if g.n() % 3 == 0 || t[1] == 1.0 {
                0.03
            } else {
                0.2
            };
            let ml = Multilevel {
                tolerance: tol,
                ..Multilevel::default()
            };
            let p = ml.partition(&g, &t).unwrap();
            let m = check(&g, &p, &t);
            let opt = brute_force_cut(&g, &t, tol);
            assert!(m.imbalance <= tol + 1e-9, "{name} {t:?}");
            assert_eq!(m.edge_cut, opt, "{name} {t:?}");
        }
    }
}

#[test]
fn near_optimal_on_random_tiny_graphs() {
    let mut rng = ChaCha8Rng::seed_from_u64(11);
    let (mut sum, mut sum_opt, mut exact) = (0.0, 0.0, 0);
    for case in 0..40 {
        let n = 12;
        let mut edges = Vec::new();
        for i in 0..n {
            for j in i + 1..n {
                if rng.gen_bool(0.3) {
                    edges.push((i, j, f64::from(rng.gen_range(1u8..4))));
                }
            }
        }
        let g = Graph::from_edges(n, edges, true).unwrap();
        let t = if case % 2 == 0 {
            [1.0, 1.0]
        } else {
            [1.0, 2.0]
        };
        let p = Multilevel::default().partition(&g, &t).unwrap();
        let m = check(&g, &p, &t);
        let opt = brute_force_cut(&g, &t, 0.03);
        assert!(m.imbalance <= 0.03 + 1e-9);
        assert!(
            m.edge_cut <= 2.0 * opt,
            "case {case}: {} vs optimum {opt}",
            m.edge_cut
        );
        exact += usize::from(m.edge_cut == opt);
        sum += m.edge_cut;
        sum_opt += opt;
    }
    // Measured: 34 of 40 optimal, 2 % above the optimum in all.
    assert!(exact >= 32, "{exact} of 40 optimal");
    assert!(sum <= 1.03 * sum_opt, "total {sum} vs optimum {sum_opt}");
}

#[test]
fn isolated_vertices() {
    // A grid plus 50 isolated vertices, and a graph with no edge at all.
    let grid = grid_graph(10, 10);
    let mut edges = Vec::new();
    for v in 0..grid.n() {
        for &u in grid.neighbors(v) {
            if u > v {
                edges.push((v, u, 1.0));
            }
        }
    }
    let g = Graph::from_edges(150, edges, false).unwrap();
    let t = [1.0, 2.0, 3.0];
    let p = Multilevel::default().partition(&g, &t).unwrap();
    let m = check(&g, &p, &t);
    assert!(m.imbalance <= 0.03 + 1e-9, "{m:?}");
    let empty = Graph::from_edges(300, [], false).unwrap();
    let p = Multilevel::default().partition(&empty, &t).unwrap();
    let m = check(&empty, &p, &t);
    assert!(m.imbalance <= 0.03 + 1e-9 && m.edge_cut == 0.0, "{m:?}");
}

#[test]
fn heavy_vertex_weights() {
    // A grid where a few vertices weigh as much as a hundred others.
    let g0 = grid_graph(30, 30);
    let w: Vec<f64> = (0..g0.n())
        .map(|v| if v % 97 == 0 { 100.0 } else { 1.0 })
        .collect();
    let g = g0.with_vertex_weights(w).unwrap();
    for t in [vec![1.0; 4], vec![1.0, 4.0, 2.0], vec![1.0; 7]] {
        let p = Multilevel::default().partition(&g, &t).unwrap();
        let m = check(&g, &p, &t);
        assert!(m.imbalance <= 0.03 + 1e-9, "{t:?}: {m:?}");
    }
    // A vertex heavier than a part's cap cannot be balanced: the partitioner
    // still returns a partition, with that vertex alone where it fits best.
    let g = Graph::from_edges(3, [(0, 1, 1.0), (1, 2, 1.0)], false)
        .unwrap()
        .with_vertex_weights(vec![10.0, 1.0, 1.0])
        .unwrap();
    let p = Multilevel::default().partition(&g, &[1.0, 1.0]).unwrap();
    assert_ne!(p.parts[0], p.parts[1]);
}

#[test]
fn refine_cycles_never_worse_and_balanced() {
    // The same seed gives the same first V-cycle; a refinement V-cycle's
    // result is kept only when no worse, so the cut cannot rise.
    let mut gained = 0;
    for seed in 0..4u64 {
        let g = geometric_graph(2000, 0.045, seed);
        let targets = [1.0, 4.0, 1.0, 4.0, 2.0];
        let base = Multilevel {
            seed,
            refine_cycles: 0,
            geometric_start: false,
            ..Multilevel::default()
        };
        let more = Multilevel {
            refine_cycles: 2,
            ..base
        };
        let a = check(&g, &base.partition(&g, &targets).unwrap(), &targets);
        let b = check(&g, &more.partition(&g, &targets).unwrap(), &targets);
        assert!(b.imbalance <= 0.03 + 1e-9, "seed {seed}: {}", b.imbalance);
        assert!(
            b.edge_cut <= a.edge_cut,
            "seed {seed}: {} > {}",
            b.edge_cut,
            a.edge_cut
        );
        gained += usize::from(b.edge_cut < a.edge_cut);
    }
    assert!(gained > 0, "no refinement V-cycle lowered a cut");
}

#[test]
fn coarse_refinement_keeps_the_imbalance_it_starts_with() {
    // METIS's coarse-level caps: the largest load never rises above
    // max(1 + tolerance, its value on entry), and the cut never rises.
    let g = grid_graph(30, 30);
    let targets = [1.0, 4.0, 1.0, 4.0];
    let tw = target_weights(&targets, g.total_weight()).unwrap();
    let view = View::of(&g);
    let refiner = Multilevel::default().refiner();
    let load = |part: &[usize]| {
        let mut pw = [0.0; 4];
        for &q in part {
            pw[q] += 1.0;
        }
        (0..4).map(|q| pw[q] / tw[q]).fold(0.0, f64::max)
    };
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    let mut lowered = 0;
    for trial in 0..6 {
        // Random parts drawn in proportion to the targets: loads near 1.
        let mut part: Vec<usize> = (0..900)
            .map(|_| match rng.gen_range(0..10) {
                0 => 0,
                1..=4 => 1,
                5 => 2,
                _ => 3,
            })
            .collect();
        let (l0, c0) = (load(&part), cut(&view, &part));
        refiner.refine_current(&g, &tw, &mut part, &mut rng);
        let (l1, c1) = (load(&part), cut(&view, &part));
        assert!(
            l1 <= l0.max(1.03) + 1e-9,
            "trial {trial}: load {l0} -> {l1}"
        );
        assert!(c1 <= c0, "trial {trial}: cut {c0} -> {c1}");
        lowered += usize::from(c1 < c0);
    }
    assert!(lowered > 0, "no refinement lowered a cut");
}

#[test]
fn registered_as_an_algorithm() {
    assert_eq!(Algo::from_name("ml"), Some(Algo::Multilevel));
    assert_eq!(Algo::from_name("multilevel"), Some(Algo::Multilevel));
    assert!(!Algo::Multilevel.needs_coords());
    let g = grid_graph(12, 12);
    let p = Algo::Multilevel
        .partition(&g, &[1.0, 1.0, 2.0], Grouping::Simple, None)
        .unwrap();
    assert_eq!(p.len(), 144);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    #[test]
    fn balanced_on_grids(rows in 10usize..50, cols in 10usize..50, k in 2usize..9, seed in 0u64..1000) {
        let g = grid_graph(rows, cols);
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let t: Vec<f64> = (0..k).map(|_| rng.gen_range(1.0..4.0)).collect();
        let p = Multilevel::default().partition(&g, &t).unwrap();
        let m = check(&g, &p, &t);
        if unit_feasible(g.n(), &t, 0.03) {
            prop_assert!(m.imbalance <= 0.03 + 1e-9, "{:?}", m);
        }
    }

    #[test]
    fn balanced_on_geometric_graphs(n in 100usize..800, k in 2usize..9, seed in 0u64..1000) {
        let g = geometric_graph(n, (7.0 / (std::f64::consts::PI * n as f64)).sqrt(), seed);
        let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0xabc);
        let t: Vec<f64> = (0..k).map(|_| rng.gen_range(1.0..4.0)).collect();
        let p = Multilevel::default().partition(&g, &t).unwrap();
        let m = check(&g, &p, &t);
        if unit_feasible(g.n(), &t, 0.03) {
            prop_assert!(m.imbalance <= 0.03 + 1e-9, "{:?}", m);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// Where unit vertices cannot meet every cap (small parts), every part
    /// still ends within one vertex of its cap (a CI failure of the
    /// package's proptest: 7 parts of a 38-vertex mesh, one part two
    /// vertices over because no part had room for a whole vertex).
    #[test]
    fn within_a_vertex_of_the_caps_when_they_are_too_tight(
        rows in 4usize..10, cols in 4usize..10, k in 3usize..9, seed in 0u64..1000,
    ) {
        let g = grid_graph(rows, cols);
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let t: Vec<f64> = (0..k).map(|_| rng.gen_range(1.0..8.0)).collect();
        prop_assume!(g.n() >= 2 * k && !unit_feasible(g.n(), &t, 0.03));
        let p = Multilevel::default().partition(&g, &t).unwrap();
        let m = check(&g, &p, &t);
        let tw = target_weights(&t, g.n() as f64).unwrap();
        for (w, t) in m.part_weights.iter().zip(&tw) {
            prop_assert!(*w <= 1.03 * t + 1.0 + 1e-9, "{:?} {:?}", m.part_weights, tw);
        }
    }
}
