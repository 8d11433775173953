//! Fast exact matching for the bipartite graphs of \[BBLRR01\] §4.3–4.4.
//!
//! Not in \[BBLRR01\] (which uses a generic `O(p³)` weighted matching,
//! Proposition 1): an exact reformulation of the same matchings that
//! exploits the form of their weights.
//!
//! In every matching of \[BBLRR01\] §4 (Figures 22–24) the weight of worker `i` in
//! message slot `j` is `⌊(B_i − j·t_com)/t_i⌋` for some budget `B_i`: a
//! *non-increasing staircase* in `j`, with few distinct values when a
//! message is cheaper than a task (about `1 + p·t_com/t_i`). A dense
//! Kuhn–Munkres ignores this and costs `O(p³)` (seconds at `p = 1000`).
//!
//! Reformulation (exact): a worker that can use slot `j` can use any earlier
//! slot, and by EDF a set of *deadlines* `d_i` can be given distinct slots
//! `≤ d_i` iff `#{i : d_i ≤ k} ≤ k` for every `k`. So each worker only needs
//! one option per step of its staircase — the *last* slot `r` at which the
//! step's value `w` holds — and the assignment becomes a min-cost flow:
//!
//! ```text
//! worker i ──(cap 1, cost −w)──► N_r ──► N_{r−1} ──► … ──► N_1   (chain, cap ∞, cost 0)
//!                                 └──(cap 1)──► sink   for every slot node N_k
//! ```
//!
//! solved by successive shortest paths (Dijkstra with Johnson potentials,
//! stopped as soon as the sink is settled), one augmentation per worker,
//! then slots are handed out in deadline order. The initial potentials
//! `π(N_k) = −max_i w(i, k)` are feasible because the rows are
//! non-increasing. `E = Σ_i (#steps_i)` option edges; each augmentation is
//! `O((E + p) log p)`. The weights have large plateaus of equal reduced
//! cost, where Dijkstra would sweep most of the graph; so each insertion
//! first makes the new worker's best option tight (it has no incoming
//! residual edge, its potential is free) and looks for an augmenting path of
//! zero reduced cost by depth-first search — a shortest path whenever it
//! exists — and only falls back to Dijkstra otherwise. Measured about 20x
//! faster than the dense Kuhn–Munkres at `p = 1000` (see
//! `benchmarks/tasks.md`); the worst case stays `O(p·(E + p) log p)`.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use crate::error::{Error, Result};

/// One option of a worker: deadline slot `r` (0-based) with value `w`.
#[derive(Debug, Clone, Copy)]
struct Opt {
    slot: usize,
    value: i64,
}

/// Steps of a non-increasing row `w(0..p)`: the last slot of each value.
/// Binary searches when the row has few distinct values, a scan otherwise.
fn options(p: usize, w: &impl Fn(usize) -> i64) -> Vec<Opt> {
    let (hi, lo) = (w(0), w(p - 1));
    let span = (hi - lo).max(0) as u128;
    let mut out = Vec::new();
    if span * (usize::BITS - p.leading_zeros()) as u128 >= p as u128 {
        let mut prev = w(p - 1);
        out.push(Opt {
            slot: p - 1,
            value: prev,
        });
        for j in (0..p - 1).rev() {
            let v = w(j);
            if v > prev {
                out.push(Opt { slot: j, value: v });
                prev = v;
            }
        }
    } else {
        out.push(Opt {
            slot: p - 1,
            value: lo,
        });
        let mut v = lo + 1;
        while v <= hi {
            // Largest j with w(j) ≥ v (exists since w(0) = hi ≥ v).
            let (mut a, mut b) = (0usize, p - 1);
            while a < b {
                let m = (a + b).div_ceil(2);
                if w(m) >= v {
                    a = m;
                } else {
                    b = m - 1;
                }
            }
            let value = w(a);
            out.push(Opt { slot: a, value });
            v = value + 1;
        }
    }
    out
}

/// Most options (steps of the staircases) of one assignment: 2^24, 256 MiB
/// (10 000 workers with a distinct count in every slot asked for 10^8).
pub const MAX_OPTIONS: usize = 1 << 24;

/// Kinds of residual edges on a shortest path.
const FORWARD: u8 = 0; // worker → slot node, an option
const BACK: u8 = 1; // slot node → worker, releasing its option
const DOWN: u8 = 2; // N_k → N_{k−1}
const UP: u8 = 3; // N_{k−1} → N_k, cancelling chain flow
const SINK: u8 = 4; // N_k → sink

const INF: i64 = i64::MAX / 4;

/// Dijkstra scratch space, reset in `O(touched)` between searches.
struct Search {
    dist: Vec<i64>,
    done: Vec<bool>,
    /// Predecessor of each node: (node, edge kind, option index).
    pred: Vec<(usize, u8, usize)>,
    touched: Vec<usize>,
    heap: BinaryHeap<Reverse<(i64, bool, usize)>>,
    /// The node popped first among equal distances (the sink).
    target: usize,
}

