//! Graph partitioning for C: a CSR graph described by a [`nuce_csr`]
//! (METIS conventions: `xadj[n + 1]`, `adjncy[xadj[n]]`, both directions of
//! every edge stored), cut into parts in proportion to target weights
//! ([`nuce_partition_graph`], pure) or to the balancer's speeds
//! ([`nuce_graph_partition`], collective, input and output on the root).

use std::ffi::c_int;

use mpi::traits::*;
use nuce::collective::agree;
use nuce::plan::graph::{
    best_partition, metrics, Algo, FmRefiner, Graph, Grouping, Partition, Repartitioner,
};
use nuce::{waiting, Error, Result};

use crate::{balancer, guard, nuce_balancer, null, to_usize};

/// A CSR graph given by the application (read only), METIS-style:
/// vertices `0..n`, the neighbours of `v` are `adjncy[xadj[v] .. xadj[v + 1]]`,
/// every edge is stored in both directions, no self-loops, no repeated edges.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct nuce_csr {
    /// Number of vertices.
    pub n: i64,
    /// `n + 1` offsets, starting at 0, non-decreasing.
    pub xadj: *const i64,
    /// `xadj[n]` neighbour ids in `0..n` (may be NULL when `xadj[n]` is 0).
    pub adjncy: *const i64,
    /// `n` vertex weights (finite, >= 0), or NULL for weight 1 each.
    pub vwgt: *const f64,
    /// `xadj[n]` edge weights parallel to `adjncy` (finite, > 0, the same
    /// in both directions), or NULL for weight 1 each.
    pub ewgt: *const f64,
    /// Dimension of `coords`: 0 (no coordinates), 1, 2 or 3.
    pub dim: i32,
    /// `dim × n` coordinates, vertex after vertex, or NULL when `dim` is 0.
    pub coords: *const f64,
}

/// Partition with the project's best rule: multilevel, RCB (with
/// coordinates) and RSB+KL, each refined, the least cut within 3 % imbalance.
pub const NUCE_ALGO_BEST: c_int = 0;
/// Multilevel k-way (heavy-edge coarsening, k-way refinement).
pub const NUCE_ALGO_MULTILEVEL: c_int = 1;
/// Recursive coordinate bisection (needs coordinates).
pub const NUCE_ALGO_RCB: c_int = 2;
/// Z-curve index (needs coordinates).
pub const NUCE_ALGO_ZCI: c_int = 3;
/// Hilbert-curve index (needs coordinates).
pub const NUCE_ALGO_HCI: c_int = 4;
/// Recursive spectral bisection.
pub const NUCE_ALGO_RSB: c_int = 5;
/// Recursive spectral bisection, each bisection refined by two-way FM.
pub const NUCE_ALGO_RSBKL: c_int = 6;
/// Spectral index (1D order, then cut).
pub const NUCE_ALGO_RSBI: c_int = 7;
/// Coordinate-bisection index (1D order, then cut; needs coordinates).
pub const NUCE_ALGO_RCBI: c_int = 8;

/// `p` as a slice of `len` elements, or `None` when `p` is NULL.
///
/// # Safety
/// `p` is NULL or points to `len` readable `T`.
unsafe fn opt_slice<'a, T>(p: *const T, len: usize) -> Option<&'a [T]> {
    // SAFETY: non-null, `len` readable elements (the caller's contract).
    (!p.is_null()).then(|| unsafe { std::slice::from_raw_parts(p, len) })
}

/// `p` as a slice of `len` elements; NULL is an error unless `len` is 0.
///
/// # Safety
/// `p` is NULL or points to `len` readable `T`.
unsafe fn req_slice<'a, T>(p: *const T, len: usize, what: &str) -> Result<&'a [T]> {
    // SAFETY: the caller's contract.
    match unsafe { opt_slice(p, len) } {
        Some(s) => Ok(s),
        None if len == 0 => Ok(&[]),
        None => Err(null(what)),
    }
}

