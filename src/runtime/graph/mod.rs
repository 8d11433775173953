//! Distributed unstructured graphs ([`DistGraph`]): a graph whose vertices,
//! with one value each, are spread over the ranks (part `r` lives on rank
//! `r`), as the graph mapping of \[KOR95\] asks. No rank holds an array of
//! all n vertices: each holds its owned vertices (global ids, adjacency as
//! global ids turned into local slots, edge and vertex weights, coordinates,
//! values), its ghosts (neighbours owned elsewhere) and the owner of each
//! ghost, found in a distributed directory (`directory`, an internal module).
//!
//! * [`DistGraph::scatter_with_partition`] — the root's graph, partition
//!   and vertex values go out; each rank receives its owned vertices.
//!   Through [`DistGraph::scatter`] (a balancer's) the partition follows the
//!   measured speeds and the root keeps an index ordering for fast remaps.
//! * [`DistGraph::from_local`] — each rank passes its own vertices (read
//!   from its slice of a file, or generated): no rank ever sees the whole
//!   graph.
//! * [`DistGraph::exchange_ghosts`] — every rank receives the current values
//!   of its ghosts from their owners: nonblocking point-to-point messages to
//!   neighbour ranks only, flat buffers of [`GraphValue`]s, lists built once
//!   per layout (see [`DistGraph::exchange_ghosts`] for the error promise).
//! * [`DistGraph::partition_rcb`], [`DistGraph::partition_sfc`],
//!   [`DistGraph::prefix_cut`] — parallel geometric partitioning and the
//!   index-based remap by prefix sums (the internal `geometric` module): each rank
//!   learns the new owner of its own vertices only.
//! * [`DistGraph::migrate`] (new owner of each owned vertex) and
//!   [`DistGraph::remap`] (a replicated [`Partition`]) — move the vertices
//!   whose owner changes, with their adjacency, weights, coordinates and
//!   value, in flat all-to-all-v's; values arrive bit-exact.
//!
//! * [`GraphStrategy`] — how a balancer remaps the graph, fixed when it is
//!   built ([`DistGraph::strategy`]); one
//!   [`Balancer::maybe_remap`](super::balancer::Balancer::maybe_remap) for
//!   every strategy.
//!
//! All calls are collective and their errors agree (see [`super::comm`]).

use mpi::traits::*;
use serde::{Deserialize, Serialize};

use super::clock::{polling, waiting};
use super::comm::{agree, alltoallv_flat, fingerprint};
use super::geometric;
pub use super::graph_value::GraphValue;
use super::halo::{self, ExchangeStats};
use super::object::{Core, MoveStats};
pub(crate) use super::root_index::RootIndex;
use crate::error::{Error, Result};
use crate::plan::graph::Partition;
use mpi::topology::SimpleCommunicator;

mod build;
mod geometry;
mod membership;
mod part;
mod pieces;

use part::GraphPart;
use pieces::record_bytes;
pub(crate) use pieces::Pieces;

/// What a [`DistGraph::remap`] moved (identical on every rank).
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct MigrateStats {
    /// Number of vertices that changed owner (and travelled).
    pub moved_vertices: u64,
    /// Bytes, messages and time.
    pub moves: MoveStats,
}

/// How a [`DistGraph`] is balanced by
/// [`Balancer::maybe_remap`](super::balancer::Balancer::maybe_remap) (and
/// `_ahead`): chosen when the graph is built, the same on every rank, read
/// with [`DistGraph::strategy`]. The one verb works for every strategy.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub enum GraphStrategy {
    /// Built by [`DistGraph::scatter`]:
    /// the root keeps an index ordering of the whole graph (Hilbert curve or
    /// spectral) and re-cuts it for the new speeds, or repartitions it
    /// migration-aware when the cut would be too imbalanced (\[KOR95\] §3,
    /// \[SKK00\]). The root holds O(n); the decision is made there.
    RootIndex,
    /// Built from per-rank pieces ([`DistGraph::from_local`]; or by
    /// [`DistGraph::scatter_with_partition`] of a graph with coordinates): no rank holds the
    /// whole graph. The first partition by speeds is the parallel RCB
    /// ([`DistGraph::balance`](DistGraph::balance)),
    /// a remap re-cuts the vertices' order rank by rank, each rank's along
    /// the Hilbert curve, by prefix sums ([`DistGraph::prefix_cut`]); the
    /// root weighs O(p) loads and move volumes. Needs vertex coordinates.
    Geometric,
    /// Built by [`DistGraph::scatter_with_partition`] of a graph without
    /// coordinates, with a partition of the caller's: moved only by [`DistGraph::remap`] and
    /// [`DistGraph::migrate`]; `maybe_remap` refuses it (build the graph with
    /// `DistGraph::scatter` to have it balanced).
    Manual,
}

