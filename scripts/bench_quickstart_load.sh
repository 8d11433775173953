#!/usr/bin/env bash
# The graph (or array) quick start with a slow rank (rank 1 does 3x the work
# from phase 2 on), run RUNS times for each pair of binary folder and
# iteration count, interleaved (side by side, same load): how often does it
# end balanced by the test's criteria (tests/quickstart.rs: a remap after
# the slowdown to a plan within 10 % for the measured speeds, and rank 1
# ending with less than 0.8x rank 0's vertices), and the wall time of
# phases 3-6. Run it under scripts/load.sh for a loaded machine.
#
#   scripts/bench_quickstart_load.sh EXAMPLE N RUNS "ITERS..." [DIR...]
#
# EXAMPLE: quickstart_graph, quickstart_distgraph or quickstart; N its size;
# ITERS: iterations per phase to compare (e.g. "20 100"); DIR: folders
# holding a built EXAMPLE (default: the build of the current MPI, e.g.
# target/release/examples; a copy from another commit compares versions).
# The MPI is the one scripts/env.sh selects (NUCE_MPI=mpich for MPICH).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/env.sh
example=$1 n=$2 runs=$3 iters=($4)
shift 4
dirs=("$@")
if [[ ${#dirs[@]} -eq 0 ]]; then
  dirs=("${CARGO_TARGET_DIR:-target}/release/examples")
fi
launch=(mpirun -np 2)
[[ ${NUCE_MPI:-openmpi} == mpich ]] && launch=(mpiexec.mpich -np 2)
declare -A ok secs
for d in "${dirs[@]}"; do for it in "${iters[@]}"; do ok[$d/$it]=0; secs[$d/$it]=0; done; done
for _ in $(seq "$runs"); do
  for d in "${dirs[@]}"; do
    for it in "${iters[@]}"; do
      out=$("${launch[@]}" "$d/$example" "$n" 7 "$it" 1:3@2 2>&1 || true)
      phases=$(grep '^PHASE' <<<"$out" || true)
      remap=$(awk 'NR>=3 && $8=="true" && $12<=0.10 {f=1} END{print f+0}' <<<"$phases")
      last=$(tail -1 <<<"$phases" | sed 's/.*areas \[\([0-9]*\), \([0-9]*\)\].*/\1 \2/' \
        | awk 'NF==2 {print ($2 < 0.8*$1) ? 1 : 0} NF!=2 {print 0}')
      [[ $remap$last == 11 ]] && ok[$d/$it]=$((ok[$d/$it] + 1))
      s=$(awk -v it="$it" 'NR>=4 {s+=$4*it} END{printf "%.4f", s}' <<<"$phases")
      secs[$d/$it]=$(awk -v a="${secs[$d/$it]}" -v b="$s" 'BEGIN{printf "%.4f", a+b}')
    done
  done
done
for d in "${dirs[@]}"; do
  for it in "${iters[@]}"; do
    awk -v d="$d" -v it="$it" -v ok="${ok[$d/$it]}" -v s="${secs[$d/$it]}" -v r="$runs" \
      -v ex="$example" -v n="$n" \
      'BEGIN{printf "%s n=%s %s iterations=%s: balanced %d of %d, phases 3-6 %.3f s a run\n", ex, n, d, it, ok, r, s/r}'
  done
done
