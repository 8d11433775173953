//! [`partition`] against brute force on small inputs, and the pieces of a
//! spread sequence against the whole.

use proptest::prelude::*;

use super::*;

/// Every way to cut `n` items into `p` contiguous parts (counts, empty
/// parts allowed).
fn compositions(n: usize, p: usize) -> Vec<Vec<usize>> {
    if p == 1 {
        return vec![vec![n]];
    }
    (0..=n)
        .flat_map(|first| {
            compositions(n - first, p - 1)
                .into_iter()
                .map(move |mut rest| {
                    rest.insert(0, first);
                    rest
                })
        })
        .collect()
}

/// The slowest part's time `max_k load_k / s_k`.
fn makespan(loads: &[f64], speeds: &[f64]) -> f64 {
    loads
        .iter()
        .zip(speeds)
        .map(|(l, s)| l / s)
        .fold(0.0, f64::max)
}

/// The optimal makespan over every contiguous cut (brute force).
fn optimum(weights: &[f64], speeds: &[f64]) -> f64 {
    compositions(weights.len(), speeds.len())
        .iter()
        .map(|c| makespan(&part_loads(weights, c), speeds))
        .fold(f64::INFINITY, f64::min)
}

fn small_case() -> impl Strategy<Value = (Vec<f64>, Vec<f64>)> {
    (
        prop::collection::vec(
            prop_oneof![Just(0.0), 0.0f64..10.0, (1u8..5).prop_map(f64::from)],
            0..9,
        ),
        prop::collection::vec(0.1f64..4.0, 1..4),
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    /// Exact counts, loads that match them, each load within the heaviest
    /// item of its target, and the slowest part within `w_max / min s` of
    /// the brute-force optimum (never below it).
    #[test]
    fn against_brute_force((weights, speeds) in small_case()) {
        let got = partition(&weights, &speeds).unwrap();
        let n = weights.len();
        prop_assert_eq!(got.counts.len(), speeds.len());
        prop_assert_eq!(got.counts.iter().sum::<usize>(), n);
        let total: f64 = weights.iter().sum();
        let w: Vec<f64> = if total > 0.0 { weights.clone() } else { vec![1.0; n] };
        prop_assert_eq!(&got.loads, &part_loads(&w, &got.counts));
        let wmax = w.iter().copied().fold(0.0, f64::max);
        let sum_w: f64 = w.iter().sum();
        let sum_s: f64 = speeds.iter().sum();
        let eps = 1e-9 * (1.0 + sum_w);
        for (l, s) in got.loads.iter().zip(&speeds) {
            let target = sum_w * s / sum_s;
            prop_assert!((l - target).abs() <= wmax + eps, "load {} target {} wmax {}", l, target, wmax);
        }
        let best = optimum(&w, &speeds);
        let mine = makespan(&got.loads, &speeds);
        let smin = speeds.iter().copied().fold(f64::INFINITY, f64::min);
        prop_assert!(mine >= best - eps);
        prop_assert!(mine <= best + wmax / smin + eps, "{} vs optimum {}", mine, best);
        prop_assert!((got.imbalance - imbalance(&got.loads, &speeds)).abs() <= 1e-12);
    }

    /// A sequence spread over pieces (ranks), each counted from its own
    /// prefix, gives the whole sequence's counts (integer weights: exact sums).
    #[test]
    fn pieces_add_up_to_the_whole(
        weights in prop::collection::vec((0u8..6).prop_map(f64::from), 1..40),
        speeds in prop::collection::vec(0.1f64..4.0, 1..5),
        cuts in prop::collection::vec(0usize..40, 0..4),
    ) {
        prop_assume!(weights.iter().sum::<f64>() > 0.0);
        let whole = partition(&weights, &speeds).unwrap();
        let mut at: Vec<usize> = cuts.into_iter().map(|c| c % (weights.len() + 1)).collect();
        at.push(0);
        at.push(weights.len());
        at.sort_unstable();
        let bounds = target_bounds(weights.iter().sum(), &speeds);
        let mut sum = vec![0; speeds.len()];
        for pair in at.windows(2) {
            let before: f64 = weights[..pair[0]].iter().sum();
            let c = count_parts(before, &weights[pair[0]..pair[1]], &bounds);
            sum.iter_mut().zip(c).for_each(|(s, c)| *s += c);
        }
        prop_assert_eq!(sum, whole.counts);
    }
}

#[test]
fn equal_weights_follow_the_speeds() {
    // 3 : 1 speeds, 400 items of weight 2: 300 and 100, a perfect fit.
    let p = partition(&[2.0; 400], &[3.0, 1.0]).unwrap();
    assert_eq!(p.counts, vec![300, 100]);
    assert_eq!(p.imbalance, 0.0);
    // A heavy tail (weight 500, 250 each): the light items and 37 heavy ones.
    let mut w = vec![1.0; 100];
    w.extend([4.0; 100]);
    let p = partition(&w, &[1.0, 1.0]).unwrap();
    assert_eq!(p.counts, vec![137, 63]);
    assert_eq!(p.loads, vec![248.0, 252.0]);
}

#[test]
fn zero_weights_cut_by_number_and_no_items_is_empty() {
    let p = partition(&[0.0; 9], &[1.0, 2.0]).unwrap();
    assert_eq!(p.counts, vec![3, 6]);
    let p = partition(&[], &[1.0, 2.0, 3.0]).unwrap();
    assert_eq!(p.counts, vec![0, 0, 0]);
    assert_eq!(p.imbalance, 0.0);
    // More parts than items: some parts are empty, none is skipped twice.
    let p = partition(&[1.0, 1.0], &[1.0; 5]).unwrap();
    assert_eq!(p.counts.iter().sum::<usize>(), 2);
}

#[test]
fn bad_weights_and_speeds_are_errors() {
    for bad in [-1.0, f64::NAN, f64::INFINITY] {
        let e = partition(&[1.0, bad], &[1.0]).unwrap_err();
        assert!(e.to_string().contains("weight 1"), "{e}");
    }
    assert!(partition(&[f64::MAX, f64::MAX], &[1.0]).is_err());
    assert!(partition(&[1.0], &[]).is_err());
    assert!(partition(&[1.0], &[1.0, 0.0]).is_err());
}
