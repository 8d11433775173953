//! Grids on the application's own buffers: the layout of a 2D or 3D grid
//! ([`Layout`]: this rank's box, its neighbours and the cells each side
//! sends) and the distributed grid handle ([`Grid`]) whose ghost exchanges
//! and remaps act **in place on buffers the application owns**.
//!
//! A grid is `n0 × n1 × n2` cells tiled by a [`GridPlan3`] (one box per
//! rank); a 2D grid is one with `n0 = 1`. A *field* is one buffer of the
//! application holding this rank's box plus its own padding: `pad[a]` halo
//! cells on each side along axis `a` (at least the ghost width along every
//! axis of extent > 1; any padding along an axis of extent 1), cells of
//! `elem_size` bytes (several components of a cell = one bigger element),
//! C order (axis 2 fastest). The cell at global `(i, j, k)` is element
//!
//! ```text
//! ((i − lo0 + pad0)·d1 + (j − lo1 + pad1))·d2 + (k − lo2 + pad2),   d_a = size_a + 2·pad_a
//! ```
//!
//! of the buffer, `lo`/`size` the rank's box; the buffer holds `d0·d1·d2`
//! elements ([`Layout::padded_len`]; 0 for a rank with an empty box).
//! Fortran codes reverse the axes (their first index is the fastest).
//!
//! * **Exchange** ([`Grid::exchange`], [`Grid::exchange_begin`] /
//!   [`Exchange::end`]): to and from each neighbour one message per group
//!   of fields, each an MPI derived datatype (per field a subarray of the
//!   region, consecutive fields combined into one struct type while the
//!   message stays within [`COMBINE_BYTES`](datatypes::COMBINE_BYTES)) built once per (layout,
//!   fields) and cached: no staging copy, no copy loop. The messages carry the halo
//!   protocol of [`super::halo`] (tag = call fingerprint + sequence; a
//!   neighbour at another exchange — other field count, element sizes,
//!   stencil — or a skipped exchange escalates to a checkpoint, and every
//!   rank involved returns the same error).
//! * **Remap**: a [`Grid`] is [`Rebalance`](super::balancer::Rebalance):
//!   when [`Balancer::maybe_remap`](super::balancer::Balancer::maybe_remap)
//!   decides to remap, the grid keeps the old and the new plan (*pending*);
//!   the application asks its new box ([`Grid::local_box`]), allocates new
//!   buffers and calls [`Grid::move_fields`] (collective), which copies
//!   locally the cells it keeps and sends only the cells that change owner,
//!   straight from the old buffers into the new ones. Exchanges are refused
//!   while a move is pending.
//! * **Whole array at a root** ([`Grid::scatter`], [`Grid::gather`]): a
//!   field from and to one array of the whole grid (C order) at a root,
//!   as a move between the grid's layout and the layout in which the root
//!   owns every cell: one derived-datatype message per rank, straight
//!   between the application's buffers and the root's array.
//! * **Cost per cell** ([`Grid::set_cost`], [`Grid::set_cost_with`],
//!   [`Grid::clear_cost`]): cells that do unequal work are balanced by
//!   `Σ cost / speed` instead of cell counts, by the same mechanism as the
//!   Rust containers' ([`super::cost`]). The cost is of this rank's box
//!   (no padding) and does not follow a move: set it again for the new box.
//!
//! ```no_run
//! # fn main() -> nuce::Result<()> {
//! use nuce::{Field, Grid};
//! use nuce::plan::array3d::Stencil;
//! let universe = mpi::initialize().unwrap();
//! let mut bal = nuce::Balancer::new(&universe.world())?;
//! let mut grid = Grid::new(&mut bal, (32, 32, 32), Stencil::seven(1))?;
//! let pad = [1, 1, 1];
//! let mut u = vec![0.0f64; grid.padded_len(pad)?];
//! for _phase in 0..3 {
//!     for _it in 0..10 {
//!         grid.exchange(&mut [Field::new(&mut u, pad)])?;
//!         // ... update this rank's cells of u ...
//!     }
//!     if bal.maybe_remap(&mut grid, 10)?.decision.remap {
//!         let mut v = vec![0.0f64; grid.padded_len(pad)?]; // the new box
//!         grid.move_fields(&[Field::new(&mut u, pad)], &mut [Field::new(&mut v, pad)])?;
//!         u = v;
//!     }
//! }
//! # Ok(()) }
//! ```

