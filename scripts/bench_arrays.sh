#!/usr/bin/env bash
# Reproduces [KRW96] §6.4 (Tables 2-8) for the array decompositions and
# stores the printed tables in target/bench/arrays_eval.txt (see
# benchmarks/arrays.md). Extra arguments go to the example, e.g.
#   scripts/bench_arrays.sh --quick        # small grid, 5 samples (seconds)
#   scripts/bench_arrays.sh --samples 20   # the sampling of [KRW96] (default)
# When KRW96_TEXT names a text extraction of [KRW96] (docs/references.md; the
# former name SEED000 is still read), the differences to its Tables 2-7 are
# printed too.
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p target/bench
cargo build --release --example array_eval
args=("$@")
for f in "${KRW96_TEXT:-}" "${SEED000:-}"; do
    if [[ -n "$f" && -f "$f" ]]; then
        args+=(--compare-seed "$f")
        break
    fi
done
./target/release/examples/array_eval "${args[@]}" | tee target/bench/arrays_eval.txt
