//! Scenarios for `DistArray2`: scatter/gather round trip, random successive
//! remaps, halo exchange against the serial stencil, a cost field balanced
//! by the balancer, and bad inputs.

use mpi::traits::*;
use ndarray::Array2;
use nuce::collective::{bcast_value, root_compute};
use nuce::plan::array2d::{
    cells_changing_owner, ArrayDecomposer, ArrayPlan, Rect, RecursiveBisection2,
};
use nuce::DistArray2;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::Ctx;

/// Value stored in cell `(r, c)`: unique, exactly representable.
fn cell(r: usize, c: usize, salt: u64) -> f64 {
    ((r as u64) << 32 | c as u64 ^ salt) as f64
}

fn global(rows: usize, cols: usize, salt: u64) -> Array2<f64> {
    Array2::from_shape_fn((rows, cols), |(r, c)| cell(r, c, salt))
}

/// A random guillotine tiling of `rows × cols` into `p` parts (some possibly empty).
pub fn random_tiling(rows: usize, cols: usize, p: usize, rng: &mut ChaCha8Rng) -> ArrayPlan {
    fn split(rect: Rect, ids: &[usize], rng: &mut ChaCha8Rng, out: &mut [Rect]) {
        if ids.len() == 1 {
            out[ids[0]] = if rect.is_empty() {
                Rect::default()
            } else {
                rect
            };
            return;
        }
        let k = rng.gen_range(1..ids.len());
        let (a, b) = if rng.gen_bool(0.5) {
            let cut = rng.gen_range(0..=rect.rows);
            (
                Rect::new(rect.row, rect.col, cut, rect.cols),
                Rect::new(rect.row + cut, rect.col, rect.rows - cut, rect.cols),
            )
        } else {
            let cut = rng.gen_range(0..=rect.cols);
            (
                Rect::new(rect.row, rect.col, rect.rows, cut),
                Rect::new(rect.row, rect.col + cut, rect.rows, rect.cols - cut),
            )
        };
        split(a, &ids[..k], rng, out);
        split(b, &ids[k..], rng, out);
    }
    let mut ids: Vec<usize> = (0..p).collect();
    // Shuffle so that part numbers are not spatially ordered.
    for i in (1..p).rev() {
        ids.swap(i, rng.gen_range(0..=i));
    }
    let mut parts = vec![Rect::default(); p];
    split(Rect::new(0, 0, rows, cols), &ids, rng, &mut parts);
    ArrayPlan::new("random", rows, cols, parts).expect("guillotine tilings are valid")
}

/// Checks that every local cell holds its global value.
fn holds_global(a: &DistArray2<f64>, salt: u64) -> bool {
    let r = a.rect();
    a.local()
        .indexed_iter()
        .all(|((i, j), &v)| v == cell(r.row + i, r.col + j, salt))
}

pub fn run(name: &str, ctx: &Ctx) -> bool {
    match name {
        "array-roundtrip" => roundtrip(ctx),
        "array-remap" => remap(ctx),
        "array-halo" => halo(ctx),
        "array-errors" => errors(ctx),
        "array-cost" => cost(ctx),
        "array-sweep" => sweep(ctx),
        _ => return false,
    }
    true
}

fn roundtrip(ctx: &Ctx) {
    let w = &ctx.world;
    let p = w.size() as usize;
    let (rows, cols, trials): (usize, usize, usize) =
        (ctx.arg(0, 37), ctx.arg(1, 23), ctx.arg(2, 10));
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    for t in 0..trials {
        let plan = random_tiling(rows, cols, p, &mut rng);
        let g = (w.rank() == 0).then(|| global(rows, cols, t as u64));
        let (mut a, stats) =
            DistArray2::scatter_with_plan(w, 0, plan.clone(), t % 2, g.as_ref()).expect("scatter");
        ctx.check(
            "scatter-values",
            holds_global(&a, t as u64),
            format!("trial {t}"),
        );
        if t % 3 == 1 {
            // The application swaps the block for the same values in
            // Fortran order (`padded_mut` allows it): still gathered.
            let mut f = Array2::default(ndarray::ShapeBuilder::f(a.padded().dim()));
            f.assign(a.padded());
            *a.padded_mut() = f;
        }
        let back = a.gather(0).expect("gather");
        if let Some(back) = back {
            ctx.check(
                "gather-bit-exact",
                back == global(rows, cols, t as u64),
                format!("trial {t}"),
            );
            let expect = (rows * cols - plan.parts[0].area()) * 8;
            ctx.check("scatter-bytes", stats.bytes as usize == expect, stats.bytes);
        }
    }
}

