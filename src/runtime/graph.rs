//! Distributed unstructured graphs ([`DistGraph`]): a graph whose vertices,
//! with one value each, are spread over the ranks (part `r` lives on rank
//! `r`), as the graph mapping of \[KOR95\] asks. No rank holds an array of
//! all n vertices: each holds its owned vertices (global ids, adjacency as
//! global ids turned into local slots, edge and vertex weights, coordinates,
//! values), its ghosts (neighbours owned elsewhere) and the owner of each
//! ghost, found in a distributed directory (`directory`, an internal module).
//!
//! * [`DistGraph::scatter`] — the root's graph, partition and vertex values
//!   go out; each rank receives its owned vertices. Through
//!   [`Balancer::scatter_graph`](super::balancer::Balancer::scatter_graph)
//!   the partition follows the measured speeds and the root keeps an index
//!   ordering for fast remaps.
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

use std::time::Instant;

use mpi::traits::*;
use serde::{Deserialize, Serialize};

use super::clock::{polling, waiting, Waiting};
use super::comm::{agree, alltoallv_flat, fingerprint, max_f64, sum_f64, zeroed_buffer};
use super::directory::owners_of;
use super::geometric::{self, Points};
pub use super::graph_value::GraphValue;
use super::graph_value::{pack, unpack};
use super::halo::{self, ExchangeStats};
use super::object::{next_call, MoveStats, OwnComm};
pub(crate) use super::root_index::RootIndex;
use super::watchdog::Checkpoints;
use crate::error::{Error, Result};
use crate::plan::graph::ids::vertex_id;
use crate::plan::graph::{Coords, Graph, Partition};
use mpi::topology::SimpleCommunicator;

mod membership;

/// What a [`DistGraph::remap`] moved (identical on every rank).
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct MigrateStats {
    /// Number of vertices that changed owner (and travelled).
    pub moved_vertices: u64,
    /// Bytes, messages and time.
    pub moves: MoveStats,
}

/// Vertices as they travel (a rank's piece of a graph, or what it sends to
/// one rank): flat arrays, vertex after vertex.
/// Also the records of a save file (`savefile::graphs`).
#[derive(Debug, Clone)]
pub(crate) struct Pieces<T> {
    pub(crate) ids: Vec<usize>,
    /// Degree of every vertex.
    pub(crate) deg: Vec<usize>,
    /// Neighbours (global ids), all vertices' one after the other.
    pub(crate) adj: Vec<usize>,
    /// Edge weights parallel to `adj` (empty when the graph is unweighted).
    pub(crate) ewgt: Vec<f64>,
    pub(crate) vwgt: Vec<f64>,
    /// `dim` coordinates per vertex (empty when `dim` is 0).
    pub(crate) coords: Vec<f64>,
    pub(crate) values: Vec<T>,
}

/// The neighbour-only halo: for each neighbour rank, the owned vertices it
/// needs (local indices) and the ghost slots it fills, both sorted by global
/// id, built once by [`GraphPart::build`] and reused by every exchange.
#[derive(Debug, Clone, Default)]
struct Halo {
    send_ranks: Vec<i32>,
    /// `send_idx[send_at[k]..send_at[k + 1]]` go to `send_ranks[k]`.
    send_at: Vec<usize>,
    send_idx: Vec<usize>,
    recv_ranks: Vec<i32>,
    recv_at: Vec<usize>,
    recv_slots: Vec<usize>,
    /// Byte ranges of the messages in the buffers, and the buffers, reused
    /// by every exchange.
    send_ranges: Vec<(i32, std::ops::Range<usize>)>,
    recv_ranges: Vec<(i32, std::ops::Range<usize>)>,
    sendbuf: Vec<u8>,
    recvbuf: Vec<u8>,
}

/// This rank's vertices of a distributed graph: everything of a
/// [`DistGraph`] but its communicator and the root's index. Every array is
/// O(local vertices + local arcs + ghosts); none is O(n).
#[derive(Debug, Clone)]
struct GraphPart<T> {
    rank: usize,
    size: usize,
    n_global: usize,
    /// Owned vertices (global ids, increasing).
    owned: Vec<usize>,
    /// Local CSR over owned vertices: neighbour slots `< owned.len()` are owned
    /// vertices, `owned.len() + k` is ghost `k`.
    xadj: Vec<usize>,
    adj: Vec<usize>,
    /// Edge weights parallel to `adj`; empty when the graph is unweighted (all 1).
    ewgt: Vec<f64>,
    vwgt: Vec<f64>,
    dim: usize,
    coords: Vec<f64>,
    values: Vec<T>,
    /// Ghost vertices (global ids, increasing) and their owners.
    ghosts: Vec<usize>,
    ghost_owner: Vec<u32>,
    ghost_values: Vec<T>,
    halo: Halo,
}

fn stats<C: Communicator>(
    comm: &C,
    bytes: u64,
    messages: u64,
    mine: u64,
    t0: Instant,
) -> MoveStats {
    let max_rank = max_f64(comm, mine as f64) as u64;
    MoveStats {
        bytes: sum_f64(comm, bytes as f64) as u64,
        messages: sum_f64(comm, messages as f64) as u64,
        max_rank_bytes: max_rank,
        seconds: max_f64(comm, t0.elapsed().as_secs_f64()),
    }
}

/// Bytes one vertex of degree `deg` takes when it travels.
fn record_bytes<T: GraphValue>(deg: usize, weighted: bool, dim: usize) -> u64 {
    let per_arc = if weighted { 16 } else { 8 };
    (24 + 8 * dim + T::BYTES + per_arc * deg) as u64
}

impl<T> Default for Pieces<T> {
    fn default() -> Self {
        Pieces {
            ids: Vec::new(),
            deg: Vec::new(),
            adj: Vec::new(),
            ewgt: Vec::new(),
            vwgt: Vec::new(),
            coords: Vec::new(),
            values: Vec::new(),
        }
    }
}

