//! [`SpeedFunction`]: one rank's speed as a function of the size of its work
//! (the functional performance model of \[LR07\]).

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// The speed of one rank as a function of the amount of work `x` it is
/// given: `s(x) = x / t(x)` in work units per second, built from measured
/// points `(x, t)` (\[LR07\]; built from a history of measurements as in \[CLR11\]).
///
/// * The points are sorted by `x`; points of equal `x` are merged, their
///   *times* averaged (the speed of the merged point is `x / mean t`).
/// * Between two points the speed is linear in `x` (piecewise linear
///   through the points); below the first and above the last point it is
///   constant (the speed of the end point).
/// * [`SpeedFunction::time`] is `t(x) = x · (1 / s(x))`. On every linear piece
///   `t` is monotone (`x / (a + b x)` has the sign of `a` for its slope), but
///   where the speed grows faster than in proportion to `x` the measured time
///   *decreases*. Planning uses the nondecreasing upper envelope
///   [`SpeedFunction::envelope_time`], `t̄(x) = max_{0 < y ≤ x} t(y)`: a rank
///   is never planned to profit from such a dip, so the true time of a plan
///   is at most its planned time (see [`crate::fpm::partition()`]).
/// * `noise` is the relative measurement noise of the function's speeds
///   (0.05: ±5 %), used by [`SpeedFunction::is_flat`] and
///   [`SpeedFunction::observe`].
///
/// A constant function ([`SpeedFunction::constant`]) is nuce's usual
/// constant speed: `t(x) = x · (1 / s)`, the very product
/// [`crate::dist1d::optimal_counts`] computes from the cycle time `1 / s`,
/// so that the functional plan of constant functions is that plan exactly.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(into = "SpeedPoints", try_from = "SpeedPoints")]
pub struct SpeedFunction {
    /// Work sizes, strictly increasing, finite and `> 0`.
    xs: Vec<f64>,
    /// Speed at each size, finite and `> 0`.
    speeds: Vec<f64>,
    /// Number of measurements averaged into each point.
    samples: Vec<usize>,
    /// `env[k] = max_{j ≤ k} x_j · (1 / s_j)`: the envelope at the points.
    env: Vec<f64>,
    /// Relative noise of the speeds.
    noise: f64,
}

/// The serialised form of a [`SpeedFunction`]: its merged points and noise
/// (checked again when read back).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SpeedPoints {
    /// `(x, s(x), samples)` for every point, by increasing `x`.
    pub points: Vec<(f64, f64, usize)>,
    /// Relative noise.
    pub noise: f64,
}

impl From<SpeedFunction> for SpeedPoints {
    fn from(f: SpeedFunction) -> Self {
        SpeedPoints {
            points: (0..f.xs.len())
                .map(|k| (f.xs[k], f.speeds[k], f.samples[k]))
                .collect(),
            noise: f.noise,
        }
    }
}

impl TryFrom<SpeedPoints> for SpeedFunction {
    type Error = Error;
    fn try_from(p: SpeedPoints) -> Result<Self> {
        if !p.points.windows(2).all(|w| w[0].0 < w[1].0) || p.points.iter().any(|q| q.2 == 0) {
            return Err(Error::InvalidInput(
                "speed function points must have increasing sizes and at least one sample".into(),
            ));
        }
        let xs = p.points.iter().map(|q| q.0).collect();
        let speeds = p.points.iter().map(|q| q.1).collect();
        let samples = p.points.iter().map(|q| q.2).collect();
        SpeedFunction::build(xs, speeds, samples, p.noise)
    }
}

/// What [`SpeedFunction::observe`] does with the old points when a new
/// measurement disagrees with the function beyond the noise.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Aging {
    /// Forget every old point: the function becomes the new point alone
    /// (constant) and grows again from later measurements.
    Reset,
    /// Keep the shape: every old speed is multiplied by the ratio of the
    /// measured to the predicted speed at the new size (a change that slows
    /// all sizes alike, such as a second process sharing the core), then the
    /// new point is added.
    Rescale,
    /// Keep every point: the measurement is averaged in as it is (the
    /// caller knows the disagreement is noise, e.g. because its own change
    /// detection did not fire).
    Keep,
}

