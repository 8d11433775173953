//! Who makes a call: the C API speaks C by default; the Fortran module
//! announces each of its calls with [`nuce_fortran_call`], and that call's
//! messages then speak Fortran — its argument names (`n1`, `n2` for an
//! array's extents), its order (a grid's `n(1)` is C's `n[2]`) and its
//! 1-based indices. The announcement may also carry the module's own
//! refusal of its input on this rank (a shape the C API cannot see), which
//! the call's checked entry then passes to every rank of the collective.
//! A graph call's announcement may add the numbering of its vertex ids
//! ([`nuce_fortran_ids`]: the module's `numflag`), in which its messages
//! then name vertices: the call sets it with
//! `nuce::plan::graph::ids::numbered_from`, and every message formats its
//! vertex ids with `vertex_id` where it is made (no text is rewritten).
//! An announcement holds for the next nuce call only; the module withdraws
//! one that no call took ([`nuce_fortran_done`]) before it returns.

use std::cell::{Cell, RefCell};
use std::ffi::{c_char, c_int, CStr};
use std::fmt::Debug;

use nuce::plan::graph::ids::{numbered_from, Numbering};
use nuce::{Error, Result};

use crate::{NUCE_ERR_EMPTY, NUCE_ERR_INVALID_PLAN, NUCE_ERR_SHAPE_MISMATCH, NUCE_OK};

/// What the binding announced for the next call: its refusal, if any, and
/// the first vertex id of its numbering, if it numbers vertices.
struct Announced {
    refusal: Option<Error>,
    ids: Option<i64>,
}

thread_local! {
    /// The announcement for the next call on this thread.
    static NEXT: RefCell<Option<Announced>> = const { RefCell::new(None) };
    /// Whether the current call comes from Fortran.
    static FORTRAN: Cell<bool> = const { Cell::new(false) };
    /// The binding's refusal of the current call, until the call takes it.
    static REFUSAL: RefCell<Option<Error>> = const { RefCell::new(None) };
    /// The first vertex id of the current call's caller, if announced.
    static IDS: Cell<Option<i64>> = const { Cell::new(None) };
}

/// Announces that the next nuce call on this thread comes from the Fortran
/// module (local; for language bindings, not for C programs): its messages
/// then use Fortran's argument names, order and 1-based indices. With
/// `code` other than `NUCE_OK`, this rank refuses that call: `refusal`
/// (may be NULL) is the reason, and the call returns `code` with it and
/// this rank's world rank — on every rank of a collective call.
#[no_mangle]
pub extern "C" fn nuce_fortran_call(code: c_int, refusal: *const c_char) -> c_int {
    let refusal = (code != NUCE_OK).then(|| {
        let why = if refusal.is_null() {
            "the Fortran module refused the call".into()
        } else {
            // SAFETY: a non-NULL `refusal` is a NUL-terminated string (contract).
            unsafe { CStr::from_ptr(refusal) }.to_string_lossy()
        };
        // Named here: a refusal of the checked entry's root reaches every
        // rank as it is, unwrapped.
        let why = format!("{why} (on {})", crate::world_rank());
        match code {
            NUCE_ERR_SHAPE_MISMATCH => Error::shape_mismatch(why),
            NUCE_ERR_EMPTY => Error::empty(why),
            NUCE_ERR_INVALID_PLAN => Error::invalid_plan(why),
            _ => Error::invalid_input(why),
        }
    });
    NEXT.with(|n| *n.borrow_mut() = Some(Announced { refusal, ids: None }));
    NUCE_OK
}

/// Adds to the announcement of the next call ([`nuce_fortran_call`], made
/// just before; local, for language bindings) that the caller numbers
/// vertex ids from `base` (the Fortran module's `numflag`, 1 by default):
/// the vertex ids in that call's messages are then numbered from `base`,
/// as the caller wrote them. Without an announcement before it,
/// `NUCE_ERR_INVALID_INPUT`.
#[no_mangle]
pub extern "C" fn nuce_fortran_ids(base: i64) -> c_int {
    let announced = NEXT.with(|n| {
        n.borrow_mut()
            .as_mut()
            .map(|a| a.ids = Some(base))
            .is_some()
    });
    if announced {
        NUCE_OK
    } else {
        crate::set_last_error("nuce_fortran_ids without nuce_fortran_call just before it");
        crate::NUCE_ERR_INVALID_INPUT
    }
}

