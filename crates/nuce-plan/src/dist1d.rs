//! One-dimensional distributions of `B` equal chunks over processors of
//! cycle times `t_1, …, t_p` (seed `002_12465efe4da2a5ba.txt` §2).
//!
//! * [`Static`] — Algorithm 2 (§2.2, Table 1): the optimal chunk counts,
//!   `c_i` owning consecutive chunks in input order.
//! * [`Incremental`] — the dynamic programming allocation of §2.4.1
//!   (Figure 8): Algorithm 2 without its initialisation, one chunk at a time
//!   to the processor minimising `t_j (c_j + 1)`; every prefix of the
//!   sequence is an optimal allocation of that many chunks.
//! * [`LuSlices`] — §2.4.2 (Figures 9–10): slices of `B` chunks, each filled
//!   with the incremental sequence *reversed*, so that every suffix of a
//!   slice (what remains to update as LU progresses) stays balanced.
//! * [`Panels`] — §2.3 (Figures 5–6): panels of `B` consecutive tile
//!   columns, allocated periodically; inside a panel processor `i` gets `c_i`
//!   (Algorithm 2) consecutive columns, processors ordered by increasing
//!   `c_i t_i` so that the wavefront never waits.
//!
//! Every distributor returns a [`ChunkPlan`]: the owner of each chunk, the
//! counts and the makespan `max_i c_i t_i`.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use serde::{Deserialize, Serialize};

use crate::check_speeds;
use crate::error::{Error, Result};

/// A distribution of chunks `0..B` over processors.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChunkPlan {
    /// Name of the distributor.
    pub algorithm: String,
    /// Number of chunks per processor, in input order.
    pub counts: Vec<usize>,
    /// Owner (0-based processor) of each chunk, in chunk order.
    pub owners: Vec<usize>,
    /// `max_i counts_i · t_i`.
    pub makespan: f64,
}

impl ChunkPlan {
    /// Owner of chunk `k`, `None` past the end.
    pub fn owner_of(&self, k: usize) -> Option<usize> {
        self.owners.get(k).copied()
    }

    /// The chunks of processor `i`, in increasing order.
    pub fn chunks_of(&self, i: usize) -> Vec<usize> {
        (0..self.owners.len())
            .filter(|&k| self.owners[k] == i)
            .collect()
    }

    /// Builds a plan from the owner of each chunk.
    pub fn from_owners(algorithm: &str, owners: Vec<usize>, cycle_times: &[f64]) -> Self {
        let mut counts = vec![0; cycle_times.len()];
        for &o in &owners {
            counts[o] += 1;
        }
        ChunkPlan {
            algorithm: algorithm.into(),
            makespan: makespan(&counts, cycle_times),
            counts,
            owners,
        }
    }
}

/// An algorithm distributing `chunks` equal chunks over processors.
pub trait ChunkDistributor {
    /// Short name (`nuce plan distribute --mode`).
    fn name(&self) -> &'static str;
    /// Distributes `chunks` chunks over processors of these cycle times
    /// (finite, `> 0`, else [`Error::InvalidSpeed`]).
    fn distribute(&self, chunks: usize, cycle_times: &[f64]) -> Result<ChunkPlan>;
}

/// Largest number of chunks for which a per-chunk owner list is built
/// (8 bytes each); [`optimal_counts`] alone has no limit.
pub const MAX_CHUNKS: usize = 100_000_000;

fn check_chunks(chunks: usize) -> Result<()> {
    if chunks > MAX_CHUNKS {
        return Err(Error::InvalidInput(format!(
            "{chunks} chunks: at most {MAX_CHUNKS} when listing owners"
        )));
    }
    Ok(())
}

/// `max_i c_i t_i`, the execution time of an allocation (002 §2.2).
pub fn makespan(counts: &[usize], cycle_times: &[f64]) -> f64 {
    counts
        .iter()
        .zip(cycle_times)
        .map(|(&c, &t)| c as f64 * t)
        .fold(0.0, f64::max)
}

/// Heap entry ordered by `(t_j (c_j + 1), j)`, smallest first.
#[derive(PartialEq)]
struct Next(f64, usize);

