//! Ping-pong network probe: latency and bandwidth from each rank to the root.
//!
//! Each non-root rank in turn (the root serves one rank at a time, started by
//! a "go" message so that no rank times its wait for another's turn) sends
//! `warmup + repeats` round trips of a small and then of a large message to
//! the root, which echoes them. Half a round trip is a one-way time; the
//! medians of the small and large one-way times give Hockney's `τ` and `β`
//! ([`crate::speed::network::hockney_fit`], after the `τ + μB` model of
//! \[KRW96\] §2).
//!
//! Cost: `(p − 1) · (warmup + repeats) · (RTT(small) + RTT(large))` wall time,
//! serialised at the root; `large_bytes` of buffer per rank.
//!
//! Collective: every rank of `comm` calls with the same `root` and config; a
//! bad config is the same `Err` on every rank.

use std::time::Instant;

use mpi::traits::*;

use crate::error::{Error, Result};
use crate::runtime::comm::{agree, gather_values};
use crate::speed::network::{LinkRecord, ProbeConfig};

use crate::runtime::tags::{PROBE_GO as TAG_GO, PROBE_PING as TAG_PING};

fn check<C: Communicator>(comm: &C, root: i32, cfg: &ProbeConfig) -> Result<()> {
    if !(0..comm.size()).contains(&root) {
        return Err(Error::invalid_input(format!(
            "root {root} is not a rank of a communicator of size {}",
            comm.size()
        )));
    }
    cfg.validate()
}

/// Measures this rank's link to `root`. Returns `Some(record)` on every rank
/// but the root, `None` on the root. Collective over `comm`.
pub fn link_to_root<C: Communicator>(
    comm: &C,
    root: i32,
    cfg: &ProbeConfig,
) -> Result<Option<LinkRecord>> {
    // Ping-pongs travel on nuce's own duplicate: the tags never meet the application's.
    let _w = crate::runtime::clock::waiting();
    let comm = &comm.duplicate();
    // The checked entry first (bounded by the timeout): a wrong root or
    // configuration on a rank is its refusal, and every rank must probe
    // with the same configuration (another message size on one rank would
    // receive into a buffer of the wrong length).
    crate::runtime::watchdog::Checkpoints::entered(
        comm,
        &format!("netprobe::link_to_root(root {root}, {cfg:?})"),
        check(comm, root, cfg).err(),
    )?;
    let _span = tracing::debug_span!("netprobe", rank = comm.rank(), root).entered();
    let rounds = cfg.warmup + cfg.repeats;
    let sizes = [cfg.small_bytes, cfg.large_bytes];
    let mut buf: Vec<u8> = (0..cfg.large_bytes).map(|i| (i % 251) as u8).collect();
    let local = if comm.rank() == root {
        for r in (0..comm.size()).filter(|&r| r != root) {
            let peer = comm.process_at_rank(r);
            peer.send_with_tag(&[1u8][..], TAG_GO);
            for n in sizes {
                for _ in 0..rounds {
                    peer.receive_into_with_tag(&mut buf[..n], TAG_PING);
                    peer.send_with_tag(&buf[..n], TAG_PING);
                }
            }
        }
        Ok(None)
    } else {
        let peer = comm.process_at_rank(root);
        let mut go = [0u8; 1];
        peer.receive_into_with_tag(&mut go[..], TAG_GO);
        let mut one_way: [Vec<f64>; 2] = Default::default();
        for (times, n) in one_way.iter_mut().zip(sizes) {
            for i in 0..rounds {
                let t0 = Instant::now();
                peer.send_with_tag(&buf[..n], TAG_PING);
                peer.receive_into_with_tag(&mut buf[..n], TAG_PING);
                let half = t0.elapsed().as_secs_f64() / 2.0;
                if i >= cfg.warmup {
                    times.push(half);
                }
            }
        }
        LinkRecord::from_one_way_times(comm.rank(), root, cfg, &one_way[0], &one_way[1]).map(Some)
    };
    agree(comm, root, local)
}

/// Measures every rank's link to `root` and gathers the records there:
/// `Some(records of ranks ≠ root, in rank order)` on the root, `None`
/// elsewhere. Collective over `comm`.
pub fn probe_links<C: Communicator>(
    comm: &C,
    root: i32,
    cfg: &ProbeConfig,
) -> Result<Option<Vec<LinkRecord>>> {
    let mine = link_to_root(comm, root, cfg)?;
    let all = gather_values(comm, root, &mine)?;
    Ok(all.map(|v| v.into_iter().flatten().collect()))
}
