//! Ranks that leave a running job (`Balancer::depart`) and that join it from
//! a standby pool (`Pool`) under `mpirun`. Leaving: a
//! grid whose cells hold their global ids, on 2–6 ranks, with ranks leaving
//! at every phase boundary — rank 0 (the root moves), the last rank, ranks
//! in the middle, all but one, nobody, and a leave together with a speed
//! change. Every cell and face ghost holds its id before and after (the
//! move is exact), the departure set is the same on every rank, the
//! leaving ranks are released with empty boxes, the ranks that stay go on
//! with exchanges and a balance point on the new communicator, and the
//! move never carries less than the minimum; a `DistArray3` and a
//! `DistArray2` move to the ranks that stay and work on the new
//! communicator; graphs of each strategy (geometric, root index, manual)
//! move off rank 0, the last rank or two ranks, in proportion to the
//! speeds of the ranks that stay, and their values go on bit-identical to
//! a run that never changed membership. Joining: 1–3 standby ranks
//! admitted after phase 0–2 get cells (planned for their measured speeds)
//! and every cell stays exact; the ranks never admitted are released and
//! used little CPU while they waited; admitting more ranks than wait is the
//! same error on every active rank. 1–2 standby ranks join a `DistArray3`,
//! a `DistArray2` and a geometric graph: every cell, ghost, vertex and
//! value exact on the grown communicator, and every rank holds a part.

mod common;

use std::time::Duration;

/// Runs `depart-grid` and checks its outcome; returns the RESULT line.
fn depart(np: usize, leavers: &[usize], at: usize, phases: usize, speeds: Option<&str>) -> String {
    let list = if leavers.is_empty() {
        "none".to_string()
    } else {
        leavers
            .iter()
            .map(|r| r.to_string())
            .collect::<Vec<_>>()
            .join(",")
    };
    let (at_s, phases_s) = (at.to_string(), phases.to_string());
    let mut args = vec!["depart-grid", "14", "11", "9", &list, &at_s, &phases_s];
    if let Some(s) = speeds {
        args.push(s);
    }
    let run = common::mpirun(np, &args, Duration::from_secs(120));
    run.assert_checks(np, 2);
    let case = format!("np {np}, leaving {list} after phase {at}");
    let released = run.lines_with("RELEASED ").len();
    assert_eq!(released, leavers.len(), "{case}:\n{}", run.stdout);
    let stay = np - leavers.len();
    let ends = run
        .stdout
        .lines()
        .filter(|l| l.contains(" depart-cells-end ok"))
        .count();
    assert_eq!(
        ends, stay,
        "{case}: every rank that stays ends:\n{}",
        run.stdout
    );
    let res = run.lines_with("RESULT depart ");
    assert_eq!(res.len(), 1, "{case}:\n{}", run.stdout);
    assert_eq!(common::field(&res[0], "ranks"), stay.to_string(), "{case}");
    let moved: u64 = common::field(&res[0], "moved").parse().unwrap();
    let minimum: u64 = common::field(&res[0], "minimum").parse().unwrap();
    assert!(moved >= minimum, "{case}: {}", res[0]);
    res[0].clone()
}

#[test]
fn ranks_leave_at_every_phase_boundary_on_2_to_6_ranks() {
    for np in 2..=6 {
        for at in 0..3 {
            // The last rank, then rank 0 (the root), then a middle one.
            let leaver = [np - 1, 0, np / 2][at];
            depart(np, &[leaver], at, 3, None);
        }
    }
}

#[test]
fn all_but_one_nobody_and_several_at_once() {
    depart(4, &[0, 1, 2], 1, 3, None);
    depart(5, &[0, 2, 3, 4], 0, 2, None);
    depart(3, &[], 1, 3, None);
    depart(6, &[1, 4], 1, 3, None);
}

#[test]
fn a_leave_and_a_speed_change_at_one_balance_point() {
    // Rank 3 leaves while rank 2 becomes 3x faster: the new plan gives the
    // ranks that stay cells in proportion to speeds 1:1:3.
    let res = depart(4, &[3], 1, 3, Some("1,1,3,1"));
    let vols: Vec<f64> = common::field(&res, "volumes")
        .split(',')
        .map(|v| v.parse().unwrap())
        .collect();
    assert_eq!(vols.len(), 3, "{res}");
    assert!(vols[2] > 2.0 * vols[0] && vols[2] > 2.0 * vols[1], "{res}");
}

