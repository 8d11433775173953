//! Ownership ranges for PETSc's `DMDACreate3d`: the rectilinear (tensor)
//! decomposition of an `nx × ny × nz` grid fitted to the balancer's speeds
//! in DMDA's own rank order ([`Rectilinear3::fit_rank_order`]).
//!
//! DMDA numbers its processes x fastest: rank `r = i + px·(j + py·k)` owns
//! the box `lx[i] × ly[j] × lz[k]`. nuce keeps that placement (the
//! application creates its DMDA on the balancer's communicator's ranks, in
//! their order, with no renumbering) and fits only the ranges to the
//! speeds. A tensor grid cannot give every rank an arbitrary volume (a
//! rank's volume is the product of its three ranges), so the result reports
//! how far it is from the speeds' ideal: [`OwnershipRanges::imbalance`].
//!
//! ```no_run
//! let universe = mpi::initialize().unwrap();
//! let mut bal = nuce::Balancer::new(&universe.world()).unwrap();
//! bal.measure().unwrap();
//! let r = nuce::OwnershipRanges::new(&mut bal, (128, 96, 64), None).unwrap();
//! // DMDACreate3d(comm, ..., M = 128, N = 96, P = 64, m = r.procs[0], n = r.procs[1],
//! //              p = r.procs[2], ..., lx = r.lx, ly = r.ly, lz = r.lz, &da)
//! assert_eq!(r.lx.iter().sum::<usize>(), 128);
//! ```

use serde::{Deserialize, Serialize};

use super::balancer::Balancer;
use super::clock::waiting;
use super::comm::root_compute;
use crate::error::Result;
use crate::plan::array3d::{GridPlan3, Rectilinear3, Shape3};

/// The ownership ranges of a rectilinear decomposition in PETSc DMDA's rank
/// order (module docs).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OwnershipRanges {
    /// Processors along x, y, z (`procs[0]·procs[1]·procs[2]` = ranks):
    /// DMDA's `m, n, p`.
    pub procs: [usize; 3],
    /// Cells of each of the `procs[0]` x-ranges, summing to `nx` (DMDA's `lx`).
    pub lx: Vec<usize>,
    /// Cells of each y-range, summing to `ny` (DMDA's `ly`).
    pub ly: Vec<usize>,
    /// Cells of each z-range, summing to `nz` (DMDA's `lz`).
    pub lz: Vec<usize>,
    /// How far the slowest rank's predicted time is above the speeds' ideal
    /// (every rank finishing together): `max_r (volume_r / share_r) − 1`,
    /// with `share_r` rank `r`'s share of the cells by speed
    /// ([`GridPlan3::imbalance`]). 0 is a perfect fit.
    pub imbalance: f64,
    /// The decomposition as boxes, box `r` owned by rank `r`.
    pub plan: GridPlan3,
}

impl OwnershipRanges {
    /// The ownership ranges `lx, ly, lz` of an `nx × ny × nz` grid for the
    /// speeds measured so far (uniform when none are known), in PETSc
    /// DMDA's rank order (rank `r = i + px·(j + py·k)` owns `lx[i] × ly[j] ×
    /// lz[k]`; module docs), on the processor grid `procs` or, with `None`,
    /// the grid nuce chooses ([`Rectilinear3::fit_rank_order`]).
    ///
    /// A balance point: the phases the ranks recorded since the previous
    /// one ([`Balancer::record_phase`]: nuce cannot time a phase whose work
    /// and waits it does not see) become the speeds first; speeds from
    /// [`Balancer::measure`], [`Balancer::set_speeds`] or the last
    /// [`Balancer::maybe_remap`] hold until a phase is recorded. So a DMDA
    /// program that records its solves and calls this again gets ranges that
    /// follow the speeds. Collective: the root plans, every rank receives
    /// the same ranges. Every rank states the same `shape` and `procs`; a
    /// difference, a zero extent, a grid whose product is not the number of
    /// ranks or with more processors than cells along an axis is the same
    /// error on every rank, as are phases timed on some ranks only with no
    /// earlier speeds.
    pub fn new(
        balancer: &mut Balancer,
        shape: Shape3,
        procs: Option<[usize; 3]>,
    ) -> Result<OwnershipRanges> {
        let _w = waiting();
        let (nx, ny, nz) = shape;
        let grid = procs.map_or("chosen by nuce".to_string(), |g| {
            format!("{}x{}x{}", g[0], g[1], g[2])
        });
        balancer.entry(
            &format!("OwnershipRanges::new({nx}x{ny}x{nz}, processor grid {grid})"),
            None,
        )?;
        balancer.take_recorded_speeds()?;
        root_compute(balancer.comm(), super::balancer::ROOT, || {
            let speeds = &balancer.speeds_or_uniform();
            let (fit, plan) = Rectilinear3.fit_rank_order(shape, speeds, procs)?;
            let [lx, ly, lz] = fit.ranges;
            Ok(OwnershipRanges {
                procs: fit.procs,
                lx,
                ly,
                lz,
                imbalance: plan.imbalance(speeds)?,
                plan,
            })
        })
    }
}
