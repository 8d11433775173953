//! Whether nuce's waits yield the core: Open MPI's rule, by default.
//!
//! nuce's waits (checkpoints, ghost exchanges) poll and never sleep
//! ([`Poller`](super::clock)). Yielding the core between polls
//! (`sched_yield`) helps when the job's own ranks share cores: the rank
//! waited for gets the core sooner. It costs dearly when the core is shared
//! with *another* job: the scheduler then hands the core to the competitor
//! at every yield (measured on Linux 6.18 against one busy loop per core: a
//! wait that yields every 1000 polls kept 6 % of its core, a plain
//! `MPI_Recv` of Open MPI kept 50 %; BENCHMARKS.md), the rank's wait is
//! spent off the CPU, and the competitor's share shows where nuce cannot
//! see it.
//!
//! So nuce yields as Open MPI does by default (`mpi_yield_when_idle`): only
//! when the host runs more of the job's ranks than it has CPUs online. The
//! number of the job's ranks on this host is the launcher's
//! (`OMPI_COMM_WORLD_LOCAL_SIZE` from Open MPI, `MPI_LOCALNRANKS` from
//! MPICH's Hydra); when no launcher tells it, waits yield (the safe side for
//! a job oversubscribed by its own ranks). [`ENV_WAIT_YIELD`] overrides the
//! rule: `always`, `never` or `auto` (the default).

use std::sync::OnceLock;

use crate::error::{Error, Result};

/// Environment variable: whether nuce's waits yield the core (`auto`,
/// `always` or `never`; unset is `auto`, see the module doc). A malformed
/// value is an error of [`Balancer::new`](crate::Balancer::new) on every
/// rank.
pub const ENV_WAIT_YIELD: &str = "NUCE_WAIT_YIELD";

/// The launchers' variables for the number of the job's ranks on this host.
const LOCAL_SIZE: [&str; 2] = ["OMPI_COMM_WORLD_LOCAL_SIZE", "MPI_LOCALNRANKS"];

/// [`ENV_WAIT_YIELD`]'s value: `Some(true)` always, `Some(false)` never,
/// `None` auto.
pub fn wait_yield_from_env() -> Result<Option<bool>> {
    parse_wait_yield(std::env::var(ENV_WAIT_YIELD).ok().as_deref())
}

fn parse_wait_yield(v: Option<&str>) -> Result<Option<bool>> {
    match v.map(|s| s.trim().to_ascii_lowercase()).as_deref() {
        None | Some("auto") => Ok(None),
        Some("always") => Ok(Some(true)),
        Some("never") => Ok(Some(false)),
        Some(_) => Err(Error::invalid_input(format!(
            "{ENV_WAIT_YIELD}={:?}: expected auto, always or never",
            v.unwrap_or_default()
        ))),
    }
}

/// Whether a host with `cpus` CPUs online running `local` of the job's
/// ranks (`None`: unknown) is oversubscribed by the job.
fn oversubscribed(local: Option<usize>, cpus: usize) -> bool {
    local.is_none_or(|n| n > cpus)
}

/// The CPUs online on this host (not this process's affinity mask: a
/// launcher that binds each rank to one core leaves the host's cores to the
/// other ranks).
fn cpus_online() -> usize {
    // SAFETY: sysconf reads a system value; no memory is passed.
    let n = unsafe { libc::sysconf(libc::_SC_NPROCESSORS_ONLN) };
    usize::try_from(n).unwrap_or(1).max(1)
}

/// Whether nuce's waits yield the core (decided once per process: the
/// setting, else the job's ranks on this host against its CPUs).
pub(crate) fn waits_yield() -> bool {
    static Y: OnceLock<bool> = OnceLock::new();
    *Y.get_or_init(|| {
        wait_yield_from_env().ok().flatten().unwrap_or_else(|| {
            let local = LOCAL_SIZE
                .iter()
                .find_map(|k| std::env::var(k).ok()?.trim().parse().ok());
            oversubscribed(local, cpus_online())
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_setting_parses_or_names_the_choices() {
        assert_eq!(parse_wait_yield(None).unwrap(), None);
        assert_eq!(parse_wait_yield(Some("auto")).unwrap(), None);
        assert_eq!(parse_wait_yield(Some(" Always")).unwrap(), Some(true));
        assert_eq!(parse_wait_yield(Some("never")).unwrap(), Some(false));
        let e = parse_wait_yield(Some("sometimes")).unwrap_err().to_string();
        assert!(e.contains("NUCE_WAIT_YIELD=\"sometimes\""), "{e}");
        assert!(e.contains("auto, always or never"), "{e}");
    }

    #[test]
    fn waits_yield_only_when_the_job_oversubscribes_the_host() {
        assert!(!oversubscribed(Some(2), 2));
        assert!(!oversubscribed(Some(1), 64));
        assert!(oversubscribed(Some(3), 2));
        assert!(oversubscribed(None, 128));
    }
}
