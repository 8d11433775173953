//! Shared helpers for integration tests that launch `mpirun`: Open MPI's by
//! default, MPICH's `mpirun.mpich` (hydra) with `NUCE_MPI=mpich`
//! (`scripts/test.sh --mpi mpich`); `NUCE_MPIRUN` names another launcher.
#![allow(dead_code)]

use std::io::Read;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The JSON summary line (the first line starting with `{`) of a run that
/// succeeded, e.g. heat2d's `--json`.
pub fn json_summary(run: &Run) -> serde_json::Value {
    run.assert_ok();
    let line = run
        .stdout
        .lines()
        .find(|l| l.starts_with('{'))
        .expect("JSON summary");
    serde_json::from_str(line).expect("valid JSON")
}

/// A JSON array whose every element `read` accepts (panics, naming `what`
/// the elements should be, on anything else).
fn array_of<T>(
    v: &serde_json::Value,
    what: &str,
    read: impl Fn(&serde_json::Value) -> Option<T>,
) -> Vec<T> {
    v.as_array()
        .unwrap_or_else(|| panic!("not an array: {v}"))
        .iter()
        .map(|a| read(a).unwrap_or_else(|| panic!("not {what}: {a}")))
        .collect()
}

/// A JSON array of unsigned integers (panics on anything else).
pub fn u64s(v: &serde_json::Value) -> Vec<u64> {
    array_of(v, "a u64", serde_json::Value::as_u64)
}

/// A JSON array of numbers (panics on anything else).
pub fn f64s(v: &serde_json::Value) -> Vec<f64> {
    array_of(v, "a number", serde_json::Value::as_f64)
}

/// The value of `key=value` in a whitespace-separated result line (panics,
/// naming the line, when there is none).
pub fn field(line: &str, key: &str) -> String {
    line.split_whitespace()
        .find_map(|w| w.strip_prefix(&format!("{key}=")))
        .unwrap_or_else(|| panic!("no {key} in {line}"))
        .to_string()
}

/// What an `mpirun` run produced.
pub struct Run {
    /// Exit status code (`None` when killed on timeout).
    pub code: Option<i32>,
    /// Standard output of all ranks.
    pub stdout: String,
    /// Standard error of all ranks.
    pub stderr: String,
    /// True when the run was killed for exceeding the time limit.
    pub timed_out: bool,
    /// Wall time.
    pub elapsed: Duration,
}

impl Run {
    /// Lines of stdout that start with `prefix`, prefix removed.
    pub fn lines_with(&self, prefix: &str) -> Vec<String> {
        self.stdout
            .lines()
            .filter_map(|l| l.strip_prefix(prefix).map(|s| s.trim().to_string()))
            .collect()
    }
    /// The distinct texts after `marker` in the `RESULT` lines (e.g. the
    /// errors of `RESULT <rank> error <text>`: one entry when all ranks agree).
    pub fn distinct_after(&self, marker: &str) -> std::collections::BTreeSet<String> {
        self.lines_with("RESULT")
            .iter()
            .filter_map(|l| l.split_once(marker).map(|(_, e)| e.to_string()))
            .collect()
    }
    /// Asserts the run succeeded, no `CHECK … FAIL` line was printed, and
    /// every one of the `np` ranks printed at least `per_rank` `CHECK … ok`
    /// lines; returns their total.
    pub fn assert_checks(&self, np: usize, per_rank: usize) -> usize {
        self.assert_ok();
        assert!(!self.stdout.contains("FAIL"), "{}", self.stdout);
        // `CHECK <rank> <name> ok`, counted per rank: a rank that skipped
        // its checks fails the run even when the others passed theirs.
        let mut oks = vec![0usize; np];
        for l in self.stdout.lines() {
            // (mpirun may interleave two ranks' lines: such a line is skipped.)
            let rank = l
                .strip_prefix("CHECK ")
                .filter(|_| l.ends_with(" ok"))
                .and_then(|rest| rest.split_whitespace().next())
                .and_then(|r| r.parse::<usize>().ok());
            if let Some(r) = rank {
                assert!(r < np, "CHECK from rank {r} of {np}: {l:?}");
                oks[r] += 1;
            }
        }
        for (r, &n) in oks.iter().enumerate() {
            assert!(
                n >= per_rank,
                "rank {r} passed only {n} checks (expected {per_rank} per rank):\n{}",
                self.stdout
            );
        }
        oks.iter().sum()
    }
    /// Panics with the full output unless the run exited 0 in time.
    pub fn assert_ok(&self) {
        assert!(
            !self.timed_out && self.code == Some(0),
            "mpirun failed (code {:?}, timed out {}):\nstdout:\n{}\nstderr:\n{}",
            self.code,
            self.timed_out,
            self.stdout,
            self.stderr
        );
    }
}

