//! Distributed unstructured graphs ([`DistGraph`]): a graph whose vertices,
//! with one value each, are spread over the ranks by a [`Partition`] (part `r`
//! lives on rank `r`), as the mapping of seed `001_b091384d76b527f5.txt` asks.
//!
//! * [`DistGraph::scatter_from_root`] — the root's graph, partition and vertex
//!   values go out; each rank receives its owned vertices with their adjacency
//!   (global ids, in the global CSR order) and values.
//! * [`DistGraph::ghost_exchange`] — every rank receives the current values of
//!   its ghosts (neighbours owned elsewhere) from their owners; the send and
//!   receive lists are both sorted by global id, so no ids travel.
//! * [`DistGraph::migrate`] — moves to a new partition: only vertices whose
//!   owner changes travel, with their id, adjacency and value (bincode: values
//!   arrive bit-exact).
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
use super::comm::{agree, alltoallv_bytes, bcast_value, decode, encode, max_f64, sum_f64};
use crate::error::{Error, Result};
use crate::plan::graph::{Graph, Partition};

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

/// What a [`DistGraph::migrate`] moved (identical on every rank).
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct MigrateStats {
    /// Number of vertices that changed owner (and travelled).
    pub moved_vertices: u64,
    /// Bytes, messages and time.
    pub moves: MoveStats,
}

/// A graph distributed over the ranks of a communicator, with one value of
/// type `T` per vertex.
#[derive(Debug, Clone)]
pub struct DistGraph<T> {
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

impl<T: Serialize + DeserializeOwned + Clone> DistGraph<T> {
    /// Scatters `graph`, `partition` and `values` (significant on `root` only)
    /// to every rank. The partition must have one part per rank. Collective.
    pub fn scatter_from_root<C: Communicator>(
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
        let got = exchange(comm, comm.rank() as usize, sends)?;
        let mine: Result<Vec<VertexRecord<T>>> = decode(&got[root as usize], root);
        let recs = agree(comm, root, mine)?;
        let mut dg = DistGraph::from_records(comm.rank() as usize, size, owner, recs);
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
        let mut dg = DistGraph {
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
        let got = exchange(comm, self.rank, sends.clone())?;
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
        let got = exchange(comm, self.rank, sends.clone())?;
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
        *self = DistGraph::from_records(self.rank, size, owner, keep);
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

    /// Owned vertices (global ids, increasing).
    pub fn owned(&self) -> &[usize] {
        &self.owned
    }
    /// Ghost vertices (global ids, increasing).
    pub fn ghosts(&self) -> &[usize] {
        &self.ghosts
    }
    /// Values of the owned vertices.
    pub fn values(&self) -> &[T] {
        &self.values
    }
    /// Mutable values of the owned vertices.
    pub fn values_mut(&mut self) -> &mut [T] {
        &mut self.values
    }
    /// Ghost values from the last [`Self::ghost_exchange`] (empty before).
    pub fn ghost_values(&self) -> &[T] {
        &self.ghost_values
    }
    /// Neighbours of owned vertex `i` as slots (`< owned().len()`: owned,
    /// otherwise ghost `slot − owned().len()`), with edge weights, in the
    /// order of the global CSR.
    pub fn neighbors(&self, i: usize) -> impl Iterator<Item = (usize, f64)> + '_ {
        (self.xadj[i]..self.xadj[i + 1]).map(move |a| (self.adj[a], self.ewgt[a]))
    }
    /// Weight of owned vertex `i`.
    pub fn vertex_weight(&self, i: usize) -> f64 {
        self.vwgt[i]
    }
    /// Owner of every vertex (the current partition).
    pub fn owners(&self) -> &[u32] {
        &self.owner
    }
    /// The current partition (one part per rank).
    pub fn partition(&self) -> Partition {
        Partition {
            nparts: self.send.len(),
            parts: self.owner.iter().map(|&p| p as usize).collect(),
        }
    }
    /// Global number of vertices.
    pub fn global_len(&self) -> usize {
        self.n_global
    }
}

/// [`alltoallv_bytes`] with a one-byte dummy message to self: Open MPI
/// rejects an all-to-all-v whose send and receive buffers are both empty
/// (Rust's empty vectors share one dangling address, which MPI reads as
/// `sendbuf == recvbuf`, MPI_ERR_ARG). The dummy is neither decoded nor counted.
fn exchange<C: Communicator>(comm: &C, me: usize, mut sends: Vec<Vec<u8>>) -> Result<Vec<Vec<u8>>> {
    if let Some(b) = sends.get_mut(me) {
        if b.is_empty() {
            b.push(0);
        }
    }
    let mut got = alltoallv_bytes(comm, &sends)?;
    if let Some(b) = got.get_mut(me) {
        if b == &[0] {
            b.clear();
        }
    }
    Ok(got)
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
