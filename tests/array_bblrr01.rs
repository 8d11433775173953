//! Column-based decompositions against \[BBLRR01\]
//! §3.2.4 (Table 2, Figure 16) and §3.2.6 (Figure 17), against brute-force
//! enumeration of every column-based decomposition, and property tests.

use nuce::plan::array2d::column::{
    column_optimum, lemma1_bound, model_half_perimeter, partition_table,
};
use nuce::plan::array2d::cost::acost;
use nuce::plan::array2d::{
    acost_lower_bound, all_decomposers, ArrayDecomposer, ArrayPlan, ColumnDp, Hierarchical,
    KalinovLastovetsky, Slices,
};
use proptest::prelude::*;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Checks, independently of `ArrayPlan::validate`, that the plan's parts
/// cover every cell of its array exactly once (no overlap, no gap, nothing
/// outside); the first offending cell otherwise.
fn tiles_cell_by_cell(plan: &ArrayPlan) -> Result<(), String> {
    let (rows, cols) = (plan.rows, plan.cols);
    let mut owner = vec![usize::MAX; rows * cols];
    for (k, r) in plan.parts.iter().enumerate() {
        if r.row_end() > rows || r.col_end() > cols {
            return Err(format!("part {k} {r:?} leaves the {rows}x{cols} array"));
        }
        for i in r.row..r.row_end() {
            for j in r.col..r.col_end() {
                let o = &mut owner[i * cols + j];
                if *o != usize::MAX {
                    return Err(format!("cell ({i}, {j}) in parts {} and {k}", *o));
                }
                *o = k;
            }
        }
    }
    match owner.iter().position(|&o| o == usize::MAX) {
        Some(c) => Err(format!("cell ({}, {}) in no part", c / cols, c % cols)),
        None => Ok(()),
    }
}

/// The areas of the \[BBLRR01\] §3.2.4 example (Table 2, Figures 16–17).
const AREAS: [f64; 8] = [0.05, 0.05, 0.08, 0.1, 0.1, 0.12, 0.2, 0.3];

#[test]
fn table2_algorithm3_trace() {
    // Table 2 transcribed from [BBLRR01]: row C lists (q, f_C(q), a) for q = C..8.
    let table: [&[(f64, usize)]; 8] = [
        &[
            (1.05, 0),
            (1.2, 0),
            (1.54, 0),
            (2.12, 0),
            (2.9, 0),
            (4.0, 0),
            (5.9, 0),
            (9.0, 0),
        ],
        &[
            (2.1, 1),
            (2.28, 2),
            (2.56, 2),
            (2.94, 3),
            (3.5, 3),
            (4.38, 4),
            (5.76, 5),
        ],
        &[
            (3.18, 2),
            (3.38, 3),
            (3.66, 4),
            (4.0, 4),
            (4.58, 5),
            (5.5, 6),
        ],
        &[(4.28, 3), (4.48, 4), (4.78, 5), (5.2, 6), (5.88, 7)],
        &[(5.38, 4), (5.6, 5), (5.98, 6), (6.5, 7)],
        &[(6.5, 5), (6.8, 6), (7.28, 7)],
        &[(7.7, 6), (8.1, 7)],
        &[(9.0, 7)],
    ];
    let t = partition_table(&AREAS).unwrap();
    for (c, row) in table.iter().enumerate() {
        for (j, &(f, a)) in row.iter().enumerate() {
            let q = c + 1 + j;
            let got = t.perimeter[c][q];
            assert!(
                (got - f).abs() < 0.006,
                "f_{}({q}) = {got}, seed {f}",
                c + 1
            );
            assert_eq!(t.cut[c][q], a, "cut of f_{}({q})", c + 1);
        }
    }
    // Bold entries: C_opt = 3, rebuilt counts (3, 3, 2) (Algorithm 4).
    assert_eq!(t.best_columns(), 3);
    assert_eq!(t.rebuild(3), vec![3, 3, 2]);
}

