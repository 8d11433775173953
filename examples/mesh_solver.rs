//! Jacobi iterations on the graph Laplacian of a mesh, distributed with nuce's
//! `DistGraph`, rebalanced between phases from *measured* speeds by
//! `Balancer::maybe_remap`, which re-cuts an index ordering ([KOR95] §3), and
//! checked bit for bit against a serial run on the root.
//!
//! ```text
//! mpirun -np 4 target/release/examples/mesh_solver [--mesh FILE.msh|FILE.mesh]
//!        [--size H] [--iters N] [--phases K] [--slow 1,2,3,…]
//! ```
//!
//! Without `--mesh`, an annulus is triangulated with spacing `H` and written in
//! gmsh MSH 2.2 format, then read back through nuce's reader. The system is
//! `(L + I) x = b` (L the graph Laplacian), whose Jacobi sweep is
//! `x'_v = (b_v + Σ_u x_u) / (1 + deg v)`. Heterogeneity is made real: rank `r`
//! repeats its sweep `slow[r]` times (default `1 + r mod 3`); the speeds the
//! remap uses are *measured* by nuce (compute time outside its ghost
//! exchanges), not read from `--slow`.

use std::time::Instant;

use mpi::traits::*;
use nuce::collective::{agree, max_f64};
use nuce::plan::graph::io;
use nuce::{Balancer, DistGraph, Error, Graph, Result};

/// Smallest `--size` accepted: the annulus then has about 750 000 vertices
/// (its text about 60 MB), so the root's memory and time stay bounded.
const MIN_SIZE: f64 = 2e-3;

/// Rings and points per ring of the annulus of spacing `h`.
fn annulus_dims(h: f64) -> (usize, usize) {
    let nr = ((0.8 / h).ceil() as usize).max(1);
    let nt = ((2.0 * std::f64::consts::PI * 0.6 / h).ceil() as usize).max(3);
    (nr, nt)
}

/// Number of vertices of the annulus of spacing `h`.
fn annulus_vertices(h: f64) -> usize {
    let (nr, nt) = annulus_dims(h);
    (nr + 1) * nt
}

/// An annulus (radii 0.2 to 1) triangulated with spacing `h`, as MSH 2.2 text.
fn annulus_msh(h: f64) -> String {
    use std::fmt::Write;
    let (nr, nt) = annulus_dims(h);
    let mut s = String::from("$MeshFormat\n2.2 0 8\n$EndMeshFormat\n$Nodes\n");
    let _ = writeln!(s, "{}", (nr + 1) * nt);
    for i in 0..=nr {
        let r = 0.2 + 0.8 * i as f64 / nr as f64;
        for j in 0..nt {
            let t = 2.0 * std::f64::consts::PI * j as f64 / nt as f64;
            let _ = writeln!(s, "{} {} {} 0", i * nt + j + 1, r * t.cos(), r * t.sin());
        }
    }
    let _ = writeln!(s, "$EndNodes\n$Elements\n{}", 2 * nr * nt);
    let mut e = 0;
    for i in 0..nr {
        for j in 0..nt {
            let a = i * nt + j + 1;
            let b = i * nt + (j + 1) % nt + 1;
            let (c, d) = (a + nt, b + nt);
            for tri in [[a, b, d], [a, d, c]] {
                e += 1;
                let _ = writeln!(s, "{e} 2 2 1 1 {} {} {}", tri[0], tri[1], tri[2]);
            }
        }
    }
    s.push_str("$EndElements\n");
    s
}

/// One Jacobi sweep for vertex data `(b, x)`; `nbr_x` yields `(x_u, w)` in
/// global CSR order so that the serial and distributed sums are identical.
fn sweep_one(b: f64, nbrs: impl Iterator<Item = (f64, f64)>) -> f64 {
    let (mut acc, mut deg) = (b, 1.0);
    for (xu, w) in nbrs {
        acc += w * xu;
        deg += w;
    }
    acc / deg
}

fn serial(g: &Graph, b: &[f64], iters: usize) -> Vec<f64> {
    let mut x = vec![0.0; g.n()];
    for _ in 0..iters {
        x = (0..g.n())
            .map(|v| sweep_one(b[v], g.weighted_neighbors(v).map(|(u, w)| (x[u], w))))
            .collect();
    }
    x
}

struct Opts {
    mesh: Option<String>,
    size: f64,
    iters: usize,
    phases: usize,
    slow: Option<Vec<usize>>,
}

fn opts() -> Result<Opts> {
    let mut o = Opts {
        mesh: None,
        size: 0.02,
        iters: 200,
        phases: 4,
        slow: None,
    };
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let mut val = || {
            it.next()
                .cloned()
                .ok_or_else(|| Error::invalid_input(format!("{a} needs a value")))
        };
        match a.as_str() {
            "--mesh" => o.mesh = Some(val()?),
            "--size" => {
                o.size = val()?
                    .parse()
                    .map_err(|_| Error::invalid_input("bad --size"))?
            }
            "--iters" => {
                o.iters = val()?
                    .parse()
                    .map_err(|_| Error::invalid_input("bad --iters"))?
            }
            "--phases" => {
                o.phases = val()?
                    .parse()
                    .map_err(|_| Error::invalid_input("bad --phases"))?
            }
            "--slow" => {
                o.slow = Some(
                    val()?
                        .split(',')
                        .map(|t| t.parse().map_err(|_| Error::invalid_input("bad --slow")))
                        .collect::<Result<_>>()?,
                )
            }
            other => return Err(Error::invalid_input(format!("unknown option {other}"))),
        }
    }
    if !(o.size >= MIN_SIZE && o.size.is_finite()) || o.phases == 0 || o.iters < o.phases {
        return Err(Error::invalid_input(format!(
            "--size must be at least {MIN_SIZE} (about {} vertices), --phases >= 1 and --iters >= --phases",
            annulus_vertices(MIN_SIZE)
        )));
    }
    Ok(o)
}

