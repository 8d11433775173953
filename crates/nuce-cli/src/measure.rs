//! `nuce measure`: runs a built-in kernel and prints the speed and topology.
//!
//! Under `mpirun` each process reports its own rank (from
//! `OMPI_COMM_WORLD_RANK` / `PMIX_RANK`), so
//! `mpirun -np 3 scripts/bind_ranks.sh target/release/nuce measure --json`
//! shows the measured effect of a binding without any MPI call.
//!
//! `nuce measure --sweep` measures the stencil's speed against the block
//! size instead (issue 19): from blocks inside L1 to blocks beyond L3 (cache
//! sizes from hwloc), as a table, JSON or an SVG plot (`--svg FILE`).

use std::path::PathBuf;
use std::time::Duration;

use nuce::speed::{
    measure_sweep, topology, try_measure_kernel, Kernel, KernelConfig, SpeedRecord, SweepPoint,
    Topology,
};
use nuce_plan::fpm::{default_sweep_sizes, MAX_SWEEP_CELLS, MIN_SWEEP_CELLS};
use serde::Serialize;

use crate::output::outln;

/// Arguments of this subcommand.
#[derive(clap::Args)]
pub struct Args {
    /// Kernel: `stencil` (cache-resident) or `memory` (memory-bound).
    #[arg(long, default_value = "stencil", value_parser = parse_kernel)]
    kernel: Kernel,
    /// Timed samples (the speed is their median), 1 to 100 000.
    #[arg(long, default_value_t = 7, value_parser = bounded("--repeats", 1, MAX_SAMPLES))]
    repeats: usize,
    /// Untimed warm-up samples, 0 to 100 000.
    #[arg(long, default_value_t = 1, value_parser = bounded("--warmup", 0, MAX_SAMPLES))]
    warmup: usize,
    /// Minimum duration of one sample, in milliseconds.
    #[arg(long, default_value_t = 10)]
    min_ms: u64,
    /// Emulated slowness: really do this many times the reported work.
    #[arg(long, default_value_t = 1.0)]
    multiplier: f64,
    /// Print the speed record (with `--sweep`: the sweep) as JSON.
    #[arg(long)]
    json: bool,
    /// Measure the 5-point stencil's speed against the block size (the
    /// `--kernel` is not used): one line per block size.
    #[arg(long)]
    sweep: bool,
    /// With `--sweep`: the block sizes in cells, comma-separated (1 to 64
    /// sizes of 16 to 67 108 864 cells); default: powers of two from 256
    /// cells to four times the largest cache.
    #[arg(long, requires = "sweep", value_delimiter = ',',
          value_parser = bounded("--sizes", MIN_SWEEP_CELLS, MAX_SWEEP_CELLS))]
    sizes: Vec<usize>,
    /// With `--sweep`: also plot speed against block size into this SVG file.
    #[arg(long, requires = "sweep")]
    svg: Option<PathBuf>,
}

/// Most samples one run may take (each lasts at least `--min-ms`): a bound,
/// so that a mistyped count is a clear error, not an allocation of terabytes.
const MAX_SAMPLES: usize = 100_000;

/// A parser of a whole number in `lo..=hi` for the option `name`.
fn bounded(
    name: &'static str,
    lo: usize,
    hi: usize,
) -> impl Fn(&str) -> Result<usize, String> + Clone {
    move |s: &str| {
        let v: usize = s
            .trim()
            .parse()
            .map_err(|_| format!("{name} takes a whole number, not {s:?}"))?;
        if (lo..=hi).contains(&v) {
            Ok(v)
        } else {
            Err(format!("{name} must be between {lo} and {hi}, not {v}"))
        }
    }
}

fn parse_kernel(s: &str) -> Result<Kernel, String> {
    s.parse().map_err(|e: nuce::Error| e.to_string())
}

