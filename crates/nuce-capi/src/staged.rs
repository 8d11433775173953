//! The distributed arrays behind `nuce_array`: a [`DistArray2`] of opaque
//! `elem_size`-byte elements.
//!
//! The application owns its memory: its padded block (row-major, ghost
//! border of width `g`, `(rows + 2g) × (cols + 2g)` elements) lives in its
//! own buffer, and every collective works on that buffer directly, on the
//! grid layer's derived datatypes: the ghost exchange
//! ([`DistArray2::exchange_ghosts_on`]), the gather
//! ([`DistArray2::gather_from`]) and the remap at a balance point, which
//! reads the old cells from the application's buffer
//! ([`DistArray2::set_remap_source`]). The array's own block is only the
//! hand-over of a new block (after a create, a scatter or a remap) until the
//! application copies it into its new buffer (`nuce_array_read`). Elements
//! are moved by MPI as `elem_size` bytes ([`Bytes`]).

use mpi::datatype::{Equivalence, UserDatatype};
use mpi::topology::SimpleCommunicator;
use ndarray::Array2;
use nuce::plan::policy::RemapDecision;
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
    /// Copies the array's own padded block (the hand-over of a new block) out.
    fn store_all(&self, app: &mut [u8]);
    /// The ghost exchange straight on the application's padded block
    /// (`padded_len() × elem_size()` bytes): no staging copy.
    fn exchange_ghosts_on(&mut self, app: &mut [u8]) -> Result<()>;
    /// This rank's part in an exchange it cannot make (the error of every rank).
    fn refuse_exchange(&mut self, why: Error) -> Error;
    /// The gather at `root` from the application's padded block `app`
    /// (`padded_len() × elem_size()` bytes) into `global` there (`rows ×
    /// cols × elem_size()` bytes): no copy.
    fn gather_from(&self, app: &[u8], root: i32, global: Option<&mut [u8]>) -> Result<()>;
    /// The balancer's `maybe_remap_ahead`, reading this rank's current
    /// block from the application's `app` (`padded_len() × elem_size()`
    /// bytes): the decision (whether the layout changed, and why).
    fn maybe_remap(
        &mut self,
        bal: &mut Balancer,
        horizon: (usize, usize),
        app: &[u8],
    ) -> Result<RemapDecision>;
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
    fn gather_from(&self, app: &[u8], root: i32, global: Option<&mut [u8]>) -> Result<()> {
        let out = global.map_or(std::ptr::null_mut(), |g| g.as_mut_ptr());
        // SAFETY: `app` is this rank's padded block (its length checked by
        // the caller), only read; `global` at the root the whole array
        // (checked by the caller), written; both borrowed for the call, in
        // elements of N bytes with alignment 1.
        unsafe { self.gather_from(root, app.as_ptr().cast(), out.cast()) }
    }
    fn maybe_remap(
        &mut self,
        bal: &mut Balancer,
        (iterations, ahead): (usize, usize),
        app: &[u8],
    ) -> Result<RemapDecision> {
        // SAFETY: `app` is this rank's padded block of the current layout
        // (its length checked by the caller), borrowed for the call and
        // only read; the source is unset before it returns.
        unsafe { self.set_remap_source(Some(app.as_ptr().cast())) };
        let report = bal.maybe_remap_ahead(self, iterations, ahead);
        // SAFETY: unsetting.
        unsafe { self.set_remap_source(None) };
        Ok(report?.decision)
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
