//! The Rust side of the package's benchmark (`examples/python/bench_overhead.py`,
//! BENCHMARKS.md "Python"): the same ghost exchanges and balance points as
//! the Python loop makes, made here through nuce's Rust API on buffers
//! allocated in Rust, on the same balancer and grid — so that one run
//! compares the package with the Rust API, round against round. Private
//! (`nuce._nuce._rust_rounds`), not part of the package's API.

use std::time::{Duration, Instant};

use nuce::Field;
use pyo3::prelude::*;

use crate::balancer::PyBalancer;
use crate::errors::ok;
use crate::grid::PyGrid;

/// Seconds per call of `calls` calls through the Rust API: `kind`
/// `"exchange"` (`Grid::exchange` on one `f64` field of the grid's padded
/// block) or `"balance"` (`Balancer::record_phase` of `work` units in
/// `seconds`, then `Balancer::maybe_remap`, as the Python loop does).
#[pyfunction]
#[pyo3(signature = (bal, grid, kind, calls, work = 1.0, seconds = 1.0))]
pub(crate) fn _rust_rounds(
    py: Python<'_>,
    bal: &Bound<'_, PyBalancer>,
    grid: &Bound<'_, PyGrid>,
    kind: &str,
    calls: usize,
    work: f64,
    seconds: f64,
) -> PyResult<f64> {
    let mut b = bal.borrow_mut();
    let mut g = grid.borrow_mut();
    let pad = g.pad;
    let inner = &mut *g.grid;
    let bal = b.inner_mut();
    let exchange = kind == "exchange";
    let mut u = vec![0.0f64; ok(inner.padded_len(pad))?];
    let t = crate::detached(py, || -> nuce::Result<Duration> {
        if exchange {
            // Untimed: the fresh buffer's pages are touched once, as the
            // Python side's array was by the rounds before.
            inner.exchange(&mut [Field::new(&mut u, pad)])?;
        }
        let t0 = Instant::now();
        for _ in 0..calls {
            if exchange {
                inner.exchange(&mut [Field::new(&mut u, pad)])?;
            } else {
                bal.record_phase(work, Duration::from_secs_f64(seconds))?;
                let r = bal.maybe_remap(inner, 1)?;
                if r.decision.remap {
                    return Err(nuce::Error::invalid_input(
                        "the benchmark's balance point remapped: equal speeds expected",
                    ));
                }
            }
        }
        Ok(t0.elapsed())
    });
    Ok(ok(t)?.as_secs_f64() / calls.max(1) as f64)
}
