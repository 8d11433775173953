//! Array decompositions against \[KRW96\]: the worked
//! example of Figure 16, the cost formulas of §3 (Figures 5–8) on integer
//! plans, Theorem 1 by exhaustive enumeration, and properties on random input
//! checked against brute-force counts on the cell grid.

use nuce::plan::array2d::cost::{acost, bcost, internal_edges};
use nuce::plan::array2d::pt::for_each_partition;
use nuce::plan::array2d::xy::xy_coefficients;
use nuce::plan::array2d::{
    ArrayDecomposer, ArrayPlan, ColumnLayout, Rect, RecursiveBisection, RecursiveBisection2,
    RecursiveBisection3, Tile, Xy, Xy2,
};
use proptest::prelude::*;

fn all_algorithms(latency: f64) -> Vec<Box<dyn ArrayDecomposer>> {
    vec![
        Box::new(RecursiveBisection),
        Box::new(RecursiveBisection2),
        Box::new(RecursiveBisection3),
        Box::new(Xy { latency }),
        Box::new(Xy2 { latency }),
        Box::new(Tile { latency }),
    ]
}

// ---------------------------------------------------------------- oracles

/// Owner of every cell, by scanning the rectangles (each cell exactly once).
fn owner_grid(plan: &ArrayPlan) -> Vec<Vec<usize>> {
    let mut g = vec![vec![usize::MAX; plan.cols]; plan.rows];
    for (i, p) in plan.parts.iter().enumerate() {
        for row in g.iter_mut().skip(p.row).take(p.rows) {
            for cell in row.iter_mut().skip(p.col).take(p.cols) {
                assert_eq!(*cell, usize::MAX, "cell owned twice");
                *cell = i;
            }
        }
    }
    assert!(g.iter().flatten().all(|&o| o != usize::MAX), "cell unowned");
    g
}

/// Neighbour pairs with different owners, optionally on the torus.
fn brute_cost(g: &[Vec<usize>], torus: bool) -> usize {
    let (m, n) = (g.len(), g[0].len());
    let mut count = 0;
    for r in 0..m {
        for c in 0..n {
            if c + 1 < n && g[r][c] != g[r][c + 1] {
                count += 1;
            }
            if r + 1 < m && g[r][c] != g[r + 1][c] {
                count += 1;
            }
        }
    }
    if torus {
        count += (0..m).filter(|&r| n > 1 && g[r][0] != g[r][n - 1]).count();
        count += (0..n).filter(|&c| m > 1 && g[0][c] != g[m - 1][c]).count();
    }
    count
}

/// Internal edges of the planar graph without Euler: half-edge degrees of
/// lattice points; an internal edge has two ends, each an interior vertex
/// (degree ≥ 3) or a border point with an inward half-edge.
fn brute_internal_edges(g: &[Vec<usize>]) -> usize {
    let (m, n) = (g.len(), g[0].len());
    let diff = |r0: usize, c0: usize, r1: usize, c1: usize| g[r0][c0] != g[r1][c1];
    let mut ends = 0;
    for i in 0..=m {
        for j in 0..=n {
            let up = i >= 1 && j > 0 && j < n && diff(i - 1, j - 1, i - 1, j);
            let down = i < m && j > 0 && j < n && diff(i, j - 1, i, j);
            let left = j >= 1 && i > 0 && i < m && diff(i - 1, j - 1, i, j - 1);
            let right = j < n && i > 0 && i < m && diff(i - 1, j, i, j);
            let deg = [up, down, left, right].iter().filter(|&&b| b).count();
            let interior = i > 0 && i < m && j > 0 && j < n;
            if interior {
                let straight = deg == 2 && ((up && down) || (left && right));
                if deg >= 3 || (deg == 2 && !straight) {
                    ends += deg;
                }
            } else {
                ends += deg;
            }
        }
    }
    ends / 2
}

fn check_costs(plan: &ArrayPlan) {
    let g = owner_grid(plan);
    assert_eq!(acost(plan), brute_cost(&g, false), "Acost of {plan:?}");
    assert_eq!(bcost(plan), brute_cost(&g, true), "Bcost of {plan:?}");
    assert_eq!(
        internal_edges(plan),
        brute_internal_edges(&g),
        "internal edges of {plan:?}"
    );
}

