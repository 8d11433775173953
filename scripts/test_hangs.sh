#!/usr/bin/env bash
# Issue 20: no C or Fortran collective of nuce waits forever when one rank
# departs. Builds examples/c/hangs.c and examples/fortran/hangs.f90 against an
# installed nuce (PREFIX, argument 1; without it, scripts/install.sh into a
# temporary prefix) and runs every case under mpirun -np 2 and -np 3 with
# NUCE_TIMEOUT_S=5. Asserts, for each run: the job ends within
# timeout + 20 s; no message names the Rust runtime's calls
# (Balancer::, DistArray2::); and either
#   same   every rank printed the same non-zero code from the same C function
#          (mpirun's exit status is that code), with the expected message, or
#   order  every rank printed the same non-zero code and the same message,
#          from the call each made (the ranks call different collectives:
#          the root finds the departing rank at another one), or
#   abort  the job was ended by nuce (exit status 75, "nuce: timeout:") with a
#          message naming the departing rank and the call it missed.
# NUCE_MPI=mpich: the same under MPICH (mpicc.mpich, mpifort.mpich,
# mpirun.mpich; hydra passes MPI_Abort's code and the ranks' exit codes on as
# its exit status, as Open MPI's mpirun does). The PREFIX must then be an
# MPICH install (NUCE_MPI=mpich scripts/install.sh); without one, nuce is
# built into target/mpich (as scripts/test_mpich.sh does) unless
# CARGO_TARGET_DIR says otherwise.
# Called by scripts/test_capi.sh; runs alone too (about 1 minute).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/env.sh
if [ "${NUCE_MPI:-}" = mpich ]; then
  export MPICC="${MPICC:-mpicc.mpich}" CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$PWD/target/mpich}"
  mpicc=mpicc.mpich mpifort=mpifort.mpich mpirun=mpirun.mpich
else
  mpicc=mpicc mpifort=mpifort mpirun=mpirun
fi
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
prefix="${1:-}"
if [ -z "$prefix" ]; then
  prefix="$tmp/prefix"
  scripts/install.sh "$prefix" >/dev/null
fi
export PKG_CONFIG_PATH="$prefix/lib/pkgconfig"
rpath="-Wl,-rpath,$prefix/lib"
"$mpicc" -O2 -Wall -Werror examples/c/hangs.c $(pkg-config --cflags --libs nuce) "$rpath" -o "$tmp/hangs"
"$mpifort" -O2 -Wall -Werror examples/fortran/checks.f90 examples/fortran/hangs.f90 \
  $(pkg-config --cflags --libs nuce-fortran) "$rpath" -J "$tmp" -o "$tmp/fhangs"

