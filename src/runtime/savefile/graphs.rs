//! Save files of [`DistGraph`]s: the graph (every vertex's global id,
//! adjacency, edge and vertex weights, coordinates and value), how its
//! balancer remaps it, and the application's bytes, in one portable file
//! written collectively and read back on **any number of ranks**.
//!
//! * **Write** ([`DistGraph::save`]): each rank's vertices are records in
//!   increasing id order; the file holds each section (ids, degrees, vertex
//!   weights, coordinates, values, then per arc the neighbours and edge
//!   weights) as the writing ranks' records one rank after another, each
//!   rank's one contiguous range per section written by the rank alone
//!   (`MPI_File_write_at` in chunks; little endian, `GraphValue::write`
//!   bytes for the values; read back the same way, straight into the
//!   records' words). Written to
//!   `PATH.nuce-tmp` and renamed when every rank succeeded, as a grid's.
//! * **Read** ([`SavedGraph::open`], [`SavedGraph::new_graph`]): the root
//!   checks the header; a graph balanced geometrically
//!   ([`GraphStrategy::Geometric`]) is read in equal slices of the records
//!   on every rank and partitioned for the balancer's speeds
//!   ([`DistGraph::balance`]: no rank holds the whole graph);
//!   any other is read by the root and scattered for the speeds
//!   ([`DistGraph::scatter`], which builds the root's index again).
//! * **Integrity**: the header holds the sum over vertices of a hash of
//!   each vertex's id and record, independent of the plan; a read compares
//!   it, and the degrees with the arcs' count, on every rank. A grid's file
//!   read as a graph's (or the reverse: their first bytes differ), a
//!   truncated or corrupt file, another format or value size are the same
//!   error on every rank.

use std::borrow::Cow;
use std::path::{Path, PathBuf};
use std::time::Instant;

use mpi::traits::*;
use serde::{Deserialize, Serialize};

use super::checkpoint::speeds_of;
use super::checksum::{all_sums, word_hash};
use super::header::{check_speeds, read_prefixed, Kind};
use super::mpiio::MpiFile;
use super::{check_user, encode_aligned, write_file, write_head, SaveStats};
use crate::error::{Error, Result};
use crate::plan::graph::Graph;
use crate::runtime::balancer::{Balancer, SavedSpeeds};
use crate::runtime::clock::waiting;
use crate::runtime::comm::{agree, check_identical, root_compute};
use crate::runtime::graph::{DistGraph, GraphStrategy, GraphValue, Pieces};
use crate::runtime::graph_value::{pack, unpack};

/// What a graph's save file says of it (after the fixed prefix).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct GraphHeader {
    /// The nuce version that wrote the file.
    nuce: String,
    /// Vertices and arcs (each edge twice).
    n: u64,
    arcs: u64,
    /// Whether edge weights follow the neighbours.
    weighted: bool,
    /// Coordinates per vertex (0: none).
    dim: usize,
    /// Bytes of a vertex's value ([`GraphValue::BYTES`]).
    value_bytes: usize,
    /// How the graph was balanced.
    strategy: GraphStrategy,
    /// Ranks that wrote the file.
    ranks: usize,
    /// The application's own bytes.
    user: Vec<u8>,
    /// Where the first section starts.
    data_offset: u64,
    /// The sum over vertices of their records' hashes ([`records_sum`]).
    sum: u64,
    /// The writing balancer's speed state ([`DistArray2::checkpoint`]);
    /// none in a plain save and in format 1. Last (see `read_prefixed`).
    speeds: Option<SavedSpeeds>,
}

/// Sections of a file: five per vertex, then two per arc.
const VERTEX_SECTIONS: usize = 5;

impl GraphHeader {
    /// Bytes per record of each section: ids, degrees, vertex weights,
    /// coordinates, values (per vertex), neighbours, edge weights (per arc).
    fn widths(&self) -> [usize; 7] {
        [
            8,
            8,
            8,
            8 * self.dim,
            self.value_bytes,
            8,
            if self.weighted { 8 } else { 0 },
        ]
    }

    /// The file offset of each section, and the file's length.
    fn offsets(&self) -> Result<([u64; 7], u64)> {
        let mut at = self.data_offset;
        let mut offs = [0u64; 7];
        for (k, w) in self.widths().into_iter().enumerate() {
            offs[k] = at;
            let count = if k < VERTEX_SECTIONS {
                self.n
            } else {
                self.arcs
            };
            at = count
                .checked_mul(w as u64)
                .and_then(|b| b.checked_add(at))
                .ok_or_else(|| Error::invalid_input("save file: the graph's size overflows"))?;
        }
        Ok((offs, at))
    }
}

