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
//! Cost: two `Instant::now()` per section (one when [`Waiting::end`]
//! gives the section's length to its caller); thread-local, no locking.

use std::cell::Cell;
use std::time::{Duration, Instant};

/// This thread's sections: how deep they nest, the time of the closed
/// outermost ones, and the start of the open outermost one (one
/// thread-local, so that a section costs one lookup at each end).
struct Clock {
    depth: Cell<u32>,
    in_comm: Cell<Duration>,
    open: Cell<Option<Instant>>,
}

thread_local! {
    static CLOCK: Clock = const {
        Clock {
            depth: Cell::new(0),
            in_comm: Cell::new(Duration::ZERO),
            open: Cell::new(None),
        }
    };
}

/// An open communication section: while it lives, this thread's time is not
/// compute. Sections nest; only the outermost one is timed.
#[must_use = "the section ends when the guard is dropped"]
pub struct Waiting {
    start: Instant,
    outermost: bool,
}

impl Waiting {
    /// When the section opened.
    pub fn since(&self) -> Instant {
        self.start
    }

    /// Ends the section now and returns its length (one clock reading
    /// serves both; dropping the guard ends it too).
    pub fn end(self) -> Duration {
        let (now, start) = (Instant::now(), self.start);
        self.close(now);
        std::mem::forget(self);
        now - start
    }

    /// Closes the section at `now` (the outermost one's time is communication).
    fn close(&self, now: Instant) {
        CLOCK.with(|c| {
            c.depth.set(c.depth.get().saturating_sub(1));
            if self.outermost {
                c.open.set(None);
                c.in_comm.set(c.in_comm.get() + (now - self.start));
            }
        });
    }
}

impl Drop for Waiting {
    fn drop(&mut self) {
        self.close(Instant::now());
    }
}

/// Opens a section whose time is communication or waiting, not compute (for
/// the application's own collectives or any wait it does not want counted).
pub fn waiting() -> Waiting {
    let start = Instant::now();
    let outermost = CLOCK.with(|c| {
        let depth = c.depth.get();
        c.depth.set(depth + 1);
        if depth == 0 {
            c.open.set(Some(start));
        }
        depth == 0
    });
    Waiting { start, outermost }
}

/// Total time this thread has spent in communication sections, the open
/// one included up to now (so that a phase may start inside a section).
pub(crate) fn comm_time() -> Duration {
    CLOCK.with(|c| c.in_comm.get() + c.open.get().map_or(Duration::ZERO, |s| s.elapsed()))
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