fn indices(v: &[i64], what: &str) -> Result<Vec<usize>> {
    v.iter()
        .map(|&x| usize::try_from(x).map_err(|_| crate::caller::negative_entry(what, x)))
        .collect()
}

/// Reads and validates the application's CSR graph (symmetry, ranges,
/// weights: [`Graph::from_csr`]).
///
/// # Safety
/// `g` is NULL or points to a [`nuce_csr`] whose non-NULL arrays have the
/// lengths its documentation gives.
pub(crate) unsafe fn read_csr(g: *const nuce_csr) -> Result<Graph> {
    // SAFETY: NULL or a readable nuce_csr (contract).
    let g = unsafe { g.as_ref() }.ok_or_else(|| null("graph"))?;
    let n = to_usize(g.n, "n")?;
    let len = n
        .checked_add(1)
        .ok_or_else(|| Error::invalid_input(format!("n = {n}")))?;
    // SAFETY: `xadj` is NULL or n + 1 readable int64_t (contract).
    let xadj = indices(unsafe { req_slice(g.xadj, len, "xadj") }?, "xadj")?;
    if xadj.first() != Some(&0) || xadj.windows(2).any(|w| w[0] > w[1]) {
        return Err(Error::invalid_input(
            "xadj must start with 0 and be non-decreasing",
        ));
    }
    let m = xadj[n];
    // SAFETY: `adjncy` is NULL or xadj[n] readable int64_t (contract).
    let adjncy = indices(unsafe { req_slice(g.adjncy, m, "adjncy") }?, "adjncy")?;
    // SAFETY: `vwgt` is NULL or n readable doubles (contract).
    let vwgt = unsafe { opt_slice(g.vwgt, n) }.map(<[f64]>::to_vec);
    // SAFETY: `ewgt` is NULL or xadj[n] readable doubles (contract).
    let ewgt = unsafe { opt_slice(g.ewgt, m) }.map(<[f64]>::to_vec);
    let graph = Graph::from_csr(xadj, adjncy, vwgt, ewgt)?;
    match g.dim {
        0 => Ok(graph),
        d @ 1..=3 => {
            let d = d as usize;
            // SAFETY: `coords` is NULL or dim × n readable doubles (contract).
            let c = unsafe { req_slice(g.coords, d * n, "coords") }?;
            Ok(graph.with_coords(d, c.to_vec())?)
        }
        d => Err(Error::invalid_input(format!("dim = {d}: 0, 1, 2 or 3"))),
    }
}

/// The algorithm of a `NUCE_ALGO_*` code (`None` for best).
fn algo_of(code: c_int) -> Result<Option<Algo>> {
    let table = [
        (NUCE_ALGO_MULTILEVEL, Algo::Multilevel),
        (NUCE_ALGO_RCB, Algo::Rcb),
        (NUCE_ALGO_ZCI, Algo::Zci),
        (NUCE_ALGO_HCI, Algo::Hci),
        (NUCE_ALGO_RSB, Algo::Rsb),
        (NUCE_ALGO_RSBKL, Algo::RsbKl),
        (NUCE_ALGO_RSBI, Algo::Rsbi),
        (NUCE_ALGO_RCBI, Algo::Rcbi),
    ];
    match code {
        NUCE_ALGO_BEST => Ok(None),
        c => table
            .iter()
            .find(|t| t.0 == c)
            .map(|t| Some(t.1))
            .ok_or_else(|| Error::invalid_input(format!("unknown algorithm {c}"))),
    }
}

