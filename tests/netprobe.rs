//! The MPI network probe (`src/runtime/netprobe.rs`) under `mpirun` on this
//! machine, through `examples/net_probe`: shared memory and TCP over loopback.
//! The shaped-link check (bandwidth against a `tbf` rate, latency against a
//! `netem` delay) needs network namespaces: `scripts/test_cluster.sh`.

mod common;

use std::time::Duration;

use nuce::speed::network::LinkRecord;

/// Runs the probe on `np` ranks with extra environment (`K=V`, applied to the
/// application processes through `env`) and returns the records by rank.
fn probe(np: usize, env: &[&str], args: &[&str]) -> Vec<(usize, LinkRecord)> {
    let exe = common::example("net_probe");
    let mut full: Vec<&str> = env.to_vec();
    full.push(&exe);
    full.extend_from_slice(args);
    let run = common::mpirun_prog(np, "env", &full, Duration::from_secs(90));
    run.assert_ok();
    let mut recs: Vec<(usize, LinkRecord)> = run
        .lines_with("LINK ")
        .iter()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).expect("LINK line is JSON");
            let rank = v["rank"].as_u64().expect("rank") as usize;
            let link: LinkRecord = serde_json::from_value(v["link"].clone()).expect("LinkRecord");
            (rank, link)
        })
        .collect();
    recs.sort_by_key(|r| r.0);
    assert_eq!(
        recs.iter().map(|r| r.0).collect::<Vec<_>>(),
        (1..np).collect::<Vec<_>>(),
        "one record per non-root rank:\n{}",
        run.stdout
    );
    recs
}

fn assert_plausible(recs: &[(usize, LinkRecord)], large: usize) {
    for (rank, l) in recs {
        assert_eq!((l.rank as usize, l.peer, l.large_bytes), (*rank, 0, large));
        // Loopback on a loaded machine: microseconds, at worst a few ms.
        assert!(l.latency_s > 0.0 && l.latency_s < 0.05, "{l:?}");
        // Anything from a slow TCP loopback to shared-memory copies.
        assert!(
            l.bandwidth_bytes_per_s > 1e6 && l.bandwidth_bytes_per_s < 1e12,
            "{l:?}"
        );
        assert!(
            l.large_one_way_s.median >= l.small_one_way_s.median,
            "{l:?}"
        );
        assert!(l.small_one_way_s.min <= l.latency_s && l.latency_s <= l.small_one_way_s.max);
        // The model reproduces the large message's measured time.
        let predicted = l.transfer_time(l.large_bytes);
        assert!(
            (predicted - l.large_one_way_s.median).abs() <= 1e-9 + 1e-3 * predicted
                || l.large_one_way_s.median <= l.small_one_way_s.median,
            "{l:?}"
        );
    }
}

#[test]
fn shared_memory_probe_on_four_ranks() {
    let recs = probe(4, &[], &["--large", "262144", "--repeats", "5"]);
    assert_plausible(&recs, 262_144);
}

#[test]
fn tcp_loopback_probe_on_two_ranks() {
    let recs = probe(
        2,
        &["OMPI_MCA_btl=self,tcp", "OMPI_MCA_btl_tcp_if_include=lo"],
        &["--large", "131072", "--repeats", "5"],
    );
    assert_plausible(&recs, 131_072);
}

#[test]
fn bad_config_fails_on_every_rank_without_hanging() {
    let exe = common::example("net_probe");
    let run = common::mpirun_prog(
        3,
        &exe,
        &["--small", "64", "--large", "64"],
        Duration::from_secs(60),
    );
    assert!(!run.timed_out, "probe hung on a bad config");
    assert_ne!(run.code, Some(0));
    assert!(run.stderr.contains("probe sizes"), "{}", run.stderr);
    assert!(run.lines_with("LINK ").is_empty());
}

/// Tears the namespace cluster down when dropped, also when a check panics.
struct Cluster {
    script: String,
    prefix: &'static str,
}

impl Cluster {
    /// Runs `cluster.sh ARGS` (killed after 5 minutes: a hung mpirun must
    /// not hang the test).
    fn run(&self, args: &[&str]) -> std::process::Output {
        std::process::Command::new("timeout")
            .args(["-k", "5", "300", &self.script])
            .args(args)
            .env("NUCE_CLUSTER", self.prefix)
            .output()
            .expect("scripts/cluster.sh runs")
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        self.run(&["down"]);
    }
}

