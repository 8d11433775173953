//! Network probe: latency and bandwidth from every rank to rank 0.
//!
//! ```text
//! mpirun -np 3 target/release/examples/net_probe [--small 8] [--large 1048576] [--repeats 9] [--warmup 2]
//! scripts/cluster.sh mpirun -np 3 --map-by node target/release/examples/net_probe
//! ```
//!
//! Rank 0 prints one line per other rank, `LINK {"rank":…,"host":…,"link":{…}}`
//! (a JSON [`nuce::speed::network::LinkRecord`] with the rank's host name),
//! then `SUMMARY` with the probe's wall time.

use std::time::Instant;

use mpi::traits::*;

use nuce::collective::gather_values;
use nuce::internals::netprobe::link_to_root;
use nuce::speed::network::{LinkRecord, ProbeConfig};
use nuce::speed::topology;

fn parse_args() -> nuce::Result<ProbeConfig> {
    let mut cfg = ProbeConfig::default();
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut it = args.iter();
    while let Some(flag) = it.next() {
        let value = it
            .next()
            .ok_or_else(|| nuce::Error::invalid_input(format!("{flag} needs a value")))?;
        let n: usize = value
            .parse()
            .map_err(|_| nuce::Error::invalid_input(format!("{flag}: not a count: {value}")))?;
        match flag.as_str() {
            "--small" => cfg.small_bytes = n,
            "--large" => cfg.large_bytes = n,
            "--repeats" => cfg.repeats = n,
            "--warmup" => cfg.warmup = n,
            _ => return Err(nuce::Error::invalid_input(format!("unknown flag {flag}"))),
        }
    }
    Ok(cfg)
}

fn main() {
    let Some(universe) = mpi::initialize() else {
        eprintln!("net_probe: MPI initialisation failed");
        std::process::exit(1);
    };
    let world = universe.world();
    // Bad arguments are the same on every rank: the probe's own validation
    // then fails everywhere alike, so use the defaults only to report.
    let cfg = parse_args().unwrap_or_else(|e| {
        eprintln!("net_probe: {e}");
        ProbeConfig {
            repeats: 0,
            ..Default::default()
        }
    });
    let host = topology().host;
    let t0 = Instant::now();
    let result = link_to_root(&world, 0, &cfg).and_then(|link| {
        let gathered: Option<Vec<(String, Option<LinkRecord>)>> =
            gather_values(&world, 0, &(host, link))?;
        Ok(gathered)
    });
    match result {
        Ok(Some(all)) => {
            for (rank, (host, link)) in all.into_iter().enumerate() {
                if let Some(link) = link {
                    let line = serde_json::json!({"rank": rank, "host": host, "link": link});
                    println!("LINK {line}");
                }
            }
            println!(
                "SUMMARY ranks={} seconds={:.3}",
                world.size(),
                t0.elapsed().as_secs_f64()
            );
        }
        Ok(None) => {}
        Err(e) => {
            if world.rank() == 0 {
                eprintln!("net_probe: {e}");
            }
            std::process::exit(2);
        }
    }
}
