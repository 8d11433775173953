//! The readings of \[VH94\] §4.5 compared in benchmarks/packing.md
//! ("Investigation: TP vs LP"): LP variants (orientation, level fit, drop
//! mode, order, reported width), the minimum-size bounds of §4.3 and the
//! grid-count laws of the workload.

use nuce::plan::packing::experiment::{run, AmrWorkload, CountLaw};
use nuce::plan::packing::level::{LevelFit, LpOrientation, LpWidth};
use nuce::plan::packing::submesh::{min_side, SizeBound};
use nuce::plan::packing::{
    Grid, LevelPacking, Mesh, Packer, PackingOrder, Scaling, SubmeshAllocator, TightPacking,
};
use proptest::prelude::*;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// A packed box `(x0, x1, y0, y1)`.
type Box4 = (u64, u64, u64, u64);

/// Boxes of a fixed-width packing in input order, its width and height.
fn boxes(lp: &LevelPacking, grids: &[Grid], bin: u64) -> (Vec<Box4>, u64, u64) {
    let (pl, w, h) = lp.pack_fixed_width(grids, bin);
    let b = grids
        .iter()
        .zip(&pl)
        .map(|(g, p)| {
            let (gw, gh) = g.oriented(p.rotated);
            (p.x, p.x + gw, p.y, p.y + gh)
        })
        .collect();
    (b, w, h)
}

#[test]
fn drop_modes_by_hand() {
    // Bin 10, decreasing height: level 0 = A 6x4 (x 0..6), B 3x2 (x 6..9);
    // C 3x2 does not fit (9 + 3 > 10): level 1, right to left, x 7..10.
    let g = [Grid::new(6, 4), Grid::new(3, 2), Grid::new(3, 2)];
    let per_grid = LevelPacking::default();
    let rigid = LevelPacking {
        rigid_drop: true,
        ..per_grid
    };
    let shelf = LevelPacking {
        drop_down: false,
        ..per_grid
    };
    // C overlaps only B (x 6..9, top 2): it drops to 2 in both drop modes.
    for lp in [per_grid, rigid] {
        let (b, _, h) = boxes(&lp, &g, 10);
        assert_eq!(b[2], (7, 10, 2, 4));
        assert_eq!(h, 4);
    }
    let (b, _, h) = boxes(&shelf, &g, 10);
    assert_eq!((b[2], h), ((7, 10, 4, 6), 6));
    // Add D 5x1: level 1 = C (x 7..10), D (x 2..7, over A whose top is 4).
    let g = [g[0], g[1], g[2], Grid::new(5, 1)];
    let (b, _, h) = boxes(&per_grid, &g, 10);
    assert_eq!((b[2].2, b[3].2, h), (2, 4, 5));
    // Rigid: the level sinks until D touches A, so C stays at 4 too.
    let (b, _, h) = boxes(&rigid, &g, 10);
    assert_eq!((b[2].2, b[3].2, h), (4, 4, 6));
}

#[test]
fn size_order_and_orientation() {
    // A 10x1 (area 10) before B 3x3 (area 9) in size order, after it in
    // height order; bin 10, no drop.
    let g = [Grid::new(10, 1), Grid::new(3, 3)];
    let by_height = LevelPacking {
        drop_down: false,
        ..LevelPacking::default()
    };
    let by_size = LevelPacking {
        order: Some(PackingOrder::Area),
        ..by_height
    };
    let (b, _, _) = boxes(&by_height, &g, 10);
    assert_eq!((b[0].2, b[1].2), (3, 0));
    let (b, _, _) = boxes(&by_size, &g, 10);
    assert_eq!((b[0].2, b[1].2), (0, 1));
    // Long side along y: 1x10 stands, 3x3 beside it on the same level.
    let long_y = LevelPacking {
        orientation: LpOrientation::LongY,
        ..by_height
    };
    let (b, w, h) = boxes(&long_y, &g, 10);
    assert_eq!(b[0], (0, 1, 0, 10));
    assert_eq!(b[1], (1, 4, 0, 3));
    assert_eq!((w, h), (4, 10));
    // [VH94]-figures reading is size order with rigid levels.
    let f = LevelPacking::seed_figures();
    assert_eq!(f.order, Some(PackingOrder::Area));
    assert!(f.rigid_drop && f.drop_down);
}

