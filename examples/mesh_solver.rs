//! Jacobi iterations on the graph Laplacian of a mesh, distributed with nuce's
//! `DistGraph`, rebalanced mid-run from *measured* speeds by remapping an
//! index ordering (seed `001_b091384d76b527f5.txt` §3), and checked bit for bit
//! against a serial run on the root.
//!
//! ```text
//! mpirun -np 4 target/release/examples/mesh_solver [--mesh FILE.msh|FILE.mesh]
//!        [--size H] [--iters N] [--slow 1,2,3,…]
//! ```
//!
//! Without `--mesh`, an annulus is triangulated with spacing `H` and written in
//! gmsh MSH 2.2 format, then read back through nuce's reader. The system is
//! `(L + I) x = b` (L the graph Laplacian), whose Jacobi sweep is
//! `x'_v = (b_v + Σ_u x_u) / (1 + deg v)`. Heterogeneity is made real: rank `r`
//! repeats its sweep `slow[r]` times (default `1 + r mod 3`); the speeds the
//! remap uses are *measured* from the sweep times, not read from `--slow`.

use std::time::Instant;

use mpi::traits::*;
use nuce::plan::graph::{io, Graph, Grouping, IndexKind, IntervalCut, Ordering, Rsb};
use nuce::runtime::comm::{gather_values, max_f64, root_compute};
use nuce::runtime::graph::DistGraph;
use nuce::{Error, Result};

/// An annulus (radii 0.2 to 1) triangulated with spacing `h`, as MSH 2.2 text.
fn annulus_msh(h: f64) -> String {
    use std::fmt::Write;
    let nr = ((0.8 / h).ceil() as usize).max(1);
    let nt = ((2.0 * std::f64::consts::PI * 0.6 / h).ceil() as usize).max(3);
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
    slow: Option<Vec<usize>>,
}

fn opts() -> Result<Opts> {
    let mut o = Opts {
        mesh: None,
        size: 0.02,
        iters: 200,
        slow: None,
    };
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let mut val = || {
            it.next()
                .cloned()
                .ok_or_else(|| Error::InvalidInput(format!("{a} needs a value")))
        };
        match a.as_str() {
            "--mesh" => o.mesh = Some(val()?),
            "--size" => {
                o.size = val()?
                    .parse()
                    .map_err(|_| Error::InvalidInput("bad --size".into()))?
            }
            "--iters" => {
                o.iters = val()?
                    .parse()
                    .map_err(|_| Error::InvalidInput("bad --iters".into()))?
            }
            "--slow" => {
                o.slow = Some(
                    val()?
                        .split(',')
                        .map(|t| {
                            t.parse()
                                .map_err(|_| Error::InvalidInput("bad --slow".into()))
                        })
                        .collect::<Result<_>>()?,
                )
            }
            other => return Err(Error::InvalidInput(format!("unknown option {other}"))),
        }
    }
    if !(o.size > 0.0 && o.size.is_finite()) || o.iters < 2 {
        return Err(Error::InvalidInput(
            "--size must be > 0 and --iters >= 2".into(),
        ));
    }
    Ok(o)
}

/// Runs `iters` distributed sweeps; returns the max-over-ranks time per sweep
/// and this rank's own compute time.
fn run_sweeps<C: Communicator>(
    comm: &C,
    dg: &mut DistGraph<(f64, f64)>,
    iters: usize,
    slow: usize,
) -> Result<(f64, f64)> {
    let t0 = Instant::now();
    let mut busy = 0.0;
    for _ in 0..iters {
        dg.ghost_exchange(comm)?;
        let t = Instant::now();
        let no = dg.owned().len();
        let mut new = Vec::with_capacity(no);
        for _ in 0..slow.max(1) {
            new.clear();
            for i in 0..no {
                let nb = dg.neighbors(i).map(|(s, w)| {
                    let x = if s < no {
                        dg.values()[s].1
                    } else {
                        dg.ghost_values()[s - no].1
                    };
                    (x, w)
                });
                new.push(sweep_one(dg.values()[i].0, nb));
            }
        }
        busy += t.elapsed().as_secs_f64();
        for (v, x) in dg.values_mut().iter_mut().zip(new) {
            v.1 = x;
        }
    }
    Ok((
        max_f64(comm, t0.elapsed().as_secs_f64()) / iters as f64,
        busy,
    ))
}

