//! Coarsening by heavy-edge matching (\[KK98\], "HEM", with METIS's
//! low-degree-first visit order): every vertex, visited in a seeded random
//! order sorted by increasing degree, is matched with the unmatched
//! neighbour joined by the heaviest edge, provided the pair weighs at most
//! `max_vw` (so that no coarse vertex is too heavy to balance). Vertices of
//! degree 0 are paired with each other. Matched pairs become one coarse
//! vertex whose weight is the sum of theirs; parallel edges merge with summed
//! weights, edges inside a pair disappear. A partition of the coarse graph
//! has the same cut and part weights as its projection on the fine graph.
//!
//! When more than 10 % of the vertices find no unmatched neighbour, they
//! are paired through common neighbours (METIS 5's two-hop matching), so
//! that stars and hubs keep coarsening.
//!
//! Cost: O(n + m) per level (a counting sort by degree, one sweep of the
//! arcs to match, one to contract, with a dense marker array instead of a
//! hash map).

use rand::seq::SliceRandom;
use rand::Rng;

use super::View;
use crate::graph::csr::{graph_unchecked, Graph};

const NONE: usize = usize::MAX;

/// One coarsening level of `g`: the coarse graph (with vertex and edge
/// weights, without coordinates) and the coarse vertex of every fine vertex.
/// Two-hop matching is on ([`coarsen_within`]).
pub fn coarsen(g: &Graph, max_vw: f64, rng: &mut impl Rng) -> (Graph, Vec<usize>) {
    coarsen_within(g, max_vw, None, true, rng)
}

/// The levels of coarsening `g` until at most `coarse_to` vertices remain,
/// no pair can be matched, or a level shrinks by less than 5 %: `levels[i]`
/// is graph `i + 1` and the coarse vertex of every vertex of graph `i`
/// (graph 0 is `g`). Empty when `g` is small enough. `two_hop` as in
/// [`coarsen_within`]. O(m) per level.
pub fn hierarchy(
    g: &Graph,
    coarse_to: usize,
    max_vw: f64,
    two_hop: bool,
    rng: &mut impl Rng,
) -> Vec<(Graph, Vec<usize>)> {
    let mut levels: Vec<(Graph, Vec<usize>)> = Vec::new();
    loop {
        let fine = levels.last().map_or(g, |l| &l.0);
        if fine.n() <= coarse_to {
            break;
        }
        let (c, cmap) = coarsen_within(fine, max_vw, None, two_hop, rng);
        if c.n() == fine.n() {
            break;
        }
        let stalled = c.n() as f64 > 0.95 * fine.n() as f64;
        levels.push((c, cmap));
        if stalled {
            break;
        }
    }
    levels
}

/// [`hierarchy`] that only matches vertices of the same `label` (the parts
/// of a partition), so that every coarse vertex lies in one part: the levels
/// and the label of every vertex of the coarsest graph (`label` itself when
/// no level was made). The partition keeps its cut and part weights on every
/// level. O(m) per level.
pub fn hierarchy_within(
    g: &Graph,
    coarse_to: usize,
    max_vw: f64,
    two_hop: bool,
    label: &[usize],
    rng: &mut impl Rng,
) -> (Vec<(Graph, Vec<usize>)>, Vec<usize>) {
    let mut levels: Vec<(Graph, Vec<usize>)> = Vec::new();
    let mut lab = label.to_vec();
    loop {
        let fine = levels.last().map_or(g, |l| &l.0);
        if fine.n() <= coarse_to {
            break;
        }
        let (c, cmap) = coarsen_within(fine, max_vw, Some(&lab), two_hop, rng);
        if c.n() == fine.n() {
            break;
        }
        let mut clab = vec![0; c.n()];
        for (x, &cx) in cmap.iter().enumerate() {
            clab[cx] = lab[x];
        }
        lab = clab;
        let stalled = c.n() as f64 > 0.95 * fine.n() as f64;
        levels.push((c, cmap));
        if stalled {
            break;
        }
    }
    (levels, lab)
}

