//! Did the last remap pay off? The balancer's decisions rest on measured
//! speeds; a remap that the speeds promise to pay off can still make the
//! application slower in wall-clock time — a rank whose core another job
//! shares waits for its turn on the core at every exchange, whatever its
//! share (BENCHMARKS.md, "Real load") — and the speeds measured after it
//! would promise the same remap again. [`Payoff`] compares the measured time
//! per iteration after a remap with the time before it: a remap after which
//! the time grew by more than [`NO_PAYOFF_MARGIN`] in [`CONFIRM`]
//! consecutive phases is undone (back to the work shares before it,
//! [`DecisionRule::NoPayoff`]), and remaps to shares
//! like the ones that failed are not made again for a while
//! ([`DecisionRule::Vetoed`]), longer after each failure. A load that
//! changes the shares beyond [`VETO_TOLERANCE`] is followed at once, and a
//! remap is not judged once the speeds or the work per rank no longer
//! follow the shares it planned for (the world changed, not the remap).
//!
//! [`DecisionRule::NoPayoff`]: crate::policy::DecisionRule::NoPayoff
//! [`DecisionRule::Vetoed`]: crate::policy::DecisionRule::Vetoed

use serde::{Deserialize, Serialize};

/// How much longer (relative) the measured time per iteration and work
/// unit may be after a remap than before it, before the remap counts as one
/// that did not pay off. A remap is made for a predicted gain; this is a
/// loss, beyond the noise of a phase's wall time. "Before" is the slower of
/// the last two phases on the plan before the remap, when there were two:
/// on a machine loaded by other jobs the wall time of one phase can be
/// half that of the next (measured: 0.011 and 0.029 s per iteration in
/// `tests/quickstart.rs` under two busy loops per core). Not the median of
/// three (tried): a remap usually follows a change in the last phase, and
/// the two phases before it, on the world before the change, then set a
/// bar the remap cannot meet (a good remap was undone that way in
/// `tests/quickstart.rs`). Nor times multiplied by the sum of the measured
/// speeds, to excuse a load on every rank (tried): the graph quick start
/// failed to balance in 2 of 6 runs with it on an idle machine, in none of
/// 8 without.
pub const NO_PAYOFF_MARGIN: f64 = 0.10;

/// Consecutive phases after a remap that must each be slower than the
/// phase before it by [`NO_PAYOFF_MARGIN`] for the remap to be undone: one
/// slow phase is as likely another job's noise (a remap is made for a
/// gain, often of tens of percent); a remap that does not pay off stays
/// slower. The first phase that is not slower accepts the remap.
pub const CONFIRM: u32 = 2;

/// Balance points during which remaps to shares like those of a remap that
/// did not pay off are not made, after its first failure (doubled after
/// each further failure of the same shares, up to [`VETO_MAX`]).
pub const VETO_BALANCE_POINTS: u32 = 4;

/// The longest veto, in balance points.
pub const VETO_MAX: u32 = 64;

/// Shares are alike when every rank's share differs by at most this
/// fraction of the larger of the two (a load that arrives or leaves moves
/// them further). Measured speeds under other jobs' load stray by up to
/// 20 % from one balance point to the next (`tests/mpi_decisions.rs`
/// under two busy loops per core).
pub const VETO_TOLERANCE: f64 = 0.25;

/// What a balancer remembers of its remaps (at the root): the last remap,
/// to check it at the next balance point, and the shares it vetoes.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Payoff {
    last: Option<Remapped>,
    veto: Option<Veto>,
    /// The time of the last checked phase, while the plan has not changed since.
    previous: Option<f64>,
    /// What a remap at this balance point is checked against: the slower
    /// of this phase and the previous one on the same plan.
    baseline: Option<f64>,
}

/// A remap awaiting its check.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Remapped {
    /// Measured seconds per iteration and work unit in the phase before it.
    before: f64,
    /// Every rank's work before it.
    loads_before: Vec<f64>,
    /// The shares it planned for.
    shares: Vec<f64>,
    /// Phases after it found slower so far.
    slower: u32,
}

/// Shares not to remap to, for `left` more balance points.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Veto {
    shares: Vec<f64>,
    left: u32,
    /// How many remaps to these shares failed.
    failures: u32,
}

