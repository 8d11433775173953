//! Hostile input for every `nuce plan` subcommand (issue 12): extreme
//! numbers (0, negatives, NaN, inf, 1e308, 2^64 − 1, empty lists, 10 000
//! speeds) under a time bound and a memory bound. Every run must end with
//! status 0 or 2 — never a panic (101) or a signal (an allocation failure
//! under the memory limit aborts) — within [`TIME_LIMIT`], a status 2 must
//! come with a message, and `--json` output must hold no `null`. Then one
//! regression test per case found in issue 12, each failing on the code
//! before the fix. RELIABILITY.md (rows 29–40) lists the figures.

use std::io::Read;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

/// Wall-time bound of one run (generous: 2 cores shared with other jobs).
const TIME_LIMIT: Duration = Duration::from_secs(20);

/// Address-space bound of one run, KiB (`ulimit -v`): 1 GiB. The cases of
/// issue 12 grew to 7–14 GB.
const MEMORY_KB: u64 = 1 << 20;

/// What one bounded run produced.
struct Outcome {
    code: Option<i32>,
    stdout: String,
    stderr: String,
    elapsed: Duration,
}

/// Runs `nuce args…` under `ulimit -v` and a wall-time limit (killed past it).
fn run(args: &[&str]) -> Outcome {
    let start = Instant::now();
    let mut child = Command::new("sh")
        .arg("-c")
        .arg(format!("ulimit -v {MEMORY_KB} && exec \"$0\" \"$@\""))
        .arg(env!("CARGO_BIN_EXE_nuce"))
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run nuce under sh");
    let reader = |mut r: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut s = Vec::new();
            let _ = r.read_to_end(&mut s);
            String::from_utf8_lossy(&s).into_owned()
        })
    };
    let out = reader(Box::new(child.stdout.take().expect("stdout")));
    let err = reader(Box::new(child.stderr.take().expect("stderr")));
    let code = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break status.code();
        }
        if start.elapsed() > TIME_LIMIT {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    Outcome {
        code,
        stdout: out.join().expect("stdout reader"),
        stderr: err.join().expect("stderr reader"),
        elapsed: start.elapsed(),
    }
}

