//! Partitioning unstructured computational graphs for nonuniform machines
//! (\[KOR95\], Kaddoura, Ou and Ranka).
//!
//! Decompose a graph into p parts whose weights are in the ratio of the
//! processors' speeds `a_1 : … : a_p` while keeping the cross edges ("Edges") and
//! the edges of the supergraph of parts ("Setups") small.
//!
//! * [`csr::Graph`] — CSR graph with optional vertex/edge weights and coordinates;
//!   [`io`] reads METIS, gmsh MSH 2.2 and Medit files (nodal or dual graph).
//! * Partitioners (each a `Default` struct implementing [`GraphPartitioner`]):
//!   [`Rcb`], [`Zci`], [`Hci`], [`Rsb`], [`IndexPartitioner`] (RCBI, RSBI, …),
//!   each with a [`Grouping`] (Simple or Binpacking) of the processors; RSB can
//!   refine every bisection with two-way FM ([`Rsb::refine_bisections`],
//!   `Algo::RsbKl`).
//! * [`Multilevel`] — multilevel k-way partitioner (\[KK98\]: heavy-edge
//!   coarsening, recursive-bisection initial partition, k-way refinement)
//!   that honours arbitrary targets; what `best` uses for quality.
//! * [`Repartitioner`] — migration-aware repartitioning (\[SKK00\]): a new
//!   partition for new targets trading edge cut against the data moved.
//! * [`FmRefiner`] lowers the cut of any partition within a balance tolerance;
//!   [`Refined`] chains it after a partitioner.
//! * [`Ordering`] — index-based remapping (§3): one 1D order, re-cut in
//!   O(p log n) when speeds change, moving few vertices.
//! * [`ids`] — vertex ids in messages, numbered as the caller numbers them.
//! * [`metrics()`] — edge cut, setups, part weights, imbalance.
//! * [`best_partition`] — every algorithm, refined, chosen by a
//!   lexicographic rule (meets the tolerance, then cut; see [`best`]).
//!
//! ```
//! use nuce_plan::graph::{grid_graph, metrics, GraphPartitioner, Hci, Refined};
//! let g = grid_graph(20, 30);
//! let speeds = [1.0, 2.0, 4.0];
//! let p = Refined::<Hci>::default().partition(&g, &speeds).unwrap();
//! let m = metrics(&g, &p, &speeds).unwrap();
//! assert!(m.imbalance <= 0.03 + 1e-9);
//! ```

use serde::{Deserialize, Serialize};

use crate::error::Result;

pub mod best;
pub mod bisect;
mod coarsen;
pub mod csr;
pub mod ids;
mod interval;
pub mod io;
pub mod metrics;
pub mod multilevel;
pub mod order;
pub mod rcb;
pub mod refine;
pub mod repart;
pub mod rsb;
pub mod sfc;
pub mod slab;

pub use best::{best_partition, BestPartition, BEST_RSB_MAX_VERTICES};
pub use bisect::Grouping;
pub use csr::{grid_graph, Coords, Graph};
pub use metrics::{metrics, Metrics, Partition};
pub use multilevel::Multilevel;
pub use order::{IndexKind, IndexPartitioner, IntervalCut, Ordering};
pub use rcb::Rcb;
pub use refine::{FmRefiner, Refined};
pub use repart::{Repartition, Repartitioner};
pub use rsb::Rsb;
pub use sfc::{Hci, Zci};

/// A graph partitioner: parts proportional to `targets` (speeds, any positive
/// scale; part `i` gets about `targets[i] / Σ targets` of the vertex weight).
pub trait GraphPartitioner {
    /// Partitions `g` into `targets.len()` parts.
    fn partition(&self, g: &Graph, targets: &[f64]) -> Result<Partition>;
}

/// The algorithms by name, for the command line and benchmarks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Algo {
    /// Recursive coordinate bisection.
    Rcb,
    /// Z-curve index.
    Zci,
    /// Hilbert-curve index.
    Hci,
    /// Recursive spectral bisection.
    Rsb,
    /// RSB with every bisection improved by two-way FM (Hendrickson–Leland
    /// RSB + KL \[HeLe92\], cited by \[KOR95\]); not in \[KOR95\]'s tables.
    RsbKl,
    /// RSB index (1D order, then cut).
    Rsbi,
    /// RCB index (1D order, then cut).
    Rcbi,
    /// Multilevel k-way ([`Multilevel`], \[KK98\]); also named `ml`.
    Multilevel,
}