impl Eq for Next {}
impl PartialOrd for Next {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Next {
    fn cmp(&self, other: &Self) -> Ordering {
        // Reversed: BinaryHeap is a max-heap.
        other.0.total_cmp(&self.0).then(other.1.cmp(&self.1))
    }
}

/// Lines 3–6 of Algorithm 2: starting from `counts`, give `more` chunks one
/// at a time to `argmin_j t_j (c_j + 1)` (lowest index on ties), returning
/// the chosen processors in order. `O((p + more) log p)`.
fn increment(counts: &mut [usize], t: &[f64], more: usize) -> Vec<usize> {
    let mut heap: BinaryHeap<Next> = t
        .iter()
        .zip(counts.iter())
        .enumerate()
        .map(|(j, (&tj, &c))| Next(tj * (c + 1) as f64, j))
        .collect();
    let mut chosen = Vec::with_capacity(more);
    for _ in 0..more {
        let Some(Next(_, j)) = heap.pop() else { break };
        counts[j] += 1;
        chosen.push(j);
        heap.push(Next(t[j] * (counts[j] + 1) as f64, j));
    }
    chosen
}

/// Algorithm 2 of 002 §2.2 (DISTRIBUTE): the optimal counts `c_i` for `B`
/// chunks, minimising `max_i c_i t_i`. Initialise `c_i = ⌊(1/t_i)/Σ(1/t) · B⌋`,
/// then increment `argmin_j t_j (c_j + 1)` until `Σ c = B` (lowest index on
/// ties, which reproduces Table 1). `O(p log p)`.
///
/// ```
/// // 002 Table 1: B = 78 chunks, cycle times 3, 5, 8.
/// let c = nuce::plan::dist1d::optimal_counts(78, &[3.0, 5.0, 8.0])?;
/// assert_eq!(c, vec![40, 24, 14]);
/// # Ok::<(), nuce::Error>(())
/// ```
pub fn optimal_counts(chunks: usize, cycle_times: &[f64]) -> Result<Vec<usize>> {
    check_speeds(cycle_times)?;
    let inv: f64 = cycle_times.iter().map(|t| 1.0 / t).sum();
    let mut counts: Vec<usize> = cycle_times
        .iter()
        .map(|t| ((1.0 / t) / inv * chunks as f64).floor() as usize)
        .collect();
    if counts.iter().sum::<usize>() > chunks {
        // Only possible through rounding of the shares: restart from zero.
        counts.iter_mut().for_each(|c| *c = 0);
    }
    let more = chunks - counts.iter().sum::<usize>();
    increment(&mut counts, cycle_times, more);
    Ok(counts)
}

/// The incremental allocation of 002 §2.4.1 (Figure 8): the processor chosen
/// for chunks `1..=B`, each time `argmin_j t_j (c_j + 1)` (lowest index on
/// ties). Every prefix of length `s` is an optimal allocation of `s` chunks.
/// `O((p + B) log p)`.
pub fn incremental_sequence(chunks: usize, cycle_times: &[f64]) -> Result<Vec<usize>> {
    check_speeds(cycle_times)?;
    check_chunks(chunks)?;
    let mut counts = vec![0; cycle_times.len()];
    Ok(increment(&mut counts, cycle_times, chunks))
}

/// Algorithm 2 (002 §2.2): optimal counts, processor `i` owning the `c_i`
/// chunks after those of processors `0..i`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Static;

impl ChunkDistributor for Static {
    fn name(&self) -> &'static str {
        "static"
    }
    fn distribute(&self, chunks: usize, cycle_times: &[f64]) -> Result<ChunkPlan> {
        check_chunks(chunks)?;
        let counts = optimal_counts(chunks, cycle_times)?;
        let owners = counts
            .iter()
            .enumerate()
            .flat_map(|(i, &c)| std::iter::repeat_n(i, c))
            .collect();
        Ok(ChunkPlan::from_owners(self.name(), owners, cycle_times))
    }
}

/// The incremental DP allocation (002 §2.4.1, Figure 8): chunk `k` goes to
/// the `k`-th processor of [`incremental_sequence`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Incremental;

