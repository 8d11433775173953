#!/usr/bin/env bash
# Real load (issue "Real load: balance when another job shares a rank's
# core"): heat2d on 2 ranks, one per core (NUCE_BIND=0:0,1:1), while a real
# competing process — a busy loop from scripts/load.sh — shares rank 1's core.
# nuce is never told: it measures, and remaps.
#
#   [ROWS=1536 COLS=1536 PHASES=10 ITERS=200 REPS=3 B_PHASES=20 B_ITERS=200 \
#    B_AFTER=2.5 B_FOR=3.5 SCENARIOS=ABC OUT=/tmp/nuce_real_load BUILD=1] \
#     scripts/bench_real_load.sh [heat2d args...]
#
# A  a busy loop on CPU 1 for the whole run. Variants interleaved in each of
#    REPS rounds: uniform (--static-speeds 1,1), nuce (measures, remaps),
#    static 3:2, 2:1, 3:1 (--static-speeds: planned once, never remapped).
#    Medians, nuce/uniform and nuce/best static.
# B  the loop arrives B_AFTER s into the run (after mpirun starts) and leaves
#    B_FOR s later (a job passing by; B_PHASES x B_ITERS, ~10 s at 1536^2):
#    uniform vs nuce, nuce/uniform, and every phase's time of the last round.
# C  quiet machine (no loop), rank 1 doing 3x the work (--slowdown 1:3@0):
#    nuce against the ideal for its measured speeds (heat2d's
#    ideal_s_per_iter = cells / sum of the last speeds) and static 3:1.
#
# Two times per iteration, both from heat2d --json (max over ranks):
#   run    = total_seconds / (phases x iters): everything (MPI setup excluded;
#            the kernel's measurement, every phase, every remap, the gather);
#   steady = steady_s_per_iter: the mean of the phases after the first, the
#            balance points and remaps excluded.
# Ratios are of medians over the rounds. Prints every command it runs; the raw
# JSON, each run's stderr and the summary are written under OUT. BUILD=0: use
# the heat2d already in target/release/examples (no cargo build); BIN=PATH:
# another heat2d binary (e.g. an older build, for a before/after). The
# machine's load average (uptime) is printed before and after: other jobs
# running at the same time spoil the numbers.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=scripts/env.sh
. scripts/env.sh

ROWS=${ROWS:-1536} COLS=${COLS:-1536} PHASES=${PHASES:-10} ITERS=${ITERS:-200}
REPS=${REPS:-3} B_PHASES=${B_PHASES:-20} B_ITERS=${B_ITERS:-200}
B_AFTER=${B_AFTER:-2.5} B_FOR=${B_FOR:-3.5} SCENARIOS=${SCENARIOS:-ABC}
OUT=${OUT:-/tmp/nuce_real_load}
bin=${BIN:-target/release/examples/heat2d}
if [[ ${BUILD:-1} == 1 && -z ${BIN:-} ]]; then
  cargo build --release --example heat2d -q
fi
[[ -x $bin ]] || { echo "bench_real_load.sh: no $bin (build it, or BUILD=1)" >&2; exit 1; }
if (($(nproc --all) < 2)); then
  echo "bench_real_load.sh: needs 2 CPUs (ranks one per core)" >&2
  exit 1
