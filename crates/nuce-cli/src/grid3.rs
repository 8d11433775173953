//! `nuce plan grid3`: decompose an `nx × ny × nz` grid into boxes
//! proportional to speeds (`nuce_plan::array3d`); JSON keys in `docs/cli.md`.

use std::path::{Path, PathBuf};

use nuce_plan::array3d::{
    decomposer3_by_name, predicted_time3, surface_lower_bound, GridPlan3, Rectilinear3, Stencil,
    NAMES3,
};
use nuce_plan::{Error, Result};
use serde::Serialize;

use crate::output::outln;

/// Arguments of this subcommand.
#[derive(clap::Args)]
pub struct Args {
    /// Cells along x.
    #[arg(long)]
    nx: usize,
    /// Cells along y.
    #[arg(long)]
    ny: usize,
    /// Cells along z.
    #[arg(long)]
    nz: usize,
    /// Relative speeds, comma-separated (one part per speed, in this order),
    /// or `@FILE` (`@-`: standard input) holding them separated by commas,
    /// spaces or newlines.
    #[arg(long, allow_hyphen_values = true)]
    speeds: String,
    /// Algorithm: column, pencils, rb, rectilinear, slabs, guillotine
    /// (small grids only) or best.
    #[arg(long, default_value = "best")]
    algo: String,
    /// Stencil whose halo is counted: 7 (faces) or 27 (faces, edges, corners).
    #[arg(long, default_value_t = 7)]
    stencil: usize,
    /// Ghost width (halo layers) of the stencil.
    #[arg(long, default_value_t = 1)]
    ghost: usize,
    /// Print JSON instead of a table.
    #[arg(long)]
    json: bool,
    /// Also draw the planes x = 0, y = 0 and z = 0 coloured by owner into this SVG file.
    #[arg(long)]
    svg: Option<PathBuf>,
}

/// One part of the JSON output.
#[derive(Serialize)]
struct PartOut {
    part: usize,
    speed: f64,
    x: usize,
    y: usize,
    z: usize,
    nx: usize,
    ny: usize,
    nz: usize,
    volume: usize,
    halo: usize,
    neighbours: Vec<usize>,
}

/// PETSc-style ownership ranges of a tensor plan (`--algo rectilinear`).
#[derive(Serialize)]
struct RangesOut {
    procs: [usize; 3],
    lx: Vec<usize>,
    ly: Vec<usize>,
    lz: Vec<usize>,
    slot_owner: Vec<usize>,
}

/// The JSON output (documented in `docs/cli.md`).
#[derive(Serialize)]
struct Output {
    algorithm: String,
    nx: usize,
    ny: usize,
    nz: usize,
    stencil: usize,
    ghost: usize,
    internal_surface: usize,
    lower_bound: f64,
    surface_ratio: f64,
    predicted_time: f64,
    imbalance: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    ranges: Option<RangesOut>,
    parts: Vec<PartOut>,
}

/// Runs the subcommand.
pub fn run(args: Args) -> Result<()> {
    let speeds = crate::parse_list(&args.speeds)?;
    nuce_plan::check_speeds(&speeds)?;
    let stencil = Stencil::from_points(args.stencil, args.ghost)?;
    let shape = (args.nx, args.ny, args.nz);
    let d = decomposer3_by_name(&args.algo, stencil).map_err(|e| match e {
        Error::InvalidInput(_) if !NAMES3.contains(&args.algo.as_str()) => {
            Error::InvalidInput(format!(
                "unknown algorithm {:?}; known: {}",
                args.algo,
                NAMES3.join(", ")
            ))
        }
        e => e,
    })?;
    let what = format!("planning {} boxes ({})", speeds.len(), args.algo);
    let (plan, ranges) = crate::output::planning(&what, || -> Result<_> {
        Ok(if args.algo == "rectilinear" {
            let (fit, plan) = Rectilinear3.fit(shape, &speeds)?;
            let [lx, ly, lz] = fit.ranges;
            let ranges = RangesOut {
                procs: fit.procs,
                lx,
                ly,
                lz,
                slot_owner: fit.slot_owner,
            };
            (plan, Some(ranges))
        } else {
            (d.decompose(shape, &speeds)?, None)
        })
    })?;
    let volumes: Vec<f64> = plan.volumes().iter().map(|&v| v as f64).collect();
    let lower_bound = surface_lower_bound(shape, &volumes)?;
    let surface = plan.internal_surface();
    let mut neighbours = plan.neighbour_lists(stencil);
    let out = Output {
        algorithm: plan.algorithm.clone(),
        nx: args.nx,
        ny: args.ny,
        nz: args.nz,
        stencil: stencil.points(),
        ghost: stencil.ghost,
        internal_surface: surface,
        lower_bound,
        // A plan without internal faces (one part) has bound 0 too.
        surface_ratio: if lower_bound > 0.0 {
            surface as f64 / lower_bound
        } else {
            1.0
        },
        predicted_time: predicted_time3(&plan, &speeds, stencil)?,
        imbalance: plan.imbalance(&speeds)?,
        ranges,
        parts: plan
            .boxes
            .iter()
            .zip(&speeds)
            .enumerate()
            .map(|(i, (b, &s))| PartOut {
                part: i,
                speed: s,
                x: b.x,
                y: b.y,
                z: b.z,
                nx: b.nx,
                ny: b.ny,
                nz: b.nz,
                volume: b.volume(),
                halo: plan.halo_cells(i, stencil),
                neighbours: std::mem::take(&mut neighbours[i]),
            })
            .collect(),
    };
    crate::output::check_numbers(&out)?;
    if let Some(path) = &args.svg {
        draw_svg(path, &plan, &out)?;
    }
    if args.json {
        return crate::output::print_json(&out);
    }
    outln!(
        "{} on {}x{}x{}: internal surface {} (bound {:.1}, ratio {:.3})  predicted time {:.1} ({}-point, ghost {})  imbalance {:.4}",
        out.algorithm,
        out.nx,
        out.ny,
        out.nz,
        out.internal_surface,
        out.lower_bound,
        out.surface_ratio,
        out.predicted_time,
        out.stencil,
        out.ghost,
        out.imbalance
    )?;
    outln!(
        "{:>5} {:>10} {:>6} {:>6} {:>6} {:>6} {:>6} {:>6} {:>10} {:>8} {:>6}",
        "part",
        "speed",
        "x",
        "y",
        "z",
        "nx",
        "ny",
        "nz",
        "volume",
        "halo",
        "nbrs"
    )?;
    for p in &out.parts {
        outln!(
            "{:>5} {:>10} {:>6} {:>6} {:>6} {:>6} {:>6} {:>6} {:>10} {:>8} {:>6}",
            p.part,
            p.speed,
            p.x,
            p.y,
            p.z,
            p.nx,
            p.ny,
            p.nz,
            p.volume,
            p.halo,
            p.neighbours.len()
        )?;
    }
    Ok(())
}

