//! `nuce plan pack` end to end: JSON keys and an independent check of the
//! placements and submeshes it prints.

use std::process::Command;

fn pack(args: &[&str]) -> (bool, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_nuce"))
        .args(["plan", "pack"])
        .args(args)
        .output()
        .expect("run nuce");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn json_output_is_a_valid_allocation() {
    let grids = [(30u64, 20u64), (15, 40), (10, 10), (25, 5), (60, 8)];
    let list: Vec<String> = grids.iter().map(|(w, h)| format!("{w}x{h}")).collect();
    let svg = std::env::temp_dir().join(format!("nuce-pack-{}.svg", std::process::id()));
    for algo in ["tp", "lp"] {
        for scaling in ["nonuniform", "uniform"] {
            let (ok, out, err) = pack(&[
                "--grids",
                &list.join(","),
                "--mesh",
                "16x8",
                "--algo",
                algo,
                "--scaling",
                scaling,
                "--json",
                "--svg",
                svg.to_str().unwrap(),
            ]);
            assert!(ok, "{err}");
            let v: serde_json::Value = serde_json::from_str(&out).unwrap();
            let (w, h) = (v["width"].as_u64().unwrap(), v["height"].as_u64().unwrap());
            let side = v["min_side"].as_u64().unwrap();
            let pl = v["placements"].as_array().unwrap();
            let sm = v["submeshes"].as_array().unwrap();
            assert_eq!((pl.len(), sm.len()), (grids.len(), grids.len()));
            // Placements: inside W x H, pairwise disjoint (grids raised to min_side).
            let boxes: Vec<(u64, u64, u64, u64)> = pl
                .iter()
                .zip(&grids)
                .map(|(p, &(gw, gh))| {
                    let (gw, gh) = (gw.max(side), gh.max(side));
                    let (ex, ey) = if p["rotated"].as_bool().unwrap() {
                        (gh, gw)
                    } else {
                        (gw, gh)
                    };
                    let (x, y) = (p["x"].as_u64().unwrap(), p["y"].as_u64().unwrap());
                    (x, y, x + ex, y + ey)
                })
                .collect();
            for (i, a) in boxes.iter().enumerate() {
                assert!(a.2 <= w && a.3 <= h);
                for b in &boxes[i + 1..] {
                    assert!(!(a.0 < b.2 && b.0 < a.2 && a.1 < b.3 && b.1 < a.3));
                }
            }
            // Submeshes: non-empty, inside 16 x 8, disjoint; utilization matches.
            let mut used = [false; 16 * 8];
            for s in sm {
                let g = |k: &str| s[k].as_u64().unwrap() as usize;
                assert!(g("rows") > 0 && g("cols") > 0);
                assert!(g("row") + g("rows") <= 8 && g("col") + g("cols") <= 16);
                for r in g("row")..g("row") + g("rows") {
                    for c in g("col")..g("col") + g("cols") {
                        assert!(!used[r * 16 + c]);
                        used[r * 16 + c] = true;
                    }
                }
            }
            let util = used.iter().filter(|&&u| u).count() as f64 / 128.0;
            assert!((v["utilization"].as_f64().unwrap() - util).abs() < 1e-12);
            let text = std::fs::read_to_string(&svg).unwrap();
            assert!(text.starts_with("<svg") && text.matches("<rect").count() > grids.len());
        }
    }
    let _ = std::fs::remove_file(svg);
}

#[test]
fn bad_input_is_reported_not_panicked() {
    for args in [
        &["--grids", "30x", "--mesh", "4x4"][..],
        &["--grids", "3x3", "--mesh", "0x4"],
        &["--grids", "3x3,0x2", "--mesh", "4x4"],
        &["--grids", "3x3", "--mesh", "4x4", "--algo", "zz"],
        &["--grids", "3x3,3x3,3x3,3x3,3x3", "--mesh", "2x2"],
    ] {
        let (ok, _, err) = pack(args);
        assert!(!ok);
        assert!(err.contains("nuce: error"), "{err}");
    }
}

#[test]
fn cube_output_lists_gray_code_nodes_of_each_submesh() {
    let (ok, out, err) = pack(&["--grids", "30x20,15x40,10x10,25x5", "--cube", "6", "--json"]);
    assert!(ok, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let (da, db) = (
        v["cube"]["da"].as_u64().unwrap(),
        v["cube"]["db"].as_u64().unwrap(),
    );
    assert_eq!(da + db, 6);
    assert_eq!(v["mesh"]["p"].as_u64().unwrap(), 1 << da);
    let mut seen = std::collections::HashSet::new();
    for (s, nodes) in v["submeshes"]
        .as_array()
        .unwrap()
        .iter()
        .zip(v["cube"]["nodes"].as_array().unwrap())
    {
        let (rows, cols) = (s["rows"].as_u64().unwrap(), s["cols"].as_u64().unwrap());
        let nodes: Vec<u64> = nodes
            .as_array()
            .unwrap()
            .iter()
            .map(|n| n.as_u64().unwrap())
            .collect();
        assert_eq!(nodes.len() as u64, rows * cols);
        for &n in &nodes {
            assert!(
                n < 64 && seen.insert(n),
                "node {n} repeated or outside the cube"
            );
        }
        // Listed column by column (x index outer): consecutive nodes in a
        // column are mesh neighbours, hence cube neighbours.
        for col in nodes.chunks(rows as usize) {
            for w in col.windows(2) {
                assert_eq!((w[0] ^ w[1]).count_ones(), 1, "{w:?}");
            }
        }
    }
}
