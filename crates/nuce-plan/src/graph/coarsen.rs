//! Coarsening by heavy-edge matching, shared by the multilevel Fiedler
//! vectors of `rsb` (after Barnard and Simon \[BS93\], as cited by \[KOR95\]
//! §2) and the multilevel refinement of `refine` (the coarsening phase of
//! multilevel partitioners such as METIS \[KK98\]).

use super::csr::{graph_unchecked, Graph};

/// One level of heavy-edge matching (vertices visited in id order, each
/// matched with its unmatched neighbour of heaviest edge; with `label`, only
/// with a neighbour of the same label). Returns the coarse graph (vertex and
/// edge weights summed) and the fine→coarse map. O(m).
pub(crate) fn coarsen(g: &Graph, label: Option<&[usize]>) -> (Graph, Vec<usize>) {
    let n = g.n();
    let mut mate = vec![usize::MAX; n];
    for v in 0..n {
        if mate[v] != usize::MAX {
            continue;
        }
        let best = g
            .weighted_neighbors(v)
            .filter(|&(u, _)| mate[u] == usize::MAX && label.is_none_or(|l| l[u] == l[v]))
            .fold(None, |b: Option<(usize, f64)>, (u, w)| match b {
                Some((_, bw)) if bw >= w => b,
                _ => Some((u, w)),
            });
        match best {
            Some((u, _)) => {
                mate[v] = u;
                mate[u] = v;
            }
            None => mate[v] = v,
        }
    }
    let mut cmap = vec![usize::MAX; n];
    let mut nc = 0;
    for v in 0..n {
        if cmap[v] == usize::MAX {
            cmap[v] = nc;
            cmap[mate[v]] = nc;
            nc += 1;
        }
    }
    let mut members = vec![Vec::with_capacity(2); nc];
    for v in 0..n {
        members[cmap[v]].push(v);
    }
    let mut xadj = vec![0usize];
    let mut adjncy = Vec::new();
    let mut ewgt = Vec::new();
    let mut vwgt = Vec::with_capacity(nc);
    let mut slot = vec![usize::MAX; nc];
    for (c, mem) in members.iter().enumerate() {
        let start = adjncy.len();
        vwgt.push(mem.iter().map(|&v| g.vertex_weight(v)).sum());
        for &v in mem {
            for (u, w) in g.weighted_neighbors(v) {
                let cu = cmap[u];
                if cu == c {
                    continue;
                }
                if slot[cu] == usize::MAX || slot[cu] < start {
                    slot[cu] = adjncy.len();
                    adjncy.push(cu);
                    ewgt.push(w);
                } else {
                    ewgt[slot[cu]] += w;
                }
            }
        }
        xadj.push(adjncy.len());
    }
    (graph_unchecked(xadj, adjncy, Some(vwgt), Some(ewgt)), cmap)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::csr::grid_graph;

    #[test]
    fn coarsening_preserves_weights() {
        let g = grid_graph(7, 9);
        let (c, cmap) = coarsen(&g, None);
        assert!(c.n() < g.n());
        assert_eq!(c.total_weight(), g.total_weight());
        // Cut edges of a coarse 2-colouring equal the fine cut of its projection.
        let colour: Vec<usize> = (0..c.n()).map(|i| i % 2).collect();
        let fine_cut: f64 = (0..g.n())
            .flat_map(|v| g.neighbors(v).iter().map(move |&u| (v, u)))
            .filter(|&(v, u)| colour[cmap[v]] != colour[cmap[u]])
            .count() as f64
            / 2.0;
        let coarse_cut: f64 = (0..c.n())
            .flat_map(|v| c.weighted_neighbors(v).map(move |(u, w)| (v, u, w)))
            .filter(|&(v, u, _)| colour[v] != colour[u])
            .map(|t| t.2)
            .sum::<f64>()
            / 2.0;
        assert_eq!(fine_cut, coarse_cut);
    }
}
