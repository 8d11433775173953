//! Array decomposers by name, as used by `nuce plan array --algo NAME`.
//!
//! [`decomposer_by_name`] maps a name to a boxed [`ArrayDecomposer`];
//! [`all_decomposers`] lists every concrete algorithm (the candidates of
//! [`Best`]). Unknown names are an [`Error::InvalidInput`] that lists the
//! known ones.

use super::{
    ArrayDecomposer, Best, ColumnDp, KalinovLastovetsky, RecursiveBisection, RecursiveBisection2,
    RecursiveBisection3, Slices, Tile, Xy, Xy2,
};
use crate::error::{Error, Result};

/// Names of the concrete algorithms, in the order [`Best`] tries them (ties
/// go to the earlier one).
pub const CONCRETE: &[&str] = &[
    "column", "xy2", "xy", "tile", "kl", "rb", "rb2", "rb3", "slices",
];

/// The algorithms whose running time grows exponentially with p (they
/// enumerate the pt(p) sorted XY decompositions, \[KRW96\] §4, §6.1–6.2).
pub const EXHAUSTIVE: &[&str] = &["xy", "xy2", "tile"];

/// Largest p for which [`Best`] tries the [`EXHAUSTIVE`] algorithms; above
/// it the column DP, which is optimal over the same class, stands in for them.
pub const EXHAUSTIVE_MAX_PARTS: usize = 20;

/// Every name accepted by [`decomposer_by_name`].
pub fn names() -> Vec<&'static str> {
    CONCRETE.iter().copied().chain(["best"]).collect()
}

/// The decomposer called `name`, with default parameters (latency 0).
pub fn decomposer_by_name(name: &str) -> Result<Box<dyn ArrayDecomposer>> {
    decomposer_with_latency(name, 0.0)
}

/// The decomposer called `name`; latency-aware ones (`column`, `best`)
/// weigh `latency × internal edges` (\[KRW96\] §5).
pub fn decomposer_with_latency(name: &str, latency: f64) -> Result<Box<dyn ArrayDecomposer>> {
    super::checks::check_latency(latency)?;
    Ok(match name {
        "column" => Box::new(ColumnDp::with_latency(latency)),
        "kl" => Box::new(KalinovLastovetsky::default()),
        "slices" => Box::new(Slices),
        "rb" => Box::new(RecursiveBisection),
        "rb2" => Box::new(RecursiveBisection2),
        "rb3" => Box::new(RecursiveBisection3),
        "xy" => Box::new(Xy { latency }),
        "xy2" => Box::new(Xy2 { latency }),
        "tile" => Box::new(Tile { latency }),
        "best" => Box::new(Best::with_latency(latency)),
        _ => {
            return Err(Error::InvalidInput(format!(
                "unknown array algorithm {name:?}; known: {}",
                names().join(", ")
            )))
        }
    })
}

/// Every concrete decomposer (not `best`), default parameters.
pub fn all_decomposers() -> Vec<Box<dyn ArrayDecomposer>> {
    all_decomposers_with_latency(0.0)
}

/// Every concrete decomposer that is practical for `parts` parts (the
/// [`EXHAUSTIVE`] ones only up to [`EXHAUSTIVE_MAX_PARTS`]).
pub fn practical_decomposers(parts: usize, latency: f64) -> Vec<Box<dyn ArrayDecomposer>> {
    all_decomposers_with_latency(latency)
        .into_iter()
        .filter(|d| parts <= EXHAUSTIVE_MAX_PARTS || !EXHAUSTIVE.contains(&d.name()))
        .collect()
}

/// Every concrete decomposer; latency-aware ones get `latency`
/// (a negative or non-finite latency is treated as 0).
pub fn all_decomposers_with_latency(latency: f64) -> Vec<Box<dyn ArrayDecomposer>> {
    let latency = if latency.is_finite() && latency > 0.0 {
        latency
    } else {
        0.0
    };
    CONCRETE
        .iter()
        .filter_map(|n| decomposer_with_latency(n, latency).ok())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for n in names() {
            assert_eq!(decomposer_by_name(n).unwrap().name(), n);
        }
        assert_eq!(all_decomposers().len(), CONCRETE.len());
        let e = decomposer_by_name("nope").err().unwrap();
        assert!(e.to_string().contains("column"));
        assert!(decomposer_with_latency("column", f64::NAN).is_err());
    }
}
