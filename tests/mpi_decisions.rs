//! The remap decision on injected timings (issue 28): the testkit's
//! `decide-replay` reports phases whose compute times come from scripted
//! true speeds and a deterministic jitter (`Balancer::record_phase`), so
//! these tests check the decision logic — persistent imbalance, noise on
//! equal ranks, a load that arrives and leaves — whatever the load of the
//! machine they run on. Timing under real load is benchmarked
//! (`scripts/bench_real_load.sh`, BENCHMARKS.md).

mod common;

use std::time::Duration;

/// One balance point of a replay: whether it remapped, the rule that
/// decided, and the imbalance of the layout after it under the true speeds.
#[derive(Debug)]
struct Point {
    remap: bool,
    rule: String,
    imbalance: f64,
}

/// The `RESULT bp=` lines of testkit scenario `scenario` on 2 ranks (whose
/// checks must pass).
fn results(scenario: &str, args: &[&str]) -> Vec<String> {
    let mut all = vec![scenario];
    all.extend_from_slice(args);
    let run = common::mpirun(2, &all, Duration::from_secs(120));
    run.assert_checks(2, 1);
    run.lines_with("RESULT bp=")
}

fn replay(args: &[&str]) -> Vec<Point> {
    results("decide-replay", args)
        .iter()
        .map(|l| {
            let field = |k: &str| common::field(l, k);
            Point {
                remap: field("remap") == "true",
                rule: field("rule"),
                imbalance: field("imbalance").parse().expect("imbalance"),
            }
        })
        .collect()
}

/// A plan 15 % off the true speeds 8.5 : 3.6: with ±4 % of jitter it is
/// corrected within three balance points (by the noise rule or, when the
/// noise hides it, by the persistence rule) to within 3 % of the true
/// speeds; with ±8 % the estimates themselves stray by up to 5 %, and
/// the layout ends within the hysteresis (5 %) after at most two remaps.
/// Six jitter patterns each; the replay is deterministic.
#[test]
fn a_persistent_imbalance_is_corrected() {
    let mut rules = Vec::new();
    for (jitter, by, within, most) in [("0.04", 3, 0.03, 1), ("0.08", 10, 0.05, 2)] {
        for seed in 1..=6 {
            let seed = seed.to_string();
            let pts = replay(&["8.5:3.6", "8.5:4.3", "10", jitter, &seed]);
            assert_eq!(pts.len(), 10, "{pts:?}");
            let remaps: Vec<usize> = (0..10).filter(|&i| pts[i].remap).collect();
            assert!(
                remaps.first().is_some_and(|&i| i < by) && remaps.len() <= most,
                "jitter {jitter}, seed {seed}: {pts:?}"
            );
            let last = pts.last().unwrap();
            assert!(
                last.imbalance <= within,
                "jitter {jitter}, seed {seed}: {pts:?}"
            );
            rules.extend(remaps.iter().map(|&i| pts[i].rule.clone()));
        }
    }
    // Both rules decide some of these.
    assert!(rules.iter().any(|r| r == "Persistent"), "{rules:?}");
    assert!(rules.iter().any(|r| r == "WithinNoise"), "{rules:?}");
}

/// Equal ranks never remap on noise: ±4 % and ±10 % of jitter over 20
/// balance points, three patterns each.
#[test]
fn equal_ranks_never_remap_on_noise() {
    for jitter in ["0.04", "0.10"] {
        for seed in ["11", "12", "13"] {
            let pts = replay(&["1:1", "1:1", "20", jitter, seed]);
            assert_eq!(pts.len(), 20);
            assert!(
                pts.iter().all(|p| !p.remap),
                "jitter {jitter}, seed {seed}: {pts:?}"
            );
        }
    }
}

/// A load that halves rank 1's speed from balance point 5 to 11 is
/// followed within two balance points, and followed back when it leaves;
/// no remap in between.
#[test]
fn a_load_that_comes_and_goes_is_followed_both_ways() {
    for (jitter, seed) in [("0.04", "21"), ("0.08", "22")] {
        let pts = replay(&["1:1", "1:1", "20", jitter, seed, "1*0.5@5-12"]);
        assert_eq!(pts.len(), 20);
        let remaps: Vec<usize> = (0..20).filter(|&i| pts[i].remap).collect();
        assert!(
            remaps.iter().any(|&i| (5..7).contains(&i)),
            "arrival not followed: {remaps:?} {pts:?}"
        );
        assert!(
            remaps.iter().any(|&i| (12..14).contains(&i)),
            "departure not followed: {remaps:?} {pts:?}"
        );
        assert!(
            remaps
                .iter()
                .all(|&i| (5..7).contains(&i) || (12..14).contains(&i)),
            "a remap on noise: {remaps:?} {pts:?}"
        );
        // After the arrival's remap and after the departure's, the layout
        // fits the true speeds within the hysteresis plus rounding.
        assert!(
            pts[7].imbalance <= 0.06 && pts[15].imbalance <= 0.06,
            "{pts:?}"
        );
        assert!(pts.iter().all(|p| p.rule != "Exact"), "{pts:?}");
    }
}

