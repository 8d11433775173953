//! Scenarios for ranks that leave or join a running job (`Balancer::depart`,
//! `Pool`):
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
//! * `depart-join NX NY NZ ACTIVE ADMIT AT PHASES` — the ranks from
//!   `ACTIVE` on start in the standby pool (`nuce::Pool`); the active ones
//!   run the same grid, and at the balance point after phase `AT` admit
//!   `ADMIT` standby ranks: their speeds are measured, the grid is planned
//!   for every rank and moved (the new ranks' old fields are empty), the
//!   phase number travels on the grown communicator, and every rank checks
//!   its cells and face ghosts in the phases after. At the end the active
//!   ranks release the pool: a standby rank never admitted prints
//!   `POOL-RELEASED rank`; the new root prints `RESULT join ranks=P
//!   volumes=V`.

use mpi::traits::*;
use nuce::plan::array3d::{Box3, Stencil};
use nuce::{Balancer, Field, Grid, Pool};

use crate::Ctx;

pub fn run(name: &str, ctx: &Ctx) -> bool {
    match name {
        "depart-grid" => grid(ctx),
        "depart-join" => join(ctx),
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

/// The ranks that leave, from a comma-separated argument (`"0,2"`), and a
/// balancer whose ranks have the speeds `1, 2, …, p`: how the array and
/// graph departure scenarios start.
pub(crate) fn leavers_and_balancer(ctx: &Ctx, arg: &str) -> (Vec<usize>, Balancer) {
    let leavers = arg.split(',').map(|r| r.parse().expect("a rank")).collect();
    let p = ctx.world.size() as usize;
    let mut bal = Balancer::new(&ctx.world).expect("balancer");
    let speeds: Vec<f64> = (1..=p).map(|s| s as f64).collect();
    bal.set_speeds(&speeds).expect("speeds");
    (leavers, bal)
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
    let mut grid = Grid::new(&mut bal, shape, Stencil::seven(1)).expect("grid");
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

/// `depart-join` (see the module's documentation).
fn join(ctx: &Ctx) {
    let shape = (ctx.arg(0, 12), ctx.arg(1, 10), ctx.arg(2, 8));
    let active: usize = ctx.arg(3, 2);
    let admit: usize = ctx.arg(4, 1);
    let at_phase: usize = ctx.arg(5, 1);
    let phases: usize = ctx.arg(6, 3);
    let pad = [1; 3];
    let standby = ctx.rank() as usize >= active;
    let mut pool = Pool::new(&ctx.world, standby).expect("pool");
    let (mut bal, mut grid, mut u, mut comm, mut phase) = if standby {
        let (t0, cpu0) = (std::time::Instant::now(), process_cpu_ms());
        let joined = pool.wait().expect("wait");
        println!(
            "WAITED {} wall_ms={} cpu_ms={}",
            ctx.rank(),
            t0.elapsed().as_millis(),
            process_cpu_ms() - cpu0
        );
        let Some(mut j) = joined else {
            println!("POOL-RELEASED {}", ctx.rank());
            ctx.check("join-released", true, "");
            return;
        };
        let mut grid = j.grids.pop().expect("the grid");
        let mut empty: Vec<u64> = Vec::new();
        let mut v = vec![u64::MAX; grid.padded_len(pad).expect("new length")];
        grid.move_fields(
            &[Field::new(&mut empty, pad)],
            &mut [Field::new(&mut v, pad)],
        )
        .expect("move");
        let mut phase = 0u64;
        j.comm.process_at_rank(0).broadcast_into(&mut phase);
        (j.balancer, grid, v, j.comm, phase as usize + 1)
    } else {
        let comm = pool.active().expect("active").duplicate();
        let mut bal = Balancer::new(&comm).expect("balancer");
        let grid = Grid::new(&mut bal, shape, Stencil::seven(1)).expect("grid");
        let u = filled(&grid);
        (bal, grid, u, comm, 0)
    };
    while phase < phases {
        grid.exchange(&mut [Field::new(&mut u, pad)])
            .expect("exchange");
        let wrong = wrong_cells(&grid, &u);
        ctx.check(
            &format!("join-cells-{phase}"),
            wrong == 0,
            format!("{wrong} cells wrong on {:?}", grid.local_box()),
        );
        if phase == at_phase {
            comm = match pool.admit(&mut bal, admit, &mut [&mut grid]) {
                Ok(c) => c,
                Err(e) => {
                    // Nothing changed: the standby ranks still wait.
                    println!("ERR {} {e}", ctx.rank());
                    pool.release(&bal).expect("release");
                    return;
                }
            };
            let mut v = vec![u64::MAX; grid.padded_len(pad).expect("new length")];
            grid.move_fields(&[Field::new(&mut u, pad)], &mut [Field::new(&mut v, pad)])
                .expect("move");
            u = v;
            let mut p = phase as u64;
            comm.process_at_rank(0).broadcast_into(&mut p);
            if comm.rank() == 0 {
                println!(
                    "RESULT join ranks={} volumes={}",
                    comm.size(),
                    crate::comma_list(&grid.plan().volumes())
                );
            }
        }
        phase += 1;
    }
    pool.release(&bal).expect("release");
    ctx.check("join-end", comm.size() as usize >= active, comm.size());
}

/// This process's CPU time (user + system) in milliseconds, from
/// `/proc/self/stat` (clock ticks of 10 ms); 0 where it cannot be read.
fn process_cpu_ms() -> u64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    // Fields after the command name (which may hold spaces) in parentheses.
    let rest = stat.rsplit_once(')').map_or("", |(_, r)| r);
    let f: Vec<u64> = rest
        .split_whitespace()
        .map(|x| x.parse().unwrap_or(0))
        .collect();
    // utime and stime are fields 14 and 15 of the line: 12 and 13 here.
    (f.get(11).copied().unwrap_or(0) + f.get(12).copied().unwrap_or(0)) * 10
}
