use super::*;
use crate::graph::csr::grid_graph;
use crate::graph::metrics::metrics;

fn ml_uniform(g: &Graph, k: usize) -> Partition {
    Multilevel::default().partition(g, &vec![1.0; k]).unwrap()
}

fn rp(itr: f64) -> Repartitioner {
    Repartitioner {
        itr,
        ..Repartitioner::default()
    }
}

/// A lower bound on the weight any balanced repartitioning moves: every part
/// above its cap must shed the excess.
fn must_move(g: &Graph, current: &Partition, targets: &[f64], tol: f64) -> f64 {
    let m = metrics(g, current, targets).unwrap();
    m.part_weights
        .iter()
        .zip(&m.target_weights)
        .map(|(w, t)| (w - t * (1.0 + tol)).max(0.0))
        .sum()
}

#[test]
fn every_itr_meets_the_tolerance() {
    let g = grid_graph(30, 40);
    let cur = ml_uniform(&g, 4);
    for targets in [[1.0 / 3.0, 1.0, 1.0, 1.0], [4.0, 1.0, 2.0, 1.5]] {
        for itr in [1e-3, 1.0, 1000.0] {
            let d = rp(itr).diffuse(&g, &cur, &targets, None).unwrap();
            let m = metrics(&g, &d, &targets).unwrap();
            assert!(m.imbalance <= 0.03 + 1e-9, "diffusion itr {itr}: {m:?}");
            let r = rp(itr).repartition(&g, &cur, &targets, None).unwrap();
            assert!(r.imbalance <= 0.03 + 1e-9, "itr {itr}: {r:?}");
            assert_eq!(
                metrics(&g, &r.partition, &targets).unwrap().imbalance,
                r.imbalance
            );
        }
    }
}

#[test]
fn small_itr_moves_less_than_scratch_and_near_the_minimum() {
    let g = grid_graph(40, 40);
    let cur = ml_uniform(&g, 4);
    let targets = [1.0 / 3.0, 1.0, 1.0, 1.0];
    let low = rp(1e-3);
    let d = low.diffuse(&g, &cur, &targets, None).unwrap();
    let moved = moved_volume(&cur, &d, None).unwrap();
    let s = scratch_remap(&g, &cur, &targets, None, &rp(1000.0)).unwrap();
    let scratch_moved = moved_volume(&cur, &s, None).unwrap();
    let floor = must_move(&g, &cur, &targets, 0.03);
    assert!(floor > 100.0);
    assert!(moved >= floor, "{moved} < {floor}");
    assert!(moved <= scratch_moved, "{moved} > scratch {scratch_moved}");
    // Diffusion moves little more than the excess itself.
    assert!(moved <= 1.5 * floor, "{moved} vs floor {floor}");
}

#[test]
fn itr_trades_cut_against_moves() {
    let g = grid_graph(36, 36);
    let cur = ml_uniform(&g, 8);
    let targets = [1.0, 3.0, 1.0, 2.0, 1.0, 1.0, 2.5, 1.0];
    let low = rp(1e-3).repartition(&g, &cur, &targets, None).unwrap();
    let high = rp(1e4).repartition(&g, &cur, &targets, None).unwrap();
    assert!(low.moved <= high.moved, "{low:?} {high:?}");
    assert!(high.edge_cut <= low.edge_cut, "{low:?} {high:?}");
    // Each is the cheaper of the two candidates under its own itr.
    for (r, itr) in [(&low, 1e-3), (&high, 1e4)] {
        for scratch in [false, true] {
            let p = if scratch {
                scratch_remap(&g, &cur, &targets, None, &rp(itr)).unwrap()
            } else {
                rp(itr).diffuse(&g, &cur, &targets, None).unwrap()
            };
            let m = metrics(&g, &p, &targets).unwrap();
            let cost = itr * m.edge_cut + moved_volume(&cur, &p, None).unwrap();
            assert!(r.cost <= cost + 1e-9, "itr {itr}: {} > {cost}", r.cost);
        }
    }
}

