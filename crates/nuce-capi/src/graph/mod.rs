//! The distributed graph behind `nuce_graph`: a [`DistGraph`] of opaque
//! `elem_size`-byte vertex records.
//!
//! The runtime moves values of a fixed size ([`GraphValue`]): a record is
//! kept as a `[u8; N]` of the smallest supported size `N` ≥ `elem_size`
//! ([`RECORD_SIZES`], up to 4096 bytes), its tail zero, and only `elem_size`
//! bytes are copied to and from the application.
//!
//! The application owns its memory: its records live in its own *slot
//! buffer* of `owned + ghosts` records — this rank's owned vertices (in
//! increasing global id) followed by its ghosts (in increasing global id),
//! the numbering of the local adjacency. The library keeps one copy of the
//! owned records (and of the ghosts' after an exchange) in the graph, into
//! which it copies the application's owned records before anything moves,
//! and out of which it copies what arrived.
//!
//! The records of any size are in `records`, the two ways to create a
//! handle in `create`; this file holds the handle and its verbs.

use std::ffi::{c_int, c_void};

use mpi::traits::*;
use nuce::collective::{agree, check_identical};
use nuce::plan::graph::Partition;
use nuce::{
    waiting, Balancer, Departing, Departure, Error, GraphValue, JoinItem, Joined, Joining, Result,
};

mod create;
mod records;

pub use create::*;

use records::{build_padded, record_size, Build, Records};

use crate::{
    balancer, buffer, buffer_mut, checked, deref_mut, free_handle, guard, nuce_balancer, null,
    unreachable_null,
};

/// A saved graph restarted through the balancer ([`nuce::SavedGraph::new_graph`]).
struct Restart<'a> {
    bal: &'a mut Balancer,
    saved: &'a nuce::SavedGraph,
}

impl Build for Restart<'_> {
    fn build<const N: usize>(self, _elem: usize) -> Result<Box<dyn Records>>
    where
        [u8; N]: GraphValue,
    {
        Ok(Box::new(self.saved.new_graph::<[u8; N]>(self.bal)?))
    }
}

/// On an admitted rank, the next graph of an admission ([`Joined::graph`]),
/// records padded as the active ranks' are.
struct Join<'a> {
    joined: &'a mut Joined,
}

impl Build for Join<'_> {
    fn build<const N: usize>(self, _elem: usize) -> Result<Box<dyn Records>>
    where
        [u8; N]: GraphValue,
    {
        Ok(Box::new(self.joined.graph::<[u8; N]>()?))
    }
}

/// A distributed graph (opaque) with one `elem_size`-byte record per
/// vertex, bound to the balancer that created it.
pub struct nuce_graph {
    g: Box<dyn Records>,
    elem: usize,
}

impl nuce_graph {
    /// Records of the slot buffer: owned, then ghosts.
    fn slots(&self) -> usize {
        self.g.owned().len() + self.g.ghosts().len()
    }

    /// The application's slot buffer, checked collectively: every rank gets
    /// the same error if any rank's is NULL or of the wrong length. The
    /// agreement blocks (it is on every ghost exchange, where a round trip
    /// to the root would cost too much): a watchdog guard of the graph's
    /// timeout ends the job if a rank never comes (`call` names it).
    ///
    /// # Safety
    /// `p` is NULL or `len × elem_size` readable bytes.
    unsafe fn agreed<'a>(&self, p: *const c_void, len: usize, call: &str) -> Result<&'a [u8]> {
        // SAFETY: the caller's contract.
        let local =
            crate::caller::refused_or(unsafe { buffer(p, len, self.slots(), self.elem, "values") });
        let world = mpi::topology::SimpleCommunicator::world().rank();
        let _dog = nuce::guard(world, call, self.g.timeout());
        agree(self.g.comm(), 0, local)
    }

    /// This rank's slot buffer, unchecked by the others (see [`checked`]).
    ///
    /// # Safety
    /// `p` is NULL or `len × elem_size` readable bytes.
    pub(crate) unsafe fn values<'a>(&self, p: *const c_void, len: usize) -> Result<&'a [u8]> {
        // SAFETY: the caller's contract.
        unsafe { buffer(p, len, self.slots(), self.elem, "values") }
    }

    /// Copies the owned records of the application's slot buffer in.
    pub(crate) fn load(&mut self, app: &[u8]) {
        self.g.load(app, self.elem);
    }