/// The MPI rank given by the launcher's environment, or 0.
fn launcher_rank() -> i32 {
    ["OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK"]
        .iter()
        .find_map(|v| std::env::var(v).ok()?.trim().parse().ok())
        .unwrap_or(0)
}

/// Runs the subcommand.
pub fn run(args: Args) -> nuce_plan::Result<()> {
    let cfg = KernelConfig {
        kernel: args.kernel,
        warmup: args.warmup,
        repeats: args.repeats,
        min_time: Duration::from_millis(args.min_ms),
        work_multiplier: args.multiplier,
    };
    if args.sweep {
        return sweep(&args, &cfg);
    }
    let m = try_measure_kernel(&cfg).map_err(planning_error)?;
    let rec = SpeedRecord::from_kernel(launcher_rank(), m, topology());
    if args.json {
        return crate::output::print_json_unchecked(&rec);
    }
    let t = &rec.topology;
    let kib = |b: Option<u64>| b.map_or("?".to_string(), |b| format!("{} KiB", b / 1024));
    let k = rec.kernel.as_ref();
    outln!(
        "rank {} on {}: {} kernel {:.4e} cell updates/s (median of {}, min {:.4e}, max {:.4e}, spread {:.1} %)",
        rec.rank,
        t.host,
        args.kernel,
        rec.speed,
        k.map_or(0, |k| k.samples.len()),
        k.map_or(0.0, |k| k.min),
        k.map_or(0.0, |k| k.max),
        100.0 * k.map_or(0.0, |k| k.relative_spread()),
    )?;
    outln!(
        "  cores {} PUs {} bound to {:?}; L1 {} L2 {} L3 {}",
        t.cores,
        t.pus,
        t.binding,
        kib(t.l1_bytes),
        kib(t.l2_bytes),
        kib(t.l3_bytes)
    )?;
    Ok(())
}

/// The planner's error of a failed measurement: measuring makes no MPI call,
/// so its errors are planning errors (`nuce::Error::Plan`); any other is
/// passed on with its text.
fn planning_error(e: nuce::Error) -> nuce_plan::Error {
    match e {
        nuce::Error::Plan(e) => e,
        e => nuce_plan::Error::InvalidInput(e.to_string()),
    }
}

/// The output of `--sweep --json`.
#[derive(Serialize)]
struct Sweep {
    rank: i32,
    topology: Topology,
    points: Vec<SweepPoint>,
}

/// The smallest cache level that holds `bytes` (`"L1"`, `"L2"`, `"L3"`),
/// else `"memory"`.
fn fits_in(t: &Topology, bytes: u64) -> &'static str {
    [("L1", t.l1_bytes), ("L2", t.l2_bytes), ("L3", t.l3_bytes)]
        .into_iter()
        .find(|(_, c)| c.is_some_and(|c| bytes <= c))
        .map_or("memory", |(name, _)| name)
}

/// `--sweep`: measures, prints the table (or JSON), draws the SVG.
fn sweep(args: &Args, cfg: &KernelConfig) -> nuce_plan::Result<()> {
    let t = topology();
    let largest = t.l3_bytes.or(t.l2_bytes).or(t.l1_bytes);
    let sizes = if args.sizes.is_empty() {
        default_sweep_sizes(largest)
    } else {
        args.sizes.clone()
    };
    let points = measure_sweep(cfg, &sizes).map_err(planning_error)?;
    if let Some(path) = &args.svg {
        draw_svg(path, &t, &points)?;
    }
    if args.json {
        return crate::output::print_json(&Sweep {
            rank: launcher_rank(),
            topology: t,
            points,
        });
    }
    let kib = |b: Option<u64>| b.map_or("?".to_string(), |b| format!("{} KiB", b / 1024));
    outln!(
        "rank {} on {}: 5-point stencil speed against block size (median of {} samples of at least {} ms)",
        launcher_rank(),
        t.host,
        cfg.repeats,
        args.min_ms
    )?;
    outln!(
        "  caches (hwloc): L1 {} L2 {} L3 {}; bound to {:?}",
        kib(t.l1_bytes),
        kib(t.l2_bytes),
        kib(t.l3_bytes),
        t.binding
    )?;
    outln!(
        "{:>10} {:>11} {:>12} {:>7} {:>14} {:>8} {:>9}",
        "cells",
        "block",
        "bytes",
        "fits",
        "updates/s",
        "spread",
        "vs first"
    )?;
    let first = points.first().map_or(1.0, |p| p.measurement.median);
    for p in &points {
        let m = &p.measurement;
        outln!(
            "{:>10} {:>11} {:>12} {:>7} {:>14.4e} {:>7.1}% {:>9.2}",
            p.cells,
            format!("{}x{}", p.width, p.height),
            p.bytes,
            fits_in(&t, p.bytes),
            m.median,
            100.0 * m.relative_spread(),
            m.median / first
        )?;
    }
    Ok(())
}

