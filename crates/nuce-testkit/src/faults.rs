//! Fault scenarios: failed remaps leave the data intact, corrupted or
//! oversized messages from a peer are clear errors on every rank, and a rank
//! that never arrives at a collective ends the job with its rank named.
//!
//! * `faults-remap ROWS COLS SEED` — remaps that fail on one rank only (a plan
//!   with the wrong part count, a plan that does not tile, a plan for another
//!   shape, or a valid plan that differs from the other ranks') must fail on
//!   every rank and leave every rank's block and the gathered array
//!   bit-identical; a valid remap afterwards must still work.
//! * `faults-messages` — a peer's payload corrupted five ways (truncated,
//!   trailing bytes, a length prefix of 2^40, invalid UTF-8, random bytes)
//!   arriving through `gather_values` and through `bcast_value`: every rank
//!   returns the same `BadMessage` naming the sender, and the next collective
//!   works.
//! * `faults-hang RANK [H]` — RANK never arrives at a `Balancer` collective; the
//!   others must end the job (run with a small `NUCE_TIMEOUT_S`); with `H`,
//!   over `H` emulated hosts (`set_hosts`): through the host leaders.
//! * `faults-late LATE_S TIMEOUT_S` — the timeout `TIMEOUT_S` configured on
//!   every rank, then the last rank arrives `LATE_S` seconds late at
//!   `Balancer::plan`: with a timeout shorter than the delay the job must end
//!   within the timeout naming that rank (whatever `NUCE_TIMEOUT_S` says);
//!   with a longer one every rank must wait and get the plan.
//! * `faults-disagree` — the last rank plans another shape, then calls
//!   another collective than the others: each time every rank must return
//!   the same error naming both calls and the rank, and the next agreeing
//!   call must work.
//! * `faults-order` — the last rank has made one more checkpoint than the
//!   others (collectives called in different orders): every rank must return
//!   the same error naming both checkpoint numbers.

use mpi::traits::*;
use ndarray::Array2;
use nuce::collective::{bcast_value, gather_values};
use nuce::plan::array2d::{ArrayPlan, Rect};
use nuce::{Balancer, DistArray2, Error};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::array::random_tiling;
use crate::Ctx;

pub fn run(name: &str, ctx: &Ctx) -> bool {
    match name {
        "faults-remap" => remap(ctx),
        "faults-messages" => messages(ctx),
        "faults-hang" => hang(ctx),
        "faults-late" => late(ctx),
        "faults-order" => order(ctx),
        "faults-disagree" => disagree(ctx),
        _ => return false,
    }
    true
}

/// Distinct, exactly representable value of global cell `(r, c)`.
fn value(r: usize, c: usize) -> f64 {
    (r * 100_003 + c) as f64 + 0.25
}

fn remap(ctx: &Ctx) {
    let rows: usize = ctx.arg(0, 23);
    let cols: usize = ctx.arg(1, 17);
    let seed: u64 = ctx.arg(2, 7);
    let p = ctx.world.size() as usize;
    let bad_rank = ctx.world.size() - 1;
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let plan = random_tiling(rows, cols, p, &mut rng);
    let good_next = random_tiling(rows, cols, p, &mut rng);
    let global = Array2::from_shape_fn((rows, cols), |(r, c)| value(r, c));
    let root_global = (ctx.rank() == 0).then_some(&global);
    let (mut a, _) = DistArray2::scatter_with_plan(&ctx.world, 0, plan, 1, root_global)
        .expect("scatter of a valid plan");
    let mut bad_plans: Vec<(&str, ArrayPlan)> = Vec::new();
    // Wrong part count.
    let mut extra = good_next.clone();
    extra.parts.push(Rect::default());
    bad_plans.push(("parts", extra));
    // Not a tiling: parts overlap (p > 1) or leave the array (p = 1).
    let mut overlap = good_next.clone();
    overlap.parts[0] = Rect::new(0, 0, rows, cols + usize::from(p == 1));
    bad_plans.push(("not-tiling", overlap));
    // A plan for another array.
    bad_plans.push(("shape", random_tiling(rows + 1, cols, p, &mut rng)));
    // Every rank's plan valid, but the last rank's differs from the others':
    // must be refused on every rank (else cells are lost or MPI aborts).
    if p > 1 {
        bad_plans.push(("inconsistent", random_tiling(rows, cols, p, &mut rng)));
    }
    for (case, bad) in bad_plans {
        let before = a.local().to_owned();
        let plan_before = a.plan().clone();
        let mine = if ctx.rank() == bad_rank {
            &bad
        } else {
            &good_next
        };
        let res = a.remap(mine);
        let err = res.as_ref().err().map(|e| e.to_string());
        println!(
            "ERR {} {case} {}",
            ctx.rank(),
            err.as_deref().unwrap_or("none")
        );
        ctx.check(&format!("remap-{case}-fails"), res.is_err(), "no error");
        ctx.check(
            &format!("remap-{case}-keeps-block"),
            a.local() == before.view() && *a.plan() == plan_before,
            "the block or plan changed after a failed remap",
        );
        let gathered = a.gather(0).expect("gather");
        if let Some(g) = gathered {
            ctx.check(
                &format!("remap-{case}-gather-intact"),
                g == global,
                "gathered array differs from the original",
            );
        }
    }
    // The array still works: a valid remap, then gather.
    let ok = a.remap(&good_next);
    ctx.check("remap-after-failures", ok.is_ok(), format!("{ok:?}"));
    if let Some(g) = a.gather(0).expect("gather") {
        ctx.check("remap-after-failures-gather", g == global, "data lost");
    }
}

