//! Everything the command line writes: stdout, JSON, files and SVG drawings.
//!
//! * A failed write (a full disk, `--svg /dev/full`, stdout redirected to
//!   `/dev/full`) is an [`Error::Io`]: `nuce` prints it and exits with 2.
//! * A closed pipe on stdout (`nuce … | head -1`) ends the program quietly
//!   with status 0, as the reader asked for no more; it never panics.
//! * Numbers: every number a subcommand prints must be finite. JSON has no
//!   infinity or NaN (serde writes them as `null`), so [`check_numbers`]
//!   turns a non-finite value into an error naming its key instead of a
//!   `null` where the schema promises a number.

use std::fmt;
use std::io::{ErrorKind, Write};
use std::path::Path;

use nuce_plan::{Error, Result};
use plotters::coord::Shift;
use plotters::prelude::{DrawingArea, IntoDrawingArea, SVGBackend};
use serde::Serialize;

/// Writes one line to stdout (see the module docs for errors).
macro_rules! outln {
    ($($arg:tt)*) => {
        $crate::output::line(format_args!($($arg)*))
    };
}
pub(crate) use outln;

/// Ends the program quietly when stdout is a closed pipe; other errors
/// become [`Error::Io`].
fn stdout_error(e: std::io::Error) -> Error {
    if e.kind() == ErrorKind::BrokenPipe {
        std::process::exit(0);
    }
    Error::Io(format!("writing to stdout: {e}"))
}

/// Writes `args` and a newline to stdout.
pub(crate) fn line(args: fmt::Arguments) -> Result<()> {
    let mut out = std::io::stdout().lock();
    out.write_fmt(args)
        .and_then(|()| out.write_all(b"\n"))
        .map_err(stdout_error)
}

/// Flushes stdout (called once at the end, so that a write error that was
/// still buffered is reported too).
pub(crate) fn flush() -> Result<()> {
    std::io::stdout().lock().flush().map_err(stdout_error)
}

/// Writes a message to stderr, ignoring failures (there is nowhere left to
/// report them; `eprintln!` would panic).
pub(crate) fn warn(msg: &str) {
    let _ = writeln!(std::io::stderr().lock(), "{msg}");
}

/// Checks that every number of `v`'s JSON form is finite: serde writes
/// infinity and NaN as `null`, which no key of the documented outputs may
/// hold (their optional keys are left out, not `null`). The error names
/// the key, e.g. `makespan`.
pub(crate) fn check_numbers<T: Serialize>(v: &T) -> Result<()> {
    let json = serde_json::to_string(v).map_err(|e| Error::Io(e.to_string()))?;
    check_text(&json)
}

/// [`check_numbers`] on serialized JSON: a scan for a `null` outside
/// strings, O(length), no tree built (outputs can hold millions of numbers).
fn check_text(json: &str) -> Result<()> {
    let b = json.as_bytes();
    let (mut i, mut key) = (0, "(root)");
    while i < b.len() {
        match b[i] {
            b'"' => {
                let start = i + 1;
                i += 1;
                while i < b.len() && b[i] != b'"' {
                    i += if b[i] == b'\\' { 2 } else { 1 };
                }
                let end = i.min(b.len());
                // A string followed by ':' is a key.
                if b.get(end + 1) == Some(&b':') {
                    key = json.get(start..end).unwrap_or("?");
                }
            }
            b'n' if b[i..].starts_with(b"null") => {
                return Err(Error::InvalidInput(format!(
                    "the result has a non-finite number at `{key}` (an overflow: the \
                     inputs are too large or too small for f64)"
                )));
            }
            _ => {}
        }
        i += 1;
    }
    Ok(())
}

/// Prints a serializable value as pretty JSON on stdout, after the check
/// of [`check_numbers`] on that text.
pub(crate) fn print_json<T: Serialize>(v: &T) -> Result<()> {
    let s = serde_json::to_string_pretty(v).map_err(|e| Error::Io(e.to_string()))?;
    check_text(&s)?;
    line(format_args!("{s}"))
}

