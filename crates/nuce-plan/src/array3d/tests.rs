//! Cross-cutting tests of the 3D decomposers: exact tilings cell by cell,
//! volumes against shares, the column DP against enumeration, `best`
//! against exhaustive guillotine search and against every other
//! decomposer, bad input, and the time of the column DP at `p = 10^4`.
//! (Over 600 lines: tests only, one file per module's cross-cutting tests.)

use std::collections::HashMap;

use proptest::prelude::*;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::best::{is_one_plane, NO_ONE_PLANE};
use super::*;

/// Every decomposer, `best` for both stencils included.
fn everyone() -> Vec<Box<dyn GridDecomposer3>> {
    let mut all = all_decomposers3();
    all.push(Box::new(Best3::default()));
    all.push(Box::new(Best3 {
        stencil: Stencil::twenty_seven(2),
    }));
    all
}

/// Checks cell by cell that `plan` tiles `shape`: no cell twice, none missed.
fn assert_tiles(plan: &GridPlan3, shape: Shape3, parts: usize) {
    assert_eq!(plan.shape, shape);
    assert_eq!(plan.boxes.len(), parts, "{}", plan.algorithm);
    let (nx, ny, nz) = shape;
    let mut owner = vec![usize::MAX; nx * ny * nz];
    for (p, b) in plan.boxes.iter().enumerate() {
        for i in b.x..b.x + b.nx {
            for j in b.y..b.y + b.ny {
                for k in b.z..b.z + b.nz {
                    assert!(i < nx && j < ny && k < nz, "{}: outside", plan.algorithm);
                    let c = &mut owner[(i * ny + j) * nz + k];
                    assert_eq!(
                        *c,
                        usize::MAX,
                        "{}: cell ({i},{j},{k}) twice",
                        plan.algorithm
                    );
                    *c = p;
                }
            }
        }
    }
    assert!(
        owner.iter().all(|&o| o != usize::MAX),
        "{}: gap",
        plan.algorithm
    );
    // The brute-force surface agrees with the O(p) formula.
    let mut faces = 0;
    for i in 0..nx {
        for j in 0..ny {
            for k in 0..nz {
                let o = owner[(i * ny + j) * nz + k];
                faces += usize::from(i + 1 < nx && owner[((i + 1) * ny + j) * nz + k] != o);
                faces += usize::from(j + 1 < ny && owner[(i * ny + j + 1) * nz + k] != o);
                faces += usize::from(k + 1 < nz && owner[(i * ny + j) * nz + k + 1] != o);
            }
        }
    }
    assert_eq!(faces, plan.internal_surface(), "{}", plan.algorithm);
}

