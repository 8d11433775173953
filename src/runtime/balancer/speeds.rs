//! The speeds of the ranks: the built-in kernel, the application's timed
//! phases, the speed functions of the functional model, and
//! how the root merges them ([`merge_estimates`], [`SpeedModel`]).

use super::*;

/// Which speed model decided a remap ([`RemapReport::model`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum SpeedModel {
    /// One constant speed per rank, known exactly (no rank reported any noise).
    Constant,
    /// Constant speeds known up to their measured noise: speeds the noise
    /// cannot tell apart were snapped to one value
    /// ([`crate::plan::fpm::snap_speeds`]) and the remap had to pay off for
    /// every speed within the noise ([`RemapPolicy::decide_noisy`]).
    NoisySnapped,
    /// The ranks' speed functions of their measured (work, time) points
    /// (issue 19, \[LR07\], \[CLR11\]): some rank's speed depends on the
    /// size of its work beyond the noise, so the plans were made for the
    /// functional shares ([`crate::plan::fpm::functional_shares`]) and the
    /// remap was decided on the times the functions predict
    /// ([`PlanningModel`]).
    Functional,
}

/// The environment variable that chooses the runtime's speed model:
/// `auto` (the default: the functional model when some rank's speed
/// depends on its work size beyond the noise, else constant speeds) or
/// `constant` (constant speeds always). Read by [`Balancer::new`]; any
/// other value is an error on every rank.
pub const ENV_SPEED_MODEL: &str = "NUCE_SPEED_MODEL";

/// Relative distance in work size within which a phase re-measures a point
/// of the rank's speed function ([`SpeedFunction::learn`]): a phase on the
/// same block (or one within 0.1 %, less than a row of a large array) that
/// runs at another speed is a change of speed; a phase on another size
/// teaches the function its shape.
pub(crate) const FUNCTION_REACH: f64 = 0.001;

/// Whether [`ENV_SPEED_MODEL`] allows the functional model (`auto`, unset or
/// empty: yes; `constant`: no); an error for any other value.
pub fn functional_from_env() -> Result<bool> {
    match std::env::var(ENV_SPEED_MODEL)
        .ok()
        .as_deref()
        .map(str::trim)
    {
        None | Some("") | Some("auto") => Ok(true),
        Some("constant") => Ok(false),
        Some(v) => Err(Error::invalid_input(format!(
            "{ENV_SPEED_MODEL}={v:?}: expected auto or constant"
        ))),
    }
}

/// What one rank tells the root at a balance point ([`merge_estimates`]).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub enum RankReport {
    /// Its phase speed (work units per second) with its noise.
    Phase(SpeedEstimate),
    /// It had no work: the factor by which its kernel speed changed since
    /// the previous balance point (`mean`, now / then) and the probe's noise.
    Idle(SpeedEstimate),
    /// Nothing known (no phase timed yet).
    Unknown,
}

impl SpeedModel {
    /// The model that planned with `model`: [`SpeedModel::Functional`] when
    /// its functions did, else [`SpeedModel::of`] its estimates.
    pub(crate) fn of_model(model: &PlanningModel) -> SpeedModel {
        if model.is_functional() {
            SpeedModel::Functional
        } else {
            SpeedModel::of(&model.estimates)
        }
    }

    /// The model of a decision on `estimates`: noisy as soon as one has noise.
    pub fn of(estimates: &[SpeedEstimate]) -> SpeedModel {
        if estimates.iter().any(|e| e.noise > 0.0) {
            SpeedModel::NoisySnapped
        } else {
            SpeedModel::Constant
        }
    }
}

