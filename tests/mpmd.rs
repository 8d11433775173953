//! The disagreement campaign (issue 12): MPMD runs of two ranks,
//! `mpirun -np 1 prog ARGS_A : -np 1 prog ARGS_B`, where `ARGS_B` differs
//! from `ARGS_A` in one argument, across the examples and the collectives
//! they call. Each run must end within `NUCE_TIMEOUT_S` plus a margin, with
//! a non-zero status and the same nuce error on both ranks, naming the
//! disagreement (the call of each rank, or the bad value).

mod common;

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The collectives' timeout of every run (seconds).
const TIMEOUT_S: &str = "3";
/// Time allowed beyond the timeout: MPI's start and end on a loaded 2-core
/// machine, and the non-roots' grace period.
const MARGIN: Duration = Duration::from_secs(20);

struct Outcome {
    code: Option<i32>,
    elapsed: Duration,
    /// Everything mpirun printed, then each rank's stderr.
    text: String,
    /// What each rank wrote on stderr (`mpirun --output-filename`, hydra's
    /// `-errfile-pattern`: one file
    /// per rank, so that lines written in pieces cannot interleave).
    stderr: [String; 2],
}

/// Runs `prog a… : prog b…` on one rank each, rank 1 with the extra
/// environment `env_b` (`KEY=VALUE` items, through `env`). `per_rank`: each rank runs
/// under `sh`, which appends `EXIT <status>` to its stderr, and the launcher
/// lets every rank finish (by default it kills the others as soon as one
/// exits with a non-zero status, and a `main` that returns its error prints
/// it after `MPI_Finalize`, racing that kill). Not for jobs that abort: the
/// launcher would end the shells, not the ranks.
fn mpmd_with(prog: &str, a: &[&str], b: &[&str], env_b: &[&str], per_rank: bool) -> Outcome {
    use std::sync::atomic::{AtomicUsize, Ordering};
    static RUN: AtomicUsize = AtomicUsize::new(0);
    let exe = common::example(prog);
    let dir = std::env::temp_dir().join(format!(
        "nuce-mpmd-{}-{}",
        std::process::id(),
        RUN.fetch_add(1, Ordering::Relaxed)
    ));
    let _ = std::fs::remove_dir_all(&dir);
    let mut cmd = Command::new("timeout");
    cmd.args(["-k", "5", "120"]).arg(common::launcher());
    cmd.args(common::oversubscribe_opts());
    // Each rank's stderr in its own file, read back below as `stderr_file`.
    let stderr_file = |r: usize| match common::mpi_family() {
        common::MpiFamily::OpenMpi => dir.join("1").join(format!("rank.{r}")).join("stderr"),
        common::MpiFamily::Mpich => dir.join(format!("rank.{r}.stderr")),
    };
    match common::mpi_family() {
        common::MpiFamily::OpenMpi => {
            cmd.arg("--output-filename").arg(&dir);
        }
        common::MpiFamily::Mpich => {
            std::fs::create_dir_all(&dir).expect("output directory");
            cmd.arg("-errfile-pattern").arg(dir.join("rank.%r.stderr"));
        }
    }
    let wrap: &[&str] = if per_rank {
        match common::mpi_family() {
            common::MpiFamily::OpenMpi => {
                cmd.args(["--mca", "orte_abort_on_non_zero_status", "0"]);
            }
            common::MpiFamily::Mpich => {
                cmd.arg("-disable-auto-cleanup");
            }
        }
        &["sh", "-c", "\"$0\" \"$@\"; echo \"EXIT $?\" >&2"]
    } else {
        &[]
    };
    cmd.args(["-np", "1"]).args(wrap).arg(&exe).args(a);
    cmd.args([":", "-np", "1"]).args(wrap);
    if !env_b.is_empty() {
        cmd.arg("env").args(env_b);
    }
    cmd.arg(&exe).args(b);
    common::mpi_env(&mut cmd);
    cmd.env("NUCE_TIMEOUT_S", TIMEOUT_S);
    cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
    let start = Instant::now();
    let out = cmd.output().expect("mpirun runs");
    let elapsed = start.elapsed();
    let stderr = [0, 1].map(|r| std::fs::read_to_string(stderr_file(r)).unwrap_or_default());
    let _ = std::fs::remove_dir_all(&dir);
    let mut text = format!(
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    for (r, e) in stderr.iter().enumerate() {
        text.push_str(&format!("\n--- rank {r} stderr:\n{e}"));
    }
    Outcome {
        code: out.status.code(),
        elapsed,
        text,
        stderr,
    }
}

/// Runs `prog a… : prog b…`, each rank's status kept (see [`mpmd_with`]).
fn mpmd(prog: &str, a: &[&str], b: &[&str], env_b: &[&str]) -> Outcome {
    mpmd_with(prog, a, b, env_b, true)
}

/// The exit status of a rank run under `sh` (its stderr's `EXIT <status>`).
fn exit_of(stderr: &str) -> Option<i32> {
    stderr
        .lines()
        .rev()
        .find_map(|l| l.strip_prefix("EXIT ")?.trim().parse().ok())
}

/// The error a rank printed: the text after `error: ` (the examples'
/// `PROG: rank R: error: …`) or `Error: ` (a `main` that returns it).
fn error_of(stderr: &str) -> Option<String> {
    stderr
        .lines()
        .filter_map(|l| {
            l.find("error: ")
                .map(|i| &l[i + 7..])
                .or_else(|| l.strip_prefix("Error: "))
                .map(str::to_string)
        })
        .next()
}

fn timeout() -> Duration {
    Duration::from_secs_f64(TIMEOUT_S.parse().unwrap())
}

/// One case: `b` is `a` with one argument changed; both ranks must print the
/// same error, containing `expect`.
fn same_error(prog: &str, a: &[&str], b: &[&str], expect: &str) -> Result<(), String> {
    same_error_env(prog, a, b, &[], expect)
}

/// [`same_error`] with rank 1's extra environment `env_b`.
fn same_error_env(
    prog: &str,
    a: &[&str],
    b: &[&str],
    env_b: &[&str],
    expect: &str,
) -> Result<(), String> {
    let o = mpmd(prog, a, b, env_b);
    let what = format!("{prog} {a:?} : {env_b:?} {b:?}");
    if o.elapsed > timeout() + MARGIN || o.code == Some(124) || o.code == Some(137) {
        return Err(format!(
            "{what}: no end within {:?}:\n{}",
            o.elapsed, o.text
        ));
    }
    let exits = [exit_of(&o.stderr[0]), exit_of(&o.stderr[1])];
    if !exits.iter().all(|e| e.is_some_and(|c| c != 0)) {
        return Err(format!(
            "{what}: every rank must fail, exit statuses {exits:?}:\n{}",
            o.text
        ));
    }
    let (e0, e1) = (error_of(&o.stderr[0]), error_of(&o.stderr[1]));
    match (&e0, &e1) {
        (Some(x), Some(y)) if x == y && x.contains(expect) => Ok(()),
        _ => Err(format!(
            "{what}: expected the same error containing {expect:?} on both ranks, got\n  \
             rank 0: {e0:?}\n  rank 1: {e1:?}\n{}",
            o.text
        )),
    }
}

/// Runs every case and reports all failures at once.
fn campaign(cases: &[(&str, Vec<&str>, Vec<&str>, &str)]) {
    let failures: Vec<String> = cases
        .iter()
        .filter_map(|(prog, a, b, expect)| same_error(prog, a, b, expect).err())
        .collect();
    assert!(
        failures.is_empty(),
        "{} of {} cases failed:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n\n")
    );
}

