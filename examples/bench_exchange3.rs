//! Cost of a 3D ghost exchange: `DistArray3::exchange_ghosts` (27-point:
//! faces, edges and corners) against a hand-written exchange of the same
//! cells in the same run — `MPI_Isend`/`MPI_Irecv` with one subarray
//! datatype per neighbour and direction, straight on a padded array, no
//! packing. The hand-written side finds its neighbours and regions itself,
//! from the plan's boxes (`expand(mine, g) ∩ theirs` received,
//! `mine ∩ expand(theirs, g)` sent), so it does not share nuce's halo code;
//! after the timing both must hold the same ghost values (checked).
//!
//! ```text
//! mpirun -np 2 target/release/examples/bench_exchange3 --n 64 --ghost 1 --ncomp 1 --iters 500 --rounds 9
//! ```
//! Rounds alternate the two ways; prints one JSON line on the root with the
//! median seconds per exchange of each (max over ranks) and their ratio
//! (nuce / hand-written: 1.0 means no overhead).

use std::os::raw::c_int;

use clap::Parser;
use mpi::ffi;
use mpi::raw::AsRaw;
use mpi::traits::*;
use nuce::plan::array3d::{Best3, Box3, GridDecomposer3, GridPlan3, Stencil};
use nuce::DistArray3;

#[path = "common/timing.rs"]
mod timing;
use timing::{median, per_call};

#[derive(Parser)]
struct Args {
    /// Grid side (n × n × n).
    #[arg(long, default_value_t = 64)]
    n: usize,
    /// Ghost width (1 to 4).
    #[arg(long, default_value_t = 1)]
    ghost: usize,
    /// Components per cell (fields carried together).
    #[arg(long, default_value_t = 1)]
    ncomp: usize,
    /// Exchanges per round.
    #[arg(long, default_value_t = 500)]
    iters: usize,
    /// Rounds of each way (alternating).
    #[arg(long, default_value_t = 7)]
    rounds: usize,
}

/// `b` grown by `g` on every side, clipped to the grid `n³`.
fn expand(b: &Box3, g: usize, n: usize) -> Box3 {
    let lo = [0, 1, 2].map(|a| b.lo(a).saturating_sub(g));
    let len = [0, 1, 2].map(|a| (b.hi(a) + g).min(n) - lo[a]);
    Box3::from_axes(lo, len)
}

/// A committed subarray datatype of `region` (global coordinates) in the
/// padded block of `me` with ghost width `g` and `ncomp` doubles per cell.
fn subarray(me: &Box3, g: usize, ncomp: usize, region: &Box3) -> ffi::MPI_Datatype {
    let int = |x: usize| c_int::try_from(x).expect("fits MPI's int");
    let sizes = [0, 1, 2].map(|a| me.len(a) + 2 * g);
    let sizes = [int(sizes[0]), int(sizes[1]), int(sizes[2] * ncomp)];
    let subs = [int(region.nx), int(region.ny), int(region.nz * ncomp)];
    let at = [0, 1, 2].map(|a| region.lo(a) + g - me.lo(a));
    let starts = [int(at[0]), int(at[1]), int(at[2] * ncomp)];
    let mut t: ffi::MPI_Datatype = unsafe { ffi::RSMPI_DATATYPE_NULL };
    // SAFETY: three sizes, subsizes and starts; `t` is an out-pointer.
    unsafe {
        ffi::MPI_Type_create_subarray(
            3,
            sizes.as_ptr(),
            subs.as_ptr(),
            starts.as_ptr(),
            ffi::MPI_ORDER_C as c_int,
            ffi::RSMPI_DOUBLE,
            &mut t,
        );
        ffi::MPI_Type_commit(&mut t);
    }
    t
}

/// The hand-written exchange: per neighbour, its rank and the datatypes
/// of the cells sent to it and received from it.
struct Hand {
    peers: Vec<(c_int, ffi::MPI_Datatype, ffi::MPI_Datatype)>,
}

impl Hand {
    fn new(plan: &GridPlan3, me: usize, g: usize, ncomp: usize, n: usize) -> Self {
        let mine = plan.boxes[me];
        let mut peers = Vec::new();
        for (q, theirs) in plan.boxes.iter().enumerate() {
            if q == me || theirs.is_empty() || mine.is_empty() {
                continue;
            }
            let recv = expand(&mine, g, n).intersect(theirs);
            let send = mine.intersect(&expand(theirs, g, n));
            if let (Some(r), Some(s)) = (recv, send) {
                peers.push((
                    q as c_int,
                    subarray(&mine, g, ncomp, &s),
                    subarray(&mine, g, ncomp, &r),
                ));
            }
        }
        Hand { peers }
    }

