"""The pure planning functions."""
import pytest

import nuce
from nuce import plan


def test_decompose2d_tiles_in_proportion():
    rects = plan.decompose2d(100, 60, [1.0, 2.0, 3.0])
    assert len(rects) == 3
    areas = [r[2] * r[3] for r in rects]
    assert sum(areas) == 6000
    assert areas[0] < areas[1] < areas[2]
    with pytest.raises(nuce.InputError):
        plan.decompose2d(10, 10, [1.0, -1.0])
    with pytest.raises(nuce.InputError):
        plan.decompose2d(10, 10, [1.0], algorithm="nope")


def test_decompose3d_and_distribute():
    boxes = plan.decompose3d((10, 12, 14), [1.0, 1.0, 2.0])
    vols = [s[0] * s[1] * s[2] for _, s in boxes]
    assert sum(vols) == 10 * 12 * 14 and vols[2] > vols[0]
    counts, owners = plan.distribute(10, [3.0, 5.0, 8.0])
    assert sum(counts) == 10 and len(owners) == 10
    assert counts[0] >= counts[2]


def test_partition_graph():
    # A 4x4 grid graph.
    n = 4
    adj = [[] for _ in range(n * n)]
    for i in range(n):
        for j in range(n):
            v = i * n + j
            if i + 1 < n:
                adj[v].append(v + n)
                adj[v + n].append(v)
            if j + 1 < n:
                adj[v].append(v + 1)
                adj[v + 1].append(v)
    xadj = [0]
    for a in adj:
        xadj.append(xadj[-1] + len(a))
    adjncy = [w for a in adj for w in sorted(a)]
    parts = plan.partition_graph(xadj, adjncy, [1.0, 1.0])
    assert sorted(set(parts)) == [0, 1] and parts.count(0) == 8
    coords = [[i, j] for i in range(n) for j in range(n)]
    parts = plan.partition_graph(xadj, adjncy, [1.0, 3.0], algorithm="rcb", coords=coords)
    assert parts.count(1) == 12
    with pytest.raises(nuce.InputError):
        plan.partition_graph([0, 1], [5], [1.0])
