//! Built-in calibrated kernels: a cache-resident and a memory-bound stencil sweep.
//!
//! Both kernels are the same 5-point Jacobi sweep
//! `b[i][j] = (a[i][j] + a[i-1][j] + a[i+1][j] + a[i][j-1] + a[i][j+1]) / 5`
//! (the work of the heterogeneous stencil codes nuce balances), on two grid
//! sizes:
//!
//! * [`Kernel::Stencil`]: 64 × 32 interior cells, two arrays of ~18 KiB, so the
//!   sweep runs from L1/L2 cache and measures the core's arithmetic speed;
//! * [`Kernel::Memory`]: 2048 × 1024 interior cells, two arrays of ~16 MiB,
//!   far beyond a core's L2 share, so the sweep is bound by memory bandwidth
//!   (or, on a machine whose L3 share holds 32 MiB, by L3 bandwidth; the size
//!   is fixed so that every rank measures the same work).
//!
//! The work unit is one *cell update*; speeds are cell updates per second.
//!
//! Measurement protocol (complexity O(total rows × row length)): the number of
//! grid rows per sample is doubled (or scaled up) until one sample takes at least
//! [`KernelConfig::min_time`]; then [`KernelConfig::warmup`] untimed samples run,
//! then [`KernelConfig::repeats`] timed samples; the result is their median with
//! min and max ([`Summary`]).
//!
//! [`KernelConfig::work_multiplier`] emulates a slower machine by *really*
//! sweeping `work_multiplier` times as many rows as are reported, so a rank with
//! multiplier 3 measures about a third of the speed (the library measures it,
//! it is never told).

use std::fmt;
use std::str::FromStr;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use super::stats::Summary;
use crate::error::{Error, Result};
use crate::plan::fpm::SpeedEstimate;

/// The largest relative noise reported for a speed (kernel or phases).
/// Speeds whose noise intervals meet are planned as one
/// ([`crate::plan::fpm::snap_speeds`]); at this cap two ranks are still told
/// apart once their speeds differ by more than `1.25 / 0.75 = 5/3`, so a rank
/// 2× or 3× slower than its peer is never taken for noise, however loaded
/// the machine was while it measured (at a cap of 0.5, a 2.7× slower rank
/// was planned as an equal one for two phases of heat2d under load).
pub const MAX_NOISE: f64 = 0.25;

/// The smallest relative noise of a kernel measurement: the kernel stands
/// for the application's work, and a few percent between two cores of one
/// model (clock boost, placement in the caches) says nothing about the
/// application's speed on them.
pub const MIN_KERNEL_NOISE: f64 = 0.02;

/// Which built-in kernel to run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
pub enum Kernel {
    /// Cache-resident 5-point stencil sweep (compute-bound). The default.
    #[default]
    Stencil,
    /// Memory-bound 5-point stencil sweep over arrays far larger than L2.
    Memory,
}

impl Kernel {
    /// Interior grid size `(width, height)` swept by this kernel.
    pub fn interior(self) -> (usize, usize) {
        match self {
            Kernel::Stencil => (64, 32),
            Kernel::Memory => (2048, 1024),
        }
    }

    /// Lower-case name (`"stencil"` or `"memory"`), as accepted by [`FromStr`].
    pub fn name(self) -> &'static str {
        match self {
            Kernel::Stencil => "stencil",
            Kernel::Memory => "memory",
        }
    }
}

impl fmt::Display for Kernel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Kernel {
    type Err = Error;
    fn from_str(s: &str) -> Result<Kernel> {
        match s.trim().to_ascii_lowercase().as_str() {
            "stencil" | "cache" => Ok(Kernel::Stencil),
            "memory" | "mem" => Ok(Kernel::Memory),
            other => Err(Error::invalid_input(format!(
                "unknown kernel {other:?} (expected 'stencil' or 'memory')"
            ))),
        }
    }
}

/// Parameters of a kernel measurement.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KernelConfig {
    /// Which kernel to run.
    pub kernel: Kernel,
    /// Untimed samples after calibration (warms caches, TLB, frequency).
    pub warmup: usize,
    /// Timed samples; the result is their median (must be ≥ 1).
    pub repeats: usize,
    /// Minimum duration of one sample; calibration grows the sweeps per sample
    /// until a sample lasts at least this long.
    pub min_time: Duration,
    /// Emulated slowness: each reported cell update really costs
    /// `work_multiplier` cell updates (finite, > 0; 1 = no emulation).
    pub work_multiplier: f64,
}

