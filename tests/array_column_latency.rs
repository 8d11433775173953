//! `ColumnDp` (\[BBLRR01\] §3.2.4) against \[KRW96\]'s
//! exhaustive XY2 (\[KRW96\] §4–§6, Lemma 3, Table 5–7) on
//! the integer cost `Acost + latency × internal edges` (\[KRW96\] §5): the
//! column-based class is the XY class, and the DP must never pick a plan
//! that XY2's enumeration of the `pt(p)` sorted candidates beats.

use nuce::plan::array2d::column::plan_cost;
use nuce::plan::array2d::cost::{acost, internal_edges, latency_cost};
use nuce::plan::array2d::{ArrayDecomposer, ColumnDp, Xy2};
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Integer costs of ColumnDp and XY2 on one input.
fn costs(rows: usize, cols: usize, speeds: &[f64], latency: f64) -> (f64, f64) {
    let dp = ColumnDp::with_latency(latency)
        .decompose(rows, cols, speeds)
        .unwrap();
    let xy2 = Xy2 { latency }.decompose(rows, cols, speeds).unwrap();
    (plan_cost(&dp, latency), plan_cost(&xy2, latency))
}

#[test]
fn equal_speeds_use_aligned_cuts() {
    // [KRW96] §5: XY2 picks 5 columns of 4 equal parts, whose horizontal cuts
    // line up (Acost 7000, 31 internal edges, cost 10 100). The generic-edge
    // model alone picked unequal columns (Acost 7200, 39 edges, 11 100).
    let speeds = [1.0; 20];
    let plan = ColumnDp::with_latency(100.0)
        .decompose(1000, 1000, &speeds)
        .unwrap();
    let xy2 = Xy2 { latency: 100.0 }
        .decompose(1000, 1000, &speeds)
        .unwrap();
    assert_eq!(latency_cost(&xy2, 100.0), 10_100.0);
    assert!(
        latency_cost(&plan, 100.0) <= latency_cost(&xy2, 100.0),
        "column: Acost {} edges {}",
        acost(&plan),
        internal_edges(&plan)
    );
}

#[test]
fn never_worse_than_xy2_on_krw96_like_inputs() {
    // Inputs drawn like [KRW96]'s grid ([KRW96] §6.4; examples/array_eval.rs):
    // one speed 1, one speed `ratio`, the rest uniform in between.
    let mut rng = ChaCha8Rng::seed_from_u64(2026);
    let mut checked = 0;
    for _ in 0..150 {
        let p = *[4usize, 5, 7, 10, 15, 20].choose(&mut rng).unwrap();
        let ratio = *[1.0, 2.0, 3.0, 4.0, 8.0].choose(&mut rng).unwrap();
        let cols = *[1000usize, 2000, 3000, 5000].choose(&mut rng).unwrap();
        let mut speeds = vec![1.0, ratio];
        speeds.extend((2..p).map(|_| rng.gen_range(1.0..=ratio)));
        speeds.shuffle(&mut rng);
        for latency in [0.0, 100.0, 1000.0] {
            let (dp, xy2) = costs(1000, cols, &speeds, latency);
            assert!(
                dp <= xy2,
                "1000x{cols} latency {latency} {speeds:?}: column {dp} > xy2 {xy2}"
            );
            checked += 1;
        }
    }
    assert_eq!(checked, 450);
}

#[test]
fn never_worse_than_xy2_on_small_arrays() {
    // Small arrays stress the rounding (and empty parts): ColumnDp costs
    // its candidates exactly, XY2 enumerates all sorted ones.
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    for _ in 0..200 {
        let p = rng.gen_range(1..=9);
        let rows = rng.gen_range(p..=40);
        let cols = rng.gen_range(p..=40);
        let speeds: Vec<f64> = (0..p).map(|_| rng.gen_range(1.0..4.0)).collect();
        let latency = *[0.0, 3.0, 30.0].choose(&mut rng).unwrap();
        let dp = ColumnDp::with_latency(latency)
            .decompose(rows, cols, &speeds)
            .unwrap();
        let xy2 = Xy2 { latency }.decompose(rows, cols, &speeds).unwrap();
        // Only plans without empty parts compete (ColumnDp avoids them first).
        if xy2.parts.iter().any(|r| r.is_empty()) {
            continue;
        }
        assert!(dp.parts.iter().all(|r| !r.is_empty()));
        assert!(
            plan_cost(&dp, latency) <= plan_cost(&xy2, latency),
            "{rows}x{cols} latency {latency} {speeds:?}: column {} > xy2 {}",
            plan_cost(&dp, latency),
            plan_cost(&xy2, latency)
        );
    }
}

#[test]
fn latency_free_plan_is_the_integer_optimum_of_sorted_segmentations() {
    // Brute force: every segmentation of the ascending order into slabs
    // (2^(p−1)), both orientations, realised on the integer plan. At
    // latency 0 ColumnDp costs every segmentation that rounding could make
    // cheaper than its best, so nothing here may beat it.
    use nuce::plan::array2d::ColumnLayout;
    let mut rng = ChaCha8Rng::seed_from_u64(9);
    for _ in 0..300 {
        let p = rng.gen_range(1..=10);
        let (rows, cols) = (rng.gen_range(40..300), rng.gen_range(40..300));
        let speeds: Vec<f64> = (0..p).map(|_| rng.gen_range(1.0..8.0)).collect();
        let mut order: Vec<usize> = (0..p).collect();
        order.sort_by(|&a, &b| speeds[a].total_cmp(&speeds[b]));
        let mut best = usize::MAX;
        for mask in 0u32..(1 << (p - 1)) {
            let mut columns = vec![vec![order[0]]];
            for (i, &part) in order.iter().enumerate().skip(1) {
                if mask >> (i - 1) & 1 == 1 {
                    columns.push(Vec::new());
                }
                if let Some(c) = columns.last_mut() {
                    c.insert(0, part);
                }
            }
            for transposed in [false, true] {
                let layout = ColumnLayout {
                    columns: columns.clone(),
                    transposed,
                };
                let plan = layout.realize("brute", rows, cols, &speeds).unwrap();
                if plan.parts.iter().all(|r| !r.is_empty()) {
                    best = best.min(acost(&plan));
                }
            }
        }
        let dp = ColumnDp::default().decompose(rows, cols, &speeds).unwrap();
        assert!(
            acost(&dp) <= best,
            "{rows}x{cols} {speeds:?}: column {} > brute force {best}",
            acost(&dp)
        );
    }
}
