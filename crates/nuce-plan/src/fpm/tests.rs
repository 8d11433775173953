//! Tests of the functional performance models (\[LR07\]): building the
//! speed functions, partitioning with them against brute force, noise,
//! memory caps and the remap decisions they feed.
//! (Over 600 lines: tests only.)

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::plan::counts_by_bisection;
use super::*;
use crate::dist1d::optimal_counts;
use crate::error::Error;
use crate::policy::RemapPolicy;

fn rng(seed: u64) -> ChaCha8Rng {
    ChaCha8Rng::seed_from_u64(seed)
}

/// A random piecewise-linear speed function: 1–4 points at sizes in
/// `1..=14`, speeds in `[0.2, 5]`; times may decrease (non-monotone).
fn random_function(r: &mut ChaCha8Rng) -> SpeedFunction {
    let m = r.gen_range(1..=4);
    let points: Vec<(f64, f64)> = (0..m)
        .map(|_| {
            let x = f64::from(r.gen_range(1u8..=14));
            let s = r.gen_range(0.2..5.0);
            (x, x / s)
        })
        .collect();
    SpeedFunction::new(&points, 0.0).unwrap()
}

/// min over all compositions of `n` into `caps`-bounded parts of
/// `max_i time(i, x_i)`.
fn brute_force(n: usize, caps: &[usize], time: &dyn Fn(usize, usize) -> f64) -> f64 {
    fn go(
        i: usize,
        left: usize,
        caps: &[usize],
        worst: f64,
        time: &dyn Fn(usize, usize) -> f64,
    ) -> f64 {
        if i + 1 == caps.len() {
            return if left <= caps[i] {
                worst.max(time(i, left))
            } else {
                f64::INFINITY
            };
        }
        (0..=left.min(caps[i]))
            .map(|x| go(i + 1, left - x, caps, worst.max(time(i, x)), time))
            .fold(f64::INFINITY, f64::min)
    }
    go(0, n, caps, 0.0, time)
}

#[test]
fn bad_points_are_errors() {
    let bad = [
        (f64::NAN, 1.0),
        (1.0, f64::NAN),
        (-1.0, 1.0),
        (1.0, -1.0),
        (0.0, 1.0),
        (1.0, 0.0),
        (f64::INFINITY, 1.0),
        (1.0, f64::INFINITY),
        (1e300, 1e-300),
    ];
    for p in bad {
        let e = SpeedFunction::new(&[(1.0, 1.0), p], 0.0);
        assert!(matches!(e, Err(Error::InvalidInput(_))), "{p:?}: {e:?}");
    }
    assert!(matches!(SpeedFunction::new(&[], 0.0), Err(Error::Empty(_))));
    for noise in [-0.1, 1.0, f64::NAN, f64::INFINITY] {
        assert!(SpeedFunction::new(&[(1.0, 1.0)], noise).is_err());
        assert!(SpeedFunction::constant(1.0, noise).is_err());
    }
    for s in [0.0, -1.0, f64::NAN, f64::INFINITY] {
        assert!(SpeedFunction::constant(s, 0.0).is_err());
    }
    let mut f = SpeedFunction::constant(1.0, 0.1).unwrap();
    let before = f.clone();
    assert!(f.observe(1.0, 0.0, Aging::Reset).is_err());
    assert!(f.observe(f64::NAN, 1.0, Aging::Rescale).is_err());
    assert_eq!(f, before);
    // Deserialising checks the points again.
    let json = r#"{"points":[[2.0,1.0,1],[1.0,1.0,1]],"noise":0.0}"#;
    assert!(serde_json::from_str::<SpeedFunction>(json).is_err());
    let json = r#"{"points":[[1.0,-1.0,1]],"noise":0.0}"#;
    assert!(serde_json::from_str::<SpeedFunction>(json).is_err());
}

#[test]
fn interpolates_averages_and_extrapolates() {
    // Points out of order; two measurements at x = 4 (times 1 and 3: mean 2).
    let f = SpeedFunction::new(&[(8.0, 2.0), (4.0, 1.0), (2.0, 2.0), (4.0, 3.0)], 0.05).unwrap();
    assert_eq!(f.points(), vec![(2.0, 1.0), (4.0, 2.0), (8.0, 4.0)]);
    assert_eq!(f.speed(1.0), 1.0);
    assert_eq!(f.speed(3.0), 1.5);
    assert_eq!(f.speed(6.0), 3.0);
    assert_eq!(f.speed(100.0), 4.0);
    assert_eq!(f.time(100.0), 25.0);
    assert_eq!(f.time(0.0), 0.0);
    assert_eq!(f.noise(), 0.05);
    // Times 2, 2, 2 at the points: monotone (constant between them).
    assert!(f.is_monotone());
    let back: SpeedFunction = serde_json::from_str(&serde_json::to_string(&f).unwrap()).unwrap();
    assert_eq!(back, f);
}

