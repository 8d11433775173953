"""A Jacobi heat stencil on nuce grids with remaps, bit for bit against the
same sweeps on the whole array in NumPy on one rank."""
import numpy as np
import pytest

import nuce
from conftest import jacobi_sweeps


def initial(shape):
    idx = np.indices(shape)
    return ((idx * np.arange(2, 2 + len(shape)).reshape((-1,) + (1,) * len(shape))).sum(0) % 7).astype(np.float64)


def serial(shape, iters):
    """The reference: the whole grid padded by a ring of zeros (the fixed
    boundary), the same sweeps."""
    u = np.zeros(tuple(n + 2 for n in shape))
    inner = tuple(slice(1, n + 1) for n in shape)
    u[inner] = initial(shape)
    u = jacobi_sweeps(u, iters, lambda a: None, inner)
    return u[inner]


def gather(comm, grid, u):
    """The whole grid on every rank, from each rank's box."""
    lo, size = grid.box
    parts = comm.allgather((lo, size, u[grid.interior].copy()))
    n = grid.shape
    out = np.full(n, np.nan)
    for lo, size, block in parts:
        out[tuple(slice(l, l + s) for l, s in zip(lo, size))] = block
    return out


def speeds_of(phase, size):
    """Forced speeds (cells per second) per phase: a slow rank that moves."""
    s = [1e6] * size
    s[phase % size] = 2.5e5
    return s


@pytest.mark.parametrize("shape", [(48, 40), (12, 10, 14)])
def test_heat_with_remaps_is_bit_identical(comm, bal, shape):
    phases, iters = 4, 5
    grid = bal.grid(shape, ghost=1)
    u = grid.zeros()
    lo, size = grid.box
    u[grid.interior] = initial(shape)[tuple(slice(l, l + s) for l, s in zip(lo, size))]
    remaps = 0
    for phase in range(phases):
        u = jacobi_sweeps(u, iters, grid.exchange, grid.interior)
        cells = int(np.prod(grid.box[1]))
        # The phase as if this rank ran at its forced speed.
        bal.record_phase(cells * iters, cells * iters / speeds_of(phase, comm.size)[comm.rank])
        r = bal.maybe_remap(grid, iters, [u])
        assert comm.allgather(r.remapped) == [r.remapped] * comm.size
        remaps += r.remapped
        (u,) = r.fields
        assert u.shape == grid.padded_shape
        if phase == 0 and comm.size > 1:
            # The first phase's speeds are taken as they are: the slow rank
            # (rank 0) gets the fewest cells. (Later ones are smoothed
            # within their noise.)
            assert r.remapped
            cells = comm.allgather(int(np.prod(grid.box[1])))
            assert cells[0] == min(cells) < max(cells)
    got = gather(comm, grid, u)
    assert np.array_equal(got, serial(shape, phases * iters))
    if comm.size > 1:
        assert remaps >= 2


def test_remap_keeps_several_fields_and_components(comm, bal):
    grid = bal.grid((30, 20), ghost=2, stencil="box")
    a = grid.zeros()
    b = grid.zeros(np.int32, components=(3,))
    lo, size = grid.box
    ii, jj = np.meshgrid(np.arange(lo[0], lo[0] + size[0]), np.arange(lo[1], lo[1] + size[1]), indexing="ij")
    a[grid.interior] = ii * 100 + jj
    b[grid.interior] = np.stack([ii, jj, ii + jj], axis=-1)
    cells = int(np.prod(size))
    speed = 1e6 * (comm.rank + 1)
    bal.record_phase(cells * 10, cells * 10 / speed)
    r = bal.maybe_remap(grid, 10, [a, b])
    a, b = r.fields
    lo, size = grid.box
    ii, jj = np.meshgrid(np.arange(lo[0], lo[0] + size[0]), np.arange(lo[1], lo[1] + size[1]), indexing="ij")
    assert np.array_equal(a[grid.interior], ii * 100 + jj)
    assert b.dtype == np.int32 and b.shape == grid.padded_shape + (3,)
    assert np.array_equal(b[grid.interior], np.stack([ii, jj, ii + jj], axis=-1))
    if comm.size > 1:
        assert r.remapped and r.moved_bytes > 0


def test_cost_per_cell_moves_cells_to_balance_cost(comm, bal):
    if comm.size == 1:
        pytest.skip("one rank: nothing to balance")
    grid = bal.grid((40, 40), ghost=1)
    u = grid.zeros()

    def cost_of(grid):
        lo, size = grid.box
        i, j = np.meshgrid(np.arange(lo[0], lo[0] + size[0]), np.arange(lo[1], lo[1] + size[1]), indexing="ij")
        return np.where((i < 15) & (j < 15), 8.0, 1.0)  # a corner costs 8x

    c = cost_of(grid)
    grid.set_cost(c)
    # Every rank equally fast per unit of cost.
    bal.record_phase(c.sum() * 10, c.sum() * 10 / 1e6)
    r = bal.maybe_remap(grid, 10, [u])
    assert r.remapped
    loads = comm.allgather(float(cost_of(grid).sum()))
    assert max(loads) / (sum(loads) / len(loads)) < 1.1
