//! The protocol shared by the graph benchmarks that compare nuce with another
//! partitioner side by side (issue 13): their `REPS WORKDIR …` arguments,
//! p ∈ {4, 8, 16}, three kinds of target weights, and the summaries.

use rand::Rng;

/// The part counts of the comparison.
pub const PS: [usize; 3] = [4, 8, 16];

/// The kinds of target weights: uniform; two classes 1:4, alternating;
/// random uniform in [1, 4] (from the caller's seeded `rng`).
pub const KINDS: [&str; 3] = ["uniform", "1:4", "random"];

/// The command-line arguments, the repetitions (first argument, default 3)
/// and the work folder (second, default `target/bench_graph`).
pub fn args() -> (Vec<String>, usize, String) {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let reps = args.first().and_then(|s| s.parse().ok()).unwrap_or(3);
    let work = args
        .get(1)
        .cloned()
        .unwrap_or_else(|| "target/bench_graph".into());
    (args, reps, work)
}

/// The target weights of `kind` for `p` parts.
pub fn targets(kind: &str, p: usize, rng: &mut impl Rng) -> Vec<f64> {
    match kind {
        "uniform" => vec![1.0; p],
        "1:4" => (0..p).map(|i| if i % 2 == 0 { 1.0 } else { 4.0 }).collect(),
        _ => (0..p).map(|_| rng.gen_range(1.0..=4.0)).collect(),
    }
}

/// Geometric mean (1 for an empty slice).
pub fn gmean(x: &[f64]) -> f64 {
    (x.iter().map(|v| v.ln()).sum::<f64>() / x.len().max(1) as f64).exp()
}

/// Largest value (0 for an empty slice).
pub fn max(x: &[f64]) -> f64 {
    x.iter().fold(0.0f64, |a, &b| a.max(b))
}
