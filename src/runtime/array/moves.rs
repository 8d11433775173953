//! The collective data movements of a [`Tiled`] block: scatter from the
//! root, gather to the root, and the remap to a new plan, in place through
//! point-to-point messages with only the ranks that exchange cells (module
//! `blocks`) where every rank can, by packing into one all-to-all-v
//! otherwise.

use std::time::Instant;

use mpi::datatype::{Partition, PartitionMut};
use mpi::traits::*;
use mpi::Count;
use ndarray::{s, Array2};

use super::blocks::{all_true, direct_capable, move_blocks, other_parts, overlaps, PeerBlocks};
use super::tile::{copy_rows, Tiled};
use super::Element;
use crate::error::{Error, Result};
use crate::plan::array2d::{ArrayPlan, Rect};
use crate::runtime::comm::{
    agree, check_identical, displacements, max_f64, sum_f64, zeroed_buffer,
};
use crate::runtime::object::{count, global_stats, MoveStats};

impl<T: Element> Tiled<T> {
    /// [`DistArray2::scatter_with_plan`](super::DistArray2::scatter_with_plan) on a communicator
    /// the caller already owns.
    pub(super) fn scatter_from_root<C: Communicator>(
        comm: &C,
        root: i32,
        plan: ArrayPlan,
        ghost: usize,
        global: Option<&Array2<T>>,
    ) -> Result<(Self, MoveStats)> {
        let start = Instant::now();
        let shape_ok = if comm.rank() == root {
            match global {
                None => Err(Error::invalid_input(
                    "scatter_from_root: the root has no array",
                )),
                Some(a) if a.dim() != (plan.rows, plan.cols) => {
                    Err(Error::shape_mismatch(format!(
                        "global array is {}x{}, the plan is for {}x{}",
                        a.nrows(),
                        a.ncols(),
                        plan.rows,
                        plan.cols
                    )))
                }
                Some(_) => Ok(()),
            }
        } else {
            Ok(())
        };
        agree(comm, root, shape_ok)?;
        let mut arr = Self::new(comm, plan, ghost)?;
        let me = arr.rect();
        let root_ok = global.is_none_or(direct_capable);
        if all_true(comm, root_ok && direct_capable(&arr.data)) {
            let empty = Array2::default((0, 0));
            let src = global.filter(|_| comm.rank() == root).unwrap_or(&empty);
            // The root's own part is copied locally.
            let at_root = comm.rank() == root;
            let (mut sends, mut recvs): (PeerBlocks, PeerBlocks) = (Vec::new(), Vec::new());
            if at_root {
                sends = other_parts(&arr.plan, root);
                if !me.is_empty() {
                    let own = src.slice(s![me.row..me.row_end(), me.col..me.col_end()]);
                    arr.local_mut().assign(&own);
                }
            } else {
                recvs.push((root as usize, arr.local_block(&Some(me))));
            }
            move_blocks(comm, src, &sends, &mut arr.data, &recvs)?;
        } else {
            let rootp = comm.process_at_rank(root);
            let mut recv = vec![T::default(); me.area()];
            if comm.rank() == root {
                let g = global.ok_or_else(|| Error::invalid_input("no global array"))?;
                let mut send = Vec::with_capacity(g.len());
                let mut counts = Vec::with_capacity(arr.plan.len());
                for p in &arr.plan.parts {
                    copy_rows(g, p.row, p.col, p, &mut send);
                    counts.push(count(p.area())?);
                }
                let displs = displacements(&counts);
                let part = Partition::new(&send[..], &counts[..], &displs[..]);
                rootp.scatter_varcount_into_root(&part, &mut recv[..]);
            } else {
                rootp.scatter_varcount_into(&mut recv[..]);
            }
            arr.unpack(&me, &recv);
        }
        let moved = (arr.plan.rows * arr.plan.cols - arr.plan.parts[root as usize].area()) as u64;
        let nonempty = arr
            .plan
            .parts
            .iter()
            .enumerate()
            .filter(|(r, p)| *r != root as usize && !p.is_empty());
        let stats = MoveStats {
            bytes: moved * std::mem::size_of::<T>() as u64,
            messages: nonempty.count() as u64,
            max_rank_bytes: moved * std::mem::size_of::<T>() as u64,
            seconds: max_f64(comm, start.elapsed().as_secs_f64()),
        };
        Ok((arr, stats))
    }

