//! Scenarios for ranks that leave a running job (`Balancer::depart`):
//!
//! * `depart-grid NX NY NZ LEAVERS AT PHASES [SPEEDS]` — a grid of
//!   `NX×NY×NZ` cells holding their global ids (one u64 field, padding 1,
//!   7-point stencil); each phase exchanges ghosts and checks every own
//!   cell and every face ghost against the global ids. At the balance
//!   point after phase `AT` the ranks of `LEAVERS` (comma-separated, of
//!   the current communicator; `none` for nobody) leave: the grid is
//!   planned for the others, the move carries every cell into new buffers,
//!   `finish` splits the communicator, and the ranks that stay run the
//!   remaining phases on it. With `SPEEDS` (comma-separated, one per
//!   rank), the speeds are set to them first (a speed change at the same
//!   balance point). Prints `RELEASED rank` on a leaving rank, and on the
//!   new root `RESULT depart ranks=P' moved=B minimum=M volumes=V` (bytes
//!   moved by the move; the least any move to these volumes must carry:
//!   what the ranks that grow receive; the cells per rank that stays).

use mpi::traits::*;
use nuce::internals::layout::Field;
use nuce::plan::array3d::{Box3, Stencil};
use nuce::{Balancer, Grid};

use crate::Ctx;

pub fn run(name: &str, ctx: &Ctx) -> bool {
    match name {
        "depart-grid" => grid(ctx),
        _ => return false,
    }
    true
}

/// The padded index of global cell `(i, j, k)` in a buffer for `b` padded by 1.
fn at(b: &Box3, i: usize, j: usize, k: usize) -> usize {
    let d = [b.nx + 2, b.ny + 2, b.nz + 2];
    ((i + 1 - b.x) * d[1] + (j + 1 - b.y)) * d[2] + (k + 1 - b.z)
}

fn id(shape: (usize, usize, usize), i: usize, j: usize, k: usize) -> u64 {
    ((i * shape.1 + j) * shape.2 + k) as u64
}

/// A buffer for the grid's box with every own cell set to its id.
fn filled(grid: &Grid) -> Vec<u64> {
    let b = grid.local_box();
    let shape = grid.global_shape();
    let mut u = vec![u64::MAX; grid.padded_len([1; 3]).expect("padded length")];
    for i in b.x..b.x + b.nx {
        for j in b.y..b.y + b.ny {
            for k in b.z..b.z + b.nz {
                u[at(&b, i, j, k)] = id(shape, i, j, k);
            }
        }
    }
    u
}

/// Cells of `u` (own and face ghosts) that do not hold their id.
fn wrong_cells(grid: &Grid, u: &[u64]) -> usize {
    let b = grid.local_box();
    let shape = grid.global_shape();
    let ext = [shape.0, shape.1, shape.2];
    let mut wrong = 0;
    for i in b.x..b.x + b.nx {
        for j in b.y..b.y + b.ny {
            for k in b.z..b.z + b.nz {
                wrong += usize::from(u[at(&b, i, j, k)] != id(shape, i, j, k));
                for (a, s) in [(0, -1i64), (0, 1), (1, -1), (1, 1), (2, -1), (2, 1)] {
                    let mut c = [i as i64, j as i64, k as i64];
                    c[a] += s;
                    if (0..3).all(|x| c[x] >= 0 && (c[x] as usize) < ext[x]) {
                        let (x, y, z) = (c[0] as usize, c[1] as usize, c[2] as usize);
                        wrong += usize::from(u[at(&b, x, y, z)] != id(shape, x, y, z));
                    }
                }
            }
        }
    }
    wrong
}

fn list(s: &str) -> Vec<String> {
    if s == "none" {
        Vec::new()
    } else {
        s.split(',').map(str::to_string).collect()
    }
}

fn grid(ctx: &Ctx) {
    let shape = (ctx.arg(0, 12), ctx.arg(1, 10), ctx.arg(2, 8));
    let leavers: Vec<usize> = list(&ctx.args[3])
        .iter()
        .map(|r| r.parse().unwrap())
        .collect();
    let at_phase: usize = ctx.arg(4, 1);
    let phases: usize = ctx.arg(5, 3);
    let mut bal = Balancer::new(&ctx.world).expect("balancer");
    let mut grid = bal.new_grid(shape, Stencil::seven(1)).expect("grid");
    let mut u = filled(&grid);
    let mut comm = ctx.world.duplicate();
    let pad = [1; 3];
    for phase in 0..phases {
        grid.exchange(&mut [Field::new(&mut u, pad)])
            .expect("exchange");
        let wrong = wrong_cells(&grid, &u);
        ctx.check(
            &format!("depart-cells-{phase}"),
            wrong == 0,
            format!("{wrong} cells wrong on {:?}", grid.local_box()),
        );
        if phase != at_phase {
            continue;
        }
        if let Some(s) = ctx.args.get(6) {
            let speeds: Vec<f64> = list(s).iter().map(|v| v.parse().unwrap()).collect();
            bal.set_speeds(&speeds).expect("speeds");
        }
        let me = comm.rank() as usize;
        let dep = match bal.depart(leavers.contains(&me)) {
            Ok(d) => d,
            Err(e) => {
                println!("ERR {} {e}", ctx.rank());
                return;
            }
        };
        ctx.check(
            "depart-set",
            dep.leaving() == leavers.as_slice(),
            format!("{:?}", dep.leaving()),
        );
        dep.plan_grid(&bal, &mut grid).expect("plan the grid");
        // No move can carry less than what the ranks that grow receive.
        let (old, new) = (grid.layout().plan().volumes(), grid.plan().volumes());
        let minimum: usize = old
            .iter()
            .zip(&new)
            .map(|(o, n)| n.saturating_sub(*o))
            .sum();
        let mut v = vec![u64::MAX; grid.padded_len(pad).expect("new length")];
        let moved = grid
            .move_fields(&[Field::new(&mut u, pad)], &mut [Field::new(&mut v, pad)])
            .expect("move");
        u = v;
        ctx.check(
            "depart-empty-when-leaving",
            !dep.is_leaving() || grid.local_box().is_empty(),
            format!("{:?}", grid.local_box()),
        );
        match dep.finish(&mut bal, &mut [&mut grid]).expect("finish") {
            None => {
                println!("RELEASED {}", ctx.rank());
                return;
            }
            Some(c) => {
                if c.rank() == 0 {
                    println!(
                        "RESULT depart ranks={} moved={} minimum={} volumes={}",
                        c.size(),
                        moved.bytes,
                        minimum * 8,
                        crate::comma_list(&grid.plan().volumes())
                    );
                }
                comm = c;
            }
        }
    }
    // A balance point on the new communicator works too.
    let report = bal.maybe_remap(&mut grid, 1).expect("a balance point");
    if report.decision.remap {
        let mut v = vec![u64::MAX; grid.padded_len(pad).expect("new length")];
        grid.move_fields(&[Field::new(&mut u, pad)], &mut [Field::new(&mut v, pad)])
            .expect("move");
        u = v;
    }
    grid.exchange(&mut [Field::new(&mut u, pad)])
        .expect("exchange");
    let wrong = wrong_cells(&grid, &u);
    ctx.check(
        "depart-cells-end",
        wrong == 0,
        format!("{wrong} cells wrong"),
    );
}
