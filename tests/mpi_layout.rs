//! Grids on the application's own buffers (`nuce::Grid`) under `mpirun`
//! with 1–4 ranks: ghost exchanges on slices with paddings wider than the
//! ghost, 1–3 fields of 1-, 8- and 24-byte cells, 7- and 27-point stencils,
//! ghost 1 and 2, blocking and begin/end, against the global values (and
//! nothing written outside the regions); random remaps completed by
//! `move_fields` carrying every cell and moving exactly the cells that
//! change owner; a remap decided by the balancer (exchanges refused while
//! it is pending); ranks that pass another field count, element size,
//! slice length or grid getting the same error; a cost per cell balanced
//! in proportion to the speeds, and bad costs (NaN, negative, infinite,
//! all 0, the wrong length, on some ranks only, stale after a move) the
//! same error on every rank; a field scattered from and gathered to one
//! whole array at a root, and bad gathers and scatters the same error on
//! every rank.

mod common;

use std::collections::BTreeSet;
use std::time::Duration;

#[test]
fn exchanges_fill_exactly_the_regions_of_every_field() {
    for np in [1, 2, 3, 4] {
        common::checks_pass(np, &["grid-halo", "7", "5", "9"]);
    }
}

/// What a rank sends is its cells at the call, though the grid's exchanges
/// leave their sends in flight: ranks that overwrite their cells as soon as
/// an exchange returns, with small messages (fields combined) and large
/// ones (one per field, more than `COMBINE_BYTES` each).
#[test]
fn neighbours_receive_the_cells_as_they_were_at_the_call() {
    for np in [2, 3, 4] {
        common::checks_pass(np, &["grid-generations", "7", "5", "9"]);
        common::checks_pass(np, &["grid-generations", "40", "33", "36"]);
    }
}

#[test]
fn moves_carry_every_cell_and_only_the_cells_that_change_owner() {
    for np in [1, 2, 3, 4] {
        let run = common::checks_pass(np, &["grid-move", "7", "5", "9", "20"]);
        common::assert_minimum_moved(&run, "gridmove", np, "20");
    }
}

#[test]
fn balancer_remaps_are_pending_until_the_move() {
    for np in [1, 3] {
        common::checks_pass(np, &["grid-balancer"]);
    }
}

#[test]
fn ranks_that_disagree_get_the_same_error() {
    let bin = common::check_binary();
    for np in [2, 3] {
        for (case, needle) in [
            ("fields", "disagree"),
            ("elem", "disagree"),
            ("type", "disagree"),
            ("length", "field 0 has"),
            ("shape", "8x6x5"),
        ] {
            let run = same_error_on_every_rank(&bin, np, "grid-errors", case, needle);
            // The program goes on after the error: the same grid (when
            // every rank made it) and new objects work, under Open MPI and
            // MPICH alike (nothing the failed exchange left behind is taken
            // for a new disagreement or reaches a new communicator).
            let same = if case == "shape" { "none" } else { "true" };
            let want = format!("same-grid={same} new-grid=true");
            let after = run.lines_with("AFTER ");
            assert_eq!(after.len(), np, "np {np} {case}\n{}", run.stdout);
            for line in after {
                assert!(
                    line.ends_with(&want),
                    "np {np} {case}: {line}\n{}",
                    run.stdout
                );
            }
        }
    }
}

/// A field to and from one whole array at a root (`Grid::scatter`,
/// `Grid::gather`): every cell in its place, nothing written outside this
/// rank's box, any rank the root, tilings with empty boxes.
#[test]
fn a_field_scatters_from_and_gathers_to_a_whole_array_at_the_root() {
    for np in [1, 2, 3, 4] {
        common::checks_pass(np, &["grid-whole", "7", "5", "9"]);
    }
    common::checks_pass(3, &["grid-whole", "1", "12", "10"]);
}

/// A bad gather or scatter is the same error on every rank, and the grid
/// gathers right afterwards.
#[test]
fn a_bad_gather_or_scatter_is_the_same_error_on_every_rank() {
    let bin = common::check_binary();
    for np in [2, 3] {
        for (case, needle) in [
            ("root-length", "the root's whole array has 209 cells"),
            ("field-length", "field 0 has"),
            ("elem", "4-byte cells"),
            ("root", &format!("root {np} is not a rank")),
            ("pending", "a remap is pending"),
        ] {
            let run = same_error_on_every_rank(&bin, np, "grid-whole-errors", case, needle);
            let after = run.lines_with("AFTER ");
            assert_eq!(after.len(), np, "np {np} {case}\n{}", run.stdout);
            assert!(
                after.iter().all(|l| l.ends_with("gather=true")),
                "np {np} {case}: {after:?}"
            );
        }
    }
}

#[test]
fn costs_are_balanced_in_proportion_to_the_speeds() {
    for np in [2, 3] {
        common::checks_pass(np, &["grid-cost", "12", "20", "10"]);
    }
}

#[test]
fn bad_grid_costs_give_the_same_error_on_every_rank() {
    // The last rank's cost is bad (or set for its box before a move, or
    // missing): every rank returns the same error at the balance point. 3
    // ranks: the bad one is neither the root nor alone.
    for (case, needle) in [
        ("nan", "cost NaN of cell 0"),
        ("negative", "costs must be finite and >= 0"),
        ("infinite", "cost inf of cell 0"),
        ("zero", "every cell costs 0"),
        ("length", "cell costs for a block of"),
        ("some-ranks", "with a cost field"),
        ("stale", "set the cost of the new block"),
    ] {
        let e = common::same_error_on_every_rank(3, &["grid-cost-errors", case]);
        assert!(e.contains(needle) && e != "none", "{case}: {e}");
    }
}

#[test]
fn the_3d_decomposer_is_settable() {
    for np in [1, 2, 3] {
        common::checks_pass(np, &["planner3"]);
    }
}

#[test]
fn a_3d_decomposer_unknown_or_differing_is_the_same_error_on_every_rank() {
    let bin = common::check_binary();
    for np in [2, 3] {
        for (case, needle) in [
            ("unknown", "unknown grid3 algorithm \"octree\""),
            ("differ", "Balancer::configure("),
        ] {
            let _ = same_error_on_every_rank(&bin, np, "planner3-errors", case, needle);
        }
    }
}

/// Runs `scenario case` of the check binary on `np` ranks (timeout 4 s):
/// every rank prints the same error, which contains `needle`.
fn same_error_on_every_rank(
    bin: &str,
    np: usize,
    scenario: &str,
    case: &str,
    needle: &str,
) -> common::Run {
    let args = ["NUCE_TIMEOUT_S=4", bin, scenario, case];
    let run = common::mpirun_prog(np, "env", &args, Duration::from_secs(90));
    assert!(!run.timed_out, "np {np} {case}: hung\n{}", run.stdout);
    let lines = run.lines_with("ERR ");
    assert_eq!(
        lines.len(),
        np,
        "np {np} {case}: every rank fails\n{}\n{}",
        run.stdout,
        run.stderr
    );
    let errs: BTreeSet<String> = lines
        .iter()
        .map(|l| l.splitn(3, ' ').nth(2).unwrap_or_default().to_string())
        .collect();
    assert_eq!(errs.len(), 1, "np {np} {case}: one error: {errs:?}");
    let e = errs.iter().next().unwrap();
    assert!(e.contains(needle), "np {np} {case}: {e}");
    run
}
