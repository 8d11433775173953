//! The pure functions of the C API, called as C calls them: graph
//! partitioning, master–worker schedules and AMR submesh allocation. Each
//! result is checked against its definition, computed here independently.

use std::ptr::{null, null_mut};

use nuce_capi::*;

/// The `rows × cols` 4-neighbour grid in CSR (METIS layout) with coordinates.
fn grid(rows: i64, cols: i64) -> (Vec<i64>, Vec<i64>, Vec<f64>) {
    let (mut xadj, mut adj, mut xy) = (vec![0], Vec::new(), Vec::new());
    for r in 0..rows {
        for c in 0..cols {
            for (dr, dc) in [(-1, 0), (0, -1), (0, 1), (1, 0)] {
                let (i, j) = (r + dr, c + dc);
                if (0..rows).contains(&i) && (0..cols).contains(&j) {
                    adj.push(i * cols + j);
                }
            }
            xadj.push(adj.len() as i64);
            xy.extend([c as f64, r as f64]);
        }
    }
    (xadj, adj, xy)
}

fn csr(xadj: &[i64], adj: &[i64], vwgt: Option<&[f64]>, xy: Option<&[f64]>) -> nuce_csr {
    nuce_csr {
        n: xadj.len() as i64 - 1,
        xadj: xadj.as_ptr(),
        adjncy: adj.as_ptr(),
        vwgt: vwgt.map_or(null(), |v| v.as_ptr()),
        ewgt: null(),
        dim: if xy.is_some() { 2 } else { 0 },
        coords: xy.map_or(null(), |v| v.as_ptr()),
    }
}

/// A repartition for new targets from the current halves: part sizes follow
/// the targets, and the vertices that move are about the least any partition
/// moves (a quarter for 1 : 1 → 1 : 3), with `*moved` their count; a current
/// part out of range is an error.
#[test]
fn repartitions_follow_the_targets_and_move_little() {
    let (xadj, adj, _) = grid(24, 30);
    let n = xadj.len() - 1;
    let g = csr(&xadj, &adj, None, None);
    let current: Vec<i64> = (0..n).map(|v| (v >= n / 2) as i64).collect();
    let targets = [1.0, 3.0];
    let (mut part, mut moved, mut cut) = (vec![-1i64; n], -1i64, -1.0);
    let rc = nuce_repartition_graph(
        &g,
        2,
        targets.as_ptr(),
        current.as_ptr(),
        1.0,
        part.as_mut_ptr(),
        &mut moved,
        &mut cut,
    );
    assert_eq!(rc, NUCE_OK);
    let size0 = part.iter().filter(|&&p| p == 0).count() as f64;
    assert!(
        (size0 - n as f64 / 4.0).abs() <= 0.03 * n as f64,
        "part 0 has {size0} of {n}"
    );
    let changed = part.iter().zip(&current).filter(|(a, b)| a != b).count();
    assert_eq!(changed as i64, moved);
    assert!(changed as f64 <= 0.30 * n as f64, "{changed} of {n} moved");
    assert!(cut > 0.0);
    let bad: Vec<i64> = vec![2; n];
    let rc = nuce_repartition_graph(
        &g,
        2,
        targets.as_ptr(),
        bad.as_ptr(),
        1.0,
        part.as_mut_ptr(),
        null_mut(),
        null_mut(),
    );
    assert_ne!(rc, NUCE_OK);
}