    fn exchange(&self, comm: ffi::MPI_Comm, a: &mut [f64]) {
        let base = a.as_mut_ptr().cast::<std::ffi::c_void>();
        let mut reqs = vec![unsafe { ffi::RSMPI_REQUEST_NULL }; 2 * self.peers.len()];
        // SAFETY: every datatype describes cells inside `a`, which outlives
        // the wait; receive regions (ghosts) and send regions (owned cells)
        // do not overlap.
        unsafe {
            for (k, &(q, _, rt)) in self.peers.iter().enumerate() {
                ffi::MPI_Irecv(base, 1, rt, q, 7, comm, &mut reqs[k]);
            }
            for (k, &(q, st, _)) in self.peers.iter().enumerate() {
                ffi::MPI_Isend(base, 1, st, q, 7, comm, &mut reqs[self.peers.len() + k]);
            }
            ffi::MPI_Waitall(
                reqs.len() as c_int,
                reqs.as_mut_ptr(),
                ffi::RSMPI_STATUSES_IGNORE,
            );
        }
    }
}

impl Drop for Hand {
    fn drop(&mut self) {
        for (_, mut s, mut r) in self.peers.drain(..) {
            // SAFETY: committed datatypes made by `subarray`, freed once.
            unsafe {
                ffi::MPI_Type_free(&mut s);
                ffi::MPI_Type_free(&mut r);
            }
        }
    }
}

fn main() {
    let args = Args::parse();
    let universe = mpi::initialize().expect("MPI init");
    let w = universe.world();
    let (p, me) = (w.size() as usize, w.rank() as usize);
    let (n, g, nc) = (args.n, args.ghost, args.ncomp);
    let plan = Best3 {
        stencil: Stencil::default(),
    }
    .decompose((n, n, n), &vec![1.0; p])
    .expect("plan");
    let mut a = DistArray3::<f64>::with_plan(&w, plan.clone(), g, nc).expect("array");
    // Owned cells carry their global index, ghosts -1.
    a.padded_mut().fill(-1.0);
    let mine = a.local_box();
    let pd = a.padded_dims();
    for (i, j, k) in (0..mine.nx)
        .flat_map(|i| (0..mine.ny).map(move |j| (i, j)))
        .flat_map(|(i, j)| (0..mine.nz).map(move |k| (i, j, k)))
    {
        for c in 0..nc {
            let at = a.index(mine.x + i, mine.y + j, mine.z + k, c);
            let global = ((mine.x + i) * n + mine.y + j) * n + mine.z + k;
            a.padded_mut()[at] = (global * nc + c) as f64;
        }
    }
    let mut hand_a = a.padded().to_vec();
    assert_eq!(hand_a.len(), pd[0] * pd[1] * pd[2] * nc);
    let hand = Hand::new(&plan, me, g, nc, n);
    let hw = w.duplicate();
    let (mut t_nuce, mut t_hand) = (vec![], vec![]);
    for _ in 0..args.rounds {
        t_nuce.push(per_call(&w, args.iters, || {
            a.exchange_ghosts().expect("exchange");
        }));
        t_hand.push(per_call(&w, args.iters, || {
            hand.exchange(hw.as_raw(), &mut hand_a)
        }));
    }
    // The same values everywhere: the same ghosts received (faces, edges
    // and corners), the others still -1.
    let differ = a
        .padded()
        .iter()
        .zip(&hand_a)
        .filter(|(x, y)| x != y)
        .count();
    assert_eq!(
        differ, 0,
        "rank {me}: the two exchanges left different padded blocks"
    );
    let unset = hand_a.iter().filter(|&&v| v == -1.0).count();
    assert!(
        p == 1 || unset < hand_a.len() - mine.volume() * nc,
        "rank {me}: no ghost received ({unset} of {} unset, box {mine:?})",
        hand_a.len()
    );
    let (tn, th) = (median(t_nuce), median(t_hand));
    if me == 0 {
        println!(
            "{{\"ranks\":{p},\"n\":{n},\"ghost\":{g},\"ncomp\":{nc},\"nuce_s\":{tn:.3e},\"hand_s\":{th:.3e},\"ratio\":{:.3}}}",
            tn / th
        );
    }
}