impl Default for KernelConfig {
    /// Stencil kernel, 1 warm-up, 7 repeats of ≥ 10 ms: about 100 ms in all.
    fn default() -> Self {
        KernelConfig {
            kernel: Kernel::Stencil,
            warmup: 1,
            repeats: 7,
            min_time: Duration::from_millis(10),
            work_multiplier: 1.0,
        }
    }
}

impl KernelConfig {
    /// Checks `repeats ≥ 1`, `work_multiplier` finite and `> 0`, and
    /// `min_time ≤ 60 s`.
    pub fn validate(&self) -> Result<()> {
        if self.repeats == 0 {
            return Err(Error::invalid_input("repeats must be at least 1"));
        }
        if !(self.work_multiplier.is_finite() && self.work_multiplier > 0.0) {
            return Err(Error::invalid_input(format!(
                "work_multiplier must be finite and > 0, got {}",
                self.work_multiplier
            )));
        }
        if self.min_time > Duration::from_secs(60) {
            return Err(Error::invalid_input(format!(
                "min_time {:?} is over 60 s",
                self.min_time
            )));
        }
        Ok(())
    }

    /// A copy with invalid fields replaced by their defaults (used by
    /// [`measure_kernel`], which cannot fail).
    pub fn sanitized(&self) -> KernelConfig {
        let d = KernelConfig::default();
        KernelConfig {
            kernel: self.kernel,
            warmup: self.warmup,
            repeats: if self.repeats == 0 {
                d.repeats
            } else {
                self.repeats
            },
            min_time: self.min_time.min(Duration::from_secs(60)),
            work_multiplier: if self.work_multiplier.is_finite() && self.work_multiplier > 0.0 {
                self.work_multiplier
            } else {
                d.work_multiplier
            },
        }
    }
}

/// Result of a kernel measurement: speeds in cell updates per second.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KernelMeasurement {
    /// The kernel that ran.
    pub kernel: Kernel,
    /// Median speed over the timed samples (cell updates per second).
    pub median: f64,
    /// Slowest sample.
    pub min: f64,
    /// Fastest sample.
    pub max: f64,
    /// Every timed sample, in the order measured.
    pub samples: Vec<f64>,
}

impl KernelMeasurement {
    /// Builds a measurement from raw samples (median, min, max computed here).
    pub fn from_samples(kernel: Kernel, samples: Vec<f64>) -> Result<Self> {
        let s = Summary::of(&samples)?;
        Ok(KernelMeasurement {
            kernel,
            median: s.median,
            min: s.min,
            max: s.max,
            samples,
        })
    }

    /// The measurement's relative noise: half the relative spread,
    /// `(max − min) / (2 · median)`, at least the samples' relative standard
    /// deviation and [`MIN_KERNEL_NOISE`], at most [`MAX_NOISE`]. Two ranks
    /// whose medians lie within their noise of each other cannot be told
    /// apart by this measurement.
    pub fn noise(&self) -> f64 {
        let n = self.samples.len() as f64;
        let sd = if self.samples.len() > 1 {
            let mean = self.samples.iter().sum::<f64>() / n;
            let var = self.samples.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0);
            var.sqrt() / mean
        } else {
            0.0
        };
        let noise = (0.5 * self.relative_spread()).max(sd);
        if noise.is_finite() {
            noise.clamp(MIN_KERNEL_NOISE, MAX_NOISE)
        } else {
            MAX_NOISE
        }
    }

    /// The speed as a noisy estimate: the median and [`KernelMeasurement::noise`].
    pub fn estimate(&self) -> SpeedEstimate {
        SpeedEstimate {
            mean: self.median,
            noise: self.noise(),
        }
    }

    /// Relative spread `(max - min) / median` of the samples.
    pub fn relative_spread(&self) -> f64 {
        Summary {
            median: self.median,
            min: self.min,
            max: self.max,
        }
        .relative_spread()
    }
}

/// A Jacobi grid with fixed boundary, swept row by row so that partial sweeps
/// (needed for fractional work multipliers) carry over between samples.
struct Grid {
    /// Padded width (interior + 2).
    w: usize,
    /// Padded height (interior + 2).
    h: usize,
    a: Vec<f64>,
    b: Vec<f64>,
    /// Next interior row to update, in `1..h-1`.
    row: usize,
}