/// The outcome of [`SpeedFunction::observe`].
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub enum Observation {
    /// The measurement agreed with the function within the noise and was
    /// added to it (averaged into the point of the same size, if any).
    Agreed,
    /// The measurement disagreed: the rank's speed changed.
    Changed {
        /// Measured over predicted speed at the new size.
        ratio: f64,
        /// How many old points were dropped ([`Aging::Reset`]) — 0 for
        /// [`Aging::Rescale`].
        dropped: usize,
    },
    /// The measurement was at a size no point of the function is near
    /// ([`SpeedFunction::learn`]): new knowledge of the function's shape,
    /// added as it is (a speed predicted there is an interpolation or an
    /// extrapolation, not a measurement to compare with).
    New,
}

/// Checks a relative noise: finite, `0 ≤ noise < 1`.
pub(crate) fn check_noise(noise: f64) -> Result<()> {
    if noise.is_finite() && (0.0..1.0).contains(&noise) {
        Ok(())
    } else {
        Err(Error::InvalidInput(format!(
            "relative noise {noise}: must be finite, at least 0 and below 1"
        )))
    }
}

/// Checks one measured point `(x, t)` at position `index`.
fn check_point(index: usize, x: f64, t: f64) -> Result<()> {
    let bad = |what: &str, v: f64| {
        Err(Error::InvalidInput(format!(
            "speed point {index}: {what} {v} must be finite and > 0"
        )))
    };
    if !(x.is_finite() && x > 0.0) {
        return bad("work", x);
    }
    if !(t.is_finite() && t > 0.0) {
        return bad("time", t);
    }
    let s = x / t;
    if !(s.is_finite() && s > 0.0) {
        return Err(Error::InvalidInput(format!(
            "speed point {index}: work {x} over time {t} is not a finite positive speed"
        )));
    }
    Ok(())
}

/// Whether two relative-noise intervals `[a(1 − ea), a(1 + ea)]` and
/// `[b(1 − eb), b(1 + eb)]` of positive values share a point.
pub fn within_noise(a: f64, ea: f64, b: f64, eb: f64) -> bool {
    a * (1.0 - ea) <= b * (1.0 + eb) && b * (1.0 - eb) <= a * (1.0 + ea)
}

impl SpeedFunction {
    /// The speed function through measured points `(work x, time t)`:
    /// every `x` and `t` finite and `> 0`, `x / t` a finite positive speed,
    /// at least one point, `noise` finite in `[0, 1)`; anything else is an
    /// [`Error`] (`Empty` or `InvalidInput`, naming the point). Points of
    /// equal `x` are merged, their times averaged. `O(m log m)`.
    pub fn new(points: &[(f64, f64)], noise: f64) -> Result<Self> {
        check_noise(noise)?;
        if points.is_empty() {
            return Err(Error::Empty("a speed function needs a point".into()));
        }
        for (i, &(x, t)) in points.iter().enumerate() {
            check_point(i, x, t)?;
        }
        let mut sorted = points.to_vec();
        sorted.sort_by(|a, b| a.0.total_cmp(&b.0));
        let (mut xs, mut speeds, mut samples) = (Vec::new(), Vec::new(), Vec::new());
        let mut k = 0;
        while k < sorted.len() {
            let x = sorted[k].0;
            let run = sorted[k..].iter().take_while(|p| p.0 == x).count();
            let mean_t = sorted[k..k + run].iter().map(|p| p.1).sum::<f64>() / run as f64;
            xs.push(x);
            speeds.push(x / mean_t);
            samples.push(run);
            k += run;
        }
        Self::build(xs, speeds, samples, noise)
    }