use std::ffi::c_void;
use std::marker::PhantomData;
use std::mem::size_of;
use std::os::raw::c_int;

use crate::error::{Error, Result};
use crate::plan::array3d::{Box3, GridPlan3, Stencil};

mod datatypes;
mod grid;
mod transfer;

pub(crate) use datatypes::{exchange_on, Dtype, HaloTypes};
use datatypes::{message_groups, offsets, PeerMessages, PeerTypes};
pub use grid::{Exchange, Grid, PendingExchange};
pub(crate) use transfer::{move_whole, transfer, whole_layouts, Way};

/// Largest ghost width a [`Layout`] accepts.
pub const MAX_GHOST: usize = 4;

/// Plain data that MPI may overwrite with any bytes: integers, floats and
/// arrays of them (a cell of several components).
///
/// # Safety
/// Every bit pattern of `size_of::<Self>()` bytes is a valid value, and the
/// type has no padding bytes nor pointers.
pub unsafe trait Plain: Copy + 'static {}

macro_rules! plain {
    ($($t:ty),*) => { $(
        // SAFETY: a primitive number: every bit pattern is valid, no padding.
        unsafe impl Plain for $t {}
    )* };
}
plain!(u8, i8, u16, i16, u32, i32, u64, i64, u128, i128, f32, f64);
// SAFETY: an array of plain values has no padding and every bit pattern valid.
unsafe impl<T: Plain, const N: usize> Plain for [T; N] {}

/// A field as the raw API takes it (the C API's `nuce_field`): the address
/// of the application's buffer, its element size in bytes and its padding
/// per axis (layout in the module's documentation).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct RawField {
    /// Start of the buffer (element 0 of the padded block).
    pub data: *mut c_void,
    /// Bytes per cell (≥ 1).
    pub elem_size: usize,
    /// Halo cells allocated on each side, per axis.
    pub pad: [usize; 3],
}

/// The name of a primitive number type `T` (`"f64"`, `"i64"`, …), or `""`
/// for any other type: an exchange's identity names the cells' type only
/// where every program names it alike (the ranks of an MPMD job may
/// define their own record types under other paths).
fn cell_type<T>() -> &'static str {
    let name = std::any::type_name::<T>();
    const PRIMITIVE: [&str; 14] = [
        "f32", "f64", "i8", "i16", "i32", "i64", "i128", "isize", "u8", "u16", "u32", "u64",
        "u128", "usize",
    ];
    if PRIMITIVE.contains(&name) {
        name
    } else {
        ""
    }
}

/// A field of the safe API: the application's slice with its padding.
#[derive(Debug)]
pub struct Field<'a> {
    raw: RawField,
    len: usize,
    /// The cells' Rust type, part of the exchange's identity.
    pub(crate) cell_type: &'static str,
    _buf: PhantomData<&'a mut [u8]>,
}

impl<'a> Field<'a> {
    /// The slice `data` (this rank's padded block, as many cells as
    /// [`Grid::padded_len`] gives for `pad`) with `pad` halo cells on each
    /// side per axis. The length is checked by every call that takes it.
    pub fn new<T: Plain>(data: &'a mut [T], pad: [usize; 3]) -> Self {
        Field {
            raw: RawField {
                data: data.as_mut_ptr().cast(),
                elem_size: size_of::<T>(),
                pad,
            },
            len: data.len(),
            cell_type: cell_type::<T>(),
            _buf: PhantomData,
        }
    }

    /// The raw description of the field.
    pub fn raw(&self) -> RawField {
        self.raw
    }

