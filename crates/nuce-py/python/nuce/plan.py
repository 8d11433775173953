"""The pure planning functions of nuce (no MPI, no balancer).

Each takes speeds (relative throughputs, finite and > 0; or cycle times for
:func:`distribute`) and returns a plan; invalid input raises
:class:`nuce.InputError`.
"""

from ._nuce import decompose2d, decompose3d, distribute, partition_graph

__all__ = ["decompose2d", "decompose3d", "distribute", "partition_graph"]
