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
//! `(e_x, e_y, e_z)`, so `best(node, e)` — the least slowest part
//! (`max cells/speed`) over the tilings of a box of extents `e` by the
//! subtree with every part within one plane, `∞` when there is none — is a
//! function of `(node, e)`:
//!
//! * a leaf `i`: `e_x·e_y·e_z / s_i` if `|e_x·e_y·e_z − share_i| ≤` max face
//!   of `e`, else `∞`;
//! * a cut along `a` into children `c_1 … c_k`: the least, over
//!   `t_1 + … + t_k = e_a` with `t_j ≥ 1`, of `max_j best(c_j, e with e_a =
//!   t_j)` — a min-max over compositions, done with a table of the best
//!   value of each partial sum up to `e_a` (the same cost as deciding
//!   reachability alone).
//!
//! So the witness is, among the one-plane tilings of the topology, one
//! whose slowest part is the least: the balance steering costs nothing
//! more than the yes/no question.
//!
//! Each child's thickness is searched only where a necessary condition
//! holds: the `m` parts of `c_j` (share sum `S`) each lie within one of
//! their largest faces, and no part's face exceeds the largest face `F(t)`
//! of the child's box, so `|t·A − S| ≤ m·F(t)` (`A` the product of the
//! other two extents). The window loses no solution; the search is exact.
//! States `(node, e)` are memoised; the number of distinct states is
//! bounded by the windows of the nearest cut along each axis above a node,
//! and a search that would visit more than [`MAX_STATES`] states, or take
//! more steps than its budget ([`one_plane_within`]), gives up
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
    /// witness, valid, the parts' order kept), its slowest part
    /// (`max cells/speed`) the least among such tilings.
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
    speeds: &'a [f64],
    /// Parts and share sum of each node's subtree.
    parts: Vec<usize>,
    share: Vec<f64>,
    memo: HashMap<(usize, [usize; 3]), f64>,
    /// Steps (thicknesses tested, sums combined) left before the search
    /// gives up.
    steps: usize,
    /// Set once the memo holds [`MAX_STATES`] states or the steps ran out.
    gave_up: bool,
}

/// Good thicknesses of one child along the cut axis, each with the child's
/// `best` value there (finite).
type Choices = Vec<(usize, f64)>;