    /// Gathers the distributed array at `root`: `Some(global)` there, `None` elsewhere.
    pub(super) fn gather_to_root<C: Communicator>(
        &self,
        comm: &C,
        root: i32,
    ) -> Result<Option<Array2<T>>> {
        agree(comm, root, Self::check_plan(comm, &self.plan))?;
        let (rows, cols) = (self.plan.rows, self.plan.cols);
        let at_root = comm.rank() == root;
        let fits = Count::try_from(
            rows.saturating_mul(cols)
                .saturating_mul(std::mem::size_of::<T>()),
        )
        .is_ok();
        if all_true(comm, (!at_root || fits) && direct_capable(&self.data)) {
            let mut global = Array2::default(if at_root { (rows, cols) } else { (0, 0) });
            let (mut sends, mut recvs): (PeerBlocks, PeerBlocks) = (Vec::new(), Vec::new());
            if at_root {
                // Own part copied locally, as in `scatter_from_root`.
                recvs = other_parts(&self.plan, root);
                let me = self.rect();
                if !me.is_empty() {
                    global
                        .slice_mut(s![me.row..me.row_end(), me.col..me.col_end()])
                        .assign(&self.local());
                }
            } else {
                sends.push((root as usize, self.local_block(&Some(self.rect()))));
            }
            move_blocks(comm, &self.data, &sends, &mut global, &recvs)?;
            return Ok(at_root.then_some(global));
        }
        let mut send = Vec::with_capacity(self.rect().area());
        self.pack(&self.rect(), &mut send);
        let rootp = comm.process_at_rank(root);
        if !at_root {
            rootp.gather_varcount_into(&send[..]);
            return Ok(None);
        }
        let counts = self
            .plan
            .parts
            .iter()
            .map(|p| count(p.area()))
            .collect::<Result<Vec<_>>>()?;
        let displs = displacements(&counts);
        let mut recv = vec![T::default(); rows * cols];
        {
            let mut part = PartitionMut::new(&mut recv[..], &counts[..], &displs[..]);
            rootp.gather_varcount_into_root(&send[..], &mut part);
        }
        let mut global = Array2::default((rows, cols));
        for (p, &d) in self.plan.parts.iter().zip(&displs) {
            if p.is_empty() {
                continue;
            }
            let src = &recv[d as usize..d as usize + p.area()];
            let mut v = global.slice_mut(s![p.row..p.row_end(), p.col..p.col_end()]);
            for (dst, x) in v.iter_mut().zip(src) {
                *dst = *x;
            }
        }
        Ok(Some(global))
    }

    /// Moves the data to `new_plan`: only the cells whose owner changes
    /// travel, one message per pair of ranks whose blocks overlap.
    /// Transactional: the old block stays in place until the new one is
    /// complete; on error (on any rank) every rank returns the same `Err` and
    /// keeps its old data. Ghost cells of the new block are
    /// default-initialised: call
    /// [`DistArray2::exchange_ghosts`](super::DistArray2::exchange_ghosts)
    /// afterwards.
    ///
    /// `broadcast`: the plan is the root's, broadcast to every rank (a
    /// balance point's), so identical everywhere by construction: the root
    /// alone validates it (O(p)) and no fingerprints are compared.
    /// Otherwise every rank validates its own and they are compared.
    pub(super) fn remap<C: Communicator>(
        &mut self,
        comm: &C,
        new_plan: ArrayPlan,
        broadcast: bool,
    ) -> Result<MoveStats> {
        let shape = if (new_plan.rows, new_plan.cols) != (self.plan.rows, self.plan.cols) {
            Err(Error::shape_mismatch(format!(
                "new plan is for {}x{}, the array is {}x{}",
                new_plan.rows, new_plan.cols, self.plan.rows, self.plan.cols
            )))
        } else if broadcast && comm.rank() != 0 {
            Self::check_parts(comm, &new_plan)
        } else {
            Self::check_plan(comm, &new_plan)
        };
        agree(comm, 0, shape)?;
        if !broadcast {
            // Every rank must move to the same plan, or cells are lost.
            check_identical(comm, 0, "new plan", &new_plan)?;
        }
        let old = self.rect();
        let new = new_plan.parts[self.rank];
        // Only the ranks whose blocks overlap this rank's: one pass over
        // each plan, no list of p.
        let send = overlaps(&new_plan, self.rank, &old);
        let recv = overlaps(&self.plan, self.rank, &new);
        let mut next = Tiled {
            plan: new_plan,
            rank: self.rank,
            ghost: self.ghost,
            data: Array2::default((new.rows + 2 * self.ghost, new.cols + 2 * self.ghost)),
            on_buffer: None,
        };
        if let Some(keep) = old.intersect(&new) {
            if let (Some((r0, c0, h, w)), Some((r1, c1, _, _))) =
                (self.local_block(&Some(keep)), next.local_block(&Some(keep)))
            {
                next.data
                    .slice_mut(s![r1..r1 + h, c1..c1 + w])
                    .assign(&self.data.slice(s![r0..r0 + h, c0..c0 + w]));
            }
        }
        // Zero-copy path: MPI reads and writes the blocks in place through
        // subarray datatypes; the packing path serves the rare cases it cannot.
        let direct = all_true(
            comm,
            direct_capable(&self.data) && direct_capable(&next.data),
        );
        let stats = if direct {
            let blocks = |t: &Tiled<T>, v: &[(usize, Rect)]| -> PeerBlocks {
                v.iter()
                    .map(|&(q, r)| (q, t.local_block(&Some(r))))
                    .collect()
            };
            let (sends, recvs) = (blocks(self, &send), blocks(&next, &recv));
            // The move's agreement starts the ranks together: its time
            // measures the movement, not the ranks' arrival skew.
            let start = move_blocks(comm, &self.data, &sends, &mut next.data, &recvs)?;
            let cells = |v: &[(usize, Rect)]| v.iter().map(|r| r.1.area()).sum::<usize>();
            let elem = std::mem::size_of::<T>();
            global_stats(
                comm,
                cells(&send) * elem,
                (cells(&send) + cells(&recv)) * elem,
                send.len(),
                start,
            )
        } else {
            self.exchange(comm, &send, &recv, Some(&mut next))?
        };
        *self = next;
        Ok(stats)
    }

