//! Balance of the 3D plans in planes (issue 30, item 5): every part's
//! distance from its speed share measured in its largest face, the plane
//! adjustment of `planes.rs` against the plain per-level rounding it
//! replaced, and `best`'s time against the most balanced candidate's.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::best::{is_one_plane, NO_ONE_PLANE};
use super::one_plane::one_plane_within;
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

/// This thread's CPU time in seconds, from the kernel's scheduler
/// statistics (nanoseconds on the CPU; the machine may be loaded), or the
/// wall time since the first call where they cannot be read.
fn cpu_seconds() -> f64 {
    let on_cpu = std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse::<f64>().ok());
    on_cpu.map_or_else(
        || {
            thread_local!(static START: std::time::Instant = std::time::Instant::now());
            START.with(|s| s.elapsed().as_secs_f64())
        },
        |ns| ns * 1e-9,
    )
}

/// Runs `f` without `best`'s one-plane witnesses.
fn no_oracle<T>(f: impl FnOnce() -> T) -> T {
    NO_ONE_PLANE.with(|l| l.set(true));
    let out = f();
    NO_ONE_PLANE.with(|l| l.set(false));
    out
}

/// Per case: best's largest distance in planes, its mean over the parts,
/// imbalance, internal surface, best's predicted time over the most
/// balanced candidate's (least slowest part) and best's plan time in
/// seconds (CPU, the least of `reps` runs), for `cases` random bricks.
fn measure(seed: u64, cases: usize, max: usize, reps: usize) -> Vec<[f64; 6]> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    (0..cases)
        .map(|_| {
            let (shape, speeds) = brick(&mut rng, max);
            let stencil = Stencil::default();
            let mut secs = f64::INFINITY;
            let mut best = None;
            for _ in 0..reps {
                let clock = cpu_seconds();
                best = Some(Best3::default().decompose(shape, &speeds).unwrap());
                secs = secs.min(cpu_seconds() - clock);
            }
            let best = best.unwrap();
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
                secs,
            ]
        })
        .collect()
}

#[test]
fn best_is_closer_to_the_shares_and_near_the_most_balanced_time() {
    let after = measure(7, 24, 160, 1);
    let rounding = no_oracle(|| measure(7, 24, 160, 1));
    let before = legacy(|| no_oracle(|| measure(7, 24, 160, 1)));
    let worst = |v: &[[f64; 6]], k: usize| v.iter().map(|r| r[k]).fold(0.0, f64::max);
    let mean = |v: &[[f64; 6]], k: usize| v.iter().map(|r| r[k]).sum::<f64>() / v.len() as f64;
    eprintln!(
        "planes: worst {:.3} -> {:.3} -> {:.3}, mean {:.3} -> {:.3} -> {:.3}; time / most balanced <= {:.4}",
        worst(&before, 0),
        worst(&rounding, 0),
        worst(&after, 0),
        mean(&before, 1),
        mean(&rounding, 1),
        mean(&after, 1),
        worst(&after, 4)
    );
    let one = |r: &[f64; 6]| r[0] <= 1.0 + 1e-9;
    let within = |v: &[[f64; 6]]| v.iter().filter(|r| one(r)).count();
    eprintln!(
        "within one plane: {} -> {} -> {} of 24",
        within(&before),
        within(&rounding),
        within(&after)
    );
    assert!(within(&rounding) > within(&before));
    assert!(worst(&rounding, 0) < worst(&before, 0));
    // The witnesses lose no case the rounding had within one plane, and
    // gain some.
    for (r, a) in rounding.iter().zip(&after) {
        assert!(!one(r) || one(a), "{r:?} -> {a:?}");
    }
    assert!(within(&after) > within(&rounding));
    // Item 2: best's time within 2 % of the most balanced candidate's.
    for v in [&rounding, &after] {
        assert!(worst(v, 4) <= 1.02, "{}", worst(v, 4));
    }
}

