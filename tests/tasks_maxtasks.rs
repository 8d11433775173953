//! MaxTasks / MaxTasks1 / MaxTasks2 / MinTime against the examples of
//! \[BBLRR01\] §4 and against brute force over permutations.

use nuce::plan::tasks::{
    min_time, AssignmentSolver, AutoSolver, ExactSearch, Matching, MaxTasksSolver, NoCommunication,
    SortedOrder, TaskPlatform, TwoFactor,
};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

const SOLVERS: [AssignmentSolver; 4] = [
    AssignmentSolver::Staircase,
    AssignmentSolver::Hungarian,
    AssignmentSolver::KuhnMunkres,
    AssignmentSolver::Auction,
];

/// All permutations of 1..=p as slot vectors (independent of the library).
fn perms(p: usize) -> Vec<Vec<usize>> {
    if p == 0 {
        return vec![vec![]];
    }
    let mut out = Vec::new();
    for rest in perms(p - 1) {
        for pos in 0..p {
            let mut v = rest.clone();
            v.insert(pos, p);
            out.push(v);
        }
    }
    out
}

/// Tasks within a budget, by repeated addition (independent of floor).
fn fit(budget: f64, t: f64) -> u64 {
    let mut c = 0u64;
    while (c + 1) as f64 * t <= budget + 1e-9 {
        c += 1;
    }
    c
}

/// Brute-force MaxTasks1: max over σ of Σ ⌊(T − σ(i)c)/t_i⌋.
fn brute1(t: &[f64], c: f64, deadline: f64) -> u64 {
    perms(t.len())
        .iter()
        .map(|s| {
            (0..t.len())
                .map(|i| fit(deadline - s[i] as f64 * c, t[i]))
                .sum()
        })
        .max()
        .unwrap()
}

/// Brute-force MaxTasks2: max over (σ1, σ2), O((p!)²).
fn brute2(t: &[f64], c1: f64, c2: f64, deadline: f64) -> u64 {
    let ps = perms(t.len());
    let mut best = 0;
    for s1 in &ps {
        for s2 in &ps {
            let v: u64 = (0..t.len())
                .map(|i| fit(deadline - s1[i] as f64 * c1 - s2[i] as f64 * c2, t[i]))
                .sum();
            best = best.max(v);
        }
    }
    best
}

fn random_integer_platform(rng: &mut ChaCha8Rng, p: usize) -> (Vec<f64>, f64) {
    let t: Vec<f64> = (0..p).map(|_| rng.gen_range(1..=12) as f64).collect();
    (t, rng.gen_range(1..=4) as f64)
}

#[test]
fn figure_23_example() {
    // p = 3, t = (4, 5, 9), t_com = 1, T = 118: σ = (2, 3, 1), 29 + 23 + 13 = 65.
    let pf = TaskPlatform::new(vec![4.0, 5.0, 9.0], 1.0, 0.0).unwrap();
    for solver in SOLVERS {
        let s = Matching { solver }.max_tasks(&pf, 118.0).unwrap();
        assert_eq!(s.send_slot, vec![2, 3, 1], "{solver:?}");
        assert_eq!(s.counts, vec![29, 23, 13]);
        assert_eq!(s.total(), 65);
        s.check(&pf, Some(118.0)).unwrap();
    }
    // "The maximum weighted matching is unique": every other σ does worse.
    for s in perms(3) {
        if s != vec![2, 3, 1] {
            let v: u64 = (0..3)
                .map(|i| fit(118.0 - s[i] as f64, pf.cycle_times[i]))
                .sum();
            assert!(v < 65);
        }
    }
}

#[test]
fn restricted_search_counterexample_of_4_3_1() {
    // t = (5, 9), t_com = 1, T = 28: slow worker first gives 5 + 3 = 8 tasks,
    // the fastest-first rule of Andonie et al. only 5 + 2 = 7.
    let pf = TaskPlatform::new(vec![5.0, 9.0], 1.0, 0.0).unwrap();
    let sorted = SortedOrder.max_tasks(&pf, 28.0).unwrap();
    assert_eq!(sorted.counts, vec![5, 2]);
    let opt = Matching::default().max_tasks(&pf, 28.0).unwrap();
    assert_eq!(opt.send_slot, vec![2, 1]);
    assert_eq!(opt.counts, vec![5, 3]);
    assert_eq!(opt.makespan, 28.0);
}

#[test]
fn no_communication_is_floor() {
    let pf = TaskPlatform::new(vec![2.0, 3.0, 7.0], 0.0, 0.0).unwrap();
    let s = NoCommunication.max_tasks(&pf, 20.0).unwrap();
    assert_eq!(s.counts, vec![10, 6, 2]);
    assert!(NoCommunication
        .max_tasks(&TaskPlatform::new(vec![1.0], 1.0, 0.0).unwrap(), 5.0)
        .is_err());
}

