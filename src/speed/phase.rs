//! Timing of the application's own phases: smoothed against noise, quick to
//! follow a real change.
//!
//! After each phase a rank records the work it did (cells, vertices, tasks:
//! any unit, as long as every rank uses the same) and its compute time —
//! the [`Balancer`](crate::runtime::balancer::Balancer) does it by itself
//! from [`crate::runtime::clock`]. The raw speed `x = work / time` updates
//! the estimate `s` as
//!
//! ```text
//! s₁ = x₁
//! sₖ = xₖ                          if xₖ / sₖ₋₁ ∉ [1 / (1 + b), 1 + b]   (a real change)
//! sₖ = α·xₖ + (1 − α)·sₖ₋₁         otherwise                          (noise)
//! b  = max(k·σ, m)
//! ```
//!
//! where `σ` is the measured noise: the median relative departure
//! `|xⱼ − sⱼ₋₁| / sⱼ₋₁` of the last [`NOISE_WINDOW`] phases (the median
//! ignores the spike of a change itself), `k` the change factor (default 3)
//! and `m` the smallest departure that counts as a change (default 5 %).
//! The band is a ratio, the same both ways: a rank 3× slower departs as
//! far as one 3× faster. (A band `|xₖ − sₖ₋₁| ≤ b·sₖ₋₁` sees no
//! slowdown at all once `b ≥ 1`, and under a noise of 25 %, measured on a
//! machine loaded by other jobs, it took a 3× slowdown for noise and
//! followed it over several phases: `tests/quickstart.rs`.)
//! Noise within the band moves the estimate by at most the fraction `α` of
//! its distance (`|sₖ − sₖ₋₁| = α·|xₖ − sₖ₋₁|`); a departure beyond it —
//! a rank that really slowed down or sped up — is followed at once, so the
//! next plan is balanced for the new speeds one phase after the change.
//! Each record is O(1) time and memory.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// Number of recent phases whose departures estimate the noise.
pub const NOISE_WINDOW: usize = 8;

/// Smoothed speed of the application's own phases (work units per second).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PhaseTimer {
    alpha: f64,
    change_factor: f64,
    min_change: f64,
    smoothed: Option<f64>,
    last: Option<f64>,
    samples: usize,
    /// Relative departures of the last phases (ring buffer).
    departures: Vec<f64>,
    /// The departures of the last phases that were not taken as a change (ring buffer).
    quiet: Vec<f64>,
    changes: usize,
}

impl Default for PhaseTimer {
    /// `alpha = 0.5`, change factor 3, smallest change 5 %.
    fn default() -> Self {
        PhaseTimer {
            alpha: 0.5,
            change_factor: 3.0,
            min_change: 0.05,
            smoothed: None,
            last: None,
            samples: 0,
            departures: Vec::with_capacity(NOISE_WINDOW),
            quiet: Vec::with_capacity(NOISE_WINDOW),
            changes: 0,
        }
    }
}

impl PhaseTimer {
    /// A timer with smoothing weight `alpha ∈ (0, 1]` (1 = no smoothing: the
    /// estimate is the last phase's speed) and the default change detection.
    /// Errors on any other value.
    pub fn new(alpha: f64) -> Result<Self> {
        if !(alpha.is_finite() && alpha > 0.0 && alpha <= 1.0) {
            return Err(Error::invalid_input(format!(
                "EWMA alpha must be in (0, 1], got {alpha}"
            )));
        }
        Ok(PhaseTimer {
            alpha,
            ..Default::default()
        })
    }

    /// Sets the change detection: a phase whose speed departs from the
    /// estimate by more than `max(factor·σ, min_change)` (relative) replaces
    /// the estimate. `factor = ∞` turns detection off (a plain EWMA).
    /// Errors unless `factor > 0` and `min_change ≥ 0` (not NaN).
    pub fn with_change_detection(mut self, factor: f64, min_change: f64) -> Result<Self> {
        if !(factor > 0.0 && min_change >= 0.0 && min_change.is_finite()) {
            return Err(Error::invalid_input(format!(
                "change factor must be > 0 and min change finite and >= 0, got {factor}, {min_change}"
            )));
        }
        self.change_factor = factor;
        self.min_change = min_change;
        Ok(self)
    }

    /// The smoothing weight.
    pub fn alpha(&self) -> f64 {
        self.alpha
    }

    /// Records one phase: `work_units` done in `elapsed`. Returns the smoothed
    /// speed. Errors (and leaves the timer unchanged) when `work_units` is not
    /// finite and `> 0` or `elapsed` is zero.
    pub fn record(&mut self, work_units: f64, elapsed: Duration) -> Result<f64> {
        if !(work_units.is_finite() && work_units > 0.0) {
            return Err(Error::invalid_input(format!(
                "work units must be finite and > 0, got {work_units}"
            )));
        }
        let secs = elapsed.as_secs_f64();
        if secs <= 0.0 {
            return Err(Error::invalid_input(
                "phase time must be > 0 (timer resolution?)",
            ));
        }
        let x = work_units / secs;
        if !x.is_finite() {
            return Err(Error::invalid_input(format!(
                "speed {work_units} / {secs} s is not finite"
            )));
        }
        self.record_speed(x)
    }

