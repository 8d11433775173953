//! `Balancer::plan1d_weighted` (counts for p4est's `p4est_partition_given`)
//! under `mpirun` with 1 to 3 ranks: counts summing to the global number of
//! items and equal to the planner's on the gathered sequence (an empty
//! rank included); loads that follow speeds recorded from phases, and
//! speeds nuce times itself (a rank repeating its work 3 times gets less);
//! bad input on one rank (NaN, negative weight, overflowing sum, other
//! iterations) gives the same error on every rank.

mod common;

#[test]
fn counts_sum_to_the_items_and_match_the_planner() {
    for np in [1, 2, 3] {
        let run = common::checks_pass(np, &["curve-match"]);
        assert_eq!(run.lines_with("RESULT curve ").len(), 2 * np);
    }
}

#[test]
fn counts_follow_recorded_phase_speeds() {
    for np in [2, 3] {
        common::checks_pass(np, &["curve-phases"]);
    }
}

#[test]
fn counts_follow_timed_phases() {
    let _alone = common::measured_speeds_lock();
    // Real timings (rank 1 repeats its work 3 times): in one of up to three
    // runs, so that other jobs' load on the machine cannot fail it alone.
    common::within_three_runs(|| {
        let run = common::mpirun(2, &["curve-timed"], std::time::Duration::from_secs(120));
        if run.code != Some(0) || run.stdout.contains("FAIL") {
            return Err(run.stdout);
        }
        run.assert_checks(2, 1);
        assert_eq!(run.lines_with("RESULT curve-timed").len(), 2);
        Ok(())
    });
}

#[test]
fn bad_weights_give_the_same_error_on_every_rank() {
    let cases = [
        ("nan", "weight 2 is NaN"),
        ("negative", "weight 0 is -1"),
        ("overflow", "overflow"),
        ("iterations", "plan1d_weighted"),
    ];
    for np in [2, 3] {
        for (case, needle) in cases {
            let e = common::same_error_on_every_rank(np, &["curve-errors", case]);
            assert!(e.contains(needle), "{case} on {np}: {e}");
        }
    }
}
