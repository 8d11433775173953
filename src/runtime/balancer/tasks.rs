//! The balancer's verbs for independent tasks and AMR grids: the
//! master–worker run, the task schedule and the grid allocation.

use super::*;

impl Balancer {
    /// Runs one master–worker execution of `plan` on the balancer's
    /// communicator, the root as master ([`run_master_worker`]: inputs built
    /// by `make_input(rank, first_unit, units)` on the master, `compute` on
    /// the workers, results consumed by `on_result`). Its time is nuce's,
    /// not compute. Collective; an invalid plan is the same `Err` on every
    /// rank. A balance point.
    pub fn master_worker<FI, FC, FR>(
        &mut self,
        plan: &ExecPlan,
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
        self.arrive("Balancer::master_worker")?;
        let r = run_master_worker(&self.comm, ROOT, plan, make_input, compute, on_result);
        self.mark();
        r
    }

    /// The MaxTasks1 schedule of a master–worker run, solved collectively
    /// (`collective_max_tasks1`, \[BBLRR01\] §4.3): every worker passes its
    /// own measured costs, the root (the master) `None`; every rank returns
    /// the same platform and schedule within `deadline`.
    pub fn schedule_tasks(
        &mut self,
        me: Option<WorkerSelf>,
        deadline: f64,
    ) -> Result<(TaskPlatform, TaskSchedule)> {
        let _w = waiting();
        self.arrive("Balancer::schedule_tasks")?;
        collective_max_tasks1(&self.comm, ROOT, me, deadline)
    }

    /// Allocates processor submeshes to the AMR grids of all ranks with the
    /// collective TP packing ([`allocate_collective`], \[VH94\] §4.2–4.3):
    /// every rank passes its own grids and gets the submeshes of its grids.
    pub fn allocate_grids(
        &mut self,
        grids: &[Grid],
        mesh: Mesh,
        tp: &TightPacking,
        scaling: Scaling,
    ) -> Result<LocalAllocation> {
        let _w = waiting();
        self.arrive("Balancer::allocate_grids")?;
        allocate_collective(&self.comm, grids, mesh, tp, scaling)
    }
}
