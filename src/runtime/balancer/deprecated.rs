//! The balancer's old names, kept for the programs that use them: each
//! forwards to its replacement (hidden from the documentation).
//!
//! The old local setters stay local: each replaces one field of this
//! rank's [`Settings`] without [`Balancer::configure`]'s check, as before.

#![allow(missing_docs)]

use super::*;
use std::path::Path;

use crate::plan::array3d::GridDecomposer3;
use crate::runtime::layout::Plain;
use crate::runtime::savefile::SaveStats;

impl Balancer {
    /// Changes this rank's settings by `change` (local, unchecked: the old
    /// setters' meaning).
    fn amend(&mut self, change: impl FnOnce(&mut Settings)) {
        let mut settings = self.settings.clone();
        change(&mut settings);
        self.install(settings);
    }

    #[deprecated(note = "use bal.measured().speeds()")]
    #[doc(hidden)]
    pub fn speeds(&self) -> Option<&[f64]> {
        self.book.speeds()
    }

    #[deprecated(note = "use Balancer::configure with Settings::timeout")]
    #[doc(hidden)]
    pub fn set_timeout(&mut self, timeout: Option<Duration>) {
        self.amend(|s| s.timeout = timeout)
    }

    #[deprecated(note = "use Balancer::settings().timeout")]
    #[doc(hidden)]
    pub fn timeout(&self) -> Option<Duration> {
        self.settings.timeout
    }

    #[deprecated(note = "use Balancer::configure with Settings::policy")]
    #[doc(hidden)]
    pub fn set_policy(&mut self, policy: RemapPolicy) {
        self.amend(|s| s.policy = policy)
    }

    #[deprecated(note = "use Balancer::settings().policy")]
    #[doc(hidden)]
    pub fn policy(&self) -> RemapPolicy {
        self.settings.policy
    }

    #[deprecated(
        note = "use Balancer::configure with Settings::array_algorithm = ArrayAlgorithm::Named"
    )]
    #[doc(hidden)]
    pub fn set_algorithm(&mut self, name: &str, latency_cells: f64) -> Result<()> {
        self.configure(Settings {
            array_algorithm: ArrayAlgorithm::Named {
                name: name.to_string(),
                latency_cells,
            },
            ..self.settings.clone()
        })
    }

    #[deprecated(note = "use Balancer::settings().array_algorithm.name()")]
    #[doc(hidden)]
    pub fn algorithm(&self) -> &'static str {
        self.planner().map_or("", |p| p.name())
    }

    #[deprecated(
        note = "use Balancer::configure with Settings::array_algorithm = ArrayAlgorithm::given(…)"
    )]
    #[doc(hidden)]
    pub fn set_decomposer(&mut self, decomposer: impl ArrayDecomposer + 'static) {
        self.amend(|s| s.array_algorithm = ArrayAlgorithm::given(decomposer))
    }

    #[deprecated(
        note = "use Balancer::configure with Settings::grid_algorithm = GridAlgorithm::given(…)"
    )]
    #[doc(hidden)]
    pub fn set_decomposer3(&mut self, decomposer: impl GridDecomposer3 + 'static) {
        self.amend(|s| s.grid_algorithm = GridAlgorithm::given(decomposer))
    }

    #[deprecated(
        note = "use Balancer::configure with Settings::grid_algorithm = GridAlgorithm::named(…)"
    )]
    #[doc(hidden)]
    pub fn set_algorithm3(&mut self, name: &str) -> Result<()> {
        self.configure(Settings {
            grid_algorithm: GridAlgorithm::named(name),
            ..self.settings.clone()
        })
    }

    #[deprecated(note = "use Balancer::settings().grid_algorithm.name()")]
    #[doc(hidden)]
    pub fn algorithm3(&self) -> String {
        self.settings.grid_algorithm.name().to_string()
    }

    #[deprecated(note = "use Balancer::configure with Settings::hierarchical")]
    #[doc(hidden)]
    pub fn set_hierarchical(&mut self, hierarchical: bool) {
        self.amend(|s| s.hierarchical = hierarchical)
    }

    #[deprecated(note = "use Balancer::configure with Settings::functional_model")]
    #[doc(hidden)]
    pub fn set_functional_model(&mut self, functional_model: bool) {
        self.amend(|s| s.functional_model = functional_model)
    }
}

/// The old creation verbs of the balancer, now constructors of the types
/// they create (`DistArray2::new(&mut balancer, …)` and so on).
impl Balancer {
    #[deprecated(note = "use DistArray2::new(&mut balancer, rows, cols, ghost)")]
    #[doc(hidden)]
    pub fn new_array<T: Element>(
        &mut self,
        rows: usize,
        cols: usize,
        ghost: usize,
    ) -> Result<DistArray2<T>> {
        DistArray2::new(self, rows, cols, ghost)
    }

    #[deprecated(note = "use DistArray2::scatter(&mut balancer, global, ghost)")]
    #[doc(hidden)]
    pub fn scatter_array<T: Element>(
        &mut self,
        global: Option<&ndarray::Array2<T>>,
        ghost: usize,
    ) -> Result<DistArray2<T>> {
        DistArray2::scatter(self, global, ghost)
    }

    #[deprecated(note = "use DistArray2::scatter_of(&mut balancer, shape, global, ghost)")]
    #[doc(hidden)]
    pub fn scatter_array_of<T: Element>(
        &mut self,
        shape: (usize, usize),
        global: Option<&ndarray::Array2<T>>,
        ghost: usize,
    ) -> Result<DistArray2<T>> {
        DistArray2::scatter_of(self, shape, global, ghost)
    }