#[test]
fn balanced_input_with_small_itr_stays() {
    let g = grid_graph(20, 25);
    let targets = [1.0, 2.0, 3.0];
    let cur = Multilevel::default().partition(&g, &targets).unwrap();
    let r = rp(1e-3).repartition(&g, &cur, &targets, None).unwrap();
    assert_eq!(r.moved_vertices, 0);
    assert_eq!(r.partition, cur);
}

#[test]
fn heavy_migration_sizes_stay_home() {
    // Part 0 must shed weight; its vertices on the left half are expensive to
    // move, so with a small itr only cheap ones leave.
    let g = grid_graph(20, 20);
    let cur = Partition::new(2, (0..400).map(|v| usize::from(v % 20 >= 14)).collect()).unwrap();
    let sizes: Vec<f64> = (0..400)
        .map(|v| if v % 20 < 10 { 1e6 } else { 1.0 })
        .collect();
    let p = rp(1.0)
        .diffuse(&g, &cur, &[1.0, 1.0], Some(&sizes))
        .unwrap();
    let m = metrics(&g, &p, &[1.0, 1.0]).unwrap();
    assert!(m.imbalance <= 0.03 + 1e-9, "{m:?}");
    let moved = cur.moved_to(&p).unwrap();
    assert!(moved.len() >= 70);
    assert!(moved.iter().all(|&v| v % 20 >= 10), "{moved:?}");
}

#[test]
fn relabel_undoes_a_permutation_within_equal_targets() {
    let g = grid_graph(12, 12);
    let targets = [1.0, 2.0, 1.0, 1.0];
    let cur = Multilevel::default().partition(&g, &targets).unwrap();
    // Swap labels 0 → 2 → 3 → 0 (equal targets) and keep 1.
    let perm = [2, 1, 3, 0];
    let shuffled = Partition::new(4, cur.parts.iter().map(|&q| perm[q]).collect()).unwrap();
    assert_eq!(relabel(&cur, &shuffled, &targets, None).unwrap(), cur);
    // Labels of different targets are never exchanged, however they overlap.
    let swap = [1, 0, 2, 3];
    let swapped = Partition::new(4, cur.parts.iter().map(|&q| swap[q]).collect()).unwrap();
    assert_eq!(relabel(&cur, &swapped, &targets, None).unwrap(), swapped);
}

/// The least `itr · cut + moved` over all balanced 2-way partitions.
fn brute_force(g: &Graph, cur: &Partition, targets: &[f64], tol: f64, itr: f64) -> f64 {
    let n = g.n();
    let mut best = f64::INFINITY;
    for mask in 0u32..(1 << n) {
        let p = Partition::new(2, (0..n).map(|v| (mask >> v) as usize & 1).collect()).unwrap();
        let m = metrics(g, &p, targets).unwrap();
        if m.imbalance <= tol + 1e-9 {
            best = best.min(itr * m.edge_cut + moved_volume(cur, &p, None).unwrap());
        }
    }
    best
}

/// Local search is a heuristic: on 36 tiny cases it reaches the optimum in
/// 29 and is within 25 % of it in all (measured; the bounds assert that).
#[test]
fn tiny_graphs_come_near_the_brute_force_optimum() {
    let mut worst: f64 = 1.0;
    let (mut exact, mut cases) = (0, 0);
    for (rows, cols) in [(1, 10), (3, 4), (4, 4), (3, 5)] {
        let g = grid_graph(rows, cols);
        let n = g.n();
        for split in [1, n / 4, n / 3] {
            // Part 1 holds the last `split` vertices; the targets ask for halves.
            let cur =
                Partition::new(2, (0..n).map(|v| usize::from(v >= n - split)).collect()).unwrap();
            for itr in [0.1, 1.0, 10.0] {
                let mut r = rp(itr);
                // Exact halves when n is even, one vertex over when odd.
                let tol = (n % 2) as f64 / n as f64 * 2.0;
                r.multilevel.tolerance = tol;
                let got = r.repartition(&g, &cur, &[1.0, 1.0], None).unwrap();
                assert!(
                    got.imbalance <= tol + 1e-9,
                    "{rows}x{cols} {split} {itr}: {got:?}"
                );
                let opt = brute_force(&g, &cur, &[1.0, 1.0], tol, itr);
                assert!(got.cost >= opt - 1e-9);
                cases += 1;
                if got.cost <= opt + 1e-9 {
                    exact += 1;
                }
                worst = worst.max(got.cost / opt);
            }
        }
    }
    assert!(worst <= 1.25 + 1e-9, "worst cost / optimum {worst}");
    assert!(exact * 5 >= cases * 4, "optimum in {exact} of {cases}");
}