/// The root's reading and checking of a graph's save file header.
fn read_graph_header(path: &Path) -> Result<GraphHeader> {
    let bad = |m: String| Error::invalid_input(format!("save file {}: {m}", path.display()));
    let (h, size, head_end): (GraphHeader, u64, u64) = read_prefixed(path, Kind::Graph)?;
    check_speeds(path, h.speeds.as_ref(), h.ranks)?;
    let (_, end) = h.offsets().map_err(|e| bad(e.to_string()))?;
    if h.data_offset < head_end || h.ranks == 0 {
        return Err(bad("an inconsistent header (a corrupt file)".into()));
    }
    if end > size {
        return Err(bad(format!("truncated ({size} bytes of {end})")));
    }
    Ok(h)
}

/// Little-endian bytes of 64-bit words.
fn to_bytes(words: impl ExactSizeIterator<Item = u64>) -> Vec<u8> {
    let mut v = Vec::with_capacity(words.len() * 8);
    for w in words {
        v.extend_from_slice(&w.to_le_bytes());
    }
    v
}

/// `count` little-endian 64-bit words read at byte `off` of `file`
/// ([`MpiFile::read_at`]: straight into the words, no buffer of bytes).
fn read_words(file: &mut MpiFile, off: u64, count: usize) -> Vec<u64> {
    let mut v = vec![0u64; count];
    // SAFETY: the words' own bytes; any bytes are a valid u64.
    let bytes = unsafe { std::slice::from_raw_parts_mut(v.as_mut_ptr().cast::<u8>(), count * 8) };
    file.read_at(off, bytes, 8);
    for w in &mut v {
        *w = u64::from_le(*w);
    }
    v
}

/// The 64-bit words of little-endian bytes.
fn words(bytes: &[u8]) -> impl Iterator<Item = u64> + '_ {
    bytes
        .chunks_exact(8)
        .map(|w| u64::from_le_bytes(w.try_into().expect("8 bytes")))
}

/// The sections of `p`'s records, as [`GraphHeader::widths`] orders them.
fn sections<T: GraphValue>(p: &Pieces<T>, weighted: bool) -> [Cow<'_, [u8]>; 7] {
    let ids = |v| le_bytes(v, |&x: &usize| x as u64);
    let floats = |v| le_bytes(v, |x: &f64| x.to_bits());
    let mut values = Vec::with_capacity(p.values.len() * T::BYTES);
    pack(p.values.iter(), &mut values);
    [
        ids(&p.ids),
        ids(&p.deg),
        floats(&p.vwgt),
        floats(&p.coords),
        Cow::Owned(values),
        ids(&p.adj),
        floats(if weighted { &p.ewgt } else { &[] }),
    ]
}

/// The little-endian bytes of the 64-bit words `word` gives of `v`: `v`'s
/// own memory where that is their layout (a little-endian target, `W` of
/// 8 bytes: `usize` on 64 bits, `f64`), else a copy.
fn le_bytes<W>(v: &[W], word: impl Fn(&W) -> u64) -> Cow<'_, [u8]> {
    if cfg!(target_endian = "little") && std::mem::size_of::<W>() == 8 {
        // SAFETY: `W` (an integer or a float, no padding) is 8 bytes wide,
        // its memory on a little-endian target the bytes of its word.
        Cow::Borrowed(unsafe { std::slice::from_raw_parts(v.as_ptr().cast::<u8>(), v.len() * 8) })
    } else {
        Cow::Owned(to_bytes(v.iter().map(word)))
    }
}

/// The records of read sections: the words of each section but the
/// values' (`values`, [`GraphValue::write`] bytes), as
/// [`GraphHeader::widths`] orders them (the vectors are reused where
/// `usize` has 64 bits).
fn records<T: GraphValue>(mut s: [Vec<u64>; 7], values: &[u8]) -> Pieces<T> {
    let values = if T::BYTES == 0 {
        vec![T::read(&[]); s[1].len()]
    } else {
        unpack(values)
    };
    let mut ids = |k: usize| -> Vec<usize> {
        std::mem::take(&mut s[k])
            .into_iter()
            .map(|x| x as usize)
            .collect()
    };
    let (id, deg, adj) = (ids(0), ids(1), ids(5));
    let mut floats = |k: usize| -> Vec<f64> {
        std::mem::take(&mut s[k])
            .into_iter()
            .map(f64::from_bits)
            .collect()
    };
    Pieces {
        ids: id,
        deg,
        vwgt: floats(2),
        coords: floats(3),
        values,
        adj,
        ewgt: floats(6),
    }
}

