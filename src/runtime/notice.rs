//! Leave notices: a signal that tells this rank it must leave the job
//! (a batch system's preemption notice, a drain), caught for the
//! application and turned into a departure at the next balance point.
//!
//! [`catch_leave_signal`] installs a handler for one signal (`SIGTERM`,
//! `SIGUSR1`, …) that only sets a flag ([`leave_signalled`]) and then calls
//! the handler the application had installed for it before, if any: the
//! application's own handling stays in control, and the signal no longer
//! ends the process by default. [`Balancer::depart`] counts a rank whose
//! flag is set as leaving whatever it is passed, so an application that
//! already calls `depart(false)` at its balance points needs one more line
//! at start-up.
//!
//! A signal sent to the launcher (`mpirun`, `srun`) usually reaches every
//! rank; every rank then leaves, which [`Balancer::depart`] refuses on every
//! rank (save a checkpoint and end instead). Send the notice to the ranks
//! that must go (`kill -USR1 <pid>`; Slurm: `--signal`).
//!
//! [`Balancer::depart`]: crate::Balancer::depart

use std::os::raw::{c_int, c_void};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use crate::error::{Error, Result};

/// Signals that may carry a leave notice: those a batch system or an
/// operator sends to ask a process to end (not the ones that report a
/// fault, which cannot be returned from).
const NOTICES: [(c_int, &str); 6] = [
    (libc::SIGTERM, "SIGTERM"),
    (libc::SIGINT, "SIGINT"),
    (libc::SIGHUP, "SIGHUP"),
    (libc::SIGUSR1, "SIGUSR1"),
    (libc::SIGUSR2, "SIGUSR2"),
    (libc::SIGXCPU, "SIGXCPU"),
];

/// The names of [`NOTICES`], for errors.
fn notice_names() -> String {
    let names: Vec<&str> = NOTICES.iter().map(|&(_, n)| n).collect();
    names.join(", ")
}

/// Set by the handler: a leave notice arrived.
static SIGNALLED: AtomicBool = AtomicBool::new(false);

/// Per entry of [`NOTICES`]: the handler installed before nuce's (0 none,
/// or nuce's not installed), and whether it takes `siginfo_t`.
static PREVIOUS: [AtomicUsize; NOTICES.len()] = [const { AtomicUsize::new(0) }; NOTICES.len()];
static PREVIOUS_INFO: [AtomicBool; NOTICES.len()] =
    [const { AtomicBool::new(false) }; NOTICES.len()];
/// Per entry of [`NOTICES`]: nuce's handler is installed.
static INSTALLED: [AtomicBool; NOTICES.len()] = [const { AtomicBool::new(false) }; NOTICES.len()];

/// The index of `signal` in [`NOTICES`].
fn slot(signal: c_int) -> Option<usize> {
    NOTICES.iter().position(|&(s, _)| s == signal)
}

/// The handler: sets the flag, then chains to the application's handler.
/// Async-signal-safe: atomics and a call through a function pointer only.
extern "C" fn on_notice(signal: c_int, info: *mut libc::siginfo_t, context: *mut c_void) {
    SIGNALLED.store(true, Ordering::SeqCst);
    let Some(k) = slot(signal) else { return };
    let prev = PREVIOUS[k].load(Ordering::SeqCst);
    if prev == 0 {
        return;
    }
    if PREVIOUS_INFO[k].load(Ordering::SeqCst) {
        // SAFETY: `prev` is the `sa_sigaction` of the action replaced, which
        // had SA_SIGINFO: a handler of this signature.
        let f: extern "C" fn(c_int, *mut libc::siginfo_t, *mut c_void) =
            unsafe { std::mem::transmute(prev) };
        f(signal, info, context);
    } else {
        // SAFETY: `prev` is the `sa_handler` of the action replaced (not
        // SIG_DFL, SIG_IGN or SIG_ERR, filtered when saved).
        let f: extern "C" fn(c_int) = unsafe { std::mem::transmute(prev) };
        f(signal);
    }
}