/// One balance point of `decide-payoff`: whether it remapped, the rule,
/// and the two ranks' cells after it.
fn payoff_run(args: &[&str]) -> Vec<(bool, String, [usize; 2])> {
    results("decide-payoff", args)
        .iter()
        .map(|l| {
            let area = common::field(l, "area");
            let cells: Vec<usize> = area.split(':').map(|x| x.parse().expect("cells")).collect();
            (
                common::field(l, "remap") == "true",
                common::field(l, "rule"),
                [cells[0], cells[1]],
            )
        })
        .collect()
}

/// A remap that makes the application slower in wall-clock time is undone
/// (issue 28): rank 1 computes 3× slower, but whenever it holds fewer cells
/// both ranks wait 320 ms more per phase (a balanced phase takes 120 ms;
/// the shared-core effect, outside the compute, so the speeds keep saying
/// 3 : 1). The remap the speeds ask
/// for is made, found slower in two phases, undone (`NoPayoff`, back to
/// equal shares), and not made again for the veto's balance points
/// (`Vetoed`), twice as long after a second failure. Without the penalty
/// the same remap stays; when the load moves to the other rank, it is
/// followed at once. Phases are timed by nuce (sleeps: robust to load).
#[test]
fn a_remap_that_does_not_pay_off_is_undone() {
    // Control: no penalty, a remap to about 3 : 1 (and at most two
    // corrections on a loaded machine's noise), nothing undone.
    let pts = payoff_run(&["0", "8"]);
    assert_eq!(pts.len(), 8, "{pts:?}");
    assert!(
        pts[0].0 && pts.iter().filter(|p| p.0).count() <= 3,
        "{pts:?}"
    );
    assert!(
        pts.iter().all(|p| p.1 != "NoPayoff" && p.1 != "Vetoed"),
        "{pts:?}"
    );
    let last = pts.last().unwrap().2;
    assert!(last[0] >= 2 * last[1], "{pts:?}");

    // The penalty: remap, undo after two slower phases, veto.
    let pts = payoff_run(&["320", "14"]);
    assert_eq!(pts.len(), 14, "{pts:?}");
    let first = pts.iter().position(|p| p.0).expect("a remap");
    assert!(first <= 1 && pts[first].2[1] < pts[first].2[0], "{pts:?}");
    let undo = pts.iter().position(|p| p.1 == "NoPayoff").expect("an undo");
    // Two slower phases (a correction remap in between may not reset the check).
    assert!((first + 2..=first + 3).contains(&undo), "{pts:?}");
    assert!(pts[undo].0 && pts[undo].2 == [120_000, 120_000], "{pts:?}");
    // The veto: the next 4 balance points keep the equal shares (a
    // loaded machine's speeds may stray beyond the veto's tolerance once).
    let again = pts[undo + 1..undo + 5].iter().filter(|p| p.0).count();
    assert!(again <= 1, "{pts:?}");
    assert!(pts.iter().any(|p| p.1 == "Vetoed"), "{pts:?}");
    // Every undo goes back to equal shares, and every remap that gives
    // rank 1 fewer cells is undone within three balance points (when the
    // run goes on that long).
    for (k, p) in pts.iter().enumerate() {
        if p.1 == "NoPayoff" {
            assert_eq!(p.2, [120_000, 120_000], "{pts:?}");
        } else if p.0 && p.2[1] < p.2[0] && k + 3 < pts.len() {
            let undone = pts[k + 1..=k + 3].iter().any(|q| q.1 == "NoPayoff");
            assert!(undone, "bp {k}: {pts:?}");
        }
    }

    // The load moves to rank 0 at balance point 6: followed at once.
    let pts = payoff_run(&["320", "10", "6"]);
    let moved = pts[6..]
        .iter()
        .position(|p| p.0 && p.2[0] < p.2[1])
        .expect("the new load is followed");
    assert!(moved <= 1, "{pts:?}");
    assert!(
        pts[6 + moved..].iter().all(|p| p.1 != "NoPayoff"),
        "{pts:?}"
    );
}
