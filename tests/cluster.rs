//! nuce across the hosts of a one-machine namespace cluster
//! (`scripts/cluster.sh`): host detection, the two-level plan with the
//! measured network, and faults on a remote host. Needs root and network
//! namespaces, so the test is `#[ignore]`d and run by
//! `scripts/test_cluster.sh` (also the cluster step of `scripts/test.sh`).

mod common;

use std::process::{Command, Output};

const PREFIX: &str = "nucek";

/// `scripts/cluster.sh ARGS` with this test's cluster prefix, killed after
/// 5 minutes so that a hung launch cannot hang the test.
fn cluster(args: &[&str]) -> Output {
    Command::new("timeout")
        .args(["-k", "5", "300"])
        .arg(format!("{}/scripts/cluster.sh", env!("CARGO_MANIFEST_DIR")))
        .args(args)
        .env("NUCE_CLUSTER", PREFIX)
        .output()
        .expect("scripts/cluster.sh runs")
}

/// Tears the cluster down even when an assertion fails.
struct Down;
impl Drop for Down {
    fn drop(&mut self) {
        cluster(&["down"]);
    }
}

fn text(o: &Output) -> String {
    format!(
        "{}\n{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// `mpirun -np 6` of heat2d across the cluster (2 ranks per host) with `NUCE_TIMEOUT_S`.
fn heat2d(timeout_s: &str, extra: &[&str]) -> (Output, std::time::Duration) {
    heat2d_with(&[], timeout_s, extra)
}

/// [`heat2d`] with extra options of `mpirun`.
fn heat2d_with(
    mpirun_opts: &[&str],
    timeout_s: &str,
    extra: &[&str],
) -> (Output, std::time::Duration) {
    let exe = common::example("heat2d");
    let mut args = vec!["mpirun"];
    args.extend_from_slice(mpirun_opts);
    args.extend([
        "-np",
        "6",
        "-x",
        "NUCE_TIMEOUT_S",
        &exe,
        "--rows",
        "192",
        "--cols",
        "160",
        "--phases",
        "3",
        "--iters",
        "5",
    ]);
    args.extend_from_slice(extra);
    let start = std::time::Instant::now();
    let out = Command::new("timeout")
        .args(["-k", "5", "200"])
        .arg(format!("{}/scripts/cluster.sh", env!("CARGO_MANIFEST_DIR")))
        .args(&args)
        .env("NUCE_CLUSTER", PREFIX)
        .env("NUCE_TIMEOUT_S", timeout_s)
        .output()
        .expect("cluster.sh mpirun runs");
    (out, start.elapsed())
}

/// Three hosts, links at 100 Mbit/s except host 3's at 20 Mbit/s (tbf).
#[test]
#[ignore = "needs root and network namespaces: scripts/test_cluster.sh"]
fn hierarchy_network_and_faults_across_namespace_hosts() {
    let _down = Down;
    let up = cluster(&["up", "-n", "3", "--rate", "100mbit", "--host", "3::20mbit"]);
    assert!(up.status.success(), "cluster.sh up: {}", text(&up));

    // Hosts detected by the shared-memory split, two-level plan over them,
    // network measured: the result still equals the serial solve.
    let (out, _) = heat2d(
        "60",
        &["--json", "--hier", "--net", "--net-bytes", "262144"],
    );
    assert!(out.status.success(), "{}", text(&out));
    let v = summary(&String::from_utf8_lossy(&out.stdout));
    let hosts: Vec<u64> = v["hosts"]
        .as_array()
        .expect("hosts")
        .iter()
        .map(|h| h.as_u64().unwrap())
        .collect();
    assert_eq!(hosts, vec![0, 0, 1, 1, 2, 2], "{v}");
    assert_eq!(v["algorithm"], "hier");
    assert!(v["relative_diff"].as_f64().unwrap() <= 1e-12, "{v}");
    // The slowest link is host 3's 20 Mbit/s (2.5 MB/s; a 256 KiB probe
    // reads up to ~1.3x high: the tbf bucket holds 64 KiB).
    let bw = v["network"]["bandwidth"].as_f64().unwrap() / 2.5e6;
    assert!(
        (0.5..=1.5).contains(&bw),
        "bandwidth / 20 Mbit/s = {bw}: {v}"
    );

    // A rank on host 3 killed mid-phase: the job ends, and a surviving rank
    // (the root) names it with its host. `--enable-recovery` keeps the
    // launcher from ending the job first; `--tag-output` tells who spoke.
    let opts = ["--enable-recovery", "--tag-output"];
    let (out, took) = heat2d_with(&opts, "10", &["--kill", "5@1", "--no-check"]);
    let all = text(&out);
    assert!(took.as_secs() < 60, "took {took:?}: {all}");
    let needle = "nuce: timeout: rank(s) [5] of 6 did not reach";
    let said = common::ranks_saying(&all, needle);
    assert!(!said.is_empty() && !said.contains(&5), "{said:?}: {all}");
    assert!(all.contains("rank 5 on host "), "{all}");

    // A rank on host 2 hangs: the root names it within the timeout.
    let (out, took) = heat2d("5", &["--hang", "3@1", "--no-check"]);
    let all = text(&out);
    assert!(!out.status.success(), "{all}");
    assert!(took.as_secs() < 60, "took {took:?}: {all}");
    assert!(
        all.contains("rank(s) [3] of 6 did not reach Balancer::maybe_remap"),
        "{all}"
    );
}

/// The JSON summary heat2d prints on the root.
fn summary(stdout: &str) -> serde_json::Value {
    let line = stdout.lines().find(|l| l.starts_with('{'));
    serde_json::from_str(line.expect("a JSON summary line")).expect("valid JSON")
}

/// Runs heat2d under a local `mpirun` (a 90 × 70 grid, 3 phases of 5
/// iterations) and returns its JSON summary.
fn local_heat2d(np: usize, extra: &[&str]) -> serde_json::Value {
    let grid = [
        "--rows", "90", "--cols", "70", "--phases", "3", "--iters", "5",
    ];
    let args: Vec<&str> = grid
        .iter()
        .chain(["--json"].iter())
        .chain(extra)
        .copied()
        .collect();
    let run = common::mpirun_prog(
        np,
        &common::example("heat2d"),
        &args,
        std::time::Duration::from_secs(120),
    );
    run.assert_ok();
    summary(&run.stdout)
}

/// On one machine (no namespaces): detected hosts are one host, emulated
/// hosts (`--hosts`) give a two-level plan whose hosts each own one
/// rectangle, and the measured network feeds the plan; results stay exact.
#[test]
fn hierarchical_heat2d_on_one_machine() {
    let v = local_heat2d(3, &["--hier"]);
    assert_eq!(v["hosts"], serde_json::json!([0, 0, 0]), "{v}");
    assert_eq!(v["algorithm"], "hier");
    assert!(v["relative_diff"].as_f64().unwrap() <= 1e-12);

    let v = local_heat2d(
        5,
        &[
            "--hier",
            "--hosts",
            "0,1,0,1,2",
            "--net",
            "--net-bytes",
            "65536",
        ],
    );
    assert_eq!(v["hosts"], serde_json::json!([0, 1, 0, 1, 2]), "{v}");
    assert!(v["relative_diff"].as_f64().unwrap() <= 1e-12);
    let net = &v["network"];
    assert!(net["bandwidth"].as_f64().unwrap() > 0.0, "{v}");
    assert!(net["latency_cells"].as_f64().unwrap() >= 0.0, "{v}");
    // Every plan of the run: each host's parts tile one rectangle (their
    // bounding box has exactly their total area).
    let hosts = [0usize, 1, 0, 1, 2];
    for phase in v["phases"].as_array().unwrap() {
        let areas: Vec<u64> = phase["areas"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| a.as_u64().unwrap())
            .collect();
        assert_eq!(areas.iter().sum::<u64>(), 90 * 70, "{v}");
    }
    let plan = v["final_plan"].as_array();
    if let Some(parts) = plan {
        // The final plan tiles the 90 × 70 array, cell by cell.
        let mut owner = vec![usize::MAX; 90 * 70];
        for (k, p) in parts.iter().enumerate() {
            let get = |key: &str| p[key].as_u64().unwrap() as usize;
            for i in get("row")..get("row") + get("rows") {
                for j in get("col")..get("col") + get("cols") {
                    assert!(i < 90 && j < 70, "part {k} leaves the array: {v}");
                    assert_eq!(owner[i * 70 + j], usize::MAX, "cell ({i}, {j}) twice: {v}");
                    owner[i * 70 + j] = k;
                }
            }
        }
        assert!(!owner.contains(&usize::MAX), "a cell in no part: {v}");
        for h in 0..3 {
            let mine: Vec<&serde_json::Value> = parts
                .iter()
                .zip(hosts)
                .filter(|(_, x)| *x == h)
                .map(|(p, _)| p)
                .collect();
            let get = |p: &serde_json::Value, k: &str| p[k].as_u64().unwrap();
            let area: u64 = mine.iter().map(|p| get(p, "rows") * get(p, "cols")).sum();
            let nonempty: Vec<_> = mine
                .iter()
                .filter(|p| get(p, "rows") * get(p, "cols") > 0)
                .collect();
            let r0 = nonempty.iter().map(|p| get(p, "row")).min().unwrap();
            let c0 = nonempty.iter().map(|p| get(p, "col")).min().unwrap();
            let r1 = nonempty
                .iter()
                .map(|p| get(p, "row") + get(p, "rows"))
                .max()
                .unwrap();
            let c1 = nonempty
                .iter()
                .map(|p| get(p, "col") + get(p, "cols"))
                .max()
                .unwrap();
            assert_eq!(
                (r1 - r0) * (c1 - c0),
                area,
                "host {h} is not one rectangle: {v}"
            );
        }
    } else {
        panic!("no final_plan in {v}");
    }

    // A registry algorithm by name, latency-aware with the measured network.
    let v = local_heat2d(3, &["--algo", "column", "--net", "--net-bytes", "65536"]);
    assert_eq!(v["algorithm"], "column");
    assert!(v["relative_diff"].as_f64().unwrap() <= 1e-12);
}

/// The two-level gather through emulated host leaders equals the flat
/// gather, in rank order; one machine is detected as one host; a balancer's
/// hierarchical plan over those hosts tiles the array and gives each host
/// the area of its total speed.
#[test]
fn two_level_gather_equals_flat_gather() {
    for (np, hosts) in [(1, "1"), (3, "2"), (5, "3"), (4, "4")] {
        let run = common::mpirun(
            np,
            &["hier-gather", hosts],
            std::time::Duration::from_secs(60),
        );
        // Detection, gather, short table, the hierarchical plan's tiling
        // and host totals, and a balance point: on every rank.
        run.assert_checks(np, 6);
    }
}