    /// The measured noise `σ`: median relative departure of the last phases
    /// (0 before the second phase).
    pub fn noise(&self) -> f64 {
        upper_median(&self.departures)
    }

    /// The noise of the estimate itself: the median relative departure of
    /// the last phases that were not taken as a change (0 before there is
    /// one). Unlike [`PhaseTimer::noise`], the spike of a real change never
    /// counts, so right after a rank really slowed down its estimate is not
    /// taken for noisy: what a remap decision should weigh
    /// ([`crate::plan::policy::RemapPolicy::decide_noisy`]).
    pub fn estimate_noise(&self) -> f64 {
        upper_median(&self.quiet)
    }

    /// Records one phase given directly as a speed (work units per second).
    /// Errors when `speed` is not finite and `> 0`.
    pub fn record_speed(&mut self, speed: f64) -> Result<f64> {
        if !(speed.is_finite() && speed > 0.0) {
            return Err(Error::Plan(crate::plan::Error::InvalidSpeed {
                index: self.samples,
                value: speed,
            }));
        }
        let s = match self.smoothed {
            None => speed,
            Some(prev) => {
                let departure = (speed - prev).abs() / prev;
                let band = if self.change_factor.is_finite() {
                    (self.change_factor * self.noise()).max(self.min_change)
                } else {
                    f64::INFINITY // detection off (∞·0 would be NaN)
                };
                if self.departures.len() == NOISE_WINDOW {
                    self.departures.remove(0);
                }
                self.departures.push(departure);
                if speed > prev * (1.0 + band) || speed * (1.0 + band) < prev {
                    self.changes += 1;
                    speed
                } else {
                    if self.quiet.len() == NOISE_WINDOW {
                        self.quiet.remove(0);
                    }
                    self.quiet.push(departure);
                    self.alpha * speed + (1.0 - self.alpha) * prev
                }
            }
        };
        self.smoothed = Some(s);
        self.last = Some(speed);
        self.samples += 1;
        Ok(s)
    }

    /// The smoothed speed, or `None` before the first record.
    pub fn speed(&self) -> Option<f64> {
        self.smoothed
    }

    /// The raw speed of the last recorded phase.
    pub fn last(&self) -> Option<f64> {
        self.last
    }

    /// Number of phases taken as a real change (the estimate jumped).
    pub fn changes(&self) -> usize {
        self.changes
    }

    /// Forgets every record (e.g. after a remap changed the work per rank).
    pub fn reset(&mut self) {
        *self = PhaseTimer {
            alpha: self.alpha,
            change_factor: self.change_factor,
            min_change: self.min_change,
            ..Default::default()
        };
    }

    /// Number of phases recorded since creation or the last [`reset`](Self::reset).
    pub fn samples(&self) -> usize {
        self.samples
    }
}

