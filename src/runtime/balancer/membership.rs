//! Ranks that leave a running job (issue 29): a rank that leaves is a rank
//! whose share becomes zero. At a balance point every rank says whether it
//! leaves ([`Balancer::depart`], collective: the set is the same on every
//! rank); each grid is planned for the ranks that stay, at their speeds,
//! with empty boxes for those that leave ([`Departure::plan_grid`]: a
//! pending move, completed by [`Grid::move_fields`] into the application's
//! buffers for the new box, as after any remap; arrays and graphs move at
//! once: [`Departure::plan_array3`], [`Departure::plan_array2`],
//! [`Departure::plan_graph`]); then
//! [`Departure::finish`] splits the communicator: on the ranks that stay
//! the balancer and grids are replaced by their successors on the new,
//! smaller communicator (in their old order: the first rank that stays is
//! the new root), with their speed state carried over; the ranks that
//! leave hold nothing and are released.
//!
//! Without ULFM a process of the job cannot end before the others:
//! `MPI_Finalize` is collective over the job (Open MPI 4.1, MPICH 4.0). A
//! released rank may do other work or wait in `MPI_Finalize`; it takes no
//! part in nuce's collectives any more. A rank that dies instead of
//! leaving ends the job: save the grid every few phases
//! ([`Grid::save`]) and restart on the ranks left ([`crate::SavedGrid`]).

use mpi::topology::{Color, SimpleCommunicator};
use mpi::traits::*;

use super::Balancer;
use crate::error::{Error, Result};
use crate::plan::array2d::weighted::box_of;
use crate::plan::array2d::ArrayPlan;
use crate::plan::array3d::{GridPlan3, Stencil};
use crate::plan::depart::{depart_array, depart_grid};
use crate::runtime::array::{DistArray2, Element};
use crate::runtime::array3::DistArray3;
use crate::runtime::clock::waiting;
use crate::runtime::comm::agree;
use crate::runtime::graph::{DistGraph, GraphValue, MigrateStats};
use crate::runtime::layout::Grid;
use crate::runtime::object::MoveStats;

/// The ranks leaving at this balance point, the same on every rank
/// ([`Balancer::depart`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Departure {
    /// Ranks of the balancer's communicator that leave, ascending.
    leaving: Vec<usize>,
    /// This rank's rank in the balancer's communicator.
    rank: usize,
    /// Ranks of the communicator.
    size: usize,
}

impl Balancer {
    /// A balance point where every rank says whether it `leaving` the job
    /// (collective; e.g. after a preemption notice on that rank). Returns
    /// the departure set, the same on every rank; an error on every rank
    /// when every rank would leave. With nobody leaving, the grids' plans
    /// and [`Departure::finish`] change nothing but still must be called
    /// on every rank (or skipped on every rank: test
    /// [`Departure::is_empty`]). A rank whose leave notice arrived
    /// ([`crate::catch_leave_signal`], [`crate::leave_signalled`]) leaves
    /// whatever `leaving` says.
    pub fn depart(&mut self, leaving: bool) -> Result<Departure> {
        let leaving = leaving || crate::leave_signalled();
        let _w = waiting();
        self.arrive("Balancer::depart")?;
        let size = self.comm.size() as usize;
        let mut all = vec![0u8; size];
        self.comm.all_gather_into(&u8::from(leaving), &mut all[..]);
        let leaving: Vec<usize> = (0..size).filter(|&r| all[r] != 0).collect();
        if leaving.len() == size {
            return Err(Error::invalid_input(format!(
                "Balancer::depart: all {size} ranks would leave; at least one must stay"
            )));
        }
        Ok(Departure {
            leaving,
            rank: self.comm.rank() as usize,
            size,
        })
    }

    /// This balancer on `comm`, the ranks of `stay` (old ranks,
    /// ascending) in their order: settings and this rank's own speed state
    /// kept, every rank's vectors restricted to those that stay; what
    /// depends on the machine's layout (hosts, links, memory limits, size
    /// sweeps) is measured again when needed. Collective on `comm`.
    fn restricted(&self, comm: &SimpleCommunicator, stay: &[usize]) -> Result<Balancer> {
        let mut next = Balancer::new_as(comm, "Departure::finish (the new balancer)")?;
        next.adopt_settings(self);
        next.own = self.own.clone();
        next.book = self.book.restricted(stay);
        next.bandwidth = self.bandwidth;
        next.phase.set(self.phase.get());
        Ok(next)
    }

    /// Takes `from`'s settings and this rank's kernel (local).
    pub(super) fn adopt_settings(&mut self, from: &Balancer) {
        self.install(from.settings.clone());
        self.kernel = from.kernel.clone();
    }
}

