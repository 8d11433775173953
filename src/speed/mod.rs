//! Speed measurement: how fast is this rank, and on what hardware?
//!
//! Each rank measures its own throughput in one of two ways:
//!
//! * **a built-in calibrated kernel** ([`measure_kernel`]): a cache-resident
//!   stencil sweep ([`Kernel::Stencil`]) or a memory-bound one
//!   ([`Kernel::Memory`]), calibrated to a minimum sample time, warmed up,
//!   repeated, reported as the median of `k` samples with min and max;
//! * **timing of the application's own phases** ([`PhaseTimer::record`]),
//!   smoothed by an EWMA so that one noisy phase does not trigger a remap.
//!
//! A rank's [`SpeedRecord`] carries the speed, how it was obtained, and the
//! rank's [`Topology`] (host, cores, PUs, binding, caches). Records are serde
//! structs; the runtime gathers them at the root as bincode bytes
//! ([`SpeedRecord::to_bytes`]).
//!
//! Heterogeneity is always *measured*: emulate it by binding several ranks to
//! one core (`scripts/bind_ranks.sh`) or by a [`KernelConfig::work_multiplier`]
//! that really does more work; nuce is never told the resulting speeds.
//!
//! ```
//! use nuce::speed::{measure_kernel, topology, KernelConfig, SpeedRecord};
//! let cfg = KernelConfig { repeats: 3, ..Default::default() };
//! let rec = SpeedRecord::from_kernel(0, measure_kernel(&cfg), topology());
//! assert!(rec.speed > 0.0 && rec.topology.pus >= 1);
//! let back = SpeedRecord::from_bytes(&rec.to_bytes().unwrap()).unwrap();
//! assert_eq!(back, rec);
//! ```

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

mod kernel;
pub mod network;
mod phase;
pub mod stats;
mod topology;

pub use kernel::{
    measure_kernel, measure_sweep, try_measure_kernel, Kernel, KernelConfig, KernelMeasurement,
    SweepPoint, MAX_NOISE, MIN_KERNEL_NOISE,
};
pub use phase::PhaseTimer;
pub use stats::Summary;
pub use topology::{machine_memory, topology, Topology};

/// How a [`SpeedRecord`]'s speed was obtained.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum SpeedSource {
    /// A built-in kernel ([`measure_kernel`]); unit: cell updates per second.
    Kernel,
    /// The application's own phases ([`PhaseTimer`]); unit: the application's
    /// work units per second.
    Phase,
}

/// One rank's measured speed and hardware facts, as gathered at the root.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SpeedRecord {
    /// The rank (in the communicator it was gathered on).
    pub rank: i32,
    /// Throughput in work units per second (finite, > 0).
    pub speed: f64,
    /// How `speed` was measured.
    pub source: SpeedSource,
    /// The kernel measurement behind `speed`, when `source` is `Kernel`.
    pub kernel: Option<KernelMeasurement>,
    /// The rank's host and hardware.
    pub topology: Topology,
}

/// Upper bound on a serialized [`SpeedRecord`] accepted by
/// [`SpeedRecord::from_bytes`] (guards against garbage lengths).
pub const MAX_RECORD_BYTES: u64 = 1 << 20;

impl SpeedRecord {
    /// A record whose speed is the kernel measurement's median.
    pub fn from_kernel(rank: i32, m: KernelMeasurement, topology: Topology) -> SpeedRecord {
        SpeedRecord {
            rank,
            speed: m.median,
            source: SpeedSource::Kernel,
            kernel: Some(m),
            topology,
        }
    }

    /// A record from a phase timer's smoothed speed; errors when the timer has
    /// no record yet.
    pub fn from_phase(rank: i32, timer: &PhaseTimer, topology: Topology) -> Result<SpeedRecord> {
        let speed = timer
            .speed()
            .ok_or_else(|| Error::empty("phase timer has no record yet"))?;
        Ok(SpeedRecord {
            rank,
            speed,
            source: SpeedSource::Phase,
            kernel: None,
            topology,
        })
    }

    /// Checks that `speed` is finite and `> 0`.
    pub fn validate(&self) -> Result<()> {
        if self.speed.is_finite() && self.speed > 0.0 {
            Ok(())
        } else {
            Err(Error::Plan(crate::plan::Error::InvalidSpeed {
                index: usize::try_from(self.rank).unwrap_or(0),
                value: self.speed,
            }))
        }
    }

    /// bincode bytes of this record (for gathering).
    pub fn to_bytes(&self) -> Result<Vec<u8>> {
        Ok(bincode::serialize(self)?)
    }

    /// Decodes and validates a record produced by [`to_bytes`](Self::to_bytes);
    /// errors on malformed or oversized input and on an invalid speed.
    pub fn from_bytes(bytes: &[u8]) -> Result<SpeedRecord> {
        use bincode::Options;
        let rec: SpeedRecord = bincode::DefaultOptions::new()
            .with_fixint_encoding()
            .allow_trailing_bytes()
            .with_limit(MAX_RECORD_BYTES)
            .deserialize(bytes)?;
        rec.validate()?;
        Ok(rec)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn topo() -> Topology {
        Topology {
            host: "h".into(),
            cores: 2,
            pus: 4,
            binding: vec![0, 2],
            l1_bytes: Some(32768),
            l2_bytes: None,
            l3_bytes: Some(8 << 20),
        }
    }

    #[test]
    fn records_round_trip_and_validate() {
        let m = KernelMeasurement::from_samples(Kernel::Memory, vec![3.0, 1.0, 2.0]).unwrap();
        let r = SpeedRecord::from_kernel(3, m, topo());
        assert_eq!(r.speed, 2.0);
        let bytes = r.to_bytes().unwrap();
        assert_eq!(SpeedRecord::from_bytes(&bytes).unwrap(), r);
        assert!(SpeedRecord::from_bytes(&bytes[..bytes.len() / 2]).is_err());
        assert!(SpeedRecord::from_bytes(&[0xff; 64]).is_err());
        let json = serde_json::to_string(&r).unwrap();
        assert_eq!(serde_json::from_str::<SpeedRecord>(&json).unwrap(), r);
    }

    #[test]
    fn phase_records() {
        let mut t = PhaseTimer::default();
        assert!(matches!(
            SpeedRecord::from_phase(0, &t, topo()),
            Err(Error::Plan(crate::plan::Error::Empty(_)))
        ));
        t.record(10.0, std::time::Duration::from_secs(2)).unwrap();
        let r = SpeedRecord::from_phase(1, &t, topo()).unwrap();
        assert_eq!(
            (r.speed, r.source, r.kernel.is_none()),
            (5.0, SpeedSource::Phase, true)
        );
        let mut bad = r.clone();
        bad.speed = f64::NAN;
        assert!(SpeedRecord::from_bytes(&bad.to_bytes().unwrap()).is_err());
    }
}