impl Grid {
    fn new(interior_w: usize, interior_h: usize) -> Grid {
        let (w, h) = (interior_w + 2, interior_h + 2);
        // Values in [1, 2]: the average of such values stays there, so no
        // denormals ever slow the sweep down.
        let init: Vec<f64> = (0..w * h)
            .map(|k| {
                let (i, j) = (k / w, k % w);
                if i == 0 || j == 0 || i == h - 1 || j == w - 1 {
                    2.0
                } else {
                    1.0 + ((i * 7 + j * 13) % 17) as f64 / 17.0
                }
            })
            .collect();
        Grid {
            w,
            h,
            b: init.clone(),
            a: init,
            row: 1,
        }
    }

    fn cells_per_row(&self) -> u64 {
        (self.w - 2) as u64
    }

    /// Updates `rows` interior rows, wrapping to a new sweep (and swapping the
    /// arrays) after the last row.
    fn sweep_rows(&mut self, mut rows: u64) {
        let w = self.w;
        while rows > 0 {
            let r = self.row;
            let n = w - 2;
            // Equal-length slices: no bounds checks in the loop, so it vectorises.
            let up = &self.a[(r - 1) * w + 1..(r - 1) * w + 1 + n];
            let dn = &self.a[(r + 1) * w + 1..(r + 1) * w + 1 + n];
            let left = &self.a[r * w..r * w + n];
            let centre = &self.a[r * w + 1..r * w + 1 + n];
            let right = &self.a[r * w + 2..r * w + 2 + n];
            let out = &mut self.b[r * w + 1..r * w + 1 + n];
            for j in 0..n {
                out[j] = 0.2 * (centre[j] + left[j] + right[j] + up[j] + dn[j]);
            }
            rows -= 1;
            self.row += 1;
            if self.row == self.h - 1 {
                std::mem::swap(&mut self.a, &mut self.b);
                self.row = 1;
            }
        }
    }
}

/// Runs one sample of `rows` reported rows (really `rows × multiplier` rows);
/// returns (reported cell updates, elapsed time).
fn sample(grid: &mut Grid, rows: u64, multiplier: f64) -> (f64, Duration) {
    let actual_rows = ((rows as f64) * multiplier).round().max(1.0) as u64;
    let t0 = Instant::now();
    grid.sweep_rows(actual_rows);
    std::hint::black_box(&mut *grid);
    let elapsed = t0.elapsed();
    (rows as f64 * grid.cells_per_row() as f64, elapsed)
}

/// Runs the configured kernel and returns its speed (cell updates per second),
/// validating the configuration first.
///
/// Complexity: O((calibration + warmup + repeats) × min_time) wall time; memory
/// two grids of the kernel's size.
pub fn try_measure_kernel(cfg: &KernelConfig) -> Result<KernelMeasurement> {
    cfg.validate()?;
    let _span = tracing::debug_span!("measure_kernel", kernel = cfg.kernel.name()).entered();
    let (iw, ih) = cfg.kernel.interior();
    measure_grid(cfg, cfg.kernel, &mut Grid::new(iw, ih))
}

/// One point of a size sweep ([`measure_sweep`]): the stencil's speed on
/// one block.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SweepPoint {
    /// Interior cells of the block (`width × height`, at least the size asked).
    pub cells: usize,
    /// Interior width of the block.
    pub width: usize,
    /// Interior height of the block.
    pub height: usize,
    /// Bytes one sweep touches ([`crate::plan::fpm::block_bytes`]).
    pub bytes: u64,
    /// The speed on this block (cell updates per second).
    pub measurement: KernelMeasurement,
}

/// A size sweep: the 5-point stencil of the built-in kernels on a block of
/// each of `sizes` cells (shaped by [`crate::plan::fpm::block_shape`]),
/// measured as [`try_measure_kernel`] measures (calibration, `cfg.warmup`,
/// `cfg.repeats` samples of at least `cfg.min_time`; `cfg.kernel` is not
/// used: the block replaces the kernel's fixed grid). Errors: a bad `cfg`
/// ([`KernelConfig::validate`]) or bad sizes
/// ([`crate::plan::fpm::check_sweep_sizes`]), before anything is
/// allocated. Time O(sizes × (warmup + repeats + calibration) × min_time);
/// memory: two arrays of the block, one block at a time.
pub fn measure_sweep(cfg: &KernelConfig, sizes: &[usize]) -> Result<Vec<SweepPoint>> {
    cfg.validate()?;
    crate::plan::fpm::check_sweep_sizes(sizes)?;
    sizes
        .iter()
        .map(|&cells| {
            let (width, height) = crate::plan::fpm::block_shape(cells);
            let _span = tracing::debug_span!("measure_sweep", width, height).entered();
            let measurement = measure_grid(cfg, Kernel::Stencil, &mut Grid::new(width, height))?;
            Ok(SweepPoint {
                cells: width * height,
                width,
                height,
                bytes: crate::plan::fpm::block_bytes(width, height),
                measurement,
            })
        })
        .collect()
}