impl Departure {
    /// Ranks of the balancer's communicator that leave, ascending.
    pub fn leaving(&self) -> &[usize] {
        &self.leaving
    }
    /// Whether this rank leaves.
    pub fn is_leaving(&self) -> bool {
        self.leaving.binary_search(&self.rank).is_ok()
    }
    /// Whether nobody leaves.
    pub fn is_empty(&self) -> bool {
        self.leaving.is_empty()
    }
    /// The ranks that stay, ascending.
    fn staying(&self) -> Vec<usize> {
        (0..self.size)
            .filter(|r| self.leaving.binary_search(r).is_err())
            .collect()
    }

    /// An error unless the data has one part per rank of the departure.
    fn same_size(&self, parts: usize) -> Result<()> {
        if parts != self.size {
            return Err(Error::shape_mismatch(format!(
                "the data has {parts} parts, the departure is from {} ranks",
                self.size
            )));
        }
        Ok(())
    }

    /// Every rank's speed (uniform when none are known), and those of the
    /// ranks that stay.
    fn speeds(&self, bal: &Balancer) -> (Vec<f64>, Vec<f64>) {
        let all: Vec<f64> = match bal.measured().speeds() {
            Some(s) if s.len() == self.size => s.to_vec(),
            _ => vec![1.0; self.size],
        };
        let stay = self.staying().iter().map(|&r| all[r]).collect();
        (all, stay)
    }

    /// The plan of a grid laid out by `current` for the ranks that stay, in
    /// proportion to their speeds (uniform when none are known), with an
    /// empty box on every rank that leaves, moving as few cells as a plan
    /// within 2 % of the decomposer's predicted time allows
    /// ([`depart_grid`]; named `depart:<candidate> (ranks … leave)`).
    /// Local: every rank computes the same plan.
    fn plan_for(&self, bal: &Balancer, current: &GridPlan3, ghost: usize) -> Result<GridPlan3> {
        self.same_size(current.len())?;
        let (all_speeds, speeds) = self.speeds(bal);
        let fresh = bal
            .settings
            .grid_algorithm
            .for_ghost(ghost)?
            .decompose(current.shape, &speeds)?;
        let stencil = Stencil::seven(ghost.max(1));
        let mut d = depart_grid(current, &all_speeds, &self.leaving, &fresh, stencil)?;
        d.plan.algorithm = format!("{} (ranks {:?} leave)", d.plan.algorithm, self.leaving);
        Ok(d.plan)
    }

    /// Plans `grid` for the ranks that stay, in proportion to their speeds
    /// (uniform when none are known), with an empty box on every rank that
    /// leaves, and leaves the move pending on the grid (collective on the
    /// grid's ranks, the balancer's). Then, as after any remap, ask the new
    /// box ([`Grid::local_box`]: empty on a leaving rank), allocate new
    /// buffers and call [`Grid::move_fields`]. Errors (a grid of another
    /// communicator size, a move already pending) are the same on every
    /// rank.
    pub fn plan_grid(&self, bal: &Balancer, grid: &mut Grid) -> Result<()> {
        let _w = waiting();
        let local = self.plan_for(bal, grid.plan(), grid.stencil().ghost);
        let plan = agree(grid.comm(), 0, local)?;
        grid.start_remap(plan)
    }

    /// Moves `a`'s cells to the ranks that stay, planned as
    /// [`Departure::plan_grid`] plans a grid (collective on the array's
    /// ranks, the balancer's): a leaving rank's box is empty afterwards.
    /// Then pass the array to [`Departure::finish`]. Errors are the same on
    /// every rank, and the array then keeps its data.
    pub fn plan_array3<T: Element>(
        &self,
        bal: &Balancer,
        a: &mut DistArray3<T>,
    ) -> Result<MoveStats> {
        let _w = waiting();
        let local = self.plan_for(bal, a.plan(), a.ghost());
        let plan = agree(a.comm(), 0, local)?;
        a.remap(&plan)
    }

