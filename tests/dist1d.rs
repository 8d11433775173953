//! 1D distributions against \[BBLRR01\] §2: Table 1,
//! Figure 3's chunk of 7, Figure 6, Figure 8, the LU pattern of §2.4.2, and
//! an independent optimality oracle.

use nuce::plan::dist1d::{
    cyclic_owners, incremental_sequence, lu_update_costs, makespan, optimal_counts,
    ChunkDistributor, Incremental, LuSlices, Panels, Static,
};
use proptest::prelude::*;

const T: [f64; 3] = [3.0, 5.0, 8.0];

/// Oracle: the optimal makespan for `s` chunks is the `s`-th smallest value
/// of the multiset `{k·t_i : k ≥ 1}` (each chunk on processor i beyond its
/// k−1 first costs k·t_i; an exchange argument shows greedy is optimal).
fn optimal_makespan(s: usize, t: &[f64]) -> f64 {
    if s == 0 {
        return 0.0;
    }
    let mut v: Vec<f64> = t
        .iter()
        .flat_map(|&ti| (1..=s).map(move |k| k as f64 * ti))
        .collect();
    v.sort_by(f64::total_cmp);
    v[s - 1]
}

#[test]
fn table1_algorithm2() {
    // Table 1: B = 78, t = (3, 5, 8) → (40, 24, 14), max c·t = 120.
    let c = optimal_counts(78, &T).unwrap();
    assert_eq!(c, vec![40, 24, 14]);
    assert_eq!(makespan(&c, &T), 120.0);
    // The initialisation row of Table 1: ⌊share·78⌋ = (39, 23, 14), i.e. 76 chunks.
    assert_eq!(optimal_counts(76, &T).unwrap().iter().sum::<usize>(), 76);
    // §2.1 / Figure 3: t = (1, 2, 4), chunks of 7 rows → 4, 2, 1.
    assert_eq!(optimal_counts(7, &[1.0, 2.0, 4.0]).unwrap(), vec![4, 2, 1]);
    // Figure 6: B = 10 → (5, 3, 2).
    assert_eq!(optimal_counts(10, &T).unwrap(), vec![5, 3, 2]);
}

#[test]
fn figure8_incremental() {
    // "Selected proc." column of Figure 8, and the cost column max(c·t)/Σc.
    let seq = incremental_sequence(10, &T).unwrap();
    assert_eq!(seq, vec![0, 1, 0, 2, 0, 1, 0, 0, 1, 2]);
    let costs = [3.0, 2.5, 2.0, 2.0, 1.8, 1.67, 1.71, 1.87, 1.67, 1.6];
    let mut c = [0usize; 3];
    for (k, &j) in seq.iter().enumerate() {
        c[j] += 1;
        let avg = makespan(&c, &T) / (k + 1) as f64;
        assert!((avg - costs[k]).abs() < 0.01, "step {}: {avg}", k + 1);
    }
}

#[test]
fn lu_reversed_pattern() {
    // §2.4.2: pattern P3 P2 P1 P1 P2 P1 P3 P1 P2 P1 within a slice of 10.
    let plan = LuSlices { slice: 10 }.distribute(25, &T).unwrap();
    assert_eq!(&plan.owners[..10], &[2, 1, 0, 0, 1, 0, 2, 0, 1, 0]);
    assert_eq!(&plan.owners[10..20], &plan.owners[..10]);
    // The last slice of 5 is reversed on its own: σ(5..1) = P1 P3 P1 P2 P1.
    assert_eq!(&plan.owners[20..], &[0, 2, 0, 1, 0]);
}

#[test]
fn figure10_lu_updates_are_optimal_at_every_step() {
    for t in [T.to_vec(), vec![1.0, 1.7, 2.2, 9.0], vec![2.0, 2.0, 3.0]] {
        let b = 40;
        let ours = LuSlices::default().distribute(b, &t).unwrap();
        let costs = lu_update_costs(&ours.owners, &t).unwrap();
        let cyc = lu_update_costs(&cyclic_owners(b, t.len()), &t).unwrap();
        assert_eq!(costs.len(), b - 1);
        for (k, (&c, &y)) in costs.iter().zip(&cyc).enumerate() {
            // After block k+1, B−k−1 blocks remain: optimally balanced.
            assert_eq!(c, optimal_makespan(b - k - 1, &t), "step {}", k + 1);
            assert!(c <= y);
        }
        assert!(costs.iter().sum::<f64>() < cyc.iter().sum::<f64>());
    }
}

