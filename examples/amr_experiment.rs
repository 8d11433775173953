//! Reproduces the experiments of \[VH94\] §4.5
//! (Figures 7–24): TP against LP on the random AMR workload, over grid size
//! variance, aspect ratio, mesh ratio and number of grids, plus the two
//! scalings and the four packing orders; and times TP on 1 000 grids.
//!
//! ```text
//! cargo run --release --example amr_experiment -- [--levels 200] [--seeds 3] [--out benchmarks]
//! cargo run --release --example amr_experiment -- --investigate [--levels 200] [--seeds 3]
//! ```
//! `--investigate` compares TP with LP under every candidate reading of the
//! \[VH94\] (LP variants, size bounds, grid-count law) instead.
//! Writes `OUT/img/packing_*.svg` and prints Markdown tables on stdout.

#[path = "common/cli.rs"]
mod cli;

use std::time::Instant;

use indicatif::{ProgressBar, ProgressStyle};
use nuce::plan::packing::experiment::{run, AmrWorkload, CountLaw, ExperimentTotals};
use nuce::plan::packing::level::{LevelFit, LpOrientation, LpWidth};
use nuce::plan::packing::submesh::SizeBound;
use nuce::plan::packing::{
    Grid, LevelPacking, Mesh, Packer, PackingOrder, Scaling, SubmeshAllocator, TightPacking,
};
use plotters::prelude::*;

type Res<T> = Result<T, Box<dyn std::error::Error>>;

/// A plotted quantity: its title and how to read it from the totals.
type Metric = (&'static str, fn(&ExperimentTotals) -> f64);

/// One curve: a name and its (x, totals) points.
struct Curve {
    name: String,
    points: Vec<(f64, ExperimentTotals)>,
}

/// A sweep: an axis name and the workloads along it.
struct Sweep {
    file: &'static str,
    axis: &'static str,
    xs: Vec<f64>,
    make: Box<dyn Fn(f64) -> AmrWorkload>,
}

struct Ctx {
    levels: usize,
    seeds: u64,
    bar: ProgressBar,
}

impl Ctx {
    /// One curve: the workload `make(x)` at every `x`.
    fn curve(
        &self,
        name: String,
        xs: &[f64],
        make: &dyn Fn(f64) -> AmrWorkload,
        packer: &dyn Packer,
        scaling: Scaling,
    ) -> Res<Curve> {
        let mut points = Vec::new();
        for &x in xs {
            points.push((x, self.measure(make(x), packer, scaling)?));
        }
        Ok(Curve { name, points })
    }

    /// Totals averaged over the seeds for one workload and allocator.
    fn measure(
        &self,
        w: AmrWorkload,
        packer: &dyn Packer,
        scaling: Scaling,
    ) -> Res<ExperimentTotals> {
        let alloc = SubmeshAllocator::new(packer, scaling);
        self.measure_alloc(w, &alloc)
    }

    /// [`Ctx::measure`] with non-uniform scaling and a given size bound.
    fn measure_with(
        &self,
        w: AmrWorkload,
        packer: &dyn Packer,
        bound: SizeBound,
    ) -> Res<ExperimentTotals> {
        let alloc = SubmeshAllocator {
            bound,
            ..SubmeshAllocator::new(packer, Scaling::NonUniform)
        };
        self.measure_alloc(w, &alloc)
    }

    /// Totals averaged over the seeds for one workload and allocation.
    fn measure_alloc(
        &self,
        w: AmrWorkload,
        alloc: &SubmeshAllocator<&dyn Packer>,
    ) -> Res<ExperimentTotals> {
        let mut acc = ExperimentTotals::default();
        for s in 0..self.seeds {
            let w = AmrWorkload {
                levels: self.levels,
                seed: 1000 + s,
                ..w
            };
            let levels = w.generate()?;
            let t = run(&levels, alloc, w.mesh, || self.bar.inc(1))?;
            acc.comp += t.comp / self.seeds as f64;
            acc.comm += t.comm / self.seeds as f64;
            acc.total += t.total / self.seeds as f64;
            acc.utilization += t.utilization / self.seeds as f64;
            acc.levels += t.levels;
        }
        Ok(acc)
    }
}

fn plot(path: &str, axis: &str, curves: &[Curve], metrics: &[Metric]) -> Res<()> {
    let n = metrics.len();
    let root = SVGBackend::new(path, (520 * n.min(2) as u32, 380 * n.div_ceil(2) as u32))
        .into_drawing_area();
    root.fill(&WHITE)?;
    let areas = root.split_evenly((n.div_ceil(2), n.min(2)));
    for ((title, f), area) in metrics.iter().zip(areas) {
        let xs: Vec<f64> = curves
            .iter()
            .flat_map(|c| c.points.iter().map(|p| p.0))
            .collect();
        let ys: Vec<f64> = curves
            .iter()
            .flat_map(|c| c.points.iter().map(|p| f(&p.1)))
            .collect();
        let (x0, x1) = xs
            .iter()
            .fold((f64::MAX, f64::MIN), |a, &v| (a.0.min(v), a.1.max(v)));
        let (y0, y1) = ys
            .iter()
            .fold((f64::MAX, f64::MIN), |a, &v| (a.0.min(v), a.1.max(v)));
        let pad = ((y1 - y0) * 0.1).max(1e-9 + y1.abs() * 0.01);
        let mut chart = ChartBuilder::on(&area)
            .caption(*title, ("sans-serif", 18))
            .margin(10)
            .x_label_area_size(35)
            .y_label_area_size(70)
            .build_cartesian_2d(x0..x1 + 1e-9, (y0 - pad)..(y1 + pad))?;
        chart.configure_mesh().x_desc(axis).draw()?;
        for (k, c) in curves.iter().enumerate() {
            let color = Palette99::pick(k).to_rgba();
            let pts: Vec<(f64, f64)> = c.points.iter().map(|p| (p.0, f(&p.1))).collect();
            chart
                .draw_series(LineSeries::new(pts.clone(), color.stroke_width(2)))?
                .label(c.name.clone())
                .legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2))
                });
            chart.draw_series(PointSeries::of_element(
                pts,
                3,
                color.filled(),
                &|p, s, st| Circle::new(p, s, st),
            ))?;
        }
        chart
            .configure_series_labels()
            .background_style(WHITE.mix(0.8))
            .border_style(BLACK)
            .draw()?;
    }
    root.present()?;
    Ok(())
}

