//! bench_balance_point — one balance point (`Balancer::maybe_remap` on a 2D
//! array of `--cells-per-rank` cells per rank) as the number of ranks
//! grows: its wall time, the checked-entry messages the root receives, and
//! every rank's memory.
//!
//! ```text
//! mpirun --oversubscribe -np 64 target/release/examples/bench_balance_point --hosts 4 --cells-per-rank 1024
//! mpirun --oversubscribe -np 64 target/release/examples/bench_balance_point --hosts 0   # flat
//! ```
//!
//! The ranks are put on `--hosts` emulated hosts in contiguous blocks
//! (`Balancer::set_hosts`; 0: none, everything flat). Each balance point
//! follows a phase recorded at speeds that alternate between two patterns
//! (`Balancer::record_phase`), so that most balance points plan and remap.
//! Prints one line on the root, `key=value` pairs: the median and maximum
//! (over the balance points) of the root's time per balance point, the
//! checkpoint messages and bytes the root received per balance point
//! (`watchdog::arrivals_received`), the remaps done, and the median and
//! maximum over the ranks of VmRSS and VmHWM (`/proc/self/status`, KiB)
//! after the run, and of the Rust heap's peak (what nuce and this program
//! allocated, Open MPI's own C allocations excluded: a counting global
//! allocator), over the balance points only (the set-up's peak reset). `scripts/bench_scale.sh` runs it at 8–128 ranks.

use nuce::DistArray2;
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use clap::Parser;
use mpi::traits::*;
use nuce::collective::gather_values;
use nuce::internals::watchdog::{arrival_bytes_received, arrivals_received};
use nuce::Balancer;

#[path = "common/timing.rs"]
mod timing;

/// The median of `v`, 0 when empty (a run of no balance points: set-up only).
fn median(v: Vec<f64>) -> f64 {
    if v.is_empty() {
        0.0
    } else {
        timing::median(v)
    }
}

#[derive(Parser)]
struct Args {
    /// Emulated hosts (contiguous blocks of ranks); 0: no hosts (flat).
    #[arg(long, default_value_t = 4)]
    hosts: usize,
    /// Cells per rank: the array is square, of about `p` times as many
    /// cells, so that every rank's block keeps its size as `p` grows.
    #[arg(long, default_value_t = 1024)]
    cells_per_rank: usize,
    /// Balance points timed.
    #[arg(long, default_value_t = 10)]
    points: usize,
}

/// The system allocator, counting the bytes in use and their peak.
struct Counting;

static IN_USE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

// SAFETY: every call is forwarded to the system allocator unchanged; the
// counters are only statistics.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = System.alloc(layout);
        if !p.is_null() {
            let now = IN_USE.fetch_add(layout.size(), Ordering::Relaxed) + layout.size();
            PEAK.fetch_max(now, Ordering::Relaxed);
        }
        p
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        System.dealloc(ptr, layout);
        IN_USE.fetch_sub(layout.size(), Ordering::Relaxed);
    }
}

#[global_allocator]
static ALLOC: Counting = Counting;

/// `VmRSS` and `VmHWM` of this process in KiB (0 where not readable).
fn memory_kib() -> (u64, u64) {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.split_whitespace().next())
            .and_then(|v| v.parse().ok())
            .unwrap_or(0)
    };
    (field("VmRSS:"), field("VmHWM:"))
}

/// The speed rank `r` of `p` runs at in phase `k`: two patterns in turn.
fn speed(r: usize, p: usize, k: usize) -> f64 {
    if k % 2 == 0 {
        1.0 + (r % 3) as f64
    } else {
        1.0 + ((p - r) % 3) as f64
    }
}

fn main() {
    let args = Args::parse();
    let universe = mpi::initialize().expect("MPI init");
    let world = universe.world();
    let (rank, p) = (world.rank() as usize, world.size() as usize);
    let mut bal = Balancer::new(&world).expect("balancer");
    if args.hosts > 0 {
        let host_of: Vec<usize> = (0..p).map(|r| r * args.hosts / p).collect();
        bal.set_hosts(&host_of).expect("hosts");
    }
    let side = ((p * args.cells_per_rank) as f64).sqrt().ceil() as usize;
    let mut a = DistArray2::<f64>::new(&mut bal, side, side, 1).expect("array");
    let (mut times, mut msgs, mut bytes, mut remaps) = (
        Vec::with_capacity(args.points),
        Vec::with_capacity(args.points),
        Vec::with_capacity(args.points),
        0,
    );
    let heap_before = IN_USE.load(Ordering::Relaxed);
    PEAK.store(heap_before, Ordering::Relaxed);
    for k in 0..args.points {
        a.exchange_ghosts().expect("ghosts");
        let work = a.rect().area() as f64 * 100.0;
        let s = 1.0e6 * speed(rank, p, k);
        bal.record_phase(work.max(1.0), Duration::from_secs_f64(work.max(1.0) / s))
            .expect("phase");
        world.barrier();
        let (m0, b0) = (arrivals_received(), arrival_bytes_received());
        let t = Instant::now();
        let report = bal
            .maybe_remap_ahead(&mut a, 1, 1_000_000)
            .expect("balance point");
        times.push(t.elapsed().as_secs_f64());
        msgs.push((arrivals_received() - m0) as f64);
        bytes.push((arrival_bytes_received() - b0) as f64);
        remaps += usize::from(report.remap);
    }
    // The heap the balance points needed above what the set-up left.
    let heap = (PEAK.load(Ordering::Relaxed) - heap_before) as u64 / 1024;
    let (rss, hwm) = memory_kib();
    let mem = gather_values(&world, 0, &(rss, hwm, heap)).expect("memory");
    if let Some(mem) = mem {
        let rss: Vec<f64> = mem.iter().map(|m| m.0 as f64).collect();
        let hwm: Vec<f64> = mem.iter().map(|m| m.1 as f64).collect();
        let heap: Vec<f64> = mem.iter().map(|m| m.2 as f64).collect();
        let max = |v: &[f64]| v.iter().copied().fold(0.0, f64::max);
        println!(
            "p={p} hosts={} side={side} points={} remaps={remaps} \
             bp_ms_median={:.3} bp_ms_max={:.3} root_msgs_per_bp={} root_bytes_per_bp={} \
             rss_kib_median={} rss_kib_max={} hwm_kib_median={} hwm_kib_max={} \
             heap_kib_median={} heap_kib_nonroot_max={} heap_kib_root={}",
            args.hosts,
            args.points,
            median(times.clone()) * 1e3,
            max(&times) * 1e3,
            median(msgs),
            median(bytes),
            median(rss.clone()),
            max(&rss),
            median(hwm.clone()),
            max(&hwm),
            median(heap.clone()),
            max(&heap[1..]),
            heap[0],
        );
    }
}
