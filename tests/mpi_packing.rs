//! The collective TP packing (\[VH94\] §4.2) under `mpirun` on 1–8 ranks:
//! identical to the sequential TP (all orders, modified TP, two ratios) and
//! to the sequential submesh allocator, and bad inputs give the same error on
//! every rank.

mod common;

use std::collections::BTreeSet;
use std::time::Duration;

const LIMIT: Duration = Duration::from_secs(120);

#[test]
fn collective_packing_equals_sequential_on_1_to_8_ranks() {
    for np in 1..=8 {
        let run = common::mpirun(np, &["packing-equal", "4", "3"], LIMIT);
        // Per seed with grids: 12 TP variants + 2 allocations, on every rank.
        run.assert_checks(np, 14);
    }
}

/// The same on 3 ranks and one seed: the MPICH tier runs this one (the
/// 1–8-rank test above is too slow with MPICH's busy-polling ranks), so
/// `LocalAllocation::new` is checked against the sequential allocator
/// under both MPI implementations.
#[test]
fn collective_packing_and_allocation_on_3_ranks() {
    let run = common::mpirun(3, &["packing-equal", "4", "1"], LIMIT);
    run.assert_checks(3, 14);
    assert!(
        run.stdout.contains("CHECK 2 alloc-uniform-seed0 ok"),
        "{}",
        run.stdout
    );
}

#[test]
fn bad_inputs_give_the_same_error_on_every_rank() {
    for np in [1, 3, 5] {
        let run = common::mpirun(np, &["packing-bad"], LIMIT);
        run.assert_ok();
        for what in ["bad-grid", "no-grids", "too-many"] {
            let lines: BTreeSet<String> = run
                .lines_with(&format!("RESULT {what} "))
                .into_iter()
                .collect();
            assert_eq!(
                run.lines_with(&format!("RESULT {what} ")).len(),
                np,
                "{}",
                run.stdout
            );
            assert_eq!(lines.len(), 1, "ranks disagree on {what}: {lines:?}");
            assert!(!lines.contains("ok"), "{what} was accepted");
            if what == "bad-grid" && np > 1 {
                assert!(lines
                    .iter()
                    .all(|l| l.contains(&format!("rank {} failed", np - 1))));
            }
        }
    }
}

#[test]
fn amr_example_moves_every_grid_to_its_submesh() {
    let run = common::mpirun_prog(4, &common::example("amr"), &["3", "5", "2"], LIMIT);
    run.assert_ok();
    let rows: Vec<&str> = run
        .stdout
        .lines()
        .filter(|l| {
            l.trim_start()
                .chars()
                .next()
                .is_some_and(|c| c.is_ascii_digit())
        })
        .collect();
    assert_eq!(rows.len(), 3, "{}", run.stdout);
    assert!(rows.iter().all(|l| l.ends_with("ok")), "{}", run.stdout);
}
