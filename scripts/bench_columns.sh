#!/usr/bin/env bash
# Reproduces benchmarks/columns.md: array decomposers' cost against the
# lower bound and plan times for p = 10 … 10 000, ColumnDp and Hierarchical
# timing goals. Usage: scripts/bench_columns.sh [--quick]
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --example array_scale
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)"
echo "date: $(date -u +%Y-%m-%dT%H:%MZ)"
echo
target/release/examples/array_scale "$@"