fn table(axis: &str, curves: &[Curve]) {
    println!(
        "| {axis} | {} |",
        curves
            .iter()
            .map(|c| format!(
                "{} comp | {} comm | {} total | {} util %",
                c.name, c.name, c.name, c.name
            ))
            .collect::<Vec<_>>()
            .join(" | ")
    );
    println!("|---{}|", "|---".repeat(4 * curves.len()));
    for i in 0..curves[0].points.len() {
        let x = curves[0].points[i].0;
        let cells: Vec<String> = curves
            .iter()
            .map(|c| {
                let t = c.points[i].1;
                format!(
                    "{:.0} | {:.0} | {:.0} | {:.1}",
                    t.comp, t.comm, t.total, t.utilization
                )
            })
            .collect();
        println!("| {x} | {} |", cells.join(" | "));
    }
    println!();
}

/// The four axes of Figures 9–24, each around the default workload.
fn sweeps() -> Vec<Sweep> {
    let base = AmrWorkload::default();
    vec![
        Sweep {
            file: "var",
            axis: "VAR",
            xs: vec![0.1, 0.3, 0.5, 0.7, 0.9],
            make: Box::new(move |v| AmrWorkload { var: v, ..base }),
        },
        Sweep {
            file: "ratio",
            axis: "MAXRATIO",
            xs: vec![1.0, 2.0, 3.0, 4.0, 5.0],
            make: Box::new(move |v| AmrWorkload {
                max_ratio: v,
                ..base
            }),
        },
        Sweep {
            file: "mesh",
            axis: "MESHRATIO",
            xs: vec![1.0, 1.5, 2.0, 2.5, 3.0],
            // 32·MESHRATIO x 32 processors, 300 points per processor.
            make: Box::new(move |v| AmrWorkload {
                mesh: Mesh {
                    p: (32.0 * v) as usize,
                    q: 32,
                },
                ..base
            }),
        },
        Sweep {
            file: "grids",
            axis: "No. of Grids",
            xs: vec![40.0, 45.0, 50.0, 55.0],
            make: Box::new(move |v| AmrWorkload {
                coarse_grids: v as usize,
                ..base
            }),
        },
    ]
}

/// One reading of \[VH94\] tried by `--investigate`: a name, the workload
/// change, the LP variant, and the minimum-size bound (for both TP and LP).
struct Variant {
    name: &'static str,
    count: CountLaw,
    lp: LevelPacking,
    bound: SizeBound,
}