    /// Moves `a`'s cells to the ranks that stay, in proportion to their
    /// speeds (uniform when none are known), the balancer's 2D decomposer's
    /// plan the reference of [`depart_array`] (the fewest cells moved
    /// within 2 % of its predicted time; collective on the array's ranks,
    /// the balancer's): a leaving rank's rectangle is empty afterwards. Then pass the array to [`Departure::finish`]. Errors are
    /// the same on every rank, and the array then keeps its data.
    pub fn plan_array2<T: Element>(
        &self,
        bal: &Balancer,
        a: &mut DistArray2<T>,
    ) -> Result<MoveStats> {
        let _w = waiting();
        let current = a.plan();
        let local = self.same_size(current.parts.len()).and_then(|()| {
            let (all_speeds, speeds) = self.speeds(bal);
            let fresh = bal
                .planner()?
                .decompose(current.rows, current.cols, &speeds)?;
            let stencil = Stencil::seven(a.ghost().max(1));
            let (mut plan, _) = depart_array(current, &all_speeds, &self.leaving, &fresh, stencil)?;
            plan.algorithm = format!("{} (ranks {:?} leave)", plan.algorithm, self.leaving);
            Ok(plan)
        });
        let plan = agree(a.comm(), 0, local)?;
        a.remap(&plan)
    }

    /// Moves every vertex of `g` to the ranks that stay, in proportion to
    /// their speeds (uniform when none are known), moving the minimum:
    /// every rank that stays keeps its vertices and takes one contiguous
    /// piece of the leaving ranks' along the graph's order (a root index's
    /// ordering, which moves to the first rank that stays; otherwise every
    /// rank's vertices along the Hilbert curve, by id without coordinates,
    /// one rank after the other), in proportion to what it must grow
    /// ([`crate::plan::depart::hand_over`]). Collective on the graph's
    /// ranks, the balancer's: a leaving rank owns no vertex afterwards.
    /// Then pass the graph to [`Departure::finish`]. Errors are the same
    /// on every rank, and the graph then keeps its vertices.
    pub fn plan_graph<T: GraphValue>(
        &self,
        bal: &Balancer,
        g: &mut DistGraph<T>,
    ) -> Result<MigrateStats> {
        let _w = waiting();
        agree(g.comm(), 0, self.same_size(g.comm().size() as usize))?;
        g.depart_to(&self.staying(), &self.speeds(bal).1)
    }

    /// Completes the departure (collective on the balancer's
    /// communicator): every grid's move must be complete
    /// ([`Grid::move_fields`] after [`Departure::plan_grid`]; a leaving
    /// rank's box is empty), every [`DistArray3`], [`DistArray2`] and
    /// [`DistGraph`] moved ([`Departure::plan_array3`],
    /// [`Departure::plan_array2`], [`Departure::plan_graph`]). Splits the communicator. On a rank that
    /// stays, `bal` and every item of `data` are replaced by their
    /// successors on the ranks that stay (in their old order; the first is
    /// the new root; the balancer's settings and speed state, the grids'
    /// boxes and costs and the arrays' blocks are kept, so the
    /// application's buffers stay valid), and the new communicator is
    /// returned for the application's own communication. On a leaving rank
    /// nothing is replaced and `None` is returned: the rank is released,
    /// holds no cells, and must make no further call of `bal` or the data
    /// (drop them). A grid whose move is pending, or data not planned for
    /// this departure, is the same error on every rank, and nothing
    /// changes then.
    pub fn finish(
        self,
        bal: &mut Balancer,
        data: &mut [&mut dyn Departing],
    ) -> Result<Option<SimpleCommunicator>> {
        let _w = waiting();
        let local = data.iter().enumerate().try_for_each(|(k, d)| {
            d.ready_to_leave(&self.leaving, self.size)
                .map_err(|e| Error::invalid_input(format!("item {k}: {e}")))
        });
        bal.entry(
            &format!("Departure::finish({} items)", data.len()),
            local.as_ref().err(),
        )?;
        let color = if self.is_leaving() {
            Color::undefined()
        } else {
            Color::with_value(0)
        };
        let Some(comm) = bal.comm.split_by_color(color) else {
            return Ok(None);
        };
        let stay = self.staying();
        let next = bal.restricted(&comm, &stay)?;
        for d in data.iter_mut() {
            d.move_to(&next, &stay)?;
        }
        *bal = next;
        Ok(Some(comm))
    }
}

/// The plan of the ranks `stay` (old ranks, ascending) out of `plan`.
fn kept(plan: &GridPlan3, stay: &[usize]) -> GridPlan3 {
    GridPlan3 {
        algorithm: plan.algorithm.clone(),
        shape: plan.shape,
        boxes: stay.iter().map(|&r| plan.boxes[r]).collect(),
    }
}

mod sealed {
    // Unnameable on purpose: no type outside nuce can implement `Departing`.
    #[allow(unnameable_types)]
    pub trait Sealed {}
    impl Sealed for super::Grid {}
    impl<T> Sealed for super::DistArray3<T> {}
    impl<T> Sealed for super::DistArray2<T> {}
    impl<T> Sealed for super::DistGraph<T> {}
}

