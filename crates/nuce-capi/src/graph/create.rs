//! Creating a graph handle: `nuce_graph_scatter` (the root's whole graph)
//! and `nuce_graph_from_local` (every rank's own piece), with the checks of
//! the pieces' arrays.

use std::ffi::{c_int, c_void};

use mpi::traits::*;
use nuce::{waiting, Balancer, DistGraph, Error, GraphValue, Result};

use super::nuce_graph;
use super::records::{build_padded, pad, record_size, Build, Records};
#[cfg(doc)]
use super::{nuce_graph_maybe_remap, nuce_graph_read, nuce_graph_sizes};
use crate::partition::{nuce_csr, read_csr};
use crate::{balancer, buffer, caller, checked, guard, nuce_balancer, null, unreachable_null};

/// Scatters the root's graph through the balancer ([`nuce_graph_scatter`]).
struct Scatter<'a> {
    bal: &'a mut Balancer,
    graph: Option<&'a nuce::plan::graph::Graph>,
    records: Option<&'a [u8]>,
}

impl Build for Scatter<'_> {
    fn build<const N: usize>(self, elem: usize) -> Result<Box<dyn Records>>
    where
        [u8; N]: GraphValue,
    {
        let values = self.records.map(|bytes| pad::<N>(bytes, elem));
        Ok(Box::new(DistGraph::scatter(
            self.bal,
            self.graph,
            values.as_deref(),
        )?))
    }
}

/// This rank's piece of a graph built from local pieces
/// ([`nuce_graph_from_local`]), validated.
struct LocalPiece<'a> {
    ids: Vec<usize>,
    xadj: Vec<usize>,
    adjncy: Vec<usize>,
    vwgt: Option<Vec<f64>>,
    ewgt: Option<Vec<f64>>,
    coords: Option<nuce::plan::graph::Coords>,
    records: &'a [u8],
}

/// Builds from the ranks' pieces on the balancer's ranks, then partitions
/// by speeds ([`DistGraph::balance`]).
struct FromLocal<'a> {
    bal: &'a mut Balancer,
    piece: LocalPiece<'a>,
}

impl Build for FromLocal<'_> {
    fn build<const N: usize>(self, elem: usize) -> Result<Box<dyn Records>>
    where
        [u8; N]: GraphValue,
    {
        let p = self.piece;
        let mut g = DistGraph::from_local(
            self.bal.comm(),
            p.ids,
            p.xadj,
            p.adjncy,
            p.vwgt,
            p.ewgt,
            p.coords,
            pad::<N>(p.records, elem),
        )?;
        g.balance(self.bal)?;
        Ok(Box::new(g))
    }
}

/// Partitions the root's graph `g` for the balancer's current speeds (equal
/// parts when none were measured) and scatters it with the root's
/// `records` (`n × elem_size` bytes, vertex after vertex), writing the
/// handle to `*out` (collective; `elem_size` > 0 identical on every rank;
/// `g` and `records` read on rank 0 only, may be NULL elsewhere). The root
/// keeps an index ordering of the graph (Hilbert curve with coordinates,
/// spectral otherwise) so that [`nuce_graph_maybe_remap`] re-cuts it moving
/// few vertices. A balance point. Copy this rank's records out with
/// [`nuce_graph_read`].
#[no_mangle]
pub extern "C" fn nuce_graph_scatter(
    b: *mut nuce_balancer,
    g: *const nuce_csr,
    elem_size: usize,
    records: *const c_void,
    out: *mut *mut nuce_graph,
) -> c_int {
    guard(|| {
        // SAFETY: `b` is NULL or a live handle; `out` NULL or writable.
        let (h, out) = unsafe {
            let h =
                balancer(b).map_err(|_| unreachable_null("the balancer", "nuce_graph_scatter"))?;
            (h, out.as_mut())
        };
        let _w = waiting();
        let (comm, root) = (h.bal.comm(), nuce::ROOT);
        // This rank's own validation: its refusal at the checked entry.
        let local = out.ok_or_else(|| null("out")).and_then(|out| {
            *out = std::ptr::null_mut();
            record_size(elem_size)?;
            let here = (comm.rank() == root)
                .then(|| {
                    // SAFETY: `g` NULL or a valid nuce_csr on the root (contract).
                    let graph = unsafe { read_csr(g) }?;
                    // SAFETY: `records` NULL or n × elem_size readable bytes.
                    let bytes =
                        unsafe { buffer(records, graph.n(), graph.n(), elem_size, "records") }?;
                    Ok::<_, Error>((graph, bytes))
                })
                .transpose()?;
            Ok((out, here))
        });
        let op = format!("nuce_graph_scatter({})", caller::record_size(elem_size));
        let (out, input) = checked(local, |r| h.bal.entry(&op, r))?;
        let (graph, records) = input.unzip();
        let scatter = Scatter {
            bal: &mut h.bal,
            graph: graph.as_ref(),
            records,
        };
        let g = build_padded(scatter, elem_size)?;
        *out = Box::into_raw(Box::new(nuce_graph { g, elem: elem_size }));
        Ok(())
    })
}

