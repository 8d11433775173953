//! Shared by the graph benchmarks: runs `gpmetis` (the yardstick, installed
//! by the scripts, never a dependency) and loads meshes as nodal graphs.

use std::process::Command;

use nuce_plan::graph::{io, Graph, Partition};

/// Runs gpmetis with target weights; returns the partition and METIS's own
/// partitioning time (its "Partitioning:" line, I/O excluded).
pub fn metis(graph_file: &str, work: &str, speeds: &[f64], n: usize) -> (Partition, f64) {
    let p = speeds.len();
    let sum: f64 = speeds.iter().sum();
    let mut fr: Vec<f64> = speeds
        .iter()
        .map(|s| (s / sum * 1e6).round() / 1e6)
        .collect();
    let rest = 1.0 - fr[..p - 1].iter().sum::<f64>();
    fr[p - 1] = (rest * 1e6).round() / 1e6;
    let tp: String = fr
        .iter()
        .enumerate()
        .map(|(i, f)| format!("{i} = {f}\n"))
        .collect();
    let tpf = format!("{work}/tpwgts.txt");
    std::fs::write(&tpf, tp).expect("write tpwgts");
    let out = Command::new("gpmetis")
        .arg(format!("-tpwgts={tpf}"))
        .arg(graph_file)
        .arg(p.to_string())
        .output()
        .expect("gpmetis (scripts/setup.sh metis)");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "gpmetis failed: {text}");
    let secs = text
        .lines()
        .find(|l| l.trim_start().starts_with("Partitioning:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|t| t.parse().ok())
        .unwrap_or(f64::NAN);
    let part = std::fs::read_to_string(format!("{graph_file}.part.{p}")).expect("part file");
    (
        io::parse_partition(&part, "metis", n, p).expect("metis partition"),
        secs,
    )
}

pub fn load(file: &str) -> Graph {
    let text = std::fs::read_to_string(file).expect("mesh file");
    io::parse_mesh(&text, file)
        .expect("mesh")
        .nodal_graph()
        .expect("nodal graph")
        .0
}