/// Partitions `g` for `targets` with `algo` (refined by FM, tolerance 3 %),
/// and its edge cut.
fn partition(g: &Graph, targets: &[f64], algo: c_int) -> Result<(Partition, f64)> {
    nuce::plan::check_speeds(targets)?;
    if g.n() < targets.len() {
        return Err(Error::Plan(nuce::plan::Error::TooManyParts {
            parts: targets.len(),
            units: g.n(),
        }));
    }
    let refiner = FmRefiner::default();
    let p = match algo_of(algo)? {
        None => best_partition(g, targets, Grouping::Simple, refiner)?.partition,
        Some(a) => {
            if a.needs_coords() && g.coords().is_none() {
                return Err(Error::invalid_input(format!(
                    "algorithm {} needs coordinates (dim > 0)",
                    a.name()
                )));
            }
            a.partition(g, targets, Grouping::Simple, Some(refiner))?
        }
    };
    let cut = metrics(g, &p, targets)?.edge_cut;
    Ok((p, cut))
}

/// Writes a partition into `part[n]` and the cut into `*edgecut` (if not NULL).
///
/// # Safety
/// `part` is NULL or `p.len()` writable int64_t; `edgecut` NULL or writable.
unsafe fn write_partition(
    p: &Partition,
    cut: f64,
    part: *mut i64,
    edgecut: *mut f64,
) -> Result<()> {
    if part.is_null() {
        return Err(null("part"));
    }
    // SAFETY: non-null, n writable int64_t (contract).
    let out = unsafe { std::slice::from_raw_parts_mut(part, p.len()) };
    for (o, &q) in out.iter_mut().zip(&p.parts) {
        *o = q as i64;
    }
    // SAFETY: NULL or writable (contract).
    if let Some(e) = unsafe { edgecut.as_mut() } {
        *e = cut;
    }
    Ok(())
}

/// The part count `nparts` (at least 1) and the target weights `tpwgts`
/// (NULL: equal parts) of the C partitioning calls.
///
/// # Safety
/// `tpwgts` is NULL or points to `nparts` readable doubles.
unsafe fn part_targets(nparts: i64, tpwgts: *const f64) -> Result<(usize, Vec<f64>)> {
    let k = to_usize(nparts, "nparts")?;
    if k == 0 {
        return Err(Error::empty("nparts = 0"));
    }
    // SAFETY: the caller's contract.
    let targets = unsafe { opt_slice(tpwgts, k) }.map_or_else(|| vec![1.0; k], <[f64]>::to_vec);
    Ok((k, targets))
}

/// Partitions the graph `g` into `nparts` parts whose vertex weights are in
/// the ratio of `tpwgts[nparts]` (any positive scale; NULL for equal parts)
/// with algorithm `algo` (`NUCE_ALGO_*`), every algorithm's result refined
/// by FM within 3 % imbalance. Writes the part of every vertex into
/// `part[n]` (values in `0..nparts`) and, when `edgecut` is not NULL, the
/// total weight of the cut edges. Local and pure (no MPI; callable before
/// `MPI_Init`), like `METIS_PartGraphKway` with `tpwgts`.
///
/// Not [`nuce_graph_partition`]: the verb first (`partition_graph`, as
/// `nuce_repartition_graph`) is the pure call with explicit targets; the
/// `nuce_graph_*` name is the balancer's collective call for its speeds.
#[no_mangle]
pub extern "C" fn nuce_partition_graph(
    g: *const nuce_csr,
    nparts: i64,
    tpwgts: *const f64,
    algo: c_int,
    part: *mut i64,
    edgecut: *mut f64,
) -> c_int {
    guard(|| {
        // SAFETY: `tpwgts` is NULL or nparts readable doubles (contract).
        let (_, targets) = unsafe { part_targets(nparts, tpwgts) }?;
        // SAFETY: `g` is NULL or a valid nuce_csr (contract).
        let graph = unsafe { read_csr(g) }?;
        let (p, cut) = partition(&graph, &targets, algo)?;
        // SAFETY: `part` NULL or n writable; `edgecut` NULL or writable.
        unsafe { write_partition(&p, cut, part, edgecut) }
    })
}