/// The rank that printed each line of `mpirun --tag-output` (`[job,rank]<stream>:…`)
/// containing `needle`.
pub fn ranks_saying(tagged: &str, needle: &str) -> Vec<usize> {
    tagged
        .lines()
        .filter(|l| l.contains(needle))
        .filter_map(|l| {
            let tag = l.strip_prefix('[')?.split(']').next()?;
            tag.split(',').nth(1)?.trim().parse().ok()
        })
        .collect()
}

/// The MPI implementation the tests launch with: `NUCE_MPI=mpich` for MPICH
/// (hydra's `mpirun.mpich`), anything else or unset for Open MPI (`mpirun`).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum MpiFamily {
    OpenMpi,
    Mpich,
}

/// The family named by `NUCE_MPI` (Open MPI by default).
pub fn mpi_family() -> MpiFamily {
    match std::env::var("NUCE_MPI").as_deref() {
        Ok("mpich") => MpiFamily::Mpich,
        _ => MpiFamily::OpenMpi,
    }
}

/// True when the tests run under MPICH (`NUCE_MPI=mpich`).
pub fn is_mpich() -> bool {
    mpi_family() == MpiFamily::Mpich
}

/// The launcher: `NUCE_MPIRUN`, else `mpirun` (Open MPI) or `mpirun.mpich`.
pub fn launcher() -> String {
    std::env::var("NUCE_MPIRUN").unwrap_or_else(|_| {
        match mpi_family() {
            MpiFamily::OpenMpi => "mpirun",
            MpiFamily::Mpich => "mpirun.mpich",
        }
        .to_string()
    })
}

/// The launcher's options that let more ranks than cores run: Open MPI
/// refuses without `--oversubscribe`; hydra allows it by default.
pub fn oversubscribe_opts() -> &'static [&'static str] {
    match mpi_family() {
        MpiFamily::OpenMpi => &["--oversubscribe"],
        MpiFamily::Mpich => &[],
    }
}

/// For a test that needs a feature only Open MPI's launcher has: true (and a
/// line on stderr naming what is skipped and why) under another MPI.
pub fn skip_unless_open_mpi(what: &str) -> bool {
    if mpi_family() == MpiFamily::OpenMpi {
        return false;
    }
    // Straight to the process's stderr: libtest captures eprintln! of a
    // passing test, and a skip must be seen.
    use std::io::Write;
    let _ = writeln!(
        std::io::stderr(),
        "SKIPPED under {:?} ({}): {what}",
        mpi_family(),
        launcher()
    );
    true
}

/// The environment the launcher needs on these machines (as `scripts/env.sh`
/// for Open MPI: root, oversubscription, yielding, shared memory only).
/// MPICH's hydra needs none of these (it runs as root and oversubscribes by
/// default); the Open MPI variables are harmless to it. MPICH's ch4 device
/// (Debian 12: ch4:ucx) busy-polls and has no yield-when-idle setting
/// (`MPIR_CVAR_POLLS_BEFORE_YIELD` made no measured difference): with more
/// ranks than cores its runs are slower than Open MPI's (200 allreduces on
/// 6 ranks, 2 cores: 6.3 s, Open MPI with yield_when_idle 1.5 s).
pub fn mpi_env(cmd: &mut Command) {
    for (k, v) in [
        ("OMPI_ALLOW_RUN_AS_ROOT", "1"),
        ("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1"),
        ("OMPI_MCA_rmaps_base_oversubscribe", "1"),
        ("OMPI_MCA_mpi_yield_when_idle", "1"),
        ("OMPI_MCA_btl_vader_single_copy_mechanism", "none"),
    ] {
        cmd.env(k, v);
    }
    // nuce's waits yield too, as Open MPI's above: the suite runs several
    // jobs at once on few cores, an oversubscription no launcher counts
    // (`nuce::ENV_WAIT_YIELD`; a test that needs the default sets it).
    if std::env::var_os("NUCE_WAIT_YIELD").is_none() {
        cmd.env("NUCE_WAIT_YIELD", "always");
    }
    if std::env::var_os("OMPI_MCA_btl").is_none() {
        cmd.env("OMPI_MCA_btl", "self,vader");
    }
    // A session directory of its own for every job (under the caller's
    // OMPI_MCA_orte_tmpdir_base, if any): two `mpirun`s of parallel test
    // threads creating the same one race in Open MPI ("mkdir ... File exists").
    static JOB: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let base = std::env::var_os("OMPI_MCA_orte_tmpdir_base")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(std::env::temp_dir);
    let job = JOB.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    let dir = base.join(format!("nuce-test-{}-{job}", std::process::id()));
    if std::fs::create_dir_all(&dir).is_ok() {
        cmd.env("OMPI_MCA_orte_tmpdir_base", &dir);
    }
}

