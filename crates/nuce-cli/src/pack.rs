//! `nuce plan pack`: AMR processor allocation by 2D packing
//! (\[VH94\] §4). JSON keys are documented in
//! `docs/cli-pack.md`.

use nuce_plan::packing::gray::HypercubeAllocator;
use nuce_plan::packing::{
    Grid, LevelPacking, Mesh, Packer, PackingOrder, Scaling, SubmeshAllocator, TightPacking,
};
use nuce_plan::{Error, Result};
use plotters::prelude::*;
use serde::Serialize;

use crate::output::outln;

/// Arguments of this subcommand.
#[derive(clap::Args)]
pub struct Args {
    /// Grids as `WxH` list, e.g. `30x20,15x40`.
    #[arg(long)]
    grids: String,
    /// Processor mesh `PxQ` (P processors along x, Q along y).
    #[arg(long, conflicts_with = "cube", required_unless_present = "cube")]
    mesh: Option<String>,
    /// Instead of a mesh: a hypercube of dimension D (2^D processors); every
    /// mesh shape it embeds by Gray codes is tried (§4.4).
    #[arg(long)]
    cube: Option<u32>,
    /// Packing heuristic: `tp` (tight packing) or `lp` (level packing).
    #[arg(long, default_value = "tp")]
    algo: String,
    /// TP packing order: `area`, `max`, `min` or `ratio`.
    #[arg(long, default_value = "area")]
    order: String,
    /// Use the modified TP's orientation rule (Theorems 3–4).
    #[arg(long)]
    modified: bool,
    /// `nonuniform` or `uniform` scaling of the packing onto the mesh.
    #[arg(long, default_value = "nonuniform")]
    scaling: String,
    /// Print JSON.
    #[arg(long)]
    json: bool,
    /// Draw the packing into this SVG file.
    #[arg(long)]
    svg: Option<String>,
}

fn parse_pair(s: &str, what: &str) -> Result<(u64, u64)> {
    let bad = || Error::InvalidInput(format!("{what} must look like AxB, got {s:?}"));
    let (a, b) = s.trim().split_once(['x', 'X']).ok_or_else(bad)?;
    Ok((
        a.trim().parse().map_err(|_| bad())?,
        b.trim().parse().map_err(|_| bad())?,
    ))
}

#[derive(Serialize)]
struct SubmeshOut {
    row: usize,
    col: usize,
    rows: usize,
    cols: usize,
}

#[derive(Serialize)]
struct Out<'a> {
    algo: &'a str,
    order: &'a str,
    scaling: &'a str,
    mesh: Mesh,
    width: u64,
    height: u64,
    min_side: u64,
    placements: &'a [nuce_plan::packing::Placement],
    submeshes: Vec<SubmeshOut>,
    utilization: f64,
    cost: nuce_plan::packing::AmrCost,
    #[serde(skip_serializing_if = "Option::is_none")]
    cube: Option<CubeOut>,
}

#[derive(Serialize)]
struct CubeOut {
    dim: u32,
    da: u32,
    db: u32,
    nodes: Vec<Vec<u64>>,
}

fn parse_mesh(s: &str) -> Result<Mesh> {
    let (p, q) = parse_pair(s, "--mesh")?;
    let too_large = || Error::InvalidInput("mesh too large (over 2^24 processors)".into());
    let mesh = Mesh::new(
        usize::try_from(p).map_err(|_| too_large())?,
        usize::try_from(q).map_err(|_| too_large())?,
    )?;
    if mesh.p.checked_mul(mesh.q).is_none_or(|n| n > 1 << 24) {
        return Err(too_large());
    }
    Ok(mesh)
}

