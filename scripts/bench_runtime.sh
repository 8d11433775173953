#!/usr/bin/env bash
# Runtime benchmarks, measured side by side in one run:
#  0. heat2d on 2 ranks, one per core, rank 1 doing 3x the work (--slowdown 1:3@0): balanced /
#     uniform time per iteration (goal <= 0.55; the ideal for 1:3 is 0.5), nuce timing by itself;
#  1. heat2d on 3 ranks with real heterogeneity (ranks 0 and 1 share CPU 0, rank 2 has CPU 1):
#     time per iteration, balanced vs uniform BLOCK, against the ideal predicted from measured speeds;
#  2. after a speed change mid-run: phases until time/iteration is within 10 % of the new steady state;
#  3. scatter and remap throughput as a ratio to raw MPI_Scatterv / MPI_Alltoallv of the same bytes.
# Prints a markdown report on stdout (raw JSON under target/bench/).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
. scripts/env.sh
cargo build --release --examples >/dev/null
out=target/bench; mkdir -p $out
H=target/release/examples/heat2d
ROWS=${ROWS:-3072} COLS=${COLS:-3072} PH=${PH:-6} IT=${IT:-10}
bind() { NUCE_BIND="0:0,1:0,2:1" mpirun --bind-to none -np 3 scripts/bind_ranks.sh "$@"; }

# 0. two ranks, one per core, 1:3 work.
two() { NUCE_BIND="0:0,1:1" mpirun --bind-to none -np 2 scripts/bind_ranks.sh "$@"; }
R2=${R2:-1536}
for k in 1 2; do
  two $H --rows $R2 --cols $R2 --phases 8 --iters 30 --json --no-check --slowdown 1:3@0 > $out/two_bal$k.json
  two $H --rows $R2 --cols $R2 --phases 8 --iters 30 --json --no-check --slowdown 1:3@0 --uniform > $out/two_uni$k.json
done
# 1. balanced vs uniform, same binding, back to back (twice, interleaved).
for k in 1 2; do
  bind $H --rows $ROWS --cols $COLS --phases $PH --iters $IT --json --no-check > $out/bal$k.json
  bind $H --rows $ROWS --cols $COLS --phases $PH --iters $IT --json --no-check --uniform > $out/uni$k.json
done
# 2. a speed change mid-run (rank 2 does 3x the work from phase 4), and the steady state of the
#    post-change heterogeneity (same factor from phase 0) as the reference.
bind $H --rows $ROWS --cols $COLS --phases 9 --iters $IT --json --no-check --slowdown 2:3@4 > $out/change.json
bind $H --rows $ROWS --cols $COLS --phases 9 --iters $IT --json --no-check --slowdown 2:3@0 > $out/steady.json
# 3. data movement vs raw MPI.
for np in 2 4; do
  mpirun -np $np target/release/examples/bench_remap --rows 2048 --cols 2048 --reps 9 > $out/remap$np.json
done
python3 - "$out" <<'PY'
import json, sys, statistics as st
out = sys.argv[1]
load = lambda n: json.load(open(f"{out}/{n}.json"))
def steady(d, skip=2):
    ph = d["phases"][skip:]
    return st.median(p["time_per_iter"] for p in ph)
print("### 0. Balanced vs uniform BLOCK on 2 ranks, one per core, rank 1 does 3x the work\n")
print("| run | balanced s/iter | uniform s/iter | balanced / uniform (goal <= 0.55) | ideal s/iter (measured speeds) | ideal / uniform | balanced / ideal |")
print("|---|---|---|---|---|---|---|")
for k in (1, 2):
    b, u = load(f"two_bal{k}"), load(f"two_uni{k}")
    tb, tu = steady(b), steady(u)
    ideal = b["ideal_s_per_iter"]
    print(f"| {k} | {tb:.5f} | {tu:.5f} | {tb/tu:.3f} | {ideal:.5f} | {ideal/tu:.3f} | {tb/ideal:.3f} |")
print()
print("### 1. Balanced vs uniform BLOCK on 3 ranks (ranks 0, 1 share CPU 0; rank 2 alone)\n")
print("| run | balanced s/iter | uniform s/iter | achieved speedup | ideal speedup (measured speeds) | achieved / ideal |")
print("|---|---|---|---|---|---|")
for k in (1, 2):
    b, u = load(f"bal{k}"), load(f"uni{k}")
    tb, tu = steady(b), steady(u)
    s = u["phases"][-1]["speeds"]   # phase speeds measured under the uniform split
    ideal = (sum(s) / len(s)) / min(s)
    print(f"| {k} | {tb:.5f} | {tu:.5f} | {tu/tb:.3f} | {ideal:.3f} | {(tu/tb)/ideal:.3f} |")
print("\n### 2. Phases to recover after a speed change (rank 2 does 3x work from phase 4)\n")
c, s = load("change"), load("steady")
ref = steady(s, skip=3)
rows = []
for p in c["phases"]:
    rows.append(f"| {p['phase']} | {p['time_per_iter']:.5f} | {'yes' if p['remapped'] else 'no'} | {p['time_per_iter']/ref:.2f} |")
print(f"steady-state reference (same heterogeneity from phase 0, median of phases 3–8): {ref:.5f} s/iter\n")
print("| phase | s/iter | remapped after it | / reference |\n|---|---|---|---|")
print("\n".join(rows))
within = [p["phase"] for p in c["phases"] if p["phase"] >= 4 and p["time_per_iter"] <= 1.10 * ref]
first = min(within) if within else None
print(f"\nfirst phase at or after the change within 10 % of the reference: {first} "
      f"({'n/a' if first is None else first - 4} phases after the change phase)")
print("\n### 3. Data movement vs raw MPI of the same bytes (median of 9)\n")
print("| ranks | remap MB | nuce remap s | raw alltoallv s | remap ratio | nuce scatter s | raw scatterv s | scatter ratio |")
print("|---|---|---|---|---|---|---|---|")
for np in (2, 4):
    r = load(f"remap{np}")
    print(f"| {np} | {r['remap_bytes']/1e6:.1f} | {r['remap_s']:.4f} | {r['alltoallv_raw_s']:.4f} | {r['remap_ratio']:.2f} | {r['scatter_s']:.4f} | {r['scatterv_raw_s']:.4f} | {r['scatter_ratio']:.2f} |")
PY
