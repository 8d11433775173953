//! The parallel packing algorithm, executed collectively (seed
//! \[VH94\] §4.2, "Algorithm Parallel Packing" with
//! TokenPacking, GridPacking, FindBestCorner, UpdateCorners,
//! FindNewCornerSize and SendPacketToSource), and the submesh allocation on
//! top of it (§4.3).
//!
//! Every rank brings the grids it generated (any number, possibly none). The
//! `m` packets `⟨(w, h), source⟩` are routed to the first ranks, `⌈m/p⌉` per
//! rank (one per rank when `m ≤ p`, as in the seed), and sorted in the packing
//! order by an odd-even merge-split transposition sort between neighbouring
//! ranks. Then `m` rounds place the grids one by one, exactly as the
//! sequential [`TpState`](crate::plan::packing::tp::TpState) does:
//!
//! 1. the holder of packet `i` broadcasts its size (Broadcast);
//! 2. every rank scores the (at most two per packet it holds) free corners it
//!    keeps; a min-all-reduce of the score, then of the key among the ranks
//!    that reached it, finds the best corner, ties to the oldest
//!    (FindBestCorner with FindMin);
//! 3. the rank keeping that corner broadcasts its position and the
//!    orientation (the seed's second broadcast);
//! 4. every rank clips its own corners (UpdateCorners, no communication);
//! 5. every rank scans the grids it holds for the walls of the two new corners
//!    and a min-all-reduce of the four distances sizes them
//!    (FindNewCornerSize); the holder of packet `i` keeps them.
//!
//! Each round is 2 broadcasts and 3 all-reduces, `O(log p)` each on a tree,
//! plus `O(m/p)` local work; the sort is `p` neighbour exchanges. Results go
//! back to each grid's source rank in one all-to-all (SendPacketToSource).
//! The result is identical to the sequential TP on the grids concatenated in
//! rank order. Errors agree on every rank.

use std::time::Instant;

use mpi::collective::SystemOperation;
use mpi::point_to_point::send_receive_into;
use mpi::traits::*;
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::plan::array2d::Rect;
use crate::plan::packing::submesh::{min_side, scale_rect, side_needed, CostModel};
use crate::plan::packing::tp::{corner_room, Corner, Placed, INF};
use crate::plan::packing::{
    check_grids, AmrCost, Grid, Mesh, Packing, Placement, Scaling, TightPacking,
};
use crate::runtime::comm::{agree, all_gather_values, alltoallv_bytes, decode, encode};
use crate::runtime::watchdog::check_entry;

/// Timings and counts of one collective packing.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct PackStats {
    /// Grids packed (`m`).
    pub grids: usize,
    /// Placement rounds (`m`).
    pub rounds: usize,
    /// Collective calls made in the rounds (5 per round).
    pub round_collectives: usize,
    /// Merge-split phases of the sort.
    pub sort_phases: usize,
    /// Seconds spent routing packets (TokenPacking).
    pub route_s: f64,
    /// Seconds spent sorting.
    pub sort_s: f64,
    /// Seconds spent in the `m` rounds.
    pub rounds_s: f64,
    /// Of which in the rounds' collective calls (the rest is local work).
    pub rounds_comm_s: f64,
    /// Seconds spent sending results back.
    pub return_s: f64,
}

/// This rank's part of a collective packing.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CollectivePacking {
    /// Width of the whole packing (known to every rank).
    pub width: u64,
    /// Height of the whole packing.
    pub height: u64,
    /// Placements of this rank's grids, in its local order.
    pub placements: Vec<Placement>,
    /// Timings.
    pub stats: PackStats,
}

/// A packet: grid size, source rank, index there, global index.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
struct Packet {
    grid: Grid,
    source: u64,
    local: u64,
    global: u64,
}

const PACKET_WORDS: usize = 5;

impl Packet {
    fn to_words(self, out: &mut Vec<u64>) {
        out.extend([
            self.grid.w,
            self.grid.h,
            self.source,
            self.local,
            self.global,
        ]);
    }
    fn from_words(w: &[u64]) -> Packet {
        Packet {
            grid: Grid::new(w[0], w[1]),
            source: w[2],
            local: w[3],
            global: w[4],
        }
    }
}

