//! Save files against raw MPI-IO of the same bytes (issue 29's goal: write and
//! read at ≥ 0.5× a raw MPI-IO write/read): a grid of `N³` f64 cells planned
//! for the measured speeds, saved with `Grid::save` and read back with
//! `SavedGrid`; the raw baseline writes each rank's bytes contiguously with
//! `MPI_File_write_at_all` and reads them with `MPI_File_read_at_all`
//! (over an existing file, into a buffer used before), and "raw alone" with
//! each rank's own single `MPI_File_write_at` / `MPI_File_read_at`. The
//! variants alternate, `--rounds` times; prints the medians and the ratios
//! raw time / nuce time (bandwidth of nuce relative to raw).
//!
//! With `--graph`: the `N³` grid graph (6 neighbours, 3D coordinates, one
//! f64 per vertex) built from per-rank slabs and partitioned for the
//! speeds, saved with `DistGraph::save` and restarted with `SavedGraph`
//! (`new_graph`: the read, the checksum, the build and the parallel
//! partition for this run's speeds), against raw MPI-IO of the file's bytes;
//! the restart's read part alone (open, read, decode, checksum: without the
//! build and the partition) is a column of its own.
//!
//! Both print where a save's and a read's time goes: nuce's `save.*`
//! tracing spans (header, MPI-IO, staging with the checksums' hashing, …),
//! the slowest rank's, medians.
//!
//! ```sh
//! mpirun -np 2 target/release/examples/bench_save --n 160 --rounds 5 --dir /tmp
//! mpirun -np 2 target/release/examples/bench_save --graph --n 60 --rounds 5 --dir /tmp
//! ```

#[path = "common/cli.rs"]
mod cli;
#[path = "common/slab_graph.rs"]
mod slab_graph;
#[path = "common/spans.rs"]
mod spans;
use nuce::Grid;
use slab_graph::slab_graph;

use std::ffi::CString;
use std::time::Instant;

use mpi::ffi;
use mpi::traits::*;
use nuce::plan::array3d::Stencil;
use nuce::{Balancer, DistGraph, Field, SavedGraph, SavedGrid};

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// The spans of a grid's read (`SavedGrid::open` + `read`): `save.io` the
/// MPI-IO calls, `save.stage` the copies to the padded buffers with the
/// checksums' hashing.
const GRID_STEPS: &[&str] = &[
    "save.open",
    "save.read.entry",
    "save.read.open",
    "save.io",
    "save.stage",
    "save.read.close",
    "save.read.checksum",
];

/// The spans of a save (`Grid::save`, `DistGraph::save`; a graph's
/// records, their checksum and bytes first).
const WRITE_STEPS: &[&str] = &[
    "save.graph.records",
    "save.graph.pieces",
    "save.graph.checksum",
    "save.graph.bytes",
    "save.write.open",
    "save.io",
    "save.stage",
    "save.write.close",
    "save.write.rename",
];

/// The spans of a graph's restart (`SavedGraph::open` + `new_graph`);
/// `save.graph.records` holds the three after it.
const GRAPH_STEPS: &[&str] = &[
    "save.open",
    "save.graph.records",
    "save.io",
    "save.graph.decode",
    "save.graph.checksum",
    "save.graph.build",
    "save.graph.partition",
];

/// Prints the median over rounds of each step's time (the slowest rank's).
fn print_steps(what: &str, names: &[&str], rounds: &[Vec<f64>]) {
    let steps: Vec<String> = names
        .iter()
        .enumerate()
        .map(|(k, n)| {
            let mut v: Vec<f64> = rounds.iter().map(|r| r[k]).collect();
            format!("{n} {:.2}", median(&mut v) * 1e3)
        })
        .collect();
    println!(
        "  {what} steps (ms, slowest rank, medians): {}",
        steps.join(", ")
    );
}