/// [`coarsen`] that only matches vertices of the same `label` (when given),
/// as a repartitioning coarsens inside the current parts so that every
/// coarse vertex keeps one home part. With `two_hop`, vertices left without
/// an unmatched neighbour may be paired through a common neighbour when they
/// are many (METIS's two-hop matching).
pub fn coarsen_within(
    g: &Graph,
    max_vw: f64,
    label: Option<&[usize]>,
    two_hop: bool,
    rng: &mut impl Rng,
) -> (Graph, Vec<usize>) {
    let v = View::of(g);
    let mate = heavy_edge_matching(&v, max_vw, label, two_hop, rng);
    contract(&v, &mate)
}

/// The vertices in a random order, stably sorted by increasing degree.
/// O(n + max degree).
fn visit_order(v: &View, rng: &mut impl Rng) -> Vec<usize> {
    let n = v.n();
    let mut perm: Vec<usize> = (0..n).collect();
    perm.shuffle(rng);
    let deg = |x: usize| v.xadj[x + 1] - v.xadj[x];
    let maxdeg = (0..n).map(deg).max().unwrap_or(0);
    let mut start = vec![0usize; maxdeg + 2];
    for x in 0..n {
        start[deg(x) + 1] += 1;
    }
    for d in 0..=maxdeg {
        start[d + 1] += start[d];
    }
    let mut order = vec![0; n];
    for &x in &perm {
        let d = deg(x);
        order[start[d]] = x;
        start[d] += 1;
    }
    order
}

/// The mate of every vertex (itself when unmatched). Vertices left without
/// an unmatched neighbour are then paired through common neighbours
/// ([`two_hop`]) when they are more than 10 % of the graph, as METIS does.
fn heavy_edge_matching(
    v: &View,
    max_vw: f64,
    label: Option<&[usize]>,
    use_two_hop: bool,
    rng: &mut impl Rng,
) -> Vec<usize> {
    let n = v.n();
    let same = |x: usize, u: usize| label.is_none_or(|l| l[x] == l[u]);
    let mut mate = vec![NONE; n];
    let mut lone = NONE; // an isolated vertex waiting for a partner
    let order = visit_order(v, rng);
    for &x in &order {
        if mate[x] != NONE {
            continue;
        }
        let arcs = v.arcs(x);
        if arcs.is_empty() {
            if lone != NONE && v.vw[x] + v.vw[lone] <= max_vw && same(x, lone) {
                mate[x] = lone;
                mate[lone] = x;
                lone = NONE;
            } else {
                mate[x] = x;
                lone = x;
            }
            continue;
        }
        let (mut best, mut bw) = (NONE, f64::NEG_INFINITY);
        for a in arcs {
            let u = v.adj[a];
            if mate[u] == NONE && v.ew[a] > bw && v.vw[x] + v.vw[u] <= max_vw && same(x, u) {
                best = u;
                bw = v.ew[a];
            }
        }
        if best != NONE {
            mate[x] = best;
            mate[best] = x;
        } else if 2.0 * v.vw[x] > max_vw {
            // Too heavy for any pair; lighter ones stay NONE for two-hop matching.
            mate[x] = x;
        }
    }
    let unmatched = mate.iter().filter(|&&m| m == NONE).count();
    if use_two_hop && unmatched as f64 > TWO_HOP_FRACTION * n as f64 {
        two_hop(v, max_vw, label, &order, &mut mate, unmatched);
    }
    for (x, m) in mate.iter_mut().enumerate() {
        if *m == NONE {
            *m = x;
        }
    }
    mate
}

/// Two-hop matching starts when more than this fraction of the vertices
/// found no unmatched neighbour (METIS's `UNMATCHEDFOR2HOP`).
const TWO_HOP_FRACTION: f64 = 0.10;

