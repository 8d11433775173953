//! The distributed arrays behind `nuce_array`: a [`DistArray2`] of opaque
//! `elem_size`-byte elements, used as a staging area between the
//! application's own buffers and nuce's collectives.
//!
//! The application owns its memory: its padded block (row-major, ghost
//! border of width `g`, `(rows + 2g) × (cols + 2g)` elements) lives in its
//! own buffer. The ghost exchange works on that buffer directly (derived
//! datatypes, [`DistArray2::exchange_ghosts_on`]). For the collectives the
//! library keeps one block of the same shape, into which it copies the
//! local cells before a gather or a remap and from which it copies the
//! whole new block after a remap. Elements are moved by MPI as `elem_size`
//! bytes ([`Bytes`]); the runtime algorithms are nuce's, unchanged.

use mpi::datatype::{Equivalence, UserDatatype};
use mpi::topology::SimpleCommunicator;
use ndarray::Array2;
use nuce::{Balancer, DistArray2, Error, Rect, Result};

/// Element sizes (bytes) the C API supports.
pub(crate) const SIZES: [usize; 6] = [1, 2, 4, 8, 16, 32];

/// An element of `N` bytes, opaque to nuce: MPI moves it as `N` `MPI_BYTE`s.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(transparent)]
pub struct Bytes<const N: usize>(pub [u8; N]);

impl<const N: usize> Default for Bytes<N> {
    fn default() -> Self {
        Bytes([0; N])
    }
}

// SAFETY: `Bytes<N>` is `repr(transparent)` over `[u8; N]`: N contiguous
// bytes, no padding, alignment 1 — exactly the committed contiguous datatype
// of N `MPI_BYTE`s (u8's equivalent datatype), whose extent is N.
unsafe impl<const N: usize> Equivalence for Bytes<N> {
    type Out = UserDatatype;
    fn equivalent_datatype() -> UserDatatype {
        UserDatatype::contiguous(N as mpi::Count, &u8::equivalent_datatype())
    }
}

/// The bytes of a slice of elements.
fn as_bytes<const N: usize>(s: &[Bytes<N>]) -> &[u8] {
    // SAFETY: `Bytes<N>` is N bytes with alignment 1 and no padding
    // (repr(transparent) over [u8; N]), so `s` is `s.len() * N` initialised
    // bytes; the returned slice borrows `s`.
    unsafe { std::slice::from_raw_parts(s.as_ptr().cast::<u8>(), std::mem::size_of_val(s)) }
}

/// The bytes of a mutable slice of elements.
fn as_bytes_mut<const N: usize>(s: &mut [Bytes<N>]) -> &mut [u8] {
    // SAFETY: as in `as_bytes`; every byte pattern is a valid `Bytes<N>`,
    // and the returned slice borrows `s` mutably (no aliasing).
    unsafe { std::slice::from_raw_parts_mut(s.as_mut_ptr().cast::<u8>(), std::mem::size_of_val(s)) }
}

/// Copies the cells of the global rectangles `regions` between two padded
/// blocks of identical layout (`stride` elements per row, `elem` bytes per
/// element, this rank's rectangle `me`, ghost width `g`): one copy per row.
fn copy_regions(
    src: &[u8],
    dst: &mut [u8],
    (me, g, stride, elem): (Rect, usize, usize, usize),
    regions: &[Rect],
) {
    for r in regions.iter().filter(|r| !r.is_empty()) {
        let (r0, c0) = (r.row + g - me.row, r.col + g - me.col);
        for i in r0..r0 + r.rows {
            let start = (i * stride + c0) * elem;
            let end = start + r.cols * elem;
            dst[start..end].copy_from_slice(&src[start..end]);
        }
    }
}

/// What the C API does with a distributed array, whatever its element size.
pub trait Staged {
    /// The array's communicator.
    fn comm(&self) -> &SimpleCommunicator;
    /// Part `rank` of the current plan.
    fn part(&self, rank: usize) -> Option<Rect>;
    /// This rank's rectangle.
    fn rect(&self) -> Rect;
    /// Ghost width.
    fn ghost(&self) -> usize;
    /// Element size in bytes.
    fn elem_size(&self) -> usize;
    /// Global shape.
    fn global_shape(&self) -> (usize, usize);
    /// Elements of this rank's padded block.
    fn padded_len(&self) -> usize {
        let (r, g) = (self.rect(), self.ghost());
        (r.rows + 2 * g) * (r.cols + 2 * g)
    }
    /// Copies the cells of `regions` from the application's padded block in.
    fn load(&mut self, app: &[u8], regions: &[Rect]);
    /// Copies the whole padded block out.
    fn store_all(&self, app: &mut [u8]);
    /// The ghost exchange straight on the application's padded block
    /// (`padded_len() × elem_size()` bytes): no staging copy.
    fn exchange_ghosts_on(&mut self, app: &mut [u8]) -> Result<()>;
    /// This rank's part in an exchange it cannot make (the error of every rank).
    fn refuse_exchange(&mut self, why: Error) -> Error;
    /// The runtime's gather at `root`, written into `global` there.
    fn gather_into(&self, root: i32, global: Option<&mut [u8]>) -> Result<()>;
    /// The balancer's `maybe_remap_ahead`; whether the layout changed.
    fn maybe_remap(&mut self, bal: &mut Balancer, iterations: usize, ahead: usize) -> Result<bool>;
    /// The checked entry of the C call `op` on the array's communicator,
    /// refused by this rank with `refused` (the same result on every rank,
    /// within the timeout).
    fn entry(&self, op: &str, refused: Option<&Error>) -> Result<()>;
}

