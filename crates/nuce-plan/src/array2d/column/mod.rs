//! Optimal column-based decompositions by dynamic programming
//! (\[BBLRR01\] §3.2.4, Algorithms 3 and 4, Table 2,
//! Figure 16), generalised from the unit square to an `rows × cols` array,
//! with both orientations and an optional latency term
//! (\[KRW96\] §5).
//!
//! # The model
//!
//! A column-based decomposition cuts the array into `C` slabs ("columns")
//! along one dimension of length `La`, each slab spanning the other dimension
//! of length `Lc`; slab `j` holds `k_j` parts stacked across it, and its width
//! is proportional to its total weight `W_j` (weights normalised to sum 1).
//! Each part of slab `j` has half-perimeter `La·W_j + Lc·w_i/W_j`, so the sum
//! of half-perimeters is
//!
//! ```text
//! Ĉ = C·Lc + La · Σ_j k_j·W_j            (\[BBLRR01\] §3.2.4: "1 + k_i c_i" per column)
//! Acost = Ĉ − (rows + cols)               (\[KRW96\] §4, Theorem 1's proof)
//! ```
//!
//! With `La = Lc = 1` this is exactly the MM-COL(s) objective of \[BBLRR01\]. The
//! column-based class equals the XY class of \[KRW96\] §4 (partition along one
//! axis, then the other), and by \[KRW96\] Theorem 1 an optimal member has its
//! parts sorted by size with the slabs holding contiguous runs of the sorted
//! order, so the search is over the `2^(p−1)` segmentations of the sorted
//! weights — the \[BBLRR01\] dynamic program.
//!
//! # Beyond \[BBLRR01\]: an `O(p log p)` formulation
//!
//! \[BBLRR01\]'s Algorithm 3 indexes its table by the number of columns `C` and runs
//! in `O(p³)` (Table 2 is its trace; [`partition_table`] reproduces it
//! verbatim). But a slab's cost `Lc + La·(q−a)·(S_q − S_a)` does not depend
//! on how many slabs precede it, so the `C` index can be dropped:
//! `f(q) = min_{a<q} f(a) + w(a, q)`. The weight `w(a, q) = (q−a)(S_q−S_a)` is
//! a product of two interval-additive non-negative quantities and therefore
//! satisfies the quadrangle inequality `w(a,c) + w(b,d) ≤ w(a,d) + w(b,c)` for
//! `a ≤ b ≤ c ≤ d` (the difference is `x_ab·y_cd + x_cd·y_ab ≥ 0`). Hence a
//! later candidate split, once better, stays better, and the DP is solved
//! with the monotone candidate queue of the concave least-weight-subsequence
//! problem (Hirschberg–Larmore \[HiLa87\]; Galil–Giancarlo \[GG89\]) in `O(p log p)`
//! ([`column_optimum`]).
//!
//! # Latency term
//!
//! With point-to-point messages every internal edge of the decomposition's
//! planar graph costs a latency `L` (\[KRW96\] §5, `E_i = V_i + p − 1`). In a
//! column-based decomposition with no accidentally aligned cuts, slab `j`
//! contributes `k_j − 1` internal corner points per side it shares with
//! another slab: two sides for inner slabs, one for the two end slabs. The
//! order of the slabs does not change `Ĉ`, so the two slabs with the most
//! parts go to the ends, and `V_i = 2(p − C) − (k_(1) − 1) − (k_(2) − 1)`.
//! In the sorted optimum the slabs of the smallest parts hold the most parts
//! (\[KRW96\] Theorem 1), so the DP gives the end bonus to the first two segments:
//! three chained Monge layers, still `O(p log p)`.
//!
//! # The integer plan decides
//!
//! The model misses two effects of the integer plan that \[KRW96\]'s exhaustive
//! XY2 sees, because it costs every `pt(p)` candidate on the rounded plan:
//! **aligned cuts** — neighbouring slabs whose cut heights coincide share
//! corner points (a four-way crossing is one vertex), which equal parts in
//! slabs of equal counts always do (1000 × 1000, 20 equal parts, latency
//! 100: 5 slabs of 4, Acost 7000 + 31 edges, against the model's choice
//! with unequal slabs, 7200 + 39 edges) — and **rounding**: Acost of the
//! integer plan is `(C − 1)·Lc + Σ_j (k_j − 1)·width_j` with rounded widths,
//! which can reorder layouts whose model costs differ by less than `p − C`.
//! So [`ColumnDp`] uses the DP to propose candidates and the integer plan to
//! choose among them ([`ColumnDp::layout`]): the model optima, the optima
//! for each column count near the best (`Model::per_count`, \[BBLRR01\]'s
//! Algorithm 3 with Monge layers), an exact-corner DP over sorted placements
//! for small `p` (`Model::aligned`), and at latency 0 every segmentation
//! whose model cost is within the rounding bound of the best integer cost
//! found (`Model::within`); each is costed exactly (`integer_cost`),
//! and a descent on the integer cost finishes the search.
//!
//! # Whole cells
//!
//! On small arrays the continuous optimum may give a part less than one row
//! or column, which rounding turns into an empty part. [`ColumnDp`] first
//! restricts the DP to layouts where every part is at least one cell in each
//! extent ([`column_optimum_whole_cells`]; still Monge, still `O(p log p)`,
//! optimal among sorted layouts — the exchange argument of Theorem 1 does
//! not survive these constraints).
//!
//! # Files
//!
//! | file | holds |
//! |---|---|
//! | `search.rs` | [`ColumnDp`]: candidates from the DP, choice on the integer plan |
//! | `model.rs` | the continuous model: slab costs, penalties, [`model_half_perimeter`] |
//! | `monge.rs` | the Monge (concave least-weight-subsequence) layer |
//! | `dp.rs` | the `O(p log p)` DP: [`column_optimum`], [`column_optimum_whole_cells`], per-count optima |
//! | `candidates.rs` | the exact-corner DP and the near-optimal enumeration |
//! | `integer.rs` | the exact integer cost of a layout |
//! | `table.rs` | Algorithms 3–4 verbatim: [`partition_table`] |
//! | `bounds.rs` | Lemma 1 lower bounds: [`acost_lower_bound`], [`lemma1_bound`] |
//!
//! The argument checks shared by all decomposers ([`rescaled`],
//! [`checked_speeds`], [`check_latency`]) and the integer objective
//! [`plan_cost`] live in `array2d::checks` and [`crate::array2d::cost`]; their
//! paths under `column` keep working through the re-exports below.

mod bounds;
mod candidates;
mod dp;
mod integer;
mod model;
mod monge;
mod search;
mod table;

pub use super::checks::{check_latency, checked_speeds, rescaled};
pub use super::cost::plan_cost;
pub use bounds::{acost_lower_bound, lemma1_bound};
pub use dp::{column_optimum, column_optimum_whole_cells, ColumnOptimum};
pub use model::model_half_perimeter;
pub(crate) use monge::monge_layer;
pub use search::ColumnDp;
pub use table::{partition_table, PartitionTable};