/// Removes the job's own session directory made by [`mpi_env`] (once the job has ended).
fn remove_session_dir(cmd: &Command) {
    let dir = cmd
        .get_envs()
        .find(|(k, _)| *k == "OMPI_MCA_orte_tmpdir_base")
        .and_then(|(_, v)| v);
    if let Some(d) = dir.filter(|d| d.to_string_lossy().contains("nuce-test-")) {
        std::fs::remove_dir_all(d).ok();
    }
}

/// The cores of the machine, shared by the MPI runs of one test binary
/// (tests run in parallel threads): runs whose assertions depend on the
/// speeds nuce measures hold them alone ([`measured_speeds_lock`]), every
/// other run shares them ([`mpirun_with`] takes a read guard).
static MACHINE: std::sync::RwLock<()> = std::sync::RwLock::new(());

thread_local! {
    /// Whether this thread holds the machine alone.
    static ALONE: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// The machine held alone by a test whose assertions depend on the speeds
/// nuce measures: two jobs sharing the cores would measure each other, not
/// the work they were given. No other MPI run of the binary starts while
/// it is held, and the runs of this thread go on.
pub struct Alone(#[allow(dead_code)] std::sync::RwLockWriteGuard<'static, ()>);

impl Drop for Alone {
    fn drop(&mut self) {
        ALONE.with(|a| a.set(false));
    }
}

/// Holds the machine alone until the guard is dropped (see [`Alone`]).
pub fn measured_speeds_lock() -> Alone {
    let guard = MACHINE.write().unwrap_or_else(|e| e.into_inner());
    ALONE.with(|a| a.set(true));
    Alone(guard)
}

/// Runs `mpirun -np <np> <program> <args…>`, killing it after `timeout`.
pub fn mpirun_prog(np: usize, program: &str, args: &[&str], timeout: Duration) -> Run {
    mpirun_with(np, &[], program, args, timeout)
}

/// [`mpirun_prog`] with extra options of `mpirun` (e.g. `--enable-recovery`,
/// which lets the other ranks run on when one dies, so that nuce, not the
/// launcher, names the dead rank; `--tag-output`, which prefixes every line
/// with `[job,rank]`).
pub fn mpirun_with(
    np: usize,
    mpirun_opts: &[&str],
    program: &str,
    args: &[&str],
    timeout: Duration,
) -> Run {
    let _shared =
        (!ALONE.with(|a| a.get())).then(|| MACHINE.read().unwrap_or_else(|e| e.into_inner()));
    let mut cmd = Command::new(launcher());
    cmd.args(mpirun_opts);
    cmd.arg("-np")
        .arg(np.to_string())
        .args(oversubscribe_opts())
        .arg(program)
        .args(args);
    mpi_env(&mut cmd);
    cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
    let start = Instant::now();
    let mut child = cmd
        .spawn()
        .unwrap_or_else(|e| panic!("{}: {e} (run scripts/setup.sh)", launcher()));
    let mut out = child.stdout.take().unwrap();
    let mut err = child.stderr.take().unwrap();
    let t_out = std::thread::spawn(move || {
        let mut s = String::new();
        out.read_to_string(&mut s).ok();
        s
    });
    let t_err = std::thread::spawn(move || {
        let mut s = String::new();
        err.read_to_string(&mut s).ok();
        s
    });
    let mut timed_out = false;
    let code = loop {
        if let Some(st) = child.try_wait().unwrap() {
            break st.code();
        }
        if start.elapsed() > timeout {
            timed_out = true;
            child.kill().ok();
            child.wait().ok();
            break None;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    remove_session_dir(&cmd);
    Run {
        code,
        stdout: t_out.join().unwrap_or_default(),
        stderr: t_err.join().unwrap_or_default(),
        timed_out,
        elapsed: start.elapsed(),
    }
}

/// Runs a scenario of `nuce-mpi-check` on `np` ranks (2-minute limit) and
/// asserts it succeeded with at least one passed check per rank and none failed.
pub fn checks_pass(np: usize, args: &[&str]) -> Run {
    let run = mpirun(np, args, Duration::from_secs(120));
    run.assert_checks(np, 1);
    run
}

/// Runs a scenario of the `nuce-mpi-check` binary on `np` ranks.
pub fn mpirun(np: usize, args: &[&str], timeout: Duration) -> Run {
    mpirun_prog(np, &check_binary(), args, timeout)
}

/// `target/<profile>`, the folder of the workspace's binaries.
fn profile_dir() -> std::path::PathBuf {
    let exe = std::env::current_exe().expect("test executable path");
    exe.parent()
        .and_then(|d| d.parent())
        .expect("target/<profile>")
        .to_path_buf()
}

/// Path of a binary of another workspace crate (`nuce` from `nuce-cli`,
/// `nuce-mpi-check` from `nuce-testkit`); `cargo test --workspace` (as
/// `scripts/test.sh` runs it) builds them next to the tests.
pub fn workspace_bin(name: &str) -> String {
    let path = profile_dir().join(name);
    assert!(
        path.exists(),
        "{} is not built: run `cargo build --release --workspace` (scripts/test.sh does)",
        path.display()
    );
    path.to_string_lossy().into_owned()
}

/// The MPI scenario binary of `nuce-testkit`.
pub fn check_binary() -> String {
    workspace_bin("nuce-mpi-check")
}

/// Path of a built example (`cargo test` builds the examples next to the tests).
pub fn example(name: &str) -> String {
    profile_dir()
        .join("examples")
        .join(name)
        .to_string_lossy()
        .into_owned()
}

/// Runs the scenario `args` of `nuce-mpi-check` on `np` ranks, each of which
/// prints `ERR <rank> <error or none>`; asserts that every rank reported and
/// that all agree, and returns the error text.
pub fn same_error_on_every_rank(np: usize, args: &[&str]) -> String {
    let run = mpirun(np, args, Duration::from_secs(60));
    run.assert_ok();
    let errs: std::collections::BTreeSet<String> = run
        .lines_with("ERR ")
        .into_iter()
        .map(|l| {
            l.split_once(' ')
                .map(|(_, rest)| rest.to_string())
                .unwrap_or_default()
        })
        .collect();
    let count = run.stdout.lines().filter(|l| l.starts_with("ERR ")).count();
    assert_eq!(count, np, "every rank reports: {}", run.stdout);
    assert_eq!(errs.len(), 1, "all ranks agree on {args:?}: {errs:?}");
    errs.into_iter().next().unwrap()
}

/// Asserts a remap scenario's `RESULT <name> steps=S bytes=B minimum=M
/// received=R` line: `steps` steps, bytes reported = the minimum (cells
/// changing owner) = bytes actually received, and something moved on more
/// than one rank.
pub fn assert_minimum_moved(run: &Run, name: &str, np: usize, steps: &str) {
    let res = run.lines_with(&format!("RESULT {name} "));
    assert_eq!(res.len(), 1, "{}", run.stdout);
    let kv: Vec<&str> = res[0].split_whitespace().collect();
    assert_eq!(kv[0], format!("steps={steps}"));
    let bytes = kv[1].trim_start_matches("bytes=");
    assert_eq!(bytes, kv[2].trim_start_matches("minimum="));
    assert_eq!(bytes, kv[3].trim_start_matches("received="));
    if np > 1 {
        assert!(bytes.parse::<u64>().unwrap() > 0, "{}", run.stdout);
    }
}

/// Runs `attempt` up to 3 times until it holds: for checks on real timings,
/// which a machine loaded by other jobs on both cores (a build beside the
/// suite) can upset in one run; a nuce that never sees the difference
/// fails all three. Panics with every attempt's reason.
pub fn within_three_runs(attempt: impl Fn() -> Result<(), String>) {
    let mut why = Vec::new();
    for _ in 0..3 {
        match attempt() {
            Ok(()) => return,
            Err(e) => why.push(e),
        }
    }
    panic!("3 runs failed:\n{}", why.join("\n"));
}