#[test]
fn flatness_follows_the_noise() {
    let f = SpeedFunction::new(&[(1.0, 1.0), (2.0, 2.0 / 1.1), (4.0, 4.0 / 0.95)], 0.0).unwrap();
    // Speeds 1, 1.1, 0.95: within ±8 % of one value, not within ±5 %.
    assert!(f.is_flat(0.08));
    assert!(!f.is_flat(0.05));
    assert!(SpeedFunction::constant(3.0, 0.0).unwrap().is_flat(0.0));
    let gpu = SpeedFunction::new(&[(10.0, 10.0), (1000.0, 100.0)], 0.0).unwrap();
    assert!(!gpu.is_flat(0.2));
}

#[test]
fn observations_age_the_function() {
    let mut f = SpeedFunction::new(&[(10.0, 10.0), (100.0, 50.0)], 0.1).unwrap();
    // Speed 1 at 10, 2 at 100. A measurement of 1.05 at 10 agrees (±10 %).
    assert_eq!(
        f.observe(10.0, 10.0 / 1.05, Aging::Reset).unwrap(),
        Observation::Agreed
    );
    assert_eq!(f.points().len(), 2);
    // Times 10 and 9.5238: mean 9.7619, speed 1.0244.
    assert!((f.speed(10.0) - 10.0 / ((10.0 + 10.0 / 1.05) / 2.0)).abs() < 1e-12);
    assert_eq!(
        f.observe(50.0, 50.0 / 1.5, Aging::Reset).unwrap(),
        Observation::Agreed
    );
    assert_eq!(f.points().len(), 3);
    // The rank slows down by half (another process): the point disagrees.
    let mut g = f.clone();
    match g.observe(100.0, 100.0, Aging::Reset).unwrap() {
        Observation::Changed { ratio, dropped } => {
            assert!((ratio - 0.5).abs() < 1e-12);
            assert_eq!(dropped, 3);
        }
        o => panic!("{o:?}"),
    }
    assert_eq!(g.points(), vec![(100.0, 1.0)]);
    let mut h = f.clone();
    match h.observe(100.0, 100.0, Aging::Rescale).unwrap() {
        Observation::Changed { ratio, dropped } => {
            assert!((ratio - 0.5).abs() < 1e-12);
            assert_eq!(dropped, 0);
        }
        o => panic!("{o:?}"),
    }
    // Every speed halved, the new point averaged into the rescaled one at 100.
    assert!((h.speed(10.0) - f.speed(10.0) / 2.0).abs() < 1e-12);
    assert!((h.speed(100.0) - 1.0).abs() < 1e-12);
    // After a reset the function agrees with the new speed.
    assert_eq!(
        g.observe(10.0, 10.0, Aging::Reset).unwrap(),
        Observation::Agreed
    );
}

#[test]
fn partition_matches_brute_force() {
    let mut r = rng(19);
    let (mut monotone, mut dips) = (0, 0);
    for case in 0..3000 {
        let p = r.gen_range(1..=4);
        let n = r.gen_range(0..=12);
        let fns: Vec<SpeedFunction> = (0..p).map(|_| random_function(&mut r)).collect();
        let caps: Option<Vec<usize>> = if case % 3 == 0 {
            Some((0..p).map(|_| r.gen_range(0..=8)).collect())
        } else {
            None
        };
        let caps_or_n = caps.clone().unwrap_or(vec![n; p]);
        let plan = match partition(n, &fns, caps.as_deref()) {
            Ok(plan) => plan,
            Err(e) => {
                assert!(caps_or_n.iter().sum::<usize>() < n, "{e}");
                assert!(matches!(e, Error::InvalidInput(_)));
                continue;
            }
        };
        assert_eq!(plan.counts.iter().sum::<usize>(), n);
        assert!(plan.counts.iter().zip(&caps_or_n).all(|(c, cap)| c <= cap));
        // The heap path and the pure bisection choose the same units.
        assert_eq!(
            plan.counts,
            counts_by_bisection(n, &fns, caps.as_deref()).unwrap()
        );
        assert!(plan.makespan <= plan.planned);
        // Optimal for the planned (envelope) times, exactly.
        let env = brute_force(n, &caps_or_n, &|i, x| fns[i].envelope_time(x as f64));
        assert_eq!(plan.planned, env, "case {case}: {plan:?}");
        // With monotone times the envelope is the time: optimal for it too.
        if fns.iter().all(SpeedFunction::is_monotone) {
            monotone += 1;
            let best = brute_force(n, &caps_or_n, &|i, x| fns[i].time(x as f64));
            assert!(
                (plan.makespan - best).abs() <= 1e-12 * best,
                "case {case}: {} vs {best}",
                plan.makespan
            );
        } else {
            dips += 1;
        }
    }
    // Both kinds were exercised.
    assert!(monotone > 500 && dips > 500, "{monotone} {dips}");
}

