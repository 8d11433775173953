//! Divisible work (\[AJ88\]): the LP of eq. (7) against its
//! constraints, brute force, the special case a = b, integer rounding and
//! heterogeneous workers.

use nuce::plan::divisible::{
    evaluate, round_pieces, solve_ordered, AffineCost, AgrawalJagadish, DivisiblePartitioner,
    HeteroDivisible, WorkerCosts, WorkerCount,
};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

fn costs(a: (f64, f64), y: (f64, f64), b: (f64, f64)) -> WorkerCosts {
    WorkerCosts::new(
        AffineCost::new(a.0, a.1),
        AffineCost::new(y.0, y.1),
        AffineCost::new(b.0, b.1),
    )
    .unwrap()
}

/// Checks every row of eq. (7) written out independently: rows k (5a),
/// row n+1 (5b), row n+2 (Σ s = 1), s ≥ 0; returns the tightest T.
fn check_constraints(w: &[WorkerCosts], s: &[f64], t: f64) {
    let n = s.len();
    assert!((s.iter().sum::<f64>() - 1.0).abs() < 1e-7);
    assert!(s.iter().all(|&x| x >= -1e-9));
    let mut tight = false;
    for k in 0..n {
        let mut row = 0.0;
        for i in 0..n {
            if i < k {
                row += w[i].input.at(s[i]);
            } else if i == k {
                row += w[i].input.at(s[i]) + w[i].compute.at(s[i]) + w[i].output.at(s[i]);
            } else {
                row += w[i].output.at(s[i]);
            }
        }
        assert!(row <= t + 1e-7, "row {k}: {row} > {t}");
        tight |= (row - t).abs() < 1e-6;
    }
    let lb: f64 = (0..n)
        .map(|i| w[i].input.at(s[i]) + w[i].output.at(s[i]))
        .sum();
    assert!(lb <= t + 1e-7);
    tight |= (lb - t).abs() < 1e-6;
    assert!(tight, "T is not attained by any row");
}

#[test]
fn lp_solutions_satisfy_eq_7_and_match_the_schedule() {
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    for _ in 0..30 {
        let n = rng.gen_range(1..8);
        let c = costs(
            (rng.gen_range(0.0..2.0), rng.gen_range(0.0..3.0)),
            (rng.gen_range(0.0..1.0), rng.gen_range(5.0..50.0)),
            (rng.gen_range(0.0..1.0), rng.gen_range(0.0..2.0)),
        );
        let plan = c.optimal_partition(n).unwrap();
        let w = vec![c; n];
        check_constraints(&w, &plan.fractions, plan.makespan);
        // The schedule's exact makespan (zero pieces idle) is never worse.
        assert!(evaluate(&w, &plan.fractions) <= plan.makespan + 1e-7);
        // Optimal beats the equal split ([AJ88] §3.6).
        assert!(plan.makespan <= c.equal_partition(n).unwrap().makespan + 1e-7);
    }
}

#[test]
fn two_pieces_against_a_grid_search() {
    let c = costs((1.21, 1.05), (0.0, 44.52), (0.10, 1.59));
    let plan = c.optimal_partition(2).unwrap();
    let w = [c, c];
    let grid = (0..=20000)
        .map(|k| {
            let s1 = k as f64 / 20000.0;
            // Both pieces are sent (eq. 7 charges both intercepts).
            let a = |s: f64| c.input.at(s);
            let b = |s: f64| c.output.at(s);
            let (s2, y) = (1.0 - s1, |s: f64| c.compute.at(s));
            let r1 = a(s1) + y(s1) + b(s1) + b(s2);
            let r2 = a(s1) + a(s2) + y(s2) + b(s2);
            r1.max(r2).max(a(s1) + a(s2) + b(s1) + b(s2))
        })
        .fold(f64::INFINITY, f64::min);
    assert!(
        (plan.makespan - grid).abs() < 1e-3,
        "{} vs {grid}",
        plan.makespan
    );
    assert!((evaluate(&w, &plan.fractions) - plan.makespan).abs() < 1e-9);
}

#[test]
fn special_case_a_equals_b_gives_equal_pieces() {
    // [AJ88] §2.4: a(.) = b(.) affine ⇒ s_k = 1/n.
    for n in 2..7 {
        let c = costs((0.3, 2.0), (0.1, 30.0), (0.3, 2.0));
        let plan = c.optimal_partition(n).unwrap();
        for f in &plan.fractions {
            assert!((f - 1.0 / n as f64).abs() < 1e-7, "{:?}", plan.fractions);
        }
    }
}