/// A record as an application might gather it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Record {
    rank: i32,
    host: String,
    samples: Vec<f64>,
}

/// A value that encodes either as a [`Record`] or as arbitrary raw bytes
/// (the corruption), and always decodes as a [`Record`].
#[derive(Debug, Clone, PartialEq)]
enum Wire {
    Good(Record),
    Raw(Vec<u8>),
}

impl Serialize for Wire {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeTuple;
        match self {
            Wire::Good(r) => r.serialize(s),
            Wire::Raw(b) => {
                let mut t = s.serialize_tuple(b.len())?;
                for x in b {
                    t.serialize_element(x)?;
                }
                t.end()
            }
        }
    }
}

impl<'de> Deserialize<'de> for Wire {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Record::deserialize(d).map(Wire::Good)
    }
}

fn record(rank: i32) -> Record {
    Record {
        rank,
        host: format!("host-{rank}"),
        samples: vec![1.5, 2.5, rank as f64],
    }
}

/// The corruptions of a valid encoding of `rec`.
fn corruptions(rec: &Record, rng: &mut ChaCha8Rng) -> Vec<(&'static str, Vec<u8>)> {
    let good = nuce::internals::comm::encode(rec).expect("encode");
    let mut trailing = good.clone();
    trailing.extend_from_slice(&[0xde, 0xad]);
    // rank (4 bytes) + host length (8) + host, then the samples' length prefix.
    let at = 4 + 8 + rec.host.len();
    let mut huge = good.clone();
    huge[at..at + 8].copy_from_slice(&(1u64 << 40).to_le_bytes());
    let mut utf8 = good.clone();
    utf8[12] = 0xff;
    let random: Vec<u8> = (0..good.len()).map(|_| rng.gen()).collect();
    vec![
        ("truncated", good[..good.len() / 2].to_vec()),
        ("trailing", trailing),
        ("huge-length", huge),
        ("bad-utf8", utf8),
        ("random", random),
    ]
}

fn messages(ctx: &Ctx) {
    let size = ctx.world.size();
    let bad = size - 1;
    let mut rng = ChaCha8Rng::seed_from_u64(11);
    let cases = corruptions(&record(bad), &mut rng);
    for (case, bytes) in &cases {
        // Through gather_values: the last rank sends garbage.
        let mine = if ctx.rank() == bad {
            Wire::Raw(bytes.clone())
        } else {
            Wire::Good(record(ctx.rank()))
        };
        let res = gather_values(&ctx.world, 0, &mine);
        report(ctx, &format!("gather-{case}"), res.err(), bad);
        // Through bcast_value: the root broadcasts garbage (the root is the sender).
        let root_val = Wire::Raw(bytes.clone());
        let res = bcast_value(&ctx.world, 0, (ctx.rank() == 0).then_some(&root_val));
        report(ctx, &format!("bcast-{case}"), res.err(), 0);
        // The communicator still works.
        let ok = gather_values(&ctx.world, 0, &Wire::Good(record(ctx.rank())));
        let fine = match ok {
            Ok(Some(v)) => v
                .iter()
                .enumerate()
                .all(|(r, w)| *w == Wire::Good(record(r as i32))),
            Ok(None) => ctx.rank() != 0,
            Err(_) => false,
        };
        ctx.check(&format!("after-{case}"), fine, "a good gather failed");
    }
}

