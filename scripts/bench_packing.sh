#!/usr/bin/env bash
# Reproduces benchmarks/packing.md: the seed-004 §4.5 experiment (TP vs LP,
# scalings, orders; 200 levels, 3 seeds) with SVG plots in benchmarks/img/,
# and the sequential TP timing on 1 000 grids.
# Usage: scripts/bench_packing.sh [LEVELS] [SEEDS]
set -euo pipefail
cd "$(dirname "$0")/.."
LEVELS=${1:-200}
SEEDS=${2:-3}
cargo build --release --example amr_experiment
mkdir -p benchmarks/img
./target/release/examples/amr_experiment --levels "$LEVELS" --seeds "$SEEDS" --out benchmarks \
    | tee benchmarks/packing_tables.txt
