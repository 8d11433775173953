//! The METIS formats: `.graph` (METIS 5 manual \[Kar13\] §4.1.1), a
//! coordinates file (one vertex per line) and `.part` partitions.

use super::{num, perr};
use crate::error::Result;
use crate::graph::csr::Graph;
use crate::graph::metrics::Partition;

/// Parses a METIS graph file (METIS 5 manual \[Kar13\] §4.1.1): a header `n m [fmt
/// [ncon]]` then one line per vertex with `[size] [weights…] (neighbour
/// [edge weight])*`, neighbours 1-based, `%` comment lines. `fmt` digits: vertex
/// sizes (read and ignored), vertex weights, edge weights; with `ncon > 1` the
/// first constraint is used as the vertex weight. Checks the edge count and the
/// symmetry of the adjacency.
pub fn parse_metis(text: &str, file: &str) -> Result<Graph> {
    let mut lines = text
        .lines()
        .enumerate()
        .map(|(i, l)| (i + 1, l))
        .filter(|(_, l)| !l.trim_start().starts_with('%'));
    let (hline, header) = lines
        .by_ref()
        .find(|(_, l)| !l.trim().is_empty())
        .ok_or_else(|| perr(file, 1, "empty file: no header"))?;
    let h: Vec<&str> = header.split_whitespace().collect();
    if h.len() < 2 || h.len() > 4 {
        return Err(perr(file, hline, "header must be `n m [fmt [ncon]]`"));
    }
    let n: usize = num(h[0], file, hline, "vertex count")?;
    let m: usize = num(h[1], file, hline, "edge count")?;
    let fmt = h.get(2).copied().unwrap_or("0");
    if fmt.len() > 3 || !fmt.chars().all(|c| c == '0' || c == '1') {
        return Err(perr(file, hline, format!("bad fmt {fmt:?}")));
    }
    let fmt = format!("{fmt:0>3}");
    let has_size = fmt.as_bytes()[0] == b'1';
    let has_vw = fmt.as_bytes()[1] == b'1';
    let has_ew = fmt.as_bytes()[2] == b'1';
    let ncon: usize = match h.get(3) {
        Some(t) => num(t, file, hline, "ncon")?,
        None => usize::from(has_vw),
    };
    if has_vw && ncon == 0 {
        return Err(perr(file, hline, "ncon must be >= 1 with vertex weights"));
    }
    let ncon = if has_vw { ncon } else { 0 };
    // Capacities are bounded by the text size: a header announcing 10^18
    // vertices must give an error at the missing lines, not an allocation abort.
    let cap = text.len() / 2 + 1;
    let mut xadj = Vec::with_capacity(n.min(cap) + 1);
    xadj.push(0);
    let mut adjncy = Vec::with_capacity(m.min(cap).saturating_mul(2));
    let mut ewgt = Vec::new();
    let mut vwgt = Vec::new();
    let mut vline = Vec::with_capacity(n.min(cap));
    for v in 0..n {
        let (ln, l) = lines.next().ok_or_else(|| {
            perr(
                file,
                text.lines().count() + 1,
                format!("missing line of vertex {}", v + 1),
            )
        })?;
        vline.push(ln);
        let toks: Vec<&str> = l.split_whitespace().collect();
        let lead = usize::from(has_size) + ncon;
        if toks.len() < lead {
            return Err(perr(file, ln, "missing vertex size or weights"));
        }
        if has_vw {
            let w: f64 = num(toks[usize::from(has_size)], file, ln, "vertex weight")?;
            if !(w.is_finite() && w >= 0.0) {
                return Err(perr(file, ln, "vertex weight must be >= 0"));
            }
            vwgt.push(w);
        }
        let rest = &toks[lead..];
        let step = if has_ew { 2 } else { 1 };
        if rest.len() % step != 0 {
            return Err(perr(file, ln, "neighbour without its edge weight"));
        }
        for pair in rest.chunks(step) {
            let u: usize = num(pair[0], file, ln, "neighbour id")?;
            if u == 0 || u > n {
                return Err(perr(file, ln, format!("neighbour {u} out of 1..={n}")));
            }
            if u - 1 == v {
                return Err(perr(file, ln, "self-loop"));
            }
            adjncy.push(u - 1);
            if has_ew {
                let w: f64 = num(pair[1], file, ln, "edge weight")?;
                if !(w.is_finite() && w > 0.0) {
                    return Err(perr(file, ln, "edge weight must be > 0"));
                }
                ewgt.push(w);
            }
        }
        xadj.push(adjncy.len());
    }
    if let Some((ln, l)) = lines.find(|(_, l)| !l.trim().is_empty()) {
        return Err(perr(
            file,
            ln,
            format!("extra line after {n} vertices: {l:?}"),
        ));
    }
    if Some(adjncy.len()) != m.checked_mul(2) {
        return Err(perr(
            file,
            hline,
            format!(
                "header says {m} edges, adjacency lists hold {} arcs",
                adjncy.len()
            ),
        ));
    }
    Graph::from_csr(
        xadj.clone(),
        adjncy.clone(),
        has_vw.then_some(vwgt),
        has_ew.then_some(ewgt),
    )
    .map_err(|e| {
        // Name the line of the first vertex whose list is at fault.
        let bad = first_asymmetric(&xadj, &adjncy).unwrap_or(0);
        perr(
            file,
            vline.get(bad).copied().unwrap_or(hline),
            e.to_string(),
        )
    })
}