/// `v` scaled to sum 1 (equal shares when it sums to nothing).
fn shares(v: &[f64]) -> Vec<f64> {
    let sum: f64 = v.iter().filter(|x| x.is_finite() && **x > 0.0).sum();
    if sum > 0.0 {
        v.iter()
            .map(|x| if x.is_finite() { x.max(0.0) / sum } else { 0.0 })
            .collect()
    } else {
        vec![1.0 / v.len().max(1) as f64; v.len()]
    }
}

/// Whether two share vectors are alike ([`VETO_TOLERANCE`]).
fn alike(a: &[f64], b: &[f64]) -> bool {
    a.len() == b.len()
        && a.iter().zip(b).all(|(x, y)| {
            let big = x.max(*y);
            big <= 0.0 || (x - y).abs() <= VETO_TOLERANCE * big
        })
}

impl Payoff {
    /// At a balance point whose phase took `now` seconds per iteration and
    /// work unit, with the measured `speeds` and every rank's work per
    /// iteration in the phase (`loads`): when the speeds and the work still
    /// follow the shares the last remap planned for (else the world
    /// changed — a load came or went, the application's cost per cell moved
    /// or its cells changed — and the remap is not judged by a time that
    /// changed for another reason; once unlike, never) and the last remap
    /// made it slower by more than [`NO_PAYOFF_MARGIN`], for the
    /// [`CONFIRM`]-th phase in a row, the work of every rank before that
    /// remap (plan for these speeds to go back), and its shares are vetoed
    /// from now on. A phase that is not slower accepts the remap (nothing
    /// more to check). `now` that is not a positive finite number checks
    /// nothing.
    ///
    /// The work matters where it can change without a remap: a band of
    /// costly cells that moved across the grid between the two phases that
    /// judge a remap made `heat3d_cost` undo a right remap on a machine
    /// loaded by a build (`tests/mpi_array3.rs`).
    pub fn check(&mut self, now: f64, speeds: &[f64], loads: &[f64]) -> Option<Vec<f64>> {
        let valid = |t: f64| t.is_finite() && t > 0.0;
        let prior = if valid(now) {
            self.previous.replace(now)
        } else {
            self.previous.take()
        };
        self.baseline = valid(now).then(|| prior.map_or(now, |p| p.max(now)));
        let mut last = self.last.take()?;
        if !alike(&last.shares, &shares(loads)) {
            // The work no longer follows the planned shares: not judged.
            return None;
        }
        if !valid(now)
            || !valid(last.before)
            || now <= last.before * (1.0 + NO_PAYOFF_MARGIN)
            || !alike(&last.shares, &shares(speeds))
        {
            return None;
        }
        last.slower += 1;
        if last.slower < CONFIRM {
            self.last = Some(last);
            return None;
        }
        let failures = match &self.veto {
            Some(v) if alike(&v.shares, &last.shares) => v.failures + 1,
            _ => 1,
        };
        let left = VETO_BALANCE_POINTS
            .saturating_mul(1 << (failures - 1).min(16))
            .min(VETO_MAX);
        self.veto = Some(Veto {
            shares: last.shares,
            left,
            failures,
        });
        // The plan changes back.
        self.previous = None;
        Some(last.loads_before)
    }

    /// Whether a remap planned for `speeds` is vetoed (shares like those of
    /// a remap that did not pay off, within the veto's balance points).
    /// Counts one balance point of the veto.
    pub fn vetoes(&mut self, speeds: &[f64]) -> bool {
        let Some(v) = &mut self.veto else {
            return false;
        };
        if v.left == 0 {
            return false;
        }
        v.left -= 1;
        alike(&v.shares, &shares(speeds))
    }

    /// Records a remap made at the balance point just checked
    /// ([`Payoff::check`]; its phase and the previous one on the same plan
    /// are the time to beat), from every rank's work `loads_before` to a
    /// plan for `speeds`. A remap made while the last one is still being
    /// checked (it was slower once) corrects it: the check goes on against
    /// the time and the work before the first.
    pub fn remapped(&mut self, loads_before: Vec<f64>, speeds: &[f64]) {
        let shares = shares(speeds);
        let before = self.baseline.take();
        self.previous = None;
        match (&mut self.last, before) {
            (Some(last), _) => last.shares = shares,
            (None, Some(before)) => {
                self.last = Some(Remapped {
                    before,
                    loads_before,
                    shares,
                    slower: 0,
                })
            }
            (None, None) => {}
        }
    }