/// `|volume − share|` is at most one layer of cells around the box
/// (`(a+1)(b+1)(c+1) − abc`), or a plane of the grid for an empty part.
fn assert_within_a_layer(plan: &GridPlan3, speeds: &[f64]) {
    let (nx, ny, nz) = plan.shape;
    let plane = (nx * ny).max(ny * nz).max(nx * nz) as f64;
    for (b, share) in plan.boxes.iter().zip(plan.shares(speeds).unwrap()) {
        let tol = if b.is_empty() {
            plane
        } else {
            ((b.nx + 1) * (b.ny + 1) * (b.nz + 1) - b.volume()) as f64
        };
        assert!(
            (b.volume() as f64 - share).abs() <= tol + 1e-9,
            "{}: {b:?} share {share}",
            plan.algorithm
        );
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn every_plan_tiles_exactly(
        nx in 1usize..8, ny in 1usize..8, nz in 1usize..8,
        speeds in prop::collection::vec(0.05f64..10.0, 1..13),
    ) {
        let shape = (nx, ny, nz);
        let mut all = everyone();
        if Guillotine3::applies(shape, speeds.len()) {
            all.push(Box::new(Guillotine3));
        }
        for d in all {
            let plan = d.decompose(shape, &speeds).unwrap();
            assert_tiles(&plan, shape, speeds.len());
            plan.validate().unwrap();
            let bound = surface_lower_bound(shape, &plan.volumes().iter().map(|&v| v as f64).collect::<Vec<_>>()).unwrap();
            prop_assert!(plan.internal_surface() as f64 >= bound - 1e-9, "{}", plan.algorithm);
        }
        let costs: Vec<f64> = (0..nx * ny * nz).map(|c| ((c + 1) % 5) as f64).collect();
        assert_tiles(&WeightedSlabs3.decompose(shape, &costs, &speeds).unwrap(), shape, speeds.len());
        assert_tiles(&WeightedBisection3d.decompose(shape, &costs, &speeds).unwrap(), shape, speeds.len());
    }

    #[test]
    fn nested_volumes_are_within_a_layer_of_shares(
        nx in 1usize..30, ny in 1usize..30, nz in 1usize..30,
        speeds in prop::collection::vec(0.05f64..10.0, 1..40),
    ) {
        for d in [&Slabs3 as &dyn GridDecomposer3, &Pencils3, &Column3] {
            let plan = d.decompose((nx, ny, nz), &speeds).unwrap();
            assert_within_a_layer(&plan, &speeds);
        }
    }

    #[test]
    fn neighbours_are_the_owners_within_reach(
        nx in 1usize..7, ny in 1usize..7, nz in 1usize..7,
        speeds in prop::collection::vec(0.2f64..5.0, 1..9),
        ghost in 1usize..3, corners in any::<bool>(),
    ) {
        let shape = (nx, ny, nz);
        let stencil = Stencil { box_stencil: corners, ghost };
        let plan = RecursiveBisection3d.decompose(shape, &speeds).unwrap();
        let lists = plan.neighbour_lists(stencil);
        for (p, b) in plan.boxes.iter().enumerate() {
            // Brute force: owners of the cells within reach, outside the box.
            let mut owners = Vec::new();
            let mut halo = 0;
            for i in 0..nx {
                for j in 0..ny {
                    for k in 0..nz {
                        if b.is_empty() || b.contains(i, j, k) {
                            continue;
                        }
                        let d = [i, j, k].map(|v| v as i64);
                        let dist = |a: usize| {
                            let lo = b.lo(a) as i64;
                            let hi = b.hi(a) as i64 - 1;
                            (lo - d[a]).max(d[a] - hi).max(0)
                        };
                        let ds = [dist(0), dist(1), dist(2)];
                        let g = ghost as i64;
                        let reach = if corners {
                            ds.iter().all(|&x| x <= g)
                        } else {
                            ds.iter().filter(|&&x| x > 0).count() == 1 && ds.iter().all(|&x| x <= g)
                        };
                        if reach {
                            halo += 1;
                            owners.push(plan.owner_of(i, j, k).unwrap());
                        }
                    }
                }
            }
            owners.sort_unstable();
            owners.dedup();
            prop_assert_eq!(&lists[p], &owners);
            prop_assert_eq!(plan.neighbours(p, stencil), owners);
            prop_assert_eq!(plan.halo_cells(p, stencil), halo);
        }
    }
}

/// Every set partition of `items` (as lists of blocks).
fn set_partitions(items: &[usize]) -> Vec<Vec<Vec<usize>>> {
    let Some((&first, rest)) = items.split_first() else {
        return vec![Vec::new()];
    };
    let mut out = Vec::new();
    for part in set_partitions(rest) {
        for b in 0..part.len() {
            let mut p = part.clone();
            p[b].push(first);
            out.push(p);
        }
        let mut p = part;
        p.push(vec![first]);
        out.push(p);
    }
    out
}

/// Least model surface over **all** nested layouts (any assignment of
/// parts to slabs and columns) for one axis order, by enumeration.
fn brute_nested(shape: Shape3, w: &[f64], axes: [usize; 3]) -> f64 {
    let ids: Vec<usize> = (0..w.len()).collect();
    let mut best = f64::INFINITY;
    for slabs in set_partitions(&ids) {
        let mut total = 0.0;
        let mut layout = Layout3 {
            axes,
            slabs: Vec::new(),
        };
        for slab in &slabs {
            // Each slab independently: the best split into columns.
            let mut slab_best: Option<(f64, Vec<Vec<usize>>)> = None;
            for cols in set_partitions(slab) {
                let one = Layout3 {
                    axes,
                    slabs: vec![cols.clone()],
                };
                let c = column_model_surface(&one, shape, w);
                if slab_best.as_ref().is_none_or(|b| c < b.0) {
                    slab_best = Some((c, cols));
                }
            }
            let (c, cols) = slab_best.unwrap();
            total += c;
            layout.slabs.push(cols);
        }
        let whole = column_model_surface(&layout, shape, w);
        // The surface of a layout is the sum of its slabs' plus the slab cuts.
        let e = extents(shape);
        let cuts = (slabs.len() as f64 - 1.0) * (e[axes[1]] * e[axes[2]]) as f64;
        assert!((whole - (total + cuts)).abs() < 1e-6 * whole.max(1.0));
        best = best.min(whole);
    }
    best
}

/// A random grid of at least `min` cells per axis and at most `max`, and
/// `min..=5` speeds drawn uniformly from `speeds`.
fn random_case(
    rng: &mut ChaCha8Rng,
    min: usize,
    max: [usize; 3],
    speeds: (f64, f64),
) -> (Shape3, Vec<f64>) {
    let p = rng.gen_range(min..=5);
    let [a, b, c] = max.map(|m| rng.gen_range(min..=m));
    let s = (0..p).map(|_| rng.gen_range(speeds.0..speeds.1)).collect();
    ((a, b, c), s)
}

#[test]
fn column_dp_is_optimal_among_all_nested_layouts() {
    let mut rng = ChaCha8Rng::seed_from_u64(17);
    let mut cases = 0;
    for _ in 0..60 {
        let (shape, w) = random_case(&mut rng, 1, [12, 12, 12], (0.1, 10.0));
        for axes in column::ORDERS {
            let (layout, dp) = Column3.model_optimum(shape, &w, axes).unwrap();
            let model = column_model_surface(&layout, shape, &w);
            assert!((model - dp).abs() <= 1e-9 * dp.max(1.0), "{model} vs {dp}");
            let brute = brute_nested(shape, &w, axes);
            assert!(
                dp <= brute * (1.0 + 1e-9) + 1e-9,
                "{shape:?} {w:?} {axes:?}: DP {dp} > enumeration {brute}"
            );
            cases += 1;
        }
    }
    assert_eq!(cases, 360);
}

/// The memo of [`guillotine`]: (extents, boundary faces, parts) → surface.
type Memo = HashMap<([usize; 3], u8, u32), f64>;

/// Least internal surface of a guillotine tiling of a box of extents
/// `dims` by the parts of `mask`, every part holding a non-empty box that
/// `leaf(part, extents, boundary)` accepts; `boundary` has bit `2a` (`2a+1`)
/// set when the box's low (high) face across axis `a` lies on the grid's
/// boundary.
fn guillotine(
    dims: [usize; 3],
    boundary: u8,
    mask: u32,
    leaf: &dyn Fn(usize, [usize; 3], u8) -> bool,
    memo: &mut Memo,
) -> f64 {
    if mask.count_ones() == 1 {
        let ok = leaf(mask.trailing_zeros() as usize, dims, boundary);
        return if ok { 0.0 } else { f64::INFINITY };
    }
    if let Some(&c) = memo.get(&(dims, boundary, mask)) {
        return c;
    }
    let mut best = f64::INFINITY;
    for axis in 0..3 {
        let area = (dims[(axis + 1) % 3] * dims[(axis + 2) % 3]) as f64;
        for at in 1..dims[axis] {
            let (mut l, mut r) = (dims, dims);
            l[axis] = at;
            r[axis] = dims[axis] - at;
            let (lb, rb) = (boundary & !(2 << (2 * axis)), boundary & !(1 << (2 * axis)));
            // Every non-empty proper subset of the mask goes to the low side.
            let mut sub = (mask - 1) & mask;
            while sub > 0 {
                let c = area + guillotine(l, lb, sub, leaf, memo);
                if c < best {
                    best = best.min(c + guillotine(r, rb, mask ^ sub, leaf, memo));
                }
                sub = (sub - 1) & mask;
            }
        }
    }
    memo.insert((dims, boundary, mask), best);
    best
}

/// Halo cells of a box of extents `d` with boundary faces `boundary` for
/// the 7-point stencil, ghost 1: a cross-section per face inside the grid.
fn halo7(d: [usize; 3], boundary: u8) -> usize {
    (0..3)
        .map(|a| {
            let inside = 2 - (boundary >> (2 * a) & 3).count_ones() as usize;
            inside * d[(a + 1) % 3] * d[(a + 2) % 3]
        })
        .sum()
}

/// `best`'s plans on 80 random small grids (2..6 x 2..5 x 2..4 cells,
/// 2–5 parts, speeds in [0.5, 2), seed `seed`) with `tolerance` on the
/// predicted time, against exhaustive guillotine search: worst surface
/// ratio to (a) the least-surface tiling at least as balanced, the case as
/// text; (b) the least-surface tiling no slower by predicted time (7-point,
/// ghost 1); worst best's time over the fastest candidate's; worst
/// surface over [`surface_lower_bound`] of best's and of oracle (a)'s plan;
/// the number of cases compared.
fn against_guillotine(seed: u64, tolerance: f64) -> ([f64; 5], String, usize) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut worst = [1.0f64, 1.0, 1.0, 0.0, 0.0];
    let mut case = String::new();
    let mut compared = 0;
    for _ in 0..80 {
        let (shape, speeds) = random_case(&mut rng, 2, [6, 5, 4], (0.5, 2.0));
        let p = speeds.len();
        let stencil = Stencil::default();
        let (plan, tried) = Best3 { stencil }
            .choose_within(shape, &speeds, tolerance)
            .unwrap();
        if plan.boxes.iter().any(|b| b.is_empty()) {
            continue;
        }
        let dims = [shape.0, shape.1, shape.2];
        let surface = plan.internal_surface() as f64;
        let slowest = plan.slowest(&speeds).unwrap() * (1.0 + 1e-12);
        let balanced =
            |i: usize, d: [usize; 3], _| (d[0] * d[1] * d[2]) as f64 <= slowest * speeds[i];
        let opt = guillotine(dims, 63, (1 << p) - 1, &balanced, &mut HashMap::new());
        let time = predicted_time3(&plan, &speeds, stencil).unwrap() * (1.0 + 1e-12);
        let mean = speeds.iter().sum::<f64>() / p as f64;
        let fast = |i: usize, d: [usize; 3], b: u8| {
            (d[0] * d[1] * d[2]) as f64 * mean / speeds[i] + halo7(d, b) as f64 <= time
        };
        let opt_time = guillotine(dims, 63, (1 << p) - 1, &fast, &mut HashMap::new());
        assert!(
            surface >= opt * (1.0 - 1e-12),
            "{shape:?} {speeds:?}: below (a)"
        );
        assert!(
            surface >= opt_time * (1.0 - 1e-12),
            "{shape:?} {speeds:?}: below (b)"
        );
        if surface / opt > worst[0] || case.is_empty() {
            case = format!(
                "{shape:?}, {p} parts: {} {surface} faces vs {opt}",
                plan.algorithm
            );
        }
        let fastest = tried.iter().map(|c| c.time).fold(f64::INFINITY, f64::min);
        let vols: Vec<f64> = plan.volumes().iter().map(|&v| v as f64).collect();
        let bound = surface_lower_bound(shape, &vols).unwrap();
        worst[0] = worst[0].max(surface / opt);
        worst[1] = worst[1].max(surface / opt_time);
        worst[2] = worst[2].max(time / fastest);
        worst[3] = worst[3].max(surface / bound);
        worst[4] = worst[4].max(opt / bound);
        compared += 1;
    }
    (worst, case, compared)
}

