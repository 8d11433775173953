//! The watchdog thread: a deadline on code that blocks inside MPI where
//! nuce cannot poll ([`guard`]); past it the job ends with a message.

use std::collections::BTreeMap;
use std::sync::{Condvar, Mutex, OnceLock};
use std::time::{Duration, Instant};

use super::abort_job;
use super::errors::inside_mpi;

/// Whether this process is inside a [`checkpoint`](super::checkpoint) (the
/// [`guard`](guard()) thread then lets the checkpoint, which can name the
/// missing ranks, speak first).
static IN_CHECKPOINT: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

pub(super) struct InCheckpoint;
impl InCheckpoint {
    pub(super) fn enter() -> InCheckpoint {
        IN_CHECKPOINT.store(true, std::sync::atomic::Ordering::SeqCst);
        InCheckpoint
    }
}
impl Drop for InCheckpoint {
    fn drop(&mut self) {
        IN_CHECKPOINT.store(false, std::sync::atomic::Ordering::SeqCst);
    }
}

struct Armed {
    op: String,
    rank: i32,
    deadline: Instant,
    timeout: Duration,
}

#[derive(Default)]
struct Board {
    next: u64,
    armed: BTreeMap<u64, Armed>,
}

struct Shared {
    board: Mutex<Board>,
    wake: Condvar,
}

fn shared() -> &'static Shared {
    static S: OnceLock<&'static Shared> = OnceLock::new();
    S.get_or_init(|| {
        let s: &'static Shared = Box::leak(Box::new(Shared {
            board: Mutex::new(Board::default()),
            wake: Condvar::new(),
        }));
        std::thread::Builder::new()
            .name("nuce-watchdog".into())
            .spawn(move || watch(s))
            .ok();
        s
    })
}

/// The watchdog thread: sleeps until the earliest deadline, fires if it passed.
fn watch(s: &'static Shared) {
    let mut board = match s.board.lock() {
        Ok(b) => b,
        Err(p) => p.into_inner(),
    };
    loop {
        let now = Instant::now();
        let due = board
            .armed
            .values()
            .min_by_key(|a| a.deadline)
            .map(|a| (a.deadline, a.op.clone(), a.rank, a.timeout));
        match due {
            Some((deadline, ..))
                if deadline <= now && IN_CHECKPOINT.load(std::sync::atomic::Ordering::SeqCst) =>
            {
                // A checkpoint is under way: it ends the job itself within its
                // own timeout, naming the missing ranks and their hosts.
                board = match s.wake.wait_timeout(board, Duration::from_millis(50)) {
                    Ok((b, _)) => b,
                    Err(p) => p.into_inner().0,
                };
            }
            Some((deadline, op, rank, timeout)) if deadline <= now => {
                drop(board);
                abort_job(&inside_mpi(rank, op, timeout));
            }
            Some((deadline, ..)) => {
                board = match s.wake.wait_timeout(board, deadline - now) {
                    Ok((b, _)) => b,
                    Err(p) => p.into_inner().0,
                };
            }
            None => {
                board = match s.wake.wait(board) {
                    Ok(b) => b,
                    Err(p) => p.into_inner(),
                };
            }
        }
    }
}

/// An armed deadline; dropping it disarms it.
#[must_use = "the deadline is disarmed when the guard is dropped"]
pub struct Guard {
    id: Option<u64>,
}

impl Drop for Guard {
    fn drop(&mut self) {
        if let Some(id) = self.id {
            let s = shared();
            if let Ok(mut b) = s.board.lock() {
                b.armed.remove(&id);
            }
        }
    }
}

/// Arms the watchdog: unless the returned [`Guard`] is dropped within
/// `timeout`, the job is ended with a message naming `op` and `rank`
/// (local; starts the watchdog thread on first use). `None` arms nothing.
pub fn guard(rank: i32, op: impl Into<String>, timeout: Option<Duration>) -> Guard {
    let Some(timeout) = timeout else {
        return Guard { id: None };
    };
    let s = shared();
    let Ok(mut b) = s.board.lock() else {
        return Guard { id: None };
    };
    let id = b.next;
    b.next += 1;
    b.armed.insert(
        id,
        Armed {
            op: op.into(),
            rank,
            deadline: Instant::now() + timeout,
            timeout,
        },
    );
    s.wake.notify_all();
    Guard { id: Some(id) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn guards_disarm_on_drop() {
        // A guard dropped before its deadline never fires (the test process
        // would be aborted otherwise).
        for _ in 0..3 {
            let g = guard(0, "test", Some(Duration::from_millis(200)));
            std::thread::sleep(Duration::from_millis(20));
            drop(g);
        }
        std::thread::sleep(Duration::from_millis(400));
        assert!(shared().board.lock().unwrap().armed.is_empty());
    }
}
