//! Network link model and the pure part of the network probe.
//!
//! A link is described by the affine cost model of the papers: sending `B`
//! bytes costs `τ + μ·B`, with `τ` the startup latency and `μ` the transfer
//! time per byte (\[KRW96\] §2, "the cost of communication on
//! a local area network can be modeled as O(τ + μB)"; the same affine model
//! of \[AJ88\] §2). This is Hockney's model \[Hoc94\]; nuce reports
//! `latency_s = τ` and `bandwidth_bytes_per_s = 1/μ`.
//!
//! The MPI ping-pong that produces the timings is
//! `Balancer::measure_network`; this module holds its configuration, the fit
//! of `τ` and `μ` from two message sizes, and the [`LinkRecord`].

use serde::{Deserialize, Serialize};

use super::stats::Summary;
use crate::error::{Error, Result};

/// Parameters of a ping-pong link probe.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProbeConfig {
    /// Size of the small (latency) message in bytes (≥ 1).
    pub small_bytes: usize,
    /// Size of the large (bandwidth) message in bytes (> `small_bytes`).
    pub large_bytes: usize,
    /// Untimed round trips of each size first.
    pub warmup: usize,
    /// Timed round trips of each size (≥ 1); the median is used.
    pub repeats: usize,
}

impl Default for ProbeConfig {
    /// 8-byte and 1 MiB messages, 2 warm-up and 9 timed round trips each.
    fn default() -> Self {
        ProbeConfig {
            small_bytes: 8,
            large_bytes: 1 << 20,
            warmup: 2,
            repeats: 9,
        }
    }
}

/// Largest message the probe sends (1 GiB).
pub const MAX_PROBE_BYTES: usize = 1 << 30;

impl ProbeConfig {
    /// Checks `1 ≤ small_bytes < large_bytes ≤ 1 GiB` and `repeats ≥ 1`.
    pub fn validate(&self) -> Result<()> {
        if self.small_bytes == 0 || self.small_bytes >= self.large_bytes {
            return Err(Error::invalid_input(format!(
                "probe sizes must satisfy 1 <= small ({}) < large ({})",
                self.small_bytes, self.large_bytes
            )));
        }
        if self.large_bytes > MAX_PROBE_BYTES {
            return Err(Error::invalid_input(format!(
                "large probe message {} B is over {MAX_PROBE_BYTES} B",
                self.large_bytes
            )));
        }
        if self.repeats == 0 {
            return Err(Error::invalid_input("probe repeats must be >= 1"));
        }
        Ok(())
    }
}

/// Measured link between a rank and the root, in Hockney's model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LinkRecord {
    /// The measuring rank.
    pub rank: i32,
    /// The rank at the other end (the root).
    pub peer: i32,
    /// Startup latency `τ` in seconds: median one-way time (half round trip)
    /// of a small message.
    pub latency_s: f64,
    /// Bandwidth `1/μ` in bytes per second, from the slope between the small
    /// and the large message's one-way times.
    pub bandwidth_bytes_per_s: f64,
    /// Small message size (bytes).
    pub small_bytes: usize,
    /// Large message size (bytes).
    pub large_bytes: usize,
    /// One-way times of the small message (seconds): median, min, max.
    pub small_one_way_s: Summary,
    /// One-way times of the large message (seconds): median, min, max.
    pub large_one_way_s: Summary,
}

/// Fits Hockney's `t(B) = τ + B/β` through `(small, t_small)` and
/// `(large, t_large)`: returns `(τ, β)` with `τ = t_small` (the small
/// message's own transfer time is within the noise) and
/// `β = (large − small) / (t_large − t_small)`. When noise makes
/// `t_large ≤ t_small`, `β = large / t_large` (the transfer rate including
/// latency, a lower bound on `β`). O(1).
///
/// Errors unless `0 < small < large` and both times are finite and `> 0`.
pub fn hockney_fit(small: usize, t_small: f64, large: usize, t_large: f64) -> Result<(f64, f64)> {
    if small == 0 || small >= large {
        return Err(Error::invalid_input(format!(
            "need 0 < small ({small}) < large ({large})"
        )));
    }
    for t in [t_small, t_large] {
        if !(t.is_finite() && t > 0.0) {
            return Err(Error::invalid_input(format!("bad one-way time {t} s")));
        }
    }
    let beta = if t_large > t_small {
        (large - small) as f64 / (t_large - t_small)
    } else {
        large as f64 / t_large
    };
    Ok((t_small, beta))
}

