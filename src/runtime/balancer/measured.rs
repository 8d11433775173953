//! [`Measured`]: what a balancer has measured of the machine, or been told
//! — speeds and their noise, the speed records, this rank's speed
//! function, the hosts, the network, the bandwidth of data movement and
//! the memory limits — read in one place (local, nothing is communicated).

use super::*;

/// A read-only view of what a [`Balancer`] knows of the machine
/// ([`Balancer::measured`]). Each item is `None` until the call that
/// provides it ran.
#[derive(Clone, Copy)]
pub struct Measured<'a> {
    bal: &'a Balancer,
}

impl<'a> Measured<'a> {
    /// The current speed estimate of every rank (work units per second):
    /// those the plans are made for, once known (after
    /// [`Balancer::measure`], [`Balancer::set_speeds`] or a balance point).
    pub fn speeds(&self) -> Option<&'a [f64]> {
        self.bal.book.speeds()
    }

    /// Every rank's speed with its noise before ranks the noise cannot tell
    /// apart were snapped together ([`snap_speeds`]).
    pub fn speed_estimates(&self) -> Option<&'a [SpeedEstimate]> {
        self.bal.book.estimates()
    }

    /// Every rank's speed record (kernel measurement, hwloc topology, host
    /// name), on the root after [`Balancer::measure`].
    pub fn records(&self) -> Option<&'a [SpeedRecord]> {
        self.bal.book.records()
    }

    /// This rank's speed function (work units per iteration → seconds per
    /// iteration), once a phase was timed by [`Balancer::maybe_remap`] or
    /// sizes were swept by [`Balancer::measure_sizes`].
    pub fn speed_function(&self) -> Option<&'a SpeedFunction> {
        self.bal.own.speed_function()
    }

    /// The hosts of the ranks, once [`Balancer::detect_hosts`] or
    /// [`Balancer::set_hosts`] ran.
    pub fn hosts(&self) -> Option<&'a Hosts> {
        self.bal.hosts.as_ref()
    }

    /// The network, once [`Balancer::measure_network`] ran.
    pub fn network(&self) -> Option<&'a Network> {
        self.bal.network.as_ref()
    }

    /// The bandwidth of the last large data movement nuce timed (bytes per
    /// second per rank): what the remap decisions price a migration with,
    /// before the network's.
    pub fn bandwidth(&self) -> Option<f64> {
        self.bal.bandwidth
    }

    /// Every rank's memory limit in cells (`usize::MAX`: none), once some
    /// rank declared one ([`Balancer::set_memory_limit`]); the same on
    /// every rank.
    pub fn memory_limits(&self) -> Option<&'a [usize]> {
        self.bal.book.memory_limits()
    }
}

impl Balancer {
    /// What the balancer has measured of the machine, or been told: speeds
    /// with their noise and records, this rank's speed function, hosts,
    /// network, bandwidth and memory limits ([`Measured`]; local).
    pub fn measured(&self) -> Measured<'_> {
        Measured { bal: self }
    }
}