impl<const N: usize> Staged for DistArray2<Bytes<N>> {
    fn comm(&self) -> &SimpleCommunicator {
        DistArray2::comm(self)
    }
    fn part(&self, rank: usize) -> Option<Rect> {
        self.plan().parts.get(rank).copied()
    }
    fn rect(&self) -> Rect {
        DistArray2::rect(self)
    }
    fn ghost(&self) -> usize {
        DistArray2::ghost(self)
    }
    fn elem_size(&self) -> usize {
        N
    }
    fn global_shape(&self) -> (usize, usize) {
        DistArray2::global_shape(self)
    }
    fn load(&mut self, app: &[u8], regions: &[Rect]) {
        let layout = (self.rect(), self.ghost(), self.padded().ncols(), N);
        if let Some(mine) = self.padded_mut().as_slice_mut() {
            copy_regions(app, as_bytes_mut(mine), layout, regions);
        }
    }
    fn store_all(&self, app: &mut [u8]) {
        if let Some(mine) = self.padded().as_slice() {
            app.copy_from_slice(as_bytes(mine));
        }
    }
    fn exchange_ghosts_on(&mut self, app: &mut [u8]) -> Result<()> {
        // SAFETY: `app` is the application's padded block of this array's
        // layout (its length checked by the caller) in elements of N bytes
        // with alignment 1, borrowed exclusively for the call.
        unsafe { DistArray2::exchange_ghosts_on(self, app.as_mut_ptr().cast::<Bytes<N>>()) }
            .map(|_| ())
    }
    fn refuse_exchange(&mut self, why: Error) -> Error {
        DistArray2::refuse_exchange(self, why)
    }
    fn gather_into(&self, root: i32, global: Option<&mut [u8]>) -> Result<()> {
        let gathered = self.gather(root)?;
        if let (Some(g), Some(out)) = (gathered, global) {
            let g = g.as_standard_layout();
            let bytes = g
                .as_slice()
                .ok_or_else(|| Error::invalid_input("gathered array not contiguous"))?;
            out.copy_from_slice(as_bytes(bytes));
        }
        Ok(())
    }
    fn maybe_remap(&mut self, bal: &mut Balancer, iterations: usize, ahead: usize) -> Result<bool> {
        Ok(bal.maybe_remap_ahead(self, iterations, ahead)?.remap)
    }
    fn entry(&self, op: &str, refused: Option<&Error>) -> Result<()> {
        DistArray2::entry(self, op, refused)
    }
}

/// How a new array gets its values.
pub enum Init<'a> {
    /// Zero bytes.
    Zero,
    /// Scattered from the root's global buffer (`None` off the root).
    Scatter(Option<&'a [u8]>),
}

/// Plans and creates an array of `N`-byte elements on the balancer.
fn create<const N: usize>(
    bal: &mut Balancer,
    (rows, cols, ghost): (usize, usize, usize),
    init: Init<'_>,
) -> Result<Box<dyn Staged>> {
    let a: DistArray2<Bytes<N>> = match init {
        Init::Zero => DistArray2::new(bal, rows, cols, ghost)?,
        Init::Scatter(global) => {
            let global = global.map(|bytes| {
                let mut v = vec![Bytes::<N>::default(); rows * cols];
                as_bytes_mut(&mut v).copy_from_slice(bytes);
                Array2::from_shape_vec((rows, cols), v)
                    .map_err(|e| Error::shape_mismatch(e.to_string()))
            });
            let global = global.transpose()?;
            DistArray2::scatter(bal, global.as_ref(), ghost)?
        }
    };
    Ok(Box::new(a))
}

/// Whether `elem_size` is one of [`SIZES`] (the error otherwise).
pub fn check_elem_size(elem_size: usize) -> Result<()> {
    if SIZES.contains(&elem_size) {
        Ok(())
    } else {
        Err(Error::invalid_input(format!(
            "element size {elem_size} bytes is not supported (one of {SIZES:?})"
        )))
    }
}

/// [`create`] for a run-time element size (one of [`SIZES`]). The caller
/// has checked that `elem_size` is the same on every rank, so an
/// unsupported size is the same error everywhere.
pub fn create_dyn(
    bal: &mut Balancer,
    elem_size: usize,
    shape: (usize, usize, usize),
    init: Init<'_>,
) -> Result<Box<dyn Staged>> {
    match elem_size {
        1 => create::<1>(bal, shape, init),
        2 => create::<2>(bal, shape, init),
        4 => create::<4>(bal, shape, init),
        8 => create::<8>(bal, shape, init),
        16 => create::<16>(bal, shape, init),
        32 => create::<32>(bal, shape, init),
        _ => Err(Error::invalid_input(format!(
            "element size {elem_size} bytes is not supported (one of {SIZES:?})"
        ))),
    }
}
