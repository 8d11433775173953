//! Scenarios for `DistArray3`: scatter/gather round trip on random box
//! tilings, ghost exchanges (27- and 7-point) against the serial
//! neighbourhood, random successive remaps moving exactly the cells that
//! change owner, and bad inputs giving the same error on every rank.

use mpi::traits::*;
use nuce::collective::sum_f64;
use nuce::plan::array3d::{Box3, GridPlan3, Stencil};
use nuce::DistArray3;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::Ctx;

/// Value of component `c` of cell `(i, j, k)`: unique, exactly representable.
fn value(i: usize, j: usize, k: usize, c: usize, salt: u64) -> f64 {
    ((((i as u64) << 40) | ((j as u64) << 24) | ((k as u64) << 8) | c as u64) ^ salt) as f64
}

/// The global grid in C order, components fastest.
fn global(shape: (usize, usize, usize), ncomp: usize, salt: u64) -> Vec<f64> {
    let mut v = Vec::with_capacity(shape.0 * shape.1 * shape.2 * ncomp);
    for i in 0..shape.0 {
        for j in 0..shape.1 {
            for k in 0..shape.2 {
                v.extend((0..ncomp).map(|c| value(i, j, k, c, salt)));
            }
        }
    }
    v
}

/// A random guillotine tiling of the grid into `p` boxes, some possibly
/// empty, part numbers shuffled.
pub fn random_tiling3(shape: (usize, usize, usize), p: usize, rng: &mut ChaCha8Rng) -> GridPlan3 {
    fn split(b: Box3, ids: &[usize], rng: &mut ChaCha8Rng, out: &mut [Box3]) {
        if ids.len() == 1 {
            out[ids[0]] = if b.is_empty() { Box3::default() } else { b };
            return;
        }
        let k = rng.gen_range(1..ids.len());
        let axis = rng.gen_range(0..3);
        let cut = rng.gen_range(0..=b.len(axis));
        let mut lo = [b.x, b.y, b.z];
        let mut len = [b.nx, b.ny, b.nz];
        len[axis] = cut;
        let first = Box3::new(lo[0], lo[1], lo[2], len[0], len[1], len[2]);
        lo[axis] += cut;
        len[axis] = b.len(axis) - cut;
        let second = Box3::new(lo[0], lo[1], lo[2], len[0], len[1], len[2]);
        split(first, &ids[..k], rng, out);
        split(second, &ids[k..], rng, out);
    }
    let mut ids: Vec<usize> = (0..p).collect();
    for i in (1..p).rev() {
        ids.swap(i, rng.gen_range(0..=i));
    }
    let mut boxes = vec![Box3::default(); p];
    let whole = Box3::new(0, 0, 0, shape.0, shape.1, shape.2);
    split(whole, &ids, rng, &mut boxes);
    GridPlan3::new("random", shape, boxes).expect("guillotine tilings are valid")
}

/// True when every own cell of `a` holds its global value.
fn holds_global(a: &DistArray3<f64>, salt: u64) -> bool {
    let b = a.local_box();
    let p = a.padded();
    (b.x..b.x + b.nx).all(|i| {
        (b.y..b.y + b.ny).all(|j| {
            (b.z..b.z + b.nz)
                .all(|k| (0..a.ncomp()).all(|c| p[a.index(i, j, k, c)] == value(i, j, k, c, salt)))
        })
    })
}

fn shape_args(ctx: &Ctx) -> (usize, usize, usize) {
    (ctx.arg(0, 7), ctx.arg(1, 5), ctx.arg(2, 9))
}

pub fn run(name: &str, ctx: &Ctx) -> bool {
    match name {
        "array3-roundtrip" => roundtrip(ctx),
        "array3-halo" => halo(ctx),
        "array3-remap" => remap(ctx),
        "array3-errors" => errors(ctx),
        _ => return false,
    }
    true
}

