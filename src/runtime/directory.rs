//! A distributed directory of vertex owners, as Zoltan's DD: the owner of
//! global id `v` is recorded on `v`'s *home* rank (ids are dealt to homes in
//! blocks of ⌈n/p⌉), so no rank holds an n-array. Registering the owned ids
//! and answering queries are each one all-to-all-v; every rank holds at most
//! ⌈n/p⌉ owner entries during the call and nothing after it.

use mpi::traits::*;

use super::comm::{agree, alltoallv_flat};
use crate::error::{Error, Result};
use crate::plan::graph::ids::vertex_id;

/// Ids `[home · block, (home + 1) · block)` live on rank `home`.
fn block(n: usize, p: usize) -> usize {
    n.div_ceil(p.max(1)).max(1)
}

/// How many of the increasing `ids` go to each home rank.
fn counts_by_home(ids: &[usize], n: usize, p: usize) -> Vec<usize> {
    let b = block(n, p);
    let mut counts = vec![0usize; p];
    let mut at = 0;
    for (h, c) in counts.iter_mut().enumerate() {
        let end = ids.partition_point(|&v| v < (h + 1) * b);
        *c = end - at;
        at = end;
    }
    counts
}

/// Owners of `queries` (increasing global ids `< n`), given every rank's
/// increasing `owned` ids. Checks that the owned ids of all ranks are a
/// partition of `0..n` (each owned exactly once); otherwise, or when a query
/// is out of range, every rank returns the same `Err`. Collective: an
/// all-reduce, then one all-to-all-v to register and two to query.
pub(crate) fn owners_of<C: Communicator>(
    comm: &C,
    n: usize,
    owned: &[usize],
    queries: &[usize],
) -> Result<Vec<u32>> {
    let p = comm.size() as usize;
    let me = comm.rank() as usize;
    let sorted = |s: &[usize]| s.windows(2).all(|w| w[0] < w[1]) && s.last().is_none_or(|&v| v < n);
    let repeated = owned.windows(2).find(|w| w[0] == w[1]);
    let ok = match repeated {
        Some(w) => Err(Error::invalid_input(format!(
            "rank {me} lists the id {} twice among the vertices it owns",
            vertex_id(w[0])
        ))),
        None if sorted(owned) && sorted(queries) => Ok(()),
        None => Err(Error::invalid_input(format!(
            "rank {me}: owned ids or ghost ids not increasing and below {n}"
        ))),
    };
    agree(comm, 0, ok)?;
    let b = block(n, p);
    let lo = (me * b).min(n);
    let hi = ((me + 1) * b).min(n);
    // Register: every owned id goes to its home, which records the sender.
    let (ids, from) = alltoallv_flat(comm, owned, &counts_by_home(owned, n, p))?;
    let mut owner = vec![u32::MAX; hi - lo];
    let mut bad = None;
    let mut at = 0;
    for (q, &c) in from.iter().enumerate() {
        for &v in &ids[at..at + c] {
            match owner.get_mut(v.wrapping_sub(lo)) {
                Some(o) if *o == u32::MAX => *o = q as u32,
                Some(o) => {
                    bad = Some(format!(
                        "vertex {} is owned by ranks {} and {q}",
                        vertex_id(v),
                        *o
                    ))
                }
                None => {
                    bad = Some(format!(
                        "vertex {} sent to the wrong home {me}",
                        vertex_id(v)
                    ))
                }
            }
        }
        at += c;
    }
    if bad.is_none() {
        if let Some(k) = owner.iter().position(|&o| o == u32::MAX) {
            bad = Some(format!("vertex {} has no owner", vertex_id(lo + k)));
        }
    }
    agree(
        comm,
        0,
        bad.map_or(Ok(()), |m| Err(Error::invalid_input(m))),
    )?;
    drop(ids);
    // Query: ids to their homes, owners back in the same order.
    let (asked, asked_by) = alltoallv_flat(comm, queries, &counts_by_home(queries, n, p))?;
    let answers: Vec<u32> = asked.iter().map(|&v| owner[v - lo]).collect();
    let (got, _) = alltoallv_flat(comm, &answers, &asked_by)?;
    Ok(got)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn homes_are_blocks() {
        assert_eq!(block(10, 3), 4);
        assert_eq!(counts_by_home(&[0, 3, 4, 8, 9], 10, 3), vec![2, 1, 2]);
        assert_eq!(counts_by_home(&[], 10, 3), vec![0, 0, 0]);
        assert_eq!(block(0, 4), 1);
    }
}