/// Data that [`Departure::finish`] carries over to the ranks that stay:
/// [`Grid`]s (after [`Departure::plan_grid`] and their move),
/// [`DistArray3`]s, [`DistArray2`]s and [`DistGraph`]s (after
/// [`Departure::plan_array3`], [`Departure::plan_array2`],
/// [`Departure::plan_graph`]). Sealed.
pub trait Departing: sealed::Sealed {
    /// Whether the data gives no cell to a leaving rank and has no move
    /// pending (local).
    #[doc(hidden)]
    fn ready_to_leave(&self, leaving: &[usize], size: usize) -> Result<()>;
    /// Replaces the data by its successor on `next`'s communicator, the
    /// old ranks `stay` (collective on the ranks that stay).
    #[doc(hidden)]
    fn move_to(&mut self, next: &Balancer, stay: &[usize]) -> Result<()>;
}

/// Whether `plan` (of `size` parts) gives no cell to a rank of `leaving`.
fn ready(plan: &GridPlan3, leaving: &[usize], size: usize) -> Result<()> {
    if plan.len() != size || leaving.iter().any(|&r| !plan.boxes[r].is_empty()) {
        Err(Error::invalid_input(
            "it still gives cells to a leaving rank (Departure::plan_grid, plan_array3, plan_array2 or plan_graph first)",
        ))
    } else {
        Ok(())
    }
}

/// The grid plan `rows × cols × 1` of a 2D array's plan (for [`ready`]).
fn as_grid(plan: &ArrayPlan) -> GridPlan3 {
    GridPlan3 {
        algorithm: plan.algorithm.clone(),
        shape: (plan.rows, plan.cols, 1),
        boxes: plan.parts.iter().map(box_of).collect(),
    }
}

impl Departing for Grid {
    fn ready_to_leave(&self, leaving: &[usize], size: usize) -> Result<()> {
        if self.pending().is_some() {
            return Err(Error::invalid_input(
                "a grid's move is pending (Grid::move_fields first)",
            ));
        }
        ready(self.plan(), leaving, size)
    }

    fn move_to(&mut self, next: &Balancer, stay: &[usize]) -> Result<()> {
        let mut n = next.grid_of(kept(self.plan(), stay), self.stencil())?;
        if let Some(v) = self.cost().and_then(|c| c.values_for(self.local_box())) {
            n.set_cost(v);
        }
        *self = n;
        Ok(())
    }
}

impl<T: Element> Departing for DistArray3<T> {
    fn ready_to_leave(&self, leaving: &[usize], size: usize) -> Result<()> {
        ready(self.plan(), leaving, size)
    }

    fn move_to(&mut self, next: &Balancer, stay: &[usize]) -> Result<()> {
        let mut n = self.successor(next.comm(), kept(self.plan(), stay))?;
        next.adopt_checks(n.checks_mut());
        if let Some(v) = self.cost().and_then(|c| c.values_for(self.local_box())) {
            n.set_cost(v);
        }
        *self = n;
        Ok(())
    }
}

impl<T: Element> Departing for DistArray2<T> {
    fn ready_to_leave(&self, leaving: &[usize], size: usize) -> Result<()> {
        ready(&as_grid(self.plan()), leaving, size)
    }

    fn move_to(&mut self, next: &Balancer, stay: &[usize]) -> Result<()> {
        let plan = self.plan();
        let kept = ArrayPlan {
            algorithm: plan.algorithm.clone(),
            rows: plan.rows,
            cols: plan.cols,
            parts: stay.iter().map(|&r| plan.parts[r]).collect(),
        };
        let mut n = self.successor(next.comm(), kept)?;
        next.adopt_checks(n.checks_mut());
        if let Some(v) = self.cost().and_then(|c| c.values_for(box_of(&self.rect()))) {
            n.set_cost(v);
        }
        *self = n;
        Ok(())
    }
}

impl<T: GraphValue> Departing for DistGraph<T> {
    fn ready_to_leave(&self, leaving: &[usize], size: usize) -> Result<()> {
        let me = self.comm().rank() as usize;
        if self.comm().size() as usize != size {
            Err(Error::shape_mismatch(format!(
                "a graph on {} ranks, the departure is from {size}",
                self.comm().size()
            )))
        } else if leaving.binary_search(&me).is_ok() && !self.owned().is_empty() {
            Err(Error::invalid_input(
                "a graph still gives vertices to a leaving rank (Departure::plan_graph first)",
            ))
        } else {
            Ok(())
        }
    }

    fn move_to(&mut self, next: &Balancer, stay: &[usize]) -> Result<()> {
        let mut n = self.successor(next.comm(), stay)?;
        next.adopt_checks(&mut n.core.cp);
        *self = n;
        Ok(())
    }
}
