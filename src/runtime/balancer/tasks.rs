//! The balance points for independent tasks and AMR grids: the
//! master–worker run ([`ExecPlan::run`]), the task schedule
//! ([`schedule_tasks`]) and the grid allocation ([`LocalAllocation::new`]),
//! each a collective of the balancer's ranks.

use super::*;

impl ExecPlan {
    /// Runs one master–worker execution of this plan on `balancer`'s
    /// communicator, the root as master ([`run_master_worker`]: inputs built
    /// by `make_input(rank, first_unit, units)` on the master, `compute` on
    /// the workers, results consumed by `on_result`). Its time is nuce's,
    /// not compute. Collective; an invalid plan is the same `Err` on every
    /// rank. A balance point.
    pub fn run<FI, FC, FR>(
        &self,
        balancer: &mut Balancer,
        make_input: FI,
        compute: FC,
        on_result: FR,
    ) -> Result<ExecReport>
    where
        FI: FnMut(i32, u64, u64) -> Vec<f64>,
        FC: FnMut(&[f64], u64) -> Vec<f64>,
        FR: FnMut(i32, u64, Vec<f64>),
    {
        let _w = waiting();
        balancer.arrive("ExecPlan::run")?;
        let r = run_master_worker(&balancer.comm, ROOT, self, make_input, compute, on_result);
        balancer.mark();
        r
    }
}

/// The MaxTasks1 schedule of a master–worker run on `balancer`'s ranks,
/// solved collectively (`collective_max_tasks1`, \[BBLRR01\] §4.3): every
/// worker passes its own measured costs, the root (the master) `None`;
/// every rank returns the same platform and schedule within `deadline`.
pub fn schedule_tasks(
    balancer: &mut Balancer,
    me: Option<WorkerSelf>,
    deadline: f64,
) -> Result<(TaskPlatform, TaskSchedule)> {
    let _w = waiting();
    balancer.arrive("schedule_tasks")?;
    collective_max_tasks1(&balancer.comm, ROOT, me, deadline)
}

impl LocalAllocation {
    /// Allocates processor submeshes to the AMR grids of all of
    /// `balancer`'s ranks with the collective TP packing
    /// ([`allocate_collective`], \[VH94\] §4.2–4.3): every rank passes its
    /// own grids and gets the submeshes of its grids.
    pub fn new(
        balancer: &mut Balancer,
        grids: &[Grid],
        mesh: Mesh,
        tp: &TightPacking,
        scaling: Scaling,
    ) -> Result<LocalAllocation> {
        let _w = waiting();
        balancer.arrive("LocalAllocation::new")?;
        allocate_collective(&balancer.comm, grids, mesh, tp, scaling)
    }
}
