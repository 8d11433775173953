//! One-dimensional distributions of `B` equal chunks over processors of
//! cycle times `t_1, …, t_p` (\[BBLRR01\] §2).
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

    /// Checks the plan against its own constraints before it is returned:
    /// `chunks` owners, each below `p`, counts that match them and sum to
    /// `chunks`, and a finite makespan equal to `max_i c_i t_i` (cycle times
    /// near `f64::MAX` times a count overflow: an [`Error::InvalidInput`]).
    /// A violation of the others is an internal error ([`Error::InvalidPlan`]),
    /// never a wrong answer.
    pub fn check(&self, chunks: usize, cycle_times: &[f64]) -> Result<()> {
        let p = cycle_times.len();
        let mut counts = vec![0usize; p];
        for &o in &self.owners {
            match counts.get_mut(o) {
                Some(c) => *c += 1,
                None => return Err(Error::InvalidPlan(format!("owner {o} of {p} processors"))),
            }
        }
        if self.owners.len() != chunks || counts != self.counts {
            return Err(Error::InvalidPlan(format!(
                "{} owners and counts summing to {} for {chunks} chunks",
                self.owners.len(),
                self.counts.iter().map(|&c| c as u128).sum::<u128>()
            )));
        }
        if !self.makespan.is_finite() {
            return Err(Error::InvalidInput(format!(
                "the makespan overflows f64: cycle times up to {:e} times counts up to {}",
                cycle_times.iter().copied().fold(0.0, f64::max),
                self.counts.iter().max().unwrap_or(&0)
            )));
        }
        if self.makespan != makespan(&self.counts, cycle_times) {
            return Err(Error::InvalidPlan(
                "makespan differs from max c_i t_i".into(),
            ));
        }
        Ok(())
    }

    /// [`ChunkPlan::from_owners`], then [`ChunkPlan::check`].
    fn checked(
        algorithm: &str,
        owners: Vec<usize>,
        chunks: usize,
        cycle_times: &[f64],
    ) -> Result<Self> {
        let plan = Self::from_owners(algorithm, owners, cycle_times);
        plan.check(chunks, cycle_times)?;
        Ok(plan)
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

/// Largest number of chunks for which a per-chunk owner list is built:
/// 2^22 (4 194 304: 32 MiB of owners, about 2 s for `nuce plan
/// distribute --mode incremental --json` at 10 000 processors on a busy
/// machine, 80 MB of JSON). It was 10^8, which took minutes and
/// gigabytes. [`optimal_counts`] alone allows up to [`MAX_COUNT_CHUNKS`].
pub const MAX_CHUNKS: usize = 1 << 22;

/// Largest number of chunks (or panel period) [`optimal_counts`] accepts:
/// 2^53, below which the `f64` shares of Algorithm 2's initialisation are
/// within one of their exact value, so that at most about `p` increments
/// follow.
pub const MAX_COUNT_CHUNKS: usize = 1 << 53;

/// Largest `rows × chunks` of [`sweep_makespan`] (one step per tile):
/// 2^27, about a second.
pub const MAX_SWEEP_TILES: usize = 1 << 27;

fn check_chunks(chunks: usize) -> Result<()> {
    if chunks > MAX_CHUNKS {
        return Err(Error::InvalidInput(format!(
            "{chunks} chunks: at most {MAX_CHUNKS} when listing owners"
        )));
    }
    Ok(())
}

/// `max_i c_i t_i`, the execution time of an allocation (\[BBLRR01\] §2.2).
pub fn makespan(counts: &[usize], cycle_times: &[f64]) -> f64 {
    counts
        .iter()
        .zip(cycle_times)
        .map(|(&c, &t)| c as f64 * t)
        .fold(0.0, f64::max)
}

/// Heap entry ordered by `(t_j (c_j + 1), j)`, smallest first (also the
/// `(t̄_i(x_i + 1), i)` of `fpm::partition`'s greedy step).
#[derive(PartialEq)]
pub(crate) struct Next(pub(crate) f64, pub(crate) usize);

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
    let mut chosen = Vec::with_capacity(more.min(MAX_CHUNKS));
    for _ in 0..more {
        let Some(Next(_, j)) = heap.pop() else { break };
        counts[j] += 1;
        chosen.push(j);
        heap.push(Next(t[j] * (counts[j] + 1) as f64, j));
    }
    chosen
}