impl<T: GraphValue> Pieces<T> {
    fn len(&self) -> usize {
        self.ids.len()
    }

    /// The vertices of `g` in `parts` order by part (each part's by id), with
    /// how many go to each of `p` parts.
    fn from_graph(g: &Graph, parts: &[usize], p: usize, values: &[T]) -> (Self, Vec<usize>) {
        let mut counts = vec![0usize; p];
        for &q in parts {
            counts[q] += 1;
        }
        let mut order: Vec<usize> = (0..g.n()).collect();
        order.sort_by_key(|&v| parts[v]);
        let mut out = Pieces::default();
        for v in order {
            out.push_from_graph(g, v, values[v].clone());
        }
        (out, counts)
    }

    fn push_from_graph(&mut self, g: &Graph, v: usize, value: T) {
        self.ids.push(v);
        let nb = g.neighbors(v);
        self.deg.push(nb.len());
        self.adj.extend_from_slice(nb);
        if g.has_edge_weights() {
            self.ewgt.extend(g.weighted_neighbors(v).map(|(_, w)| w));
        }
        self.vwgt.push(g.vertex_weight(v));
        if let Some(c) = g.coords() {
            self.coords.extend_from_slice(c.of(v));
        }
        self.values.push(value);
    }

    /// Sends `counts[r]` consecutive vertices to rank `r` (all ranks agree on
    /// `weighted` and `dim`); returns what this rank received. Flat
    /// all-to-all-v's of ids, degrees, neighbours, weights, coordinates and
    /// value bytes.
    fn ship<C: Communicator>(
        &self,
        comm: &C,
        counts: &[usize],
        weighted: bool,
        dim: usize,
    ) -> Result<Self> {
        let mut arcs = Vec::with_capacity(counts.len());
        let mut at = 0;
        for &c in counts {
            arcs.push(self.deg[at..at + c].iter().sum::<usize>());
            at += c;
        }
        let times = |k: usize| counts.iter().map(|&c| c * k).collect::<Vec<_>>();
        let (ids, _) = alltoallv_flat(comm, &self.ids, counts)?;
        let (deg, _) = alltoallv_flat(comm, &self.deg, counts)?;
        let (adj, _) = alltoallv_flat(comm, &self.adj, &arcs)?;
        let ewgt = if weighted {
            alltoallv_flat(comm, &self.ewgt, &arcs)?.0
        } else {
            Vec::new()
        };
        let (vwgt, _) = alltoallv_flat(comm, &self.vwgt, counts)?;
        let coords = if dim > 0 {
            alltoallv_flat(comm, &self.coords, &times(dim))?.0
        } else {
            Vec::new()
        };
        let mut bytes = Vec::with_capacity(self.len() * T::BYTES);
        pack(self.values.iter(), &mut bytes);
        let (bytes, _) = alltoallv_flat(comm, &bytes, &times(T::BYTES))?;
        Ok(Pieces {
            ids,
            deg,
            adj,
            ewgt,
            vwgt,
            coords,
            values: unpack(&bytes),
        })
    }

    /// The same vertices in increasing id order (moved, not copied, when
    /// they already are).
    pub(crate) fn sorted(self, weighted: bool, dim: usize) -> Self {
        if self.ids.windows(2).all(|w| w[0] < w[1]) {
            return self;
        }
        let mut order: Vec<usize> = (0..self.len()).collect();
        order.sort_unstable_by_key(|&i| self.ids[i]);
        let mut start = Vec::with_capacity(self.len() + 1);
        start.push(0);
        for &d in &self.deg {
            start.push(start.last().copied().unwrap_or(0) + d);
        }
        // One array at a time, each old one dropped once permuted, so that
        // the peak is the input plus its largest array.
        let Pieces {
            ids,
            deg,
            adj,
            ewgt,
            vwgt,
            coords,
            values,
        } = self;
        let by_vertex = |a: Vec<usize>| order.iter().map(|&i| a[i]).collect::<Vec<_>>();
        let by_arc = |a: Vec<f64>| {
            let mut out = Vec::with_capacity(a.len());
            for &i in &order {
                out.extend_from_slice(&a[start[i]..start[i + 1]]);
            }
            out
        };
        let ids = by_vertex(ids);
        let deg = by_vertex(deg);
        let mut new_adj = Vec::with_capacity(adj.len());
        for &i in &order {
            new_adj.extend_from_slice(&adj[start[i]..start[i + 1]]);
        }
        drop(adj);
        let ewgt = if weighted { by_arc(ewgt) } else { ewgt };
        let vwgt: Vec<f64> = order.iter().map(|&i| vwgt[i]).collect();
        let mut new_coords = Vec::with_capacity(coords.len());
        for &i in &order {
            new_coords.extend_from_slice(&coords[i * dim..(i + 1) * dim]);
        }
        drop(coords);
        let mut values: Vec<Option<T>> = values.into_iter().map(Some).collect();
        let values = order.iter().filter_map(|&i| values[i].take()).collect();
        Pieces {
            ids,
            deg,
            adj: new_adj,
            ewgt,
            vwgt,
            coords: new_coords,
            values,
        }
    }

    /// Appends `other`'s vertices.
    fn append(&mut self, mut other: Self) {
        self.ids.append(&mut other.ids);
        self.deg.append(&mut other.deg);
        self.adj.append(&mut other.adj);
        self.ewgt.append(&mut other.ewgt);
        self.vwgt.append(&mut other.vwgt);
        self.coords.append(&mut other.coords);
        self.values.append(&mut other.values);
    }

