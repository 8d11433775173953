//! Step timings of the benchmark examples: a `tracing` subscriber that adds
//! up, on this rank, the time spent in each span whose name starts with a
//! given prefix (nuce's `debug_span!`s, e.g. `save.mpiio`), so a benchmark
//! can say where a call's time goes.

use std::sync::Mutex;
use std::time::Instant;

use mpi::traits::*;
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Metadata, Subscriber};

struct State {
    prefix: &'static str,
    /// Per span id - 1: its name and when it was entered.
    spans: Vec<(&'static str, Option<Instant>)>,
    /// Seconds per name since the last [`take`].
    totals: Vec<(&'static str, f64)>,
}

static STATE: Mutex<State> = Mutex::new(State {
    prefix: "",
    spans: Vec::new(),
    totals: Vec::new(),
});

struct Steps;

impl Subscriber for Steps {
    fn enabled(&self, m: &Metadata<'_>) -> bool {
        m.is_span() && m.name().starts_with(STATE.lock().unwrap().prefix)
    }
    fn new_span(&self, a: &Attributes<'_>) -> Id {
        let mut s = STATE.lock().unwrap();
        s.spans.push((a.metadata().name(), None));
        Id::from_u64(s.spans.len() as u64)
    }
    fn record(&self, _: &Id, _: &Record<'_>) {}
    fn record_follows_from(&self, _: &Id, _: &Id) {}
    fn event(&self, _: &Event<'_>) {}
    fn enter(&self, id: &Id) {
        STATE.lock().unwrap().spans[id.into_u64() as usize - 1].1 = Some(Instant::now());
    }
    fn exit(&self, id: &Id) {
        let mut s = STATE.lock().unwrap();
        let (name, start) = &mut s.spans[id.into_u64() as usize - 1];
        let (name, start) = (*name, start.take());
        if let Some(t) = start {
            let dt = t.elapsed().as_secs_f64();
            match s.totals.iter_mut().find(|(n, _)| *n == name) {
                Some(e) => e.1 += dt,
                None => s.totals.push((name, dt)),
            }
        }
    }
}

/// Times the spans named `prefix…` from now on (once per process).
pub fn install(prefix: &'static str) {
    STATE.lock().unwrap().prefix = prefix;
    tracing::subscriber::set_global_default(Steps).expect("no other subscriber");
}

/// Seconds spent in each of `names` on this rank since the last call;
/// forgets the rest.
pub fn take(names: &[&str]) -> Vec<f64> {
    let mut s = STATE.lock().unwrap();
    let v = names
        .iter()
        .map(|n| s.totals.iter().find(|(m, _)| m == n).map_or(0.0, |e| e.1))
        .collect();
    s.totals.clear();
    v
}

/// The slowest rank's of each of `mine` (collective).
pub fn slowest<C: Communicator>(comm: &C, mine: &[f64]) -> Vec<f64> {
    let mut max = vec![0.0; mine.len()];
    comm.all_reduce_into(mine, &mut max[..], mpi::collective::SystemOperation::max());
    max
}
