//! Moving cut planes of a guillotine tiling so that every part lies within
//! one plane of its speed share.
//!
//! # Where rounding loses
//!
//! The nested decomposers round one level at a time: slab thicknesses,
//! then column widths inside each slab, then block heights inside each
//! column ([`Layout3::realize`](super::Layout3::realize)), or one cut per
//! level of a bisection ([`RecursiveBisection3d`](super::RecursiveBisection3d)).
//! Each level splits the extent it was given in proportion to the weights,
//! so a part inherits the relative error of every level above it: with
//! extents `t × w × h`, its volume is off by about `δt·w·h + δw·t·h +
//! δh·t·w` cells, each `|δ|` up to a cell, which is up to three of its
//! largest faces (measured: up to 1.6 on random bricks, benchmarks/grid3_balance.md).
//! A box can only grow or shrink by whole layers, so one plane — its
//! largest face, the most a single cut plane moves it — is the natural
//! tolerance: `|cells_i − share_i| ≤ max face of box i`.
//!
//! # The adjustment
//!
//! [`balance_planes`] rebuilds the guillotine tree of the plan (every node
//! cut along one axis into all the pieces that plane cuts separate) and
//! repeatedly takes the part furthest off its share, in planes, and moves
//! one of the tree's cut planes bounding it by one cell towards its share:
//! every part touching the plane on one side gains a layer of its face on
//! that plane, every part on the other side loses one. A move is kept only
//! when it
//!
//! * lowers `Σ_i max(0, |r_i| − 1)²`, `r_i = (cells_i − share_i) / max face_i`
//!   (the excess beyond one plane),
//! * leaves no part it touches further than `max(1, |r_i| before)` planes
//!   off (no part is pushed beyond one plane, or beyond where it was),
//! * makes no part slower than the slowest (`max_i cells_i / speed_i`
//!   never rises) and no box empty.
//!
//! Moves of two planes at once (the worst part's plane, then a plane of a
//! part it pushed towards its limit) are tried when no single move helps, so
//! an error can travel through a neighbour. The topology is kept: the same
//! boxes touch, only the cut positions change. Deterministic; each move
//! costs `O(k)` for the `k` parts touching the plane; at most
//! [`SWEEPS`] sweeps over the parts. The decomposers skip it above
//! [`MAX_PARTS`] parts.

use super::{Box3, GridPlan3};

/// Most parts for which `rb`, `pencils` and `Layout3::realize` move
/// planes (a two-plane move copies the boxes: `O(p²)` per sweep).
pub const MAX_PARTS: usize = 1024;

/// Most sweeps over the parts.
pub const SWEEPS: usize = 16;

