//! The collective data movements of a [`Tiled`] block — scatter from the
//! root, gather to the root, remap to a new plan — on the grid layer
//! ([`crate::runtime::layout`]), as a [`Grid`](crate::runtime::layout::Grid)'s
//! and a [`DistArray3`](crate::runtime::array3::DistArray3)'s: the plan is a
//! one-plane grid, the block a field padded by the ghost width along its two
//! axes, and the cells travel straight between the blocks (one
//! derived-datatype message per pair of ranks that exchange cells, no
//! packing, no O(p) arrays).

use mpi::traits::Communicator;
use ndarray::{Array2, CowArray, Ix2};

use super::tile::Tiled;
use super::Element;
use crate::error::{Error, Result};
use crate::plan::array2d::ArrayPlan;
use crate::runtime::comm::{agree, check_identical};
use crate::runtime::layout::{move_whole, transfer, whole_layouts, Layout, RawField, Way};
use crate::runtime::object::{global_stats, MoveStats};

/// A block of the grid layer: `data` (C order) of cells of `T`, padded by
/// `pad`.
fn field<T>(data: *const T, pad: [usize; 3]) -> RawField {
    RawField {
        data: data.cast_mut().cast(),
        elem_size: std::mem::size_of::<T>(),
        pad,
    }
}

impl<T: Element> Tiled<T> {
    /// The padding of this block along the grid layer's three axes.
    fn pad(&self) -> [usize; 3] {
        [0, self.ghost, self.ghost]
    }

    /// This rank's layout of the plan (no halo: the layout of the moves),
    /// checked to hold a block of `T` padded by the ghost width.
    fn move_layout(&self) -> Result<Layout> {
        let layout = self.layout(0)?;
        layout.check_block(std::mem::size_of::<T>(), self.pad())?;
        Ok(layout)
    }

    /// The layouts of a move between this block and the whole array at
    /// `root` ([`whole_layouts`]).
    fn whole_layouts(&self, root: i32) -> Result<(Layout, Layout)> {
        let cells = (std::mem::size_of::<T>(), self.pad());
        whole_layouts(&Self::grid_plan(&self.plan), self.rank, root, cells)
    }

