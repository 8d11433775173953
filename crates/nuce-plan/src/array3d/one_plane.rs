//! An exact oracle: can the cut positions of a plan's guillotine tree be
//! chosen so that every part lies within one plane of its speed share?
//!
//! # The question
//!
//! Part `i` is **within one plane** when `|cells_i − share_i| ≤` the
//! largest face of its box ([`planes`](super::planes)). The rounding of the
//! decomposers and the local plane moves of
//! [`balance_planes`](super::planes::balance_planes) do not always reach it.
//! [`one_plane_tiling`] decides whether *any* integer cut positions of the
//! same topology reach it, so that a miss can be blamed on the rounding or
//! on the topology.
//!
//! The **topology** is the guillotine tree of the plan's non-empty boxes as
//! `planes` builds it: every node cut along one axis into its ordered
//! children, each leaf one part. Cut positions are free, every child at
//! least one cell thick. This covers the slab → column → block layouts of
//! `column` and `slabs`, the bisections of `rb` and the extruded columns
//! of `pencils`; for `rectilinear`'s tensor grid the tree is looser than
//! the tensor (the cuts of sibling subtrees need not line up), so a "yes"
//! there may need a non-tensor tiling.
//!
//! # The search
//!
//! A subtree's parts depend on its box only through the box's extents
//! `(e_x, e_y, e_z)`, so `ok(node, e)` — the subtree tiles a box of extents
//! `e` with every part within one plane — is a function of `(node, e)`:
//!
//! * a leaf: `|e_x·e_y·e_z − share| ≤ max face of e`;
//! * a cut along `a` into children `c_1 … c_k`: some `t_1 + … + t_k = e_a`,
//!   `t_j ≥ 1`, with every `ok(c_j, e with e_a = t_j)` — a subset-sum over
//!   the sets `T_j` of good thicknesses, done with a table of reachable
//!   sums up to `e_a`.
//!
//! Each `T_j` is searched only where a necessary condition holds: the `m`
//! parts of `c_j` (share sum `S`) each lie within one of their largest
//! faces, and no part's face exceeds the largest face `F(t)` of the child's
//! box, so `|t·A − S| ≤ m·F(t)` (`A` the product of the other two
//! extents). The window loses no solution; the search is exact. States
//! `(node, e)` are memoised; the number of distinct states is bounded by
//! the windows of the nearest cut along each axis above a node, and a
//! search that would visit more than [`MAX_STATES`] gives up
//! ([`OnePlane::Undecided`]) rather than run long. Deterministic.

use std::collections::HashMap;

use super::planes::{Kind, Tree};
use super::{Box3, GridPlan3};

/// Most `(node, extents)` states one search visits before it answers
/// [`OnePlane::Undecided`].
pub const MAX_STATES: usize = 2_000_000;

/// The answer of [`one_plane_tiling`].
#[derive(Debug, Clone, PartialEq)]
pub enum OnePlane {
    /// A tiling of the same topology with every part within one plane (a
    /// witness, valid, the parts' order kept).
    Reachable(GridPlan3),
    /// No cut positions of this topology put every part within one plane.
    Unreachable,
    /// The plan is no guillotine tiling, or the search hit [`MAX_STATES`].
    Undecided,
}

/// True when `cells` is within one plane (`face`) of `share` (a relative
/// slack of `1e-9` for the rounding of the share).
pub(crate) fn within_one_plane(cells: usize, face: usize, share: f64) -> bool {
    (cells as f64 - share).abs() <= face as f64 * (1.0 + 1e-9)
}

/// Largest face of a box of extents `e`.
fn face(e: [usize; 3]) -> usize {
    (e[0] * e[1]).max(e[1] * e[2]).max(e[0] * e[2])
}

/// The memoised search over one tree.
struct Search<'a> {
    tree: &'a Tree,
    shares: &'a [f64],
    /// Parts and share sum of each node's subtree.
    parts: Vec<usize>,
    share: Vec<f64>,
    memo: HashMap<(usize, [usize; 3]), bool>,
    /// Set once the memo holds [`MAX_STATES`] states.
    gave_up: bool,
}

