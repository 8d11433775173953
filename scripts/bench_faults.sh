#!/usr/bin/env bash
# Fault-injection statistics for RELIABILITY.md: each fault N times (default
# 10), the time for the whole job to end and whether the output names the
# faulty rank. Goal: every run ends within 30 s with the rank named.
#
#   scripts/bench_faults.sh [RUNS] [NP]
#
# Faults: heat2d rank 1 aborts itself (--die 1@1) between phases, or gets
# SIGKILL in the middle of a phase (--kill 1@1); heat2d rank NP-1 hangs
# (--hang); the root hangs (nuce-mpi-check faults-hang 0). NUCE_TIMEOUT_S=10.
# Each run is killed after 120 s (counted as a hang). Prints a markdown table.
set -uo pipefail
cd "$(dirname "$0")/.."
. scripts/env.sh
runs="${1:-10}"
np="${2:-3}"
{ cargo build --release --example heat2d && cargo build --release -p nuce-testkit; } >/dev/null 2>&1 ||
  { echo "bench_faults.sh: build failed" >&2; exit 1; }
heat=target/release/examples/heat2d
check=target/release/nuce-mpi-check
last=$((np - 1))
grid=(--rows 256 --cols 192 --iters 10 --phases 4)
export NUCE_TIMEOUT_S=10

# name|needle|command...
cases=(
  "heat2d --die 1@1 (abort)|rank 1|$heat ${grid[*]} --die 1@1"
  "heat2d --kill 1@1 (SIGKILL mid-phase)|rank 1|$heat ${grid[*]} --kill 1@1"
  "heat2d --hang $last@1|rank(s) [$last] of $np did not reach|$heat ${grid[*]} --hang $last@1"
  "faults-hang 0 (root hangs)|the root, rank 0, which did not arrive|$check faults-hang 0"
)
echo "| fault | runs | ended ≤ 30 s | rank named | exit codes | time to end (s) min / median / max |"
echo "|---|---|---|---|---|---|"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
for c in "${cases[@]}"; do
  IFS='|' read -r name needle cmd <<<"$c"
  times=(); codes=(); fast=0; named=0
  for ((i = 0; i < runs; i++)); do
    t0=$(date +%s.%N)
    # shellcheck disable=SC2086
    timeout -k 5 120 mpirun -np "$np" $cmd >"$tmp/out" 2>&1
    code=$?
    t1=$(date +%s.%N)
    t=$(echo "$t1 - $t0" | bc)
    times+=("$t"); codes+=("$code")
    (( $(echo "$t <= 30" | bc) )) && fast=$((fast + 1))
    grep -qF "$needle" "$tmp/out" && named=$((named + 1))
  done
  sorted=($(printf '%s\n' "${times[@]}" | sort -n))
  med="${sorted[$((runs / 2))]}"
  ucodes="$(printf '%s\n' "${codes[@]}" | sort -u | tr '\n' ' ')"
  printf '| %s | %d | %d/%d | %d/%d | %s| %.1f / %.1f / %.1f |\n' "$name" "$runs" "$fast" "$runs" \
    "$named" "$runs" "$ucodes" "${sorted[0]}" "$med" "${sorted[$((runs - 1))]}"
done
