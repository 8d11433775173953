"""nuce: load balancing for MPI applications on heterogeneous clusters.

The Python package of nuce (https://example.invalid/nuce), over mpi4py
communicators and NumPy arrays::

    from mpi4py import MPI
    import nuce

    bal = nuce.Balancer(MPI.COMM_WORLD)     # duplicates the communicator
    grid = bal.grid((1024, 1024), ghost=1)  # planned for the current speeds
    u = grid.zeros()                        # this rank's box plus ghost cells
    for phase in range(10):
        for it in range(50):
            grid.exchange(u)                # ghost cells, in place
            step(u)                         # your solver's iteration
        u, = bal.maybe_remap(grid, 50, [u]).fields   # timed by nuce itself

nuce never initialises nor finalises MPI: importing this package imports
``mpi4py.MPI`` (which initialises MPI unless ``mpi4py.rc.initialize`` is
False) so that the MPI library is loaded the way mpi4py loads it. Every
collective call succeeds on every rank or raises the same exception on every
rank (:class:`Error` and its subclasses). The guide is ``docs/python.md``.
"""

from mpi4py import MPI as _MPI  # noqa: F401  (loads and initialises MPI first)

from . import _nuce
from ._nuce import (
    Balancer,
    DisagreementError,
    Error,
    Graph,
    Grid,
    InputError,
    InternalError,
    MpiError,
    Remap,
    TimeoutError,
    __version__,
)
from . import plan

__all__ = [
    "Balancer",
    "Grid",
    "Graph",
    "Remap",
    "Error",
    "InputError",
    "DisagreementError",
    "MpiError",
    "TimeoutError",
    "InternalError",
    "plan",
    "__version__",
]

del _nuce
