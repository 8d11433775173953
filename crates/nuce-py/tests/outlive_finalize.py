"""Run under mpirun (not by pytest): nuce objects that outlive MPI.Finalize
— an explicit one here, then mpi4py's at exit for the module globals — must
neither crash nor hang the interpreter's exit. The caller's communicator
from Split is freed by the caller, before nuce's duplicates."""
from mpi4py import MPI

import nuce

comm = MPI.COMM_WORLD
rank = comm.rank
bal = nuce.Balancer(comm)
grid = bal.grid((16, 16), ghost=1)
u = grid.zeros()
grid.exchange(u)
sub = comm.Split(comm.rank % 2, comm.rank)
sub_bal = nuce.Balancer(sub)
sub_grid = sub_bal.grid((8, 8, 8))
sub.Free()
v = sub_grid.zeros()
sub_grid.exchange(v)  # nuce's duplicate lives on
MPI.Finalize()
del grid  # after MPI_Finalize: leaked, not freed
try:
    nuce.Balancer(comm)
except nuce.InputError as e:
    assert "not running" in str(e), e
else:
    raise AssertionError("a balancer made after MPI.Finalize")
print(f"outlive_finalize: rank {rank} ok")
# bal, sub_bal, sub_grid stay alive until the interpreter exits.
