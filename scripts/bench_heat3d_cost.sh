#!/usr/bin/env bash
# heat3d_cost (DistArray3 with a cost field, 7-point Jacobi) on 2 ranks of equal speed, one per
# core: a band of a quarter of the x-planes costs 4x (really computed 4 times) and moves between
# the two ends of the grid every 2 phases. Goal: one phase after each move, the time per iteration
# is within 1.10x of the ideal (total cost / sum of the measured speeds). K runs (default 3), each
# followed by a --uniform run (equal boxes, never remaps) for reference.
# Prints a markdown table; the raw output is under target/bench/heat3d_cost_*.txt.
# BIN=path runs an already built binary instead of building the release example.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/env.sh
if [ -z "${BIN:-}" ]; then
  cargo build --release -p nuce --example heat3d_cost >/dev/null
  BIN=target/release/examples/heat3d_cost
fi
out=target/bench; mkdir -p $out
K=${1:-3} NX=${NX:-64} NY=${NY:-48} NZ=${NZ:-48} PH=${PH:-8} IT=${IT:-20}
two() { OMPI_MCA_orte_tmpdir_base=/tmp/ompi-$RANDOM NUCE_BIND="0:0,1:1" mpirun --bind-to none -np 2 scripts/bind_ranks.sh "$@"; }
H="$BIN --nx $NX --ny $NY --nz $NZ --phases $PH --iters $IT --no-check"
echo "| run | time / ideal one phase after each move (goal <= 1.10) | worst | uniform run: same phases |"
echo "|---|---|---|---|"
for k in $(seq 1 "$K"); do
  two $H > $out/heat3d_cost_bal$k.txt
  two $H --uniform > $out/heat3d_cost_uni$k.txt
  b=$(grep '^RESULT' $out/heat3d_cost_bal$k.txt | sed 's/.*after_move_ratios \([0-9.,]*\).*/\1/')
  w=$(grep '^RESULT' $out/heat3d_cost_bal$k.txt | sed 's/.*worst_after_move \([0-9.]*\).*/\1/')
  u=$(grep '^RESULT' $out/heat3d_cost_uni$k.txt | sed 's/.*after_move_ratios \([0-9.,]*\).*/\1/')
  echo "| $k | $b | $w | $u |"
done