/// The upper median of `d` (the larger middle value for an even count), 0 when empty.
fn upper_median(d: &[f64]) -> f64 {
    let mut d = d.to_vec();
    if d.is_empty() {
        return 0.0;
    }
    d.sort_by(f64::total_cmp);
    d[d.len() / 2]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(x: u64) -> Duration {
        Duration::from_millis(x)
    }

    #[test]
    fn first_record_sets_speed_then_ewma() {
        let mut t = PhaseTimer::new(0.25)
            .unwrap()
            .with_change_detection(f64::INFINITY, 0.0)
            .unwrap();
        assert_eq!(t.speed(), None);
        assert_eq!(t.record(100.0, ms(1000)).unwrap(), 100.0);
        // 0.25·200 + 0.75·100 = 125
        assert!((t.record(400.0, ms(2000)).unwrap() - 125.0).abs() < 1e-9);
        assert_eq!(t.last(), Some(200.0));
        assert_eq!(t.samples(), 2);
        t.reset();
        assert_eq!((t.speed(), t.last(), t.samples()), (None, None, 0));
    }

    #[test]
    fn matches_closed_form_weights() {
        // Oracle: sₙ = (1-α)^(n-1)·x₁ + Σ_{k≥2} α(1-α)^(n-k)·x_k.
        let alpha: f64 = 0.3;
        let xs = [10.0, 12.0, 7.0, 30.0, 11.0, 9.5];
        let mut t = PhaseTimer::new(alpha)
            .unwrap()
            .with_change_detection(f64::INFINITY, 0.0)
            .unwrap();
        for &x in &xs {
            t.record(x, ms(1000)).unwrap();
        }
        let n = xs.len();
        let mut expect = (1.0 - alpha).powi(n as i32 - 1) * xs[0];
        for (k, &x) in xs.iter().enumerate().skip(1) {
            expect += alpha * (1.0 - alpha).powi((n - 1 - k) as i32) * x;
        }
        assert!((t.speed().unwrap() - expect).abs() < 1e-9);
    }

    #[test]
    fn noise_is_smoothed_and_a_change_followed_at_once() {
        for alpha in [0.1, 0.5, 0.9] {
            let mut t = PhaseTimer::new(alpha).unwrap();
            // ±2 % noise around 500 units/s.
            for k in 0..8 {
                let x = if k % 2 == 0 { 490.0 } else { 510.0 };
                t.record_speed(x).unwrap();
            }
            assert_eq!(t.changes(), 0);
            let before = t.speed().unwrap();
            // Within the band (5 % floor): moved by exactly α of the distance.
            let within = before * 1.04;
            let after = t.record_speed(within).unwrap();
            let moved = (after - before) / (within - before);
            assert!((moved - alpha).abs() < 1e-12, "{moved}");
            // A rank 4× slower: followed at once, whatever α.
            let slow = before / 4.0;
            assert_eq!(t.record_speed(slow).unwrap(), slow);
            assert_eq!(t.changes(), 1);
            // The spike does not widen the band: the median ignores it.
            assert!(t.noise() < 0.05, "{}", t.noise());
            // Nor the estimate's noise: only the quiet departures count.
            assert!(t.estimate_noise() < 0.05, "{}", t.estimate_noise());
        }
    }

    #[test]
    fn a_change_is_not_noise_of_the_estimate() {
        let mut t = PhaseTimer::default();
        assert_eq!(t.estimate_noise(), 0.0);
        t.record_speed(100.0).unwrap();
        // A rank 4× slower at the second phase: one departure, a change.
        t.record_speed(25.0).unwrap();
        assert_eq!(t.changes(), 1);
        assert_eq!(t.noise(), 0.75); // the window holds only the spike
        assert_eq!(t.estimate_noise(), 0.0);
        // Then ±2 % around the new speed.
        t.record_speed(25.5).unwrap();
        assert!((t.estimate_noise() - 0.02).abs() < 1e-12);
    }

    #[test]
    fn band_grows_with_measured_noise() {
        let mut t = PhaseTimer::default();
        // ±20 % noise: a 30 % departure is noise (band 3·σ ≈ 60 %), not a change.
        for k in 0..8 {
            t.record_speed(if k % 2 == 0 { 80.0 } else { 120.0 })
                .unwrap();
        }
        let before = t.speed().unwrap();
        let s = t.record_speed(before * 1.3).unwrap();
        assert!(s < before * 1.3 && s > before, "{s} {before}");
        // Without detection the same timer is a plain EWMA.
        let mut plain = PhaseTimer::default()
            .with_change_detection(f64::INFINITY, 0.0)
            .unwrap();
        plain.record_speed(100.0).unwrap();
        assert_eq!(plain.record_speed(25.0).unwrap(), 62.5);
        assert!(PhaseTimer::default()
            .with_change_detection(0.0, 0.1)
            .is_err());
        assert!(PhaseTimer::default()
            .with_change_detection(3.0, f64::NAN)
            .is_err());
    }

    #[test]
    fn a_slowdown_is_as_far_as_a_speedup() {
        // ±30 % noise (departures of ~0.3–0.4): the band 3·σ is beyond 1,
        // so no relative distance `|x − s| / s ≤ 1` of a slowdown leaves
        // it; as a ratio, 3× slower leaves it as 3× faster does.
        let noisy = || {
            let mut t = PhaseTimer::default();
            for k in 0..8 {
                t.record_speed(if k % 2 == 0 { 70.0 } else { 130.0 })
                    .unwrap();
            }
            assert!(t.noise() * 3.0 > 1.0, "{}", t.noise());
            t
        };
        let mut slow = noisy();
        let s = slow.speed().unwrap();
        assert_eq!(slow.record_speed(s / 3.5).unwrap(), s / 3.5);
        let mut fast = noisy();
        let s = fast.speed().unwrap();
        assert_eq!(fast.record_speed(s * 3.5).unwrap(), s * 3.5);
        // Within the band either way: smoothed.
        let mut mild = noisy();
        let s = mild.speed().unwrap();
        assert!(mild.record_speed(s / 1.5).unwrap() > s / 1.5);
    }

    #[test]
    fn rejects_bad_input_without_changing_state() {
        assert!(PhaseTimer::new(0.0).is_err());
        assert!(PhaseTimer::new(1.5).is_err());
        assert!(PhaseTimer::new(f64::NAN).is_err());
        let mut t = PhaseTimer::default();
        assert_eq!(t.alpha(), 0.5);
        t.record(10.0, ms(10)).unwrap();
        let snapshot = t.clone();
        for w in [0.0, -1.0, f64::NAN, f64::INFINITY] {
            assert!(t.record(w, ms(10)).is_err());
        }
        assert!(t.record(1.0, Duration::ZERO).is_err());
        assert!(t.record(f64::MAX, Duration::from_nanos(1)).is_err());
        assert!(t.record_speed(-3.0).is_err());
        assert_eq!(t, snapshot);
    }
}