impl Search<'_> {
    /// The thicknesses `t` along `axis` of child `c` of a node of extents
    /// `e` that pass the window of the module docs, `1 ≤ t ≤ most`.
    fn window(&mut self, c: usize, e: [usize; 3], axis: usize, most: usize) -> Vec<usize> {
        self.spend(most);
        (1..=most)
            .filter(|&t| {
                let mut f = e;
                f[axis] = t;
                let vol = (f[0] * f[1] * f[2]) as f64;
                (vol - self.share[c]).abs() <= self.parts[c] as f64 * face(f) as f64 * (1.0 + 1e-9)
            })
            .collect()
    }

    /// Takes `n` steps from the budget (gives up when it runs out).
    fn spend(&mut self, n: usize) {
        match self.steps.checked_sub(n) {
            Some(left) => self.steps = left,
            None => self.gave_up = true,
        }
    }

    /// `best(node, e)` of the module docs (`∞` once the search gave up).
    fn best(&mut self, node: usize, e: [usize; 3]) -> f64 {
        if self.gave_up {
            return f64::INFINITY;
        }
        if let Some(&v) = self.memo.get(&(node, e)) {
            return v;
        }
        if self.memo.len() >= MAX_STATES {
            self.gave_up = true;
            return f64::INFINITY;
        }
        let v = match &self.tree.nodes[node].kind {
            Kind::Leaf(i) => {
                let cells = e[0] * e[1] * e[2];
                if within_one_plane(cells, face(e), self.shares[*i]) {
                    cells as f64 / self.speeds[*i]
                } else {
                    f64::INFINITY
                }
            }
            Kind::Cut { axis, children } => {
                let (axis, children) = (*axis, children.clone());
                self.choices(&children, e, axis)
                    .and_then(|sets| {
                        // The split's table: each sum against each choice.
                        self.spend(e[axis] * sets.iter().map(Vec::len).sum::<usize>());
                        split(&sets, e[axis])
                    })
                    .map_or(f64::INFINITY, |(v, _)| v)
            }
        };
        self.memo.insert((node, e), v);
        v
    }

    /// The good thicknesses of each child (`None` as soon as one has
    /// none).
    fn choices(&mut self, children: &[usize], e: [usize; 3], axis: usize) -> Option<Vec<Choices>> {
        let most = (e[axis] + 1).checked_sub(children.len())?;
        let mut sets = Vec::with_capacity(children.len());
        for &c in children {
            let mut good = Vec::new();
            for t in self.window(c, e, axis, most) {
                let mut f = e;
                f[axis] = t;
                let v = self.best(c, f);
                if v.is_finite() {
                    good.push((t, v));
                }
            }
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
                let Some((_, ts)) = self
                    .choices(&children, e, axis)
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

/// One `(t_j, v_j) ∈ sets[j]` per set with `Σ t_j = total` and the least
/// `max_j v_j`: that value and the `t_j` (on ties the lowest last
/// thicknesses first), `None` if no choice sums to `total`.
fn split(sets: &[Choices], total: usize) -> Option<(f64, Vec<usize>)> {
    // reach[j][s]: the least max over the first j sets summing to s.
    let mut reach = vec![vec![f64::INFINITY; total + 1]];
    reach[0][0] = 0.0;
    for set in sets {
        let prev = reach.last()?;
        let mut next = vec![f64::INFINITY; total + 1];
        for (s, &r) in prev.iter().enumerate().filter(|(_, r)| r.is_finite()) {
            for &(t, v) in set {
                if let Some(x) = next.get_mut(s + t) {
                    *x = x.min(r.max(v));
                }
            }
        }
        reach.push(next);
    }
    let value = reach.last()?[total];
    if !value.is_finite() {
        return None;
    }
    let mut out = vec![0; sets.len()];
    let (mut left, mut want) = (total, value);
    for j in (0..sets.len()).rev() {
        // A choice of set j that, with the best of the sets before it,
        // attains the value wanted at this sum.
        let &(t, _) = sets[j]
            .iter()
            .find(|&&(t, v)| t <= left && reach[j][left - t].max(v) == want)?;
        out[j] = t;
        left -= t;
        want = reach[j][left];
    }
    Some((value, out))
}

/// Whether cut positions of `plan`'s guillotine tree exist that put every
/// part within one plane of its speed share (module docs), with a witness.
/// A part with an empty box and a positive share makes the answer
/// [`OnePlane::Unreachable`] (the tree has no leaf for it). Speeds that do
/// not fit the plan, or a plan that is no guillotine tiling, give
/// [`OnePlane::Undecided`].
pub fn one_plane_tiling(plan: &GridPlan3, speeds: &[f64]) -> OnePlane {
    one_plane_within(plan, speeds, usize::MAX)
}

/// [`one_plane_tiling`] with a budget of `steps` (each thickness tested
/// for a child and each sum combined with a thickness in a cut's table
/// counts one): [`OnePlane::Undecided`] once the search would take more,
/// or visit more than [`MAX_STATES`] states.
pub fn one_plane_within(plan: &GridPlan3, speeds: &[f64], steps: usize) -> OnePlane {
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
        speeds,
        parts,
        share,
        memo: HashMap::new(),
        steps,
        gave_up: false,
    };
    let (nx, ny, nz) = plan.shape;
    let root = [nx, ny, nz];
    if n == 0 {
        return OnePlane::Undecided;
    }
    let good = search.best(0, root);
    if search.gave_up {
        return OnePlane::Undecided;
    }
    if !good.is_finite() {
        return OnePlane::Unreachable;
    }
    let mut out = plan.clone();
    search.place(0, Box3::new(0, 0, 0, nx, ny, nz), &mut out.boxes);
    OnePlane::Reachable(out)
}
