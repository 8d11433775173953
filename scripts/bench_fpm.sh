#!/usr/bin/env bash
# Issue 19: a rank whose speed depends on the size of its block. heat2d on 2
# ranks, rank 1 3x slower once its block exceeds KNEE cells (inside the range
# the plans explore: the even split gives it ROWS*COLS/2), run side by side
# with the constant-speed model and the functional model (NUCE_SPEED_MODEL),
# against the ideal computed from the emulated speed functions (rank 1 holds
# KNEE cells, rank 0 the rest, both at the unslowed speed measured by the
# runs). Reports the steady time per iteration (phases 1..), the plan changes
# over the phases, and the plan changes after phase 3. Then the same pair with
# flat speeds (rank 1 2x slower at every size): the functional model should
# change nothing (same models, plans and times up to the noise).
#
#   scripts/bench_fpm.sh [ROWS] [COLS] [KNEE] [PHASES] [ITERS] [REPEATS]
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/env.sh
ROWS=${1:-1024}; COLS=${2:-1024}; KNEE=${3:-400000}; PHASES=${4:-10}; ITERS=${5:-40}; REPEATS=${6:-3}
cargo build --release --example heat2d >/dev/null
out=$(mktemp -d)
for rep in $(seq 1 "$REPEATS"); do
  for model in constant auto; do
    OMPI_MCA_orte_tmpdir_base=/tmp/ompi-$RANDOM mpirun --oversubscribe -np 2 \
      target/release/examples/heat2d --rows "$ROWS" --cols "$COLS" --phases "$PHASES" \
      --iters "$ITERS" --slowdown "1:3@0:above=$KNEE" --speed-model "$model" --no-check --json \
      | grep '^{' > "$out/$model.$rep.json"
    OMPI_MCA_orte_tmpdir_base=/tmp/ompi-$RANDOM mpirun --oversubscribe -np 2 \
      target/release/examples/heat2d --rows "$ROWS" --cols "$COLS" --phases "$PHASES" \
      --iters "$ITERS" --slowdown "1:2@0" --speed-model "$model" --no-check --json \
      | grep '^{' > "$out/flat.$model.$rep.json"
  done
done
python3 - "$out" "$ROWS" "$COLS" "$KNEE" "$REPEATS" <<'PY'
import json, sys, statistics
out, rows, cols, knee, reps = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
cells = rows * cols
print(f"heat2d {rows}x{cols}, 2 ranks, rank 1 3x slower above {knee} cells")
print(f"{'model':>9} {'rep':>3} {'steady s/it':>12} {'ideal s/it':>11} {'ratio':>6} {'changes':>7} {'after p3':>8}  rank-1 cells by phase")
ratios = {"constant": [], "auto": []}
for rep in range(1, reps + 1):
    for model in ["constant", "auto"]:
        d = json.load(open(f"{out}/{model}.{rep}.json"))
        ph = d["phases"]
        # The unslowed speed (cells/s) of a rank: rank 0 never slows.
        s0 = statistics.median(p["speeds"][0] for p in ph[1:])
        ideal = (cells - knee) / s0
        steady = d["steady_s_per_iter"]
        changes = sum(p["remapped"] for p in ph)
        late = sum(p["remapped"] for p in ph[3:])
        ratios[model].append(steady / ideal)
        print(f"{model:>9} {rep:>3} {steady:12.6f} {ideal:11.6f} {steady/ideal:6.2f} {changes:7d} {late:8d}  {[p['areas'][1] for p in ph]}")
for m, r in ratios.items():
    print(f"median steady/ideal {m}: {statistics.median(r):.2f}")
print("flat speeds (rank 1 2x slower at every size):")
flat = {"constant": [], "auto": []}
for rep in range(1, reps + 1):
    for model in ["constant", "auto"]:
        d = json.load(open(f"{out}/flat.{model}.{rep}.json"))
        ph = d["phases"]
        flat[model].append(d["steady_s_per_iter"])
        models = sorted(set(p["model"] for p in ph))
        print(f"{model:>9} {rep:>3} steady {d['steady_s_per_iter']:.6f} models {models} rank-1 cells {[p['areas'][1] for p in ph]}")
c, a = statistics.median(flat["constant"]), statistics.median(flat["auto"])
print(f"median steady flat: constant {c:.6f} auto {a:.6f} ratio {a/c:.3f}")
PY
rm -rf "$out"