fn roundtrip(ctx: &Ctx) {
    let shape = shape_args(ctx);
    let trials: usize = ctx.arg(3, 8);
    let p = ctx.world.size() as usize;
    let mut rng = ChaCha8Rng::seed_from_u64(17);
    for t in 0..trials {
        let plan = random_tiling3(shape, p, &mut rng);
        let (ghost, ncomp) = (1 + t % 2, if t % 3 == 0 { 3 } else { 1 });
        let salt = t as u64 * 7919;
        let g = (ctx.rank() == 0).then(|| global(shape, ncomp, salt));
        let (a, _) = DistArray3::scatter_with_plan(&ctx.world, 0, plan, ghost, ncomp, g.as_deref())
            .expect("scatter");
        ctx.check(&format!("roundtrip{t}-local"), holds_global(&a, salt), "");
        let back = a.gather(0).expect("gather");
        if let Some(back) = back {
            let same = back.len() == g.as_ref().map_or(0, |g| g.len())
                && back
                    .iter()
                    .zip(g.as_ref().unwrap())
                    .all(|(x, y)| x.to_bits() == y.to_bits());
            ctx.check(
                &format!("roundtrip{t}-gather"),
                same,
                "gathered grid differs",
            );
        }
    }
}

/// The cells of `a`'s box and the ghost cells inside the grid that the
/// stencil's exchange fills: 27-point (`corners`), every cell of the
/// expanded box; 7-point, the cells outside the box along at most one axis.
/// None for an empty box.
pub fn cells_and_ghosts<T: nuce::Element>(
    a: &DistArray3<T>,
    corners: bool,
) -> Vec<(usize, usize, usize)> {
    let (b, g) = (a.local_box(), a.ghost());
    if b.is_empty() {
        return Vec::new();
    }
    let shape = a.global_shape();
    let ext = [shape.0, shape.1, shape.2];
    let range = |ax: usize| b.lo(ax).saturating_sub(g)..(b.hi(ax) + g).min(ext[ax]);
    let mut out = Vec::new();
    for i in range(0) {
        for j in range(1) {
            for k in range(2) {
                let outside = [i, j, k]
                    .iter()
                    .enumerate()
                    .filter(|&(ax, &x)| x < b.lo(ax) || x >= b.hi(ax))
                    .count();
                if corners || outside <= 1 {
                    out.push((i, j, k));
                }
            }
        }
    }
    out
}

/// Checks every cell of [`cells_and_ghosts`].
fn ghosts_hold_global(a: &DistArray3<f64>, salt: u64, corners: bool) -> (bool, String) {
    let p = a.padded();
    for (i, j, k) in cells_and_ghosts(a, corners) {
        for c in 0..a.ncomp() {
            if p[a.index(i, j, k, c)] != value(i, j, k, c, salt) {
                let b = a.local_box();
                return (false, format!("cell ({i},{j},{k}) comp {c} in box {b:?}"));
            }
        }
    }
    (true, String::new())
}

fn halo(ctx: &Ctx) {
    let shape = shape_args(ctx);
    let trials: usize = ctx.arg(3, 3);
    let p = ctx.world.size() as usize;
    let mut rng = ChaCha8Rng::seed_from_u64(23);
    for t in 0..trials {
        let plan = random_tiling3(shape, p, &mut rng);
        for ghost in [1, 2] {
            for ncomp in [1, 3] {
                for corners in [true, false] {
                    let salt = (t * 100 + ghost * 10 + ncomp) as u64;
                    let g = (ctx.rank() == 0).then(|| global(shape, ncomp, salt));
                    let (mut a, _) = DistArray3::scatter_with_plan(
                        &ctx.world,
                        0,
                        plan.clone(),
                        ghost,
                        ncomp,
                        g.as_deref(),
                    )
                    .expect("scatter");
                    // Twice: the second exchange reuses the lists and buffers.
                    for round in 0..2 {
                        let stencil = if corners {
                            Stencil::twenty_seven(ghost)
                        } else {
                            Stencil::seven(ghost)
                        };
                        a.exchange(stencil).expect("exchange");
                        let (ok, why) = ghosts_hold_global(&a, salt, corners);
                        ctx.check(
                            &format!("halo{t}-g{ghost}-c{ncomp}-{}-{round}", stencil.points()),
                            ok,
                            why,
                        );
                    }
                }
            }
        }
    }
}

