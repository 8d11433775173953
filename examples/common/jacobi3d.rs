//! The 7-point Jacobi solver of the 3D heat examples (`heat3d`,
//! `heat3d_cost`): initial field, sweep of a box, serial solve, and their
//! launcher.

use mpi::topology::SimpleCommunicator;
use mpi::traits::*;
use nuce::collective::agree;
use nuce::plan::array3d::Box3;

use crate::slowdown::{parse_slowdown, Slow};

/// Initialises MPI, parses `--slowdown` (one verdict for every rank) and
/// calls `run`; an error ends the rank with exit code 2, naming `name`.
pub fn launch(
    name: &str,
    slowdown: &str,
    run: impl FnOnce(&SimpleCommunicator, &[Slow]) -> nuce::Result<()>,
) {
    let universe = mpi::initialize().expect("MPI init");
    let world = universe.world();
    let rank = world.rank();
    let parsed = parse_slowdown(slowdown).map_err(nuce::Error::invalid_input);
    let result = agree(&world, 0, parsed).and_then(|slow| run(&world, &slow));
    if let Err(e) = result {
        eprintln!("{name}: rank {rank}: error: {e}");
        drop(universe);
        std::process::exit(2);
    }
}

/// The initial temperature: the face `i = 0` at 1, a warm blob inside.
pub fn initial(nx: usize, ny: usize, nz: usize) -> Vec<f64> {
    let mut v = Vec::with_capacity(nx * ny * nz);
    for i in 0..nx {
        for j in 0..ny {
            for k in 0..nz {
                v.push(if i == 0 {
                    1.0
                } else {
                    let (x, y, z) = (
                        i as f64 / nx as f64,
                        j as f64 / ny as f64,
                        k as f64 / nz as f64,
                    );
                    let r2 = (x - 0.6).powi(2) + (y - 0.3).powi(2) + (z - 0.5).powi(2);
                    0.5 * (-r2 * 40.0).exp()
                });
            }
        }
    }
    v
}

/// One 7-point Jacobi sweep of box `b` (global coordinates) of a grid of
/// `shape`, read from the padded block `src` (ghost width 1, extents
/// `b + 2` per axis) and written, unpadded and in C order, into `dst`.
/// Cells on the grid's faces keep their value (Dirichlet).
pub fn sweep(src: &[f64], b: &Box3, shape: (usize, usize, usize), dst: &mut [f64]) {
    let cells = b.ny * b.nz;
    for i in 0..b.nx {
        sweep_plane(src, b, shape, i, &mut dst[i * cells..(i + 1) * cells]);
    }
}

/// Local x-plane `i` of [`sweep`], written into `out` (`ny·nz` cells).
fn sweep_plane(src: &[f64], b: &Box3, shape: (usize, usize, usize), i: usize, out: &mut [f64]) {
    let (py, pz) = (b.ny + 2, b.nz + 2);
    let plane = py * pz;
    let gi = b.x + i;
    let mut o = 0;
    for j in 0..b.ny {
        let gj = b.y + j;
        let row = ((i + 1) * py + j + 1) * pz + 1;
        for k in 0..b.nz {
            let gk = b.z + k;
            let c = row + k;
            out[o] = if gi == 0
                || gj == 0
                || gk == 0
                || gi + 1 == shape.0
                || gj + 1 == shape.1
                || gk + 1 == shape.2
            {
                src[c]
            } else {
                (src[c - plane]
                    + src[c + plane]
                    + src[c - pz]
                    + src[c + pz]
                    + src[c - 1]
                    + src[c + 1])
                    * (1.0 / 6.0)
            };
            o += 1;
        }
    }
}

/// The serial solve: the same sweep on one box, the whole grid.
pub fn serial(shape: (usize, usize, usize), iters: usize) -> Vec<f64> {
    let (nx, ny, nz) = shape;
    let b = Box3::new(0, 0, 0, nx, ny, nz);
    let (py, pz) = (ny + 2, nz + 2);
    let mut padded = vec![0.0; (nx + 2) * py * pz];
    let mut cur = initial(nx, ny, nz);
    for _ in 0..iters {
        for i in 0..nx {
            for j in 0..ny {
                let at = ((i + 1) * py + j + 1) * pz + 1;
                padded[at..at + nz].copy_from_slice(&cur[(i * ny + j) * nz..][..nz]);
            }
        }
        sweep(&padded, &b, shape, &mut cur);
    }
    cur
}
