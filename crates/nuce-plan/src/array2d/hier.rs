//! Two-level decomposition for collections of clusters
//! (\[BBLRR01\] §3.2.2, "Collections of clusters", Figure 14):
//! the array is first cut into one rectangle per host, in proportion to the
//! hosts' total speeds, then each host's rectangle is cut among the host's
//! parts. Inter-host boundaries — the slow links — are thereby the boundaries
//! of a `H`-part decomposition only. Both levels default to [`ColumnDp`].
//! `O(p log p)` with the default levels.

use std::collections::HashMap;
use std::sync::Arc;

use super::checks::checked_speeds;
use super::{ArrayDecomposer, ArrayPlan, ColumnDp, Rect};
use crate::error::{Error, Result};

/// Hierarchical decomposition: across hosts, then within each host (\[BBLRR01\] Figure 14).
#[derive(Clone)]
pub struct Hierarchical {
    /// Host id of each part (any integers; hosts are ordered by first
    /// appearance). Empty: every part is its own host.
    pub hosts: Vec<usize>,
    /// Decomposer of the array among hosts (weights: total host speeds).
    pub across: Arc<dyn ArrayDecomposer>,
    /// Decomposer of one host's rectangle among its parts.
    pub within: Arc<dyn ArrayDecomposer>,
}

impl Default for Hierarchical {
    fn default() -> Self {
        Hierarchical {
            hosts: Vec::new(),
            across: Arc::new(ColumnDp::default()),
            within: Arc::new(ColumnDp::default()),
        }
    }
}

impl std::fmt::Debug for Hierarchical {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Hierarchical")
            .field("hosts", &self.hosts.len())
            .field("across", &self.across.name())
            .field("within", &self.within.name())
            .finish()
    }
}

impl Hierarchical {
    /// Hierarchical decomposition for these host ids, default levels.
    pub fn new(hosts: Vec<usize>) -> Self {
        Hierarchical {
            hosts,
            ..Default::default()
        }
    }
}

impl ArrayDecomposer for Hierarchical {
    fn name(&self) -> &'static str {
        "hier"
    }

    fn decompose(&self, rows: usize, cols: usize, speeds: &[f64]) -> Result<ArrayPlan> {
        let speeds = &checked_speeds(rows, cols, speeds)?;
        if self.hosts.is_empty() {
            let mut plan = self.across.decompose(rows, cols, speeds)?;
            plan.algorithm = self.name().into();
            return Ok(plan);
        }
        if self.hosts.len() != speeds.len() {
            return Err(Error::ShapeMismatch(format!(
                "{} host ids for {} speeds",
                self.hosts.len(),
                speeds.len()
            )));
        }
        // Members of each host, hosts in order of first appearance.
        let mut index: HashMap<usize, usize> = HashMap::new();
        let mut members: Vec<Vec<usize>> = Vec::new();
        for (i, &h) in self.hosts.iter().enumerate() {
            let k = *index.entry(h).or_insert_with(|| {
                members.push(Vec::new());
                members.len() - 1
            });
            members[k].push(i);
        }
        let host_speeds: Vec<f64> = members
            .iter()
            .map(|m| m.iter().map(|&i| speeds[i]).sum())
            .collect();
        let outer = self.across.decompose(rows, cols, &host_speeds)?;
        let mut parts = vec![Rect::default(); speeds.len()];
        for (m, r) in members.iter().zip(&outer.parts) {
            if r.is_empty() {
                continue;
            }
            let local: Vec<f64> = m.iter().map(|&i| speeds[i]).collect();
            let inner = self.within.decompose(r.rows, r.cols, &local)?;
            for (&i, q) in m.iter().zip(&inner.parts) {
                if !q.is_empty() {
                    parts[i] = Rect::new(r.row + q.row, r.col + q.col, q.rows, q.cols);
                }
            }
        }
        ArrayPlan::new(self.name(), rows, cols, parts)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn checks_host_count_and_defaults() {
        let speeds = [1.0, 1.0, 2.0];
        assert!(Hierarchical::new(vec![1]).decompose(3, 3, &speeds).is_err());
        let plan = Hierarchical::default().decompose(6, 6, &speeds).unwrap();
        assert_eq!(plan.algorithm, "hier");
        // One host holding everything equals the inner decomposer alone.
        let one = Hierarchical::new(vec![5; 3])
            .decompose(6, 6, &speeds)
            .unwrap();
        let inner = ColumnDp::default().decompose(6, 6, &speeds).unwrap();
        assert_eq!(one.parts, inner.parts);
    }
}