    /// Checks the piece's own consistency (lengths, ranges, weights).
    fn check(&self, n: usize, weighted: bool, dim: usize) -> Result<()> {
        let nv = self.ids.len();
        let arcs: usize = self.deg.iter().sum();
        if self.deg.len() != nv
            || self.adj.len() != arcs
            || (weighted && self.ewgt.len() != arcs)
            || self.vwgt.len() != nv
            || self.coords.len() != dim * nv
            || self.values.len() != nv
        {
            return Err(Error::shape_mismatch(format!(
                "{nv} vertices with {} degrees, {} neighbours for {arcs} arcs, {} edge weights, {} vertex weights, {} coordinates in {dim}D, {} values",
                self.deg.len(),
                self.adj.len(),
                self.ewgt.len(),
                self.vwgt.len(),
                self.coords.len(),
                self.values.len()
            )));
        }
        if let Some(v) = self.ids.iter().chain(&self.adj).find(|&&v| v >= n) {
            return Err(Error::invalid_input(format!(
                "vertex id {} out of range for {n} vertices",
                vertex_id(*v)
            )));
        }
        if self.vwgt.iter().any(|w| !w.is_finite() || *w < 0.0) {
            return Err(Error::invalid_input(
                "vertex weights must be finite and >= 0",
            ));
        }
        if self.ewgt.iter().any(|w| !w.is_finite() || *w <= 0.0) {
            return Err(Error::invalid_input("edge weights must be finite and > 0"));
        }
        if self.coords.iter().any(|x| !x.is_finite()) {
            return Err(Error::invalid_input("non-finite coordinate"));
        }
        Ok(())
    }
}

impl<T> Default for GraphPart<T> {
    fn default() -> Self {
        GraphPart {
            rank: 0,
            size: 0,
            n_global: 0,
            owned: Vec::new(),
            xadj: vec![0],
            adj: Vec::new(),
            ewgt: Vec::new(),
            vwgt: Vec::new(),
            dim: 0,
            coords: Vec::new(),
            values: Vec::new(),
            ghosts: Vec::new(),
            ghost_owner: Vec::new(),
            ghost_values: Vec::new(),
            halo: Halo::default(),
        }
    }
}

impl<T: GraphValue> GraphPart<T> {
    /// Builds this rank's part from its vertices (any order): checks them
    /// (errors agree), finds the ghosts' owners in the distributed directory
    /// and builds the halo lists. Collective.
    fn build<C: Communicator>(
        comm: &C,
        n: usize,
        weighted: bool,
        dim: usize,
        pieces: Pieces<T>,
    ) -> Result<Self> {
        let rank = comm.rank() as usize;
        let size = comm.size() as usize;
        agree(comm, 0, pieces.check(n, weighted, dim))?;
        let pieces = pieces.sorted(weighted, dim);
        let Pieces {
            ids: owned,
            deg,
            mut adj,
            ewgt,
            vwgt,
            coords,
            values,
        } = pieces;
        let mut xadj = Vec::with_capacity(owned.len() + 1);
        xadj.push(0);
        for d in deg {
            xadj.push(xadj.last().copied().unwrap_or(0) + d);
        }
        let owned_at = Runs::new(&owned);
        let mut ghosts: Vec<usize> = adj
            .iter()
            .copied()
            .filter(|&u| owned_at.find(u).is_none())
            .collect();
        ghosts.sort_unstable();
        ghosts.dedup();
        let ghost_owner = owners_of(comm, n, &owned, &ghosts)?;
        let ghost_at = Runs::new(&ghosts);
        let no = owned.len();
        // Global ids become local slots, in place.
        for u in adj.iter_mut() {
            *u = match owned_at.find(*u) {
                Some(i) => i,
                None => no + ghost_at.find(*u).unwrap_or(0),
            };
        }
        let mut part = GraphPart {
            rank,
            size,
            n_global: n,
            owned,
            xadj,
            adj,
            ewgt,
            vwgt,
            dim,
            coords,
            values,
            ghosts,
            ghost_owner,
            ghost_values: Vec::new(),
            halo: Halo::default(),
        };
        part.halo = part.build_halo(comm)?;
        Ok(part)
    }

    /// The halo lists: every rank asks each ghost owner for its ghosts (one
    /// all-to-all-v of ids), and the owner's send list to that rank is the
    /// list of ids it was asked for. Every message size of the later
    /// exchanges is fixed here, once.
    fn build_halo<C: Communicator>(&self, comm: &C) -> Result<Halo> {
        let mut by_owner: Vec<usize> = (0..self.ghosts.len()).collect();
        by_owner.sort_by_key(|&k| (self.ghost_owner[k], self.ghosts[k]));
        let mut counts = vec![0usize; self.size];
        for &o in &self.ghost_owner {
            counts[o as usize] += 1;
        }
        let asks: Vec<usize> = by_owner.iter().map(|&k| self.ghosts[k]).collect();
        let (asked, from) = alltoallv_flat(comm, &asks, &counts)?;
        let owned_at = Runs::new(&self.owned);
        let idx: Result<Vec<usize>> = asked
            .iter()
            .map(|&v| {
                owned_at.find(v).ok_or_else(|| {
                    Error::invalid_input(format!(
                        "rank {} was asked for vertex {}, which it does not own",
                        self.rank,
                        vertex_id(v)
                    ))
                })
            })
            .collect();
        let idx = agree(comm, 0, idx)?;
        let mut h = Halo {
            send_at: vec![0],
            recv_at: vec![0],
            ..Halo::default()
        };
        split_by_rank(
            &from,
            &idx,
            &mut h.send_ranks,
            &mut h.send_at,
            &mut h.send_idx,
        );
        split_by_rank(
            &counts,
            &by_owner,
            &mut h.recv_ranks,
            &mut h.recv_at,
            &mut h.recv_slots,
        );
        let b = T::BYTES;
        let ranges = |ranks: &[i32], at: &[usize]| -> Vec<(i32, std::ops::Range<usize>)> {
            ranks
                .iter()
                .enumerate()
                .map(|(k, &q)| (q, at[k] * b..at[k + 1] * b))
                .collect()
        };
        h.send_ranges = ranges(&h.send_ranks, &h.send_at);
        h.recv_ranges = ranges(&h.recv_ranks, &h.recv_at);
        Ok(h)
    }

