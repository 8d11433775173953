#!/usr/bin/env bash
# Two ranks of equal speed, no slowdown (issue 19): how often does heat2d
# remap, and how even is its first split? Runs the heat2d of OLD_DIR and of
# NEW_DIR alternately (side by side, same load), RUNS times each.
#
#   scripts/bench_equal_ranks.sh OLD_DIR NEW_DIR [RUNS] [heat2d args...]
#
# OLD_DIR, NEW_DIR: folders holding a built `heat2d` (e.g. a copy of
# target/release/examples from the commit before, and target/release/examples).
# With C=1: folders holding a `libnuce.so` (target/release/libnuce_capi.so
# renamed) instead; examples/c/heat2d.c is built against each (into
# $TMPDIR) and run the same way.
# Prints one line per run and a summary per binary: remaps per run, rank 0's
# share of the cells in the first phase, steady time per iteration (Rust only).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/env.sh
old=$1 new=$2 runs=${3:-10}
shift $(( $# < 3 ? $# : 3 ))
args=(--rows 512 --cols 512 --phases 8 --iters 40 "$@")
out=$(mktemp)
bin=$(mktemp -d)
for which in old new; do
  dir=$old; [[ $which == new ]] && dir=$new
  if [[ ${C:-0} == 1 ]]; then
    mpicc -O2 examples/c/heat2d.c -Icrates/nuce-capi/include -L"$dir" -lnuce -lm \
      -Wl,-rpath,"$(cd "$dir" && pwd)" -o "$bin/$which"
  else
    ln -s "$(cd "$dir" && pwd)/heat2d" "$bin/$which"
  fi
done
for i in $(seq 1 "$runs"); do
  for which in old new; do
    if [[ ${C:-0} == 1 ]]; then
      # The C example prints text: turn its lines into the JSON fields used below.
      line=$(mpirun -np 2 --oversubscribe "$bin/$which" "${args[@]}" | python3 -c '
import json, re, sys
t = sys.stdin.read().splitlines()
get = lambda k: next(l.split(k, 1)[1] for l in t if l.startswith(k))
first = [int(x) for x in get("heat2d: first split:").split()]
r = int(get("heat2d: remaps:"))
rows, cols, phases = map(int, re.search(r"(\d+)x(\d+), (\d+) phases", get("heat2d: nuce ")).groups())
print(json.dumps({"rows": rows, "cols": cols, "steady_s_per_iter": 0.0,
  "phases": [{"areas": first, "remapped": k < r} for k in range(phases)]}))')
    else
      line=$(mpirun -np 2 --oversubscribe "$bin/$which" --json "${args[@]}" | grep '^{')
    fi
    echo "$which $line" >> "$out"
  done
done
rm -rf "$bin"
python3 - "$out" <<'PY'
import json, sys, statistics as st
runs = {"old": [], "new": []}
for l in open(sys.argv[1]):
    which, doc = l.split(" ", 1)
    v = json.loads(doc)
    ph = v["phases"]
    first = ph[0]["areas"]
    # Within one row (or column) of the even split: |a0 - a1| <= 2 * line.
    even = abs(first[0] - first[1]) <= 2 * max(v["rows"], v["cols"])
    runs[which].append((sum(p["remapped"] for p in ph), first[0] / sum(first), even, v["steady_s_per_iter"]))
    print(f"{which} remaps {runs[which][-1][0]} first_split {first} rank0_share {runs[which][-1][1]:.3f} steady_s_per_iter {v['steady_s_per_iter']:.6f}")
for which, r in runs.items():
    rem = [x[0] for x in r]; sh = [x[1] for x in r]; t = [x[3] for x in r]
    print(f"SUMMARY {which}: runs {len(r)} remaps total {sum(rem)} (per run {min(rem)}-{max(rem)}), "
          f"runs with a remap {sum(1 for x in rem if x)}, rank 0 share {min(sh):.3f}-{max(sh):.3f}, "
          f"first split even within one row {sum(1 for x in r if x[2])}, "
          f"median steady s/iter {st.median(t):.6f}")
PY
rm -f "$out"
