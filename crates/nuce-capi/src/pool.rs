//! Ranks that join a running job from a standby pool (`nuce_pool_*`).
//! Built on `nuce::Pool`; the reference is `docs/c-api.md`, section "Ranks
//! that join".

use std::ffi::{c_int, c_void};
use std::mem::ManuallyDrop;

use mpi::raw::{AsRaw, FromRaw};
use mpi::topology::SimpleCommunicator;
use mpi::traits::*;
use nuce::{waiting, Error, Joining, Pool, Result};

use crate::graph::nuce_graph;
use crate::grid::{grid_handles, nuce_grid};
use crate::nuce_balancer;
use crate::{
    balancer, checked, entries, free_handle, guard, null, unreachable_null, MPI_Comm, MPI_Fint,
};

/// The job's ranks split into active ranks and a standby pool (opaque),
/// from [`nuce_pool_create`].
pub struct nuce_pool {
    pool: Pool,
}

/// Splits the ranks of `comm` into active ranks and a standby pool
/// (collective over `comm`; `standby` is each rank's own choice, at least
/// one rank active) and writes the handle to `*out`. On an active rank
/// `*active` is a new communicator of the active ranks, for
/// `nuce_balancer_create` and the application (free it with
/// `MPI_Comm_free`); on a standby rank it is `MPI_COMM_NULL`: call
/// [`nuce_pool_wait`].
#[no_mangle]
pub extern "C" fn nuce_pool_create(
    comm: MPI_Comm,
    standby: c_int,
    active: *mut MPI_Comm,
    out: *mut *mut nuce_pool,
) -> c_int {
    guard(|| {
        let _w = waiting();
        // SAFETY: reading a handle constant.
        if comm == unsafe { mpi::ffi::RSMPI_COMM_NULL } {
            return Err(null("comm (MPI_COMM_NULL)"));
        }
        // SAFETY: outputs NULL or writable (contract).
        let (active, out) = unsafe { (active.as_mut(), out.as_mut()) };
        let (active, out) = (
            active.ok_or_else(|| null("active"))?,
            out.ok_or_else(|| null("out"))?,
        );
        // SAFETY: a live communicator of the caller, borrowed (never freed here).
        let borrowed = ManuallyDrop::new(unsafe { SimpleCommunicator::from_raw(comm) });
        let pool = Pool::new(&*borrowed, standby != 0)?;
        *active = match pool.active() {
            Some(c) => {
                let dup = mpi::traits::Communicator::duplicate(c);
                let raw = dup.as_raw();
                // The application owns it now.
                std::mem::forget(dup);
                raw
            }
            // SAFETY: reading a handle constant.
            None => unsafe { mpi::ffi::RSMPI_COMM_NULL },
        };
        *out = Box::into_raw(Box::new(nuce_pool { pool }));
        Ok(())
    })
}

/// On a standby rank: sleeps until the active ranks admit this rank or
/// release the pool (collective with their [`nuce_pool_admit`] and
/// [`nuce_pool_release`]). Admitted: `*joined = 1`, `*comm` the grown
/// communicator (free it with `MPI_Comm_free`), `*b` a balancer on it,
/// `*ngrids` grid handles written to `grids` (room for `max_grids`), each
/// with a move pending: ask the box (`nuce_grid_box`), allocate, and
/// `nuce_grid_move` with empty old fields (`data` NULL). Released:
/// `*joined = 0`: free the pool and finalize. The active ranks' graphs
/// ([`nuce_pool_admit_all`]) need [`nuce_pool_wait_all`].
#[no_mangle]
pub extern "C" fn nuce_pool_wait(
    p: *mut nuce_pool,
    joined: *mut c_int,
    comm: *mut MPI_Comm,
    b: *mut *mut nuce_balancer,
    max_grids: c_int,
    grids: *mut *mut nuce_grid,
    ngrids: *mut c_int,
) -> c_int {
    let mut ngraphs = 0;
    nuce_pool_wait_all(
        p,
        joined,
        comm,
        b,
        max_grids,
        grids,
        ngrids,
        0,
        std::ptr::null_mut(),
        &mut ngraphs,
    )
}