/// `len` `int64_t` as indices (each ≥ 0; NULL allowed when `len` is 0).
///
/// # Safety
/// `p` is NULL or `len` readable int64_t.
unsafe fn indices(p: *const i64, len: usize, what: &str) -> Result<Vec<usize>> {
    if len == 0 {
        return Ok(Vec::new());
    }
    // SAFETY: the caller's contract.
    let bytes = unsafe { buffer(p.cast(), len, len, 8, what) }?;
    bytes
        .chunks_exact(8)
        .map(|c| i64::from_ne_bytes(c.try_into().unwrap_or_default()))
        .map(|x| usize::try_from(x).map_err(|_| crate::caller::negative_entry(what, x)))
        .collect()
}

/// `len` doubles, finite and ≥ 0 (> 0 when `positive`), or `None` for NULL.
///
/// # Safety
/// `p` is NULL or `len` readable doubles.
unsafe fn weights(
    p: *const f64,
    len: usize,
    positive: bool,
    what: &str,
) -> Result<Option<Vec<f64>>> {
    if p.is_null() {
        return Ok(None);
    }
    // SAFETY: non-null, `len` readable doubles (contract).
    let w = unsafe { std::slice::from_raw_parts(p, len) }.to_vec();
    match w
        .iter()
        .find(|&&x| !x.is_finite() || x < 0.0 || (positive && x == 0.0))
    {
        Some(x) => Err(Error::invalid_input(format!(
            "{what} has an entry {x} (finite and {} expected)",
            if positive { "> 0" } else { ">= 0" }
        ))),
        None => Ok(Some(w)),
    }
}

/// Reads and checks this rank's piece of [`nuce_graph_from_local`].
///
/// # Safety
/// As [`nuce_graph_from_local`]'s arguments.
#[allow(clippy::too_many_arguments)]
unsafe fn read_piece<'a>(
    nlocal: usize,
    global_ids: *const i64,
    xadj: *const i64,
    adjncy: *const i64,
    vwgt: *const f64,
    ewgt: *const f64,
    dim: c_int,
    coords: *const f64,
    elem_size: usize,
    values: *const c_void,
) -> Result<LocalPiece<'a>> {
    record_size(elem_size)?;
    // SAFETY (all reads below): NULL or the lengths the contract gives.
    let ids = unsafe { indices(global_ids, nlocal, "global_ids") }?;
    if xadj.is_null() {
        return Err(null("xadj"));
    }
    let offsets = unsafe { indices(xadj, nlocal + 1, "xadj") }?;
    let arcs = offsets[nlocal];
    if offsets[0] != 0 || offsets.windows(2).any(|w| w[0] > w[1]) {
        return Err(Error::invalid_input(
            "xadj must start at 0 and not decrease",
        ));
    }
    let adj = unsafe { indices(adjncy, arcs, "adjncy") }?;
    let vw = unsafe { weights(vwgt, nlocal, false, "vwgt") }?;
    let ew = unsafe { weights(ewgt, arcs, true, "ewgt") }?;
    let dim = match usize::try_from(dim) {
        Ok(d @ 1..=3) => d,
        _ => {
            return Err(Error::invalid_input(format!(
                "dim = {dim}: a graph built from local pieces needs coordinates in 1 to 3 \
                 dimensions (it is partitioned and remapped geometrically); build a graph \
                 without coordinates whole on rank 0 with nuce_graph_scatter"
            )))
        }
    };
    if nlocal > 0 && coords.is_null() {
        return Err(null("coords"));
    }
    let data = if nlocal == 0 {
        Vec::new()
    } else {
        unsafe { std::slice::from_raw_parts(coords, dim * nlocal) }.to_vec()
    };
    if data.iter().any(|x| !x.is_finite()) {
        return Err(Error::invalid_input("coords are not all finite"));
    }
    let records: &[u8] = if nlocal == 0 {
        &[]
    } else {
        unsafe { buffer(values, nlocal, nlocal, elem_size, "values") }?
    };
    Ok(LocalPiece {
        ids,
        xadj: offsets,
        adjncy: adj,
        vwgt: vw,
        ewgt: ew,
        coords: Some(nuce::plan::graph::Coords { dim, data }),
        records,
    })
}