    /// A constant speed `speed` (finite, `> 0`) at every size: nuce's
    /// constant-speed model as a function.
    pub fn constant(speed: f64, noise: f64) -> Result<Self> {
        crate::check_speeds(&[speed])?;
        Self::build(vec![1.0], vec![speed], vec![1], noise)
    }

    /// Checks the parts and computes the envelope.
    fn build(xs: Vec<f64>, speeds: Vec<f64>, samples: Vec<usize>, noise: f64) -> Result<Self> {
        check_noise(noise)?;
        if xs.is_empty() || xs.len() != speeds.len() || xs.len() != samples.len() {
            return Err(Error::Empty("a speed function needs a point".into()));
        }
        for (i, (&x, &s)) in xs.iter().zip(&speeds).enumerate() {
            if !(x.is_finite() && x > 0.0 && s.is_finite() && s > 0.0) {
                return Err(Error::InvalidInput(format!(
                    "speed point {i}: work {x} and speed {s} must be finite and > 0"
                )));
            }
        }
        let mut f = SpeedFunction {
            xs,
            speeds,
            samples,
            env: Vec::new(),
            noise,
        };
        f.envelope();
        Ok(f)
    }

    fn envelope(&mut self) {
        let mut m = 0.0f64;
        self.env = self
            .xs
            .iter()
            .zip(&self.speeds)
            .map(|(&x, &s)| {
                m = m.max(x * (1.0 / s));
                m
            })
            .collect();
    }

    /// The merged points `(x, s(x))`, by increasing `x`.
    pub fn points(&self) -> Vec<(f64, f64)> {
        self.xs
            .iter()
            .copied()
            .zip(self.speeds.iter().copied())
            .collect()
    }

    /// The relative noise of the speeds.
    pub fn noise(&self) -> f64 {
        self.noise
    }

    /// The function with another relative noise (finite, in `[0, 1)`).
    pub fn with_noise(mut self, noise: f64) -> Result<Self> {
        check_noise(noise)?;
        self.noise = noise;
        Ok(self)
    }

    /// `s(x)`: linear between the points, constant beyond the ends. `O(log m)`.
    pub fn speed(&self, x: f64) -> f64 {
        let k = self.xs.partition_point(|&xk| xk <= x);
        if k == 0 {
            return self.speeds[0];
        }
        if k == self.xs.len() {
            return self.speeds[k - 1];
        }
        let (x0, x1, s0, s1) = (
            self.xs[k - 1],
            self.xs[k],
            self.speeds[k - 1],
            self.speeds[k],
        );
        s0 + (s1 - s0) * ((x - x0) / (x1 - x0))
    }

    /// The modelled time of `x` work units, `t(x) = x · (1 / s(x))`; 0 for
    /// `x ≤ 0`.
    pub fn time(&self, x: f64) -> f64 {
        if x <= 0.0 {
            return 0.0;
        }
        x * (1.0 / self.speed(x))
    }

    /// The planning time `t̄(x) = max_{0 < y ≤ x} t(y)`, nondecreasing;
    /// equal to [`SpeedFunction::time`] when [`SpeedFunction::is_monotone`].
    /// `O(log m)`: `t` is monotone on each linear piece, so the maximum over
    /// the earlier pieces is the maximum at the earlier points.
    pub fn envelope_time(&self, x: f64) -> f64 {
        let k = self.xs.partition_point(|&xk| xk <= x);
        let t = self.time(x);
        if k == 0 {
            t
        } else {
            t.max(self.env[k - 1])
        }
    }

    /// Whether the modelled time never decreases as the work grows (then the
    /// envelope is the time itself): the times at the points are
    /// nondecreasing.
    pub fn is_monotone(&self) -> bool {
        self.xs
            .iter()
            .zip(&self.speeds)
            .map(|(&x, &s)| x * (1.0 / s))
            .collect::<Vec<_>>()
            .windows(2)
            .all(|w| w[0] <= w[1])
    }

