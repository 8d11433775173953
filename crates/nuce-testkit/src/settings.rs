//! Scenarios for the balancer's settings (`Settings`, `Balancer::configure`):
//!
//! * `settings-apply`: settings configured on every rank are the
//!   balancer's afterwards and plan its arrays and grids (the named
//!   decomposers' plans for the speeds);
//! * `settings-errors CASE`: settings that differ between ranks in one
//!   field, or name an unknown decomposer, are the same error on every rank
//!   (`ERR <rank> <case> <kind> <error>`, kind `disagreement` or `other`),
//!   and the settings stay as they were.

use std::time::Duration;

use mpi::traits::*;

use nuce::plan::array2d::{decomposer_by_name, ArrayDecomposer, RecursiveBisection2};
use nuce::plan::array3d::{decomposer3_by_name, Stencil};
use nuce::{ArrayAlgorithm, Balancer, Error, GridAlgorithm, Settings};

use crate::Ctx;

pub fn run(name: &str, ctx: &Ctx) -> bool {
    match name {
        "settings-apply" => apply(ctx),
        "settings-errors" => errors(ctx),
        _ => return false,
    }
    true
}

fn apply(ctx: &Ctx) {
    let p = ctx.world.size() as usize;
    let speeds: Vec<f64> = (1..=p).map(|s| s as f64).collect();
    let mut bal = Balancer::new(&ctx.world).expect("balancer");
    bal.set_speeds(&speeds).expect("speeds");
    let mut s = bal.settings().clone();
    s.timeout = Some(Duration::from_secs(30));
    s.policy.hysteresis = 0.25;
    s.array_algorithm = ArrayAlgorithm::named("rb");
    s.grid_algorithm = GridAlgorithm::named("slabs");
    s.functional_model = false;
    bal.configure(s).expect("configure");
    let got = bal.settings();
    ctx.check(
        "settings-kept",
        got.timeout == Some(Duration::from_secs(30))
            && got.policy.hysteresis == 0.25
            && got.array_algorithm.name() == "rb"
            && got.grid_algorithm.name() == "slabs"
            && !got.functional_model,
        format!("{got:?}"),
    );
    let plan = bal.plan(40, 30).expect("plan");
    let want = decomposer_by_name("rb")
        .and_then(|d| d.decompose(40, 30, &speeds))
        .expect("pure rb");
    ctx.check("plan-by-rb", plan.parts == want.parts, &plan.algorithm);
    let plan3 = bal.plan3((12, 9, 10), 1).expect("plan3");
    let want3 = decomposer3_by_name("slabs", Stencil::seven(1))
        .and_then(|d| d.decompose((12, 9, 10), &speeds))
        .expect("pure slabs");
    ctx.check(
        "plan3-by-slabs",
        plan3.boxes == want3.boxes,
        &plan3.algorithm,
    );
    // The application's own decomposer, compared by its name.
    bal.configure(Settings {
        array_algorithm: ArrayAlgorithm::given(RecursiveBisection2),
        ..bal.settings().clone()
    })
    .expect("configure a given decomposer");
    let plan = bal.plan(40, 30).expect("plan");
    let want = RecursiveBisection2
        .decompose(40, 30, &speeds)
        .expect("pure rb2");
    ctx.check("plan-by-given", plan.parts == want.parts, &plan.algorithm);
}

fn errors(ctx: &Ctx) {
    let rank = ctx.rank();
    let last = ctx.world.size() - 1;
    let case: String = ctx.arg(0, "timeout".to_string());
    let mut bal = Balancer::new(&ctx.world).expect("balancer");
    let before = format!("{:?}", bal.settings());
    let mut s = bal.settings().clone();
    match case.as_str() {
        "timeout" => s.timeout = Some(Duration::from_secs(30 + u64::from(rank == last))),
        "no-timeout" if rank == 0 => s.timeout = None,
        "policy" if rank == last => s.policy.hysteresis = 0.2,
        "arrays" => {
            s.array_algorithm = ArrayAlgorithm::named(if rank == 0 { "rb" } else { "column" })
        }
        "latency" if rank == last => {
            s.array_algorithm = ArrayAlgorithm::Named {
                name: "column".into(),
                latency_cells: 2.0,
            }
        }
        "given" if rank == 0 => s.array_algorithm = ArrayAlgorithm::given(RecursiveBisection2),
        "given" => s.array_algorithm = ArrayAlgorithm::named("rb2"),
        "grids" => s.grid_algorithm = GridAlgorithm::named(if rank == 0 { "rb" } else { "slabs" }),
        "hierarchical" if rank == last => s.hierarchical = true,
        "functional" if rank == 0 => s.functional_model = false,
        "unknown" => s.array_algorithm = ArrayAlgorithm::named("octree"),
        "unknown3" => s.grid_algorithm = GridAlgorithm::named("octree"),
        _ => {}
    }
    match bal.configure(s) {
        Err(e) => {
            let kind = match e {
                Error::Disagreement { .. } => "disagreement",
                _ => "other",
            };
            println!("ERR {rank} {case} {kind} {e}");
        }
        Ok(()) => println!("OK {rank} {case}"),
    }
    let after = format!("{:?}", bal.settings());
    ctx.check("settings-unchanged", after == before, after);
    // The balancer still works: the next collective call agrees.
    bal.check_call("after configure").expect("the next call");
}