#[test]
fn non_monotone_times_use_the_envelope() {
    // Speed 1 up to 4 units, then 4 from 8 units on: 8 units take 2 s, less
    // than the 4 s of 4 units. The envelope keeps 4 s from 4 to 16 units.
    let f = SpeedFunction::new(&[(4.0, 4.0), (8.0, 2.0)], 0.0).unwrap();
    assert!(!f.is_monotone());
    assert_eq!(f.envelope_time(4.0), 4.0);
    assert_eq!(f.envelope_time(8.0), 4.0);
    assert_eq!(f.time(8.0), 2.0);
    assert_eq!(f.envelope_time(20.0), 5.0);
    assert_eq!(f.max_work(4.0), 16.0);
    assert_eq!(f.max_work(3.0), 3.0);
    let g = SpeedFunction::constant(1.0, 0.0).unwrap();
    // 12 units: the envelope optimum is 4 (the 12th smallest of the
    // planned unit times 1, 2, 3, 4, 4, … and 1, 2, 3, 4, …). Below 4 the
    // ranks hold 3 + 3 units; the 6 left cost 4 each, the lowest index
    // (on the plateau) takes them.
    let plan = partition(12, &[f.clone(), g.clone()], None).unwrap();
    assert_eq!(plan.planned, 4.0);
    assert_eq!(plan.counts, vec![9, 3]);
    // 9 units run at speed 4 (2.25 s): the true makespan is g's 3 s.
    assert_eq!(plan.times, vec![2.25, 3.0]);
    assert_eq!(plan.makespan, 3.0);
    assert!(plan.makespan <= plan.planned);
}

#[test]
fn constant_functions_give_the_constant_plan_exactly() {
    let mut r = rng(7);
    for case in 0..2000 {
        let p = r.gen_range(1..=12);
        let speeds: Vec<f64> = if case % 2 == 0 {
            (0..p).map(|_| f64::from(r.gen_range(1u8..=6))).collect()
        } else {
            (0..p).map(|_| r.gen_range(0.01..100.0)).collect()
        };
        let n = match case % 3 {
            0 => r.gen_range(0..=50),
            1 => r.gen_range(0..=100_000),
            _ => r.gen_range(0..=1usize << 45),
        };
        let fns: Vec<SpeedFunction> = speeds
            .iter()
            .map(|&s| SpeedFunction::constant(s, 0.0).unwrap())
            .collect();
        let cycle: Vec<f64> = speeds.iter().map(|s| 1.0 / s).collect();
        let plan = partition(n, &fns, None).unwrap();
        assert_eq!(
            plan.counts,
            optimal_counts(n, &cycle).unwrap(),
            "case {case}: n {n}, {speeds:?}"
        );
    }
    // \[BBLRR01\] Table 1, and a constant function of several points.
    let multi = SpeedFunction::new(&[(4.0, 1.0), (8.0, 2.0), (64.0, 16.0)], 0.0).unwrap();
    let fns = [
        SpeedFunction::constant(1.0 / 3.0, 0.0).unwrap(),
        SpeedFunction::constant(0.2, 0.0).unwrap(),
        SpeedFunction::constant(0.125, 0.0).unwrap(),
    ];
    assert_eq!(partition(78, &fns, None).unwrap().counts, vec![40, 24, 14]);
    let fns = [multi, SpeedFunction::constant(1.0, 0.0).unwrap()];
    for n in 0..200 {
        assert_eq!(
            partition(n, &fns, None).unwrap().counts,
            optimal_counts(n, &[0.25, 1.0]).unwrap()
        );
    }
}

#[test]
fn constant_shares_are_the_speeds() {
    let mut r = rng(11);
    for _ in 0..50 {
        let p = r.gen_range(1..=9);
        let speeds: Vec<f64> = (0..p).map(|_| r.gen_range(0.1..10.0)).collect();
        let fns: Vec<SpeedFunction> = speeds
            .iter()
            .map(|&s| SpeedFunction::constant(s, 0.0).unwrap())
            .collect();
        let shares = functional_shares(64 * 48, &fns, None).unwrap();
        // Bit for bit: every decomposer makes its constant-speed plan.
        assert_eq!(shares, speeds);
    }
    // A binding cap changes the shares.
    let fns = [
        SpeedFunction::constant(1.0, 0.0).unwrap(),
        SpeedFunction::constant(3.0, 0.0).unwrap(),
    ];
    let s = functional_shares(400, &fns, Some(&[400, 200])).unwrap();
    assert!((s[0] / s[1] - 1.0).abs() < 1e-9, "{s:?}");
}

#[test]
fn caps_and_errors() {
    let fns = [
        SpeedFunction::constant(1.0, 0.0).unwrap(),
        SpeedFunction::constant(10.0, 0.0).unwrap(),
    ];
    let plan = partition(100, &fns, Some(&[100, 30])).unwrap();
    assert_eq!(plan.counts, vec![70, 30]);
    let e = partition(100, &fns, Some(&[50, 49])).unwrap_err();
    assert!(
        matches!(e, Error::InvalidInput(ref m) if m.contains("caps")),
        "{e}"
    );
    assert!(matches!(
        partition(1, &fns, Some(&[1])),
        Err(Error::ShapeMismatch(_))
    ));
    assert!(matches!(partition(1, &[], None), Err(Error::Empty(_))));
    assert!(partition(usize::MAX, &fns, None).is_err());
    let huge = [SpeedFunction::constant(1e-300, 0.0).unwrap()];
    assert!(matches!(
        partition(1 << 40, &huge, None),
        Err(Error::InvalidInput(_))
    ));
    assert!(matches!(
        functional_shares(0, &fns, None),
        Err(Error::Empty(_))
    ));
    assert!(matches!(
        functional_shares(10, &fns, Some(&[0, 10])),
        Err(Error::InvalidInput(_))
    ));
    assert_eq!(partition(0, &fns, None).unwrap().counts, vec![0, 0]);
}

