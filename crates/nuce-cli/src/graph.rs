//! `nuce plan graph`: partition an unstructured graph or mesh in proportion to
//! speeds (\[KOR95\]), print its metrics, optionally write the METIS `.part`
//! file and an SVG drawing.

use std::time::Instant;

use nuce_plan::graph::{
    best_partition, io, metrics, Algo, FmRefiner, Graph, Grouping, Multilevel, Partition,
    Repartitioner,
};
use nuce_plan::{Error, Result};
use serde::Serialize;

use crate::output::outln;

/// Arguments of `nuce plan graph` (boxed: they are many).
#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    inner: Box<Inner>,
}

/// The options themselves.
#[derive(clap::Args)]
struct Inner {
    /// METIS graph file.
    #[arg(long, conflicts_with = "mesh")]
    graph: Option<String>,
    /// Coordinates file (one vertex per line) for --graph.
    #[arg(long, requires = "graph")]
    coords: Option<String>,
    /// Mesh file: gmsh MSH 2.2 ASCII (.msh) or Medit (.mesh).
    #[arg(long)]
    mesh: Option<String>,
    /// Partition the dual graph of the mesh (elements) instead of its nodes.
    #[arg(long, requires = "mesh")]
    dual: bool,
    /// Comma-separated speeds, one per part, or `@FILE` (`@-`: standard
    /// input) holding them separated by commas, spaces or newlines.
    #[arg(long)]
    speeds: String,
    /// rcb, zci, hci, rsb, rsbkl, rsbi, rcbi, multilevel (ml), or best
    /// (multilevel, rcb, rsbkl and, up to 50 000 vertices, rsb, refined;
    /// those within the tolerance first,
    /// then the least cut; when none is within it, the least imbalance, then
    /// the least cut).
    #[arg(long, default_value = "hci")]
    algo: String,
    /// Refine the partition with k-way Fiduccia–Mattheyses.
    #[arg(long)]
    refine: bool,
    /// Balance tolerance of the refinement (0.03 = 3 %).
    #[arg(long, default_value_t = 0.03)]
    tolerance: f64,
    /// Processor grouping at each bisection: simple or binpacking.
    #[arg(long, default_value = "simple")]
    grouping: String,
    /// Repartition from this partition (METIS .part file, one part per
    /// vertex) for the new --speeds, trading edge cut against moved vertices
    /// (migration-aware repartitioning; --algo is ignored).
    #[arg(long)]
    repartition: Option<String>,
    /// With --repartition: cost of a cut edge relative to moving one vertex
    /// (ParMETIS's itr; the objective is itr · cut + moved).
    #[arg(long, default_value_t = 1000.0, requires = "repartition")]
    itr: f64,
    /// Print JSON.
    #[arg(long)]
    json: bool,
    /// Write one part id per vertex line (METIS .part format).
    #[arg(long)]
    out: Option<String>,
    /// Draw the partition (2D coordinates) as SVG.
    #[arg(long)]
    svg: Option<String>,
}

#[derive(Serialize)]
struct Report {
    algo: String,
    grouping: Grouping,
    refined: bool,
    vertices: usize,
    edges: usize,
    edge_cut: f64,
    cut_edges: usize,
    setups: usize,
    imbalance: f64,
    /// `best` only: whether the winner meets the tolerance (false: no
    /// candidate did, the least imbalance was chosen).
    #[serde(skip_serializing_if = "Option::is_none")]
    tolerance_met: Option<bool>,
    /// `--repartition` only: vertices whose part changed.
    #[serde(skip_serializing_if = "Option::is_none")]
    moved: Option<usize>,
    part_weights: Vec<f64>,
    target_weights: Vec<f64>,
    seconds: f64,
}

fn read(path: &str) -> Result<String> {
    std::fs::read_to_string(path).map_err(|e| Error::Io(format!("{path}: {e}")))
}

/// Loads the graph named by the arguments.
fn load(a: &Inner) -> Result<Graph> {
    match (&a.graph, &a.mesh) {
        (Some(gf), None) => {
            let g = io::parse_metis(&read(gf)?, gf)?;
            match &a.coords {
                Some(cf) => {
                    let (dim, data) = io::parse_coords(&read(cf)?, cf, g.n())?;
                    g.with_coords(dim, data)
                }
                None => Ok(g),
            }
        }
        (None, Some(mf)) => {
            let mesh = io::parse_mesh(&read(mf)?, mf)?;
            if a.dual {
                mesh.dual_graph(None)
            } else {
                Ok(mesh.nodal_graph()?.0)
            }
        }
        _ => Err(Error::InvalidInput(
            "give --graph FILE [--coords FILE] or --mesh FILE".into(),
        )),
    }
}

