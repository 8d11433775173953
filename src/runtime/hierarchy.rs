//! Host detection: which ranks share a machine (and therefore fast links).
//!
//! [`detect_hosts`] splits the communicator by shared memory
//! (`MPI_Comm_split_type(MPI_COMM_TYPE_SHARED)`, rsmpi's `split_shared`), takes
//! the lowest rank of each shared-memory group as the group's leader, and
//! gathers every rank's leader and host name ([`crate::speed::topology`]) on
//! every rank. The result, [`Hosts`], gives the host id of each rank in the
//! form [`crate::plan::array2d::Hierarchical`] takes, for the two-level
//! decomposition of \[BBLRR01\] §3.2.2 (Figure 14): across hosts
//! by their total speed, then within each host.
//!
//! The shared-memory split is authoritative (two namespace "hosts" of
//! `scripts/cluster.sh` on one kernel are different hosts to MPI, as they
//! have different node names in the launcher); the names are for reports.
//! Cost: one split, one all-reduce on the split, one all-gather of O(p) names.
//!
//! [`TwoLevel`] is the gather this hierarchy allows: each host's leader
//! gathers its host's values (shared memory), then the root gathers one
//! bundle per host (the root leads no host: its own host's next rank
//! gathers it, as in the two-level checked entry of
//! [`crate::runtime::watchdog`]). The root handles `H` messages instead of `p`, which
//! divides the latency term `(p − 1)τ` of a flat gather by the ranks per
//! host (see `benchmarks/cluster.md` §5); the volume is unchanged.

use mpi::collective::SystemOperation;
use mpi::topology::{Color, SimpleCommunicator};
use mpi::traits::*;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use super::comm::{agree, all_gather_values, decode, encode, gather_values};
use super::watchdog;
use crate::error::{Error, Result};

/// The hosts of a communicator's ranks (identical on every rank).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Hosts {
    /// Host id of each rank (hosts numbered 0, 1, … by first appearance in rank order).
    pub host_of: Vec<usize>,
    /// Name of each host (from its lowest rank).
    pub names: Vec<String>,
}

impl Hosts {
    /// Builds the host table from each rank's shared-memory leader (the
    /// lowest rank on its host) and host name. Errors when the lengths differ
    /// or a leader is not a rank. O(p log p).
    pub fn from_leaders(leaders: &[i32], names: &[String]) -> Result<Hosts> {
        if leaders.len() != names.len() || leaders.is_empty() {
            return Err(Error::shape_mismatch(format!(
                "{} leaders for {} names",
                leaders.len(),
                names.len()
            )));
        }
        let mut id_of_leader = std::collections::BTreeMap::new();
        let mut host_of = Vec::with_capacity(leaders.len());
        let mut host_names = Vec::new();
        for &l in leaders {
            let li = usize::try_from(l)
                .ok()
                .filter(|&i| i < leaders.len())
                .ok_or_else(|| Error::invalid_input(format!("host leader {l} is not a rank")))?;
            let next = id_of_leader.len();
            let id = *id_of_leader.entry(li).or_insert(next);
            if id == host_names.len() {
                host_names.push(names[li].clone());
            }
            host_of.push(id);
        }
        Ok(Hosts {
            host_of,
            names: host_names,
        })
    }

    /// Number of hosts.
    pub fn len(&self) -> usize {
        self.names.len()
    }

    /// True when there is no host (never for a detected table).
    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }

    /// Ranks of each host, in rank order.
    pub fn members(&self) -> Vec<Vec<usize>> {
        let mut m = vec![Vec::new(); self.len()];
        for (r, &h) in self.host_of.iter().enumerate() {
            if let Some(v) = m.get_mut(h) {
                v.push(r);
            }
        }
        m
    }
}

/// Detects the hosts of `comm`'s ranks (collective; identical result on
/// every rank).
pub fn detect_hosts<C: Communicator>(comm: &C) -> Result<Hosts> {
    crate::runtime::watchdog::check_entry(comm, "detect_hosts")?;
    let shared = comm.split_shared(comm.rank());
    let mut leader = i32::MAX;
    shared.all_reduce_into(&comm.rank(), &mut leader, SystemOperation::min());
    let name = crate::speed::topology().host;
    let all: Vec<(i32, String)> = all_gather_values(comm, &(leader, name))?;
    let (leaders, names): (Vec<i32>, Vec<String>) = all.into_iter().unzip();
    agree(comm, 0, Hosts::from_leaders(&leaders, &names))
}

