//! The functional speed model at run time (issue 19), through the heat2d
//! example: a rank whose speed depends on its block size, flat speeds, and
//! memory limits.

mod common;

use std::time::Duration;

use serde_json::Value;

fn heat(args: &[&str]) -> common::Run {
    let _alone = common::measured_speeds_lock();
    let mut all = vec!["--json", "--no-check"];
    all.extend_from_slice(args);
    common::mpirun_prog(
        2,
        &common::example("heat2d"),
        &all,
        Duration::from_secs(120),
    )
}

/// Every phase's (model, remapped, rank 1's cells).
fn phases(v: &Value) -> Vec<(String, bool, u64)> {
    v["phases"]
        .as_array()
        .expect("phases")
        .iter()
        .map(|p| {
            (
                p["model"].as_str().expect("model").to_string(),
                p["remapped"].as_bool().expect("remapped"),
                p["areas"][1].as_u64().expect("areas"),
            )
        })
        .collect()
}

/// Rank 1 is 3× slower once its block exceeds `KNEE` cells of 1024² (the
/// even split gives it 524 288).
const KNEE: u64 = 400_000;

/// heat2d on real timings: the functional model decides once rank 1 was
/// timed on both sides of the knee, and `--speed-model constant` never
/// does. Where it settles depends on the load of the machine (the remap
/// must pay off for every speed within the measured noise):
/// scripts/bench_fpm.sh measures that, and
/// [`the_functional_model_settles_below_the_knee`] checks it on modelled
/// times.
#[test]
fn heat2d_plans_with_the_functional_model_across_a_knee() {
    let knee = KNEE.to_string();
    let slow = format!("1:3@0:above={knee}");
    let run = |model: &str| {
        common::json_summary(&heat(&[
            "--rows",
            "1024",
            "--cols",
            "1024",
            "--phases",
            "6",
            "--iters",
            "40",
            "--slowdown",
            &slow,
            "--speed-model",
            model,
            // An even first split (no kernel measurement, which a loaded
            // machine skews): rank 1 starts above the knee, so its first
            // timing is the slow side and the next plan crosses the knee.
            "--warmup",
            "40",
        ]))
    };
    let (functional, constant) = (phases(&run("auto")), phases(&run("constant")));
    eprintln!("functional: {functional:?}\nconstant: {constant:?}");
    assert!(constant.iter().all(|p| p.0 != "Functional"), "{constant:?}");
    assert!(
        functional.iter().any(|p| p.0 == "Functional"),
        "{functional:?}"
    );
}

/// The testkit's `fpm-knee` on 2 ranks: a 512² array whose rank 1 is 3×
/// slower above 100 000 cells (the even split gives it 131 072), every
/// phase recorded by `Balancer::record_phase` with the modelled time, so
/// that the plans depend on the speed functions alone. The functional
/// model plans from the second phase, changes the plan at most once from
/// the fourth phase on, and ends with rank 1 below the knee within 8 % of
/// the ideal time (rank 1 holding exactly the knee): the remap
/// hysteresis is 5 %, the jitter of the records 1 %.
#[test]
fn the_functional_model_settles_below_the_knee() {
    const CELLS: u64 = 512 * 512;
    const SMALL_KNEE: u64 = 100_000;
    let run = common::mpirun(2, &["fpm-knee", "1", "10"], Duration::from_secs(120));
    run.assert_checks(2, 1);
    let phases: Vec<(String, bool, u64)> = run
        .lines_with("RESULT knee ")
        .iter()
        .map(|l| {
            let field = |k: &str| common::field(l, k);
            (
                field("model"),
                field("remapped") == "true",
                field("cells").parse().expect("cells"),
            )
        })
        .collect();
    assert_eq!(phases.len(), 10, "{}", run.stdout);
    assert!(
        phases[1..].iter().all(|p| p.0 == "Functional"),
        "{phases:?}"
    );
    let late = phases[3..].iter().filter(|p| p.1).count();
    assert!(late <= 1, "{phases:?}");
    let last = phases.last().expect("a phase").2;
    assert!(last <= SMALL_KNEE, "{phases:?}");
    let ideal = (CELLS - SMALL_KNEE) as f64;
    let steady = (CELLS - last).max(last) as f64;
    assert!(
        steady <= 1.08 * ideal,
        "{} × ideal: {phases:?}",
        steady / ideal
    );
}

#[test]
fn flat_speeds_keep_the_constant_model() {
    // Equal ranks: while no rank's block changed size, every speed function
    // has one point (flat), and the constant model plans — the plans of
    // nuce without speed functions. (A remap on the noise of a loaded
    // machine gives a second size; from then on either model may decide.)
    let v = common::json_summary(&heat(&[
        "--rows", "512", "--cols", "512", "--phases", "4", "--iters", "20",
    ]));
    let p = phases(&v);
    let first = p[0].2;
    for q in p.iter().take_while(|q| q.2 == first) {
        assert_ne!(q.0, "Functional", "{p:?}");
    }
}

