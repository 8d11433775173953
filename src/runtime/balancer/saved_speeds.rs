//! The balancer's speed state in a checkpoint (issue 29): every rank's
//! planned speed, its estimate with its noise, the units they are in, and
//! every rank's speed function of its timed phases (the functional model).
//! [`Balancer::saved_speeds`] captures it for a save file
//! ([`Grid::checkpoint`], [`DistArray2::checkpoint`]); a restart on the same
//! number of ranks starts from it ([`SavedSpeeds::restore`]): the first
//! plan is the saved plan and no measurement is needed, while a restart on
//! another number of ranks only reports it ([`crate::SavedGrid::speeds`],
//! [`crate::SavedGraph::speeds`]) and measures the new ranks.

use super::*;

/// The speed state of the balancer that wrote a checkpoint, one entry per
/// rank that wrote it (see the module's documentation).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SavedSpeeds {
    /// Every rank's speed as planned ([`Measured::speeds`]: snapped within
    /// the noise), in work units per second.
    pub speeds: Vec<f64>,
    /// Every rank's estimate with its relative noise, before snapping
    /// ([`Measured::speed_estimates`]).
    pub estimates: Vec<SpeedEstimate>,
    /// Whether the estimates are in the units of the application's phases
    /// (else the built-in kernel's, or the application's own of
    /// [`Balancer::set_speeds`]).
    pub phase_units: bool,
    /// Every rank's speed function of its timed phases (work per
    /// iteration → seconds per iteration; [`Measured::speed_function`]),
    /// `None` for a rank that had none (or only a size sweep's, whose
    /// points are in the kernel's units).
    pub functions: Vec<Option<SpeedFunction>>,
}

impl SavedSpeeds {
    /// The number of ranks it describes.
    pub fn ranks(&self) -> usize {
        self.speeds.len()
    }

    /// An error unless it describes `ranks` ranks with valid speeds (a
    /// corrupt or foreign file otherwise; pure).
    pub(crate) fn check(&self, ranks: usize) -> Result<()> {
        let n = self.speeds.len();
        if n != ranks || self.estimates.len() != n || self.functions.len() != n {
            return Err(Error::invalid_input(format!(
                "saved speeds of {n} ranks, {} estimates and {} functions for {ranks} ranks (a corrupt file)",
                self.estimates.len(),
                self.functions.len()
            )));
        }
        let means: Vec<f64> = self.estimates.iter().map(|e| e.mean).collect();
        let noisy = self
            .estimates
            .iter()
            .any(|e| !(e.noise.is_finite() && e.noise >= 0.0));
        match crate::plan::check_speeds(&self.speeds)
            .and_then(|()| crate::plan::check_speeds(&means))
        {
            Ok(()) if !noisy => Ok(()),
            Ok(()) => Err(Error::invalid_input(
                "saved speeds: a noise is negative or not finite (a corrupt file)",
            )),
            Err(e) => Err(Error::invalid_input(format!(
                "saved speeds: {e} (a corrupt file)"
            ))),
        }
    }
}

impl Balancer {
    /// The balancer's speed state for a checkpoint (collective: every
    /// rank's speed function is gathered at the root; `None` on the other
    /// ranks, and everywhere when no speeds are known yet: nothing
    /// measured, set or timed).
    pub(crate) fn saved_speeds(&self) -> Result<Option<SavedSpeeds>> {
        let _w = waiting();
        let functions = gather_values(&self.comm, ROOT, &self.own.phase_function().cloned())?;
        Ok(functions.and_then(|f| self.book.saved(f)))
    }
}

impl SavedSpeeds {
    /// Makes `balancer` start from this speed state of a checkpoint when it
    /// describes as many ranks as the balancer's communicator has (local,
    /// the same result on every rank as the state is the same on every rank
    /// of a restart): the speeds, estimates and their units are the saved
    /// ones, and this rank's speed function is the saved one of the rank
    /// of the same number, so the next plan is the one the saved speeds
    /// gave (the saved plan when nothing else changed) and the next
    /// balance point needs no fresh measurement. Returns whether it did;
    /// on another number of ranks nothing changes: measure the ranks
    /// ([`Balancer::measure`]). The restarts of
    /// [`SavedGrid`](crate::SavedGrid) and [`SavedGraph`](crate::SavedGraph)
    /// call it themselves when no speeds are known yet.
    pub fn restore(&self, balancer: &mut Balancer) -> bool {
        let p = balancer.comm.size() as usize;
        if self.check(p).is_err() {
            return false;
        }
        balancer.book.restore(self);
        balancer
            .own
            .restored(self.functions[balancer.comm.rank() as usize].clone());
        true
    }
}

impl Balancer {
    /// [`SavedSpeeds::restore`] when the balancer knows no speeds yet
    /// and the checkpoint holds some (a restart's first plan).
    pub(crate) fn restore_if_unmeasured(&mut self, saved: Option<&SavedSpeeds>) {
        if let (None, Some(s)) = (self.book.speeds(), saved) {
            s.restore(self);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn saved(n: usize) -> SavedSpeeds {
        SavedSpeeds {
            speeds: vec![2.0; n],
            estimates: vec![
                SpeedEstimate {
                    mean: 2.0,
                    noise: 0.01
                };
                n
            ],
            phase_units: true,
            functions: vec![None; n],
        }
    }

    #[test]
    fn saved_speeds_are_checked_against_the_ranks_and_their_values() {
        assert!(saved(3).check(3).is_ok());
        assert!(saved(3)
            .check(2)
            .unwrap_err()
            .to_string()
            .contains("corrupt"));
        let mut s = saved(3);
        s.functions.pop();
        assert!(s.check(3).is_err());
        let mut s = saved(3);
        s.speeds[1] = f64::NAN;
        assert!(s.check(3).unwrap_err().to_string().contains("corrupt"));
        let mut s = saved(3);
        s.estimates[2].noise = -1.0;
        assert!(s.check(3).unwrap_err().to_string().contains("noise"));
    }
}
