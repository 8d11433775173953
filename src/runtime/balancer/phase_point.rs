//! A balance point that holds no data of nuce's (the ownership ranges of
//! a PETSc DMDA, whose data PETSc moves): the phases timed since the
//! previous balance point become the balancer's speeds, as at
//! [`Balancer::maybe_remap`], before the caller plans with them.
//!
//! A rank's phase is the one it recorded ([`Balancer::record_phase`]):
//! nuce does not time such a phase itself, since it knows neither the
//! work of the rank (the application's data) nor which of its MPI calls
//! are waits (a solver's reductions would count as compute and make every
//! rank look equally fast). A rank that recorded none reports nothing and
//! keeps its previous estimate; the speeds of [`Balancer::measure`],
//! [`Balancer::set_speeds`] or the last [`Balancer::maybe_remap`] hold
//! until a phase is recorded.

use super::*;

impl Balancer {
    /// A balance point for data nuce does not hold (a PETSc DMDA's or
    /// DMPlex's, whose data PETSc moves): the phases the ranks recorded
    /// since the previous balance point ([`Balancer::record_phase`]) become
    /// the speeds ([`Measured::speeds`]), merged with the earlier estimates
    /// for ranks that recorded none; no rank recorded one: the speeds stay
    /// as they are. Collective. [`OwnershipRanges::new`](crate::OwnershipRanges::new) does this
    /// first; call it before reading the speeds for a partitioner of one's
    /// own. Errors, the same on every rank: some ranks recorded a phase and
    /// others have no speed at all (measure or set the speeds first).
    pub fn update_speeds(&mut self) -> Result<()> {
        let _w = waiting();
        self.arrive("Balancer::update_speeds")?;
        self.take_recorded_speeds()
    }

    /// [`Balancer::update_speeds`] after the caller's checked entry: the
    /// phases recorded since the last balance point become the speeds, and
    /// the next phase is timed from here (collective).
    pub(crate) fn take_recorded_speeds(&mut self) -> Result<()> {
        let report = if self.own.recorded() {
            self.local_report(0.0)
        } else {
            RankReport::Unknown
        };
        self.take_phase_speeds(report)?;
        self.mark();
        Ok(())
    }

    /// Gathers every rank's `report` of its phase at the root, merges it
    /// with the previous estimates ([`SpeedBook::merge_phase`](super::SpeedBook::merge_phase)), snaps the speeds
    /// the noise cannot tell apart ([`snap_speeds`]) and broadcasts them as
    /// the balancer's speeds; no rank with a phase: the speeds stay as they
    /// are. Returns the speeds (uniform when there are none). Collective.
    /// Errors, the same on every rank: some ranks timed a phase and others
    /// have neither a phase nor an earlier speed (call
    /// [`Balancer::measure`] or [`Balancer::set_speeds`] first), a speed
    /// that is not a finite positive number.
    pub(super) fn take_phase_speeds(&mut self, report: RankReport) -> Result<Vec<f64>> {
        let _w = waiting();
        let gathered = self.gather_at_root(&report)?;
        let merged = root_compute(&self.comm, ROOT, || {
            let phase = gathered.ok_or_else(|| Error::invalid_input("no phase speeds at root"))?;
            self.book.merge_phase(&phase)
        })?;
        if let Some((speeds, estimates)) = merged {
            info!(?speeds, ?estimates, "phase speeds");
            self.book.learn_phase(speeds, estimates);
        }
        Ok(self
            .book
            .speeds()
            .map_or_else(|| vec![1.0; self.comm.size() as usize], <[f64]>::to_vec))
    }
}
