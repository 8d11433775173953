//! What one rank knows of its own speed between balance points, and what it
//! reports at them: its smoothed phase speed and noise ([`PhaseTimer`]),
//! the noise of its last kernel measurement, its kernel probe while it has
//! no work, and its speed function of the work size (the functional model).
//!
//! Pure: no MPI, no clock. The balancer gives it the compute time of each
//! phase ([`crate::runtime::clock`]) and, for an idle rank, a kernel probe;
//! the root merges the reports ([`super::speeds::merge_estimates`]). Tested on
//! injected timings below.

use std::time::Duration;

use super::speeds::FUNCTION_REACH;
use super::{RankReport, SpeedEstimate, SpeedFunction, MAX_NOISE};
use crate::error::Result;
use crate::plan::fpm::{Aging, Observation};
use crate::speed::PhaseTimer;

/// One rank's own speed state (see the module's documentation).
#[derive(Debug, Clone, Default)]
pub(crate) struct RankSpeed {
    timer: PhaseTimer,
    /// The noise of this rank's last kernel measurement: the noise of its
    /// phase speed until the phases themselves say more.
    kernel_noise: f64,
    /// This rank's kernel speed and noise at its last probe (or kernel
    /// measurement) while it has no work; `None` once it works.
    idle_kernel: Option<(f64, f64)>,
    /// Whether the application recorded this phase itself.
    explicit: bool,
    /// The speed function of the timed phases: (work per iteration,
    /// compute time per iteration) points.
    speed_fn: Option<SpeedFunction>,
    /// Whether `speed_fn` holds only the points of a size sweep, in the
    /// kernel's time per cell: the first timed phase rescales them to the
    /// application's ([`Aging::Rescale`]).
    unscaled_sweep: bool,
    /// The sizes of the points the phases taught `speed_fn`, each with the
    /// phase timer's change count ([`PhaseTimer::changes`]) when it was
    /// last measured: a point from before the timer's last change is
    /// stale, and re-measuring it at another speed is a change of speed
    /// (see [`RankSpeed::learn`]).
    stamps: Vec<(f64, usize)>,
}

impl RankSpeed {
    /// A balance point: the next phase is timed automatically unless the
    /// application records it.
    pub(crate) fn start_phase(&mut self) {
        self.explicit = false;
    }

    /// Whether the application recorded this phase itself.
    pub(crate) fn recorded(&self) -> bool {
        self.explicit
    }

    /// The kernel measured this rank at `median` with relative `noise`
    /// (`Balancer::measure`).
    pub(crate) fn measured_kernel(&mut self, median: f64, noise: f64) {
        self.kernel_noise = noise;
        self.idle_kernel = Some((median, noise));
    }

    /// A size sweep gave this rank the speed function `f` (kernel units)
    /// with relative `noise` (`Balancer::measure_sizes`).
    pub(crate) fn swept(&mut self, f: SpeedFunction, noise: f64) {
        self.kernel_noise = noise;
        self.speed_fn = Some(f);
        self.unscaled_sweep = true;
        self.stamps.clear();
    }

    /// The application's own record of this phase: `work_units` in
    /// `elapsed` compute time (none with no work). It replaces the
    /// automatic record of the phase and sets the constant speed only.
    pub(crate) fn record_phase(&mut self, work_units: f64, elapsed: Duration) -> Result<()> {
        self.explicit = true;
        if work_units == 0.0 {
            return Ok(());
        }
        self.timer.record(work_units, elapsed).map(|_| ())
    }

    /// The automatic record of a phase (unless the application recorded
    /// it): `work_per_iteration × iterations` units in `compute`; the speed
    /// function learns the point (`work_per_iteration`, compute time per
    /// iteration). Nothing without work or time.
    pub(crate) fn record_automatic(
        &mut self,
        work_per_iteration: f64,
        iterations: usize,
        compute: Duration,
    ) -> Result<()> {
        if self.explicit || work_per_iteration == 0.0 || iterations == 0 || compute.is_zero() {
            return Ok(());
        }
        let changes = self.timer.changes();
        self.timer
            .record(work_per_iteration * iterations as f64, compute)?;
        let changed = self.timer.changes() > changes;
        self.learn(
            work_per_iteration,
            compute.as_secs_f64() / iterations as f64,
            changed,
        )
    }

