//! Integration tests of `nuce::speed`, the `nuce measure` CLI and
//! `scripts/bind_ranks.sh`.

mod common;

use std::process::Command;
use std::time::Duration;

use nuce::speed::{
    measure_kernel, topology, Kernel, KernelConfig, SpeedRecord, SpeedSource, Summary,
};

fn quick(kernel: Kernel, work_multiplier: f64) -> KernelConfig {
    KernelConfig {
        kernel,
        warmup: 1,
        repeats: 5,
        min_time: Duration::from_millis(5),
        work_multiplier,
    }
}

/// Speeds of two configurations measured interleaved (so both see the same
/// background load): the median over three runs of each run's median.
fn paired_speeds(kernel: Kernel, multipliers: [f64; 2]) -> [f64; 2] {
    let mut runs: [Vec<f64>; 2] = [Vec::new(), Vec::new()];
    for _ in 0..3 {
        for (r, &m) in runs.iter_mut().zip(&multipliers) {
            r.push(measure_kernel(&quick(kernel, m)).median);
        }
    }
    runs.map(|r| Summary::of(&r).expect("three finite speeds").median)
}

/// Asserts that multiplier `m` measures `1/m` of the speed within `bounds`
/// (on the ratio fast / slow) in at least one of three attempts: a loaded
/// machine can distort one attempt, but a multiplier that does no real extra
/// work gives a ratio near 1 on every attempt.
fn assert_slowdown(kernel: Kernel, m: f64, bounds: std::ops::RangeInclusive<f64>) {
    let ratios: Vec<f64> = (0..3)
        .map(|_| {
            let [fast, slow] = paired_speeds(kernel, [1.0, m]);
            fast / slow
        })
        .collect();
    eprintln!("{kernel}: multiplier {m}: ratios {ratios:?}");
    assert!(
        ratios.iter().any(|r| bounds.contains(r)),
        "{kernel}: speed ratio for multiplier 1 vs {m}: {ratios:?}, want {bounds:?}"
    );
}

#[test]
fn multiplier_two_measures_about_half_speed() {
    assert_slowdown(Kernel::Stencil, 2.0, 1.3..=3.0);
    assert_slowdown(Kernel::Memory, 2.0, 1.3..=3.0);
}

#[test]
fn fractional_multiplier_is_honoured() {
    assert_slowdown(Kernel::Stencil, 3.5, 2.3..=5.5);
}

#[test]
fn kernels_report_consistent_statistics() {
    for kernel in [Kernel::Stencil, Kernel::Memory] {
        let m = measure_kernel(&quick(kernel, 1.0));
        assert_eq!(m.kernel, kernel);
        assert_eq!(m.samples.len(), 5);
        let mut s = m.samples.clone();
        s.sort_by(f64::total_cmp);
        assert_eq!((m.min, m.median, m.max), (s[0], s[2], s[4]));
        // Plausible for any CPU of the last 20 years: 1e6..1e12 cell updates/s.
        assert!(m.median > 1e6 && m.median < 1e12, "{m:?}");
    }
}

#[test]
fn measure_kernel_sanitizes_instead_of_panicking() {
    let m = measure_kernel(&KernelConfig {
        repeats: 0,
        work_multiplier: f64::NAN,
        min_time: Duration::from_millis(1),
        ..Default::default()
    });
    assert_eq!(m.samples.len(), KernelConfig::default().repeats);
    assert!(m.median > 0.0);
}