#[cfg(test)]
thread_local! {
    /// Test-only switch back to the rounding before the plane adjustment
    /// (per-level minimax, no [`balance_planes`]): the "before" column of
    /// benchmarks/grid3_balance.md.
    pub(crate) static LEGACY: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// True while a test asks for the rounding before the plane adjustment.
pub(crate) fn legacy() -> bool {
    #[cfg(test)]
    {
        LEGACY.with(std::cell::Cell::get)
    }
    #[cfg(not(test))]
    {
        false
    }
}

/// A node of the guillotine tree: a leaf (one part) or a cut along `axis`
/// into `children` ordered along that axis.
#[derive(Debug, Clone)]
pub(crate) enum Kind {
    Leaf(usize),
    Cut { axis: usize, children: Vec<usize> },
}

#[derive(Debug, Clone)]
pub(crate) struct Node {
    pub(crate) kind: Kind,
    /// Parent node and this node's index among its children.
    parent: Option<(usize, usize)>,
}

/// A parent node and a child's index in it.
type Slot = (usize, usize);

/// The guillotine tree of a plan's non-empty boxes (the root is node 0; a
/// child's index is above its parent's).
pub(crate) struct Tree {
    pub(crate) nodes: Vec<Node>,
    /// Leaf node of each part (`usize::MAX` for an empty part).
    leaf: Vec<usize>,
}

/// `ids` split across `axis` into the groups that planes separate (sorted
/// along the axis), `None` when no plane separates them.
fn groups(boxes: &[Box3], ids: &[usize], axis: usize) -> Option<Vec<Vec<usize>>> {
    let mut sorted = ids.to_vec();
    sorted.sort_by_key(|&i| (boxes[i].lo(axis), boxes[i].hi(axis), i));
    let mut out: Vec<Vec<usize>> = Vec::new();
    let mut reach = 0;
    for i in sorted {
        let b = &boxes[i];
        match out.last_mut() {
            Some(g) if b.lo(axis) < reach => g.push(i),
            _ => out.push(vec![i]),
        }
        reach = reach.max(b.hi(axis));
    }
    (out.len() > 1).then_some(out)
}

impl Tree {
    /// The tree of `boxes` (each node cut along the axis that separates
    /// the most groups, the lowest on ties); `None` for a tiling that is no
    /// guillotine tiling.
    pub(crate) fn build(boxes: &[Box3]) -> Option<Tree> {
        let ids: Vec<usize> = (0..boxes.len()).filter(|&i| !boxes[i].is_empty()).collect();
        let mut tree = Tree {
            nodes: Vec::new(),
            leaf: vec![usize::MAX; boxes.len()],
        };
        let mut stack: Vec<(Vec<usize>, Option<Slot>)> = vec![(ids, None)];
        while let Some((ids, parent)) = stack.pop() {
            let at = tree.nodes.len();
            if let Some((p, k)) = parent {
                if let Kind::Cut { children, .. } = &mut tree.nodes[p].kind {
                    children[k] = at;
                }
            }
            if let [only] = ids[..] {
                tree.leaf[only] = at;
                tree.nodes.push(Node {
                    kind: Kind::Leaf(only),
                    parent,
                });
                continue;
            }
            let (axis, parts) = (0..3)
                .filter_map(|a| groups(boxes, &ids, a).map(|g| (a, g)))
                .max_by_key(|(a, g)| (g.len(), std::cmp::Reverse(*a)))?;
            tree.nodes.push(Node {
                kind: Kind::Cut {
                    axis,
                    children: vec![usize::MAX; parts.len()],
                },
                parent,
            });
            for (k, g) in parts.into_iter().enumerate() {
                stack.push((g, Some((at, k))));
            }
        }
        Some(tree)
    }

    /// The cut plane bounding part `part`'s box on its high (`high`) or
    /// low side across `axis`: `(node, j)`, the plane between children `j`
    /// and `j + 1` of `node`; `None` on the grid's boundary.
    fn plane(&self, part: usize, axis: usize, high: bool) -> Option<(usize, usize)> {
        let mut cur = self.leaf[part];
        while let Some((p, k)) = self.nodes[cur].parent {
            if let Kind::Cut { axis: a, children } = &self.nodes[p].kind {
                if *a == axis {
                    if high && k + 1 < children.len() {
                        return Some((p, k));
                    }
                    if !high && k > 0 {
                        return Some((p, k - 1));
                    }
                }
            }
            cur = p;
        }
        None
    }

    /// The parts of subtree `node` touching its high (`high`) or low face
    /// across `axis`.
    fn touching(&self, node: usize, axis: usize, high: bool, out: &mut Vec<usize>) {
        let mut stack = vec![node];
        while let Some(n) = stack.pop() {
            match &self.nodes[n].kind {
                Kind::Leaf(i) => out.push(*i),
                Kind::Cut { axis: a, children } if *a == axis => {
                    let end = if high {
                        children.last()
                    } else {
                        children.first()
                    };
                    stack.extend(end);
                }
                Kind::Cut { children, .. } => stack.extend(children.iter().rev()),
            }
        }
    }

    /// Plane `(node, j)` moved by `dir` cells: its axis, the parts below it
    /// (which grow by `dir` layers) and above it (which shrink by `dir`).
    fn sides(&self, (node, j): (usize, usize)) -> (usize, Vec<usize>, Vec<usize>) {
        let Kind::Cut { axis, children } = &self.nodes[node].kind else {
            return (0, Vec::new(), Vec::new());
        };
        let (mut below, mut above) = (Vec::new(), Vec::new());
        self.touching(children[j], *axis, true, &mut below);
        self.touching(children[j + 1], *axis, false, &mut above);
        (*axis, below, above)
    }
}

/// The largest face of a box, in cells.
pub(crate) fn largest_face(b: &Box3) -> usize {
    (b.nx * b.ny).max(b.ny * b.nz).max(b.nx * b.nz)
}

/// The search state: boxes, shares, speeds, slowest time.
struct State<'a> {
    boxes: Vec<Box3>,
    shares: Vec<f64>,
    speeds: &'a [f64],
    slowest: f64,
}

