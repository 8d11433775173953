//! Auction algorithm for the assignment problems of \[BBLRR01\] §4.3–4.4.
//!
//! Bertsekas' auction \[Ber91\] (Jacobi form, every unassigned person bids in the same
//! round) with ε-scaling. It is the assignment solver that ranks can run
//! *together*: each person needs only its own row of weights and the common
//! prices, and a round's bids combine with one max-reduction over the objects
//! (see `runtime::auction`). The sequential [`auction`] below runs exactly
//! the same rounds, so both produce the same assignment.
//!
//! Exactness: weights are integers multiplied by `n + 1`, and the final
//! phase uses ε = 1 in these units, i.e. ε = 1/(n+1) < 1/n in the original
//! units; an ε-optimal assignment with ε < 1/n is optimal for integer
//! weights (\[Ber91\], Prop. 1.2).
//! Complexity: `O(n·(max−min weight)·(n+1)/ε)` bids per phase in the worst
//! case, `O(log_θ((n+1)·range))` phases (θ = [`EPS_FACTOR`]); each bid costs
//! `O(n)`.

use crate::error::{Error, Result};

/// Key of "no bid" in a round's bid vector.
pub const NO_BID: i64 = i64::MIN;

/// ε is divided by this factor between phases.
pub const EPS_FACTOR: i64 = 6;

/// Upper bound on the rounds of one phase before giving up (never reached
/// with finite weights; guards against misuse).
const MAX_ROUNDS: u64 = 50_000_000;

/// Replicated state of an auction: prices and the current assignment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuctionState {
    /// Number of persons (= objects).
    pub n: usize,
    /// Price of each object, in scaled units.
    pub prices: Vec<i64>,
    /// Object held by each person.
    pub object_of: Vec<Option<usize>>,
    /// Person holding each object.
    pub owner_of: Vec<Option<usize>>,
    /// Current ε (scaled units, ≥ 1).
    pub eps: i64,
    /// Rounds played so far in this phase.
    pub rounds: u64,
}

impl AuctionState {
    /// Starts an auction of `n` persons whose integer weights lie in
    /// `[min_weight, max_weight]`. Errors when the scaled weights could
    /// overflow the 63-bit bid keys.
    pub fn new(n: usize, min_weight: i64, max_weight: i64) -> Result<Self> {
        let range = (max_weight as i128 - min_weight as i128).max(0);
        let scaled = range * (n as i128 + 1);
        // Prices stay below about 2·scaled + n·ε; keys multiply them by n.
        if (4 * scaled + 4) * (n as i128 + 1) * (n as i128 + 1) >= (1i128 << 62) {
            return Err(Error::Solver(format!(
                "auction: weights span {range} for {n} persons, too wide for 63-bit bids"
            )));
        }
        let eps = ((scaled as i64) / EPS_FACTOR).max(1);
        Ok(Self {
            n,
            prices: vec![0; n],
            object_of: vec![None; n],
            owner_of: vec![None; n],
            eps,
            rounds: 0,
        })
    }

    /// Scaled weight: `weight · (n + 1)`.
    pub fn scale(&self, weight: i64) -> i64 {
        weight * (self.n as i64 + 1)
    }

    /// Whether every person holds an object.
    pub fn all_assigned(&self) -> bool {
        self.object_of.iter().all(Option::is_some)
    }

    /// The bid key of `person` in this round, given its *unscaled* row of
    /// weights (`weight(object)`): `None` when it holds an object. The key
    /// is `price·n + (n − 1 − person)`, so a max-reduction picks the highest
    /// price and, on ties, the lowest person. `O(n)`.
    pub fn bid(&self, person: usize, weight: impl Fn(usize) -> i64) -> Option<(usize, i64)> {
        if self.object_of.get(person)?.is_some() {
            return None;
        }
        let mut best = (usize::MAX, i64::MIN);
        let mut second = i64::MIN;
        for j in 0..self.n {
            let value = self.scale(weight(j)) - self.prices[j];
            if value > best.1 {
                second = best.1;
                best = (j, value);
            } else if value > second {
                second = value;
            }
        }
        let (object, best_value) = best;
        let increment = if self.n == 1 {
            self.eps
        } else {
            best_value - second + self.eps
        };
        let price = self.prices[object] + increment;
        let key = price * self.n as i64 + (self.n - 1 - person) as i64;
        Some((object, key))
    }

