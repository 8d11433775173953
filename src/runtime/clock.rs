//! Where a rank's time goes: inside communication, computing, or lost to
//! other processes on its core.
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
//! **Waits keep the core; time off the CPU is measured.** nuce's waits poll
//! and never sleep (they yield the core every `POLLS_PER_YIELD` (1000) polls
//! only when the job's ranks oversubscribe the host, as an Open MPI wait
//! does: module `runtime::yielding`), so a waiting thread is always runnable and
//! the part of a wait's wall time that its thread did not spend on a CPU
//! (its *thread CPU time*, `CLOCK_THREAD_CPUTIME_ID`, falls behind its wall
//! time) is time another process held the core: the wait's *lost* time
//! ([`Phase::lost`], reported at every balance point).
//!
//! **What counts against a rank's speed** is its compute time: the wall time
//! outside communication, which includes every moment another process held
//! the core while the rank computed. Lost time inside a wait does not
//! count: a rank waits because it finished its share before a neighbour,
//! and giving it less work would only lengthen its wait (when every core is
//! loaded, the fast rank waits most, yields most and loses most: charging
//! that would make it look as slow as the rank it waits for). Keeping the
//! core in the waits is what lets the compute time show a shared core: a
//! rank that slept in its waits gave its competitor the core there and got
//! it back, owed, while computing (measured: equal speeds under a
//! competing busy loop before, 1.3–2 : 1 after; `docs/architecture.md`).
//!
//! Two kinds of sections measure the lost time:
//! * [`waiting`] (public; the balancer's collectives, remaps, the
//!   application's own MPI calls): reads the thread CPU time when the
//!   outermost section opens and closes (two readings of about 0.1–0.3 µs).
//! * [`polling`] (ghost exchanges, whose cost per call matters): reads
//!   nothing; the polling loop inside reports what it lost through an
//!   `OffCpu`, which reads the CPU time only once the wait has gone past
//!   its first polls (an exchange whose messages are there costs nothing).
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
//! Time off the CPU inside such a section is reported as lost to other
//! processes (a sleep or file I/O inside one would be reported too).
//!
//! Cost: two `Instant::now()` per section (one when [`Waiting::end`]
//! gives the section's length to its caller), plus two thread CPU time
//! readings for a [`waiting`] section; thread-local, no locking.

use std::cell::Cell;
use std::time::{Duration, Instant};

/// This thread's sections: how deep they nest, the time of the closed
/// outermost ones, the start of the open outermost one, the thread CPU time
/// at its start when it measures its own time off the CPU, and the time lost
/// off the CPU inside closed sections (one thread-local, so that a section
/// costs one lookup at each end).
struct Clock {
    depth: Cell<u32>,
    in_comm: Cell<Duration>,
    open: Cell<Option<Instant>>,
    open_cpu: Cell<Option<Duration>>,
    lost: Cell<Duration>,
}

thread_local! {
    static CLOCK: Clock = const {
        Clock {
            depth: Cell::new(0),
            in_comm: Cell::new(Duration::ZERO),
            open: Cell::new(None),
            open_cpu: Cell::new(None),
            lost: Cell::new(Duration::ZERO),
        }
    };
}

/// This thread's CPU time (`CLOCK_THREAD_CPUTIME_ID`); zero where the clock
/// cannot be read (nothing is then counted as lost).
pub(crate) fn thread_cpu() -> Duration {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec; the call only writes it.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    if rc != 0 {
        return Duration::ZERO;
    }
    Duration::new(
        ts.tv_sec.max(0) as u64,
        ts.tv_nsec.clamp(0, 999_999_999) as u32,
    )
}

/// The part of `wall` that the thread did not spend on a CPU, given its CPU
/// time `cpu` over the same interval (never negative).
fn off_cpu(wall: Duration, cpu: Duration) -> Duration {
    wall.saturating_sub(cpu)
}

