"""A balancer on a communicator from MPI.COMM_WORLD.Split."""
import numpy as np

import nuce
from conftest import jacobi_sweeps


def test_split_communicator(comm):
    color = comm.rank % 2
    sub = comm.Split(color, comm.rank)
    bal = nuce.Balancer(sub)
    assert (bal.rank, bal.size) == (sub.rank, sub.size)
    grid = bal.grid((30, 25))
    u = grid.zeros()
    lo, size = grid.box
    u[grid.interior] = color + 1
    u = jacobi_sweeps(u, 3, grid.exchange, grid.interior)
    cells = int(np.prod(size))
    bal.record_phase(cells * 3, cells * 3 / (1e6 * (sub.rank + 1)))
    r = bal.maybe_remap(grid, 3, [u])
    (u,) = r.fields
    # The whole sub-grid's sum after the remap is the sum before.
    total = sub.allreduce(float(u[grid.interior].sum()))
    assert total > 0
    if sub.size > 1:
        assert r.remapped
    del grid, bal
    sub.Free()  # the caller's handle stays the caller's: nuce duplicated it


def test_comm_null_is_refused():
    from mpi4py import MPI

    try:
        nuce.Balancer(MPI.COMM_NULL)
    except nuce.InputError as e:
        assert "COMM_NULL" in str(e)
    else:
        raise AssertionError("MPI.COMM_NULL accepted")