#[test]
fn deterministic() {
    let g = grid_graph(25, 30);
    let cur = ml_uniform(&g, 5);
    let t = [2.0, 1.0, 1.0, 3.0, 1.0];
    let a = rp(10.0).repartition(&g, &cur, &t, None).unwrap();
    let b = rp(10.0).repartition(&g, &cur, &t, None).unwrap();
    assert_eq!(a, b);
}

#[test]
fn bad_input_is_an_error() {
    let g = grid_graph(5, 5);
    let cur = ml_uniform(&g, 2);
    let t = [1.0, 2.0];
    assert!(rp(0.0).repartition(&g, &cur, &t, None).is_err());
    assert!(rp(f64::NAN).repartition(&g, &cur, &t, None).is_err());
    assert!(rp(1.0)
        .repartition(&g, &cur, &[1.0, 1.0, 1.0], None)
        .is_err());
    assert!(rp(1.0).repartition(&g, &cur, &t, Some(&[1.0; 3])).is_err());
    let mut neg = vec![1.0; 25];
    neg[3] = -1.0;
    assert!(rp(1.0).repartition(&g, &cur, &t, Some(&neg)).is_err());
    assert!(rp(1.0)
        .repartition(&g, &cur, &[1.0, f64::NAN], None)
        .is_err());
    let short = Partition::new(2, vec![0; 24]).unwrap();
    assert!(rp(1.0).repartition(&g, &short, &t, None).is_err());
}

mod random {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(48))]
        /// Sparse random graphs (often disconnected, with isolated vertices),
        /// random current partitions (parts may be empty), random targets and
        /// migration sizes: never a panic, always a partition of the graph,
        /// and within the tolerance whenever partitioning from scratch is.
        #[test]
        fn never_panics_and_balances_when_scratch_does(
            n in 2usize..120,
            k in 2usize..7,
            edges in proptest::collection::vec((0usize..120, 0usize..120), 0..300),
            parts in proptest::collection::vec(0usize..7, 120),
            targets in proptest::collection::vec(0.2f64..5.0, 7),
            sizes in proptest::collection::vec(0.0f64..10.0, 120),
            itr in prop_oneof![Just(0.01), Just(1.0), Just(100.0)],
        ) {
            let mut pairs: Vec<(usize, usize)> = edges
                .into_iter()
                .filter(|&(a, b)| a < n && b < n && a != b)
                .map(|(a, b)| (a.min(b), a.max(b)))
                .collect();
            pairs.sort_unstable();
            pairs.dedup();
            let g = Graph::from_edges(n, pairs.into_iter().map(|(a, b)| (a, b, 1.0)), false).unwrap();
            let cur = Partition::new(k, parts[..n].iter().map(|&q| q % k).collect()).unwrap();
            let t = &targets[..k];
            let r = rp(itr).repartition(&g, &cur, t, Some(&sizes[..n]));
            let scratch = Multilevel::default().partition(&g, t);
            match (r, scratch) {
                (Ok(r), Ok(s)) => {
                    prop_assert_eq!(r.partition.len(), n);
                    prop_assert_eq!(r.partition.nparts, k);
                    let ms = metrics(&g, &s, t).unwrap();
                    if ms.imbalance <= 0.03 + 1e-9 {
                        prop_assert!(r.imbalance <= 0.03 + 1e-9, "{:?} vs scratch {:?}", r, ms);
                    }
                }
                (Err(_), Err(_)) => {}
                (a, b) => prop_assert!(false, "repartition {:?}, scratch {:?}", a.is_ok(), b.is_ok()),
            }
        }
    }
}
