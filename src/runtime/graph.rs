//! Distributed unstructured graphs ([`DistGraph`]): a graph whose vertices,
//! with one value each, are spread over the ranks by a [`Partition`] (part `r`
//! lives on rank `r`), as the graph mapping of \[KOR95\] asks.
//!
//! * [`DistGraph::scatter`] — the root's graph, partition and vertex values
//!   go out; each rank receives its owned vertices with their adjacency
//!   (global ids, in the global CSR order) and values. Through
//!   [`Balancer::scatter_graph`](super::balancer::Balancer::scatter_graph)
//!   the partition follows the measured speeds and the root keeps an index
//!   ordering for fast remaps.
//! * [`DistGraph::exchange_ghosts`] — every rank receives the current values
//!   of its ghosts (neighbours owned elsewhere) from their owners; the send
//!   and receive lists are both sorted by global id, so no ids travel.
//! * [`DistGraph::remap`] — moves to a new partition: only vertices whose
//!   owner changes travel, with their id, adjacency and value (bincode:
//!   values arrive bit-exact).
//!
//! Every rank keeps a copy of the partition (one `u32` per vertex) so that it
//! can tell the owner of any ghost; everything else is local. All calls are
//! collective and their errors agree (see [`super::comm`]).

use std::collections::HashMap;
use std::time::Instant;

use mpi::traits::*;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use super::array::MoveStats;
use super::clock::waiting;
use super::comm::{agree, alltoallv_bytes, bcast_value, decode, encode, max_f64, sum_f64};
use crate::error::{Error, Result};
use crate::plan::graph::{Graph, Grouping, IndexKind, IntervalCut, Ordering, Partition, Rsb};
use mpi::topology::SimpleCommunicator;

/// One vertex as it travels: global id, neighbours (global ids), edge weights
/// (empty when unweighted), vertex weight and value.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct VertexRecord<T> {
    id: usize,
    nbrs: Vec<usize>,
    ewgt: Vec<f64>,
    vwgt: f64,
    value: T,
}

/// What a [`DistGraph::remap`] moved (identical on every rank).
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct MigrateStats {
    /// Number of vertices that changed owner (and travelled).
    pub moved_vertices: u64,
    /// Bytes, messages and time.
    pub moves: MoveStats,
}

/// This rank's vertices of a distributed graph: everything of a
/// [`DistGraph`] but its communicator and the root's index.
#[derive(Debug, Clone)]
struct GraphPart<T> {
    rank: usize,
    n_global: usize,
    owner: Vec<u32>,
    /// Owned vertices (global ids, increasing).
    owned: Vec<usize>,
    /// Local CSR over owned vertices: neighbour slots `< owned.len()` are owned
    /// vertices, `owned.len() + k` is ghost `k`.
    xadj: Vec<usize>,
    adj: Vec<usize>,
    ewgt: Vec<f64>,
    vwgt: Vec<f64>,
    /// Neighbours in global ids, parallel to `adj` (kept for migration).
    adj_global: Vec<usize>,
    ghosts: Vec<usize>,
    values: Vec<T>,
    ghost_values: Vec<T>,
    /// For every rank, the local indices of owned vertices it needs (sorted by id).
    send: Vec<Vec<usize>>,
    /// For every rank, the ghost slots it fills (sorted by id).
    recv: Vec<Vec<usize>>,
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

impl<T: Serialize + DeserializeOwned + Clone> GraphPart<T> {
    /// [`DistGraph::scatter`] on a communicator the caller already owns.
    fn scatter_from_root<C: Communicator>(
        comm: &C,
        root: i32,
        graph: Option<&Graph>,
        partition: Option<&Partition>,
        values: Option<&[T]>,
    ) -> Result<Self> {
        let size = comm.size() as usize;
        let check = if comm.rank() == root {
            match (graph, partition, values) {
                (Some(g), Some(p), Some(v)) => {
                    if p.nparts != size || p.len() != g.n() || v.len() != g.n() {
                        Err(Error::ShapeMismatch(format!(
                            "graph of {} vertices, partition of {} into {} parts, {} values, {size} ranks",
                            g.n(),
                            p.len(),
                            p.nparts,
                            v.len()
                        )))
                    } else {
                        Ok(())
                    }
                }
                _ => Err(Error::InvalidInput(
                    "scatter_from_root: the root needs a graph, a partition and values".into(),
                )),
            }
        } else {
            Ok(())
        };
        agree(comm, root, check)?;
        let part = bcast_value(comm, root, partition)?;
        let owner: Vec<u32> = part.parts.iter().map(|&p| p as u32).collect();
        let sends: Result<Vec<Vec<u8>>> = if comm.rank() == root {
            let (g, v) = (
                graph.unwrap_or_else(|| unreachable!()),
                values.unwrap_or_default(),
            );
            let mut per: Vec<Vec<VertexRecord<T>>> = vec![Vec::new(); size];
            for u in 0..g.n() {
                per[part.parts[u]].push(record(g, u, v[u].clone()));
            }
            per.iter().map(encode).collect::<Result<_>>()
        } else {
            Ok(vec![Vec::new(); size])
        };
        let sends = agree(comm, root, sends)?;
        let got = alltoallv_bytes(comm, &sends)?;
        let mine: Result<Vec<VertexRecord<T>>> = decode(&got[root as usize], root);
        let recs = agree(comm, root, mine)?;
        let mut dg = GraphPart::from_records(comm.rank() as usize, size, owner, recs);
        dg.rebuild_halo();
        Ok(dg)
    }

