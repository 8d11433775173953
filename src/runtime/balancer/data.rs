//! Planning and creating distributed data at a balance point: the
//! balancer's plan verbs ([`Balancer::plan`], [`Balancer::plan3`],
//! [`Balancer::plan1d`]), and the constructors that take a balancer and
//! plan with it — [`DistArray2::new`], [`DistArray2::scatter`],
//! [`DistArray2::scatter_of`], [`DistArray3::scatter`], the grid on the
//! application's buffers ([`BufferGrid::new`]), [`DistGraph::scatter`] and
//! [`DistGraph::balance`]. Each is a balance point.

use super::*;
use crate::plan::array2d::apportion;

impl Balancer {
    /// Decomposes a `rows × cols` array for the current speeds (uniform when
    /// none were measured yet): the root plans, every rank receives the plan.
    pub fn plan(&self, rows: usize, cols: usize) -> Result<ArrayPlan> {
        let _span = info_span!("plan", rows, cols).entered();
        let planner = self.planner()?;
        self.plan_at_root(
            &format!("Balancer::plan({rows}x{cols}, algorithm {}", planner.name()),
            rows.saturating_mul(cols),
            |model| {
                Ok(model
                    .plan_within_caps(|s| planner.decompose(rows, cols, s), ArrayPlan::areas)?)
            },
        )
    }

    /// A plan of `units` work units made on the root for the current
    /// speeds' model ([`Balancer::initial_model`]) and broadcast: the
    /// checked entry of `call` (its arguments so far; the speeds are added),
    /// too few units for the ranks refused on every rank, a balance point.
    fn plan_at_root<P: Serialize + DeserializeOwned>(
        &self,
        call: &str,
        units: usize,
        plan: impl FnOnce(PlanningModel) -> Result<P>,
    ) -> Result<P> {
        let _w = waiting();
        let p = self.comm.size() as usize;
        let speeds = if self.book.speeds().is_some() {
            "measured speeds"
        } else {
            "uniform speeds"
        };
        self.arrive(&format!("{call}, {speeds})"))?;
        let planned = root_compute(&self.comm, ROOT, || {
            if units == 0 {
                return Err(Error::invalid_input(format!(
                    "{call}): nothing to plan, the shape has no cells (an extent or the length is 0)"
                )));
            }
            if units < p {
                return Err(Error::Plan(crate::plan::Error::TooManyParts {
                    parts: p,
                    units,
                }));
            }
            plan(self.initial_model(units)?)
        });
        self.phase.set(Phase::start());
        planned
    }

    /// Splits `n` units of one dimension (rows of a matrix, particles,
    /// elements of a vector) among the ranks for the current speeds
    /// (uniform when none were measured yet): rank `r` owns the units
    /// `offset_r .. offset_r + counts[r]`, `offset_r` the sum of the counts
    /// before it. The counts add up to `n` and each is within one unit of its
    /// share; with the speed functions of a size sweep
    /// ([`Balancer::measure_sizes`]) the shares are the functional ones (each
    /// rank's time for its count equal, [`crate::plan::fpm`]), and memory
    /// limits ([`Balancer::set_memory_limit`], in units here) are kept. The
    /// root plans, every rank receives the counts; the application moves its
    /// own data. A balance point: the next phase is timed from here. Errors,
    /// the same on every rank: `n` below the number of ranks or different
    /// between ranks, memory limits that hold less than `n`.
    pub fn plan1d(&self, n: usize) -> Result<Vec<usize>> {
        self.plan_at_root(&format!("Balancer::plan1d({n} units"), n, |model| {
            Ok(model.plan_within_caps(|s| Ok(apportion(n, s)), |c: &Vec<usize>| c.clone())?)
        })
    }

    /// Decomposes an `nx × ny × nz` grid for the current speeds (uniform
    /// when none were measured yet) with the balancer's 3D decomposer
    /// ([`Settings::grid_algorithm`]; by default [`Best3`](crate::plan::array3d::Best3) for a 7-point
    /// stencil of width `ghost`): the root plans, every rank receives the
    /// plan.
    pub fn plan3(&self, shape: Shape3, ghost: usize) -> Result<GridPlan3> {
        let (nx, ny, nz) = shape;
        self.plan_at_root(
            &format!("Balancer::plan3({nx}x{ny}x{nz}, ghost {ghost}"),
            nx.saturating_mul(ny).saturating_mul(nz),
            |model| {
                let d = self.settings.grid_algorithm.for_ghost(ghost)?;
                Ok(model.plan_within_caps(|s| d.decompose(shape, s), GridPlan3::volumes)?)
            },
        )
    }