#[test]
fn best_is_near_the_best_guillotine_tiling() {
    for seed in [3, 4] {
        let (worst, case, compared) = against_guillotine(seed, Best3::TIME_TOLERANCE);
        eprintln!(
            "seed {seed}, best vs guillotine optimum over {compared} cases: worst surface ratio \
             {:.4} at equal balance ({case}), {:.4} at equal predicted time; predicted time \
             <= {:.4} x the fastest candidate's; surface / lower bound <= {:.3} (oracle {:.3})",
            worst[0], worst[1], worst[2], worst[3], worst[4]
        );
        assert!(compared >= 40);
        assert!(worst[0] <= 1.15, "worst ratio {} ({case})", worst[0]);
        assert!(worst[2] <= 1.0 + Best3::TIME_TOLERANCE + 1e-9);
    }
    // The column DP alone, the surface minimiser, at its own balance.
    let mut rng = ChaCha8Rng::seed_from_u64(3);
    let mut worst_column: f64 = 1.0;
    for _ in 0..80 {
        let (shape, speeds) = random_case(&mut rng, 2, [6, 5, 4], (0.5, 2.0));
        let col = Column3.decompose(shape, &speeds).unwrap();
        if col.boxes.iter().all(|b| !b.is_empty()) {
            let slowest = col.slowest(&speeds).unwrap() * (1.0 + 1e-12);
            let balanced =
                |i: usize, d: [usize; 3], _| (d[0] * d[1] * d[2]) as f64 <= slowest * speeds[i];
            let dims = [shape.0, shape.1, shape.2];
            let all = (1 << speeds.len()) - 1;
            let opt = guillotine(dims, 63, all, &balanced, &mut HashMap::new());
            worst_column = worst_column.max(col.internal_surface() as f64 / opt);
        }
    }
    eprintln!("column alone: worst surface ratio {worst_column:.4} at equal balance");
    assert!(worst_column >= 1.0);
}