/// A graph distributed over the ranks of a communicator, with one value of
/// type `T` per vertex.
///
/// The graph keeps its own duplicate of the communicator it was created on,
/// so its messages never mix with the application's. Its data movements are
/// communication sections of [`super::clock`]: never counted as compute.
/// Each rank holds only its own vertices, their arcs, their ghosts and the
/// ghosts' owners: O(local size) memory, no O(n) array.
pub struct DistGraph<T> {
    /// The communicator, the checked channel and the exchange count.
    pub(crate) core: Core,
    part: GraphPart<T>,
    /// The balancer's index, on the root of a graph made by
    /// [`DistGraph::scatter`].
    pub(crate) index: Option<RootIndex>,
    /// How a balancer remaps it (the same on every rank).
    pub(crate) strategy: GraphStrategy,
    /// Fingerprint of the exchange call (made by the first exchange).
    exchange_fp: Option<u64>,
}

impl<T> std::fmt::Debug for DistGraph<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DistGraph")
            .field("rank", &self.part.rank)
            .field("global_len", &self.part.n_global)
            .field("owned", &self.part.owned.len())
            .field("ghosts", &self.part.ghosts.len())
            .finish_non_exhaustive()
    }
}

/// How much a rank holds of a [`DistGraph`]: the lengths of its arrays.
/// Every one is O(owned vertices + their arcs + ghosts).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct LocalSizes {
    /// Owned vertices.
    pub owned: usize,
    /// Arcs of the owned vertices (neighbour slots).
    pub arcs: usize,
    /// Ghost vertices.
    pub ghosts: usize,
    /// Owned vertices listed in the halo's send lists (with repeats per rank).
    pub send_entries: usize,
    /// Neighbour ranks this rank sends ghost values to.
    pub send_ranks: usize,
    /// Neighbour ranks this rank receives ghost values from.
    pub recv_ranks: usize,
    /// Total number of elements in all of the rank's arrays.
    pub total_elements: usize,
}

impl<T: GraphValue> DistGraph<T> {
    /// Receives the current values of all ghosts from their owners.
    ///
    /// Neighbour-only: one nonblocking send to and one receive from each
    /// neighbour rank, flat buffers of [`GraphValue::BYTES`] bytes per ghost,
    /// along lists built once when the layout was made (construction or
    /// migration). Nothing goes through the root: ranks that are not all
    /// exchanging the same graph are seen from the messages' tags, and a
    /// wait that outlasts the timeout joins the checkpoint under way, so
    /// that every rank involved returns the same error ([`super::halo`]);
    /// `NUCE_CHECK=full` adds a checked entry (a round trip to the root) per call.
    /// The [`ExchangeStats`] are this rank's own (no all-reduce per call).
    pub fn exchange_ghosts(&mut self) -> Result<ExchangeStats> {
        let w = polling();
        let n = self.part.n_global;
        let what = move || {
            format!(
                "DistGraph::exchange_ghosts({n} vertices, {}-byte values)",
                T::BYTES
            )
        };
        let fp = *self
            .exchange_fp
            .get_or_insert_with(|| halo::fingerprint(&what()));
        let call = self.core.next_exchange(what, fp)?;
        self.part
            .ghost_exchange(&*self.core.comm, &self.core.cp, (call, w), &what)
    }

    /// Moves to `new` (replicated on every rank, checked to be identical):
    /// each rank looks up the new owner of its own vertices and
    /// [`Self::migrate`]s them. Collective; on error every rank returns the
    /// same `Err` and keeps its vertices.
    pub fn remap(&mut self, new: &Partition) -> Result<MigrateStats> {
        let _w = waiting();
        let n = self.part.n_global;
        let fp = agree(&*self.core.comm, 0, fingerprint(&new.parts))?;
        self.core.cp.check(
            &*self.core.comm,
            &format!("DistGraph::remap({n} vertices, partition {fp:016x})"),
        )?;
        let size = self.part.size;
        let ok = if new.nparts != size || new.len() != self.part.n_global {
            Err(Error::shape_mismatch(format!(
                "new partition of {} vertices into {} parts for {} vertices on {size} ranks",
                new.len(),
                new.nparts,
                self.part.n_global
            )))
        } else {
            Ok(())
        };
        agree(&*self.core.comm, 0, ok)?;
        let dest: Vec<usize> = self.part.owned.iter().map(|&v| new.parts[v]).collect();
        let st = self.part.migrate(&*self.core.comm, &dest)?;
        if let Some(index) = self.index.as_mut() {
            index.parts.clone_from(&new.parts);
        }
        Ok(st)
    }

