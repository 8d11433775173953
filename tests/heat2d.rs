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
    run.assert_ok();
    let line = run
        .stdout
        .lines()
        .find(|l| l.starts_with('{'))
        .expect("JSON summary");
    serde_json::from_str(line).expect("valid JSON")
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

#[test]
fn heat2d_remaps_when_a_rank_slows_down() {
    // Rank 1 does 6x the work from phase 1: the balancer must measure it and
    // give rank 1 a smaller block than the others. The grid is large enough
    // that moving data pays for itself (the policy rightly refuses to remap
    // tiny grids) and that a phase is longer than a scheduler slice. The
    // other tests of this binary wait: they would share the cores.
    // Under MPICH (ch4 busy-polls instead of yielding the processor), 3
    // ranks on 2 cores make a remap cost ~0.1 s, not a few ms: 20
    // iterations per phase would rightly not pay for one, 200 do.
    let iters = if common::is_mpich() { "200" } else { "20" };
    let v = run_heat(
        3,
        &[
            "--rows",
            "600",
            "--cols",
            "480",
            "--iters",
            iters,
            "--phases",
            "7",
            "--slowdown",
            "1:6@1",
            "--hysteresis",
            "0.02",
        ],
    );
    let phases = v["phases"].as_array().unwrap();
    let remapped_after_change = phases[1..]
        .iter()
        .any(|p| p["remapped"].as_bool() == Some(true));
    assert!(remapped_after_change, "{v}");
    let last = phases.last().unwrap();
    let areas: Vec<u64> = last["areas"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_u64().unwrap())
        .collect();
    assert!(
        areas[1] * 2 < areas[0] && areas[1] * 2 < areas[2],
        "areas {areas:?}"
    );
    assert!(v["relative_diff"].as_f64().unwrap() <= 1e-12);
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