/// Ends a call of the Fortran module (local; for language bindings, not
/// for C programs; the module calls it as each of its procedures returns):
/// an announcement ([`nuce_fortran_call`]) that no nuce call took — the
/// module refused the call on its own, or found nothing to ask of C — is
/// dropped, so that it never applies to a later, unrelated call (one from
/// C code in the same program, say). A non-empty `refusal` (NULL or empty:
/// none) is the message of the module's own refusal of the call, which
/// made no C call: it becomes this thread's last error
/// (`nuce_last_error`) until the next failing call. Returns
/// `NUCE_OK`.
#[no_mangle]
pub extern "C" fn nuce_fortran_done(refusal: *const c_char) -> c_int {
    NEXT.with(|n| n.borrow_mut().take());
    if !refusal.is_null() {
        // SAFETY: a non-NULL `refusal` is a NUL-terminated string (contract).
        let why = unsafe { CStr::from_ptr(refusal) }.to_string_lossy();
        if !why.is_empty() {
            crate::set_last_error(&why);
        }
    }
    NUCE_OK
}

/// The current call's caller, set from the announcement (if any) while an
/// exported function runs; dropping it ends the call.
pub(crate) struct Call {
    announced: bool,
    /// The caller's numbering of vertex ids, for the messages made during
    /// the call (they format ids with `nuce::plan::graph::ids::vertex_id`).
    _numbering: Option<Numbering>,
}

impl Call {
    /// Starts a call: takes the announcement made for it. A nested call
    /// (one exported function calling another) keeps the outer call's.
    pub(crate) fn begin() -> Call {
        match NEXT.with(|n| n.borrow_mut().take()) {
            Some(a) => {
                FORTRAN.with(|f| f.set(true));
                REFUSAL.with(|r| *r.borrow_mut() = a.refusal);
                IDS.with(|i| i.set(a.ids));
                Call {
                    announced: true,
                    _numbering: a.ids.map(numbered_from),
                }
            }
            None => Call {
                announced: false,
                _numbering: None,
            },
        }
    }

    /// The binding's refusal if no checked entry took it: a local call
    /// refused by the binding returns it instead of its own outcome.
    pub(crate) fn untaken_refusal(&self) -> Option<Error> {
        if self.announced {
            REFUSAL.with(|r| r.borrow_mut().take())
        } else {
            None
        }
    }
}

impl Drop for Call {
    fn drop(&mut self) {
        if self.announced {
            FORTRAN.with(|f| f.set(false));
            REFUSAL.with(|r| *r.borrow_mut() = None);
            IDS.with(|i| i.set(None));
        }
    }
}

/// `local`, unless the binding refused the current call on this rank: then
/// its refusal (taken: the call's checked entry passes it to every rank).
pub(crate) fn refused_or<T>(local: Result<T>) -> Result<T> {
    match REFUSAL.with(|r| r.borrow_mut().take()) {
        Some(e) => Err(e),
        None => local,
    }
}

/// Whether the current call comes from Fortran.
pub(crate) fn fortran() -> bool {
    FORTRAN.with(Cell::get)
}

/// The names of a 2D array's C extents `rows`, `cols` for the caller:
/// Fortran's `g(n1, n2)` has `n1 = cols`, `n2 = rows`.
pub(crate) fn extent_names() -> [&'static str; 2] {
    if fortran() {
        ["n2", "n1"]
    } else {
        ["rows", "cols"]
    }
}

/// The must-match extents of a 2D array for messages: `rows R, cols C`, or
/// `n1 C, n2 R` from Fortran.
pub(crate) fn extents(rows: i64, cols: i64) -> String {
    if fortran() {
        format!("n1 {cols}, n2 {rows}")
    } else {
        format!("rows {rows}, cols {cols}")
    }
}