/// The sum over `p`'s vertices of a hash of each one's id and record
/// (degree, neighbours, edge weights, weight, coordinates, value, as
/// 64-bit words chained by an odd multiplier: a bijection of each word, so
/// any change of one changes it): the same whichever ranks hold which
/// vertices. The records must be consistent (degrees summing to the arcs).
fn records_sum<T: GraphValue>(p: &Pieces<T>, weighted: bool, dim: usize) -> u64 {
    let mut sum = 0u64;
    let mut at = 0;
    let mut value = vec![0u8; T::BYTES.div_ceil(8) * 8];
    for (k, &id) in p.ids.iter().enumerate() {
        let d = p.deg[k];
        let mut h = 0xcbf2_9ce4_8422_2325u64;
        let mut mix = |w: u64| h = (h ^ w).wrapping_mul(0x0100_0000_01b3);
        mix(d as u64);
        for a in at..at + d {
            mix(p.adj[a] as u64);
            if weighted {
                mix(p.ewgt[a].to_bits());
            }
        }
        mix(p.vwgt[k].to_bits());
        p.coords[k * dim..(k + 1) * dim]
            .iter()
            .for_each(|x| mix(x.to_bits()));
        p.values[k].write(&mut value[..T::BYTES]);
        words(&value).for_each(&mut mix);
        sum = sum.wrapping_add(word_hash(id as u64, h));
        at += d;
    }
    sum
}

/// Each rank's `(vertices, arcs)` gathered on every rank: this rank's
/// first record and arc among all ranks' in rank order, and the totals.
fn placed<C: Communicator>(comm: &C, vertices: u64, arcs: u64) -> ([u64; 2], [u64; 2]) {
    let p = comm.size() as usize;
    let mut all = vec![0u64; 2 * p];
    comm.all_gather_into(&[vertices, arcs][..], &mut all[..]);
    let me = comm.rank() as usize;
    let sum = |k: usize, upto: usize| -> u64 { (0..upto).map(|r| all[2 * r + k]).sum() };
    ([sum(0, me), sum(1, me)], [sum(0, p), sum(1, p)])
}

impl<T: GraphValue> DistGraph<T> {
    /// Saves the graph — every vertex's global id, neighbours, edge and
    /// vertex weights, coordinates and value, and how a balancer remaps it
    /// ([`DistGraph::strategy`]) — with the application's `user` bytes (at
    /// most 64 MiB) to `path` (collective; the same path on every rank).
    /// See the module's documentation for the file and its guarantees;
    /// [`SavedGraph`] reads it back on any number of ranks. Ghost values
    /// are not saved (exchange after a restart). Every rank returns the
    /// same error, and `path` is then unchanged.
    pub fn save(&self, path: impl AsRef<Path>, user: &[u8]) -> Result<SaveStats> {
        self.save_with(path.as_ref(), user, None)
    }

    /// [`DistGraph::save`], with `bal`'s speed state when given.
    pub(super) fn save_with(
        &self,
        path: &Path,
        user: &[u8],
        bal: Option<&Balancer>,
    ) -> Result<SaveStats> {
        let _w = waiting();
        let start = Instant::now();
        let name = path.to_string_lossy().into_owned();
        let local = check_user(user);
        self.entry(
            &format!(
                "DistGraph::save({name:?}, {}-byte values, {} vertices)",
                T::BYTES,
                self.global_len()
            ),
            local.as_ref().err(),
        )?;
        check_identical(self.comm(), 0, "save file path", &name)?;
        let comm = self.comm();
        let speeds = speeds_of(bal, comm)?;
        let span = tracing::debug_span!("save.graph.records").entered();
        let t = tracing::debug_span!("save.graph.pieces").entered();
        let (pieces, weighted, dim) = self.pieces();
        drop(t);
        let (before, total) = placed(comm, pieces.ids.len() as u64, pieces.adj.len() as u64);
        let mut header = GraphHeader {
            nuce: env!("CARGO_PKG_VERSION").to_string(),
            n: total[0],
            arcs: total[1],
            weighted,
            dim,
            value_bytes: T::BYTES,
            strategy: self.strategy(),
            ranks: comm.size() as usize,
            user: user.to_vec(),
            data_offset: 0,
            sum: {
                let _t = tracing::debug_span!("save.graph.checksum").entered();
                all_sums(comm, &[records_sum(&pieces, weighted, dim)])[0]
            },
            speeds,
        };
        let head = encode_aligned(&mut header, |h, at| h.data_offset = at)?.len();
        let (offs, len) = header.offsets()?;
        let t = tracing::debug_span!("save.graph.bytes").entered();
        let data = sections(&pieces, weighted);
        drop((t, span));
        let widths = header.widths();
        write_file(comm, path, |file| {
            for (k, buf) in data.iter().enumerate() {
                let first = before[usize::from(k >= VERTEX_SECTIONS)];
                file.write_at(offs[k] + first * widths[k] as u64, buf, widths[k]);
            }
            if comm.rank() == 0 {
                write_head(file, Kind::Graph, &header, head);
            }
        })?;
        Ok(SaveStats {
            bytes: len,
            seconds: start.elapsed().as_secs_f64(),
        })
    }
}

