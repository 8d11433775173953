//! Timing of the application's own phases, smoothed by an exponentially
//! weighted moving average (EWMA).
//!
//! After each solver phase a rank calls [`PhaseTimer::record`] with the work it
//! did (cells, vertices, tasks: any unit, as long as every rank uses the same)
//! and the time it took. The raw speed `x = work / time` is smoothed as
//!
//! ```text
//! s₁ = x₁,     sₖ = α·xₖ + (1 − α)·sₖ₋₁
//! ```
//!
//! so one noisy phase moves the estimate by at most the fraction `α` of its
//! distance from the previous estimate (`|sₖ − sₖ₋₁| = α·|xₖ − sₖ₋₁|`) and does
//! not by itself trigger a remap. Each record is O(1) time and memory.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// EWMA-smoothed speed of the application's own phases (work units per second).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PhaseTimer {
    alpha: f64,
    smoothed: Option<f64>,
    last: Option<f64>,
    samples: usize,
}

impl Default for PhaseTimer {
    /// A timer with `alpha = 0.5`.
    fn default() -> Self {
        PhaseTimer {
            alpha: 0.5,
            smoothed: None,
            last: None,
            samples: 0,
        }
    }
}

impl PhaseTimer {
    /// A timer with smoothing weight `alpha ∈ (0, 1]` (1 = no smoothing: the
    /// estimate is the last phase's speed). Errors on any other value.
    pub fn new(alpha: f64) -> Result<Self> {
        if !(alpha.is_finite() && alpha > 0.0 && alpha <= 1.0) {
            return Err(Error::InvalidInput(format!(
                "EWMA alpha must be in (0, 1], got {alpha}"
            )));
        }
        Ok(PhaseTimer {
            alpha,
            ..Default::default()
        })
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
            return Err(Error::InvalidInput(format!(
                "work units must be finite and > 0, got {work_units}"
            )));
        }
        let secs = elapsed.as_secs_f64();
        if secs <= 0.0 {
            return Err(Error::InvalidInput(
                "phase time must be > 0 (timer resolution?)".into(),
            ));
        }
        let x = work_units / secs;
        if !x.is_finite() {
            return Err(Error::InvalidInput(format!(
                "speed {work_units} / {secs} s is not finite"
            )));
        }
        self.record_speed(x)
    }

    /// Records one phase given directly as a speed (work units per second).
    /// Errors when `speed` is not finite and `> 0`.
    pub fn record_speed(&mut self, speed: f64) -> Result<f64> {
        if !(speed.is_finite() && speed > 0.0) {
            return Err(Error::InvalidSpeed {
                index: self.samples,
                value: speed,
            });
        }
        let s = match self.smoothed {
            None => speed,
            Some(prev) => self.alpha * speed + (1.0 - self.alpha) * prev,
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

    /// Forgets every record (e.g. after a remap changed the work per rank).
    pub fn reset(&mut self) {
        self.smoothed = None;
        self.last = None;
        self.samples = 0;
    }

    /// Number of phases recorded since creation or the last [`reset`](Self::reset).
    pub fn samples(&self) -> usize {
        self.samples
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(x: u64) -> Duration {
        Duration::from_millis(x)
    }

    #[test]
    fn first_record_sets_speed_then_ewma() {
        let mut t = PhaseTimer::new(0.25).unwrap();
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
        let mut t = PhaseTimer::new(alpha).unwrap();
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
    fn outlier_moves_estimate_by_at_most_alpha() {
        for alpha in [0.1, 0.5, 0.9, 1.0] {
            let mut t = PhaseTimer::new(alpha).unwrap();
            for _ in 0..5 {
                t.record(50.0, ms(100)).unwrap(); // 500 units/s
            }
            let before = t.speed().unwrap();
            let outlier = 50_000.0;
            let after = t.record_speed(outlier).unwrap();
            let moved = (after - before) / (outlier - before);
            assert!(moved <= alpha + 1e-12 && moved >= alpha - 1e-12, "{moved}");
        }
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