/// Builds a distributed graph from every rank's own vertices and
/// partitions it by the balancer's current speeds (equal parts when none
/// were measured), writing the handle to `*out`. Collective over the
/// balancer's ranks; no rank sees the whole graph. Each rank gives its
/// `nlocal` vertices (any number, 0 allowed): their `global_ids` (the ids of
/// all ranks together exactly `0..n`, each once), their adjacency in CSR
/// form as in `nuce_csr` (`xadj[nlocal + 1]` offsets from 0 into
/// `adjncy`, whose entries are global ids; symmetric over all ranks),
/// `vwgt[nlocal]` and `ewgt[xadj[nlocal]]` (NULL: weight 1 each),
/// `coords[dim × nlocal]` (vertex after vertex, `dim` 1 to 3, the same on
/// every rank: required, the graph is partitioned by the parallel RCB and
/// remapped by Hilbert-curve prefix cuts) and `values` (`nlocal` records of
/// `elem_size` bytes, in the order of `global_ids`). Arrays of zero length
/// may be NULL. A balance point: the vertices then live where the
/// partition put them — ask [`nuce_graph_sizes`], allocate the slot buffer
/// and copy the records into it with [`nuce_graph_read`]. The handle works
/// with every `nuce_graph_*` call; [`nuce_graph_maybe_remap`] re-cuts it
/// without gathering it anywhere.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub extern "C" fn nuce_graph_from_local(
    b: *mut nuce_balancer,
    nlocal: usize,
    global_ids: *const i64,
    xadj: *const i64,
    adjncy: *const i64,
    vwgt: *const f64,
    ewgt: *const f64,
    dim: c_int,
    coords: *const f64,
    elem_size: usize,
    values: *const c_void,
    out: *mut *mut nuce_graph,
) -> c_int {
    guard(|| {
        // SAFETY: `b` is NULL or a live handle; `out` NULL or writable.
        let (h, out) = unsafe {
            let h = balancer(b)
                .map_err(|_| unreachable_null("the balancer", "nuce_graph_from_local"))?;
            (h, out.as_mut())
        };
        let _w = waiting();
        // This rank's own validation: its refusal at the checked entry.
        let local = out.ok_or_else(|| null("out")).and_then(|out| {
            *out = std::ptr::null_mut();
            // SAFETY: the arguments as the contract gives them.
            let piece = unsafe {
                read_piece(
                    nlocal, global_ids, xadj, adjncy, vwgt, ewgt, dim, coords, elem_size, values,
                )
            }?;
            Ok((out, piece))
        });
        let op = format!(
            "nuce_graph_from_local(dim {dim}, {})",
            caller::record_size(elem_size)
        );
        let (out, piece) = checked(local, |r| h.bal.entry(&op, r))?;
        let build = FromLocal {
            bal: &mut h.bal,
            piece,
        };
        let g = build_padded(build, elem_size)?;
        *out = Box::into_raw(Box::new(nuce_graph { g, elem: elem_size }));
        Ok(())
    })
}
