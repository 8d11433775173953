#!/usr/bin/env bash
# The README's main job: heat2d balanced by nuce on ranks whose speeds differ, against the uniform
# split, then a speed change mid-run. Installs what is missing, builds, runs, prints a summary.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
. scripts/env.sh
cargo build --release --example heat2d
cargo build --release -p nuce-cli
ROWS=${ROWS:-1536} ITERS=${ITERS:-30} PHASES=${PHASES:-8}
common=(--rows "$ROWS" --cols "$ROWS" --phases "$PHASES" --iters "$ITERS" "$@")
# Part 1: two ranks, one per core (this machine has 2), rank 1 doing 3x the work of every sweep.
# nuce is never told the factor: it measures each rank's compute time by itself.
echo "== 1. heat2d on 2 ranks, rank 1 does 3x the work (--slowdown 1:3@0), balanced by nuce =="
mpirun -np 2 target/release/examples/heat2d "${common[@]}" --slowdown 1:3@0 | tee /tmp/nuce-demo-balanced.txt
echo
echo "== 1'. the same run without balancing (uniform split, never remapped) =="
mpirun -np 2 target/release/examples/heat2d "${common[@]}" --slowdown 1:3@0 --uniform | tee /tmp/nuce-demo-uniform.txt
# Part 2: speeds change mid-run: rank 1 is 3x slower at first, then recovers while rank 0 slows 3x.
echo
echo "== 2. heat2d on 2 ranks whose speeds change at phase 4 (--slowdown 1:3@0,1:1@4,0:3@4) =="
mpirun -np 2 target/release/examples/heat2d "${common[@]}" --slowdown 1:3@0,1:1@4,0:3@4 | tee /tmp/nuce-demo-change.txt
field() { awk -v k="$2" '$1=="SUMMARY" { for (i=2;i<NF;i++) if ($i==k) print $(i+1) }' "$1"; }
bal=$(field /tmp/nuce-demo-balanced.txt steady_s_per_iter)
uni=$(field /tmp/nuce-demo-uniform.txt steady_s_per_iter)
ideal=$(field /tmp/nuce-demo-balanced.txt ideal_s_per_iter)
echo
echo "== summary (run 1, time per iteration after the first phase, max over ranks) =="
awk -v b="$bal" -v u="$uni" -v i="$ideal" 'BEGIN {
  printf "uniform split         %.5f s/iter\n", u
  printf "balanced by nuce      %.5f s/iter   (%.2fx faster; balanced/uniform = %.3f)\n", b, u/b, b/u
  printf "ideal (measured speeds) %.5f s/iter (ideal/uniform = %.3f; the 1:3 model gives 0.5)\n", i, i/u
  printf "balanced / ideal      %.3f\n", b/i
}'