/// Random cubes and bricks with random speeds (`cases` of them, seed
/// `seed`, 7- and 27-point stencils), `best` with `tolerance`: how many
/// plans another decomposer beats on surface at equal or better balance,
/// the worst predicted time over the fastest candidate's, the worst and
/// mean surface of the fastest candidate over best's, and the worst
/// surface / lower bound of best's plan (with its case).
fn against_the_others(seed: u64, cases: usize, tolerance: f64) -> (usize, [f64; 4], String) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let (mut beaten, mut worst, mut sum) = (0, [1.0f64, 1.0, 0.0], 0.0);
    let mut case = String::new();
    for _ in 0..cases {
        let shape = (
            rng.gen_range(16..160),
            rng.gen_range(16..160),
            rng.gen_range(8..160),
        );
        let p = rng.gen_range(2..300);
        let speeds: Vec<f64> = (0..p).map(|_| rng.gen_range(0.5..4.0)).collect();
        let others: Vec<GridPlan3> = all_decomposers3()
            .iter()
            .map(|d| d.decompose(shape, &speeds).unwrap())
            .collect();
        for stencil in [Stencil::seven(1), Stencil::twenty_seven(2)] {
            let (best, tried) = Best3 { stencil }
                .choose_within(shape, &speeds, tolerance)
                .unwrap();
            let (surface, slowest) = (best.internal_surface(), best.slowest(&speeds).unwrap());
            let below = |q: &&GridPlan3| {
                q.internal_surface() < surface
                    && q.slowest(&speeds).unwrap() <= slowest * (1.0 + 1e-12)
            };
            // A one-plane pick (best's ordinary winner beyond one plane)
            // may trade surface for parts within one plane (the 2 % rule,
            // tested in best_is_never_above_another_decomposer_on_large_grids).
            NO_ONE_PLANE.with(|l| l.set(true));
            let (plain, _) = Best3 { stencil }
                .choose_within(shape, &speeds, tolerance)
                .unwrap();
            NO_ONE_PLANE.with(|l| l.set(false));
            let switched = plain.boxes != best.boxes;
            assert!(!switched || is_one_plane(&best, &speeds).unwrap());
            beaten += usize::from(!switched && others.iter().any(|q| below(&q)));
            let fastest = tried.iter().map(|c| c.time).fold(f64::INFINITY, f64::min);
            let f = tried.iter().position(|c| c.time == fastest).unwrap();
            let time = predicted_time3(&best, &speeds, stencil).unwrap();
            let gain = tried[f].surface as f64 / surface as f64;
            let vols: Vec<f64> = best.volumes().iter().map(|&v| v as f64).collect();
            let ratio = surface as f64 / surface_lower_bound(shape, &vols).unwrap();
            if ratio > worst[2] {
                case = format!(
                    "{shape:?} p={p} {}-point {}",
                    stencil.points(),
                    best.algorithm
                );
            }
            worst = [
                worst[0].max(time / fastest),
                worst[1].max(gain),
                worst[2].max(ratio),
            ];
            sum += gain;
        }
    }
    let mean = sum / (2 * cases) as f64;
    (beaten, [worst[0], worst[1], mean, worst[2]], case)
}

