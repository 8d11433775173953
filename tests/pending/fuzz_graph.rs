//! Pending: fuzz tests for the METIS / gmsh / Medit readers of
//! `src/plan/graph/io.rs` (branch `graph`, not on main when written).
//! Append to `tests/fuzz_readers.rs` once the module is on main (cargo does
//! not compile `tests/pending/`). Run against the `graph` branch on
//! 2026-11-22 they found two bugs in `parse_metis` (see RELIABILITY.md).

// ---- METIS graph / partition / coordinates and gmsh / Medit mesh readers ----

use nuce::plan::graph::io::{
    parse_coords, parse_medit, parse_mesh, parse_metis, parse_msh2, parse_partition,
};

/// Runs `f` on another thread and fails (instead of hanging) if it takes
/// more than 10 s; a panic inside `f` fails the test too.
fn bounded<F: FnOnce() + Send + 'static>(what: &str, f: F) {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let ok = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).is_ok();
        let _ = tx.send(ok);
    });
    match rx.recv_timeout(std::time::Duration::from_secs(10)) {
        Ok(true) => {}
        Ok(false) => panic!("{what}: the reader panicked"),
        Err(_) => panic!("{what}: the reader did not return within 10 s (hang)"),
    }
}

/// Every graph/mesh reader on `text`, and the graphs of any mesh it accepts.
fn read_all(text: String) {
    bounded("readers", move || {
        let _ = parse_metis(&text, "fuzz.graph");
        let _ = parse_coords(&text, "fuzz.xyz", 7);
        let _ = parse_partition(&text, "fuzz.part", 7, 3);
        for parsed in [
            parse_msh2(&text, "fuzz.msh"),
            parse_medit(&text, "fuzz.mesh"),
            parse_mesh(&text, "fuzz.msh"),
        ] {
            if let Ok(mesh) = parsed {
                let _ = mesh.nodal_graph();
                let _ = mesh.dual_graph(None);
                let _ = mesh.dual_graph(Some(1));
            }
        }
    });
}

const METIS_OK: &str = "% a 4-cycle with weights\n4 4 011\n1 2 1 4 1\n2 1 1 3 1\n3 2 1 4 1\n4 1 1 3 1\n";
const MSH_OK: &str = "$MeshFormat\n2.2 0 8\n$EndMeshFormat\n$Nodes\n4\n1 0 0 0\n2 1 0 0\n3 1 1 0\n4 0 1 0\n$EndNodes\n$Elements\n2\n1 2 2 0 1 1 2 3\n2 2 2 0 1 1 3 4\n$EndElements\n";
const MEDIT_OK: &str = "MeshVersionFormatted 2\nDimension 2\nVertices\n4\n0 0 0\n1 0 0\n1 1 0\n0 1 0\nTriangles\n2\n1 2 3 0\n1 3 4 0\nEnd\n";

/// Numbers that stress parsers: zero, small, boundary and huge values,
/// negative and non-numeric tokens.
fn token() -> impl Strategy<Value = String> {
    prop_oneof![
        (0u64..12).prop_map(|x| x.to_string()),
        Just("18446744073709551615".to_string()),
        Just("18446744073709551616".to_string()),
        Just("4294967296".to_string()),
        Just("1000000000000".to_string()),
        Just("-1".to_string()),
        Just("1e3".to_string()),
        Just("nan".to_string()),
        Just("0.5".to_string()),
        "[a-z$%]{1,6}",
    ]
}

/// Lines of tokens: header-like and body-like garbage.
fn token_lines() -> impl Strategy<Value = String> {
    proptest::collection::vec(proptest::collection::vec(token(), 0..6), 0..12)
        .prop_map(|ls| ls.iter().map(|l| l.join(" ")).collect::<Vec<_>>().join("\n"))
}

/// A valid file with some lines replaced by garbage lines, dropped or duplicated.
fn mutated(base: &'static str) -> impl Strategy<Value = String> {
    proptest::collection::vec((any::<usize>(), 0u8..3, proptest::collection::vec(token(), 0..5)), 0..4)
        .prop_map(move |edits| {
            let mut lines: Vec<String> = base.lines().map(str::to_string).collect();
            for (at, kind, toks) in edits {
                if lines.is_empty() {
                    break;
                }
                let i = at % lines.len();
                match kind {
                    0 => lines[i] = toks.join(" "),
                    1 => {
                        lines.remove(i);
                    }
                    _ => {
                        let l = lines[i].clone();
                        lines.insert(i, l);
                    }
                }
            }
            lines.join("\n")
        })
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(256),
        ..ProptestConfig::default()
    })]

    #[test]
    fn graph_readers_survive_arbitrary_text(text in "\\PC{0,300}") {
        read_all(text);
    }

    #[test]
    fn graph_readers_survive_token_garbage(body in token_lines(), head in 0usize..4) {
        let heads = ["", "$MeshFormat\n2.2 0 8\n$EndMeshFormat\n$Nodes\n", "MeshVersionFormatted 2\nDimension 2\nVertices\n", "4 4 011\n"];
        read_all(format!("{}{body}", heads[head]));
    }

    #[test]
    fn mutated_metis_files(text in mutated(METIS_OK)) {
        read_all(text);
    }

    #[test]
    fn mutated_gmsh_files(text in mutated(MSH_OK)) {
        read_all(text);
    }

    #[test]
    fn mutated_medit_files(text in mutated(MEDIT_OK)) {
        read_all(text);
    }
}

/// The valid seeds parse (so the mutations start from accepted input).
#[test]
fn seed_files_parse() {
    assert!(parse_metis(METIS_OK, "ok.graph").is_ok());
    let m = parse_msh2(MSH_OK, "ok.msh").expect("msh");
    assert!(m.nodal_graph().is_ok() && m.dual_graph(None).is_ok());
    assert!(parse_medit(MEDIT_OK, "ok.mesh").is_ok());
}

/// Headers announcing astronomically many vertices, nodes or elements are
/// refused or read lazily, never preallocated.
#[test]
fn huge_announced_counts_do_not_allocate() {
    for text in [
        "18446744073709551615 1\n".to_string(),
        "1000000000000 0\n".to_string(),
        MSH_OK.replace("$Nodes\n4", "$Nodes\n18446744073709551615"),
        MSH_OK.replace("$Elements\n2", "$Elements\n1000000000000"),
        MEDIT_OK.replace("Vertices\n4", "Vertices\n1000000000000"),
    ] {
        read_all(text);
    }
}
