//! The distributed `DistGraph` under `mpirun` with 1 to 4 ranks: a 3D grid
//! built from per-rank slabs, parallel RCB and Hilbert partitioning for
//! random targets (balance by collective sums), migrations preserving every
//! vertex and value, the prefix-sum remap, the same local graphs and ghost
//! values as the root-based path, per-rank storage bounded by the local
//! size, bad pieces failing alike on every rank; and the `graph_scale`
//! example's own checks.

mod common;

use std::time::Duration;

#[test]
fn parallel_partitioning_balances_and_migration_preserves_vertices() {
    for np in [1, 2, 3, 4] {
        let run = common::checks_pass(np, &["dgraph-partition", "12", "10", "9"]);
        // Four partitions and the prefix remap, each checked on every rank.
        assert_eq!(
            run.lines_with("RESULT").len(),
            np * (1 + 4 * 2 + 1 + 1),
            "{}",
            run.stdout
        );
    }
}

#[test]
fn no_rank_holds_the_whole_graph() {
    // 4 ranks on 8640 vertices: each rank's arrays are bounded by its local
    // size (checked in the scenario) and far below n.
    let run = common::checks_pass(4, &["dgraph-partition", "24", "20", "18"]);
    let mut seen = [false; 4];
    for l in run.lines_with("RESULT") {
        let f: Vec<&str> = l.split_whitespace().collect();
        if let Some(k) = f.iter().position(|&x| x == "held") {
            seen[f[0].parse::<usize>().unwrap()] = true;
            let held: usize = f[k + 1].parse().unwrap();
            let n: usize = f[k + 3].parse().unwrap();
            let owned: usize = f[f.iter().position(|&x| x == "owned").unwrap() + 1]
                .parse()
                .unwrap();
            assert!(held < 16 * owned + 64 && owned < n, "{l}");
        }
    }
    // Every rank reported its storage (nothing checked otherwise).
    assert_eq!(seen, [true; 4], "{}", run.stdout);
}

#[test]
fn distributed_and_root_paths_agree() {
    for np in [1, 2, 3, 4] {
        common::checks_pass(np, &["dgraph-root", "11", "9", "7", "3"]);
    }
}

#[test]
fn balancer_partitions_and_remaps_a_distributed_graph() {
    for np in [1, 2, 4] {
        let run = common::checks_pass(np, &["dgraph-balancer", "12", "10", "9"]);
        // The same decision on every rank.
        assert_eq!(run.distinct_after(" decision ").len(), 1, "{}", run.stdout);
    }
}

#[test]
fn root_index_follows_local_migrations() {
    for np in [2, 3] {
        common::checks_pass(np, &["dgraph-index", "10", "9", "8", "7"]);
    }
}

#[test]
fn bad_pieces_fail_alike_on_every_rank() {
    for np in [2, 3] {
        let run = common::checks_pass(np, &["dgraph-bad", "6", "5", "4"]);
        // Two distinct errors (duplicate vertex, bad targets), each identical on all ranks.
        assert_eq!(run.distinct_after(" error ").len(), 2, "{}", run.stdout);
        assert_eq!(run.lines_with("RESULT").len(), 2 * np);
    }
}

#[test]
fn graph_scale_example_checks_pass() {
    for (np, args) in [
        (
            2,
            vec!["--n", "30000", "--speeds", "1,3", "--slowdown", "1:2"],
        ),
        (
            3,
            vec![
                "--n", "20000", "--speeds", "1,2,3", "--algo", "sfc", "--json",
            ],
        ),
        (
            4,
            vec!["--n", "20000", "--speeds", "1,1,2,2", "--remap", "rcb"],
        ),
    ] {
        let run = common::mpirun_prog(
            np,
            &common::example("graph_scale"),
            &args,
            Duration::from_secs(120),
        );
        run.assert_ok();
        assert!(
            run.stdout.contains("CHECK remap-stencil ok"),
            "{}",
            run.stdout
        );
        assert!(!run.stdout.contains("FAIL"), "{}", run.stdout);
        if args.contains(&"--json") {
            let lines: Vec<&str> = run.stdout.lines().filter(|l| l.starts_with('{')).collect();
            assert_eq!(lines.len(), np);
            for l in lines {
                let v: serde_json::Value = serde_json::from_str(l).unwrap();
                assert_eq!(v["checks_ok"], true);
                assert!(v["vmhwm_kib"].as_u64().unwrap() > 0);
                assert!(v["owned"].as_u64().unwrap() < v["n"].as_u64().unwrap());
            }
        }
    }
}

#[test]
fn one_lifecycle_for_root_index_and_distributed_graphs() {
    for np in [1, 3] {
        let run = common::checks_pass(np, &["dgraph-lifecycle", "12", "10", "9"]);
        // Two balance points per strategy, each the same decision on every rank.
        let results = run.lines_with("RESULT");
        let decisions: Vec<&str> = results
            .iter()
            .filter_map(|l| l.split_once(' ').map(|(_, rest)| rest))
            .filter(|rest| rest.contains(" decision "))
            .collect();
        let distinct: std::collections::BTreeSet<&&str> = decisions.iter().collect();
        assert_eq!(
            (decisions.len(), distinct.len()),
            (4 * np, 4),
            "{}",
            run.stdout
        );
        // The graph without coordinates: one error, the same on every rank.
        assert_eq!(run.distinct_after(" error ").len(), 1, "{}", run.stdout);
    }
}