mod props {
    use super::{counts_by_bisection, functional_shares, partition, rng, SpeedFunction};
    use proptest::prelude::*;
    use rand::Rng;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]
        #[test]
        fn caps_are_never_exceeded(
            seed in any::<u64>(),
            p in 1usize..8,
            n in 0usize..5000,
            caps in proptest::collection::vec(0usize..2000, 8),
        ) {
            let mut r = rng(seed);
            let fns: Vec<SpeedFunction> = (0..p)
                .map(|_| {
                    let m = r.gen_range(1..=6);
                    let pts: Vec<(f64, f64)> = (0..m)
                        .map(|_| {
                            let x = r.gen_range(1.0..3000.0);
                            (x, x / r.gen_range(0.1..10.0))
                        })
                        .collect();
                    SpeedFunction::new(&pts, 0.0).unwrap()
                })
                .collect();
            let caps = &caps[..p];
            match partition(n, &fns, Some(caps)) {
                Ok(plan) => {
                    prop_assert_eq!(plan.counts.iter().sum::<usize>(), n);
                    prop_assert_eq!(&plan.counts, &counts_by_bisection(n, &fns, Some(caps)).unwrap());
                    for (c, cap) in plan.counts.iter().zip(caps) {
                        prop_assert!(c <= cap);
                    }
                    // No unit can move to a rank with room without raising
                    // the planned time (optimality, locally).
                    let worst = plan.planned;
                    for (i, f) in fns.iter().enumerate() {
                        if plan.counts[i] < caps[i] {
                            prop_assert!(f.envelope_time((plan.counts[i] + 1) as f64) >= worst);
                        }
                    }
                }
                Err(e) => {
                    prop_assert!(caps.iter().sum::<usize>() < n, "{}", e);
                }
            }
            if n > 0 && caps.iter().all(|&c| c > 0) && caps.iter().sum::<usize>() >= n {
                let shares = functional_shares(n, &fns, Some(caps)).unwrap();
                prop_assert!(shares.iter().all(|s| s.is_finite() && *s > 0.0));
            }
        }
    }
}

#[test]
fn extreme_values_never_panic() {
    let mut r = rng(99);
    let mut ok = 0;
    for _ in 0..3000 {
        let p = r.gen_range(1..=5);
        let fns: Vec<SpeedFunction> = (0..p)
            .filter_map(|_| {
                let m = r.gen_range(1..=5);
                let pts: Vec<(f64, f64)> = (0..m)
                    .map(|_| {
                        let x = 10f64.powf(r.gen_range(-300.0..300.0));
                        (x, 10f64.powf(r.gen_range(-300.0..300.0)))
                    })
                    .collect();
                SpeedFunction::new(&pts, 0.1).ok()
            })
            .collect();
        if fns.is_empty() {
            continue;
        }
        let n = match r.gen_range(0..3) {
            0 => r.gen_range(0..100),
            1 => r.gen_range(0..1usize << 30),
            _ => r.gen_range(0..=1usize << 53),
        };
        let caps: Vec<usize> = (0..fns.len())
            .map(|_| r.gen_range(0..=n.max(1) * 2))
            .collect();
        for caps in [None, Some(&caps[..])] {
            if let Ok(plan) = partition(n, &fns, caps) {
                ok += 1;
                assert_eq!(plan.counts.iter().sum::<usize>(), n);
                if let Some(c) = caps {
                    assert!(plan.counts.iter().zip(c).all(|(x, c)| x <= c));
                }
                assert!(plan.planned.is_finite() && plan.makespan <= plan.planned);
            }
            if let Ok(shares) = functional_shares(n, &fns, caps) {
                assert!(shares.iter().all(|s| s.is_finite() && *s > 0.0));
            }
        }
        let mut f = fns[0].clone();
        let x = 10f64.powf(r.gen_range(-300.0..300.0));
        let t = 10f64.powf(r.gen_range(-300.0..300.0));
        let _ = f.observe(x, t, Aging::Rescale);
        let _ = f.observe(x, t, Aging::Reset);
    }
    assert!(ok > 1000, "{ok}");
}

/// A CPU of constant speed 1, an accelerator slow on small work and fast on
/// large, a core fast while the work fits its cache.
fn mixed() -> Vec<SpeedFunction> {
    vec![
        SpeedFunction::constant(1.0, 0.0).unwrap(),
        SpeedFunction::new(&[(200.0, 400.0), (2000.0, 500.0)], 0.0).unwrap(),
        SpeedFunction::new(&[(300.0, 100.0), (1500.0, 1500.0)], 0.0).unwrap(),
    ]
}