#[test]
fn figure16_optimal_columns() {
    let opt = column_optimum(&AREAS, 1.0, 1.0, 0.0).unwrap();
    assert!((opt.half_perimeter - 5.5).abs() < 1e-12);
    let mut groups: Vec<Vec<usize>> = opt
        .columns
        .iter()
        .map(|c| {
            let mut c = c.clone();
            c.sort();
            c
        })
        .collect();
    groups.sort();
    assert_eq!(groups, vec![vec![0, 1, 2], vec![3, 4, 5], vec![6, 7]]);
    // The same on a 1000 × 1000 array, after rounding: Acost ≈ (5.5 − 2)·1000.
    let plan = ColumnDp::default().decompose(1000, 1000, &AREAS).unwrap();
    let a = acost(&plan) as f64;
    assert!((a - 3500.0).abs() <= 8.0, "acost {a}");
    // Lemma 1 bound and the [BBLRR01] §3.2.4 guarantee Ĉ/(2Σ√s) ≤ √r (1 + 1/√p).
    let lb = lemma1_bound(&AREAS).unwrap();
    assert!(lb <= 5.5);
    assert!(5.5 / lb <= (0.3f64 / 0.05).sqrt() * (1.0 + 1.0 / 8f64.sqrt()));
}

#[test]
fn figure17_kalinov_lastovetsky_and_slices() {
    // Two processor columns of four: Ĉ = 2 + 4·(0.5 + 0.5) = 6 (Figure 17).
    let grid = KalinovLastovetsky::grid(8, 2);
    assert!((model_half_perimeter(&grid, &AREAS, 1.0, 1.0) - 6.0).abs() < 1e-12);
    let kl = KalinovLastovetsky { columns: Some(2) };
    let plan = kl.decompose(1000, 1000, &AREAS).unwrap();
    assert!((acost(&plan) as f64 - 4000.0).abs() <= 8.0);
    // Horizontal slices: one column of 8, Ĉ = 1 + 8 = 9 (Table 2, C = 1,
    // q = 8; [BBLRR01]'s caption of Figure 17 says 8, counting differently).
    let plan = Slices.decompose(1000, 1000, &AREAS).unwrap();
    assert_eq!(acost(&plan), 7000);
    // The column DP beats both.
    let col = ColumnDp::default().decompose(1000, 1000, &AREAS).unwrap();
    assert!(acost(&col) < 4000 - 8);
}

/// Brute force: every set partition of the parts into columns (restricted
/// growth strings), every choice of the two end columns; model cost
/// `C·Lc + La·Σ k_j W_j + L·(V_i + p − 1)` with `V_i = Σ_j (k_j − 1)·sides_j`.
fn brute_force(w: &[f64], along: f64, across: f64, lat: f64) -> f64 {
    let p = w.len();
    let total: f64 = w.iter().sum();
    let mut label = vec![0usize; p];
    let mut best = f64::INFINITY;
    loop {
        let c = label.iter().max().unwrap() + 1;
        let mut k = vec![0usize; c];
        let mut wj = vec![0.0; c];
        for (i, &l) in label.iter().enumerate() {
            k[l] += 1;
            wj[l] += w[i] / total;
        }
        let hp: f64 = (0..c).map(|j| across + along * k[j] as f64 * wj[j]).sum();
        let mut v_best = if c == 1 { 0.0 } else { f64::INFINITY };
        for first in 0..c {
            for last in 0..c {
                if first == last {
                    continue;
                }
                let v: f64 = (0..c)
                    .map(|j| {
                        let sides = if j == first || j == last { 1.0 } else { 2.0 };
                        (k[j] - 1) as f64 * sides
                    })
                    .sum();
                v_best = v_best.min(v);
            }
        }
        best = best.min(hp + lat * (v_best + p as f64 - 1.0));
        // Next restricted growth string.
        let mut i = p;
        loop {
            if i == 1 {
                return best;
            }
            i -= 1;
            let m = label[..i].iter().max().copied().unwrap_or(0);
            if label[i] <= m {
                label[i] += 1;
                for l in label.iter_mut().skip(i + 1) {
                    *l = 0;
                }
                break;
            }
        }
    }
}