/// A raw write (or read) of `buf` at this rank's offset: collective
/// (`MPI_File_write_at_all`, `MPI_File_read_at_all`), or each rank's own
/// one call (`MPI_File_write_at`, `MPI_File_read_at`: "raw alone").
fn raw_io<C: Communicator>(
    comm: &C,
    path: &str,
    buf: &mut [u8],
    write: bool,
    collective: bool,
) -> f64 {
    let cpath = CString::new(path).unwrap();
    let mut upto = 0u64;
    comm.scan_into(
        &(buf.len() as u64),
        &mut upto,
        mpi::collective::SystemOperation::sum(),
    );
    let offset = upto - buf.len() as u64;
    comm.barrier();
    let t = Instant::now();
    // SAFETY: a NUL-terminated path, buffers of their lengths, MPI running.
    unsafe {
        let mut fh = ffi::RSMPI_FILE_NULL;
        let mode = if write {
            ffi::MPI_MODE_CREATE | ffi::MPI_MODE_WRONLY
        } else {
            ffi::MPI_MODE_RDONLY
        };
        let rc = ffi::MPI_File_open(
            comm.as_raw(),
            cpath.as_ptr(),
            mode as i32,
            ffi::RSMPI_INFO_NULL,
            &mut fh,
        );
        assert_eq!(rc, 0, "MPI_File_open");
        let (at, n, byte, st) = (
            offset as ffi::MPI_Offset,
            buf.len() as i32,
            ffi::RSMPI_UINT8_T,
            ffi::RSMPI_STATUS_IGNORE,
        );
        let p = buf.as_mut_ptr().cast();
        let rc = match (write, collective) {
            (true, true) => ffi::MPI_File_write_at_all(fh, at, p, n, byte, st),
            (true, false) => ffi::MPI_File_write_at(fh, at, p, n, byte, st),
            (false, true) => ffi::MPI_File_read_at_all(fh, at, p, n, byte, st),
            (false, false) => ffi::MPI_File_read_at(fh, at, p, n, byte, st),
        };
        assert_eq!(rc, 0, "MPI_File_write/read_at_all");
        if write {
            ffi::MPI_File_sync(fh);
        }
        ffi::MPI_File_close(&mut fh);
    }
    comm.barrier();
    t.elapsed().as_secs_f64()
}

/// The times of one variant per round: nuce's, the raw collective call's,
/// the raw call of each rank alone.
#[derive(Default)]
struct Times {
    nuce: Vec<f64>,
    raw: Vec<f64>,
    alone: Vec<f64>,
}

impl Times {
    /// `what` nuce … raw … (ratio) raw alone … (ratio): medians, ratios
    /// raw time / nuce time.
    fn line(&mut self, what: &str) -> String {
        let [n, r, a] = [&mut self.nuce, &mut self.raw, &mut self.alone].map(|v| median(v));
        format!(
            "{what} nuce {:.1} ms raw {:.1} ms (ratio raw/nuce {:.3}) raw alone {:.1} ms (ratio {:.3})",
            n * 1e3,
            r * 1e3,
            r / n,
            a * 1e3,
            a / n
        )
    }

    /// Times the raw variants of `buf` (collective, then alone).
    fn raw<C: Communicator>(&mut self, comm: &C, path: &str, buf: &mut [u8], write: bool) {
        self.raw.push(raw_io(comm, path, buf, write, true));
        self.alone.push(raw_io(comm, path, buf, write, false));
    }
}