#[test]
fn maxtasks1_matches_brute_force_up_to_7_workers() {
    let mut rng = ChaCha8Rng::seed_from_u64(11);
    for p in 1..=7 {
        let cases = if p == 7 { 4 } else { 15 };
        for _ in 0..cases {
            let (t, c) = random_integer_platform(&mut rng, p);
            let deadline = rng.gen_range(p as f64 * c..60.0 + p as f64 * c);
            let pf = TaskPlatform::new(t.clone(), c, 0.0).unwrap();
            let want = brute1(&t, c, deadline);
            for solver in SOLVERS {
                let s = Matching { solver }.max_tasks(&pf, deadline).unwrap();
                assert_eq!(s.total(), want, "{solver:?} t={t:?} c={c} T={deadline}");
                s.check(&pf, Some(deadline)).unwrap();
            }
            assert!(SortedOrder.max_tasks(&pf, deadline).unwrap().total() <= want);
        }
    }
}

#[test]
fn maxtasks2_exact_search_and_two_factor_against_brute_force() {
    let mut rng = ChaCha8Rng::seed_from_u64(5);
    for p in 1..=5 {
        for _ in 0..8 {
            let (t, c1) = random_integer_platform(&mut rng, p);
            let c2 = rng.gen_range(1..=3) as f64;
            // Deadlines large enough that every worker has a positive budget
            // in every slot, the setting of Theorem 1.
            let base = p as f64 * (c1 + c2);
            let deadline = rng.gen_range(base + 12.0..base + 70.0);
            let pf = TaskPlatform::new(t.clone(), c1, c2).unwrap();
            let opt = brute2(&t, c1, c2, deadline);
            let exact = ExactSearch::default().max_tasks(&pf, deadline).unwrap();
            assert_eq!(exact.total(), opt, "t={t:?} c={c1},{c2} T={deadline}");
            exact.check(&pf, Some(deadline)).unwrap();
            for refine in [false, true] {
                let approx = TwoFactor {
                    refine,
                    ..TwoFactor::default()
                }
                .max_tasks(&pf, deadline)
                .unwrap();
                approx.check(&pf, Some(deadline)).unwrap();
                assert!(approx.total() <= opt);
                // Theorem 1: within p tasks of the optimum.
                assert!(approx.total() + p as u64 >= opt, "Theorem 1 violated");
            }
        }
    }
}

#[test]
fn exact_search_refuses_large_platforms() {
    let pf = TaskPlatform::new(vec![1.0; 12], 1.0, 1.0).unwrap();
    assert!(ExactSearch::default().max_tasks(&pf, 100.0).is_err());
}

#[test]
fn min_time_is_the_smallest_deadline_reaching_c() {
    let mut rng = ChaCha8Rng::seed_from_u64(3);
    for p in 1..=5 {
        for _ in 0..10 {
            let (t, c) = random_integer_platform(&mut rng, p);
            let pf = TaskPlatform::new(t.clone(), c, 0.0).unwrap();
            let tasks = rng.gen_range(1..40u64);
            let s = min_time(&Matching::default(), &pf, tasks).unwrap();
            assert_eq!(s.total(), tasks);
            s.check(&pf, Some(s.makespan)).unwrap();
            // Integer data: the optimal T is an integer; one less is too short.
            let t_star = s.makespan;
            assert_eq!(t_star.fract(), 0.0);
            assert!(brute1(&t, c, t_star) >= tasks);
            assert!(
                brute1(&t, c, t_star - 1.0) < tasks,
                "t={t:?} c={c} C={tasks}"
            );
        }
    }
}

#[test]
fn min_time_without_communication_and_with_returns() {
    let pf = TaskPlatform::new(vec![2.0, 3.0], 0.0, 0.0).unwrap();
    // ⌊T/2⌋ + ⌊T/3⌋ ≥ 10 first at T = 12 (6 + 4).
    let s = min_time(&NoCommunication, &pf, 10).unwrap();
    assert_eq!(s.makespan, 12.0);
    assert_eq!(s.total(), 10);
    let pf2 = TaskPlatform::new(vec![3.0, 4.0, 6.0], 1.0, 2.0).unwrap();
    let approx = min_time(&AutoSolver, &pf2, 20).unwrap();
    let exact = min_time(&ExactSearch::default(), &pf2, 20).unwrap();
    assert_eq!(approx.total(), 20);
    approx.check(&pf2, Some(approx.makespan)).unwrap();
    assert!(exact.makespan <= approx.makespan);
    assert!(brute2(&pf2.cycle_times, 1.0, 2.0, exact.makespan) >= 20);
    assert!(brute2(&pf2.cycle_times, 1.0, 2.0, exact.makespan - 1.0) < 20);
}