/// Combines the ranks' reports (phase speed and noise, or an idle rank's
/// change of kernel speed) with the previous estimates. A rank without a
/// phase speed starts from its previous estimate:
///
/// * as it is when the previous estimates are phase speeds too
///   (`phase_units`): an idle rank's speed does not follow the others', so
///   when they slow down it is relatively faster and gets work back;
/// * otherwise (kernel speeds, or speeds set by the application) converted
///   into phase units by the median ratio phase/previous of the ranks that
///   have both;
///
/// and an idle rank ([`RankReport::Idle`]) multiplies it by the change of
/// its kernel speed, its noise the larger of the two. Without any phase
/// speed the previous estimates are kept. O(p log p).
pub fn merge_estimates(
    phase: &[RankReport],
    previous: Option<&[SpeedEstimate]>,
    phase_units: bool,
) -> Result<Vec<SpeedEstimate>> {
    let timed = |r: &RankReport| match r {
        RankReport::Phase(e) => Some(*e),
        _ => None,
    };
    let means = |s: &[SpeedEstimate]| s.iter().map(|e| e.mean).collect::<Vec<_>>();
    if let Some(s) = phase.iter().map(timed).collect::<Option<Vec<_>>>() {
        crate::plan::check_speeds(&means(&s))?;
        return Ok(s);
    }
    let prev = previous.ok_or_else(|| {
        Error::invalid_input(
            "some ranks have neither a phase timing nor a measured speed: call measure() first",
        )
    })?;
    if prev.len() != phase.len() {
        return Err(Error::shape_mismatch(format!(
            "{} previous speeds for {} ranks",
            prev.len(),
            phase.len()
        )));
    }
    let mut ratios: Vec<f64> = phase
        .iter()
        .zip(prev)
        .filter_map(|(p, q)| timed(p).map(|p| p.mean / q.mean))
        .collect();
    ratios.sort_by(f64::total_cmp);
    let scale = if phase_units || ratios.is_empty() {
        1.0
    } else {
        ratios[ratios.len() / 2]
    };
    let s: Vec<SpeedEstimate> = phase
        .iter()
        .zip(prev)
        .map(|(p, q)| match *p {
            RankReport::Phase(e) => e,
            RankReport::Idle(change) => SpeedEstimate {
                mean: q.mean * scale * change.mean,
                noise: q.noise.max(change.noise),
            },
            RankReport::Unknown => SpeedEstimate {
                mean: q.mean * scale,
                noise: q.noise,
            },
        })
        .collect();
    crate::plan::check_speeds(&means(&s))?;
    Ok(s)
}

impl Balancer {
    /// The current speeds, or 1 for every rank when none are known yet:
    /// what the plans use before any measurement.
    pub(crate) fn speeds_or_uniform(&self) -> Vec<f64> {
        self.book
            .speeds()
            .map_or_else(|| vec![1.0; self.comm.size() as usize], <[f64]>::to_vec)
    }

    /// Measures every rank with the built-in kernel, gathers the records
    /// (with hwloc topology and host name) at the root — in two levels,
    /// through the host leaders, once the hosts are known
    /// ([`TwoLevel`]) — and broadcasts the speeds. Returns the speeds, one
    /// per rank.
    ///
    /// Each rank's speed is the median of the kernel's repeated samples,
    /// with their noise ([`crate::speed::KernelMeasurement::noise`]); the
    /// root snaps speeds whose noise intervals overlap to their common mean
    /// ([`snap_speeds`]), so ranks the measurement cannot tell apart get
    /// the same speed, hence the same share. [`Measured::speed_estimates`]
    /// keeps the estimates before snapping.
    pub fn measure(&mut self) -> Result<Vec<f64>> {
        let _w = waiting();
        let _span = info_span!("measure").entered();
        self.arrive("Balancer::measure")?;
        let m = measure_kernel(&self.kernel);
        self.own.measured_kernel(m.median, m.noise());
        // A rank still in its kernel after the timeout is named (with its host).
        self.arrive("Balancer::measure (gathering the speeds)")?;
        let record = SpeedRecord {
            rank: self.comm.rank(),
            speed: m.median,
            source: SpeedSource::Kernel,
            kernel: Some(m),
            topology: topology(),
        };
        let records = self.gather_at_root(&record)?;
        let (speeds, estimates) = root_compute(&self.comm, ROOT, || {
            let recs = records
                .as_ref()
                .ok_or_else(|| Error::invalid_input("no records at root"))?;
            let s: Vec<f64> = recs.iter().map(|r| r.speed).collect();
            crate::plan::check_speeds(&s)?;
            let est: Vec<SpeedEstimate> = recs
                .iter()
                .map(|r| match &r.kernel {
                    Some(k) => SpeedEstimate {
                        mean: r.speed,
                        noise: k.noise(),
                    },
                    None => SpeedEstimate {
                        mean: r.speed,
                        noise: 0.0,
                    },
                })
                .collect();
            Ok((snap_speeds(&est)?, est))
        })?;
        info!(?speeds, ?estimates, "measured speeds");
        self.book.measured(speeds.clone(), estimates, records);
        Ok(speeds)
    }

