//! A rank leaving against a raw `MPI_Alltoallv` of the same bytes (issue 29's
//! goals: bytes moved ≤ 1.1× the minimum, time ≤ 1.2× the raw exchange): a
//! grid of `N³` f64 cells planned for the measured speeds on P ranks; the
//! last rank leaves (`Balancer::depart`, `Departure::plan_grid`,
//! `Grid::move_fields`); the raw baseline is one `MPI_Alltoallv` with the
//! same bytes between every pair of ranks (from the two plans), run just
//! after on the same ranks; a second baseline adds what any move into new
//! buffers does besides: allocate the new buffer and copy the kept cells
//! into it (one `memcpy` of their bytes). `--rounds` repetitions, each on a
//! fresh balancer and grid; prints medians and the ratios.
//!
//! ```sh
//! mpirun -np 3 target/release/examples/bench_depart --n 144 --rounds 5 [--leave RANK]
//! ```

#[path = "common/cli.rs"]
mod cli;

use nuce::Grid;
use std::time::Instant;

use mpi::datatype::{Partition, PartitionMut};
use mpi::traits::*;
use mpi::Count;
use nuce::plan::array3d::{Best3, GridDecomposer3, GridPlan3, Stencil};
use nuce::plan::depart::depart_grid;
use nuce::{Balancer, Field};

/// Bytes (of 8-byte cells) rank `from` sends rank `to` from `old` to `new`.
fn pair_bytes(old: &GridPlan3, new: &GridPlan3, from: usize, to: usize) -> usize {
    if from == to {
        return 0;
    }
    old.boxes[from]
        .intersect(&new.boxes[to])
        .map_or(0, |b| b.volume() * 8)
}

/// Every candidate the departure weighed (planned again here, pure):
/// name, predicted time against the reference's, cells moved against the
/// leaving rank's.
fn candidates(bal: &Balancer, old: &GridPlan3, leaver: usize) -> nuce::Result<String> {
    let p = old.len();
    let speeds = bal
        .measured()
        .speeds()
        .map_or(vec![1.0; p], <[f64]>::to_vec);
    let stay: Vec<f64> = (0..p).filter(|&r| r != leaver).map(|r| speeds[r]).collect();
    let stencil = Stencil::seven(1);
    let fresh = Best3 { stencil }.decompose(old.shape, &stay)?;
    let d = depart_grid(old, &speeds, &[leaver], &fresh, stencil)?;
    let least = old.boxes[leaver].volume() as f64;
    Ok(d.candidates
        .iter()
        .map(|c| {
            format!(
                "{} {:.3}/{:.3}",
                c.name,
                c.time / d.reference().time,
                c.moved as f64 / least
            )
        })
        .collect::<Vec<_>>()
        .join(", "))
}