/// `cargo test --release -p nuce-plan grid3_balance_table -- --ignored --nocapture`:
/// the table of benchmarks/grid3_balance.md.
#[test]
#[ignore = "benchmark table, see benchmarks/grid3_balance.md"]
fn grid3_balance_table() {
    let cases = 200;
    let after = measure(2030, cases, 300, 2);
    let rounding = no_oracle(|| measure(2030, cases, 300, 2));
    let before = legacy(|| no_oracle(|| measure(2030, cases, 300, 2)));
    eprintln!("| rounding | planes off, worst part (max / mean over cases) | planes off, mean over parts | cases within one plane | imbalance (max / mean) | internal surface / before (mean / max) | best time / most balanced candidate's (max / mean) | plan CPU ms (max / mean) |");
    eprintln!("|---|---|---|---|---|---|---|---|");
    for (name, v) in [
        ("before (per-level minimax)", &before),
        ("nested + plane moves", &rounding),
        ("after oracle (one-plane witnesses)", &after),
    ] {
        let col = |k: usize| v.iter().map(|r| r[k]).collect::<Vec<f64>>();
        let mx = |x: &[f64]| x.iter().copied().fold(0.0, f64::max);
        let mn = |x: &[f64]| x.iter().sum::<f64>() / x.len() as f64;
        let surf: Vec<f64> = v.iter().zip(&before).map(|(a, b)| a[3] / b[3]).collect();
        let within = col(0).iter().filter(|&&x| x <= 1.0 + 1e-9).count();
        let ms: Vec<f64> = col(5).iter().map(|t| t * 1e3).collect();
        eprintln!(
            "| {name} | {:.3} / {:.3} | {:.3} | {within} of {cases} | {:.4} / {:.4} | {:.4} / {:.4} | {:.4} / {:.4} | {:.1} / {:.1} |",
            mx(&col(0)), mn(&col(0)), mn(&col(1)), mx(&col(2)), mn(&col(2)), mn(&surf), mx(&surf), mx(&col(4)), mn(&col(4)), mx(&ms), mn(&ms)
        );
    }
    let s: Vec<f64> = after
        .iter()
        .zip(&rounding)
        .map(|(a, r)| a[3] / r[3])
        .collect();
    eprintln!(
        "surface after oracle / nested + plane moves: mean {:.4}, max {:.4}, {} cases changed",
        s.iter().sum::<f64>() / s.len() as f64,
        s.iter().copied().fold(0.0, f64::max),
        s.iter().filter(|&&x| x != 1.0).count()
    );
    let (c, over) = oracle_counts(2030, cases, 300);
    eprintln!(
        "after oracle: {} cases more than one plane off: no candidate's topology admits one plane in {}, \
         a search over its budget ({} steps) in {} (of which 20 times the budget finds one plane in {}), \
         a one-plane plan left out by the 2 % rule in {} (a candidate's own rounding) + {} (witnesses only), \
         its least time / most balanced's: min {:.4}, max {:.4}; \
         cases brought within one plane: {} by a witness ({} of rectilinear's tree), {} by another candidate's own rounding",
        c[0], c[1], Best3::ONE_PLANE_STEPS, c[2], c[3], c[4], c[5],
        over.iter().copied().fold(f64::INFINITY, f64::min),
        over.iter().copied().fold(0.0, f64::max),
        c[6], c[7], c[8]
    );
    // The oracle's cost near its largest p (Best3::ONE_PLANE_MAX_PARTS).
    let mut rng = ChaCha8Rng::seed_from_u64(2031);
    let (mut ms, mut within) = ([Vec::new(), Vec::new()], [0, 0]);
    for _ in 0..10 {
        let shape = (
            rng.gen_range(100..=300),
            rng.gen_range(100..=300),
            rng.gen_range(100..=300),
        );
        let p = rng.gen_range(128..=Best3::ONE_PLANE_MAX_PARTS);
        let speeds: Vec<f64> = (0..p).map(|_| rng.gen_range(0.5..4.0)).collect();
        for (k, off) in [false, true].into_iter().enumerate() {
            let run = || {
                let clock = cpu_seconds();
                let b = Best3::default().decompose(shape, &speeds).unwrap();
                (b, (cpu_seconds() - clock) * 1e3)
            };
            let (b, t) = if off { no_oracle(run) } else { run() };
            let (_, t2) = if off { no_oracle(run) } else { run() };
            ms[k].push(t.min(t2));
            within[k] += usize::from(is_one_plane(&b, &speeds).unwrap());
        }
    }
    let mx = |x: &[f64]| x.iter().copied().fold(0.0, f64::max);
    let mn = |x: &[f64]| x.iter().sum::<f64>() / x.len() as f64;
    eprintln!(
        "p = 128..{}, bricks 100..300 a side, 10 cases: plan ms (max / mean) {:.1} / {:.1} with the oracle, \
         {:.1} / {:.1} without; within one plane {} vs {} of 10",
        Best3::ONE_PLANE_MAX_PARTS, mx(&ms[0]), mn(&ms[0]), mx(&ms[1]), mn(&ms[1]), within[0], within[1]
    );
    // Every case left out by the 2 % rule is really over it.
    assert!(over.iter().all(|&r| r > 1.0 + Best3::BALANCE_TOLERANCE));
    assert_eq!(c[1] + c[2] + c[4] + c[5], c[0]);
}

