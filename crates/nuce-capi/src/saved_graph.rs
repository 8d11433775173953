//! Save files of graphs (`nuce_graph_save`, `nuce_saved_graph_*`): a
//! graph's vertices (ids, adjacency, weights, coordinates, records) in one
//! portable file, read back on any number of ranks. Built on
//! `nuce::DistGraph::save` and `nuce::SavedGraph`; the reference is
//! `docs/c-api.md`, section "Save and restart on another number of ranks".

use std::ffi::{c_char, c_int, c_void};

use nuce::{waiting, SavedGraph};

use crate::graph::{graph, nuce_graph};
use crate::savefile::{create_handle, open_handle, path_arg, user_bytes, write_speeds};
use crate::{balancer, free_handle, guard, nuce_balancer, null, unreachable_null};

/// A graph's save file opened for a restart (opaque), from
/// [`nuce_saved_graph_open`].
pub struct nuce_saved_graph {
    saved: SavedGraph,
}

/// Saves graph `g` — every vertex's global id, neighbours, edge and vertex
/// weights, coordinates and record (the owned records read from the slot
/// buffer `values` of `len` records) — and how it is balanced, with
/// `user_len` bytes of the application's own at `user` (may be NULL when
/// `user_len` is 0; at most 64 MiB), to the file `path` (collective over
/// the graph's ranks; the same path on every rank). Written under the
/// path with `.nuce-tmp` appended and renamed when every rank succeeded.
/// Errors are the same on every rank, and `path` is unchanged then.
#[no_mangle]
pub extern "C" fn nuce_graph_save(
    g: *mut nuce_graph,
    path: *const c_char,
    values: *const c_void,
    len: usize,
    user: *const c_void,
    user_len: usize,
) -> c_int {
    // SAFETY: the caller's contract (save_graph's).
    unsafe { save_graph(None, g, path, (values, len), (user, user_len)) }
}

/// [`nuce_graph_save`] that also saves the balancer's speed state: every
/// rank's speed, its estimate and noise, and its speed function (collective
/// over the balancer's ranks, which must be the graph's). A restart on as
/// many ranks as saved the file starts from those speeds; on another number
/// they are reported ([`nuce_saved_graph_speeds`]). Errors are the same on
/// every rank (a NULL balancer on some rank included), and `path` is
/// unchanged then.
#[no_mangle]
pub extern "C" fn nuce_graph_checkpoint(
    b: *mut nuce_balancer,
    g: *mut nuce_graph,
    path: *const c_char,
    values: *const c_void,
    len: usize,
    user: *const c_void,
    user_len: usize,
) -> c_int {
    // SAFETY: the caller's contract (save_graph's).
    unsafe { save_graph(Some(b), g, path, (values, len), (user, user_len)) }
}

/// The body of [`nuce_graph_save`] (`b`: `None`) and
/// [`nuce_graph_checkpoint`].
///
/// # Safety
/// `b` NULL or a live balancer, `g` NULL or a live graph, `path` NULL or a
/// string, `values` NULL or `len` records, `user` NULL or `user_len` bytes.
unsafe fn save_graph(
    b: Option<*mut nuce_balancer>,
    g: *mut nuce_graph,
    path: *const c_char,
    values: (*const c_void, usize),
    (user, user_len): (*const c_void, usize),
) -> c_int {
    let name = if b.is_some() {
        "nuce_graph_checkpoint"
    } else {
        "nuce_graph_save"
    };
    guard(|| {
        // SAFETY: `g` is NULL or a live handle.
        let g = unsafe { graph(g) }.map_err(|_| unreachable_null("the graph", name))?;
        let _w = waiting();
        // SAFETY: NULL or a live balancer; NULL or a string; NULL or
        // `user_len` bytes (contract).
        let local = unsafe {
            b.map(|b| balancer(b).map(|hb| &hb.bal))
                .transpose()
                .and_then(|bal| Ok((bal, path_arg(path)?, user_bytes(user, user_len)?)))
        };
        // SAFETY: `values` NULL or `len × elem_size` readable bytes (contract).
        let (bal, p, u) = unsafe { g.loaded(values, local, name) }?;
        g.save(&p, u, bal)
    })
}