fn main() -> nuce::Result<()> {
    spans::install("save.");
    let universe = mpi::initialize().unwrap();
    let world = universe.world();
    let args: Vec<String> = std::env::args().collect();
    let n: usize = cli::option(&args, "--n", "160").parse().unwrap();
    let rounds: usize = cli::option(&args, "--rounds", "5").parse().unwrap();
    let dir = cli::option(&args, "--dir", "/tmp");
    let tag = std::process::id();
    let save_path = format!("{dir}/bench-save-{tag}.nuce");
    let raw_path = format!("{dir}/bench-save-{tag}.raw");
    // The same name on every rank: the root's process id.
    let mut root_tag = tag;
    world.process_at_rank(0).broadcast_into(&mut root_tag);
    let save_path = save_path.replace(&tag.to_string(), &root_tag.to_string());
    let raw_path = raw_path.replace(&tag.to_string(), &root_tag.to_string());

    let mut bal = Balancer::new(&world)?;
    bal.measure()?;
    if args.iter().any(|a| a == "--graph") {
        return graph(&mut bal, n, rounds, (&save_path, &raw_path));
    }
    let mut grid = Grid::new(&mut bal, (n, n, n), Stencil::seven(1))?;
    let pad = [1, 1, 1];
    let mut u: Vec<f64> = (0..grid.padded_len(pad)?).map(|i| i as f64).collect();
    let mut v = vec![0.0f64; u.len()];
    let mut raw = vec![7u8; grid.local_box().volume() * 8];
    let (mut w, mut r) = (Times::default(), Times::default());
    let (mut steps, mut wsteps) = (vec![], vec![]);
    for _ in 0..rounds {
        world.barrier();
        spans::take(&[]);
        let t = Instant::now();
        grid.save(&save_path, &[Field::new(&mut u, pad)], b"")?;
        world.barrier();
        w.nuce.push(t.elapsed().as_secs_f64());
        wsteps.push(spans::slowest(&world, &spans::take(WRITE_STEPS)));
        w.raw(&world, &raw_path, &mut raw, true);
        world.barrier();
        spans::take(&[]);
        let t = Instant::now();
        let saved = SavedGrid::open(&world, &save_path)?;
        saved.read(&mut grid, &mut [Field::new(&mut v, pad)])?;
        world.barrier();
        r.nuce.push(t.elapsed().as_secs_f64());
        steps.push(spans::slowest(&world, &spans::take(GRID_STEPS)));
        r.raw(&world, &raw_path, &mut raw, false);
    }
    if world.rank() == 0 {
        let bytes = (n * n * n * 8) as f64;
        println!(
            "bench_save: {n}^3 f64 ({:.1} MB) on {} ranks, {rounds} rounds: {}; {}",
            bytes / 1e6,
            world.size(),
            w.line("write"),
            r.line("read")
        );
        print_steps("write", WRITE_STEPS, &wsteps);
        print_steps("read", GRID_STEPS, &steps);
        let _ = std::fs::remove_file(&save_path);
        let _ = std::fs::remove_file(&raw_path);
    }
    Ok(())
}

/// The `--graph` variant (see the module's documentation).
fn graph(
    bal: &mut Balancer,
    n: usize,
    rounds: usize,
    (save, raw): (&str, &str),
) -> nuce::Result<()> {
    let p = bal.comm().size() as usize;
    let mut g = slab_graph(bal.comm(), (n, n, n), 0.0)?;
    g.balance(bal)?;
    let comm = bal.comm().duplicate();
    let bytes = g.save(save, b"")?.bytes;
    let mut buf = vec![7u8; (bytes as usize).div_ceil(p)];
    let (mut w, mut r) = (Times::default(), Times::default());
    let (mut steps, mut reads, mut wsteps) = (vec![], vec![], vec![]);
    for _ in 0..rounds {
        comm.barrier();
        spans::take(&[]);
        let t = Instant::now();
        g.save(save, b"")?;
        comm.barrier();
        w.nuce.push(t.elapsed().as_secs_f64());
        wsteps.push(spans::slowest(&comm, &spans::take(WRITE_STEPS)));
        w.raw(&comm, raw, &mut buf, true);
        comm.barrier();
        spans::take(&[]);
        let t = Instant::now();
        let back: DistGraph<f64> = SavedGraph::open(&comm, save)?.new_graph(bal)?;
        comm.barrier();
        r.nuce.push(t.elapsed().as_secs_f64());
        let mine = spans::take(GRAPH_STEPS);
        // The read part alone: the open and the records (read, decode,
        // checksum), this rank's; the slowest rank's.
        reads.push(spans::slowest(&comm, &[mine[0] + mine[1]])[0]);
        steps.push(spans::slowest(&comm, &mine));
        r.raw(&comm, raw, &mut buf, false);
        g = back;
    }
    if comm.rank() == 0 {
        println!(
            "bench_save --graph: {n}^3 vertices ({:.1} MB file) on {p} ranks, {rounds} rounds: {}; {}",
            bytes as f64 / 1e6,
            w.line("save"),
            r.line("restart")
        );
        // The read part alone against the raw reads.
        let (mut alone, mut raw_reads) = (r.alone.clone(), r.raw.clone());
        let (read, raw_read, raw_alone) = (
            median(&mut reads),
            median(&mut raw_reads),
            median(&mut alone),
        );
        println!(
            "  read part alone (open + records: no build, no partition) {:.1} ms: raw/nuce {:.3}, raw alone/nuce {:.3}",
            read * 1e3,
            raw_read / read,
            raw_alone / read
        );
        print_steps("save", WRITE_STEPS, &wsteps);
        print_steps("restart", GRAPH_STEPS, &steps);
        let _ = std::fs::remove_file(save);
        let _ = std::fs::remove_file(raw);
    }
    Ok(())
}
