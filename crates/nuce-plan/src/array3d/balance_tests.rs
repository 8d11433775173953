//! Balance of the 3D plans in planes (issue 30, item 5): every part's
//! distance from its speed share measured in its largest face, the plane
//! adjustment of `planes.rs` against the plain per-level rounding it
//! replaced, and `best`'s time against the most balanced candidate's.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::one_plane::within_one_plane;
use super::planes::{balance_planes, largest_face, Kind, Tree, LEGACY};
use super::*;

/// `|cells_i − share_i| / largest face of box i` per part (infinite for an
/// empty part with a positive share).
fn planes_off(plan: &GridPlan3, speeds: &[f64]) -> Vec<f64> {
    plan.boxes
        .iter()
        .zip(plan.shares(speeds).unwrap())
        .map(|(b, s)| (b.volume() as f64 - s).abs() / largest_face(b) as f64)
        .collect()
}

/// A random brick of 20–300 cells a side and 2–64 speeds in [0.5, 4).
fn brick(rng: &mut ChaCha8Rng, max: usize) -> (Shape3, Vec<f64>) {
    let shape = (
        rng.gen_range(20..=max),
        rng.gen_range(20..=max),
        rng.gen_range(20..=max),
    );
    let p = rng.gen_range(2..=64);
    (shape, (0..p).map(|_| rng.gen_range(0.5..4.0)).collect())
}

/// Runs `f` with the rounding before the plane adjustment.
fn legacy<T>(f: impl FnOnce() -> T) -> T {
    LEGACY.with(|l| l.set(true));
    let out = f();
    LEGACY.with(|l| l.set(false));
    out
}

#[test]
fn plane_moves_keep_the_tiling_and_never_slow_the_slowest() {
    let mut rng = ChaCha8Rng::seed_from_u64(30);
    let mut helped = 0;
    for _ in 0..40 {
        let (shape, speeds) = brick(&mut rng, 120);
        for d in [&Column3 as &dyn GridDecomposer3, &RecursiveBisection3d] {
            let before = legacy(|| d.decompose(shape, &speeds).unwrap());
            let after = balance_planes(before.clone(), &speeds);
            after.validate().unwrap();
            assert!(after.slowest(&speeds).unwrap() <= before.slowest(&speeds).unwrap());
            let (b, a) = (planes_off(&before, &speeds), planes_off(&after, &speeds));
            for (x, y) in b.iter().zip(&a) {
                // No part pushed beyond one plane, or beyond where it was.
                assert!(
                    *y <= x.max(1.0) + 1e-9,
                    "{shape:?} {}: {x} -> {y}",
                    d.name()
                );
            }
            let worst = |v: &[f64]| v.iter().copied().fold(0.0, f64::max);
            assert!(worst(&a) <= worst(&b) + 1e-9);
            helped += usize::from(worst(&a) < worst(&b) - 1e-9);
        }
    }
    // The moves must act on some plans (measured: 4 of 80 worst parts
    // brought closer; most of the gain is the nested rounding's).
    assert!(helped >= 2, "{helped}");
}

/// Per case: best's largest distance in planes, its mean over the parts,
/// imbalance, internal surface, and best's predicted time over the most
/// balanced candidate's (least slowest part), for `cases` random bricks.
fn measure(seed: u64, cases: usize, max: usize) -> Vec<[f64; 5]> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    (0..cases)
        .map(|_| {
            let (shape, speeds) = brick(&mut rng, max);
            let stencil = Stencil::default();
            let best = Best3::default().decompose(shape, &speeds).unwrap();
            let off = planes_off(&best, &speeds);
            let mut balanced: Option<(f64, f64)> = None;
            for d in all_decomposers3() {
                let q = d.decompose(shape, &speeds).unwrap();
                let key = (
                    q.slowest(&speeds).unwrap(),
                    predicted_time3(&q, &speeds, stencil).unwrap(),
                );
                if balanced.is_none_or(|b| key.0 < b.0 || (key.0 == b.0 && key.1 < b.1)) {
                    balanced = Some(key);
                }
            }
            let tb = predicted_time3(&best, &speeds, stencil).unwrap();
            [
                off.iter().copied().fold(0.0, f64::max),
                off.iter().sum::<f64>() / off.len() as f64,
                best.imbalance(&speeds).unwrap(),
                best.internal_surface() as f64,
                tb / balanced.map_or(tb, |b| b.1),
            ]
        })
        .collect()
}