    /// Receives the current values of all ghosts from their owners: one
    /// nonblocking send to and one receive from each neighbour rank, of flat
    /// buffers whose sizes were fixed at setup. No collective: the sizes
    /// cannot disagree, so there is no error to agree on. Returns this
    /// rank's own figures (bytes and messages it sent, bytes it sent and
    /// received, its time).
    fn ghost_exchange<C: Communicator>(
        &mut self,
        comm: &C,
        cp: &Checkpoints,
        (call, section): (halo::Call, Waiting),
        op: &dyn Fn() -> String,
    ) -> Result<ExchangeStats> {
        let b = T::BYTES;
        let h = &mut self.halo;
        let mut sendbuf = std::mem::take(&mut h.sendbuf);
        // Every byte is written below: sized once, not cleared per exchange.
        sendbuf.resize(h.send_idx.len() * b, 0);
        if b > 0 {
            for (out, &i) in sendbuf.chunks_exact_mut(b).zip(&h.send_idx) {
                self.values[i].write(out);
            }
        }
        let sent = sendbuf.len() as u64;
        let mut recvbuf = std::mem::take(&mut h.recvbuf);
        recvbuf.resize(h.recv_slots.len() * b, 0);
        let sendbuf = halo::exchange_as(
            comm,
            cp,
            call,
            op,
            sendbuf,
            &h.send_ranges,
            &mut recvbuf,
            &h.recv_ranges,
            halo::Words::values(b),
        )?;
        h.sendbuf = sendbuf;
        let h = &self.halo;
        // The received values in order; a zero-byte value has no bytes on
        // the wire: one read of an empty slice per ghost.
        let n = h.recv_slots.len();
        let values = recvbuf
            .chunks_exact(b.max(1))
            .chain(std::iter::repeat_n(&[][..], if b == 0 { n } else { 0 }));
        if self.ghost_values.len() == self.ghosts.len() {
            for (bytes, &slot) in values.zip(&h.recv_slots) {
                self.ghost_values[slot] = T::read(bytes);
            }
        } else {
            // First exchange after a build: the ghost values do not exist yet.
            let mut fresh: Vec<Option<T>> = vec![None; self.ghosts.len()];
            for (bytes, &slot) in values.zip(&h.recv_slots) {
                fresh[slot] = Some(T::read(bytes));
            }
            self.ghost_values = fresh.into_iter().flatten().collect();
        }
        let stats = ExchangeStats {
            bytes_sent: sent,
            bytes_received: recvbuf.len() as u64,
            messages_sent: h.send_ranks.len() as u64,
            seconds: section.end().as_secs_f64(),
        };
        self.halo.recvbuf = recvbuf;
        Ok(stats)
    }

    /// Global id of neighbour slot `s`.
    fn slot_id(&self, s: usize) -> usize {
        let no = self.owned.len();
        if s < no {
            self.owned[s]
        } else {
            self.ghosts[s - no]
        }
    }

    /// Moves every owned vertex `i` to rank `dest[i]` with its adjacency,
    /// weights, coordinates and value; ghost owners are found again in the
    /// directory. Transactional: on error every rank keeps its old part.
    /// Ghost values are invalidated. Collective.
    fn migrate<C: Communicator>(&mut self, comm: &C, dest: &[usize]) -> Result<MigrateStats> {
        let t0 = Instant::now();
        let ok = if dest.len() != self.owned.len() {
            Err(Error::shape_mismatch(format!(
                "{} destinations for {} owned vertices",
                dest.len(),
                self.owned.len()
            )))
        } else if let Some(&q) = dest.iter().find(|&&q| q >= self.size) {
            Err(Error::invalid_input(format!(
                "destination rank {q} out of range for {} ranks",
                self.size
            )))
        } else {
            Ok(())
        };
        agree(comm, 0, ok)?;
        let weighted = !self.ewgt.is_empty();
        let weighted = any_rank(comm, weighted);
        // Vertices that stay are copied locally; only the others travel.
        let mut order: Vec<usize> = (0..self.owned.len()).collect();
        order.sort_by_key(|&i| dest[i]);
        let mut counts = vec![0usize; self.size];
        let (mut keep, mut out) = (Pieces::default(), Pieces::default());
        let (mut bytes, mut moved) = (0u64, 0u64);
        for &i in &order {
            let (a, b) = (self.xadj[i], self.xadj[i + 1]);
            let to = if dest[i] == self.rank {
                &mut keep
            } else {
                counts[dest[i]] += 1;
                moved += 1;
                bytes += record_bytes::<T>(b - a, weighted, self.dim);
                &mut out
            };
            self.push_vertex(i, weighted, to);
        }
        let messages = counts.iter().filter(|&&c| c > 0).count() as u64;
        let got = out.ship(comm, &counts, weighted, self.dim)?;
        drop(out);
        let received: u64 = got
            .deg
            .iter()
            .map(|&d| record_bytes::<T>(d, weighted, self.dim))
            .sum();
        keep.append(got);
        let got = keep;
        let new = GraphPart::build(comm, self.n_global, weighted, self.dim, got)?;
        *self = new;
        Ok(MigrateStats {
            moved_vertices: sum_f64(comm, moved as f64) as u64,
            moves: stats(comm, bytes, messages, bytes + received, t0),
        })
    }

    /// Appends owned vertex `i` to `to`, its neighbours as global ids (its
    /// edge weights when `weighted`: 1 where this rank has none).
    fn push_vertex(&self, i: usize, weighted: bool, to: &mut Pieces<T>) {
        let (a, b) = (self.xadj[i], self.xadj[i + 1]);
        to.ids.push(self.owned[i]);
        to.deg.push(b - a);
        to.adj
            .extend(self.adj[a..b].iter().map(|&s| self.slot_id(s)));
        if weighted {
            to.ewgt
                .extend((a..b).map(|k| self.ewgt.get(k).copied().unwrap_or(1.0)));
        }
        to.vwgt.push(self.vwgt[i]);
        to.coords
            .extend_from_slice(&self.coords[i * self.dim..(i + 1) * self.dim]);
        to.values.push(self.values[i].clone());
    }