#[test]
fn partitions_follow_the_targets_and_report_their_cut() {
    let (xadj, adj, xy) = grid(24, 30);
    let n = xadj.len() - 1;
    let vwgt: Vec<f64> = (0..n).map(|v| 1.0 + (v % 3) as f64).collect();
    let targets = [1.0, 2.0, 3.0];
    for (algo, coords) in [
        (NUCE_ALGO_BEST, false),
        (NUCE_ALGO_BEST, true),
        (NUCE_ALGO_MULTILEVEL, false),
        (NUCE_ALGO_RCB, true),
        (NUCE_ALGO_RSB, false),
    ] {
        let g = csr(&xadj, &adj, Some(&vwgt), coords.then_some(&xy[..]));
        let (mut part, mut cut) = (vec![-1i64; n], -1.0);
        let rc = nuce_partition_graph(&g, 3, targets.as_ptr(), algo, part.as_mut_ptr(), &mut cut);
        assert_eq!(rc, NUCE_OK, "algo {algo}");
        let mut w = [0.0; 3];
        for (v, &p) in part.iter().enumerate() {
            assert!((0..3).contains(&p), "algo {algo}: part {p}");
            w[p as usize] += vwgt[v];
        }
        let total: f64 = vwgt.iter().sum();
        // The tolerance bounds the overload of every part (3 %, plus one
        // vertex of weight at most 3 at the grain of the grid).
        for (k, t) in targets.iter().enumerate() {
            let want = total * t / 6.0;
            assert!(
                w[k] <= 1.03 * want + 3.0,
                "algo {algo}: part {k} has {} for {want}",
                w[k]
            );
        }
        let mut arcs = 0;
        for v in 0..n {
            for a in xadj[v]..xadj[v + 1] {
                arcs += usize::from(part[v] != part[adj[a as usize] as usize]);
            }
        }
        assert_eq!(cut, (arcs / 2) as f64, "algo {algo}");
        // A 24 × 30 grid cut into 3 strips or blocks: far below all edges.
        assert!(cut > 0.0 && cut < 150.0, "algo {algo}: cut {cut}");
    }
}

#[test]
fn bad_graphs_and_arguments_are_errors() {
    let (xadj, adj, xy) = grid(4, 5);
    let n = xadj.len() - 1;
    let mut part = vec![0i64; n];
    let run = |g: &nuce_csr, k: i64, t: *const f64, algo, part: &mut Vec<i64>| {
        nuce_partition_graph(g, k, t, algo, part.as_mut_ptr(), null_mut())
    };
    let good = csr(&xadj, &adj, None, None);
    assert_eq!(run(&good, 2, null(), NUCE_ALGO_BEST, &mut part), NUCE_OK);
    assert!(part.contains(&0) && part.contains(&1));
    let mut g = good;
    g.xadj = null();
    assert_eq!(run(&g, 2, null(), 0, &mut part), NUCE_ERR_INVALID_INPUT);
    let mut out_of_range = adj.clone();
    out_of_range[3] = n as i64;
    let g = csr(&xadj, &out_of_range, None, None);
    assert_eq!(run(&g, 2, null(), 0, &mut part), NUCE_ERR_INVALID_INPUT);
    let mut negative = adj.clone();
    negative[0] = -1;
    let g = csr(&xadj, &negative, None, None);
    assert_eq!(run(&g, 2, null(), 0, &mut part), NUCE_ERR_INVALID_INPUT);
    let mut asym = adj.clone();
    asym[0] = 7; // vertex 0 → 7, but 7 does not list 0
    let g = csr(&xadj, &asym, None, None);
    assert_eq!(run(&g, 2, null(), 0, &mut part), NUCE_ERR_INVALID_INPUT);
    let neg_w = vec![-1.0; n];
    let g = csr(&xadj, &adj, Some(&neg_w), None);
    assert_eq!(run(&g, 2, null(), 0, &mut part), NUCE_ERR_INVALID_INPUT);
    assert_eq!(
        run(&good, 2, [1.0, -1.0].as_ptr(), 0, &mut part),
        NUCE_ERR_INVALID_SPEED
    );
    assert_eq!(
        run(&good, n as i64 + 1, null(), 0, &mut part),
        NUCE_ERR_TOO_MANY_PARTS
    );
    assert_eq!(run(&good, 0, null(), 0, &mut part), NUCE_ERR_EMPTY);
    assert_eq!(run(&good, 2, null(), 99, &mut part), NUCE_ERR_INVALID_INPUT);
    assert_eq!(
        run(&good, 2, null(), NUCE_ALGO_RCB, &mut part),
        NUCE_ERR_INVALID_INPUT
    );
    let mut g = csr(&xadj, &adj, None, Some(&xy));
    g.dim = 4;
    assert_eq!(run(&g, 2, null(), 0, &mut part), NUCE_ERR_INVALID_INPUT);
    assert_eq!(
        nuce_partition_graph(&good, 2, null(), 0, null_mut(), null_mut()),
        NUCE_ERR_INVALID_INPUT
    );
    assert_eq!(
        nuce_partition_graph(null(), 2, null(), 0, part.as_mut_ptr(), null_mut()),
        NUCE_ERR_INVALID_INPUT
    );
}

/// The thread's last error message.
fn last_error() -> String {
    // SAFETY: nuce_last_error returns a NUL-terminated string owned by the library.
    unsafe { std::ffi::CStr::from_ptr(nuce_last_error()) }
        .to_string_lossy()
        .into_owned()
}