/// Runs the subcommand.
pub fn run(args: Args) -> Result<()> {
    let grids: Vec<Grid> = args
        .grids
        .split(',')
        .map(|t| parse_pair(t, "a grid").map(|(w, h)| Grid::new(w, h)))
        .collect::<Result<_>>()?;
    let order = PackingOrder::parse(&args.order)?;
    let scaling = Scaling::parse(&args.scaling)?;
    let packer: Box<dyn Packer> = match args.algo.as_str() {
        "tp" => Box::new(TightPacking {
            order,
            modified: args.modified,
            ..TightPacking::default()
        }),
        "lp" => Box::new(LevelPacking::default()),
        other => {
            return Err(Error::InvalidInput(format!(
                "unknown --algo {other:?} (tp|lp)"
            )))
        }
    };
    let allocator = SubmeshAllocator::new(packer, scaling);
    let (alloc, cube) = match (&args.mesh, args.cube) {
        (Some(m), _) => (allocator.allocate(&grids, parse_mesh(m)?)?, None),
        (None, Some(dim)) => {
            let h = HypercubeAllocator { mesh: allocator }.allocate(&grids, dim)?;
            let cube = CubeOut {
                dim,
                da: h.da,
                db: h.db,
                nodes: h.nodes,
            };
            (h.allocation, Some(cube))
        }
        (None, None) => return Err(Error::InvalidInput("give --mesh or --cube".into())),
    };
    let mesh = alloc.mesh;
    if let Some(path) = &args.svg {
        draw_svg(path, &grids, &alloc)?;
    }
    let out = Out {
        algo: &args.algo,
        order: order.name(),
        scaling: scaling.name(),
        mesh,
        width: alloc.packing.width,
        height: alloc.packing.height,
        min_side: alloc.min_side,
        placements: &alloc.packing.placements,
        submeshes: alloc
            .submeshes
            .iter()
            .map(|r| SubmeshOut {
                row: r.row,
                col: r.col,
                rows: r.rows,
                cols: r.cols,
            })
            .collect(),
        utilization: alloc.utilization,
        cost: alloc.cost,
        cube,
    };
    crate::output::check_numbers(&out)?;
    if args.json {
        return crate::output::print_json(&out);
    }
    outln!(
        "{} packing {}x{} (min side {}), mesh {}x{}, utilization {:.1}%, cost comp {:.1} comm {:.1} total {:.1}",
        out.algo,
        out.width,
        out.height,
        out.min_side,
        mesh.p,
        mesh.q,
        100.0 * out.utilization,
        out.cost.comp,
        out.cost.comm,
        out.cost.total
    )?;
    outln!("grid        at (x,y)     rot  submesh rows x cols @ (row,col)")?;
    for (i, (pl, s)) in out.placements.iter().zip(&out.submeshes).enumerate() {
        outln!(
            "{:>4} {:>5}x{:<5} ({:>5},{:>5}) {:>4}  {:>3} x {:<3} @ ({},{})",
            i,
            grids[i].w,
            grids[i].h,
            pl.x,
            pl.y,
            pl.rotated,
            s.rows,
            s.cols,
            s.row,
            s.col
        )?;
    }
    Ok(())
}

/// Most processor-mesh lines drawn (`P + Q`); a larger mesh is drawn
/// without them.
const MAX_MESH_LINES: usize = 2048;

/// Draws the packing (grids numbered in input order) and the mesh lines.
fn draw_svg(path: &str, grids: &[Grid], alloc: &nuce_plan::packing::Allocation) -> Result<()> {
    let pk = &alloc.packing;
    let (w, h) = (pk.width.max(1) as f64, pk.height.max(1) as f64);
    let px = 800.0;
    let scale = px / w.max(h);
    let (iw, ih) = ((w * scale) as u32 + 20, (h * scale) as u32 + 20);
    let io = |e: &dyn std::fmt::Display| Error::Io(e.to_string());
    crate::output::svg(std::path::Path::new(path), (iw, ih), |root| {
        root.fill(&WHITE).map_err(|e| io(&e))?;
        let to = |x: f64, y: f64| (10 + (x * scale) as i32, ih as i32 - 10 - (y * scale) as i32);
        // Mesh lines: processor boundaries mapped back into packing
        // coordinates (not for meshes of more than MAX_MESH_LINES lines,
        // which would only fill the picture and the file).
        let (mp, mq) = (alloc.mesh.p as f64, alloc.mesh.q as f64);
        let lines = alloc.mesh.p.saturating_add(alloc.mesh.q);
        let (cols, rows) = if lines <= MAX_MESH_LINES {
            (alloc.mesh.p, alloc.mesh.q)
        } else {
            (0, 0)
        };
        for c in 0..=cols {
            let x = c as f64 * w / mp;
            root.draw(&PathElement::new(
                vec![to(x, 0.0), to(x, h)],
                RGBColor(220, 220, 220),
            ))
            .map_err(|e| io(&e))?;
        }
        for r in 0..=rows {
            let y = r as f64 * h / mq;
            root.draw(&PathElement::new(
                vec![to(0.0, y), to(w, y)],
                RGBColor(220, 220, 220),
            ))
            .map_err(|e| io(&e))?;
        }
        let padded: Vec<Grid> = grids
            .iter()
            .map(|g| Grid::new(g.w.max(alloc.min_side), g.h.max(alloc.min_side)))
            .collect();
        for i in 0..grids.len() {
            let Some((x0, y0, x1, y1)) = pk.rect_of(&padded, i) else {
                continue;
            };
            let color = Palette99::pick(i).mix(0.6);
            let (a, b) = (to(x0 as f64, y1 as f64), to(x1 as f64, y0 as f64));
            root.draw(&Rectangle::new([a, b], color.filled()))
                .map_err(|e| io(&e))?;
            root.draw(&Rectangle::new([a, b], BLACK.stroke_width(1)))
                .map_err(|e| io(&e))?;
            root.draw(&Text::new(
                format!("{i}"),
                ((a.0 + b.0) / 2, (a.1 + b.1) / 2),
                ("sans-serif", 14),
            ))
            .map_err(|e| io(&e))?;
        }
        Ok(())
    })
}
