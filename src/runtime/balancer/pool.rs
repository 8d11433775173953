//! Ranks that join a running job (issue 29): a pool of standby ranks
//! started with the job, holding no data and sleeping until the active
//! ranks admit some of them at a balance point ([`Pool::admit`]). The
//! admitted ranks' speeds are measured (the built-in kernel, on every rank
//! of the new communicator) before they get work; each grid is re-made on
//! the grown communicator and planned for those speeds, with a move
//! pending ([`Grid::move_fields`] as after any remap: the new ranks' old
//! fields are empty); arrays and graphs are moved at once
//! ([`super::joining`]).
//!
//! Why a pool and not `MPI_Comm_spawn`: a pool needs nothing from the
//! launcher or the resource manager beyond the ranks it started, behaves
//! the same under Open MPI and MPICH, and its ranks cost no CPU while they
//! wait (they sleep between polls of a non-blocking broadcast); spawning
//! needs free slots the batch system knows of and a launcher that allows
//! it (oversubscription, `--host` lists), and is not built.

use std::collections::VecDeque;
use std::ffi::c_void;
use std::os::raw::c_int;
use std::time::Duration;

use mpi::ffi;
use mpi::raw::AsRaw;
use mpi::topology::{Color, SimpleCommunicator};
use mpi::traits::*;
use serde::{Deserialize, Serialize};

use super::joining::{joined_grid, rest, JoinItem, Joining};
use super::Balancer;
use crate::error::{Error, Result};
use crate::runtime::clock::waiting;
use crate::runtime::comm::{decode, encode, mpi_check};
use crate::runtime::layout::Grid;

/// How long a standby rank sleeps between two looks at the pool.
const NAP: Duration = Duration::from_millis(5);

/// What the active root tells the pool.
#[derive(Debug, Clone, Serialize, Deserialize)]
enum Notice {
    /// The first `count` standby ranks join; the items, in order.
    Admit { count: usize, items: Vec<JoinItem> },
    /// The pool is released: every standby rank returns.
    Release,
}

/// The ranks of a job split into active ranks and a standby pool
/// ([`Pool::new`]); the same object on every rank.
pub struct Pool {
    /// A duplicate of the parent communicator: every rank of the job.
    all: SimpleCommunicator,
    /// The first active ranks' communicator (on those ranks).
    first: Option<SimpleCommunicator>,
    /// Whether this rank is active (it was, or it was admitted).
    is_active: bool,
    /// Parent ranks of the active ranks, in their order in the grown
    /// communicator (the root first), and of the waiting standby ranks.
    actives: Vec<usize>,
    standbys: Vec<usize>,
}

/// What a standby rank gets when it is admitted ([`Pool::wait`]).
pub struct Joined {
    /// The grown communicator: the active ranks, then the admitted ones.
    pub comm: SimpleCommunicator,
    /// The balancer on it, speeds measured.
    pub balancer: Balancer,
    /// The active ranks' grids on it, a move pending (this rank's old box
    /// is empty: its old fields are empty slices).
    pub grids: Vec<Grid>,
    /// The other items, in order: taken by [`Joined::array3`],
    /// [`Joined::array2`] and [`Joined::graph`].
    pub(super) rest: VecDeque<JoinItem>,
}

impl Pool {
    /// Splits the ranks of `parent` into active ranks and a standby pool
    /// (collective on `parent`; `standby` is each rank's own choice; at
    /// least one rank must be active). The active ranks use
    /// [`Pool::active`] as their communicator (create their balancer on
    /// it); the standby ranks call [`Pool::wait`].
    pub fn new<C: Communicator>(parent: &C, standby: bool) -> Result<Pool> {
        let _w = waiting();
        let all = parent.duplicate();
        let size = all.size() as usize;
        let mut flags = vec![0u8; size];
        all.all_gather_into(&u8::from(standby), &mut flags[..]);
        let standbys: Vec<usize> = (0..size).filter(|&r| flags[r] != 0).collect();
        let actives: Vec<usize> = (0..size).filter(|&r| flags[r] == 0).collect();
        if actives.is_empty() {
            return Err(Error::invalid_input(format!(
                "Pool::new: all {size} ranks are standby; at least one must be active"
            )));
        }
        let color = if standby {
            Color::undefined()
        } else {
            Color::with_value(0)
        };
        let first = all.split_by_color(color);
        Ok(Pool {
            all,
            first,
            is_active: !standby,
            actives,
            standbys,
        })
    }

