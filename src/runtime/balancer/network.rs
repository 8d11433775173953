//! The balancer's view of the cluster: the links to the root
//! ([`Network`], [`Balancer::measure_network`]), the bandwidth of past
//! moves, and the hosts of the ranks for two-level plans.

use super::*;

/// Smallest per-rank move (bytes) from which a remap's time updates the bandwidth estimate.
pub(crate) const MIN_BANDWIDTH_SAMPLE: u64 = 1 << 20;

/// The network as measured by [`Balancer::measure_network`] (identical on every rank).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Network {
    /// Every non-root rank's link to the root, in rank order.
    pub links: Vec<LinkRecord>,
    /// Slowest link's bandwidth (bytes/s): the bottleneck of a remap, whose
    /// time is that of its slowest rank.
    pub bandwidth: f64,
    /// Largest link latency (s).
    pub latency_s: f64,
}

impl Network {
    /// Summarises links (slowest bandwidth, largest latency). With no link
    /// (one rank) the network is "infinitely" fast: bandwidth `f64::MAX`, latency 0.
    pub fn from_links(links: Vec<LinkRecord>) -> Result<Network> {
        let mut bandwidth = f64::MAX;
        let mut latency_s = 0.0f64;
        for l in &links {
            if !(l.bandwidth_bytes_per_s.is_finite()
                && l.bandwidth_bytes_per_s > 0.0
                && l.latency_s.is_finite()
                && l.latency_s >= 0.0)
            {
                return Err(Error::invalid_input(format!("bad link record {l:?}")));
            }
            bandwidth = bandwidth.min(l.bandwidth_bytes_per_s);
            latency_s = latency_s.max(l.latency_s);
        }
        Ok(Network {
            links,
            bandwidth,
            latency_s,
        })
    }

    /// Master–worker communication time of every rank: sending `bytes`
    /// between the root (the master) and rank `r` costs `τ_r + bytes/β_r`
    /// over the rank's measured link (Hockney's model, \[KRW96\] §2); 0 for the
    /// root itself. `size` is the communicator size. The `t_com` input of a
    /// master–worker planner. O(p).
    pub fn t_com(&self, size: usize, root: usize, bytes: usize) -> Vec<f64> {
        let mut t = vec![0.0; size];
        for l in &self.links {
            if let Some(x) = usize::try_from(l.rank).ok().and_then(|r| t.get_mut(r)) {
                if l.rank as usize != root {
                    *x = l.transfer_time(bytes);
                }
            }
        }
        t
    }

    /// The latency in the unit of the latency-aware array decomposers
    /// ([`crate::plan::array2d::registry::decomposer_with_latency`]): the
    /// cost of one message expressed in cell transfers along a boundary,
    /// `latency_s × bandwidth / element_bytes` (the Acost of \[KRW96\] §5 counts
    /// cells; a message costs `τ + cells·e/β` seconds, i.e. `τβ/e + cells`
    /// cell-times). 0 when there is no link or `element_bytes` is 0.
    pub fn latency_cells(&self, element_bytes: usize) -> f64 {
        if self.links.is_empty() || element_bytes == 0 {
            return 0.0;
        }
        let x = self.latency_s * self.bandwidth / element_bytes as f64;
        if x.is_finite() {
            x
        } else {
            0.0
        }
    }
}

/// The remap policy with the measured network: the per-message latency is
/// the measured largest link latency, and the bandwidth is the one learnt
/// from a large remap (`observed`) if any, else the measured slowest link's.
/// Without a measured network (or with no link) both stay as they are.
pub fn network_policy(
    policy: &RemapPolicy,
    observed: Option<f64>,
    network: Option<&Network>,
) -> (RemapPolicy, Option<f64>) {
    let mut policy = *policy;
    let mut bandwidth = observed;
    if let Some(n) = network.filter(|n| !n.links.is_empty()) {
        policy.latency = n.latency_s;
        bandwidth = bandwidth.or(Some(n.bandwidth));
    }
    (policy, bandwidth)
}

impl Balancer {
    /// Measures every rank's link to the root with the ping-pong probe
    /// (module `netprobe`) and keeps the result on every rank. From then
    /// on, remap decisions use the slowest link's bandwidth (until a large
    /// remap has been timed, see [`Measured::bandwidth`]) and the largest
    /// latency as the per-message cost, and [`Network::latency_cells`]
    /// gives the latency for the latency-aware decomposers. Cost: see
    /// `probe_links`, serialised at the root.
    pub fn measure_network(&mut self, cfg: &ProbeConfig) -> Result<&Network> {
        let _w = waiting();
        let _span = info_span!("measure_network").entered();
        self.arrive(&format!("Balancer::measure_network({cfg:?})"))?;
        let links = probe_links(&self.comm, ROOT, cfg)?;
        let net = root_compute(&self.comm, ROOT, || {
            Network::from_links(
                links.ok_or_else(|| Error::invalid_input("no link records at the root"))?,
            )
        })?;
        info!(
            bandwidth = net.bandwidth,
            latency_s = net.latency_s,
            "measured network"
        );
        Ok(self.network.insert(net))
    }

    /// Detects the hosts of the ranks (shared-memory split plus host names,
    /// [`crate::runtime::hierarchy::detect_hosts`]) and keeps them.
    pub fn detect_hosts(&mut self) -> Result<&Hosts> {
        let _w = waiting();
        self.arrive("Balancer::detect_hosts")?;
        let h = detect_hosts(&self.comm)?;
        info!(hosts = h.len(), "detected hosts");
        self.two_level = Some(TwoLevel::new(&self.comm, &h)?);
        // From now on the checked entries go through the host leaders too.
        self.cp.set_hosts(Some(&h.host_of), self.comm.rank());
        Ok(self.hosts.insert(h))
    }

