//! Records of any size up to 4096 bytes on the runtime's fixed-size graph
//! values: [`Records`], what the C API needs of a `DistGraph<[u8; N]>` for
//! any `N`, and [`build_padded`], which picks `N` for a record size.

use nuce::plan::graph::Partition;
use nuce::{
    Balancer, Departing, Departure, DistGraph, Error, GraphValue, Joining, RemapReport, Result,
};

/// The record sizes the runtime stores (bytes); a record of `elem_size`
/// bytes takes the first size ≥ `elem_size`.
pub(super) const RECORD_SIZES: [usize; 7] = [8, 16, 32, 64, 256, 1024, 4096];

/// What the C API needs of a `DistGraph<[u8; N]>`, for any `N`: the graph's
/// verbs, with records read from and written to the application's
/// `elem`-byte records.
pub(super) trait Records {
    fn owned(&self) -> &[usize];
    fn ghosts(&self) -> &[usize];
    fn comm(&self) -> &mpi::topology::SimpleCommunicator;
    fn global_len(&self) -> usize;
    fn neighbors(&self, i: usize) -> Vec<(usize, f64)>;
    /// Copies the application's owned records (`elem` bytes each) in.
    fn load(&mut self, app: &[u8], elem: usize);
    /// Copies the owned records out to the start of the slot buffer `app`,
    /// or (`ghosts_only`) the ghosts' records to its ghost slots.
    fn store(&self, app: &mut [u8], elem: usize, ghosts_only: bool);
    fn exchange_ghosts(&mut self) -> Result<()>;
    /// Every record on `root`, `elem` bytes each in global order.
    fn gather(&self, root: i32, elem: usize) -> Result<Option<Vec<u8>>>;
    fn remap(&mut self, part: &Partition) -> Result<()>;
    fn maybe_remap(&mut self, bal: &mut Balancer, it: usize, ahead: usize) -> Result<RemapReport>;
    /// The checked entry of the C call `op`, refused by this rank with `refused`.
    fn entry(&self, op: &str, refused: Option<&Error>) -> Result<()>;
    fn timeout(&self) -> Option<std::time::Duration>;
    /// Saves the graph ([`DistGraph::save`]), with `bal`'s speed state
    /// when given ([`DistArray2::checkpoint`]).
    fn save(&self, path: &str, user: &[u8], bal: Option<&Balancer>) -> Result<()>;
    /// Moves the vertices off the leaving ranks ([`Departure::plan_graph`]).
    fn plan_departure(&mut self, d: &Departure, bal: &Balancer) -> Result<()>;
    /// The graph as data that a departure carries over.
    fn departing(&mut self) -> &mut dyn Departing;
    /// The graph as data that standby ranks join.
    fn joining(&mut self) -> &mut dyn Joining;
}

impl<const N: usize> Records for DistGraph<[u8; N]>
where
    [u8; N]: GraphValue,
{
    fn owned(&self) -> &[usize] {
        DistGraph::owned(self)
    }
    fn ghosts(&self) -> &[usize] {
        DistGraph::ghosts(self)
    }
    fn comm(&self) -> &mpi::topology::SimpleCommunicator {
        DistGraph::comm(self)
    }
    fn global_len(&self) -> usize {
        DistGraph::global_len(self)
    }
    fn neighbors(&self, i: usize) -> Vec<(usize, f64)> {
        DistGraph::neighbors(self, i).collect()
    }
    fn load(&mut self, app: &[u8], elem: usize) {
        for (v, src) in self.values_mut().iter_mut().zip(app.chunks_exact(elem)) {
            v[..elem].copy_from_slice(src);
        }
    }
    fn store(&self, app: &mut [u8], elem: usize, ghosts_only: bool) {
        let (at, from) = if ghosts_only {
            (self.owned().len() * elem, self.ghost_values())
        } else {
            (0, self.values())
        };
        for (d, v) in app[at..].chunks_exact_mut(elem).zip(from) {
            d.copy_from_slice(&v[..elem]);
        }
    }
    fn exchange_ghosts(&mut self) -> Result<()> {
        DistGraph::exchange_ghosts(self).map(drop)
    }
    fn gather(&self, root: i32, elem: usize) -> Result<Option<Vec<u8>>> {
        Ok(DistGraph::gather(self, root)?
            .map(|all| all.iter().flat_map(|v| v[..elem].iter().copied()).collect()))
    }
    fn remap(&mut self, part: &Partition) -> Result<()> {
        DistGraph::remap(self, part).map(drop)
    }
    fn maybe_remap(&mut self, bal: &mut Balancer, it: usize, ahead: usize) -> Result<RemapReport> {
        bal.maybe_remap_ahead(self, it, ahead)
    }
    fn entry(&self, op: &str, refused: Option<&Error>) -> Result<()> {
        DistGraph::entry(self, op, refused)
    }
    fn timeout(&self) -> Option<std::time::Duration> {
        DistGraph::timeout(self)
    }
    fn save(&self, path: &str, user: &[u8], bal: Option<&Balancer>) -> Result<()> {
        match bal {
            Some(b) => self.checkpoint(b, path, user),
            None => DistGraph::save(self, path, user),
        }
        .map(drop)
    }
    fn plan_departure(&mut self, d: &Departure, bal: &Balancer) -> Result<()> {
        d.plan_graph(bal, self).map(drop)
    }
    fn departing(&mut self) -> &mut dyn Departing {
        self
    }
    fn joining(&mut self) -> &mut dyn Joining {
        self
    }
}

/// `elem`-byte records padded to `N` bytes each, their tail zero.
pub(super) fn pad<const N: usize>(bytes: &[u8], elem: usize) -> Vec<[u8; N]> {
    bytes
        .chunks_exact(elem)
        .map(|r| {
            let mut v = [0u8; N];
            v[..elem].copy_from_slice(r);
            v
        })
        .collect()
}

/// A way to build a graph of records padded to `N` bytes, for any `N` of
/// [`RECORD_SIZES`] ([`build_padded`] picks it).
pub(super) trait Build {
    fn build<const N: usize>(self, elem: usize) -> Result<Box<dyn Records>>
    where
        [u8; N]: GraphValue;
}

/// Builds with the smallest record size of [`RECORD_SIZES`] ≥ `elem`.
pub(super) fn build_padded(b: impl Build, elem: usize) -> Result<Box<dyn Records>> {
    match RECORD_SIZES.iter().position(|&n| n >= elem) {
        Some(0) => b.build::<8>(elem),
        Some(1) => b.build::<16>(elem),
        Some(2) => b.build::<32>(elem),
        Some(3) => b.build::<64>(elem),
        Some(4) => b.build::<256>(elem),
        Some(5) => b.build::<1024>(elem),
        _ => b.build::<4096>(elem),
    }
}

/// The checked `elem_size` of a new graph.
pub(super) fn record_size(elem_size: usize) -> Result<()> {
    let max = RECORD_SIZES[RECORD_SIZES.len() - 1];
    if elem_size == 0 || elem_size > max {
        return Err(Error::invalid_input(format!(
            "elem_size = {elem_size}: records of 1 to {max} bytes are supported"
        )));
    }
    Ok(())
}