/// Catches `signal` as this rank's leave notice (local): from now on the
/// signal sets [`leave_signalled`] and calls the handler installed for it
/// before (none: the signal no longer ends the process). Allowed: `SIGTERM`,
/// `SIGINT`, `SIGHUP`, `SIGUSR1`, `SIGUSR2`, `SIGXCPU`; calling it again for
/// the same signal changes nothing. Install your own handler for the signal
/// first if you have one, so that nuce's calls it.
pub fn catch_leave_signal(signal: i32) -> Result<()> {
    let k = slot(signal).ok_or_else(|| {
        Error::invalid_input(format!(
            "signal {signal} cannot be a leave notice: use one of {}",
            notice_names()
        ))
    })?;
    // Claimed once: a second call (or thread) never chains nuce's handler
    // to itself.
    if INSTALLED[k]
        .compare_exchange(false, true, Ordering::SeqCst, Ordering::SeqCst)
        .is_err()
    {
        return Ok(());
    }
    // SAFETY: plain-old-data structures, zeroed then filled; sigaction
    // reads `act` and writes `old`.
    unsafe {
        let mut act: libc::sigaction = std::mem::zeroed();
        act.sa_sigaction = on_notice as *const () as usize;
        act.sa_flags = libc::SA_SIGINFO | libc::SA_RESTART;
        libc::sigemptyset(&mut act.sa_mask);
        let mut old: libc::sigaction = std::mem::zeroed();
        if libc::sigaction(signal, &act, &mut old) != 0 {
            INSTALLED[k].store(false, Ordering::SeqCst);
            return Err(Error::invalid_input(format!(
                "sigaction({}) failed: {}",
                NOTICES[k].1,
                std::io::Error::last_os_error()
            )));
        }
        let h = old.sa_sigaction;
        let real = h != libc::SIG_DFL && h != libc::SIG_IGN && h != libc::SIG_ERR;
        PREVIOUS[k].store(if real { h } else { 0 }, Ordering::SeqCst);
        PREVIOUS_INFO[k].store(old.sa_flags & libc::SA_SIGINFO != 0, Ordering::SeqCst);
    }
    Ok(())
}

/// The number of leave-notice signal `name` (`"SIGTERM"` or `"TERM"`, any
/// case), for bindings without the C constants (Fortran).
pub fn leave_signal_number(name: &str) -> Result<i32> {
    let up = name.trim().to_ascii_uppercase();
    let full = if up.starts_with("SIG") {
        up
    } else {
        format!("SIG{up}")
    };
    NOTICES
        .iter()
        .find(|&&(_, n)| n == full)
        .map(|&(s, _)| s)
        .ok_or_else(|| {
            Error::invalid_input(format!(
                "{name:?} is not a leave-notice signal: use one of {}",
                notice_names()
            ))
        })
}

/// True once a signal caught by [`catch_leave_signal`] arrived on this
/// rank (local). It stays set: a rank told to leave leaves.
pub fn leave_signalled() -> bool {
    SIGNALLED.load(Ordering::SeqCst)
}

#[cfg(test)]
mod tests {
    use super::*;

    static APP_SAW: AtomicBool = AtomicBool::new(false);

    extern "C" fn app_handler(_: c_int) {
        APP_SAW.store(true, Ordering::SeqCst);
    }

    #[test]
    fn a_caught_signal_sets_the_flag_and_calls_the_application_handler() {
        // SAFETY: installing a plain handler for SIGUSR2 in this test process.
        unsafe { libc::signal(libc::SIGUSR2, app_handler as *const () as usize) };
        catch_leave_signal(libc::SIGUSR2).unwrap();
        catch_leave_signal(libc::SIGUSR2).unwrap();
        assert!(!APP_SAW.load(Ordering::SeqCst));
        // SAFETY: raising a signal whose handlers are installed above.
        assert_eq!(unsafe { libc::raise(libc::SIGUSR2) }, 0);
        assert!(leave_signalled());
        assert!(APP_SAW.load(Ordering::SeqCst));
    }

    #[test]
    fn names_give_the_numbers() {
        assert_eq!(leave_signal_number("SIGTERM").unwrap(), libc::SIGTERM);
        assert_eq!(leave_signal_number(" usr1 ").unwrap(), libc::SIGUSR1);
        assert!(leave_signal_number("SEGV").is_err());
    }

    #[test]
    fn fault_signals_are_refused() {
        for s in [libc::SIGSEGV, libc::SIGKILL, 0, -1, 1000] {
            let e = catch_leave_signal(s).unwrap_err().to_string();
            assert!(e.contains("cannot be a leave notice"), "{e}");
        }
    }
}