/// A binding's announcement (`nuce_fortran_call`, `nuce_fortran_ids`) holds
/// for the next call only: its vertex ids follow the announced numbering,
/// the call after it speaks C again, and an announcement withdrawn by
/// `nuce_fortran_done` (the binding made no call) never reaches a later one.
#[test]
fn announcements_number_vertex_ids_for_one_call() {
    let (xadj, mut adj, _) = grid(3, 3);
    adj[xadj[4] as usize] = 4; // a self-loop at vertex 4 (0-based)
    let g = csr(&xadj, &adj, None, None);
    let mut part = vec![0i64; 9];
    // Partitions `g` (refused) and checks the message names `vertex`.
    let mut refused_naming = |vertex: &str| {
        let rc = nuce_partition_graph(&g, 2, null(), 0, part.as_mut_ptr(), null_mut());
        assert_eq!(rc, NUCE_ERR_INVALID_INPUT);
        let m = last_error();
        assert!(m.contains(&format!("self-loop at {vertex}")), "{m}");
    };
    refused_naming("vertex 4");
    assert_eq!(nuce_fortran_call(NUCE_OK, null()), NUCE_OK);
    assert_eq!(nuce_fortran_ids(1), NUCE_OK);
    refused_naming("vertex 5");
    refused_naming("vertex 4");
    assert_eq!(nuce_fortran_call(NUCE_OK, null()), NUCE_OK);
    assert_eq!(nuce_fortran_ids(1), NUCE_OK);
    assert_eq!(nuce_fortran_done(null()), NUCE_OK);
    refused_naming("vertex 4");
    // A refusal of the binding's own is the last error until the next one.
    let why = c"tasks is negative";
    assert_eq!(nuce_fortran_done(why.as_ptr()), NUCE_OK);
    assert_eq!(last_error(), "tasks is negative");
    refused_naming("vertex 4");
    let rc = nuce_fortran_ids(1);
    assert_eq!(rc, NUCE_ERR_INVALID_INPUT, "no announcement is left");
}

/// Finish time of every worker in the model of \[BBLRR01\] §4 from the
/// orders the C API returns (positions are 1-based slots).
fn finish(t: &[f64], tcom: f64, tret: f64, counts: &[u64], send: &[i64], ret: &[i64]) -> Vec<f64> {
    let p = t.len();
    let mut f = vec![0.0; p];
    for (k, &w) in send.iter().enumerate() {
        let w = w as usize;
        let back = ret.iter().position(|&x| x as usize == w).unwrap();
        // σ2 counts from the end: the last result received is slot 1.
        let sigma2 = if tret > 0.0 { p - back } else { 0 };
        f[w] = (k + 1) as f64 * tcom + counts[w] as f64 * t[w] + sigma2 as f64 * tret;
    }
    f
}

fn is_permutation(v: &[i64]) -> bool {
    let mut s = v.to_vec();
    s.sort_unstable();
    s.iter().enumerate().all(|(i, &x)| x == i as i64)
}

