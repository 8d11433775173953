//! [`SpeedBook`] on plain numbers: the decisions of a balance point
//! without MPI.

use super::*;
use crate::plan::policy::PERSISTENT_BALANCE_POINTS;

fn est(mean: f64, noise: f64) -> SpeedEstimate {
    SpeedEstimate { mean, noise }
}

/// A balance point of `iterations` 10 after `wall_s`, where every rank
/// timed its phase at `speeds` (with `noise`) on its `loads` (cells).
fn point(speeds: &[f64], noise: f64, loads: &[f64], wall_s: Option<f64>) -> BalancePoint {
    BalancePoint {
        reports: speeds
            .iter()
            .zip(loads)
            .map(|(&s, &load)| PhaseReport {
                report: RankReport::Phase(est(s, noise)),
                function: None,
                load,
            })
            .collect(),
        wall_s,
        iterations: 10,
        cells_are_work: true,
        functional: false,
    }
}

/// A 1D layout proposed for a model: the whole work of `current` in
/// proportion to the model's speeds, decided by the default policy
/// over 100 iterations (8 bytes per cell moved).
fn proposal(current: &[f64]) -> Proposal<'static, Vec<f64>> {
    proposal_over(current, 100, None)
}

/// [`proposal`] over a horizon of `iterations`, at `bandwidth` (bytes/s;
/// the policy's default when `None`).
fn proposal_over(
    current: &[f64],
    iterations: usize,
    bandwidth: Option<f64>,
) -> Proposal<'static, Vec<f64>> {
    let current = current.to_vec();
    Box::new(move |m: &PlanningModel| {
        let total: f64 = current.iter().sum();
        let sum: f64 = m.speeds.iter().sum();
        let candidate: Vec<f64> = m.speeds.iter().map(|s| total * s / sum).collect();
        let volume: Vec<(f64, usize)> = current
            .iter()
            .zip(&candidate)
            .map(|(a, b)| ((a - b).abs() * 8.0, 1))
            .collect();
        let d = m.decide(
            &RemapPolicy::default(),
            &current,
            &candidate,
            &volume,
            iterations,
            bandwidth,
        )?;
        Ok((d.decision, candidate))
    })
}

/// `decide` and `learn`, as the root and then every rank do.
fn balance(book: &mut SpeedBook, p: &BalancePoint, current: &[f64]) -> BalanceOutcome<Vec<f64>> {
    let out = book.decide(p, proposal(current)).unwrap();
    book.learn(&out.decision, out.estimates.clone());
    out
}

#[test]
fn a_remap_is_decided_when_the_shares_differ_beyond_the_hysteresis() {
    // The true speeds of tests/mpi_decisions.rs, 8.5 : 3.6, known
    // exactly, on equal loads: remap to 8.5 : 3.6 shares.
    let even = [6050.0, 6050.0];
    let mut book = SpeedBook::default();
    let out = balance(&mut book, &point(&[8.5, 3.6], 0.0, &even, None), &even);
    assert!(out.decision.remap, "{out:?}");
    assert_eq!(out.decision.rule, DecisionRule::Exact);
    assert_eq!(out.model, SpeedModel::Constant);
    let plan = out.plan.expect("a remap broadcasts its plan");
    assert!((plan[0] - 8500.0).abs() < 1e-6 && (plan[1] - 3600.0).abs() < 1e-6);
    assert_eq!(book.speeds(), Some(&[8.5, 3.6][..]));
    assert_eq!(book.estimates(), Some(&[est(8.5, 0.0), est(3.6, 0.0)][..]));
    // 3 % apart: within the 5 % hysteresis, no remap, no plan.
    let out = balance(&mut book, &point(&[1.03, 1.0], 0.0, &even, None), &even);
    assert!(!out.decision.remap, "{out:?}");
    assert!(out.plan.is_none());
    // The same 3 % with 5 % noise: snapped to one speed.
    let out = balance(&mut book, &point(&[1.03, 1.0], 0.05, &even, None), &even);
    assert_eq!(out.model, SpeedModel::NoisySnapped);
    assert_eq!(out.decision.speeds[0], out.decision.speeds[1]);
    assert!(!out.decision.remap);
}