/// Three namespace hosts; links of hosts 1 and 2 shaped to 100 Mbit/s, host
/// 3's to 20 Mbit/s, and (when the kernel has `sch_netem`) 5 ms delay on every
/// link, so one-way latency between two hosts is ≥ 10 ms. The probe must
/// measure what the shaping imposes, never be told it. Needs root (network
/// namespaces) and iproute2; run by `scripts/test_cluster.sh` (~15 s).
#[test]
#[ignore = "needs root and network namespaces: scripts/test_cluster.sh"]
fn shaped_namespace_cluster_links_are_measured() {
    let cluster = Cluster {
        script: format!("{}/scripts/cluster.sh", env!("CARGO_MANIFEST_DIR")),
        prefix: "nucet",
    };
    let caps = String::from_utf8_lossy(&cluster.run(&["caps"]).stdout).into_owned();
    let netem = caps.lines().any(|l| l.trim() == "netem yes");
    let (fast, slow) = (100e6 / 8.0, 20e6 / 8.0); // bytes per second
    let mut up = vec!["up", "-n", "3", "--rate", "100mbit"];
    let host3 = if netem { "3:5ms:20mbit" } else { "3::20mbit" };
    up.extend(["--host", host3]);
    if netem {
        up.extend(["--delay", "5ms"]);
    }
    let out = cluster.run(&up);
    assert!(
        out.status.success(),
        "cluster.sh up failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let exe = common::example("net_probe");
    let out = cluster.run(&[
        "mpirun",
        "-np",
        "3",
        "--map-by",
        "node",
        &exe,
        "--large",
        "1048576",
        "--repeats",
        "5",
    ]);
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "mpirun on the cluster failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut by_host = std::collections::BTreeMap::new();
    for l in stdout.lines().filter_map(|l| l.strip_prefix("LINK ")) {
        let v: serde_json::Value = serde_json::from_str(l).expect("JSON");
        let link: LinkRecord = serde_json::from_value(v["link"].clone()).expect("LinkRecord");
        by_host.insert(v["host"].as_str().unwrap_or("").to_string(), link);
    }
    eprintln!("netem: {netem}; links: {by_host:#?}");
    let (h2, h3) = (&by_host["nucet-h2"], &by_host["nucet-h3"]);
    let bw2 = h2.bandwidth_bytes_per_s / fast;
    let bw3 = h3.bandwidth_bytes_per_s / slow;
    assert!(
        (0.6..=1.2).contains(&bw2),
        "h2 bandwidth / 100 Mbit/s = {bw2}"
    );
    assert!(
        (0.6..=1.2).contains(&bw3),
        "h3 bandwidth / 20 Mbit/s = {bw3}"
    );
    let ratio = h2.bandwidth_bytes_per_s / h3.bandwidth_bytes_per_s;
    assert!(
        (3.0..=7.0).contains(&ratio),
        "bandwidth ratio h2/h3 = {ratio}"
    );
    if netem {
        for (h, l) in [("h2", h2), ("h3", h3)] {
            assert!(
                l.latency_s >= 9.5e-3,
                "{h}: latency {} s < 10 ms",
                l.latency_s
            );
        }
    } else {
        eprintln!("kernel without sch_netem: latency shaping not checked");
    }
}

/// `cluster.sh` refuses malformed arguments before touching any namespace
/// (no root needed).
#[test]
fn cluster_script_rejects_bad_arguments() {
    let script = format!("{}/scripts/cluster.sh", env!("CARGO_MANIFEST_DIR"));
    for (prefix, args) in [
        ("nucex", &["up", "-n", "0"][..]),
        ("nucex", &["up", "-n", "201"]),
        ("nucex", &["up", "--rate", "10xyz"]),
        ("nucex", &["up", "--delay", "5 ms"]),
        ("nucex", &["up", "-n", "2", "--host", "5:1ms:"]),
        ("nucex", &["up", "--host", "1:1ms"]),
        ("nucex", &["up", "--bogus"]),
        ("nucex", &["frobnicate"]),
        ("BAD!", &["down"]),
    ] {
        let out = std::process::Command::new(&script)
            .args(args)
            .env("NUCE_CLUSTER", prefix)
            .output()
            .expect("cluster.sh runs");
        assert_eq!(out.status.code(), Some(2), "{prefix} {args:?}");
    }
}