    /// Makes `cp` (a container's checked channel, made on the balancer's
    /// communicator) follow the balancer's: its timeout, and its waits
    /// joining the balancer's checkpoints.
    pub(crate) fn adopt_checks(&self, cp: &mut Checkpoints) {
        cp.adopt(&self.cp);
    }

    /// A grid laid out by `plan` on the balancer's communicator (collective),
    /// its checked channel adopted by the balancer's.
    pub(super) fn grid_of(&self, plan: GridPlan3, stencil: Stencil) -> Result<BufferGrid> {
        let mut g = BufferGrid::with_plan(&self.comm, plan, stencil)?;
        g.checks_mut().adopt(&self.cp);
        Ok(g)
    }
}

impl<T: Element> DistArray2<T> {
    /// Plans a `rows × cols` array for the current speeds ([`Balancer::plan`])
    /// and creates it, default-initialised, with a ghost border of width
    /// `ghost`, on the balancer's communicator. A balance point.
    pub fn new(balancer: &mut Balancer, rows: usize, cols: usize, ghost: usize) -> Result<Self> {
        let plan = balancer.plan(rows, cols)?;
        let mut a = DistArray2::with_plan(&balancer.comm, plan, ghost)?;
        a.checks_mut().adopt(&balancer.cp);
        balancer.mark();
        Ok(a)
    }

    /// Plans the root's `global` array for the current speeds
    /// ([`Balancer::plan`]) and scatters it, with a ghost border of width
    /// `ghost`; `global` is read on the root only. A balance point. The other
    /// ranks do not state the shape they expect: [`DistArray2::scatter_of`]
    /// checks it.
    pub fn scatter(
        balancer: &mut Balancer,
        global: Option<&ndarray::Array2<T>>,
        ghost: usize,
    ) -> Result<Self> {
        Self::scatter_checked(balancer, None, global, ghost)
    }

    /// [`DistArray2::scatter`] where every rank states the global
    /// `shape` it expects: a rank that expects another shape, or a root
    /// whose array has another shape, is the same error on every rank
    /// (naming each rank's call) before any data moves.
    pub fn scatter_of(
        balancer: &mut Balancer,
        shape: (usize, usize),
        global: Option<&ndarray::Array2<T>>,
        ghost: usize,
    ) -> Result<Self> {
        Self::scatter_checked(balancer, Some(shape), global, ghost)
    }

    pub(super) fn scatter_checked(
        balancer: &mut Balancer,
        expect: Option<(usize, usize)>,
        global: Option<&ndarray::Array2<T>>,
        ghost: usize,
    ) -> Result<Self> {
        let _w = waiting();
        let shape_arg = expect.map_or(String::new(), |(r, c)| format!("{r}x{c}, "));
        balancer.arrive(&format!(
            "DistArray2::scatter({shape_arg}ghost {ghost}, {}-byte elements)",
            std::mem::size_of::<T>()
        ))?;
        let shape = root_compute(&balancer.comm, ROOT, || {
            let dim = global.map(|g| g.dim()).ok_or_else(|| {
                Error::invalid_input("DistArray2::scatter: the root has no array")
            })?;
            match expect {
                Some(e) if e != dim => Err(Error::shape_mismatch(format!(
                    "DistArray2::scatter: the root's array is {}x{}, the ranks expect {}x{}",
                    dim.0, dim.1, e.0, e.1
                ))),
                _ => Ok(dim),
            }
        })?;
        let plan = balancer.plan(shape.0, shape.1)?;
        // The first data movement pays MPI's connection set-up: its time would
        // understate the bandwidth, so it does not teach the balancer (remaps do).
        let (mut a, _) = DistArray2::scatter_with_plan(&balancer.comm, ROOT, plan, ghost, global)?;
        a.checks_mut().adopt(&balancer.cp);
        balancer.mark();
        Ok(a)
    }
}

