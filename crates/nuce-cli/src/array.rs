//! `nuce plan array`: decompose a `rows × cols` array into rectangles
//! proportional to speeds (\[KRW96\] and \[BBLRR01\] §3); JSON keys in `docs/cli.md`.

use std::path::{Path, PathBuf};

use nuce_plan::array2d::column::{acost_lower_bound, check_latency, rescaled};
use nuce_plan::array2d::cost::{acost, bcost, internal_edges, latency_cost, predicted_time};
use nuce_plan::array2d::registry::{decomposer_with_latency, names};
use nuce_plan::array2d::{ArrayDecomposer, ArrayPlan, Hierarchical};
use nuce_plan::{Error, Result};
use serde::Serialize;

use crate::output::outln;

/// Arguments of this subcommand.
#[derive(clap::Args)]
pub struct Args {
    /// Number of rows of the array.
    #[arg(long)]
    rows: usize,
    /// Number of columns of the array.
    #[arg(long)]
    cols: usize,
    /// Relative speeds, comma-separated (one part per speed, in this order),
    /// or `@FILE` (`@-`: standard input) holding them separated by commas,
    /// spaces or newlines.
    #[arg(long, allow_hyphen_values = true)]
    speeds: String,
    /// Algorithm: column, kl, slices, rb2, best, hier (needs --hosts), and
    /// (when built in) xy, xy2, tile, rb, rb3.
    #[arg(long, default_value = "best")]
    algo: String,
    /// Host id of each part, comma-separated (for --algo hier).
    #[arg(long)]
    hosts: Option<String>,
    /// Latency per internal edge, in cell-edge units ([KRW96] §5); used by
    /// `column` and `best`, and reported as `latency_cost`.
    #[arg(long, default_value_t = 0.0, allow_hyphen_values = true)]
    latency: f64,
    /// Print JSON instead of a table.
    #[arg(long)]
    json: bool,
    /// Also draw the tiling into this SVG file.
    #[arg(long)]
    svg: Option<PathBuf>,
}

/// One part of the JSON output.
#[derive(Serialize)]
struct PartOut {
    part: usize,
    speed: f64,
    row: usize,
    col: usize,
    rows: usize,
    cols: usize,
    area: usize,
}

/// The JSON output (documented in `docs/cli.md`).
#[derive(Serialize)]
struct Output {
    algorithm: String,
    rows: usize,
    cols: usize,
    acost: usize,
    bcost: usize,
    internal_edges: usize,
    latency: f64,
    latency_cost: f64,
    predicted_time: f64,
    imbalance: f64,
    lower_bound: f64,
    parts: Vec<PartOut>,
}

fn decomposer(args: &Args, p: usize) -> Result<Box<dyn ArrayDecomposer>> {
    if args.algo == "hier" {
        let hosts = args
            .hosts
            .as_deref()
            .ok_or_else(|| Error::InvalidInput("--algo hier needs --hosts".into()))?;
        let hosts: Vec<usize> = hosts
            .split(',')
            .map(|t| {
                t.trim()
                    .parse::<usize>()
                    .map_err(|_| Error::InvalidInput(format!("not a host id: {t:?}")))
            })
            .collect::<Result<_>>()?;
        if hosts.len() != p {
            return Err(Error::ShapeMismatch(format!(
                "{} host ids for {p} speeds",
                hosts.len()
            )));
        }
        return Ok(Box::new(Hierarchical::new(hosts)));
    }
    check_latency(args.latency)?;
    decomposer_with_latency(&args.algo, args.latency).map_err(|e| match e {
        Error::InvalidInput(_) => Error::InvalidInput(format!(
            "unknown algorithm {:?}; known: {}, hier",
            args.algo,
            names().join(", ")
        )),
        e => e,
    })
}

