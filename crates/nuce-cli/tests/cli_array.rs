//! Integration tests of `nuce plan array` and `nuce plan distribute`: run
//! the binary, parse its JSON, check the documented keys (docs/cli.md), the
//! tiling, the input order and the exit codes.

mod common;

use common::nuce;
use serde_json::Value;

fn array_json(rows: usize, cols: usize, speeds: &str, algo: &str, extra: &[&str]) -> Value {
    let (r, c) = (rows.to_string(), cols.to_string());
    let mut args = vec![
        "plan", "array", "--rows", &r, "--cols", &c, "--speeds", speeds, "--algo", algo, "--json",
    ];
    args.extend_from_slice(extra);
    let (code, out, err) = nuce(&args);
    assert_eq!(code, 0, "{algo}: {err}");
    serde_json::from_str(&out).expect("valid JSON")
}

/// Checks keys and that the parts tile the array, cell by cell.
fn check_tiling(v: &Value, rows: usize, cols: usize, speeds: &[f64]) {
    for key in [
        "algorithm",
        "rows",
        "cols",
        "acost",
        "bcost",
        "internal_edges",
        "latency_cost",
        "predicted_time",
        "imbalance",
        "lower_bound",
        "parts",
    ] {
        assert!(v.get(key).is_some(), "missing key {key}");
    }
    assert_eq!(v["rows"], rows);
    assert_eq!(v["cols"], cols);
    let parts = v["parts"].as_array().unwrap();
    assert_eq!(parts.len(), speeds.len());
    let mut owner = vec![usize::MAX; rows * cols];
    for (i, p) in parts.iter().enumerate() {
        assert_eq!(p["part"], i, "input order");
        assert_eq!(p["speed"].as_f64().unwrap(), speeds[i]);
        let g = |k: &str| p[k].as_u64().unwrap() as usize;
        for r in g("row")..g("row") + g("rows") {
            for c in g("col")..g("col") + g("cols") {
                assert!(r < rows && c < cols);
                assert_eq!(owner[r * cols + c], usize::MAX, "cell ({r},{c}) twice");
                owner[r * cols + c] = i;
            }
        }
    }
    assert!(owner.iter().all(|&o| o != usize::MAX), "uncovered cell");
}

#[test]
fn every_algorithm_tiles_in_input_order() {
    let speeds = [0.3, 0.05, 0.2, 0.1, 0.08, 0.12, 0.05, 0.1];
    let s = "0.3,0.05,0.2,0.1,0.08,0.12,0.05,0.1";
    for algo in ["column", "kl", "slices", "rb2", "best"] {
        let v = array_json(37, 53, s, algo, &[]);
        check_tiling(&v, 37, 53, &speeds);
    }
    let v = array_json(37, 53, s, "hier", &["--hosts", "0,0,0,0,1,1,2,2"]);
    check_tiling(&v, 37, 53, &speeds);
    assert_eq!(v["algorithm"], "hier");
}

#[test]
fn best_is_cheapest_and_latency_is_reported() {
    let s = "1,2,3,4,5,6,7";
    let best = array_json(60, 90, s, "best", &[]);
    for algo in ["column", "kl", "slices", "rb2"] {
        let v = array_json(60, 90, s, algo, &[]);
        let time = |v: &Value| v["predicted_time"].as_f64().unwrap();
        assert!(time(&best) <= time(&v), "{algo}");
    }
    let v = array_json(60, 90, s, "column", &["--latency", "10"]);
    let expect = v["acost"].as_f64().unwrap() + 10.0 * v["internal_edges"].as_f64().unwrap();
    assert!((v["latency_cost"].as_f64().unwrap() - expect).abs() < 1e-9);
}