fn remap(ctx: &Ctx) {
    let w = &ctx.world;
    let p = w.size() as usize;
    let (rows, cols, steps): (usize, usize, usize) =
        (ctx.arg(0, 41), ctx.arg(1, 29), ctx.arg(2, 200));
    let mut rng = ChaCha8Rng::seed_from_u64(11);
    let first = random_tiling(rows, cols, p, &mut rng);
    let g = (w.rank() == 0).then(|| global(rows, cols, 5));
    let (mut a, _) =
        DistArray2::scatter_with_plan(w, 0, first.clone(), 1, g.as_ref()).expect("scatter");
    // A second array on the same plans carries each cell's previous owner:
    // after a remap, the cells of a rank's block whose previous owner is
    // another rank are the cells it actually received (measured from the
    // data delivered, not from the plans' overlaps).
    let mut owners = DistArray2::<u64>::with_plan(w, first, 0).expect("owners");
    let (mut total, mut minimum, mut received) = (0u64, 0u64, 0u64);
    for step in 0..steps {
        // Alternate random tilings and speed-proportional plans (the root plans, all receive).
        let next = if step % 2 == 0 {
            random_tiling(rows, cols, p, &mut rng)
        } else {
            let speeds: Vec<f64> = (0..p).map(|_| rng.gen_range(0.1..10.0)).collect();
            root_compute(w, 0, || {
                Ok(RecursiveBisection2.decompose(rows, cols, &speeds)?)
            })
            .expect("plan")
        };
        let need = cells_changing_owner(a.plan(), &next) as u64 * 8;
        let stats = a.remap(&next).expect("remap");
        ctx.check(
            "remap-minimal-bytes",
            stats.bytes == need,
            format!("step {step}: {} vs {need}", stats.bytes),
        );
        owners.local_mut().fill(w.rank() as u64);
        owners.remap(&next).expect("owners remap");
        let me = w.rank() as u64;
        let mine = owners.local().iter().filter(|&&o| o != me).count() as u64 * 8;
        let mut got = 0u64;
        w.all_reduce_into(&mine, &mut got, mpi::collective::SystemOperation::sum());
        ctx.check(
            "remap-received-bytes",
            got == need && got == stats.bytes,
            format!(
                "step {step}: received {got}, reported {}, minimum {need}",
                stats.bytes
            ),
        );
        received += got;
        ctx.check("remap-values", holds_global(&a, 5), format!("step {step}"));
        total += stats.bytes;
        minimum += need;
    }
    let back = a.gather(0).expect("gather");
    if let Some(back) = back {
        ctx.check(
            "remap-preserves-all",
            back == global(rows, cols, 5),
            "after all remaps",
        );
        println!("RESULT remap steps={steps} bytes={total} minimum={minimum} received={received}");
    }
}

/// 9-point averaging stencil on the interior; boundary cells copied.
fn stencil_serial(g: &Array2<f64>) -> Array2<f64> {
    let (m, n) = g.dim();
    Array2::from_shape_fn((m, n), |(r, c)| {
        if r == 0 || c == 0 || r + 1 == m || c + 1 == n {
            return g[[r, c]];
        }
        let mut s = 0.0;
        for dr in 0..3 {
            for dc in 0..3 {
                s += g[[r + dr - 1, c + dc - 1]] * (1 + dr * 3 + dc) as f64;
            }
        }
        s
    })
}