#[test]
fn dp_equals_brute_force_small_p() {
    let mut rng = ChaCha8Rng::seed_from_u64(2);
    for trial in 0..60 {
        let p = if trial < 2 { 10 } else { rng.gen_range(1..=8) };
        let w: Vec<f64> = (0..p).map(|_| rng.gen_range(0.05..5.0)).collect();
        let along = rng.gen_range(1.0..100.0);
        let across = rng.gen_range(1.0..100.0);
        let lat = if trial % 2 == 0 {
            0.0
        } else {
            rng.gen_range(0.0..50.0)
        };
        let dp = column_optimum(&w, along, across, lat).unwrap();
        let bf = brute_force(&w, along, across, lat);
        assert!(
            (dp.half_perimeter - bf).abs() <= 1e-9 * bf.max(1.0),
            "p={p} lat={lat}: dp {} brute {bf}",
            dp.half_perimeter
        );
        // The returned layout really has the model cost claimed (L = 0).
        if lat == 0.0 {
            let m = model_half_perimeter(&dp.columns, &w, along, across);
            assert!((m - bf).abs() <= 1e-9 * bf);
        }
    }
}

/// Brute force over the `2^(p−1)` segmentations of the sorted weights whose
/// columns keep every part at least one cell wide and high (`W_j·La ≥ 1`,
/// `W_j ≤ Lc·min_i w_i`); same latency model as [`brute_force`]. `None` if none.
fn brute_force_sorted_whole(w: &[f64], along: f64, across: f64, lat: f64) -> Option<f64> {
    let total: f64 = w.iter().sum();
    let mut s: Vec<f64> = w.iter().map(|x| x / total).collect();
    s.sort_by(f64::total_cmp);
    let p = s.len();
    let mut best: Option<f64> = None;
    for mask in 0u32..(1 << (p - 1)) {
        // Bit i set: a cut after sorted part i.
        let mut groups: Vec<(usize, f64, f64)> = vec![(0, 0.0, f64::INFINITY)];
        for (i, &x) in s.iter().enumerate() {
            let g = groups.last_mut().unwrap();
            g.0 += 1;
            g.1 += x;
            g.2 = g.2.min(x);
            if i + 1 < p && mask & (1 << i) != 0 {
                groups.push((0, 0.0, f64::INFINITY));
            }
        }
        let ok = groups
            .iter()
            .all(|&(_, wj, mn)| wj * along >= 1.0 - 1e-12 && wj <= across * mn * (1.0 + 1e-12));
        if !ok {
            continue;
        }
        let hp: f64 = groups
            .iter()
            .map(|&(k, wj, _)| across + along * k as f64 * wj)
            .sum();
        let c = groups.len();
        let mut ks: Vec<usize> = groups.iter().map(|g| g.0).collect();
        ks.sort_unstable_by(|a, b| b.cmp(a));
        let v: usize = if c == 1 {
            0
        } else {
            ks.iter().map(|k| 2 * (k - 1)).sum::<usize>() - (ks[0] - 1) - (ks[1] - 1)
        };
        let cost = hp + lat * (v + p - 1) as f64;
        best = Some(best.map_or(cost, |b: f64| b.min(cost)));
    }
    best
}

#[test]
fn whole_cell_dp_equals_brute_force() {
    use nuce::plan::array2d::column::column_optimum_whole_cells;
    let mut rng = ChaCha8Rng::seed_from_u64(5);
    let (mut feasible, mut binding) = (0, 0);
    for trial in 0..400 {
        let p = rng.gen_range(1..=8);
        let w: Vec<f64> = (0..p).map(|_| rng.gen_range(0.05..5.0)).collect();
        // Small extents so that the constraints bind.
        let along = rng.gen_range(1.0..12.0);
        let across = rng.gen_range(1.0..12.0);
        let lat = if trial % 2 == 0 {
            0.0
        } else {
            rng.gen_range(0.0..5.0)
        };
        let dp = column_optimum_whole_cells(&w, along, across, lat).unwrap();
        let bf = brute_force_sorted_whole(&w, along, across, lat);
        match (&dp, bf) {
            (Some(d), Some(b)) => {
                feasible += 1;
                let free = brute_force(&w, along, across, lat);
                if b > free + 1e-9 {
                    binding += 1;
                }
                assert!(
                    (d.half_perimeter - b).abs() <= 1e-9 * b.max(1.0),
                    "trial {trial} p={p}: dp {} brute {b}",
                    d.half_perimeter
                );
            }
            (None, None) => {}
            _ => panic!("trial {trial}: feasibility differs: dp {dp:?} brute {bf:?}"),
        }
    }
    assert!(
        feasible > 100 && binding > 10,
        "{feasible} feasible, {binding} binding"
    );
}

