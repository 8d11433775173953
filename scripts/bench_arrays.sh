#!/usr/bin/env bash
# Reproduces seed 000 §6.4 (Tables 2-8) for the array decompositions and
# stores the printed tables in target/bench/arrays_eval.txt (see
# benchmarks/arrays.md). Extra arguments go to the example, e.g.
#   scripts/bench_arrays.sh --quick        # small grid, 5 samples (seconds)
#   scripts/bench_arrays.sh --samples 20   # the seed's sampling (default)
# When the seed's text is found (SEED000, shared/seeds/ or /work/shared/seeds/),
# the differences to its Tables 2-7 are printed too.
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p target/bench
cargo build --release --example array_eval
args=("$@")
for f in "${SEED000:-}" shared/seeds/000_3b7f5c9969a269e5.txt /work/shared/seeds/000_3b7f5c9969a269e5.txt; do
    if [[ -n "$f" && -f "$f" ]]; then
        args+=(--compare-seed "$f")
        break
    fi
done
./target/release/examples/array_eval "${args[@]}" | tee target/bench/arrays_eval.txt
