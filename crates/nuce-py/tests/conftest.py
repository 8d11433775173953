"""Shared fixtures of the package's tests, run under mpirun on 1-3 ranks
(scripts/test_python.sh): every rank runs every test, in the same order, so
each test is a collective program."""
import numpy as np
import pytest
from mpi4py import MPI

import nuce


@pytest.fixture
def comm():
    return MPI.COMM_WORLD


@pytest.fixture
def bal(comm):
    return nuce.Balancer(comm)


def raised(f):
    """The name of the nuce exception class `f()` raises, or None."""
    try:
        f()
    except nuce.Error as e:
        return type(e).__name__
    return None


def same_everywhere(comm, value):
    """Every rank's value (gathered): the test asserts on the list."""
    return comm.allgather(value)


def jacobi_sweeps(u, iters, exchange, interior):
    """`iters` Jacobi sweeps of the 5-point (2D) or 7-point (3D) average on
    the padded array `u`, ghost cells from `exchange(u)` before each; returns
    the array holding the result (u or its twin)."""
    v = np.zeros_like(u)
    d = u.ndim
    for _ in range(iters):
        exchange(u)
        acc = np.zeros(u[interior].shape)
        for a in range(d):
            for s in (-1, 1):
                idx = list(interior)
                sl = interior[a]
                idx[a] = slice(sl.start + s, sl.stop + s)
                acc = acc + u[tuple(idx)]
        v[interior] = acc / (2 * d)
        u, v = v, u
    return u