#[test]
fn input_heavier_than_output_gives_decreasing_pieces() {
    // Table 3.3's shape: earlier pieces are larger when a(.) > b(.).
    let c = costs((1.21, 1.05), (0.0, 44.52), (0.10, 1.59));
    let plan = c.optimal_partition(5).unwrap();
    assert!(plan.fractions.windows(2).all(|w| w[0] > w[1]));
}

#[test]
fn optimal_worker_count_is_the_best_n() {
    let c = costs((1.21, 1.05), (0.0, 44.52), (0.10, 1.59));
    let auto = AgrawalJagadish {
        workers: WorkerCount::Auto { max: 20 },
    }
    .plan(&c)
    .unwrap();
    let best = (1..=20)
        .map(|n| c.optimal_partition(n).unwrap().makespan)
        .fold(f64::INFINITY, f64::min);
    assert!((auto.makespan - best).abs() < 1e-9);
    assert!(auto.workers > 1 && auto.workers < 20);
}

#[test]
fn integer_pieces_are_exact_and_close_to_the_lp() {
    let c = costs((1.21, 1.05), (0.0, 44.52), (0.10, 1.59));
    let plan = c.optimal_partition(5).unwrap();
    let w = vec![c; 5];
    let r = round_pieces(&w, &plan.fractions, 100).unwrap();
    assert_eq!(r.units.iter().sum::<u64>(), 100);
    let sizes: Vec<f64> = r.units.iter().map(|&u| u as f64 / 100.0).collect();
    assert!((evaluate(&w, &sizes) - r.makespan).abs() < 1e-12);
    assert!(r.makespan >= plan.makespan - 1e-9);
    assert!(r.makespan <= plan.makespan * 1.05);
    assert!(round_pieces(&w, &plan.fractions, 0).is_err());
}

#[test]
fn heterogeneous_exhaustive_and_heuristic() {
    let mut rng = ChaCha8Rng::seed_from_u64(4);
    for _ in 0..5 {
        let p = 5;
        let w: Vec<WorkerCosts> = (0..p)
            .map(|_| {
                costs(
                    (rng.gen_range(0.1..1.0), rng.gen_range(0.5..2.0)),
                    (0.0, rng.gen_range(10.0..60.0)),
                    (rng.gen_range(0.0..0.3), rng.gen_range(0.2..1.0)),
                )
            })
            .collect();
        let exact = HeteroDivisible::default().plan(&w).unwrap();
        let heur = HeteroDivisible {
            exhaustive_up_to: 0,
            ..HeteroDivisible::default()
        }
        .plan(&w)
        .unwrap();
        let ordered: Vec<WorkerCosts> = exact.order.iter().map(|&i| w[i]).collect();
        check_constraints(&ordered, &exact.fractions, exact.makespan);
        assert!(heur.makespan >= exact.makespan - 1e-7);
        assert!(
            heur.makespan <= exact.makespan * 1.10,
            "{} vs {}",
            heur.makespan,
            exact.makespan
        );
        // Identity order over all workers is one of the candidates.
        let (_, all) = solve_ordered(&w).unwrap();
        assert!(exact.makespan <= all + 1e-7);
    }
}

#[test]
fn bad_input_is_an_error() {
    assert!(solve_ordered(&[]).is_err());
    assert!(WorkerCosts::new(
        AffineCost::new(f64::NAN, 1.0),
        AffineCost::new(0.0, 1.0),
        AffineCost::new(0.0, 1.0)
    )
    .is_err());
    let c = costs((0.0, 0.0), (0.0, 1.0), (0.0, 0.0));
    assert!(c.optimal_partition(0).is_err());
}

#[test]
fn partitioners_are_interchangeable_on_identical_workers() {
    let c = costs((0.5, 1.0), (0.0, 30.0), (0.1, 0.5));
    let w = vec![c; 4];
    let algos: [Box<dyn DivisiblePartitioner>; 2] = [
        Box::new(AgrawalJagadish::default()),
        Box::new(HeteroDivisible::default()),
    ];
    let spans: Vec<f64> = algos
        .iter()
        .map(|a| a.partition(&w).unwrap().makespan)
        .collect();
    // Exhaustive search over ordered subsets of identical workers = best n.
    assert!((spans[0] - spans[1]).abs() < 1e-7, "{spans:?}");
    let mut w2 = w.clone();
    w2[1].compute.slope = 10.0;
    assert!(AgrawalJagadish::default().partition(&w2).is_err());
}