// ---------------------------------------------------------- Figure 16

const FIG16: [f64; 7] = [0.5, 0.1, 0.1, 0.1, 0.1, 0.05, 0.05];

#[test]
fn figure16_costs() {
    // [KRW96] §6.4: 1000 x 3000, costs 5750 (RB), 4500 (XY2), 4500 (TILE),
    // 4666 (RB2, 4666.67 in the continuous plan), 4700 (RB3).
    let cases: [(&dyn ArrayDecomposer, usize); 5] = [
        (&RecursiveBisection, 5750),
        (&Xy2::default(), 4500),
        (&Tile::default(), 4500),
        (&RecursiveBisection2, 4666),
        (&RecursiveBisection3, 4700),
    ];
    for (algo, want) in cases {
        let plan = algo.decompose(1000, 3000, &FIG16).unwrap();
        let got = acost(&plan);
        assert!(got.abs_diff(want) <= 1, "{}: {got} vs {want}", algo.name());
        assert!(plan.imbalance(&FIG16).unwrap() < 1e-3, "{}", algo.name());
        // a1 = 0.5 gets half the array in every decomposition of Figure 16
        // except RecursiveBisection, where it shares a quadrant.
        if algo.name() != "rb" {
            assert_eq!(plan.parts[0].area(), 1_500_000, "{}", algo.name());
        }
    }
}

#[test]
fn figure16_input_order_is_kept() {
    // Parts follow the input order whatever order the algorithms sort into.
    let perm = [6, 2, 0, 5, 1, 4, 3];
    let speeds: Vec<f64> = perm.iter().map(|&i| FIG16[i]).collect();
    for algo in all_algorithms(0.0) {
        let a = algo.decompose(1000, 3000, &FIG16).unwrap();
        let b = algo.decompose(1000, 3000, &speeds).unwrap();
        assert_eq!(acost(&a), acost(&b), "{}", algo.name());
        // Same (speed, area) pairs: equal speeds may swap their rounding.
        let pairs = |plan: &ArrayPlan, s: &[f64]| {
            let mut v: Vec<(u64, usize)> = s
                .iter()
                .zip(&plan.parts)
                .map(|(x, r)| (x.to_bits(), r.area()))
                .collect();
            v.sort_unstable();
            v
        };
        assert_eq!(pairs(&a, &FIG16), pairs(&b, &speeds), "{}", algo.name());
        // The heaviest part (input position 2 after the permutation) is the
        // same rectangle.
        assert_eq!(b.parts[2], a.parts[0], "{}", algo.name());
    }
}

// ------------------------------------------------------- §3 formulas

/// An XY layout of `counts` columns over parts in index order.
fn layout(counts: &[usize], transposed: bool) -> ColumnLayout {
    let mut columns = Vec::new();
    let mut s = 0;
    for &c in counts {
        columns.push((s..s + c).collect());
        s += c;
    }
    ColumnLayout {
        columns,
        transposed,
    }
}

fn close(got: usize, want: f64, slack: f64) -> bool {
    (got as f64 - want).abs() <= slack
}