timeout_s=5
margin_s=20
fail() { echo "$out" >&2; echo "test_hangs: FAILED: $*" >&2; exit 1; }
# agree SED WHAT: SED makes "RANK CODE REST" of each rank's report line
# (hang_case's np, bin, case, rc and out); every rank must report once, all
# with the same CODE and REST (WHAT names them), and the exit status must
# be that CODE, not 0.
agree() {
  local lines
  lines="$(sed -n "$1" <<<"$out" | sort -n)"
  [ "$(wc -l <<<"$lines")" = "$np" ] && [ "$(cut -d' ' -f1 <<<"$lines" | tr '\n' ' ')" = "$(seq -s' ' 0 $((np - 1))) " ] ||
    fail "$(basename "$bin") $case -np $np: not every rank reported an error"
  [ "$(cut -d' ' -f2- <<<"$lines" | sort -u | wc -l)" = 1 ] ||
    fail "$(basename "$bin") $case -np $np: the ranks returned different $2: $lines"
  [ "$rc" = "$(head -1 <<<"$lines" | cut -d' ' -f2)" ] && [ "$rc" != 0 ] ||
    fail "$(basename "$bin") $case -np $np: exit status $rc is not the ranks' code"
}
# hang_case NP KIND(same|order|fsame|abort) BINARY CASE PATTERN… : every PATTERN (an
# extended regex, @D@ standing for the departing rank) must be in the output.
hang_case() {
  local np="$1" kind="$2" bin="$3" case="$4"
  shift 4
  local start end rc=0 d=$((np - 1))
  [ "$case" = elem-size-rank0 ] && d=0
  start=$(date +%s.%N)
  out="$(NUCE_TIMEOUT_S=$timeout_s timeout -k 10 $((timeout_s + margin_s + 60)) "$mpirun" -np "$np" "$bin" "$case" 2>&1)" || rc=$?
  end=$(date +%s.%N)
  local secs
  secs=$(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.1f", b - a }')
  awk -v s="$secs" -v l=$((timeout_s + margin_s)) 'BEGIN { exit !(s <= l) }' ||
    fail "$(basename "$bin") $case -np $np took $secs s (limit $((timeout_s + margin_s)) s; exit $rc)"
  if grep -Eq 'Balancer::|DistArray2::' <<<"$out"; then
    fail "$(basename "$bin") $case -np $np: a message names the Rust runtime's calls"
  fi
  case "$kind" in
    same) agree 's/^hangs: rank \([0-9]*\): \(nuce_[a-z_]*\) returned \([0-9]*\).*/\1 \3 \2/p' "codes or functions" ;;
    order) agree 's/^hangs: rank \([0-9]*\): nuce_[a-z_]* returned \([0-9]*\) after [0-9.]* s: \(.*\)/\1 \2 \3/p' "codes or messages" ;;
    fsame)
      [ "$rc" = 0 ] && grep -q "^hangs: all .* checks passed on $np ranks" <<<"$out" ||
        fail "$(basename "$bin") $case -np $np: exit $rc"
      ;;
    abort)
      [ "$rc" = 75 ] && grep -q '^nuce: timeout:' <<<"$out" ||
        fail "$(basename "$bin") $case -np $np: exit $rc, not nuce's abort (75)"
      ;;
  esac
  local p
  for p in "$@"; do
    grep -Eq -- "${p//@D@/$d}" <<<"$out" || fail "$(basename "$bin") $case -np $np: no '${p//@D@/$d}' in the output"
  done
  echo "test_hangs: ok: -np $np $(basename "$bin") $case: $kind, exit $rc after $secs s"
}
for np in 2 3; do
  hang_case "$np" same "$tmp/hangs" elem-size-rank0 \
    'nuce_array_create returned 14 .*the root \(rank 0\) calls nuce_array_create\(rows 64, cols 48, elem_size 4, ghost 1\)'
  hang_case "$np" same "$tmp/hangs" null-array-remap \
    'nuce_maybe_remap returned 6 .*rank @D@ failed: .*the array \(in nuce_maybe_remap\) is NULL'
  hang_case "$np" abort "$tmp/hangs" null-array \
    '^hangs: rank @D@: nuce_array_gather returned 6 .*NULL in nuce_array_gather on world rank @D@' \
    'rank\(s\) \[@D@\] of [0-9]+ did not reach nuce_array_gather'
  hang_case "$np" abort "$tmp/hangs" comm-null \
    '^hangs: rank @D@: nuce_balancer_create returned 6 .*MPI_COMM_NULL in nuce_balancer_create on world rank @D@' \
    '^nuce: timeout: rank 0: nuce_balancer_create \(MPI_Comm_dup'
  hang_case "$np" order "$tmp/hangs" skip-remap \
    '^hangs: rank @D@: nuce_array_gather returned 14 ' \
    'the root \(rank 0\) calls nuce_maybe_remap\(iterations 10\).*rank\(s\) \[@D@\] call nuce_array_gather.* \(at another of nuce.s collectives\)'
  hang_case "$np" abort "$tmp/hangs" late-rank \
    'rank\(s\) \[@D@\] of [0-9]+ did not reach nuce_maybe_remap\(iterations 10\)'
  hang_case "$np" fsame "$tmp/fhangs" unset-array \
    'nuce_maybe_remap returned 6: rank @D@ failed: .*the array \(in nuce_maybe_remap\) is NULL'
  hang_case "$np" fsame "$tmp/fhangs" skip-remap \
    'hangs: rank @D@: returned 14: .*rank\(s\) \[@D@\] call nuce_array_gather'
done
echo "test_hangs: all cases ended within ${timeout_s} + ${margin_s} s"