#[test]
fn best_is_closer_to_the_shares_and_near_the_most_balanced_time() {
    let after = measure(7, 24, 160);
    let before = legacy(|| measure(7, 24, 160));
    let worst = |v: &[[f64; 5]], k: usize| v.iter().map(|r| r[k]).fold(0.0, f64::max);
    let mean = |v: &[[f64; 5]], k: usize| v.iter().map(|r| r[k]).sum::<f64>() / v.len() as f64;
    eprintln!(
        "planes: worst {:.3} -> {:.3}, mean {:.3} -> {:.3}; time / most balanced <= {:.4}",
        worst(&before, 0),
        worst(&after, 0),
        mean(&before, 1),
        mean(&after, 1),
        worst(&after, 4)
    );
    let within = |v: &[[f64; 5]]| v.iter().filter(|r| r[0] <= 1.0 + 1e-9).count();
    eprintln!(
        "within one plane: {} -> {} of 24",
        within(&before),
        within(&after)
    );
    assert!(within(&after) > within(&before));
    assert!(worst(&after, 0) < worst(&before, 0));
    // Item 2: best's time within 2 % of the most balanced candidate's.
    assert!(worst(&after, 4) <= 1.02, "{}", worst(&after, 4));
}

/// `cargo test --release -p nuce-plan grid3_balance_table -- --ignored --nocapture`:
/// the table of benchmarks/grid3_balance.md.
#[test]
#[ignore = "benchmark table, see benchmarks/grid3_balance.md"]
fn grid3_balance_table() {
    let cases = 200;
    let after = measure(2030, cases, 300);
    let before = legacy(|| measure(2030, cases, 300));
    eprintln!("| rounding | planes off, worst part (max / mean over cases) | planes off, mean over parts | cases within one plane | imbalance (max / mean) | internal surface / before (mean) | best time / most balanced candidate's (max / mean) |");
    eprintln!("|---|---|---|---|---|---|---|");
    for (name, v) in [
        ("before (per-level minimax)", &before),
        ("after (nested + plane moves)", &after),
    ] {
        let col = |k: usize| v.iter().map(|r| r[k]).collect::<Vec<f64>>();
        let mx = |x: &[f64]| x.iter().copied().fold(0.0, f64::max);
        let mn = |x: &[f64]| x.iter().sum::<f64>() / x.len() as f64;
        let surf: Vec<f64> = v.iter().zip(&before).map(|(a, b)| a[3] / b[3]).collect();
        let within = col(0).iter().filter(|&&x| x <= 1.0 + 1e-9).count();
        eprintln!(
            "| {name} | {:.3} / {:.3} | {:.3} | {within} of {cases} | {:.4} / {:.4} | {:.4} | {:.4} / {:.4} |",
            mx(&col(0)), mn(&col(0)), mn(&col(1)), mx(&col(2)), mn(&col(2)), mn(&surf), mx(&col(4)), mn(&col(4))
        );
    }
    let c = oracle_counts(2030, cases, 300);
    eprintln!(
        "oracle on the {} cases more than one plane off: best's topology admits one plane in {}, \
         some candidate's (best's or another) in {}, none in {}, undecided {}",
        c[0], c[1], c[2], c[3], c[4]
    );
    // The answers of the oracle cover every failing case.
    assert_eq!(c[2] + c[3] + c[4], c[0]);
}