/// [`nuce_pool_wait`] with the active ranks' graphs too: `*ngraphs` graph
/// handles written to `graphs` (room for `max_graphs`), in the order the
/// active ranks passed them to [`nuce_pool_admit_all`], this rank's
/// vertices already moved in: ask `nuce_graph_sizes`, allocate a slot
/// buffer, `nuce_graph_read` and exchange ghosts. Give room for every grid and graph
/// the active ranks admit: too little room is an error on this rank only,
/// after the admission (the active ranks go on with this rank).
#[no_mangle]
#[allow(clippy::too_many_arguments)] // the C signature
pub extern "C" fn nuce_pool_wait_all(
    p: *mut nuce_pool,
    joined: *mut c_int,
    comm: *mut MPI_Comm,
    b: *mut *mut nuce_balancer,
    max_grids: c_int,
    grids: *mut *mut nuce_grid,
    ngrids: *mut c_int,
    max_graphs: c_int,
    graphs: *mut *mut nuce_graph,
    ngraphs: *mut c_int,
) -> c_int {
    guard(|| {
        // SAFETY: `p` is NULL or a live handle; outputs NULL or writable.
        let h = unsafe { p.as_mut() }.ok_or_else(|| null("pool"))?;
        let (joined, comm, b, ngrids, ngraphs) = unsafe {
            (
                joined.as_mut(),
                comm.as_mut(),
                b.as_mut(),
                ngrids.as_mut(),
                ngraphs.as_mut(),
            )
        };
        let joined = joined.ok_or_else(|| null("joined"))?;
        let comm = comm.ok_or_else(|| null("comm"))?;
        let b = b.ok_or_else(|| null("b"))?;
        let ngrids = ngrids.ok_or_else(|| null("ngrids"))?;
        let ngraphs = ngraphs.ok_or_else(|| null("ngraphs"))?;
        let (grid_room, graph_room) = (
            room(max_grids, grids, "grids")?,
            room(max_graphs, graphs, "graphs")?,
        );
        let _w = waiting();
        *joined = 0;
        *ngrids = 0;
        *ngraphs = 0;
        let Some(mut j) = h.pool.wait()? else {
            // SAFETY: reading a handle constant.
            *comm = unsafe { mpi::ffi::RSMPI_COMM_NULL };
            return Ok(());
        };
        // Collective with the active ranks' admission: taken before any
        // local check.
        let gs = nuce_graph::joined(&mut j)?;
        for (what, n, max) in [
            ("grids", j.grids.len(), grid_room),
            ("graphs", gs.len(), graph_room),
        ] {
            if n > max {
                return Err(Error::invalid_input(format!(
                    "the active ranks have {n} {what}, max_{what} is {max}"
                )));
            }
        }
        for (k, g) in j.grids.into_iter().enumerate() {
            // SAFETY: `grids` holds `grid_room ≥ k + 1` writable slots (contract).
            unsafe { *grids.add(k) = Box::into_raw(Box::new(nuce_grid { grid: g })) };
            *ngrids += 1;
        }
        for (k, g) in gs.into_iter().enumerate() {
            // SAFETY: `graphs` holds `graph_room ≥ k + 1` writable slots (contract).
            unsafe { *graphs.add(k) = Box::into_raw(Box::new(g)) };
            *ngraphs += 1;
        }
        *b = crate::new_balancer_handle(j.balancer);
        *comm = j.comm.as_raw();
        std::mem::forget(j.comm);
        *joined = 1;
        Ok(())
    })
}

/// The room `max` of an output array `out` (NULL only when 0).
fn room<T>(max: c_int, out: *mut T, what: &str) -> Result<usize> {
    let room = usize::try_from(max)
        .map_err(|_| Error::invalid_input(format!("max_{what} = {max}: at least 0")))?;
    if room > 0 && out.is_null() {
        return Err(null(what));
    }
    Ok(room)
}