/// Runs `iters` distributed sweeps, each repeated `slow` times (real extra
/// work: this rank is slower). nuce times them by itself.
fn run_sweeps(dg: &mut DistGraph<(f64, f64)>, iters: usize, slow: usize) -> Result<()> {
    let mut new = Vec::with_capacity(dg.owned().len());
    for _ in 0..iters {
        dg.exchange_ghosts()?;
        for _ in 0..slow {
            new.clear();
            for i in 0..dg.owned().len() {
                let nb = dg.neighbors(i).map(|(s, w)| (dg.slot_value(s).1, w));
                new.push(sweep_one(dg.values()[i].0, nb));
            }
            std::hint::black_box(&new);
        }
        for (v, x) in dg.values_mut().iter_mut().zip(&new) {
            v.1 = *x;
        }
    }
    Ok(())
}

fn main() {
    let universe = mpi::initialize().expect("MPI init");
    let world = universe.world();
    if let Err(e) = run(&world) {
        eprintln!("mesh_solver: rank {}: error: {e}", world.rank());
        drop(universe);
        std::process::exit(2);
    }
}

/// The root's graph: the mesh file's nodal graph, or the generated annulus.
fn read_graph(o: &Opts) -> Result<Graph> {
    let (text, name) = match &o.mesh {
        Some(f) => (
            std::fs::read_to_string(f)
                .map_err(|e| Error::Plan(nuce::plan::Error::Io(format!("{f}: {e}"))))?,
            f.clone(),
        ),
        None => (annulus_msh(o.size), "annulus.msh".to_string()),
    };
    let mesh = io::parse_mesh(&text, &name)?;
    Ok(mesh.nodal_graph()?.0)
}

fn run<C: Communicator>(world: &C) -> Result<()> {
    // A bad option on any rank is the same error on every rank.
    let o = agree(world, 0, opts())?;
    let (rank, p) = (world.rank(), world.size() as usize);
    let mut bal = Balancer::new(world)?;
    // Every rank states the run it makes; the root reads the mesh (a rank
    // that waits longer than the timeout for it names the root), and a
    // failure there is every rank's error.
    bal.check_call(&format!(
        "mesh_solver(mesh {:?}, size {}, {} iterations in {} phases)",
        o.mesh, o.size, o.iters, o.phases
    ))?;
    let graph = agree(
        bal.comm(),
        0,
        (rank == 0).then(|| read_graph(&o)).transpose(),
    )?;
    let b: Vec<f64> = graph
        .as_ref()
        .map(|g| {
            (0..g.n())
                .map(|v| ((v * 7919) % 1000) as f64 / 1000.0 - 0.5)
                .collect()
        })
        .unwrap_or_default();
    let values: Vec<(f64, f64)> = b.iter().map(|&x| (x, 0.0)).collect();
    // Equal parts first (nothing measured yet), along a Hilbert-curve index.
    let mut dg = DistGraph::scatter(
        &mut bal,
        graph.as_ref(),
        (rank == 0).then_some(values.as_slice()),
    )?;
    let slow = o
        .slow
        .as_ref()
        .and_then(|s| s.get(rank as usize).copied())
        .unwrap_or(1 + rank as usize % 3);
    let per_phase = o.iters / o.phases;
    let (mut remaps, mut times) = (0, Vec::new());
    for phase in 0..o.phases {
        let iters = if phase + 1 == o.phases {
            o.iters - per_phase * (o.phases - 1)
        } else {
            per_phase
        };
        let t = Instant::now();
        run_sweeps(&mut dg, iters, slow)?;
        let wall = {
            let _w = nuce::waiting();
            bal.check_call(&format!("mesh_solver phase {phase} timing"))?;
            max_f64(bal.comm(), t.elapsed().as_secs_f64()) / iters as f64
        };
        times.push(wall);
        // A remap must pay off over the iterations left (at least one phase).
        let left = (o.iters - per_phase * (phase + 1)).max(iters);
        let rep = bal.maybe_remap_ahead(&mut dg, iters, left)?;
        remaps += usize::from(rep.remap);
        if rank == 0 {
            println!(
                "RESULT phase {phase} sweep_seconds {wall:.6} imbalance {:.3} remap {} moved_bytes {} speeds {:?}",
                rep.imbalance_current,
                rep.remap,
                rep.moved.map_or(0, |m| m.bytes),
                rep.speeds
                    .iter()
                    .map(|s| (s / 1e3).round() / 1e3)
                    .collect::<Vec<_>>()
            );
        }
    }
    let x = dg.gather(0)?;
    if let (Some(x), Some(g)) = (x, graph.as_ref()) {
        let reference = serial(g, &b, o.iters);
        let exact = x
            .iter()
            .zip(&reference)
            .all(|(a, r)| a.1.to_bits() == r.to_bits());
        println!(
            "RESULT vertices {} edges {} ranks {p}",
            g.n(),
            g.num_edges()
        );
        println!(
            "RESULT remaps {remaps} sweep_seconds first {:.6} last {:.6} speedup {:.2}",
            times[0],
            times[times.len() - 1],
            times[0] / times[times.len() - 1]
        );
        println!("RESULT bit_exact {exact}");
        if !exact {
            return Err(Error::invalid_plan(
                "distributed result differs from the serial run",
            ));
        }
    }
    Ok(())
}