    /// The block in C order (a copy only when the application replaced it
    /// by one in another memory order through `padded_mut`), or the error
    /// when it no longer has this rank's padded shape.
    pub(super) fn c_order_block(&self) -> Result<CowArray<'_, T, Ix2>> {
        let (rows, cols) = self.padded_shape();
        if self.data.dim() != (rows, cols) {
            return Err(Error::invalid_input(format!(
                "this rank's padded block is a {}x{} array, not the array's own {rows}x{cols} \
                 block (was it replaced through padded_mut?)",
                self.data.nrows(),
                self.data.ncols(),
            )));
        }
        Ok(self.data.as_standard_layout())
    }

    /// [`DistArray2::scatter_with_plan`](super::DistArray2::scatter_with_plan) on a communicator
    /// the caller already owns.
    pub(super) fn scatter_from_root<C: Communicator>(
        comm: &C,
        root: i32,
        plan: ArrayPlan,
        ghost: usize,
        global: Option<&Array2<T>>,
    ) -> Result<(Self, MoveStats)> {
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
        let src = global
            .filter(|_| comm.rank() == root)
            .map(|a| a.as_standard_layout());
        let (layout, at) = agree(comm, root, arr.whole_layouts(root))?;
        let whole = field(
            src.as_ref().map_or(std::ptr::null(), |a| a.as_ptr()),
            [0; 3],
        );
        let block = field(arr.data.as_mut_ptr(), arr.pad());
        // SAFETY: the block is this rank's padded block of `layout` (made
        // by `new`, C order), written; the root's array is the whole grid
        // in C order, only read; both checked against their layouts.
        let (sent, mine, msgs, start) =
            unsafe { move_whole(comm, Way::Scatter, (&layout, &at), block, whole) }?;
        Ok((arr, global_stats(comm, sent, mine, msgs, start)))
    }

    /// Gathers the distributed array at `root`: `Some(global)` there, `None` elsewhere.
    pub(super) fn gather_to_root<C: Communicator>(
        &self,
        comm: &C,
        root: i32,
    ) -> Result<Option<Array2<T>>> {
        let at_root = comm.rank() == root;
        let (rows, cols) = (self.plan.rows, self.plan.cols);
        let mut global = Array2::default(if at_root { (rows, cols) } else { (0, 0) });
        let block = self.c_order_block();
        let (ptr, local) = match &block {
            Ok(b) => (b.as_ptr(), Ok(())),
            Err(e) => (std::ptr::null(), Err(e.clone())),
        };
        // SAFETY: `ptr` is this rank's padded block in C order (or the
        // error refused first); `global` at the root the whole array in C
        // order, borrowed here alone.
        unsafe { self.gather_into(comm, root, (ptr, local), global.as_mut_ptr()) }?;
        Ok(at_root.then_some(global))
    }

    /// The gather of the block at `block.0` (this rank's padded block in C
    /// order, read; `block.1` this rank's refusal when it has none) into
    /// `global` at the root (the whole array in C order, written): the
    /// checks of every rank agreed on, then the move.
    ///
    /// # Safety
    /// Unless `block.1` is an error, `block.0` points to this rank's padded
    /// block, readable; at the root `global` points to `rows × cols`
    /// writable elements; neither is otherwise written until this returns.
    pub(super) unsafe fn gather_into<C: Communicator>(
        &self,
        comm: &C,
        root: i32,
        block: (*const T, Result<()>),
        global: *mut T,
    ) -> Result<()> {
        let local = Self::check_plan(comm, &self.plan).and_then(|()| {
            let layouts = self.whole_layouts(root)?;
            block.1?;
            Ok(layouts)
        });
        let (layout, at) = agree(comm, root, local)?;
        let whole = field(global, [0; 3]);
        // SAFETY: the caller's contract; both checked against their layouts.
        unsafe {
            move_whole(
                comm,
                Way::Gather,
                (&layout, &at),
                field(block.0, self.pad()),
                whole,
            )
        }
        .map(|_| ())
    }

    /// Moves the data to `new_plan`: only the cells whose owner changes
    /// travel, one message per pair of ranks whose blocks overlap, from the
    /// old block straight into the new one; the cells kept are copied
    /// locally. Transactional: the old block stays in place until the new
    /// one is complete; on error (on any rank) every rank returns the same
    /// `Err` and keeps its old data. Ghost cells of the new block are
    /// default-initialised: call
    /// [`DistArray2::exchange_ghosts`](super::DistArray2::exchange_ghosts)
    /// afterwards.
    ///
    /// `broadcast`: the plan is the root's, broadcast to every rank (a
    /// balance point's), so identical everywhere by construction: the root
    /// alone validates it (O(p)) and no fingerprints are compared.
    /// Otherwise every rank validates its own and they are compared.
    ///
    /// # Safety
    /// `source`, when given, points to this rank's padded block of the
    /// current plan in C order (the application's copy of the block, read
    /// instead of the array's own), not written until this returns.
    pub(super) unsafe fn remap<C: Communicator>(
        &mut self,
        comm: &C,
        new_plan: ArrayPlan,
        broadcast: bool,
        source: Option<*const T>,
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
        let new = new_plan.parts[self.rank];
        let mut next = Tiled {
            plan: new_plan,
            rank: self.rank,
            ghost: self.ghost,
            data: Array2::default((new.rows + 2 * self.ghost, new.cols + 2 * self.ghost)),
            on_buffer: None,
        };
        let old = match source {
            Some(_) => Ok(None),
            None => self.c_order_block().map(Some),
        };
        let layouts = (|| Ok((self.move_layout()?, next.move_layout()?, old?)))();
        let (from, to, old) = agree(comm, 0, layouts)?;
        let pad = self.pad();
        let old_ptr = match (&old, source) {
            (Some(b), _) => b.as_ptr(),
            (None, p) => p.unwrap_or(std::ptr::null()),
        };
        // SAFETY: `old_ptr` is this rank's padded block of `from` in C
        // order (the array's own, or the caller's `source`), only read;
        // `next.data` its new block of `to`, a distinct allocation,
        // written; both checked against their layouts.
        let (sent, mine, msgs, start) = unsafe {
            transfer(
                comm,
                &from,
                &to,
                &[field(old_ptr, pad)],
                &[field(next.data.as_mut_ptr(), pad)],
            )
        }?;
        let stats = global_stats(comm, sent, mine, msgs, start);
        drop(old);
        *self = next;
        Ok(stats)
    }
}
