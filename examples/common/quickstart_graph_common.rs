//! What the two graph quick starts share besides their README code: the
//! solver's iteration and the `PHASE` report the tests read.

use mpi::traits::*;
use nuce::{DistGraph, RemapReport};

/// One Jacobi relaxation `x_v ← (x_v + Σ_u x_u) / (1 + deg v)` of every
/// owned vertex, repeated `repeat` times (the extra work of a slow rank).
pub fn relax(g: &mut DistGraph<f64>, repeat: usize) {
    let mut next = vec![0.0; g.owned().len()];
    for _ in 0..repeat {
        for (i, x) in next.iter_mut().enumerate() {
            let (mut acc, mut deg) = (g.values()[i], 1.0);
            for (s, w) in g.neighbors(i) {
                acc += w * g.slot_value(s);
                deg += w;
            }
            *x = acc / deg;
        }
        std::hint::black_box(&mut next);
    }
    g.values_mut().copy_from_slice(&next);
}

/// Prints the root's `PHASE` line: the phase's wall time per iteration (the
/// slowest rank's, since `t`), the ideal for the measured speeds, the remap
/// decision, every rank's vertex count, the rule that decided and every
/// estimate's noise; restarts `t`.
pub fn report_phase(
    g: &DistGraph<f64>,
    t: &mut std::time::Instant,
    phase: usize,
    iters: usize,
    report: &RemapReport,
) {
    let _w = nuce::waiting();
    let wall = nuce::collective::max_f64(g.comm(), t.elapsed().as_secs_f64());
    *t = std::time::Instant::now();
    // Each rank's vertex count (the graph holds no global owner array).
    let mut loads = vec![0usize; g.comm().size() as usize];
    g.comm().all_gather_into(&g.owned().len(), &mut loads[..]);
    if g.comm().rank() == 0 {
        let ideal = g.global_len() as f64 / report.speeds.iter().sum::<f64>();
        println!(
            "PHASE {phase} s_per_iter {:.6} ideal_s_per_iter {ideal:.6} remap {} imbalance_before {:.4} imbalance_after {:.4} areas {:?} speeds {:?} rule {:?} noise {:?}",
            wall / iters as f64,
            report.remap,
            report.imbalance_current,
            if report.remap { report.imbalance_candidate } else { report.imbalance_current },
            loads,
            report.speeds.iter().map(|s| s.round()).collect::<Vec<_>>(),
            report.decision.rule,
            report.estimates.iter().map(|e| (e.noise * 1e3).round() / 1e3).collect::<Vec<_>>()
        );
    }
}

/// Prints the root's `RESULT` line (the values' count and sum).
pub fn report_result(g: &DistGraph<f64>) -> nuce::Result<()> {
    if let Some(x) = g.gather(0)? {
        println!(
            "RESULT vertices {} sum {:.6}",
            x.len(),
            x.iter().sum::<f64>()
        );
    }
    Ok(())
}