fn variant(bits: u8, step: f64) -> LevelPacking {
    LevelPacking {
        step,
        drop_down: bits & 1 == 0,
        rigid_drop: bits & 2 != 0,
        orientation: if bits & 4 != 0 {
            LpOrientation::LongY
        } else {
            LpOrientation::LongX
        },
        fit: if bits & 8 != 0 {
            LevelFit::NextFit
        } else {
            LevelFit::FirstFit
        },
        width: if bits & 16 != 0 {
            LpWidth::Bin
        } else {
            LpWidth::Used
        },
        order: [
            None,
            Some(PackingOrder::Area),
            Some(PackingOrder::Max),
            Some(PackingOrder::Ratio),
        ][(bits >> 5) as usize % 4],
        ..LevelPacking::default()
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    /// Every variant gives a valid packing with the promised orientation;
    /// levels stay levels (rigid: one base per level) and every dropped grid
    /// rests on the floor or on a grid (independent geometric check).
    #[test]
    fn every_variant_packs_validly(
        sides in prop::collection::vec((1u64..60, 1u64..60), 1..30),
        bits in 0u8..128, step in prop::sample::select(vec![0.01, 0.1]),
        ratio in prop::sample::select(vec![1.0, 2.0, 3.0]),
    ) {
        let grids: Vec<Grid> = sides.iter().map(|&(w, h)| Grid::new(w, h)).collect();
        let lp = variant(bits, step);
        let p = lp.pack(&grids, ratio).unwrap();
        p.validate(&grids).map_err(|e| TestCaseError::fail(e.to_string()))?;
        for (g, pl) in grids.iter().zip(&p.placements) {
            let (x, y) = g.oriented(pl.rotated);
            match lp.orientation {
                LpOrientation::LongX => prop_assert!(x >= y),
                LpOrientation::LongY => prop_assert!(x <= y),
            }
        }
        // Fixed width: drop rules.
        let bin = grids.iter().map(Grid::long).max().unwrap() * 2;
        let (b, w, _) = boxes(&lp, &grids, bin);
        prop_assert!(w <= bin);
        if lp.drop_down && !lp.rigid_drop {
            for (i, r) in b.iter().enumerate() {
                let rests = r.2 == 0 || b.iter().enumerate().any(|(j, s)| {
                    j != i && s.3 == r.2 && s.0 < r.1 && r.0 < s.1
                });
                prop_assert!(rests, "grid {} floats", i);
            }
        }
    }
}

#[test]
fn size_bounds() {
    let g = [Grid::new(90, 30), Grid::new(40, 60), Grid::new(10, 10)];
    let mesh = Mesh::new(8, 4).unwrap();
    // Σ long sides = 90 + 60 + 10 = 160, over min(P, Q) = 4.
    assert_eq!(SizeBound::SumOfLongSides.min_side(&g, mesh), 40);
    assert_eq!(SizeBound::None.min_side(&g, mesh), 1);
    assert_eq!(
        SizeBound::QuickPacking.min_side(&g, mesh),
        min_side(&g, mesh)
    );
    for bound in [
        SizeBound::QuickPacking,
        SizeBound::SumOfLongSides,
        SizeBound::None,
    ] {
        let alloc = SubmeshAllocator {
            bound,
            ..SubmeshAllocator::new(TightPacking::default(), Scaling::NonUniform)
        };
        let a = alloc.allocate(&g, mesh).unwrap();
        assert!(a.min_side >= bound.min_side(&g, mesh));
        assert!(a.submeshes.iter().all(|r| !r.is_empty()));
    }
}

#[test]
fn count_laws_have_their_moments() {
    let mut rng = ChaCha8Rng::seed_from_u64(3);
    let n = 40_000;
    for (law, var, p0) in [
        (CountLaw::Geometric, 2.0, 0.5),
        (CountLaw::Poisson, 1.0, (-1.0f64).exp()),
    ] {
        let draws: Vec<f64> = (0..n).map(|_| law.draw(&mut rng) as f64).collect();
        let mean = draws.iter().sum::<f64>() / n as f64;
        let v = draws.iter().map(|d| (d - mean).powi(2)).sum::<f64>() / n as f64;
        let zero = draws.iter().filter(|&&d| d == 0.0).count() as f64 / n as f64;
        assert!((mean - 1.0).abs() < 0.03, "{law:?} mean {mean}");
        assert!((v - var).abs() < 0.1 * var, "{law:?} variance {v}");
        assert!((zero - p0).abs() < 0.01, "{law:?} P(0) {zero}");
    }
}

#[test]
fn default_workload_stream_is_unchanged() {
    // The generator as it was before the count law became a parameter:
    // one coin flip, then a grid, while the coin says so.
    let w = AmrWorkload {
        levels: 6,
        ..Default::default()
    };
    let mut rng = ChaCha8Rng::seed_from_u64(w.seed);
    let k = w.k();
    let (lo, hi) = (k * (1.0 - w.var), k * (1.0 + w.var));
    let mut expect = Vec::new();
    for _ in 0..w.levels {
        let mut level = Vec::new();
        for _ in 0..w.coarse_grids {
            while rng.gen_bool(0.5) {
                let size: f64 = rng.gen_range(lo..=hi);
                let ratio: f64 = rng.gen_range(1.0..=w.max_ratio);
                let gw = ((size * ratio).sqrt().round() as u64).max(1);
                let gh = ((size / ratio).sqrt().round() as u64).clamp(1, gw);
                level.push(Grid::new(gw, gh));
            }
        }
        expect.push(level);
    }
    assert_eq!(w.generate().unwrap(), expect);
    let poisson = AmrWorkload {
        count: CountLaw::Poisson,
        ..w
    };
    assert_ne!(poisson.generate().unwrap(), expect);
}

/// The investigation's finding on a small workload with elongated grids
/// (MAXRATIO 5): LP as described beats TP; \[VH94\]-figures reading of LP
/// packs looser and loses to TP, as in \[VH94\] Figures 13–16.
#[test]
fn seed_figures_reading_loses_to_tp_on_elongated_grids() {
    let w = AmrWorkload {
        levels: 30,
        max_ratio: 5.0,
        seed: 7,
        ..Default::default()
    };
    let levels = w.generate().unwrap();
    let total = |p: &dyn Packer| {
        let alloc = SubmeshAllocator::new(p, Scaling::NonUniform);
        run(&levels, &alloc, w.mesh, || ()).unwrap()
    };
    let tp = total(&TightPacking::default());
    let lp = total(&LevelPacking::default());
    let fig = total(&LevelPacking::seed_figures());
    assert!(lp.total < 0.95 * tp.total, "{lp:?} {tp:?}");
    assert!(fig.total > 1.05 * tp.total, "{fig:?} {tp:?}");
    assert!(fig.utilization + 10.0 < lp.utilization);
}

#[test]
fn old_lp_json_still_reads_as_the_default() {
    let lp: LevelPacking =
        serde_json::from_str(r#"{"step":0.01,"max_iters":10000,"drop_down":true}"#).unwrap();
    assert_eq!(lp, LevelPacking::default());
}