    /// Adds a timed phase to the speed function: `x` work units per
    /// iteration in `t` seconds per iteration. Its noise is the larger of
    /// the kernel noise and the phase timer's
    /// ([`PhaseTimer::estimate_noise`]): the function counts as
    /// size-dependent only beyond both (on a loaded machine, phases on two
    /// sizes differ by the load alone). A phase on a block of about the
    /// same size as a point that disagrees beyond that noise (at least
    /// [`crate::plan::fpm::MIN_FLAT_NOISE`]) is a change of speed, and the
    /// old points are dropped, when the phase timer saw a change in this
    /// phase (`changed`: a departure beyond three times its noise) or since
    /// that point was measured (the point is stale: a load that arrived in
    /// a phase on a new size was first taken as the function's shape, and
    /// re-measuring the old size tells a load from a size effect);
    /// otherwise it is averaged in as noise ([`SpeedFunction::learn`],
    /// [`FUNCTION_REACH`]).
    fn learn(&mut self, x: f64, t: f64, changed: bool) -> Result<()> {
        let noise = self.kernel_noise.max(self.timer.estimate_noise());
        let noise = if noise.is_finite() {
            noise.clamp(0.0, MAX_NOISE)
        } else {
            MAX_NOISE
        };
        let epoch = self.timer.changes();
        let near = |xk: f64| (x - xk).abs() <= FUNCTION_REACH * xk;
        match self.speed_fn.take() {
            None => self.speed_fn = Some(SpeedFunction::new(&[(x, t)], noise)?),
            Some(f) => {
                let mut f = f.with_noise(noise)?;
                let seen = if std::mem::take(&mut self.unscaled_sweep) {
                    // The sweep's points, in the kernel's time per cell,
                    // scaled to this phase: the sweep's shape, the phase's scale.
                    f.observe(x, t, Aging::Rescale)
                } else {
                    let stale = self.stamps.iter().any(|&(xk, e)| e < epoch && near(xk));
                    let aging = if changed || stale {
                        Aging::Reset
                    } else {
                        Aging::Keep
                    };
                    f.learn(x, t, FUNCTION_REACH, aging)
                };
                self.speed_fn = Some(f);
                if let Observation::Changed { dropped, .. } = seen? {
                    if dropped > 0 {
                        self.stamps.clear();
                    }
                }
            }
        }
        self.stamps.retain(|&(xk, _)| !near(xk));
        self.stamps.push((x, epoch));
        Ok(())
    }

    /// The phase speed with its noise, for the root: the phase timer's
    /// noise of its estimate ([`PhaseTimer::estimate_noise`]: the spike of
    /// a real change is not noise), and while fewer than three phases were
    /// timed (one departure says little) at least the kernel's noise.
    /// `None` before the first timed phase.
    pub(crate) fn phase_estimate(&self) -> Option<SpeedEstimate> {
        let mean = self.timer.speed()?;
        let mut noise = self.timer.estimate_noise();
        if self.timer.samples() < 3 {
            noise = noise.max(self.kernel_noise);
        }
        Some(SpeedEstimate {
            mean,
            noise: if noise.is_finite() {
                noise.clamp(0.0, MAX_NOISE)
            } else {
                MAX_NOISE
            },
        })
    }

    /// What this rank tells the root at a balance point where its work per
    /// iteration was `work`. A rank with work (or that recorded its phase)
    /// reports its phase speed ([`RankSpeed::phase_estimate`]). A rank with
    /// no work cannot time its phases, and waits for the others anyway: it
    /// runs `probe` (the built-in kernel: its median speed and noise) and
    /// reports how much its kernel speed changed since its previous probe
    /// (or kernel measurement), with the noise of both, so that its
    /// estimate follows a real change and it gets work back once it is
    /// fast again. (The changes multiply up to the ratio of the last probe
    /// to the first: the estimate is as noisy as one probe, whatever their
    /// number.)
    pub(crate) fn report(&mut self, work: f64, probe: impl FnOnce() -> (f64, f64)) -> RankReport {
        if work > 0.0 || self.explicit {
            self.idle_kernel = None;
            return self
                .phase_estimate()
                .map_or(RankReport::Unknown, RankReport::Phase);
        }
        let (median, noise) = probe();
        let (change, noise) = match self.idle_kernel.replace((median, noise)) {
            Some((then, then_noise)) => (median / then, noise + then_noise),
            None => (1.0, noise),
        };
        RankReport::Idle(SpeedEstimate {
            mean: change,
            noise: noise.min(MAX_NOISE),
        })
    }

    /// A checkpoint's speed function of this rank (`SavedSpeeds::restore`):
    /// the function of the phases timed before the restart, in the
    /// application's units (not a sweep's).
    pub(crate) fn restored(&mut self, f: Option<SpeedFunction>) {
        self.speed_fn = f;
        self.unscaled_sweep = false;
        self.stamps.clear();
    }

    /// The speed function in the application's units, for a checkpoint:
    /// none while it holds only a size sweep's points (kernel units).
    pub(crate) fn phase_function(&self) -> Option<&SpeedFunction> {
        self.speed_fn.as_ref().filter(|_| !self.unscaled_sweep)
    }

