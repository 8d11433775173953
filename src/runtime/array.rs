//! Distributed 2D arrays over an arbitrary rectangle tiling ([`ArrayPlan`]).
//!
//! A [`DistArray2`] holds this rank's block as an `ndarray::Array2<T>` padded
//! with a ghost border of configurable width, plus the global extents and the
//! plan. Decompositions are arbitrary tilings, not Cartesian grids: the cells a
//! rank exchanges with another are always the intersection of two rectangles,
//!
//! * halo: `mine ∩ expand(theirs, g)` is sent, `expand(mine, g) ∩ theirs` is
//!   received — partial edges and corners (9-point stencils) included;
//! * remap: `old_mine ∩ new_theirs` is sent, `old_theirs ∩ new_mine` received,
//!   so only cells whose owner changes travel (the theoretical minimum).
//!
//! Every operation is collective and moves data with one all-to-all-v of `T`
//! (MPI datatype, no serialization).

use std::mem::size_of;
use std::time::Instant;

use mpi::datatype::{Equivalence, Partition, PartitionMut, UserDatatype};
use mpi::raw::AsRaw;
use mpi::topology::SimpleCommunicator;
use mpi::traits::*;
use mpi::Count;
use ndarray::{s, Array2, ArrayView2, ArrayViewMut2};

use super::clock::{polling, waiting};
use super::comm::{agree, check_identical, displacements, max_f64, sum_f64, zeroed_buffer};
use super::cost::{CostField, CostGrid};
use super::halo::{self, ExchangeStats};
use super::layout::{exchange_on, HaloTypes, Layout};
use super::object::{count, global_stats, next_call, MoveStats, OwnComm};
use super::watchdog::Checkpoints;
use crate::error::{Error, Result};
pub use crate::plan::array2d::cells_changing_owner;
use crate::plan::array2d::weighted::box_of;
use crate::plan::array2d::{ArrayPlan, Rect};
use crate::plan::array3d::{Box3, GridPlan3, Stencil};

/// Element types a [`DistArray2`] can hold: plain MPI-transferable values.
pub trait Element: Equivalence + Copy + Default + Send + Sync + 'static {}
impl<T: Equivalence + Copy + Default + Send + Sync + 'static> Element for T {}

/// This rank's block of a distributed array, with the plan: everything of a
/// [`DistArray2`] but its communicator.
#[derive(Debug, Clone)]
struct Tiled<T> {
    plan: ArrayPlan,
    rank: usize,
    ghost: usize,
    data: Array2<T>,
    /// The same exchange as derived datatypes, for an application's buffer
    /// of this block's layout ([`DistArray2::exchange_ghosts_on`]).
    on_buffer: Option<HaloTypes>,
}

/// Expands a rectangle by `g` cells on every side, clipped to `rows × cols`.
fn expand(r: &Rect, g: usize, rows: usize, cols: usize) -> Rect {
    if r.is_empty() {
        return *r;
    }
    let r0 = r.row.saturating_sub(g);
    let c0 = r.col.saturating_sub(g);
    Rect::new(
        r0,
        c0,
        (r.row_end() + g).min(rows) - r0,
        (r.col_end() + g).min(cols) - c0,
    )
}

impl<T: Element> Tiled<T> {
    fn check_plan<C: Communicator>(comm: &C, plan: &ArrayPlan) -> Result<()> {
        if plan.len() != comm.size() as usize {
            return Err(Error::shape_mismatch(format!(
                "plan has {} parts for {} ranks",
                plan.len(),
                comm.size()
            )));
        }
        Ok(plan.validate()?)
    }

    /// An array of default values laid out by `plan` (collective only in its checks).
    pub fn new<C: Communicator>(comm: &C, plan: ArrayPlan, ghost: usize) -> Result<Self> {
        agree(comm, 0, Self::check_plan(comm, &plan))?;
        check_identical(comm, 0, "plan", &plan)?;
        let rank = comm.rank() as usize;
        let me = plan.parts[rank];
        let data = Array2::default((me.rows + 2 * ghost, me.cols + 2 * ghost));
        Ok(Tiled {
            plan,
            rank,
            ghost,
            data,
            on_buffer: None,
        })
    }

