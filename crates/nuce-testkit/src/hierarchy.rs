//! Host hierarchy scenarios.
//!
//! * `hier-gather H` — hosts emulated as `rank % H`: the two-level gather
//!   through the host leaders returns exactly what the flat gather returns,
//!   in rank order; the detected hosts of one machine are one host.

use mpi::traits::*;
use nuce::runtime::comm::gather_values;
use nuce::runtime::hierarchy::{detect_hosts, Hosts, TwoLevel};

use crate::Ctx;

pub fn run(name: &str, ctx: &Ctx) -> bool {
    match name {
        "hier-gather" => gather(ctx),
        _ => return false,
    }
    true
}

fn gather(ctx: &Ctx) {
    let h: usize = ctx.arg(0, 2).max(1);
    let p = ctx.world.size() as usize;
    let detected = detect_hosts(&ctx.world).expect("detect hosts");
    ctx.check(
        "one-machine-one-host",
        detected.host_of == vec![0; p] && detected.len() == 1,
        format!("{detected:?}"),
    );
    let host_of: Vec<usize> = (0..p).map(|r| (r % h + 1) * 7).collect();
    let leaders: Vec<i32> = (0..p).map(|r| (r % h) as i32).collect();
    let names: Vec<String> = host_of.iter().map(|x| format!("h{x}")).collect();
    let hosts = Hosts::from_leaders(&leaders, &names).expect("hosts");
    let two = TwoLevel::new(&ctx.world, &hosts).expect("two-level comms");
    let value = (
        ctx.rank(),
        format!(
            "rank {} says {}",
            ctx.rank(),
            "x".repeat(ctx.rank() as usize)
        ),
    );
    let flat = gather_values(&ctx.world, 0, &value).expect("flat gather");
    let hier = two.gather(&ctx.world, &value).expect("two-level gather");
    ctx.check(
        "two-level-equals-flat",
        flat == hier && (ctx.rank() != 0 || flat.as_ref().map(Vec::len) == Some(p)),
        format!("{flat:?} vs {hier:?}"),
    );
    // A table of the wrong length is the same error on every rank.
    let short = Hosts::from_leaders(&[0], &["a".to_string()]).expect("hosts");
    let err = TwoLevel::new(&ctx.world, &short).err();
    ctx.check(
        "short-table-refused",
        p == 1 || err.is_some(),
        "no error for a 1-entry table",
    );
}
