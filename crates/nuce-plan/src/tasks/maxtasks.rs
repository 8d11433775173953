//! MaxTasks(T) without communication and the restricted search of
//! Andonie et al. \[ACGG98\] for MaxTasks1(T).
//!
//! Source: \[BBLRR01\] §4.1.1 (no communication) and §4.3.1
//! (restricted search, with its two-worker counterexample).

use serde::{Deserialize, Serialize};

use super::matching::fastest_first;
use super::{check_deadline, tasks_within, MaxTasksSolver, TaskPlatform, TaskSchedule};
use crate::error::{Error, Result};

/// MaxTasks(T) without communication cost (\[BBLRR01\] §4.1.1): `c_i = ⌊T/t_i⌋`,
/// optimal. `O(p)`. Errors when the platform has message costs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct NoCommunication;

impl MaxTasksSolver for NoCommunication {
    fn schedule(&self, platform: &TaskPlatform, deadline: f64) -> Result<TaskSchedule> {
        platform.check()?;
        check_deadline(deadline)?;
        if platform.tcom > 0.0 || platform.tcom_return > 0.0 {
            return Err(Error::InvalidInput(
                "NoCommunication needs tcom = tcom-return = 0".into(),
            ));
        }
        let counts = platform
            .cycle_times
            .iter()
            .map(|&t| tasks_within(deadline, t))
            .collect();
        let slots = (1..=platform.workers()).collect();
        Ok(TaskSchedule::new(platform, counts, slots, None))
    }
}

/// The restricted search of Andonie et al. \[ACGG98\] for MaxTasks1(T) (\[BBLRR01\] §4.3.1):
/// the fastest workers receive their message first (`σ` sorts the cycle
/// times), then `c_i = ⌊(T − σ(i)·t_com)/t_i⌋`. `O(p log p)`. Not optimal:
/// with `t = (5, 9)`, `t_com = 1`, `T = 28` it finds 7 tasks where starting
/// the slow worker first gives 8. Kept as the baseline that [`super::Matching`]
/// improves on.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SortedOrder;

impl MaxTasksSolver for SortedOrder {
    fn schedule(&self, platform: &TaskPlatform, deadline: f64) -> Result<TaskSchedule> {
        platform.check()?;
        check_deadline(deadline)?;
        if platform.tcom_return > 0.0 {
            return Err(Error::InvalidInput(
                "SortedOrder solves MaxTasks1 (no return messages)".into(),
            ));
        }
        let p = platform.workers();
        let mut slots = vec![0; p];
        for (k, i) in fastest_first(&platform.cycle_times).into_iter().enumerate() {
            slots[i] = k + 1;
        }
        let counts = (0..p)
            .map(|i| {
                tasks_within(
                    platform.budget(deadline, slots[i], 0),
                    platform.cycle_times[i],
                )
            })
            .collect();
        Ok(TaskSchedule::new(platform, counts, slots, None))
    }
}