fn remap(ctx: &Ctx) {
    let shape = shape_args(ctx);
    let steps: usize = ctx.arg(3, 50);
    let ncomp = 2;
    let p = ctx.world.size() as usize;
    let rank = ctx.rank() as usize;
    let mut rng = ChaCha8Rng::seed_from_u64(31);
    let salt = 4242;
    let plan = random_tiling3(shape, p, &mut rng);
    let g = (ctx.rank() == 0).then(|| global(shape, ncomp, salt));
    let (mut a, _) =
        DistArray3::scatter_with_plan(&ctx.world, 0, plan.clone(), 2, ncomp, g.as_deref())
            .expect("scatter");
    // A second field (one component, 4-byte values) follows the first.
    let g1 = (ctx.rank() == 0).then(|| {
        global(shape, 1, salt)
            .iter()
            .map(|&x| x as f32)
            .collect::<Vec<f32>>()
    });
    let (mut f, _) =
        DistArray3::scatter_with_plan(&ctx.world, 0, plan, 1, 1, g1.as_deref()).expect("scatter");
    let (mut bytes, mut minimum, mut received) = (0u64, 0u64, 0f64);
    let elem = (ncomp * std::mem::size_of::<f64>()) as u64;
    let mut all_ok = true;
    for _ in 0..steps {
        let next = random_tiling3(shape, p, &mut rng);
        let old = a.plan().clone();
        // The minimum: cells whose owner changes.
        minimum += old
            .boxes
            .iter()
            .enumerate()
            .flat_map(|(q, ob)| {
                next.boxes
                    .iter()
                    .enumerate()
                    .filter(move |(r, _)| *r != q)
                    .filter_map(move |(_, nb)| ob.intersect(nb))
            })
            .map(|x| x.volume() as u64 * elem)
            .sum::<u64>();
        // What this rank receives: its new cells that another rank owned.
        let nb = next.boxes[rank];
        let mine = old.boxes[rank].intersect(&nb).map_or(0, |x| x.volume());
        let got = ((nb.volume() - mine) as u64 * elem) as f64;
        received += sum_f64(&ctx.world, got);
        let stats = a.remap(&next).expect("remap");
        bytes += stats.bytes;
        all_ok &= holds_global(&a, salt);
        f.remap_like(&a).expect("remap like");
        let fb = f.local_box();
        all_ok &= fb == a.local_box()
            && f.local_values().iter().enumerate().all(|(n, &x)| {
                let (i, j, k) = (n / (fb.ny * fb.nz), n / fb.nz % fb.ny, n % fb.nz);
                x == value(fb.x + i, fb.y + j, fb.z + k, 0, salt) as f32
            });
        a.exchange_ghosts().expect("exchange");
        all_ok &= ghosts_hold_global(&a, salt, true).0;
    }
    ctx.check("remap-data", all_ok, "data lost or misplaced");
    if ctx.rank() == 0 {
        println!(
            "RESULT remap3 steps={steps} bytes={bytes} minimum={minimum} received={}",
            received as u64
        );
    }
}

