//! The balancer's settings under `mpirun` (`Settings`,
//! `Balancer::configure`): settings configured on every rank plan the data,
//! and settings that differ between ranks are the same `Disagreement` on
//! every rank (an unknown decomposer name: the same other error), with
//! the settings unchanged.

mod common;

#[test]
fn configured_settings_plan_arrays_and_grids() {
    for np in [1, 2, 3] {
        common::checks_pass(np, &["settings-apply"]);
    }
}

#[test]
fn settings_that_differ_between_ranks_are_the_same_disagreement_on_every_rank() {
    let cases = [
        ("timeout", "disagreement", "timeout 31 s"),
        ("no-timeout", "disagreement", "timeout none"),
        ("policy", "disagreement", "hysteresis 0.2,"),
        ("arrays", "disagreement", "arrays rb (latency 0 cells)"),
        ("latency", "disagreement", "arrays column (latency 2 cells)"),
        ("given", "disagreement", "arrays rb2 (the application's)"),
        ("grids", "disagreement", "grids rb,"),
        ("hierarchical", "disagreement", "hierarchical true"),
        ("functional", "disagreement", "functional model false"),
        ("unknown", "other", "unknown array algorithm \"octree\""),
        ("unknown3", "other", "unknown grid3 algorithm \"octree\""),
    ];
    for np in [2, 3] {
        for (case, kind, needle) in cases {
            let e = common::same_error_on_every_rank(np, &["settings-errors", case]);
            assert!(
                e.starts_with(&format!("{case} {kind} ")) && e.contains(needle),
                "{np} ranks, {case}: {e}"
            );
        }
    }
}
