//! Why the last balance point did what it did (`nuce_last_decision`,
//! `nuce_rule_name`): the root's decision as every rank received it — the
//! rule that decided, the measured imbalance, the predicted times — so
//! that a C or Fortran application can explain a remap, or the lack of
//! one, as the Rust report does (`docs/c-api.md`, "Why nuce did or did not
//! remap").

use std::ffi::{c_char, c_int};

use nuce::plan::policy::{DecisionRule, RemapDecision};
use nuce::Error;

use crate::{balancer, deref_mut, guard, nuce_balancer};

/// The cost model at exact speeds decided (`DecisionRule::Exact`).
pub const NUCE_RULE_EXACT: c_int = 0;
/// Noisy speeds: the candidate had to pay off for every speed within the noise.
pub const NUCE_RULE_WITHIN_NOISE: c_int = 1;
/// A persistent measured imbalance over consecutive balance points remapped.
pub const NUCE_RULE_PERSISTENT: c_int = 2;
/// The time the imbalance cost so far reached the move's predicted time (rent or buy).
pub const NUCE_RULE_AMORTIZED: c_int = 3;
/// The last remap made the iterations slower: undone.
pub const NUCE_RULE_NO_PAYOFF: c_int = 4;
/// A remap to shares like those of one that did not pay off: not made for a while.
pub const NUCE_RULE_VETOED: c_int = 5;

/// The decision of the last balance point (`nuce_last_decision`), the same
/// on every rank. Times are seconds, predicted by nuce's cost model for
/// the speeds it measured.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct nuce_decision {
    /// 1 when the layout changed at that balance point.
    pub remapped: c_int,
    /// The rule that decided (`NUCE_RULE_*`; `nuce_rule_name` names it).
    pub rule: c_int,
    /// Load imbalance of the layout before the balance point for the
    /// measured speeds: the slowest rank's time over the balanced time,
    /// minus 1 (0 = balanced, 0.5 = the slowest rank takes 1.5× the ideal).
    pub imbalance_current: f64,
    /// The same for the candidate layout.
    pub imbalance_candidate: f64,
    /// Predicted time per iteration on the layout before the balance point.
    pub t_current: f64,
    /// Predicted time per iteration on the candidate layout.
    pub t_candidate: f64,
    /// Predicted time of the move to the candidate.
    pub t_migration: f64,
    /// Predicted time saved over the horizon minus the move (> 0: worth it).
    pub net_gain: f64,
    /// Time the imbalance has cost so far at consecutive balance points,
    /// by the model (what rent or buy compares with `t_migration`).
    pub forgone: f64,
    /// Iterations of the horizon the decision looked at.
    pub iterations: i64,
}

impl From<&RemapDecision> for nuce_decision {
    fn from(d: &RemapDecision) -> Self {
        nuce_decision {
            remapped: c_int::from(d.remap),
            rule: rule_code(d.rule),
            imbalance_current: d.imbalance_current,
            imbalance_candidate: d.imbalance_candidate,
            t_current: d.t_current,
            t_candidate: d.t_candidate,
            t_migration: d.t_migration,
            net_gain: d.net_gain,
            forgone: d.forgone,
            iterations: i64::try_from(d.iterations).unwrap_or(i64::MAX),
        }
    }
}

/// The `NUCE_RULE_*` value of a rule.
fn rule_code(rule: DecisionRule) -> c_int {
    match rule {
        DecisionRule::Exact => NUCE_RULE_EXACT,
        DecisionRule::WithinNoise => NUCE_RULE_WITHIN_NOISE,
        DecisionRule::Persistent => NUCE_RULE_PERSISTENT,
        DecisionRule::Amortized => NUCE_RULE_AMORTIZED,
        DecisionRule::NoPayoff => NUCE_RULE_NO_PAYOFF,
        DecisionRule::Vetoed => NUCE_RULE_VETOED,
    }
}

/// Keeps `d` as the balancer's last decision (after every C balance point).
pub(crate) fn remember(h: &mut nuce_balancer, d: &RemapDecision) {
    h.last = Some(nuce_decision::from(d));
}

/// Writes the decision of the balancer's last balance point
/// (`nuce_maybe_remap`, `nuce_grid_maybe_remap`, `nuce_graph_maybe_remap`
/// and their `_ahead` forms) into `*out` (local; the same on every rank).
/// `NUCE_ERR_INVALID_INPUT` before any balance point has decided.
#[no_mangle]
pub extern "C" fn nuce_last_decision(b: *mut nuce_balancer, out: *mut nuce_decision) -> c_int {
    guard(|| {
        // SAFETY: `b` is NULL or a live handle.
        let h = unsafe { balancer(b) }?;
        // SAFETY: `out` is NULL or writable (contract).
        let out = unsafe { deref_mut(out, "out") }?;
        *out = h.last.ok_or_else(no_decision)?;
        Ok(())
    })
}

/// The error of a query before any balance point.
fn no_decision() -> Error {
    Error::invalid_input(
        "no balance point has decided yet on this balancer (nuce_maybe_remap, \
         nuce_grid_maybe_remap or nuce_graph_maybe_remap first)",
    )
}

/// The name of a `NUCE_RULE_*` value (`"Exact"`, `"WithinNoise"`,
/// `"Persistent"`, `"Amortized"`, `"NoPayoff"`, `"Vetoed"`; `"unknown"` for
/// any other), a static string the application must not free.
#[no_mangle]
pub extern "C" fn nuce_rule_name(rule: c_int) -> *const c_char {
    let name: &'static [u8] = match rule {
        NUCE_RULE_EXACT => b"Exact\0",
        NUCE_RULE_WITHIN_NOISE => b"WithinNoise\0",
        NUCE_RULE_PERSISTENT => b"Persistent\0",
        NUCE_RULE_AMORTIZED => b"Amortized\0",
        NUCE_RULE_NO_PAYOFF => b"NoPayoff\0",
        NUCE_RULE_VETOED => b"Vetoed\0",
        _ => b"unknown\0",
    };
    name.as_ptr().cast()
}

/// The rule names agree with the Rust enum's (`Debug`), so that logs of the
/// two APIs read alike.
#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rule_names_are_the_rust_names() {
        let all = [
            DecisionRule::Exact,
            DecisionRule::WithinNoise,
            DecisionRule::Persistent,
            DecisionRule::Amortized,
            DecisionRule::NoPayoff,
            DecisionRule::Vetoed,
        ];
        for r in all {
            let c = rule_code(r);
            // SAFETY: a static NUL-terminated string.
            let name = unsafe { std::ffi::CStr::from_ptr(nuce_rule_name(c)) };
            assert_eq!(name.to_str().unwrap(), format!("{r:?}"));
        }
        // SAFETY: as above.
        let unknown = unsafe { std::ffi::CStr::from_ptr(nuce_rule_name(99)) };
        assert_eq!(unknown.to_str().unwrap(), "unknown");
    }
}