#[test]
fn fast_dp_equals_algorithm3() {
    let mut rng = ChaCha8Rng::seed_from_u64(3);
    for _ in 0..20 {
        let p = rng.gen_range(1..=60);
        let w: Vec<f64> = (0..p).map(|_| rng.gen_range(0.01..1.0)).collect();
        let total: f64 = w.iter().sum();
        let s: Vec<f64> = w.iter().map(|x| x / total).collect();
        let t = partition_table(&s).unwrap();
        let slow = t.perimeter[t.best_columns() - 1][p];
        let fast = column_optimum(&w, 1.0, 1.0, 0.0).unwrap().half_perimeter;
        assert!((slow - fast).abs() < 1e-9, "p={p}: {slow} vs {fast}");
    }
}

#[test]
fn column_dp_meets_lower_bound_for_equal_squares() {
    // 16 equal parts of a 64×64 array: 4×4 squares of 16×16, the Lemma 1 bound.
    let plan = ColumnDp::default().decompose(64, 64, &[1.0; 16]).unwrap();
    assert_eq!(
        acost(&plan) as f64,
        acost_lower_bound(64, 64, &[1.0; 16]).unwrap()
    );
}

#[test]
fn latency_prefers_fewer_edges() {
    use nuce::plan::array2d::cost::internal_edges;
    let mut rng = ChaCha8Rng::seed_from_u64(4);
    let w: Vec<f64> = (0..30).map(|_| rng.gen_range(0.5..2.0)).collect();
    let a = ColumnDp::default().decompose(300, 500, &w).unwrap();
    let b = ColumnDp::with_latency(400.0)
        .decompose(300, 500, &w)
        .unwrap();
    assert!(internal_edges(&b) < internal_edges(&a));
    assert!(acost(&b) >= acost(&a));
}