/// Repartitions the graph `g` from its current partition `current[n]`
/// (values in `0..nparts`) into `nparts` parts whose vertex weights are in
/// the ratio of `tpwgts[nparts]` (any positive scale; NULL for equal
/// parts), moving few vertices: nuce's migration-aware repartitioning (a
/// diffusion of the current parts and a scratch partition relabelled to
/// keep vertices at home, the cheaper in `itr · cut + moved` kept, within
/// 3 % imbalance; ParMETIS's `AdaptiveRepart` with its `itr`, e.g. 1000;
/// a small `itr` moves less). Writes the new part of every vertex into
/// `part[n]`, and, when not NULL, the number of vertices whose part changed
/// into `*moved` and the cut into `*edgecut`. Local and pure (no MPI).
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub extern "C" fn nuce_repartition_graph(
    g: *const nuce_csr,
    nparts: i64,
    tpwgts: *const f64,
    current: *const i64,
    itr: f64,
    part: *mut i64,
    moved: *mut i64,
    edgecut: *mut f64,
) -> c_int {
    guard(|| {
        // SAFETY: `tpwgts` is NULL or nparts readable doubles (contract).
        let (k, targets) = unsafe { part_targets(nparts, tpwgts) }?;
        nuce::plan::check_speeds(&targets)?;
        // SAFETY: `g` is NULL or a valid nuce_csr (contract).
        let graph = unsafe { read_csr(g) }?;
        // SAFETY: `current` is NULL or n readable int64_t (contract).
        let now = indices(
            unsafe { req_slice(current, graph.n(), "current") }?,
            "current",
        )?;
        let now = Partition::new(k, now)?;
        let r = Repartitioner {
            itr,
            ..Repartitioner::default()
        }
        .repartition(&graph, &now, &targets, None)?;
        // SAFETY: NULL or writable (contract).
        if let Some(m) = unsafe { moved.as_mut() } {
            *m = r.moved_vertices as i64;
        }
        // SAFETY: `part` NULL or n writable; `edgecut` NULL or writable.
        unsafe { write_partition(&r.partition, r.edge_cut, part, edgecut) }
    })
}

/// Partitions the root's graph `g` into one part per rank in proportion to
/// the balancer's current speeds (equal parts when none were measured) with
/// algorithm `algo` (collective; `algo` identical on every rank). `g`,
/// `part[n]` and `edgecut` (may be NULL) are read and written on rank 0
/// only (may be NULL elsewhere); every rank returns the same code.
///
/// Not [`nuce_partition_graph`]: this `nuce_graph_*` call is the
/// balancer's, collective, for its speeds; the verb-first name is the pure,
/// local call with explicit targets.
#[no_mangle]
pub extern "C" fn nuce_graph_partition(
    b: *mut nuce_balancer,
    g: *const nuce_csr,
    algo: c_int,
    part: *mut i64,
    edgecut: *mut f64,
) -> c_int {
    guard(|| {
        // SAFETY: `b` is NULL or a live handle.
        let h = unsafe { balancer(b) }
            .map_err(|_| crate::unreachable_null("the balancer", "nuce_graph_partition"))?;
        let _w = waiting();
        let (comm, root) = (h.bal.comm(), nuce::ROOT);
        // The checked entry (bounded by the timeout; `algo` must match), then
        // the root's partitioning, which the others wait for.
        let op = format!("nuce_graph_partition(algo {algo})");
        crate::checked(Ok(()), |r| h.bal.entry(&op, r))?;
        let p = comm.size() as usize;
        let speeds = h
            .bal
            .measured()
            .speeds()
            .map_or_else(|| vec![1.0; p], <[f64]>::to_vec);
        let here = (comm.rank() == root)
            .then(|| {
                // SAFETY: `g` NULL or valid on the root (contract).
                let graph = unsafe { read_csr(g) }?;
                if part.is_null() {
                    return Err(null("part"));
                }
                let (p, cut) = partition(&graph, &speeds, algo)?;
                // SAFETY: `part` n writable int64_t, `edgecut` NULL or writable.
                unsafe { write_partition(&p, cut, part, edgecut) }
            })
            .transpose();
        agree(comm, root, here).map(|_| ())
    })
}
