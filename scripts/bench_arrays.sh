#!/usr/bin/env bash
# Reproduces seed 000 §6.4 (Tables 2-8) for the array decompositions and
# stores the printed tables in target/bench/arrays_eval.txt (see
# benchmarks/arrays.md). Extra arguments go to the example, e.g.
#   scripts/bench_arrays.sh --quick        # small grid, 5 samples (seconds)
#   scripts/bench_arrays.sh --samples 20   # the seed's sampling (default)
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p target/bench
cargo build --release --example array_eval
./target/release/examples/array_eval "$@" | tee target/bench/arrays_eval.txt