    /// Sets the host of every rank explicitly (collective: the root's table
    /// is validated and broadcast), e.g. to emulate hosts on one machine.
    pub fn set_hosts(&mut self, host_of: &[usize]) -> Result<&Hosts> {
        let _w = waiting();
        self.arrive("Balancer::set_hosts")?;
        let p = self.comm.size() as usize;
        let h = root_compute(&self.comm, ROOT, || {
            if host_of.len() != p {
                return Err(Error::shape_mismatch(format!(
                    "{} host ids for {p} ranks",
                    host_of.len()
                )));
            }
            // Leader of each rank: the first rank with the same host id.
            let leaders: Vec<i32> = host_of
                .iter()
                .map(|h| host_of.iter().position(|x| x == h).unwrap_or(0) as i32)
                .collect();
            let names: Vec<String> = host_of.iter().map(|h| format!("host{h}")).collect();
            Hosts::from_leaders(&leaders, &names)
        })?;
        self.two_level = Some(TwoLevel::new(&self.comm, &h)?);
        // From now on the checked entries go through the host leaders too.
        self.cp.set_hosts(Some(&h.host_of), self.comm.rank());
        Ok(self.hosts.insert(h))
    }

    /// The remap policy and bandwidth for the next decision ([`network_policy`]).
    pub(super) fn network_policy(&self) -> (RemapPolicy, Option<f64>) {
        network_policy(&self.settings.policy, self.bandwidth, self.network.as_ref())
    }

    /// Learns the bandwidth from a data movement (a remap), when it is
    /// large enough to be meaningful (local).
    pub(super) fn learn_bandwidth(&mut self, stats: &MoveStats) {
        if stats.max_rank_bytes >= MIN_BANDWIDTH_SAMPLE && stats.seconds > 0.0 {
            self.bandwidth = Some(stats.max_rank_bytes as f64 / stats.seconds);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::speed::network::{LinkRecord, ProbeConfig};

    fn link(rank: i32, latency: f64, bandwidth: f64) -> LinkRecord {
        // Exact one-way times of Hockney's model for the default sizes.
        let cfg = ProbeConfig::default();
        let t = |b: usize| latency + b as f64 / bandwidth;
        LinkRecord::from_one_way_times(rank, 0, &cfg, &[t(cfg.small_bytes)], &[t(cfg.large_bytes)])
            .unwrap()
    }

    #[test]
    fn network_summary_and_latency_in_cells() {
        let n = Network::from_links(vec![link(1, 1e-4, 1e8), link(2, 5e-5, 2e7)]).unwrap();
        assert_eq!(n.latency_s, 1e-4 + 8.0 / 1e8);
        assert!((n.bandwidth - 2e7).abs() < 1.0);
        // τβ/e: 1e-4 s at 20 MB/s is 2000 bytes, 250 doubles.
        assert!((n.latency_cells(8) - (1e-4 + 8.0 / 1e8) * n.bandwidth / 8.0).abs() < 1e-9);
        assert!((n.latency_cells(8) - 250.0).abs() < 0.5);
        assert_eq!(n.latency_cells(0), 0.0);
        // t_com: τ + B/β of each rank's own link, 0 at the root.
        let t = n.t_com(3, 0, 1000);
        assert_eq!(t[0], 0.0);
        assert!((t[1] - (1e-4 + 8.0 / 1e8 + 1000.0 / 1e8)).abs() < 1e-12);
        assert!((t[2] - (5e-5 + 8.0 / 2e7 + 1000.0 / 2e7)).abs() < 1e-12);
        let none = Network::from_links(vec![]).unwrap();
        assert_eq!(none.latency_cells(8), 0.0);
        let mut bad = link(1, 1e-4, 1e8);
        bad.bandwidth_bytes_per_s = f64::NAN;
        assert!(Network::from_links(vec![bad]).is_err());
    }

    #[test]
    fn measured_network_drives_the_remap_decision() {
        use crate::plan::array2d::ColumnDp;
        let split = |s: &[f64]| ColumnDp::default().decompose(100, 100, s).unwrap();
        let (even, skewed) = (split(&[1.0, 1.0]), split(&[1.0, 3.0]));
        let speeds = [1.0e6, 3.0e6];
        let pol = RemapPolicy::default();
        // Default 1 GB/s: moving a quarter of the cells pays off over 10 iterations.
        let (p, bw) = network_policy(&pol, None, None);
        assert_eq!((p, bw), (pol, None));
        let d = p.decide(&even, &skewed, &speeds, 8, 10, bw).unwrap();
        assert!(d.remap);
        // A measured 10 kB/s link: 20 kB take 2 s, more than the 25 ms gained.
        assert_eq!(even.areas(), vec![5000, 5000]);
        assert_eq!(skewed.areas(), vec![2500, 7500]);
        let slow = Network::from_links(vec![link(1, 1e-3, 1e4)]).unwrap();
        let (p, bw) = network_policy(&pol, None, Some(&slow));
        assert_eq!(p.latency, slow.latency_s);
        assert_eq!(bw, Some(slow.bandwidth));
        let d = p.decide(&even, &skewed, &speeds, 8, 10, bw).unwrap();
        assert!(!d.remap && d.bandwidth == slow.bandwidth, "{d:?}");
        // A bandwidth learnt from a large remap takes precedence.
        let (_, bw) = network_policy(&pol, Some(5e8), Some(&slow));
        assert_eq!(bw, Some(5e8));
    }
}
