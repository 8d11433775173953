//! Departure planning (issue 29): the plan of data whose ranks partly
//! leave, moving as few bytes as the new balance allows. A rank that
//! leaves is a part whose share becomes zero; the parts that stay keep
//! what they hold where a balanced plan lets them, and take the leaving
//! parts' data.
//!
//! | data | planner | how |
//! |---|---|---|
//! | 3D grids, 2D arrays (a 2D plan is a 3D one with `nz = 1`) | [`depart_grid`], [`depart_array`] | candidates that keep what stays (the leaving box handed to the neighbours that tile one of its faces; a re-cut of the smallest closed region of the old plan around it) against slabs slid across each axis and fresh plans, the fewest cells moved within [`TIME_TOLERANCE`] of the fresh plan's predicted time |
//! | graphs cut along an order | [`hand_over`] | the leaving (and shrinking) parts' pieces of the order cut among the growing parts, each a contiguous piece: the minimum move |
//!
//! Pure and deterministic: every rank computes the same plan from the
//! same input.

mod grid;
mod order;
mod region;
#[cfg(test)]
mod tests;

pub use grid::{
    depart_array, depart_grid, least_moving, GridCandidate, GridDeparture, MAX_FRESH_PARTS,
    MAX_REGIONS, TIME_TOLERANCE,
};
pub use order::{hand_over, piece_of, Piece};