/// Measures the sweeps of `grid` as [`try_measure_kernel`] describes
/// (`cfg` already validated), reported as `kernel`.
fn measure_grid(cfg: &KernelConfig, kernel: Kernel, grid: &mut Grid) -> Result<KernelMeasurement> {
    let m = cfg.work_multiplier;

    // Calibration: grow the rows per sample until a sample lasts min_time.
    // Rows, not whole sweeps, so that samples of every kernel and multiplier
    // last about the same time (a longer sample is more likely to be
    // preempted on a shared machine, which would bias comparisons).
    // The size is judged at the fastest rate seen so far, so that one
    // preempted calibration sample cannot lock in a too short sample.
    let mut rows: u64 = 1;
    let mut best_rate = 0.0f64; // rows per second
    for _ in 0..64 {
        let (_, dt) = sample(grid, rows, m);
        best_rate = best_rate.max(rows as f64 / dt.as_secs_f64().max(1e-9));
        let fastest_dt = rows as f64 / best_rate;
        if fastest_dt >= cfg.min_time.as_secs_f64() {
            break;
        }
        let ratio = cfg.min_time.as_secs_f64() / fastest_dt.max(1e-9);
        // Aim 20 % above min_time, at least double, at most ×100 per step.
        let factor = (ratio * 1.2).clamp(2.0, 100.0);
        rows = ((rows as f64) * factor).ceil().min(1e15) as u64;
    }
    for _ in 0..cfg.warmup {
        sample(grid, rows, m);
    }
    let samples: Vec<f64> = (0..cfg.repeats)
        .map(|_| {
            let (cells, dt) = sample(grid, rows, m);
            cells / dt.as_secs_f64().max(1e-9)
        })
        .collect();
    let m = KernelMeasurement::from_samples(kernel, samples)?;
    tracing::debug!(
        median = m.median,
        spread = m.relative_spread(),
        rows_per_sample = rows,
        "kernel measured"
    );
    Ok(m)
}