/// For a part rounded from real extents `(h, v)` with `|r − h| < 1` and
/// `|c − v| < 1`, its ideal area `A = h·v` satisfies `(r−1)(c−1) < A < (r+1)(c+1)`.
fn check_rounding(plan: &ArrayPlan, speeds: &[f64]) {
    let total: f64 = speeds.iter().sum();
    let cells = (plan.rows * plan.cols) as f64;
    for (r, s) in plan.parts.iter().zip(speeds) {
        let ideal = s / total * cells;
        let (h, v) = (r.rows as f64, r.cols as f64);
        if !r.is_empty() {
            assert!(ideal > (h - 1.0) * (v - 1.0) - 1e-9, "{r:?} ideal {ideal}");
        }
        assert!(
            ideal < (h + 1.0) * (v + 1.0) + 1e-9 || r.is_empty(),
            "{r:?} ideal {ideal}"
        );
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn every_decomposer_tiles_in_input_order(
        rows in 1usize..60,
        cols in 1usize..60,
        speeds in prop::collection::vec(0.1f64..10.0, 1..24),
    ) {
        // Every decomposer rounds each cut to the nearest whole line, at most
        // half a line (max(rows, cols) / 2 cells) off, once per level of its
        // layout: ⌈log2 p⌉ levels (a column layout's two roundings, width
        // then height, are within that for p ≥ 3). So no part exceeds its
        // share by more than E, and the imbalance is at most E·Σs / (s_min · cells).
        let p = speeds.len() as f64;
        let e = p.log2().ceil() * rows.max(cols) as f64 / 2.0;
        let sum: f64 = speeds.iter().sum();
        let s_min = speeds.iter().copied().fold(f64::INFINITY, f64::min);
        let bound = e * sum / (s_min * (rows * cols) as f64);
        for d in all_decomposers() {
            let plan = d.decompose(rows, cols, &speeds).unwrap();
            prop_assert_eq!(plan.parts.len(), speeds.len());
            prop_assert!(plan.validate().is_ok());
            prop_assert_eq!(tiles_cell_by_cell(&plan), Ok(()), "{}", d.name());
            let imb = plan.imbalance(&speeds).unwrap();
            prop_assert!((-1e-12..=bound + 1e-9).contains(&imb),
                "{}: imbalance {imb}, bound {bound}", d.name());
        }
    }

    #[test]
    fn column_based_rounding_is_within_one_cell(
        rows in 20usize..200,
        cols in 20usize..200,
        speeds in prop::collection::vec(0.5f64..4.0, 1..12),
        lat in 0.0f64..20.0,
    ) {
        for d in [
            Box::new(ColumnDp::with_latency(lat)) as Box<dyn ArrayDecomposer>,
            Box::new(KalinovLastovetsky::default()),
            Box::new(Slices),
        ] {
            let plan = d.decompose(rows, cols, &speeds).unwrap();
            check_rounding(&plan, &speeds);
            // Imbalance bounded by the rounding of each extent.
            if plan.parts.iter().all(|r| r.rows >= 2 && r.cols >= 2) {
                let bound = plan.parts.iter().map(|r| {
                    let (h, v) = (r.rows as f64, r.cols as f64);
                    h * v / ((h - 1.0) * (v - 1.0)) - 1.0
                }).fold(0.0, f64::max);
                prop_assert!(plan.imbalance(&speeds).unwrap() <= bound + 1e-9);
            }
        }
    }

    #[test]
    fn rounded_acost_tracks_the_model(
        rows in 60usize..400,
        cols in 60usize..400,
        speeds in prop::collection::vec(0.5f64..4.0, 1..20),
    ) {
        // Vertical cuts are exact; each of the ≤ p − 1 horizontal cuts is off
        // by less than one cell, so |Acost − model| < p.
        let (layout, model) = ColumnDp::default().layout(rows, cols, &speeds).unwrap();
        let plan = layout.realize("column", rows, cols, &speeds).unwrap();
        prop_assert!((acost(&plan) as f64 - model).abs() < speeds.len() as f64);
        prop_assert!(model >= acost_lower_bound(rows, cols, &speeds).unwrap() - 1e-6);
    }

    #[test]
    fn column_dp_never_worse_than_kl_or_slices_in_model(
        speeds in prop::collection::vec(0.1f64..10.0, 1..40),
        along in 1.0f64..100.0,
        across in 1.0f64..100.0,
    ) {
        let opt = column_optimum(&speeds, along, across, 0.0).unwrap().half_perimeter;
        let p = speeds.len();
        for c in 1..=p {
            let kl = model_half_perimeter(&KalinovLastovetsky::grid(p, c), &speeds, along, across);
            prop_assert!(opt <= kl + 1e-9);
        }
        // [BBLRR01] §3.2.4 guarantee on the unit square.
        let unit = column_optimum(&speeds, 1.0, 1.0, 0.0).unwrap().half_perimeter;
        let r = speeds.iter().cloned().fold(0.0, f64::max) / speeds.iter().cloned().fold(f64::INFINITY, f64::min);
        let lb = lemma1_bound(&speeds).unwrap();
        prop_assert!(unit >= lb - 1e-9);
        prop_assert!(unit / lb <= r.sqrt() * (1.0 + 1.0 / (p as f64).sqrt()) + 1e-9);
    }

    #[test]
    fn hierarchical_hosts_are_rectangles(
        speeds in prop::collection::vec(0.5f64..4.0, 1..30),
        hosts_seed in 0u64..1000,
        rows in 10usize..120,
        cols in 10usize..120,
    ) {
        let mut rng = ChaCha8Rng::seed_from_u64(hosts_seed);
        let nh = rng.gen_range(1..=4usize);
        let hosts: Vec<usize> = speeds.iter().map(|_| rng.gen_range(0..nh) * 10).collect();
        let plan = Hierarchical::new(hosts.clone()).decompose(rows, cols, &speeds).unwrap();
        prop_assert_eq!(plan.parts.len(), speeds.len());
        prop_assert_eq!(tiles_cell_by_cell(&plan), Ok(()));
        // Host totals: the hosts (in order of first appearance) get the
        // areas a ColumnDp plan gives their total speeds.
        let mut order: Vec<usize> = Vec::new();
        for &h in &hosts {
            if !order.contains(&h) {
                order.push(h);
            }
        }
        let totals: Vec<f64> = order
            .iter()
            .map(|&h| hosts.iter().zip(&speeds).filter(|(&x, _)| x == h).map(|(_, s)| s).sum())
            .collect();
        let across = ColumnDp::default().decompose(rows, cols, &totals).unwrap();
        for (k, &h) in order.iter().enumerate() {
            let area: usize = plan.parts.iter().zip(&hosts)
                .filter(|(_, &x)| x == h).map(|(r, _)| r.area()).sum();
            prop_assert_eq!(area, across.parts[k].area(), "host {} of {:?}", h, hosts);
        }
        for h in 0..nh {
            let own: Vec<_> = plan.parts.iter().zip(&hosts)
                .filter(|(r, &x)| x == h * 10 && !r.is_empty()).map(|(r, _)| *r).collect();
            if own.is_empty() { continue; }
            let r0 = own.iter().map(|r| r.row).min().unwrap();
            let r1 = own.iter().map(|r| r.row_end()).max().unwrap();
            let c0 = own.iter().map(|r| r.col).min().unwrap();
            let c1 = own.iter().map(|r| r.col_end()).max().unwrap();
            let area: usize = own.iter().map(|r| r.area()).sum();
            prop_assert_eq!(area, (r1 - r0) * (c1 - c0));
        }
    }
}

#[test]
fn whole_cells_avoid_an_empty_part() {
    use nuce::plan::array2d::ColumnLayout;
    let s = [4.42, 2.28, 4.03, 2.32, 0.61, 3.08];
    let (rows, cols) = (6, 7);
    // The unrestricted optimum (best orientation) leaves a part empty...
    let m = |a: f64, b: f64| column_optimum(&s, a, b, 0.0).unwrap();
    let (v, h) = (m(cols as f64, rows as f64), m(rows as f64, cols as f64));
    let (o, t) = if h.half_perimeter < v.half_perimeter {
        (h, true)
    } else {
        (v, false)
    };
    let free = ColumnLayout {
        columns: o.columns,
        transposed: t,
    }
    .realize("free", rows, cols, &s)
    .unwrap();
    assert!(free.parts.iter().any(|r| r.is_empty()));
    // ...ColumnDp does not.
    let dp = ColumnDp::default().decompose(rows, cols, &s).unwrap();
    assert!(dp.parts.iter().all(|r| !r.is_empty()));
}

#[test]
fn extreme_speeds_do_not_break_plans() {
    // Valid speeds whose sum overflows, or whose ratio underflows.
    for speeds in [
        vec![1e308, 1e308, 1.0],
        vec![1.7e308, 1e-300],
        vec![5e-324, 1.0],
    ] {
        for (rows, cols) in [(1, 1), (3, 2), (1000, 3)] {
            let mut algos = all_decomposers();
            algos.push(Box::new(Hierarchical::new(vec![0; speeds.len()])));
            algos.push(Box::new(nuce::plan::array2d::Best::default()));
            for d in algos {
                let plan = d.decompose(rows, cols, &speeds);
                assert!(
                    plan.is_ok(),
                    "{} {speeds:?} {rows}x{cols}: {plan:?}",
                    d.name()
                );
                let tiled = tiles_cell_by_cell(&plan.unwrap());
                assert_eq!(tiled, Ok(()), "{} {speeds:?} {rows}x{cols}", d.name());
            }
            assert!(acost_lower_bound(rows, cols, &speeds).unwrap().is_finite());
        }
    }
}