    /// Moves every owned vertex `i` (in the order of [`Self::owned`]) to rank
    /// `new_owner[i]`, with its adjacency, weights, coordinates and value;
    /// only vertices whose owner changes travel. The ghosts' owners are then
    /// found again in the distributed directory and the halo is rebuilt; no
    /// rank ever holds the whole new partition. Ghost values are invalidated
    /// (call [`Self::exchange_ghosts`]). Collective; on error every rank
    /// returns the same `Err` and keeps its vertices.
    pub fn migrate(&mut self, new_owner: &[usize]) -> Result<MigrateStats> {
        let _w = waiting();
        let n = self.part.n_global;
        self.core.cp.check(
            &*self.core.comm,
            &format!("DistGraph::migrate({n} vertices)"),
        )?;
        let st = self.part.migrate(&*self.core.comm, new_owner)?;
        // A graph balanced from a root index: the root learns the new owners
        // (it holds the whole graph anyway); only the owned ids travel.
        if let Some(at) = self.index_rank() {
            let p = self.part.size;
            let mut to_root = vec![0usize; p];
            to_root[at] = self.part.owned.len();
            let (ids, from) = alltoallv_flat(&*self.core.comm, &self.part.owned, &to_root)?;
            if let Some(index) = self.index.as_mut() {
                let mut k = 0;
                for (q, &c) in from.iter().enumerate() {
                    for &v in &ids[k..k + c] {
                        index.parts[v] = q;
                    }
                    k += c;
                }
            }
        }
        Ok(st)
    }

    /// The rank that holds the root's index, if one does (collective).
    fn index_rank(&self) -> Option<usize> {
        let mine = self.index.as_ref().map_or(-1, |_| self.part.rank as i64);
        let mut at = -1i64;
        self.core
            .comm
            .all_reduce_into(&mine, &mut at, mpi::collective::SystemOperation::max());
        usize::try_from(at).ok()
    }

    /// Gathers all values in global vertex order on `root` (`None` elsewhere).
    pub fn gather(&self, root: i32) -> Result<Option<Vec<T>>> {
        let _w = waiting();
        let n = self.part.n_global;
        self.core.cp.check(
            &*self.core.comm,
            &format!("DistGraph::gather({n} vertices to root {root})"),
        )?;
        self.part.gather_to_root(&*self.core.comm, root)
    }

    /// For a move of every owned vertex `i` to `dest[i]` (valid ranks), on
    /// every rank: the loads (vertex weights) per rank now and after, and
    /// each rank's move volume (bytes sent plus received, messages sent
    /// plus received). O(p) numbers per rank: a few all-reduces of p-vectors.
    pub(crate) fn move_volume(&self, dest: &[usize]) -> (Vec<f64>, Vec<f64>, Vec<(f64, usize)>) {
        let p = self.part.size;
        let me = self.part.rank;
        let weighted = !self.part.ewgt.is_empty();
        // Per rank q: weight moved to q, bytes sent to q (this rank's row).
        let mut to = vec![0.0; 2 * p];
        for (i, &q) in dest.iter().enumerate() {
            to[q] += self.part.vwgt[i];
            if q != me {
                let deg = self.part.xadj[i + 1] - self.part.xadj[i];
                to[p + q] += record_bytes::<T>(deg, weighted, self.part.dim) as f64;
            }
        }
        // Rank r's row of bytes and message counts in slot r, for everyone.
        let mut mine = vec![0.0; 3 * p];
        mine[me] = self.local_work();
        let sent: f64 = to[p..].iter().sum();
        let msgs = to[p..].iter().filter(|&&b| b > 0.0).count() as f64;
        mine[p + me] = sent;
        mine[2 * p + me] = msgs;
        let mut all = vec![0.0; 3 * p];
        self.core.comm.all_reduce_into(
            &mine[..],
            &mut all[..],
            mpi::collective::SystemOperation::sum(),
        );
        let mut sums = vec![0.0; 2 * p];
        self.core.comm.all_reduce_into(
            &to[..],
            &mut sums[..],
            mpi::collective::SystemOperation::sum(),
        );
        // What each rank receives: the column sums of bytes; messages in: ranks sending to it.
        let mut arrivals = vec![0.0; p];
        let senders: Vec<f64> = (0..p)
            .map(|q| f64::from(u8::from(to[p + q] > 0.0)))
            .collect();
        self.core.comm.all_reduce_into(
            &senders[..],
            &mut arrivals[..],
            mpi::collective::SystemOperation::sum(),
        );
        let volume = (0..p)
            .map(|r| {
                (
                    all[p + r] + sums[p + r],
                    (all[2 * p + r] + arrivals[r]) as usize,
                )
            })
            .collect();
        (all[..p].to_vec(), sums[..p].to_vec(), volume)
    }

    /// Ghost exchanges made so far on this graph (every rank must make the
    /// same number between two balance points; checked there).
    pub fn exchanges(&self) -> u64 {
        self.core.exchanges()
    }

