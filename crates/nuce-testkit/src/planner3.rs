//! Scenario for the balancer's settable 3D decomposer
//! (`Settings::grid_algorithm` by name or given, `Balancer::configure`): the plans of
//! `plan3`/`new_grid` and of a grid's balance point are the chosen
//! decomposer's for the speeds; an unknown name, or names that differ
//! between ranks, are the same error on every rank.

use mpi::traits::*;
use nuce::plan::array3d::{
    decomposer3_by_name, GridDecomposer3, GridPlan3, RecursiveBisection3d, Stencil,
};
use nuce::Grid;
use nuce::{Balancer, GridAlgorithm, Settings};

use crate::Ctx;

pub fn run(name: &str, ctx: &Ctx) -> bool {
    match name {
        "planner3" => planner3(ctx),
        "planner3-errors" => errors(ctx),
        _ => return false,
    }
    true
}

/// Speeds 1, 2, 3, … of the ranks.
fn speeds(p: usize) -> Vec<f64> {
    (1..=p).map(|s| s as f64).collect()
}

fn same_boxes(a: &GridPlan3, b: &GridPlan3) -> bool {
    a.shape == b.shape && a.boxes == b.boxes
}

fn planner3(ctx: &Ctx) {
    let shape = (12, 9, 10);
    let p = ctx.world.size() as usize;
    let mut bal = Balancer::new(&ctx.world).expect("balancer");
    bal.set_speeds(&speeds(p)).expect("speeds");
    let algorithm3 = |bal: &Balancer| bal.settings().grid_algorithm.name().to_string();
    ctx.check("default-best", algorithm3(&bal) == "best", algorithm3(&bal));
    for name in ["slabs", "rb", "pencils", "best"] {
        bal.configure(Settings {
            grid_algorithm: GridAlgorithm::named(name),
            ..bal.settings().clone()
        })
        .expect("configure");
        let plan = bal.plan3(shape, 1).expect("plan3");
        let want = decomposer3_by_name(name, Stencil::seven(1))
            .and_then(|d| d.decompose(shape, bal.measured().speeds().expect("speeds")))
            .expect("pure plan");
        ctx.check(
            &format!("plan3-{name}"),
            same_boxes(&plan, &want) && algorithm3(&bal) == name,
            format!("{} vs {}", plan.algorithm, want.algorithm),
        );
    }
    // An application's own decomposer; a grid planned and remapped by it.
    bal.configure(Settings {
        grid_algorithm: GridAlgorithm::given(RecursiveBisection3d),
        ..bal.settings().clone()
    })
    .expect("configure");
    let mut grid = Grid::new(&mut bal, shape, Stencil::seven(1)).expect("grid");
    let want = RecursiveBisection3d
        .decompose(shape, bal.measured().speeds().expect("speeds"))
        .expect("rb");
    ctx.check(
        "grid-rb",
        same_boxes(grid.plan(), &want) && algorithm3(&bal) == "rb",
        &grid.plan().algorithm,
    );
    if p == 1 {
        return;
    }
    // The last rank becomes much faster: the remap's plan is rb's again.
    let l = grid.layout().clone();
    let work = l.local_box().volume() as f64 * 10.0;
    let speed = if ctx.rank() as usize == p - 1 {
        8.0e6
    } else {
        1.0e6
    };
    bal.record_phase(work, std::time::Duration::from_secs_f64(work / speed))
        .expect("record");
    let report = bal
        .maybe_remap_ahead(&mut grid, 10, 1_000_000)
        .expect("maybe_remap");
    let pending = grid.pending().map(|l| l.plan().algorithm.clone());
    ctx.check(
        "remap-by-rb",
        report.decision.remap && pending.as_deref().is_some_and(|a| a.starts_with("rb")),
        format!("remap {} plan {pending:?}", report.decision.remap),
    );
}

fn errors(ctx: &Ctx) {
    let rank = ctx.rank();
    let case: String = ctx.arg(0, "unknown".to_string());
    let res = (|| {
        let mut bal = Balancer::new(&ctx.world)?;
        let name = match case.as_str() {
            "unknown" => "octree",
            _ if rank == 0 => "rb",
            _ => "slabs",
        };
        bal.configure(Settings {
            grid_algorithm: GridAlgorithm::named(name),
            ..bal.settings().clone()
        })?;
        bal.plan3((8, 8, 8), 1).map(|_| ())
    })();
    match res {
        Err(e) => println!("ERR {rank} {case} {e}"),
        Ok(()) => println!("OK {rank} {case}"),
    }
}