    /// Whether the function is flat within a relative `noise`: some constant
    /// speed lies within `±noise` of every point's speed, i.e.
    /// `max s · (1 − noise) ≤ min s · (1 + noise)`. A flat function may be
    /// replaced by a constant speed without a difference the measurements
    /// could show.
    pub fn is_flat(&self, noise: f64) -> bool {
        let max = self.speeds.iter().copied().fold(0.0, f64::max);
        let min = self.speeds.iter().copied().fold(f64::INFINITY, f64::min);
        max * (1.0 - noise) <= min * (1.0 + noise)
    }

    /// Whether every point has the same speed, bit for bit: `s` is constant
    /// (as made by [`SpeedFunction::constant`]).
    pub fn is_constant(&self) -> bool {
        self.speeds.iter().all(|&s| s == self.speeds[0])
    }

    /// The mean of the points' speeds (the constant speed of a flat function).
    pub fn mean_speed(&self) -> f64 {
        self.speeds.iter().sum::<f64>() / self.speeds.len() as f64
    }

    /// Largest real `x ≥ 0` with `t̄(x) ≤ t` (`t ≥ 0`): the intersection of
    /// the line `s = x / t` through the origin with the speed graph
    /// (\[LR07\]), where the envelope first crosses `t`. Exact up to
    /// rounding; callers needing the exact integer check with
    /// [`SpeedFunction::envelope_time`].
    pub fn max_work(&self, t: f64) -> f64 {
        let k = self.env.partition_point(|&m| m <= t);
        if k == 0 {
            return t * self.speeds[0];
        }
        let m = self.xs.len();
        if k == m {
            return t * self.speeds[m - 1];
        }
        // The envelope first exceeds t at point k: on the piece (k − 1, k)
        // the time rises from at most t to above t.
        let (x0, x1, s0, s1) = (
            self.xs[k - 1],
            self.xs[k],
            self.speeds[k - 1],
            self.speeds[k],
        );
        let b = (s1 - s0) / (x1 - x0);
        // (x0 + d) / (s0 + b d) = t  ⇔  d = (t s0 − x0) / (1 − t b).
        let d = (t * s0 - x0) / (1.0 - t * b);
        if d.is_finite() {
            x0 + d.clamp(0.0, x1 - x0)
        } else {
            x0
        }
    }

    /// A new measurement: `x` work units took `t` seconds (checked like
    /// [`SpeedFunction::new`]'s points). When the measured speed `x / t`
    /// agrees with `s(x)` within the function's noise (their `±noise`
    /// intervals overlap) the point is added — averaged into a point of the
    /// same `x` — and [`Observation::Agreed`] is returned. Otherwise the rank's
    /// speed changed: the old points are aged as `aging` says
    /// ([`Aging::Reset`] drops them, [`Aging::Rescale`] scales them to the new
    /// measurement), the new point is added and [`Observation::Changed`] is
    /// returned. On an error the function is unchanged.
    pub fn observe(&mut self, x: f64, t: f64, aging: Aging) -> Result<Observation> {
        self.observe_within(x, t, aging, self.noise)
    }

    /// [`SpeedFunction::observe`] with the relative `band` instead of the
    /// function's noise.
    fn observe_within(&mut self, x: f64, t: f64, aging: Aging, band: f64) -> Result<Observation> {
        check_point(0, x, t)?;
        let measured = x / t;
        let predicted = self.speed(x);
        let ratio = measured / predicted;
        if within_noise(measured, band, predicted, band) {
            self.insert(x, t);
            return Ok(Observation::Agreed);
        }
        let dropped = match aging {
            Aging::Reset => {
                let dropped = self.xs.len();
                *self = Self::build(vec![x], vec![measured], vec![1], self.noise)?;
                return Ok(Observation::Changed { ratio, dropped });
            }
            Aging::Rescale => {
                let scaled: Vec<f64> = self.speeds.iter().map(|s| s * ratio).collect();
                let mut next =
                    Self::build(self.xs.clone(), scaled, self.samples.clone(), self.noise)?;
                next.insert(x, t);
                *self = next;
                0
            }
            Aging::Keep => {
                self.insert(x, t);
                0
            }
        };
        Ok(Observation::Changed { ratio, dropped })
    }

