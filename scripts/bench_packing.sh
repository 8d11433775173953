#!/usr/bin/env bash
# Reproduces benchmarks/packing.md: the [VH94] §4.5 experiment (TP vs LP,
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
# TP against LP under every candidate reading of [VH94] ("Investigation: TP vs LP").
./target/release/examples/amr_experiment --investigate --levels "$LEVELS" --seeds "$SEEDS" \
    | tee benchmarks/packing_investigation.txt

# The collective packing (§4.2): time per round against the latency of one
# all-reduce (each round is 2 broadcasts + 3 all-reduces), on 1..8 ranks
# (oversubscribed on a 2-core machine).
. scripts/env.sh
cargo build --release -p nuce-testkit
for m in 16 64 256 1000; do
    for np in 1 2 4 8; do
        mpirun -np "$np" --oversubscribe ./target/release/nuce-mpi-check packing-bench "$m" 5 | grep '^RESULT'
    done
done | tee benchmarks/packing_collective.txt

# Sample packings of one 40-grid level (workload sizes, MAXRATIO 3) for the doc.
GRIDS=$(python3 -c "
import random, math
random.seed(4)
k = 300 * 1024 / 40
g = []
for i in range(40):
    s = random.uniform(0.7 * k, 1.3 * k); r = random.uniform(1, 3)
    g.append('%dx%d' % (round(math.sqrt(s * r)), round(math.sqrt(s / r))))
print(','.join(g))")
cargo build --release -p nuce-cli
for a in tp lp; do
    ./target/release/nuce plan pack --grids "$GRIDS" --mesh 32x32 --algo $a \
        --svg benchmarks/img/packing_example_$a.svg | head -1
done