/// Block distribution of `m` sorted packets over `p` ranks: `⌈m/p⌉` each on
/// the first ranks. Returns `(start, len)` of rank `r`.
pub fn block(m: usize, p: usize, r: usize) -> (usize, usize) {
    let per = m.div_ceil(p.max(1)).max(1);
    let start = (r * per).min(m);
    (start, ((r + 1) * per).min(m) - start)
}

/// The rank holding sorted packet `i`.
pub(crate) fn holder(m: usize, p: usize, i: usize) -> usize {
    i / m.div_ceil(p.max(1)).max(1)
}

/// Element-wise minimum of `x` over all ranks. Reduced as `i64` (the
/// order-preserving map `x ^ 2^63`): MPICH 4.0.2 (Debian 12, ch4:ucx)
/// compares `MPI_UINT64_T` as signed in `MPI_MIN`, so that `u64::MAX`, the
/// "none here" of the callers, won over 0.
fn all_min_u64<C: Communicator>(comm: &C, x: &[u64]) -> Vec<u64> {
    const FLIP: u64 = 1 << 63;
    let signed: Vec<i64> = x.iter().map(|&v| (v ^ FLIP) as i64).collect();
    let mut out = vec![0i64; x.len()];
    comm.all_reduce_into(&signed[..], &mut out[..], SystemOperation::min());
    out.into_iter().map(|v| v as u64 ^ FLIP).collect()
}

/// Personalised all-to-all of serde values: `per_rank[r]` goes to rank `r`;
/// returns what each rank sent here. Errors agree.
fn exchange<C: Communicator, T: Serialize + serde::de::DeserializeOwned>(
    comm: &C,
    per_rank: &[Vec<T>],
) -> Result<Vec<Vec<T>>> {
    let sends = agree(
        comm,
        0,
        per_rank.iter().map(encode).collect::<Result<Vec<_>>>(),
    )?;
    let received = alltoallv_bytes(comm, &sends)?;
    let decoded = received
        .iter()
        .enumerate()
        .map(|(r, b)| decode(b, r as i32))
        .collect::<Result<Vec<Vec<T>>>>();
    agree(comm, 0, decoded)
}

fn check_local(grids: &[Grid]) -> Result<()> {
    for (i, g) in grids.iter().enumerate() {
        if g.w == 0 || g.h == 0 || g.w > 1 << 40 || g.h > 1 << 40 {
            return Err(Error::invalid_input(format!(
                "grid {i} has size {}x{}",
                g.w, g.h
            )));
        }
    }
    Ok(())
}