impl Search<'_> {
    /// The thicknesses `t` along `axis` of child `c` of a node of extents
    /// `e` that pass the window of the module docs, `1 ≤ t ≤ most`.
    fn window(&self, c: usize, e: [usize; 3], axis: usize, most: usize) -> Vec<usize> {
        (1..=most)
            .filter(|&t| {
                let mut f = e;
                f[axis] = t;
                let vol = (f[0] * f[1] * f[2]) as f64;
                (vol - self.share[c]).abs() <= self.parts[c] as f64 * face(f) as f64 * (1.0 + 1e-9)
            })
            .collect()
    }

    /// `ok(node, e)` of the module docs (false once the search gave up).
    fn ok(&mut self, node: usize, e: [usize; 3]) -> bool {
        if self.gave_up {
            return false;
        }
        if let Some(&v) = self.memo.get(&(node, e)) {
            return v;
        }
        if self.memo.len() >= MAX_STATES {
            self.gave_up = true;
            return false;
        }
        let v = match &self.tree.nodes[node].kind {
            Kind::Leaf(i) => within_one_plane(e[0] * e[1] * e[2], face(e), self.shares[*i]),
            Kind::Cut { axis, children } => {
                let (axis, children) = (*axis, children.clone());
                self.good_sets(&children, e, axis)
                    .is_some_and(|sets| split(&sets, e[axis]).is_some())
            }
        };
        self.memo.insert((node, e), v);
        v
    }

    /// The sets `T_j` of good thicknesses of each child (`None` as soon as
    /// one is empty).
    fn good_sets(
        &mut self,
        children: &[usize],
        e: [usize; 3],
        axis: usize,
    ) -> Option<Vec<Vec<usize>>> {
        let most = (e[axis] + 1).checked_sub(children.len())?;
        let mut sets = Vec::with_capacity(children.len());
        for &c in children {
            let good: Vec<usize> = self
                .window(c, e, axis, most)
                .into_iter()
                .filter(|&t| {
                    let mut f = e;
                    f[axis] = t;
                    self.ok(c, f)
                })
                .collect();
            if good.is_empty() {
                return None;
            }
            sets.push(good);
        }
        Some(sets)
    }

    /// The boxes of a witness tiling of subtree `node` in box `b`, known
    /// good, written into `out`.
    fn place(&mut self, node: usize, b: Box3, out: &mut [Box3]) {
        match self.tree.nodes[node].kind.clone() {
            Kind::Leaf(i) => out[i] = b,
            Kind::Cut { axis, children } => {
                let e = [b.nx, b.ny, b.nz];
                let Some(ts) = self
                    .good_sets(&children, e, axis)
                    .and_then(|sets| split(&sets, e[axis]))
                else {
                    return;
                };
                let mut lo = b.lo(axis);
                for (&c, t) in children.iter().zip(ts) {
                    let mut l = [b.x, b.y, b.z];
                    let mut n = e;
                    l[axis] = lo;
                    n[axis] = t;
                    self.place(c, Box3::from_axes(l, n), out);
                    lo += t;
                }
            }
        }
    }
}

/// One `t_j ∈ sets[j]` per set summing to `total` (the lowest last
/// thicknesses first), `None` if there is none.
fn split(sets: &[Vec<usize>], total: usize) -> Option<Vec<usize>> {
    // reach[j][s]: the first j sets can sum to s.
    let mut reach = vec![vec![false; total + 1]];
    reach[0][0] = true;
    for set in sets {
        let prev = reach.last()?;
        let mut next = vec![false; total + 1];
        for (s, _) in prev.iter().enumerate().filter(|(_, &r)| r) {
            for &t in set {
                if let Some(x) = next.get_mut(s + t) {
                    *x = true;
                }
            }
        }
        reach.push(next);
    }
    if !reach.last()?[total] {
        return None;
    }
    let mut out = vec![0; sets.len()];
    let mut left = total;
    for j in (0..sets.len()).rev() {
        let t = *sets[j].iter().find(|&&t| t <= left && reach[j][left - t])?;
        out[j] = t;
        left -= t;
    }
    Some(out)
}

/// Whether cut positions of `plan`'s guillotine tree exist that put every
/// part within one plane of its speed share (module docs), with a witness.
/// A part with an empty box and a positive share makes the answer
/// [`OnePlane::Unreachable`] (the tree has no leaf for it). Speeds that do
/// not fit the plan, or a plan that is no guillotine tiling, give
/// [`OnePlane::Undecided`].
pub fn one_plane_tiling(plan: &GridPlan3, speeds: &[f64]) -> OnePlane {
    let Ok(shares) = plan.shares(speeds) else {
        return OnePlane::Undecided;
    };
    if plan
        .boxes
        .iter()
        .zip(&shares)
        .any(|(b, &s)| b.is_empty() && s > 0.0)
    {
        return OnePlane::Unreachable;
    }
    let Some(tree) = Tree::build(&plan.boxes) else {
        return OnePlane::Undecided;
    };
    let n = tree.nodes.len();
    let (mut parts, mut share) = (vec![0usize; n], vec![0.0f64; n]);
    // Children come after their parents: sum from the last node up.
    for node in (0..n).rev() {
        match &tree.nodes[node].kind {
            Kind::Leaf(i) => {
                parts[node] = 1;
                share[node] = shares[*i];
            }
            Kind::Cut { children, .. } => {
                parts[node] = children.iter().map(|&c| parts[c]).sum();
                share[node] = children.iter().map(|&c| share[c]).sum();
            }
        }
    }
    let mut search = Search {
        tree: &tree,
        shares: &shares,
        parts,
        share,
        memo: HashMap::new(),
        gave_up: false,
    };
    let (nx, ny, nz) = plan.shape;
    let root = [nx, ny, nz];
    if n == 0 {
        return OnePlane::Undecided;
    }
    let good = search.ok(0, root);
    if search.gave_up {
        return OnePlane::Undecided;
    }
    if !good {
        return OnePlane::Unreachable;
    }
    let mut out = plan.clone();
    search.place(0, Box3::new(0, 0, 0, nx, ny, nz), &mut out.boxes);
    OnePlane::Reachable(out)
}
