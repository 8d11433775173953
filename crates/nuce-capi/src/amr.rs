//! AMR submesh allocation for C (\[VH94\]): a list of grids packed and
//! scaled onto a `p × q` processor mesh, one disjoint submesh per grid.

use std::ffi::c_int;

use nuce::plan::packing::{Grid, LevelPacking, Mesh, Scaling, SubmeshAllocator, TightPacking};
use nuce::Error;

use crate::{guard, null, to_usize};

/// Pack with the tight-packing heuristic TP (\[VH94\] §4.1).
pub const NUCE_PACK_TIGHT: c_int = 0;
/// Pack with first-fit level packing LP (the baseline of \[VH94\] §4.5).
pub const NUCE_PACK_LEVEL: c_int = 1;
/// Scale the packing with different factors in x and y (the whole mesh).
pub const NUCE_SCALE_NONUNIFORM: c_int = 0;
/// Scale the packing with one factor in both directions.
pub const NUCE_SCALE_UNIFORM: c_int = 1;

/// Allocates one processor submesh of the `p × q` mesh to each of the `m`
/// grids `grids[2m] = {w0, h0, w1, h1, …}` (mesh points along x and y,
/// each > 0; `m ≤ p·q`), packed by `packer` (`NUCE_PACK_*`) and scaled by
/// `scaling` (`NUCE_SCALE_*`). Writes `submeshes[4m]`: for grid `i`,
/// `{row, col, rows, cols}` of its submesh with `col` along x (`0..p`) and
/// `row` along y (`0..q`); the submeshes are non-empty and pairwise
/// disjoint. `rotated[m]` (NULL allowed) gets 1 where the grid was packed
/// turned by 90° (its `w` along y). Local and pure.
#[no_mangle]
pub extern "C" fn nuce_amr_allocate(
    grids: *const u64,
    m: usize,
    p: i64,
    q: i64,
    packer: c_int,
    scaling: c_int,
    submeshes: *mut i64,
    rotated: *mut c_int,
) -> c_int {
    guard(|| {
        if grids.is_null() {
            return Err(null("grids"));
        }
        if submeshes.is_null() {
            return Err(null("submeshes"));
        }
        let len = m
            .checked_mul(4)
            .ok_or_else(|| Error::invalid_input(format!("m = {m}")))?;
        // SAFETY: non-null, 2m readable uint64_t (contract).
        let raw = unsafe { std::slice::from_raw_parts(grids, 2 * m) };
        let list: Vec<Grid> = raw.chunks_exact(2).map(|c| Grid::new(c[0], c[1])).collect();
        if list.is_empty() {
            return Err(Error::empty("no grids"));
        }
        let mesh = Mesh::new(to_usize(p, "p")?, to_usize(q, "q")?)?;
        let scaling = match scaling {
            NUCE_SCALE_NONUNIFORM => Scaling::NonUniform,
            NUCE_SCALE_UNIFORM => Scaling::Uniform,
            s => return Err(Error::invalid_input(format!("unknown scaling {s}"))),
        };
        let alloc =
            match packer {
                NUCE_PACK_TIGHT => Ok(SubmeshAllocator::new(TightPacking::default(), scaling)
                    .allocate(&list, mesh)?),
                NUCE_PACK_LEVEL => Ok(SubmeshAllocator::new(LevelPacking::default(), scaling)
                    .allocate(&list, mesh)?),
                k => Err(Error::invalid_input(format!("unknown packer {k}"))),
            }?;
        // SAFETY: non-null, 4m writable int64_t (contract).
        let out = unsafe { std::slice::from_raw_parts_mut(submeshes, len) };
        for (o, r) in out.chunks_exact_mut(4).zip(&alloc.submeshes) {
            o.copy_from_slice(&[r.row, r.col, r.rows, r.cols].map(|x| x as i64));
        }
        if !rotated.is_null() {
            // SAFETY: non-null, m writable ints (contract).
            let rot = unsafe { std::slice::from_raw_parts_mut(rotated, m) };
            for (o, pl) in rot.iter_mut().zip(&alloc.packing.placements) {
                *o = c_int::from(pl.rotated);
            }
        }
        Ok(())
    })
}
