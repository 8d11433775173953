//! Where a rank's time goes: inside communication, or computing.
//!
//! The [`Balancer`](super::balancer::Balancer) measures every rank's compute
//! time by itself: the wall time between two balance points minus the time
//! spent inside nuce's own communication (ghost exchanges, remaps, scatters,
//! gathers, the balancer's collectives). Every such call opens a
//! communication section; the time of the outermost open section is added to
//! this thread's communication clock. An application that times nothing
//! therefore gets correct speeds, and waiting for a slow neighbour inside a
//! ghost exchange is never counted as work.
//!
//! The application's *own* MPI calls (a residual all-reduce, say) are not
//! nuce's and count as compute unless wrapped in [`waiting`]:
//!
//! ```no_run
//! # fn allreduce_residual() {}
//! let _w = nuce::waiting(); // until `_w` drops: not compute
//! allreduce_residual();
//! ```
//!
//! Cost: two `Instant::now()` per section; thread-local, no locking.

use std::cell::Cell;
use std::time::{Duration, Instant};

thread_local! {
    static DEPTH: Cell<u32> = const { Cell::new(0) };
    static IN_COMM: Cell<Duration> = const { Cell::new(Duration::ZERO) };
    /// Start of the open outermost section, if any.
    static OPEN: Cell<Option<Instant>> = const { Cell::new(None) };
}

/// An open communication section: while it lives, this thread's time is not
/// compute. Sections nest; only the outermost one is timed.
#[must_use = "the section ends when the guard is dropped"]
pub struct Waiting {
    start: Option<Instant>,
}

impl Drop for Waiting {
    fn drop(&mut self) {
        DEPTH.with(|d| d.set(d.get().saturating_sub(1)));
        if let Some(s) = self.start {
            OPEN.with(|o| o.set(None));
            IN_COMM.with(|c| c.set(c.get() + s.elapsed()));
        }
    }
}

impl Waiting {
    /// When the section opened (now, for a nested one: only the outermost
    /// is timed).
    pub fn since(&self) -> Instant {
        self.start.unwrap_or_else(Instant::now)
    }
}

/// Opens a section whose time is communication or waiting, not compute (for
/// the application's own collectives or any wait it does not want counted).
pub fn waiting() -> Waiting {
    let outermost = DEPTH.with(|d| {
        let v = d.get();
        d.set(v + 1);
        v == 0
    });
    let start = outermost.then(Instant::now);
    if start.is_some() {
        OPEN.with(|o| o.set(start));
    }
    Waiting { start }
}

/// Total time this thread has spent in communication sections, the open
/// one included up to now (so that a phase may start inside a section).
pub(crate) fn comm_time() -> Duration {
    let open = OPEN.with(Cell::get).map_or(Duration::ZERO, |s| s.elapsed());
    IN_COMM.with(Cell::get) + open
}

/// A balance point: the start of a phase, from which [`Phase::compute`]
/// measures the compute time.
#[derive(Debug, Clone, Copy)]
pub struct Phase {
    wall: Instant,
    comm: Duration,
}

impl Default for Phase {
    fn default() -> Self {
        Phase::start()
    }
}

impl Phase {
    /// A phase starting now.
    pub fn start() -> Phase {
        Phase {
            wall: Instant::now(),
            comm: comm_time(),
        }
    }

    /// Wall time since the start of the phase minus the communication time
    /// since then: this rank's compute time.
    pub fn compute(&self) -> Duration {
        let comm = comm_time().saturating_sub(self.comm);
        self.wall.elapsed().saturating_sub(comm)
    }

    /// Wall time since the start of the phase.
    pub fn wall(&self) -> Duration {
        self.wall.elapsed()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spin(d: Duration) {
        let t = Instant::now();
        while t.elapsed() < d {
            std::hint::spin_loop();
        }
    }

    #[test]
    fn sections_are_not_compute_and_nest() {
        // What is checked is the accounting, not the machine's timing: the
        // compute time equals the wall time minus the outer section's own
        // duration, whatever the scheduler did meanwhile.
        let phase = Phase::start();
        spin(Duration::from_millis(20));
        let outer = Instant::now();
        {
            let _a = waiting();
            spin(Duration::from_millis(30));
            {
                let _b = waiting(); // nested: not counted twice
                spin(Duration::from_millis(30));
            }
        }
        let in_section = outer.elapsed().as_secs_f64();
        let (compute, wall) = (phase.compute().as_secs_f64(), phase.wall().as_secs_f64());
        assert!(
            in_section >= 0.06 && wall >= in_section + 0.02,
            "{wall} {in_section}"
        );
        let expected = wall - in_section;
        assert!(
            (compute - expected).abs() < 1e-3,
            "compute {compute}, expected {expected}"
        );
    }

    #[test]
    fn a_phase_may_start_inside_a_section() {
        let (phase, after_start) = {
            let _a = waiting();
            spin(Duration::from_millis(30)); // before the phase: not its time
            let phase = Phase::start();
            spin(Duration::from_millis(10)); // the phase's, but communication
            (phase, phase.wall())
        };
        let section_end = phase.wall().as_secs_f64();
        spin(Duration::from_millis(20));
        let (compute, wall) = (phase.compute().as_secs_f64(), phase.wall().as_secs_f64());
        assert!(after_start.as_secs_f64() >= 0.01);
        // Only the time after the section counts.
        let expected = wall - section_end;
        assert!(expected >= 0.02);
        assert!(
            (compute - expected).abs() < 1e-3,
            "compute {compute}, expected {expected}"
        );
    }
}
