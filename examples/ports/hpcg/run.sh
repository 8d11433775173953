#!/usr/bin/env bash
# HPCG 3.1 on nuce's ownership ranges: applies hpcg-nuce.patch to an upstream
# HPCG checkout, builds it with mpicxx against an installed nuce (pkg-config),
# and runs it twice on NP ranks with rank SLOW_RANK computing SLOW_FACTOR times
# slower (busy-wait emulation in SpMV and SymGS): HPCG's equal boxes, then
# nuce's ranges. Prints each run's time per CG iteration and HPCG's verdict.
#
#   examples/ports/hpcg/run.sh HPCG_CHECKOUT [NUCE_PREFIX]
#
# HPCG_CHECKOUT: upstream hpcg-benchmark/hpcg at commit
# 114602d458d1034faa52b71e4c15aba9b3a17698 (patched in place if not yet).
# NUCE_PREFIX: where scripts/install.sh put nuce (else pkg-config's path).
# Environment: NP (2), NX NY NZ (32 32 32: local box of HPCG's uniform run),
# RT (10: HPCG's --rt), SLOW_RANK (1), SLOW_FACTOR (3), MPIRUN (mpirun),
# PAIRS (1: uniform/nuce pairs run back to back; the median ratio is printed).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
[ $# -ge 1 ] || { echo "usage: $0 HPCG_CHECKOUT [NUCE_PREFIX]" >&2; exit 2; }
src="$(cd "$1" && pwd)"
if [ $# -ge 2 ]; then export PKG_CONFIG_PATH="$(cd "$2" && pwd)/lib/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"; fi
NP="${NP:-2}" NX="${NX:-32}" NY="${NY:-32}" NZ="${NZ:-32}" RT="${RT:-10}"
SLOW_RANK="${SLOW_RANK:-1}" SLOW_FACTOR="${SLOW_FACTOR:-3}" MPIRUN="${MPIRUN:-mpirun}"
PAIRS="${PAIRS:-1}"
pkg-config --exists nuce || { echo "run.sh: nuce.pc not found (give NUCE_PREFIX)" >&2; exit 1; }

cd "$src"
if ! grep -q "nuce port" src/Geometry.hpp; then
  patch -p1 --forward <"$here/hpcg-nuce.patch" >/dev/null
  echo "run.sh: applied hpcg-nuce.patch to $src"
fi
mkdir -p build-nuce
libdir="$(pkg-config --variable=libdir nuce)"
if [ ! -x build-nuce/xhpcg ] || [ -n "$(find src -newer build-nuce/xhpcg -name '*.[ch]pp' | head -n 1)" ]; then
  echo "run.sh: building build-nuce/xhpcg (mpicxx, pkg-config nuce)"
  mpicxx -O3 -DHPCG_NO_OPENMP -Isrc $(pkg-config --cflags nuce) src/*.cpp \
    $(pkg-config --libs nuce) -Wl,-rpath,"$libdir" -o build-nuce/xhpcg
fi

run() { # run NAME [ENV=VALUE…]: one HPCG run in its own directory
  local name="$1" dir="build-nuce/run-$1"
  shift
  rm -rf "$dir" && mkdir -p "$dir"
  (cd "$dir" && env HPCG_SLOW_RANK="$SLOW_RANK" HPCG_SLOW_FACTOR="$SLOW_FACTOR" "$@" \
    "$MPIRUN" -np "$NP" ../xhpcg --nx="$NX" --ny="$NY" --nz="$NZ" --rt="$RT" >stdout.txt 2>&1) ||
    { cat "$dir/stdout.txt" >&2; echo "run.sh: $name run failed" >&2; exit 1; }
  local t best verdict
  t="$(sed -n 's/^HPCG-NUCE time per CG iteration: \([0-9.e+-]*\) s.*/\1/p' "$dir/stdout.txt")"
  best="$(sed -n 's/^HPCG-NUCE time per CG iteration: .*fastest set: \([0-9.e+-]*\) s.*/\1/p' "$dir/stdout.txt")"
  verdict="$(grep -h "^Final Summary::HPCG result is" "$dir"/HPCG-Benchmark*.txt | head -n 1)"
  grep -h "^HPCG-NUCE" "$dir/stdout.txt" | grep -v "time per CG" | sed "s/^/run.sh: $name: /" || true
  echo "run.sh: $name: time per CG iteration $t s (mean), $best s (fastest set); $verdict"
  echo "$t $best" >"$dir/time"
}
echo "run.sh: $NP ranks, local box ${NX}x${NY}x${NZ} (uniform), rank $SLOW_RANK ${SLOW_FACTOR}x slower, $PAIRS pair(s)"
ratios=()
for pair in $(seq 1 "$PAIRS"); do
  run "uniform-$pair"
  run "nuce-$pair" HPCG_NUCE=1
  r="$(cat "build-nuce/run-uniform-$pair/time" "build-nuce/run-nuce-$pair/time" |
    awk 'NR == 1 { u = $1; ub = $2 } NR == 2 { printf "%.3f %.3f", $1 / u, $2 / ub }')"
  echo "run.sh: pair $pair: nuce / uniform time per CG iteration = ${r% *} (mean), ${r#* } (fastest set)"
  ratios+=("$r")
done
printf '%s\n' "${ratios[@]}" | awk -v f="$SLOW_FACTOR" '{ a[NR] = $1; b[NR] = $2 }
  function median(v, n,   i, j, t) {
    for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (v[j] < v[i]) { t = v[i]; v[i] = v[j]; v[j] = t }
    return (n % 2) ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
  }
  END { printf "run.sh: median nuce / uniform over %d pair(s) = %.3f (mean), %.3f (fastest set); ideal for a %sx slower rank of 2: %.3f\n",
    NR, median(a, NR), median(b, NR), f, 2 / (f + 1) }'
