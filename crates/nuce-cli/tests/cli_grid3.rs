//! Integration tests of `nuce plan grid3`: run the binary, parse its JSON,
//! check the documented keys (docs/cli.md), the tiling cell by cell, the
//! input order, the neighbour lists and the exit codes.

mod common;

use common::nuce;
use serde_json::Value;

fn grid3_json(shape: [usize; 3], speeds: &str, extra: &[&str]) -> Value {
    let [x, y, z] = shape.map(|v| v.to_string());
    let mut args = vec![
        "plan", "grid3", "--nx", &x, "--ny", &y, "--nz", &z, "--speeds", speeds, "--json",
    ];
    args.extend_from_slice(extra);
    let (code, out, err) = nuce(&args);
    assert_eq!(code, 0, "{extra:?}: {err}");
    serde_json::from_str(&out).expect("valid JSON")
}

/// Checks the keys and that the boxes tile the grid, cell by cell.
fn check_tiling(v: &Value, shape: [usize; 3], speeds: &[f64]) {
    for key in [
        "algorithm",
        "nx",
        "ny",
        "nz",
        "stencil",
        "ghost",
        "internal_surface",
        "lower_bound",
        "surface_ratio",
        "predicted_time",
        "imbalance",
        "parts",
    ] {
        assert!(v.get(key).is_some(), "missing key {key}");
    }
    let [nx, ny, nz] = shape;
    let parts = v["parts"].as_array().unwrap();
    assert_eq!(parts.len(), speeds.len());
    let mut owner = vec![usize::MAX; nx * ny * nz];
    for (i, p) in parts.iter().enumerate() {
        assert_eq!(p["part"], i, "input order");
        assert_eq!(p["speed"].as_f64().unwrap(), speeds[i]);
        let g = |k: &str| p[k].as_u64().unwrap() as usize;
        assert_eq!(g("volume"), g("nx") * g("ny") * g("nz"));
        for a in g("x")..g("x") + g("nx") {
            for b in g("y")..g("y") + g("ny") {
                for c in g("z")..g("z") + g("nz") {
                    assert!(a < nx && b < ny && c < nz);
                    let cell = &mut owner[(a * ny + b) * nz + c];
                    assert_eq!(*cell, usize::MAX, "cell ({a},{b},{c}) twice");
                    *cell = i;
                }
            }
        }
    }
    assert!(owner.iter().all(|&o| o != usize::MAX), "uncovered cell");
    assert!(v["internal_surface"].as_f64().unwrap() >= v["lower_bound"].as_f64().unwrap());
}

#[test]
fn every_algorithm_tiles_in_input_order() {
    let speeds = [0.3, 0.05, 0.2, 0.1, 0.08, 0.12, 0.05, 0.1];
    let s = "0.3,0.05,0.2,0.1,0.08,0.12,0.05,0.1";
    for algo in ["column", "pencils", "rb", "rectilinear", "slabs", "best"] {
        for stencil in ["7", "27"] {
            let v = grid3_json([13, 9, 7], s, &["--algo", algo, "--stencil", stencil]);
            check_tiling(&v, [13, 9, 7], &speeds);
            assert_eq!(v["stencil"].as_u64().unwrap().to_string(), stencil);
        }
    }
    let v = grid3_json([6, 5, 4], "1,2,3", &["--algo", "guillotine"]);
    check_tiling(&v, [6, 5, 4], &[1.0, 2.0, 3.0]);
    let v = grid3_json([12, 8, 6], "1,1,1,1,2,2", &["--algo", "rectilinear"]);
    let r = &v["ranges"];
    let sum = |k: &str| {
        r[k].as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_u64().unwrap())
            .sum::<u64>()
    };
    assert_eq!((sum("lx"), sum("ly"), sum("lz")), (12, 8, 6));
}

#[test]
fn neighbours_of_octants() {
    // Eight equal parts of an 8x8x8 cube are octants: each touches the
    // seven others with the 27-point stencil, three with the 7-point one.
    let s = "1,1,1,1,1,1,1,1";
    for (stencil, n, halo) in [("7", 3, 48), ("27", 7, 61)] {
        let v = grid3_json([8, 8, 8], s, &["--algo", "rb", "--stencil", stencil]);
        assert_eq!(v["internal_surface"], 192);
        for p in v["parts"].as_array().unwrap() {
            assert_eq!(p["neighbours"].as_array().unwrap().len(), n);
            assert_eq!(p["halo"], halo);
        }
    }
}

