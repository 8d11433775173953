"""Graphs from Python: scattered from rank 0, relaxed with ghost values,
re-cut at balance points with forced speeds, bit for bit against a serial run."""
import numpy as np

import nuce
from conftest import raised


def grid_graph(n):
    """The n x n grid graph as CSR, with coordinates."""
    adj = [[] for _ in range(n * n)]
    for i in range(n):
        for j in range(n):
            v = i * n + j
            for di, dj in ((1, 0), (0, 1)):
                if i + di < n and j + dj < n:
                    w = (i + di) * n + j + dj
                    adj[v].append(w)
                    adj[w].append(v)
    xadj = [0]
    for a in adj:
        xadj.append(xadj[-1] + len(a))
    return xadj, [w for a in adj for w in sorted(a)], [[float(i), float(j)] for i in range(n) for j in range(n)]


def relax(values, neighbours):
    """One sweep: every vertex takes the mean of itself and its neighbours,
    summed in CSR order (the same order serial and distributed)."""
    out = np.empty_like(values)
    for i, nb in enumerate(neighbours):
        acc = float(values[i])
        for x in nb:
            acc += float(x)
        out[i] = acc / (len(nb) + 1)
    return out


def test_graph_relaxation_with_remaps(comm, bal):
    n, phases, iters = 8, 3, 4
    xadj, adjncy, coords = grid_graph(n)
    init = np.arange(n * n, dtype=np.float64) % 7
    root = comm.rank == 0
    g = bal.scatter_graph(xadj if root else None, adjncy if root else None, init.tolist() if root else None, coords if root else None)
    remaps = 0
    for phase in range(phases):
        for _ in range(iters):
            g.exchange()
            vals = g.values
            both = np.concatenate([vals, g.ghost_values])
            gx, slots, _ = g.adjacency()
            nbs = [both[slots[gx[i] : gx[i + 1]]] for i in range(len(vals))]
            g.set_values(relax(vals, nbs))
        k = len(g.owned)
        speed = 1e6 if comm.rank != phase % comm.size else 2.5e5
        bal.record_phase(k * iters, k * iters / speed)
        r = bal.maybe_remap(g, iters)
        remaps += r.remapped
        assert r.fields == ()
    whole = g.gather()
    # The serial run on the whole graph.
    v = init.copy()
    for _ in range(phases * iters):
        nbs = [v[adjncy[xadj[i] : xadj[i + 1]]] for i in range(n * n)]
        v = relax(v, nbs)
    if root:
        assert np.array_equal(whole, v)
    else:
        assert whole is None
    if comm.size > 1:
        assert remaps >= 1


def test_bad_graph_on_root_is_the_same_error_everywhere(comm, bal):
    root = comm.rank == 0
    names = comm.allgather(raised(lambda: bal.scatter_graph([0, 1] if root else None, [5] if root else None, [1.0] if root else None)))
    assert names == ["InputError"] * comm.size
    names = comm.allgather(raised(lambda: bal.scatter_graph()))
    assert names == ["InputError"] * comm.size