    /// How a balancer remaps this graph, fixed when it was built.
    pub fn strategy(&self) -> GraphStrategy {
        self.strategy
    }

    /// The graph's communicator (a duplicate of the one it was created on).
    pub fn comm(&self) -> &SimpleCommunicator {
        &self.core.comm
    }

    /// The checked entry of a collective call `op` named in the caller's
    /// words (e.g. a C function with its must-match arguments), where this
    /// rank may refuse (`refused`: its own input is wrong): every rank
    /// returns the same result, within the timeout
    /// ([`super::watchdog::refusing_checkpoint`]).
    #[doc(hidden)]
    pub fn entry(&self, op: &str, refused: Option<&Error>) -> Result<()> {
        let _w = waiting();
        self.core.cp.check_refusing(&*self.core.comm, op, refused)
    }

    /// The timeout of the graph's collectives (its balancer's).
    pub fn timeout(&self) -> Option<std::time::Duration> {
        self.core.cp.timeout()
    }
    /// Owned vertices (global ids, increasing).
    pub fn owned(&self) -> &[usize] {
        &self.part.owned
    }
    /// Ghost vertices (global ids, increasing).
    pub fn ghosts(&self) -> &[usize] {
        &self.part.ghosts
    }
    /// The owner (rank) of each ghost, parallel to [`Self::ghosts`].
    pub fn ghost_owners(&self) -> &[u32] {
        &self.part.ghost_owner
    }
    /// Values of the owned vertices.
    pub fn values(&self) -> &[T] {
        &self.part.values
    }
    /// Mutable values of the owned vertices.
    pub fn values_mut(&mut self) -> &mut [T] {
        &mut self.part.values
    }
    /// Ghost values from the last [`Self::exchange_ghosts`] (empty before).
    pub fn ghost_values(&self) -> &[T] {
        &self.part.ghost_values
    }
    /// The value of neighbour slot `s` of [`Self::neighbors`]: an owned
    /// vertex's or a ghost's.
    pub fn slot_value(&self, s: usize) -> &T {
        let no = self.part.owned.len();
        if s < no {
            &self.part.values[s]
        } else {
            &self.part.ghost_values[s - no]
        }
    }
    /// Neighbours of owned vertex `i` as slots (`< owned().len()`: owned,
    /// otherwise ghost `slot − owned().len()`), with edge weights, in the
    /// order of the global CSR.
    pub fn neighbors(&self, i: usize) -> impl Iterator<Item = (usize, f64)> + '_ {
        self.part.neighbors(i)
    }
    /// Weight of owned vertex `i`.
    pub fn vertex_weight(&self, i: usize) -> f64 {
        self.part.vwgt[i]
    }
    /// Coordinates of owned vertex `i` (empty when the graph has none).
    pub fn coords(&self, i: usize) -> &[f64] {
        let d = self.part.dim;
        &self.part.coords[i * d..(i + 1) * d]
    }
    /// This rank's work per iteration: the sum of its vertices' weights.
    pub fn local_work(&self) -> f64 {
        self.part.vwgt.iter().sum()
    }
    /// The lengths of what this rank holds (all O(local size)).
    pub fn local_sizes(&self) -> LocalSizes {
        let p = &self.part;
        let h = &p.halo;
        let mut s = LocalSizes {
            owned: p.owned.len(),
            arcs: p.adj.len(),
            ghosts: p.ghosts.len(),
            send_entries: h.send_idx.len(),
            send_ranks: h.send_ranks.len(),
            recv_ranks: h.recv_ranks.len(),
            total_elements: 0,
        };
        s.total_elements = p.owned.len()
            + p.xadj.len()
            + p.adj.len()
            + p.ewgt.len()
            + p.vwgt.len()
            + p.coords.len()
            + p.values.len()
            + p.ghosts.len()
            + p.ghost_owner.len()
            + p.ghost_values.len()
            + h.send_ranks.len()
            + h.send_at.len()
            + h.send_idx.len()
            + h.recv_ranks.len()
            + h.recv_at.len()
            + h.recv_slots.len();
        s
    }
    /// Owner of every vertex, gathered on every rank. **Collective and
    /// O(n) on every rank** (an all-gather of the owned ids): for tests and
    /// small graphs; at scale use [`Self::owned`] and [`Self::ghost_owners`].
    pub fn owners(&self) -> Vec<u32> {
        self.partition().parts.iter().map(|&p| p as u32).collect()
    }
    /// The current partition (one part per rank), gathered on every rank.
    /// **Collective and O(n) on every rank**, as [`Self::owners`].
    pub fn partition(&self) -> Partition {
        let _w = waiting();
        self.part.partition(&*self.core.comm)
    }
    /// Global number of vertices.
    pub fn global_len(&self) -> usize {
        self.part.n_global
    }
}