fn main() {
    let universe = mpi::initialize().expect("MPI init");
    let world = universe.world();
    if let Err(e) = run(&world) {
        if world.rank() == 0 {
            eprintln!("mesh_solver: {e}");
        }
        std::process::exit(2);
    }
}

fn run<C: Communicator>(world: &C) -> Result<()> {
    let o = opts()?;
    let (rank, p) = (world.rank(), world.size() as usize);
    let root = 0;
    // Root: read the mesh, build the nodal graph and the HCI ordering.
    let setup = if rank == root {
        let (text, name) = match &o.mesh {
            Some(f) => (
                std::fs::read_to_string(f).map_err(|e| Error::Io(format!("{f}: {e}")))?,
                f.clone(),
            ),
            None => (annulus_msh(o.size), "annulus.msh".to_string()),
        };
        let mesh = io::parse_mesh(&text, &name)?;
        let (g, _) = mesh.nodal_graph()?;
        let ord = Ordering::build(&g, IndexKind::Hci, &Rsb::default(), 1024)?;
        Some((g, ord))
    } else {
        None
    };
    let b: Vec<f64> = setup
        .as_ref()
        .map(|(g, _)| {
            (0..g.n())
                .map(|v| ((v * 7919) % 1000) as f64 / 1000.0 - 0.5)
                .collect()
        })
        .unwrap_or_default();
    // Initial cut: equal speeds.
    let first = root_compute(world, root, || {
        let (_, ord) = setup
            .as_ref()
            .ok_or_else(|| Error::InvalidInput("no setup".into()))?;
        let cut = ord.cut(&vec![1.0; p], Grouping::Binpacking)?;
        Ok((cut.clone(), ord.to_partition(&cut)?))
    })?;
    let (mut cut, part): (IntervalCut, _) = first;
    let values: Vec<(f64, f64)> = b.iter().map(|&x| (x, 0.0)).collect();
    let mut dg = DistGraph::scatter_from_root(
        world,
        root,
        setup.as_ref().map(|s| &s.0),
        (rank == root).then_some(&part),
        (rank == root).then_some(values.as_slice()),
    )?;
    let slow = o
        .slow
        .as_ref()
        .and_then(|s| s.get(rank as usize).copied())
        .unwrap_or(1 + rank as usize % 3);
    let half = o.iters / 2;
    // Phase 1: equal shares; measure this rank's speed (vertices per second).
    let (t_before, busy) = run_sweeps(world, &mut dg, half, slow)?;
    let speed = (dg.owned().len().max(1) * half) as f64 / busy.max(1e-9);
    let speeds = gather_values(world, root, &speed)?;
    // Root: re-cut the ordering for the measured speeds, moving few vertices.
    let (new_cut, new_part) = root_compute(world, root, || {
        let (_, ord) = setup
            .as_ref()
            .ok_or_else(|| Error::InvalidInput("no setup".into()))?;
        let s = speeds
            .clone()
            .ok_or_else(|| Error::InvalidInput("no speeds".into()))?;
        let c = ord.recut(&cut, &s, Grouping::Binpacking)?;
        Ok((c.clone(), ord.to_partition(&c)?))
    })?;
    let moved = cut.moved(&new_cut);
    cut = new_cut;
    let st = dg.migrate(world, &new_part)?;
    // Phase 2: rebalanced.
    let (t_after, _) = run_sweeps(world, &mut dg, o.iters - half, slow)?;
    let x = dg.gather_to_root(world, root)?;
    if let (Some(x), Some((g, _))) = (x, setup.as_ref()) {
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
            "RESULT measured_speeds {:?}",
            speeds
                .unwrap_or_default()
                .iter()
                .map(|s| (s / 1e3).round() / 1e3)
                .collect::<Vec<_>>()
        );
        println!(
            "RESULT remapped moved {moved} (migrate moved {} vertices, {} bytes, {} messages, {:.4} s) intervals {}",
            st.moved_vertices,
            st.moves.bytes,
            st.moves.messages,
            st.moves.seconds,
            cut.intervals.len()
        );
        println!(
            "RESULT sweep_seconds before {t_before:.6} after {t_after:.6} speedup {:.2}",
            t_before / t_after
        );
        println!("RESULT bit_exact {exact}");
        if !exact {
            return Err(Error::InvalidPlan(
                "distributed result differs from the serial run".into(),
            ));
        }
    }
    Ok(())
}