/// Runs the subcommand.
pub fn run(a: Args) -> Result<()> {
    let a = *a.inner;
    let speeds = crate::parse_list(&a.speeds)?;
    nuce_plan::check_speeds(&speeds)?;
    let grouping = match a.grouping.as_str() {
        "simple" => Grouping::Simple,
        "binpacking" => Grouping::Binpacking,
        g => return Err(Error::InvalidInput(format!("unknown grouping {g:?}"))),
    };
    if !(a.tolerance.is_finite() && a.tolerance >= 0.0) {
        return Err(Error::InvalidInput("tolerance must be >= 0".into()));
    }
    let g = load(&a)?;
    let refiner = FmRefiner {
        tolerance: a.tolerance,
        ..FmRefiner::default()
    };
    let t0 = Instant::now();
    let mut moved = None;
    let what = format!(
        "partitioning {} vertices into {} parts",
        g.n(),
        speeds.len()
    );
    let planned = crate::output::planning(&what, || -> Result<_> {
        Ok(if let Some(file) = &a.repartition {
            let current = io::parse_partition(&read(file)?, file, g.n(), speeds.len())?;
            let rp = Repartitioner {
                itr: a.itr,
                multilevel: Multilevel {
                    tolerance: a.tolerance,
                    ..Multilevel::default()
                },
                ..Repartitioner::default()
            };
            let r = rp.repartition(&g, &current, &speeds, None)?;
            moved = Some(r.moved_vertices);
            let name = format!("repartition:{:?}", r.method).to_lowercase();
            (name, r.partition, None)
        } else if a.algo == "best" {
            let b = best_partition(&g, &speeds, grouping, refiner)?;
            (
                format!("best:{}", b.algo.name()),
                b.partition,
                Some(b.met_tolerance),
            )
        } else {
            let algo = Algo::from_name(&a.algo)
                .ok_or_else(|| Error::InvalidInput(format!("unknown algorithm {:?}", a.algo)))?;
            let p = algo.partition(&g, &speeds, grouping, a.refine.then_some(refiner))?;
            (algo.name().to_string(), p, None)
        })
    })?;
    let (name, p, tolerance_met) = planned;
    let seconds = t0.elapsed().as_secs_f64();
    let m = metrics(&g, &p, &speeds)?;
    if let Some(out) = &a.out {
        crate::output::write_file(out.as_ref(), io::write_partition(&p).as_bytes())?;
    }
    if let Some(svg) = &a.svg {
        draw(&g, &p, svg)?;
    }
    let r = Report {
        algo: name,
        grouping,
        refined: a.refine || a.algo == "best",
        vertices: g.n(),
        edges: g.num_edges(),
        edge_cut: m.edge_cut,
        cut_edges: m.cut_edges,
        setups: m.setups,
        imbalance: m.imbalance,
        tolerance_met,
        moved,
        part_weights: m.part_weights,
        target_weights: m.target_weights,
        seconds,
    };
    crate::output::check_numbers(&r)?;
    if a.json {
        crate::output::print_json(&r)
    } else {
        outln!(
            "{} ({:?}{}): {} vertices, {} edges; edge cut {}, setups {}, imbalance {:.2} %, {:.3} s",
            r.algo,
            r.grouping,
            if r.refined { ", refined" } else { "" },
            r.vertices,
            r.edges,
            r.edge_cut,
            r.setups,
            100.0 * r.imbalance,
            r.seconds
        )?;
        if let Some(m) = r.moved {
            outln!("{m} vertices changed part")?;
        }
        if r.tolerance_met == Some(false) {
            outln!(
                "no candidate meets the tolerance {}: the least imbalance (then cut) was chosen",
                a.tolerance
            )?;
        }
        Ok(())
    }
}

/// Draws vertices coloured by part, cut edges in grey (2D coordinates).
fn draw(g: &Graph, p: &Partition, path: &str) -> Result<()> {
    use plotters::prelude::*;
    let c = g.require_coords("--svg")?;
    if c.dim < 2 {
        return Err(Error::InvalidInput("--svg needs 2D coordinates".into()));
    }
    let (mut x0, mut x1, mut y0, mut y1) = (
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::INFINITY,
        f64::NEG_INFINITY,
    );
    for v in 0..g.n() {
        let q = c.of(v);
        x0 = x0.min(q[0]);
        x1 = x1.max(q[0]);
        y0 = y0.min(q[1]);
        y1 = y1.max(q[1]);
    }
    let pad = 0.02 * (x1 - x0).max(y1 - y0).max(1e-9);
    let io_err = |e: String| Error::Io(format!("{path}: {e}"));
    crate::output::svg(std::path::Path::new(path), (900, 900), |root| {
        root.fill(&WHITE).map_err(|e| io_err(e.to_string()))?;
        let mut chart = ChartBuilder::on(root)
            .margin(10)
            .build_cartesian_2d(x0 - pad..x1 + pad, y0 - pad..y1 + pad)
            .map_err(|e| io_err(e.to_string()))?;
        let colour = |k: usize| Palette99::pick(k).to_rgba();
        for v in 0..g.n() {
            for &u in g.neighbors(v) {
                if u > v {
                    let style = if p.parts[u] == p.parts[v] {
                        colour(p.parts[v]).stroke_width(1)
                    } else {
                        BLACK.mix(0.6).stroke_width(2)
                    };
                    let seg = vec![(c.of(v)[0], c.of(v)[1]), (c.of(u)[0], c.of(u)[1])];
                    chart
                        .draw_series(std::iter::once(PathElement::new(seg, style)))
                        .map_err(|e| io_err(e.to_string()))?;
                }
            }
        }
        chart
            .draw_series(
                (0..g.n())
                    .map(|v| Circle::new((c.of(v)[0], c.of(v)[1]), 2, colour(p.parts[v]).filled())),
            )
            .map_err(|e| io_err(e.to_string()))?;
        Ok(())
    })
}
