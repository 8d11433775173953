//! The heat2d example under mpirun equals the serial solve, balances and remaps.

mod common;

use std::time::Duration;

fn run_heat(np: usize, extra: &[&str]) -> serde_json::Value {
    let _alone = common::measured_speeds_lock();
    let mut args = vec!["--json"];
    if !extra.contains(&"--phases") {
        args.extend_from_slice(&["--phases", "4"]);
    }
    args.extend_from_slice(extra);
    let run = common::mpirun_prog(
        np,
        &common::example("heat2d"),
        &args,
        Duration::from_secs(180),
    );
    common::json_summary(&run)
}

#[test]
fn heat2d_equals_serial_solve_on_1_to_6_ranks() {
    for np in [1, 2, 3, 4, 6] {
        let v = run_heat(
            np,
            &[
                "--rows",
                "96",
                "--cols",
                "80",
                "--iters",
                "10",
                "--slowdown",
                "1:3@0",
            ],
        );
        let rel = v["relative_diff"].as_f64().expect("checked");
        assert!(rel <= 1e-12, "np={np}: relative diff {rel}");
        assert_eq!(v["phases"].as_array().unwrap().len(), 4);
    }
}

/// heat2d on `np` ranks of a 600 × 480 grid, `iters` iterations per phase
/// (200 under MPICH: see `heat2d_remaps_when_a_rank_slows_down`), and `extra`.
fn run_slow(np: usize, iters: &str, extra: &[&str]) -> serde_json::Value {
    let iters = if common::is_mpich() { "200" } else { iters };
    let mut args = vec!["--rows", "600", "--cols", "480", "--iters", iters];
    args.extend_from_slice(extra);
    run_heat(np, &args)
}

/// Every rank's cells in a phase of heat2d's JSON.
fn areas(phase: &serde_json::Value) -> Vec<u64> {
    common::u64s(&phase["areas"])
}

#[test]
fn heat2d_remaps_when_a_rank_slows_down() {
    // Rank 1 does 6x the work from phase 2: the balancer must measure it and
    // give rank 1 a smaller block than the others. Not from phase 1: the
    // first balance point may remap (3 ranks on 2 cores: the kernel may
    // measure the rank alone on a core twice as fast), and a phase on a new
    // block size that is slower is, for the functional model, a size the
    // rank is slow at, not a change of speed (SpeedFunction::learn; a
    // slowdown that coincides with a remap is ambiguous, see
    // docs/architecture.md) — phase 1 measures rank 1 at its block first. The grid is large enough
    // that moving data pays for itself (the policy rightly refuses to remap
    // tiny grids) and that a phase is longer than a scheduler slice. The
    // other tests of this binary wait: they would share the cores.
    // Under MPICH (ch4 busy-polls instead of yielding the processor), 3
    // ranks on 2 cores make a remap cost ~0.1 s, not a few ms: 20
    // iterations per phase would rightly not pay for one, 200 do.
    let v = run_slow(
        3,
        "20",
        &[
            "--phases",
            "9",
            "--slowdown",
            "1:6@2",
            "--hysteresis",
            "0.02",
        ],
    );
    let phases = v["phases"].as_array().unwrap();
    let remapped_after_change = phases[2..]
        .iter()
        .any(|p| p["remapped"].as_bool() == Some(true));
    assert!(remapped_after_change, "{v}");
    // The areas of a phase are the plan it ran with, so phases 3.. show the
    // plans made after the change. Some such plan must give rank 1 less than
    // 3/4 of what each other rank has. Not necessarily the last one: on a
    // loaded machine another job may really slow a fast rank for a while
    // later on, and the balancer rightly follows that. Not the 1/6 the work
    // factor alone would give: 3 ranks share 2 cores, and the share of a
    // core each rank gets is the kernel's choice. When rank 1 is the slow
    // one, the others wait for it and keep their core only in part (their
    // waits yield), so rank 1 gets more of a core than they do: measured on
    // an idle machine, rank 1 gets 0.16–0.30 of the others' cells; on a loaded
    // CI machine 0.57–0.67 (the block never went under half there). The
    // two-rank tests below, one rank per core, check the stronger ratio.
    let followed = phases[3..]
        .iter()
        .map(areas)
        .any(|a| a[1] * 4 < a[0] * 3 && a[1] * 4 < a[2] * 3);
    assert!(
        followed,
        "no plan after the change gave rank 1 a small block: {v}"
    );
    assert!(v["relative_diff"].as_f64().unwrap() <= 1e-12);
}

#[test]
fn heat2d_warm_up_plans_from_the_first_phase() {
    // `--warmup 20`: no kernel measurement, an even first split, a first
    // phase of 20 iterations; rank 1 does 4× the work from the start, so
    // the first balance point must plan from that phase's timing and give
    // rank 1 the smaller block. The solve stays exact (the serial
    // reference counts the warm-up's iterations).
    let v = run_slow(
        2,
        "40",
        &["--phases", "5", "--warmup", "20", "--slowdown", "1:4@0"],
    );
    assert_eq!(v["warmup"].as_u64(), Some(20), "{v}");
    assert_eq!(v["initial_speeds"], serde_json::json!([1.0, 1.0]), "{v}");
    let phases = v["phases"].as_array().unwrap();
    let first = areas(&phases[0]);
    assert!(
        first[0].abs_diff(first[1]) <= 2 * 600,
        "even first split: {v}"
    );
    assert_eq!(phases[0]["remapped"].as_bool(), Some(true), "{v}");
    // Some plan after the first balance point (not necessarily the last:
    // see `heat2d_remaps_when_a_rank_slows_down`) gives rank 1 less than
    // half of rank 0's cells.
    let followed = phases[1..].iter().map(areas).any(|a| a[1] * 2 < a[0]);
    assert!(followed, "rank 1 keeps a large block: {v}");
    assert!(v["relative_diff"].as_f64().unwrap() <= 1e-12, "{v}");
}