/// Adds `d` to the time lost inside communication, when the open outermost
/// section does not measure its own ([`polling`] sections; nested in a
/// [`waiting`] section it is already counted there).
fn add_lost(d: Duration) {
    CLOCK.with(|c| {
        if c.depth.get() > 0 && c.open_cpu.get().is_none() {
            c.lost.set(c.lost.get() + d);
        }
    });
}

/// The time a polling wait spends off the CPU: started at the first poll
/// that found nothing ready ([`OffCpu::start`]: one thread CPU time reading),
/// added to the thread's lost time when stopped or dropped. The wait must
/// poll, yielding at most, and never sleep.
#[derive(Debug, Default)]
pub(crate) struct OffCpu(Option<(Instant, Duration)>);

impl OffCpu {
    /// Starts measuring at `now` (no effect once started).
    pub(crate) fn start(&mut self, now: Instant) {
        if self.0.is_none() {
            self.0 = Some((now, thread_cpu()));
        }
    }

    /// Stops measuring and books the time off the CPU since [`OffCpu::start`].
    pub(crate) fn stop(&mut self) {
        if let Some((wall, cpu)) = self.0.take() {
            add_lost(off_cpu(wall.elapsed(), thread_cpu().saturating_sub(cpu)));
        }
    }
}

impl Drop for OffCpu {
    fn drop(&mut self) {
        self.stop();
    }
}

/// The pauses of a polling wait (nuce's checkpoints and ghost exchanges):
/// they spin, and none sleeps. When the job's ranks oversubscribe the host
/// (module `runtime::yielding`: Open MPI's rule for
/// `mpi_yield_when_idle`) every [`POLLS_PER_YIELD`]-th yields the core
/// (`sched_yield`), so that ranks sharing cores with each other make way;
/// otherwise none does, so that a rank whose core another job shares gives
/// it away no more than an MPI wait would. The time the
/// thread spends off the CPU meanwhile is measured ([`OffCpu`], from the
/// first pause; booked when the `Poller` drops).
#[derive(Debug, Default)]
pub(crate) struct Poller {
    off: OffCpu,
    polls: u32,
}

/// Polls of a wait between two yields of the core (MPICH's default).
pub(crate) const POLLS_PER_YIELD: u32 = 1000;

impl Poller {
    /// One pause between two polls that found nothing.
    pub(crate) fn pause(&mut self) {
        if self.off.0.is_none() {
            self.off.start(Instant::now());
        }
        self.polls += 1;
        if self.polls >= POLLS_PER_YIELD && super::yielding::waits_yield() {
            self.polls = 0;
            std::thread::yield_now();
        } else {
            std::hint::spin_loop();
        }
    }

    /// Starts measuring the time off the CPU at `now` without pausing (a
    /// wait that spins before its first pause).
    pub(crate) fn measure_from(&mut self, now: Instant) {
        self.off.start(now);
    }
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