/// Packs the grids of all ranks with TP, collectively (§4.2). `tp` and
/// `ratio` must be the same on every rank. Identical to
/// `tp.pack(concatenation of every rank's grids in rank order, ratio)`.
pub fn collective_tp<C: Communicator>(
    comm: &C,
    grids: &[Grid],
    tp: &TightPacking,
    ratio: f64,
) -> Result<CollectivePacking> {
    check_entry(comm, &format!("collective_tp({tp:?}, ratio {ratio})"))?;
    let valid = check_local(grids).and_then(|_| {
        if ratio.is_finite() && ratio > 0.0 {
            Ok(())
        } else {
            Err(Error::invalid_input(format!("mesh ratio {ratio}")))
        }
    });
    agree(comm, 0, valid)?;
    let (p, rank) = (comm.size() as usize, comm.rank() as usize);
    let mut stats = PackStats::default();

    // Counts and offsets in rank order; the Remark's MINHOLESIZE.
    let mut counts = vec![0u64; p];
    comm.all_gather_into(&(grids.len() as u64), &mut counts[..]);
    let m = counts.iter().sum::<u64>() as usize;
    if m == 0 {
        return Err(Error::empty("no grids to pack on any rank"));
    }
    let offset: u64 = counts[..rank].iter().sum();
    let my_short = grids.iter().map(Grid::short).min().unwrap_or(u64::MAX);
    let min_short = all_min_u64(comm, &[my_short])[0];
    let min_hole = if tp.remove_small_holes { min_short } else { 0 };

    // (a) TokenPacking: packet of global index g goes to holder(g).
    let t = Instant::now();
    let mut outgoing: Vec<Vec<Packet>> = vec![Vec::new(); p];
    for (j, g) in grids.iter().enumerate() {
        let global = offset + j as u64;
        outgoing[holder(m, p, global as usize)].push(Packet {
            grid: *g,
            source: rank as u64,
            local: j as u64,
            global,
        });
    }
    let mut held: Vec<Packet> = exchange(comm, &outgoing)?.concat();
    let routed = if held.len() == block(m, p, rank).1 {
        Ok(())
    } else {
        Err(Error::Plan(crate::plan::Error::Solver(format!(
            "TokenPacking: {} packets routed here, expected {}",
            held.len(),
            block(m, p, rank).1
        ))))
    };
    agree(comm, 0, routed)?;
    stats.route_s = t.elapsed().as_secs_f64();

    // (b) Parallel sort: odd-even merge-split transposition between ranks.
    let t = Instant::now();
    let cmp = |a: &Packet, b: &Packet| {
        tp.order
            .compare(&a.grid, &b.grid)
            .then(a.global.cmp(&b.global))
    };
    held.sort_by(cmp);
    let len_of = |r: usize| block(m, p, r).1;
    let mut phase = 0;
    loop {
        for _ in 0..p {
            let partner = if (rank + phase) % 2 == 0 {
                rank + 1
            } else {
                rank.wrapping_sub(1)
            };
            phase += 1;
            if partner >= p || len_of(partner) == 0 || held.is_empty() {
                continue;
            }
            let mut mine_w = Vec::with_capacity(held.len() * PACKET_WORDS);
            held.iter().for_each(|pk| pk.to_words(&mut mine_w));
            let mut theirs = vec![0u64; len_of(partner) * PACKET_WORDS];
            let proc = comm.process_at_rank(partner as i32);
            send_receive_into(&mine_w[..], &proc, &mut theirs[..], &proc);
            let mut all: Vec<Packet> = held
                .iter()
                .copied()
                .chain(theirs.chunks_exact(PACKET_WORDS).map(Packet::from_words))
                .collect();
            all.sort_by(cmp);
            let keep = held.len();
            held = if partner > rank {
                all[..keep].to_vec()
            } else {
                all[all.len() - keep..].to_vec()
            };
        }
        // Sorted when every rank's last packet precedes the next rank's first.
        let firsts: Vec<Option<Packet>> = all_gather_values(comm, &held.first().copied())?;
        let ok = match (held.last(), firsts.get(rank + 1).copied().flatten()) {
            (Some(last), Some(next)) => cmp(last, &next) != std::cmp::Ordering::Greater,
            _ => true,
        };
        if all_min_u64(comm, &[ok as u64])[0] == 1 || phase >= 4 * p {
            break;
        }
    }
    stats.sort_phases = phase;
    stats.sort_s = t.elapsed().as_secs_f64();

    // (c) m rounds of GridPacking.
    let t = Instant::now();
    let (my_start, _) = block(m, p, rank);
    let key_holder = |key: u64| {
        holder(
            m,
            p,
            if key == 0 {
                0
            } else {
                ((key - 1) / 2) as usize
            },
        )
    };
    let mut corners: Vec<Corner> = Vec::new();
    if holder(m, p, 0) == rank {
        corners.push(Corner {
            x: 0,
            y: 0,
            p: INF,
            q: INF,
            key: 0,
        });
    }
    let mut my_boxes: Vec<Placed> = Vec::with_capacity(held.len());
    let mut my_places: Vec<Placement> = Vec::with_capacity(held.len());
    let (mut width, mut height) = (0u64, 0u64);
    let mut comm_s = 0.0;
    for i in 0..m {
        let hi = holder(m, p, i);
        // 1. Broadcast the packet's size.
        let mut size = [0u64; 2];
        if hi == rank {
            let g = held[i - my_start].grid;
            size = [g.w, g.h];
        }
        let tc = Instant::now();
        comm.process_at_rank(hi as i32)
            .broadcast_into(&mut size[..]);
        comm_s += tc.elapsed().as_secs_f64();
        let g = Grid::new(size[0], size[1]);
        // 2. FindBestCorner: local best, then FindMin on score, then on key.
        let local = corners
            .iter()
            .filter_map(|c| c.evaluate(g, width, height, ratio, tp.modified))
            .fold(
                None,
                |b: Option<crate::plan::packing::tp::Choice>, ch| match b {
                    Some(b) if !ch.better_than(&b) => Some(b),
                    _ => Some(ch),
                },
            );
        let my_score = local.map_or(f64::INFINITY, |c| c.score);
        let mut best = 0.0f64;
        let tc = Instant::now();
        comm.all_reduce_into(&my_score, &mut best, SystemOperation::min());
        comm_s += tc.elapsed().as_secs_f64();
        if !best.is_finite() {
            return Err(Error::Plan(crate::plan::Error::Solver(
                "TP: no free corner fits the grid".into(),
            )));
        }
        let my_key = local
            .filter(|c| c.score == best)
            .map_or(u64::MAX, |c| c.key);
        let tc = Instant::now();
        let key = all_min_u64(comm, &[my_key])[0];
        comm_s += tc.elapsed().as_secs_f64();
        // 3. The keeper of the corner broadcasts where the grid goes.
        let kr = key_holder(key);
        let mut at = [0u64; 3];
        if kr == rank {
            let pos = corners
                .iter()
                .position(|c| c.key == key)
                .ok_or_else(|| Error::Plan(crate::plan::Error::Solver("TP: lost corner".into())))?;
            let c = corners.remove(pos);
            let rotated = local.is_some_and(|ch| ch.rotated);
            at = [c.x, c.y, rotated as u64];
        }
        let tc = Instant::now();
        comm.process_at_rank(kr as i32).broadcast_into(&mut at[..]);
        comm_s += tc.elapsed().as_secs_f64();
        let rotated = at[2] == 1;
        let (w, h) = g.oriented(rotated);
        let r = Placed {
            x0: at[0],
            y0: at[1],
            x1: at[0] + w,
            y1: at[1] + h,
        };
        width = width.max(r.x1);
        height = height.max(r.y1);
        // 4. UpdateCorners, locally.
        corners.retain_mut(|c| c.clip(&r, min_hole));
        // 5. FindNewCornerSize: FindMin over the walls each rank knows.
        let (p1, q1) = corner_room(&my_boxes, r.x1, r.y0);
        let (p2, q2) = corner_room(&my_boxes, r.x0, r.y1);
        let tc = Instant::now();
        let room = all_min_u64(comm, &[p1, q1, p2, q2]);
        comm_s += tc.elapsed().as_secs_f64();
        if hi == rank {
            for (slot, (cx, cy, cp, cq)) in [
                (r.x1, r.y0, room[0], room[1]),
                (r.x0, r.y1, room[2], room[3]),
            ]
            .into_iter()
            .enumerate()
            {
                if cp > 0 && cq > 0 && cp >= min_hole && cq >= min_hole {
                    corners.push(Corner {
                        x: cx,
                        y: cy,
                        p: cp,
                        q: cq,
                        key: 2 * i as u64 + 1 + slot as u64,
                    });
                }
            }
            my_boxes.push(r);
            my_places.push(Placement::new(r.x0, r.y0, rotated));
        }
    }
    stats.grids = m;
    stats.rounds = m;
    stats.round_collectives = 5 * m;
    stats.rounds_s = t.elapsed().as_secs_f64();
    stats.rounds_comm_s = comm_s;

    // (d) SendPacketToSource.
    let t = Instant::now();
    let mut back: Vec<Vec<(u64, Placement)>> = vec![Vec::new(); p];
    for (pk, pl) in held.iter().zip(&my_places) {
        back[pk.source as usize].push((pk.local, *pl));
    }
    let received = exchange(comm, &back)?;
    let mut placements = vec![Placement::default(); grids.len()];
    let mut filled = 0;
    for items in received {
        for (local, pl) in items {
            if let Some(slot) = placements.get_mut(local as usize) {
                *slot = pl;
                filled += 1;
            }
        }
    }
    let done = if filled == grids.len() {
        Ok(())
    } else {
        Err(Error::Plan(crate::plan::Error::Solver(
            "collective TP: results missing".into(),
        )))
    };
    agree(comm, 0, done)?;
    stats.return_s = t.elapsed().as_secs_f64();
    Ok(CollectivePacking {
        width,
        height,
        placements,
        stats,
    })
}