    /// The slice's length in cells.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the slice is empty (a rank with an empty box).
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

/// The cells this rank exchanges with one neighbour (global coordinates).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Region {
    /// The neighbour's rank.
    pub rank: usize,
    /// This rank's cells the neighbour reads (sent).
    pub send: Box3,
    /// The neighbour's cells this rank reads (received into its padding).
    pub recv: Box3,
}

/// The layout of a grid on one rank: the plan, this rank's box, the
/// stencil, and per neighbour the cells sent and received
/// ([`GridPlan3::halo_pairs`]), built once per plan.
#[derive(Debug, Clone, PartialEq)]
pub struct Layout {
    plan: GridPlan3,
    rank: usize,
    stencil: Stencil,
    regions: Vec<Region>,
}

impl Layout {
    /// The layout of `rank`'s box of `plan` for `stencil` (ghost width 0 to
    /// [`MAX_GHOST`], at most every extent > 1 of the grid). `O(p)`.
    pub fn new(plan: GridPlan3, rank: usize, stencil: Stencil) -> Result<Self> {
        plan.validate()?;
        Self::of_valid_plan(plan, rank, stencil)
    }

    /// [`Layout::new`] of a plan known to tile its grid (validated where it
    /// was made, or built from one that was): the tiling is not checked
    /// again, which costs `O(p log p)` time and `O(p)` memory on every rank.
    pub(crate) fn of_valid_plan(plan: GridPlan3, rank: usize, stencil: Stencil) -> Result<Self> {
        check_stencil(&plan, stencil)?;
        if rank >= plan.len() {
            return Err(Error::shape_mismatch(format!(
                "rank {rank} of a plan of {} parts",
                plan.len()
            )));
        }
        let regions = plan
            .halo_pairs(rank, stencil)
            .into_iter()
            .map(|(q, send, recv)| Region {
                rank: q,
                send,
                recv,
            })
            .collect();
        Ok(Layout {
            plan,
            rank,
            stencil,
            regions,
        })
    }

    /// The plan.
    pub fn plan(&self) -> &GridPlan3 {
        &self.plan
    }
    /// This rank.
    pub fn rank(&self) -> usize {
        self.rank
    }
    /// The stencil (kind and ghost width).
    pub fn stencil(&self) -> Stencil {
        self.stencil
    }
    /// This rank's box (global coordinates; empty for a rank without cells).
    pub fn local_box(&self) -> Box3 {
        self.plan.boxes[self.rank]
    }
    /// The neighbours and the cells exchanged with each, in rank order.
    pub fn regions(&self) -> &[Region] {
        &self.regions
    }
    /// The neighbours' ranks, ascending.
    pub fn neighbours(&self) -> Vec<usize> {
        self.regions.iter().map(|r| r.rank).collect()
    }

    /// The least padding a field needs per axis: the ghost width along the
    /// axes of extent > 1, 0 along an axis of extent 1 (a 2D grid's axis 0).
    pub fn required_pad(&self) -> [usize; 3] {
        [0, 1, 2].map(|a| {
            if self.plan.extent(a) > 1 {
                self.stencil.ghost
            } else {
                0
            }
        })
    }

    /// Extents of this rank's block with `pad` cells each side (`[0; 3]`
    /// for an empty box).
    pub fn padded_dims(&self, pad: [usize; 3]) -> [usize; 3] {
        let b = self.local_box();
        if b.is_empty() {
            [0; 3]
        } else {
            [0, 1, 2].map(|a| b.len(a).saturating_add(pad[a].saturating_mul(2)))
        }
    }

    /// Number of cells of this rank's buffer with `pad` cells each side.
    /// Errors: a padding below [`Layout::required_pad`], a size that overflows.
    pub fn padded_len(&self, pad: [usize; 3]) -> Result<usize> {
        let need = self.required_pad();
        if let Some(a) = (0..3).find(|&a| pad[a] < need[a]) {
            return Err(Error::invalid_input(format!(
                "padding {pad:?} is below the ghost width {} along axis {a}",
                self.stencil.ghost
            )));
        }
        let d = self.padded_dims(pad);
        d[0].checked_mul(d[1])
            .and_then(|x| x.checked_mul(d[2]))
            .filter(|&x| x <= isize::MAX as usize)
            .ok_or_else(|| Error::invalid_input(format!("a block of {d:?} cells overflows")))
    }