/// A candidate move: the new boxes of the parts it touches.
type Move = Vec<(usize, Box3)>;

impl State<'_> {
    /// `(cells − share) / largest face` of part `i` with box `b`.
    fn planes(&self, i: usize, b: &Box3) -> f64 {
        (b.volume() as f64 - self.shares[i]) / largest_face(b).max(1) as f64
    }

    /// The boxes of plane `plane` moved by `dir` cells (`None` if a box
    /// would vanish).
    fn moved(&self, tree: &Tree, plane: (usize, usize), dir: isize) -> Option<Move> {
        let (axis, below, above) = tree.sides(plane);
        let mut out = Vec::with_capacity(below.len() + above.len());
        let step = |b: &Box3, lo: isize, len: isize| -> Option<Box3> {
            let mut l = [b.x, b.y, b.z];
            let mut n = [b.nx, b.ny, b.nz];
            l[axis] = l[axis].checked_add_signed(lo)?;
            n[axis] = n[axis].checked_add_signed(len).filter(|&v| v >= 1)?;
            Some(Box3::from_axes(l, n))
        };
        for i in below {
            out.push((i, step(&self.boxes[i], 0, dir)?));
        }
        for i in above {
            out.push((i, step(&self.boxes[i], dir, -dir)?));
        }
        Some(out)
    }

    /// The change of `Σ excess²` if the parts of `mv` take their new
    /// boxes, or `None` when the move breaks a rule (module docs).
    fn gain(&self, mv: &Move) -> Option<f64> {
        let excess = |r: f64| (r.abs() - 1.0).max(0.0).powi(2);
        let mut delta = 0.0;
        for (i, b) in mv {
            let old = self.planes(*i, &self.boxes[*i]);
            let new = self.planes(*i, b);
            if new.abs() > old.abs().max(1.0) + 1e-12
                || b.volume() as f64 / self.speeds[*i] > self.slowest
            {
                return None;
            }
            delta += excess(new) - excess(old);
        }
        Some(delta)
    }
}

/// `plan` with its cut planes moved so that parts lie within one plane of
/// their shares where single and double plane moves reach it (module
/// docs). The slowest part is never slower, no box becomes empty, the
/// boxes keep their neighbours. A plan that is no guillotine tiling is
/// returned unchanged. `speeds` must be valid and one per part.
pub fn balance_planes(mut plan: GridPlan3, speeds: &[f64]) -> GridPlan3 {
    if legacy() {
        return plan;
    }
    let Ok(shares) = plan.shares(speeds) else {
        return plan;
    };
    let Some(tree) = Tree::build(&plan.boxes) else {
        return plan;
    };
    let slowest = plan.slowest(speeds).unwrap_or(f64::INFINITY);
    let mut st = State {
        boxes: std::mem::take(&mut plan.boxes),
        shares,
        speeds,
        slowest,
    };
    let p = st.boxes.len();
    for _ in 0..SWEEPS {
        let mut order: Vec<(f64, usize)> = (0..p)
            .filter(|&i| !st.boxes[i].is_empty())
            .map(|i| (st.planes(i, &st.boxes[i]).abs(), i))
            .filter(|(r, _)| *r > 1.0)
            .collect();
        if order.is_empty() {
            break;
        }
        order.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
        let mut moved = false;
        for (_, i) in order {
            // Several moves for the same part while they help.
            while let Some(mv) = best_move(&st, &tree, i) {
                for (j, b) in mv {
                    st.boxes[j] = b;
                }
                moved = true;
            }
        }
        if !moved {
            break;
        }
    }
    plan.boxes = st.boxes;
    plan
}