#[test]
fn memory_limits_hold_or_fail_on_every_rank() {
    // Rank 0 is 4× faster (it would get 80 %) but holds at most 24 000 of
    // the 40 000 cells.
    let base = [
        "--rows", "200", "--cols", "200", "--phases", "4", "--iters", "10",
    ];
    let mut args = base.to_vec();
    args.extend_from_slice(&["--slowdown", "1:4@0", "--mem-limit", "0:24000"]);
    let v = common::json_summary(&heat(&args));
    for q in v["phases"].as_array().expect("phases") {
        assert!(q["areas"][0].as_u64().expect("area") <= 24_000, "{q}");
    }
    let final0 = &v["final_plan"][0];
    let cells = final0["rows"].as_u64().unwrap() * final0["cols"].as_u64().unwrap();
    assert!(cells <= 24_000, "{final0}");
    // The first plan (for the kernel, which sees the 4× factor) is the one
    // the limit binds: rank 0 gets close to its limit, not its 80 %.
    let first = v["phases"][0]["areas"][0].as_u64().expect("area");
    assert!(first > 20_000, "{}", v["phases"][0]);
    // Limits that hold half the grid: the same error on both ranks.
    let mut args = base.to_vec();
    args.extend_from_slice(&["--mem-limit", "0:10000,1:10000"]);
    let run = heat(&args);
    assert_eq!(run.code, Some(2), "{}", run.stderr);
    // Every rank prints the same message (one write per line).
    let message = |rank: usize| {
        let tag = format!("heat2d: rank {rank}: error: ");
        let at = run
            .stderr
            .find(&tag)
            .unwrap_or_else(|| panic!("rank {rank} reports no error: {}", run.stderr));
        let rest = &run.stderr[at + tag.len()..];
        rest.lines().next().unwrap_or_default().to_string()
    };
    let (m0, m1) = (message(0), message(1));
    assert!(m0.contains("memory"), "{}", run.stderr);
    assert_eq!(m0, m1, "{}", run.stderr);
}

/// `Balancer::measure_sizes` on 2 ranks: every rank's speed function holds
/// the sweep's points (checked by the scenario), and a bad size list —
/// on one rank, on every rank, different between ranks — is the same error
/// on every rank.
#[test]
fn a_size_sweep_reaches_every_speed_function_and_agrees_on_errors() {
    let run = {
        let _alone = common::measured_speeds_lock();
        common::mpirun(2, &["array-sweep"], Duration::from_secs(120))
    };
    run.assert_checks(2, 5);
    same_errors(
        &run,
        &[
            ("one-rank", "sweep size 1"),
            ("every-rank", "1 to 64 block sizes"),
            ("different", "measure_sizes"),
        ],
    );
}

/// For each `(case, needle)`: the scenario's `ERR <rank> <case> <error>`
/// lines of both ranks are one error (not `none`), containing `needle`.
fn same_errors(run: &common::Run, cases: &[(&str, &str)]) {
    for (case, needle) in cases {
        let errs: Vec<String> = run
            .lines_with("ERR ")
            .into_iter()
            .filter_map(|l| {
                let (_, rest) = l.split_once(' ')?;
                rest.strip_prefix(&format!("{case} ")).map(str::to_string)
            })
            .collect();
        assert_eq!(errs.len(), 2, "{case}: {}", run.stdout);
        assert_eq!(errs[0], errs[1], "{case}: {}", run.stdout);
        assert!(errs[0].contains(needle), "{case}: {}", errs[0]);
        assert!(!errs[0].starts_with("none"), "{case}");
    }
}

/// `Balancer::set_memory_limit_from_machine` on 2 ranks (testkit
/// `fpm-memory`): the limit read from hwloc is positive and at most
/// `/proc/meminfo`'s memory over the ranks on the host, plans of a 2D
/// array and of 1D units keep a limit that binds, and bad input — on one
/// rank, on the root, on every rank, limits too small for the array — is
/// the same error on every rank.
#[test]
fn memory_limits_from_the_machine_hold_and_agree_on_errors() {
    let run = common::mpirun(2, &["fpm-memory"], Duration::from_secs(120));
    run.assert_checks(2, 6);
    same_errors(
        &run,
        &[
            (
                "nan-one-rank",
                "bytes_per_cell = NaN is not a finite number > 0",
            ),
            ("fraction-root", "fraction = 1.5 is not in (0, 1]"),
            ("no-cell", "holds no cell of"),
            ("too-small", "memory"),
        ],
    );
}