    /// The ghost exchange of `rank`'s block of `p` as the grid layer's
    /// datatypes: the plan as a `1 × rows × cols` grid, the block padded by
    /// the ghost width `g`.
    fn halo_types(p: &ArrayPlan, rank: usize, g: usize) -> Result<HaloTypes> {
        let boxes = p
            .parts
            .iter()
            .map(|r| Box3::from_axes([0, r.row, r.col], [1, r.rows, r.cols]))
            .collect();
        let plan = GridPlan3::new(p.algorithm.clone(), (1, p.rows, p.cols), boxes)?;
        let layout = Layout::new(plan, rank, Stencil::twenty_seven(g))?;
        HaloTypes::new(&layout, size_of::<T>(), [0, g, g])
    }

    /// The shape of this rank's padded block.
    fn padded_shape(&self) -> (usize, usize) {
        let (r, g) = (self.rect(), self.ghost);
        (r.rows + 2 * g, r.cols + 2 * g)
    }

    /// This rank's rectangle in global coordinates.
    fn rect(&self) -> Rect {
        self.plan.parts[self.rank]
    }
    /// This rank's cells (without ghosts).
    fn local(&self) -> ArrayView2<'_, T> {
        let (g, r) = (self.ghost, self.rect());
        self.data.slice(s![g..g + r.rows, g..g + r.cols])
    }
    /// This rank's cells (without ghosts), mutable.
    fn local_mut(&mut self) -> ArrayViewMut2<'_, T> {
        let (g, r) = (self.ghost, self.rect());
        self.data.slice_mut(s![g..g + r.rows, g..g + r.cols])
    }

    /// Copies the cells of `region` (global coordinates, inside this rank's
    /// padded block) into `out`, row-major, one `memcpy` per row.
    fn pack(&self, region: &Rect, out: &mut Vec<T>) {
        let (g, me) = (self.ghost, self.rect());
        copy_rows(
            &self.data,
            region.row + g - me.row,
            region.col + g - me.col,
            region,
            out,
        );
    }

    /// Writes `src` (row-major) into the cells of `region`, one `memcpy` per row.
    fn unpack(&mut self, region: &Rect, src: &[T]) {
        let (g, me) = (self.ghost, self.rect());
        let (r0, c0) = (region.row + g - me.row, region.col + g - me.col);
        if region.is_empty() {
            return;
        }
        let n = self.data.ncols();
        if let Some(data) = self.data.as_slice_mut() {
            for (i, chunk) in src.chunks_exact(region.cols).take(region.rows).enumerate() {
                let at = (r0 + i) * n + c0;
                data[at..at + region.cols].copy_from_slice(chunk);
            }
        } else {
            let mut v = self
                .data
                .slice_mut(s![r0..r0 + region.rows, c0..c0 + region.cols]);
            v.iter_mut().zip(src).for_each(|(d, x)| *d = *x);
        }
    }

    /// A rectangle in global coordinates as a block of the padded array.
    fn local_block(&self, r: &Option<Rect>) -> Block {
        let (g, me) = (self.ghost, self.rect());
        r.filter(|r| !r.is_empty())
            .map(|r| (r.row + g - me.row, r.col + g - me.col, r.rows, r.cols))
    }

    /// [`DistArray2::scatter`] on a communicator the caller already owns.
    fn scatter_from_root<C: Communicator>(
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
    pub fn gather_to_root<C: Communicator>(
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

    /// The rectangles this rank sends to and receives from every rank in a
    /// halo exchange of width `ghost`: `(send[r], recv[r])`, empty for itself.
    pub fn halo_regions(&self) -> (Vec<Option<Rect>>, Vec<Option<Rect>>) {
        let (m, n, g) = (self.plan.rows, self.plan.cols, self.ghost);
        let me = self.rect();
        let mine_x = expand(&me, g, m, n);
        let mut send = Vec::with_capacity(self.plan.len());
        let mut recv = Vec::with_capacity(self.plan.len());
        for (q, other) in self.plan.parts.iter().enumerate() {
            if q == self.rank || g == 0 || me.is_empty() || other.is_empty() {
                send.push(None);
                recv.push(None);
                continue;
            }
            send.push(me.intersect(&expand(other, g, m, n)));
            recv.push(mine_x.intersect(other));
        }
        (send, recv)
    }

    /// Moves the data to `new_plan`: only the cells whose owner changes travel
    /// (one all-to-all-v). Transactional: the old block stays in place until
    /// the new one is complete; on error (on any rank) every rank returns the
    /// same `Err` and keeps its old data. Ghost cells of the new block are
    /// default-initialised: call [`DistArray2::halo_exchange`] afterwards.
    pub fn remap<C: Communicator>(&mut self, comm: &C, new_plan: &ArrayPlan) -> Result<MoveStats> {
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

/// A 2D array distributed over the ranks of a communicator by an [`ArrayPlan`]:
/// part `r` of the plan lives on rank `r`.
///
/// The array keeps its own duplicate of the communicator it was created on,
/// so its messages never mix with the application's and no call can be made
/// on a wrong communicator. Every data movement is a communication section
/// of [`super::clock`]: its time (waiting for neighbours included) is never
/// counted as this rank's compute time.
pub struct DistArray2<T> {
    comm: OwnComm,
    tiles: Tiled<T>,
    /// Checked entry of every collective verb ([`super::watchdog::checkpoint`]).
    cp: Checkpoints,
    /// Ghost exchanges made so far (their messages' tags, and the count the
    /// checked verbs compare).
    exchanges: u64,
    /// Every exchange a checked entry too ([`halo::ENV_CHECK`]`=full`).
    full_checks: bool,
    /// Fingerprint of the exchange call ([`DistArray2::exchange_call`]).
    exchange_fp: u64,
    /// The cost per cell of this rank's block, if the application set one.
    cost: Option<CostField>,
}

impl<T> std::fmt::Debug for DistArray2<T>
where
    T: std::fmt::Debug,
{
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DistArray2")
            .field("rank", &self.tiles.rank)
            .field("ghost", &self.tiles.ghost)
            .field("plan", &self.tiles.plan)
            .finish_non_exhaustive()
    }
}

impl<T: Element> DistArray2<T> {
    /// An array of default values laid out by `plan`, on a duplicate of
    /// `comm` (collective: `MPI_Comm_dup` and the plan checks). The plan
    /// must have one part per rank, tile the array and be the same on every
    /// rank; otherwise every rank returns the same error.
    pub fn new<C: Communicator>(comm: &C, plan: ArrayPlan, ghost: usize) -> Result<Self> {
        let _w = waiting();
        let (comm, cp) = Checkpoints::duplicate_checked(
            comm,
            &format!(
                "DistArray2::new({}x{}, {} parts, ghost {ghost}, {}-byte elements)",
                plan.rows,
                plan.cols,
                plan.parts.len(),
                size_of::<T>()
            ),
        )?;
        let tiles = Tiled::new(&comm, plan, ghost)?;
        Ok(DistArray2::wrap(comm, tiles, cp))
    }

    /// Scatters a global array held by `root` into blocks laid out by `plan`,
    /// on a duplicate of `comm`. Errors (plan not tiling, wrong part count, a
    /// global array of the wrong shape or missing at the root) are returned
    /// on every rank. `global` is read on the root only.
    pub fn scatter<C: Communicator>(
        comm: &C,
        root: i32,
        plan: ArrayPlan,
        ghost: usize,
        global: Option<&Array2<T>>,
    ) -> Result<(Self, MoveStats)> {
        let _w = waiting();
        let (comm, cp) = Checkpoints::duplicate_checked(
            comm,
            &format!(
                "DistArray2::scatter({}x{} in {} parts from root {root}, ghost {ghost}, {}-byte elements)",
                plan.rows,
                plan.cols,
                plan.parts.len(),
                size_of::<T>()
            ),
        )?;
        let (tiles, stats) = Tiled::scatter_from_root(&comm, root, plan, ghost, global)?;
        Ok((DistArray2::wrap(comm, tiles, cp), stats))
    }

    /// Gathers the array at `root`: `Some(global)` there, `None` elsewhere.
    pub fn gather(&self, root: i32) -> Result<Option<Array2<T>>> {
        let _w = waiting();
        self.check(&format!("DistArray2::gather(to root {root})"))?;
        self.tiles.gather_to_root(&*self.comm, root)
    }

    /// Fills the ghost border with the neighbours' cells: every rank must
    /// call it, but it synchronises only with the neighbours (nonblocking
    /// point-to-point). Returns this rank's statistics. Ghost cells outside
    /// the global array are left untouched (boundary conditions are the
    /// application's).
    ///
    /// No message goes to the root: a neighbour at another exchange (it
    /// skipped one, or exchanges another array) is seen from the messages'
    /// tags, and a wait that outlasts the timeout joins the checkpoint under
    /// way, so that every rank involved returns the same error
    /// ([`super::halo`]). `NUCE_CHECK=full` adds a checked entry per call.
    pub fn exchange_ghosts(&mut self) -> Result<ExchangeStats> {
        let (rows, cols) = self.tiles.padded_shape();
        let data = &self.tiles.data;
        if !data.is_standard_layout() || data.dim() != (rows, cols) {
            let why =
                Error::invalid_input(format!(
                "this rank's padded block is a {}x{} array{}, not the array's own {rows}x{cols} \
                 row-major block (was it replaced through padded_mut?)",
                data.nrows(),
                data.ncols(),
                if data.is_standard_layout() { "" } else { " in another memory order" }
            ));
            return Err(self.refuse_exchange(why));
        }
        // SAFETY: the array's own block, of its layout (checked above).
        unsafe { self.exchange_on(None) }
    }

    /// [`DistArray2::exchange_ghosts`] on a buffer of the application laid
    /// out as this array's padded block (row-major, `(rows + 2g) × (cols +
    /// 2g)` elements for this rank's rectangle and ghost width `g`) instead
    /// of the array's own: one derived-datatype message to and from each
    /// neighbour, no copy (the C API's `nuce_array_exchange_ghosts`). Same
    /// call, sequence and errors as [`DistArray2::exchange_ghosts`].
    ///
    /// # Safety
    /// `padded` points to that many elements, writable, not otherwise
    /// accessed until this returns.
    #[doc(hidden)]
    pub unsafe fn exchange_ghosts_on(&mut self, padded: *mut T) -> Result<ExchangeStats> {
        // SAFETY: the caller's contract.
        unsafe { self.exchange_on(Some(padded)) }
    }

    /// The ghost exchange on `padded`, or on the array's own block: the
    /// grid layer's subarray datatypes, one message to and from each
    /// neighbour, in place.
    ///
    /// # Safety
    /// `padded` (or the own block when `None`) is a standard-layout block
    /// of this rank's padded shape, not otherwise accessed until this returns.
    unsafe fn exchange_on(&mut self, padded: Option<*mut T>) -> Result<ExchangeStats> {
        let w = polling();
        let call = self.next_exchange()?;
        let (shape, ghost) = (self.global_shape(), self.tiles.ghost);
        let what = move || exchange_call::<T>(shape, ghost);
        let Tiled {
            plan,
            rank,
            data,
            on_buffer,
            ..
        } = &mut self.tiles;
        let base = padded.unwrap_or_else(|| data.as_mut_ptr());
        let make = || Tiled::<T>::halo_types(plan, *rank, ghost);
        // SAFETY: the datatypes address a padded block of this layout
        // (caller's contract).
        unsafe {
            exchange_on(
                &*self.comm,
                &self.cp,
                (call, w),
                &what,
                base.cast(),
                (on_buffer, make),
            )
        }
    }

    /// Takes part in the next ghost exchange only to say that this rank
    /// cannot (`why`, e.g. the application's buffer is wrong): the error
    /// that every rank of the exchange returns, within the timeout, instead
    /// of this rank returning alone while its neighbours wait for it.
    pub fn refuse_exchange(&mut self, why: Error) -> Error {
        let _w = waiting();
        match self.next_exchange() {
            Ok(call) => halo::refuse(&*self.comm, &self.cp, call, &|| self.exchange_call(), why),
            Err(e) => e,
        }
    }

    /// The next exchange's identity and description (a checked entry too
    /// with `NUCE_CHECK=full`).
    fn next_exchange(&mut self) -> Result<halo::Call> {
        let full = self.full_checks.then(|| self.exchange_call());
        next_call(
            &*self.comm,
            &self.cp,
            full.as_deref(),
            &mut self.exchanges,
            self.exchange_fp,
        )
    }

    /// The exchange call with its must-match arguments (shape, ghost width,
    /// element size), as errors name it.
    fn exchange_call(&self) -> String {
        exchange_call::<T>(self.global_shape(), self.tiles.ghost)
    }

    /// Wraps a communicator, its checkpoints and a block (no exchange yet).
    fn wrap(comm: SimpleCommunicator, tiles: Tiled<T>, cp: Checkpoints) -> Self {
        let mut a = DistArray2 {
            comm: OwnComm::new(comm),
            tiles,
            cp,
            exchanges: 0,
            full_checks: halo::full_checks_from_env(),
            exchange_fp: 0,
            cost: None,
        };
        a.exchange_fp = halo::fingerprint(&a.exchange_call());
        a
    }

    /// Sets the cost per cell of this rank's block (`rows × cols` values of
    /// [`DistArray2::rect`] in C order, any unit, finite and `≥ 0`): the
    /// balancer then times, plans and decides by `Σ cost` instead of cell
    /// counts (see [`super::cost`]). Local; checked at the next balance
    /// point, where a bad cost on any rank is the same error on every rank.
    /// Set it again after a remap changes the block.
    pub fn set_cost(&mut self, costs: impl Into<Vec<f64>>) {
        self.cost = Some(CostField::new(box_of(&self.rect()), costs.into()));
    }

    /// [`DistArray2::set_cost`] from `f(row, col)` at each cell's global
    /// indices (local).
    pub fn set_cost_with(&mut self, f: impl Fn(usize, usize) -> f64) {
        self.cost = Some(CostField::from_fn(box_of(&self.rect()), |i, j, _| f(i, j)));
    }

    /// Drops the cost field: the balancer counts cells again (local).
    pub fn clear_cost(&mut self) {
        self.cost = None;
    }

    /// The cost field set by [`DistArray2::set_cost`], if any.
    pub fn cost(&self) -> Option<&CostField> {
        self.cost.as_ref()
    }

    /// The grid and cost field as the balancer sees them (`None` without
    /// a cost field).
    pub(crate) fn cost_grid(&self) -> Option<CostGrid<'_>> {
        self.cost.as_ref().map(|field| CostGrid {
            field,
            shape: (self.tiles.plan.rows, self.tiles.plan.cols, 1),
            boxes: self.tiles.plan.parts.iter().map(box_of).collect(),
            rank: self.tiles.rank,
        })
    }

    /// Moves the data to `new_plan`: only the cells whose owner changes travel.
    /// Transactional: on error (on any rank) every rank returns the same
    /// `Err` and keeps its old data. Ghost cells of the new block are
    /// default-initialised: call [`DistArray2::exchange_ghosts`] afterwards.
    pub fn remap(&mut self, new_plan: &ArrayPlan) -> Result<MoveStats> {
        let _w = waiting();
        self.check(&format!(
            "DistArray2::remap(to {}x{} in {} parts)",
            new_plan.rows,
            new_plan.cols,
            new_plan.parts.len()
        ))?;
        self.tiles.remap(&*self.comm, new_plan)
    }

    /// The checked entry of a collective call `op` named in the caller's
    /// words (e.g. a C function with its must-match arguments), where this
    /// rank may refuse (`refused`: its own input is wrong, e.g. a buffer of
    /// the wrong length): every rank returns the same result, within the
    /// timeout ([`super::watchdog::refusing_checkpoint`]).
    #[doc(hidden)]
    pub fn entry(&self, op: &str, refused: Option<&Error>) -> Result<()> {
        let _w = waiting();
        self.cp.check_refusing(&*self.comm, op, refused)
    }

    /// The checked entry of a verb: `op` with the array's shape, ghost
    /// width and element size, which must match on every rank.
    fn check(&self, op: &str) -> Result<()> {
        let (rows, cols) = self.global_shape();
        self.cp.check(
            &*self.comm,
            &format!(
                "{op} on a {rows}x{cols} array, ghost {}, {}-byte elements, after {} ghost exchanges",
                self.tiles.ghost,
                size_of::<T>(),
                self.exchanges
            ),
        )
    }

    /// Sets the timeout of the array's collectives (local; every rank must
    /// do the same). By default `NUCE_TIMEOUT_S` ([`super::watchdog`]);
    /// arrays made by a [`Balancer`](super::balancer::Balancer) take its timeout.
    pub fn set_timeout(&mut self, timeout: Option<std::time::Duration>) {
        self.cp.set_timeout(timeout);
    }

    /// Ghost exchanges made so far on this array (every rank must make the
    /// same number between two balance points; checked there).
    pub fn exchanges(&self) -> u64 {
        self.exchanges
    }

    /// The array's checked channel (a balancer adopts the arrays it makes).
    pub(crate) fn checks_mut(&mut self) -> &mut Checkpoints {
        &mut self.cp
    }

    /// This array on `comm` laid out by `plan`, in which this rank has the
    /// same rectangle as now: the block moves over without a copy
    /// (collective on `comm`; a departure's successor on the ranks that
    /// stay, as [`super::array3::DistArray3`]'s). `self` is left with an
    /// empty block.
    pub(crate) fn successor(&mut self, comm: &SimpleCommunicator, plan: ArrayPlan) -> Result<Self> {
        let mut n = DistArray2::new(comm, plan, self.tiles.ghost)?;
        let same = if n.rect() == self.rect() {
            Ok(())
        } else {
            Err(Error::invalid_input(
                "DistArray2: the successor's rectangle differs",
            ))
        };
        agree(&*n.comm, 0, same)?;
        std::mem::swap(&mut n.tiles.data, &mut self.tiles.data);
        Ok(n)
    }

    /// The array's communicator (a duplicate of the one it was created on).
    pub fn comm(&self) -> &SimpleCommunicator {
        &self.comm
    }
    /// The plan the array is laid out by.
    pub fn plan(&self) -> &ArrayPlan {
        &self.tiles.plan
    }
    /// This rank's rectangle in global coordinates.
    pub fn rect(&self) -> Rect {
        self.tiles.rect()
    }
    /// Ghost width.
    pub fn ghost(&self) -> usize {
        self.tiles.ghost
    }
    /// Global shape `(rows, cols)`.
    pub fn global_shape(&self) -> (usize, usize) {
        (self.tiles.plan.rows, self.tiles.plan.cols)
    }
    /// Number of cells of the whole array.
    pub fn global_len(&self) -> usize {
        self.tiles.plan.rows * self.tiles.plan.cols
    }
    /// This rank's cells (without ghosts).
    pub fn local(&self) -> ArrayView2<'_, T> {
        self.tiles.local()
    }
    /// This rank's cells (without ghosts), mutable.
    pub fn local_mut(&mut self) -> ArrayViewMut2<'_, T> {
        self.tiles.local_mut()
    }
    /// This rank's block with its ghost border: local cell `(i, j)` is at `(i + g, j + g)`.
    pub fn padded(&self) -> &Array2<T> {
        &self.tiles.data
    }
    /// Mutable padded block. Write its cells, but keep its shape and
    /// (row-major) memory order: the ghost exchange works on it in place
    /// and refuses a block replaced by one of another shape or order.
    pub fn padded_mut(&mut self) -> &mut Array2<T> {
        &mut self.tiles.data
    }
    /// The rectangles this rank sends to and receives from every rank in a
    /// ghost exchange: `(send[r], recv[r])`, empty for itself.
    pub fn halo_regions(&self) -> (Vec<Option<Rect>>, Vec<Option<Rect>>) {
        self.tiles.halo_regions()
    }
}