#[test]
fn shares_follow_the_functional_solution() {
    use crate::array2d::{apportion, ArrayDecomposer, RecursiveBisection2};
    let fns = mixed();
    let total = 60 * 80;
    let shares = functional_shares(total, &fns, None).unwrap();
    let plan = partition(total, &fns, None).unwrap();
    // Shares × T are the real sizes: they round to the integer plan.
    let sizes = apportion(total, &shares);
    for (a, b) in sizes.iter().zip(&plan.counts) {
        assert!(a.abs_diff(*b) <= 1, "{sizes:?} vs {:?}", plan.counts);
    }
    let makespan = |areas: &[usize]| {
        areas
            .iter()
            .zip(&fns)
            .map(|(&a, f)| f.time(a as f64))
            .fold(0.0, f64::max)
    };
    // A 2D decomposition with the shares as speeds: within 2 % of the 1D
    // functional optimum.
    let d = RecursiveBisection2.decompose(60, 80, &shares).unwrap();
    let functional = makespan(&d.areas());
    assert!(
        functional <= 1.02 * plan.makespan,
        "{functional} vs {}",
        plan.makespan
    );
    // Constant speeds measured on a small benchmark (100 units each) put far
    // too much on the cache-fast core.
    let small: Vec<f64> = fns.iter().map(|f| f.speed(100.0)).collect();
    let c = RecursiveBisection2.decompose(60, 80, &small).unwrap();
    assert!(makespan(&c.areas()) > 1.5 * functional);
    // Caps are honoured in the shares.
    let capped = functional_shares(total, &fns, Some(&[4800, 4800, 500])).unwrap();
    let sizes = apportion(total, &capped);
    assert!(sizes[2] <= 501, "{sizes:?}");
}

#[test]
fn snapping_gives_equal_ranks_equal_shares() {
    let e = |m, n| SpeedEstimate::new(m, n).unwrap();
    let s = snap_speeds(&[e(1.0, 0.08), e(0.9, 0.08), e(1.05, 0.08), e(2.0, 0.01)]).unwrap();
    assert_eq!(s[0], s[1]);
    assert_eq!(s[0], s[2]);
    assert!((s[0] - 2.95 / 3.0).abs() < 1e-15);
    assert_eq!(s[3], 2.0);
    // No noise: nothing moves, not even groups of equal speeds.
    let raw = [0.1, 0.3, 0.1, 0.1, 0.2];
    let zero: Vec<SpeedEstimate> = raw.iter().map(|&m| e(m, 0.0)).collect();
    assert_eq!(snap_speeds(&zero).unwrap(), raw.to_vec());
    // From samples: mean 1, sd 0.1.
    let est = SpeedEstimate::from_samples(&[0.9, 1.0, 1.1]).unwrap();
    assert!((est.mean - 1.0).abs() < 1e-15 && (est.noise - 0.1).abs() < 1e-12);
    assert!(same_speed(&est, &e(1.08, 0.0)));
    assert!(same_speed(&est, &e(1.15, 0.05)));
    assert!(!same_speed(&est, &e(1.12, 0.0)));
    assert!(SpeedEstimate::from_samples(&[1.0, f64::NAN]).is_err());
    assert!(SpeedEstimate::from_samples(&[]).is_err());
    assert!(snap_speeds(&[SpeedEstimate {
        mean: 1.0,
        noise: 2.0
    }])
    .is_err());
}

#[test]
fn noisy_remap_decisions() {
    use crate::array2d::apportion;
    let pol = RemapPolicy::default();
    let est = [
        SpeedEstimate::new(1.0, 0.08).unwrap(),
        SpeedEstimate::new(0.9, 0.08).unwrap(),
    ];
    let current = [500.0, 500.0];
    let none = [(0.0, 0usize); 2];
    // Candidate from the raw speeds 1.0 : 0.9 (526 : 474): 5.3 % faster at
    // those speeds, which the noiseless rule takes.
    let raw: Vec<f64> = apportion(1000, &[1.0, 0.9])
        .iter()
        .map(|&c| c as f64)
        .collect();
    let nominal = pol
        .decide_loads(&current, &raw, &[1.0, 0.9], &none, 100, None)
        .unwrap();
    assert!(nominal.remap);
    let d = pol
        .decide_noisy(&current, &raw, &est, &none, 100, None)
        .unwrap();
    assert!(!d.decision.remap && d.worst_margin > 0.0, "{d:?}");
    // The candidate from the snapped speeds is the current plan: no remap.
    let snapped = snap_speeds(&est).unwrap();
    assert_eq!(snapped[0], snapped[1]);
    let cand: Vec<f64> = apportion(1000, &snapped)
        .iter()
        .map(|&c| c as f64)
        .collect();
    assert_eq!(cand, current.to_vec());
    let d = pol
        .decide_noisy(&current, &cand, &est, &none, 100, None)
        .unwrap();
    assert!(!d.decision.remap && !d.nominal_remap);
    // A speed difference well beyond the noise still remaps.
    let est = [
        SpeedEstimate::new(1.0, 0.05).unwrap(),
        SpeedEstimate::new(0.5, 0.05).unwrap(),
    ];
    let cand: Vec<f64> = apportion(1000, &snap_speeds(&est).unwrap())
        .iter()
        .map(|&c| c as f64)
        .collect();
    let d = pol
        .decide_noisy(&current, &cand, &est, &none, 100, None)
        .unwrap();
    assert!(
        d.decision.remap && d.worst_margin < 0.0 && d.worst_net_gain > 0.0,
        "{d:?}"
    );
    // Lengths are checked.
    assert!(pol
        .decide_noisy(&current, &cand, &est[..1], &none, 1, None)
        .is_err());
}