/// `base` with `--flag value` replaced (or added).
fn with<'a>(base: &[&'a str], flag: &'a str, value: Option<&'a str>) -> Vec<&'a str> {
    let mut v = Vec::new();
    let mut i = 0;
    while i < base.len() {
        if base[i] == flag {
            i += 2;
            continue;
        }
        v.push(base[i]);
        i += 1;
    }
    v.push(flag);
    v.extend(value);
    v
}

#[test]
fn heat2d_ranks_that_disagree_get_the_same_error() {
    let b = [
        "--rows",
        "64",
        "--cols",
        "48",
        "--phases",
        "3",
        "--iters",
        "5",
        "--no-check",
    ];
    let net = with(&b, "--net", None);
    let cases = vec![
        (
            "heat2d",
            b.to_vec(),
            with(&b, "--rows", Some("96")),
            "call DistArray2::scatter(96x48,",
        ),
        (
            "heat2d",
            b.to_vec(),
            with(&b, "--cols", Some("50")),
            "call DistArray2::scatter(64x50,",
        ),
        (
            "heat2d",
            b.to_vec(),
            with(&b, "--phases", Some("4")),
            "call application: heat2d phase 0 of 4",
        ),
        (
            "heat2d",
            b.to_vec(),
            with(&b, "--iters", Some("6")),
            "call application: heat2d: 6 iterations per phase",
        ),
        (
            "heat2d",
            b.to_vec(),
            with(&b, "--algo", Some("column")),
            "arrays column (latency 0 cells)",
        ),
        (
            "heat2d",
            b.to_vec(),
            with(&b, "--algo", Some("foo")),
            "arrays foo (latency 0 cells)",
        ),
        (
            "heat2d",
            b.to_vec(),
            with(&b, "--uniform", None),
            "calls Balancer::measure,",
        ),
        (
            "heat2d",
            b.to_vec(),
            with(&b, "--hysteresis", Some("0.5")),
            "hysteresis 0.5,",
        ),
        (
            "heat2d",
            b.to_vec(),
            net.clone(),
            "call Balancer::measure_network(",
        ),
        (
            "heat2d",
            net.clone(),
            with(&net, "--net-bytes", Some("1024")),
            "large_bytes: 1024",
        ),
        (
            "heat2d",
            b.to_vec(),
            with(&b, "--hier", None),
            "call Balancer::detect_hosts",
        ),
        (
            "heat2d",
            b.to_vec(),
            with(&b, "--slowdown", Some("1:x@0")),
            "bad --slowdown item",
        ),
        (
            "heat2d",
            b.to_vec(),
            with(&b, "--die", Some("x")),
            "bad fault spec",
        ),
    ];
    campaign(&cases);
}

