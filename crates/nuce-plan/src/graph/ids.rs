//! Vertex ids in messages, numbered as the caller numbers them.
//!
//! nuce numbers vertices from 0. A caller that numbers them from another
//! base (Fortran's `numflag = 1`, through the C API's `nuce_fortran_ids`)
//! sets that base for the duration of its call with [`numbered_from`]; every
//! message that names a vertex formats the id with [`vertex_id`], which adds
//! the base at the point where the id is written. No message text is
//! rewritten afterwards, so a new wording cannot escape the numbering.
//!
//! ```
//! use nuce_plan::graph::ids::{numbered_from, vertex_id};
//! assert_eq!(format!("vertex {}", vertex_id(4)), "vertex 4");
//! let one_based = numbered_from(1);
//! assert_eq!(format!("vertex {}", vertex_id(4)), "vertex 5");
//! drop(one_based);
//! assert_eq!(format!("vertex {}", vertex_id(4)), "vertex 4");
//! ```

use std::cell::Cell;
use std::fmt;

thread_local! {
    /// The first vertex id of the current caller's numbering on this thread.
    static BASE: Cell<i64> = const { Cell::new(0) };
}

/// A vertex id (0-based) as messages show it: plus the base of the current
/// caller's numbering on this thread ([`numbered_from`]; 0 by default).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct VertexId(pub usize);

impl fmt::Display for VertexId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let shown = self.0 as i128 + i128::from(base());
        fmt::Display::fmt(&shown, f)
    }
}

/// The vertex id `v` (0-based) for a message: see [`VertexId`].
pub fn vertex_id(v: usize) -> VertexId {
    VertexId(v)
}

/// The first vertex id of the numbering that messages use on this thread.
pub fn base() -> i64 {
    BASE.with(Cell::get)
}

/// Numbers the vertex ids of the messages made on this thread from `base`
/// until the returned guard is dropped (which restores the numbering
/// before it). Messages made on other threads keep their own numbering.
#[must_use = "the numbering ends when the guard is dropped"]
pub fn numbered_from(base: i64) -> Numbering {
    Numbering {
        before: BASE.with(|b| b.replace(base)),
    }
}

/// The guard of [`numbered_from`]: restores the previous numbering on drop.
#[derive(Debug)]
pub struct Numbering {
    before: i64,
}

impl Drop for Numbering {
    fn drop(&mut self) {
        BASE.with(|b| b.set(self.before));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numberings_nest_and_end_with_their_guard() {
        assert_eq!(vertex_id(0).to_string(), "0");
        {
            let _one = numbered_from(1);
            assert_eq!(vertex_id(9).to_string(), "10");
            {
                let _zero = numbered_from(0);
                assert_eq!(vertex_id(9).to_string(), "9");
            }
            assert_eq!(vertex_id(9).to_string(), "10");
            // Other threads keep their own numbering.
            let other = std::thread::spawn(|| vertex_id(9).to_string());
            assert_eq!(other.join().unwrap(), "9");
        }
        assert_eq!(vertex_id(9).to_string(), "9");
        let _far = numbered_from(i64::MAX);
        assert_eq!(
            vertex_id(usize::MAX).to_string(),
            (u64::MAX as i128 + i64::MAX as i128).to_string()
        );
    }
}