    fn from_records(
        rank: usize,
        size: usize,
        owner: Vec<u32>,
        mut recs: Vec<VertexRecord<T>>,
    ) -> Self {
        recs.sort_by_key(|r| r.id);
        let n_global = owner.len();
        let mut dg = GraphPart {
            rank,
            n_global,
            owner,
            owned: Vec::with_capacity(recs.len()),
            xadj: vec![0],
            adj: Vec::new(),
            ewgt: Vec::new(),
            vwgt: Vec::with_capacity(recs.len()),
            adj_global: Vec::new(),
            ghosts: Vec::new(),
            values: Vec::with_capacity(recs.len()),
            ghost_values: Vec::new(),
            send: vec![Vec::new(); size],
            recv: vec![Vec::new(); size],
        };
        for r in recs {
            dg.owned.push(r.id);
            dg.adj_global.extend_from_slice(&r.nbrs);
            if r.ewgt.is_empty() {
                dg.ewgt.extend(std::iter::repeat_n(1.0, r.nbrs.len()));
            } else {
                dg.ewgt.extend_from_slice(&r.ewgt);
            }
            dg.xadj.push(dg.adj_global.len());
            dg.vwgt.push(r.vwgt);
            dg.values.push(r.value);
        }
        dg
    }

    /// Recomputes local indices, ghosts and the halo lists from `owned`,
    /// `adj_global` and `owner`. O(local arcs log).
    fn rebuild_halo(&mut self) {
        let size = self.send.len();
        let local: HashMap<usize, usize> = self
            .owned
            .iter()
            .enumerate()
            .map(|(i, &v)| (v, i))
            .collect();
        let mut ghosts: Vec<usize> = self
            .adj_global
            .iter()
            .copied()
            .filter(|u| !local.contains_key(u))
            .collect();
        ghosts.sort_unstable();
        ghosts.dedup();
        let gslot: HashMap<usize, usize> =
            ghosts.iter().enumerate().map(|(k, &u)| (u, k)).collect();
        let no = self.owned.len();
        self.adj = self
            .adj_global
            .iter()
            .map(|u| local.get(u).copied().unwrap_or_else(|| no + gslot[u]))
            .collect();
        self.recv = vec![Vec::new(); size];
        for (k, &u) in ghosts.iter().enumerate() {
            self.recv[self.owner[u] as usize].push(k);
        }
        self.send = vec![Vec::new(); size];
        for i in 0..self.owned.len() {
            let mut to: Vec<usize> = self.adj_global[self.xadj[i]..self.xadj[i + 1]]
                .iter()
                .map(|&u| self.owner[u] as usize)
                .filter(|&q| q != self.rank)
                .collect();
            to.sort_unstable();
            to.dedup();
            for q in to {
                self.send[q].push(i);
            }
        }
        self.ghosts = ghosts;
        self.ghost_values.clear();
    }