impl Algo {
    /// Every algorithm.
    pub const ALL: [Algo; 8] = [
        Algo::Rcb,
        Algo::Zci,
        Algo::Hci,
        Algo::Rsb,
        Algo::RsbKl,
        Algo::Rsbi,
        Algo::Rcbi,
        Algo::Multilevel,
    ];

    /// The candidates of `best` (each refined by [`FmRefiner`], the least cut
    /// within the tolerance wins): [`Multilevel`], RCB (when there are
    /// coordinates) and RSB+KL; plain RSB joins them on graphs of at most
    /// [`BEST_RSB_MAX_VERTICES`] vertices (issue 20, [`best_partition`]). Measured on 27 mesh cases
    /// (`scripts/bench_multilevel.sh`'s meshes t4, big, t5; p = 4, 8, 16):
    /// refined RCB beats multilevel in 6 cases at 0.7 × its time, RSB+KL in 11
    /// (by up to 10 %) at 34 × its time, together 1.6 % less cut on geometric
    /// mean; ZCI, HCI, RSB, RSBI and RCBI add 0.5 % more for 3 × the time
    /// and were dropped.
    pub const BEST: [Algo; 3] = [Algo::Multilevel, Algo::Rcb, Algo::RsbKl];

    /// Parses a lowercase name (`ml` is short for `multilevel`).
    pub fn from_name(s: &str) -> Option<Algo> {
        let s = if s == "ml" { "multilevel" } else { s };
        Algo::ALL.into_iter().find(|a| a.name() == s)
    }

    /// Lowercase name.
    pub fn name(self) -> &'static str {
        match self {
            Algo::Rcb => "rcb",
            Algo::Zci => "zci",
            Algo::Hci => "hci",
            Algo::Rsb => "rsb",
            Algo::RsbKl => "rsbkl",
            Algo::Rsbi => "rsbi",
            Algo::Rcbi => "rcbi",
            Algo::Multilevel => "multilevel",
        }
    }

    /// True when the algorithm needs coordinates.
    pub fn needs_coords(self) -> bool {
        !matches!(
            self,
            Algo::Rsb | Algo::RsbKl | Algo::Rsbi | Algo::Multilevel
        )
    }

    /// Runs the algorithm with default parameters and `grouping`, optionally
    /// followed by [`FmRefiner`] with the given tolerance.
    pub fn partition(
        self,
        g: &Graph,
        targets: &[f64],
        grouping: Grouping,
        refine: Option<FmRefiner>,
    ) -> Result<Partition> {
        // Valid speeds whose sum overflows (near f64::MAX) are normalised
        // first: every partitioner sums them.
        let normal;
        let targets = if targets.iter().sum::<f64>().is_finite() {
            targets
        } else {
            normal = crate::normalized(targets)?;
            &normal
        };
        let mut p = match self {
            Algo::Rcb => Rcb { grouping }.partition(g, targets),
            Algo::Zci => Zci { grouping }.partition(g, targets),
            Algo::Hci => Hci { grouping }.partition(g, targets),
            Algo::Rsb => Rsb {
                grouping,
                ..Rsb::default()
            }
            .partition(g, targets),
            Algo::RsbKl => Rsb {
                grouping,
                refine_bisections: Some(0.005),
                ..Rsb::default()
            }
            .partition(g, targets),
            Algo::Rsbi | Algo::Rcbi => IndexPartitioner {
                kind: if self == Algo::Rsbi {
                    IndexKind::Rsbi
                } else {
                    IndexKind::Rcbi
                },
                grouping,
                ..IndexPartitioner::default()
            }
            .partition(g, targets),
            // The multilevel partitioner aims at the refiner's tolerance
            // itself (its own default, 3 %, left `best` with a tolerance of
            // 0 a multilevel candidate the refiner could not rebalance).
            Algo::Multilevel => Multilevel {
                tolerance: refine.map_or(Multilevel::default().tolerance, |r| r.tolerance),
                ..Multilevel::default()
            }
            .partition(g, targets),
        }?;
        if let Some(r) = refine {
            r.refine(g, targets, &mut p)?;
        }
        Ok(p)
    }
}