#[test]
fn master_worker_and_mesh_solver_ranks_that_disagree_get_the_same_error() {
    let mw = ["--rows", "120", "--cols", "40", "--repeats", "1"];
    let mesh = ["--size", "0.1", "--iters", "8", "--phases", "2"];
    let cases = vec![
        (
            "master_worker",
            mw.to_vec(),
            with(&mw, "--rows", Some("240")),
            "call measure_worker_costs(master 0, 240 units",
        ),
        (
            "master_worker",
            mw.to_vec(),
            with(&mw, "--cols", Some("50")),
            "call measure_worker_costs(master 0, 120 units",
        ),
        (
            "master_worker",
            mw.to_vec(),
            with(&mw, "--rows", Some("0")),
            "--rows",
        ),
        (
            "master_worker",
            mw.to_vec(),
            with(&mw, "--rows", Some("abc")),
            "--rows",
        ),
        (
            "master_worker",
            mw.to_vec(),
            with(&mw, "--repeats", Some("2")),
            "call run_master_worker(master 0, plan",
        ),
        (
            "mesh_solver",
            mesh.to_vec(),
            with(&mesh, "--size", Some("0.08")),
            "size 0.08, 8 iterations in 2 phases",
        ),
        (
            "mesh_solver",
            mesh.to_vec(),
            with(&mesh, "--phases", Some("4")),
            "8 iterations in 4 phases",
        ),
        (
            "mesh_solver",
            mesh.to_vec(),
            with(&mesh, "--size", Some("1e-9")),
            "--size must be at least",
        ),
    ];
    campaign(&cases);
}

#[test]
fn quickstarts_that_disagree_get_the_same_error() {
    let cases = vec![
        (
            "quickstart",
            vec!["64", "2", "5"],
            vec!["64", "3", "5"],
            "DistArray2::gather(to root 0)",
        ),
        (
            "quickstart_graph",
            vec!["300", "2", "5"],
            vec!["300", "3", "5"],
            "DistGraph::gather(",
        ),
        // The same with rank 0 doing 300 times the work from phase 1: the
        // balancer gives it no cells, so rank 1 exchanges without it and
        // reaches its third balance point while the root gathers. No
        // checkpoint meets both calls; the root, at its timeout, finds rank
        // 1's at the balancer's and answers both ranks with the same error
        // (the CI run that a loaded machine's measured speeds led there
        // ended the job instead).
        (
            "quickstart",
            vec!["64", "2", "5", "0:300@1"],
            vec!["64", "3", "5", "0:300@1"],
            "DistArray2::gather(to root 0)",
        ),
        // Another number of iterations per phase: rank 1 waits for a ghost
        // exchange on the array's communicator while the root waits at the
        // balancer's balance point. Ghost exchanges send nothing to the
        // root, but a stuck one joins the checkpoint under way: both ranks
        // return the same error naming both calls.
        (
            "quickstart",
            vec!["64", "2", "5"],
            vec!["64", "2", "6"],
            "DistArray2::exchange_ghosts on a 64x64 array, ghost 1, 8-byte elements (exchange #5)",
        ),
    ];
    campaign(&cases);
}

/// The environment of one rank is malformed: `Balancer::new` (its first
/// checkpoint, where every rank's environment is checked) gives the same
/// error on both ranks.
#[test]
fn an_environment_malformed_on_one_rank_is_the_same_error() {
    let args = ["64", "2", "5"];
    let failures: Vec<String> = [
        // (quickstart's `main` prints the error's Debug form: quotes escaped.)
        (
            "NUCE_SPEED_MODEL=bogus",
            "bogus\\\": expected auto or constant",
        ),
        (
            "NUCE_TIMEOUT_S=soon",
            "soon\\\": expected seconds (e.g. 60 or 2.5), 0 or off",
        ),
        (
            "NUCE_WAIT_YIELD=sometimes",
            "sometimes\\\": expected auto, always or never",
        ),
    ]
    .iter()
    .filter_map(|(env, expect)| same_error_env("quickstart", &args, &args, &[env], expect).err())
    .collect();
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}