    /// Forgets the last remap (its check would compare unlike phases: the
    /// ranks or the data changed).
    pub fn forget(&mut self) {
        self.last = None;
        self.previous = None;
        self.baseline = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The measured speeds of the tests: 2 : 1 throughout.
    const S21: [f64; 2] = [2.0, 1.0];

    /// A remap at a balance point whose phase took `before`.
    fn remap(p: &mut Payoff, before: f64, loads: Vec<f64>, speeds: &[f64]) {
        assert_eq!(p.check(before, &S21, &S21), None);
        p.remapped(loads, speeds);
    }

    #[test]
    fn a_remap_that_made_the_iteration_slower_is_undone_and_vetoed() {
        let mut p = Payoff::default();
        assert_eq!(p.check(1.0, &S21, &S21), None, "nothing to check yet");
        // 1:1 loads, remapped for speeds 2:1, then 20 % slower twice.
        p.remapped(vec![50.0, 50.0], &[2.0, 1.0]);
        assert_eq!(
            p.check(1.2, &S21, &S21),
            None,
            "one slow phase may be noise"
        );
        assert_eq!(p.check(1.2, &S21, &S21), Some(vec![50.0, 50.0]));
        // Checked until undone; the next phase runs on the plan before.
        assert_eq!(p.check(1.0, &S21, &S21), None);
        // The same shares (within the tolerance) are vetoed for a while...
        let mut vetoed = 0;
        while p.vetoes(&[1.95, 1.0]) {
            vetoed += 1;
        }
        assert_eq!(vetoed, VETO_BALANCE_POINTS);
        // ...then tried again; a second failure vetoes them twice as long.
        remap(&mut p, 1.0, vec![50.0, 50.0], &[2.0, 1.0]);
        assert!(p.check(1.3, &S21, &S21).is_none());
        assert!(p.check(1.3, &S21, &S21).is_some());
        let mut vetoed = 0;
        while p.vetoes(&[2.0, 1.0]) {
            vetoed += 1;
        }
        assert_eq!(vetoed, 2 * VETO_BALANCE_POINTS);
    }

    #[test]
    fn the_time_to_beat_is_the_slower_of_the_last_two_phases_on_the_plan() {
        let mut p = Payoff::default();
        assert_eq!(p.check(1.0, &S21, &S21), None);
        remap(&mut p, 2.0, vec![50.0, 50.0], &[2.0, 1.0]);
        // 1.5: slower than 1.0, not than 2.0: accepted.
        assert_eq!(p.check(1.5, &S21, &S21), None);
        // Another remap at once: the phase before it on the same plan is
        // this one alone (the 2.0 ran on the plan before).
        p.remapped(vec![66.0, 34.0], &[2.0, 1.0]);
        assert_eq!(p.check(1.7, &S21, &S21), None);
        assert_eq!(p.check(1.7, &S21, &S21), Some(vec![66.0, 34.0]));
    }

    #[test]
    fn a_remap_that_paid_off_or_stayed_within_the_margin_stays() {
        let mut p = Payoff::default();
        remap(&mut p, 1.0, vec![50.0, 50.0], &[2.0, 1.0]);
        assert_eq!(p.check(0.7, &S21, &S21), None);
        assert_eq!(
            p.check(2.0, &S21, &S21),
            None,
            "accepted at the first phase not slower"
        );
        p.forget();
        remap(&mut p, 1.0, vec![50.0, 50.0], &[2.0, 1.0]);
        assert_eq!(p.check(1.0 + NO_PAYOFF_MARGIN * 0.9, &S21, &S21), None);
        assert_eq!(p.check(1.0 + NO_PAYOFF_MARGIN * 0.9, &S21, &S21), None);
        // One slow phase, then one that is not: accepted.
        p.forget();
        remap(&mut p, 1.0, vec![50.0, 50.0], &[2.0, 1.0]);
        assert_eq!(p.check(1.5, &S21, &S21), None);
        assert_eq!(p.check(0.9, &S21, &S21), None);
        assert_eq!(p.check(1.5, &S21, &S21), None);
        // Nothing vetoed.
        assert!(!p.vetoes(&[2.0, 1.0]));
        // Bad measurements check nothing.
        for bad in [f64::NAN, 0.0, -1.0, f64::INFINITY] {
            p.forget();
            remap(&mut p, 1.0, vec![1.0, 1.0], &[2.0, 1.0]);
            assert_eq!(p.check(bad, &S21, &S21), None, "{bad}");
            assert_eq!(p.check(5.0, &S21, &S21), None, "{bad}: checked no more");
        }
    }

    #[test]
    fn a_correction_of_a_slower_remap_is_checked_against_the_time_before_both() {
        let mut p = Payoff::default();
        remap(&mut p, 1.0, vec![50.0, 50.0], &[2.0, 1.0]);
        assert_eq!(p.check(1.5, &S21, &S21), None);
        // A correction to 2.2 : 1 at the slow phase.
        p.remapped(vec![66.0, 34.0], &[2.2, 1.0]);
        assert_eq!(p.check(1.5, &S21, &S21), Some(vec![50.0, 50.0]));
        assert!(p.vetoes(&[2.2, 1.0]));
    }

    #[test]
    fn a_remap_is_not_judged_once_the_speeds_changed() {
        let mut p = Payoff::default();
        remap(&mut p, 1.0, vec![50.0, 50.0], &[2.0, 1.0]);
        // A load arrives on rank 0: everything is slower, not the remap's fault.
        assert_eq!(p.check(1.5, &[1.0, 1.0], &S21), None);
        assert_eq!(p.check(1.5, &[1.0, 1.0], &S21), None);
        assert!(!p.vetoes(&[2.0, 1.0]));
    }

    #[test]
    fn a_remap_is_not_judged_once_the_work_moved() {
        let mut p = Payoff::default();
        remap(&mut p, 1.0, vec![50.0, 50.0], &[2.0, 1.0]);
        // The plan follows the shares: 66 : 34 of the work. Slower once.
        assert_eq!(p.check(1.5, &S21, &[66.0, 34.0]), None);
        // Then the costly cells move to rank 1: slower again, not the
        // remap's fault.
        assert_eq!(p.check(1.5, &S21, &[30.0, 70.0]), None);
        assert!(!p.vetoes(&[2.0, 1.0]));
        // The work as planned: the same two slow phases undo the remap.
        let mut p = Payoff::default();
        remap(&mut p, 1.0, vec![50.0, 50.0], &[2.0, 1.0]);
        for undo in [None, Some(vec![50.0, 50.0])] {
            assert_eq!(p.check(1.5, &S21, &[66.0, 34.0]), undo);
        }
    }

    #[test]
    fn a_remap_after_a_change_is_judged_against_the_changed_phase() {
        // Phases of `tests/quickstart.rs` (s per iteration, measured
        // speeds in M cells/s): two before rank 1 slows down (the first as
        // nuce times it, from the scatter on, as fast as the second), the
        // slow phase, the remap, two phases after it. The phases before the
        // change are no bar for the remap (a median of three would make
        // them one, and undo it).
        let mut p = Payoff::default();
        assert_eq!(p.check(0.000750, &[171.1, 171.1], &[1.0, 1.0]), None);
        assert_eq!(p.check(0.000747, &[183.4, 183.4], &[1.0, 1.0]), None);
        assert_eq!(p.check(0.004268, &[175.7, 63.2], &[1.0, 1.0]), None);
        p.remapped(vec![131072.0, 131072.0], &[175.7, 63.2]);
        assert_eq!(p.check(0.002757, &[171.1, 67.2], &[175.7, 63.2]), None);
        assert_eq!(p.check(0.002227, &[171.5, 66.0], &[175.7, 63.2]), None);
        assert!(!p.vetoes(&[175.7, 63.2]));
    }

    #[test]
    fn other_shares_are_followed_at_once() {
        let mut p = Payoff::default();
        remap(&mut p, 1.0, vec![50.0, 50.0], &[2.0, 1.0]);
        assert!(p.check(1.5, &S21, &S21).is_none());
        assert!(p.check(1.5, &S21, &S21).is_some());
        // A load that arrives elsewhere: rank 0 now the slow one.
        assert!(!p.vetoes(&[1.0, 3.0]));
        // Shares 30 % apart are not alike; 15 % apart are.
        assert!(!p.vetoes(&[1.1, 1.0]));
        assert!(p.vetoes(&[1.6, 1.0]));
        assert!(!alike(&[0.5, 0.5], &[0.5, 0.3, 0.2]));
    }
}