impl Search {
    fn new(n: usize) -> Self {
        Self {
            dist: vec![INF; n],
            done: vec![false; n],
            pred: vec![(usize::MAX, 0, 0); n],
            touched: Vec::new(),
            heap: BinaryHeap::new(),
            target: n - 1,
        }
    }

    /// Clears the previous search; marks `start` touched (and, for the
    /// depth-first search, visited).
    fn reset(&mut self, start: usize) {
        for &v in &self.touched {
            self.dist[v] = INF;
            self.done[v] = false;
        }
        self.touched.clear();
        self.heap.clear();
        self.touched.push(start);
        self.done[start] = true;
    }

    /// Relaxes the residual edge `u → v` of cost `cost` (reduced by `pot`).
    fn relax(&mut self, u: usize, v: usize, cost: i64, kind: (u8, usize), pot: &[i64]) {
        if self.done[v] {
            return;
        }
        let nd = self.dist[u] + cost + pot[u] - pot[v];
        if nd < self.dist[v] {
            if self.dist[v] == INF {
                self.touched.push(v);
            }
            self.dist[v] = nd;
            self.pred[v] = (u, kind.0, kind.1);
            self.heap.push(Reverse((nd, v != self.target, v)));
        }
    }
}

/// Maximum-weight assignment of `p` rows to `p` slots when every row
/// `weight(i, ·)` is non-increasing in the slot (0-based). Returns the slot
/// of each row. Rows are inserted in `row_order`.
pub fn staircase_assignment(
    p: usize,
    weight: impl Fn(usize, usize) -> i64,
    row_order: &[usize],
) -> Result<Vec<usize>> {
    if p == 0 {
        return Ok(Vec::new());
    }
    if row_order.len() != p {
        return Err(Error::ShapeMismatch(format!(
            "row order of {} for {p} rows",
            row_order.len()
        )));
    }
    let mut opts = Vec::with_capacity(p);
    let mut total = 0usize;
    for i in 0..p {
        let o = options(p, &|j| weight(i, j));
        super::spend(o.len() + 1)?;
        total += o.len();
        if total > MAX_OPTIONS {
            return Err(Error::InvalidInput(format!(
                "problem too large: over {MAX_OPTIONS} matching options ({p} workers whose \
                 task counts differ in almost every message slot)"
            )));
        }
        opts.push(o);
    }
    let mut flow = Flow::new(p, opts);
    let mut sr = Search::new(2 * p + 1);
    let mut edges = Vec::new();
    for &start in row_order {
        if start >= p || flow.chosen[start].is_some() {
            return Err(Error::InvalidInput("row order is not a permutation".into()));
        }
        // A fresh worker has no incoming residual edge: make its cheapest
        // option tight.
        flow.edges(start, &mut edges);
        flow.pot[start] = edges
            .iter()
            .map(|&(v, cost, _, _)| flow.pot[v] - cost)
            .max()
            .unwrap_or(0);
        // Fast path: an augmenting path of zero reduced cost is a shortest
        // one; a depth-first search finds one without settling the large
        // plateaus of equal distance that Dijkstra would sweep.
        if !flow.zero_path(start, &mut sr, &mut edges)? {
            flow.dijkstra(start, &mut sr, &mut edges)?;
        }
        flow.augment(start, &sr.pred);
    }
    flow.slots()
}

/// Residual network state of the staircase flow.
struct Flow {
    p: usize,
    opts: Vec<Vec<Opt>>,
    /// Johnson potentials of the 2p + 1 nodes.
    pot: Vec<i64>,
    /// Option index chosen by each worker.
    chosen: Vec<Option<usize>>,
    /// Workers whose chosen deadline is slot k.
    users: Vec<Vec<usize>>,
    /// Flow on N_k → N_{k−1}.
    chain: Vec<u32>,
    /// Whether N_k → sink carries flow.
    sink_used: Vec<bool>,
}

impl Flow {
    fn new(p: usize, opts: Vec<Vec<Opt>>) -> Self {
        // π(N_k) = −max_i w(i, k): feasible for the non-increasing rows.
        let mut best_at = vec![i64::MIN; p];
        for o in opts.iter().flatten() {
            best_at[o.slot] = best_at[o.slot].max(o.value);
        }
        for k in (0..p - 1).rev() {
            best_at[k] = best_at[k].max(best_at[k + 1]);
        }
        let mut pot = vec![0i64; 2 * p + 1];
        for k in 0..p {
            pot[p + k] = -best_at[k];
        }
        pot[2 * p] = -best_at[0];
        Self {
            p,
            opts,
            pot,
            chosen: vec![None; p],
            users: vec![Vec::new(); p],
            chain: vec![0; p],
            sink_used: vec![false; p],
        }
    }

    fn sink(&self) -> usize {
        2 * self.p
    }

