//! Text formats for graphs and meshes: METIS `.graph` (+ a coordinates file,
//! one vertex per line), METIS `.part` output, gmsh MSH 2.2 ASCII and Medit
//! `.mesh`. Meshes become the nodal graph (vertices = nodes, edges = element
//! edges) or the dual graph (vertices = elements, edges = shared facets).
//!
//! Parsers take the file's text and its name (for messages): they are pure, the
//! caller reads the file. A malformed input gives [`Error::Parse`] naming the
//! 1-based line, never a panic. All parsers are O(size of the input).
//!
//! * [`parse_metis`], [`parse_coords`], [`parse_partition`] and the writers
//!   — the METIS formats (`metis.rs`);
//! * [`Mesh`] and [`ElementKind`] — meshes and their nodal and dual graphs,
//!   (`mesh.rs`); [`parse_mesh`] chooses the reader by extension;
//! * [`parse_msh2`] — gmsh MSH 2.2 (`gmsh.rs`);
//! * [`parse_medit`] — Medit `.mesh` (`medit.rs`).

use crate::error::{Error, Result};

mod gmsh;
mod medit;
mod mesh;
mod metis;

pub use gmsh::parse_msh2;
pub use medit::parse_medit;
pub use mesh::{
    ElementKind, Mesh, DUAL_EDGES_BASE, DUAL_EDGES_PER_CELL, DUAL_WORK_BASE,
    DUAL_WORK_PER_INCIDENCE,
};
pub use metis::{
    parse_coords, parse_metis, parse_partition, write_coords, write_metis, write_partition,
};

/// A parse error at 1-based `line` of `file`.
fn perr(file: &str, line: usize, msg: impl Into<String>) -> Error {
    Error::Parse {
        file: file.to_string(),
        line,
        msg: msg.into(),
    }
}

/// Parses one token, or a parse error naming what was expected.
fn num<T: std::str::FromStr>(tok: &str, file: &str, line: usize, what: &str) -> Result<T> {
    tok.parse::<T>()
        .map_err(|_| perr(file, line, format!("expected {what}, found {tok:?}")))
}

/// Reads a mesh by file name: `.msh` → gmsh MSH 2.2, `.mesh` → Medit.
pub fn parse_mesh(text: &str, file: &str) -> Result<Mesh> {
    if file.ends_with(".msh") {
        parse_msh2(text, file)
    } else if file.ends_with(".mesh") {
        parse_medit(text, file)
    } else {
        Err(Error::InvalidInput(format!(
            "{file}: unknown mesh extension (.msh or .mesh)"
        )))
    }
}
