#!/usr/bin/env bash
# miniGhost 1.0 on nuce's grid API: applies minighost-nuce.patch to an upstream
# miniGhost checkout, builds ref/ with mpif90/mpicc against an installed nuce
# (pkg-config nuce-fortran, rpath), and runs it twice on NP ranks with rank
# SLOW_RANK computing SLOW_FACTOR times slower (busy-wait after each stencil
# sweep and each grid sum's local part): miniGhost's equal blocks, then nuce's
# boxes (MINIGHOST_NUCE=1: boxes
# from nuce_grid_create, one nuce_grid_exchange for all variables, a remap
# between spikes). Prints each run's time per time step, checksums and verdict.
#
#   examples/ports/minighost/run.sh MINIGHOST_CHECKOUT [NUCE_PREFIX]
#
# MINIGHOST_CHECKOUT: upstream Mantevo/miniGhost at commit
# c2102b521568a74862fa5abb074b1fc8041fc222 (patched in place if not yet).
# NUCE_PREFIX: where scripts/install.sh put nuce (else pkg-config's path).
# Environment: NP (2), NX NY NZ (64 64 64: local block of miniGhost's uniform
# run; processor grid NP x 1 x 1), NVARS (5), STENCIL (23: 3D 7-point; 24:
# 27-point), NSPIKES (4: phases, nuce may remap after each), NTSTEPS (20: time
# steps per spike), SLOW_RANK (1), SLOW_FACTOR (3), MPIRUN (mpirun), PAIRS (1:
# uniform/nuce pairs run back to back; the median ratio is printed); STATIC
# (e.g. "3,1 2,1 3,2": static splits, each the boxes nuce plans once for these
# speeds with no balance point after (MINIGHOST_NUCE_SPEEDS), run in every pair
# after the nuce run; nuce / the best of them is printed);
# MINIGHOST_NUCE_CHECK=1 (passed on to miniGhost) checks every ghost cell after
# each new layout of the nuce run.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
[ $# -ge 1 ] || { echo "usage: $0 MINIGHOST_CHECKOUT [NUCE_PREFIX]" >&2; exit 2; }
src="$(cd "$1" && pwd)"
if [ $# -ge 2 ]; then export PKG_CONFIG_PATH="$(cd "$2" && pwd)/lib/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"; fi
NP="${NP:-2}" NX="${NX:-64}" NY="${NY:-64}" NZ="${NZ:-64}" NVARS="${NVARS:-5}" STENCIL="${STENCIL:-23}"
NSPIKES="${NSPIKES:-4}" NTSTEPS="${NTSTEPS:-20}" SLOW_RANK="${SLOW_RANK:-1}" SLOW_FACTOR="${SLOW_FACTOR:-3}"
MPIRUN="${MPIRUN:-mpirun}" PAIRS="${PAIRS:-1}" STATIC="${STATIC:-}"
pkg-config --exists nuce-fortran || { echo "run.sh: nuce-fortran.pc not found (give NUCE_PREFIX)" >&2; exit 1; }

cd "$src"
if [ ! -f ref/MG_NUCE.F ]; then
  patch -p1 --forward <"$here/minighost-nuce.patch" >/dev/null
  echo "run.sh: applied minighost-nuce.patch to $src"
fi
cd ref
# miniGhost's ref/make_targets order, with the port's module after MG_OPTIONS.
mods="MG_CONSTANTS MG_OPTIONS MG_NUCE MG_UTILS MG_ENV MG_PROFILING MG_GET_FACE MG_BUFINIT MG_PACK
  MG_IRECV MG_UNPACK_SVAF MG_SEND_BSPMA MG_SEND_SVAF MG_UNPACK_BSPMA MG_BSPMA MG_SVAF
  MG_FLUX_ACCUMULATE MG_BC MG_STENCIL_COMPS MG_STENCIL MG_BSPMA_DIAGS MG_SVAF_DIAGS MG_SUM_GRID
  MG_CHECKPOINT DRIVER_BSPMA DRIVER_SVAF DRIVER"
libdir="$(pkg-config --variable=libdir nuce)"
exe=build-nuce/miniGhost.x
if [ ! -x "$exe" ] || [ -n "$(find . -maxdepth 1 -newer "$exe" \( -name '*.F' -o -name '*.c' \) | head -n 1)" ]; then
  echo "run.sh: building ref/$exe (mpif90, mpicc, pkg-config nuce-fortran)"
  mkdir -p build-nuce
  # miniGhost 1.0 predates gfortran 10's argument checks and 132-column lines.
  fflags="-O3 -cpp -ffree-form -ffree-line-length-none -fallow-argument-mismatch -w
    -D_MG_MPI -D_MG_REAL8 -D_MG_INT4 -Jbuild-nuce $(pkg-config --cflags nuce-fortran)"
  objs=()
  for m in $mods; do
    # shellcheck disable=SC2086
    mpif90 $fflags -c "$m.F" -o "build-nuce/$m.o"
    objs+=("build-nuce/$m.o")
  done
  mpicc -O3 -w -D_MG_MPI -D_MG_REAL8 -D_MG_INT4 -Df2c_ -c main.c -o build-nuce/main.o
  # shellcheck disable=SC2046
  mpif90 -o "$exe" build-nuce/main.o "${objs[@]}" $(pkg-config --libs nuce-fortran) -Wl,-rpath,"$libdir"
fi

run() { # run NAME [ENV=VALUE…]: one miniGhost run in its own directory
  local name="$1" dir="build-nuce/run-$1"
  shift
  rm -rf "$dir" && mkdir -p "$dir"
  (cd "$dir" && env OMPI_MCA_orte_tmpdir_base="/tmp/ompi-mg-$$-$name" \
    MINIGHOST_SLOW_RANK="$SLOW_RANK" MINIGHOST_SLOW_FACTOR="$SLOW_FACTOR" "$@" \
    "$MPIRUN" -np "$NP" ../miniGhost.x --scaling 2 --comm_method 10 --stencil "$STENCIL" \
    --nx "$NX" --ny "$NY" --nz "$NZ" --num_vars "$NVARS" --num_spikes "$NSPIKES" \
    --num_tsteps "$NTSTEPS" --npx "$NP" --npy 1 --npz 1 >stdout.txt 2>&1) ||
    { cat "$dir/stdout.txt" >&2; echo "run.sh: $name run failed" >&2; exit 1; }
  rm -rf "/tmp/ompi-mg-$$-$name"
  local line all later verdict sums
  line="$(grep "MINIGHOST-NUCE time per step" "$dir/stdout.txt")"
  all="$(echo "$line" | sed -n 's/.*step: *\([0-9.E+-]*\) s (all.*/\1/p')"
  later="$(echo "$line" | sed -n 's/.*included), *\([0-9.E+-]*\) s (spikes.*/\1/p')"
  sums="$(sed -n 's/.*MINIGHOST-NUCE checksum: *//p' "$dir/stdout.txt")"
  sums="$sums $(sed -n 's/.*MINIGHOST-NUCE position checksum: *//p' "$dir/stdout.txt")"
  verdict="$(grep -c "Computation within error tolerance" "$dir/stdout.txt" || true)"
  grep -h "MINIGHOST-NUCE: " "$dir/stdout.txt" | sed "s/^ */run.sh: $name: /" || true
  echo "run.sh: $name: ${line# MINIGHOST-NUCE }"
  echo "run.sh: $name: grid sums of the variables, then the position checksum: $sums"
  [ "$verdict" = 1 ] || { echo "run.sh: $name: miniGhost's error check FAILED" >&2; exit 1; }
  echo "run.sh: $name: miniGhost: Computation within error tolerance."
  # Rank 0's box in the last layout (nuce run) and its share of the cells.
  local box
  box="$(grep "MINIGHOST-NUCE: .*: rank 0 box" "$dir/stdout.txt" | tail -n 1 | sed 's/.*box //' || true)"
  [ -z "$box" ] || echo "$box" | awk -v all="$((NX * NP * NY * NZ))" '{
    n = 1; for (i = 1; i <= NF; i += 2) { split($i, r, ":"); n *= r[2] - r[1] + 1 }
    printf "run.sh: '"$name"': rank 0 holds %s in the last layout, %.3f of the cells\n", $0, n / all }'
  echo "$all $later" >"$dir/time"
  echo "$sums" >"$dir/sums"
}
echo "run.sh: $NP ranks, local block ${NX}x${NY}x${NZ} (uniform), $NVARS variables, stencil $STENCIL," \
  "$NSPIKES spikes x $NTSTEPS steps, rank $SLOW_RANK ${SLOW_FACTOR}x slower, $PAIRS pair(s)"
ratios=() statics=()
for pair in $(seq 1 "$PAIRS"); do
  run "uniform-$pair"
  run "nuce-$pair" MINIGHOST_NUCE=1
  # The grid sums (cells + flux out) and the position checksum (each value times a weight
  # of its global cell) of both runs: equal up to the order of summation.
  paste -d' ' "build-nuce/run-uniform-$pair/sums" "build-nuce/run-nuce-$pair/sums" | awk '{
    n = NF / 2; m = 0
    for (i = 1; i <= n; i++) { d = ($i - $(i + n)) / $i; if (d < 0) d = -d; if (d > m) m = d }
    printf "run.sh: pair %d: checksums uniform vs nuce: largest relative difference %.2e\n", '"$pair"', m
    if (m > 1e-10) { print "run.sh: checksums differ" > "/dev/stderr"; exit 1 } }'
  r="$(cat "build-nuce/run-uniform-$pair/time" "build-nuce/run-nuce-$pair/time" |
    awk 'NR == 1 { u = $1; ul = $2 } NR == 2 { printf "%.3f %.3f", $1 / u, $2 / ul }')"
  echo "run.sh: pair $pair: nuce / uniform time per step = ${r% *} (all spikes), ${r#* } (spikes 2..)"
  ratios+=("$r")
  [ -n "$STATIC" ] || continue
  for speeds in $STATIC; do
    run "static-$speeds-$pair" MINIGHOST_NUCE=1 MINIGHOST_NUCE_SPEEDS="$speeds"
  done
  # nuce / the fastest static split of this pair (all spikes, and spikes 2..).
  s="$(for speeds in $STATIC; do cat "build-nuce/run-static-$speeds-$pair/time"; done |
    awk 'NR == 1 || $1 < a { a = $1 } NR == 1 || $2 < b { b = $2 } END { print a, b }')"
  read -r sa sb <<<"$s"
  read -r na nb <"build-nuce/run-nuce-$pair/time"
  st="$(awk -v na="$na" -v nb="$nb" -v sa="$sa" -v sb="$sb" 'BEGIN { printf "%.3f %.3f", na / sa, nb / sb }')"
  echo "run.sh: pair $pair: nuce / best static split = ${st% *} (all spikes), ${st#* } (spikes 2..)"
  statics+=("$st")
done
if [ -n "$STATIC" ]; then
  printf '%s\n' "${statics[@]}" | sort -n | awk '{ a[NR] = $1 } END { printf "run.sh: median nuce / best static split over %d pair(s) = %.3f (all spikes)\n", NR, a[int((NR + 1) / 2)] }'
  printf '%s\n' "${statics[@]}" | sort -n -k2 | awk '{ b[NR] = $2 } END { printf "run.sh: median nuce / best static split over %d pair(s) = %.3f (spikes 2..)\n", NR, b[int((NR + 1) / 2)] }'
fi
printf '%s\n' "${ratios[@]}" | awk -v f="$SLOW_FACTOR" -v np="$NP" '{ a[NR] = $1; b[NR] = $2 }
  function median(v, n,   i, j, t) {
    for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (v[j] < v[i]) { t = v[i]; v[i] = v[j]; v[j] = t }
    return (n % 2) ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
  }
  END { printf "run.sh: median nuce / uniform over %d pair(s) = %.3f (all spikes), %.3f (spikes 2..); ideal for one %sx slower rank of %d: %.3f\n",
    NR, median(a, NR), median(b, NR), f, np, np / ((np - 1) * f + 1) }'
