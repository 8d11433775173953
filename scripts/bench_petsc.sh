#!/usr/bin/env bash
# PETSc tutorials ported to nuce (examples/petsc/): time per solve on 2 ranks,
# one per core (NUCE_BIND=0:0,1:1), with rank 1 made slower, PETSc's default
# against nuce. SLOW=work (default): rank 1 repeats WORK products of its local
# matrix block per iteration (ex45 -slow_rank 1 -slow_work WORK; WORK=4 makes
# it about 3x slower with CG + Jacobi here), and nuce is given the speeds
# 1,1/3 (-nuce_speeds); SLOW=load: a real competing process (scripts/load.sh
# --procs 2: two busy loops share CPU 1, rank 1 gets about a third of it)
# and nuce measures (nuce_measure).
#
#   [SLOW=work WORK=4 GRID=97 SOLVES=3 REPS=3 PREFIX=/tmp/nuce-bench-petsc INSTALL=1] scripts/bench_petsc.sh [PETSc options...]
#
# INSTALL=0: use nuce as already installed under PREFIX (no cargo build).
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
[ "${INSTALL:-1}" = 0 ] || scripts/install.sh "$prefix" >/dev/null
export PKG_CONFIG_PATH="$prefix/lib/pkgconfig"
bin="$prefix/ex45"
mpicc -O2 examples/petsc/ex45.c $(pkg-config --cflags --libs nuce petsc) -Wl,-rpath,"$prefix/lib" -o "$bin"
echo "bench_petsc: load before: $(uptime)"
args=(-da_grid_x "$GRID" -da_grid_y "$GRID" -da_grid_z "$GRID" -solves "$SOLVES" "$@")
declare -A times
for r in $(seq 1 "$REPS"); do
  for mode in default nuce; do
    flag=()
    load=(scripts/load.sh --cpu 1 --procs 2 --)
    if [ "${SLOW:-work}" = work ]; then
      load=()
      flag=(-slow_rank 1 -slow_work "${WORK:-4}")
      [ "$mode" = nuce ] && flag+=(-nuce -nuce_speeds 1,0.3333)
    else
      [ "$mode" = nuce ] && flag=(-nuce)
    fi
    echo "+ NUCE_BIND=0:0,1:1 ${load[*]} mpirun --bind-to none -np 2 scripts/bind_ranks.sh $bin ${args[*]} ${flag[*]}"
    out="$(NUCE_LOAD_QUIET=1 NUCE_BIND=0:0,1:1 ${load[@]+"${load[@]}"} \
      mpirun --bind-to none -np 2 scripts/bind_ranks.sh "$bin" "${args[@]}" ${flag[@]+"${flag[@]}"})"
    t="$(sed -n 's/^Time per solve \([0-9.]*\) s.*/\1/p' <<<"$out")"
    echo "bench_petsc: round $r $mode: $t s per solve ($(grep -m1 "^Residual" <<<"$out")$(grep -m1 "^nuce ranges" <<<"$out" | sed "s/^/; /"))"
    times[$mode]+="$t "
  done
done
median() { tr ' ' '\n' <<<"$1" | sed '/^$/d' | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
d="$(median "${times[default]}")" n="$(median "${times[nuce]}")"
echo "bench_petsc: ex45 grid ${GRID}^3, median s per solve: PETSc default $d, nuce $n, nuce/default $(awk -v a="$n" -v b="$d" 'BEGIN {printf "%.2f", a / b}')"
echo "bench_petsc: load after: $(uptime)"