    /// Applies one round: `keys[object]` is the best bid key for each object
    /// ([`NO_BID`] if none). Winners take their objects at the bid prices;
    /// displaced persons become unassigned.
    pub fn apply(&mut self, keys: &[i64]) -> Result<()> {
        if keys.len() != self.n {
            return Err(Error::ShapeMismatch(format!(
                "{} bid keys for {} objects",
                keys.len(),
                self.n
            )));
        }
        let n = self.n as i64;
        for (object, &key) in keys.iter().enumerate() {
            if key == NO_BID {
                continue;
            }
            let person = (n - 1 - key.rem_euclid(n)) as usize;
            let price = key.div_euclid(n);
            if person >= self.n || price <= self.prices[object] {
                return Err(Error::Solver(format!(
                    "auction: invalid bid key {key} for object {object}"
                )));
            }
            if let Some(old) = self.owner_of[object] {
                self.object_of[old] = None;
            }
            self.prices[object] = price;
            self.owner_of[object] = Some(person);
            self.object_of[person] = Some(object);
        }
        self.rounds += 1;
        if self.rounds > MAX_ROUNDS {
            return Err(Error::Solver("auction: too many rounds".into()));
        }
        Ok(())
    }

    /// Ends a phase once everyone is assigned: returns `false` when the last
    /// phase (ε = 1) is over, else divides ε and clears the assignment.
    pub fn next_phase(&mut self) -> bool {
        if self.eps <= 1 {
            return false;
        }
        self.eps = (self.eps / EPS_FACTOR).max(1);
        self.object_of.iter_mut().for_each(|o| *o = None);
        self.owner_of.iter_mut().for_each(|o| *o = None);
        self.rounds = 0;
        true
    }

    /// The final assignment `object[person]` (once all are assigned).
    pub fn assignment(&self) -> Result<Vec<usize>> {
        self.object_of
            .iter()
            .map(|o| o.ok_or_else(|| Error::Solver("auction: unassigned person".into())))
            .collect()
    }
}

/// Sequential auction: maximum-weight perfect assignment of `n` persons to
/// `n` objects, `weight(person, object)` integer. Returns `object[person]`.
pub fn auction(n: usize, weight: impl Fn(usize, usize) -> i64) -> Result<Vec<usize>> {
    let (mut lo, mut hi) = (i64::MAX, i64::MIN);
    for i in 0..n {
        for j in 0..n {
            let w = weight(i, j);
            lo = lo.min(w);
            hi = hi.max(w);
        }
    }
    let mut state = AuctionState::new(n, lo.min(hi), hi)?;
    let mut keys = vec![NO_BID; n];
    loop {
        while !state.all_assigned() {
            keys.iter_mut().for_each(|k| *k = NO_BID);
            for person in 0..n {
                if let Some((object, key)) = state.bid(person, |j| weight(person, j)) {
                    keys[object] = keys[object].max(key);
                }
            }
            state.apply(&keys)?;
        }
        if !state.next_phase() {
            break;
        }
    }
    state.assignment()
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};

    fn brute(n: usize, w: &[Vec<i64>]) -> i64 {
        fn rec(i: usize, used: &mut Vec<bool>, w: &[Vec<i64>]) -> i64 {
            if i == w.len() {
                return 0;
            }
            let mut best = i64::MIN;
            for j in 0..w.len() {
                if !used[j] {
                    used[j] = true;
                    best = best.max(w[i][j] + rec(i + 1, used, w));
                    used[j] = false;
                }
            }
            best
        }
        rec(0, &mut vec![false; n], w)
    }

    #[test]
    fn auction_is_optimal_on_random_integer_matrices() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
        for n in 1..=6 {
            for _ in 0..30 {
                let w: Vec<Vec<i64>> = (0..n)
                    .map(|_| (0..n).map(|_| rng.gen_range(-5..40)).collect())
                    .collect();
                let a = auction(n, |i, j| w[i][j]).unwrap();
                let total: i64 = a.iter().enumerate().map(|(i, &j)| w[i][j]).sum();
                assert_eq!(total, brute(n, &w));
            }
        }
    }

    #[test]
    fn overflow_is_an_error() {
        assert!(AuctionState::new(1000, 0, i64::MAX / 2).is_err());
    }
}
