//! Ownership ranges for PETSc's `DMDACreate3d` (`nuce_ownership_ranges`):
//! the rectilinear decomposition fitted to the measured speeds in DMDA's
//! rank order (`nuce::internals::ranges`), and the balance point that
//! turns recorded phases into speeds for data nuce does not hold
//! (`nuce_update_speeds`: DMDA ranges, the DMPlex partitioner).

use nuce::OwnershipRanges;
use std::ffi::c_int;

use mpi::traits::*;
use nuce::{waiting, Error, Result};

use crate::caller::element;
use crate::{balancer, checked, guard, nuce_balancer, null, unreachable_null};

/// This rank's arguments, read and checked before the collective step.
struct Args {
    shape: (usize, usize, usize),
    procs: Option<[usize; 3]>,
    /// Entries writable in each of `lx, ly, lz`.
    room: [usize; 3],
}

/// Reads `n[3]` and `procs[3]` and checks the output pointers.
///
/// # Safety
/// `n` and `procs` are NULL or point to 3 readable values.
unsafe fn read_args(
    n: *const i64,
    procs: *const c_int,
    out: [*mut i64; 3],
    ranks: usize,
) -> Result<Args> {
    if n.is_null() {
        return Err(null("n"));
    }
    if procs.is_null() {
        return Err(null("procs"));
    }
    for (p, what) in out.iter().zip(["lx", "ly", "lz"]) {
        if p.is_null() {
            return Err(null(what));
        }
    }
    // SAFETY: non-null, 3 readable values each (contract).
    let (n, g) = unsafe {
        (
            std::slice::from_raw_parts(n, 3),
            std::slice::from_raw_parts(procs, 3),
        )
    };
    let mut ext = [0usize; 3];
    for a in 0..3 {
        ext[a] = usize::try_from(n[a]).map_err(|_| {
            Error::invalid_input(format!("{} = {} is negative", element("n", a), n[a]))
        })?;
    }
    let mut grid = [0usize; 3];
    for a in 0..3 {
        grid[a] = usize::try_from(g[a]).map_err(|_| {
            Error::invalid_input(format!("{} = {} is negative", element("procs", a), g[a]))
        })?;
    }
    let procs = match grid.iter().filter(|&&v| v == 0).count() {
        3 => None,
        0 => Some(grid),
        _ => {
            return Err(Error::invalid_input(format!(
                "procs = {{{}, {}, {}}}: give all three (a grid) or none (all 0: nuce chooses)",
                g[0], g[1], g[2]
            )))
        }
    };
    Ok(Args {
        shape: (ext[0], ext[1], ext[2]),
        procs,
        room: procs.unwrap_or(ext.map(|e| e.min(ranks))),
    })
}

/// The ownership ranges `lx, ly, lz` of an `n[0] × n[1] × n[2]` grid
/// (PETSc's `M, N, P`) for the current speeds (uniform when none were
/// measured), for `DMDACreate3d`. A balance point: the phases recorded
/// since the previous one (`nuce_record_phase`) become the speeds first,
/// as with [`nuce_update_speeds`] (collective; the same result or the same
/// error code on every rank). PETSc's conventions: rank
/// `r = i + m·(j + n·k)` (x fastest) owns `lx[i] × ly[j] × lz[k]`, so the
/// DMDA must be created on the balancer's communicator (same ranks, same
/// order). `procs[3]` (DMDA's `m, n, p`): in, all three 0 to let nuce
/// choose the grid, or all three given (product = number of ranks); out,
/// the grid used. `lx` gets `procs[0]` entries summing to `n[0]`, `ly`
/// `procs[1]` summing to `n[1]`, `lz` `procs[2]` summing to `n[2]`, each
/// at least 1: each array needs room for `procs[a]` entries when the grid
/// is given, for `min(n[a], number of ranks)` when nuce chooses. `*imbalance`
/// (optional, NULL = not wanted): how far the slowest rank's predicted time
/// is above the speeds' ideal, `max_r(volume_r / share_r) − 1` (0 = a
/// perfect fit; a tensor grid cannot fit arbitrary speeds). Errors (every
/// rank): a NULL argument, a negative or zero extent, a partly given or
/// wrong grid, more processors than cells along an axis, arguments that
/// differ between ranks. See `docs/c-api.md`, "PETSc DMDA ownership ranges".
#[no_mangle]
pub extern "C" fn nuce_ownership_ranges(
    b: *mut nuce_balancer,
    n: *const i64,
    procs: *mut c_int,
    lx: *mut i64,
    ly: *mut i64,
    lz: *mut i64,
    imbalance: *mut f64,
) -> c_int {
    guard(|| {
        // SAFETY: `b` is NULL or a live handle.
        let h = unsafe { balancer(b) }
            .map_err(|_| unreachable_null("the balancer", "nuce_ownership_ranges"))?;
        let _w = waiting();
        let ranks = h.bal.comm().size() as usize;
        // SAFETY: `n`, `procs` NULL or 3 readable values (contract).
        let local = unsafe { read_args(n, procs, [lx, ly, lz], ranks) };
        let op = match &local {
            Ok(a) => format!(
                "nuce_ownership_ranges(n {}x{}x{}, procs {:?})",
                a.shape.0, a.shape.1, a.shape.2, a.procs
            ),
            Err(_) => "nuce_ownership_ranges".to_string(),
        };
        let args = checked(local, |r| h.bal.entry(&op, r))?;
        let r = OwnershipRanges::new(&mut h.bal, args.shape, args.procs)?;
        let ranges = [&r.lx, &r.ly, &r.lz];
        for (a, out) in [lx, ly, lz].into_iter().enumerate() {
            let v = ranges[a];
            if v.len() > args.room[a] {
                // Not reachable: nuce's grid has at most `ranks` per axis.
                return Err(Error::Plan(nuce::plan::Error::Solver(format!(
                    "axis {a}: {} ranges",
                    v.len()
                ))));
            }
            let v: Vec<i64> = v.iter().map(|&x| x as i64).collect();
            // SAFETY: non-null (checked), room for `room[a]` ≥ len entries (contract).
            unsafe { std::ptr::copy_nonoverlapping(v.as_ptr(), out, v.len()) };
        }
        let g = r.procs.map(|v| v as c_int);
        // SAFETY: non-null (checked), 3 writable ints (contract).
        unsafe { std::ptr::copy_nonoverlapping(g.as_ptr(), procs, 3) };
        if !imbalance.is_null() {
            // SAFETY: non-null, one writable double (contract).
            unsafe { *imbalance = r.imbalance };
        }
        Ok(())
    })
}

/// A balance point for data nuce does not hold (a PETSc DMDA's or DMPlex's):
/// the phases the ranks recorded since the previous balance point
/// (`nuce_record_phase`) become the speeds that `nuce_speeds` returns,
/// merged with the earlier estimates for ranks that recorded none; when no
/// rank recorded one the speeds stay as they are (collective).
/// `nuce_ownership_ranges` and the PETSc partitioner "nuce" do this
/// themselves. Errors (every rank): some ranks recorded a phase and others
/// have no speed at all (call `nuce_measure` or `nuce_set_speeds` first).
#[no_mangle]
pub extern "C" fn nuce_update_speeds(b: *mut nuce_balancer) -> c_int {
    guard(|| {
        // SAFETY: `b` is NULL or a live handle.
        let h = unsafe { balancer(b) }
            .map_err(|_| unreachable_null("the balancer", "nuce_update_speeds"))?;
        h.bal.update_speeds()
    })
}