fi
mkdir -p "$OUT"
rm -f "$OUT"/*.json "$OUT"/*.err "$OUT"/commands.txt "$OUT"/summary.txt
extra=("$@")

echo "Load average before (uptime): $(uptime)" | tee "$OUT/summary.txt"
echo "heat2d ${ROWS}x${COLS}, 2 ranks bound 0:0,1:1; A, C: ${PHASES}x${ITERS} iterations," \
  "B: ${B_PHASES}x${B_ITERS}, loop at ${B_AFTER} s for ${B_FOR} s; ${REPS} rounds; raw results in $OUT" |
  tee -a "$OUT/summary.txt"

# run NAME [load.sh options --] heat2d args: runs one heat2d job, its JSON into OUT/NAME.json.
run() {
  local name=$1
  shift
  local load=()
  while [[ $# -gt 0 && $1 != heat2d ]]; do load+=("$1"); shift; done
  shift # the `heat2d` marker
  local cmd=(mpirun --bind-to none -np 2 scripts/bind_ranks.sh "$bin" --json --no-check "$@" "${extra[@]}")
  if [[ ${#load[@]} -gt 0 ]]; then
    cmd=(scripts/load.sh "${load[@]}" -- "${cmd[@]}")
  fi
  local line="NUCE_BIND=0:0,1:1" a
  for a in "${cmd[@]}"; do
    if [[ $a =~ ^[A-Za-z0-9_./:=,@+-]+$ ]]; then line+=" $a"; else line+=" $(printf '%q' "$a")"; fi
  done
  echo "+ $line"
  echo "$name: $line" >>"$OUT/commands.txt"
  # A session directory of its own (as bench_warmup.sh): other mpiruns may run.
  if ! NUCE_BIND=0:0,1:1 OMPI_MCA_orte_tmpdir_base=/tmp/ompi-rl$RANDOM "${cmd[@]}" \
    >"$OUT/$name.out" 2>"$OUT/$name.err"; then
    echo "bench_real_load.sh: $name failed; its stderr:" >&2
    tail -n 20 "$OUT/$name.err" >&2
    exit 1
  fi
  grep '^{' "$OUT/$name.out" >"$OUT/$name.json" || {
    echo "bench_real_load.sh: $name printed no JSON" >&2
    exit 1
  }
  rm -f "$OUT/$name.out"
}

grid=(--rows "$ROWS" --cols "$COLS" --phases "$PHASES" --iters "$ITERS")
gridb=(--rows "$ROWS" --cols "$COLS" --phases "$B_PHASES" --iters "$B_ITERS")
for r in $(seq 1 "$REPS"); do
  if [[ $SCENARIOS == *A* ]]; then
    run "A_uniform_$r" --cpu 1 heat2d "${grid[@]}" --static-speeds 1,1
    run "A_nuce_$r" --cpu 1 heat2d "${grid[@]}"
    run "A_static3-2_$r" --cpu 1 heat2d "${grid[@]}" --static-speeds 3,2
    run "A_static2-1_$r" --cpu 1 heat2d "${grid[@]}" --static-speeds 2,1
    run "A_static3-1_$r" --cpu 1 heat2d "${grid[@]}" --static-speeds 3,1
  fi
  if [[ $SCENARIOS == *B* ]]; then
    run "B_uniform_$r" --cpu 1 --after "$B_AFTER" --for "$B_FOR" heat2d "${gridb[@]}" --static-speeds 1,1
    run "B_nuce_$r" --cpu 1 --after "$B_AFTER" --for "$B_FOR" heat2d "${gridb[@]}"
  fi
  if [[ $SCENARIOS == *C* ]]; then
    run "C_nuce_$r" heat2d "${grid[@]}" --slowdown 1:3@0
    run "C_static3-1_$r" heat2d "${grid[@]}" --slowdown 1:3@0 --static-speeds 3,1
  fi
done
echo "Load average after (uptime): $(uptime)" | tee -a "$OUT/summary.txt"

python3 - "$OUT" <<'PY' | tee -a "$OUT/summary.txt"
import glob, json, os, re, statistics as st, sys
out = sys.argv[1]
runs = {}  # (scenario, variant) -> [(rep, doc)]
for f in sorted(glob.glob(os.path.join(out, "*.json"))):
    m = re.match(r"([ABC])_(.+)_(\d+)\.json$", os.path.basename(f))
    if m:
        runs.setdefault((m[1], m[2]), []).append((int(m[3]), json.load(open(f))))

def run_it(v):  # whole run per iteration
    return v["total_seconds"] / (v["iters_per_phase"] * len(v["phases"]))

def med(sc, var, f):
    return st.median(f(v) for _, v in runs[(sc, var)])

def table(sc, variants):
    print(f"{'variant':>10} {'runs':>4} {'run ms/it':>10} {'steady ms/it':>12} {'remaps':>6} "
          f"{'speed0/speed1':>13}  rank-1 cells (last)")
    for var in variants:
        docs = [v for _, v in runs[(sc, var)]]
        remaps = st.median(sum(p["remapped"] for p in v["phases"]) for v in docs)
        last = docs[-1]["phases"][-1]
        ratio = last["speeds"][0] / last["speeds"][1]
        print(f"{var:>10} {len(docs):4d} {med(sc, var, run_it) * 1e3:10.4f} "
              f"{med(sc, var, lambda v: v['steady_s_per_iter']) * 1e3:12.4f} {remaps:6g} "
              f"{ratio:13.2f}  {last['areas'][1]}")

def ratio(sc, a, b, label):
    r = med(sc, a, run_it) / med(sc, b, run_it)
    s = med(sc, a, lambda v: v["steady_s_per_iter"]) / med(sc, b, lambda v: v["steady_s_per_iter"])
    print(f"  {label}: run {r:.3f}, steady {s:.3f}")

print("Medians over the rounds (speed0/speed1: rank 0's / rank 1's measured speed, last phase of the last round)")
if ("A", "nuce") in runs:
    print("\nA: busy loop on CPU 1 (rank 1's core) for the whole run")
    statics = ["static3-2", "static2-1", "static3-1"]
    table("A", ["uniform", "nuce"] + statics)
    best = min(statics, key=lambda s: med("A", s, run_it))
    ratio("A", "nuce", "uniform", "nuce / uniform")
    ratio("A", "nuce", best, f"nuce / best static ({best})")
if ("B", "nuce") in runs:
    print("\nB: busy loop on CPU 1 arriving and leaving during the run")
    table("B", ["uniform", "nuce"])
    ratio("B", "nuce", "uniform", "nuce / uniform")
    for var in ("uniform", "nuce"):
        rep, v = max(runs[("B", var)], key=lambda x: x[0])
        ph = " ".join(f"{p['time_per_iter'] * 1e3:.2f}{'*' if p['remapped'] else ''}" for p in v["phases"])
        print(f"  {var} round {rep}, ms/iter per phase (* = remapped after it): {ph}")
if ("C", "nuce") in runs:
    print("\nC: quiet machine, rank 1 does 3x the work (--slowdown 1:3@0)")
    table("C", ["nuce", "static3-1"])
    n = med("C", "nuce", lambda v: v["steady_s_per_iter"])
    ideal = med("C", "nuce", lambda v: v["ideal_s_per_iter"])
    print(f"  nuce steady / ideal for its measured speeds (ideal_s_per_iter {ideal * 1e3:.4f} ms): {n / ideal:.3f}")
    ratio("C", "nuce", "static3-1", "nuce / static 3:1")
PY
echo "Commands: $OUT/commands.txt; summary: $OUT/summary.txt"