/// This rank's part of a collective submesh allocation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LocalAllocation {
    /// The mesh.
    pub mesh: Mesh,
    /// The minimum grid side applied (as in the sequential allocator).
    pub min_side: u64,
    /// Width of the packing of the enlarged grids.
    pub width: u64,
    /// Height of that packing.
    pub height: u64,
    /// Placements of this rank's grids (local order).
    pub placements: Vec<Placement>,
    /// Submeshes of this rank's grids (local order).
    pub submeshes: Vec<Rect>,
    /// Fraction of the mesh used (all grids).
    pub utilization: f64,
    /// The seed's objective over all grids.
    pub cost: AmrCost,
    /// Timings of the last packing.
    pub stats: PackStats,
}

/// Allocates submeshes to the grids of all ranks (§4.3) with the collective
/// TP: the same minimum side, packing, scaling and retries as
/// [`SubmeshAllocator`](crate::plan::packing::SubmeshAllocator) with this
/// `tp`, hence the same submeshes. The grid sizes are all-gathered once for
/// the `O(m)` bound of §4.3 (16 bytes per grid).
pub fn allocate_collective<C: Communicator>(
    comm: &C,
    grids: &[Grid],
    mesh: Mesh,
    tp: &TightPacking,
    scaling: Scaling,
) -> Result<LocalAllocation> {
    check_entry(
        comm,
        &format!("allocate_collective({mesh:?}, {tp:?}, {scaling:?})"),
    )?;
    agree(comm, 0, check_local(grids))?;
    let all: Vec<Grid> = all_gather_values(comm, &grids.to_vec())?.concat();
    // Every rank holds the same list: the checks agree without messages.
    check_grids(&all, mesh.ratio())?;
    if all.len() > mesh.size() {
        return Err(Error::Plan(crate::plan::Error::TooManyParts {
            parts: all.len(),
            units: mesh.size(),
        }));
    }
    let mut side = min_side(&all, mesh);
    for _ in 0..64 {
        let big: Vec<Grid> = grids
            .iter()
            .map(|g| Grid::new(g.w.max(side), g.h.max(side)))
            .collect();
        let pk = collective_tp(comm, &big, tp, mesh.ratio())?;
        let subs: Vec<Rect> = big
            .iter()
            .zip(&pk.placements)
            .map(|(g, pl)| {
                let (w, h) = g.oriented(pl.rotated);
                scale_rect(
                    (pl.x, pl.y, pl.x + w, pl.y + h),
                    pk.width,
                    pk.height,
                    mesh,
                    scaling,
                )
            })
            .collect::<crate::plan::Result<_>>()?;
        let all_ok = subs.iter().all(|r| !r.is_empty());
        if all_min_u64(comm, &[all_ok as u64])[0] == 1 {
            let model = CostModel::default();
            let mine = Packing {
                algo: "tp".into(),
                width: pk.width,
                height: pk.height,
                placements: pk.placements.clone(),
            };
            let c = model.cost(grids, &mine, &subs);
            let used: usize = subs.iter().map(Rect::area).sum();
            let mut g = [0.0f64; 3];
            comm.all_reduce_into(
                &[c.comp, c.comm, c.total][..],
                &mut g[..],
                SystemOperation::max(),
            );
            let mut total_used = 0u64;
            comm.all_reduce_into(&(used as u64), &mut total_used, SystemOperation::sum());
            return Ok(LocalAllocation {
                mesh,
                min_side: side,
                width: pk.width,
                height: pk.height,
                placements: pk.placements,
                submeshes: subs,
                utilization: total_used as f64 / mesh.size() as f64,
                cost: AmrCost {
                    comp: g[0],
                    comm: g[1],
                    total: g[2],
                },
                stats: pk.stats,
            });
        }
        side = side_needed(pk.width, pk.height, mesh, scaling).max(side + 1);
    }
    Err(Error::Plan(crate::plan::Error::TooManyParts {
        parts: all.len(),
        units: mesh.size(),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_cover_in_order_and_holder_agrees() {
        for m in 1..40 {
            for p in 1..10 {
                let mut next = 0;
                for r in 0..p {
                    let (s, l) = block(m, p, r);
                    assert_eq!(s, next.min(m));
                    for i in s..s + l {
                        assert_eq!(holder(m, p, i), r);
                    }
                    next = s + l;
                }
                assert_eq!(next, m);
                // Non-empty blocks form a prefix (the sort needs it).
                let lens: Vec<usize> = (0..p).map(|r| block(m, p, r).1).collect();
                let first_empty = lens.iter().position(|&l| l == 0).unwrap_or(p);
                assert!(lens[first_empty..].iter().all(|&l| l == 0));
            }
        }
    }
}