#[test]
fn heat2d_equal_ranks_plan_for_their_snapped_speeds() {
    // Two ranks of equal speed, no slowdown (issue 19): the kernel's noise
    // snaps their speeds to one value, so the first split is even within
    // one row. Whether the machine keeps them equal is its own affair: on
    // this virtual machine two CPUs measure 40-55 % apart at times (the
    // code before issue 28 remapped on it in 5 of 6 runs on 2026-11-27), so
    // "equal ranks never remap on noise" is checked on injected timings
    // (tests/mpi_decisions.rs) and benchmarked on real ones
    // (scripts/bench_equal_ranks.sh). Here, on real timing: the result is
    // exact, the split is even exactly when the measured speeds were
    // snapped to one value, the noisy constant model decides while the
    // blocks keep their first sizes, and every remap was decided by a noise
    // rule (Amortized weighs the noise as Persistent does).
    let (rows, cols) = (512usize, 512usize);
    let v = run_heat(
        2,
        &[
            "--rows",
            &rows.to_string(),
            "--cols",
            &cols.to_string(),
            "--iters",
            "40",
            "--phases",
            "8",
        ],
    );
    assert!(v["relative_diff"].as_f64().unwrap() <= 1e-12);
    let phases = v["phases"].as_array().unwrap();
    let first = areas(&phases[0]);
    let speeds = common::f64s(&v["initial_speeds"]);
    let even = first[0].abs_diff(first[1]) <= 2 * rows.max(cols) as u64;
    assert_eq!(
        even,
        speeds[0] == speeds[1],
        "first split {first:?} for {speeds:?}: {v}"
    );
    // While the blocks keep the first plan's sizes, every speed function
    // has one point (flat): the noisy constant model decides. (After a
    // remap on a loaded machine's noise the functional model may decide.)
    for p in phases
        .iter()
        .take_while(|p| p["areas"] == phases[0]["areas"])
    {
        assert_eq!(p["model"].as_str(), Some("NoisySnapped"), "{v}");
    }
    for p in phases.iter().filter(|p| p["remapped"] == true) {
        let rule = p["rule"].as_str();
        assert!(
            matches!(rule, Some("WithinNoise" | "Persistent" | "Amortized")),
            "{p}"
        );
    }
}

#[test]
fn heat2d_with_empty_blocks_is_legal() {
    // 6 ranks on a 4-row grid, one of them 50x slower: some blocks are empty,
    // the solve is still exact.
    let v = run_heat(
        6,
        &[
            "--rows",
            "4",
            "--cols",
            "30",
            "--iters",
            "5",
            "--slowdown",
            "2:50@0",
        ],
    );
    let phases = v["phases"].as_array().unwrap();
    let empty = phases.iter().any(|p| {
        p["areas"]
            .as_array()
            .unwrap()
            .iter()
            .any(|a| a.as_u64() == Some(0))
    });
    assert!(empty, "expected an empty block: {v}");
    assert!(v["relative_diff"].as_f64().unwrap() <= 1e-12);
}

#[test]
fn heat2d_idle_rank_gets_work_back_when_fast_again() {
    if common::skip_unless_open_mpi(
        "the idle rank's kernel probe shares a core with 2 busy-polling MPICH ranks \
         (3 ranks on 2 cores; MPICH does not yield when idle), so it measures them, not the \
         emulated speed-up",
    ) {
        return;
    }
    // Rank 2 of 3 is 50x slower at first (kernel and solver alike): on a
    // 4-row grid its block is empty. From phase 2 on it is as fast as the
    // others: with no work it cannot time a phase, but its kernel probe at
    // the balance point sees the change (issue 19), so it gets work back.
    // Before, an idle rank's speed followed the others' and it stayed
    // empty. In one of three runs (a shared machine).
    let mut failures = Vec::new();
    for _ in 0..3 {
        let v = run_heat(
            3,
            &[
                "--rows",
                "4",
                "--cols",
                "40000",
                "--iters",
                "100",
                "--phases",
                "5",
                "--algo",
                "xy",
                "--slowdown",
                "2:50@0,2:1@2",
            ],
        );
        assert!(v["relative_diff"].as_f64().unwrap() <= 1e-12);
        let area2: Vec<u64> = v["phases"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p["areas"][2].as_u64().unwrap())
            .collect();
        let final2 = v["final_plan"][2]["rows"].as_u64().unwrap()
            * v["final_plan"][2]["cols"].as_u64().unwrap();
        if area2[..3].contains(&0) && final2 > 0 {
            return;
        }
        failures.push(format!("rank 2's areas {area2:?}, final {final2}: {v}"));
    }
    panic!("idle rank, three runs:\n{}", failures.join("\n"));
}