/// Runs the departure scenario `args` on `np` ranks with the ranks in
/// `leavers` (comma-separated) leaving: each of them is released, and the
/// checks that pass are one per leaving rank, `per_stay` per rank that
/// stays and `extra` more.
fn departed(
    np: usize,
    args: &[&str],
    leavers: &str,
    per_stay: usize,
    extra: usize,
    case: &str,
) -> common::Run {
    let run = common::mpirun(np, args, Duration::from_secs(120));
    let gone = leavers.split(',').count();
    let released = run.lines_with("RELEASED ").len();
    assert_eq!(released, gone, "{case}:\n{}", run.stdout);
    let oks = run
        .lines_with("CHECK ")
        .iter()
        .filter(|l| l.ends_with(" ok"))
        .count();
    assert_eq!(
        oks,
        gone + per_stay * (np - gone) + extra,
        "{case}:\n{}",
        run.stdout
    );
    run.assert_ok();
    run
}

#[test]
fn a_dist_array3_follows_the_ranks_that_stay() {
    for (np, leavers) in [(2, "0"), (3, "1"), (4, "0,2"), (4, "3")] {
        let case = format!("np {np} leaving {leavers}");
        // 1 check on a leaving rank, 3 on a rank that stays.
        let run = departed(np, &["depart-array3", leavers], leavers, 3, 0, &case);
        let gone = leavers.split(',').count();
        let res = run.lines_with("RESULT depart3 ");
        let want = format!("ranks={}", np - gone);
        assert!(
            res.first().is_some_and(|r| r.contains(&want)),
            "{}",
            run.stdout
        );
    }
}

#[test]
fn a_dist_array2_follows_the_ranks_that_stay() {
    for (np, leavers) in [(2, "0"), (3, "1"), (4, "0,2"), (4, "3")] {
        let case = format!("np {np} leaving {leavers}");
        // 1 check on a leaving rank, 3 on a rank that stays.
        let run = departed(np, &["depart-array2", leavers], leavers, 3, 0, &case);
        let res = run.lines_with("RESULT depart2 ");
        assert_eq!(res.len(), 1, "{case}:\n{}", run.stdout);
        // The ranks that stay hold the cells in proportion to their speeds.
        let stay: Vec<f64> = (1..=np)
            .filter(|r| !leavers.split(',').any(|l| l == (r - 1).to_string()))
            .map(|r| r as f64)
            .collect();
        assert_proportional(&common::field(&res[0], "areas"), &stay, 23.0 * 17.0, &case);
    }
}

/// Each of the comma-separated `works` is its share of `total` by `speeds`,
/// within 6% of the total and 3 units.
fn assert_proportional(works: &str, speeds: &[f64], total: f64, case: &str) {
    let works: Vec<f64> = works.split(',').map(|w| w.parse().unwrap()).collect();
    let sum: f64 = speeds.iter().sum();
    assert_eq!(works.len(), speeds.len(), "{case}: {works:?}");
    for (w, s) in works.iter().zip(speeds) {
        let want = total * s / sum;
        assert!(
            (w - want).abs() <= 0.06 * total + 3.0,
            "{case}: works {works:?} for speeds {speeds:?}"
        );
    }
}

#[test]
fn graphs_follow_the_ranks_that_stay_bit_identical() {
    for kind in ["geo", "root", "manual"] {
        for (np, leavers) in [(2, "1"), (3, "0"), (4, "3"), (4, "0,2"), (5, "1,4")] {
            let case = format!("{kind} on {np} ranks, leaving {leavers}");
            // 1 check on a leaving rank, 2 on a rank that stays, 1 more on the new root.
            let args = ["depart-graph", kind, leavers];
            let run = departed(np, &args, leavers, 2, 1, &case);
            let gone: Vec<usize> = leavers.split(',').map(|r| r.parse().unwrap()).collect();
            let res = run.lines_with("RESULT depart-graph ");
            assert_eq!(res.len(), 1, "{case}:\n{}", run.stdout);
            let stay: Vec<f64> = (0..np)
                .filter(|r| !gone.contains(r))
                .map(|r| (r + 1) as f64)
                .collect();
            // Vertex weights 1, 2, 3 in turn: 420 on the 7x6x5 grid, 144 on the 9x8 one.
            let total = if kind == "geo" { 420.0 } else { 144.0 };
            assert_proportional(&common::field(&res[0], "works"), &stay, total, &case);
            let moved: u64 = common::field(&res[0], "moved").parse().unwrap();
            let minimum: u64 = common::field(&res[0], "minimum").parse().unwrap();
            assert!(moved >= minimum && minimum > 0, "{case}: {}", res[0]);
        }
    }
}