#[test]
fn zero_noise_keeps_the_noiseless_decision() {
    let mut r = rng(4);
    let pol = RemapPolicy {
        hysteresis: 0.05,
        default_bandwidth: 1e3,
        latency: 1e-3,
    };
    for _ in 0..3000 {
        let p = r.gen_range(1..6);
        let speeds: Vec<f64> = (0..p).map(|_| f64::from(r.gen_range(1u8..4))).collect();
        let load = |r: &mut ChaCha8Rng| -> Vec<f64> {
            (0..p).map(|_| f64::from(r.gen_range(0u16..200))).collect()
        };
        let (cur, cand) = (load(&mut r), load(&mut r));
        let vol: Vec<(f64, usize)> = (0..p)
            .map(|_| (r.gen_range(0.0..100.0), r.gen_range(0..3)))
            .collect();
        let it = r.gen_range(1..20);
        let est: Vec<SpeedEstimate> = speeds
            .iter()
            .map(|&m| SpeedEstimate::new(m, 0.0).unwrap())
            .collect();
        let a = pol
            .decide_loads(&cur, &cand, &speeds, &vol, it, None)
            .unwrap();
        let b = pol.decide_noisy(&cur, &cand, &est, &vol, it, None).unwrap();
        assert_eq!(a, b.decision);
        assert_eq!(b.worst_net_gain, a.net_gain);
    }
}

/// Planning time for p = 1000 against the constant-speed 1D partition
/// (`BENCHMARKS.md`, issue 19):
/// `cargo test --release -p nuce-plan --lib fpm::tests::bench_p1000 -- --ignored --nocapture`.
#[test]
#[ignore]
fn bench_p1000() {
    use std::time::Instant;
    let mut r = rng(1000);
    let p = 1000;
    let fns: Vec<SpeedFunction> = (0..p)
        .map(|_| {
            let pts: Vec<(f64, f64)> = (0..8)
                .map(|k| {
                    let x = 1000.0 * 4f64.powi(k) * r.gen_range(0.5..1.5);
                    (x, x / r.gen_range(0.5..8.0))
                })
                .collect();
            SpeedFunction::new(&pts, 0.02).unwrap()
        })
        .collect();
    let consts: Vec<f64> = fns.iter().map(|f| 1.0 / f.mean_speed()).collect();
    let caps: Vec<usize> = (0..p).map(|_| r.gen_range(1usize << 20..1 << 24)).collect();
    let median = |mut v: Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    for n in [1_000_000usize, 1_000_000_000, 1 << 40] {
        let reps = 21;
        let time = |f: &dyn Fn()| {
            median(
                (0..reps)
                    .map(|_| {
                        let t = Instant::now();
                        f();
                        t.elapsed().as_secs_f64() * 1e3
                    })
                    .collect(),
            )
        };
        let fp = time(&|| {
            partition(n, &fns, None).unwrap();
        });
        let fc = if n <= caps.iter().sum::<usize>() {
            time(&|| {
                partition(n, &fns, Some(&caps)).unwrap();
            })
        } else {
            f64::NAN
        };
        let sh = time(&|| {
            functional_shares(n, &fns, None).unwrap();
        });
        let c = time(&|| {
            optimal_counts(n, &consts).unwrap();
        });
        let fb = time(&|| {
            counts_by_bisection(n, &fns, None).unwrap();
        });
        // Model only: the constant plan of the mean speeds, timed by the
        // functions, against the functional plan.
        let plan = partition(n, &fns, None).unwrap();
        let constant = optimal_counts(n, &consts).unwrap();
        let t_const = constant
            .iter()
            .zip(&fns)
            .map(|(&x, f)| f.time(x as f64))
            .fold(0.0, f64::max);
        println!(
            "BENCH p={p} n={n}: partition {fp:.3} ms, with caps {fc:.3} ms, shares {sh:.3} ms, integer bisection only {fb:.3} ms, dist1d::optimal_counts {c:.3} ms, partition / optimal_counts {:.1}; modelled makespan constant plan / functional plan {:.3}",
            fp / c,
            t_const / plan.makespan
        );
    }
}

#[test]
fn learn_adds_new_sizes_and_detects_changes_at_known_ones() {
    // Rank fast (speed 3) on small blocks, slow (speed 1) on large ones.
    let mut f = SpeedFunction::new(&[(100.0, 100.0 / 3.0)], 0.05).unwrap();
    // A far larger block 3× slower: new shape, not a change.
    assert_eq!(
        f.learn(300.0, 300.0, 0.01, Aging::Reset).unwrap(),
        Observation::New
    );
    assert_eq!(f.points().len(), 2);
    assert!(!f.is_flat(0.1));
    // Between the two: also new (no point within 1 %).
    assert_eq!(
        f.learn(200.0, 200.0, 0.01, Aging::Reset).unwrap(),
        Observation::New
    );
    // The same size again, same speed: agreed, averaged in.
    assert_eq!(
        f.learn(200.0, 200.0, 0.01, Aging::Reset).unwrap(),
        Observation::Agreed
    );
    assert_eq!(f.points().len(), 3);
    // The same size 2× slower: a change, the old points are dropped.
    assert!(matches!(
        f.learn(200.5, 401.0, 0.01, Aging::Reset).unwrap(),
        Observation::Changed { dropped: 3, .. }
    ));
    assert_eq!(f.points().len(), 1);
    // Kept: a disagreement averaged in as noise, no point dropped.
    assert!(matches!(
        f.learn(200.5, 200.5, 0.01, Aging::Keep).unwrap(),
        Observation::Changed { dropped: 0, .. }
    ));
    assert_eq!(f.points().len(), 1);
    assert_eq!(f.points()[0].1, 200.5 / ((401.0 + 200.5) / 2.0));
    let before = f.clone();
    assert!(f.learn(1.0, 1.0, f64::NAN, Aging::Reset).is_err());
    assert!(f.learn(1.0, -1.0, 0.1, Aging::Reset).is_err());
    assert_eq!(f, before);
}