/// A 2D ghost exchange with its must-match arguments, as errors name it.
fn exchange_call<T>((rows, cols): (usize, usize), ghost: usize) -> String {
    format!(
        "DistArray2::exchange_ghosts on a {rows}x{cols} array, ghost {ghost}, {}-byte elements",
        size_of::<T>()
    )
}

/// A rectangle of a block in that block's own coordinates: `(row, col, rows, cols)`.
type Block = Option<(usize, usize, usize, usize)>;

/// Every part of `plan` as a block of the global array, except `skip`'s
/// (the root's own part, which it copies locally).
fn other_parts(plan: &ArrayPlan, skip: i32) -> Vec<Block> {
    plan.parts
        .iter()
        .enumerate()
        .map(|(q, p)| (q != skip as usize).then_some((p.row, p.col, p.rows, p.cols)))
        .collect()
}

/// True when `a` can be addressed in place by [`alltoallw_blocks`]: standard
/// layout, every byte offset within MPI's `int`, and `T`'s MPI extent equal
/// to its size. Otherwise the packing path serves.
fn direct_capable<T: Element>(a: &Array2<T>) -> bool {
    a.is_standard_layout()
        && Count::try_from(a.len().saturating_mul(std::mem::size_of::<T>())).is_ok()
        && extent_is_size::<T>()
}