impl ChunkDistributor for Incremental {
    fn name(&self) -> &'static str {
        "incremental"
    }
    fn distribute(&self, chunks: usize, cycle_times: &[f64]) -> Result<ChunkPlan> {
        let seq = incremental_sequence(chunks, cycle_times)?;
        Ok(ChunkPlan::from_owners(self.name(), seq, cycle_times))
    }
}

/// LU column-block allocation (002 §2.4.2, Figures 9–10): slices of `slice`
/// chunks (0: one slice of all chunks); within a slice of `b` chunks the
/// `k`-th chunk goes to `σ(b − k + 1)`, `σ` the incremental sequence — the
/// pattern `P3 P2 P1 P1 P2 P1 P3 P1 P2 P1` for `t = (3, 5, 8)`, `B = 10`.
/// The last slice may be shorter and is reversed on its own length.
/// `O((p + B) log p)`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LuSlices {
    /// Chunks per slice (the paper's `B`); 0 means a single slice.
    pub slice: usize,
}

impl ChunkDistributor for LuSlices {
    fn name(&self) -> &'static str {
        "lu"
    }
    fn distribute(&self, chunks: usize, cycle_times: &[f64]) -> Result<ChunkPlan> {
        check_chunks(chunks)?;
        let b = if self.slice == 0 {
            chunks
        } else {
            self.slice.min(chunks)
        };
        let seq = incremental_sequence(b, cycle_times)?;
        let mut owners = Vec::with_capacity(chunks);
        while owners.len() < chunks {
            let len = b.min(chunks - owners.len());
            owners.extend(seq[..len].iter().rev());
        }
        Ok(ChunkPlan::from_owners(self.name(), owners, cycle_times))
    }
}

/// Cost of each LU update step for a column-block allocation (002 §2.4,
/// Figures 7 and 10): after factoring block `k` (`k = 1..B−1`), blocks
/// `k+1..B` are updated, taking `max_i t_i · #{j > k : owner_j = i}`.
pub fn lu_update_costs(owners: &[usize], cycle_times: &[f64]) -> Result<Vec<f64>> {
    check_speeds(cycle_times)?;
    check_owners(owners, cycle_times.len())?;
    let mut counts = vec![0usize; cycle_times.len()];
    let mut costs = Vec::with_capacity(owners.len().saturating_sub(1));
    // Walk backwards: the suffix after block k is known incrementally.
    for &o in owners.iter().skip(1).rev() {
        counts[o] += 1;
        costs.push(makespan(&counts, cycle_times));
    }
    costs.reverse();
    Ok(costs)
}

/// Cyclic (`CYCLIC(1)`) owners of `chunks` chunks over `p` processors: the
/// homogeneous baseline of 002 Figure 10.
pub fn cyclic_owners(chunks: usize, p: usize) -> Vec<usize> {
    (0..chunks).map(|k| k % p.max(1)).collect()
}

fn check_owners(owners: &[usize], p: usize) -> Result<()> {
    match owners.iter().find(|&&o| o >= p) {
        Some(o) => Err(Error::InvalidInput(format!(
            "owner {o} out of range for {p} processors"
        ))),
        None => Ok(()),
    }
}

/// Periodic panel allocation for finite-difference sweeps (002 §2.3,
/// Figure 6): tile columns are cut into panels of `period` columns (0: one
/// panel of all chunks). Inside every panel processor `i` gets `c_i`
/// consecutive columns, `c` from Algorithm 2 for `period` chunks, processors
/// ordered by increasing `c_i t_i` (stable) so that each processor's next
/// one is never the bottleneck; the last, partial panel follows the same
/// pattern truncated. `O(p log p + B)`.
///
/// Under the horizontal schedule of [`sweep_makespan`] one panel is a flow
/// shop of identical jobs (the rows) with stage times `c_i t_i`, whose
/// makespan `Σ c_i t_i + (rows − 1)·max c_i t_i` does not depend on the
/// stage order; the `c_i t_i` order of the seed decides where the start-up
/// idle time falls, not the makespan (tested).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Panels {
    /// Columns per panel (the paper's `B`); 0 means a single panel.
    pub period: usize,
}

