//! The `nuce plan tasks` and `nuce plan divisible` command lines (JSON keys
//! of docs/cli-tasks.md).

use std::process::Command;

fn nuce(args: &[&str]) -> serde_json::Value {
    let out = Command::new(env!("CARGO_BIN_EXE_nuce"))
        .args(args)
        .output()
        .expect("run nuce");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("json")
}

#[test]
fn tasks_figure_23() {
    let v = nuce(&[
        "plan",
        "tasks",
        "--cycle-times",
        "4,5,9",
        "--tcom",
        "1",
        "--deadline",
        "118",
        "--json",
    ]);
    assert_eq!(v["counts"], serde_json::json!([29, 23, 13]));
    assert_eq!(v["total"], 65);
    assert_eq!(v["order"], serde_json::json!([2, 3, 1]));
    assert!(v.get("return_order").is_none());
}

#[test]
fn tasks_min_time_with_returns() {
    let v = nuce(&[
        "plan",
        "tasks",
        "--cycle-times",
        "3,4,6",
        "--tcom",
        "1",
        "--tcom-return",
        "2",
        "--tasks",
        "20",
        "--json",
    ]);
    assert_eq!(v["total"], 20);
    let counts: Vec<u64> = serde_json::from_value(v["counts"].clone()).unwrap();
    let order: Vec<usize> = serde_json::from_value(v["order"].clone()).unwrap();
    let ret: Vec<usize> = serde_json::from_value(v["return_order"].clone()).unwrap();
    let t = [3.0, 4.0, 6.0];
    // Recompute the model makespan from the keys (σ2 = p + 1 − position).
    let m = (0..3)
        .map(|i| order[i] as f64 + counts[i] as f64 * t[i] + 2.0 * (4 - ret[i]) as f64)
        .fold(0.0, f64::max);
    assert_eq!(v["makespan"].as_f64().unwrap(), m);
}

#[test]
fn divisible_keys() {
    let v = nuce(&[
        "plan",
        "divisible",
        "--input",
        "0.3,2",
        "--compute",
        "0.1,30",
        "--output",
        "0.3,2",
        "--workers",
        "4",
        "--json",
    ]);
    assert_eq!(v["workers"], 4);
    let f: Vec<f64> = serde_json::from_value(v["fractions"].clone()).unwrap();
    assert!(f.iter().all(|x| (x - 0.25).abs() < 1e-7));
    assert!(v["makespan"].as_f64().unwrap() > 0.0);
    let v = nuce(&[
        "plan",
        "divisible",
        "--input",
        "1.21,1.05",
        "--compute",
        "0,44.52",
        "--output",
        "0.1,1.59",
        "--workers",
        "auto",
        "--units",
        "100",
        "--json",
    ]);
    let u: Vec<u64> = serde_json::from_value(v["units"].clone()).unwrap();
    assert_eq!(u.iter().sum::<u64>(), 100);
}

#[test]
fn bad_input_exits_with_an_error() {
    let out = Command::new(env!("CARGO_BIN_EXE_nuce"))
        .args(["plan", "tasks", "--cycle-times", "1,0", "--deadline", "3"])
        .output()
        .unwrap();
    assert!(!out.status.success());
}

#[test]
fn zero_return_cost_still_reports_a_return_order() {
    let v = nuce(&[
        "plan",
        "tasks",
        "--cycle-times",
        "4,5,9",
        "--tcom",
        "1",
        "--tcom-return",
        "0",
        "--deadline",
        "118",
        "--json",
    ]);
    assert_eq!(v["total"], 65);
    assert_eq!(v["return_order"], v["order"]);
}
