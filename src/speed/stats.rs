//! Robust summaries of repeated timings: median and spread.
//!
//! Every repeated measurement in nuce (kernel samples, ping-pong round trips)
//! is reported as the median of `k` samples together with its minimum and
//! maximum, so that one disturbed sample (a context switch, a page fault)
//! neither moves the estimate nor hides.

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// Median, minimum and maximum of a set of samples.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    /// The median (mean of the two middle samples for an even count).
    pub median: f64,
    /// The smallest sample.
    pub min: f64,
    /// The largest sample.
    pub max: f64,
}

impl Summary {
    /// Summarises `samples`. Errors on an empty slice or a non-finite sample.
    ///
    /// Complexity: O(k log k) for k samples (one sort of a copy).
    pub fn of(samples: &[f64]) -> Result<Summary> {
        if samples.is_empty() {
            return Err(Error::empty("no samples to summarise"));
        }
        if let Some((index, &value)) = samples.iter().enumerate().find(|(_, v)| !v.is_finite()) {
            return Err(Error::invalid_input(format!(
                "sample {index} is not finite: {value}"
            )));
        }
        let mut s = samples.to_vec();
        s.sort_by(f64::total_cmp);
        let n = s.len();
        let median = if n % 2 == 1 {
            s[n / 2]
        } else {
            0.5 * (s[n / 2 - 1] + s[n / 2])
        };
        Ok(Summary {
            median,
            min: s[0],
            max: s[n - 1],
        })
    }

    /// Relative spread `(max - min) / median` (0 when the median is 0).
    pub fn relative_spread(&self) -> f64 {
        if self.median == 0.0 {
            0.0
        } else {
            (self.max - self.min) / self.median.abs()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Oracle: the median as the value with at most n/2 samples strictly below
    /// and at most n/2 strictly above (odd n), computed by counting.
    fn median_by_counting(xs: &[f64]) -> f64 {
        let n = xs.len();
        *xs.iter()
            .find(|&&m| {
                let below = xs.iter().filter(|&&x| x < m).count();
                let above = xs.iter().filter(|&&x| x > m).count();
                below <= n / 2 && above <= n / 2
            })
            .expect("a median exists")
    }

    #[test]
    fn odd_count_median_min_max() {
        let xs = [5.0, 1.0, 4.0, 2.0, 3.0];
        let s = Summary::of(&xs).unwrap();
        assert_eq!(s.median, median_by_counting(&xs));
        assert_eq!((s.min, s.max), (1.0, 5.0));
        assert_eq!(s.median, 3.0);
        assert!((s.relative_spread() - 4.0 / 3.0).abs() < 1e-12);
    }

    #[test]
    fn even_count_averages_middle_pair() {
        let s = Summary::of(&[10.0, 1.0, 3.0, 7.0]).unwrap();
        assert_eq!(s.median, 5.0);
        assert_eq!((s.min, s.max), (1.0, 10.0));
    }

    #[test]
    fn one_outlier_does_not_move_median() {
        let base = [2.0, 2.1, 1.9, 2.0, 2.05];
        let mut with_outlier = base;
        with_outlier[0] = 1e9;
        let a = Summary::of(&base).unwrap();
        let b = Summary::of(&with_outlier).unwrap();
        assert!((a.median - b.median).abs() <= 0.05 + 1e-12);
        assert_eq!(b.max, 1e9);
    }

    #[test]
    fn many_random_odd_sets_match_counting_oracle() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
        for n in [1usize, 3, 5, 9, 21] {
            for _ in 0..20 {
                let xs: Vec<f64> = (0..n).map(|_| rng.gen_range(-5.0..5.0)).collect();
                assert_eq!(Summary::of(&xs).unwrap().median, median_by_counting(&xs));
            }
        }
    }

    #[test]
    fn rejects_empty_and_nan() {
        assert!(matches!(
            Summary::of(&[]),
            Err(Error::Plan(crate::plan::Error::Empty(_)))
        ));
        assert!(Summary::of(&[1.0, f64::NAN]).is_err());
        assert!(Summary::of(&[f64::INFINITY]).is_err());
    }
}