#[test]
fn task_schedules_meet_their_definitions() {
    let t = [3.0, 1.0, 2.0, 5.0];
    for (tcom, tret) in [(0.0, 0.0), (0.5, 0.0), (0.5, 0.25)] {
        let pf = nuce_task_platform {
            cycle_times: t.as_ptr(),
            workers: t.len(),
            tcom,
            tcom_return: tret,
        };
        let (mut c, mut s, mut r, mut m) = ([0u64; 4], [0i64; 4], [0i64; 4], 0.0);
        let rc = nuce_tasks_min_time(
            &pf,
            40,
            c.as_mut_ptr(),
            s.as_mut_ptr(),
            r.as_mut_ptr(),
            &mut m,
        );
        assert_eq!(rc, NUCE_OK);
        assert_eq!(c.iter().sum::<u64>(), 40);
        assert!(is_permutation(&s) && is_permutation(&r));
        let f = finish(&t, tcom, tret, &c, &s, &r);
        let worst = (0..4)
            .filter(|&i| c[i] > 0)
            .map(|i| f[i])
            .fold(0.0, f64::max);
        assert_eq!(m, worst, "tcom {tcom}, tret {tret}");
        // The fastest worker (1 s per task) gets the most tasks.
        assert_eq!(c.iter().max(), Some(&c[1]));
        // 40 tasks on speeds 1/3 + 1 + 1/2 + 1/5 need at least 40 / 2.033 s.
        assert!(m >= 40.0 / (1.0 / 3.0 + 1.0 + 0.5 + 0.2));

        let deadline = 20.0;
        let rc = nuce_tasks_max_tasks(
            &pf,
            deadline,
            c.as_mut_ptr(),
            s.as_mut_ptr(),
            r.as_mut_ptr(),
            &mut m,
        );
        assert_eq!(rc, NUCE_OK);
        let f = finish(&t, tcom, tret, &c, &s, &r);
        assert!((0..4).filter(|&i| c[i] > 0).all(|i| f[i] <= deadline));
        assert!(m <= deadline && c.iter().sum::<u64>() > 30);
    }
    let bad = [1.0, 0.0];
    let pf = nuce_task_platform {
        cycle_times: bad.as_ptr(),
        workers: 2,
        tcom: 0.0,
        tcom_return: 0.0,
    };
    let (mut c, mut s, mut r) = ([0u64; 2], [0i64; 2], [0i64; 2]);
    let out = (c.as_mut_ptr(), s.as_mut_ptr(), r.as_mut_ptr());
    assert_eq!(
        nuce_tasks_min_time(&pf, 5, out.0, out.1, out.2, null_mut()),
        NUCE_ERR_INVALID_SPEED
    );
    let pf = nuce_task_platform {
        cycle_times: t.as_ptr(),
        workers: 2,
        tcom: -1.0,
        tcom_return: 0.0,
    };
    assert_eq!(
        nuce_tasks_min_time(&pf, 5, out.0, out.1, out.2, null_mut()),
        NUCE_ERR_INVALID_INPUT
    );
    let pf = nuce_task_platform {
        cycle_times: t.as_ptr(),
        workers: 2,
        tcom: 0.0,
        tcom_return: 0.0,
    };
    assert_eq!(
        nuce_tasks_min_time(&pf, 5, out.0, null_mut(), out.2, null_mut()),
        NUCE_ERR_INVALID_INPUT
    );
    assert_eq!(
        nuce_tasks_max_tasks(&pf, f64::NAN, out.0, out.1, out.2, null_mut()),
        NUCE_ERR_INVALID_INPUT
    );
}

#[test]
fn amr_submeshes_are_disjoint_and_inside_the_mesh() {
    let grids: [u64; 10] = [30, 20, 15, 40, 10, 10, 64, 8, 12, 12];
    let (p, q) = (8usize, 6usize);
    for packer in [NUCE_PACK_TIGHT, NUCE_PACK_LEVEL] {
        for scaling in [NUCE_SCALE_NONUNIFORM, NUCE_SCALE_UNIFORM] {
            let (mut sub, mut rot) = ([-1i64; 20], [-1i32; 5]);
            let rc = nuce_amr_allocate(
                grids.as_ptr(),
                5,
                p as i64,
                q as i64,
                packer,
                scaling,
                sub.as_mut_ptr(),
                rot.as_mut_ptr(),
            );
            assert_eq!(rc, NUCE_OK);
            assert!(rot.iter().all(|&r| r == 0 || r == 1));
            let mut owner = vec![usize::MAX; p * q];
            for (i, r) in sub.chunks_exact(4).enumerate() {
                let [row, col, rows, cols] = [r[0], r[1], r[2], r[3]].map(|x| x as usize);
                assert!(rows > 0 && cols > 0, "grid {i} has an empty submesh");
                assert!(
                    row + rows <= q && col + cols <= p,
                    "grid {i}: {r:?} outside {p}x{q}"
                );
                for y in row..row + rows {
                    for x in col..col + cols {
                        assert_eq!(owner[y * p + x], usize::MAX, "processor ({x}, {y}) twice");
                        owner[y * p + x] = i;
                    }
                }
            }
        }
    }
    let mut sub = [0i64; 8];
    let g = [4u64, 4, 0, 3];
    assert_ne!(
        nuce_amr_allocate(g.as_ptr(), 2, 2, 2, 0, 0, sub.as_mut_ptr(), null_mut()),
        NUCE_OK
    );
    let g = [4u64, 4, 3, 3];
    assert_eq!(
        nuce_amr_allocate(g.as_ptr(), 2, 1, 1, 0, 0, sub.as_mut_ptr(), null_mut()),
        NUCE_ERR_TOO_MANY_PARTS
    );
    assert_eq!(
        nuce_amr_allocate(g.as_ptr(), 2, 0, 2, 0, 0, sub.as_mut_ptr(), null_mut()),
        NUCE_ERR_EMPTY
    );
    assert_eq!(
        nuce_amr_allocate(g.as_ptr(), 2, 2, 2, 7, 0, sub.as_mut_ptr(), null_mut()),
        NUCE_ERR_INVALID_INPUT
    );
    assert_eq!(
        nuce_amr_allocate(g.as_ptr(), 2, 2, 2, 0, 0, null_mut(), null_mut()),
        NUCE_ERR_INVALID_INPUT
    );
    assert_eq!(
        nuce_amr_allocate(null(), 2, 2, 2, 0, 0, sub.as_mut_ptr(), null_mut()),
        NUCE_ERR_INVALID_INPUT
    );
}