/// Algorithm 2 of \[BBLRR01\] §2.2 (DISTRIBUTE): the optimal counts `c_i` for `B`
/// chunks, minimising `max_i c_i t_i`. Initialise `c_i = ⌊(1/t_i)/Σ(1/t) · B⌋`,
/// then increment `argmin_j t_j (c_j + 1)` until `Σ c = B` (lowest index on
/// ties, which reproduces Table 1). `O(p log p)`. At most
/// [`MAX_COUNT_CHUNKS`] chunks ([`Error::InvalidInput`] above).
///
/// ```
/// // \[BBLRR01\] Table 1: B = 78 chunks, cycle times 3, 5, 8.
/// let c = nuce_plan::dist1d::optimal_counts(78, &[3.0, 5.0, 8.0])?;
/// assert_eq!(c, vec![40, 24, 14]);
/// # Ok::<(), nuce_plan::Error>(())
/// ```
pub fn optimal_counts(chunks: usize, cycle_times: &[f64]) -> Result<Vec<usize>> {
    check_speeds(cycle_times)?;
    if chunks > MAX_COUNT_CHUNKS {
        return Err(Error::InvalidInput(format!(
            "{chunks} chunks: at most 2^53 = {MAX_COUNT_CHUNKS}"
        )));
    }
    // Shares of the speeds 1/t_i, each divided by the largest first so
    // that tiny cycle times (huge speeds) cannot overflow the sum.
    let fastest = cycle_times.iter().copied().fold(f64::INFINITY, f64::min);
    let rel: Vec<f64> = cycle_times.iter().map(|t| fastest / t).collect();
    let inv: f64 = rel.iter().sum();
    let mut counts: Vec<usize> = rel
        .iter()
        .map(|r| (r / inv * chunks as f64).floor() as usize)
        .collect();
    let total = |c: &[usize]| c.iter().map(|&x| x as u128).sum::<u128>();
    if total(&counts) > chunks as u128 {
        // Only possible through rounding of the shares: lower every count
        // by one (still a lower bound of the optimum, and at most p more
        // increments than from the exact floors).
        counts.iter_mut().for_each(|c| *c = c.saturating_sub(1));
        if total(&counts) > chunks as u128 {
            counts.iter_mut().for_each(|c| *c = 0);
        }
    }
    let more = (chunks as u128 - total(&counts)) as usize;
    increment(&mut counts, cycle_times, more);
    Ok(counts)
}

/// The incremental allocation of \[BBLRR01\] §2.4.1 (Figure 8): the processor chosen
/// for chunks `1..=B`, each time `argmin_j t_j (c_j + 1)` (lowest index on
/// ties). Every prefix of length `s` is an optimal allocation of `s` chunks.
/// `O((p + B) log p)`.
pub fn incremental_sequence(chunks: usize, cycle_times: &[f64]) -> Result<Vec<usize>> {
    check_speeds(cycle_times)?;
    check_chunks(chunks)?;
    let mut counts = vec![0; cycle_times.len()];
    Ok(increment(&mut counts, cycle_times, chunks))
}

/// Algorithm 2 (\[BBLRR01\] §2.2): optimal counts, processor `i` owning the `c_i`
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
        ChunkPlan::checked(self.name(), owners, chunks, cycle_times)
    }
}

/// The incremental DP allocation (\[BBLRR01\] §2.4.1, Figure 8): chunk `k` goes to
/// the `k`-th processor of [`incremental_sequence`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Incremental;

impl ChunkDistributor for Incremental {
    fn name(&self) -> &'static str {
        "incremental"
    }
    fn distribute(&self, chunks: usize, cycle_times: &[f64]) -> Result<ChunkPlan> {
        let seq = incremental_sequence(chunks, cycle_times)?;
        ChunkPlan::checked(self.name(), seq, chunks, cycle_times)
    }
}

/// LU column-block allocation (\[BBLRR01\] §2.4.2, Figures 9–10): slices of `slice`
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
        ChunkPlan::checked(self.name(), owners, chunks, cycle_times)
    }
}

/// Cost of each LU update step for a column-block allocation (\[BBLRR01\] §2.4,
/// Figures 7 and 10): after factoring block `k` (`k = 1..B−1`), blocks
/// `k+1..B` are updated, taking `max_i t_i · #{j > k : owner_j = i}`.
pub fn lu_update_costs(owners: &[usize], cycle_times: &[f64]) -> Result<Vec<f64>> {
    check_speeds(cycle_times)?;
    check_owners(owners, cycle_times.len())?;
    let mut counts = vec![0usize; cycle_times.len()];
    let mut costs = Vec::with_capacity(owners.len().saturating_sub(1));
    // Walk backwards: the suffix after block k is known incrementally, and
    // its cost only grows, so the running maximum is the makespan (O(B),
    // not O(B·p)).
    let mut worst = 0.0f64;
    for &o in owners.iter().skip(1).rev() {
        counts[o] += 1;
        worst = worst.max(counts[o] as f64 * cycle_times[o]);
        costs.push(worst);
    }
    costs.reverse();
    Ok(costs)
}

