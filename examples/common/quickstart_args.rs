//! Command-line arguments shared by the quick-start examples:
//! `[N] [PHASES] [ITERS] [RANK:FACTOR@PHASE]`.

/// Positional argument `k` as a number, or `default`.
pub fn arg(k: usize, default: usize) -> usize {
    std::env::args()
        .nth(k)
        .and_then(|a| a.parse().ok())
        .unwrap_or(default)
}

/// The extra work of argument 4, `RANK:FACTOR@PHASE`, as a function of
/// `(rank, phase)`: how many times that rank repeats its work (1 elsewhere).
pub fn extra_work() -> impl Fn(i32, usize) -> usize {
    let slow = std::env::args().nth(4).and_then(|s| {
        let (rf, p) = s.split_once('@')?;
        let (r, f) = rf.split_once(':')?;
        Some((
            r.parse::<i32>().ok()?,
            f.parse::<usize>().ok()?,
            p.parse::<usize>().ok()?,
        ))
    });
    move |rank, phase| match slow {
        Some((r, f, p)) if r == rank && phase >= p => f,
        _ => 1,
    }
}