/// The points of \[VH94\]'s TP-vs-LP figures where it states a winner:
/// (label, workload, \[VH94\]'s winner).
fn investigation_points() -> Vec<(&'static str, AmrWorkload, &'static str)> {
    let b = AmrWorkload::default();
    let mesh = |mr: f64| Mesh {
        p: (32.0 * mr) as usize,
        q: 32,
    };
    vec![
        ("VAR 0.1", AmrWorkload { var: 0.1, ..b }, "LP≈TP"),
        ("VAR 0.9", AmrWorkload { var: 0.9, ..b }, "TP"),
        (
            "MAXR 1",
            AmrWorkload {
                max_ratio: 1.0,
                ..b
            },
            "LP",
        ),
        (
            "MAXR 5",
            AmrWorkload {
                max_ratio: 5.0,
                ..b
            },
            "TP",
        ),
        ("MESH 1", b, "TP"),
        (
            "MESH 3",
            AmrWorkload {
                mesh: mesh(3.0),
                ..b
            },
            "LP",
        ),
        ("GRIDS 40", b, "TP"),
        (
            "GRIDS 55",
            AmrWorkload {
                coarse_grids: 55,
                ..b
            },
            "TP",
        ),
    ]
}

/// `--investigate`: TP against LP under each candidate reading of \[VH94\]
/// (benchmarks/packing.md, "Investigation: TP vs LP"). Prints, per variant and
/// point, LP total / TP total (< 1: LP wins) and the utilisations.
fn investigate(levels: usize, seeds: u64) -> Res<()> {
    let lp = LevelPacking::default();
    let base = Variant {
        name: BASE_NAME,
        count: CountLaw::Geometric,
        lp,
        bound: SizeBound::QuickPacking,
    };
    let nodrop = LevelPacking {
        drop_down: false,
        ..lp
    };
    let long_y = LevelPacking {
        orientation: LpOrientation::LongY,
        ..lp
    };
    let weakest = LevelPacking {
        orientation: LpOrientation::LongY,
        fit: LevelFit::NextFit,
        drop_down: false,
        step: 0.1,
        width: LpWidth::Bin,
        ..lp
    };
    let variants = vec![
        Variant { ..base },
        Variant {
            name: "LP no drop-down",
            lp: nodrop,
            ..base
        },
        Variant {
            name: "LP long side along y",
            lp: long_y,
            ..base
        },
        Variant {
            name: "LP long y, no drop",
            lp: LevelPacking {
                drop_down: false,
                ..long_y
            },
            ..base
        },
        Variant {
            name: "LP next fit",
            lp: LevelPacking {
                fit: LevelFit::NextFit,
                ..lp
            },
            ..base
        },
        Variant {
            name: "LP next fit, no drop",
            lp: LevelPacking {
                fit: LevelFit::NextFit,
                ..nodrop
            },
            ..base
        },
        Variant {
            name: "LP in decreasing size order (TP's order)",
            lp: LevelPacking {
                order: Some(PackingOrder::Area),
                ..lp
            },
            ..base
        },
        Variant {
            name: "LP size order, no drop",
            lp: LevelPacking {
                order: Some(PackingOrder::Area),
                ..nodrop
            },
            ..base
        },
        Variant {
            name: "LP levels drop as rigid blocks",
            lp: LevelPacking {
                rigid_drop: true,
                ..lp
            },
            ..base
        },
        Variant {
            name: "LP size order, rigid level drop",
            lp: LevelPacking::seed_figures(),
            ..base
        },
        Variant {
            name: "LP size order, long y",
            lp: LevelPacking {
                order: Some(PackingOrder::Area),
                ..long_y
            },
            ..base
        },
        Variant {
            name: "LP width step 10 %",
            lp: LevelPacking { step: 0.1, ..lp },
            ..base
        },
        Variant {
            name: "LP W = bin width",
            lp: LevelPacking {
                width: LpWidth::Bin,
                ..lp
            },
            ..base
        },
        Variant {
            name: "LP all weakest (long y, next fit, no drop, 10 %, bin W)",
            lp: weakest,
            ..base
        },
        Variant {
            name: "bound D = Σ long sides (both)",
            bound: SizeBound::SumOfLongSides,
            ..base
        },
        Variant {
            name: "no size bound before packing (both)",
            bound: SizeBound::None,
            ..base
        },
        Variant {
            name: "Poisson grid counts (both)",
            count: CountLaw::Poisson,
            ..base
        },
        Variant {
            name: "LP size order, rigid drop; Poisson counts",
            count: CountLaw::Poisson,
            lp: LevelPacking::seed_figures(),
            ..base
        },
    ];
    let points = investigation_points();
    let tp = TightPacking::default();
    let bar = ProgressBar::new((variants.len() * points.len() * 2) as u64 * seeds * levels as u64);
    let ctx = Ctx { levels, seeds, bar };
    let mut rows = Vec::new();
    for v in &variants {
        let mut cells = Vec::new();
        for (_, w, _) in &points {
            let w = AmrWorkload {
                count: v.count,
                ..*w
            };
            let t = ctx.measure_with(w, &tp, v.bound)?;
            let l = ctx.measure_with(w, &v.lp, v.bound)?;
            cells.push((t, l));
        }
        rows.push((v.name, cells));
    }
    ctx.bar.finish_and_clear();
    let head: Vec<String> = points
        .iter()
        .map(|p| format!("{} ({})", p.0, p.2))
        .collect();
    println!("### LP total / TP total (< 1: LP wins; [VH94]'s winner in parentheses)\n");
    println!("| variant | {} |", head.join(" | "));
    println!("|---{}|", "|---".repeat(points.len()));
    for (name, cells) in &rows {
        let c: Vec<String> = cells
            .iter()
            .map(|(t, l)| format!("{:.3}", l.total / t.total))
            .collect();
        println!("| {name} | {} |", c.join(" | "));
    }
    println!("\n### TP total / LP total (util % TP / LP)\n");
    println!("| variant | {} |", head.join(" | "));
    println!("|---{}|", "|---".repeat(points.len()));
    for (name, cells) in &rows {
        let c: Vec<String> = cells
            .iter()
            .map(|(t, l)| {
                format!(
                    "{:.0} / {:.0} ({:.1} / {:.1})",
                    t.total, l.total, t.utilization, l.utilization
                )
            })
            .collect();
        println!("| {name} | {} |", c.join(" | "));
    }
    // Whole axes for the readings closest to [VH94].
    let sweeps = sweeps();
    let chosen: Vec<&Variant> = variants
        .iter()
        .filter(|v| SWEPT.contains(&v.name))
        .collect();
    let bar = ProgressBar::new(
        (chosen.len() * sweeps.iter().map(|s| s.xs.len()).sum::<usize>()) as u64
            * 2
            * seeds
            * levels as u64,
    );
    let ctx = Ctx { levels, seeds, bar };
    let mut out = Vec::new();
    for s in &sweeps {
        let mut lines = Vec::new();
        for v in &chosen {
            let mut cells = Vec::new();
            for &x in &s.xs {
                let w = AmrWorkload {
                    count: v.count,
                    ..(s.make)(x)
                };
                let t = ctx.measure_with(w, &tp, v.bound)?;
                let l = ctx.measure_with(w, &v.lp, v.bound)?;
                cells.push(format!(
                    "{:.3} ({:.0}/{:.0}; {:.1}/{:.1} %)",
                    l.total / t.total,
                    t.total,
                    l.total,
                    t.utilization,
                    l.utilization
                ));
            }
            lines.push(format!("| {} | {} |", v.name, cells.join(" | ")));
        }
        out.push((s.axis, s.xs.clone(), lines));
    }
    ctx.bar.finish_and_clear();
    for (axis, xs, lines) in out {
        println!("\n### {axis}: LP total / TP total (TP total/LP total; TP/LP util %)\n");
        let head: Vec<String> = xs.iter().map(|x| format!("{axis} {x}")).collect();
        println!("| variant | {} |", head.join(" | "));
        println!("|---{}|", "|---".repeat(xs.len()));
        for l in lines {
            println!("{l}");
        }
    }
    Ok(())
}

