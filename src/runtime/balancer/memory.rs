//! Memory limits: the most cells each rank may hold, declared or read from
//! the machine, and kept by the root, which caps every plan by them.

use super::*;

impl Balancer {
    /// Declares the most cells this rank can hold (`None`: no limit).
    /// Collective: every rank passes its own limit, the root keeps them.
    /// From then on the plans of 2D arrays and 3D grids
    /// ([`Balancer::plan`], [`Balancer::plan3`] and the remaps of
    /// [`Balancer::maybe_remap`]) never give a rank more cells than its
    /// limit: the shares are capped ([`crate::plan::fpm::functional_shares`])
    /// and a layout whose rounding still exceeds a limit is planned again
    /// tighter ([`PlanningModel::plan_within_caps`]); when no layout fits
    /// (the limits hold fewer cells than the array) every rank gets the same
    /// error. Graphs and arrays with a cost field do not support limits
    /// (an error at their balance point). A limit in bytes is
    /// `Some(bytes / bytes_per_cell)` (`bytes_per_cell`: the bytes of one
    /// cell in all the rank's fields); from the machine's memory:
    /// [`Balancer::set_memory_limit_from_machine`].
    pub fn set_memory_limit(&mut self, cells: Option<usize>) -> Result<()> {
        let _w = waiting();
        self.arrive("Balancer::set_memory_limit")?;
        self.store_limits(cells)
    }

    /// Sets this rank's memory limit from its machine's memory and returns
    /// it, in cells (collective: every rank calls it, each with its own
    /// arguments). The machine's memory is hwloc's
    /// ([`crate::speed::machine_memory`]: the memory of the NUMA nodes this
    /// process may use), divided evenly among the balancer's ranks on the
    /// same host (its shared-memory group: [`Balancer::detect_hosts`]'s
    /// hosts once known, else an `MPI_Comm_split_type`); `fraction` of
    /// that share, in `(0, 1]`, is for the cells, the rest a safety margin
    /// for the operating system, MPI, the program and its other data (see
    /// [`MEMORY_FRACTION`]); `bytes_per_cell` is one cell's bytes in all
    /// the rank's fields (e.g. 16 for two `f64` fields). The limit is
    /// `⌊fraction × memory / ranks on the host / bytes_per_cell⌋` cells,
    /// and acts as [`Balancer::set_memory_limit`]'s. Processes outside the
    /// balancer's communicator and memory cgroup or batch-system limits
    /// are not counted: declare those with [`Balancer::set_memory_limit`].
    ///
    /// Errors, the same on every rank: `bytes_per_cell` not a finite
    /// number > 0 or `fraction` not in `(0, 1]` on some rank (the lowest
    /// such rank's error), hwloc reporting no memory on some rank (no
    /// guess), a share that holds no cell.
    pub fn set_memory_limit_from_machine(
        &mut self,
        bytes_per_cell: f64,
        fraction: f64,
    ) -> Result<usize> {
        let _w = waiting();
        let refused = check_memory_share(bytes_per_cell, fraction).err();
        self.cp.check_refusing(
            &self.comm,
            "Balancer::set_memory_limit_from_machine",
            refused.as_ref(),
        )?;
        let rank = self.comm.rank() as usize;
        let on_host = match self.hosts.as_ref().and_then(|h| {
            let mine = *h.host_of.get(rank)?;
            Some(h.host_of.iter().filter(|&&x| x == mine).count())
        }) {
            Some(n) => n,
            None => self.comm.split_shared(self.comm.rank()).size() as usize,
        };
        let local = crate::speed::machine_memory()
            .ok_or_else(|| {
                Error::invalid_input(
                    "Balancer::set_memory_limit_from_machine: hwloc reports no memory for this \
                     machine; declare the limit with Balancer::set_memory_limit",
                )
            })
            .and_then(|bytes| cells_in_memory(bytes, on_host, bytes_per_cell, fraction));
        let cells = agree(&self.comm, ROOT, local)?;
        self.store_limits(Some(cells))?;
        Ok(cells)
    }