#[test]
fn a_persistent_imbalance_remaps_at_the_third_balance_point() {
    // A plan 15 % off the speeds 8.5 : 3.6 (rank 1 has 15 % too much)
    // measured with 6 % noise: the cost model says remap within half
    // the noise, the worst case within the whole noise does not; the
    // streak (the same on every rank: `learn`) makes it remap at the
    // third consecutive balance point.
    let off = [7960.0, 4140.0];
    let p = point(&[8.5, 3.6], 0.06, &off, None);
    let mut book = SpeedBook::default();
    for k in 1..PERSISTENT_BALANCE_POINTS {
        let out = balance(&mut book, &p, &off);
        assert!(!out.decision.remap, "balance point {k}: {out:?}");
        assert!(out.decision.nominal);
        assert_eq!(out.decision.rule, DecisionRule::WithinNoise);
        assert_eq!(book.remap_streak, k);
    }
    let out = balance(&mut book, &p, &off);
    assert!(out.decision.remap, "{out:?}");
    assert_eq!(out.decision.rule, DecisionRule::Persistent);
    assert!(out.plan.is_some());
    assert_eq!(book.remap_streak, 0);
}

#[test]
fn an_imbalance_that_cost_its_move_remaps() {
    // Speeds 3 : 1 known exactly on equal loads, a horizon of one
    // iteration: the candidate gains 250 s per iteration (500 → 250),
    // the move of 250 cells (2000 bytes) takes 600 s at 3.33 bytes/s.
    // One horizon never pays for it; the rent of three balance points
    // (750 s) does (the streak is the same on every rank: `learn`).
    let even = [500.0, 500.0];
    let p = point(&[3.0, 1.0], 0.0, &even, None);
    let mut book = SpeedBook::default();
    let decide = |book: &mut SpeedBook| {
        let out = book
            .decide(&p, proposal_over(&even, 1, Some(2000.0 / 600.0)))
            .unwrap();
        book.learn(&out.decision, out.estimates.clone());
        out
    };
    for k in 1..PERSISTENT_BALANCE_POINTS {
        let out = decide(&mut book);
        assert!(!out.decision.remap, "balance point {k}: {out:?}");
        assert!(out.decision.net_gain < 0.0);
        assert_eq!(out.decision.forgone, 250.0 * k as f64);
    }
    let out = decide(&mut book);
    assert!(out.decision.remap, "{out:?}");
    assert_eq!(out.decision.rule, DecisionRule::Amortized);
    assert_eq!(out.plan, Some(vec![750.0, 250.0]));
    assert_eq!(book.rent, Rent::default());
}

#[test]
fn a_remap_that_did_not_pay_off_is_undone_then_vetoed() {
    // The payoff scenario of tests/mpi_decisions.rs: the speeds say
    // 3 : 1 throughout, but the phases after the remap are slower
    // (1.5 s per phase instead of 1 s).
    let speeds = [3.0, 1.0];
    let even = [500.0, 500.0];
    let mut book = SpeedBook::default();
    let out = balance(&mut book, &point(&speeds, 0.0, &even, Some(1.0)), &even);
    assert!(out.decision.remap, "{out:?}");
    let remapped = out.plan.unwrap();
    assert_eq!(remapped, vec![750.0, 250.0]);
    // One slower phase may be noise: kept (nothing left to remap).
    let slow = point(&speeds, 0.0, &remapped, Some(1.5));
    let out = balance(&mut book, &slow, &remapped);
    assert!(!out.decision.remap, "{out:?}");
    // The second is not: back to the loads before the remap, whatever
    // the speeds say, planned for speeds in proportion to them.
    let out = balance(&mut book, &slow, &remapped);
    assert!(out.decision.remap, "{out:?}");
    assert_eq!(out.decision.rule, DecisionRule::NoPayoff);
    assert_eq!(out.decision.speeds, vec![2.0, 2.0]);
    assert_eq!(out.plan, Some(even.to_vec()));
    assert_eq!(out.estimates, vec![est(3.0, 0.0), est(1.0, 0.0)]);
    assert_eq!(book.speeds(), Some(&[2.0, 2.0][..]));
    // The same remap is vetoed for the veto's balance points, then
    // made again.
    let back = point(&speeds, 0.0, &even, Some(1.0));
    for k in 0..crate::plan::payoff::VETO_BALANCE_POINTS {
        let out = balance(&mut book, &back, &even);
        assert!(!out.decision.remap, "balance point {k}: {out:?}");
        assert_eq!(out.decision.rule, DecisionRule::Vetoed);
        assert!(out.plan.is_none());
    }
    let out = balance(&mut book, &back, &even);
    assert!(out.decision.remap, "{out:?}");
    assert_eq!(out.plan, Some(remapped));
}