/// [`balance_planes`] on grids where [`Guillotine3`](super::Guillotine3)
/// does not apply; on those tiny grids [`Best3`](super::Best3) already
/// adds the exhaustive guillotine optimum at each candidate's balance, and
/// `rb` and `pencils` keep their plain rounding.
pub(crate) fn balance_small_or_large(plan: GridPlan3, speeds: &[f64]) -> GridPlan3 {
    if super::Guillotine3::applies(plan.shape, plan.len()) || plan.len() > MAX_PARTS {
        return plan;
    }
    balance_planes(plan, speeds)
}

/// The planes bounding part `i` and the direction that moves it towards
/// its share.
fn planes_of(st: &State, tree: &Tree, i: usize) -> Vec<((usize, usize), isize)> {
    let r = st.planes(i, &st.boxes[i]);
    let mut out = Vec::new();
    for axis in 0..3 {
        for high in [true, false] {
            if let Some(pl) = tree.plane(i, axis, high) {
                // Over-full: the high plane moves down, the low one up.
                let dir = if (r > 0.0) == high { -1 } else { 1 };
                out.push((pl, dir));
            }
        }
    }
    out
}

/// The move of one or two planes that lowers the excess most while `i` is
/// more than a plane off, `None` if none helps.
fn best_move(st: &State, tree: &Tree, i: usize) -> Option<Move> {
    if st.boxes[i].is_empty() || st.planes(i, &st.boxes[i]).abs() <= 1.0 {
        return None;
    }
    let mut best: Option<(f64, Move)> = None;
    let keep = |best: &mut Option<(f64, Move)>, d: f64, mv: Move| {
        if d < -1e-12 && best.as_ref().is_none_or(|b| d < b.0) {
            *best = Some((d, mv));
        }
    };
    let firsts: Vec<(Move, Option<f64>)> = planes_of(st, tree, i)
        .into_iter()
        .filter_map(|(pl, dir)| st.moved(tree, pl, dir))
        .map(|mv| {
            let g = st.gain(&mv);
            (mv, g)
        })
        .collect();
    for (mv, g) in &firsts {
        if let Some(g) = g {
            keep(&mut best, *g, mv.clone());
        }
    }
    if best.is_some() {
        return best.map(|b| b.1);
    }
    // Two planes: the first pushes a neighbour `j` (it may break the rules
    // for `j`), a plane of `j` then passes the error on; the pair must
    // respect the rules.
    for (mv, _) in &firsts {
        let mut tmp_boxes = st.boxes.clone();
        for (j, b) in mv {
            tmp_boxes[*j] = *b;
        }
        let tmp = State {
            boxes: tmp_boxes,
            shares: st.shares.clone(),
            speeds: st.speeds,
            slowest: st.slowest,
        };
        for &(j, _) in mv.iter().filter(|(j, _)| *j != i) {
            for (pl, dir) in planes_of(&tmp, tree, j) {
                let Some(second) = tmp.moved(tree, pl, dir) else {
                    continue;
                };
                if second.iter().any(|(k, _)| *k == i) {
                    continue;
                }
                let mut both = mv.clone();
                both.extend(second.iter().copied());
                // Final boxes of every part touched, checked against the
                // rules from the original state.
                let mut last: Move = Vec::new();
                for &(k, b) in both.iter().rev() {
                    if !last.iter().any(|(x, _)| *x == k) {
                        last.push((k, b));
                    }
                }
                if let Some(g) = st.gain(&last) {
                    keep(&mut best, g, last);
                }
            }
        }
    }
    best.map(|b| b.1)
}