#[test]
fn best_is_never_above_another_decomposer_on_large_grids() {
    let mut rng = ChaCha8Rng::seed_from_u64(11);
    for (shape, p) in [
        ((64, 64, 64), 27),
        ((120, 60, 40), 50),
        ((200, 200, 10), 16),
        ((50, 50, 50), 100),
    ] {
        let speeds: Vec<f64> = (0..p).map(|_| rng.gen_range(0.2..5.0)).collect();
        for stencil in [Stencil::seven(1), Stencil::twenty_seven(2)] {
            let best = Best3 { stencil }.decompose(shape, &speeds).unwrap();
            let tb = predicted_time3(&best, &speeds, stencil).unwrap();
            let (surface, slowest) = (best.internal_surface(), best.slowest(&speeds).unwrap());
            // Where best's ordinary winner is beyond one plane and best took
            // a one-plane plan instead, the 2 % rule replaces the surface
            // rule: within one plane, and predicted within 2 % of the most
            // balanced candidate's time.
            let plain = {
                NO_ONE_PLANE.with(|l| l.set(true));
                let b = Best3 { stencil }.decompose(shape, &speeds).unwrap();
                NO_ONE_PLANE.with(|l| l.set(false));
                b
            };
            let switched = plain.boxes != best.boxes;
            let mut balanced = (f64::INFINITY, 0.0);
            for d in all_decomposers3() {
                let plan = d.decompose(shape, &speeds).unwrap();
                let t = predicted_time3(&plan, &speeds, stencil).unwrap();
                assert!(tb <= t * (1.0 + Best3::TIME_TOLERANCE));
                let s = plan.slowest(&speeds).unwrap();
                if (s, t) < balanced {
                    balanced = (s, t);
                }
                if s <= slowest && !switched {
                    assert!(surface <= plan.internal_surface(), "{}", plan.algorithm);
                }
            }
            if switched {
                assert!(is_one_plane(&best, &speeds).unwrap());
                assert!(!is_one_plane(&plain, &speeds).unwrap());
                assert!(tb <= balanced.1 * (1.0 + Best3::BALANCE_TOLERANCE));
            }
            let vols: Vec<f64> = best.volumes().iter().map(|&v| v as f64).collect();
            let bound = surface_lower_bound(shape, &vols).unwrap();
            eprintln!(
                "{shape:?} p={p} {}: {} surface / bound {:.3}, imbalance {:.4}",
                stencil.points(),
                best.algorithm,
                surface as f64 / bound,
                best.imbalance(&speeds).unwrap()
            );
        }
    }
    let (beaten, worst, case) = against_the_others(99, 8, Best3::TIME_TOLERANCE);
    eprintln!("8 random bricks: {beaten} beaten, {worst:?}, worst bound ratio at {case}");
    assert_eq!(beaten, 0);
    assert!(worst[0] <= 1.0 + Best3::TIME_TOLERANCE);
}