#[test]
fn svg_and_errors() {
    let dir = std::env::temp_dir().join(format!("nuce_grid3_{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let svg = dir.join("g.svg");
    let svg_s = svg.to_str().unwrap();
    let (code, _, err) = nuce(&[
        "plan", "grid3", "--nx", "20", "--ny", "10", "--nz", "5", "--speeds", "1,2,3", "--svg",
        svg_s,
    ]);
    assert_eq!(code, 0, "{err}");
    let text = std::fs::read_to_string(&svg).unwrap();
    assert!(text.starts_with("<svg") && text.contains("<rect"));
    std::fs::remove_dir_all(&dir).unwrap();
    for bad in [
        vec!["--nx", "0", "--ny", "4", "--nz", "4", "--speeds", "1"],
        vec!["--nx", "4", "--ny", "4", "--nz", "4", "--speeds", "1,0"],
        vec!["--nx", "4", "--ny", "4", "--nz", "4", "--speeds", "1,nan"],
        vec!["--nx", "4", "--ny", "4", "--nz", "4", "--speeds", "1,-2"],
        vec![
            "--nx", "4", "--ny", "4", "--nz", "4", "--speeds", "1", "--algo", "nope",
        ],
        vec![
            "--nx",
            "4",
            "--ny",
            "4",
            "--nz",
            "4",
            "--speeds",
            "1",
            "--stencil",
            "9",
        ],
        vec![
            "--nx", "4", "--ny", "4", "--nz", "4", "--speeds", "1", "--ghost", "0",
        ],
        vec![
            "--nx",
            "99",
            "--ny",
            "99",
            "--nz",
            "99",
            "--speeds",
            "1",
            "--algo",
            "guillotine",
        ],
        vec![
            "--nx",
            "4294967296",
            "--ny",
            "4294967296",
            "--nz",
            "2",
            "--speeds",
            "1",
        ],
    ] {
        let mut args = vec!["plan", "grid3"];
        args.extend(bad.iter());
        let (code, out, err) = nuce(&args);
        assert_eq!(code, 2, "{bad:?}: {out}");
        assert!(err.contains("error"), "{bad:?}: {err}");
    }
}

/// `--speeds @FILE` (one number per line or comma/space separated, `#`
/// comments) plans exactly what the inline list plans; an unreadable, empty
/// or malformed file is an error naming the file.
#[test]
fn speeds_from_a_file() {
    let dir = std::env::temp_dir().join(format!("nuce-cli-speeds-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("speeds.txt");
    std::fs::write(&file, "# measured speeds\n1.5, 2\n3 # rank 2\n\n4 0.5\n").unwrap();
    let at = format!("@{}", file.display());
    let inline = grid3_json([6, 5, 4], "1.5,2,3,4,0.5", &["--algo", "rb"]);
    let from_file = grid3_json([6, 5, 4], &at, &["--algo", "rb"]);
    assert_eq!(inline, from_file);
    check_tiling(&from_file, [6, 5, 4], &[1.5, 2.0, 3.0, 4.0, 0.5]);

    let empty = dir.join("empty.txt");
    std::fs::write(&empty, "# nothing\n").unwrap();
    let bad = dir.join("bad.txt");
    std::fs::write(&bad, "1\n2\nx3\n").unwrap();
    let missing = dir.join("missing.txt");
    for (path, says) in [
        (&empty, "holds no numbers"),
        (&bad, "bad.txt:3"),
        (&missing, "cannot read list file"),
    ] {
        let at = format!("@{}", path.display());
        let (code, _, err) = nuce(&[
            "plan", "grid3", "--nx", "4", "--ny", "4", "--nz", "4", "--speeds", &at,
        ]);
        assert_eq!(code, 2, "{path:?}: {err}");
        assert!(err.contains(says), "{path:?}: {err}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