    /// Measures every rank's speed on blocks of each of `sizes` cells — a
    /// size sweep (issue 19) — so that the first plan can already use the
    /// functional model. Collective; every rank passes the same sizes.
    ///
    /// Each rank runs the built-in 5-point stencil ([`measure_sweep`], with
    /// this balancer's [`KernelConfig`]: warm-up, repeats, sample time,
    /// work multiplier) on a square-ish block of each size, and its speed
    /// function ([`Measured::speed_function`]) becomes the measured points
    /// `(cells, seconds per sweep)`, with the largest noise of the
    /// measurements: it replaces any earlier function. The root gathers the
    /// functions and sets every rank's speed to its function's mean speed,
    /// snapped within the noise ([`snap_speeds`]), as [`Balancer::measure`]
    /// does. Until the next balance point, [`Balancer::plan`] and
    /// [`Balancer::plan3`] plan with the functions: when some rank's speed
    /// depends on the size beyond the noise ([`PlanningModel`]), the shares
    /// equalise the times the functions predict for the array's cells (and
    /// [`ENV_SPEED_MODEL`]`=constant` keeps constant speeds). The sweep's
    /// points are in the kernel's time per cell; the rank's first timed
    /// phase rescales them to the application's ([`Aging::Rescale`](crate::plan::fpm::Aging::Rescale): the
    /// sweep gives the shape, the phases the scale).
    ///
    /// Returns this rank's points. Errors, the same on every rank: sizes out
    /// of bounds on some rank (1 to [`crate::plan::fpm::MAX_SWEEP_SIZES`]
    /// sizes of [`crate::plan::fpm::MIN_SWEEP_CELLS`] to
    /// [`crate::plan::fpm::MAX_SWEEP_CELLS`] cells, checked before anything
    /// is allocated; the lowest refusing rank's error), or sizes that differ
    /// between ranks. Time: about `sizes × (warm-up + repeats + 3) × min
    /// sample time` (8 sizes, the default kernel settings: about 1 s);
    /// memory: two arrays of the largest block.
    pub fn measure_sizes(&mut self, sizes: &[usize]) -> Result<Vec<SweepPoint>> {
        let _w = waiting();
        let _span = info_span!("measure_sizes", sizes = sizes.len()).entered();
        let refused = crate::plan::fpm::check_sweep_sizes(sizes)
            .err()
            .map(Error::from);
        let list = if refused.is_none() {
            format!("{sizes:?}")
        } else {
            format!("{} sizes", sizes.len())
        };
        self.cp.check_refusing(
            &self.comm,
            &format!("Balancer::measure_sizes({list})"),
            refused.as_ref(),
        )?;
        let local = measure_sweep(&self.kernel.sanitized(), sizes).and_then(|points| {
            let noise = points
                .iter()
                .map(|p| p.measurement.noise())
                .fold(0.0, f64::max)
                .min(MAX_NOISE);
            let xs: Vec<(f64, f64)> = points
                .iter()
                .map(|p| (p.cells as f64, p.measurement.median))
                .collect();
            Ok((crate::plan::fpm::sweep_points(&xs, noise)?, points, noise))
        });
        let (f, points, noise) = agree(&self.comm, ROOT, local)?;
        self.arrive("Balancer::measure_sizes (gathering the speed functions)")?;
        let gathered = gather_values(&self.comm, ROOT, &f)?;
        let (speeds, estimates) = root_compute(&self.comm, ROOT, || {
            let fns = gathered
                .as_ref()
                .ok_or_else(|| Error::invalid_input("no speed functions at root"))?;
            let est: Vec<SpeedEstimate> = fns
                .iter()
                .map(|f| SpeedEstimate {
                    mean: f.mean_speed(),
                    noise: f.noise(),
                })
                .collect();
            Ok((snap_speeds(&est)?, est))
        })?;
        info!(?speeds, ?estimates, "size sweep");
        self.own.swept(f, noise);
        self.book.swept(speeds, estimates, gathered);
        Ok(points)
    }

