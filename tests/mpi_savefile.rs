//! Save files of grids under `mpirun`: a grid saved on 3 ranks (planned for
//! speeds 1:2:3, two fields and a cost per cell) is read back on 1, 2, 3
//! and 5 ranks planned for other speeds, every cell, the cost and the
//! application's bytes exactly as saved; spoilt files (truncated, a
//! flipped data or header byte, another format, missing), fields or a
//! grid that do not match, and a path that differs between ranks are the
//! same error on every rank; a save killed while writing leaves the
//! previous file readable (a grid's and a graph's). A `DistArray3` and a `DistArray2` saved on 3
//! ranks restart on 1, 2 and 4 (the 3D one also as a grid). Graphs (one
//! balanced geometrically, one by the root's index) saved on 3 ranks
//! restart on 1, 2 and 5: the same global graph, planned for the new
//! speeds, and values that go on bit-identical to a run that never
//! stopped; a spoilt graph file, a grid's file read as a graph's and the
//! reverse are the same error on every rank. Checkpoints hold the
//! balancer's speeds: a restart on as many ranks starts from them (the
//! saved plans, bit-identical speeds and speed functions), one on another
//! number only reports them; a spoilt speed section is the same error on
//! every rank.

mod common;

use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::Duration;

/// A fresh folder for one test's files.
fn folder(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("nuce-save-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("a temporary folder");
    dir
}

fn write(dir: &str, np: usize, shape: [&str; 3]) {
    let mut args = vec!["save-write", dir];
    args.extend(shape);
    common::checks_pass(np, &args);
}

#[test]
fn a_grid_saved_on_3_ranks_restarts_on_1_2_3_and_5() {
    let dir = folder("restart");
    let d = dir.to_str().unwrap();
    write(d, 3, ["13", "17", "9"]);
    for np in [1, 2, 3, 5] {
        let run = common::checks_pass(np, &["save-read", d]);
        run.assert_checks(np, 3);
        let res = run.lines_with("RESULT read ");
        assert!(!res.is_empty(), "{}", run.stdout);
        assert!(res[0].contains("saved_ranks=3"), "{res:?}");
        // Planned for this run's speeds p, …, 1: the first rank holds the most.
        let vols = common::field(&res[0], "volumes");
        let vols: Vec<usize> = vols.split(',').map(|v| v.parse().unwrap()).collect();
        assert_eq!(vols.len(), np);
        assert!(np == 1 || vols[0] > vols[np - 1], "{res:?}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn dist_arrays_saved_on_3_ranks_restart_on_1_2_and_4() {
    let dir = folder("arrays");
    let d = dir.to_str().unwrap();
    common::checks_pass(3, &["save-array3-write", d]);
    common::checks_pass(3, &["save-array2-write", d]);
    for np in [1, 2, 4] {
        let run = common::checks_pass(np, &["save-array3-read", d]);
        run.assert_checks(np, 6);
        let res = run.lines_with("RESULT read ");
        assert!(
            res.first().is_some_and(|r| r.contains("saved_ranks=3")),
            "{}",
            run.stdout
        );
        // The 2D array also refuses the 3D file (7 checks).
        let run = common::checks_pass(np, &["save-array2-read", d]);
        run.assert_checks(np, 7);
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn spoilt_or_mismatched_save_files_give_the_same_error_on_every_rank() {
    let dir = folder("errors");
    let d = dir.to_str().unwrap();
    write(d, 2, ["6", "7", "5"]);
    for (case, needle) in [
        ("truncated", "truncated"),
        ("data", "field 0 do not match their checksums"),
        ("header", "corrupt"),
        ("format", "format 7"),
        ("missing", "cannot open"),
        ("fields", "the save file has [1, 24]"),
        ("shape", "the save file's (6, 7, 5)"),
        ("path", "disagree"),
    ] {
        for np in [2, 3] {
            let err = common::same_error_on_every_rank(np, &["save-errors", d, case]);
            assert!(err.contains(needle), "{case} on {np}: {err}");
        }
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Saves of `write` (a large one over the file `read` loads) killed after
/// 60, 75 and 90 % of the time a whole one takes (timed first): wherever
/// each was (starting, filling, writing the temporary file, renaming), the
/// file at the path is a whole save, the old one or the new one, and `read`
/// on 2 ranks passes its `checks` checks.
fn killed_while_writing(write: &[&str], read: &[&str], checks: usize) {
    let _alone = common::measured_speeds_lock();
    let launch = || {
        let mut cmd = Command::new(common::launcher());
        cmd.args(["-np", "2"])
            .args(common::oversubscribe_opts())
            .arg(common::check_binary())
            .args(write)
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        common::mpi_env(&mut cmd);
        cmd.spawn().expect("mpirun")
    };
    let start = std::time::Instant::now();
    let whole = launch().wait().expect("a whole save");
    assert!(whole.success(), "the whole save failed");
    let took = start.elapsed();
    for percent in [60, 75, 90] {
        let mut child = launch();
        std::thread::sleep(took * percent / 100);
        // The ranks themselves (a killed mpirun's would finish their
        // writes), then mpirun.
        kill_children(child.id());
        let _ = child.kill();
        let _ = child.wait();
        std::thread::sleep(Duration::from_millis(300));
        let run = common::checks_pass(2, read);
        run.assert_checks(2, checks);
    }
}

/// Sends SIGKILL to every descendant of `parent` (read from `/proc`):
/// mpirun's ranks, and under MPICH its proxy and the proxy's ranks. Only
/// the children would leave MPICH's ranks running without a launcher: a
/// survivor of a killed peer then spins in `MPI_Finalize` for ever, and
/// loads the machine for every later test.
fn kill_children(parent: u32) {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return;
    };
    // Every process with its parent, then the descendants of `parent`
    // (collected before any is killed: a killed proxy's ranks get a new
    // parent).
    let procs: Vec<(i32, u32)> = dir
        .flatten()
        .filter_map(|entry| {
            let pid = entry.file_name().to_string_lossy().parse::<i32>().ok()?;
            let stat = std::fs::read_to_string(entry.path().join("stat")).ok()?;
            // `pid (comm) state ppid …`: comm may hold spaces, not `)`.
            let ppid = stat
                .rsplit_once(')')
                .and_then(|(_, rest)| rest.split_whitespace().nth(1))
                .and_then(|p| p.parse::<u32>().ok())?;
            Some((pid, ppid))
        })
        .collect();
    let mut family = vec![parent];
    let mut i = 0;
    while i < family.len() {
        let p = family[i];
        family.extend(
            procs
                .iter()
                .filter(|&&(_, pp)| pp == p)
                .map(|&(pid, _)| pid as u32),
        );
        i += 1;
    }
    for &pid in &family[1..] {
        // SAFETY: a signal to a process id read just above.
        unsafe { libc::kill(pid as i32, libc::SIGKILL) };
    }
}

#[test]
fn a_save_killed_while_writing_leaves_the_previous_file() {
    let dir = folder("killed");
    let d = dir.to_str().unwrap();
    write(d, 2, ["6", "7", "5"]);
    killed_while_writing(
        &["save-write", d, "200", "200", "100"],
        &["save-read", d],
        3,
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_graph_save_killed_while_writing_leaves_the_previous_file() {
    let dir = folder("graph-killed");
    let d = dir.to_str().unwrap();
    common::checks_pass(2, &["save-graph-write", d]);
    killed_while_writing(
        &["save-graph-big", d, "80", "80", "80"],
        &["save-graph-load", d],
        1,
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn graphs_saved_on_3_ranks_restart_on_1_2_and_5_bit_identical() {
    let dir = folder("graphs");
    let d = dir.to_str().unwrap();
    common::checks_pass(3, &["save-graph-write", d]);
    for np in [1, 2, 5] {
        let run = common::checks_pass(np, &["save-graph-read", d]);
        // Per graph: the graph, the saved state, the values (root), the type error.
        run.assert_checks(np, 6);
        let res = run.lines_with("RESULT graph-read ");
        assert_eq!(res.len(), 2, "{}", run.stdout);
        for r in &res {
            assert!(r.contains("saved_ranks=3"), "{r}");
            // Planned for this run's speeds p, …, 1: the first rank works the most.
            let works: Vec<f64> = common::field(r, "works")
                .split(',')
                .map(|w| w.parse().unwrap())
                .collect();
            assert_eq!(works.len(), np, "{r}");
            assert!(np == 1 || works[0] > works[np - 1], "{r}");
        }
    }
    for (case, needle) in [
        ("truncated", "truncated"),
        ("data", "do not match their checksum"),
        ("header", "corrupt"),
        ("format", "format 7"),
        ("degree", "a degree exceeds the arcs"),
        ("missing", "cannot open"),
        ("grid", "the save file of a grid or array"),
        ("as-grid", "the save file of a graph"),
    ] {
        for np in [2, 3] {
            let err = common::same_error_on_every_rank(np, &["save-graph-errors", d, case]);
            assert!(err.contains(needle), "{case} on {np}: {err}");
        }
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn checkpoints_hold_the_speeds_and_a_restart_on_as_many_ranks_starts_from_them() {
    let dir = folder("speeds");
    let d = dir.to_str().unwrap();
    let wrote = common::checks_pass(3, &["speeds-write", d]);
    let wrote = wrote.lines_with("RESULT speeds-write ");
    assert_eq!(wrote.len(), 1);
    // On 3 ranks: the saved speeds, so the saved plans, without measuring.
    let run = common::checks_pass(3, &["speeds-read", d]);
    run.assert_checks(3, 4);
    assert_eq!(run.lines_with("RESULT speeds-read "), wrote);
    // On 2 and 4: the speeds are reported, the new ranks are not given them.
    for np in [2, 4] {
        let run = common::checks_pass(np, &["speeds-read", d]);
        run.assert_checks(np, 3);
        assert_ne!(run.lines_with("RESULT speeds-read "), wrote);
    }
    for (case, needle) in [("speeds", "corrupt"), ("cut", "truncated")] {
        for np in [2, 3] {
            let err = common::same_error_on_every_rank(np, &["speeds-errors", d, case]);
            assert!(err.contains(needle), "{case} on {np}: {err}");
        }
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
