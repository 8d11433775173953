//! The Medit `.mesh` ASCII reader.

use super::{num, perr, ElementKind, Mesh};
use crate::error::Result;

/// Parses a Medit `.mesh` ASCII file (keywords `MeshVersionFormatted`,
/// `Dimension`, `Vertices`, `Edges`, `Triangles`, `Quadrilaterals`,
/// `Tetrahedra`, `Hexahedra`, `Prisms`, `Pyramids`, a few per-entity lists that
/// are skipped, `End`). Indices are 1-based; every entity ends with a reference
/// number.
pub fn parse_medit(text: &str, file: &str) -> Result<Mesh> {
    let mut toks = text.lines().enumerate().flat_map(|(i, l)| {
        let l = l.split('#').next().unwrap_or("");
        l.split_whitespace().map(move |t| (i + 1, t))
    });
    let last = text.lines().count() + 1;
    let mut next = |what: &str| -> Result<(usize, &str)> {
        toks.next().ok_or_else(|| {
            perr(
                file,
                last,
                format!("unexpected end of file, expected {what}"),
            )
        })
    };
    let mut mesh = Mesh {
        dim: 0,
        nodes: Vec::new(),
        elements: Vec::new(),
    };
    while let Ok((ln, kw)) = next("a keyword") {
        let kind = match kw {
            "MeshVersionFormatted" => {
                let (ln, v) = next("a version")?;
                let _: u32 = num(v, file, ln, "a version number")?;
                continue;
            }
            "Dimension" => {
                let (ln, d) = next("a dimension")?;
                mesh.dim = num(d, file, ln, "a dimension")?;
                if !(1..=3).contains(&mesh.dim) {
                    return Err(perr(file, ln, "dimension must be 1, 2 or 3"));
                }
                continue;
            }
            "End" => break,
            "Vertices" => None,
            "Edges" => Some(ElementKind::Line),
            "Triangles" => Some(ElementKind::Triangle),
            "Quadrilaterals" => Some(ElementKind::Quadrangle),
            "Tetrahedra" => Some(ElementKind::Tetrahedron),
            "Hexahedra" => Some(ElementKind::Hexahedron),
            "Prisms" => Some(ElementKind::Prism),
            "Pyramids" => Some(ElementKind::Pyramid),
            "Corners" | "Ridges" | "RequiredVertices" | "RequiredEdges" | "RequiredTriangles" => {
                let (ln, c) = next("a count")?;
                let count: usize = num(c, file, ln, "a count")?;
                for _ in 0..count {
                    next("an index")?;
                }
                continue;
            }
            other => return Err(perr(file, ln, format!("unknown Medit keyword {other:?}"))),
        };
        let (ln, c) = next("a count")?;
        let count: usize = num(c, file, ln, "a count")?;
        match kind {
            None => {
                if mesh.dim == 0 {
                    return Err(perr(file, ln, "Vertices before Dimension"));
                }
                for _ in 0..count {
                    let mut p = [0.0f64; 3];
                    for x in p.iter_mut().take(mesh.dim) {
                        let (ln, t) = next("a coordinate")?;
                        *x = num(t, file, ln, "a coordinate")?;
                        if !x.is_finite() {
                            return Err(perr(file, ln, "non-finite coordinate"));
                        }
                    }
                    let (ln, r) = next("a reference")?;
                    let _: f64 = num(r, file, ln, "a reference number")?;
                    mesh.nodes.push(p);
                }
            }
            Some(k) => {
                for _ in 0..count {
                    let mut nodes = Vec::with_capacity(k.nodes());
                    for _ in 0..k.nodes() {
                        let (ln, t) = next("a vertex index")?;
                        let i: usize = num(t, file, ln, "a vertex index")?;
                        if i == 0 || i > mesh.nodes.len() {
                            return Err(perr(
                                file,
                                ln,
                                format!("vertex {i} out of 1..={}", mesh.nodes.len()),
                            ));
                        }
                        nodes.push(i - 1);
                    }
                    let (ln, r) = next("a reference")?;
                    let _: i64 = num(r, file, ln, "a reference number")?;
                    mesh.elements.push((k, nodes));
                }
            }
        }
    }
    if mesh.nodes.is_empty() {
        return Err(perr(file, last, "no Vertices"));
    }
    Ok(mesh)
}