#[test]
fn zero_tasks_and_bad_input() {
    let pf = TaskPlatform::new(vec![1.0, 2.0], 1.0, 0.0).unwrap();
    let s = min_time(&Matching::default(), &pf, 0).unwrap();
    assert_eq!(s.total(), 0);
    assert_eq!(s.makespan, 0.0);
    assert!(Matching::default().max_tasks(&pf, f64::NAN).is_err());
    assert!(Matching::default().max_tasks(&pf, -1.0).is_err());
    let s = Matching::default().max_tasks(&pf, 0.5).unwrap();
    assert_eq!(s.total(), 0);
}

#[test]
fn large_platform_solvers_agree() {
    let mut rng = ChaCha8Rng::seed_from_u64(9);
    let p = 120;
    let t: Vec<f64> = (0..p).map(|_| rng.gen_range(0.5..4.0)).collect();
    let pf = TaskPlatform::new(t, 0.05, 0.0).unwrap();
    let a = Matching::default().max_tasks(&pf, 40.0).unwrap();
    let b = Matching {
        solver: AssignmentSolver::KuhnMunkres,
    }
    .max_tasks(&pf, 40.0)
    .unwrap();
    assert_eq!(a.total(), b.total());
    assert!(a.total() >= SortedOrder.max_tasks(&pf, 40.0).unwrap().total());
}

#[test]
fn staircase_flow_equals_kuhn_munkres_on_random_staircases() {
    use nuce::plan::tasks::matching::Assignment;
    let mut rng = ChaCha8Rng::seed_from_u64(21);
    for _ in 0..200 {
        let p = rng.gen_range(1..25);
        // Random non-increasing rows with plateaus and negative values.
        let w: Vec<Vec<i64>> = (0..p)
            .map(|_| {
                let mut v = rng.gen_range(-5..30);
                (0..p)
                    .map(|_| {
                        if rng.gen_bool(0.3) {
                            v -= rng.gen_range(1..4);
                        }
                        v
                    })
                    .collect()
            })
            .collect();
        let a = Assignment::new(p, |i, j| w[i][j]);
        let (fast, cols) = a.solve(AssignmentSolver::Staircase).unwrap();
        let (reference, _) = a.solve(AssignmentSolver::KuhnMunkres).unwrap();
        assert_eq!(fast, reference, "{w:?}");
        let mut seen = cols.clone();
        seen.sort_unstable();
        assert_eq!(seen, (0..p).collect::<Vec<_>>());
    }
    // Rows that are not staircases are refused.
    let bad = Assignment::new(2, |_, j| j as i64);
    assert!(bad.solve(AssignmentSolver::Staircase).is_err());
}

#[test]
fn real_valued_platforms_agree_with_kuhn_munkres() {
    let mut rng = ChaCha8Rng::seed_from_u64(17);
    for _ in 0..20 {
        let p = rng.gen_range(2..60);
        let t: Vec<f64> = (0..p).map(|_| rng.gen_range(0.05..3.0)).collect();
        let c = rng.gen_range(0.001..0.5);
        let pf = TaskPlatform::new(t, c, 0.0).unwrap();
        let deadline = rng.gen_range(0.5..30.0);
        let a = Matching::default().max_tasks(&pf, deadline).unwrap();
        let b = Matching {
            solver: AssignmentSolver::KuhnMunkres,
        }
        .max_tasks(&pf, deadline)
        .unwrap();
        assert_eq!(a.total(), b.total());
        a.check(&pf, Some(deadline)).unwrap();
    }
}

#[test]
fn min_time_is_exact_on_real_valued_platforms() {
    let mut rng = ChaCha8Rng::seed_from_u64(8);
    for _ in 0..15 {
        let p = rng.gen_range(1..=6);
        let t: Vec<f64> = (0..p).map(|_| rng.gen_range(0.3..4.0)).collect();
        let c = rng.gen_range(0.01..1.0);
        let pf = TaskPlatform::new(t.clone(), c, 0.0).unwrap();
        let tasks = rng.gen_range(1..60u64);
        let s = min_time(&Matching::default(), &pf, tasks).unwrap();
        assert_eq!(s.total(), tasks);
        assert!(brute1(&t, c, s.makespan) >= tasks);
        assert!(
            brute1(&t, c, s.makespan * (1.0 - 1e-7)) < tasks,
            "t={t:?} c={c} C={tasks}"
        );
    }
}