/// Cyclic (`CYCLIC(1)`) owners of `chunks` chunks over `p` processors: the
/// homogeneous baseline of \[BBLRR01\] Figure 10.
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

/// Periodic panel allocation for finite-difference sweeps (\[BBLRR01\] §2.3,
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
/// stage order; the `c_i t_i` order of \[BBLRR01\] decides where the start-up
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
        if b > MAX_COUNT_CHUNKS {
            return Err(Error::InvalidInput(format!(
                "panel period {b}: at most 2^53 = {MAX_COUNT_CHUNKS}"
            )));
        }
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
        // The panel pattern, repeated lazily: a period far beyond `chunks`
        // costs nothing (it once built the whole panel: 8 GB for 10^9).
        let panel = order
            .iter()
            .flat_map(|&i| std::iter::repeat_n(i, counts[i]));
        let owners = panel.cycle().take(chunks).collect();
        ChunkPlan::checked(self.name(), owners, chunks, cycle_times)
    }
}

/// Simulated execution time of a finite-difference sweep over `rows × B`
/// tiles whose tile columns are owned as in `owners` (\[BBLRR01\] §2.3, Figure 5):
/// tile `(r, c)` needs tiles `(r − 1, c)` and `(r, c − 1)`, `t_i` per tile.
/// Each processor walks its blocks of consecutive columns left to right and,
/// inside a block, processes tiles *horizontally* — row by row across the
/// block's columns ("rather than computing its tile columns one after the
/// other, each processor processes tiles horizontally") — so it never delays
/// the next processor. Ordering tiles by (block, row, column) is a
/// topological order of all dependencies, which gives the simulation in one
/// pass. `O(rows · B)`, at most [`MAX_SWEEP_TILES`] tiles
/// ([`Error::InvalidInput`] above).
pub fn sweep_makespan(owners: &[usize], rows: usize, cycle_times: &[f64]) -> Result<f64> {
    check_speeds(cycle_times)?;
    check_owners(owners, cycle_times.len())?;
    // Rows alone too: one value per row is kept, even without chunks.
    if rows
        .max(owners.len())
        .max(rows.saturating_mul(owners.len()))
        > MAX_SWEEP_TILES
    {
        return Err(Error::InvalidInput(format!(
            "sweep of {rows} x {} tiles: at most 2^27 = {MAX_SWEEP_TILES} tiles (and rows) are simulated",
            owners.len()
        )));
    }
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

    #[test]
    fn huge_periods_cost_nothing() {
        // Issue 12: `--mode panel --period 1e9` built a panel of 10^9 owners
        // (22 s, 7.8 GB), 1e12 aborted on allocation, 2^64 - 1 panicked.
        let t = std::time::Instant::now();
        let p = Panels {
            period: 1_000_000_000,
        }
        .distribute(10, &[1.0, 2.0, 3.0])
        .unwrap();
        assert_eq!(p.owners.len(), 10);
        let p = Panels {
            period: 1_000_000_000_000,
        }
        .distribute(10, &[1.0, 2.0, 3.0])
        .unwrap();
        assert_eq!(p.counts.iter().sum::<usize>(), 10);
        assert!(t.elapsed().as_secs_f64() < 5.0, "{:?}", t.elapsed());
        let e = Panels { period: usize::MAX }.distribute(10, &[1.0, 2.0]);
        assert!(matches!(e, Err(Error::InvalidInput(_))), "{e:?}");
        // Counts of 2^53 chunks are exact and quick.
        let c = optimal_counts(MAX_COUNT_CHUNKS, &[1.0, 3.0, 1e-300]).unwrap();
        assert_eq!(
            c.iter().map(|&x| x as u128).sum::<u128>(),
            MAX_COUNT_CHUNKS as u128
        );
    }

    #[test]
    fn overflowing_makespans_are_errors() {
        // 1e308 × 2 chunks is infinite: JSON printed `null`.
        let e = Static.distribute(4, &[1e308, 1e308]).unwrap_err();
        assert!(matches!(e, Error::InvalidInput(_)), "{e}");
        assert!(sweep_makespan(&[0; 1000], usize::MAX, &[1.0]).is_err());
        // No chunks but 2^64 - 1 rows: the per-row vector was a
        // capacity-overflow panic.
        assert!(sweep_makespan(&[], usize::MAX, &[1.0]).is_err());
    }
}