fn main() -> nuce::Result<()> {
    let universe = mpi::initialize().unwrap();
    let world = universe.world();
    let args: Vec<String> = std::env::args().collect();
    let n: usize = cli::option(&args, "--n", "144").parse().unwrap();
    let rounds: usize = cli::option(&args, "--rounds", "5").parse().unwrap();
    let p = world.size() as usize;
    // The rank that leaves (the last by default).
    let leaver: usize = cli::option(&args, "--leave", &(p - 1).to_string())
        .parse()
        .unwrap();
    let me = world.rank() as usize;
    let pad = [1, 1, 1];
    let (mut nuce_s, mut raw_s, mut ratio_bytes) = (Vec::new(), Vec::new(), Vec::new());
    let mut fair_s = Vec::new();
    let mut chosen = String::new();
    let mut weighed = String::new();
    for _ in 0..rounds {
        let mut bal = Balancer::new(&world)?;
        bal.measure()?;
        let mut grid = Grid::new(&mut bal, (n, n, n), Stencil::seven(1))?;
        let mut u = vec![1.0f64; grid.padded_len(pad)?];
        let dep = bal.depart(me == leaver)?;
        dep.plan_grid(&bal, &mut grid)?;
        let (old, new) = (grid.layout().plan().clone(), grid.plan().clone());
        chosen.clone_from(&new.algorithm);
        if me == 0 {
            weighed = candidates(&bal, &old, leaver)?;
        }
        let mut v = vec![0.0f64; grid.padded_len(pad)?];
        world.barrier();
        let t = Instant::now();
        let stats = grid.move_fields(&[Field::new(&mut u, pad)], &mut [Field::new(&mut v, pad)])?;
        world.barrier();
        nuce_s.push(t.elapsed().as_secs_f64());
        let minimum: usize = old
            .volumes()
            .iter()
            .zip(new.volumes())
            .map(|(o, n)| n.saturating_sub(*o) * 8)
            .sum();
        ratio_bytes.push(stats.bytes as f64 / minimum.max(1) as f64);
        // The raw exchange of the same pair bytes.
        let sc: Vec<Count> = (0..p)
            .map(|r| pair_bytes(&old, &new, me, r) as Count)
            .collect();
        let rc: Vec<Count> = (0..p)
            .map(|r| pair_bytes(&old, &new, r, me) as Count)
            .collect();
        let displ = |c: &[Count]| {
            c.iter()
                .scan(0, |a, &x| {
                    let d = *a;
                    *a += x;
                    Some(d)
                })
                .collect::<Vec<Count>>()
        };
        let (sd, rd) = (displ(&sc), displ(&rc));
        // At least one byte each: an empty Vec's dangling address is 0x1,
        // Open MPI's MPI_IN_PLACE.
        let send = vec![7u8; (sc.iter().sum::<Count>() as usize).max(1)];
        let mut recv = vec![0u8; (rc.iter().sum::<Count>() as usize).max(1)];
        world.barrier();
        let t = Instant::now();
        world.all_to_all_varcount_into(
            &Partition::new(&send[..], &sc[..], &sd[..]),
            &mut PartitionMut::new(&mut recv[..], &rc[..], &rd[..]),
        );
        world.barrier();
        raw_s.push(t.elapsed().as_secs_f64());
        // Raw exchange plus the local copy of the kept cells into a fresh buffer.
        let kept = old.boxes[me]
            .intersect(&new.boxes[me])
            .map_or(0, |b| b.volume());
        let src = vec![3.0f64; kept.max(1)];
        let mut recv2 = vec![0u8; (rc.iter().sum::<Count>() as usize).max(1)];
        world.barrier();
        let t = Instant::now();
        let mut fresh = vec![0.0f64; grid.padded_len(pad)?.max(kept)];
        world.all_to_all_varcount_into(
            &Partition::new(&send[..], &sc[..], &sd[..]),
            &mut PartitionMut::new(&mut recv2[..], &rc[..], &rd[..]),
        );
        fresh[..kept].copy_from_slice(&src[..kept]);
        world.barrier();
        fair_s.push(t.elapsed().as_secs_f64());
        std::hint::black_box(&fresh);
        let _ = dep.finish(&mut bal, &mut [&mut grid])?;
    }
    if me == 0 {
        let median = |v: &mut Vec<f64>| {
            v.sort_by(f64::total_cmp);
            v[v.len() / 2]
        };
        let f = median(&mut fair_s);
        let (a, b, c) = (
            median(&mut nuce_s),
            median(&mut raw_s),
            median(&mut ratio_bytes),
        );
        println!(
            "bench_depart: {n}^3 f64 on {p} ranks, rank {leaver} leaves, {rounds} rounds: move {:.1} ms, raw MPI_Alltoallv {:.1} ms (ratio {:.3}); bytes moved / minimum {:.3}; raw + kept copy {:.1} ms (ratio {:.3}); plan {chosen}",
            a * 1e3,
            b * 1e3,
            a / b,
            c,
            f * 1e3,
            a / f
        );
        println!("  candidates (time / reference's, cells moved / leaving rank's): {weighed}");
    }
    Ok(())
}