/// Opens the graph's save file `path` (collective over the balancer's
/// ranks, which may be more or fewer than those that saved it; the same
/// path on every rank) and writes the handle to `*out`. A missing file,
/// not a nuce save file, a grid's save file, another format, a corrupt
/// header or a truncated file is the same error on every rank.
#[no_mangle]
pub extern "C" fn nuce_saved_graph_open(
    b: *mut nuce_balancer,
    path: *const c_char,
    out: *mut *mut nuce_saved_graph,
) -> c_int {
    // SAFETY: the caller's contract (the same as open_handle's).
    unsafe {
        open_handle(b, path, out, "nuce_saved_graph_open", |bal, p| {
            Ok(nuce_saved_graph {
                saved: SavedGraph::open(bal.comm(), p)?,
            })
        })
    }
}

/// The saved graph (local): its number of vertices, the number of ranks
/// that saved it, and the application's bytes given to
/// [`nuce_graph_save`] (`*user` points into the handle, valid until
/// [`nuce_saved_graph_free`]; `*user_len` their number). Any output
/// pointer may be NULL.
#[no_mangle]
pub extern "C" fn nuce_saved_graph_info(
    s: *const nuce_saved_graph,
    n: *mut i64,
    saved_ranks: *mut c_int,
    user: *mut *const c_void,
    user_len: *mut usize,
) -> c_int {
    guard(|| {
        // SAFETY: `s` is NULL or a live handle.
        let sv = &unsafe { s.as_ref() }.ok_or_else(|| null("saved"))?.saved;
        // SAFETY: each output is NULL or writable (contract).
        unsafe {
            if let Some(n) = n.as_mut() {
                *n = sv.global_len() as i64;
            }
            if let Some(r) = saved_ranks.as_mut() {
                *r = sv.saved_ranks() as c_int;
            }
            if let Some(u) = user.as_mut() {
                *u = sv.user().as_ptr().cast();
            }
            if let Some(l) = user_len.as_mut() {
                *l = sv.user().len();
            }
        }
        Ok(())
    })
}

/// The speeds of the ranks that wrote a graph's checkpoint (local), as
/// [`crate::nuce_saved_speeds`] gives a grid's: `*count` is their number (0
/// without), the first `min(n, *count)` are written to `speeds`. On as many
/// ranks as saved the file, [`nuce_saved_graph_create`] starts from them
/// when the balancer knows no speeds yet.
#[no_mangle]
pub extern "C" fn nuce_saved_graph_speeds(
    s: *const nuce_saved_graph,
    n: c_int,
    speeds: *mut f64,
    count: *mut c_int,
) -> c_int {
    // SAFETY: `s` is NULL or a live handle (contract).
    let sv = unsafe { s.as_ref() }.map(|h| h.saved.speeds());
    // SAFETY: the caller's contract (write_speeds').
    unsafe { write_speeds(sv, n, speeds, count) }
}

/// The saved graph on the balancer's ranks, distributed for the
/// balancer's current speeds (measure them first for a balanced restart),
/// with `elem_size`-byte records (the size it was saved with; the same on
/// every rank), its handle written to `*out` (collective; a balance
/// point). A graph saved from [`crate::nuce_graph_from_local`] is read in
/// slices by every rank and cut in parallel; one from
/// [`crate::nuce_graph_scatter`] is read by rank 0 and scattered. Copy this
/// rank's records out with [`crate::nuce_graph_read`] and exchange ghosts.
/// Records of another size, or a corrupt file, are the same error on every
/// rank.
#[no_mangle]
pub extern "C" fn nuce_saved_graph_create(
    s: *const nuce_saved_graph,
    b: *mut nuce_balancer,
    elem_size: usize,
    out: *mut *mut nuce_graph,
) -> c_int {
    // SAFETY: the caller's contract (the same as create_handle's).
    unsafe {
        create_handle(s, b, out, "nuce_saved_graph_create", |sv, bal| {
            nuce_graph::restarted(bal, &sv.saved, elem_size)
        })
    }
}

/// Frees a graph's save-file handle (local; NULL is ignored).
#[no_mangle]
pub extern "C" fn nuce_saved_graph_free(s: *mut nuce_saved_graph) -> c_int {
    // SAFETY: `s` is NULL or came from nuce_saved_graph_open, freed once
    // (contract).
    unsafe { free_handle(s) }
}

/// `in_c_words` for the graph save files' runtime names.
pub(crate) const SAVED_GRAPH_NAMES: [(&str, &str); 3] = [
    ("DistGraph::save", "nuce_graph_save"),
    ("SavedGraph::new_graph", "nuce_saved_graph_create"),
    ("SavedGraph::open", "nuce_saved_graph_open"),
];