/// Communicators of a two-level gather over the hosts of a [`Hosts`] table:
/// one per host (ordered by rank, rank 0 last, so the host's lowest other
/// rank is its leader) and one of the leaders and rank 0 (ordered by rank,
/// so rank 0 leads it).
pub struct TwoLevel {
    node: SimpleCommunicator,
    leaders: Option<SimpleCommunicator>,
}

impl TwoLevel {
    /// Splits `comm` by the hosts of `hosts` (collective; every rank must
    /// pass the same table, as [`detect_hosts`] returns).
    pub fn new<C: Communicator>(comm: &C, hosts: &Hosts) -> Result<TwoLevel> {
        let rank = comm.rank();
        let host = agree(
            comm,
            0,
            hosts
                .host_of
                .get(rank as usize)
                .copied()
                .filter(|_| hosts.host_of.len() == comm.size() as usize)
                .and_then(|h| i32::try_from(h).ok())
                .ok_or_else(|| {
                    Error::shape_mismatch(format!(
                        "{} host ids for {} ranks",
                        hosts.host_of.len(),
                        comm.size()
                    ))
                }),
        )?;
        // Rank 0 (the root) last on its host: the host's next rank leads
        // it, so the root receives one bundle per host, none per rank.
        let key = if rank == 0 { comm.size() } else { rank };
        let node = comm
            .split_by_color_with_key(Color::with_value(host), key)
            .ok_or_else(|| Error::invalid_input("host split failed"))?;
        let color = if node.rank() == 0 || rank == 0 {
            Color::with_value(0)
        } else {
            Color::undefined()
        };
        let leaders = comm.split_by_color_with_key(color, rank);
        // Each host's ranks learn each other's hosts (MPI processor names):
        // a host leader of the checked entry names a missing rank of its
        // host with them. O(ranks per host) on each rank.
        let world = SimpleCommunicator::world().rank();
        let names: Vec<(i32, String)> =
            all_gather_values(&node, &(world, watchdog::host_name().to_string()))?;
        for (w, h) in names {
            watchdog::learn_host(w, &h);
        }
        Ok(TwoLevel { node, leaders })
    }

    /// Gathers one value from every rank of `comm` (the communicator the
    /// table was built on) at its rank 0, through the host leaders: `Some(values
    /// in rank order)` at rank 0, `None` elsewhere; errors agree on every rank.
    /// Two gathers of byte bundles and two small all-reduces.
    pub fn gather<C: Communicator, T: Serialize + DeserializeOwned>(
        &self,
        comm: &C,
        value: &T,
    ) -> Result<Option<Vec<T>>> {
        let bytes = agree(comm, 0, encode(value))?;
        let mine = (comm.rank(), bytes);
        let host: Option<Vec<(i32, Vec<u8>)>> = gather_values(&self.node, 0, &mine)?;
        // The root is a leader without a host of its own (unless alone on
        // it): its bundle is empty, its value went to its host's leader.
        let all = match &self.leaders {
            Some(leaders) => gather_values(leaders, 0, &host.unwrap_or_default())?,
            None => None,
        };
        let local = match all {
            Some(bundles) if comm.rank() == 0 => {
                let mut flat: Vec<(i32, Vec<u8>)> = bundles.into_iter().flatten().collect();
                flat.sort_by_key(|x| x.0);
                let ranks_ok = flat.len() == comm.size() as usize
                    && flat.iter().enumerate().all(|(i, x)| x.0 == i as i32);
                if ranks_ok {
                    flat.iter()
                        .map(|(r, b)| decode(b, *r))
                        .collect::<Result<Vec<T>>>()
                        .map(Some)
                } else {
                    Err(Error::invalid_input(
                        "two-level gather: the bundles do not hold every rank once",
                    ))
                }
            }
            _ => Ok(None),
        };
        agree(comm, 0, local)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_by_first_appearance() {
        let names: Vec<String> = ["a", "b", "a", "c", "b"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let h = Hosts::from_leaders(&[0, 1, 0, 3, 1], &names).unwrap();
        assert_eq!(h.host_of, vec![0, 1, 0, 2, 1]);
        assert_eq!(h.names, vec!["a", "b", "c"]);
        assert_eq!(h.members(), vec![vec![0, 2], vec![1, 4], vec![3]]);
        assert!(Hosts::from_leaders(&[0, 5], &names[..2]).is_err());
        assert!(Hosts::from_leaders(&[0, -1], &names[..2]).is_err());
        assert!(Hosts::from_leaders(&[0], &names[..2]).is_err());
        assert!(Hosts::from_leaders(&[], &[]).is_err());
    }
}