    /// Closes the section at `now` (the outermost one's time is
    /// communication, less what it lost off the CPU when it measures that).
    fn close(&self, now: Instant) {
        CLOCK.with(|c| {
            c.depth.set(c.depth.get().saturating_sub(1));
            if self.outermost {
                c.open.set(None);
                let wall = now - self.start;
                c.in_comm.set(c.in_comm.get() + wall);
                if let Some(cpu) = c.open_cpu.take() {
                    let lost = off_cpu(wall, thread_cpu().saturating_sub(cpu));
                    c.lost.set(c.lost.get() + lost);
                }
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
/// The time the thread spends off the CPU inside it (another process held
/// the core) is measured as lost ([`Phase::lost`]; see the module's
/// documentation).
pub fn waiting() -> Waiting {
    open(true)
}

/// A [`waiting`] section that does not read the CPU time itself: the
/// polling loop inside reports its time off the CPU through an `OffCpu`
/// (ghost exchanges: no reading when the messages are already there).
/// Public for the C API's exchanges.
pub fn polling() -> Waiting {
    open(false)
}

fn open(measured: bool) -> Waiting {
    let start = Instant::now();
    let outermost = CLOCK.with(|c| {
        let depth = c.depth.get();
        c.depth.set(depth + 1);
        if depth == 0 {
            c.open.set(Some(start));
            c.open_cpu.set(measured.then(thread_cpu));
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

/// Total time this thread has lost off the CPU inside closed communication
/// sections (another process held its core while it waited).
pub(crate) fn lost_time() -> Duration {
    CLOCK.with(|c| c.lost.get())
}

/// A balance point: the start of a phase, from which [`Phase::compute`]
/// measures the compute time.
#[derive(Debug, Clone, Copy)]
pub struct Phase {
    wall: Instant,
    comm: Duration,
    lost: Duration,
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
            lost: lost_time(),
        }
    }

    /// Wall time since the start of the phase minus the communication time
    /// since then: this rank's compute time (another process's time on the
    /// core while the rank computed included).
    pub fn compute(&self) -> Duration {
        let comm = comm_time().saturating_sub(self.comm);
        self.wall.elapsed().saturating_sub(comm)
    }

    /// The time this thread lost off the CPU inside nuce's communication
    /// since the start of the phase (another process held its core while it
    /// waited; not part of [`Phase::compute`], see the module's documentation).
    pub fn lost(&self) -> Duration {
        lost_time().saturating_sub(self.lost)
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

    /// A sleep is time off the CPU: deterministic, whatever the load.
    fn nap() {
        std::thread::sleep(Duration::from_millis(40));
    }

    #[test]
    fn time_off_the_cpu_in_a_waiting_section_is_lost_not_compute() {
        let phase = Phase::start();
        {
            let _w = waiting();
            nap();
            {
                let _inner = polling(); // nested: counted once, by the outer section
                let mut off = OffCpu::default();
                off.start(Instant::now());
                nap();
            }
        }
        let lost = phase.lost().as_secs_f64();
        assert!((0.075..0.5).contains(&lost), "lost {lost}");
        // Lost inside a wait is not compute: the phase computed nothing.
        let (compute, wall) = (phase.compute().as_secs_f64(), phase.wall().as_secs_f64());
        assert!(compute < 0.03 && wall >= lost, "{compute} {wall}");
    }

    #[test]
    fn a_polling_section_loses_only_what_its_wait_reports() {
        let phase = Phase::start();
        {
            let _p = polling();
            nap(); // not inside a measuring wait: not lost
            let mut off = OffCpu::default();
            off.start(Instant::now());
            nap(); // inside it: lost
            off.stop();
            nap(); // stopped: not lost
        }
        let lost = phase.lost().as_secs_f64();
        assert!((0.035..0.075).contains(&lost), "lost {lost}");
        // Outside any section an OffCpu books nothing (there is no wait).
        let before = lost_time();
        let mut off = OffCpu::default();
        off.start(Instant::now());
        nap();
        drop(off);
        assert_eq!(lost_time(), before);
    }

    #[test]
    fn lost_is_the_wait_less_its_cpu_time() {
        // A spinning wait: what it loses is exactly what the scheduler took
        // meanwhile (its wall time less its thread CPU time), whatever the load.
        let phase = Phase::start();
        let cpu0 = thread_cpu();
        let t0 = Instant::now();
        {
            let _w = waiting();
            spin(Duration::from_millis(60));
        }
        let (wall, cpu) = (t0.elapsed(), thread_cpu() - cpu0);
        assert!(
            cpu > Duration::from_millis(1),
            "the thread CPU clock reads: {cpu:?}"
        );
        let lost = phase.lost().as_secs_f64();
        let expected = (wall.saturating_sub(cpu)).as_secs_f64();
        assert!(
            (lost - expected).abs() < 2e-3,
            "lost {lost}, expected {expected}"
        );
    }
}