    /// Checks that a block of cells of `elem_size` bytes padded by `pad`
    /// fits this layout's datatypes (sizes and MPI's count range).
    pub(crate) fn check_block(&self, elem_size: usize, pad: [usize; 3]) -> Result<()> {
        let f = RawField {
            data: std::ptr::NonNull::<u8>::dangling().as_ptr().cast(),
            elem_size,
            pad,
        };
        self.check_field(0, &f, None)
    }

    /// Checks field `k` against this layout: element size, padding, MPI's
    /// count range, a non-NULL buffer for a non-empty box, and the length
    /// when it is known.
    fn check_field(&self, k: usize, f: &RawField, len: Option<usize>) -> Result<()> {
        let what = |m: String| Error::invalid_input(format!("field {k}: {m}"));
        if f.elem_size == 0 {
            return Err(what("elem_size is 0".into()));
        }
        let need = self.padded_len(f.pad).map_err(|e| what(e.to_string()))?;
        if need
            .checked_mul(f.elem_size)
            .is_none_or(|b| b > isize::MAX as usize)
        {
            return Err(what(format!(
                "{need} cells of {} bytes overflow",
                f.elem_size
            )));
        }
        let d = self.padded_dims(f.pad);
        if d[0].max(d[1]).max(d[2].saturating_mul(f.elem_size)) > c_int::MAX as usize {
            return Err(what(format!(
                "a block of {d:?} cells of {} bytes exceeds MPI's int range",
                f.elem_size
            )));
        }
        if let Some(len) = len.filter(|&l| l != need) {
            return Err(Error::shape_mismatch(format!(
                "field {k} has {len} cells, this rank's box {:?} with padding {:?} needs {need}",
                self.local_box(),
                f.pad
            )));
        }
        if need > 0 && f.data.is_null() {
            return Err(what("data is NULL".into()));
        }
        Ok(())
    }

    /// The MPI datatype of `region` (global coordinates, inside the padded
    /// block) of field `f`: a subarray of bytes.
    fn subarray(&self, f: &RawField, region: &Box3) -> Result<Dtype> {
        let me = self.local_box();
        let d = self.padded_dims(f.pad);
        let int = |x: usize| x as c_int; // in range: checked by check_field
                                         // The cell as `e` of the widest unsigned words that divide it: MPI
                                         // packs runs of words much faster than runs of bytes.
        let (e, base) = super::halo::word_type(f.elem_size);
        let sizes = [int(d[0]), int(d[1]), int(d[2] * e)];
        let subs = [int(region.nx), int(region.ny), int(region.nz * e)];
        let at = [0, 1, 2].map(|a| region.lo(a) + f.pad[a] - me.lo(a));
        let starts = [int(at[0]), int(at[1]), int(at[2] * e)];
        Dtype::subarray(sizes, subs, starts, base)
    }

    /// The datatypes of a ghost exchange of `fields` (each checked against
    /// this layout by the caller): per neighbour, the messages sent and
    /// those received, relative to the first field's buffer. Consecutive
    /// fields share a message up to
    /// [`COMBINE_BYTES`](datatypes::COMBINE_BYTES) ([`message_groups`]).
    fn exchange_types(&self, fields: &[RawField]) -> Result<PeerTypes> {
        let offs = offsets(fields);
        let sizes: Vec<usize> = fields.iter().map(|f| f.elem_size).collect();
        let messages = |region: &Box3| {
            message_groups(&sizes, region.volume())
                .into_iter()
                .map(|g| self.combined(&fields[g.clone()], &offs[g], region))
                .collect::<Result<Vec<Dtype>>>()
        };
        self.regions
            .iter()
            .map(|r| {
                Ok(PeerMessages {
                    rank: r.rank as i32,
                    send: messages(&r.send)?,
                    recv: messages(&r.recv)?,
                })
            })
            .collect()
    }