    /// Moves rectangles between ranks: packs the rectangles of `send` from
    /// `self` for their ranks, and unpacks what each rank of `recv` sent
    /// into its rectangle of `target` (default `self`): one all-to-all-v
    /// (its count arrays are O(p): the rare path), global statistics
    /// (collective).
    fn exchange<C: Communicator>(
        &mut self,
        comm: &C,
        send: &[(usize, Rect)],
        recv: &[(usize, Rect)],
        target: Option<&mut Tiled<T>>,
    ) -> Result<MoveStats> {
        let start = Instant::now();
        let size = comm.size() as usize;
        let dense = |v: &[(usize, Rect)]| {
            let mut d: Vec<Option<Rect>> = vec![None; size];
            for &(q, r) in v {
                d[q] = Some(r);
            }
            d
        };
        let (send, recv) = (dense(send), dense(recv));
        let area = |r: &Option<Rect>| r.map_or(0, |r| r.area());
        let mut sendbuf = zeroed_buffer(0);
        sendbuf.reserve(send.iter().map(area).sum());
        let mut scounts = Vec::with_capacity(send.len());
        for r in &send {
            if let Some(r) = r {
                self.pack(r, &mut sendbuf);
            }
            scounts.push(count(area(r))?);
        }
        let rcounts = recv
            .iter()
            .map(|r| count(area(r)))
            .collect::<Result<Vec<_>>>()?;
        let sdispls = displacements(&scounts);
        let rdispls = displacements(&rcounts);
        let mut recvbuf = zeroed_buffer(recv.iter().map(area).sum());
        {
            let sp = Partition::new(&sendbuf[..], &scounts[..], &sdispls[..]);
            let mut rp = PartitionMut::new(&mut recvbuf[..], &rcounts[..], &rdispls[..]);
            comm.all_to_all_varcount_into(&sp, &mut rp);
        }
        let dst = match target {
            Some(t) => t,
            None => self,
        };
        for (r, &d) in recv.iter().zip(&rdispls) {
            if let Some(r) = r {
                dst.unpack(r, &recvbuf[d as usize..d as usize + r.area()]);
            }
        }
        let elem = std::mem::size_of::<T>() as f64;
        let sent = sendbuf.len() as f64 * elem;
        let mine = (sendbuf.len() + recvbuf.len()) as f64 * elem;
        let msgs = scounts.iter().filter(|&&c| c > 0).count() as f64;
        let secs = start.elapsed().as_secs_f64();
        Ok(MoveStats {
            bytes: sum_f64(comm, sent) as u64,
            messages: sum_f64(comm, msgs) as u64,
            max_rank_bytes: max_f64(comm, mine) as u64,
            seconds: max_f64(comm, secs),
        })
    }
}