    /// Gathers all values in global vertex order on `root` (`None` elsewhere).
    fn gather_to_root<C: Communicator>(&self, comm: &C, root: i32) -> Result<Option<Vec<T>>> {
        let mut bytes = Vec::with_capacity(self.values.len() * T::BYTES);
        pack(self.values.iter(), &mut bytes);
        let p = self.size;
        let at_root = |c: usize| {
            let mut v = vec![0usize; p];
            v[root as usize] = c;
            v
        };
        let (ids, _) = alltoallv_flat(comm, &self.owned, &at_root(self.owned.len()))?;
        let (vals, _) = alltoallv_flat(comm, &bytes, &at_root(bytes.len()))?;
        if comm.rank() != root {
            return Ok(None);
        }
        let mut out: Vec<Option<T>> = vec![None; self.n_global];
        for (k, &v) in ids.iter().enumerate() {
            out[v] = Some(T::read(&vals[k * T::BYTES..(k + 1) * T::BYTES]));
        }
        Ok(out.into_iter().collect::<Option<Vec<T>>>())
    }

    /// Neighbours of owned vertex `i` as slots (`< owned().len()`: owned,
    /// otherwise ghost `slot − owned().len()`), with edge weights, in the
    /// order of the global CSR.
    fn neighbors(&self, i: usize) -> impl Iterator<Item = (usize, f64)> + '_ {
        (self.xadj[i]..self.xadj[i + 1])
            .map(move |a| (self.adj[a], self.ewgt.get(a).copied().unwrap_or(1.0)))
    }

    /// Owned ids of every rank, gathered on every rank: the partition.
    fn partition<C: Communicator>(&self, comm: &C) -> Partition {
        let p = self.size;
        let mut counts = vec![0 as mpi::Count; p];
        let mine = self.owned.len() as mpi::Count;
        comm.all_gather_into(&mine, &mut counts[..]);
        let displs = super::comm::displacements(&counts);
        let mut all = zeroed_buffer::<usize>(self.n_global);
        let empty = zeroed_buffer::<usize>(0);
        let send = if self.owned.is_empty() {
            &empty[..]
        } else {
            &self.owned[..]
        };
        {
            let mut part = mpi::datatype::PartitionMut::new(&mut all[..], &counts[..], &displs[..]);
            comm.all_gather_varcount_into(send, &mut part);
        }
        let mut parts = vec![0usize; self.n_global];
        for (r, (&c, &d)) in counts.iter().zip(&displs).enumerate() {
            for &v in &all[d as usize..(d + c) as usize] {
                parts[v] = r;
            }
        }
        Partition { nparts: p, parts }
    }
}

/// Position lookup in increasing ids, by runs of consecutive ids: a mesh's
/// owned vertices and ghosts come in long runs (grid rows, file slices), so
/// the binary search is over far fewer entries than ids and stays in cache.
struct Runs {
    /// First id of each run.
    first: Vec<usize>,
    /// Position of each run's first id; one more entry: the total length.
    at: Vec<usize>,
}

impl Runs {
    fn new(ids: &[usize]) -> Self {
        let mut r = Runs {
            first: Vec::new(),
            at: Vec::new(),
        };
        for (i, &v) in ids.iter().enumerate() {
            if i == 0 || ids[i - 1] + 1 != v {
                r.first.push(v);
                r.at.push(i);
            }
        }
        r.at.push(ids.len());
        r
    }
    /// Position of `v`, if present.
    fn find(&self, v: usize) -> Option<usize> {
        let k = self.first.partition_point(|&f| f <= v).checked_sub(1)?;
        let pos = self.at[k] + (v - self.first[k]);
        (pos < self.at[k + 1]).then_some(pos)
    }
}

/// Appends the `counts[q]` consecutive `items` of every rank `q` that has
/// some to `list`, recording `q` in `ranks` and the end offset in `at`.
fn split_by_rank(
    counts: &[usize],
    items: &[usize],
    ranks: &mut Vec<i32>,
    at: &mut Vec<usize>,
    list: &mut Vec<usize>,
) {
    let mut from = 0;
    for (q, &c) in counts.iter().enumerate() {
        if c > 0 {
            ranks.push(q as i32);
            list.extend_from_slice(&items[from..from + c]);
            at.push(list.len());
        }
        from += c;
    }
}

/// True on every rank when `b` is true on some rank.
fn any_rank<C: Communicator>(comm: &C, b: bool) -> bool {
    max_f64(comm, f64::from(u8::from(b))) > 0.0
}