/// True on every rank when `mine` is true on every rank (one all-reduce).
pub(crate) fn all_true<C: Communicator>(comm: &C, mine: bool) -> bool {
    let mut refusing = 0i32;
    comm.all_reduce_into(
        &i32::from(!mine),
        &mut refusing,
        mpi::collective::SystemOperation::sum(),
    );
    refusing == 0
}

/// Data movement without packing: one `MPI_Alltoallw` whose per-peer
/// datatypes are strided vectors addressing the rectangles in place —
/// `sends[q]` of `src` goes to rank `q`, what rank `q` sends lands in
/// `recvs[q]` of `dst`. Both arrays must be [`direct_capable`] and the blocks
/// inside them (checked here; a block outside is a bug, reported as an error
/// before any communication would be unsafe).
fn alltoallw_blocks<C: Communicator, T: Element>(
    comm: &C,
    src: &Array2<T>,
    sends: &[Block],
    dst: &mut Array2<T>,
    recvs: &[Block],
) -> Result<()> {
    let elem = std::mem::size_of::<T>();
    let base = T::equivalent_datatype();
    let describe = |a: &Array2<T>, b: &Block| -> Result<(Count, Count, Option<UserDatatype>)> {
        match *b {
            Some((r0, c0, rows, cols)) if rows > 0 && cols > 0 => {
                if r0 + rows > a.nrows() || c0 + cols > a.ncols() || !direct_capable(a) {
                    return Err(Error::invalid_plan(format!(
                        "block {b:?} outside a {}x{} array",
                        a.nrows(),
                        a.ncols()
                    )));
                }
                let offset = (r0 * a.ncols() + c0) * elem;
                Ok((
                    1,
                    count(offset)?,
                    Some(strided_type::<T>(rows, cols, a.ncols())?),
                ))
            }
            _ => Ok((0, 0, None)),
        }
    };
    let size = comm.size() as usize;
    let local = (|| {
        if sends.len() != size || recvs.len() != size {
            return Err(Error::shape_mismatch(format!(
                "block lists for {size} ranks expected"
            )));
        }
        let s = sends
            .iter()
            .map(|b| describe(src, b))
            .collect::<Result<Vec<_>>>()?;
        let r = recvs
            .iter()
            .map(|b| describe(dst, b))
            .collect::<Result<Vec<_>>>()?;
        Ok((s, r))
    })();
    // Nobody enters the all-to-all unless everybody can.
    let (s, r) = agree(comm, 0, local)?;
    type Raw = (Vec<Count>, Vec<Count>, Vec<mpi::ffi::MPI_Datatype>);
    let raw = |v: &[(Count, Count, Option<UserDatatype>)]| -> Raw {
        (
            v.iter().map(|x| x.0).collect(),
            v.iter().map(|x| x.1).collect(),
            v.iter()
                .map(|x| x.2.as_ref().map_or(base.as_raw(), |t| t.as_raw()))
                .collect(),
        )
    };
    let (sc, sd, st) = raw(&s);
    let (rc, rd, rt) = raw(&r);
    // Empty arrays share one dangling address, which MPI would take for
    // `sendbuf == recvbuf`: give them distinct real addresses (nothing is
    // read or written through them, all their counts are 0).
    let (dummy_s, mut dummy_r) = ([0u64; 1], [0u64; 1]);
    let sptr = if src.is_empty() {
        dummy_s.as_ptr() as *const std::ffi::c_void
    } else {
        src.as_ptr() as *const std::ffi::c_void
    };
    let rptr = if dst.is_empty() {
        dummy_r.as_mut_ptr() as *mut std::ffi::c_void
    } else {
        dst.as_mut_ptr() as *mut std::ffi::c_void
    };
    // SAFETY: every (count, byte offset, datatype) triple addresses cells
    // inside its standard-layout array (checked in `describe`); the arrays
    // outlive the blocking call; the datatypes are committed and freed after it.
    let code = unsafe {
        mpi::ffi::MPI_Alltoallw(
            sptr,
            sc.as_ptr(),
            sd.as_ptr(),
            st.as_ptr(),
            rptr,
            rc.as_ptr(),
            rd.as_ptr(),
            rt.as_ptr(),
            comm.as_raw(),
        )
    };
    // With MPI's default error handler a failure aborts before returning;
    // under MPI_ERRORS_RETURN it is reported here, on every rank that saw it.
    if code != mpi::ffi::MPI_SUCCESS as i32 {
        return Err(Error::invalid_input(format!(
            "MPI_Alltoallw failed with MPI error code {code}"
        )));
    }
    Ok(())
}