    /// One committed datatype for `region` of every field, displaced by
    /// `offsets` (bytes from the first field's buffer).
    fn combined(&self, fields: &[RawField], offsets: &[isize], region: &Box3) -> Result<Dtype> {
        if let ([f], [0]) = (fields, offsets) {
            // One field at its own address: its subarray as it is (a
            // struct around it costs MPI's packing about 0.06 µs a message).
            return self.subarray(f, region)?.commit();
        }
        let parts = fields
            .iter()
            .map(|f| self.subarray(f, region))
            .collect::<Result<Vec<Dtype>>>()?;
        let disps: Vec<u64> = offsets.iter().map(|&o| o as u64).collect();
        Dtype::structure(&parts, &disps)?.commit()
    }
}

/// Checks a stencil for a layout of `plan` (every rank can alone).
fn check_stencil(plan: &GridPlan3, stencil: Stencil) -> Result<()> {
    let g = stencil.ghost;
    if g > MAX_GHOST {
        return Err(Error::invalid_input(format!(
            "ghost width {g}: 0 to {MAX_GHOST} supported"
        )));
    }
    if let Some(a) = (0..3).find(|&a| plan.extent(a) > 1 && g > plan.extent(a)) {
        return Err(Error::invalid_input(format!(
            "ghost width {g} is wider than the grid's extent {} along axis {a}",
            plan.extent(a)
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::array3d::{Best3, GridDecomposer3};

    #[test]
    fn layouts_check_padding_and_lengths() {
        let plan = Best3::default().decompose((1, 8, 6), &[1.0, 2.0]).unwrap();
        let l = Layout::new(plan.clone(), 0, Stencil::seven(2)).unwrap();
        // 2D: axis 0 needs no padding.
        assert_eq!(l.required_pad(), [0, 2, 2]);
        let b = l.local_box();
        let n = l.padded_len([0, 2, 3]).unwrap();
        assert_eq!(n, b.nx * (b.ny + 4) * (b.nz + 6));
        assert!(l.padded_len([0, 1, 2]).is_err());
        let f = RawField {
            data: std::ptr::null_mut(),
            elem_size: 8,
            pad: [0, 2, 2],
        };
        assert!(l.check_field(0, &f, None).is_err(), "NULL buffer");
        assert!(Layout::new(plan.clone(), 0, Stencil::seven(5)).is_err());
        assert!(Layout::new(plan, 2, Stencil::seven(1)).is_err());
        let thin = Best3::default().decompose((4, 4, 2), &[1.0]).unwrap();
        assert!(Layout::new(thin, 0, Stencil::seven(3)).is_err());
    }

    #[test]
    fn regions_are_the_reach_of_the_stencil() {
        let plan = GridPlan3::new(
            "t",
            (4, 4, 1),
            vec![
                Box3::new(0, 0, 0, 2, 2, 1),
                Box3::new(2, 0, 0, 2, 2, 1),
                Box3::new(0, 2, 0, 2, 2, 1),
                Box3::new(2, 2, 0, 2, 2, 1),
            ],
        )
        .unwrap();
        let faces = Layout::new(plan.clone(), 0, Stencil::seven(1)).unwrap();
        assert_eq!(faces.neighbours(), vec![1, 2]);
        assert_eq!(faces.regions()[0].send, Box3::new(1, 0, 0, 1, 2, 1));
        assert_eq!(faces.regions()[0].recv, Box3::new(2, 0, 0, 1, 2, 1));
        let boxed = Layout::new(plan, 0, Stencil::twenty_seven(1)).unwrap();
        assert_eq!(boxed.neighbours(), vec![1, 2, 3]);
        assert_eq!(boxed.regions()[2].send, Box3::new(1, 1, 0, 1, 1, 1));
        assert_eq!(boxed.regions()[2].recv, Box3::new(2, 2, 0, 1, 1, 1));
    }
}