impl Panels {
    /// The processor order within a panel and the per-panel counts.
    pub fn pattern(&self, chunks: usize, cycle_times: &[f64]) -> Result<(Vec<usize>, Vec<usize>)> {
        let b = if self.period == 0 {
            chunks
        } else {
            self.period
        };
        let counts = optimal_counts(b, cycle_times)?;
        let mut order: Vec<usize> = (0..cycle_times.len()).collect();
        order.sort_by(|&a, &c| {
            (counts[a] as f64 * cycle_times[a]).total_cmp(&(counts[c] as f64 * cycle_times[c]))
        });
        Ok((order, counts))
    }
}

impl ChunkDistributor for Panels {
    fn name(&self) -> &'static str {
        "panel"
    }
    fn distribute(&self, chunks: usize, cycle_times: &[f64]) -> Result<ChunkPlan> {
        check_chunks(chunks)?;
        let (order, counts) = self.pattern(chunks, cycle_times)?;
        let panel: Vec<usize> = order
            .iter()
            .flat_map(|&i| std::iter::repeat_n(i, counts[i]))
            .collect();
        let owners = panel.iter().copied().cycle().take(chunks).collect();
        Ok(ChunkPlan::from_owners(self.name(), owners, cycle_times))
    }
}

/// Simulated execution time of a finite-difference sweep over `rows × B`
/// tiles whose tile columns are owned as in `owners` (002 §2.3, Figure 5):
/// tile `(r, c)` needs tiles `(r − 1, c)` and `(r, c − 1)`, `t_i` per tile.
/// Each processor walks its blocks of consecutive columns left to right and,
/// inside a block, processes tiles *horizontally* — row by row across the
/// block's columns ("rather than computing its tile columns one after the
/// other, each processor processes tiles horizontally") — so it never delays
/// the next processor. Ordering tiles by (block, row, column) is a
/// topological order of all dependencies, which gives the simulation in one
/// pass. `O(rows · B)`.
pub fn sweep_makespan(owners: &[usize], rows: usize, cycle_times: &[f64]) -> Result<f64> {
    check_speeds(cycle_times)?;
    check_owners(owners, cycle_times.len())?;
    let mut free = vec![0.0f64; cycle_times.len()];
    // Finish time, per row, of the column left of the current block.
    let mut boundary = vec![0.0f64; rows];
    let mut end = 0.0f64;
    let mut c0 = 0;
    while c0 < owners.len() {
        let o = owners[c0];
        let c1 = c0 + owners[c0..].iter().take_while(|&&x| x == o).count();
        let mut above = vec![0.0f64; c1 - c0];
        for left_of_row in boundary.iter_mut() {
            let mut left = *left_of_row;
            for a in above.iter_mut() {
                let finish = free[o].max(*a).max(left) + cycle_times[o];
                free[o] = finish;
                *a = finish;
                left = finish;
            }
            *left_of_row = left;
            end = end.max(left);
        }
        c0 = c1;
    }
    Ok(end)
}

/// The distributor called `name` (`static`, `incremental`, `lu`, `panel`);
/// `period` is the slice or panel length of `lu` and `panel` (0: all chunks).
pub fn distributor_by_name(name: &str, period: usize) -> Result<Box<dyn ChunkDistributor>> {
    Ok(match name {
        "static" => Box::new(Static),
        "incremental" => Box::new(Incremental),
        "lu" => Box::new(LuSlices { slice: period }),
        "panel" => Box::new(Panels { period }),
        _ => {
            return Err(Error::InvalidInput(format!(
                "unknown distribution mode {name:?}; known: static, incremental, lu, panel"
            )))
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zero_chunks_and_bad_times() {
        assert_eq!(optimal_counts(0, &[1.0, 2.0]).unwrap(), vec![0, 0]);
        assert!(optimal_counts(3, &[1.0, 0.0]).is_err());
        assert!(incremental_sequence(3, &[]).is_err());
        assert!(lu_update_costs(&[0, 5], &[1.0]).is_err());
        assert!(distributor_by_name("x", 0).is_err());
        for name in ["static", "incremental", "lu", "panel"] {
            let d = distributor_by_name(name, 0).unwrap();
            assert!(d.distribute(MAX_CHUNKS + 1, &[1.0]).is_err());
        }
        let p = Panels { period: 4 }.distribute(0, &[1.0]).unwrap();
        assert!(p.owners.is_empty());
    }
}