    /// Receives the current values of all ghosts from their owners. Collective.
    pub fn ghost_exchange<C: Communicator>(&mut self, comm: &C) -> Result<MoveStats> {
        let t0 = Instant::now();
        let sends: Result<Vec<Vec<u8>>> = self
            .send
            .iter()
            .map(|idx| {
                if idx.is_empty() {
                    Ok(Vec::new())
                } else {
                    encode(&idx.iter().map(|&i| &self.values[i]).collect::<Vec<_>>())
                }
            })
            .collect();
        let sends = agree(comm, 0, sends)?;
        let got = alltoallv_bytes(comm, &sends)?;
        let mut ghost_values: Vec<Option<T>> = vec![None; self.ghosts.len()];
        let unpacked: Result<()> = (|| {
            for (q, bytes) in got.iter().enumerate() {
                if self.recv[q].is_empty() {
                    continue;
                }
                let vals: Vec<T> = decode(bytes, q as i32)?;
                if vals.len() != self.recv[q].len() {
                    return Err(Error::BadMessage {
                        rank: q as i32,
                        msg: format!(
                            "{} ghost values for {} ghosts",
                            vals.len(),
                            self.recv[q].len()
                        ),
                    });
                }
                for (&k, v) in self.recv[q].iter().zip(vals) {
                    ghost_values[k] = Some(v);
                }
            }
            Ok(())
        })();
        agree(comm, 0, unpacked)?;
        self.ghost_values = ghost_values.into_iter().flatten().collect();
        let bytes: u64 = sends.iter().map(|b| b.len() as u64).sum();
        let recvd: u64 = got.iter().map(|b| b.len() as u64).sum();
        let msgs = sends.iter().filter(|b| !b.is_empty()).count() as u64;
        Ok(stats(comm, bytes, msgs, bytes + recvd, t0))
    }

    /// Moves to `new` (replicated on every rank, checked to agree): vertices
    /// whose owner changes are sent, with id, adjacency and value, to their new
    /// owner; the others stay. Ghost values are invalidated (call
    /// [`Self::ghost_exchange`]). Collective.
    pub fn migrate<C: Communicator>(&mut self, comm: &C, new: &Partition) -> Result<MigrateStats> {
        let t0 = Instant::now();
        let size = self.send.len();
        let ok = if new.nparts != size || new.len() != self.n_global {
            Err(Error::ShapeMismatch(format!(
                "new partition of {} vertices into {} parts for {} vertices on {size} ranks",
                new.len(),
                new.nparts,
                self.n_global
            )))
        } else {
            Ok(())
        };
        agree(comm, 0, ok)?;
        let mut out: Vec<Vec<VertexRecord<T>>> = vec![Vec::new(); size];
        let mut keep = Vec::new();
        let old = std::mem::take(&mut self.values);
        for (i, value) in old.into_iter().enumerate() {
            let v = self.owned[i];
            let rec = VertexRecord {
                id: v,
                nbrs: self.adj_global[self.xadj[i]..self.xadj[i + 1]].to_vec(),
                ewgt: self.ewgt[self.xadj[i]..self.xadj[i + 1]].to_vec(),
                vwgt: self.vwgt[i],
                value,
            };
            let q = new.parts[v];
            if q == self.rank {
                keep.push(rec);
            } else {
                out[q].push(rec);
            }
        }
        let sends: Result<Vec<Vec<u8>>> = out
            .iter()
            .map(|r| {
                if r.is_empty() {
                    Ok(Vec::new())
                } else {
                    encode(r)
                }
            })
            .collect();
        let sends = agree(comm, 0, sends)?;
        let got = alltoallv_bytes(comm, &sends)?;
        let incoming: Result<Vec<VertexRecord<T>>> = (|| {
            let mut all = Vec::new();
            for (q, b) in got.iter().enumerate() {
                if !b.is_empty() {
                    let recs: Vec<VertexRecord<T>> = decode(b, q as i32)?;
                    if let Some(r) = recs
                        .iter()
                        .find(|r| r.id >= self.n_global || new.parts[r.id] != self.rank)
                    {
                        return Err(Error::BadMessage {
                            rank: q as i32,
                            msg: format!("vertex {} sent to the wrong rank", r.id),
                        });
                    }
                    all.extend(recs);
                }
            }
            Ok(all)
        })();
        let incoming = agree(comm, 0, incoming)?;
        let moved_in = incoming.len() as f64;
        keep.extend(incoming);
        let owner = new.parts.iter().map(|&p| p as u32).collect();
        *self = GraphPart::from_records(self.rank, size, owner, keep);
        self.rebuild_halo();
        let bytes: u64 = sends.iter().map(|b| b.len() as u64).sum();
        let recvd: u64 = got.iter().map(|b| b.len() as u64).sum();
        let msgs = sends.iter().filter(|b| !b.is_empty()).count() as u64;
        Ok(MigrateStats {
            moved_vertices: sum_f64(comm, moved_in) as u64,
            moves: stats(comm, bytes, msgs, bytes + recvd, t0),
        })
    }