#[test]
fn every_rank_leaving_is_the_same_error_on_every_rank() {
    let err =
        common::same_error_on_every_rank(3, &["depart-grid", "8", "8", "8", "0,1,2", "0", "2"]);
    assert!(err.contains("all 3 ranks would leave"), "{err}");
}

/// Runs `depart-join` and checks its outcome; returns the RESULT line.
fn join(np: usize, active: usize, admit: usize, at: usize, phases: usize) -> String {
    let s = |x: usize| x.to_string();
    let (a, k, t, p) = (s(active), s(admit), s(at), s(phases));
    let run = common::mpirun(
        np,
        &["depart-join", "14", "11", "9", &a, &k, &t, &p],
        Duration::from_secs(120),
    );
    run.assert_checks(np, 1);
    let case = format!("np {np}, {active} active, {admit} admitted after phase {at}");
    let res = run.lines_with("RESULT join ");
    assert_eq!(res.len(), 1, "{case}:\n{}", run.stdout);
    assert_eq!(common::field(&res[0], "ranks"), s(active + admit), "{case}");
    // Every admitted rank got cells (planned for its measured speed).
    let vols: Vec<usize> = common::field(&res[0], "volumes")
        .split(',')
        .map(|v| v.parse().unwrap())
        .collect();
    assert!(vols.iter().all(|&v| v > 0), "{case}: {}", res[0]);
    let released = run.lines_with("POOL-RELEASED ").len();
    assert_eq!(released, np - active - admit, "{case}:\n{}", run.stdout);
    // A rank that only waited in the pool slept: its CPU time is a small
    // part of its wait (clock ticks of 10 ms, hence the slack).
    for w in run.lines_with("WAITED ") {
        let (wall, cpu): (u64, u64) = (
            common::field(&w, "wall_ms").parse().unwrap(),
            common::field(&w, "cpu_ms").parse().unwrap(),
        );
        let rank: usize = w.split_whitespace().next().unwrap().parse().unwrap();
        if rank >= active + admit {
            assert!(
                cpu <= wall / 2 + 30,
                "{case}: a waiting rank used {cpu} ms of CPU in {wall} ms"
            );
        }
    }
    res[0].clone()
}

#[test]
fn standby_ranks_join_and_get_work_for_their_speed() {
    join(4, 2, 1, 1, 3);
    join(5, 2, 3, 0, 3);
    join(3, 1, 2, 2, 4);
    join(6, 2, 2, 1, 3);
}

#[test]
fn admitting_more_ranks_than_wait_is_the_same_error_on_every_active_rank() {
    let run = common::mpirun(
        4,
        &["depart-join", "8", "8", "8", "2", "3", "0", "2"],
        Duration::from_secs(60),
    );
    run.assert_ok();
    let errs: std::collections::BTreeSet<String> = run
        .lines_with("ERR ")
        .iter()
        .map(|l| l.split_once(' ').unwrap().1.to_string())
        .collect();
    assert_eq!(run.lines_with("ERR ").len(), 2, "{}", run.stdout);
    assert_eq!(errs.len(), 1, "{errs:?}");
    assert!(
        errs.iter()
            .next()
            .unwrap()
            .contains("1 to 2 standby ranks wait"),
        "{errs:?}"
    );
    // The pool was released: both standby ranks returned.
    assert_eq!(run.lines_with("POOL-RELEASED ").len(), 2, "{}", run.stdout);
}

#[test]
fn standby_ranks_join_arrays_and_graphs() {
    // (ranks, active): 1 and 2 standby ranks.
    for (np, active) in [(2, 1), (3, 2), (4, 2)] {
        let run = common::checks_pass(np, &["join-data", &active.to_string()]);
        run.assert_checks(np, 3);
        let res = run.lines_with("RESULT join-data ");
        assert_eq!(res.len(), 1, "{}", run.stdout);
        assert!(res[0].contains(&format!("ranks={np} ")), "{res:?}");
        // Every rank, the admitted ones too, got cells and vertices.
        for key in ["volumes3", "areas2", "vertices"] {
            let v: Vec<usize> = common::field(&res[0], key)
                .split(',')
                .map(|x| x.parse().unwrap())
                .collect();
            assert!(v.len() == np && v.iter().all(|&x| x > 0), "{key}: {res:?}");
        }
    }
}
