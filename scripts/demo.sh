#!/usr/bin/env bash
# The README's main job: heat2d on 4 ranks whose speeds differ and change mid-run.
# Installs what is missing, builds, runs, prints the per-phase table and the serial check.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
. scripts/env.sh
cargo build --release --example heat2d && cargo build --release -p nuce-cli
NP=${NP:-4}
# Rank 1 does 3x the work per cell from the start; at phase 4 it recovers and rank 2 slows down 4x.
# The library is never told these factors: it measures the resulting speeds.
SLOW=${SLOW:-1:3@0,1:1@4,2:4@4}
echo "== heat2d on $NP ranks, heterogeneity $SLOW (rank:factor@phase) =="
mpirun -np "$NP" target/release/examples/heat2d --rows 768 --cols 768 --phases 8 --iters 30 --slowdown "$SLOW" "$@"
echo
echo "== the same run without balancing (uniform split, never remapped) =="
mpirun -np "$NP" target/release/examples/heat2d --rows 768 --cols 768 --phases 8 --iters 30 --slowdown "$SLOW" --uniform "$@"