/// Two-hop matching after METIS 5 (`Match_2Hop`): vertices that heavy-edge
/// matching left unmatched (`mate == NONE`; `unmatched` of them) are paired
/// with other such vertices, first those of degree below 2 sharing a
/// neighbour, then those with identical neighbour lists (degree below 64),
/// then, while more than 15 % resp. 20 % of the graph stays unmatched, those
/// of degree below 3 resp. any degree sharing a neighbour. Star-like and
/// high-degree-variance graphs (a hub whose leaves are matched to nothing)
/// then keep coarsening instead of stalling. O(n + m) per step.
fn two_hop(
    v: &View,
    max_vw: f64,
    label: Option<&[usize]>,
    order: &[usize],
    mate: &mut [usize],
    mut unmatched: usize,
) {
    let n = v.n() as f64;
    two_hop_any(v, max_vw, label, order, mate, &mut unmatched, 2);
    two_hop_twins(v, max_vw, label, order, mate, &mut unmatched, 64);
    if unmatched as f64 > 1.5 * TWO_HOP_FRACTION * n {
        two_hop_any(v, max_vw, label, order, mate, &mut unmatched, 3);
    }
    if unmatched as f64 > 2.0 * TWO_HOP_FRACTION * n {
        two_hop_any(v, max_vw, label, order, mate, &mut unmatched, usize::MAX);
    }
}

/// Whether unmatched `x` and `u` may be paired.
fn pairable(v: &View, max_vw: f64, label: Option<&[usize]>, x: usize, u: usize) -> bool {
    v.vw[x] + v.vw[u] <= max_vw && label.is_none_or(|l| l[x] == l[u])
}

/// Pairs unmatched vertices of degree below `max_deg` that share a
/// neighbour: an inverted index lists, for every vertex, its unmatched
/// neighbours of small degree (in visit order); each list is paired up.
fn two_hop_any(
    v: &View,
    max_vw: f64,
    label: Option<&[usize]>,
    order: &[usize],
    mate: &mut [usize],
    unmatched: &mut usize,
    max_deg: usize,
) {
    let nv = v.n();
    let cand = |x: usize, mate: &[usize]| mate[x] == NONE && v.arcs(x).len() < max_deg;
    let mut start = vec![0usize; nv + 1];
    for x in 0..nv {
        if cand(x, mate) {
            for a in v.arcs(x) {
                start[v.adj[a] + 1] += 1;
            }
        }
    }
    for i in 0..nv {
        start[i + 1] += start[i];
    }
    let mut fill = start.clone();
    let mut rows = vec![0usize; start[nv]];
    for &x in order {
        if cand(x, mate) {
            for a in v.arcs(x) {
                let h = v.adj[a];
                rows[fill[h]] = x;
                fill[h] += 1;
            }
        }
    }
    for &h in order {
        let list = &rows[start[h]..start[h + 1]];
        if list.len() < 2 {
            continue;
        }
        let mut wait = NONE;
        for &x in list {
            if mate[x] != NONE {
                continue;
            }
            if wait != NONE && pairable(v, max_vw, label, wait, x) {
                mate[x] = wait;
                mate[wait] = x;
                *unmatched -= 2;
                wait = NONE;
            } else {
                wait = x;
            }
        }
    }
}

/// Pairs unmatched vertices of degree 2 to `max_deg − 1` whose neighbour
/// lists are identical (sorted by a hash of the list, then compared).
fn two_hop_twins(
    v: &View,
    max_vw: f64,
    label: Option<&[usize]>,
    order: &[usize],
    mate: &mut [usize],
    unmatched: &mut usize,
    max_deg: usize,
) {
    let mut keys: Vec<(usize, usize, usize)> = order
        .iter()
        .copied()
        .filter(|&x| mate[x] == NONE && (2..max_deg).contains(&v.arcs(x).len()))
        .map(|x| {
            let h = v.arcs(x).fold(0usize, |h, a| h.wrapping_add(v.adj[a]));
            (v.arcs(x).len(), h, x)
        })
        .collect();
    keys.sort_unstable();
    let mut mark = vec![NONE; v.n()];
    for i in 0..keys.len() {
        let (d, h, x) = keys[i];
        if mate[x] != NONE {
            continue;
        }
        for a in v.arcs(x) {
            mark[v.adj[a]] = x;
        }
        for &(d2, h2, u) in &keys[i + 1..] {
            if (d2, h2) != (d, h) {
                break;
            }
            if mate[u] == NONE
                && pairable(v, max_vw, label, x, u)
                && v.arcs(u).all(|a| mark[v.adj[a]] == x)
            {
                mate[x] = u;
                mate[u] = x;
                *unmatched -= 2;
                break;
            }
        }
    }
}

