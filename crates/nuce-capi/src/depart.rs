//! Ranks that leave a running job (`nuce_catch_leave_signal`, `nuce_leave_signalled`, `nuce_depart`, `nuce_grid_depart`,
//! `nuce_graph_depart`, `nuce_depart_finish`, `nuce_depart_finish_all`, their Fortran-handle
//! variants `_f`). Built on `nuce::Departure`; the reference is
//! `docs/c-api.md`, section "Ranks that leave".

use std::ffi::{c_char, c_int, c_void};

use mpi::raw::AsRaw;
use nuce::{waiting, Departing, Error, Result};

use crate::graph::{graph, nuce_graph};
use crate::grid::{grid, grid_handles, nuce_grid};
use crate::nuce_balancer;
use crate::savefile::str_arg;
use crate::{balancer, checked, guard, null, unreachable_null, MPI_Comm, MPI_Fint};

/// A balance point where every rank says whether it leaves (`leaving`
/// non-zero; collective over the balancer's ranks). Writes the number of
/// ranks that leave to `*nleaving` (the same on every rank) and keeps the
/// departure in the balancer for [`nuce_grid_depart`] and
/// [`nuce_depart_finish`]. A rank whose leave notice arrived
/// ([`nuce_catch_leave_signal`]) leaves whatever its `leaving` says. Every
/// rank leaving is the same error on every rank.
#[no_mangle]
pub extern "C" fn nuce_depart(
    b: *mut nuce_balancer,
    leaving: c_int,
    nleaving: *mut c_int,
) -> c_int {
    guard(|| {
        // SAFETY: `b` is NULL or a live handle.
        let h =
            unsafe { balancer(b) }.map_err(|_| unreachable_null("the balancer", "nuce_depart"))?;
        let _w = waiting();
        // SAFETY: `nleaving` is NULL or writable (contract).
        let local = unsafe { nleaving.as_mut() }.ok_or_else(|| null("nleaving"));
        let out = checked(local, |r| h.bal.entry("nuce_depart", r))?;
        h.departure = None;
        let d = h.bal.depart(leaving != 0)?;
        *out = d.leaving().len() as c_int;
        h.departure = Some(d);
        Ok(())
    })
}

/// Catches signal `signum` (`SIGTERM`, `SIGINT`, `SIGHUP`, `SIGUSR1`,
/// `SIGUSR2` or `SIGXCPU`) as this rank's leave notice (local): from now on
/// the signal sets a flag ([`nuce_leave_signalled`]) and calls the handler
/// installed for it before, if any (install yours first; without one the
/// signal no longer ends the process), and [`nuce_depart`] counts this rank
/// as leaving whatever its `leaving` says. Another signal is an error.
#[no_mangle]
pub extern "C" fn nuce_catch_leave_signal(signum: c_int) -> c_int {
    guard(|| nuce::catch_leave_signal(signum))
}

/// [`nuce_catch_leave_signal`] by the signal's name (`"SIGTERM"` or
/// `"TERM"`, any case): for Fortran, which has no `signal.h`.
#[no_mangle]
pub extern "C" fn nuce_catch_leave_signal_name(name: *const c_char) -> c_int {
    guard(|| {
        // SAFETY: `name` is NULL or a NUL-terminated string (contract).
        let name = unsafe { str_arg(name, "name") }?;
        nuce::catch_leave_signal(nuce::internals::leave_signal_number(&name)?)
    })
}

/// Writes 1 to `*flag` if a signal caught by [`nuce_catch_leave_signal`]
/// arrived on this rank, else 0 (local).
#[no_mangle]
pub extern "C" fn nuce_leave_signalled(flag: *mut c_int) -> c_int {
    guard(|| {
        // SAFETY: `flag` is NULL or writable (contract).
        let flag = unsafe { flag.as_mut() }.ok_or_else(|| null("flag"))?;
        *flag = c_int::from(nuce::leave_signalled());
        Ok(())
    })
}

