//! This rank's vertices of a distributed graph ([`GraphPart`]): the local
//! CSR, ghosts and their owners, the neighbour-only halo and its exchange,
//! the migration of vertices to new owners.

use super::pieces::{record_bytes, stats};
use super::{MigrateStats, Pieces};
use crate::error::{Error, Result};
use crate::plan::graph::ids::vertex_id;
use crate::plan::graph::Partition;
use crate::runtime::clock::Waiting;
use crate::runtime::comm::{agree, alltoallv_flat, max_f64, sum_f64, zeroed_buffer};
use crate::runtime::directory::owners_of;
use crate::runtime::graph_value::pack;
use crate::runtime::graph_value::GraphValue;
use crate::runtime::halo::{self, ExchangeStats};
use crate::runtime::watchdog::Checkpoints;
use mpi::traits::*;
use std::time::Instant;

/// The neighbour-only halo: for each neighbour rank, the owned vertices it
/// needs (local indices) and the ghost slots it fills, both sorted by global
/// id, built once by [`GraphPart::build`] and reused by every exchange.
#[derive(Debug, Clone, Default)]
pub(super) struct Halo {
    pub(super) send_ranks: Vec<i32>,
    /// `send_idx[send_at[k]..send_at[k + 1]]` go to `send_ranks[k]`.
    pub(super) send_at: Vec<usize>,
    pub(super) send_idx: Vec<usize>,
    pub(super) recv_ranks: Vec<i32>,
    pub(super) recv_at: Vec<usize>,
    pub(super) recv_slots: Vec<usize>,
    /// Byte ranges of the messages in the buffers, and the buffers, reused
    /// by every exchange.
    pub(super) send_ranges: Vec<(i32, std::ops::Range<usize>)>,
    pub(super) recv_ranges: Vec<(i32, std::ops::Range<usize>)>,
    pub(super) sendbuf: Vec<u8>,
    pub(super) recvbuf: Vec<u8>,
}

/// This rank's vertices of a distributed graph: everything of a
/// [`DistGraph`] but its communicator and the root's index. Every array is
/// O(local vertices + local arcs + ghosts); none is O(n).
#[derive(Debug, Clone)]
pub(super) struct GraphPart<T> {
    pub(super) rank: usize,
    pub(super) size: usize,
    pub(super) n_global: usize,
    /// Owned vertices (global ids, increasing).
    pub(super) owned: Vec<usize>,
    /// Local CSR over owned vertices: neighbour slots `< owned.len()` are owned
    /// vertices, `owned.len() + k` is ghost `k`.
    pub(super) xadj: Vec<usize>,
    pub(super) adj: Vec<usize>,
    /// Edge weights parallel to `adj`; empty when the graph is unweighted (all 1).
    pub(super) ewgt: Vec<f64>,
    pub(super) vwgt: Vec<f64>,
    pub(super) dim: usize,
    pub(super) coords: Vec<f64>,
    pub(super) values: Vec<T>,
    /// Ghost vertices (global ids, increasing) and their owners.
    pub(super) ghosts: Vec<usize>,
    pub(super) ghost_owner: Vec<u32>,
    pub(super) ghost_values: Vec<T>,
    pub(super) halo: Halo,
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
    pub(super) fn build<C: Communicator>(
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
    pub(super) fn build_halo<C: Communicator>(&self, comm: &C) -> Result<Halo> {
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
    pub(super) fn ghost_exchange<C: Communicator>(
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
    pub(super) fn slot_id(&self, s: usize) -> usize {
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
    pub(super) fn migrate<C: Communicator>(
        &mut self,
        comm: &C,
        dest: &[usize],
    ) -> Result<MigrateStats> {
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
    pub(super) fn push_vertex(&self, i: usize, weighted: bool, to: &mut Pieces<T>) {
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
    pub(super) fn gather_to_root<C: Communicator>(
        &self,
        comm: &C,
        root: i32,
    ) -> Result<Option<Vec<T>>> {
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
    pub(super) fn neighbors(&self, i: usize) -> impl Iterator<Item = (usize, f64)> + '_ {
        (self.xadj[i]..self.xadj[i + 1])
            .map(move |a| (self.adj[a], self.ewgt.get(a).copied().unwrap_or(1.0)))
    }

    /// Owned ids of every rank, gathered on every rank: the partition.
    pub(super) fn partition<C: Communicator>(&self, comm: &C) -> Partition {
        let p = self.size;
        let mut counts = vec![0 as mpi::Count; p];
        let mine = self.owned.len() as mpi::Count;
        comm.all_gather_into(&mine, &mut counts[..]);
        let displs = crate::runtime::comm::displacements(&counts);
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
pub(super) struct Runs {
    /// First id of each run.
    first: Vec<usize>,
    /// Position of each run's first id; one more entry: the total length.
    at: Vec<usize>,
}

impl Runs {
    pub(super) fn new(ids: &[usize]) -> Self {
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
    pub(super) fn find(&self, v: usize) -> Option<usize> {
        let k = self.first.partition_point(|&f| f <= v).checked_sub(1)?;
        let pos = self.at[k] + (v - self.first[k]);
        (pos < self.at[k + 1]).then_some(pos)
    }
}

/// Appends the `counts[q]` consecutive `items` of every rank `q` that has
/// some to `list`, recording `q` in `ranks` and the end offset in `at`.
pub(super) fn split_by_rank(
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
pub(super) fn any_rank<C: Communicator>(comm: &C, b: bool) -> bool {
    max_f64(comm, f64::from(u8::from(b))) > 0.0
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
