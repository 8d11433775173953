//! Host hierarchy scenarios.
//!
//! * `hier-gather H` — hosts emulated as `rank % H`: the two-level gather
//!   through the host leaders returns exactly what the flat gather returns,
//!   in rank order; the detected hosts of one machine are one host. Then a
//!   `Balancer` over the same emulated hosts (`set_hosts`, speeds
//!   `1 + rank mod 3`, `Settings::hierarchical`) plans 61 × 47 cells: the plan
//!   tiles the array cell by cell, and each host's parts hold together the
//!   area a `ColumnDp` plan gives the hosts' total speeds (its host totals).
//!   A grid's balance point on that balancer (gathered through the host
//!   leaders) remaps for recorded phase speeds `3 − rank mod 3`, the same on
//!   every rank, faster ranks getting more cells.
//! * `hier-checkpoint H` — a `Balancer` over `H` emulated hosts (ranks in
//!   contiguous blocks, `set_hosts`): its checked entries go through the
//!   host leaders, the root receiving one message per host group per
//!   checkpoint (`CKPT flat=F hier=N` reports the root's messages per
//!   checkpoint before and after `set_hosts`, `BP n` per balance point);
//!   the last rank calling another call, then refusing one, gives the same
//!   error on every rank (`ERR rank case error`); agreeing calls work after.

use mpi::traits::*;
use nuce::collective::{check_identical, gather_values};
use nuce::internals::hierarchy::{detect_hosts, TwoLevel};
use nuce::internals::watchdog::arrivals_received;
use nuce::plan::array2d::{ArrayDecomposer, ArrayPlan, ColumnDp};
use nuce::plan::array3d::Stencil;
use nuce::DistArray2;
use nuce::Grid;
use nuce::{Balancer, Error, Hosts};

use crate::Ctx;

