"""Type stubs of the extension module nuce._nuce (see nuce/__init__.py)."""
import builtins
from typing import Optional, Sequence, Tuple, Union

import numpy as np
import numpy.typing as npt

__version__: str

Index = Tuple[int, ...]
Box = Tuple[Index, Index]

class Error(Exception):
    """Every error of nuce."""

class InputError(Error, ValueError):
    """The input is wrong: an array's dtype, layout or shape, a speed, a
    shape that differs between ranks."""

class DisagreementError(Error):
    """The ranks made different collective calls, or the same call with
    arguments that must match and differ."""

class MpiError(Error):
    """An MPI call failed."""

class TimeoutError(Error, builtins.TimeoutError):
    """A ghost exchange whose ranks all stopped waiting (NUCE_TIMEOUT_S)."""

class InternalError(Error):
    """A corrupted message, or a bug of nuce."""

class Remap:
    """The outcome of a balance point (Balancer.maybe_remap)."""

    remapped: bool
    fields: Tuple[np.ndarray, ...]
    moved_bytes: int
    speeds: list[float]
    imbalance_before: float
    imbalance_after: float
    rule: str

class Grid:
    """A 2D or 3D grid whose fields are your NumPy arrays (Balancer.grid)."""

    @property
    def shape(self) -> Index: ...
    @property
    def ghost(self) -> int: ...
    @property
    def pad(self) -> Index: ...
    @property
    def box(self) -> Box: ...
    def box_of(self, rank: int) -> Box: ...
    @property
    def padded_shape(self) -> Index: ...
    @property
    def interior(self) -> Tuple[slice, ...]: ...
    def zeros(
        self, dtype: npt.DTypeLike = None, components: Optional[Sequence[int]] = None
    ) -> np.ndarray: ...
    @property
    def neighbours(self) -> list[int]: ...
    @property
    def exchanges(self) -> int: ...
    def exchange(self, *fields: np.ndarray) -> None: ...
    def gather(self, u: np.ndarray, root: int = 0) -> Optional[np.ndarray]: ...
    def scatter(self, whole: Optional[npt.ArrayLike], u: np.ndarray, root: int = 0) -> None: ...
    def set_cost(self, cost: npt.ArrayLike) -> None: ...
    def clear_cost(self) -> None: ...

class Graph:
    """A graph scattered from rank 0 (Balancer.scatter_graph), one float64 value per vertex."""

    @property
    def owned(self) -> np.ndarray: ...
    @property
    def ghosts(self) -> np.ndarray: ...
    @property
    def values(self) -> np.ndarray: ...
    @property
    def ghost_values(self) -> np.ndarray: ...
    def set_values(self, values: np.ndarray) -> None: ...
    def adjacency(self) -> Tuple[np.ndarray, np.ndarray, np.ndarray]: ...
    def exchange(self) -> None: ...
    def gather(self) -> Optional[np.ndarray]: ...

class Balancer:
    """A load balancer over a duplicate of an mpi4py intra-communicator."""

    def __init__(self, comm: object) -> None: ...
    @property
    def rank(self) -> int: ...
    @property
    def size(self) -> int: ...
    def measure(self) -> list[float]: ...
    def set_speeds(self, speeds: Optional[Sequence[float]] = None) -> None: ...
    @property
    def speeds(self) -> Optional[list[float]]: ...
    def record_phase(self, work: float, seconds: float) -> None: ...
    def start_phase(self) -> None: ...
    def counts_1d(self, n: int) -> list[int]: ...
    def grid(
        self,
        shape: Union[Tuple[int, int], Tuple[int, int, int]],
        ghost: int = 1,
        stencil: str = "faces",
    ) -> Grid: ...
    def scatter_graph(
        self,
        xadj: Optional[Sequence[int]] = None,
        adjncy: Optional[Sequence[int]] = None,
        values: Optional[Sequence[float]] = None,
        coords: Optional[Sequence[Sequence[float]]] = None,
    ) -> Graph: ...
    def maybe_remap(
        self,
        grid: Union[Grid, Graph],
        iterations: int,
        fields: Optional[Sequence[np.ndarray]] = None,
        ahead: Optional[int] = None,
    ) -> Remap: ...

def decompose2d(
    rows: int, cols: int, speeds: Sequence[float], algorithm: str = "best", latency: float = 0.0
) -> list[Tuple[int, int, int, int]]: ...
def decompose3d(
    shape: Tuple[int, int, int], speeds: Sequence[float], algorithm: str = "best", ghost: int = 1
) -> list[Tuple[Tuple[int, int, int], Tuple[int, int, int]]]: ...
def distribute(
    chunks: int, cycle_times: Sequence[float], mode: str = "static", period: int = 0
) -> Tuple[list[int], list[int]]: ...
def partition_graph(
    xadj: Sequence[int],
    adjncy: Sequence[int],
    speeds: Sequence[float],
    algorithm: str = "multilevel",
    vwgt: Optional[Sequence[float]] = None,
    ewgt: Optional[Sequence[float]] = None,
    coords: Optional[Sequence[Sequence[float]]] = None,
) -> list[int]: ...