/// Contracts every matched pair. Coarse vertices are numbered in the order
/// of their smaller fine vertex. O(n + m).
fn contract(v: &View, mate: &[usize]) -> (Graph, Vec<usize>) {
    let n = v.n();
    let mut cmap = vec![NONE; n];
    let mut nc = 0;
    for x in 0..n {
        if cmap[x] == NONE {
            cmap[x] = nc;
            cmap[mate[x]] = nc;
            nc += 1;
        }
    }
    let mut xadj = Vec::with_capacity(nc + 1);
    xadj.push(0);
    let mut adj = Vec::with_capacity(v.adj.len());
    let mut ew = Vec::with_capacity(v.adj.len());
    let mut vw = Vec::with_capacity(nc);
    // The coarse end of every arc, gathered in one streaming pass: its loads
    // of `cmap` are independent and overlap, where in the row loop below each
    // waited for the last (cache misses on meshes numbered far from
    // locality, issue 21).
    let cadj: Vec<usize> = v.adj.iter().map(|&u| cmap[u]).collect();
    // slot[c]: position of coarse neighbour c in the current row, if >= row start.
    let mut slot = vec![NONE; nc];
    for x in 0..n {
        let y = mate[x];
        if y < x {
            continue;
        }
        let c = cmap[x];
        let start = adj.len();
        let mut w = 0.0;
        for z in [x, y].into_iter().take(if y == x { 1 } else { 2 }) {
            w += v.vw[z];
            for a in v.arcs(z) {
                let cu = cadj[a];
                if cu == c {
                    continue;
                }
                let s = slot[cu];
                if s != NONE && s >= start {
                    ew[s] += v.ew[a];
                } else {
                    slot[cu] = adj.len();
                    adj.push(cu);
                    ew.push(v.ew[a]);
                }
            }
        }
        vw.push(w);
        xadj.push(adj.len());
    }
    (graph_unchecked(xadj, adj, Some(vw), Some(ew)), cmap)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::csr::grid_graph;
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;

    #[test]
    fn contraction_keeps_weights_and_cuts() {
        let g = grid_graph(9, 11);
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        let (c, cmap) = coarsen(&g, f64::INFINITY, &mut rng);
        assert!(c.n() < g.n() && c.n() >= g.n() / 2);
        assert_eq!(c.total_weight(), g.total_weight());
        // The coarse graph is a valid CSR graph (symmetric, no loops, no repeats).
        let checked = Graph::from_csr(
            c.xadj().to_vec(),
            c.adjncy().to_vec(),
            c.vertex_weights().map(<[f64]>::to_vec),
            c.edge_weights().map(<[f64]>::to_vec),
        );
        assert!(checked.is_ok(), "{checked:?}");
        let colour: Vec<usize> = (0..c.n()).map(|i| (i * 7 / 3) % 3).collect();
        let fine: Vec<usize> = cmap.iter().map(|&x| colour[x]).collect();
        assert_eq!(
            super::super::cut(&View::of(&g), &fine),
            super::super::cut(&View::of(&c), &colour)
        );
    }

    #[test]
    fn heavy_vertices_stay_unmatched_and_isolated_ones_pair() {
        // Two isolated vertices and an edge between two heavy vertices.
        let g = Graph::from_edges(4, [(2, 3, 1.0)], false)
            .unwrap()
            .with_vertex_weights(vec![1.0, 1.0, 5.0, 5.0])
            .unwrap();
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let (c, cmap) = coarsen(&g, 6.0, &mut rng);
        assert_eq!(cmap[0], cmap[1]);
        assert_ne!(cmap[2], cmap[3]);
        assert_eq!(c.n(), 3);
    }

    #[test]
    fn two_hop_pairs_the_leaves_of_a_star() {
        // A hub with 40 leaves: heavy-edge matching pairs the hub with one
        // leaf and leaves the other 39 alone; two-hop matching pairs them
        // through the hub.
        let g = Graph::from_edges(41, (1..41).map(|i| (0, i, 1.0)), false).unwrap();
        let v = View::of(&g);
        for seed in 0..4 {
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            let one_hop = heavy_edge_matching(&v, f64::INFINITY, None, false, &mut rng);
            assert_eq!((0..41).filter(|&x| one_hop[x] == x).count(), 39);
            let (c, cmap) = coarsen(&g, f64::INFINITY, &mut rng);
            assert!(c.n() <= 21, "{} coarse vertices", c.n());
            assert_eq!(c.total_weight(), g.total_weight());
            let checked = Graph::from_csr(
                c.xadj().to_vec(),
                c.adjncy().to_vec(),
                c.vertex_weights().map(<[f64]>::to_vec),
                c.edge_weights().map(<[f64]>::to_vec),
            );
            assert!(checked.is_ok(), "{checked:?}");
            // Every coarse vertex holds one or two fine vertices.
            let mut size = vec![0; c.n()];
            for &x in &cmap {
                size[x] += 1;
            }
            assert!(size.iter().all(|&s| (1..=2).contains(&s)));
        }
    }

    #[test]
    fn two_hop_pairs_twins_and_respects_weights_and_labels() {
        // K(3, 30): the 30 vertices of degree 3 share one neighbour list;
        // 3 of them match the hubs, the other 27 pair up as twins.
        let edges = (0..3).flat_map(|h| (3..33).map(move |x| (h, x, 1.0)));
        let g = Graph::from_edges(33, edges, false).unwrap();
        let v = View::of(&g);
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        let mate = heavy_edge_matching(&v, f64::INFINITY, None, true, &mut rng);
        let lone = (0..33).filter(|&x| mate[x] == x).count();
        assert!(lone <= 1, "{lone} unmatched");
        assert!((0..33).all(|x| mate[mate[x]] == x));
        // A weight bound of one vertex allows no pair at all.
        let mate = heavy_edge_matching(&v, 1.0, None, true, &mut rng);
        assert!((0..33).all(|x| mate[x] == x));
        // Labels: pairs never cross them.
        let label: Vec<usize> = (0..33).map(|x| x % 2).collect();
        let mate = heavy_edge_matching(&v, f64::INFINITY, Some(&label), true, &mut rng);
        assert!((0..33).all(|x| label[mate[x]] == label[x] && mate[mate[x]] == x));
    }

    #[test]
    fn hierarchy_within_keeps_the_partition() {
        let g = grid_graph(30, 30);
        let part: Vec<usize> = (0..900).map(|x| (x % 30 / 10) + 3 * (x / 450)).collect();
        let mut rng = ChaCha8Rng::seed_from_u64(2);
        let (levels, coarse) = hierarchy_within(&g, 40, f64::INFINITY, true, &part, &mut rng);
        assert!(!levels.is_empty());
        // The coarsest labels projected back are the partition itself.
        let mut back = coarse.clone();
        for i in (0..levels.len()).rev() {
            back = levels[i].1.iter().map(|&c| back[c]).collect();
        }
        assert_eq!(back, part);
        let coarsest = &levels.last().unwrap().0;
        assert_eq!(
            super::super::cut(&View::of(coarsest), &coarse),
            super::super::cut(&View::of(&g), &part)
        );
    }

    #[test]
    fn same_seed_same_levels() {
        let g = grid_graph(13, 17);
        let a = coarsen(&g, f64::INFINITY, &mut ChaCha8Rng::seed_from_u64(5));
        let b = coarsen(&g, f64::INFINITY, &mut ChaCha8Rng::seed_from_u64(5));
        assert_eq!(a, b);
    }
}