/// Plans grid `g` for the ranks that stay, at their speeds, with an empty
/// box on every leaving rank, and leaves the move pending (collective over
/// the grid's ranks): then, as after `nuce_grid_maybe_remap` set
/// `*remapped`, ask the new box (`nuce_grid_box`), allocate new fields and
/// call `nuce_grid_move`. No departure (no `nuce_depart` before) or a move
/// already pending is the same error on every rank.
#[no_mangle]
pub extern "C" fn nuce_grid_depart(b: *mut nuce_balancer, g: *mut nuce_grid) -> c_int {
    guard(|| {
        // SAFETY: `b` and `g` are NULL or live handles.
        let h = unsafe { balancer(b) }
            .map_err(|_| unreachable_null("the balancer", "nuce_grid_depart"))?;
        // SAFETY: as above.
        let gh =
            unsafe { grid(g) }.map_err(|_| unreachable_null("the grid", "nuce_grid_depart"))?;
        let _w = waiting();
        let local = h
            .departure
            .as_ref()
            .ok_or_else(|| Error::invalid_input("no departure: call nuce_depart first"));
        let d = checked(local, |r| h.bal.entry("nuce_grid_depart", r))?;
        d.plan_grid(&h.bal, &mut gh.grid)
    })
}

/// Moves graph `g`'s vertices to the ranks that stay, in proportion to
/// their speeds, with their records read from the slot buffer `values`
/// (`len` records), moving the minimum (each rank that stays keeps its
/// vertices); collective over the graph's ranks. A leaving rank
/// owns no vertex afterwards. The layout has changed: after
/// [`nuce_depart_finish_all`], on a rank that stays, ask
/// `nuce_graph_sizes`, allocate a new slot buffer, `nuce_graph_read` and
/// exchange ghosts. No departure (no `nuce_depart` before) is the same
/// error on every rank.
#[no_mangle]
pub extern "C" fn nuce_graph_depart(
    b: *mut nuce_balancer,
    g: *mut nuce_graph,
    values: *const c_void,
    len: usize,
) -> c_int {
    guard(|| {
        // SAFETY: `b` and `g` are NULL or live handles.
        let h = unsafe { balancer(b) }
            .map_err(|_| unreachable_null("the balancer", "nuce_graph_depart"))?;
        // SAFETY: as above.
        let g =
            unsafe { graph(g) }.map_err(|_| unreachable_null("the graph", "nuce_graph_depart"))?;
        let _w = waiting();
        let local = h
            .departure
            .as_ref()
            .ok_or_else(|| Error::invalid_input("no departure: call nuce_depart first"));
        // SAFETY: `values` NULL or `len × elem_size` readable bytes (contract).
        let d = unsafe { g.loaded((values, len), local, "nuce_graph_depart") }?;
        g.plan_departure(d, &h.bal)
    })
}

/// Completes the departure (collective over the balancer's ranks): the
/// `ngrids` grids at `grids` (every grid of the balancer, each moved with
/// `nuce_grid_move` after [`nuce_grid_depart`]). On a rank that stays, the
/// balancer and the grid handles now act on the ranks that stay (the same
/// handles; boxes, costs and the application's buffers unchanged; the
/// first rank that stays is the new root), `*comm` is a new communicator
/// of the ranks that stay, in their old order, for the application's own
/// communication (free it with `MPI_Comm_free`), and `*released` is 0. On
/// a leaving rank `*comm` is `MPI_COMM_NULL` and `*released` is 1: the
/// rank holds no cells and must only free the balancer and the grids. A
/// grid whose move is pending, or one not planned for the departure, is
/// the same error on every rank, and nothing changes then.
#[no_mangle]
pub extern "C" fn nuce_depart_finish(
    b: *mut nuce_balancer,
    ngrids: c_int,
    grids: *const *mut nuce_grid,
    comm: *mut MPI_Comm,
    released: *mut c_int,
) -> c_int {
    nuce_depart_finish_all(b, ngrids, grids, 0, std::ptr::null(), comm, released)
}