    /// Gathers all values in global vertex order on `root` (`None` elsewhere).
    pub fn gather_to_root<C: Communicator>(&self, comm: &C, root: i32) -> Result<Option<Vec<T>>> {
        let mine: Vec<(usize, T)> = self
            .owned
            .iter()
            .copied()
            .zip(self.values.iter().cloned())
            .collect();
        let all = super::comm::gather_values(comm, root, &mine)?;
        let res = all.map(|parts| {
            let mut out: Vec<Option<T>> = vec![None; self.n_global];
            for (id, v) in parts.into_iter().flatten() {
                if id < out.len() {
                    out[id] = Some(v);
                }
            }
            out.into_iter()
                .collect::<Option<Vec<T>>>()
                .ok_or_else(|| Error::InvalidPlan("a vertex has no owner".into()))
        });
        let res = res.transpose();
        agree(comm, root, res)
    }

    /// Neighbours of owned vertex `i` as slots (`< owned().len()`: owned,
    /// otherwise ghost `slot − owned().len()`), with edge weights, in the
    /// order of the global CSR.
    pub fn neighbors(&self, i: usize) -> impl Iterator<Item = (usize, f64)> + '_ {
        (self.xadj[i]..self.xadj[i + 1]).map(move |a| (self.adj[a], self.ewgt[a]))
    }
    /// The current partition (one part per rank).
    pub fn partition(&self) -> Partition {
        Partition {
            nparts: self.send.len(),
            parts: self.owner.iter().map(|&p| p as usize).collect(),
        }
    }
}

/// The root's index of a graph balanced by a
/// [`Balancer`](super::balancer::Balancer): the one-dimensional ordering, the
/// current cut of it, and what the remap decision needs of every vertex.
#[derive(Debug, Clone)]
pub(crate) struct RootIndex {
    pub(crate) ordering: Ordering,
    pub(crate) cut: IntervalCut,
    pub(crate) grouping: Grouping,
    /// Vertex weights by global id.
    pub(crate) weights: Vec<f64>,
    /// Bytes a vertex takes when it moves (record size), by global id.
    pub(crate) bytes: Vec<f64>,
}

impl RootIndex {
    /// Builds the index of `g` for `speeds`: a Hilbert-curve ordering (HCI)
    /// when the graph has coordinates, else recursive spectral bisection
    /// (RSBI), cut by [`Grouping::Binpacking`] (\[KOR95\] §3).
    pub(crate) fn build(g: &Graph, speeds: &[f64], value_bytes: usize) -> Result<RootIndex> {
        let kind = if g.coords().is_some() {
            IndexKind::Hci
        } else {
            IndexKind::Rsbi
        };
        let ordering = Ordering::build(g, kind, &Rsb::default(), 1024)?;
        let grouping = Grouping::Binpacking;
        let cut = ordering.cut(speeds, grouping)?;
        let weights = (0..g.n()).map(|v| g.vertex_weight(v)).collect();
        let per_edge = if g.has_edge_weights() { 16.0 } else { 8.0 };
        let bytes = (0..g.n())
            .map(|v| 32.0 + value_bytes as f64 + per_edge * g.neighbors(v).len() as f64)
            .collect();
        Ok(RootIndex {
            ordering,
            cut,
            grouping,
            weights,
            bytes,
        })
    }

    /// Work per part under `partition` (sum of vertex weights).
    pub(crate) fn loads(&self, partition: &[usize], nparts: usize) -> Vec<f64> {
        let mut l = vec![0.0; nparts];
        for (v, &q) in partition.iter().enumerate() {
            l[q] += self.weights[v];
        }
        l
    }

    /// What each rank sends plus receives (bytes, messages) to move from
    /// `old` to `new`. O(n + p²) worst case in messages, O(n) usually.
    pub(crate) fn volume(&self, old: &[usize], new: &[usize], nparts: usize) -> Vec<(f64, usize)> {
        let mut vol = vec![(0.0, 0usize); nparts];
        let mut pairs = std::collections::HashSet::new();
        for (v, (&a, &b)) in old.iter().zip(new).enumerate() {
            if a != b {
                vol[a].0 += self.bytes[v];
                vol[b].0 += self.bytes[v];
                if pairs.insert((a, b)) {
                    vol[a].1 += 1;
                    vol[b].1 += 1;
                }
            }
        }
        vol
    }
}

