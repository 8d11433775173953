//! A [`DistGraph`]'s part in a departure (issue 29; the protocol is
//! `balancer::membership`'s): the move of every vertex off the ranks that
//! leave, in proportion to the speeds of those that stay, and the graph's
//! successor on their communicator.
//!
//! The move is the minimum (\[KOR95\] §3's one-dimensional order, cut
//! otherwise than by sliding boundaries: [`hand_over`]): every rank that
//! stays keeps its vertices, and the leaving ranks' vertices, in their
//! order, are cut among the ranks that must grow, each taking one
//! contiguous piece in proportion to what it must grow (the rank next to
//! the leaving interval the piece next to its own). The order: a graph
//! with a root index, the index's ordering (the current owners' runs along
//! it); any other, the ranks' vertices one rank after the other, each
//! rank's along the Hilbert curve (by id without coordinates). The rule
//! and its price: the bytes are the minimum, the parts that grow hold two
//! intervals of the order, so the cut has more edges (BENCHMARKS.md,
//! "A graph's departure": both numbers).

use mpi::topology::SimpleCommunicator;
use mpi::traits::*;

use super::{geometric, DistGraph, GraphStrategy, GraphValue, MigrateStats};
use crate::error::{Error, Result};
use crate::plan::depart::{hand_over, piece_of};
use crate::plan::graph::{IntervalCut, Partition};
use crate::runtime::comm::{agree, decode, encode, root_compute};
use crate::runtime::object::Core;
use crate::runtime::watchdog::Checkpoints;

impl<T: GraphValue> DistGraph<T> {
    /// Moves every vertex to the ranks `stay` (ranks of the graph's
    /// communicator, ascending), in proportion to their `speeds` (one
    /// each), moving the minimum ([`hand_over`]); a root index moves to
    /// `stay[0]` (the new root). Collective; errors agree, and the graph
    /// then keeps its vertices.
    pub(crate) fn depart_to(&mut self, stay: &[usize], speeds: &[f64]) -> Result<MigrateStats> {
        self.cut_onto(stay, speeds, true)
    }

    /// [`Self::depart_to`] with the order's boundaries slid instead (every
    /// part one interval of the order; more moves): a join, where the new
    /// ranks hold nothing and every old one gives up a little.
    pub(crate) fn spread_to(&mut self, stay: &[usize], speeds: &[f64]) -> Result<MigrateStats> {
        self.cut_onto(stay, speeds, false)
    }

    /// The order cut onto `stay` for `speeds`: handed over (`hand`) or with
    /// its boundaries slid.
    fn cut_onto(&mut self, stay: &[usize], speeds: &[f64], hand: bool) -> Result<MigrateStats> {
        let size = self.part.size;
        let mut targets = vec![0.0; size];
        for (&r, &s) in stay.iter().zip(speeds) {
            targets[r] = s;
        }
        if self.strategy != GraphStrategy::RootIndex {
            let order = if self.part.dim > 0 {
                self.curve_order()?
            } else {
                (0..self.part.owned.len()).collect()
            };
            let dest = if hand {
                handed_over(&*self.core.comm, &self.part.vwgt, &order, &targets)?
            } else {
                geometric::prefix_cut_onto(&*self.core.comm, &self.part.vwgt, &order, speeds, stay)?
            };
            return self.migrate(&dest);
        }
        let at = self.index_rank().unwrap_or(0);
        let (cut, partition): (IntervalCut, Partition) =
            root_compute(&*self.core.comm, at as i32, || {
                let index = self
                    .index
                    .as_ref()
                    .ok_or_else(|| Error::invalid_input("the graph's root index is missing"))?;
                // The index keeps a cut of its ordering for later re-cuts: the
                // parts that stay in their order along it, numbered as on the
                // communicator of the ranks that stay, boundaries slid.
                let seq: Vec<usize> = index
                    .cut
                    .intervals
                    .iter()
                    .filter_map(|t| stay.binary_search(&t.0).ok())
                    .collect();
                let cut = index.ordering.cut_in_sequence(&seq, speeds)?;
                if !hand {
                    let parts = index.ordering.to_partition(&cut)?.parts;
                    let parts = parts.into_iter().map(|k| stay[k]).collect();
                    return Ok((cut, Partition::new(size, parts)?));
                }
                let perm = &index.ordering.perm;
                let unit = index.weights.iter().sum::<f64>() <= 0.0;
                let w = |v: usize| if unit { 1.0 } else { index.weights[v] };
                let mut runs: Vec<(usize, f64)> = Vec::new();
                for &v in perm {
                    match runs.last_mut() {
                        Some(r) if r.0 == index.parts[v] => r.1 += w(v),
                        _ => runs.push((index.parts[v], w(v))),
                    }
                }
                let pieces = hand_over(&runs, &targets)?;
                let mut parts = vec![0; perm.len()];
                let mut pos = 0.0;
                for &v in perm {
                    parts[v] = piece_of(&pieces, pos, w(v));
                    pos += w(v);
                }
                Ok((cut, Partition::new(size, parts)?))
            })?;
        let stats = self.remap(&partition)?;
        self.move_index(at, stay[0])?;
        if let Some(index) = self.index.as_mut() {
            index.cut = cut;
        }
        Ok(stats)
    }