fn halo(ctx: &Ctx) {
    let w = &ctx.world;
    let p = w.size() as usize;
    let (rows, cols, trials): (usize, usize, usize) =
        (ctx.arg(0, 31), ctx.arg(1, 26), ctx.arg(2, 10));
    let mut rng = ChaCha8Rng::seed_from_u64(3);
    for t in 0..trials {
        let ghost = 1 + t % 3;
        let plan = random_tiling(rows, cols, p, &mut rng);
        let g = global(rows, cols, t as u64);
        let (mut a, _) =
            DistArray2::scatter_with_plan(w, 0, plan, ghost, (w.rank() == 0).then_some(&g))
                .expect("scatter");
        a.exchange_ghosts().expect("halo");
        // Every ghost cell inside the global array holds the neighbour's value (corners included).
        let me = a.rect();
        let mut ok = true;
        if !me.is_empty() {
            for ((i, j), &v) in a.padded().indexed_iter() {
                let (gr, gc) = (
                    me.row as isize + i as isize - ghost as isize,
                    me.col as isize + j as isize - ghost as isize,
                );
                if gr >= 0 && gc >= 0 && (gr as usize) < rows && (gc as usize) < cols {
                    ok &= v == g[[gr as usize, gc as usize]];
                }
            }
        }
        ctx.check("halo-ghosts", ok, format!("trial {t} ghost {ghost}"));
        // One stencil step computed locally from the ghosts equals the serial step.
        let pad = a.padded().clone();
        let mut out = a; // pad holds the ghosts read below
        for ((i, j), v) in out.local_mut().indexed_iter_mut() {
            let (gr, gc) = (me.row + i, me.col + j);
            if gr == 0 || gc == 0 || gr + 1 == rows || gc + 1 == cols {
                continue;
            }
            let mut s = 0.0;
            for dr in 0..3 {
                for dc in 0..3 {
                    s += pad[[i + ghost + dr - 1, j + ghost + dc - 1]] * (1 + dr * 3 + dc) as f64;
                }
            }
            *v = s;
        }
        if let Some(res) = out.gather(0).expect("gather") {
            ctx.check(
                "halo-stencil-equals-serial",
                res == stencil_serial(&g),
                format!("trial {t}"),
            );
        }
    }
}

/// Each bad input must give the same error on every rank; prints `ERR <case> <error>`.
fn errors(ctx: &Ctx) {
    let w = &ctx.world;
    let p = w.size() as usize;
    let case = ctx.args.first().cloned().unwrap_or_default();
    let rank = w.rank();
    let good = RecursiveBisection2
        .decompose(10, 10, &vec![1.0; p])
        .expect("plan");
    let res: nuce::Result<()> = match case.as_str() {
        "shape" => {
            // The root's global array does not match the plan.
            let g = (rank == 0).then(|| Array2::<f64>::zeros((9, 10)));
            DistArray2::scatter_with_plan(w, 0, good, 0, g.as_ref()).map(|_| ())
        }
        "missing" => DistArray2::<f64>::scatter_with_plan(w, 0, good, 0, None).map(|_| ()),
        "parts" => {
            let bad = RecursiveBisection2
                .decompose(10, 10, &vec![1.0; p + 1])
                .expect("plan");
            DistArray2::<f64>::with_plan(w, bad, 1).map(|_| ())
        }
        "not-tiling" => {
            let mut bad = good.clone();
            bad.parts[0] = Rect::new(0, 0, 1, 1);
            DistArray2::<f64>::with_plan(w, good, 1).and_then(|mut a| a.remap(&bad).map(|_| ()))
        }
        "remap-shape" => {
            let other = RecursiveBisection2
                .decompose(11, 10, &vec![1.0; p])
                .expect("plan");
            DistArray2::<f64>::with_plan(w, good, 1).and_then(|mut a| a.remap(&other).map(|_| ()))
        }
        "speeds-nan" | "speeds-zero" | "speeds-inf" | "empty-array" => {
            let bad = match case.as_str() {
                "speeds-nan" => f64::NAN,
                "speeds-zero" => 0.0,
                _ => f64::INFINITY,
            };
            let (m, n) = if case == "empty-array" {
                (0, 10)
            } else {
                (10, 10)
            };
            let speeds: Vec<f64> = (0..p)
                .map(|r| {
                    if r == p - 1 && case != "empty-array" {
                        bad
                    } else {
                        1.0
                    }
                })
                .collect();
            root_compute(w, 0, || Ok(RecursiveBisection2.decompose(m, n, &speeds)?)).map(|_| ())
        }
        "too-many-ranks" => nuce::Balancer::new(w)
            .and_then(|mut b| {
                b.configure(nuce::Settings {
                    array_algorithm: nuce::ArrayAlgorithm::given(RecursiveBisection2),
                    ..b.settings().clone()
                })
                .map(|()| b)
            })
            .and_then(|b| b.plan(1, p - 1))
            .map(|_| ()),
        "replaced-block" => DistArray2::<f64>::with_plan(w, good, 1).and_then(|mut a| {
            // The last rank swaps its padded block for one of another
            // shape; every rank's exchange must fail with its reason.
            if rank as usize + 1 == p {
                *a.padded_mut() = ndarray::Array2::default((1, 1));
            }
            a.exchange_ghosts().map(|_| ())
        }),
        "replaced-block-gather" => DistArray2::<f64>::with_plan(w, good, 1).and_then(|mut a| {
            // The same before a gather: every rank's gather fails.
            if rank as usize + 1 == p {
                *a.padded_mut() = ndarray::Array2::default((1, 1));
            }
            a.gather(0).map(|_| ())
        }),
        "bcast-none" => bcast_value::<_, u32>(w, 0, None).map(|_| ()),
        other => Err(nuce::Error::invalid_input(format!(
            "unknown error case {other}"
        ))),
    };
    match res {
        Ok(()) => println!("ERR {rank} {case} none"),
        Err(e) => println!("ERR {rank} {case} {e}"),
    }
}