/// A graph distributed over the ranks of a communicator, with one value of
/// type `T` per vertex.
///
/// The graph keeps its own duplicate of the communicator it was created on,
/// so its messages never mix with the application's. Its data movements are
/// communication sections of [`super::clock`]: never counted as compute.
/// Every rank keeps a copy of the partition (one `u32` per vertex) to know
/// the owner of any ghost.
pub struct DistGraph<T> {
    comm: SimpleCommunicator,
    part: GraphPart<T>,
    /// The balancer's index, on the root of a graph made by
    /// [`Balancer::scatter_graph`](super::balancer::Balancer::scatter_graph).
    pub(crate) index: Option<RootIndex>,
    /// Checked entry of every collective verb ([`super::watchdog::checkpoint`]).
    pub(crate) cp: super::watchdog::Checkpoints,
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

impl<T: Serialize + DeserializeOwned + Clone> DistGraph<T> {
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
        let comm = comm.duplicate();
        let cp = super::watchdog::Checkpoints::from_env(&comm)?;
        let e = std::mem::size_of::<T>();
        cp.check(
            &comm,
            &format!("DistGraph::scatter(from root {root}, {e}-byte values)"),
        )?;
        let part = GraphPart::scatter_from_root(&comm, root, graph, partition, values)?;
        Ok(DistGraph {
            comm,
            part,
            index: None,
            cp,
        })
    }

    /// Receives the current values of all ghosts from their owners. Collective.
    pub fn exchange_ghosts(&mut self) -> Result<MoveStats> {
        let _w = waiting();
        let n = self.part.n_global;
        self.cp.check(
            &self.comm,
            &format!("DistGraph::exchange_ghosts({n} vertices)"),
        )?;
        self.part.ghost_exchange(&self.comm)
    }

    /// Moves to `new` (replicated on every rank, checked to agree): vertices
    /// whose owner changes are sent, with id, adjacency and value, to their
    /// new owner; the others stay. Ghost values are invalidated (call
    /// [`Self::exchange_ghosts`]). Collective; on error every rank returns
    /// the same `Err`.
    pub fn remap(&mut self, new: &Partition) -> Result<MigrateStats> {
        let _w = waiting();
        let n = self.part.n_global;
        self.cp
            .check(&self.comm, &format!("DistGraph::remap({n} vertices)"))?;
        self.part.migrate(&self.comm, new)
    }

    /// Gathers all values in global vertex order on `root` (`None` elsewhere).
    pub fn gather(&self, root: i32) -> Result<Option<Vec<T>>> {
        let _w = waiting();
        let n = self.part.n_global;
        self.cp.check(
            &self.comm,
            &format!("DistGraph::gather({n} vertices to root {root})"),
        )?;
        self.part.gather_to_root(&self.comm, root)
    }

    /// The graph's communicator (a duplicate of the one it was created on).
    pub fn comm(&self) -> &SimpleCommunicator {
        &self.comm
    }
    /// Owned vertices (global ids, increasing).
    pub fn owned(&self) -> &[usize] {
        &self.part.owned
    }
    /// Ghost vertices (global ids, increasing).
    pub fn ghosts(&self) -> &[usize] {
        &self.part.ghosts
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
    /// This rank's work per iteration: the sum of its vertices' weights.
    pub fn local_work(&self) -> f64 {
        self.part.vwgt.iter().sum()
    }
    /// Owner of every vertex (the current partition).
    pub fn owners(&self) -> &[u32] {
        &self.part.owner
    }
    /// The current partition (one part per rank).
    pub fn partition(&self) -> Partition {
        self.part.partition()
    }
    /// Global number of vertices.
    pub fn global_len(&self) -> usize {
        self.part.n_global
    }
}

fn record<T>(g: &Graph, u: usize, value: T) -> VertexRecord<T> {
    VertexRecord {
        id: u,
        nbrs: g.neighbors(u).to_vec(),
        ewgt: if g.has_edge_weights() {
            g.weighted_neighbors(u).map(|(_, w)| w).collect()
        } else {
            Vec::new()
        },
        vwgt: g.vertex_weight(u),
        value,
    }
}