/// On the active ranks (collective with them and every waiting standby
/// rank), at a balance point: admits `count` standby ranks. `b` and the
/// `ngrids` grids at `grids` now work on the grown communicator (the same
/// handles; the active ranks first, the root unchanged), every rank's
/// speed is measured, and each grid is planned for them with a **move
/// pending**: ask the new box, allocate, `nuce_grid_move`. `*comm` is the
/// grown communicator for the application's own communication (the new
/// ranks need the application's state, e.g. the step; free it with
/// `MPI_Comm_free`). Too many ranks, or a grid with a move pending, is the
/// same error on every active rank, and nothing changes. Graphs join with
/// [`nuce_pool_admit_all`].
#[no_mangle]
pub extern "C" fn nuce_pool_admit(
    p: *mut nuce_pool,
    b: *mut nuce_balancer,
    count: c_int,
    ngrids: c_int,
    grids: *const *mut nuce_grid,
    comm: *mut MPI_Comm,
) -> c_int {
    nuce_pool_admit_all(
        p,
        b,
        count,
        ngrids,
        grids,
        0,
        std::ptr::null(),
        std::ptr::null(),
        std::ptr::null(),
        comm,
    )
}

/// [`nuce_pool_admit`] with graphs too: the `ngraphs` graphs at `graphs`,
/// graph `k`'s records read from its slot buffer `values[k]` of `lens[k]`
/// records, are cut again for every rank (along their order, in
/// proportion to the measured speeds) and moved at once; on the admitted
/// ranks they come from [`nuce_pool_wait_all`], in this order. Afterwards,
/// as after a remap: `nuce_graph_sizes`, a new slot buffer,
/// `nuce_graph_read`, exchange ghosts. A graph balanced by a
/// root index (`nuce_graph_scatter`) cannot join; it, a NULL or short slot
/// buffer on any rank, or anything `nuce_pool_admit` refuses is the same
/// error on every active rank, and nothing changes.
#[no_mangle]
#[allow(clippy::too_many_arguments)] // the C signature
pub extern "C" fn nuce_pool_admit_all(
    p: *mut nuce_pool,
    b: *mut nuce_balancer,
    count: c_int,
    ngrids: c_int,
    grids: *const *mut nuce_grid,
    ngraphs: c_int,
    graphs: *const *mut nuce_graph,
    values: *const *const c_void,
    lens: *const usize,
    comm: *mut MPI_Comm,
) -> c_int {
    guard(|| {
        // SAFETY: `b` is NULL or a live handle.
        let hb = unsafe { balancer(b) }
            .map_err(|_| unreachable_null("the balancer", "nuce_pool_admit"))?;
        let _w = waiting();
        // SAFETY: `p` NULL or live; `grids` NULL or `ngrids` distinct live
        // handles, `graphs` likewise with `values` and `lens` NULL or
        // `ngraphs` readable entries; `comm` NULL or writable (contract).
        let local = unsafe { admit_args(p, count, ngrids, grids, comm) }.and_then(|a| {
            // SAFETY: as above.
            let gs = unsafe { crate::handles(ngraphs, graphs, "graphs") }?;
            let n = gs.len();
            // SAFETY: as above.
            let (values, lens) =
                unsafe { (entries(values, n, "values")?, entries(lens, n, "lens")?) };
            // Every slot buffer checked before the call's one checked entry.
            let apps = gs
                .iter()
                .zip(values.iter().zip(lens))
                // SAFETY: `v` NULL or `len × elem_size` readable bytes (contract).
                .map(|(g, (&v, &len))| unsafe { g.values(v, len) })
                .collect::<Result<Vec<&[u8]>>>()?;
            Ok((a, gs, apps))
        });
        let ((h, count, mut gs, comm), mut graphs, apps) =
            checked(local, |r| hb.bal.entry("nuce_pool_admit", r))?;
        for (g, app) in graphs.iter_mut().zip(apps) {
            g.load(app);
        }
        let mut elems: Vec<u64> = graphs.iter().map(|g| g.record_size() as u64).collect();
        let mut refs: Vec<&mut dyn Joining> = gs
            .iter_mut()
            .map(|g| &mut g.grid as &mut dyn Joining)
            .chain(graphs.iter_mut().map(|g| g.joining()))
            .collect();
        let c = h.pool.admit(&mut hb.bal, count, &mut refs)?;
        // The admitted ranks' graph handles need the records' size.
        hb.bal
            .comm()
            .process_at_rank(nuce::ROOT)
            .broadcast_into(&mut elems[..]);
        *comm = c.as_raw();
        std::mem::forget(c);
        Ok(())
    })
}

