//! A balancer's settings (decomposers, remap hysteresis, timeout: one
//! [`nuce::Balancer::configure`] each) and the
//! application's own waiting sections, for C.

use std::cell::RefCell;
use std::ffi::{c_char, c_int, CStr};
use std::time::Duration;

use nuce::plan::array2d::decomposer_by_name;
use nuce::{waiting, ArrayAlgorithm, Error, GridAlgorithm, Result, Settings, Waiting};

use super::caller::refused_or;
use super::{balancer, guard, nuce_balancer, null, unreachable_null};

/// Runs a setting's collective protocol on `b` for the C function `call`:
/// `parse` checks this rank's argument (a refusal at the call's checked
/// entry: the same error on every rank, within the timeout), `apply`
/// writes it into the balancer's settings, and [`nuce::Balancer::configure`]
/// checks that every rank passes the same settings (names known) and
/// applies them.
fn set_collective<T>(
    b: *mut nuce_balancer,
    call: &str,
    parse: impl FnOnce() -> Result<T>,
    apply: impl FnOnce(&mut Settings, T),
) -> c_int {
    guard(|| {
        // SAFETY: `b` is NULL or a live handle (contract of the C API).
        let h = unsafe { balancer(b) }.map_err(|_| unreachable_null("the balancer", call))?;
        let _w = waiting();
        match refused_or(parse()) {
            Ok(value) => {
                let mut settings = h.bal.settings().clone();
                apply(&mut settings, value);
                h.bal.configure(settings)
            }
            // This rank refuses: every rank returns its error.
            Err(e) => h
                .bal
                .entry(&format!("{call}(refused)"), Some(&e))
                .and(Err(e)),
        }
    })
}

/// `x` when it is finite and ≥ 0, else an error naming it.
fn non_negative(x: f64, what: &str) -> Result<f64> {
    if x.is_finite() && x >= 0.0 {
        Ok(x)
    } else {
        Err(Error::invalid_input(format!(
            "{what} = {x} is not a finite number >= 0"
        )))
    }
}

/// Plans arrays with the decomposer named `name` (collective; the same name
/// on every rank): `column` (the default), `xy2`, `xy`, `tile`, `kl`, `rb`,
/// `rb2`, `rb3`, `slices` or `best`. An unknown name is
/// `NUCE_ERR_INVALID_INPUT` on every rank.
#[no_mangle]
pub extern "C" fn nuce_set_decomposer(b: *mut nuce_balancer, name: *const c_char) -> c_int {
    set_collective(
        b,
        "nuce_set_decomposer",
        || {
            // SAFETY: `name` is NULL or a NUL-terminated string (contract).
            let s = unsafe { decomposer_name(name) }?;
            decomposer_by_name(&s)?;
            Ok(s)
        },
        |settings, s| settings.array_algorithm = ArrayAlgorithm::named(&s),
    )
}

/// The decomposer name `name` as a Rust string: NULL and non-UTF-8 names
/// are errors.
///
/// # Safety
/// `name` is NULL or a NUL-terminated string.
unsafe fn decomposer_name(name: *const c_char) -> Result<String> {
    if name.is_null() {
        return Err(null("name"));
    }
    // SAFETY: non-null and NUL-terminated (contract).
    unsafe { CStr::from_ptr(name) }
        .to_str()
        .map(str::to_string)
        .map_err(|_| Error::invalid_input("the decomposer name is not UTF-8"))
}

/// Plans 3D grids (`nuce_grid_create`, the balance points of grids without
/// a cost field) with the decomposer named `name` (collective; the same
/// name on every rank): `best` (the default: the candidate of least surface
/// among the most balanced, for the grid's stencil), `column`, `pencils`,
/// `rb` (recursive bisection: fast for very many ranks), `rectilinear`,
/// `slabs`, or `guillotine` (tiny grids only). An unknown name, or names
/// that differ between ranks, are the same error on every rank
/// (`NUCE_ERR_INVALID_INPUT`, `NUCE_ERR_DISAGREEMENT`).
#[no_mangle]
pub extern "C" fn nuce_set_decomposer3(b: *mut nuce_balancer, name: *const c_char) -> c_int {
    set_collective(
        b,
        "nuce_set_decomposer3",
        // SAFETY: `name` is NULL or a NUL-terminated string (contract).
        || unsafe { decomposer_name(name) },
        |settings, s| settings.grid_algorithm = GridAlgorithm::named(&s),
    )
}

/// Sets the remap hysteresis (collective; the same value on every rank): a
/// remap is considered only when it would cut the predicted time per
/// iteration by more than this fraction (default 0.05). Finite and ≥ 0.
#[no_mangle]
pub extern "C" fn nuce_set_hysteresis(b: *mut nuce_balancer, fraction: f64) -> c_int {
    set_collective(
        b,
        "nuce_set_hysteresis",
        || non_negative(fraction, "hysteresis"),
        |settings, f| settings.policy.hysteresis = f,
    )
}