#[test]
fn two_and_three_partitions() {
    let (m, n) = (100usize, 300usize);
    let (mf, nf) = (m as f64, n as f64);
    // Figure 5 (a) vs (b).
    let w = [0.7, 0.3];
    let a = layout(&[1, 1], false).realize("t", m, n, &w).unwrap();
    let b = layout(&[1, 1], true).realize("t", m, n, &w).unwrap();
    assert_eq!((acost(&a), bcost(&a)), (m, 2 * m));
    assert_eq!((acost(&b), bcost(&b)), (n, 2 * n));
    assert_eq!(acost(&Xy::default().decompose(m, n, &w).unwrap()), m);
    // Figure 6 (a), (b), (c) with a1 >= a2 >= a3.
    let w = [0.5, 0.3, 0.2];
    let s = w[1] + w[2];
    let fa = layout(&[1, 2], false).realize("t", m, n, &w).unwrap();
    assert!(close(acost(&fa), mf + nf * s, 1.0));
    assert!(close(bcost(&fa), 2.0 * mf + 2.0 * nf * s, 1.0));
    let fb = layout(&[1, 2], true).realize("t", m, n, &w).unwrap();
    assert!(close(acost(&fb), nf + mf * s, 1.0));
    assert!(close(bcost(&fb), 2.0 * nf + 2.0 * mf * s, 1.0));
    let fc = layout(&[1, 1, 1], false).realize("t", m, n, &w).unwrap();
    assert_eq!((acost(&fc), bcost(&fc)), (2 * m, 3 * m));
    // XY takes the better of (a) and (c) (§3: "consider only (a) and (c)").
    for (mm, w) in [
        (100, [0.5, 0.3, 0.2]),
        (250, [0.5, 0.3, 0.2]),
        (250, [0.4, 0.35, 0.25]),
    ] {
        let best = (2.0 * mm as f64).min(mm as f64 + nf * (w[1] + w[2]));
        let got = acost(&Xy::default().decompose(mm, n, &w).unwrap());
        assert!(close(got, best, 1.0), "m={mm}: {got} vs {best}");
    }
}

/// Figure 7 (a)–(d) and the one-column decomposition: the pt(4) = 5 sorted XY
/// decompositions, with their Acost and Bcost formulas.
fn figure7(m: f64, n: f64, a: &[f64; 4]) -> Vec<(Vec<usize>, f64, f64)> {
    let s34 = a[2] + a[3];
    let s234 = a[1] + s34;
    vec![
        (vec![1, 1, 1, 1], 3.0 * m, 4.0 * m),
        (vec![1, 1, 2], 2.0 * m + n * s34, 3.0 * m + 2.0 * n * s34),
        (vec![1, 3], m + 2.0 * n * s234, 2.0 * m + 3.0 * n * s234),
        (vec![2, 2], m + n, 2.0 * m + 2.0 * n),
        (vec![4], 3.0 * n, 4.0 * n),
    ]
}

#[test]
fn four_partitions() {
    for (m, n, a) in [
        (200usize, 400usize, [0.4, 0.3, 0.2, 0.1]),
        (400, 400, [0.25; 4]),
        (100, 800, [0.55, 0.25, 0.125, 0.075]),
        (300, 500, [0.7, 0.1, 0.1, 0.1]),
    ] {
        let (mf, nf) = (m as f64, n as f64);
        let mut best_xy = f64::INFINITY;
        let mut best_xy2 = f64::INFINITY;
        for (counts, ac, bc) in figure7(mf, nf, &a) {
            let plan = layout(&counts, false).realize("t", m, n, &a).unwrap();
            assert!(close(acost(&plan), ac, 2.0), "{counts:?}: {}", acost(&plan));
            assert!(close(bcost(&plan), bc, 2.0), "{counts:?}: {}", bcost(&plan));
            // Rotated (Lemma 3): d m + k n -> d n + k m.
            let (d, k) = xy_coefficients(&counts, &a);
            assert!((d * mf + k * nf - ac).abs() < 1e-6);
            best_xy = best_xy.min(ac);
            best_xy2 = best_xy2.min(ac).min(d * nf + k * mf);
        }
        let xy = acost(&Xy::default().decompose(m, n, &a).unwrap());
        let xy2 = acost(&Xy2::default().decompose(m, n, &a).unwrap());
        assert!(close(xy, best_xy, 2.0), "XY {xy} vs {best_xy}");
        assert!(close(xy2, best_xy2, 2.0), "XY2 {xy2} vs {best_xy2}");
        // TILE searches a superset of XY's sorted decompositions.
        let tile = acost(&Tile::default().decompose(m, n, &a).unwrap());
        assert!(tile as f64 <= best_xy + 2.0, "TILE {tile} vs {best_xy}");
    }
}

