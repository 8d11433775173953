//! Noisy speed estimates: their intervals, and snapping speeds that the noise
//! cannot tell apart to one value.

use serde::{Deserialize, Serialize};

use super::speed_fn::{check_noise, within_noise};
use crate::error::{Error, Result};

/// A rank's speed as measured: the mean and its relative noise (the speed
/// lies in `[mean (1 − noise), mean (1 + noise)]`).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct SpeedEstimate {
    /// Mean speed, finite and `> 0`.
    pub mean: f64,
    /// Relative noise, finite, in `[0, 1)`.
    pub noise: f64,
}

impl SpeedEstimate {
    /// A checked estimate.
    pub fn new(mean: f64, noise: f64) -> Result<Self> {
        crate::check_speeds(&[mean])?;
        check_noise(noise)?;
        Ok(SpeedEstimate { mean, noise })
    }

    /// The estimate of repeated speed samples: their mean, and as noise their
    /// relative sample standard deviation `sd / mean` (`n − 1` in the
    /// denominator; 0 for one sample). Every sample must be finite and
    /// `> 0`; a noise of 1 or more is an error (the samples say nothing).
    pub fn from_samples(samples: &[f64]) -> Result<Self> {
        crate::check_speeds(samples)?;
        let n = samples.len() as f64;
        let mean = samples.iter().sum::<f64>() / n;
        let var = if samples.len() > 1 {
            samples.iter().map(|s| (s - mean) * (s - mean)).sum::<f64>() / (n - 1.0)
        } else {
            0.0
        };
        Self::new(mean, var.sqrt() / mean)
    }

    /// The lowest speed within the noise.
    pub fn low(&self) -> f64 {
        self.mean * (1.0 - self.noise)
    }

    /// The highest speed within the noise.
    pub fn high(&self) -> f64 {
        self.mean * (1.0 + self.noise)
    }
}

/// Checks estimates: non-empty, each valid.
pub(crate) fn check_estimates(est: &[SpeedEstimate]) -> Result<()> {
    if est.is_empty() {
        return Err(Error::Empty("no speed estimates".into()));
    }
    for (index, e) in est.iter().enumerate() {
        if !(e.mean.is_finite() && e.mean > 0.0) {
            return Err(Error::InvalidSpeed {
                index,
                value: e.mean,
            });
        }
        check_noise(e.noise)?;
    }
    Ok(())
}

/// Speeds the noise cannot tell apart, snapped to one value, so that identical
/// cores get identical shares. Ranks are taken by increasing mean speed
/// (ties by index) and grouped greedily: a rank joins the current group while
/// its interval `[low, high]` meets the common part of the group's intervals
/// (so the speeds of a group all lie within their noise of one value); each
/// group gets its members' mean (members of one exact value keep it
/// bit for bit). With zero noise only equal speeds group: the speeds come
/// back unchanged. `O(p log p)`.
///
/// ```
/// use nuce_plan::fpm::{snap_speeds, SpeedEstimate};
/// let e = |m| SpeedEstimate::new(m, 0.08).unwrap();
/// // 1.0 ± 8 % and 0.9 ± 8 % overlap: one group; 2.0 stands apart.
/// let s = snap_speeds(&[e(1.0), e(0.9), e(2.0)])?;
/// assert_eq!(s, vec![0.95, 0.95, 2.0]);
/// # Ok::<(), nuce_plan::Error>(())
/// ```
pub fn snap_speeds(est: &[SpeedEstimate]) -> Result<Vec<f64>> {
    check_estimates(est)?;
    let mut order: Vec<usize> = (0..est.len()).collect();
    order.sort_by(|&a, &b| est[a].mean.total_cmp(&est[b].mean).then(a.cmp(&b)));
    let mut out = vec![0.0; est.len()];
    let mut start = 0;
    while start < order.len() {
        let first = est[order[start]];
        let (mut low, mut high) = (first.low(), first.high());
        let mut end = start + 1;
        while end < order.len() {
            let e = est[order[end]];
            if e.low() > high || e.high() < low {
                break;
            }
            low = low.max(e.low());
            high = high.min(e.high());
            end += 1;
        }
        let group = &order[start..end];
        let (min, max) = (est[group[0]].mean, est[group[end - start - 1]].mean);
        let value = if min == max {
            min
        } else {
            group.iter().map(|&i| est[i].mean).sum::<f64>() / group.len() as f64
        };
        for &i in group {
            out[i] = value;
        }
        start = end;
    }
    Ok(out)
}

/// Whether two estimates are equal within their noise (their intervals meet).
pub fn same_speed(a: &SpeedEstimate, b: &SpeedEstimate) -> bool {
    within_noise(a.mean, a.noise, b.mean, b.noise)
}
