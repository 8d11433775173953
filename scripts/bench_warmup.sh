#!/usr/bin/env bash
# Where the first plan comes from (issue 19): the built-in kernel
# (`Balancer::measure`, heat2d's default) or the solver's own first phase
# (`heat2d --warmup N`: an even first split, a first phase of N iterations,
# then the balance points plan from the phases' timings). Runs both
# alternately (same load), RUNS times each, on 2 ranks with equal speeds and
# with rank 1 three times slower, and prints every run's whole time
# (`total_seconds`: the kernel's measurement, every phase, every remap, and
# per iteration: a warm-up phase is shorter than the others),
# the first and last split and the remaps, then the medians. A third run of
# each round is the static baseline the issue compares against: the even
# split for equal ranks (`--uniform`, never remaps) and the best static split
# for the slow case (`--static-speeds 3,1`: planned once for the true speeds,
# never measured, never remapped).
#
#   [ROWS=512 COLS=512 PHASES=6 ITERS=200] scripts/bench_warmup.sh [RUNS] [WARMUP] [heat2d args...]
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/env.sh
runs=${1:-5} warm=${2:-5}
shift $(( $# < 2 ? $# : 2 ))
args=(--rows "${ROWS:-512}" --cols "${COLS:-512}" --phases "${PHASES:-6}" --iters "${ITERS:-200}" --json --no-check "$@")
cargo build --release --example heat2d -q
bin=target/release/examples/heat2d
out=$(mktemp)
for case in equal slow; do
  extra=(); [[ $case == slow ]] && extra=(--slowdown 1:3@0)
  for i in $(seq 1 "$runs"); do
    for first in kernel warmup static; do
      w=()
      [[ $first == warmup ]] && w=(--warmup "$warm")
      [[ $first == static && $case == equal ]] && w=(--uniform)
      [[ $first == static && $case == slow ]] && w=(--static-speeds 3,1)
      line=$(OMPI_MCA_orte_tmpdir_base=/tmp/ompi-w$RANDOM mpirun -np 2 --oversubscribe \
        "$bin" "${args[@]}" "${extra[@]}" "${w[@]}" | grep '^{')
      echo "$case $first $line" >> "$out"
    done
  done
done
python3 - "$out" <<'PY'
import json, sys, statistics as st
rows = {}
print(f"{'case':>6} {'first':>7} {'total s':>9} {'ms/iter':>9} {'remaps':>6}  rank-1 cells: first -> last")
for l in open(sys.argv[1]):
    case, first, doc = l.split(" ", 2)
    v = json.loads(doc)
    ph = v["phases"]
    remaps = sum(p["remapped"] for p in ph)
    # A warm-up phase is shorter than the others: compare per iteration.
    iters = v["iters_per_phase"] * len(ph)
    if v["warmup"]:
        iters += v["warmup"] - v["iters_per_phase"]
    per_it = v["total_seconds"] / iters
    rows.setdefault((case, first), []).append(per_it)
    print(f"{case:>6} {first:>7} {v['total_seconds']:9.3f} {per_it * 1e3:9.4f} {remaps:6d}  {ph[0]['areas'][1]} -> {ph[-1]['areas'][1]}")
for case in ("equal", "slow"):
    k, w, b = (st.median(rows[(case, f)]) for f in ("kernel", "warmup", "static"))
    print(f"median whole-run ms/iter {case}: kernel {k * 1e3:.4f}, warm-up {w * 1e3:.4f}, static {b * 1e3:.4f}; "
          f"kernel / static {k / b:.3f}, warm-up / static {w / b:.3f}")
PY
rm -f "$out"