/// A `DistArray2` with a cost field: the first quarter of the columns costs
/// 4 per cell, the rest 1, and every rank really works in proportion to its
/// cells' cost for 3 phases. After the balance points the layout must
/// balance `Σ cost / speed` for the speeds it was planned for: each part
/// within half the heaviest row or column per cut (`p − 1` cuts at most)
/// of its share of the total cost, and the first balance point (cells
/// planned without costs) must have remapped.
fn cost(ctx: &Ctx) {
    use std::hint::black_box;
    let (rows, cols) = (ctx.arg(0, 40), ctx.arg(1, 64));
    let p = ctx.world.size() as usize;
    let mut bal = nuce::Balancer::new(&ctx.world).expect("balancer");
    let mut a = DistArray2::<f64>::new(&mut bal, rows, cols, 1).expect("array");
    let heavy = cols / 4;
    let cost = move |_: usize, c: usize| if c < heavy { 4.0 } else { 1.0 };
    let mut reports = Vec::new();
    for _ in 0..3 {
        a.set_cost_with(cost);
        let r = a.rect();
        let mut acc = 0.0f64;
        for i in r.row..r.row_end() {
            for j in r.col..r.col_end() {
                for _ in 0..(cost(i, j) as usize * 3000) {
                    acc = black_box(acc * 0.999 + 1.0);
                }
            }
        }
        black_box(acc);
        reports.push(bal.maybe_remap(&mut a, 1).expect("maybe_remap"));
    }
    let field: Vec<f64> = (0..rows * cols).map(|x| cost(x / cols, x % cols)).collect();
    let loads =
        nuce::plan::array2d::WeightedBisection2d::part_costs(a.plan(), &field).expect("part costs");
    let total: f64 = field.iter().sum();
    let plane = (4.0 * rows as f64).max(4.0 * heavy as f64 + (cols - heavy) as f64);
    // The speeds the layout in effect was planned for (its remap's).
    let Some(planned) = reports.iter().rev().find(|r| r.remap) else {
        ctx.check("cost-first-remap", p == 1, "no balance point remapped");
        return;
    };
    let speeds = &planned.speeds;
    let sum_s: f64 = speeds.iter().sum();
    let tol = (p - 1) as f64 * plane / 2.0 + 1e-9 * total;
    let worst = loads
        .iter()
        .zip(speeds)
        .map(|(l, s)| (l - total * s / sum_s).abs())
        .fold(0.0, f64::max);
    ctx.check(
        "cost-balanced",
        worst <= tol,
        format!("loads {loads:?} speeds {speeds:?}: off by {worst} > {tol}"),
    );
    ctx.check(
        "cost-first-remap",
        p == 1 || reports[0].remap,
        format!("{:?}", reports[0].decision),
    );
}

