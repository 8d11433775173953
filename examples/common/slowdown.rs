//! `--slowdown R:F@P[:above=N],…` of the heat examples: rank R does F times
//! the work per cell from phase P on — with `:above=N` only while its block
//! has more than N cells (a rank whose speed depends on the size of its work,
//! like a block that no longer fits in a cache).

/// A work multiplier change: rank, factor, first phase.
#[derive(Debug, Clone, Copy)]
pub struct Slow {
    /// The rank.
    pub rank: i32,
    /// Its work multiplier.
    pub factor: usize,
    /// The first phase it applies to.
    pub phase: usize,
    /// Applies only while the rank's block has more than this many cells.
    pub above: Option<usize>,
}

/// Parses `R:F@P[:above=N],…` (`@P` may be left out: from phase 0).
pub fn parse_slowdown(s: &str) -> Result<Vec<Slow>, String> {
    s.split(',')
        .filter(|t| !t.trim().is_empty())
        .map(|t| {
            let bad = || {
                format!("bad --slowdown item {t:?}: expected RANK:FACTOR@PHASE or RANK:FACTOR@PHASE:above=CELLS")
            };
            let (rf, p) = t.split_once('@').unwrap_or((t, "0"));
            let (r, f) = rf.split_once(':').ok_or_else(bad)?;
            let (p, above) = match p.split_once(':') {
                None => (p, None),
                Some((p, a)) => {
                    let n = a.trim().strip_prefix("above=").ok_or_else(bad)?;
                    (p, Some(n.trim().parse().map_err(|_| bad())?))
                }
            };
            Ok(Slow {
                rank: r.trim().parse().map_err(|_| bad())?,
                factor: f.trim().parse().map_err(|_| bad())?,
                phase: p.trim().parse().map_err(|_| bad())?,
                above,
            })
        })
        .collect()
}

/// Rank `rank`'s work multiplier in `phase` on a block of `cells` cells (1
/// when none applies): the item of the latest phase among those that apply
/// (an `above=N` item applies while `cells > N`, and wins over a plain item
/// of the same phase).
pub fn factor_at(slow: &[Slow], rank: i32, phase: usize, cells: usize) -> usize {
    slow.iter()
        .filter(|s| s.rank == rank && s.phase <= phase)
        .filter(|s| s.above.is_none_or(|n| cells > n))
        .max_by_key(|s| (s.phase, s.above.is_some()))
        .map_or(1, |s| s.factor.max(1))
}

/// The phase, slowdown and check options of the heat examples.
#[derive(clap::Args, Debug)]
pub struct PhaseArgs {
    /// Number of phases.
    #[arg(long, default_value_t = 8)]
    pub phases: usize,
    /// Iterations per phase.
    #[arg(long, default_value_t = 40)]
    pub iters: usize,
    /// Work multipliers: `R:F@P,…` = rank R does F× the work from phase P
    /// on; `R:F@P:above=N` = the same only while rank R's block has more
    /// than N cells (a speed that depends on the size of the work: e.g.
    /// `1:3@0:above=100000`, rank 1 is 3× slower once its block exceeds
    /// 100 000 cells).
    #[arg(long, default_value = "")]
    pub slowdown: String,
    /// Never remap, and start from a uniform split (the HPF BLOCK baseline).
    #[arg(long)]
    pub uniform: bool,
    /// Hysteresis of the remap decision (fraction).
    #[arg(long, default_value_t = 0.05)]
    pub hysteresis: f64,
    /// Skip the serial check at the end.
    #[arg(long)]
    pub no_check: bool,
}

impl PhaseArgs {
    /// The balancer's remap policy (the uniform baseline never remaps: a
    /// hysteresis of 100 % can never be beaten) and `rank`'s kernel (its
    /// phase-0 work multiplier, so that the first plan sees it; size-dependent
    /// items do not apply to the kernel's small block).
    pub fn policy_and_kernel(
        &self,
        slow: &[Slow],
        rank: i32,
    ) -> (nuce::plan::policy::RemapPolicy, nuce::speed::KernelConfig) {
        let policy = nuce::plan::policy::RemapPolicy {
            hysteresis: if self.uniform { 1.0 } else { self.hysteresis },
            ..Default::default()
        };
        let kernel = nuce::speed::KernelConfig {
            work_multiplier: factor_at(slow, rank, 0, 0) as f64,
            ..Default::default()
        };
        (policy, kernel)
    }
}