    /// The first active ranks' communicator (on those ranks; `None` on a
    /// standby rank): create the balancer on it. After an admission, use
    /// the grown communicator [`Pool::admit`] returns.
    pub fn active(&self) -> Option<&SimpleCommunicator> {
        self.first.as_ref()
    }

    /// Standby ranks still waiting.
    pub fn waiting(&self) -> usize {
        self.standbys.len()
    }

    /// The active root's notice, received on every rank of the pool: the
    /// root gives `notice`; a standby rank sleeps between polls.
    fn notice(&self, notice: Option<&Notice>) -> Result<Notice> {
        let root = self.actives[0] as c_int;
        let bytes = match notice {
            Some(n) => encode(n)?,
            None => Vec::new(),
        };
        let mut len = bytes.len() as u64;
        // SAFETY: reading a handle constant.
        let mut req = unsafe { ffi::RSMPI_REQUEST_NULL };
        // SAFETY: one u64, a live communicator, an out-request waited below.
        let code = unsafe {
            ffi::MPI_Ibcast(
                (&mut len as *mut u64).cast::<c_void>(),
                1,
                ffi::RSMPI_UINT64_T,
                root,
                self.all.as_raw(),
                &mut req,
            )
        };
        mpi_check(code, "MPI_Ibcast (pool notice)")?;
        loop {
            let mut done: c_int = 0;
            // SAFETY: the request above; it becomes null once complete.
            let code = unsafe { ffi::MPI_Test(&mut req, &mut done, ffi::RSMPI_STATUS_IGNORE) };
            mpi_check(code, "MPI_Test (pool notice)")?;
            if done != 0 {
                break;
            }
            std::thread::sleep(NAP);
        }
        let mut buf = if notice.is_some() {
            bytes
        } else {
            vec![0u8; len as usize]
        };
        self.all.process_at_rank(root).broadcast_into(&mut buf[..]);
        decode(&buf, root)
    }

    /// On a standby rank: waits (sleeping) until the active ranks admit
    /// this rank (`Some`: the grown communicator, balancer and grids, a
    /// move pending on each) or release the pool (`None`: return, hold
    /// nothing, finalize). Collective with the active ranks' [`Pool::admit`]
    /// and [`Pool::release`].
    pub fn wait(&mut self) -> Result<Option<Joined>> {
        let _w = waiting();
        let me = self.all.rank() as usize;
        if self.is_active || !self.standbys.contains(&me) {
            return Err(Error::invalid_input(
                "Pool::wait on an active rank: only standby ranks wait",
            ));
        }
        loop {
            match self.notice(None)? {
                Notice::Release => return Ok(None),
                Notice::Admit { count, items } => {
                    let admitted = self.admitted(count);
                    let comm = self.grow(&admitted);
                    self.record(&admitted);
                    let Some(comm) = comm else { continue };
                    self.is_active = true;
                    let mut balancer = Balancer::new_as(&comm, "Pool::admit")?;
                    balancer.measure()?;
                    let grids = items
                        .iter()
                        .filter_map(|i| match i {
                            JoinItem::Grid(plan, stencil) => {
                                Some(joined_grid(&balancer, plan, *stencil))
                            }
                            _ => None,
                        })
                        .collect::<Result<Vec<Grid>>>()?;
                    return Ok(Some(Joined {
                        comm,
                        balancer,
                        grids,
                        rest: rest(&items),
                    }));
                }
            }
        }
    }

    /// The first `count` standby ranks.
    fn admitted(&self, count: usize) -> Vec<usize> {
        self.standbys.iter().take(count).copied().collect()
    }