    /// Adds the checked point `(x, t)`, averaging times at an equal `x`.
    fn insert(&mut self, x: f64, t: f64) {
        let k = self.xs.partition_point(|&xk| xk < x);
        if k < self.xs.len() && self.xs[k] == x {
            let n = self.samples[k] as f64;
            let mean_t = (x / self.speeds[k] * n + t) / (n + 1.0);
            self.speeds[k] = x / mean_t;
            self.samples[k] += 1;
        } else {
            self.xs.insert(k, x);
            self.speeds.insert(k, x / t);
            self.samples.insert(k, 1);
        }
        self.envelope();
    }

    /// [`SpeedFunction::observe`] for a history of phases whose work sizes
    /// move (\[CLR11\]): a measurement at a size within a relative `reach`
    /// of a point's size (`|x − x_k| ≤ reach · x_k`) re-measures that point
    /// and is observed as [`SpeedFunction::observe`] does, within the
    /// function's noise but at least [`super::MIN_FLAT_NOISE`] (phases vary
    /// more than repeated samples; a disagreement is a change of speed, aged
    /// as `aging` says); a measurement at a size no
    /// point is near teaches the function its shape and is added as it is
    /// ([`Observation::New`]) — a rank that is 3× slower on a larger block
    /// has not *changed*, its speed depends on the size. `reach` must be
    /// finite and `≥ 0`. On an error the function is unchanged.
    pub fn learn(&mut self, x: f64, t: f64, reach: f64, aging: Aging) -> Result<Observation> {
        check_point(0, x, t)?;
        if !(reach.is_finite() && reach >= 0.0) {
            return Err(Error::InvalidInput(format!(
                "reach {reach}: must be finite and at least 0"
            )));
        }
        let k = self.xs.partition_point(|&xk| xk < x);
        let near = |j: usize| {
            self.xs
                .get(j)
                .is_some_and(|&xj| (x - xj).abs() <= reach * xj)
        };
        if near(k) || (k > 0 && near(k - 1)) {
            let band = self.noise.max(super::MIN_FLAT_NOISE);
            return self.observe_within(x, t, aging, band);
        }
        self.insert(x, t);
        Ok(Observation::New)
    }

    /// The function a plan can trust where two points are close: between
    /// two adjacent points closer than a relative `gap` (`x_{k+1} − x_k ≤
    /// gap · x_k`) whose speeds differ beyond the noise, the speed is the
    /// lower of the two (a knee somewhere in between, not a slope: a
    /// plan between them risks the slow side), by points added just inside
    /// the interval; elsewhere the function is unchanged. Sample counts of
    /// the added points are 1. Wide gaps keep their linear interpolation,
    /// so that a plan explores them.
    pub fn cautious(&self, gap: f64) -> SpeedFunction {
        let mut out = self.clone();
        let (mut xs, mut speeds, mut samples) = (Vec::new(), Vec::new(), Vec::new());
        for k in 0..self.xs.len() {
            xs.push(self.xs[k]);
            speeds.push(self.speeds[k]);
            samples.push(self.samples[k]);
            let Some(&x1) = self.xs.get(k + 1) else { break };
            let (x0, s0, s1) = (self.xs[k], self.speeds[k], self.speeds[k + 1]);
            let close = x1 - x0 <= gap * x0;
            if !close || within_noise(s0, self.noise, s1, self.noise) {
                continue;
            }
            let low = s0.min(s1);
            let (a, b) = (x0 + (x1 - x0) * 1e-6, x1 - (x1 - x0) * 1e-6);
            if x0 < a && a < b && b < x1 {
                xs.extend([a, b]);
                speeds.extend([low, low]);
                samples.extend([1, 1]);
            }
        }
        out.xs = xs;
        out.speeds = speeds;
        out.samples = samples;
        out.envelope();
        out
    }
}