/// Prints pretty JSON on stdout as it is (`null` allowed: `nuce measure`
/// reports unknown cache sizes as `null`).
#[cfg(feature = "measure")]
pub(crate) fn print_json_unchecked<T: Serialize>(v: &T) -> Result<()> {
    let s = serde_json::to_string_pretty(v).map_err(|e| Error::Io(e.to_string()))?;
    line(format_args!("{s}"))
}

/// Writes `bytes` to the file `path`, every failure an [`Error::Io`] naming
/// the file.
pub(crate) fn write_file(path: &Path, bytes: &[u8]) -> Result<()> {
    let fail = |e: std::io::Error| Error::Io(format!("{}: {e}", path.display()));
    let mut f = std::fs::File::create(path).map_err(fail)?;
    f.write_all(bytes).and_then(|()| f.flush()).map_err(fail)
}

/// Draws an SVG of `size` pixels with `draw` and writes it to `path`.
/// The drawing is made in memory and written with [`write_file`]: plotters'
/// own file output drops a failed final write silently.
pub(crate) fn svg(
    path: &Path,
    size: (u32, u32),
    draw: impl FnOnce(&DrawingArea<SVGBackend<'_>, Shift>) -> Result<()>,
) -> Result<()> {
    let mut text = String::new();
    {
        let root = SVGBackend::with_string(&mut text, size).into_drawing_area();
        draw(&root)?;
        root.present()
            .map_err(|e| Error::Io(format!("{}: {e}", path.display())))?;
    }
    write_file(path, text.as_bytes())
}

/// Runs `plan`, showing a spinner with the elapsed time on standard error
/// when it takes more than a second and standard error is a terminal (large
/// part counts: a 3D plan of 10⁵ parts). Nothing is drawn otherwise, so
/// scripts and `--json` pipelines see no change.
pub(crate) fn planning<T>(what: &str, plan: impl FnOnce() -> T) -> T {
    use std::sync::mpsc;
    use std::time::Duration;
    let (done, wait) = mpsc::channel::<()>();
    let what = what.to_string();
    let spinner = std::thread::spawn(move || {
        if wait.recv_timeout(Duration::from_secs(1)).is_ok() {
            return;
        }
        let bar = indicatif::ProgressBar::new_spinner();
        if let Ok(style) = indicatif::ProgressStyle::with_template("{spinner} {msg} {elapsed}") {
            bar.set_style(style);
        }
        bar.set_message(what);
        bar.enable_steady_tick(Duration::from_millis(120));
        // Disconnected (or a message) when the plan is done.
        let _ = wait.recv();
        bar.finish_and_clear();
    });
    let out = plan();
    let _ = done.send(());
    let _ = spinner.join();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Serialize)]
    struct Out {
        a: f64,
        b: Vec<f64>,
    }

    #[test]
    fn non_finite_numbers_are_named() {
        let ok = Out {
            a: 1.0,
            b: vec![2.0],
        };
        assert!(check_numbers(&ok).is_ok());
        let bad = Out {
            a: 1.0,
            b: vec![2.0, f64::INFINITY],
        };
        let e = check_numbers(&bad).unwrap_err().to_string();
        assert!(e.contains("`b`"), "{e}");
        let nan = Out {
            a: f64::NAN,
            b: vec![],
        };
        assert!(check_numbers(&nan).unwrap_err().to_string().contains("`a`"));
        // Pretty JSON names the key too; "null" inside a string is no number.
        let pretty = serde_json::to_string_pretty(&bad).unwrap();
        assert!(check_text(&pretty).unwrap_err().to_string().contains("`b`"));
        assert!(check_text(r#"{"a":"null \"x\" null","b":[1,2]}"#).is_ok());
        assert!(check_text(r#"{"a":"x","b":[1,null]}"#).is_err());
    }

    #[test]
    fn a_full_device_is_an_error() {
        let e = write_file(Path::new("/dev/full"), b"x").unwrap_err();
        assert!(e.to_string().contains("/dev/full"), "{e}");
    }
}
