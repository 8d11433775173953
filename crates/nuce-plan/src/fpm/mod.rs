//! Functional performance models (issue 19): a rank's speed as a function of
//! the size of its work, and partitions that equalise times under such
//! functions (\[LR07\], \[RCL11\], \[CLR11\]).
//!
//! nuce's other planners model every rank by one constant speed. Real speeds
//! depend on the size of the work — caches, memory, accelerators that need
//! large problems — so a rank that is fast on small work may be slow on
//! large work. This module is the pure planning part:
//!
//! | concept | item |
//! |---|---|
//! | a rank's speed function from measured points `(x, t)`, flatness, aging | [`SpeedFunction`] ([`speed_fn`]) |
//! | integer 1D partition of `n` units, equal times, memory caps | [`partition`] ([`plan`]) |
//! | effective constant speeds for the array, graph and task decomposers | [`functional_shares`] |
//! | noisy speeds: estimates, snapping speeds the noise cannot separate | [`SpeedEstimate`], [`snap_speeds`] ([`noise`]) |
//! | block sizes of a size sweep, and the speed function of its speeds | [`check_sweep_sizes`], [`sweep_points`] ([`sweep`]) |
//! | which model plans a balance point (constant or functional), its speeds, decision and memory caps | [`PlanningModel`] ([`model`]) |
//! | whether a remap pays off despite the noise | [`crate::policy::RemapPolicy::decide_noisy`] |
//!
//! **How the runtime uses it.** Every rank measures the time of the work it
//! was given, phase after phase, and adds the point to its
//! [`SpeedFunction`] ([`SpeedFunction::observe`], which also notices a change
//! of speed). The root gathers the functions; for 1D work it calls
//! [`partition`]; for arrays, graphs and master–worker targets it calls
//! [`functional_shares`] for the total work and hands the shares to the
//! usual decomposer as speeds. Flat functions ([`SpeedFunction::is_flat`])
//! can be replaced by constants: [`partition`] of constant functions is
//! exactly [`crate::dist1d::optimal_counts`].

pub mod model;
pub mod noise;
pub mod plan;
pub mod speed_fn;
pub mod sweep;

pub use model::{PlanningModel, CAUTIOUS_GAP, MIN_FLAT_NOISE};
pub use noise::{same_speed, snap_speeds, SpeedEstimate};
pub use plan::{functional_shares, partition, FunctionalPlan};
pub use speed_fn::{within_noise, Aging, Observation, SpeedFunction, SpeedPoints};
pub use sweep::{
    block_bytes, block_shape, check_sweep_sizes, default_sweep_sizes, sweep_points,
    MAX_SWEEP_CELLS, MAX_SWEEP_SIZES, MIN_SWEEP_CELLS,
};

#[cfg(test)]
mod tests;