fn est(mean: f64, noise: f64) -> SpeedEstimate {
    SpeedEstimate::new(mean, noise).unwrap()
}

#[test]
fn flat_functions_plan_with_the_constant_model_exactly() {
    let e = [est(2.0, 0.03), est(1.0, 0.02), est(1.05, 0.05)];
    // Functions flat within 10 %: the constant model, the snapped speeds.
    let f = [
        Some(SpeedFunction::new(&[(10.0, 5.0), (20.0, 10.5)], 0.01).unwrap()),
        Some(SpeedFunction::new(&[(10.0, 10.0)], 0.0).unwrap()),
        Some(SpeedFunction::new(&[(5.0, 5.0), (50.0, 52.0)], 0.02).unwrap()),
    ];
    let m = PlanningModel::new(&e, Some(&f), 1000, None, true).unwrap();
    assert!(!m.is_functional());
    assert_eq!(m.speeds, snap_speeds(&e).unwrap());
    // A rank without a function, or the functional model not allowed: constant.
    let slow_when_large = SpeedFunction::new(&[(10.0, 5.0), (100.0, 150.0)], 0.02).unwrap();
    let mut g = f.clone();
    g[0] = Some(slow_when_large.clone());
    assert!(PlanningModel::new(&e, Some(&g), 1000, None, true)
        .unwrap()
        .is_functional());
    assert!(!PlanningModel::new(&e, Some(&g), 1000, None, false)
        .unwrap()
        .is_functional());
    g[1] = None;
    assert!(!PlanningModel::new(&e, Some(&g), 1000, None, true)
        .unwrap()
        .is_functional());
    // The constant model decides exactly as decide_noisy does.
    let pol = RemapPolicy::default();
    let (cur, cand) = ([400.0, 300.0, 300.0], [500.0, 240.0, 260.0]);
    let vol = [(800.0, 1), (480.0, 1), (320.0, 1)];
    let d = m.decide(&pol, &cur, &cand, &vol, 10, Some(1e9)).unwrap();
    assert_eq!(
        d,
        pol.decide_noisy(&cur, &cand, &e, &vol, 10, Some(1e9))
            .unwrap()
    );
    // Mismatched lengths are errors.
    assert!(PlanningModel::new(&e, Some(&f[..2]), 1000, None, true).is_err());
    assert!(PlanningModel::new(&e, None, 1000, Some(&[1, 2]), true).is_err());
}

/// Rank 1 is as fast as rank 0 on blocks of at most `knee` units and 3×
/// slower beyond: the measured time of `x` units.
fn step_time(rank: usize, x: usize, knee: usize) -> f64 {
    let slow = if rank == 1 && x > knee { 3.0 } else { 1.0 };
    x as f64 * slow * 1e-6
}

/// Phases of the runtime's loop, simulated: every rank learns its point,
/// the model plans, the decision remaps or not. Returns the loads of every
/// phase, the plan changes and the models that decided.
fn simulate(functional: bool, n: usize, knee: usize, phases: usize) -> (Vec<[usize; 2]>, usize) {
    let pol = RemapPolicy::default();
    let mut loads = [n / 2, n - n / 2];
    let mut fns: [Option<SpeedFunction>; 2] = [None, None];
    let (mut history, mut changes) = (Vec::new(), 0);
    for _ in 0..phases {
        history.push(loads);
        let mut e = Vec::new();
        for r in 0..2 {
            let t = step_time(r, loads[r], knee);
            let x = loads[r] as f64;
            match &mut fns[r] {
                Some(f) => {
                    f.learn(x, t, 0.005, Aging::Reset).unwrap();
                }
                None => fns[r] = Some(SpeedFunction::new(&[(x, t)], 0.02).unwrap()),
            }
            e.push(est(x / t, 0.02));
        }
        let m = PlanningModel::new(&e, Some(&fns), n, None, functional).unwrap();
        let share = m.speeds[0] / (m.speeds[0] + m.speeds[1]);
        let x0 = (n as f64 * share).round() as usize;
        let cand = [x0, n - x0];
        let f = |l: [usize; 2]| l.map(|v| v as f64);
        let moved = (cand[0] as f64 - loads[0] as f64).abs() * 8.0;
        let d = m
            .decide(
                &pol,
                &f(loads),
                &f(cand),
                &[(moved, 1), (moved, 1)],
                100,
                Some(1e9),
            )
            .unwrap();
        if d.decision.remap {
            changes += 1;
            loads = cand;
        }
    }
    (history, changes)
}

