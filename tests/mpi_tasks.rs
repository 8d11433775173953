//! The collective matching scheduler and the master–worker executor under
//! mpirun (scenarios in crates/nuce-testkit/src/tasks.rs), the schedule and one run through `Balancer`.

mod common;

use std::time::Duration;

const LIMIT: Duration = Duration::from_secs(120);

#[test]
fn collective_auction_equals_the_sequential_optimum_on_1_to_6_ranks() {
    for np in 1..=6 {
        let run = common::mpirun(np, &["tasks-auction", &np.to_string(), "6"], LIMIT);
        // 6 instances, with and without a master (none with a master alone).
        run.assert_checks(np, if np == 1 { 6 } else { 12 });
        let results = run.lines_with("RESULT");
        assert_eq!(
            results.len(),
            if np == 1 { 6 } else { 12 },
            "{}",
            run.stdout
        );
        for line in results {
            // "auction-k-… value V optimum O"
            let f: Vec<&str> = line.split_whitespace().collect();
            assert_eq!(f[2], f[4], "{line}");
        }
    }
}

#[test]
fn collective_maxtasks1_schedule_and_execution() {
    for np in [3, 4] {
        // Through `nuce::schedule_tasks` and `ExecPlan::run`:
        // platform, same schedule everywhere, equal to the sequential one (on
        // every rank); the master checks both runs (MaxTasks1 through the
        // balancer, MaxTasks2 through the executor) task by task.
        let run = common::mpirun(np, &["tasks-maxtasks1", "0.3"], LIMIT);
        run.assert_checks(np, 3);
        for name in ["maxtasks1", "maxtasks2"] {
            for what in ["executed-once", "return-order"] {
                let line = format!("CHECK 0 {name}-{what} ok");
                assert!(run.stdout.contains(&line), "{line}:\n{}", run.stdout);
            }
        }
    }
}

#[test]
fn a_bad_row_is_the_same_error_on_every_rank() {
    let run = common::mpirun(3, &["tasks-bad"], LIMIT);
    run.assert_checks(3, 1);
}

#[test]
fn master_worker_example_runs_and_checks_its_product() {
    let exe = common::example("master_worker");
    let run = common::mpirun_prog(
        3,
        &exe,
        &[
            "--rows",
            "120",
            "--cols",
            "40",
            "--repeats",
            "1",
            "--mult",
            "1,3",
        ],
        LIMIT,
    );
    run.assert_ok();
    let results = run.lines_with("RESULT");
    assert_eq!(results.len(), 3, "{}", run.stdout);
    for variant in ["naive", "semi-naive", "optimal"] {
        assert!(results
            .iter()
            .any(|l| l.starts_with(&format!("{variant} "))));
    }
}

#[test]
fn master_worker_rejects_bad_options_without_panicking() {
    // Issue 12: `--rows 0` and `--rows abc` panicked. The options are now
    // checked and agreed on every rank: a message and status 2 (run here as
    // an MPI singleton; `tests/mpmd.rs` gives the bad value to one rank).
    let exe = common::example("master_worker");
    for args in [
        &["--rows", "0"][..],
        &["--rows", "abc"],
        &["--cols", "-3"],
        &["--rows", "18446744073709551615", "--cols", "2"],
        &["--mult", "1,,2"],
        &["--repeats"],
        &["--bogus", "1"],
    ] {
        let out = std::process::Command::new(&exe)
            .args(args)
            .output()
            .expect("run master_worker");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.starts_with("master_worker: "), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{args:?}: {err}");
    }
}