pub fn run(name: &str, ctx: &Ctx) -> bool {
    match name {
        "hier-gather" => gather(ctx),
        "hier-checkpoint" => checkpoint(ctx),
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
    hierarchical_plan(ctx, h);
}

/// The first cell of `plan` in no part or in two (outside the array counts
/// as overlap), or `None` when the parts tile the array.
fn untiled_cell(plan: &ArrayPlan) -> Option<(usize, usize)> {
    let (rows, cols) = (plan.rows, plan.cols);
    let mut n = vec![0u8; rows * cols];
    for r in &plan.parts {
        for i in r.row..r.row_end() {
            for j in r.col..r.col_end() {
                if i >= rows || j >= cols || n[i * cols + j] > 0 {
                    return Some((i, j));
                }
                n[i * cols + j] = 1;
            }
        }
    }
    n.iter().position(|&x| x == 0).map(|c| (c / cols, c % cols))
}

/// The hierarchical plan of a balancer over the hosts `rank % h`: tiling
/// and host totals (see the module docs).
fn hierarchical_plan(ctx: &Ctx, h: usize) {
    let p = ctx.world.size() as usize;
    let (rows, cols) = (61, 47);
    let speeds: Vec<f64> = (0..p).map(|r| 1.0 + (r % 3) as f64).collect();
    let host_of: Vec<usize> = (0..p).map(|r| r % h).collect();
    let mut bal = Balancer::new(&ctx.world).expect("balancer");
    bal.set_speeds(&speeds).expect("speeds");
    bal.set_hosts(&host_of).expect("hosts");
    bal.configure(nuce::Settings {
        hierarchical: true,
        ..bal.settings().clone()
    })
    .expect("settings");
    let plan = bal.plan(rows, cols).expect("hierarchical plan");
    ctx.check(
        "hier-plan-tiles",
        plan.parts.len() == p && untiled_cell(&plan).is_none(),
        format!("cell {:?} of {plan:?}", untiled_cell(&plan)),
    );
    // Hosts 0, 1, … appear in this order in rank order (rank r is on r % h).
    let nh = h.min(p);
    let totals: Vec<f64> = (0..nh)
        .map(|k| (0..p).filter(|&r| r % h == k).map(|r| speeds[r]).sum())
        .collect();
    let across = ColumnDp::default()
        .decompose(rows, cols, &totals)
        .expect("plan of the hosts");
    let areas: Vec<usize> = (0..nh)
        .map(|k| {
            (0..p)
                .filter(|&r| r % h == k)
                .map(|r| plan.parts[r].area())
                .sum()
        })
        .collect();
    let want: Vec<usize> = across.parts.iter().map(|r| r.area()).collect();
    ctx.check(
        "hier-plan-host-totals",
        areas == want,
        format!("host areas {areas:?}, a plan of the host totals {totals:?} gives {want:?}"),
    );
    // A balance point gathers through the host leaders: phases recorded at
    // speeds unlike the planned ones give the same remap on every rank, to
    // volumes that follow them.
    let mut grid = Grid::new(&mut bal, (rows, cols, 1), Stencil::seven(1)).expect("grid");
    let work = grid.local_box().volume() as f64 * 10.0;
    let phase = 1.0e6 * phase_of(ctx.rank() as usize) as f64;
    bal.record_phase(work, std::time::Duration::from_secs_f64(work / phase))
        .expect("record");
    let report = bal
        .maybe_remap_ahead(&mut grid, 10, 1_000_000)
        .expect("a balance point through the leaders");
    let vols = grid.pending().map(|l| l.plan().volumes());
    let same = check_identical(&ctx.world, 0, "decision", &(report.decision.remap, &vols));
    let follows = vols
        .as_ref()
        .is_none_or(|v| (0..p).all(|r| (0..p).all(|q| phase_of(r) <= phase_of(q) || v[r] > v[q])));
    ctx.check(
        "hier-balance-point",
        same.is_ok() && report.decision.remap == (p > 1) && follows,
        format!("remap {} volumes {vols:?} {same:?}", report.decision.remap),
    );
}

/// The speed the hierarchy scenario records for rank `r`'s phase.
fn phase_of(r: usize) -> usize {
    3 - r % 3
}

/// Host `r * h / p` of rank `r`: `h` emulated hosts in contiguous blocks.
pub fn block_hosts(p: usize, h: usize) -> Vec<usize> {
    (0..p).map(|r| r * h.max(1) / p.max(1)).collect()
}

/// Messages the root receives at one checked entry `op` of `bal`.
fn root_messages(bal: &Balancer, op: &str) -> u64 {
    let before = arrivals_received();
    bal.check_call(op).expect("an agreeing checked entry");
    arrivals_received() - before
}

/// The two-level checked entry (see the module docs).
fn checkpoint(ctx: &Ctx) {
    let h: usize = ctx.arg(0, 2).max(1);
    let p = ctx.world.size() as usize;
    let last = ctx.world.size() - 1;
    let mut bal = Balancer::new(&ctx.world).expect("balancer");
    let flat = root_messages(&bal, "flat");
    let host_of = block_hosts(p, h);
    bal.set_hosts(&host_of).expect("hosts");
    let hier = root_messages(&bal, "through the leaders");
    // Host groups: the root alone, then each host's other ranks.
    let groups = (0..h).filter(|&k| (1..p).any(|r| host_of[r] == k)).count() as u64;
    println!("CKPT {} flat={flat} hier={hier}", ctx.rank());
    ctx.check(
        "root-hears-one-message-per-host",
        ctx.rank() != 0 || (flat == p as u64 - 1 && hier == groups),
        format!(
            "flat {flat} (p - 1 = {}), hier {hier} ({groups} host groups)",
            p - 1
        ),
    );
    let report = |case: &str, r: Result<(), Error>, want: &str| {
        let text = r.as_ref().err().map_or("none".into(), |e| e.to_string());
        println!("ERR {} {case} {text}", ctx.rank());
        ctx.check(case, p == 1 || text.contains(want), &text);
    };
    let odd = ctx.rank() == last;
    let call = if odd { "step 2" } else { "step 1" };
    report(
        "hier-disagree",
        bal.check_call(call),
        &format!("rank(s) [{last}] call application: step 2"),
    );
    let refused = Error::invalid_input("a buffer of the wrong size");
    report(
        "hier-refuse",
        bal.entry("refusable", odd.then_some(&refused)),
        &format!("rank {last}"),
    );
    ctx.check(
        "hier-agree-after",
        bal.check_call("step 3").is_ok(),
        "agreeing call failed",
    );
    // A balance point on a small array: the root's checkpoint messages.
    let mut a = DistArray2::<f64>::new(&mut bal, 32, 24, 1).expect("array");
    let before = arrivals_received();
    bal.maybe_remap(&mut a, 1).expect("balance point");
    let bp = arrivals_received() - before;
    println!("BP {} {bp}", ctx.rank());
    ctx.check(
        "balance-point-root-messages",
        ctx.rank() != 0 || bp <= 2 * groups,
        format!("{bp} messages at the root for {groups} host groups"),
    );
}