/// How a [`DistGraph`] is balanced by
/// [`Balancer::maybe_remap`](super::balancer::Balancer::maybe_remap) (and
/// `_ahead`): chosen when the graph is built, the same on every rank, read
/// with [`DistGraph::strategy`]. The one verb works for every strategy.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub enum GraphStrategy {
    /// Built by [`Balancer::scatter_graph`](super::balancer::Balancer::scatter_graph):
    /// the root keeps an index ordering of the whole graph (Hilbert curve or
    /// spectral) and re-cuts it for the new speeds, or repartitions it
    /// migration-aware when the cut would be too imbalanced (\[KOR95\] §3,
    /// \[SKK00\]). The root holds O(n); the decision is made there.
    RootIndex,
    /// Built from per-rank pieces ([`DistGraph::from_local`]; or by
    /// [`DistGraph::scatter`] of a graph with coordinates): no rank holds the
    /// whole graph. The first partition by speeds is the parallel RCB
    /// ([`Balancer::partition_distributed`](super::balancer::Balancer::partition_distributed)),
    /// a remap re-cuts the vertices' order rank by rank, each rank's along
    /// the Hilbert curve, by prefix sums ([`DistGraph::prefix_cut`]); the
    /// root weighs O(p) loads and move volumes. Needs vertex coordinates.
    Geometric,
    /// Built by [`DistGraph::scatter`] of a graph without coordinates, with
    /// a partition of the caller's: moved only by [`DistGraph::remap`] and
    /// [`DistGraph::migrate`]; `maybe_remap` refuses it (build the graph with
    /// `Balancer::scatter_graph` to have it balanced).
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
    comm: OwnComm,
    part: GraphPart<T>,
    /// The balancer's index, on the root of a graph made by
    /// [`Balancer::scatter_graph`](super::balancer::Balancer::scatter_graph).
    pub(crate) index: Option<RootIndex>,
    /// How a balancer remaps it (the same on every rank).
    pub(crate) strategy: GraphStrategy,
    /// Checked entry of every collective verb ([`super::watchdog::checkpoint`]).
    pub(crate) cp: Checkpoints,
    /// Ghost exchanges made so far (their messages' tags).
    exchanges: u64,
    /// Every exchange a checked entry too ([`halo::ENV_CHECK`]`=full`).
    full_checks: bool,
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
    /// Scatters `graph`, `partition` and `values` (significant on `root`
    /// only) to every rank, on a duplicate of `comm`. The partition must have
    /// one part per rank. Collective; errors agree.
    pub fn scatter<C: Communicator>(
        comm: &C,
        root: i32,
        graph: Option<&Graph>,
        partition: Option<&Partition>,
        values: Option<&[T]>,
    ) -> Result<Self> {
        let _w = waiting();
        let e = T::BYTES;
        let (comm, cp) = Checkpoints::duplicate_checked(
            comm,
            &format!("DistGraph::scatter(from root {root}, {e}-byte values)"),
        )?;
        let size = comm.size() as usize;
        let check = if comm.rank() == root {
            match (graph, partition, values) {
                (Some(g), Some(p), Some(v)) => {
                    if let Some(&q) = p.parts.iter().find(|&&q| q >= size) {
                        Err(Error::invalid_plan(format!(
                            "partition assigns a vertex to part {q} of {size}"
                        )))
                    } else if p.nparts != size || p.len() != g.n() || v.len() != g.n() {
                        Err(Error::shape_mismatch(format!(
                            "graph of {} vertices, partition of {} into {} parts, {} values, {size} ranks",
                            g.n(),
                            p.len(),
                            p.nparts,
                            v.len()
                        )))
                    } else {
                        Ok((g, p, v))
                    }
                }
                _ => Err(Error::invalid_input(
                    "scatter: the root needs a graph, a partition and values",
                )),
            }
            .map(Some)
        } else {
            Ok(None)
        };
        let at_root = agree(&comm, root, check)?;
        let mut meta = [0usize; 3];
        if let Some((g, _, _)) = at_root {
            meta = [
                g.n(),
                usize::from(g.has_edge_weights()),
                g.coords().map_or(0, |c| c.dim),
            ];
        }
        comm.process_at_rank(root).broadcast_into(&mut meta[..]);
        let [n, weighted, dim] = meta;
        let (pieces, counts) = match at_root {
            Some((g, p, v)) => Pieces::from_graph(g, &p.parts, size, v),
            None => (Pieces::default(), vec![0; size]),
        };
        let got = pieces.ship(&comm, &counts, weighted == 1, dim)?;
        drop(pieces);
        let part = GraphPart::build(&comm, n, weighted == 1, dim, got)?;
        let strategy = if dim > 0 {
            GraphStrategy::Geometric
        } else {
            GraphStrategy::Manual
        };
        Ok(Self::of_part(comm, cp, part, strategy))
    }

    /// A graph of `part` on `comm` (its own duplicate) with no index.
    fn of_part(
        comm: SimpleCommunicator,
        cp: Checkpoints,
        part: GraphPart<T>,
        strategy: GraphStrategy,
    ) -> Self {
        DistGraph {
            comm: OwnComm::new(comm),
            part,
            index: None,
            strategy,
            cp,
            exchanges: 0,
            full_checks: halo::full_checks_from_env(),
            exchange_fp: None,
        }
    }

    /// A graph of `n` vertices built from each rank's `pieces` (any
    /// vertices, any order; `weighted` and `dim` the same on every rank)
    /// on a duplicate of `comm`, with `strategy` and no index: a restart
    /// from a save file. Collective; errors agree.
    pub(crate) fn from_pieces<C: Communicator>(
        comm: &C,
        n: usize,
        (weighted, dim): (bool, usize),
        pieces: Pieces<T>,
        strategy: GraphStrategy,
    ) -> Result<Self> {
        let (comm, cp) = Checkpoints::duplicate_checked(
            comm,
            &format!(
                "DistGraph::from_pieces({n} vertices, {}-byte values)",
                T::BYTES
            ),
        )?;
        let part = GraphPart::build(&comm, n, weighted, dim, pieces)?;
        Ok(Self::of_part(comm, cp, part, strategy))
    }

    /// This rank's vertices as records (increasing ids, neighbours as
    /// global ids, edge weights when the graph has them on some rank),
    /// with whether it has edge weights and its coordinates' dimension (the
    /// same on every rank). Collective (one all-reduce).
    pub(crate) fn pieces(&self) -> (Pieces<T>, bool, usize) {
        let weighted = any_rank(&*self.comm, !self.part.ewgt.is_empty());
        let mut out = Pieces::default();
        for i in 0..self.part.owned.len() {
            self.part.push_vertex(i, weighted, &mut out);
        }
        (out, weighted, self.part.dim)
    }

    /// Builds a distributed graph from per-rank pieces, on a duplicate of
    /// `comm`: each rank passes the global ids of the vertices it owns (any
    /// order), their adjacency in CSR form (`xadj` of `owned.len() + 1`
    /// offsets into `adjncy`, neighbours as global ids), optional vertex
    /// weights (default 1), edge weights (parallel to `adjncy`, default 1),
    /// coordinates (`dim` ≥ 1 per owned vertex, the same `dim` on every
    /// rank: required, `None` is an error on every rank) and one value per
    /// owned vertex. The graph's strategy is [`GraphStrategy::Geometric`]:
    /// partition it by speeds once with
    /// [`Balancer::partition_distributed`](super::balancer::Balancer::partition_distributed),
    /// then balance it with
    /// [`Balancer::maybe_remap`](super::balancer::Balancer::maybe_remap). The global number of vertices is the sum
    /// of the owned counts; the owned ids of all ranks must be exactly
    /// `0..n`, each once (checked by the distributed directory). The
    /// adjacency should be symmetric (as in [`Graph`]); the halo is built
    /// from the ghosts each rank needs. No rank holds more than its piece
    /// and ⌈n/p⌉ directory entries. Collective; errors agree.
    #[allow(clippy::too_many_arguments)]
    pub fn from_local<C: Communicator>(
        comm: &C,
        owned: Vec<usize>,
        xadj: Vec<usize>,
        adjncy: Vec<usize>,
        vwgt: Option<Vec<f64>>,
        ewgt: Option<Vec<f64>>,
        coords: Option<Coords>,
        values: Vec<T>,
    ) -> Result<Self> {
        let _w = waiting();
        let e = T::BYTES;
        let (comm, cp) = Checkpoints::duplicate_checked(
            comm,
            &format!("DistGraph::from_local({e}-byte values)"),
        )?;
        let nv = owned.len();
        let ok = if xadj.len() != nv + 1
            || xadj[0] != 0
            || xadj.windows(2).any(|w| w[0] > w[1])
            || xadj[nv] != adjncy.len()
        {
            Err(Error::shape_mismatch(format!(
                "xadj of {} offsets (ending at {:?}) for {nv} vertices and {} neighbours",
                xadj.len(),
                xadj.last(),
                adjncy.len()
            )))
        } else {
            Ok(())
        };
        agree(&comm, 0, ok)?;
        let weighted = any_rank(&comm, ewgt.is_some());
        let dim = coords.as_ref().map_or(0, |c| c.dim);
        let mut dims = [dim, usize::MAX - dim];
        let mut agreed = [0usize; 2];
        comm.all_reduce_into(
            &dims[..],
            &mut agreed[..],
            mpi::collective::SystemOperation::max(),
        );
        dims = [agreed[0], usize::MAX - agreed[1]];
        agree(
            &comm,
            0,
            if dims[0] == dims[1] {
                Ok(())
            } else {
                Err(Error::shape_mismatch(format!(
                    "coordinates in {}D on some ranks and {}D on others",
                    dims[1], dims[0]
                )))
            },
        )?;
        if dims[0] == 0 {
            // The same on every rank: the dimensions agree.
            return Err(Error::invalid_input(
                "DistGraph::from_local: no vertex coordinates; a graph built from per-rank pieces \
                 is partitioned and remapped geometrically (GraphStrategy::Geometric) and needs \
                 `dim` coordinates per vertex (dim >= 1); a graph without coordinates must be \
                 built whole on the root with Balancer::scatter_graph",
            ));
        }
        let mut n = 0usize;
        comm.all_reduce_into(&nv, &mut n, mpi::collective::SystemOperation::sum());
        let arcs = adjncy.len();
        let pieces = Pieces {
            ids: owned,
            deg: xadj.windows(2).map(|w| w[1] - w[0]).collect(),
            adj: adjncy,
            ewgt: if weighted {
                ewgt.unwrap_or_else(|| vec![1.0; arcs])
            } else {
                Vec::new()
            },
            vwgt: vwgt.unwrap_or_else(|| vec![1.0; nv]),
            coords: coords.map_or_else(Vec::new, |c| c.data),
            values,
        };
        drop(xadj);
        let part = GraphPart::build(&comm, n, weighted, dim, pieces)?;
        Ok(Self::of_part(comm, cp, part, GraphStrategy::Geometric))
    }

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
        let full = self.full_checks.then(what);
        let call = next_call(
            &*self.comm,
            &self.cp,
            full.as_deref(),
            &mut self.exchanges,
            fp,
        )?;
        self.part
            .ghost_exchange(&*self.comm, &self.cp, (call, w), &what)
    }

    /// Moves to `new` (replicated on every rank, checked to be identical):
    /// each rank looks up the new owner of its own vertices and
    /// [`Self::migrate`]s them. Collective; on error every rank returns the
    /// same `Err` and keeps its vertices.
    pub fn remap(&mut self, new: &Partition) -> Result<MigrateStats> {
        let _w = waiting();
        let n = self.part.n_global;
        let fp = agree(&*self.comm, 0, fingerprint(&new.parts))?;
        self.cp.check(
            &*self.comm,
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
        agree(&*self.comm, 0, ok)?;
        let dest: Vec<usize> = self.part.owned.iter().map(|&v| new.parts[v]).collect();
        let st = self.part.migrate(&*self.comm, &dest)?;
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
        self.cp
            .check(&*self.comm, &format!("DistGraph::migrate({n} vertices)"))?;
        let st = self.part.migrate(&*self.comm, new_owner)?;
        // A graph balanced from a root index: the root learns the new owners
        // (it holds the whole graph anyway); only the owned ids travel.
        if let Some(at) = self.index_rank() {
            let p = self.part.size;
            let mut to_root = vec![0usize; p];
            to_root[at] = self.part.owned.len();
            let (ids, from) = alltoallv_flat(&*self.comm, &self.part.owned, &to_root)?;
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
        self.comm
            .all_reduce_into(&mine, &mut at, mpi::collective::SystemOperation::max());
        usize::try_from(at).ok()
    }

    /// Gathers all values in global vertex order on `root` (`None` elsewhere).
    pub fn gather(&self, root: i32) -> Result<Option<Vec<T>>> {
        let _w = waiting();
        let n = self.part.n_global;
        self.cp.check(
            &*self.comm,
            &format!("DistGraph::gather({n} vertices to root {root})"),
        )?;
        self.part.gather_to_root(&*self.comm, root)
    }

    /// The checked entry of a partitioning verb: the same call with the same
    /// targets on every rank.
    fn check_targets(&self, verb: &str, targets: &[f64]) -> Result<()> {
        let fp = agree(&*self.comm, 0, fingerprint(targets))?;
        let n = self.part.n_global;
        self.cp.check(
            &*self.comm,
            &format!(
                "DistGraph::{verb}({n} vertices, {} targets {fp:016x})",
                targets.len()
            ),
        )
    }

    fn points(&self) -> Result<Points<'_>> {
        let p = &self.part;
        let ok = if p.dim == 0 {
            Err(Error::invalid_input(
                "geometric partitioning needs vertex coordinates",
            ))
        } else {
            Ok(())
        };
        agree(&*self.comm, 0, ok)?;
        Ok(Points {
            dim: p.dim,
            coords: &p.coords,
            weights: &p.vwgt,
            ids: &p.owned,
        })
    }

    /// Parallel recursive coordinate bisection (`geometric::rcb`) of the
    /// vertices by their coordinates and weights, the parts' weights in
    /// proportion to `targets` (one per rank, e.g. the measured speeds, the
    /// same on every rank): the new owner of each owned vertex, for
    /// [`Self::migrate`]. No rank sees another's coordinates. Collective.
    pub fn partition_rcb(&self, targets: &[f64]) -> Result<Vec<usize>> {
        let _w = waiting();
        self.check_targets("partition_rcb", targets)?;
        geometric::rcb(&*self.comm, &self.points()?, targets)
    }

    /// Parallel space-filling-curve partitioning (`geometric::sfc`): the
    /// Hilbert curve through the vertices cut into intervals of weights in
    /// proportion to `targets`. Collective.
    pub fn partition_sfc(&self, targets: &[f64]) -> Result<Vec<usize>> {
        let _w = waiting();
        self.check_targets("partition_sfc", targets)?;
        geometric::sfc(&*self.comm, &self.points()?, targets)
    }

    /// The index-based remap by prefix sums (`geometric::prefix_cut`): the
    /// vertices in the order rank by rank, each rank's along the Hilbert
    /// curve, cut into intervals of weights in proportion to `targets`. After
    /// [`Self::partition_sfc`] this is the curve's order and only vertices
    /// near the moved boundaries change owner (\[KOR95\] §3). Collective.
    pub fn prefix_cut(&self, targets: &[f64]) -> Result<Vec<usize>> {
        let _w = waiting();
        self.check_targets("prefix_cut", targets)?;
        let order = self.curve_order()?;
        geometric::prefix_cut(&*self.comm, &self.part.vwgt, &order, targets)
    }

    /// The owned vertices along the Hilbert curve through every rank's
    /// coordinates (ties by id): local indices. Collective.
    fn curve_order(&self) -> Result<Vec<usize>> {
        let pts = self.points()?;
        let keys = geometric::hilbert_keys(&*self.comm, &pts);
        let mut order: Vec<usize> = (0..keys.len()).collect();
        order.sort_unstable_by(|&a, &b| {
            keys[a]
                .total_cmp(&keys[b])
                .then(pts.ids[a].cmp(&pts.ids[b]))
        });
        Ok(order)
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
        self.comm.all_reduce_into(
            &mine[..],
            &mut all[..],
            mpi::collective::SystemOperation::sum(),
        );
        let mut sums = vec![0.0; 2 * p];
        self.comm.all_reduce_into(
            &to[..],
            &mut sums[..],
            mpi::collective::SystemOperation::sum(),
        );
        // What each rank receives: the column sums of bytes; messages in: ranks sending to it.
        let mut arrivals = vec![0.0; p];
        let senders: Vec<f64> = (0..p)
            .map(|q| f64::from(u8::from(to[p + q] > 0.0)))
            .collect();
        self.comm.all_reduce_into(
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
        self.exchanges
    }

    /// How a balancer remaps this graph, fixed when it was built.
    pub fn strategy(&self) -> GraphStrategy {
        self.strategy
    }

    /// The graph's communicator (a duplicate of the one it was created on).
    pub fn comm(&self) -> &SimpleCommunicator {
        &self.comm
    }

    /// The checked entry of a collective call `op` named in the caller's
    /// words (e.g. a C function with its must-match arguments), where this
    /// rank may refuse (`refused`: its own input is wrong): every rank
    /// returns the same result, within the timeout
    /// ([`super::watchdog::refusing_checkpoint`]).
    #[doc(hidden)]
    pub fn entry(&self, op: &str, refused: Option<&Error>) -> Result<()> {
        let _w = waiting();
        self.cp.check_refusing(&*self.comm, op, refused)
    }

    /// The timeout of the graph's collectives (its balancer's).
    pub fn timeout(&self) -> Option<std::time::Duration> {
        self.cp.timeout()
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
        self.part.partition(&*self.comm)
    }
    /// Global number of vertices.
    pub fn global_len(&self) -> usize {
        self.part.n_global
    }
}

#[cfg(test)]
mod tests {
    use super::Runs;

    #[test]
    fn runs_find_positions() {
        let ids = [3, 4, 5, 9, 11, 12];
        let r = Runs::new(&ids);
        assert_eq!(r.first, vec![3, 9, 11]);
        for (i, &v) in ids.iter().enumerate() {
            assert_eq!(r.find(v), Some(i));
        }
        for v in [0, 2, 6, 8, 10, 13, 100] {
            assert_eq!(r.find(v), None);
        }
        assert_eq!(Runs::new(&[]).find(0), None);
    }
}