    /// The saved graph `saved` on the balancer's ranks, `elem`-byte records
    /// (checked: the same on every rank, a supported size; the saved
    /// records' padded size must be this one's). Collective.
    pub(crate) fn restarted(
        bal: &mut Balancer,
        saved: &nuce::SavedGraph,
        elem: usize,
    ) -> Result<nuce_graph> {
        check_identical(bal.comm(), 0, "elem_size", &elem)?;
        agree(bal.comm(), 0, record_size(elem))?;
        let g = build_padded(Restart { bal, saved }, elem)?;
        Ok(nuce_graph { g, elem })
    }

    /// The checked entry of `op` with this rank's slot buffer at `values`
    /// (`len` records) and its other arguments `local`, then the owned
    /// records loaded: `local` back (collective).
    ///
    /// # Safety
    /// `values` is NULL or `len × elem_size` readable bytes.
    pub(crate) unsafe fn loaded<L>(
        &mut self,
        (values, len): (*const c_void, usize),
        local: Result<L>,
        op: &str,
    ) -> Result<L> {
        // SAFETY: the caller's contract.
        let app = unsafe { self.values(values, len) };
        let local = local.and_then(|l| Ok((l, app?)));
        let (l, app) = checked(local, |r| self.g.entry(op, r))?;
        self.load(app);
        Ok(l)
    }

    /// Saves the graph ([`nuce::DistGraph::save`]; collective), with
    /// `bal`'s speed state when given.
    pub(crate) fn save(&self, path: &str, user: &[u8], bal: Option<&Balancer>) -> Result<()> {
        self.g.save(path, user, bal)
    }

    /// Moves the vertices off the leaving ranks of `d` (collective).
    pub(crate) fn plan_departure(&mut self, d: &Departure, bal: &Balancer) -> Result<()> {
        self.g.plan_departure(d, bal)
    }

    /// The graph as data that a departure carries over.
    pub(crate) fn departing(&mut self) -> &mut dyn Departing {
        self.g.departing()
    }

    /// The graph as data that standby ranks join.
    pub(crate) fn joining(&mut self) -> &mut dyn Joining {
        self.g.joining()
    }

    /// The size of the application's records (bytes).
    pub(crate) fn record_size(&self) -> usize {
        self.elem
    }

    /// On an admitted rank: the graphs of an admission, in order (every item
    /// left in `joined` must be a graph: the C API admits grids and graphs;
    /// collective with the active ranks' admission), then the records'
    /// size of each from the active ranks' root (`elems`, one per graph,
    /// broadcast on the grown balancer's communicator after the admission).
    pub(crate) fn joined(joined: &mut Joined) -> Result<Vec<nuce_graph>> {
        let mut graphs = Vec::new();
        while let Some(item) = joined.items_left().front() {
            // Records are stored padded to N bytes; the item carries N.
            let padded = match item {
                JoinItem::Graph(_, bytes, _) => *bytes,
                _ => 1, // not a graph: `Joined::graph` refuses it on every rank
            };
            let g = build_padded(Join { joined }, padded)?;
            graphs.push(nuce_graph { g, elem: 0 });
        }
        let mut elems = vec![0u64; graphs.len()];
        joined
            .balancer
            .comm()
            .process_at_rank(nuce::ROOT)
            .broadcast_into(&mut elems[..]);
        for (g, e) in graphs.iter_mut().zip(elems) {
            g.elem = e as usize;
        }
        Ok(graphs)
    }
}

/// The graph behind a handle.
///
/// # Safety
/// `g` is NULL or a live handle from [`nuce_graph_scatter`] or
/// [`nuce_graph_from_local`].
pub(crate) unsafe fn graph<'a>(g: *mut nuce_graph) -> Result<&'a mut nuce_graph> {
    // SAFETY: the caller's contract.
    unsafe { deref_mut(g, "graph") }
}

/// Frees a graph (local; NULL is ignored).
#[no_mangle]
pub extern "C" fn nuce_graph_free(g: *mut nuce_graph) -> c_int {
    // SAFETY: `g` is NULL or came from nuce_graph_scatter, freed once (contract).
    unsafe { free_handle(g) }
}