#[test]
fn table_and_svg_output() {
    let svg = std::env::temp_dir().join(format!("nuce_cli_array_{}.svg", std::process::id()));
    let svg_s = svg.to_string_lossy().into_owned();
    let (code, out, err) = nuce(&[
        "plan", "array", "--rows", "20", "--cols", "30", "--speeds", "1,2,3", "--algo", "column",
        "--svg", &svg_s,
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("acost"));
    let text = std::fs::read_to_string(&svg).unwrap();
    assert!(text.starts_with("<svg"));
    assert!(text.matches("<rect").count() >= 3);
    assert!(text.contains("Acost"));
    let _ = std::fs::remove_file(&svg);
}

#[test]
fn bad_input_exits_2() {
    for args in [
        &[
            "plan", "array", "--rows", "4", "--cols", "4", "--speeds", "1,0",
        ][..],
        &[
            "plan", "array", "--rows", "4", "--cols", "4", "--speeds", "1,x",
        ],
        &[
            "plan", "array", "--rows", "4", "--cols", "4", "--speeds", "1,-1",
        ],
        &[
            "plan", "array", "--rows", "4", "--cols", "4", "--speeds", "1", "--algo", "nope",
        ],
        &[
            "plan", "array", "--rows", "0", "--cols", "4", "--speeds", "1",
        ],
        &[
            "plan",
            "array",
            "--rows",
            "4",
            "--cols",
            "4",
            "--speeds",
            "1",
            "--latency",
            "-3",
        ],
        &[
            "plan", "array", "--rows", "4", "--cols", "4", "--speeds", "1,1", "--algo", "hier",
        ],
        &[
            "plan",
            "distribute",
            "--chunks",
            "4",
            "--cycle-times",
            "1,nan",
        ],
        &[
            "plan",
            "distribute",
            "--chunks",
            "4",
            "--cycle-times",
            "1",
            "--mode",
            "x",
        ],
    ] {
        let (code, _, err) = nuce(args);
        assert_eq!(code, 2, "{args:?}");
        assert!(err.contains("error"), "{args:?}: {err}");
    }
    let (_, _, err) = nuce(&[
        "plan", "array", "--rows", "4", "--cols", "4", "--speeds", "1", "--algo", "nope",
    ]);
    assert!(err.contains("column"), "lists known names: {err}");
}

#[test]
fn distribute_modes() {
    let run = |mode: &str| -> Value {
        let (code, out, err) = nuce(&[
            "plan",
            "distribute",
            "--chunks",
            "10",
            "--cycle-times",
            "3,5,8",
            "--mode",
            mode,
            "--json",
        ]);
        assert_eq!(code, 0, "{err}");
        serde_json::from_str(&out).unwrap()
    };
    let st = run("static");
    assert_eq!(st["counts"], serde_json::json!([5, 3, 2]));
    assert_eq!(st["makespan"].as_f64(), Some(16.0));
    let inc = run("incremental");
    // Figure 8's selected processors, 0-based.
    assert_eq!(
        inc["sequence"],
        serde_json::json!([0, 1, 0, 2, 0, 1, 0, 0, 1, 2])
    );
    let pan = run("panel");
    assert_eq!(
        pan["owners"],
        serde_json::json!([0, 0, 0, 0, 0, 1, 1, 1, 2, 2])
    );
    let lu = run("lu");
    assert_eq!(
        lu["owners"],
        serde_json::json!([2, 1, 0, 0, 1, 0, 2, 0, 1, 0])
    );
}

/// `nuce measure` refuses sample counts it cannot hold, before allocating
/// anything, with exit code 2 and the bound in the message (the measure
/// subcommand exists only with the default `measure` feature).
#[cfg(feature = "measure")]
#[test]
fn measure_refuses_absurd_sample_counts() {
    for (opt, value) in [
        ("--repeats", "1000000000000"),
        ("--repeats", "0"),
        ("--warmup", "1000000000000"),
        ("--repeats", "x"),
    ] {
        let (code, _, err) = nuce(&["measure", opt, value]);
        assert_eq!(code, 2, "{opt} {value}: {err}");
        assert!(err.contains(opt), "{opt} {value}: {err}");
    }
}

/// `nuce measure --sweep` prints one line per block size (the sizes given,
/// as square-ish blocks), writes the SVG plot, and refuses absurd sizes
/// with exit code 2 and the bound in the message.
#[cfg(feature = "measure")]
#[test]
fn measure_sweep_prints_every_size_and_refuses_absurd_ones() {
    let dir = std::env::temp_dir().join(format!("nuce-sweep-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let svg = dir.join("sweep.svg");
    let quick = [
        "measure",
        "--sweep",
        "--repeats",
        "2",
        "--warmup",
        "0",
        "--min-ms",
        "1",
    ];
    let mut args = quick.to_vec();
    args.extend_from_slice(&["--sizes", "256,4096,10000", "--svg", svg.to_str().unwrap()]);
    let (code, out, err) = nuce(&args);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("caches (hwloc): L1"), "{out}");
    let rows: Vec<Vec<&str>> = out
        .lines()
        .map(|l| l.split_whitespace().collect::<Vec<_>>())
        .filter(|w| w.first().is_some_and(|c| c.parse::<usize>().is_ok()))
        .collect();
    let blocks: Vec<(&str, &str)> = rows.iter().map(|w| (w[0], w[1])).collect();
    assert_eq!(
        blocks,
        [("256", "16x16"), ("4096", "64x64"), ("10000", "100x100")],
        "{out}"
    );
    for w in &rows {
        let speed: f64 = w[4].parse().unwrap();
        assert!(speed.is_finite() && speed > 0.0, "{out}");
    }
    let plot = std::fs::read_to_string(&svg).unwrap();
    assert!(
        plot.starts_with("<svg") && plot.contains("block size"),
        "{plot}"
    );
    // JSON: the points with their measurements.
    let mut args = quick.to_vec();
    args.extend_from_slice(&["--sizes", "64", "--json"]);
    let (code, out, err) = nuce(&args);
    assert_eq!(code, 0, "{err}");
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["points"][0]["cells"], 64, "{out}");
    assert!(v["points"][0]["measurement"]["median"].as_f64().unwrap() > 0.0);
    std::fs::remove_dir_all(&dir).ok();
    // Absurd sizes: before any allocation, exit 2, the option named.
    let many = vec!["64"; 65].join(",");
    for sizes in ["0", "15", "67108865", "1000000000000", "x", many.as_str()] {
        let mut args = quick.to_vec();
        args.extend_from_slice(&["--sizes", sizes]);
        let (code, _, err) = nuce(&args);
        assert_eq!(code, 2, "--sizes {sizes}: {err}");
        assert!(
            err.contains("--sizes") || err.contains("1 to 64 block sizes"),
            "--sizes {sizes}: {err}"
        );
    }
    // --sizes without --sweep is a usage error.
    let (code, _, err) = nuce(&["measure", "--sizes", "256"]);
    assert_eq!(code, 2, "{err}");
}
