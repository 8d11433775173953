"""The package's overhead: a ghost exchange and a balance point through the
Python package against the same calls through nuce's Rust API, on the same
balancer and grid, in one run (rounds alternate; BENCHMARKS.md "Python").

    mpirun -np 2 python examples/python/bench_overhead.py --shape 1000,1000 --calls 200 --rounds 9

Python side: `grid.exchange(u)` on a NumPy array; `bal.record_phase(...)`
then `bal.maybe_remap(grid, 1, [u])`. Rust side (`nuce._nuce._rust_rounds`):
`Grid::exchange` on a Vec<f64> of the same padded block; `record_phase` then
`Balancer::maybe_remap`. Every rank records the same speed, so no balance
point remaps. Prints one JSON line on rank 0: the median over rounds of the
seconds per call (max over ranks) of each side, and python / rust.
"""
import argparse
import json
import statistics
import time

import numpy as np
from mpi4py import MPI

import nuce
from nuce import _nuce


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--shape", default="1000,1000")
    p.add_argument("--calls", type=int, default=200)
    p.add_argument("--rounds", type=int, default=9)
    a = p.parse_args()
    shape = tuple(int(x) for x in a.shape.split(","))
    comm = MPI.COMM_WORLD
    bal = nuce.Balancer(comm)
    grid = bal.grid(shape, ghost=1)
    u = grid.zeros()
    cells = float(np.prod(grid.box[1]))
    work, seconds = cells, cells / 1e8  # the same speed on every rank

    def py_exchange():
        t0 = time.perf_counter()
        for _ in range(a.calls):
            grid.exchange(u)
        return (time.perf_counter() - t0) / a.calls

    def py_balance():
        t0 = time.perf_counter()
        for _ in range(a.calls):
            bal.record_phase(work, seconds)
            r = bal.maybe_remap(grid, 1, [u])
            assert not r.remapped
        return (time.perf_counter() - t0) / a.calls

    sides = {
        "exchange_python": py_exchange,
        "exchange_rust": lambda: _nuce._rust_rounds(bal, grid, "exchange", a.calls),
        "balance_python": py_balance,
        "balance_rust": lambda: _nuce._rust_rounds(bal, grid, "balance", a.calls, work, seconds),
    }
    times = {k: [] for k in sides}
    for f in sides.values():  # warm-up
        f()
    for _ in range(a.rounds):
        for k, f in sides.items():
            comm.Barrier()
            times[k].append(comm.allreduce(f(), op=MPI.MAX))
    med = {k: statistics.median(v) for k, v in times.items()}
    if comm.rank == 0:
        out = {
            "ranks": comm.size,
            "shape": list(shape),
            "cells_per_rank": int(cells),
            **{k + "_s": v for k, v in med.items()},
            "exchange_ratio": med["exchange_python"] / med["exchange_rust"],
            "balance_ratio": med["balance_python"] / med["balance_rust"],
        }
        print(json.dumps(out))


if __name__ == "__main__":
    main()
