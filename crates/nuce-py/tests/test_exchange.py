"""Ghost exchanges in place on the caller's arrays."""
import numpy as np
import pytest
from mpi4py import MPI

import nuce


def global_value(idx):
    return sum(i * 1000 ** k for k, i in enumerate(reversed(idx))) + 1.0


def filled(grid, dtype=np.float64):
    """A field whose cells hold a function of their global index, ghosts -1."""
    u = grid.zeros(dtype) - 1
    lo, size = grid.box
    idx = np.indices(size)
    u[grid.interior] = global_value([idx[a] + lo[a] for a in range(len(size))])
    return u


def check_ghosts(grid, u, box_stencil):
    """Every ghost cell inside the grid holds its global value (the 'faces'
    stencil leaves edge and corner ghosts as they were)."""
    lo, size = grid.box
    pad = grid.pad
    n = grid.shape
    it = np.nditer(u, flags=["multi_index"])
    for x in it:
        g = [i - p + l for i, p, l in zip(it.multi_index, pad, lo)]
        outside = [not (l <= gi < l + s) for gi, l, s in zip(g, lo, size)]
        if not any(outside):
            continue
        inside_grid = all(0 <= gi < ni for gi, ni in zip(g, n))
        if not inside_grid or (not box_stencil and sum(outside) > 1):
            assert x == -1, (g, float(x))
        else:
            assert x == global_value(g), (g, float(x))


@pytest.mark.parametrize("shape,stencil", [((17, 23), "faces"), ((17, 23), "box"), ((9, 8, 11), "box")])
def test_exchange_fills_ghosts_in_place(comm, bal, shape, stencil):
    grid = bal.grid(shape, ghost=1, stencil=stencil)
    u = filled(grid)
    before = u.__array_interface__["data"][0]
    grid.exchange(u)
    assert u.__array_interface__["data"][0] == before  # no copy: the same memory
    if u.size:
        check_ghosts(grid, u, stencil == "box")
    assert grid.exchanges == 1


def test_exchange_several_fields_and_dtypes(comm, bal):
    grid = bal.grid((20, 12), ghost=2, stencil="box")
    a = filled(grid)
    b = filled(grid, np.int64)
    c = grid.zeros(np.float32, components=(2,))
    ptrs = [x.ctypes.data for x in (a, b, c)]
    grid.exchange(a, b, c)
    assert [x.ctypes.data for x in (a, b, c)] == ptrs
    check_ghosts(grid, a, True)
    check_ghosts(grid, b, True)


def test_exchange_releases_the_gil(comm, bal):
    """Another Python thread runs while nuce waits for a late neighbour."""
    import threading
    import time

    if comm.size == 1:
        pytest.skip("no neighbour to wait for")
    grid = bal.grid((16, 16))
    u = grid.zeros()
    ticks = []
    stop = threading.Event()

    def tick():
        while not stop.is_set():
            ticks.append(1)
            time.sleep(0.001)

    t = threading.Thread(target=tick)
    comm.Barrier()
    if comm.rank == 0:
        time.sleep(0.3)  # rank 0 arrives late: the others wait inside exchange
    else:
        t.start()
        n0 = len(ticks)
    grid.exchange(u)
    if comm.rank != 0:
        n1 = len(ticks)
        stop.set()
        t.join()
        # The ticker ran while this rank waited for rank 0 in nuce.
        if 0 in grid.neighbours:
            assert n1 - n0 > 5


def test_rank_without_cells(comm, bal):
    """More ranks than rows: a rank may hold no cells and still exchange."""
    grid = bal.grid((1, comm.size * 2 - 1) if comm.size > 1 else (1, 1), ghost=1)
    u = grid.zeros()
    grid.exchange(u)
    r = bal.maybe_remap(grid, 1, [u])
    assert r.fields[0].shape == grid.padded_shape


@pytest.mark.parametrize("shape", [(17, 23), (9, 8, 11)])
@pytest.mark.parametrize("root", [0, -1])
def test_scatter_and_gather_through_a_whole_array(comm, bal, shape, root):
    root = root % comm.size
    grid = bal.grid(shape, ghost=1)
    idx = np.indices(shape)
    whole = global_value([idx[a] for a in range(len(shape))])
    u = grid.zeros() - 1
    grid.scatter(whole if comm.rank == root else None, u, root=root)
    lo, size = grid.box
    sub = tuple(slice(l, l + s) for l, s in zip(lo, size))
    assert np.array_equal(u[grid.interior], whole[sub])
    ghosts = np.ones(u.shape, bool)
    ghosts[grid.interior] = False
    assert np.all(u[ghosts] == -1)  # ghost cells are not written
    u[grid.interior] *= 2
    back = grid.gather(u, root=root)
    if comm.rank == root:
        assert back.shape == shape and back.dtype == u.dtype
        assert np.array_equal(back, 2 * whole)
    else:
        assert back is None


def test_gather_keeps_components_and_dtype(comm, bal):
    grid = bal.grid((6, 7), ghost=1)
    u = grid.zeros(np.int32, components=(3,))
    lo, size = grid.box
    idx = np.indices(size)
    for c in range(3):
        u[grid.interior + (c,)] = (idx[0] + lo[0]) * 100 + (idx[1] + lo[1]) * 10 + c
    back = grid.gather(u)
    if comm.rank == 0:
        i, j = np.indices((6, 7))
        want = np.stack([i * 100 + j * 10 + c for c in range(3)], axis=-1).astype(np.int32)
        assert back.dtype == np.int32 and np.array_equal(back, want)


def test_a_bad_whole_array_is_an_error_on_every_rank(comm, bal):
    grid = bal.grid((6, 7), ghost=1)
    u = grid.zeros()
    wrong = np.zeros((7, 6)) if comm.rank == 0 else None
    with pytest.raises(nuce.InputError, match="whole array has shape"):
        grid.scatter(wrong, u)
    with pytest.raises(nuce.InputError, match="no whole array"):
        grid.scatter(None, u)
    # The grid goes on.
    grid.scatter(np.ones((6, 7)) if comm.rank == 0 else None, u)
    assert np.all(u[grid.interior] == 1)