impl<T: Element> DistArray3<T> {
    /// Plans a 3D grid of `shape` for the current speeds
    /// ([`Balancer::plan3`]) and scatters the root's `global` values
    /// (`nx·ny·nz·ncomp` in C order, components fastest; read on the root
    /// only) with `ghost` layers, on the balancer's communicator. Every rank
    /// states the shape and components; a difference is the same error on
    /// every rank. A balance point.
    pub fn scatter(
        balancer: &mut Balancer,
        shape: Shape3,
        ncomp: usize,
        global: Option<&[T]>,
        ghost: usize,
    ) -> Result<Self> {
        let _w = waiting();
        let (nx, ny, nz) = shape;
        balancer.arrive(&format!(
            "DistArray3::scatter({nx}x{ny}x{nz}, {ncomp} components, ghost {ghost}, {}-byte elements)",
            std::mem::size_of::<T>()
        ))?;
        let plan = balancer.plan3(shape, ghost)?;
        let (mut a, _) =
            DistArray3::scatter_with_plan(&balancer.comm, ROOT, plan, ghost, ncomp, global)?;
        a.checks_mut().adopt(&balancer.cp);
        balancer.mark();
        Ok(a)
    }
}

impl BufferGrid {
    /// Plans a grid of `shape` for the current speeds ([`Balancer::plan3`])
    /// and makes its layout on the balancer's communicator for `stencil`
    /// (ghost width 0 to 4): a [`Grid`](crate::runtime::layout::Grid) whose data
    /// lives in the application's buffers. Every rank states the shape and
    /// stencil; a difference is the same error on every rank. A balance point.
    pub fn new(balancer: &mut Balancer, shape: Shape3, stencil: Stencil) -> Result<Self> {
        let _w = waiting();
        let plan = balancer.plan3(shape, stencil.ghost)?;
        let g = balancer.grid_of(plan, stencil)?;
        balancer.mark();
        Ok(g)
    }
}

impl<T: GraphValue> DistGraph<T> {
    /// Partitions the root's `graph` for the current speeds (uniform when
    /// none were measured) and scatters it with the root's `values`, one per
    /// vertex, on the balancer's communicator. The root keeps an index
    /// ordering of the graph — Hilbert curve (HCI) when it has coordinates,
    /// spectral (RSBI) otherwise — so that [`Balancer::maybe_remap`] re-cuts
    /// it in O(p log n) and moves few vertices (\[KOR95\] §3). `graph` and
    /// `values` are read on the root only. A balance point.
    pub fn scatter(
        balancer: &mut Balancer,
        graph: Option<&Graph>,
        values: Option<&[T]>,
    ) -> Result<Self> {
        let _w = waiting();
        let _span = info_span!("scatter_graph").entered();
        balancer.arrive(&format!(
            "DistGraph::scatter({}-byte values)",
            std::mem::size_of::<T>()
        ))?;
        let p = balancer.comm.size() as usize;
        let speeds = balancer.speeds_or_uniform();
        let at_root = balancer.comm.rank() == ROOT;
        // Built on the root only (the index is O(n)); every rank learns whether it worked.
        let built = at_root
            .then(|| {
                let g = graph.ok_or_else(|| {
                    Error::invalid_input("DistGraph::scatter: the root has no graph")
                })?;
                if g.n() < p {
                    return Err(Error::Plan(crate::plan::Error::TooManyParts {
                        parts: p,
                        units: g.n(),
                    }));
                }
                let index = RootIndex::build(g, &speeds, std::mem::size_of::<T>())?;
                let partition = index.ordering.to_partition(&index.cut)?;
                Ok((index, partition))
            })
            .transpose();
        let built = agree(&balancer.comm, ROOT, built)?;
        let (index, partition) = built.unzip();
        let mut dg = DistGraph::scatter_with_partition(
            &balancer.comm,
            ROOT,
            graph,
            partition.as_ref(),
            values,
        )?;
        dg.index = index;
        dg.strategy = GraphStrategy::RootIndex;
        dg.core.cp.adopt(&balancer.cp);
        balancer.mark();
        Ok(dg)
    }

    /// The first partition of a distributed graph (built by
    /// [`DistGraph::from_local`], [`GraphStrategy::Geometric`]) for the
    /// current speeds (uniform when none were measured): the parallel RCB
    /// ([`DistGraph::partition_rcb`]), then a migration; no rank gathers the
    /// graph. Later balance points are [`Balancer::maybe_remap`]. A balance
    /// point.
    pub fn balance(&mut self, balancer: &mut Balancer) -> Result<MigrateStats> {
        let _w = waiting();
        balancer.arrive("DistGraph::balance")?;
        balancer.same_ranks(self.comm(), "DistGraph::balance")?;
        self.core.cp.adopt(&balancer.cp);
        let dest = self.partition_rcb(&balancer.speeds_or_uniform())?;
        let st = self.migrate(&dest)?;
        balancer.mark();
        Ok(st)
    }
}
