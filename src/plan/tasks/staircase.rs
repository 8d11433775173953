//! Fast exact matching for the bipartite graphs of 002 §4.3–4.4.
//!
//! In every matching of 002 §4 (Figures 22–24) the weight of worker `i` in
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
//! cost, so a search still settles a good part of the graph: measured about
//! 6x faster than the dense Kuhn–Munkres at `p = 1000`, not the `O(p²)` one
//! might hope for (see `benchmarks/tasks.md`).

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

    fn reset(&mut self, start: usize) {
        for &v in &self.touched {
            self.dist[v] = INF;
            self.done[v] = false;
        }
        self.touched.clear();
        self.heap.clear();
        self.dist[start] = 0;
        self.touched.push(start);
        self.heap.push(Reverse((0, start != self.target, start)));
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
    let opts: Vec<Vec<Opt>> = (0..p).map(|i| options(p, &|j| weight(i, j))).collect();
    // Node ids: workers 0..p, slot nodes p..2p, sink 2p.
    let (slot_node, sink) = (|k: usize| p + k, 2 * p);
    let mut best_at = vec![i64::MIN; p];
    for o in opts.iter().flatten() {
        best_at[o.slot] = best_at[o.slot].max(o.value);
    }
    for k in (0..p - 1).rev() {
        best_at[k] = best_at[k].max(best_at[k + 1]);
    }
    let mut pot = vec![0i64; 2 * p + 1];
    for k in 0..p {
        pot[slot_node(k)] = -best_at[k];
    }
    pot[sink] = -best_at[0];
    // Flow state.
    let mut chosen: Vec<Option<usize>> = vec![None; p]; // option index per worker
    let mut users: Vec<Vec<usize>> = vec![Vec::new(); p]; // workers whose deadline is slot k
    let mut chain = vec![0u32; p]; // flow on N_k → N_{k−1}
    let mut sink_used = vec![false; p];
    let mut sr = Search::new(2 * p + 1);
    for &start in row_order {
        if start >= p || chosen[start].is_some() {
            return Err(Error::InvalidInput("row order is not a permutation".into()));
        }
        sr.reset(start);
        while let Some(Reverse((d, _, u))) = sr.heap.pop() {
            if sr.done[u] || d > sr.dist[u] {
                continue;
            }
            sr.done[u] = true;
            if u == sink {
                break;
            }
            if u < p {
                for (idx, o) in opts[u].iter().enumerate() {
                    if chosen[u] != Some(idx) {
                        sr.relax(u, slot_node(o.slot), -o.value, (FORWARD, idx), &pot);
                    }
                }
            } else {
                let k = u - p;
                if k > 0 {
                    sr.relax(u, slot_node(k - 1), 0, (DOWN, 0), &pot);
                }
                if k + 1 < p && chain[k + 1] > 0 {
                    sr.relax(u, slot_node(k + 1), 0, (UP, 0), &pot);
                }
                if !sink_used[k] {
                    sr.relax(u, sink, 0, (SINK, 0), &pot);
                }
                for &wkr in &users[k] {
                    if let Some(idx) = chosen[wkr] {
                        sr.relax(u, wkr, opts[wkr][idx].value, (BACK, 0), &pot);
                    }
                }
            }
        }
        let (dist, done, pred) = (&sr.dist, &sr.done, &sr.pred);
        if !done[sink] {
            return Err(Error::Solver(
                "staircase matching: no augmenting path".into(),
            ));
        }
        // Johnson potentials: settled nodes move by their distance, the rest
        // by the sink's (keeps every residual reduced cost non-negative).
        let ds = dist[sink];
        for v in 0..=2 * p {
            pot[v] += if done[v] { dist[v] } else { ds };
        }
        // Augment along the path back from the sink.
        let mut v = sink;
        while v != start {
            let (u, kind, idx) = pred[v];
            match kind {
                FORWARD => {
                    // u is a worker taking option idx (its old one, if any,
                    // was released by the reverse edge that reached it).
                    chosen[u] = Some(idx);
                    users[opts[u][idx].slot].push(u);
                }
                BACK => {
                    // Worker v leaves its option at slot node u.
                    let k = u - p;
                    users[k].retain(|&x| x != v);
                }
                DOWN => chain[u - p] += 1,
                UP => chain[v - p] -= 1,
                _ => sink_used[u - p] = true,
            }
            v = u;
        }
    }
    // Hand out slots in deadline order (EDF).
    let mut by_deadline: Vec<(usize, usize)> = (0..p)
        .map(|i| {
            let idx = chosen[i].ok_or_else(|| Error::Solver("unassigned worker".into()))?;
            Ok((opts[i][idx].slot, i))
        })
        .collect::<Result<_>>()?;
    by_deadline.sort_unstable();
    let mut slots = vec![0usize; p];
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