/// First vertex with a repeated neighbour or a neighbour that does not list it.
fn first_asymmetric(xadj: &[usize], adjncy: &[usize]) -> Option<usize> {
    let n = xadj.len() - 1;
    let mut set: std::collections::HashSet<(usize, usize)> = std::collections::HashSet::new();
    for v in 0..n {
        for &u in &adjncy[xadj[v]..xadj[v + 1]] {
            if !set.insert((v, u)) {
                return Some(v);
            }
        }
    }
    (0..n).find(|&v| {
        adjncy[xadj[v]..xadj[v + 1]]
            .iter()
            .any(|&u| !set.contains(&(u, v)))
    })
}

/// Parses a coordinates file: one vertex per line, 1 to 3 numbers each (the
/// same count on every line); blank lines and `%`/`#` comments are skipped.
/// Returns `(dim, values)`.
pub fn parse_coords(text: &str, file: &str, n: usize) -> Result<(usize, Vec<f64>)> {
    let mut dim = 0;
    let mut data = Vec::with_capacity(n.min(text.len()).saturating_mul(3));
    let mut count = 0;
    for (i, l) in text.lines().enumerate() {
        let t = l.trim();
        if t.is_empty() || t.starts_with('%') || t.starts_with('#') {
            continue;
        }
        let vals: Vec<f64> = t
            .split_whitespace()
            .map(|x| num::<f64>(x, file, i + 1, "a coordinate"))
            .collect::<Result<_>>()?;
        if vals.iter().any(|x| !x.is_finite()) {
            return Err(perr(file, i + 1, "non-finite coordinate"));
        }
        if dim == 0 {
            if !(1..=3).contains(&vals.len()) {
                return Err(perr(file, i + 1, "expected 1 to 3 coordinates"));
            }
            dim = vals.len();
        } else if vals.len() != dim {
            return Err(perr(
                file,
                i + 1,
                format!("expected {dim} coordinates, found {}", vals.len()),
            ));
        }
        count += 1;
        if count > n {
            return Err(perr(file, i + 1, format!("more than {n} coordinate lines")));
        }
        data.extend(vals);
    }
    if count != n {
        return Err(perr(
            file,
            text.lines().count() + 1,
            format!("{count} coordinate lines for {n} vertices"),
        ));
    }
    Ok((dim.max(1), data))
}

/// Parses a METIS `.part` file (one part id per line) for `n` vertices.
pub fn parse_partition(text: &str, file: &str, n: usize, nparts: usize) -> Result<Partition> {
    let mut parts = Vec::with_capacity(n.min(text.len()));
    for (i, l) in text.lines().enumerate() {
        let t = l.trim();
        if t.is_empty() {
            continue;
        }
        let p: usize = num(t, file, i + 1, "a part id")?;
        if p >= nparts {
            return Err(perr(file, i + 1, format!("part {p} out of 0..{nparts}")));
        }
        parts.push(p);
    }
    if parts.len() != n {
        return Err(perr(
            file,
            text.lines().count() + 1,
            format!("{} part ids for {n} vertices", parts.len()),
        ));
    }
    Partition::new(nparts, parts)
}

/// Writes a graph in METIS format (edge weights rounded to integers ≥ 1 and
/// vertex weights to integers ≥ 0 when present, as METIS requires integers).
pub fn write_metis(g: &Graph) -> String {
    use std::fmt::Write;
    let mut s = String::new();
    let fmt = match (g.has_vertex_weights(), g.has_edge_weights()) {
        (false, false) => "",
        (false, true) => " 001",
        (true, false) => " 010",
        (true, true) => " 011",
    };
    let _ = writeln!(s, "{} {}{fmt}", g.n(), g.num_edges());
    for v in 0..g.n() {
        let mut first = true;
        if g.has_vertex_weights() {
            let _ = write!(s, "{}", g.vertex_weight(v).round().max(0.0) as u64);
            first = false;
        }
        for (u, w) in g.weighted_neighbors(v) {
            let _ = write!(s, "{}{}", if first { "" } else { " " }, u + 1);
            first = false;
            if g.has_edge_weights() {
                let _ = write!(s, " {}", w.round().max(1.0) as u64);
            }
        }
        s.push('\n');
    }
    s
}

/// Writes the coordinates of a graph, one vertex per line.
pub fn write_coords(g: &Graph) -> String {
    let Some(c) = g.coords() else {
        return String::new();
    };
    (0..g.n())
        .map(|v| {
            let xs: Vec<String> = c.of(v).iter().map(|x| format!("{x}")).collect();
            xs.join(" ") + "\n"
        })
        .collect()
}

/// Writes a partition in METIS `.part` format (one part id per line).
pub fn write_partition(p: &Partition) -> String {
    p.parts.iter().map(|x| format!("{x}\n")).collect()
}