/// Plots speed (cell updates/s) against block size (cells, log scale),
/// with a vertical line where the block's two arrays fill each cache.
fn draw_svg(path: &std::path::Path, t: &Topology, points: &[SweepPoint]) -> nuce_plan::Result<()> {
    use plotters::prelude::*;
    let err = |e: String| nuce_plan::Error::Io(format!("{}: {e}", path.display()));
    let x0 = points.iter().map(|p| p.cells).min().unwrap_or(16) as f64;
    let x1 = (points.iter().map(|p| p.cells).max().unwrap_or(16) as f64).max(2.0 * x0);
    let y1 = points
        .iter()
        .map(|p| p.measurement.max)
        .fold(0.0, f64::max)
        .max(1.0)
        * 1.1;
    let caption = format!("5-point stencil on {}: speed against block size", t.host);
    crate::output::svg(path, (800, 480), |root| {
        root.fill(&WHITE).map_err(|e| err(e.to_string()))?;
        let mut chart = ChartBuilder::on(root)
            .caption(caption, ("sans-serif", 18))
            .margin(10)
            .x_label_area_size(40)
            .y_label_area_size(70)
            .build_cartesian_2d((x0 / 1.2..x1 * 1.2).log_scale(), 0.0..y1)
            .map_err(|e| err(e.to_string()))?;
        chart
            .configure_mesh()
            .x_desc("block size (cells)")
            .y_desc("cell updates / s")
            .y_label_formatter(&|v| format!("{v:.1e}"))
            .draw()
            .map_err(|e| err(e.to_string()))?;
        for (name, bytes) in [("L1", t.l1_bytes), ("L2", t.l2_bytes), ("L3", t.l3_bytes)] {
            // Two arrays of 8-byte cells fill the cache at bytes / 16 cells.
            let Some(x) = bytes
                .map(|b| b as f64 / 16.0)
                .filter(|x| (x0..=x1).contains(x))
            else {
                continue;
            };
            chart
                .draw_series(std::iter::once(PathElement::new(
                    vec![(x, 0.0), (x, y1)],
                    BLACK.mix(0.4).stroke_width(1),
                )))
                .map_err(|e| err(e.to_string()))?;
            chart
                .draw_series(std::iter::once(Text::new(
                    name.to_string(),
                    (x * 1.03, y1 * 0.97),
                    ("sans-serif", 14),
                )))
                .map_err(|e| err(e.to_string()))?;
        }
        let xy: Vec<(f64, f64)> = points
            .iter()
            .map(|p| (p.cells as f64, p.measurement.median))
            .collect();
        chart
            .draw_series(LineSeries::new(xy.clone(), BLUE.stroke_width(2)))
            .map_err(|e| err(e.to_string()))?;
        chart
            .draw_series(xy.into_iter().map(|q| Circle::new(q, 3, BLUE.filled())))
            .map_err(|e| err(e.to_string()))?;
        Ok(())
    })
}
