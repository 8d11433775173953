//! The gmsh MSH 2.2 ASCII reader.

use std::collections::HashMap;

use super::{num, perr, ElementKind, Mesh};
use crate::error::Result;

impl ElementKind {
    /// gmsh MSH 2.2 element type code, for linear types.
    fn from_gmsh(code: u32) -> Option<Self> {
        Some(match code {
            15 => ElementKind::Point,
            1 => ElementKind::Line,
            2 => ElementKind::Triangle,
            3 => ElementKind::Quadrangle,
            4 => ElementKind::Tetrahedron,
            5 => ElementKind::Hexahedron,
            6 => ElementKind::Prism,
            7 => ElementKind::Pyramid,
            _ => return None,
        })
    }
}

/// Parses a gmsh MSH 2.2 ASCII file (`$MeshFormat`, `$Nodes`, `$Elements`;
/// other sections are skipped). Only linear elements are accepted.
pub fn parse_msh2(text: &str, file: &str) -> Result<Mesh> {
    let mut it = text.lines().enumerate().map(|(i, l)| (i + 1, l.trim()));
    let last = text.lines().count() + 1;
    let mut next = |what: &str| -> Result<(usize, &str)> {
        it.next().ok_or_else(|| {
            perr(
                file,
                last,
                format!("unexpected end of file, expected {what}"),
            )
        })
    };
    let mut mesh = Mesh {
        dim: 3,
        nodes: Vec::new(),
        elements: Vec::new(),
    };
    let mut id_to_idx: HashMap<u64, usize> = HashMap::new();
    let (mut seen_format, mut seen_nodes, mut seen_elements) = (false, false, false);
    while let Ok((ln, l)) = next("a section") {
        if l.is_empty() {
            continue;
        }
        match l {
            "$MeshFormat" => {
                let (ln, v) = next("the format line")?;
                let t: Vec<&str> = v.split_whitespace().collect();
                if t.len() < 3 || !t[0].starts_with('2') {
                    return Err(perr(
                        file,
                        ln,
                        format!("only MSH 2.x is supported, found {v:?}"),
                    ));
                }
                if t[1] != "0" {
                    return Err(perr(file, ln, "binary MSH is not supported"));
                }
                let (ln, e) = next("$EndMeshFormat")?;
                if e != "$EndMeshFormat" {
                    return Err(perr(file, ln, "expected $EndMeshFormat"));
                }
                seen_format = true;
            }
            "$Nodes" => {
                let (ln, c) = next("the node count")?;
                let count: usize = num(c, file, ln, "node count")?;
                for _ in 0..count {
                    let (ln, l) = next("a node line")?;
                    let t: Vec<&str> = l.split_whitespace().collect();
                    if t.len() != 4 {
                        return Err(perr(file, ln, "node line must be `id x y z`"));
                    }
                    let id: u64 = num(t[0], file, ln, "node id")?;
                    let mut p = [0.0f64; 3];
                    for (d, x) in p.iter_mut().enumerate() {
                        *x = num(t[d + 1], file, ln, "coordinate")?;
                        if !x.is_finite() {
                            return Err(perr(file, ln, "non-finite coordinate"));
                        }
                    }
                    if id_to_idx.insert(id, mesh.nodes.len()).is_some() {
                        return Err(perr(file, ln, format!("node {id} defined twice")));
                    }
                    mesh.nodes.push(p);
                }
                let (ln, e) = next("$EndNodes")?;
                if e != "$EndNodes" {
                    return Err(perr(file, ln, "expected $EndNodes"));
                }
                seen_nodes = true;
            }
            "$Elements" => {
                if !seen_nodes {
                    return Err(perr(file, ln, "$Elements before $Nodes"));
                }
                let (ln, c) = next("the element count")?;
                let count: usize = num(c, file, ln, "element count")?;
                for _ in 0..count {
                    let (ln, l) = next("an element line")?;
                    let t: Vec<&str> = l.split_whitespace().collect();
                    if t.len() < 3 {
                        return Err(perr(
                            file,
                            ln,
                            "element line must be `id type ntags tags… nodes…`",
                        ));
                    }
                    let code: u32 = num(t[1], file, ln, "element type")?;
                    let kind = ElementKind::from_gmsh(code).ok_or_else(|| {
                        perr(
                            file,
                            ln,
                            format!("unsupported element type {code} (only linear elements)"),
                        )
                    })?;
                    let ntags: usize = num(t[2], file, ln, "tag count")?;
                    let first = 3usize.saturating_add(ntags);
                    if t.len() != first.saturating_add(kind.nodes()) {
                        return Err(perr(
                            file,
                            ln,
                            format!("element of type {code} needs {} nodes", kind.nodes()),
                        ));
                    }
                    let nodes = t[first..]
                        .iter()
                        .map(|x| {
                            let id: u64 = num(x, file, ln, "node id")?;
                            id_to_idx
                                .get(&id)
                                .copied()
                                .ok_or_else(|| perr(file, ln, format!("unknown node {id}")))
                        })
                        .collect::<Result<Vec<_>>>()?;
                    mesh.elements.push((kind, nodes));
                }
                let (ln, e) = next("$EndElements")?;
                if e != "$EndElements" {
                    return Err(perr(file, ln, "expected $EndElements"));
                }
                seen_elements = true;
            }
            s if s.starts_with('$') => {
                let end = format!("$End{}", &s[1..]);
                loop {
                    let (_, l) = next(&end)?;
                    if l == end {
                        break;
                    }
                }
            }
            other => return Err(perr(file, ln, format!("unexpected line {other:?}"))),
        }
    }
    if !(seen_format && seen_nodes && seen_elements) {
        return Err(perr(file, last, "missing $MeshFormat, $Nodes or $Elements"));
    }
    mesh.set_dim_from_z();
    Ok(mesh)
}
