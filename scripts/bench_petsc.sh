#!/usr/bin/env bash
# PETSc tutorials ported to nuce (examples/petsc/): time per solve on 2 ranks,
# one per core (NUCE_BIND=0:0,1:1), with rank 1 made 3x slower by a real
# competing process (scripts/load.sh --procs 2: two busy loops share CPU 1,
# so rank 1 gets about a third of it), PETSc's default against nuce.
#
#   [GRID=97 SOLVES=3 REPS=3 PREFIX=/tmp/nuce-bench-petsc] scripts/bench_petsc.sh [PETSc options...]
#
# ex45 (DMDA 3D Laplacian, KSP): PETSc's own ownership ranges (-nuce off)
# against nuce_ownership_ranges for the speeds nuce_measure finds (-nuce).
# Variants alternate in each of REPS rounds; the ratio is of the medians.
# The machine's load average is printed before and after: other jobs running
# at the same time spoil the numbers.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/env.sh
GRID=${GRID:-97} SOLVES=${SOLVES:-3} REPS=${REPS:-3}
prefix="${PREFIX:-/tmp/nuce-bench-petsc}"
scripts/install.sh "$prefix" >/dev/null
export PKG_CONFIG_PATH="$prefix/lib/pkgconfig"
bin="$prefix/ex45"
mpicc -O2 examples/petsc/ex45.c $(pkg-config --cflags --libs nuce petsc) -Wl,-rpath,"$prefix/lib" -o "$bin"
echo "bench_petsc: load before: $(uptime)"
args=(-da_grid_x "$GRID" -da_grid_y "$GRID" -da_grid_z "$GRID" -solves "$SOLVES" "$@")
declare -A times
for r in $(seq 1 "$REPS"); do
  for mode in default nuce; do
    flag=()
    [ "$mode" = nuce ] && flag=(-nuce)
    echo "+ NUCE_BIND=0:0,1:1 scripts/load.sh --cpu 1 --procs 2 -- mpirun --bind-to none -np 2 scripts/bind_ranks.sh $bin ${args[*]} ${flag[*]}"
    out="$(NUCE_LOAD_QUIET=1 NUCE_BIND=0:0,1:1 scripts/load.sh --cpu 1 --procs 2 -- \
      mpirun --bind-to none -np 2 scripts/bind_ranks.sh "$bin" "${args[@]}" ${flag[@]+"${flag[@]}"})"
    t="$(sed -n 's/^Time per solve \([0-9.]*\) s.*/\1/p' <<<"$out")"
    echo "bench_petsc: round $r $mode: $t s per solve ($(grep -m1 '^Residual' <<<"$out"))"
    times[$mode]+="$t "
  done
done
median() { tr ' ' '\n' <<<"$1" | sed '/^$/d' | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
d="$(median "${times[default]}")" n="$(median "${times[nuce]}")"
echo "bench_petsc: ex45 grid ${GRID}^3, median s per solve: PETSc default $d, nuce $n, nuce/default $(awk -v a="$n" -v b="$d" 'BEGIN {printf "%.2f", a / b}')"
echo "bench_petsc: load after: $(uptime)"