/// A graph's save file opened for a restart: the same on every rank of the
/// communicator that opened it.
#[derive(Debug, Clone)]
pub struct SavedGraph {
    path: PathBuf,
    header: GraphHeader,
}

impl SavedGraph {
    /// Opens the graph's save file `path` (collective; the same path on
    /// every rank). The root reads and checks its header — a missing file,
    /// not a nuce save file, a grid's save file, another format, a corrupt
    /// header, a truncated file — and every rank returns the same result.
    pub fn open<C: Communicator>(comm: &C, path: impl AsRef<Path>) -> Result<SavedGraph> {
        let _w = waiting();
        let path = path.as_ref().to_path_buf();
        let name = path.to_string_lossy().into_owned();
        let _span = tracing::debug_span!("save.open").entered();
        check_identical(comm, 0, "save file path", &name)?;
        let header = root_compute(comm, 0, || read_graph_header(&path))?;
        Ok(SavedGraph { path, header })
    }

    /// The saved graph's number of vertices.
    pub fn global_len(&self) -> usize {
        self.header.n as usize
    }
    /// Bytes of each vertex's saved value.
    pub fn value_bytes(&self) -> usize {
        self.header.value_bytes
    }
    /// How the saved graph was balanced.
    pub fn strategy(&self) -> GraphStrategy {
        self.header.strategy
    }
    /// The number of ranks that wrote the file.
    pub fn saved_ranks(&self) -> usize {
        self.header.ranks
    }
    /// The nuce version that wrote the file.
    pub fn nuce_version(&self) -> &str {
        &self.header.nuce
    }
    /// The application's own bytes given to [`DistGraph::save`].
    pub fn user(&self) -> &[u8] {
        &self.header.user
    }
    /// The speed state of the balancer that wrote the file, one entry per
    /// saved rank ([`DistGraph::checkpoint`]); `None` for a plain
    /// [`DistGraph::save`] and for files of format 1.
    pub fn speeds(&self) -> Option<&SavedSpeeds> {
        self.header.speeds.as_ref()
    }

    /// The saved graph on the balancer's communicator (any number of
    /// ranks), distributed for the balancer's current speeds — when it
    /// knows none yet, a restart on as many ranks as saved the file starts
    /// from the saved ones ([`SavedSpeeds::restore`]); on another number
    /// of ranks measure them first for a balanced restart — every vertex with its saved id,
    /// neighbours, weights, coordinates and value (ghost values: exchange
    /// afterwards). A graph saved as [`GraphStrategy::Geometric`] is read
    /// in slices by every rank and partitioned by
    /// [`DistGraph::balance`]; any other is read by the root
    /// and given out by [`DistGraph::scatter`] (so a
    /// [`GraphStrategy::Manual`] graph comes back balanced, as
    /// [`GraphStrategy::RootIndex`]). A balance point. Every rank returns
    /// the same error for values of another size than the saved ones and
    /// for a corrupt file.
    pub fn new_graph<T: GraphValue>(&self, bal: &mut Balancer) -> Result<DistGraph<T>> {
        let _w = waiting();
        let h = &self.header;
        let local = if T::BYTES == h.value_bytes {
            Ok(())
        } else {
            Err(Error::shape_mismatch(format!(
                "{}-byte values, the save file's are {}-byte",
                T::BYTES,
                h.value_bytes
            )))
        };
        bal.entry(
            &format!(
                "SavedGraph::new_graph({}-byte values from {})",
                T::BYTES,
                self.path.display()
            ),
            local.as_ref().err(),
        )?;
        bal.restore_if_unmeasured(self.speeds());
        let spread = h.strategy == GraphStrategy::Geometric;
        let span = tracing::debug_span!("save.graph.records").entered();
        let pieces = self.read_records(bal.comm(), spread)?;
        drop(span);
        let n = h.n as usize;
        if spread {
            let span = tracing::debug_span!("save.graph.build").entered();
            let mut g = DistGraph::from_pieces(
                bal.comm(),
                n,
                (h.weighted, h.dim),
                pieces,
                GraphStrategy::Geometric,
            )?;
            drop(span);
            let _span = tracing::debug_span!("save.graph.partition").entered();
            g.balance(bal)?;
            return Ok(g);
        }
        let root = bal.comm().rank() == 0;
        let whole = root
            .then(|| whole_graph(pieces, n, h.weighted, h.dim))
            .transpose();
        let whole = agree(bal.comm(), 0, whole)?;
        let (graph, values) = whole.unzip();
        DistGraph::scatter(bal, graph.as_ref(), values.as_deref())
    }