#[test]
fn figure8_rotated_subpart() {
    // Figure 8: a1 | (a2 over a3|a4). Acost = m + m(a3+a4)/s + n s and
    // Bcost = 2m + m(a3+a4)/s + 2n s with s = a2 + a3 + a4 (here m = 400 rows
    // is the cut length of the first cut and n = 500 the other side).
    let (m, n) = (400usize, 500usize);
    let a = [0.6, 0.2, 0.1, 0.1];
    let s = 0.4;
    let w1 = 300; // n * a1
    let h2 = 200; // m * a2 / s
    let parts = vec![
        Rect::new(0, 0, m, w1),
        Rect::new(0, w1, h2, n - w1),
        Rect::new(h2, w1, m - h2, 100),
        Rect::new(h2, w1 + 100, m - h2, 100),
    ];
    let plan = ArrayPlan::new("fig8", m, n, parts).unwrap();
    let (mf, nf) = (m as f64, n as f64);
    assert!(close(
        acost(&plan),
        mf + mf * (a[2] + a[3]) / s + nf * s,
        0.0
    ));
    assert!(close(
        bcost(&plan),
        2.0 * mf + mf * (a[2] + a[3]) / s + 2.0 * nf * s,
        0.0
    ));
    check_costs(&plan);
    // Figure 8 beats 7 (b) iff m > s n (§3): 400 > 200 here, and TILE finds a
    // decomposition at least as good as Figure 8.
    let tile = Tile::default().decompose(m, n, &a).unwrap();
    assert!(acost(&tile) <= acost(&plan));
}

// ------------------------------------------------- Theorem 1, exhaustive

fn permutations(p: usize) -> Vec<Vec<usize>> {
    if p == 0 {
        return vec![vec![]];
    }
    let mut out = Vec::new();
    for rest in permutations(p - 1) {
        for pos in 0..=rest.len() {
            let mut v = rest.clone();
            v.insert(pos, p - 1);
            out.push(v);
        }
    }
    out
}

fn compositions(p: usize) -> Vec<Vec<usize>> {
    (0..1usize << (p - 1))
        .map(|mask| {
            let mut counts = vec![1];
            for bit in 0..p - 1 {
                if mask >> bit & 1 == 1 {
                    counts.push(1);
                } else {
                    *counts.last_mut().unwrap() += 1;
                }
            }
            counts
        })
        .collect()
}

#[test]
fn theorem1_sorted_decompositions_are_optimal() {
    use rand::{Rng, SeedableRng};
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
    for p in 2..=5 {
        let perms = permutations(p);
        let comps = compositions(p);
        assert_eq!(
            comps.len() * perms.len(),
            (1..=p).product::<usize>() << (p - 1)
        );
        for _ in 0..4 {
            let speeds: Vec<f64> = (0..p).map(|_| rng.gen_range(1.0..8.0)).collect();
            let (m, n) = (rng.gen_range(20..200usize), 200usize);
            let (mf, nf) = (m as f64, n as f64);
            // Exhaustive: every composition, every order, continuous and integer.
            let (mut best_cont, mut best_int) = (f64::INFINITY, usize::MAX);
            for perm in &perms {
                let w: Vec<f64> = perm.iter().map(|&i| speeds[i]).collect();
                for counts in &comps {
                    let (d, k) = xy_coefficients(counts, &w);
                    best_cont = best_cont.min(d * mf + k * nf);
                    let mut l = layout(counts, false);
                    l.columns.iter_mut().flatten().for_each(|i| *i = perm[*i]);
                    let plan = l.realize("t", m, n, &speeds).unwrap();
                    best_int = best_int.min(acost(&plan));
                }
            }
            // The pt(p) sorted ones reach the continuous optimum (Theorem 1).
            let mut sorted = speeds.clone();
            sorted.sort_by(|a, b| b.total_cmp(a));
            let mut best_sorted = f64::INFINITY;
            for_each_partition(p, |counts| {
                let (d, k) = xy_coefficients(counts, &sorted);
                best_sorted = best_sorted.min(d * mf + k * nf);
            });
            assert!((best_sorted - best_cont).abs() <= 1e-9 * best_cont);
            // XY's integer plan is within rounding of the exhaustive optimum.
            let (lay, plan) = Xy::default().best_layout(m, n, &speeds).unwrap();
            let got = acost(&plan);
            assert!(got as f64 <= best_int as f64 + p as f64, "p={p}");
            assert!((got as f64 - best_cont).abs() <= p as f64, "p={p}");
            assert!(lay.columns.windows(2).all(|c| c[0].len() <= c[1].len()));
        }
    }
}