/// Runs the configured kernel and returns its speed (cell updates per second).
///
/// Never fails: invalid fields of `cfg` are replaced by their defaults
/// ([`KernelConfig::sanitized`]); use [`try_measure_kernel`] to get an error
/// instead.
pub fn measure_kernel(cfg: &KernelConfig) -> KernelMeasurement {
    let cfg = cfg.sanitized();
    match try_measure_kernel(&cfg) {
        Ok(m) => m,
        // Unreachable for a sanitized config (samples are finite and > 0);
        // report a neutral measurement rather than panic.
        Err(_) => KernelMeasurement {
            kernel: cfg.kernel,
            median: 1.0,
            min: 1.0,
            max: 1.0,
            samples: vec![1.0],
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Oracle: one Jacobi sweep of the whole grid written the obvious way.
    fn reference_sweep(a: &[f64], w: usize, h: usize) -> Vec<f64> {
        let mut b = a.to_vec();
        for i in 1..h - 1 {
            for j in 1..w - 1 {
                b[i * w + j] = (a[i * w + j]
                    + a[(i - 1) * w + j]
                    + a[(i + 1) * w + j]
                    + a[i * w + j - 1]
                    + a[i * w + j + 1])
                    / 5.0;
            }
        }
        b
    }

    #[test]
    fn row_sweeps_match_reference_jacobi() {
        let mut g = Grid::new(5, 4);
        let mut expect = g.a.clone();
        // 2.5 sweeps in uneven chunks: partial sweeps must carry over.
        for chunk in [3u64, 2, 1, 4] {
            g.sweep_rows(chunk);
        }
        for _ in 0..2 {
            expect = reference_sweep(&expect, g.w, g.h);
        }
        assert_eq!(g.row, 3);
        for (x, y) in g.a.iter().zip(&expect) {
            assert!((x - y).abs() < 1e-12, "{x} vs {y}");
        }
        // Values stay within [1, 2] (no denormals).
        assert!(g.a.iter().all(|&v| (1.0..=2.0).contains(&v)));
    }

    #[test]
    fn measurement_is_consistent() {
        let cfg = KernelConfig {
            repeats: 5,
            min_time: Duration::from_millis(2),
            ..Default::default()
        };
        let m = try_measure_kernel(&cfg).unwrap();
        assert_eq!(m.samples.len(), 5);
        assert!(m.min <= m.median && m.median <= m.max);
        assert!(m.samples.iter().all(|s| s.is_finite() && *s > 0.0));
        let s = Summary::of(&m.samples).unwrap();
        assert_eq!((s.median, s.min, s.max), (m.median, m.min, m.max));
    }

    #[test]
    fn noise_is_half_spread_at_least_sd_and_capped() {
        let m = KernelMeasurement::from_samples(Kernel::Stencil, vec![9.0, 10.0, 11.0]).unwrap();
        // Half spread 0.1; sd 1/10 = 0.1.
        assert!((m.noise() - 0.1).abs() < 1e-12, "{}", m.noise());
        assert_eq!(m.estimate().mean, 10.0);
        let one = KernelMeasurement::from_samples(Kernel::Stencil, vec![5.0]).unwrap();
        assert_eq!(one.noise(), MIN_KERNEL_NOISE);
        let wild =
            KernelMeasurement::from_samples(Kernel::Stencil, vec![1.0, 10.0, 100.0]).unwrap();
        assert_eq!(wild.noise(), MAX_NOISE);
        // Two samples apart: sd (0.20) above half the spread (0.14).
        let two = KernelMeasurement::from_samples(Kernel::Stencil, vec![3.0, 4.0]).unwrap();
        assert!(
            (two.noise() - 0.5f64.sqrt() / 3.5).abs() < 1e-12,
            "{}",
            two.noise()
        );
    }

    #[test]
    fn a_rank_twice_as_slow_is_never_snapped_to_its_peer() {
        // Both measurements as noisy as they can be reported.
        let wild = |m: f64| {
            KernelMeasurement::from_samples(Kernel::Stencil, vec![m / 100.0, m, m * 100.0])
                .unwrap()
                .estimate()
        };
        let (fast, slow) = (wild(540.0), wild(270.0));
        assert_eq!((fast.noise, slow.noise), (MAX_NOISE, MAX_NOISE));
        let s = crate::plan::fpm::snap_speeds(&[fast, slow]).unwrap();
        assert_eq!(s, vec![540.0, 270.0]);
        // Within 5/3 they are one speed.
        let s = crate::plan::fpm::snap_speeds(&[wild(540.0), wild(400.0)]).unwrap();
        assert_eq!(s, vec![470.0, 470.0]);
    }

    #[test]
    fn invalid_configs_are_errors_and_sanitized() {
        let with = |f: fn(&mut KernelConfig)| {
            let mut c = KernelConfig::default();
            f(&mut c);
            c
        };
        for bad in [
            with(|c| c.repeats = 0),
            with(|c| c.work_multiplier = 0.0),
            with(|c| c.work_multiplier = f64::NAN),
            with(|c| c.work_multiplier = -2.0),
            with(|c| c.min_time = Duration::from_secs(3600)),
        ] {
            assert!(matches!(
                try_measure_kernel(&bad),
                Err(Error::Plan(crate::plan::Error::InvalidInput(_)))
            ));
            assert!(bad.sanitized().validate().is_ok());
        }
    }

    #[test]
    fn a_sweep_measures_every_block_and_checks_its_sizes() {
        let cfg = KernelConfig {
            repeats: 2,
            warmup: 0,
            min_time: Duration::from_millis(1),
            ..Default::default()
        };
        let pts = measure_sweep(&cfg, &[16, 1000]).unwrap();
        assert_eq!(pts.len(), 2);
        assert_eq!((pts[0].width, pts[0].height, pts[0].cells), (4, 4, 16));
        assert_eq!((pts[1].width, pts[1].height, pts[1].cells), (32, 32, 1024));
        assert!(pts.iter().all(|p| p.measurement.median > 0.0
            && p.measurement.samples.len() == 2
            && p.bytes == crate::plan::fpm::block_bytes(p.width, p.height)));
        for bad in [&[][..], &[15], &[crate::plan::fpm::MAX_SWEEP_CELLS + 1]] {
            assert!(matches!(
                measure_sweep(&cfg, bad),
                Err(Error::Plan(crate::plan::Error::InvalidInput(_)))
            ));
        }
    }

    #[test]
    fn kernel_names_round_trip() {
        for k in [Kernel::Stencil, Kernel::Memory] {
            assert_eq!(k.name().parse::<Kernel>().unwrap(), k);
            assert_eq!(k.to_string(), k.name());
        }
        assert!("gpu".parse::<Kernel>().is_err());
        assert_eq!(Kernel::default(), Kernel::Stencil);
    }
}
