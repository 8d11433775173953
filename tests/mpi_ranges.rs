//! `OwnershipRanges::new` (PETSc DMDA `lx, ly, lz`) under `mpirun`
//! with 1, 3 and 4 ranks: ranges summing to the extents, equal to the
//! planner's on every rank, in DMDA's rank order; bad input (a zero
//! extent, a grid whose product is not the number of ranks, more
//! processors than cells, shapes that differ between ranks) gives the same
//! error on every rank; with no speeds given, phases recorded with
//! `record_phase` are what the next ranges follow.

mod common;

#[test]
fn ranges_sum_to_the_extents_and_match_the_planner() {
    for np in [1, 3, 4] {
        let run = common::checks_pass(np, &["ranges-match", "30", "17", "11"]);
        assert_eq!(run.lines_with("RESULT ranges").len(), 2 * np);
    }
}

#[test]
fn bad_inputs_give_the_same_error_on_every_rank() {
    let cases = [
        ("zero", "8x0x8"),
        ("product", "does not multiply"),
        ("too-many", "parts"),
        ("shape", "OwnershipRanges::new(8x"),
    ];
    for np in [2, 3] {
        for (case, needle) in cases {
            let e = common::same_error_on_every_rank(np, &["ranges-errors", case]);
            assert!(e.contains(needle) && e != "none", "{case} on {np}: {e}");
        }
    }
}

#[test]
fn ranges_follow_the_recorded_phases() {
    for np in [2, 3] {
        let run = common::checks_pass(np, &["ranges-phases"]);
        assert_eq!(run.lines_with("RESULT phases").len(), 2 * np);
    }
}