#[test]
fn a_phase_the_application_recorded_checks_no_remap() {
    // The same slower phases, recorded by the application (no wall
    // time): the remap is never undone.
    let speeds = [3.0, 1.0];
    let even = [500.0, 500.0];
    let mut book = SpeedBook::default();
    balance(&mut book, &point(&speeds, 0.0, &even, Some(1.0)), &even);
    let remapped = [750.0, 250.0];
    for _ in 0..3 {
        let out = balance(&mut book, &point(&speeds, 0.0, &remapped, None), &remapped);
        assert!(!out.decision.remap, "{out:?}");
        assert_ne!(out.decision.rule, DecisionRule::NoPayoff);
    }
}

#[test]
fn memory_limits_cap_the_shares_of_cells_and_refuse_other_work() {
    let even = [6050.0, 6050.0];
    let mut book = SpeedBook::default();
    book.set_memory_limits(Some(vec![7000, usize::MAX]));
    // Cells: 8.5 : 3.6 would give rank 0 8500 cells, its limit 7000.
    let out = balance(&mut book, &point(&[8.5, 3.6], 0.0, &even, None), &even);
    let plan = out.plan.expect("a remap");
    assert!(plan[0] <= 7000.0 + 1e-9 && plan[0] > 6050.0, "{plan:?}");
    // A graph's or a cost field's work: the same error as ever, and
    // nothing learnt.
    let mut p = point(&[8.5, 3.6], 0.0, &even, None);
    p.cells_are_work = false;
    let e = book.decide(&p, proposal(&even)).unwrap_err();
    assert_eq!(e, Error::invalid_input(LIMITS_COUNT_CELLS));
    assert!(e.to_string().contains(
        "maybe_remap: memory limits (Balancer::set_memory_limit) count cells; this data's \
         work is not its cells (a graph, or an array with a cost field)"
    ));
    assert!(book.model(&p).is_err());
    book.set_memory_limits(None);
    assert!(book.model(&p).is_ok());
}

#[test]
fn departing_ranks_leave_the_book_and_a_data_less_point_merges() {
    let mut book = SpeedBook::default();
    assert_eq!(book.merge_phase(&[RankReport::Unknown; 3]).unwrap(), None);
    book.measured(
        vec![1.0, 2.0, 3.0],
        vec![est(1.0, 0.0), est(2.0, 0.0), est(3.0, 0.0)],
        None,
    );
    book.set_memory_limits(Some(vec![5; 3]));
    let kept = book.restricted(&[0, 2]);
    assert_eq!(kept.speeds(), Some(&[1.0, 3.0][..]));
    assert_eq!(kept.memory_limits(), None);
    // A rank without a phase keeps its kernel speed, converted by the
    // others' median ratio (kernel units): 2 × 2.
    let phase = [
        RankReport::Phase(est(2.0, 0.0)),
        RankReport::Unknown,
        RankReport::Phase(est(6.0, 0.0)),
    ];
    let (speeds, estimates) = book.merge_phase(&phase).unwrap().unwrap();
    assert_eq!(speeds, vec![2.0, 4.0, 6.0]);
    book.learn_phase(speeds, estimates);
    assert!(book.phase_units);
}

#[test]
fn the_root_weighs_a_layout_every_rank_planned() {
    // A graph built from per-rank pieces: the model is broadcast, every
    // rank plans its share, the root weighs the loads.
    let even = [6050.0, 6050.0];
    let book = SpeedBook::default();
    let model = book.model(&point(&[8.5, 3.6], 0.0, &even, None)).unwrap();
    let local = |candidate: [f64; 2]| LocalProposal {
        current: even.to_vec(),
        candidate: candidate.to_vec(),
        volume: vec![(19600.0, 1), (19600.0, 1)],
        plan: (),
    };
    let policy = (RemapPolicy::default(), None);
    let d = book
        .weigh(&model, &local([8500.0, 3600.0]), &policy, 100)
        .unwrap();
    assert!(d.remap, "{d:?}");
    assert_eq!(d.speeds, vec![8.5, 3.6]);
    let d = book.weigh(&model, &local(even), &policy, 100).unwrap();
    assert!(!d.remap, "{d:?}");
}