/// Draws the three boundary planes x = 0 (y across, z down), y = 0 (x
/// across, z down) and z = 0 (x across, y down) side by side, each box
/// touching a plane drawn as the rectangle it shows there, coloured by owner.
fn draw_svg(path: &Path, plan: &GridPlan3, out: &Output) -> Result<()> {
    use plotters::prelude::*;
    let err = |e: String| Error::Io(format!("{}: {e}", path.display()));
    let (nx, ny, nz) = plan.shape;
    // (normal axis, across axis, down axis) of each panel.
    let panels = [(0usize, 1usize, 2usize), (1, 0, 2), (2, 0, 1)];
    let ext = [nx, ny, nz];
    let cell = panels
        .iter()
        .map(|&(_, a, d)| (300.0 / ext[a] as f64).min(500.0 / ext[d] as f64))
        .fold(f64::INFINITY, f64::min);
    let px = |v: usize| (v as f64 * cell).round() as i32;
    let width: i32 = panels.iter().map(|&(_, a, _)| px(ext[a]) + 20).sum();
    let height = panels
        .iter()
        .map(|&(_, _, d)| px(ext[d]))
        .max()
        .unwrap_or(0);
    let caption = format!(
        "{} {nx}x{ny}x{nz}  surface {} (bound {:.0})  predicted time {:.0}  imbalance {:.3}  | planes x=0, y=0, z=0",
        out.algorithm, out.internal_surface, out.lower_bound, out.predicted_time, out.imbalance
    );
    let size = ((width + 20).max(400) as u32, (height + 70).max(100) as u32);
    crate::output::svg(path, size, |root| {
        root.fill(&WHITE).map_err(|e| err(e.to_string()))?;
        let body = root
            .titled(&caption, ("sans-serif", 14))
            .map_err(|e| err(e.to_string()))?
            .margin(5, 5, 10, 10);
        let mut left = 0;
        for &(normal, a, d) in &panels {
            for (i, b) in plan.boxes.iter().enumerate() {
                if b.is_empty() || b.lo(normal) != 0 {
                    continue;
                }
                let (x0, y0) = (left + px(b.lo(a)), px(b.lo(d)));
                let (x1, y1) = (left + px(b.hi(a)), px(b.hi(d)));
                let color = Palette99::pick(i).mix(0.5);
                body.draw(&Rectangle::new([(x0, y0), (x1, y1)], color.filled()))
                    .and_then(|_| {
                        body.draw(&Rectangle::new([(x0, y0), (x1, y1)], BLACK.stroke_width(1)))
                    })
                    .map_err(|e| err(e.to_string()))?;
                if x1 - x0 >= 24 && y1 - y0 >= 14 {
                    body.draw(&Text::new(
                        format!("{i}"),
                        (x0 + 3, y0 + 3),
                        ("sans-serif", 11).into_font(),
                    ))
                    .map_err(|e| err(e.to_string()))?;
                }
            }
            left += px(ext[a]) + 20;
        }
        Ok(())
    })
}