/// This rank's sizes (local; any pointer may be NULL to skip it): `*owned`
/// vertices, `*ghosts` (neighbours owned by other ranks), `*arcs` (entries
/// of the local adjacency). The slot buffer has `owned + ghosts` records.
#[no_mangle]
pub extern "C" fn nuce_graph_sizes(
    g: *mut nuce_graph,
    owned: *mut usize,
    ghosts: *mut usize,
    arcs: *mut usize,
) -> c_int {
    guard(|| {
        // SAFETY: `g` is NULL or a live handle.
        let g = unsafe { graph(g) }?;
        let no = g.g.owned().len();
        let na = (0..no).map(|i| g.g.neighbors(i).len()).sum();
        for (p, v) in [(owned, no), (ghosts, g.g.ghosts().len()), (arcs, na)] {
            // SAFETY: NULL or writable (contract).
            if let Some(p) = unsafe { p.as_mut() } {
                *p = v;
            }
        }
        Ok(())
    })
}

/// The size of the graph's records in bytes (local): the `elem_size` it
/// was made with (on a rank that joined it, the active ranks').
#[no_mangle]
pub extern "C" fn nuce_graph_record_size(g: *mut nuce_graph, elem_size: *mut usize) -> c_int {
    guard(|| {
        // SAFETY: `g` is NULL or a live handle; `elem_size` NULL or writable.
        let (g, out) = unsafe { (graph(g)?, elem_size.as_mut()) };
        *out.ok_or_else(|| null("elem_size"))? = g.elem;
        Ok(())
    })
}

/// Copies global ids into the caller's buffer of `len` entries.
///
/// # Safety
/// `out` is NULL or `len` writable int64_t.
unsafe fn write_ids(ids: &[usize], out: *mut i64, len: usize, what: &str) -> Result<()> {
    // SAFETY: the caller's contract.
    let o = unsafe { buffer_mut(out.cast(), len, ids.len(), 8, what) }?;
    for (d, &x) in o.chunks_exact_mut(8).zip(ids) {
        d.copy_from_slice(&(x as i64).to_ne_bytes());
    }
    Ok(())
}

/// The global ids of this rank's owned vertices, increasing, into
/// `ids[len]` (`len` = owned; local).
#[no_mangle]
pub extern "C" fn nuce_graph_owned(g: *mut nuce_graph, ids: *mut i64, len: usize) -> c_int {
    guard(|| {
        // SAFETY: `g` is NULL or a live handle; `ids` NULL or `len` writable.
        unsafe { write_ids(graph(g)?.g.owned(), ids, len, "ids") }
    })
}

/// The global ids of this rank's ghosts, increasing, into `ids[len]` (`len`
/// = ghosts; local). Ghost `k` is slot `owned + k`.
#[no_mangle]
pub extern "C" fn nuce_graph_ghosts(g: *mut nuce_graph, ids: *mut i64, len: usize) -> c_int {
    guard(|| {
        // SAFETY: `g` is NULL or a live handle; `ids` NULL or `len` writable.
        unsafe { write_ids(graph(g)?.g.ghosts(), ids, len, "ids") }
    })
}

/// This rank's adjacency in slots (local): the neighbours of owned vertex
/// `i` are `adjncy[xadj[i] .. xadj[i + 1]]`, each a slot (`< owned`: an
/// owned vertex, otherwise ghost `slot − owned`), in the order of the
/// global CSR; `ewgt` (NULL allowed) gets their edge weights. Lengths:
/// `xadj_len` = owned + 1, `arcs` = the arcs of [`nuce_graph_sizes`].
#[no_mangle]
pub extern "C" fn nuce_graph_adjacency(
    g: *mut nuce_graph,
    xadj: *mut i64,
    xadj_len: usize,
    adjncy: *mut i64,
    ewgt: *mut f64,
    arcs: usize,
) -> c_int {
    guard(|| {
        // SAFETY: `g` is NULL or a live handle.
        let g = unsafe { graph(g) }?;
        let no = g.g.owned().len();
        let (mut offsets, mut slots, mut weights) = (vec![0usize], Vec::new(), Vec::new());
        for i in 0..no {
            for (s, w) in g.g.neighbors(i) {
                slots.push(s);
                weights.push(w);
            }
            offsets.push(slots.len());
        }
        // SAFETY: `xadj` NULL or `xadj_len`, `adjncy` NULL or `arcs` writable int64_t.
        unsafe {
            write_ids(&offsets, xadj, xadj_len, "xadj")?;
            write_ids(&slots, adjncy, arcs, "adjncy")?;
        }
        if !ewgt.is_null() {
            // SAFETY: non-null, `arcs` writable doubles (contract; `arcs`
            // was checked against the adjacency above).
            unsafe { std::ptr::copy_nonoverlapping(weights.as_ptr(), ewgt, arcs) };
        }
        Ok(())
    })
}