/// A committed `MPI_Type_vector` of `rows` blocks of `cols` elements,
/// `stride` elements apart: one rectangle of a row-major block (rsmpi's safe
/// constructor; freed on drop).
fn strided_type<T: Element>(rows: usize, cols: usize, stride: usize) -> Result<UserDatatype> {
    Ok(UserDatatype::vector(
        count(rows)?,
        count(cols)?,
        count(stride)?,
        &T::equivalent_datatype(),
    ))
}

/// True when `T`'s MPI datatype has lower bound 0 and extent `size_of::<T>()`,
/// so that byte offsets of Rust elements address MPI elements (checked once
/// per call before the in-place path uses byte displacements).
fn extent_is_size<T: Element>() -> bool {
    let (mut lb, mut extent): (mpi::ffi::MPI_Aint, mpi::ffi::MPI_Aint) = (0, 0);
    // SAFETY: a query on a valid predefined or committed datatype, writing two integers.
    let rc = unsafe {
        mpi::ffi::MPI_Type_get_extent(T::equivalent_datatype().as_raw(), &mut lb, &mut extent)
    };
    rc == mpi::ffi::MPI_SUCCESS as i32
        && lb == 0
        && usize::try_from(extent).is_ok_and(|e| e == std::mem::size_of::<T>())
}

/// Appends the `region.rows × region.cols` cells of `a` starting at local
/// `(r0, c0)` to `out`, row by row (contiguous copies when `a` is standard layout).
fn copy_rows<T: Copy>(a: &Array2<T>, r0: usize, c0: usize, region: &Rect, out: &mut Vec<T>) {
    if region.is_empty() {
        return;
    }
    match a.as_slice() {
        Some(data) => {
            let n = a.ncols();
            for i in 0..region.rows {
                let at = (r0 + i) * n + c0;
                out.extend_from_slice(&data[at..at + region.cols]);
            }
        }
        None => out.extend(
            a.slice(s![r0..r0 + region.rows, c0..c0 + region.cols])
                .iter()
                .copied(),
        ),
    }
}