#[test]
fn bad_inputs_are_errors() {
    let big = 1usize << 18;
    for d in everyone() {
        for bad in [0.0, -1.0, f64::NAN, f64::INFINITY] {
            assert!(matches!(
                d.decompose((4, 4, 4), &[1.0, bad]),
                Err(Error::InvalidSpeed { index: 1, .. })
            ));
        }
        assert!(d.decompose((4, 4, 4), &[]).is_err());
        for shape in [(0, 4, 4), (4, 0, 4), (4, 4, 0)] {
            assert!(matches!(d.decompose(shape, &[1.0]), Err(Error::Empty(_))));
        }
        for shape in [(usize::MAX, 2, 1), (big, big, big), (1 << 53, 2, 1)] {
            assert!(matches!(
                d.decompose(shape, &[1.0, 2.0]),
                Err(Error::InvalidInput(_))
            ));
        }
    }
}

#[test]
fn tiny_speeds_and_more_parts_than_cells() {
    for d in everyone() {
        let plan = d
            .decompose((2, 2, 1), &[1.0, 1e-300, 1e300, 2.0, 3.0, 1.0])
            .unwrap();
        assert_tiles(&plan, (2, 2, 1), 6);
        let plan = d.decompose((1 << 17, 1 << 18, 1 << 18), &[1.0, 2.0, 3.0]);
        assert!(plan.is_ok(), "{} at MAX_CELLS", d.name());
    }
}

