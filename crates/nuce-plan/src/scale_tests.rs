//! Checks at large part counts (issue 32): the exact tiling checks of 2D
//! and 3D plans catch one cell out of place among tens of thousands of
//! parts, the halo neighbours equal the brute-force ones, and the fast
//! paths of the default decomposers give valid plans close to the
//! unhurried ones.

use crate::array2d::cost::acost;
use crate::array2d::{ArrayDecomposer, ArrayPlan, ColumnDp, Rect};
use crate::array3d::{Best3, Box3, GridDecomposer3, GridPlan3, RecursiveBisection3d, Stencil};

/// Speeds in `[1, 4]` from a fixed LCG.
fn speeds(p: usize) -> Vec<f64> {
    let mut x = 99u64;
    (0..p)
        .map(|_| {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            1.0 + 3.0 * ((x >> 11) as f64 / (1u64 << 53) as f64)
        })
        .collect()
}

/// A 60³ grid in 27 000 cubes of 2³ cells, listed in a scrambled order.
fn cubes() -> GridPlan3 {
    let mut boxes = Vec::new();
    for i in 0..30 {
        for j in 0..30 {
            for k in 0..30 {
                boxes.push(Box3::new(2 * i, 2 * j, 2 * k, 2, 2, 2));
            }
        }
    }
    let n = boxes.len();
    let scrambled = (0..n).map(|t| boxes[(t * 7919) % n]).collect();
    GridPlan3::new("cubes", (60, 60, 60), scrambled).unwrap()
}

#[test]
fn one_cell_out_of_place_among_27000_boxes_is_caught() {
    let plan = cubes();
    assert!(plan.validate().is_ok());
    // Shifted by one cell: same volume, one layer twice and one never.
    let mut shifted = plan.clone();
    let b = shifted.boxes[12345];
    shifted.boxes[12345] = Box3::new(b.x + 1, b.y, b.z, 2, 2, 2).min_inside(59);
    let e = shifted.validate().unwrap_err().to_string();
    assert!(e.contains("overlap"), "{e}");
    // One box grown by a layer along z, its neighbour there shrunk from
    // its far side: the same volume, an overlap and a gap.
    let mut grown = plan.clone();
    let at = |plan: &GridPlan3, x, y, z| plan.owner_of(x, y, z).unwrap();
    let (a, c) = (at(&grown, 10, 10, 10), at(&grown, 10, 10, 12));
    grown.boxes[a].nz = 3;
    grown.boxes[c].nz = 1;
    assert!(grown
        .validate()
        .unwrap_err()
        .to_string()
        .contains("overlap"));
    // Shrunk from the near side instead, it is a tiling again.
    grown.boxes[c].z += 1;
    assert!(grown.validate().is_ok());
    // A gap: the neighbour shrunk alone (the volume check catches it).
    let mut gap = plan.clone();
    gap.boxes[c].nz = 1;
    assert!(gap.validate().is_err());
    // Two boxes exchanged: still a tiling.
    let mut swapped = plan;
    swapped.boxes.swap(3, 20000);
    assert!(swapped.validate().is_ok());
}

impl Box3 {
    /// The box moved back inside a grid of `hi + 1` cells along x.
    fn min_inside(self, hi: usize) -> Box3 {
        if self.x + self.nx > hi + 1 {
            Box3 {
                x: self.x - 2,
                ..self
            }
        } else {
            self
        }
    }
}

#[test]
fn neighbour_lists_equal_brute_force_at_4000_parts() {
    let s = speeds(4000);
    let plan = RecursiveBisection3d.decompose((90, 70, 80), &s).unwrap();
    for stencil in [
        Stencil::seven(1),
        Stencil::twenty_seven(2),
        Stencil::seven(3),
    ] {
        let lists = plan.neighbour_lists(stencil);
        for part in (0..plan.len()).step_by(37) {
            assert_eq!(lists[part], plan.neighbours(part, stencil), "{part}");
        }
    }
}

#[test]
fn a_2d_plan_of_40000_parts_is_checked_exactly() {
    let rect = |r: usize, c: usize| Rect::new(r, c, 1, 1);
    let parts: Vec<Rect> = (0..200)
        .flat_map(|r| (0..200).map(move |c| rect(r, c)))
        .collect();
    let plan = ArrayPlan::new("cells", 200, 200, parts.clone()).unwrap();
    assert!(plan.validate().is_ok());
    let mut moved = parts;
    moved[777] = rect(0, 0);
    assert!(ArrayPlan::new("cells", 200, 200, moved).is_err());
}

#[test]
fn fast_paths_are_valid_and_close_to_the_unhurried_plans() {
    let p = ColumnDp::FAST_FROM;
    let s = speeds(p);
    let column = ColumnDp::default();
    let fast = column.decompose(3000, 3000, &s).unwrap();
    assert_eq!(fast, column.fast(3000, 3000, &s).unwrap());
    let slow = column.unhurried(3000, 3000, &s).unwrap();
    assert!(fast.validate().is_ok() && slow.validate().is_ok());
    let (f, u) = (acost(&fast) as f64, acost(&slow) as f64);
    assert!(f <= 1.01 * u, "fast {f} unhurried {u}");
    assert!(fast.imbalance(&s).unwrap() <= slow.imbalance(&s).unwrap() + 0.01);
    // 3D: recursive bisection, named after `best`.
    let s = speeds(Best3::FAST_FROM);
    let plan = Best3::default().decompose((200, 200, 200), &s).unwrap();
    assert_eq!(plan.algorithm, "best:rb");
    assert_eq!(plan, Best3::default().fast((200, 200, 200), &s).unwrap());
    let rb = RecursiveBisection3d.decompose((200, 200, 200), &s).unwrap();
    assert_eq!(plan.boxes, rb.boxes);
}
