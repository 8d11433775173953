//! Scenarios for save files of `DistGraph`s (`DistGraph::save`,
//! `SavedGraph`), each run on two graphs: `geo`, a 7 × 6 × 5 grid with
//! coordinates built from per-rank slabs (`from_local`, weighted edges and
//! vertices, partitioned by `partition_distributed`: strategy Geometric),
//! and `root`, a 9 × 8 grid without coordinates given out by
//! `DistGraph::scatter` (strategy RootIndex). Their values evolve by
//! a weighted neighbour average whose result does not depend on the
//! partition.
//!
//! * `save-graph-write DIR` — speeds `1, …, p`: `STEPS` steps, then both
//!   graphs saved to `DIR/geo.nuce` and `DIR/root.nuce` (user bytes
//!   `steps=3`).
//! * `save-graph-read DIR` — any number of ranks, speeds `p, …, 1`: both
//!   graphs restarted; every vertex is owned once and holds its
//!   generator's neighbours, edge and vertex weights and coordinates; the
//!   strategy and user bytes are the saved ones; `STEPS` more steps give
//!   values bit-identical to `2 · STEPS` steps of a serial run on the
//!   root; values of another size are the same error on every rank.
//!   `RESULT graph-read NAME ranks=P saved_ranks=3 works=W` per graph.
//! * `save-graph-errors DIR CASE` — the root copies `DIR/geo.nuce` spoilt
//!   by `CASE` (`truncated`, `data`, `header`, `format`, `degree`) to `DIR/CASE.nuce`
//!   and reads it; `grid`: a grid's save file read as a graph's; `as-grid`:
//!   the graph's file read as a grid's; `missing`. Every rank prints
//!   `ERR rank error`.
//! * `save-graph-big DIR NX NY NZ` — the generator graph of those
//!   dimensions (with coordinates, as built by rows) saved over
//!   `DIR/geo.nuce`, its dimensions in the user bytes (for a save killed
//!   while writing).
//! * `save-graph-load DIR` — `DIR/geo.nuce` restarted, whichever it holds
//!   (`geo`, or a big one by its user bytes): every vertex with its
//!   generator's neighbours, weights and coordinates.

use mpi::traits::*;
use nuce::collective::sum_f64;
use nuce::plan::array3d::Stencil;
use nuce::plan::graph::slab::{block_of, grid_slab};
use nuce::plan::graph::{Coords, Graph};
use nuce::Grid;
use nuce::{Balancer, DistGraph, Field, GraphStrategy, SavedGraph, SavedGrid};

use crate::Ctx;

pub fn run(name: &str, ctx: &Ctx) -> bool {
    match name {
        "save-graph-write" => write(ctx),
        "save-graph-read" => read(ctx),
        "save-graph-errors" => errors(ctx),
        "save-graph-big" => big(ctx),
        "save-graph-load" => load(ctx),
        _ => return false,
    }
    true
}

pub(crate) type G = DistGraph<(f64, u32)>;

pub(crate) const STEPS: usize = 3;
pub(crate) const GEO: (usize, usize, usize) = (7, 6, 5);
pub(crate) const FLAT: (usize, usize, usize) = (9, 8, 1);