/// Copies this rank's owned records into the first `owned` records of the
/// application's slot buffer `values` (`len` = owned + ghosts records;
/// local): after [`nuce_graph_scatter`], [`nuce_graph_from_local`], a
/// migration or a remap. The ghost
/// records are left untouched (exchange them).
#[no_mangle]
pub extern "C" fn nuce_graph_read(g: *mut nuce_graph, values: *mut c_void, len: usize) -> c_int {
    guard(|| {
        // SAFETY: `g` is NULL or a live handle.
        let g = unsafe { graph(g) }?;
        // SAFETY: `values` NULL or `len × elem_size` writable bytes.
        let app = unsafe { buffer_mut(values, len, g.slots(), g.elem, "values") }?;
        g.g.store(app, g.elem, false);
        Ok(())
    })
}

/// Fills the ghost records of the application's slot buffer `values` (`len`
/// = owned + ghosts records) with their owners' current records, read from
/// the owners' slot buffers (collective over the graph's ranks).
#[no_mangle]
pub extern "C" fn nuce_graph_exchange_ghosts(
    g: *mut nuce_graph,
    values: *mut c_void,
    len: usize,
) -> c_int {
    guard(|| {
        // SAFETY: `g` is NULL or a live handle.
        let g = unsafe { graph(g) }
            .map_err(|_| unreachable_null("the graph", "nuce_graph_exchange_ghosts"))?;
        let _w = waiting();
        // SAFETY: `values` NULL or `len × elem_size` writable bytes.
        let app = unsafe { g.agreed(values, len, "nuce_graph_exchange_ghosts") }?;
        g.load(app);
        g.g.exchange_ghosts()?;
        // SAFETY: the same buffer, writable (contract), no other borrow alive.
        let app = unsafe { buffer_mut(values, len, g.slots(), g.elem, "values") }?;
        g.g.store(app, g.elem, true);
        Ok(())
    })
}

/// Gathers every vertex's record on rank 0 into `global` (`global_len` = n
/// records, in global vertex order; written on rank 0 only, may be NULL
/// elsewhere) from every rank's slot buffer `values` of `len` records
/// (collective).
#[no_mangle]
pub extern "C" fn nuce_graph_gather(
    g: *mut nuce_graph,
    values: *const c_void,
    len: usize,
    global: *mut c_void,
    global_len: usize,
) -> c_int {
    guard(|| {
        // SAFETY: `g` is NULL or a live handle.
        let g =
            unsafe { graph(g) }.map_err(|_| unreachable_null("the graph", "nuce_graph_gather"))?;
        let _w = waiting();
        let (n, e) = (g.g.global_len(), g.elem);
        // SAFETY: `values` NULL or `len × elem_size` readable bytes.
        let local = unsafe { g.values(values, len) }.and_then(|app| {
            let out = (g.g.comm().rank() == 0).then(|| {
                // SAFETY: `global` NULL or `global_len × elem_size` writable bytes on rank 0.
                unsafe { buffer_mut(global, global_len, n, e, "global") }
            });
            Ok((app, out.transpose()?))
        });
        let (app, out) = checked(local, |r| g.g.entry("nuce_graph_gather", r))?;
        g.load(app);
        if let (Some(all), Some(out)) = (g.g.gather(0, e)?, out) {
            out.copy_from_slice(&all);
        }
        Ok(())
    })
}