/// Prints `ERR rank case error` and checks that the error is a `BadMessage`
/// from `sender`.
fn report(ctx: &Ctx, case: &str, err: Option<Error>, sender: i32) {
    let text = err.as_ref().map_or("none".to_string(), |e| e.to_string());
    println!("ERR {} {case} {text}", ctx.rank());
    let ok = matches!(err, Some(Error::BadMessage { rank, .. }) if rank == sender);
    ctx.check(case, ok, &text);
}

fn hang(ctx: &Ctx) {
    let who: i32 = ctx.arg(0, ctx.world.size() - 1);
    let hosts: usize = ctx.arg(1, 0);
    let mut bal = Balancer::new(&ctx.world).expect("balancer");
    bal.set_speeds(&vec![1.0; ctx.world.size() as usize])
        .expect("speeds");
    if hosts > 0 {
        let p = ctx.world.size() as usize;
        bal.set_hosts(&crate::hierarchy::block_hosts(p, hosts))
            .expect("hosts");
    }
    if ctx.rank() == who {
        println!("HANG {who}");
        use std::io::Write;
        std::io::stdout().flush().ok();
        loop {
            std::thread::sleep(std::time::Duration::from_secs(3600));
        }
    }
    let plan = bal.plan(64, 64);
    ctx.check("hang-not-reached", false, format!("plan returned {plan:?}"));
}

fn late(ctx: &Ctx) {
    let late_s: f64 = ctx.arg(0, 3.0);
    let timeout_s: f64 = ctx.arg(1, 2.0);
    let last = ctx.world.size() - 1;
    let mut bal = Balancer::new(&ctx.world).expect("balancer");
    bal.set_speeds(&vec![1.0; ctx.world.size() as usize])
        .expect("speeds");
    bal.configure(nuce::Settings {
        timeout: Some(std::time::Duration::from_secs_f64(timeout_s)),
        ..bal.settings().clone()
    })
    .expect("settings");
    ctx.world.barrier();
    let t = std::time::Instant::now();
    if ctx.rank() == last {
        std::thread::sleep(std::time::Duration::from_secs_f64(late_s));
    }
    let plan = bal.plan(64, 64);
    println!(
        "RESULT {} late waited {:.2}",
        ctx.rank(),
        t.elapsed().as_secs_f64()
    );
    ctx.check(
        "late-rank-waited-for",
        plan.as_ref()
            .is_ok_and(|p| p.parts.len() == ctx.world.size() as usize),
        format!("{plan:?}"),
    );
}

fn order(ctx: &Ctx) {
    let last = ctx.world.size() - 1;
    let seq = u64::from(ctx.rank() == last && last > 0);
    let t = Some(std::time::Duration::from_secs(20));
    let res = nuce::internals::watchdog::checkpoint(&ctx.world, 0, "faults-order", seq, t);
    match &res {
        Err(e) => println!("ERR {} order {e}", ctx.rank()),
        Ok(()) => println!("OK {} order", ctx.rank()),
    }
    // An error on every rank (one rank alone agrees with itself).
    ctx.check(
        "order-error",
        res.is_err() == (last > 0),
        format!("{res:?}"),
    );
}

fn disagree(ctx: &Ctx) {
    let last = ctx.world.size() - 1;
    let odd = ctx.rank() == last && last > 0;
    let mut bal = Balancer::new(&ctx.world).expect("balancer");
    let report = |case: &str, r: Result<(), Error>| {
        // A disagreement is its own kind of error (C: NUCE_ERR_DISAGREEMENT).
        let kind = matches!(r, Err(Error::Disagreement { .. }));
        ctx.check(&format!("{case}-is-a-disagreement"), kind, format!("{r:?}"));
        match r {
            Err(e) => println!("ERR {} {case} {e}", ctx.rank()),
            Ok(()) => println!("OK {} {case}", ctx.rank()),
        }
    };
    // Another shape on the last rank.
    let rows = if odd { 65 } else { 64 };
    report("shape", bal.plan(rows, 48).map(|_| ()));
    // Another call on the last rank.
    let r = if odd {
        bal.measure().map(|_| ())
    } else {
        bal.plan(64, 48).map(|_| ())
    };
    report("call", r);
    // Agreeing again: works.
    let ok = bal.plan(64, 48);
    ctx.check("disagree-then-agree", ok.is_ok(), format!("{ok:?}"));
}