#[test]
fn figure6_panels() {
    let p = Panels { period: 10 };
    let (order, counts) = p.pattern(10, &T).unwrap();
    assert_eq!(counts, vec![5, 3, 2]);
    // c·t = 15, 15, 16: P1, P2, P3.
    assert_eq!(order, vec![0, 1, 2]);
    let plan = p.distribute(23, &T).unwrap();
    let panel = [0, 0, 0, 0, 0, 1, 1, 1, 2, 2];
    assert_eq!(&plan.owners[..10], &panel);
    assert_eq!(&plan.owners[10..20], &panel);
    assert_eq!(&plan.owners[20..], &[0, 0, 0]);
    // Processors are sorted by c·t: a slow one with a small c·t goes first.
    let (order, counts) = Panels { period: 6 }.pattern(6, &[1.0, 1.0, 10.0]).unwrap();
    assert_eq!(counts, vec![3, 3, 0]);
    assert_eq!(order[0], 2);
}

proptest! {
    #[test]
    fn algorithm2_and_incremental_are_optimal(
        t in prop::collection::vec(0.5f64..10.0, 1..7),
        b in 0usize..60,
    ) {
        let st = Static.distribute(b, &t).unwrap();
        prop_assert_eq!(st.counts.iter().sum::<usize>(), b);
        prop_assert_eq!(st.makespan, optimal_makespan(b, &t));
        // Owners are contiguous blocks in input order.
        prop_assert!(st.owners.windows(2).all(|w| w[0] <= w[1]));
        let inc = Incremental.distribute(b, &t).unwrap();
        let mut c = vec![0usize; t.len()];
        for (k, &j) in inc.owners.iter().enumerate() {
            c[j] += 1;
            prop_assert_eq!(makespan(&c, &t), optimal_makespan(k + 1, &t));
        }
        let pan = Panels { period: 7 }.distribute(b, &t).unwrap();
        prop_assert_eq!(pan.owners.len(), b);
    }
}

#[test]
fn panel_sweep_matches_flow_shop_and_beats_cyclic() {
    use nuce::plan::dist1d::sweep_makespan;
    for t in [T.to_vec(), vec![1.0, 4.0, 9.0], vec![2.0, 3.0, 7.0, 1.5]] {
        for rows in [1, 7, 30] {
            // One panel: a flow shop of `rows` identical jobs whose stages take
            // c_i·t_i, in any stage order: Σ c_i t_i + (rows − 1)·max c_i t_i.
            let b = 10;
            let plan = Panels { period: b }.distribute(b, &t).unwrap();
            let stages: Vec<f64> = plan
                .counts
                .iter()
                .zip(&t)
                .map(|(&c, &ti)| c as f64 * ti)
                .collect();
            let flow = stages.iter().sum::<f64>()
                + (rows - 1) as f64 * stages.iter().cloned().fold(0.0, f64::max);
            assert_eq!(sweep_makespan(&plan.owners, rows, &t).unwrap(), flow);
            // Several panels: better than cyclic, never better than the work bound.
            let cols = 4 * b;
            let plan = Panels { period: b }.distribute(cols, &t).unwrap();
            let ours = sweep_makespan(&plan.owners, rows, &t).unwrap();
            let cyclic = sweep_makespan(&cyclic_owners(cols, t.len()), rows, &t).unwrap();
            let ideal = (rows * cols) as f64 / t.iter().map(|x| 1.0 / x).sum::<f64>();
            assert!(ours >= ideal - 1e-9);
            assert!(
                ours < cyclic,
                "{t:?} rows {rows}: {ours} vs cyclic {cyclic}"
            );
        }
    }
}