    /// What this rank tells the root at a balance point where its work
    /// was `work` ([`RankSpeed::report`]; an idle rank probes with the
    /// built-in kernel of [`Balancer::measure`], about 100 ms by default).
    pub(super) fn local_report(&mut self, work: f64) -> RankReport {
        let kernel = &self.kernel;
        self.own.report(work, || {
            let m = measure_kernel(kernel);
            (m.median, m.noise())
        })
    }

    /// Sets the speeds explicitly (collective: the root's values are broadcast
    /// and validated). For applications that measure by other means.
    pub fn set_speeds(&mut self, speeds: &[f64]) -> Result<()> {
        let _w = waiting();
        self.arrive("Balancer::set_speeds")?;
        let s = root_compute(&self.comm, ROOT, || {
            crate::plan::check_speeds(speeds)?;
            if speeds.len() != self.comm.size() as usize {
                return Err(Error::shape_mismatch(format!(
                    "{} speeds for {} ranks",
                    speeds.len(),
                    self.comm.size()
                )));
            }
            Ok(speeds.to_vec())
        })?;
        self.book.set_exact(s);
        Ok(())
    }

    /// Records this rank's phase explicitly (local): `work_units` done in
    /// `elapsed` (compute time only, excluding waits). Optional: without it,
    /// [`Balancer::maybe_remap`] measures the phase itself; with it, this
    /// record replaces the automatic one for the current phase. Noise is
    /// smoothed and real changes are followed at once ([`PhaseTimer`](crate::speed::PhaseTimer)). A
    /// recorded phase sets the rank's constant speed only: the functional
    /// model ([`Measured::speed_function`]) learns from the phases nuce
    /// times itself, whose work per iteration is the data's. A rank with no
    /// work this phase records nothing.
    pub fn record_phase(&mut self, work_units: f64, elapsed: Duration) -> Result<()> {
        self.own.record_phase(work_units, elapsed)
    }

    /// Restarts this rank's phase timing now (local): what the application
    /// did since the last balance point — its set-up after creating its
    /// data (initial fields, input files, building its own structures) — is
    /// not counted as compute of the phase, so it does not make the rank
    /// look slow at the first [`Balancer::maybe_remap`]. A record made by
    /// [`Balancer::record_phase`] since the balance point still counts.
    pub fn start_phase(&mut self) {
        self.phase.set(Phase::start());
    }

    /// Records the phase automatically (unless the application did):
    /// `work_per_iteration × iterations` units in the compute time since
    /// the last balance point.
    pub(super) fn record_automatic(
        &mut self,
        work_per_iteration: f64,
        iterations: usize,
    ) -> Result<()> {
        let compute = self.phase.get().compute();
        self.own
            .record_automatic(work_per_iteration, iterations, compute)
    }