    /// Residual edges out of `u`: (to, cost, kind, option index).
    fn edges(&self, u: usize, out: &mut Vec<(usize, i64, u8, usize)>) {
        out.clear();
        let p = self.p;
        if u < p {
            for (idx, o) in self.opts[u].iter().enumerate() {
                if self.chosen[u] != Some(idx) {
                    out.push((p + o.slot, -o.value, FORWARD, idx));
                }
            }
        } else if u < 2 * p {
            let k = u - p;
            if !self.sink_used[k] {
                out.push((2 * p, 0, SINK, 0));
            }
            if k > 0 {
                out.push((u - 1, 0, DOWN, 0));
            }
            if k + 1 < p && self.chain[k + 1] > 0 {
                out.push((u + 1, 0, UP, 0));
            }
            for &w in &self.users[k] {
                if let Some(idx) = self.chosen[w] {
                    out.push((w, self.opts[w][idx].value, BACK, 0));
                }
            }
        }
    }

    fn reduced(&self, u: usize, v: usize, cost: i64) -> i64 {
        cost + self.pot[u] - self.pot[v]
    }

    /// Depth-first search over edges of zero reduced cost; fills `sr.pred`.
    /// Every edge looked at is a step of the work limit
    /// ([`super::with_work_limit`]).
    fn zero_path(
        &self,
        start: usize,
        sr: &mut Search,
        edges: &mut Vec<(usize, i64, u8, usize)>,
    ) -> Result<bool> {
        sr.reset(start);
        let mut stack = vec![start];
        while let Some(u) = stack.pop() {
            self.edges(u, edges);
            super::spend(edges.len() + 1)?;
            for &(v, cost, kind, idx) in edges.iter() {
                if sr.done[v] || self.reduced(u, v, cost) != 0 {
                    continue;
                }
                sr.done[v] = true;
                sr.touched.push(v);
                sr.pred[v] = (u, kind, idx);
                if v == self.sink() {
                    return Ok(true);
                }
                stack.push(v);
            }
        }
        Ok(false)
    }

    /// Dijkstra on reduced costs, stopped when the sink is settled; then
    /// updates the potentials (settled nodes by their distance, the others by
    /// the sink's, which keeps every residual reduced cost non-negative).
    fn dijkstra(
        &mut self,
        start: usize,
        sr: &mut Search,
        edges: &mut Vec<(usize, i64, u8, usize)>,
    ) -> Result<()> {
        sr.reset(start);
        sr.done[start] = false;
        sr.dist[start] = 0;
        sr.heap.push(Reverse((0, start != sr.target, start)));
        while let Some(Reverse((d, _, u))) = sr.heap.pop() {
            if sr.done[u] || d > sr.dist[u] {
                continue;
            }
            sr.done[u] = true;
            if u == self.sink() {
                break;
            }
            self.edges(u, edges);
            super::spend(edges.len() + 1)?;
            for &(v, cost, kind, idx) in edges.iter() {
                sr.relax(u, v, cost, (kind, idx), &self.pot);
            }
            // Lazy deletion leaves stale entries: drop them once they
            // outnumber the nodes, so memory stays O(p), not O(steps).
            if sr.heap.len() > 4 * sr.dist.len() + 1024 {
                let (done, dist) = (&sr.done, &sr.dist);
                sr.heap
                    .retain(|&Reverse((d, _, v))| !done[v] && d == dist[v]);
            }
        }
        let sink = self.sink();
        if !sr.done[sink] {
            return Err(Error::Solver(
                "staircase matching: no augmenting path".into(),
            ));
        }
        let ds = sr.dist[sink];
        for v in 0..=sink {
            self.pot[v] += if sr.done[v] { sr.dist[v] } else { ds };
        }
        Ok(())
    }

    /// Pushes one unit along the path recorded in `pred`, sink back to start.
    fn augment(&mut self, start: usize, pred: &[(usize, u8, usize)]) {
        let p = self.p;
        let mut v = self.sink();
        while v != start {
            let (u, kind, idx) = pred[v];
            match kind {
                // u takes option idx (its old one was released by the
                // reverse edge that reached it).
                FORWARD => {
                    self.chosen[u] = Some(idx);
                    self.users[self.opts[u][idx].slot].push(u);
                }
                // Worker v leaves its option at slot node u.
                BACK => self.users[u - p].retain(|&x| x != v),
                DOWN => self.chain[u - p] += 1,
                UP => self.chain[v - p] -= 1,
                _ => self.sink_used[u - p] = true,
            }
            v = u;
        }
    }

    /// Hands out slots in deadline order (EDF).
    fn slots(&self) -> Result<Vec<usize>> {
        let mut by_deadline: Vec<(usize, usize)> = (0..self.p)
            .map(|i| {
                let idx =
                    self.chosen[i].ok_or_else(|| Error::Solver("unassigned worker".into()))?;
                Ok((self.opts[i][idx].slot, i))
            })
            .collect::<Result<_>>()?;
        by_deadline.sort_unstable();
        let mut slots = vec![0usize; self.p];
        for (k, &(deadline, i)) in by_deadline.iter().enumerate() {
            if k > deadline {
                return Err(Error::Solver(
                    "staircase matching: infeasible deadlines".into(),
                ));
            }
            slots[i] = k;
        }
        Ok(slots)
    }
}