fn errors(ctx: &Ctx) {
    let case = ctx.args.first().cloned().unwrap_or_default();
    let rank = ctx.rank();
    let p = ctx.world.size() as usize;
    let mut rng = ChaCha8Rng::seed_from_u64(5);
    let shape = (7, 5, 9);
    let plan = random_tiling3(shape, p, &mut rng);
    let g = |ncomp: usize| (rank == 0).then(|| global(shape, ncomp, 0));
    let res = match case.as_str() {
        "ghost0" => {
            DistArray3::scatter_with_plan(&ctx.world, 0, plan, 0, 1, g(1).as_deref()).map(|_| ())
        }
        "ghost5" => {
            DistArray3::scatter_with_plan(&ctx.world, 0, plan, 5, 1, g(1).as_deref()).map(|_| ())
        }
        "ghost-wide" => {
            let thin = random_tiling3((7, 2, 9), p, &mut rng);
            let gl = (rank == 0).then(|| global((7, 2, 9), 1, 0));
            DistArray3::scatter_with_plan(&ctx.world, 0, thin, 3, 1, gl.as_deref()).map(|_| ())
        }
        "shape" => {
            // The last rank expects another grid.
            let s = if rank as usize == p - 1 {
                (7, 5, 8)
            } else {
                shape
            };
            let plan = random_tiling3(s, p, &mut ChaCha8Rng::seed_from_u64(5));
            DistArray3::<f64>::with_plan(&ctx.world, plan, 1, 1).map(|_| ())
        }
        "ncomp" => {
            let n = if rank as usize == p - 1 { 2 } else { 1 };
            DistArray3::<f64>::with_plan(&ctx.world, plan, 1, n).map(|_| ())
        }
        "parts" => {
            let plan = random_tiling3(shape, p + 1, &mut rng);
            DistArray3::scatter_with_plan(&ctx.world, 0, plan, 1, 1, g(1).as_deref()).map(|_| ())
        }
        "length" => {
            let short = g(1).map(|mut v| {
                v.pop();
                v
            });
            DistArray3::scatter_with_plan(&ctx.world, 0, plan, 1, 1, short.as_deref()).map(|_| ())
        }
        "balancer-shape" => {
            // DistArray3::scatter where the last rank states another shape.
            let s = if rank as usize == p - 1 {
                (7, 5, 8)
            } else {
                shape
            };
            nuce::Balancer::new(&ctx.world).and_then(|mut bal| {
                DistArray3::scatter(&mut bal, s, 1, g(1).as_deref(), 1).map(|_| ())
            })
        }
        "remap-parts" => {
            let (mut a, _) =
                DistArray3::scatter_with_plan(&ctx.world, 0, plan, 1, 1, g(1).as_deref())
                    .expect("scatter");
            let wrong = random_tiling3(shape, p + 1, &mut rng);
            a.remap(&wrong).map(|_| ())
        }
        "remap-other-plan" => {
            // The last rank moves to another valid plan than the others.
            let (mut a, _) =
                DistArray3::scatter_with_plan(&ctx.world, 0, plan, 1, 1, g(1).as_deref())
                    .expect("scatter");
            let seed = if rank as usize == p - 1 { 7 } else { 6 };
            let next = random_tiling3(shape, p, &mut ChaCha8Rng::seed_from_u64(seed));
            a.remap(&next).map(|_| ())
        }
        c if c.starts_with("cost-") => cost_error(ctx, c, g(1).as_deref()),
        _ => {
            println!("ERR {rank} unknown case {case}");
            return;
        }
    };
    match res {
        Ok(()) => println!("ERR {rank} none"),
        Err(e) => println!("ERR {rank} {e}"),
    }
}

/// A bad cost field at a balance point (`Balancer::maybe_remap` on a
/// `DistArray3` planned by the balancer): the same error on every rank.
fn cost_error(ctx: &Ctx, case: &str, global: Option<&[f64]>) -> nuce::Result<()> {
    let rank = ctx.rank() as usize;
    let last = ctx.world.size() as usize - 1;
    let mut bal = nuce::Balancer::new(&ctx.world)?;
    let mut a = DistArray3::scatter(&mut bal, (7, 5, 9), 1, global, 1)?;
    let odd = |bad: f64| move |_, _, _| if rank == last { bad } else { 1.0 };
    match case {
        "cost-nan" => a.set_cost_with(odd(f64::NAN)),
        "cost-negative" => a.set_cost_with(odd(-1.0)),
        "cost-infinite" => a.set_cost_with(odd(f64::INFINITY)),
        "cost-zero" => a.set_cost_with(|_, _, _| 0.0),
        "cost-length" => {
            let n = a.local_box().volume() + usize::from(rank == last);
            a.set_cost(vec![1.0; n]);
        }
        "cost-some-ranks" => {
            if rank == 0 {
                a.set_cost_with(|_, _, _| 1.0);
            }
        }
        "cost-stale" => {
            // Set for the old boxes, then every box moves to the next rank.
            a.set_cost_with(|_, _, _| 1.0);
            let mut plan = a.plan().clone();
            plan.boxes.rotate_left(1);
            a.remap(&plan)?;
        }
        _ => return Err(nuce::Error::invalid_input(format!("unknown case {case}"))),
    }
    bal.maybe_remap(&mut a, 1).map(|_| ())
}
