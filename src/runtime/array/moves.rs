//! The collective data movements of a [`Tiled`] block: scatter from the
//! root, gather to the root, and the remap to a new plan, in place through
//! `MPI_Alltoallw` (module `alltoallw`) where every rank can, by packing
//! into one all-to-all-v otherwise.

use std::time::Instant;

use mpi::datatype::{Partition, PartitionMut};
use mpi::traits::*;
use mpi::Count;
use ndarray::{s, Array2};

use super::alltoallw::{all_true, alltoallw_blocks, direct_capable, other_parts, Block};
use super::tile::{copy_rows, Tiled};
use super::Element;
use crate::error::{Error, Result};
use crate::plan::array2d::{ArrayPlan, Rect};
use crate::runtime::comm::{
    agree, check_identical, displacements, max_f64, sum_f64, zeroed_buffer,
};
use crate::runtime::object::{count, global_stats, MoveStats};

impl<T: Element> Tiled<T> {
    /// [`DistArray2::scatter`](super::DistArray2::scatter) on a communicator
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
            // The root's own part is copied locally (Open MPI 4.1 mishandles
            // self-messages of differing strided types in MPI_Alltoallw).
            let at_root = comm.rank() == root;
            let mut sends: Vec<Block> = vec![None; arr.plan.len()];
            let mut recvs: Vec<Block> = vec![None; arr.plan.len()];
            if at_root {
                sends = other_parts(&arr.plan, root);
                if !me.is_empty() {
                    let own = src.slice(s![me.row..me.row_end(), me.col..me.col_end()]);
                    arr.local_mut().assign(&own);
                }
            } else {
                recvs[root as usize] = arr.local_block(&Some(me));
            }
            alltoallw_blocks(comm, src, &sends, &mut arr.data, &recvs)?;
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
            let mut sends: Vec<Block> = vec![None; self.plan.len()];
            let mut recvs: Vec<Block> = vec![None; self.plan.len()];
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
                sends[root as usize] = self.local_block(&Some(self.rect()));
            }
            alltoallw_blocks(comm, &self.data, &sends, &mut global, &recvs)?;
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

    /// Moves the data to `new_plan`: only the cells whose owner changes travel
    /// (one all-to-all-v). Transactional: the old block stays in place until
    /// the new one is complete; on error (on any rank) every rank returns the
    /// same `Err` and keeps its old data. Ghost cells of the new block are
    /// default-initialised: call
    /// [`DistArray2::exchange_ghosts`](super::DistArray2::exchange_ghosts) afterwards.
    pub(super) fn remap<C: Communicator>(
        &mut self,
        comm: &C,
        new_plan: &ArrayPlan,
    ) -> Result<MoveStats> {
        let shape = if (new_plan.rows, new_plan.cols) != (self.plan.rows, self.plan.cols) {
            Err(Error::shape_mismatch(format!(
                "new plan is for {}x{}, the array is {}x{}",
                new_plan.rows, new_plan.cols, self.plan.rows, self.plan.cols
            )))
        } else {
            Self::check_plan(comm, new_plan)
        };
        agree(comm, 0, shape)?;
        // Every rank must move to the same plan, or cells are lost.
        check_identical(comm, 0, "new plan", new_plan)?;
        // Start together, so the time (and the bandwidth derived from it)
        // measures the movement, not the ranks' arrival skew.
        comm.barrier();
        let old = self.rect();
        let new = new_plan.parts[self.rank];
        let send: Vec<Option<Rect>> = new_plan
            .parts
            .iter()
            .enumerate()
            .map(|(q, np)| {
                if q == self.rank {
                    None
                } else {
                    old.intersect(np)
                }
            })
            .collect();
        let recv: Vec<Option<Rect>> = self
            .plan
            .parts
            .iter()
            .enumerate()
            .map(|(q, op)| {
                if q == self.rank {
                    None
                } else {
                    op.intersect(&new)
                }
            })
            .collect();
        let mut next = Tiled {
            plan: new_plan.clone(),
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
        // strided datatypes; the packing path serves the rare cases it cannot.
        let direct = all_true(
            comm,
            direct_capable(&self.data) && direct_capable(&next.data),
        );
        let stats = if direct {
            let start = Instant::now();
            let sends: Vec<Block> = send.iter().map(|r| self.local_block(r)).collect();
            let recvs: Vec<Block> = recv.iter().map(|r| next.local_block(r)).collect();
            alltoallw_blocks(comm, &self.data, &sends, &mut next.data, &recvs)?;
            let cells =
                |v: &[Option<Rect>]| v.iter().map(|r| r.map_or(0, |r| r.area())).sum::<usize>();
            let elem = std::mem::size_of::<T>();
            let msgs = send.iter().filter(|r| r.is_some()).count();
            global_stats(
                comm,
                cells(&send) * elem,
                (cells(&send) + cells(&recv)) * elem,
                msgs,
                start,
            )
        } else {
            self.exchange(comm, &send, &recv, Some(&mut next))?
        };
        *self = next;
        Ok(stats)
    }

    /// Moves rectangles between ranks: packs `send[r]` from `self` for every
    /// rank `r`, and unpacks what rank `r` sent into `recv[r]` of `target`
    /// (default `self`): one all-to-all-v, global statistics (collective).
    fn exchange<C: Communicator>(
        &mut self,
        comm: &C,
        send: &[Option<Rect>],
        recv: &[Option<Rect>],
        target: Option<&mut Tiled<T>>,
    ) -> Result<MoveStats> {
        let start = Instant::now();
        let area = |r: &Option<Rect>| r.map_or(0, |r| r.area());
        let mut sendbuf = zeroed_buffer(0);
        sendbuf.reserve(send.iter().map(area).sum());
        let mut scounts = Vec::with_capacity(send.len());
        for r in send {
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