    /// The speed function of the timed phases, once one was timed.
    pub(crate) fn speed_function(&self) -> Option<&SpeedFunction> {
        self.speed_fn.as_ref()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `x` cells per iteration at `speed` cells per second, 10 iterations.
    fn phase(r: &mut RankSpeed, x: f64, speed: f64) {
        let iters = 10;
        let t = Duration::from_secs_f64(x * iters as f64 / speed);
        r.record_automatic(x, iters, t).unwrap();
        r.start_phase();
    }

    fn speed_at(r: &RankSpeed, x: f64) -> f64 {
        r.speed_function().unwrap().speed(x)
    }

    #[test]
    fn a_load_that_comes_and_goes_is_followed_both_ways() {
        let mut r = RankSpeed::default();
        for _ in 0..4 {
            phase(&mut r, 1000.0, 1.0e6);
        }
        // Another job arrives: half speed on the same block.
        phase(&mut r, 1000.0, 0.5e6);
        assert!((speed_at(&r, 1000.0) / 0.5e6 - 1.0).abs() < 0.01);
        // The plan gives this rank a smaller block; still loaded.
        phase(&mut r, 700.0, 0.5e6);
        phase(&mut r, 700.0, 0.5e6);
        let loaded = r.phase_estimate().unwrap().mean;
        assert!((loaded / 0.5e6 - 1.0).abs() < 0.05, "{loaded}");
        // The job leaves: full speed on the small block. The function
        // forgets the loaded points (no stale slow point at 1000 cells).
        phase(&mut r, 700.0, 1.0e6);
        let f = r.speed_function().unwrap();
        for x in [500.0, 700.0, 1000.0, 1500.0] {
            assert!((f.speed(x) / 1.0e6 - 1.0).abs() < 0.05, "{x}: {f:?}");
        }
        assert!(r.phase_estimate().unwrap().mean > 0.9e6);
    }

    #[test]
    fn a_load_that_arrives_with_a_new_block_is_told_from_a_size_effect() {
        let mut r = RankSpeed::default();
        for _ in 0..4 {
            phase(&mut r, 1000.0, 1.0e6);
        }
        // A remap gives this rank a larger block, and another job arrives
        // at the same time: a new size, so at first a possible size effect.
        phase(&mut r, 1500.0, 1.0e6 / 6.0);
        assert!(speed_at(&r, 1000.0) > 0.9e6);
        // The plan brings the rank back to its old size, where it is now
        // slow too: a change of speed, not the function's shape.
        phase(&mut r, 1000.0, 1.0e6 / 6.0);
        let f = r.speed_function().unwrap();
        for x in [500.0, 1000.0, 1500.0] {
            assert!((f.speed(x) * 6.0 / 1.0e6 - 1.0).abs() < 0.05, "{x}: {f:?}");
        }
    }

    #[test]
    fn a_knee_survives_its_re_measurement() {
        let mut r = RankSpeed::default();
        for _ in 0..4 {
            phase(&mut r, 1000.0, 1.0e6);
        }
        // Slower on a larger block (out of cache): the timer sees a change.
        phase(&mut r, 4000.0, 0.4e6);
        // Back on the small block at the old speed: the knee is real.
        phase(&mut r, 1000.0, 1.0e6);
        let f = r.speed_function().unwrap();
        assert!((f.speed(1000.0) / 1.0e6 - 1.0).abs() < 0.05, "{f:?}");
        assert!((f.speed(4000.0) / 0.4e6 - 1.0).abs() < 0.05, "{f:?}");
    }

    #[test]
    fn a_recorded_phase_replaces_the_automatic_one() {
        let mut r = RankSpeed::default();
        r.record_phase(500.0, Duration::from_millis(1)).unwrap();
        // The automatic record of the same phase is ignored.
        r.record_automatic(1000.0, 10, Duration::from_secs(10))
            .unwrap();
        assert_eq!(r.phase_estimate().unwrap().mean, 500.0 / 1e-3);
        assert!(r.speed_function().is_none());
        // Even with no work this phase, it reports its phase speed.
        let mut probed = false;
        let rep = r.report(0.0, || {
            probed = true;
            (1.0, 0.0)
        });
        assert!(matches!(rep, RankReport::Phase(_)), "{rep:?}");
        assert!(!probed);
    }

    #[test]
    fn an_idle_rank_reports_the_change_of_its_kernel_speed() {
        let mut r = RankSpeed::default();
        r.measured_kernel(2.0e8, 0.02);
        match r.report(0.0, || (1.0e8, 0.03)) {
            RankReport::Idle(e) => {
                assert!((e.mean - 0.5).abs() < 1e-12, "{e:?}");
                assert!((e.noise - 0.05).abs() < 1e-12, "{e:?}");
            }
            other => panic!("{other:?}"),
        }
        // The next probe compares with this one.
        match r.report(0.0, || (3.0e8, 0.01)) {
            RankReport::Idle(e) => assert!((e.mean - 3.0).abs() < 1e-12, "{e:?}"),
            other => panic!("{other:?}"),
        }
        // Work again: no probe; no phase timed yet, so nothing known.
        assert!(matches!(
            r.report(10.0, || panic!("no probe with work")),
            RankReport::Unknown
        ));
    }

    #[test]
    fn the_kernel_noise_bounds_the_first_phases_noise() {
        let mut r = RankSpeed::default();
        r.measured_kernel(1.0e8, 0.2);
        phase(&mut r, 1000.0, 1.0e6);
        phase(&mut r, 1000.0, 1.0e6);
        assert_eq!(r.phase_estimate().unwrap().noise, 0.2);
        phase(&mut r, 1000.0, 1.0e6);
        assert!(r.phase_estimate().unwrap().noise < 0.2);
    }
}
