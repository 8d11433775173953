"""Heat diffusion on a 2D plate (Jacobi, 5-point stencil) balanced by nuce
from Python: the grid lives in NumPy arrays, nuce fills their ghost cells in
place, times every phase by itself and remaps the plate when a rank is
slower — here one rank does its sweep K times from phase P on (--slow R:K@P),
as a slower or shared core would.

    mpirun -np 3 python examples/python/heat2d.py --n 1024 --phases 8 --iters 50 --slow 1:3@2

--check gathers the result on rank 0 and compares it bit for bit with the
same sweeps on the whole plate in NumPy.
"""
import argparse
import time

import numpy as np
from mpi4py import MPI

import nuce

HOT = 1.0  # the top edge's temperature; the other edges are 0


def parse():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--n", type=int, default=512, help="plate of n x n cells")
    p.add_argument("--phases", type=int, default=6)
    p.add_argument("--iters", type=int, default=40, help="iterations per phase")
    p.add_argument("--slow", default="", help="R:K@P: rank R repeats its sweep K times from phase P")
    p.add_argument("--check", action="store_true", help="compare with a serial NumPy run")
    a = p.parse_args()
    a.slow_rank, a.repeat, a.slow_from = -1, 1, 0
    if a.slow:
        r, rest = a.slow.split(":")
        k, ph = rest.split("@")
        a.slow_rank, a.repeat, a.slow_from = int(r), int(k), int(ph)
    return a


def boundary(u, lo, size):
    """The fixed edges: the ghost row above the plate's first row is hot."""
    if lo[0] == 0 and u.size:
        u[0, 1:-1] = HOT


def sweep(u, v):
    """One Jacobi sweep of the interior of u into v."""
    v[1:-1, 1:-1] = 0.25 * (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:])


def serial(n, iters):
    u = np.zeros((n + 2, n + 2))
    u[0, 1:-1] = HOT
    v = u.copy()
    for _ in range(iters):
        sweep(u, v)
        u, v = v, u
    return u[1:-1, 1:-1]


def main():
    a = parse()
    comm = MPI.COMM_WORLD
    bal = nuce.Balancer(comm)
    grid = bal.grid((a.n, a.n), ghost=1)  # even split: no speeds known yet
    u, v = grid.zeros(), grid.zeros()
    boundary(u, *grid.box)
    boundary(v, *grid.box)
    remaps = 0
    t0 = time.perf_counter()
    for phase in range(a.phases):
        repeat = a.repeat if comm.rank == a.slow_rank and phase >= a.slow_from else 1
        tp = time.perf_counter()
        for _ in range(a.iters):
            grid.exchange(u)
            for _ in range(repeat):  # the emulated slower core
                sweep(u, v)
            u, v = v, u
        r = bal.maybe_remap(grid, a.iters, [u])  # nuce timed the phase itself
        if r.remapped:
            remaps += 1
            (u,) = r.fields  # the new box (ghost cells to be exchanged)
            v = grid.zeros()
            boundary(u, *grid.box)
            boundary(v, *grid.box)
        cells = comm.gather(int(np.prod(grid.box[1])))
        if comm.rank == 0:
            print(
                f"phase {phase}: {time.perf_counter() - tp:.3f} s, remapped {r.remapped}, "
                f"cells per rank {cells}, imbalance {r.imbalance_before:.2f} -> {r.imbalance_after:.2f}"
            )
        bal.start_phase()  # the report above is not the solver's compute
    if comm.rank == 0:
        print(f"total {time.perf_counter() - t0:.3f} s, remaps: {remaps}")
    if a.check:
        lo, size = grid.box
        parts = comm.gather((lo, size, u[grid.interior].copy()))
        if comm.rank == 0:
            whole = np.empty((a.n, a.n))
            for lo, size, block in parts:
                whole[lo[0] : lo[0] + size[0], lo[1] : lo[1] + size[1]] = block
            same = np.array_equal(whole, serial(a.n, a.phases * a.iters))
            print("check: bit-identical" if same else "check: DIFFERENT from the serial run")


if __name__ == "__main__":
    main()