/// For the cases of [`measure`]: `[best leaves a part more than one plane
/// off; of those: every candidate's topology unreachable, some candidate's
/// search over best's budget (none reachable), of those reachable within
/// 20 times the budget, a one-plane plan left out by the 2 % rule (some
/// candidate's own rounding within one plane), the same with only
/// witnesses within one plane; best's pick a witness, of those of
/// rectilinear's tree; best within one plane only with the oracle, by
/// another candidate's own rounding]`, and for the cases left out by the
/// 2 % rule the least predicted time of a one-plane plan over the most
/// balanced plan's.
fn oracle_counts(seed: u64, cases: usize, max: usize) -> ([usize; 9], Vec<f64>) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let (mut c, mut over) = ([0; 9], Vec::new());
    let stencil = Stencil::default();
    for _ in 0..cases {
        let (shape, speeds) = brick(&mut rng, max);
        let best = Best3::default().decompose(shape, &speeds).unwrap();
        let one = is_one_plane(&best, &speeds).unwrap();
        if best.algorithm.ends_with("+one-plane") {
            c[6] += 1;
            c[7] += usize::from(best.algorithm.contains("rectilinear"));
            // A witness is a valid tiling with every part within one plane.
            best.validate().unwrap();
            assert!(one);
        } else if one {
            let plain = no_oracle(|| Best3::default().decompose(shape, &speeds).unwrap());
            c[8] += usize::from(!is_one_plane(&plain, &speeds).unwrap());
        }
        if one {
            continue;
        }
        c[0] += 1;
        // Each candidate, its own rounding's one-plane test, and the
        // oracle's answer on its topology.
        let all: Vec<(GridPlan3, bool, OnePlane)> = all_decomposers3()
            .iter()
            .map(|d| {
                let q = d.decompose(shape, &speeds).unwrap();
                let own = is_one_plane(&q, &speeds).unwrap();
                let a = if own {
                    OnePlane::Reachable(q.clone())
                } else {
                    one_plane_within(&q, &speeds, Best3::ONE_PLANE_STEPS)
                };
                (q, own, a)
            })
            .collect();
        let witnesses: Vec<&GridPlan3> = all
            .iter()
            .filter_map(|(_, _, a)| match a {
                OnePlane::Reachable(w) => Some(w),
                _ => None,
            })
            .collect();
        if !witnesses.is_empty() {
            c[if all.iter().any(|x| x.1) { 4 } else { 5 }] += 1;
            let key = |q: &GridPlan3| {
                (
                    q.slowest(&speeds).unwrap(),
                    predicted_time3(q, &speeds, stencil).unwrap(),
                )
            };
            let balanced = all
                .iter()
                .map(|x| &x.0)
                .chain(witnesses.iter().copied())
                .map(key)
                .fold((f64::INFINITY, 0.0), |b, k| if k < b { k } else { b });
            let least = witnesses
                .iter()
                .map(|w| key(w).1)
                .fold(f64::INFINITY, f64::min);
            over.push(least / balanced.1);
        } else if all.iter().all(|x| x.2 == OnePlane::Unreachable) {
            c[1] += 1;
        } else {
            c[2] += 1;
            let full = all.iter().any(|(q, _, a)| {
                *a == OnePlane::Undecided
                    && matches!(
                        one_plane_within(q, &speeds, 20 * Best3::ONE_PLANE_STEPS),
                        OnePlane::Reachable(_)
                    )
            });
            c[3] += usize::from(full);
        }
    }
    (c, over)
}

/// Brute force: the least slowest part (`max cells/speed`) over every
/// choice of cut positions of subtree `node` in a box of extents `e` that
/// puts each part within one plane; `None` when no choice does.
fn brute(tree: &Tree, speeds: &[f64], shares: &[f64], node: usize, e: [usize; 3]) -> Option<f64> {
    match &tree.nodes[node].kind {
        Kind::Leaf(i) => {
            let b = Box3::from_axes([0; 3], e);
            ((b.volume() as f64 - shares[*i]).abs() / largest_face(&b) as f64 <= 1.0 + 1e-9)
                .then(|| b.volume() as f64 / speeds[*i])
        }
        Kind::Cut { axis, children } => brute_cut(tree, speeds, shares, children, *axis, e),
    }
}

/// [`brute`] for the `children` of a cut along `axis` sharing the extent
/// `e[axis]`: every thickness of the first child, the rest recursively.
fn brute_cut(
    tree: &Tree,
    speeds: &[f64],
    shares: &[f64],
    children: &[usize],
    axis: usize,
    e: [usize; 3],
) -> Option<f64> {
    let (&first, rest) = children.split_first()?;
    if rest.is_empty() {
        return brute(tree, speeds, shares, first, e);
    }
    (1..e[axis].saturating_sub(rest.len() - 1))
        .filter_map(|t| {
            let (mut head, mut tail) = (e, e);
            head[axis] = t;
            tail[axis] = e[axis] - t;
            let first = brute(tree, speeds, shares, first, head)?;
            Some(first.max(brute_cut(tree, speeds, shares, rest, axis, tail)?))
        })
        .reduce(f64::min)
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
            let truth = if empty {
                None
            } else {
                brute(
                    &Tree::build(&plan.boxes).unwrap(),
                    &speeds,
                    &shares,
                    0,
                    [shape.0, shape.1, shape.2],
                )
            };
            match one_plane_tiling(&plan, &speeds) {
                OnePlane::Reachable(w) => {
                    // The witness's slowest part is the least over the
                    // one-plane tilings of the topology.
                    let least = truth.expect("brute force finds a tiling");
                    assert_eq!(w.slowest(&speeds).unwrap(), least, "{shape:?} {speeds:?}");
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
                    assert!(truth.is_none(), "{shape:?} {speeds:?} {}", d.name());
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