#[test]
fn edge_weights_are_cut_and_counted() {
    let (xadj, adj, _) = grid(12, 16);
    let n = xadj.len() - 1;
    // Symmetric weights: heavy edges along the rows, light ones across.
    let ewgt: Vec<f64> = (0..n)
        .flat_map(|v| (xadj[v]..xadj[v + 1]).map(move |a| (v, a)))
        .map(|(v, a)| {
            if (adj[a as usize] - v as i64).abs() == 1 {
                10.0
            } else {
                1.0
            }
        })
        .collect();
    let mut g = csr(&xadj, &adj, None, None);
    g.ewgt = ewgt.as_ptr();
    let (mut part, mut cut) = (vec![-1i64; n], -1.0);
    let rc = nuce_partition_graph(
        &g,
        2,
        std::ptr::null(),
        NUCE_ALGO_MULTILEVEL,
        part.as_mut_ptr(),
        &mut cut,
    );
    assert_eq!(rc, NUCE_OK);
    let mut recount = 0.0;
    for v in 0..n {
        for a in xadj[v]..xadj[v + 1] {
            if part[v] != part[adj[a as usize] as usize] {
                recount += ewgt[a as usize];
            }
        }
    }
    assert_eq!(cut, recount / 2.0);
    // Without weights the shortest bisection of the 12 × 16 grid cuts the
    // 12 row edges between two columns (weight 120 here); with them, a cut
    // across the light column edges (16 of weight 1 at best) must win.
    assert!(cut < 120.0, "cut {cut}");
    let mut bad = ewgt.clone();
    bad[0] = 2.0; // no longer equal to its reverse
    g.ewgt = bad.as_ptr();
    let rc = nuce_partition_graph(
        &g,
        2,
        std::ptr::null(),
        0,
        part.as_mut_ptr(),
        std::ptr::null_mut(),
    );
    assert_eq!(rc, NUCE_ERR_INVALID_INPUT);
}

/// Leave notices: only the signals that ask a process to end, by number
/// or name; a NULL name or flag is error 6, never a crash. (Catching one
/// is exercised with a real signal by `restart.c --leave-signal` in
/// `scripts/test_capi.sh`.)
#[test]
fn leave_notices_take_only_end_signals() {
    use std::ffi::CString;
    for s in [libc_sig::SEGV, libc_sig::KILL, 0, -3, 4096] {
        assert_eq!(
            nuce_catch_leave_signal(s),
            NUCE_ERR_INVALID_INPUT,
            "signal {s}"
        );
    }
    for name in ["SIGSEGV", "KILL", "", "USR3"] {
        let c = CString::new(name).unwrap();
        assert_eq!(
            nuce_catch_leave_signal_name(c.as_ptr()),
            NUCE_ERR_INVALID_INPUT,
            "{name:?}"
        );
    }
    assert_eq!(nuce_catch_leave_signal_name(null()), NUCE_ERR_INVALID_INPUT);
    assert_eq!(nuce_leave_signalled(null_mut()), NUCE_ERR_INVALID_INPUT);
    let mut flag = -1;
    assert_eq!(nuce_leave_signalled(&mut flag), NUCE_OK);
    assert_eq!(flag, 0, "no notice arrived");
    let usr2 = CString::new("usr2").unwrap();
    assert_eq!(nuce_catch_leave_signal_name(usr2.as_ptr()), NUCE_OK);
}

/// Signal numbers of Linux (this test's platform).
mod libc_sig {
    pub const SEGV: i32 = 11;
    pub const KILL: i32 = 9;
}