/// The checked arguments of [`nuce_pool_admit`].
type AdmitArgs<'a> = (
    &'a mut nuce_pool,
    usize,
    Vec<&'a mut nuce_grid>,
    &'a mut MPI_Comm,
);

/// # Safety
/// See [`nuce_pool_admit`].
unsafe fn admit_args<'a>(
    p: *mut nuce_pool,
    count: c_int,
    ngrids: c_int,
    grids: *const *mut nuce_grid,
    comm: *mut MPI_Comm,
) -> Result<AdmitArgs<'a>> {
    // SAFETY: the caller's contract.
    let h = unsafe { p.as_mut() }.ok_or_else(|| null("pool"))?;
    let count = usize::try_from(count)
        .map_err(|_| Error::invalid_input(format!("count = {count}: at least 1")))?;
    // SAFETY: the caller's contract.
    let gs = unsafe { grid_handles(ngrids, grids) }?;
    // SAFETY: NULL or writable (contract).
    let comm = unsafe { comm.as_mut() }.ok_or_else(|| null("comm"))?;
    Ok((h, count, gs, comm))
}

/// On the active ranks (collective with them and every waiting standby
/// rank): releases the pool; every waiting rank's [`nuce_pool_wait`]
/// returns with `*joined = 0`. Call it before the active ranks finalize.
#[no_mangle]
pub extern "C" fn nuce_pool_release(p: *mut nuce_pool, b: *mut nuce_balancer) -> c_int {
    guard(|| {
        // SAFETY: `b` is NULL or a live handle.
        let hb = unsafe { balancer(b) }
            .map_err(|_| unreachable_null("the balancer", "nuce_pool_release"))?;
        let _w = waiting();
        // SAFETY: `p` is NULL or a live handle.
        let local = unsafe { p.as_mut() }.ok_or_else(|| null("pool"));
        let h = checked(local, |r| hb.bal.entry("nuce_pool_release", r))?;
        h.pool.release(&hb.bal)
    })
}

/// Frees a pool handle (local; NULL is ignored).
#[no_mangle]
pub extern "C" fn nuce_pool_free(p: *mut nuce_pool) -> c_int {
    // SAFETY: `p` is NULL or came from nuce_pool_create, freed once (contract).
    unsafe { free_handle(p) }
}

/// [`nuce_pool_create`] for Fortran handles (`MPI_Comm_f2c` / `MPI_Comm_c2f`).
#[no_mangle]
pub extern "C" fn nuce_pool_create_f(
    comm: MPI_Fint,
    standby: c_int,
    active: *mut MPI_Fint,
    out: *mut *mut nuce_pool,
) -> c_int {
    // SAFETY: MPI_Comm_f2c converts a handle value (an invalid one gives
    // MPI_COMM_NULL, which nuce_pool_create rejects).
    let c = unsafe { mpi::ffi::RSMPI_Comm_f2c(comm) };
    let mut a = null_comm();
    let rc = nuce_pool_create(c, standby, &mut a, out);
    fortran_comm(a, active);
    rc
}