    #[deprecated(note = "use DistArray3::scatter(&mut balancer, shape, ncomp, global, ghost)")]
    #[doc(hidden)]
    pub fn scatter_array3<T: Element>(
        &mut self,
        shape: Shape3,
        ncomp: usize,
        global: Option<&[T]>,
        ghost: usize,
    ) -> Result<DistArray3<T>> {
        DistArray3::scatter(self, shape, ncomp, global, ghost)
    }

    #[deprecated(note = "use Grid::new(&mut balancer, shape, stencil)")]
    #[doc(hidden)]
    pub fn new_grid(&mut self, shape: Shape3, stencil: Stencil) -> Result<BufferGrid> {
        BufferGrid::new(self, shape, stencil)
    }

    #[deprecated(note = "use DistGraph::scatter(&mut balancer, graph, values)")]
    #[doc(hidden)]
    pub fn scatter_graph<T: GraphValue>(
        &mut self,
        graph: Option<&Graph>,
        values: Option<&[T]>,
    ) -> Result<DistGraph<T>> {
        DistGraph::scatter(self, graph, values)
    }

    #[deprecated(note = "use graph.balance(&mut balancer)")]
    #[doc(hidden)]
    pub fn partition_distributed<T: GraphValue>(
        &mut self,
        g: &mut DistGraph<T>,
    ) -> Result<MigrateStats> {
        g.balance(self)
    }
}

impl Balancer {
    #[deprecated(note = "use OwnershipRanges::new(&mut balancer, shape, procs)")]
    #[doc(hidden)]
    pub fn ownership_ranges(
        &mut self,
        shape: Shape3,
        procs: Option<[usize; 3]>,
    ) -> Result<crate::OwnershipRanges> {
        crate::OwnershipRanges::new(self, shape, procs)
    }
}

/// The balancer's old getters, now [`Balancer::measured`]'s.
impl Balancer {
    #[deprecated(note = "use balancer.measured().records()")]
    #[doc(hidden)]
    pub fn records(&self) -> Option<&[SpeedRecord]> {
        self.measured().records()
    }

    #[deprecated(note = "use balancer.measured().speed_estimates()")]
    #[doc(hidden)]
    pub fn speed_estimates(&self) -> Option<&[SpeedEstimate]> {
        self.measured().speed_estimates()
    }

    #[deprecated(note = "use balancer.measured().speed_function()")]
    #[doc(hidden)]
    pub fn speed_function(&self) -> Option<&SpeedFunction> {
        self.measured().speed_function()
    }

    #[deprecated(note = "use balancer.measured().network()")]
    #[doc(hidden)]
    pub fn network(&self) -> Option<&Network> {
        self.measured().network()
    }

    #[deprecated(note = "use balancer.measured().hosts()")]
    #[doc(hidden)]
    pub fn hosts(&self) -> Option<&Hosts> {
        self.measured().hosts()
    }

    #[deprecated(note = "use balancer.measured().bandwidth()")]
    #[doc(hidden)]
    pub fn bandwidth(&self) -> Option<f64> {
        self.measured().bandwidth()
    }

    #[deprecated(note = "use balancer.measured().memory_limits()")]
    #[doc(hidden)]
    pub fn memory_limits(&self) -> Option<&[usize]> {
        self.measured().memory_limits()
    }

    #[deprecated(note = "nuce learns the bandwidth from its own data movements")]
    #[doc(hidden)]
    pub fn observe(&mut self, stats: &MoveStats) {
        self.learn_bandwidth(stats)
    }
}

/// The balancer's old task and AMR verbs.
impl Balancer {
    #[deprecated(note = "use plan.run(&mut balancer, make_input, compute, on_result)")]
    #[doc(hidden)]
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
        plan.run(self, make_input, compute, on_result)
    }

    #[deprecated(note = "use nuce::schedule_tasks(&mut balancer, me, deadline)")]
    #[doc(hidden)]
    pub fn schedule_tasks(
        &mut self,
        me: Option<WorkerSelf>,
        deadline: f64,
    ) -> Result<(TaskPlatform, TaskSchedule)> {
        super::tasks::schedule_tasks(self, me, deadline)
    }

    #[deprecated(note = "use LocalAllocation::new(&mut balancer, grids, mesh, tp, scaling)")]
    #[doc(hidden)]
    pub fn allocate_grids(
        &mut self,
        grids: &[Grid],
        mesh: Mesh,
        tp: &TightPacking,
        scaling: Scaling,
    ) -> Result<LocalAllocation> {
        LocalAllocation::new(self, grids, mesh, tp, scaling)
    }
}

impl Balancer {
    #[deprecated(note = "use saved.restore(&mut balancer)")]
    #[doc(hidden)]
    pub fn restore_speeds(&mut self, saved: &SavedSpeeds) -> bool {
        saved.restore(self)
    }
}

/// The old per-type checkpoints of nuce's containers, each the generic
/// [`Balancer::checkpoint`] under its old name and signature.
macro_rules! old_checkpoints {
    ($($name:ident($data:ident: $($bound:path),+);)+) => {
        impl Balancer {
            $(
                #[deprecated(note = "use Balancer::checkpoint")]
                #[doc(hidden)]
                pub fn $name<T: $($bound +)+>(
                    &self,
                    data: &$data<T>,
                    path: impl AsRef<Path>,
                    user: &[u8],
                ) -> Result<SaveStats> {
                    data.checkpoint(self, path, user)
                }
            )+
        }
    };
}

old_checkpoints! {
    checkpoint_array2(DistArray2: Element, Plain);
    checkpoint_array3(DistArray3: Element, Plain);
    checkpoint_graph(DistGraph: GraphValue);
}