/// `Balancer::measure_sizes` (issue 19): every rank's points reach its
/// speed function, the speeds are set and a plan is made; then bad size
/// lists — on one rank, on every rank, different on each rank — give the
/// same error on every rank (`ERR <rank> <case> <error>`).
fn sweep(ctx: &Ctx) {
    use nuce::speed::KernelConfig;
    let w = &ctx.world;
    let mut bal = nuce::Balancer::new(w).expect("balancer");
    bal.set_kernel(KernelConfig {
        repeats: 2,
        warmup: 0,
        min_time: std::time::Duration::from_millis(2),
        ..Default::default()
    });
    let sizes = [256usize, 4096, 65536];
    let pts = bal.measure_sizes(&sizes).expect("measure_sizes");
    let cells: Vec<usize> = pts.iter().map(|p| p.cells).collect();
    ctx.check("sweep-cells", cells == sizes, format!("{cells:?}"));
    let f = bal.measured().speed_function().expect("a speed function");
    let want: Vec<(f64, f64)> = pts
        .iter()
        .map(|p| (p.cells as f64, p.measurement.median))
        .collect();
    let got = f.points();
    let same = got.len() == want.len()
        && got
            .iter()
            .zip(&want)
            .all(|(a, b)| a.0 == b.0 && (a.1 - b.1).abs() <= 1e-9 * b.1);
    ctx.check("sweep-function", same, format!("{got:?} vs {want:?}"));
    let speeds = bal.measured().speeds().map(<[f64]>::len);
    ctx.check(
        "sweep-speeds",
        speeds == Some(w.size() as usize),
        format!("{speeds:?}"),
    );
    // The root's speeds are the functions' snapped mean speeds, and the
    // first plan is the column DP's for the planning model of the gathered
    // functions (functional when some function is not flat).
    use nuce::plan::fpm::{snap_speeds, PlanningModel, SpeedEstimate};
    let fns = nuce::collective::gather_values(w, 0, &bal.measured().speed_function().cloned())
        .expect("gather the functions");
    let functional = nuce::internals::balancer::functional_from_env().expect("speed model");
    let (speeds, want_plan, model) = root_compute(w, 0, || {
        let fns = fns.expect("functions at the root");
        let est: Vec<SpeedEstimate> = fns
            .iter()
            .map(|f| {
                let f = f.as_ref().expect("a function on every rank");
                SpeedEstimate {
                    mean: f.mean_speed(),
                    noise: f.noise(),
                }
            })
            .collect();
        let speeds = snap_speeds(&est)?;
        let exact: Vec<SpeedEstimate> = speeds
            .iter()
            .map(|&mean| SpeedEstimate { mean, noise: 0.0 })
            .collect();
        let model = PlanningModel::new(&exact, Some(&fns), 64 * 64, None, functional)?;
        let plan = nuce::plan::array2d::ColumnDp::default().decompose(64, 64, &model.speeds)?;
        Ok((speeds, plan, model.functions.is_some()))
    })
    .expect("the expected plan");
    ctx.check(
        "sweep-speeds-are-the-means",
        bal.measured().speeds() == Some(&speeds[..]),
        format!("{:?} vs {speeds:?}", bal.measured().speeds()),
    );
    let plan = bal.plan(64, 64).expect("plan after a sweep");
    ctx.check(
        "sweep-first-plan",
        plan == want_plan,
        format!("functional {model}: {plan:?} vs {want_plan:?}"),
    );
    println!(
        "RESULT {rank} sweep-first-plan functional={model}",
        rank = ctx.rank()
    );
    let rank = ctx.rank();
    let cases: [(&str, Vec<usize>); 3] = [
        (
            "one-rank",
            if rank == 1 {
                vec![256, usize::MAX]
            } else {
                vec![256]
            },
        ),
        ("every-rank", vec![]),
        ("different", vec![256 + 256 * rank as usize]),
    ];
    for (case, sizes) in cases {
        match bal.measure_sizes(&sizes) {
            Ok(_) => println!("ERR {rank} {case} none"),
            Err(e) => println!("ERR {rank} {case} {e}"),
        }
    }
}
