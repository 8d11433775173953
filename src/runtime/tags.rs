//! Every MPI message tag nuce uses, in one place.
//!
//! nuce sends only on communicators it owns (duplicates made by the
//! [`Balancer`](super::balancer::Balancer), [`DistArray2`](super::array::DistArray2),
//! [`DistGraph`](super::graph::DistGraph), or inside the free collective
//! functions that use point-to-point messages), so these tags can never
//! match an application's message. They are distinct from each other so that
//! two of nuce's protocols on one communicator cannot match each other's
//! messages either (checked by a test).

use mpi::Tag;

/// First tag of ghost exchanges ([`super::halo`]): an exchange's tag is
/// `HALO_FIRST + k`, `k < HALO_COUNT`, from its number and call.
pub const HALO_FIRST: Tag = 0x1000;
/// Number of ghost-exchange tags (the range holds no other tag).
pub(crate) const HALO_COUNT: Tag = 0x2000;
/// Master–worker input messages.
pub(crate) const MW_INPUT: Tag = 0x4d57;
/// Master–worker result messages.
pub(crate) const MW_RESULT: Tag = 0x4d58;
/// Network probe: the root's "your turn" message.
pub(crate) const PROBE_GO: Tag = 0x4e50;
/// Network probe: ping-pong messages.
pub(crate) const PROBE_PING: Tag = 0x4e51;
/// Watchdog checkpoint: arrival messages.
pub(crate) const ARRIVE: Tag = 0x4e57;
/// Watchdog checkpoint: the root's "I am here" messages.
pub(crate) const ROOT_HERE: Tag = 0x4e58;

/// Watchdog checkpoint: the root's verdict (same call everywhere, or the error).
pub(crate) const VERDICT: Tag = 0x4e59;
/// Moves of cells that change owner: grids ([`super::layout::Grid::move_fields`]),
/// `DistArray3` remaps, `DistArray2` scatters, gathers and remaps.
pub(crate) const GRID_MOVE: Tag = 0x4e5a;
/// Watchdog checkpoint: a rank that refuses a ghost exchange tells every
/// rank of the checkpoint it joins (an empty message), so that ranks
/// waiting in exchanges join it at once instead of waiting out the timeout.
pub(crate) const REFUSING: Tag = 0x4e5b;

/// Watchdog checkpoint in two levels: a host leader's summary of its
/// host's arrivals, to the root.
pub(crate) const SUMMARY: Tag = 0x4e5c;

/// All tags, for the distinctness check.
pub const ALL: [Tag; 10] = [
    MW_INPUT, MW_RESULT, PROBE_GO, PROBE_PING, ARRIVE, ROOT_HERE, VERDICT, GRID_MOVE, REFUSING,
    SUMMARY,
];

#[cfg(test)]
mod tests {
    #[test]
    fn tags_are_distinct_and_valid() {
        let mut t = super::ALL.to_vec();
        t.sort();
        t.dedup();
        assert_eq!(t.len(), super::ALL.len());
        // MPI guarantees tags up to 32767 (MPI_TAG_UB >= 32767).
        assert!(t.iter().all(|&x| (0..=32767).contains(&x)));
        // The ghost-exchange range holds no other tag, and fits too.
        let halo = super::HALO_FIRST..super::HALO_FIRST + super::HALO_COUNT;
        assert!(t.iter().all(|x| !halo.contains(x)));
        assert!(halo.end <= 32768);
    }
}