#[test]
fn the_functional_model_converges_where_the_constant_one_oscillates() {
    let (n, knee) = (262_144, 100_000);
    let time = |l: [usize; 2]| step_time(0, l[0], knee).max(step_time(1, l[1], knee));
    let ideal = time([n - knee, knee]);
    let (constant, _) = simulate(false, n, knee, 10);
    let (functional, changes) = simulate(true, n, knee, 10);
    // The constant model: rank 1 alternates between slow (large) and fast
    // (small) blocks; its steady time stays far from the ideal.
    let worst_constant = constant[3..].iter().map(|&l| time(l)).fold(0.0, f64::max);
    assert!(worst_constant > 1.2 * ideal, "{constant:?}");
    // The functional model: after 3 phases within 8 % of the ideal — the
    // remap policy refuses gains below its hysteresis (5 %) plus the noise
    // (2 % per rank) by design — and the plan changes at most once more.
    for l in &functional[3..] {
        assert!(time(*l) <= 1.08 * ideal, "{functional:?}");
    }
    let late = functional[4..].windows(2).filter(|w| w[0] != w[1]).count();
    assert!(late <= 1, "{functional:?}");
    assert!(changes >= 2, "{functional:?}");
}

#[test]
fn plans_stay_within_memory_caps_or_fail_clearly() {
    let e = [est(3.0, 0.0), est(1.0, 0.0)];
    // Rank 0 may hold 600 of 1000 units although it is 3× faster.
    let m = PlanningModel::new(&e, None, 1000, Some(&[600, 1000]), true).unwrap();
    assert!(!m.is_functional());
    let s = m.speeds.clone();
    assert!((s[0] / (s[0] + s[1]) - 0.6).abs() < 1e-9, "{s:?}");
    // A planner that rounds up beyond the share is planned again, tighter.
    let round_up = |sp: &[f64]| -> Result<Vec<usize>, Error> {
        let x0 = ((1000.0 * sp[0] / (sp[0] + sp[1])) / 7.0).ceil() as usize * 7;
        Ok(vec![x0, 1000 - x0])
    };
    let plan = m.plan_within_caps(round_up, |p| p.clone()).unwrap();
    assert!(
        plan[0] <= 600 && plan.iter().sum::<usize>() == 1000,
        "{plan:?}"
    );
    // No cap binds: the constant model's speeds exactly.
    let free = PlanningModel::new(&e, None, 1000, Some(&[1000, 1000]), true).unwrap();
    assert_eq!(free.speeds, vec![3.0, 1.0]);
    // Caps that cannot hold the work, and a planner that never fits: errors.
    assert!(PlanningModel::new(&e, None, 1000, Some(&[400, 500]), true).is_err());
    let stubborn = |_: &[f64]| -> Result<Vec<usize>, Error> { Ok(vec![700, 300]) };
    let err = m.plan_within_caps(stubborn, |p| p.clone()).unwrap_err();
    assert!(err.to_string().contains("memory limits"), "{err}");
    // Whole rows of 200 units under a cap one unit below a row boundary
    // (23 999 of 40 000, rank 0 4× faster): the nearest row count overshoots
    // by one unit at first; the fit must still be found (119 rows).
    let m = PlanningModel::new(&e, None, 40_000, Some(&[23_999, 23_999]), true).unwrap();
    let rows = |sp: &[f64]| -> Result<Vec<usize>, Error> {
        let x0 = (200.0 * sp[0] / (sp[0] + sp[1])).round() as usize * 200;
        Ok(vec![x0, 40_000 - x0])
    };
    let plan = m.plan_within_caps(rows, |p| p.clone()).unwrap();
    assert_eq!(plan, vec![23_800, 16_200]);
}

#[test]
fn cautious_functions_plan_close_knees_on_their_slow_side() {
    // Fast (1) up to 100, slow (1/3) from 103: a knee within 3 %.
    let f = SpeedFunction::new(&[(50.0, 50.0), (100.0, 100.0), (103.0, 309.0)], 0.02).unwrap();
    let c = f.cautious(0.05);
    assert_eq!(c.speed(100.0), 1.0);
    assert!(
        (c.speed(101.5) - 1.0 / 3.0).abs() < 1e-9,
        "{:?}",
        c.points()
    );
    assert!(f.speed(101.5) > 0.6);
    // Wide gaps, and close points within the noise, are unchanged.
    assert_eq!(f.cautious(0.01), f);
    let flat = SpeedFunction::new(&[(100.0, 100.0), (102.0, 103.0)], 0.05).unwrap();
    assert_eq!(flat.cautious(0.05), flat);
    // Partitioned with a rank of speed 1: the cautious plan stays at the
    // knee's fast side, the linear one crosses it.
    let other = SpeedFunction::constant(1.0, 0.0).unwrap();
    let lin = partition(250, &[other.clone(), f], None).unwrap();
    let cau = partition(250, &[other, c], None).unwrap();
    assert!(lin.counts[1] > 100, "{lin:?}");
    assert_eq!(cau.counts[1], 100, "{cau:?}");
}