/// The arguments, long ones shortened, for failure messages.
fn shown(args: &[&str]) -> String {
    args.iter()
        .map(|a| {
            if a.len() > 40 {
                format!("{}…({} chars)", &a[..20], a.len())
            } else {
                a.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// True when a JSON value holds a `null` anywhere.
fn has_null(v: &Value) -> bool {
    match v {
        Value::Null => true,
        Value::Array(a) => a.iter().any(has_null),
        Value::Object(o) => o.values().any(has_null),
        _ => false,
    }
}

/// Runs one case and checks the contract of the module docs.
fn check(args: &[&str]) -> Outcome {
    let o = run(args);
    let what = shown(args);
    assert!(
        o.elapsed < TIME_LIMIT && o.code.is_some(),
        "{what}: no clean end within {TIME_LIMIT:?} and {MEMORY_KB} KiB (status {:?}, {:?})\n{}",
        o.code,
        o.elapsed,
        o.stderr
    );
    assert!(
        matches!(o.code, Some(0 | 2)),
        "{what}: status {:?} (101: a panic)\n{}",
        o.code,
        o.stderr
    );
    assert!(!o.stderr.contains("panicked"), "{what}\n{}", o.stderr);
    if o.code == Some(2) {
        assert!(
            o.stderr.contains("error"),
            "{what}: no message\n{}",
            o.stderr
        );
    } else if args.contains(&"--json") {
        let v: Value = serde_json::from_str(&o.stdout)
            .unwrap_or_else(|e| panic!("{what}: bad JSON: {e}\n{}", o.stdout));
        assert!(!has_null(&v), "{what}: null in\n{}", o.stdout);
        if let Err(e) = array_plan_tiles(&v) {
            panic!("{what}: {e}\n{}", o.stdout);
        }
    }
    if o.code == Some(0) {
        // An accepted run never reports a NaN (JSON has none: serde writes
        // `null`, refused above).
        assert!(!o.stdout.contains("NaN"), "{what}: NaN in\n{}", o.stdout);
    }
    o
}

/// For a `plan array --json` answer (top-level `rows`, `cols`, `parts` of
/// `row`, `col`, `rows`, `cols`, `area`): every cell is in exactly one part,
/// checked cell by cell up to 4·10⁶ cells, and each `area` is `rows · cols`.
/// Other answers pass.
fn array_plan_tiles(v: &Value) -> Result<(), String> {
    let (Some(rows), Some(cols), Some(parts)) = (
        v["rows"].as_u64(),
        v["cols"].as_u64(),
        v["parts"].as_array(),
    ) else {
        return Ok(());
    };
    let field = |p: &Value, k: &str| {
        p[k].as_u64()
            .ok_or_else(|| format!("part without an integer {k}: {p}"))
    };
    let mut rects = Vec::new();
    for p in parts {
        let (r, c, h, w) = (
            field(p, "row")?,
            field(p, "col")?,
            field(p, "rows")?,
            field(p, "cols")?,
        );
        if field(p, "area")? != h * w {
            return Err(format!("area of {p} is not rows · cols"));
        }
        if r + h > rows || c + w > cols {
            return Err(format!("{p} leaves the {rows}x{cols} array"));
        }
        rects.push((r, c, h, w));
    }
    let total: u64 = rects.iter().map(|&(_, _, h, w)| h * w).sum();
    if total != rows * cols {
        return Err(format!("parts cover {total} of {} cells", rows * cols));
    }
    if rows * cols > 4_000_000 {
        return Ok(());
    }
    let mut owner = vec![false; (rows * cols) as usize];
    for &(r, c, h, w) in &rects {
        for i in r..r + h {
            for j in c..c + w {
                let cell = &mut owner[(i * cols + j) as usize];
                if *cell {
                    return Err(format!("cell ({i}, {j}) in two parts"));
                }
                *cell = true;
            }
        }
    }
    Ok(())
}

/// `plan array` on 50 x 40 cells for speeds 1,2,3 with this `--latency`.
fn latency_case(latency: &str) -> Vec<&str> {
    vec![
        "plan",
        "array",
        "--rows",
        "50",
        "--cols",
        "40",
        "--speeds",
        "1,2,3",
        "--latency",
        latency,
        "--json",
    ]
}

/// The extreme numbers of the fuzz.
const NUMBERS: &[&str] = &[
    "0",
    "-1",
    "nan",
    "inf",
    "-inf",
    "1e308",
    "1e-308",
    "18446744073709551615",
    "",
    "abc",
];

/// Speed and cycle-time lists: empty, bad entries, extremes, 10 000 values.
fn lists() -> Vec<String> {
    let mut l: Vec<String> = [
        "",
        "1,2,3",
        "0",
        "-1,2",
        "nan",
        "inf,1",
        "1e308,1e308",
        "1e-308,1",
        "1,1e308",
        "1,,2",
        "5e-324,1",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    l.push(vec!["1"; 10_000].join(","));
    l.push(
        (0..10_000)
            .map(|i| format!("{}", 1 + i % 7))
            .collect::<Vec<_>>()
            .join(","),
    );
    l
}

/// A scratch directory of this test process.
fn scratch() -> PathBuf {
    let dir = std::env::temp_dir().join(format!("nuce-fuzz-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("scratch dir");
    dir
}

/// A `rows × cols` grid graph as METIS text, and coordinates in which
/// vertex `k` sits at the place of `perm[k]` (identity: the grid itself).
fn grid_files(rows: usize, cols: usize, shuffle: bool) -> (String, String) {
    let n = rows * cols;
    let mut graph = format!("{n} {}\n", rows * (cols - 1) + cols * (rows - 1));
    for r in 0..rows {
        for c in 0..cols {
            let mut nb = Vec::new();
            if r > 0 {
                nb.push((r - 1) * cols + c + 1);
            }
            if r + 1 < rows {
                nb.push((r + 1) * cols + c + 1);
            }
            if c > 0 {
                nb.push(r * cols + c);
            }
            if c + 1 < cols {
                nb.push(r * cols + c + 2);
            }
            let line: Vec<String> = nb.iter().map(|x| x.to_string()).collect();
            graph += &(line.join(" ") + "\n");
        }
    }
    let mut perm: Vec<usize> = (0..n).collect();
    if shuffle {
        let mut state = 12345u64;
        for i in (1..n).rev() {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            perm.swap(i, (state >> 33) as usize % (i + 1));
        }
    }
    let coords: String = perm
        .iter()
        .map(|&k| format!("{} {}\n", k % cols, k / cols))
        .collect();
    (graph, coords)
}

/// Writes the grid files into the scratch directory; returns their paths.
fn write_grid(name: &str, shuffle: bool) -> (String, String) {
    let (g, c) = grid_files(60, 70, shuffle);
    let dir = scratch();
    let (gp, cp) = (
        dir.join(format!("{name}.graph")),
        dir.join(format!("{name}.xyz")),
    );
    std::fs::write(&gp, g).unwrap();
    std::fs::write(&cp, c).unwrap();
    (
        gp.to_string_lossy().into_owned(),
        cp.to_string_lossy().into_owned(),
    )
}

#[test]
fn fuzz_array() {
    let lists = lists();
    let algos = [
        "best", "column", "xy", "xy2", "tile", "kl", "rb", "rb2", "rb3", "slices",
    ];
    let shapes = [
        ("1000", "1000"),
        ("18446744073709551615", "1"),
        ("1", "18446744073709551615"),
        ("4294967296", "4294967296"),
        ("9007199254740992", "1"),
        ("0", "5"),
        ("-1", "3"),
        ("", "3"),
    ];
    for (k, algo) in algos.iter().enumerate() {
        for (i, (r, c)) in shapes.iter().enumerate() {
            let s = &lists[(i + k) % lists.len()];
            let mut args = vec![
                "plan", "array", "--rows", r, "--cols", c, "--speeds", s, "--algo", algo,
            ];
            if (i + k) % 2 == 0 {
                args.push("--json");
            }
            check(&args);
        }
        // 10 000 speeds on every algorithm (XY and TILE fall back).
        check(&[
            "plan", "array", "--rows", "300", "--cols", "200", "--speeds", &lists[12], "--algo",
            algo, "--json",
        ]);
    }
    for lat in NUMBERS {
        check(&latency_case(lat));
    }
    check(&[
        "plan",
        "array",
        "--algo",
        "hier",
        "--rows",
        "60",
        "--cols",
        "30",
        "--speeds",
        "1,2",
        "--hosts",
        "0,18446744073709551615",
    ]);
}

#[test]
fn fuzz_grid3() {
    let lists = lists();
    let algos = nuce_plan::array3d::NAMES3;
    let shapes = [
        ("100", "100", "100"),
        ("18446744073709551615", "1", "1"),
        ("4294967296", "4294967296", "2"),
        ("9007199254740992", "1", "1"),
        ("1", "1", "9007199254740992"),
        ("0", "5", "5"),
        ("-1", "3", "3"),
        ("", "3", "3"),
    ];
    for (k, algo) in algos.iter().enumerate() {
        for (i, (x, y, z)) in shapes.iter().enumerate() {
            let s = &lists[(i + k) % lists.len()];
            let mut args = vec![
                "plan", "grid3", "--nx", x, "--ny", y, "--nz", z, "--speeds", s, "--algo", algo,
            ];
            if (i + k) % 2 == 0 {
                args.push("--json");
            }
            check(&args);
        }
        // 10 000 speeds on every algorithm, both stencils.
        for stencil in ["7", "27"] {
            check(&[
                "plan",
                "grid3",
                "--nx",
                "300",
                "--ny",
                "200",
                "--nz",
                "100",
                "--speeds",
                &lists[12],
                "--algo",
                algo,
                "--stencil",
                stencil,
                "--json",
            ]);
        }
    }
    for n in NUMBERS {
        check(&[
            "plan",
            "grid3",
            "--nx",
            "9",
            "--ny",
            "9",
            "--nz",
            "9",
            "--speeds",
            "1,2",
            "--ghost",
            n,
            "--stencil",
            n,
            "--json",
        ]);
    }
}

#[test]
fn fuzz_distribute() {
    let lists = lists();
    let modes = ["static", "incremental", "lu", "panel"];
    let chunks = ["0", "1", "1000", "4194305", "18446744073709551615", "-1"];
    let periods = [
        "0",
        "1",
        "1000000000",
        "1000000000000",
        "18446744073709551615",
    ];
    let mut k = 0;
    for mode in modes {
        for b in chunks {
            for p in periods {
                k += 1;
                let t = &lists[k % lists.len()];
                check(&[
                    "plan",
                    "distribute",
                    "--chunks",
                    b,
                    "--cycle-times",
                    t,
                    "--mode",
                    mode,
                    "--period",
                    p,
                    "--json",
                ]);
            }
        }
    }
    for rows in ["0", "1", "4096", "18446744073709551615"] {
        check(&[
            "plan",
            "distribute",
            "--chunks",
            "100000",
            "--cycle-times",
            "1,2",
            "--mode",
            "panel",
            "--rows",
            rows,
        ]);
    }
}

#[test]
fn fuzz_graph() {
    let lists = lists();
    let (g, c) = write_grid("fuzz", false);
    for (k, s) in lists.iter().enumerate() {
        let algo = ["best", "rcb", "hci", "rsb", "rsbi"][k % 5];
        check(&[
            "plan", "graph", "--graph", &g, "--coords", &c, "--speeds", s, "--algo", algo, "--json",
        ]);
    }
    for tol in NUMBERS {
        check(&[
            "plan",
            "graph",
            "--graph",
            &g,
            "--speeds",
            "1,2",
            "--algo",
            "rsb",
            "--refine",
            "--tolerance",
            tol,
        ]);
    }
    let dir = scratch();
    for (name, text) in [
        ("empty.graph", String::new()),
        (
            "huge.graph",
            "18446744073709551615 18446744073709551615\n".into(),
        ),
        ("neg.graph", "-3 1\n".into()),
    ] {
        let p = dir.join(name);
        std::fs::write(&p, text).unwrap();
        check(&[
            "plan",
            "graph",
            "--graph",
            &p.to_string_lossy(),
            "--speeds",
            "1",
        ]);
    }
    check(&[
        "plan",
        "graph",
        "--graph",
        "/nonexistent/x.graph",
        "--speeds",
        "1",
    ]);
}

#[test]
fn fuzz_tasks() {
    let lists = lists();
    let mut k = 0;
    for n in NUMBERS {
        for tcom in ["0", "1", "1e308", "-1"] {
            for extra in [&[][..], &["--tcom-return", "1"]] {
                for goal in ["--deadline", "--tasks"] {
                    k += 1;
                    // The 10 000-worker lists only without communication
                    // (below): with it each run spends the work limit.
                    let t = &lists[k % 11];
                    let mut args = vec![
                        "plan",
                        "tasks",
                        "--cycle-times",
                        t,
                        goal,
                        n,
                        "--tcom",
                        tcom,
                        "--json",
                    ];
                    args.extend_from_slice(extra);
                    check(&args);
                }
            }
        }
    }
    for (goal, n) in [("--deadline", "1e6"), ("--tasks", "1000000")] {
        for t in &lists[11..] {
            check(&["plan", "tasks", "--cycle-times", t, goal, n, "--json"]);
        }
    }
    // One 3 000-worker platform with messages as costly as tasks: the
    // work limit ends it.
    let big: String = (0..3000)
        .map(|i| format!("{}", 1.0 + (i % 13) as f64 * 0.37))
        .collect::<Vec<_>>()
        .join(",");
    check(&[
        "plan",
        "tasks",
        "--cycle-times",
        &big,
        "--deadline",
        "1e6",
        "--tcom",
        "1",
    ]);
}

#[test]
fn fuzz_divisible() {
    let costs = [
        "1,1",
        "0,0",
        "1e308,1e308",
        "1e10,1e10",
        "-1,1",
        "nan,1",
        "inf,1",
        "1e-308,1e308",
        "1",
        "",
    ];
    let workers = [
        "auto",
        "0",
        "1",
        "5",
        "501",
        "10000",
        "18446744073709551615",
        "x",
    ];
    for (i, c) in costs.iter().enumerate() {
        for (j, w) in workers.iter().enumerate() {
            let units = ["1000", "18446744073709551615", "0"][(i + j) % 3];
            check(&[
                "plan",
                "divisible",
                "--input",
                c,
                "--compute",
                c,
                "--output",
                c,
                "--workers",
                w,
                "--units",
                units,
                "--json",
            ]);
        }
    }
    for mw in ["0", "129", "18446744073709551615"] {
        check(&[
            "plan",
            "divisible",
            "--input",
            "0,1",
            "--compute",
            "0,1000",
            "--output",
            "0,1",
            "--max-workers",
            mw,
        ]);
    }
}

#[test]
fn fuzz_pack() {
    let many = vec!["3x4"; 10_001].join(",");
    let grids = [
        "30x20,15x40",
        "0x0",
        "18446744073709551615x1",
        "1x18446744073709551615",
        "",
        "-1x2",
        "1e3x2",
        &many,
    ];
    let meshes = [
        "4x4",
        "0x0",
        "18446744073709551615x18446744073709551615",
        "4096x4096",
        "1x1",
    ];
    for g in grids {
        for m in meshes {
            check(&["plan", "pack", "--grids", g, "--mesh", m, "--json"]);
        }
        for d in ["0", "3", "25", "64", "4294967295"] {
            check(&["plan", "pack", "--grids", g, "--cube", d]);
        }
    }
}

// ---- Regression tests: one per case found in issue 12. ----

/// JSON of a run that must succeed.
fn json(args: &[&str]) -> Value {
    let o = check(args);
    assert_eq!(o.code, Some(0), "{}: {}", shown(args), o.stderr);
    serde_json::from_str(&o.stdout).expect("JSON")
}

/// Status of a run that must fail cleanly (2) within `secs`.
fn refused(args: &[&str], secs: f64) -> String {
    let o = check(args);
    assert_eq!(o.code, Some(2), "{}: {}", shown(args), o.stdout);
    assert!(
        o.elapsed.as_secs_f64() < secs,
        "{}: {:?}",
        shown(args),
        o.elapsed
    );
    o.stderr
}

#[test]
fn best_array_is_balanced_on_one_row() {
    // Before: best:xy, all 1000 cells on one part, imbalance 3.0.
    let v = json(&[
        "plan", "array", "--rows", "1", "--cols", "1000", "--speeds", "1,1,1,1", "--json",
    ]);
    assert_eq!(v["imbalance"].as_f64(), Some(0.0), "{v}");
    let best = v["predicted_time"].as_f64().unwrap();
    for algo in [
        "column", "xy", "xy2", "tile", "kl", "rb", "rb2", "rb3", "slices",
    ] {
        let w = json(&[
            "plan", "array", "--rows", "1", "--cols", "1000", "--speeds", "1,1,1,1", "--algo",
            algo, "--json",
        ]);
        assert!(best <= w["predicted_time"].as_f64().unwrap(), "{algo}");
    }
}

#[test]
fn best_graph_keeps_the_cut_when_no_candidate_meets_the_tolerance() {
    // Before: best:rcb, cut 5602, where rsb cuts 131 at the same imbalance.
    let (g, c) = write_grid("shuffled", true);
    let args = |algo: &'static str| {
        vec![
            "plan".to_string(),
            "graph".into(),
            "--graph".into(),
            g.clone(),
            "--coords".into(),
            c.clone(),
            "--speeds".into(),
            "1,2,3,5".into(),
            "--algo".into(),
            algo.into(),
            "--refine".into(),
            "--tolerance".into(),
            "0".into(),
            "--json".into(),
        ]
    };
    let get = |algo: &'static str| {
        let a = args(algo);
        json(&a.iter().map(String::as_str).collect::<Vec<_>>())
    };
    let best = get("best");
    assert_eq!(best["tolerance_met"], Value::Bool(false));
    // No candidate of best (multilevel, rcb, rsbkl, rsb; each refined) is
    // better on the documented rule when none meets the tolerance: least
    // imbalance, then least cut. (The former 1e300 penalty ignored the cut
    // entirely; issue 20: rsb, then no candidate, cut 147 where best
    // returned 2666 at the same imbalance.)
    let key = |v: &Value| {
        (
            v["imbalance"].as_f64().unwrap(),
            v["edge_cut"].as_f64().unwrap(),
        )
    };
    let (bi, bc) = key(&best);
    for algo in ["multilevel", "rcb", "rsbkl", "rsb"] {
        let (ci, cc) = key(&get(algo));
        let better = ci < bi - 1e-9 || ((ci - bi).abs() <= 1e-9 && cc < bc);
        assert!(
            !better,
            "{algo}: imbalance {ci} cut {cc} beats best's {bi} {bc}"
        );
    }
}

#[test]
fn huge_arrays_and_enumerations_end_at_once() {
    // Before: over 60 s; TILE 40 parts over 40 s; XY 60 parts 14 s.
    refused(
        &[
            "plan",
            "array",
            "--rows",
            "18446744073709551615",
            "--cols",
            "1",
            "--speeds",
            "1,2,3",
        ],
        5.0,
    );
    let s40: String = (0..40)
        .map(|i| format!("{}", 1.0 + (i % 7) as f64 * 0.37))
        .collect::<Vec<_>>()
        .join(",");
    let s60: String = (0..60)
        .map(|i| format!("{}", 1.0 + (i % 7) as f64 * 0.37))
        .collect::<Vec<_>>()
        .join(",");
    for (s, algo) in [(&s40, "tile"), (&s60, "xy")] {
        let o = check(&[
            "plan", "array", "--rows", "1000", "--cols", "1000", "--speeds", s, "--algo", algo,
        ]);
        assert_eq!(o.code, Some(0));
        assert!(o.elapsed.as_secs_f64() < 10.0, "{algo}: {:?}", o.elapsed);
    }
}

#[test]
fn tasks_meet_the_deadline_and_refuse_capped_counts() {
    // Before: makespan 1e9 + 1 > deadline; 1e13 silently capped at 2^40.
    let v = json(&[
        "plan",
        "tasks",
        "--cycle-times",
        "1,3",
        "--deadline",
        "1e9",
        "--json",
    ]);
    assert!(v["makespan"].as_f64().unwrap() <= 1e9, "{v}");
    let e = refused(
        &[
            "plan",
            "tasks",
            "--cycle-times",
            "1,3",
            "--deadline",
            "1e13",
        ],
        5.0,
    );
    assert!(e.contains("2^40"), "{e}");
}

#[test]
fn divisible_costs_scale_and_workers_are_bounded() {
    // Before: 1e10 "LP infeasible", 1e308 a panic (101), 10 000 workers 27 s / 7 GB.
    let v = json(&[
        "plan",
        "divisible",
        "--input",
        "1e10,1e10",
        "--compute",
        "1e10,1e10",
        "--output",
        "1e10,1e10",
        "--json",
    ]);
    assert!(v["makespan"].as_f64().unwrap() > 1e10, "{v}");
    for args in [
        &[
            "plan",
            "divisible",
            "--input",
            "1e308,1e308",
            "--compute",
            "1e308,1e308",
            "--output",
            "1e308,1e308",
        ][..],
        &[
            "plan",
            "divisible",
            "--input",
            "1,1",
            "--compute",
            "1,1",
            "--output",
            "1,1",
            "--workers",
            "10000",
        ],
    ] {
        refused(args, 5.0);
    }
}

#[test]
fn panel_periods_are_bounded() {
    // Before: 1e9 took 22 s and 7.8 GB, 1e12 aborted, 2^64 - 1 panicked.
    let panel = |period: &'static str| {
        [
            "plan",
            "distribute",
            "--chunks",
            "10",
            "--cycle-times",
            "1,2,3",
            "--mode",
            "panel",
            "--period",
            period,
        ]
    };
    for p in ["1000000000", "1000000000000"] {
        let o = check(&panel(p));
        assert_eq!(o.code, Some(0));
        assert!(o.elapsed.as_secs_f64() < 5.0, "{p}: {:?}", o.elapsed);
    }
    refused(&panel("18446744073709551615"), 5.0);
}

#[test]
fn non_finite_results_are_errors_not_null() {
    // Before: `"makespan": null` and exit 0.
    let e = refused(
        &[
            "plan",
            "distribute",
            "--chunks",
            "4",
            "--cycle-times",
            "1e308,1e308",
            "--json",
        ],
        5.0,
    );
    assert!(e.contains("overflow"), "{e}");
    refused(
        &[
            "plan",
            "tasks",
            "--cycle-times",
            "1e308,1e308",
            "--tasks",
            "3",
            "--json",
        ],
        5.0,
    );
    refused(&latency_case("1e308"), 5.0);
}

#[test]
fn write_failures_are_reported_and_closed_pipes_are_quiet() {
    // Before: --svg /dev/full exited 0; `| head -1` panicked.
    for args in [
        &[
            "plan",
            "array",
            "--rows",
            "10",
            "--cols",
            "10",
            "--speeds",
            "1,2",
            "--svg",
            "/dev/full",
        ][..],
        &[
            "plan",
            "pack",
            "--grids",
            "3x4,5x6",
            "--mesh",
            "4x4",
            "--svg",
            "/dev/full",
        ],
    ] {
        let e = refused(args, 5.0);
        assert!(e.contains("/dev/full"), "{e}");
    }
    let out = Command::new("sh")
        .arg("-c")
        .arg("exec \"$0\" plan array --rows 10 --cols 10 --speeds 1,2 > /dev/full")
        .arg(env!("CARGO_BIN_EXE_nuce"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("stdout"));
    // A reader that closes the pipe at once: the output is far larger
    // than a pipe buffer, in text and in JSON.
    let many = vec!["1"; 5000].join(",");
    for json in [false, true] {
        let mut args = vec![
            "plan", "array", "--rows", "1000", "--cols", "10", "--speeds", &many,
        ];
        if json {
            args.push("--json");
        }
        let mut child = Command::new(env!("CARGO_BIN_EXE_nuce"))
            .args(&args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        drop(child.stdout.take());
        let out = child.wait_with_output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "json {json}: {err}");
        assert!(err.is_empty(), "json {json}: {err}");
    }
}

#[test]
fn star_meshes_are_refused_at_once() {
    // Before: 13 000 triangles around one edge (417 KB) grew to gigabytes.
    let mut text =
        String::from("MeshVersionFormatted 1\nDimension 2\nVertices\n13002\n0 0 0\n1 0 0\n");
    for i in 0..13_000 {
        let a = i as f64 / 13_000.0 * std::f64::consts::TAU;
        text += &format!("{} {} 0\n", 2.0 * a.cos(), 2.0 * a.sin() + 0.5);
    }
    text += "Triangles\n13000\n";
    for i in 0..13_000 {
        text += &format!("1 2 {} 0\n", 3 + i);
    }
    text += "End\n";
    let path = scratch().join("book.mesh");
    std::fs::write(&path, text).unwrap();
    let e = refused(
        &[
            "plan",
            "graph",
            "--mesh",
            &path.to_string_lossy(),
            "--dual",
            "--speeds",
            "1,2",
        ],
        10.0,
    );
    assert!(e.contains("dual graph"), "{e}");
    let _ = std::fs::remove_file(&path);
}