    /// Reads this rank's records (collective): an equal slice of the file's
    /// records on every rank (`spread`), or all of them on the root. Checks
    /// the degrees against the arcs' count and the records against the
    /// saved sum; the same error on every rank.
    fn read_records<T: GraphValue, C: Communicator>(
        &self,
        comm: &C,
        spread: bool,
    ) -> Result<Pieces<T>> {
        let h = &self.header;
        let (p, r) = (comm.size() as u64, comm.rank() as u64);
        let (lo, hi) = match (spread, r) {
            (true, _) => (h.n * r / p, h.n * (r + 1) / p),
            (false, 0) => (0, h.n),
            (false, _) => (0, 0),
        };
        let (offs, _) = h.offsets()?;
        let widths = h.widths();
        let bad =
            |m: String| Error::invalid_input(format!("save file {}: {m}", self.path.display()));
        // The sections of words (values' bytes apart: `values`).
        let mut data: [Vec<u64>; 7] = Default::default();
        let mut values = Vec::new();
        let mut arcs_wrong = None;
        let mut degrees = Ok(());
        let read = MpiFile::open(comm, &self.path, false).and_then(|mut file| {
            let n = (hi - lo) as usize;
            for k in 0..VERTEX_SECTIONS {
                let at = offs[k] + lo * widths[k] as u64;
                if k == 4 {
                    values = vec![0u8; n * widths[k]];
                    file.read_at(at, &mut values, widths[k]);
                } else {
                    data[k] = read_words(&mut file, at, n * widths[k] / 8);
                }
            }
            // This rank's arcs: its degrees' sum, each at most the file's.
            let mine = data[1].iter().try_fold(0u64, |s, &d| {
                (d <= h.arcs).then(|| s.checked_add(d)).flatten()
            });
            if mine.is_none() {
                degrees = Err(bad("a degree exceeds the arcs (a corrupt file)".into()));
            }
            let (first, total) = placed(comm, hi - lo, mine.unwrap_or(0));
            // The same on every rank: read no arc when the degrees are wrong.
            let arcs = if total[1] == h.arcs {
                mine.unwrap_or(0)
            } else {
                arcs_wrong = Some(total[1]);
                0
            };
            for k in VERTEX_SECTIONS..7 {
                let at = offs[k] + first[1] * widths[k] as u64;
                data[k] = read_words(&mut file, at, arcs as usize * widths[k] / 8);
            }
            file.close()
        });
        agree(comm, 0, read)?;
        agree(comm, 0, degrees)?;
        if let Some(t) = arcs_wrong {
            return Err(bad(format!(
                "degrees summing to {t} arcs, the header says {} (a corrupt file)",
                h.arcs
            )));
        }
        let span = tracing::debug_span!("save.graph.decode").entered();
        let pieces = records::<T>(data, &values);
        drop(values);
        drop(span);
        let _span = tracing::debug_span!("save.graph.checksum").entered();
        if all_sums(comm, &[records_sum(&pieces, h.weighted, h.dim)])[0] != h.sum {
            return Err(bad(
                "the graph's records do not match their checksum (a corrupt file)".into(),
            ));
        }
        Ok(pieces)
    }
}

/// The root's whole graph and values from all the records.
fn whole_graph<T: GraphValue>(
    pieces: Pieces<T>,
    n: usize,
    weighted: bool,
    dim: usize,
) -> Result<(Graph, Vec<T>)> {
    let p = pieces.sorted(weighted, dim);
    if p.ids.len() != n || p.ids.iter().enumerate().any(|(k, &v)| k != v) {
        return Err(Error::invalid_input(
            "save file: its vertex ids are not 0..n (a corrupt file)",
        ));
    }
    let mut xadj = Vec::with_capacity(n + 1);
    xadj.push(0);
    for d in &p.deg {
        xadj.push(xadj[xadj.len() - 1] + d);
    }
    let mut g = Graph::from_csr(xadj, p.adj, Some(p.vwgt), weighted.then_some(p.ewgt))?;
    if dim > 0 {
        g = g.with_coords(dim, p.coords)?;
    }
    Ok((g, p.values))
}