    /// Gathers every rank's limit at the root (collective): the root keeps
    /// them when some rank has one.
    fn store_limits(&mut self, cells: Option<usize>) -> Result<()> {
        let all = gather_values(&self.comm, ROOT, &cells)?;
        let caps = root_compute(&self.comm, ROOT, || {
            let all = all.ok_or_else(|| Error::invalid_input("no limits at root"))?;
            Ok(all
                .iter()
                .any(Option::is_some)
                .then(|| all.iter().map(|c| c.unwrap_or(usize::MAX)).collect()))
        })?;
        self.book.set_memory_limits(caps);
        Ok(())
    }
}

/// A suggested `fraction` of [`Balancer::set_memory_limit_from_machine`]:
/// the cells may use 40 % of the rank's share of the machine's memory. A
/// remap holds a rank's old and new blocks at once, with the messages
/// between them (up to about twice the limit), and the operating system,
/// MPI and the program need the rest.
pub const MEMORY_FRACTION: f64 = 0.4;

/// `x` for messages: in scientific notation from 10^15 on.
fn number(x: f64) -> String {
    if x.abs() >= 1e15 {
        format!("{x:e}")
    } else {
        format!("{x}")
    }
}

/// Checks the arguments of [`Balancer::set_memory_limit_from_machine`].
fn check_memory_share(bytes_per_cell: f64, fraction: f64) -> Result<()> {
    if !(bytes_per_cell.is_finite() && bytes_per_cell > 0.0) {
        return Err(Error::invalid_input(format!(
            "Balancer::set_memory_limit_from_machine: bytes_per_cell = {} is not a finite number \
             > 0",
            number(bytes_per_cell)
        )));
    }
    if !(fraction > 0.0 && fraction <= 1.0) {
        return Err(Error::invalid_input(format!(
            "Balancer::set_memory_limit_from_machine: fraction = {fraction} is not in (0, 1]"
        )));
    }
    Ok(())
}

/// The cells of `bytes_per_cell` bytes in `fraction` of `1 / on_host` of
/// `bytes` (rounded down); an error when that is not one cell.
fn cells_in_memory(
    bytes: u64,
    on_host: usize,
    bytes_per_cell: f64,
    fraction: f64,
) -> Result<usize> {
    check_memory_share(bytes_per_cell, fraction)?;
    let share = bytes as f64 * fraction / on_host.max(1) as f64;
    let cells = (share / bytes_per_cell).floor();
    if cells < 1.0 {
        return Err(Error::invalid_input(format!(
            "Balancer::set_memory_limit_from_machine: this rank's share of its machine's memory \
             ({fraction} of {bytes} bytes over {on_host} ranks on the host: {share:.0} bytes) \
             holds no cell of {} bytes",
            number(bytes_per_cell)
        )));
    }
    // Below `usize::MAX`, which means "no limit".
    Ok(if cells >= (usize::MAX - 1) as f64 {
        usize::MAX - 1
    } else {
        cells as usize
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memory_shares_in_cells() {
        // 16 GiB over 4 ranks, half of it, 16-byte cells: 2^27 cells.
        assert_eq!(cells_in_memory(16 << 30, 4, 16.0, 0.5).unwrap(), 1 << 27);
        // Rounded down: 1000 bytes hold 333 cells of 3 bytes.
        assert_eq!(cells_in_memory(1000, 1, 3.0, 1.0).unwrap(), 333);
        assert_eq!(
            cells_in_memory(1000, 1, 1e-300, 1.0).unwrap(),
            usize::MAX - 1
        );
        let e = cells_in_memory(1000, 2, 600.0, 1.0)
            .unwrap_err()
            .to_string();
        assert!(e.contains("holds no cell of 600 bytes"), "{e}");
        let e = cells_in_memory(1000, 1, 1e300, 1.0)
            .unwrap_err()
            .to_string();
        assert!(e.contains("holds no cell of 1e300 bytes"), "{e}");
        for (b, f, what) in [
            (0.0, 0.5, "bytes_per_cell = 0 "),
            (f64::NAN, 0.5, "bytes_per_cell = NaN"),
            (-8.0, 0.5, "bytes_per_cell = -8"),
            (f64::INFINITY, 0.5, "bytes_per_cell = inf"),
            (8.0, 0.0, "fraction = 0 is not in (0, 1]"),
            (8.0, 1.5, "fraction = 1.5"),
            (8.0, f64::NAN, "fraction = NaN"),
        ] {
            let e = cells_in_memory(1 << 30, 1, b, f).unwrap_err().to_string();
            assert!(e.contains(what), "{e}");
        }
    }
}