/// Sets the timeout of the balancer's collectives in seconds (collective;
/// the same value on every rank); 0 waits forever. The default comes from
/// `NUCE_TIMEOUT_S` (60 s when unset). A negative, NaN or infinite value is
/// `NUCE_ERR_INVALID_INPUT`.
#[no_mangle]
pub extern "C" fn nuce_set_timeout(b: *mut nuce_balancer, seconds: f64) -> c_int {
    set_collective(
        b,
        "nuce_set_timeout",
        || non_negative(seconds, "timeout (s)"),
        |settings, s| settings.timeout = (s > 0.0).then(|| Duration::from_secs_f64(s)),
    )
}

/// Declares the most cells this rank can hold (collective: every rank calls
/// it, each with its own limit; `cells < 0`: no limit). From then on the
/// plans of 2D arrays and 3D grids (the first plan and every remap) never
/// give a rank more cells than its limit; limits that cannot hold an array
/// are the same `NUCE_ERR_INVALID_INPUT` on every rank when it is planned.
/// Graphs and arrays with a cost field refuse limits at their balance point.
#[no_mangle]
pub extern "C" fn nuce_set_memory_limit(b: *mut nuce_balancer, cells: i64) -> c_int {
    guard(|| {
        // SAFETY: `b` is NULL or a live handle (contract of the C API).
        let h = unsafe { balancer(b) }
            .map_err(|_| unreachable_null("the balancer", "nuce_set_memory_limit"))?;
        h.bal.set_memory_limit(usize::try_from(cells).ok())
    })
}

/// Sets this rank's memory limit from its machine's memory (collective:
/// every rank calls it, each with its own arguments) and writes it, in
/// cells, to `*cells_out` (when not NULL). The machine's memory is hwloc's
/// (the NUMA nodes this process may use), divided evenly among the
/// balancer's ranks on the same host; `fraction` of that share, in
/// `(0, 1]`, is for the cells, the rest a safety margin for the operating
/// system, MPI, the program and the copies a remap makes (0.4 is a good
/// start); `bytes_per_cell` is one cell's bytes in all the rank's fields
/// (e.g. 16 for two `double` fields). The limit, `floor(fraction × memory /
/// ranks on the host / bytes_per_cell)` cells, then acts as
/// [`nuce_set_memory_limit`]'s. Other processes and memory cgroup or batch
/// system limits are not counted: declare those with
/// `nuce_set_memory_limit` (a limit in bytes is `bytes / bytes_per_cell`
/// cells). `NUCE_ERR_INVALID_INPUT` on every rank: `bytes_per_cell` not a
/// finite number > 0 or `fraction` not in `(0, 1]` on some rank, hwloc
/// reporting no memory, a share that holds no cell.
#[no_mangle]
pub extern "C" fn nuce_set_memory_limit_from_machine(
    b: *mut nuce_balancer,
    bytes_per_cell: f64,
    fraction: f64,
    cells_out: *mut i64,
) -> c_int {
    guard(|| {
        // SAFETY: `b` is NULL or a live handle (contract of the C API).
        let h = unsafe { balancer(b) }
            .map_err(|_| unreachable_null("the balancer", "nuce_set_memory_limit_from_machine"))?;
        let cells = h
            .bal
            .set_memory_limit_from_machine(bytes_per_cell, fraction)?;
        if !cells_out.is_null() {
            // SAFETY: `cells_out` is NULL or a writable int64_t (contract).
            unsafe { cells_out.write(i64::try_from(cells).unwrap_or(i64::MAX)) };
        }
        Ok(())
    })
}

thread_local! {
    static SECTIONS: RefCell<Vec<Waiting>> = const { RefCell::new(Vec::new()) };
}

/// Opens a waiting section on this thread (local): until the matching
/// [`nuce_waiting_end`], time is not counted as compute by nuce's automatic
/// timing. For the application's own collectives and waits between balance
/// points. Sections nest.
#[no_mangle]
pub extern "C" fn nuce_waiting_begin() -> c_int {
    guard(|| {
        SECTIONS.with(|s| s.borrow_mut().push(waiting()));
        Ok(())
    })
}

/// Closes the innermost waiting section of this thread (local).
/// `NUCE_ERR_INVALID_INPUT` when none is open.
#[no_mangle]
pub extern "C" fn nuce_waiting_end() -> c_int {
    guard(|| {
        SECTIONS
            .with(|s| s.borrow_mut().pop())
            .map(drop)
            .ok_or_else(|| Error::invalid_input("no waiting section is open"))
    })
}