    /// The model of the current speeds (uniform when none were measured)
    /// for `cells` cells with the memory limits — with the speed functions
    /// of a size sweep, if any ([`Balancer::measure_sizes`]): what the
    /// initial plans are made for.
    pub(super) fn initial_model(&self, cells: usize) -> Result<PlanningModel> {
        self.book.initial_model(
            self.comm.size() as usize,
            cells,
            self.settings.functional_model,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::array2d::ColumnDp;

    fn est(mean: f64, noise: f64) -> SpeedEstimate {
        SpeedEstimate { mean, noise }
    }

    #[test]
    fn idle_ranks_keep_their_own_phase_estimate() {
        // Rank 1 is idle; the others slowed down 2× since the last balance point.
        let prev = [est(2.0, 0.05), est(4.0, 0.1), est(6.0, 0.02)];
        let phase = [
            RankReport::Phase(est(1.0, 0.04)),
            RankReport::Unknown,
            RankReport::Phase(est(3.0, 0.03)),
        ];
        // In phase units the idle rank keeps its estimate, noise included:
        // it is now the fastest, and the plan gives it work back.
        let s = merge_estimates(&phase, Some(&prev), true).unwrap();
        assert_eq!(s, vec![est(1.0, 0.04), est(4.0, 0.1), est(3.0, 0.03)]);
        let plan = ColumnDp::default()
            .decompose(60, 60, &snap_speeds(&s).unwrap())
            .unwrap();
        assert!(plan.areas()[1] > plan.areas()[2], "{:?}", plan.areas());
        // In kernel units it is converted by the others' median ratio (½).
        let s = merge_estimates(&phase, Some(&prev), false).unwrap();
        assert_eq!(s[1], est(2.0, 0.1));
        assert_eq!(SpeedModel::of(&s), SpeedModel::NoisySnapped);
        assert_eq!(SpeedModel::of(&[est(1.0, 0.0)]), SpeedModel::Constant);
        assert!(merge_estimates(&phase, None, true).is_err());
        let nan = [RankReport::Phase(est(f64::NAN, 0.0))];
        assert!(merge_estimates(&nan, None, true).is_err());
        // An idle rank whose kernel got 3× faster (the job that shared its
        // core ended): its estimate follows, noise the larger one.
        let mut idle = phase;
        idle[1] = RankReport::Idle(est(3.0, 0.2));
        let s = merge_estimates(&idle, Some(&prev), true).unwrap();
        assert_eq!(s[1], est(12.0, 0.2));
        // A probe that says "no change" keeps the estimate as it is.
        idle[1] = RankReport::Idle(est(1.0, 0.02));
        let s = merge_estimates(&idle, Some(&prev), true).unwrap();
        assert_eq!(s[1], est(4.0, 0.1));
    }

    #[test]
    fn equal_ranks_within_noise_never_remap_but_different_ones_do() {
        let split = |s: &[f64]| ColumnDp::default().decompose(100, 100, s).unwrap();
        let pol = RemapPolicy::default();
        let decide = |e: &[SpeedEstimate]| {
            let candidate = split(&snap_speeds(e).unwrap());
            pol.decide_plans_noisy(&split(&[1.0, 1.0]), &candidate, e, 8, 100, None)
                .unwrap()
                .decision
        };
        // Two equal cores measured 15 % apart with 10 % noise: snapped to one
        // speed, the candidate is the current even split, no remap.
        let noisy = [est(1.0e6, 0.1), est(0.85e6, 0.1)];
        let d = decide(&noisy);
        assert!(!d.remap, "{d:?}");
        assert_eq!(d.speeds[0], d.speeds[1]);
        // The same speeds known exactly would remap (the model without noise).
        let exact = [est(1.0e6, 0.0), est(0.85e6, 0.0)];
        assert!(decide(&exact).remap);
        // A rank 3× slower is rebalanced despite the noise.
        let d = decide(&[est(3.0e6, 0.1), est(1.0e6, 0.1)]);
        assert!(d.remap, "{d:?}");
        assert!(split(&d.speeds).areas()[1] < 3000, "{d:?}");
    }

    /// Exact speeds in other units than the phases' (the kernel's).
    fn merge_exact(phase: &[Option<f64>], previous: Option<&[f64]>) -> Result<Vec<f64>> {
        let exact = |mean: f64| SpeedEstimate { mean, noise: 0.0 };
        let phase: Vec<RankReport> = phase
            .iter()
            .map(|p| p.map_or(RankReport::Unknown, |m| RankReport::Phase(exact(m))))
            .collect();
        let previous: Option<Vec<SpeedEstimate>> =
            previous.map(|p| p.iter().map(|&m| exact(m)).collect());
        let merged = merge_estimates(&phase, previous.as_deref(), false)?;
        Ok(merged.iter().map(|e| e.mean).collect())
    }

    #[test]
    fn merge_fills_idle_ranks() {
        let s = merge_exact(&[Some(2.0), None, Some(6.0)], Some(&[1.0, 1.0, 3.0])).unwrap();
        assert_eq!(s, vec![2.0, 2.0, 6.0]);
        assert_eq!(
            merge_exact(&[Some(1.0), Some(3.0)], None).unwrap(),
            vec![1.0, 3.0]
        );
        assert!(merge_exact(&[None, Some(3.0)], None).is_err());
        assert!(merge_exact(&[Some(f64::NAN)], None).is_err());
    }
}