/// Moves the graph to a new partition: `owner[n]`, the new rank of every
/// vertex in global order, identical on every rank (checked by a hash
/// all-reduce); vertices
/// whose owner changes are sent with their records, read from the slot
/// buffer `values` (`len` records). Collective. Afterwards the layout has
/// changed: ask [`nuce_graph_sizes`], allocate a new slot buffer, copy the
/// records into it with [`nuce_graph_read`] and exchange ghosts.
#[no_mangle]
pub extern "C" fn nuce_graph_migrate(
    g: *mut nuce_graph,
    values: *const c_void,
    len: usize,
    owner: *const i64,
    n: usize,
) -> c_int {
    guard(|| {
        // SAFETY: `g` is NULL or a live handle.
        let g =
            unsafe { graph(g) }.map_err(|_| unreachable_null("the graph", "nuce_graph_migrate"))?;
        let _w = waiting();
        // SAFETY: `values` NULL or `len × elem_size` readable bytes.
        let app = unsafe { g.values(values, len) };
        let p = g.g.comm().size() as usize;
        // SAFETY: `owner` NULL or `n` readable int64_t (contract).
        let raw = unsafe { buffer(owner.cast(), n, g.g.global_len(), 8, "owner") };
        let part = raw.and_then(|bytes| {
            let parts = bytes
                .chunks_exact(8)
                .map(|c| i64::from_ne_bytes(c.try_into().unwrap_or_default()))
                .map(|r| {
                    usize::try_from(r).ok().filter(|&r| r < p).ok_or_else(|| {
                        Error::invalid_input(format!("owner {r} is not a rank of 0..{p}"))
                    })
                })
                .collect::<Result<Vec<usize>>>()?;
            Ok(Partition::new(p, parts)?)
        });
        let local = app.and_then(|app| Ok((app, part?)));
        let (app, part) = checked(local, |r| g.g.entry("nuce_graph_migrate", r))?;
        check_identical(g.g.comm(), 0, "owner", &part.parts)?;
        g.load(app);
        g.g.remap(&part)
    })
}

/// A balance point for a graph between phases of `iterations` iterations
/// (collective over the balancer's ranks; `g` made by this balancer): as
/// `nuce_maybe_remap` for arrays, with this rank's work the sum of its
/// vertex weights × `iterations`; when the root finds that a new cut pays
/// off over the next `iterations` iterations, the vertices whose owner
/// changes move with their records (read from the slot buffer `values` of
/// `len` records). The cut follows how the graph was built: a graph of
/// [`nuce_graph_scatter`] is re-cut along the root's ordering of the whole
/// graph; one of [`nuce_graph_from_local`] by prefix sums along each rank's
/// Hilbert-curve order, with no rank holding the whole graph. `*remapped` is set to 1 when the layout
/// changed (same on every rank): then proceed as after
/// [`nuce_graph_migrate`].
#[no_mangle]
pub extern "C" fn nuce_graph_maybe_remap(
    b: *mut nuce_balancer,
    g: *mut nuce_graph,
    iterations: i64,
    values: *const c_void,
    len: usize,
    remapped: *mut c_int,
) -> c_int {
    nuce_graph_maybe_remap_ahead(b, g, iterations, iterations, values, len, remapped)
}

/// [`nuce_graph_maybe_remap`] with another decision horizon: the phase just
/// done had `iterations` iterations, and a remap must pay off within the
/// next `ahead` iterations.
#[no_mangle]
pub extern "C" fn nuce_graph_maybe_remap_ahead(
    b: *mut nuce_balancer,
    g: *mut nuce_graph,
    iterations: i64,
    ahead: i64,
    values: *const c_void,
    len: usize,
    remapped: *mut c_int,
) -> c_int {
    guard(|| {
        // SAFETY: `b`, `g` are NULL or live handles; `remapped` NULL or writable.
        let h = unsafe { balancer(b) }
            .map_err(|_| unreachable_null("the balancer", "nuce_graph_maybe_remap_ahead"))?;
        let _w = waiting();
        // This rank's own validation, its refusal at the checked entry (a
        // NULL graph is refused on the balancer's ranks).
        let local = (|| {
            // SAFETY: `g` is NULL or a live handle; `remapped` NULL or writable.
            let (g, remapped) = unsafe {
                (
                    deref_mut(g, "the graph (in nuce_graph_maybe_remap_ahead)")?,
                    remapped.as_mut(),
                )
            };
            let it = crate::to_usize(iterations, "iterations")?;
            let ahead = crate::to_usize(ahead, "ahead")?;
            let r = remapped.ok_or_else(|| null("remapped"))?;
            *r = 0;
            // SAFETY: `values` NULL or `len × elem_size` readable bytes.
            let app = unsafe { g.values(values, len) }?;
            Ok((g, it, ahead, r, app))
        })();
        let op = format!("nuce_graph_maybe_remap_ahead(iterations {iterations}, ahead {ahead})");
        let (g, iterations, ahead, remapped, app) = checked(local, |r| h.bal.entry(&op, r))?;
        g.load(app);
        let report = g.g.maybe_remap(&mut h.bal, iterations, ahead)?;
        crate::decision::remember(h, &report.decision);
        *remapped = c_int::from(report.remap);
        Ok(())
    })
}