    /// The grown communicator: the active ranks in their order, then the
    /// `admitted` ones (collective on every rank of the pool; `None` on a
    /// rank that stays in the pool).
    fn grow(&self, admitted: &[usize]) -> Option<SimpleCommunicator> {
        let me = self.all.rank() as usize;
        let at = |v: &[usize]| v.iter().position(|&r| r == me);
        let key = at(&self.actives).or_else(|| at(admitted).map(|k| self.actives.len() + k));
        let color = match key {
            Some(_) => Color::with_value(0),
            None => Color::undefined(),
        };
        let key = key.unwrap_or(0) as c_int;
        self.all.split_by_color_with_key(color, key)
    }

    /// The admitted ranks are active now, after the others.
    fn record(&mut self, admitted: &[usize]) {
        self.standbys.retain(|r| !admitted.contains(r));
        self.actives.extend_from_slice(admitted);
    }

    /// On the active ranks (collective with them and with every waiting
    /// standby rank): admits `count` standby ranks (at most
    /// [`Pool::waiting`]) at a balance point. `bal` and every item of
    /// `data` are replaced by their successors on the grown communicator
    /// (the active ranks first, in their order: the root stays), the
    /// speeds of every rank are measured (the built-in kernel), and each
    /// item is planned for them ([`super::Joining`]): a grid with its move
    /// pending (ask the new box, and [`Grid::move_fields`] as after a
    /// remap), a [`DistArray3`](crate::DistArray3),
    /// [`DistArray2`](crate::DistArray2) or [`DistGraph`](crate::DistGraph)
    /// moved at once. The admitted ranks get the grids from [`Pool::wait`]
    /// and the other items, in their order, from [`Joined::array3`],
    /// [`Joined::array2`] and [`Joined::graph`]. The grids are made first,
    /// then the other items in order. Returns the grown communicator for
    /// the application's own communication (the new ranks need the
    /// application's state from it, e.g. the step). An item that cannot
    /// join (a grid's move pending, a graph with a root index) is the same
    /// error on every rank before anything changes.
    pub fn admit(
        &mut self,
        bal: &mut Balancer,
        count: usize,
        data: &mut [&mut dyn Joining],
    ) -> Result<SimpleCommunicator> {
        let _w = waiting();
        let items: Result<Vec<JoinItem>> = data
            .iter()
            .enumerate()
            .map(|(k, d)| {
                d.join_item()
                    .map_err(|e| Error::invalid_input(format!("item {k}: {e}")))
            })
            .collect();
        let local = if !self.is_active {
            Err(Error::invalid_input("Pool::admit on a standby rank"))
        } else if count == 0 || count > self.standbys.len() {
            Err(Error::invalid_input(format!(
                "Pool::admit({count}): 1 to {} standby ranks wait",
                self.standbys.len()
            )))
        } else {
            items.as_ref().map(drop).map_err(Clone::clone)
        };
        bal.entry(
            &format!("Pool::admit({count} ranks, {} items)", data.len()),
            local.as_ref().err(),
        )?;
        let notice = Notice::Admit {
            count,
            items: items?,
        };
        let is_root = self.all.rank() as usize == self.actives[0];
        self.notice(is_root.then_some(&notice))?;
        let admitted = self.admitted(count);
        let comm = self
            .grow(&admitted)
            .expect("an active rank is in the grown communicator");
        self.record(&admitted);
        let mut next = Balancer::new_as(&comm, "Pool::admit")?;
        next.adopt_settings(bal);
        next.measure()?;
        let (grids, others): (Vec<_>, Vec<_>) = data
            .iter_mut()
            .partition(|d| matches!(d.join_item(), Ok(JoinItem::Grid(..))));
        for d in grids.into_iter().chain(others) {
            d.grow(&next)?;
        }
        *bal = next;
        Ok(comm)
    }

    /// On the active ranks (collective with them and every waiting
    /// standby rank): releases the pool; every waiting rank's
    /// [`Pool::wait`] returns `None`. Call it before the active ranks end.
    pub fn release(&mut self, bal: &Balancer) -> Result<()> {
        let _w = waiting();
        let local = if !self.is_active {
            Err(Error::invalid_input("Pool::release on a standby rank"))
        } else {
            Ok(())
        };
        bal.entry("Pool::release", local.as_ref().err())?;
        let is_root = self.all.rank() as usize == self.actives[0];
        self.notice(is_root.then_some(&Notice::Release))?;
        self.standbys.clear();
        Ok(())
    }
}