/// The initial value of vertex `v`: a non-trivial bit pattern.
pub(crate) fn value(v: usize) -> (f64, u32) {
    (
        f64::from_bits(
            0x3ff0_0000_0000_0000 | (v as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 12,
        ),
        v as u32 ^ 0xa5a5_a5a5,
    )
}

fn vertex_weight(v: usize) -> f64 {
    1.0 + (v % 3) as f64
}

/// A symmetric edge weight.
fn edge_weight(u: usize, v: usize) -> f64 {
    1.0 + ((u + v) % 4) as f64 * 0.5
}

/// The whole generator graph of `dims` (with coordinates when `coords`).
pub(crate) fn whole(dims: (usize, usize, usize), coords: bool) -> Graph {
    let n = dims.0 * dims.1 * dims.2;
    let s = grid_slab(dims, 0, n, 0.3).expect("grid");
    let ew = ewgts(&s.xadj, &s.adjncy, &s.ids);
    let g = Graph::from_csr(
        s.xadj,
        s.adjncy,
        Some((0..n).map(vertex_weight).collect()),
        Some(ew),
    )
    .expect("graph");
    if coords {
        g.with_coords(3, s.coords).expect("coords")
    } else {
        g
    }
}

/// Edge weights parallel to a CSR of the vertices `ids`.
fn ewgts(xadj: &[usize], adj: &[usize], ids: &[usize]) -> Vec<f64> {
    let mut w = Vec::with_capacity(adj.len());
    for (i, &v) in ids.iter().enumerate() {
        w.extend(adj[xadj[i]..xadj[i + 1]].iter().map(|&u| edge_weight(u, v)));
    }
    w
}

/// This rank's slab of the `geo` graph, partitioned for the balancer's speeds.
pub(crate) fn geo(bal: &mut Balancer) -> G {
    let mut g = slab(bal, GEO);
    g.balance(bal).expect("partition");
    g
}

/// This rank's slab of the generator graph of `dims`, as built (by rows).
fn slab(bal: &Balancer, dims: (usize, usize, usize)) -> G {
    let (p, r) = (bal.comm().size() as usize, bal.comm().rank() as usize);
    let n = dims.0 * dims.1 * dims.2;
    let (lo, hi) = block_of(n, r, p);
    let s = grid_slab(dims, lo, hi, 0.3).expect("slab");
    let ew = ewgts(&s.xadj, &s.adjncy, &s.ids);
    let vw = s.ids.iter().map(|&v| vertex_weight(v)).collect();
    let values = s.ids.iter().map(|&v| value(v)).collect();
    DistGraph::from_local(
        bal.comm(),
        s.ids,
        s.xadj,
        s.adjncy,
        Some(vw),
        Some(ew),
        Some(Coords {
            dim: 3,
            data: s.coords,
        }),
        values,
    )
    .expect("from_local")
}

/// The `root` graph given out by the balancer.
pub(crate) fn flat(bal: &mut Balancer) -> G {
    let root = bal.comm().rank() == 0;
    let g = root.then(|| whole(FLAT, false));
    let n = FLAT.0 * FLAT.1;
    let values: Vec<(f64, u32)> = (0..n).map(value).collect();
    DistGraph::scatter(bal, g.as_ref(), root.then_some(&values[..])).expect("scatter_graph")
}

/// One step: each value's first part becomes the weighted average of its
/// own and its neighbours' (in the global adjacency's order).
pub(crate) fn step(g: &mut G) {
    g.exchange_ghosts().expect("exchange");
    let new: Vec<f64> = (0..g.owned().len())
        .map(|i| {
            let (mut s, mut w) = (g.values()[i].0, 1.0);
            for (slot, e) in g.neighbors(i) {
                s += e * g.slot_value(slot).0;
                w += e;
            }
            s / w
        })
        .collect();
    for (v, x) in g.values_mut().iter_mut().zip(new) {
        v.0 = x;
    }
}

/// The serial run of `steps` steps on the whole graph.
pub(crate) fn serial(g: &Graph, steps: usize) -> Vec<(f64, u32)> {
    let mut x: Vec<(f64, u32)> = (0..g.n()).map(value).collect();
    for _ in 0..steps {
        let new: Vec<f64> = (0..g.n())
            .map(|v| {
                let (mut s, mut w) = (x[v].0, 1.0);
                for (u, e) in g.weighted_neighbors(v) {
                    s += e * x[u].0;
                    w += e;
                }
                s / w
            })
            .collect();
        for (v, n) in x.iter_mut().zip(new) {
            v.0 = n;
        }
    }
    x
}

fn balancer(ctx: &Ctx, speeds: impl Fn(usize) -> f64) -> Balancer {
    let mut bal = Balancer::new(&ctx.world).expect("balancer");
    let s: Vec<f64> = (0..ctx.world.size() as usize).map(speeds).collect();
    bal.set_speeds(&s).expect("speeds");
    bal
}

fn path(ctx: &Ctx, name: &str) -> std::path::PathBuf {
    std::path::Path::new(&ctx.args[0]).join(name)
}

fn write(ctx: &Ctx) {
    let mut bal = balancer(ctx, |r| (r + 1) as f64);
    for (name, mut g) in [("geo", geo(&mut bal)), ("root", flat(&mut bal))] {
        for _ in 0..STEPS {
            step(&mut g);
        }
        let stats = g
            .save(path(ctx, &format!("{name}.nuce")), b"steps=3")
            .expect("save");
        // Ids, degrees, weights and 12-byte values of every vertex at least.
        let least = g.global_len() * (8 * 3 + 12);
        ctx.check(
            &format!("{name}-save-bytes"),
            stats.bytes >= least as u64,
            format!("{stats:?}"),
        );
        println!("RESULT graph-save {name} bytes={}", stats.bytes);
    }
}

/// Every owned vertex of `g` has its neighbours, weights and coordinates in
/// `whole` (`coords`: compared), and every vertex is owned once.
pub(crate) fn same_graph(g: &G, whole: &Graph, coords: bool) -> bool {
    let id = |s: usize| {
        let no = g.owned().len();
        if s < no {
            g.owned()[s]
        } else {
            g.ghosts()[s - no]
        }
    };
    let mine = g.owned().iter().enumerate().all(|(i, &v)| {
        let nb: Vec<(usize, u64)> = g.neighbors(i).map(|(s, w)| (id(s), w.to_bits())).collect();
        let want: Vec<(usize, u64)> = whole
            .weighted_neighbors(v)
            .map(|(u, w)| (u, w.to_bits()))
            .collect();
        let c = !coords || g.coords(i) == whole.coords().expect("coords").of(v);
        nb == want && g.vertex_weight(i) == whole.vertex_weight(v) && c
    });
    let n = whole.n() as f64;
    let count = sum_f64(g.comm(), g.owned().len() as f64);
    let ids = sum_f64(g.comm(), g.owned().iter().map(|&v| v as f64).sum());
    mine && count == n && ids == n * (n - 1.0) / 2.0
}

fn read(ctx: &Ctx) {
    let p = ctx.world.size() as usize;
    let mut bal = balancer(ctx, |r| (p - r) as f64);
    for (name, dims, strategy) in [
        ("geo", GEO, GraphStrategy::Geometric),
        ("root", FLAT, GraphStrategy::RootIndex),
    ] {
        let saved = SavedGraph::open(bal.comm(), path(ctx, &format!("{name}.nuce"))).expect("open");
        let mut g: G = saved.new_graph(&mut bal).expect("restart");
        let coords = strategy == GraphStrategy::Geometric;
        let w = whole(dims, coords);
        ctx.check(
            &format!("{name}-graph"),
            same_graph(&g, &w, coords),
            "the graph differs",
        );
        ctx.check(
            &format!("{name}-saved"),
            g.strategy() == strategy && saved.user() == b"steps=3" && saved.saved_ranks() == 3,
            format!("{:?} {:?}", g.strategy(), saved.user()),
        );
        for _ in 0..STEPS {
            step(&mut g);
        }
        let got = g.gather(0).expect("gather");
        if let Some(got) = got {
            let want = serial(&w, 2 * STEPS);
            let same = got.len() == want.len()
                && got
                    .iter()
                    .zip(&want)
                    .all(|(a, b)| a.0.to_bits() == b.0.to_bits() && a.1 == b.1);
            ctx.check(
                &format!("{name}-values"),
                same,
                "values differ from the serial run",
            );
        }
        let wrong = saved.new_graph::<f64>(&mut bal).map(|_| ());
        let text = wrong.err().map(|e| e.to_string()).unwrap_or_default();
        let all = nuce::collective::check_identical(&ctx.world, 0, "error", &text);
        ctx.check(
            &format!("{name}-wrong-type"),
            text.contains("8-byte values, the save file's are 12-byte") && all.is_ok(),
            &text,
        );
        let mut works = vec![0.0f64; p];
        ctx.world.all_gather_into(&g.local_work(), &mut works[..]);
        if ctx.rank() == 0 {
            println!(
                "RESULT graph-read {name} ranks={p} saved_ranks={} works={}",
                saved.saved_ranks(),
                works
                    .iter()
                    .map(|w| w.to_string())
                    .collect::<Vec<_>>()
                    .join(",")
            );
        }
    }
}

fn big(ctx: &Ctx) {
    let dims = (ctx.arg(1, 8), ctx.arg(2, 8), ctx.arg(3, 8));
    let bal = Balancer::new(&ctx.world).expect("balancer");
    let g = slab(&bal, dims);
    let user = format!("dims={},{},{}", dims.0, dims.1, dims.2);
    g.save(path(ctx, "geo.nuce"), user.as_bytes())
        .expect("save");
}

fn load(ctx: &Ctx) {
    let mut bal = Balancer::new(&ctx.world).expect("balancer");
    let saved = SavedGraph::open(bal.comm(), path(ctx, "geo.nuce")).expect("open");
    let user = String::from_utf8_lossy(saved.user()).into_owned();
    let dims = match user.strip_prefix("dims=") {
        Some(d) => {
            let d: Vec<usize> = d.split(',').map(|x| x.parse().expect("dims")).collect();
            (d[0], d[1], d[2])
        }
        None => GEO,
    };
    let g: G = saved.new_graph(&mut bal).expect("restart");
    ctx.check(
        "load-graph",
        same_graph(&g, &whole(dims, true), true),
        format!("the graph of {dims:?} differs"),
    );
    if ctx.rank() == 0 {
        println!("RESULT graph-load n={}", saved.global_len());
    }
}

fn errors(ctx: &Ctx) {
    let case = ctx.args.get(1).cloned().unwrap_or_default();
    let src = path(ctx, "geo.nuce");
    let bad = path(ctx, &format!("{case}.nuce"));
    if ctx.rank() == 0 {
        let mut bytes = std::fs::read(&src).expect("the saved file");
        let n = bytes.len();
        match case.as_str() {
            "truncated" => bytes.truncate(n - 5),
            "data" => bytes[n - 3] ^= 0x10,
            "header" => bytes[30] ^= 0x01,
            "format" => bytes[8] = 7,
            // Vertex 0's degree (the second section, after 210 ids).
            "degree" => bytes[4096 + 8 * 210 + 2] ^= 0x01,
            _ => {}
        }
        std::fs::write(&bad, &bytes).expect("write the spoilt copy");
    }
    ctx.world.barrier();
    let res = (|| -> nuce::Result<()> {
        let mut bal = Balancer::new(&ctx.world)?;
        match case.as_str() {
            "grid" => {
                let grid = Grid::new(&mut bal, (4, 5, 6), Stencil::seven(1))?;
                let mut a = vec![0u8; grid.padded_len([1; 3])?];
                let file = path(ctx, "grid-of-graphs.nuce");
                grid.save(&file, &[Field::new(&mut a, [1; 3])], b"")?;
                SavedGraph::open(&ctx.world, &file).map(|_| ())
            }
            "as-grid" => SavedGrid::open(&ctx.world, &src).map(|_| ()),
            "missing" => SavedGraph::open(&ctx.world, path(ctx, "none.nuce")).map(|_| ()),
            _ => {
                let saved = SavedGraph::open(&ctx.world, &bad)?;
                saved.new_graph::<(f64, u32)>(&mut bal).map(|_| ())
            }
        }
    })();
    match res {
        Ok(()) => println!("ERR {} none", ctx.rank()),
        Err(e) => println!("ERR {} {e}", ctx.rank()),
    }
}