impl LinkRecord {
    /// Builds a record from the one-way times (half round trips, seconds) of
    /// the small and the large message.
    pub fn from_one_way_times(
        rank: i32,
        peer: i32,
        cfg: &ProbeConfig,
        small: &[f64],
        large: &[f64],
    ) -> Result<LinkRecord> {
        cfg.validate()?;
        let s = Summary::of(small)?;
        let l = Summary::of(large)?;
        let (latency_s, bandwidth_bytes_per_s) =
            hockney_fit(cfg.small_bytes, s.median, cfg.large_bytes, l.median)?;
        Ok(LinkRecord {
            rank,
            peer,
            latency_s,
            bandwidth_bytes_per_s,
            small_bytes: cfg.small_bytes,
            large_bytes: cfg.large_bytes,
            small_one_way_s: s,
            large_one_way_s: l,
        })
    }

    /// Predicted one-way time of a `bytes`-byte message: `τ + bytes/β`.
    pub fn transfer_time(&self, bytes: usize) -> f64 {
        self.latency_s + bytes as f64 / self.bandwidth_bytes_per_s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fit_recovers_an_exact_affine_model() {
        // τ = 50 µs, β = 10 MB/s: times computed from the model itself.
        let (tau, beta) = (50e-6, 10e6);
        let t = |b: usize| tau + b as f64 / beta;
        let (small, large) = (8, 1 << 20);
        let (tau2, beta2) = hockney_fit(small, t(small), large, t(large)).unwrap();
        // τ is reported as the small message's time: off by small/β only.
        assert!((tau2 - tau).abs() <= small as f64 / beta + 1e-15);
        assert!((beta2 - beta).abs() / beta < 1e-9);
    }

    #[test]
    fn noisy_inverted_times_fall_back_to_rate() {
        let (_, beta) = hockney_fit(8, 2e-3, 1000, 1e-3).unwrap();
        assert_eq!(beta, 1000.0 / 1e-3);
    }

    #[test]
    fn record_uses_medians_and_predicts() {
        let cfg = ProbeConfig {
            small_bytes: 100,
            large_bytes: 1100,
            ..Default::default()
        };
        // Medians 1 ms and 2 ms (outliers 50 ms ignored): β = 1000 B / 1 ms.
        let r =
            LinkRecord::from_one_way_times(2, 0, &cfg, &[1e-3, 50e-3, 1e-3], &[2e-3, 2e-3, 50e-3])
                .unwrap();
        assert_eq!(r.latency_s, 1e-3);
        assert!((r.bandwidth_bytes_per_s - 1e6).abs() < 1e-3);
        assert!((r.transfer_time(1100) - (1e-3 + 1.1e-3)).abs() < 1e-12);
        assert_eq!(r.small_one_way_s.max, 50e-3);
        let json = serde_json::to_string(&r).unwrap();
        assert_eq!(serde_json::from_str::<LinkRecord>(&json).unwrap(), r);
    }

    #[test]
    fn bad_inputs_are_errors() {
        assert!(hockney_fit(0, 1.0, 10, 2.0).is_err());
        assert!(hockney_fit(10, 1.0, 10, 2.0).is_err());
        assert!(hockney_fit(1, 0.0, 10, 2.0).is_err());
        assert!(hockney_fit(1, 1.0, 10, f64::NAN).is_err());
        let with = |f: fn(&mut ProbeConfig)| {
            let mut c = ProbeConfig::default();
            f(&mut c);
            c
        };
        for bad in [
            with(|c| c.small_bytes = 0),
            with(|c| (c.small_bytes, c.large_bytes) = (16, 16)),
            with(|c| c.repeats = 0),
            with(|c| c.large_bytes = MAX_PROBE_BYTES + 1),
        ] {
            assert!(bad.validate().is_err());
        }
        assert!(
            LinkRecord::from_one_way_times(1, 0, &ProbeConfig::default(), &[], &[1.0]).is_err()
        );
    }
}
