#!/usr/bin/env bash
# p4est's step3 (examples/p4est/p4est_step3_nuce.c) on 2 ranks, one per core
# (NUCE_BIND=0:0,1:1), rank 1 slower: by default (SLOW=1:3) it runs its
# solver's flux and derivative loops 3 times (NUCE_STEP3_SLOW; the same
# result); with LOAD=K instead, K real busy loops (scripts/load.sh) share its
# core (K=2: about a third of it, on a machine otherwise idle). Each of REPS
# rounds runs, one after the other, the original repartitioning
# (p4est_partition, "default") and nuce's (nuce_plan_1d_weighted +
# p4est_partition_given, "nuce"); prints each run's time per step (rank 0's
# wall time of the time loop / steps) and the medians' ratio nuce/default.
#
#   [PREFIX=/tmp/nuce_p4est END=0.01 MAX_ERR=1e-3 SLOW=1:3 | LOAD=2, REPS=3] scripts/bench_p4est.sh
#
# PREFIX: where nuce is installed (scripts/install.sh runs there when it has
# no nuce.pc). Needs libp4est-dev (scripts/setup.sh libp4est-dev).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/env.sh
prefix="${PREFIX:-/tmp/nuce_p4est}"
[ -f "$prefix/lib/pkgconfig/nuce.pc" ] || scripts/install.sh "$prefix"
export PKG_CONFIG_PATH="$prefix/lib/pkgconfig"
bin="$prefix/p4est_step3_nuce"
mpicc -O2 -Wall -Werror examples/p4est/p4est_step3_nuce.c $(pkg-config --cflags --libs nuce) \
  -lp4est -lsc -lm "-Wl,-rpath,$prefix/lib" -o "$bin"
end="${END:-0.01}" err="${MAX_ERR:-1e-3}" reps="${REPS:-3}"
if [ -n "${LOAD:-}" ]; then
  slow=() load=(scripts/load.sh --cpu 1 --procs "$LOAD" --)
else
  slow=(NUCE_STEP3_SLOW="${SLOW:-1:3}") load=()
fi
declare -A times
for round in $(seq "$reps"); do
  for mode in default nuce; do
    cmd=(env NUCE_BIND=0:0,1:1 NUCE_LOAD_QUIET=1 ${slow[@]+"${slow[@]}"} ${load[@]+"${load[@]}"}
      mpirun --bind-to none -np 2 scripts/bind_ranks.sh "$bin" "$mode" "$end" "$err")
    out="$("${cmd[@]}" 2>&1)" || { echo "$out" >&2; exit 1; }
    line="$(grep "step3: $mode:" <<<"$out")"
    t="$(sed 's/.*steps, \([0-9.]*\) s per step.*/\1/' <<<"$line")"
    times[$mode]+="$t "
    echo "round $round $mode: $t s per step (${line#*step3: }; solver s per 1e6 quadrant-steps: $(sed -n 's/^step3: rank \([0-9]\): solver \([0-9.]*\).*/rank \1 \2/p' <<<"$out" | sort | tr '\n' ' '))"
  done
done
median() { tr ' ' '\n' | grep . | sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
d="$(median <<<"${times[default]}")" n="$(median <<<"${times[nuce]}")"
echo "medians: default $d s per step, nuce $n s per step, nuce/default $(awk -v a="$n" -v b="$d" 'BEGIN { printf "%.2f", a / b }')"