/// [`nuce_depart_finish`] with the balancer's graphs too: the `ngraphs`
/// graphs at `graphs`, each moved with [`nuce_graph_depart`]; on a rank
/// that stays the graph handles, like the grids', act on the ranks that
/// stay (the same vertices; ask the sizes and read the records again, as
/// after a remap). A graph not moved for the departure is the same error
/// on every rank, and nothing changes then.
#[no_mangle]
pub extern "C" fn nuce_depart_finish_all(
    b: *mut nuce_balancer,
    ngrids: c_int,
    grids: *const *mut nuce_grid,
    ngraphs: c_int,
    graphs: *const *mut nuce_graph,
    comm: *mut MPI_Comm,
    released: *mut c_int,
) -> c_int {
    guard(|| {
        // SAFETY: `b` is NULL or a live handle.
        let h = unsafe { balancer(b) }
            .map_err(|_| unreachable_null("the balancer", "nuce_depart_finish"))?;
        let _w = waiting();
        // SAFETY: NULL or `ngrids` (`ngraphs`) readable handles, each NULL
        // or live and distinct; outputs NULL or writable (contract).
        let local = unsafe { finish_args(ngrids, grids, comm, released) }.and_then(|a| {
            // SAFETY: as above.
            let gs = unsafe { crate::handles(ngraphs, graphs, "graphs") }?;
            Ok((a, gs))
        });
        let local = local.and_then(|a| {
            h.departure
                .clone()
                .map(|d| (d, a))
                .ok_or_else(|| Error::invalid_input("no departure: call nuce_depart first"))
        });
        let (d, ((mut gs, comm, released), mut graphs)) =
            checked(local, |r| h.bal.entry("nuce_depart_finish", r))?;
        let mut refs: Vec<&mut dyn Departing> = gs
            .iter_mut()
            .map(|g| &mut g.grid as &mut dyn Departing)
            .chain(graphs.iter_mut().map(|g| g.departing()))
            .collect();
        // On an error nothing changed: the departure stays to finish again.
        let done = d.finish(&mut h.bal, &mut refs)?;
        h.departure = None;
        match done {
            Some(c) => {
                *comm = c.as_raw();
                // The application owns the communicator now.
                std::mem::forget(c);
                *released = 0;
            }
            None => {
                // SAFETY: reading a handle constant.
                *comm = unsafe { mpi::ffi::RSMPI_COMM_NULL };
                *released = 1;
            }
        }
        Ok(())
    })
}

/// The checked arguments of [`nuce_depart_finish`].
type FinishArgs<'a> = (Vec<&'a mut nuce_grid>, &'a mut MPI_Comm, &'a mut c_int);

/// # Safety
/// See [`nuce_depart_finish`].
unsafe fn finish_args<'a>(
    ngrids: c_int,
    grids: *const *mut nuce_grid,
    comm: *mut MPI_Comm,
    released: *mut c_int,
) -> Result<FinishArgs<'a>> {
    // SAFETY: the caller's contract.
    let gs = unsafe { grid_handles(ngrids, grids) }?;
    // SAFETY: NULL or writable (contract).
    let comm = unsafe { comm.as_mut() }.ok_or_else(|| null("comm"))?;
    // SAFETY: as above.
    let released = unsafe { released.as_mut() }.ok_or_else(|| null("released"))?;
    Ok((gs, comm, released))
}

/// `in_c_words` for the departure's runtime names.
pub(crate) const DEPART_NAMES: [(&str, &str); 4] = [
    ("Balancer::depart", "nuce_depart"),
    ("Departure::finish", "nuce_depart_finish"),
    ("Departure::plan_grid", "nuce_grid_depart"),
    ("Departure::plan_graph", "nuce_graph_depart"),
];

/// [`nuce_depart_finish`] for Fortran: `*comm` is the new communicator's
/// Fortran handle (`MPI_Comm_c2f`; that of `MPI_COMM_NULL` on a leaving rank).
#[no_mangle]
pub extern "C" fn nuce_depart_finish_f(
    b: *mut nuce_balancer,
    ngrids: c_int,
    grids: *const *mut nuce_grid,
    comm: *mut MPI_Fint,
    released: *mut c_int,
) -> c_int {
    nuce_depart_finish_all_f(b, ngrids, grids, 0, std::ptr::null(), comm, released)
}

/// [`nuce_depart_finish_all`] for Fortran: `*comm` is the new
/// communicator's Fortran handle (`MPI_Comm_c2f`; that of `MPI_COMM_NULL`
/// on a leaving rank).
#[no_mangle]
pub extern "C" fn nuce_depart_finish_all_f(
    b: *mut nuce_balancer,
    ngrids: c_int,
    grids: *const *mut nuce_grid,
    ngraphs: c_int,
    graphs: *const *mut nuce_graph,
    comm: *mut MPI_Fint,
    released: *mut c_int,
) -> c_int {
    let mut c = crate::pool::null_comm();
    let rc = nuce_depart_finish_all(b, ngrids, grids, ngraphs, graphs, &mut c, released);
    crate::pool::fortran_comm(c, comm);
    rc
}