// ------------------------------------------------------ random inputs

fn speeds_strategy() -> impl Strategy<Value = Vec<f64>> {
    prop::collection::vec(0.1f64..10.0, 1..8)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn plans_tile_and_costs_match_brute_force(
        rows in 1usize..24,
        cols in 1usize..24,
        speeds in speeds_strategy(),
        latency in prop_oneof![Just(0.0), 0.0f64..50.0],
    ) {
        for algo in all_algorithms(latency) {
            let plan = algo.decompose(rows, cols, &speeds).unwrap();
            prop_assert_eq!(plan.len(), speeds.len());
            prop_assert_eq!(plan.algorithm.as_str(), algo.name());
            check_costs(&plan);
        }
    }

    #[test]
    fn areas_near_proportional(
        rows in 40usize..200,
        cols in 40usize..200,
        speeds in speeds_strategy(),
    ) {
        let total: f64 = speeds.iter().sum();
        let cells = (rows * cols) as f64;
        let p = speeds.len() as f64;
        // Every rounding puts a cut on the nearest whole line: an error of at
        // most half a line, i.e. max(rows, cols) / 2 cells. A part's area goes
        // through two roundings in a column layout (its column's width, then
        // its height in the column) and through one per level of a balanced
        // bisection tree, ⌈log2 p⌉ levels. (The old allowance, p (rows + cols)
        // + p², exceeded most parts' shares: a part could get no cell at all.)
        let half_line = rows.max(cols) as f64 / 2.0;
        let depth = p.log2().ceil();
        for algo in all_algorithms(0.0) {
            let plan = algo.decompose(rows, cols, &speeds).unwrap();
            let roundings = if matches!(algo.name(), "xy" | "xy2") { 2.0 } else { depth };
            let slack = roundings * half_line + 1e-9 * cells;
            for (r, s) in plan.parts.iter().zip(&speeds) {
                let share = cells * s / total;
                prop_assert!((r.area() as f64 - share).abs() <= slack,
                    "{}: area {} share {share}", algo.name(), r.area());
            }
        }
    }
}

#[test]
fn large_arrays_are_balanced() {
    use rand::{Rng, SeedableRng};
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(3);
    for p in [4, 7, 10, 15] {
        let speeds: Vec<f64> = (0..p).map(|_| rng.gen_range(1.0..8.0)).collect();
        for algo in all_algorithms(100.0) {
            let plan = algo.decompose(1000, 2000, &speeds).unwrap();
            let imb = plan.imbalance(&speeds).unwrap();
            assert!(imb < 0.01, "{} p={p}: imbalance {imb}", algo.name());
        }
    }
}

#[test]
fn xy2_never_worse_than_xy_and_latency_prefers_fewer_edges() {
    use rand::{Rng, SeedableRng};
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(11);
    for _ in 0..20 {
        let p = rng.gen_range(2..10);
        let speeds: Vec<f64> = (0..p).map(|_| rng.gen_range(1.0..8.0)).collect();
        let (m, n) = (rng.gen_range(50..500), rng.gen_range(50..500));
        let xy = acost(&Xy::default().decompose(m, n, &speeds).unwrap());
        let xy2 = acost(&Xy2::default().decompose(m, n, &speeds).unwrap());
        assert!(xy2 as f64 <= xy as f64 + p as f64, "{xy2} vs {xy}");
        for algo in [
            &Xy { latency: 1000.0 } as &dyn ArrayDecomposer,
            &Tile { latency: 1000.0 },
        ] {
            let lat = algo.decompose(m, n, &speeds).unwrap();
            let flat = all_algorithms(0.0)
                .into_iter()
                .find(|a| a.name() == algo.name())
                .unwrap()
                .decompose(m, n, &speeds)
                .unwrap();
            let cost = |pl: &ArrayPlan| acost(pl) as f64 + 1000.0 * internal_edges(pl) as f64;
            assert!(cost(&lat) <= cost(&flat), "{}", algo.name());
            assert!(acost(&lat) >= acost(&flat), "{}", algo.name());
        }
    }
}