fn nuce_measure(envs: &[(&str, &str)], wrapper: bool) -> SpeedRecord {
    let bin = &common::workspace_bin("nuce");
    let root = env!("CARGO_MANIFEST_DIR");
    let mut cmd = if wrapper {
        let mut c = Command::new(format!("{root}/scripts/bind_ranks.sh"));
        c.arg(bin);
        c
    } else {
        Command::new(bin)
    };
    cmd.args(["measure", "--json", "--repeats", "3", "--min-ms", "2"]);
    for (k, v) in envs {
        cmd.env(k, v);
    }
    let out = cmd.output().expect("nuce measure runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("JSON speed record")
}

#[test]
fn cli_prints_a_valid_record_with_launcher_rank() {
    let rec = nuce_measure(&[("OMPI_COMM_WORLD_RANK", "3")], false);
    assert_eq!(rec.rank, 3);
    assert_eq!(rec.source, SpeedSource::Kernel);
    rec.validate().unwrap();
    assert_eq!(rec.topology, topology());
}

#[test]
fn bind_ranks_binds_each_rank_to_its_cpus() {
    let t = topology();
    let last = *t.binding.last().expect("bound somewhere");
    let first = t.binding[0];
    let spec = format!("0:{first},1:{last},*:{first}+{last}");
    for (rank, expect) in [
        ("0", vec![first]),
        ("1", vec![last]),
        ("7", {
            let mut v = vec![first, last];
            v.dedup();
            v
        }),
    ] {
        let rec = nuce_measure(
            &[("OMPI_COMM_WORLD_RANK", rank), ("NUCE_BIND", spec.as_str())],
            true,
        );
        assert_eq!(rec.topology.binding, expect, "rank {rank} spec {spec}");
    }
    // No spec: unbound (inherits this process's binding).
    let rec = nuce_measure(&[("OMPI_COMM_WORLD_RANK", "0"), ("NUCE_BIND", "")], true);
    assert_eq!(rec.topology.binding, t.binding);
}

/// The exit code of `scripts/bind_ranks.sh true` with these variables set.
fn bind_ranks_exit(envs: &[(&str, &str)]) -> Option<i32> {
    let root = env!("CARGO_MANIFEST_DIR");
    let mut cmd = Command::new(format!("{root}/scripts/bind_ranks.sh"));
    cmd.arg("true");
    for (k, v) in envs {
        cmd.env(k, v);
    }
    cmd.output().unwrap().status.code()
}

#[test]
fn bind_ranks_rejects_malformed_specs() {
    for spec in ["0-1", "a:1", "0:x", "0:1,,1:"] {
        let code = bind_ranks_exit(&[("OMPI_COMM_WORLD_RANK", "0"), ("NUCE_BIND", spec)]);
        assert_eq!(code, Some(2), "spec {spec:?}");
    }
}

/// `NUCE_SLOW=R:F` stops rank R's process for 1 - 1/F of every period: its
/// wall time for a fixed amount of CPU work is at least about F times that
/// work's CPU time. (Load lengthens the wall time too, so on a machine loaded
/// more than 2.4-fold this would pass even without the stops; it cannot fail
/// because of load.)
#[test]
fn bind_ranks_slows_a_rank_down_by_stopping_it() {
    let root = env!("CARGO_MANIFEST_DIR");
    // 0.3 s of CPU time, then the wall and CPU seconds it took.
    let spin = "import time\nw, c = time.monotonic(), time.process_time()\n\
                while time.process_time() - c < 0.3: pass\n\
                print(time.monotonic() - w, time.process_time() - c)";
    let run = |slow: &str| -> (f64, f64) {
        let out = Command::new(format!("{root}/scripts/bind_ranks.sh"))
            .args(["python3", "-c", spin])
            .env("OMPI_COMM_WORLD_RANK", "1")
            .env("NUCE_SLOW", slow)
            .output()
            .expect("python3 runs");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let text = String::from_utf8_lossy(&out.stdout).to_string();
        let v: Vec<f64> = text
            .split_whitespace()
            .map(|x| x.parse().unwrap())
            .collect();
        (v[0], v[1])
    };
    let (wall, cpu) = run("1:3");
    assert!(
        wall >= 2.4 * cpu,
        "rank 1 slowed 3x: wall {wall} s for {cpu} s of CPU"
    );
    // A spec for another rank leaves this one to run its program as usual
    // (no timing asserted: its wall time is whatever the load makes it).
    let (wall0, cpu0) = run("0:3");
    assert!(cpu0 >= 0.3 && wall0 > 0.0);
    // Nothing is left stopped or running: the watcher ends with the process.
    std::thread::sleep(std::time::Duration::from_millis(200));
    let left = Command::new("pgrep")
        .args(["-f", "pid, factor, period"])
        .output()
        .unwrap();
    assert!(
        left.stdout.is_empty(),
        "watchers left: {}",
        String::from_utf8_lossy(&left.stdout)
    );
}

#[test]
fn bind_ranks_rejects_malformed_slowdowns() {
    for (slow, period) in [
        ("1", "3"),
        ("1:0.5", "3"),
        ("x:3", "3"),
        ("1:3", "0.1"),
        ("1:3", "ms"),
    ] {
        let code = bind_ranks_exit(&[
            ("OMPI_COMM_WORLD_RANK", "1"),
            ("NUCE_SLOW", slow),
            ("NUCE_SLOW_PERIOD_MS", period),
        ]);
        assert_eq!(code, Some(2), "NUCE_SLOW {slow:?} period {period:?}");
    }
}
