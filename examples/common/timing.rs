//! Timing helpers of the benchmark examples.

use std::time::Instant;

use mpi::topology::SimpleCommunicator;
use mpi::traits::*;
use nuce::collective::max_f64;

/// The median of `v` (upper median for an even count).
pub fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// Seconds per call (max over ranks) of `f` run `iters` times, all ranks
/// starting together.
#[allow(dead_code)] // not every benchmark times calls this way
pub fn per_call(w: &SimpleCommunicator, iters: usize, mut f: impl FnMut()) -> f64 {
    w.barrier();
    let t0 = Instant::now();
    for _ in 0..iters {
        f();
    }
    max_f64(w, t0.elapsed().as_secs_f64()) / iters as f64
}