/// Runs the subcommand.
pub fn run(args: Args) -> Result<()> {
    let speeds = crate::parse_list(&args.speeds)?;
    nuce_plan::check_speeds(&speeds)?;
    let d = decomposer(&args, speeds.len())?;
    let what = format!("planning {} rectangles ({})", speeds.len(), args.algo);
    let plan = crate::output::planning(&what, || d.decompose(args.rows, args.cols, &speeds))?;
    let out = Output {
        algorithm: plan.algorithm.clone(),
        rows: plan.rows,
        cols: plan.cols,
        acost: acost(&plan),
        bcost: bcost(&plan),
        internal_edges: internal_edges(&plan),
        latency: args.latency,
        latency_cost: latency_cost(&plan, args.latency),
        predicted_time: predicted_time(&plan, &speeds, args.latency)?,
        imbalance: plan.imbalance(&rescaled(&speeds))?,
        lower_bound: acost_lower_bound(plan.rows, plan.cols, &speeds)?,
        parts: plan
            .parts
            .iter()
            .zip(&speeds)
            .enumerate()
            .map(|(i, (r, &s))| PartOut {
                part: i,
                speed: s,
                row: r.row,
                col: r.col,
                rows: r.rows,
                cols: r.cols,
                area: r.area(),
            })
            .collect(),
    };
    crate::output::check_numbers(&out)?;
    if let Some(path) = &args.svg {
        draw_svg(path, &plan, &speeds, &out)?;
    }
    if args.json {
        return crate::output::print_json(&out);
    }
    outln!(
        "{} on {}x{}: acost {}  bcost {}  internal edges {}  latency cost {:.1} (L = {})",
        out.algorithm,
        out.rows,
        out.cols,
        out.acost,
        out.bcost,
        out.internal_edges,
        out.latency_cost,
        out.latency,
    )?;
    outln!(
        "predicted time {:.1}  imbalance {:.4}  acost lower bound {:.1}",
        out.predicted_time,
        out.imbalance,
        out.lower_bound
    )?;
    outln!(
        "{:>5} {:>10} {:>7} {:>7} {:>7} {:>7} {:>10}",
        "part",
        "speed",
        "row",
        "col",
        "rows",
        "cols",
        "area"
    )?;
    for p in &out.parts {
        outln!(
            "{:>5} {:>10} {:>7} {:>7} {:>7} {:>7} {:>10}",
            p.part,
            p.speed,
            p.row,
            p.col,
            p.rows,
            p.cols,
            p.area
        )?;
    }
    Ok(())
}

/// Draws the tiling: one labelled rectangle per part, costs in the caption.
fn draw_svg(path: &Path, plan: &ArrayPlan, speeds: &[f64], out: &Output) -> Result<()> {
    use plotters::prelude::*;
    use plotters::style::text_anchor::{HPos, Pos, VPos};
    let err = |e: String| Error::Io(format!("{}: {e}", path.display()));
    let (max_w, max_h) = (900.0, 700.0);
    let scale = (max_w / plan.cols as f64).min(max_h / plan.rows as f64);
    let (w, h) = (
        (plan.cols as f64 * scale).ceil().max(200.0) as u32,
        (plan.rows as f64 * scale).ceil().max(50.0) as u32,
    );
    let caption = format!(
        "{} {}x{}  Acost {} (bound {:.0})  Bcost {}  edges {}  latency cost {:.0}  imbalance {:.3}",
        out.algorithm,
        plan.rows,
        plan.cols,
        out.acost,
        out.lower_bound,
        out.bcost,
        out.internal_edges,
        out.latency_cost,
        out.imbalance
    );
    crate::output::svg(path, (w + 20, h + 60), |root| {
        root.fill(&WHITE).map_err(|e| err(e.to_string()))?;
        let body = root
            .titled(&caption, ("sans-serif", 16))
            .map_err(|e| err(e.to_string()))?
            .margin(5, 5, 10, 10);
        let px = |v: usize| (v as f64 * scale).round() as i32;
        for (i, (r, s)) in plan.parts.iter().zip(speeds).enumerate() {
            if r.is_empty() {
                continue;
            }
            let (x0, y0, x1, y1) = (px(r.col), px(r.row), px(r.col_end()), px(r.row_end()));
            let color = Palette99::pick(i).mix(0.45);
            body.draw(&Rectangle::new([(x0, y0), (x1, y1)], color.filled()))
                .and_then(|_| {
                    body.draw(&Rectangle::new([(x0, y0), (x1, y1)], BLACK.stroke_width(1)))
                })
                .map_err(|e| err(e.to_string()))?;
            // Label only rectangles large enough to hold it.
            if x1 - x0 >= 40 && y1 - y0 >= 14 {
                let style = ("sans-serif", 12)
                    .into_font()
                    .into_text_style(&body)
                    .pos(Pos::new(HPos::Center, VPos::Center));
                body.draw(&Text::new(
                    format!("{i}: {s}"),
                    ((x0 + x1) / 2, (y0 + y1) / 2),
                    style,
                ))
                .map_err(|e| err(e.to_string()))?;
            }
        }
        Ok(())
    })
}