/// [`nuce_pool_wait`] with the grown communicator as a Fortran handle.
#[no_mangle]
pub extern "C" fn nuce_pool_wait_f(
    p: *mut nuce_pool,
    joined: *mut c_int,
    comm: *mut MPI_Fint,
    b: *mut *mut nuce_balancer,
    max_grids: c_int,
    grids: *mut *mut nuce_grid,
    ngrids: *mut c_int,
) -> c_int {
    let mut c = null_comm();
    let rc = nuce_pool_wait(p, joined, &mut c, b, max_grids, grids, ngrids);
    fortran_comm(c, comm);
    rc
}

/// [`nuce_pool_admit`] with the grown communicator as a Fortran handle.
#[no_mangle]
pub extern "C" fn nuce_pool_admit_f(
    p: *mut nuce_pool,
    b: *mut nuce_balancer,
    count: c_int,
    ngrids: c_int,
    grids: *const *mut nuce_grid,
    comm: *mut MPI_Fint,
) -> c_int {
    let mut c = null_comm();
    let rc = nuce_pool_admit(p, b, count, ngrids, grids, &mut c);
    fortran_comm(c, comm);
    rc
}

/// [`nuce_pool_wait_all`] with the grown communicator as a Fortran handle.
#[no_mangle]
#[allow(clippy::too_many_arguments)] // the C signature
pub extern "C" fn nuce_pool_wait_all_f(
    p: *mut nuce_pool,
    joined: *mut c_int,
    comm: *mut MPI_Fint,
    b: *mut *mut nuce_balancer,
    max_grids: c_int,
    grids: *mut *mut nuce_grid,
    ngrids: *mut c_int,
    max_graphs: c_int,
    graphs: *mut *mut nuce_graph,
    ngraphs: *mut c_int,
) -> c_int {
    let mut c = null_comm();
    let rc = nuce_pool_wait_all(
        p, joined, &mut c, b, max_grids, grids, ngrids, max_graphs, graphs, ngraphs,
    );
    fortran_comm(c, comm);
    rc
}

/// [`nuce_pool_admit_all`] with the grown communicator as a Fortran handle.
#[no_mangle]
#[allow(clippy::too_many_arguments)] // the C signature
pub extern "C" fn nuce_pool_admit_all_f(
    p: *mut nuce_pool,
    b: *mut nuce_balancer,
    count: c_int,
    ngrids: c_int,
    grids: *const *mut nuce_grid,
    ngraphs: c_int,
    graphs: *const *mut nuce_graph,
    values: *const *const c_void,
    lens: *const usize,
    comm: *mut MPI_Fint,
) -> c_int {
    let mut c = null_comm();
    let rc = nuce_pool_admit_all(
        p, b, count, ngrids, grids, ngraphs, graphs, values, lens, &mut c,
    );
    fortran_comm(c, comm);
    rc
}

/// `MPI_COMM_NULL`.
pub(crate) fn null_comm() -> MPI_Comm {
    // SAFETY: reading a handle constant.
    unsafe { mpi::ffi::RSMPI_COMM_NULL }
}

/// Writes `c`'s Fortran handle to `out` (when not NULL).
pub(crate) fn fortran_comm(c: MPI_Comm, out: *mut MPI_Fint) {
    // SAFETY: `out` is NULL or writable (contract of the callers).
    if let Some(out) = unsafe { out.as_mut() } {
        // SAFETY: a communicator handle or MPI_COMM_NULL.
        *out = unsafe { mpi::ffi::RSMPI_Comm_c2f(c) };
    }
}

/// `in_c_words` for the pool's runtime names.
pub(crate) const POOL_NAMES: [(&str, &str); 4] = [
    ("Pool::admit", "nuce_pool_admit"),
    ("Pool::release", "nuce_pool_release"),
    ("Pool::wait", "nuce_pool_wait"),
    ("Pool::new", "nuce_pool_create"),
];