/// The variants of `--investigate` swept along every axis.
const SWEPT: [&str; 5] = [
    BASE_NAME,
    "LP long y, no drop",
    "LP size order, no drop",
    "LP size order, rigid level drop",
    "LP size order, rigid drop; Poisson counts",
];

/// Name of the reading as implemented by default.
const BASE_NAME: &str =
    "as implemented (LP long x, first fit, drop, 1 %, used W; D quick; geometric)";

fn main() -> Res<()> {
    let args: Vec<String> = std::env::args().collect();
    let levels: usize = cli::option(&args, "--levels", "200").parse()?;
    let seeds: u64 = cli::option(&args, "--seeds", "3").parse()?;
    if args.iter().any(|a| a == "--investigate") {
        return investigate(levels, seeds);
    }
    let out = cli::option(&args, "--out", "benchmarks");
    std::fs::create_dir_all(format!("{out}/img"))?;

    let base = AmrWorkload::default();
    let sweeps = sweeps();
    let ratio_xs = [1.0, 2.0, 3.0, 4.0, 5.0];
    let runs = (5 * sweeps.iter().map(|s| s.xs.len()).sum::<usize>() + 6 * ratio_xs.len()) as u64;
    let bar = ProgressBar::new(runs * seeds * levels as u64);
    bar.set_style(ProgressStyle::with_template(
        "{bar:40} {pos}/{len} levels {elapsed_precise} eta {eta}",
    )?);
    let ctx = Ctx { levels, seeds, bar };

    let tp = TightPacking::default();
    let lp = LevelPacking::default();
    let tp_mod = TightPacking {
        modified: true,
        ..tp
    };
    let lp_shelf = LevelPacking {
        drop_down: false,
        ..lp
    };
    let lp_fig = LevelPacking::seed_figures();
    let metrics: [Metric; 4] = [
        ("Computation cost", |t| t.comp),
        ("Communication cost", |t| t.comm),
        ("Total cost", |t| t.total),
        ("Processor utilization (%)", |t| t.utilization),
    ];
    let mut tables = Vec::new();

    // Figure 7: the two scalings; Figure 8: the four orders (TP, vs MAXRATIO).
    let by_ratio = |x: f64| AmrWorkload {
        max_ratio: x,
        ..base
    };
    let mut fig7 = Vec::new();
    for scaling in [Scaling::NonUniform, Scaling::Uniform] {
        let name = format!("TP {}", scaling.name());
        fig7.push(ctx.curve(name, &ratio_xs, &by_ratio, &tp, scaling)?);
    }
    plot(
        &format!("{out}/img/packing_scaling.svg"),
        "MAXRATIO",
        &fig7,
        &metrics[2..3],
    )?;
    tables.push(("Figure 7: scalings (TP, order area)", "MAXRATIO", fig7));
    let mut fig8 = Vec::new();
    for order in PackingOrder::ALL {
        let packer = TightPacking { order, ..tp };
        let name = format!("TP {}", order.name());
        fig8.push(ctx.curve(name, &ratio_xs, &by_ratio, &packer, Scaling::NonUniform)?);
    }
    plot(
        &format!("{out}/img/packing_orders.svg"),
        "MAXRATIO",
        &fig8,
        &metrics[2..3],
    )?;
    tables.push((
        "Figure 8: packing orders (TP, non-uniform)",
        "MAXRATIO",
        fig8,
    ));

    // Figures 9–24: TP vs LP along each axis.
    for s in &sweeps {
        let mut curves = Vec::new();
        for (name, packer) in [
            ("TP", &tp as &dyn Packer),
            ("TP-mod", &tp_mod as &dyn Packer),
            ("LP", &lp as &dyn Packer),
            ("LP-nodrop", &lp_shelf as &dyn Packer),
            ("LP-fig", &lp_fig as &dyn Packer),
        ] {
            curves.push(ctx.curve(name.into(), &s.xs, &*s.make, packer, Scaling::NonUniform)?);
        }
        plot(
            &format!("{out}/img/packing_{}.svg", s.file),
            s.axis,
            &curves,
            &metrics,
        )?;
        tables.push((s.axis, s.axis, curves));
    }
    ctx.bar.finish_and_clear();
    for (title, axis, curves) in &tables {
        println!("### {title}\n");
        table(axis, curves);
    }

    // Speed: sequential TP and LP on 1 000 grids of the workload (R = 1).
    let w = AmrWorkload {
        levels: 1,
        coarse_grids: 1000,
        mesh: Mesh { p: 64, q: 64 },
        ..base
    };
    let mut grids: Vec<Grid> = Vec::new();
    let mut seed = 0;
    while grids.len() < 1000 {
        grids.extend(AmrWorkload { seed, ..w }.generate()?.concat());
        seed += 1;
    }
    grids.truncate(1000);
    for (name, packer) in [
        ("TP", &tp as &dyn Packer),
        (
            "TP no hole removal",
            &TightPacking {
                remove_small_holes: false,
                ..tp
            },
        ),
        ("LP", &lp),
    ] {
        let mut times = Vec::new();
        for _ in 0..7 {
            let t0 = Instant::now();
            let p = packer.pack(&grids, 1.0)?;
            times.push(t0.elapsed().as_secs_f64() * 1e3);
            std::hint::black_box(p);
        }
        times.sort_by(f64::total_cmp);
        let p = packer.pack(&grids, 1.0)?;
        println!(
            "{name}: m = 1000 grids, median {:.2} ms (min {:.2}, max {:.2}) over 7 runs; packing {}x{}, density {:.3}",
            times[3], times[0], times[6], p.width, p.height, p.density(&grids)
        );
    }
    Ok(())
}