    /// Sends the root index from rank `from` to rank `to` (collective: the
    /// same error on every rank).
    fn move_index(&mut self, from: usize, to: usize) -> Result<()> {
        if from == to {
            return Ok(());
        }
        let me = self.part.rank;
        let mut got = Ok(());
        if me == from {
            // An empty message says that the index could not be encoded.
            let bytes = self.index.take().map_or(Ok(Vec::new()), |i| encode(&i));
            got = bytes.as_ref().map(|_| ()).map_err(Clone::clone);
            let bytes = bytes.unwrap_or_default();
            self.core.comm.process_at_rank(to as i32).send(&bytes[..]);
        } else if me == to {
            let (bytes, _) = self
                .core
                .comm
                .process_at_rank(from as i32)
                .receive_vec::<u8>();
            got = if bytes.is_empty() {
                Err(Error::invalid_input("the root index could not be sent"))
            } else {
                decode(&bytes, from as i32).map(|i| self.index = Some(i))
            };
        }
        agree(&*self.core.comm, 0, got)
    }

    /// The graph on `comm`, the communicator of the old ranks `stay`
    /// (ascending) in their order, once no vertex lies on another rank: the
    /// same vertices on the same ranks, its ghosts' owners, halo lists and
    /// root index renumbered (no data moves). Collective on `comm`; `self`
    /// is left empty; on error nothing changes.
    pub(crate) fn successor(
        &mut self,
        comm: &SimpleCommunicator,
        stay: &[usize],
    ) -> Result<DistGraph<T>> {
        let n = self.part.n_global;
        let (comm, cp) = Checkpoints::duplicate_checked(
            comm,
            &format!(
                "DistGraph successor ({n} vertices, {}-byte values)",
                T::BYTES
            ),
        )?;
        // Every rank this one knows of stays (checked before anything changes).
        let p = &self.part;
        let h = &p.halo;
        let known = std::iter::once(p.rank)
            .chain(p.ghost_owner.iter().map(|&o| o as usize))
            .chain(
                h.send_ranks
                    .iter()
                    .chain(&h.recv_ranks)
                    .map(|&r| r as usize),
            )
            .chain(self.index.iter().flat_map(|i| i.parts.iter().copied()));
        let gone = known
            .filter(|r| stay.binary_search(r).is_err())
            .map(|r| {
                Err(Error::invalid_input(format!(
                    "rank {r} leaves but still owns vertices"
                )))
            })
            .next()
            .unwrap_or(Ok(()));
        agree(&comm, 0, gone)?;
        let new = |r: usize| stay.binary_search(&r).unwrap_or_default();
        let mut part = std::mem::take(&mut self.part);
        part.rank = new(part.rank);
        part.size = stay.len();
        for o in part.ghost_owner.iter_mut() {
            *o = new(*o as usize) as u32;
        }
        let h = &mut part.halo;
        for r in h.send_ranks.iter_mut().chain(h.recv_ranks.iter_mut()) {
            *r = new(*r as usize) as i32;
        }
        for (r, _) in h.send_ranges.iter_mut().chain(h.recv_ranges.iter_mut()) {
            *r = new(*r as usize) as i32;
        }
        if let Some(index) = self.index.as_mut() {
            for q in index.parts.iter_mut() {
                *q = new(*q);
            }
        }
        Ok(DistGraph {
            core: Core::new(comm, cp),
            part,
            index: self.index.take(),
            strategy: self.strategy,
            exchange_fp: None,
        })
    }
}

/// The new owner of each of this rank's vertices (weights `weights`) when
/// every rank's vertices, one rank after the other, each rank's in `order`,
/// are handed over ([`hand_over`]) to hold `targets` (one per rank, 0 for
/// a rank that leaves); by vertex counts when every weight is 0.
/// Collective; errors agree.
fn handed_over<C: Communicator>(
    comm: &C,
    weights: &[f64],
    order: &[usize],
    targets: &[f64],
) -> Result<Vec<usize>> {
    let (size, me) = (comm.size() as usize, comm.rank() as usize);
    let mut sums = vec![0.0f64; size];
    comm.all_gather_into(&weights.iter().sum::<f64>(), &mut sums[..]);
    let unit = sums.iter().sum::<f64>() <= 0.0;
    if unit {
        comm.all_gather_into(&(weights.len() as f64), &mut sums[..]);
    }
    let ok = if order.len() == weights.len() && targets.len() == size {
        Ok(())
    } else {
        Err(Error::invalid_input(
            "a departure's order or targets do not fit the graph",
        ))
    };
    agree(comm, 0, ok)?;
    let runs: Vec<(usize, f64)> = sums.iter().copied().enumerate().collect();
    let pieces = agree(comm, 0, hand_over(&runs, targets).map_err(Error::from))?;
    let w = |i: usize| if unit { 1.0 } else { weights[i] };
    let mut at: f64 = sums[..me].iter().sum();
    let mut dest = vec![0; weights.len()];
    for &i in order {
        dest[i] = piece_of(&pieces, at, w(i));
        at += w(i);
    }
    Ok(dest)
}
