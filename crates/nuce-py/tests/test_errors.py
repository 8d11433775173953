"""Errors are exceptions of nuce's hierarchy, the same on every rank."""
import numpy as np
import pytest

import nuce
from conftest import raised


def test_hierarchy():
    assert issubclass(nuce.InputError, nuce.Error)
    assert issubclass(nuce.InputError, ValueError)
    assert issubclass(nuce.TimeoutError, nuce.Error)
    assert issubclass(nuce.TimeoutError, TimeoutError)
    for c in (nuce.DisagreementError, nuce.MpiError, nuce.InternalError):
        assert issubclass(c, nuce.Error)


def last(comm):
    return comm.rank == comm.size - 1


@pytest.mark.parametrize(
    "bad",
    [
        lambda u: u.astype(object),  # wrong dtype
        lambda u: np.asfortranarray(np.zeros((u.shape[0] + 1, u.shape[1] + 1))[:-1, :-1]),  # not contiguous
        lambda u: u[:, ::-1],  # a view with negative strides
        lambda u: np.zeros((u.shape[0] + 1, u.shape[1])),  # wrong shape
        lambda u: u.tolist(),  # not an array
    ],
)
def test_bad_field_on_one_rank_is_the_same_error_everywhere(comm, bal, bad):
    grid = bal.grid((24, 18))
    u = grid.zeros()
    arg = bad(u) if last(comm) else u
    # The balance point is collective over every rank: all raise it.
    names = comm.allgather(raised(lambda: bal.maybe_remap(grid, 1, [arg])))
    assert names == ["InputError"] * comm.size
    # An exchange involves the bad rank and its neighbours: they raise it.
    name = raised(lambda: grid.exchange(arg))
    names = comm.allgather((name, grid.neighbours))
    bad_rank = comm.size - 1
    for r, (n, nb) in enumerate(names):
        if r == bad_rank or bad_rank in nb:
            assert n == "InputError", names
    # The grid still works afterwards.
    grid.exchange(u)


def test_read_only_array(comm, bal):
    grid = bal.grid((10, 10))
    u = grid.zeros()
    if last(comm):
        u.flags.writeable = False
    names = comm.allgather(raised(lambda: bal.maybe_remap(grid, 1, [u])))
    assert names == ["InputError"] * comm.size


@pytest.mark.parametrize(
    "other",
    [np.float32, np.int64],  # another cell size; the same size, another type
)
def test_other_cell_type_on_one_rank_is_a_disagreement(comm, bal, other):
    if comm.size == 1:
        pytest.skip("one rank agrees with itself")
    grid = bal.grid((10, 10))
    u = grid.zeros(other if last(comm) else np.float64)
    name = raised(lambda: grid.exchange(u))
    names = comm.allgather((name, grid.neighbours))
    for r, (n, nb) in enumerate(names):
        if r == comm.size - 1 or comm.size - 1 in nb:
            assert n == "DisagreementError", names
    # The same grid goes on with the right dtype everywhere: what the failed
    # exchange left behind is not taken for a new disagreement (and, under
    # MPICH, reaches no communicator made later).
    u = grid.zeros()
    for _ in range(3):
        grid.exchange(u)


@pytest.mark.parametrize(
    "args,invalid",
    [
        (lambda c: ((20, 21 if last(c) else 20), 1, "faces"), False),  # shape differs on one rank
        # ghost too wide on one rank (a must-match argument that differs: the
        # disagreement is reported; on one rank the width is refused)
        (lambda c: ((20, 20), 9 if last(c) else 1, "faces"), None),
        (lambda c: ((20, 20), 1, "star" if last(c) else "faces"), True),  # unknown stencil
        (lambda c: ("twenty" if last(c) else (20, 20), 1, "faces"), True),  # not a shape
        (lambda c: ((20, 20, 3, 4) if last(c) else (20, 20), 1, "faces"), True),  # 4 axes
    ],
)
def test_bad_grid_on_one_rank_is_the_same_error_everywhere(comm, bal, args, invalid):
    if comm.size == 1 and invalid is False:
        pytest.skip("one rank agrees with itself")
    shape, ghost, stencil = args(comm)
    names = comm.allgather(raised(lambda: bal.grid(shape, ghost=ghost, stencil=stencil)))
    expected = "InputError" if invalid or (invalid is None and comm.size == 1) else "DisagreementError"
    assert names == [expected] * comm.size, names
    # The balancer still works afterwards.
    bal.grid((8, 8))


def test_not_a_grid_and_bad_iterations(comm, bal):
    grid = bal.grid((8, 8))
    u = grid.zeros()
    names = comm.allgather(raised(lambda: bal.maybe_remap("grid" if last(comm) else grid, 1, [u])))
    assert names == ["InputError"] * comm.size
    names = comm.allgather(raised(lambda: bal.maybe_remap(grid, -1 if last(comm) else 1, [u])))
    assert names == ["InputError"] * comm.size
    names = comm.allgather(raised(lambda: bal.maybe_remap(grid, 1, [])))
    assert names == ["InputError"] * comm.size


def test_bad_speeds(comm, bal):
    for s in ([1.0] * (comm.size + 1), [float("nan")] * comm.size, [0.0] * comm.size):
        names = comm.allgather(raised(lambda: bal.set_speeds(s if comm.rank == 0 else None)))
        assert names == ["InputError"] * comm.size
    bal.set_speeds([float(r + 1) for r in range(comm.size)] if comm.rank == 0 else None)
    assert bal.speeds == [float(r + 1) for r in range(comm.size)]


def test_counts_1d(comm, bal):
    counts = bal.counts_1d(1000)
    assert sum(counts) == 1000 and len(counts) == comm.size
    names = comm.allgather(raised(lambda: bal.counts_1d(-5 if last(comm) else 1000)))
    assert names == ["InputError"] * comm.size


def test_record_phase_checks_locally(bal):
    with pytest.raises(nuce.InputError):
        bal.record_phase(float("nan"), 1.0)
    with pytest.raises(nuce.InputError):
        bal.record_phase(1.0, -1.0)


def test_not_a_communicator():
    with pytest.raises(TypeError):
        nuce.Balancer("MPI.COMM_WORLD")
