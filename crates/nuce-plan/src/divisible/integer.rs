//! Whole units of work: rounding a divisible plan to integers.
//!
//! Beyond \[AJ88\], whose §4 notes that input can usually
//! only be split at record boundaries and that integer programming could
//! handle it; its §3.6.2 attributes part of the gap between predicted and
//! measured times to "the rounding errors as each slave multiplies an
//! integral number of rows". Here the LP fractions are rounded to whole
//! units (largest remainder) and the rounded schedule is re-evaluated
//! exactly with eqs. (5a)–(5b), then improved by moving single units
//! between pieces while the exact makespan decreases.

use serde::{Deserialize, Serialize};

use super::{evaluate, WorkerCosts};
use crate::array2d::apportion;
use crate::error::{Error, Result};

/// Integer pieces (units of work per piece, feeding order) and their exact
/// makespan.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct IntegerPlan {
    /// Units of each piece, summing to the total.
    pub units: Vec<u64>,
    /// Exact makespan of these pieces (eqs. 5a–5b; empty pieces are idle).
    pub makespan: f64,
}

fn sizes(units: &[u64], total: u64) -> Vec<f64> {
    units.iter().map(|&u| u as f64 / total as f64).collect()
}

/// Most makespan evaluations of `O(n)` steps each one [`round_pieces`]
/// spends on improving moves: `2^27 / n` (so `2^27` steps, about a
/// second); with many pieces fewer moves are tried, and the rounding is
/// returned as improved so far.
pub const MAX_ROUNDING_STEPS: u64 = 1 << 27;

/// Rounds `fractions` (feeding order, workers `workers`) to `total` whole
/// units and improves the rounding by single-unit moves (best move first,
/// `O(n²)` evaluations of `O(n)` each per move, at most `4·n + 16` moves
/// and at most [`MAX_ROUNDING_STEPS`] evaluation steps in all). The units
/// are checked to sum to `total` and the makespan to be finite.
pub fn round_pieces(workers: &[WorkerCosts], fractions: &[f64], total: u64) -> Result<IntegerPlan> {
    if workers.len() != fractions.len() || workers.is_empty() {
        return Err(Error::ShapeMismatch(format!(
            "{} workers for {} fractions",
            workers.len(),
            fractions.len()
        )));
    }
    if total == 0 {
        return Err(Error::Empty("no units of work".into()));
    }
    if fractions.iter().any(|f| !(f.is_finite() && *f >= 0.0))
        || fractions.iter().sum::<f64>() <= 0.0
    {
        return Err(Error::InvalidInput(
            "fractions must be finite, >= 0, not all 0".into(),
        ));
    }
    let n = workers.len();
    let mut units: Vec<u64> = apportion(total as usize, fractions)
        .into_iter()
        .map(|u| u as u64)
        .collect();
    let mut best = evaluate(workers, &sizes(&units, total));
    let per_move = (n as u64).pow(3).max(1);
    let moves = (4 * n as u64 + 16).min(MAX_ROUNDING_STEPS / per_move);
    for _ in 0..moves {
        let mut mv: Option<(usize, usize, f64)> = None;
        for from in 0..n {
            if units[from] == 0 {
                continue;
            }
            for to in (0..n).filter(|&j| j != from) {
                units[from] -= 1;
                units[to] += 1;
                let t = evaluate(workers, &sizes(&units, total));
                units[from] += 1;
                units[to] -= 1;
                if t < mv.map_or(best, |m| m.2) * (1.0 - 1e-12) {
                    mv = Some((from, to, t));
                }
            }
        }
        match mv {
            Some((from, to, t)) => {
                units[from] -= 1;
                units[to] += 1;
                best = t;
            }
            None => break,
        }
    }
    if units.iter().map(|&u| u as u128).sum::<u128>() != total as u128 {
        return Err(Error::InvalidPlan(format!(
            "rounded units do not sum to {total}"
        )));
    }
    if !best.is_finite() {
        return Err(Error::InvalidInput(
            "the makespan of the whole units overflows f64".into(),
        ));
    }
    Ok(IntegerPlan {
        units,
        makespan: best,
    })
}
