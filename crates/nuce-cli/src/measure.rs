//! `nuce measure`: runs a built-in kernel and prints the speed and topology.
//!
//! Under `mpirun` each process reports its own rank (from
//! `OMPI_COMM_WORLD_RANK` / `PMIX_RANK`), so
//! `mpirun -np 3 scripts/bind_ranks.sh target/release/nuce measure --json`
//! shows the measured effect of a binding without any MPI call.

use std::time::Duration;

use nuce::speed::{topology, try_measure_kernel, Kernel, KernelConfig, SpeedRecord};

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
    /// Print the speed record as JSON.
    #[arg(long)]
    json: bool,
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
    s.parse().map_err(|e: nuce_plan::Error| e.to_string())
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
    let m = try_measure_kernel(&cfg)?;
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