/// For the cases of [`measure`] where `best` leaves a part more than one
/// plane off: `[failing, best's topology admits one plane, some candidate's
/// topology does (best's included), every topology decided and none does,
/// some topology undecided and none admits]`.
fn oracle_counts(seed: u64, cases: usize, max: usize) -> [usize; 5] {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut c = [0; 5];
    for _ in 0..cases {
        let (shape, speeds) = brick(&mut rng, max);
        let best = Best3::default().decompose(shape, &speeds).unwrap();
        if planes_off(&best, &speeds).iter().all(|&r| r <= 1.0 + 1e-9) {
            continue;
        }
        c[0] += 1;
        let own = one_plane_tiling(&best, &speeds);
        c[1] += usize::from(matches!(own, OnePlane::Reachable(_)));
        let mut all = vec![own];
        for d in all_decomposers3() {
            all.push(one_plane_tiling(
                &d.decompose(shape, &speeds).unwrap(),
                &speeds,
            ));
        }
        for a in &all {
            if let OnePlane::Reachable(w) = a {
                // A witness is a valid tiling with every part within one plane.
                w.validate().unwrap();
                assert!(planes_off(w, &speeds).iter().all(|&r| r <= 1.0 + 1e-9));
            }
        }
        if all.iter().any(|a| matches!(a, OnePlane::Reachable(_))) {
            c[2] += 1;
        } else if all.iter().all(|a| *a == OnePlane::Unreachable) {
            c[3] += 1;
        } else {
            c[4] += 1;
        }
    }
    c
}

/// Every composition of `total` into `k` positive parts.
fn compositions(total: usize, k: usize) -> Vec<Vec<usize>> {
    if k == 1 {
        return vec![vec![total]];
    }
    (1..total.saturating_sub(k - 2))
        .flat_map(|t| {
            compositions(total - t, k - 1)
                .into_iter()
                .map(move |mut rest| {
                    rest.insert(0, t);
                    rest
                })
        })
        .collect()
}

/// Brute force: some cut positions of subtree `node` (every composition of
/// every cut tried) put each part within one plane in a box of extents `e`.
fn brute(tree: &Tree, shares: &[f64], node: usize, e: [usize; 3]) -> bool {
    match &tree.nodes[node].kind {
        Kind::Leaf(i) => {
            let b = Box3::from_axes([0; 3], e);
            (b.volume() as f64 - shares[*i]).abs() / largest_face(&b) as f64 <= 1.0 + 1e-9
        }
        Kind::Cut { axis, children } => {
            compositions(e[*axis], children.len())
                .into_iter()
                .any(|ts| {
                    children.iter().zip(ts).all(|(&c, t)| {
                        let mut f = e;
                        f[*axis] = t;
                        brute(tree, shares, c, f)
                    })
                })
        }
    }
}

#[test]
fn one_plane_oracle_agrees_with_brute_force() {
    let mut rng = ChaCha8Rng::seed_from_u64(38);
    let (mut yes, mut no) = (0, 0);
    for _ in 0..150 {
        let shape = (
            rng.gen_range(2..=9),
            rng.gen_range(2..=9),
            rng.gen_range(2..=9),
        );
        let p = rng.gen_range(2..=6);
        let speeds: Vec<f64> = (0..p).map(|_| rng.gen_range(0.5..4.0)).collect();
        for d in all_decomposers3() {
            let plan = d.decompose(shape, &speeds).unwrap();
            let shares = plan.shares(&speeds).unwrap();
            let empty = plan.boxes.iter().any(|b| b.is_empty());
            let truth = !empty
                && brute(
                    &Tree::build(&plan.boxes).unwrap(),
                    &shares,
                    0,
                    [shape.0, shape.1, shape.2],
                );
            match one_plane_tiling(&plan, &speeds) {
                OnePlane::Reachable(w) => {
                    assert!(truth, "{shape:?} {speeds:?} {}", d.name());
                    w.validate().unwrap();
                    assert!(w.boxes.iter().all(|b| !b.is_empty()));
                    assert!(w.boxes.iter().zip(&shares).all(|(b, &s)| within_one_plane(
                        b.volume(),
                        largest_face(b),
                        s
                    )));
                    yes += 1;
                }
                OnePlane::Unreachable => {
                    assert!(!truth, "{shape:?} {speeds:?} {}", d.name());
                    no += 1;
                }
                OnePlane::Undecided => panic!("{shape:?} {speeds:?} {}: undecided", d.name()),
            }
        }
    }
    eprintln!("oracle = brute force on {yes} reachable, {no} unreachable topologies");
    // Both answers must occur for the comparison to mean something.
    assert!(yes >= 50 && no >= 50, "{yes} yes, {no} no");
}