/// `cargo test --release -p nuce-plan column3_ten_thousand -- --ignored --nocapture`
#[test]
#[ignore = "timing: run in release mode, see BENCHMARKS.md"]
fn column3_ten_thousand_parts_time() {
    let mut rng = ChaCha8Rng::seed_from_u64(5);
    let speeds: Vec<f64> = (0..10_000).map(|_| rng.gen_range(0.5..4.0)).collect();
    for shape in [(1000, 1000, 1000), (2000, 1000, 500)] {
        let t = std::time::Instant::now();
        let plan = Column3.decompose(shape, &speeds).unwrap();
        let secs = t.elapsed().as_secs_f64();
        let vols: Vec<f64> = plan.volumes().iter().map(|&v| v as f64).collect();
        let bound = surface_lower_bound(shape, &vols).unwrap();
        eprintln!(
            "Column3 p=10^4 {shape:?}: {secs:.3} s, surface / bound {:.3}, imbalance {:.5}",
            plan.internal_surface() as f64 / bound,
            plan.imbalance(&speeds).unwrap()
        );
        assert!(secs <= 1.0, "{secs} s");
    }
}

/// `cargo test --release -p nuce-plan grid3_table -- --ignored --nocapture`:
/// every decomposer on cubes and bricks with random speeds (the table of
/// benchmarks/grid3.md).
#[test]
#[ignore = "benchmark table, see benchmarks/grid3.md"]
fn grid3_table() {
    let mut rng = ChaCha8Rng::seed_from_u64(2026);
    eprintln!("| grid | p | algorithm | surface / bound | imbalance | predicted time (7-pt) / best | plan time (ms) |");
    eprintln!("|---|---|---|---|---|---|---|");
    for (shape, p) in [
        ((256, 256, 256), 64),
        ((256, 256, 256), 1000),
        ((512, 256, 64), 100),
        ((1000, 1000, 1000), 10_000),
    ] {
        let speeds: Vec<f64> = (0..p).map(|_| rng.gen_range(0.5..4.0)).collect();
        let stencil = Stencil::default();
        let mut rows = Vec::new();
        let mut all = all_decomposers3();
        all.push(Box::new(Best3::default()));
        for d in all {
            let t = std::time::Instant::now();
            let plan = d.decompose(shape, &speeds).unwrap();
            let ms = t.elapsed().as_secs_f64() * 1e3;
            let vols: Vec<f64> = plan.volumes().iter().map(|&v| v as f64).collect();
            let bound = surface_lower_bound(shape, &vols).unwrap();
            let time = predicted_time3(&plan, &speeds, stencil).unwrap();
            rows.push((
                plan.algorithm.clone(),
                plan.internal_surface() as f64 / bound,
                plan.imbalance(&speeds).unwrap(),
                time,
                ms,
            ));
        }
        let best = rows.last().map_or(1.0, |r| r.3);
        for (name, ratio, imb, time, ms) in rows {
            eprintln!(
                "| {}x{}x{} | {p} | {name} | {ratio:.3} | {imb:.4} | {:.3} | {ms:.1} |",
                shape.0,
                shape.1,
                shape.2,
                time / best
            );
        }
    }
}

/// `cargo test --release -p nuce-plan best3_tolerance -- --ignored --nocapture`:
/// the trade-off of [`Best3::TIME_TOLERANCE`] (benchmarks/grid3.md).
#[test]
#[ignore = "benchmark table, see benchmarks/grid3.md"]
fn best3_tolerance_table() {
    eprintln!("| tolerance | small: worst surface / guillotine optimum (a) | small: worst predicted time / fastest | large: plans beaten | large: worst time / fastest | large: fastest's surface / best's (worst, mean) | large: worst surface / bound |");
    eprintln!("|---|---|---|---|---|---|---|");
    for tolerance in [0.0, 0.05, 0.1, 0.15, 0.2, 1e9] {
        let (mut a, mut t, mut case) = (1.0f64, 1.0f64, String::new());
        for seed in 3..11 {
            let (w, c, _) = against_guillotine(seed, tolerance);
            if w[0] > a || case.is_empty() {
                case = c;
            }
            a = a.max(w[0]);
            t = t.max(w[2]);
        }
        let (beaten, w, at) = against_the_others(99, 60, tolerance);
        eprintln!(
            "| {tolerance} | {a:.3} ({case}) | {t:.3} | {beaten} of 120 | {:.4} | {:.3}, {:.4} | {:.3} ({at}) |",
            w[0], w[1], w[2], w[3]
        );
    }
}
