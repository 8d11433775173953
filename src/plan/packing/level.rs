//! The baseline of the seed's experiments: the modified first-fit level
//! heuristic LP (seed `004_64c626e209e0545b.txt` §4.5, after Coffman, Garey,
//! Johnson and Tarjan [18]) with the width search of §4.5.
//!
//! For a bin of fixed width, grids are taken in decreasing order of height and
//! packed level by level, first fit (a grid goes to the lowest level with room
//! left, else opens a new level as tall as itself). Successive levels are
//! filled left-to-right and right-to-left, so the tallest grid of a level sits
//! above the shortest of the level below; afterwards every grid *drops down*
//! until it rests on a grid below (or the floor), which can only lower it.
//! Grids keep a fixed orientation, long side along x (LP does not rotate;
//! the seed credits TP's rotations for part of its advantage).
//!
//! The width is not given in our problem, so the search starts at
//! `W = √(R·S)` (`S = Σ wᵢhᵢ`, at least the longest grid side) and grows by
//! 1% until the packing's `W/H` first reaches the mesh ratio `R` (the seed's
//! "small amount" is garbled in the text; we read it as 1%). One fixed-width
//! packing costs `O(m²)` (first fit over levels, then the drop), the search
//! `O(k·m²)` for `k` widths tried.

use serde::{Deserialize, Serialize};

use super::{check_grids, Grid, Packer, Packing, Placement};
use crate::error::Result;

/// LP with the width search, as a [`Packer`].
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct LevelPacking {
    /// Relative width increase per iteration (the seed's small amount; 0.01).
    pub step: f64,
    /// Upper bound on the widths tried.
    pub max_iters: usize,
    /// Let grids drop down onto the level below (the seed's modification).
    /// `false` keeps them on their level's shelf (plain alternating levels).
    pub drop_down: bool,
}

impl Default for LevelPacking {
    fn default() -> Self {
        LevelPacking {
            step: 0.01,
            max_iters: 10_000,
            drop_down: true,
        }
    }
}

/// One fixed-width LP packing: placements (input order), used width, height.
/// `bin` must be at least the longest side of every grid; with `drop_down`
/// grids fall onto the grids below, else they stay on their shelf. `O(m²)`.
pub fn pack_fixed_width(grids: &[Grid], bin: u64, drop_down: bool) -> (Vec<Placement>, u64, u64) {
    // Orientation: long side along x; `rotated` when that turns the grid.
    let dims: Vec<(u64, u64)> = grids.iter().map(|g| (g.long(), g.short())).collect();
    let mut order: Vec<usize> = (0..grids.len()).collect();
    order.sort_by_key(|&i| std::cmp::Reverse(dims[i].1));
    // First fit into levels: (used width, members in arrival order).
    let mut levels: Vec<(u64, Vec<usize>)> = Vec::new();
    for &i in &order {
        let w = dims[i].0;
        match levels.iter_mut().find(|(used, _)| used + w <= bin) {
            Some((used, members)) => {
                *used += w;
                members.push(i);
            }
            None => levels.push((w, vec![i])),
        }
    }
    let mut placements = vec![Placement::default(); grids.len()];
    // Boxes already dropped: (x0, x1, top).
    let mut dropped: Vec<(u64, u64, u64)> = Vec::with_capacity(grids.len());
    let (mut width, mut height, mut shelf) = (0, 0, 0);
    for (k, (_, members)) in levels.iter().enumerate() {
        let mut cursor = 0;
        for &i in members {
            let (w, h) = dims[i];
            let x = if k % 2 == 0 { cursor } else { bin - cursor - w };
            cursor += w;
            let y = if drop_down {
                dropped
                    .iter()
                    .filter(|&&(a, b, _)| a < x + w && x < b)
                    .map(|&(_, _, top)| top)
                    .max()
                    .unwrap_or(0)
            } else {
                shelf
            };
            dropped.push((x, x + w, y + h));
            width = width.max(x + w);
            height = height.max(y + h);
            placements[i] = Placement {
                x,
                y,
                rotated: grids[i].w < grids[i].h,
            };
        }
        // The level's height is that of its first (tallest) grid.
        shelf += members.first().map_or(0, |&i| dims[i].1);
    }
    (placements, width, height)
}

impl Packer for LevelPacking {
    fn name(&self) -> &'static str {
        "lp"
    }

    fn pack(&self, grids: &[Grid], ratio: f64) -> Result<Packing> {
        check_grids(grids, ratio)?;
        let area: f64 = grids.iter().map(|g| g.area() as f64).sum();
        let longest = grids.iter().map(Grid::long).max().unwrap_or(1);
        let all_in_a_row: u64 = grids.iter().map(Grid::long).sum();
        let mut bin = ((ratio * area).sqrt().ceil() as u64).max(longest);
        let step = if self.step.is_finite() && self.step > 0.0 {
            self.step
        } else {
            0.01
        };
        let mut best = pack_fixed_width(grids, bin, self.drop_down);
        for _ in 0..self.max_iters {
            let (_, w, h) = best;
            if w as f64 >= ratio * h as f64 || bin >= all_in_a_row {
                break;
            }
            bin = (bin + 1).max((bin as f64 * (1.0 + step)).ceil() as u64);
            best = pack_fixed_width(grids, bin, self.drop_down);
        }
        let (placements, width, height) = best;
        Ok(Packing {
            algo: self.name().into(),
            width,
            height,
            placements,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_alternate_and_drop() {
        // bin 10: level 0 gets 6x4 and 4x3 (left to right); level 1 gets 4x2
        // and 5x1 right-to-left: 4x2 at x=6 drops onto the 4x3 (top 3), 5x1
        // at x=1 rests on the 6x4 (top 4). Shelves alone would be 6 high.
        let g = [
            Grid::new(6, 4),
            Grid::new(4, 3),
            Grid::new(4, 2),
            Grid::new(5, 1),
        ];
        let (pl, w, h) = pack_fixed_width(&g, 10, true);
        assert_eq!((pl[0].x, pl[0].y), (0, 0));
        assert_eq!((pl[1].x, pl[1].y), (6, 0));
        assert_eq!((pl[2].x, pl[2].y), (6, 3));
        assert_eq!((pl[3].x, pl[3].y), (1, 4));
        assert_eq!((w, h), (10, 5));
        let (pl, _, h) = pack_fixed_width(&g, 10, false);
        assert_eq!((pl[2].y, pl[3].y, h), (4, 4, 6));
    }

    #[test]
    fn search_reaches_the_ratio() {
        let g: Vec<Grid> = (1..=20).map(|i| Grid::new(3 + i % 5, 2 + i % 3)).collect();
        for r in [1.0, 2.0] {
            let p = LevelPacking::default().pack(&g, r).unwrap();
            p.validate(&g).unwrap();
            assert!(p.width as f64 >= r * p.height as f64);
        }
    }
}
