//! The plain-MPI baseline of the remap benchmarks: an `MPI_Alltoallv` of
//! the bytes a remap moves between different ranks, from and into
//! pre-packed buffers (no packing, no unpacking), timed as the slowest
//! rank's time.

use mpi::datatype::{Partition, PartitionMut};
use mpi::traits::*;
use mpi::Count;
use nuce::collective::max_f64;
use nuce::internals::comm::displacements;

/// Times one `MPI_Alltoallv` of `f64`s where this rank sends `send[q]` and
/// receives `recv[q]` values to and from rank `q` (its own entries 0: kept
/// data does not travel): seconds, maximum over ranks.
pub fn alltoallv_seconds<C: Communicator>(w: &C, send: &[Count], recv: &[Count]) -> f64 {
    let (sd, rd) = (displacements(send), displacements(recv));
    let sbuf = vec![2.0f64; send.iter().sum::<Count>() as usize];
    let mut rbuf = vec![0f64; recv.iter().sum::<Count>() as usize];
    w.barrier();
    let t = std::time::Instant::now();
    w.all_to_all_varcount_into(
        &Partition::new(&sbuf[..], send, &sd[..]),
        &mut PartitionMut::new(&mut rbuf[..], recv, &rd[..]),
    );
    max_f64(w, t.elapsed().as_secs_f64())
}