/// The name of an array's padded block argument: `padded`, or the Fortran
/// procedures' `u`.
pub(crate) fn padded_name() -> &'static str {
    if fortran() {
        "u"
    } else {
        "padded"
    }
}

/// Element `i` (0-based) of the argument `what`: `what[i]`, or `what(i + 1)`
/// from Fortran.
pub(crate) fn element(what: &str, i: usize) -> String {
    if fortran() {
        format!("{what}({})", i + 1)
    } else {
        format!("{what}[{i}]")
    }
}

/// Axis `d` (C order, 0 = slowest) of a 3-element argument `what`:
/// `what[d]`, or `what(3 - d)` from Fortran, whose order is reversed.
pub(crate) fn axis(what: &str, d: usize) -> String {
    if fortran() {
        format!("{what}({})", 3 - d)
    } else {
        format!("{what}[{d}]")
    }
}

/// A 3-element value in C order, written in the caller's order.
pub(crate) fn triple<T: Debug + Copy>(v: [T; 3]) -> String {
    if fortran() {
        format!("{:?}", [v[2], v[1], v[0]])
    } else {
        format!("{v:?}")
    }
}

/// `e` in the caller's terms: from Fortran, the index of an invalid speed
/// (or cycle time) counts from 1, as `speeds(i)` does.
pub(crate) fn in_callers_terms(e: Error) -> Error {
    match e {
        Error::Plan(nuce::plan::Error::InvalidSpeed { index, value }) if fortran() => {
            Error::Plan(nuce::plan::Error::InvalidSpeed {
                index: index + 1,
                value,
            })
        }
        Error::Remote { rank, source } => Error::Remote {
            rank,
            source: Box::new(in_callers_terms(*source)),
        },
        e => e,
    }
}

/// The Fortran module's names of C functions whose Fortran procedure has
/// another name (a generic, or an optional argument instead of a variant),
/// and of arguments whose Fortran dummy has another name.
const FORTRAN_NAMES: [(&str, &str); 6] = [
    ("global_ids", "ids"),
    ("nuce_graph_maybe_remap_ahead", "nuce_maybe_remap"),
    ("nuce_grid_maybe_remap_ahead", "nuce_grid_maybe_remap"),
    ("nuce_maybe_remap_ahead", "nuce_maybe_remap"),
    ("nuce_plan_rect", "nuce_plan_box"),
    ("nuce_array_rect", "nuce_array_box"),
];

/// `msg` with the C functions' (and arguments') names replaced by the
/// Fortran procedures' when the current call comes from Fortran.
pub(crate) fn in_callers_words(msg: String) -> String {
    if fortran() {
        FORTRAN_NAMES.iter().fold(msg, |m, (c, f)| m.replace(c, f))
    } else {
        msg
    }
}

/// The element size of an array call's text: `elem_size E, ` in C; nothing
/// from Fortran, whose arrays are `real(c_double)` (no such argument).
pub(crate) fn array_elem_size(elem_size: usize) -> String {
    if fortran() {
        String::new()
    } else {
        format!("elem_size {elem_size}, ")
    }
}

/// The record size of a graph call's text: `elem_size E` in C; from
/// Fortran, the record length `m` of its `records(m, :)` of
/// `real(c_double)` (`E / 8`).
pub(crate) fn record_size(elem_size: usize) -> String {
    if fortran() {
        format!("m {}", elem_size / 8)
    } else {
        format!("elem_size {elem_size}")
    }
}

/// The error of a negative entry `x` of the id or offset array `what`:
/// from a caller that announced its numbering ([`nuce_fortran_ids`], whose
/// arrays it shifted by `base` before the call), the entry as written,
/// below `numflag`.
pub(crate) fn negative_entry(what: &str, x: i64) -> Error {
    Error::invalid_input(match IDS.with(Cell::get) {
        Some(base) => format!(
            "{what} has an entry {} below numflag {base}",
            x.saturating_add(base)
        ),
        None => format!("{what} has a negative entry {x}"),
    })
}
