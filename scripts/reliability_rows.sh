#!/usr/bin/env bash
# The MPI rows of RELIABILITY.md's catalogue under one MPI implementation:
# each row's command once, one launch at a time; prints a markdown row per
# command with mpirun's exit status, the wall time of the whole mpirun
# (start-up included), the 1-minute load average before it, and the first
# output line containing the text that names the fault (or "NOT FOUND"); for
# the scenarios of nuce-mpi-check that print `ERR rank case message` lines,
# their count and how many texts each case has (1: every rank agrees); for
# those that print `CHECK rank name ok` lines, their count.
#
#   scripts/reliability_rows.sh [ROW...]                  # Open MPI: mpirun, target/release
#   NUCE_MPI=mpich scripts/reliability_rows.sh [ROW...]   # MPICH: mpirun.mpich, target/mpich/release
#
# ROW selects rows by their number in the catalogue (default: all below).
# Builds what it launches first (heat2d, quickstart, master_worker,
# mesh_solver, nuce-mpi-check; MPICH: MPICC=mpicc.mpich into target/mpich,
# as scripts/test_mpich.sh does). Each launch is killed after 120 s.
set -uo pipefail
cd "$(dirname "$0")/.."
. scripts/env.sh
if [ "${NUCE_MPI:-}" = mpich ]; then
  export MPICC=mpicc.mpich CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$PWD/target/mpich}"
  mpirun=(mpirun.mpich)
else
  export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$PWD/target}"
  mpirun=(mpirun --oversubscribe)
fi
cargo build --release -p nuce -p nuce-testkit --bin nuce-mpi-check --example heat2d \
  --example quickstart --example master_worker --example mesh_solver >/dev/null 2>&1 ||
  { echo "reliability_rows.sh: build failed" >&2; exit 1; }
bin="$CARGO_TARGET_DIR/release"
heat="$bin/examples/heat2d" quick="$bin/examples/quickstart" check="$bin/nuce-mpi-check"
B="--rows 64 --cols 64 --phases 3 --iters 5"
G="--rows 256 --cols 192 --iters 10 --phases 4"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
want=" $* "

# row TIMEOUT_S NEEDLE MPIRUN-ARGS...: runs one row's command (NUCE_TIMEOUT_S
# = TIMEOUT_S, "-" for the default) and prints its markdown row.
row() {
  local r="$1" timeout_s="$2" needle="$3"
  shift 3
  [ "$want" = "  " ] || [[ "$want" == *" $r "* ]] || return 0
  local load t0 t1 code line
  load="$(cut -d' ' -f1 /proc/loadavg)"
  t0=$(date +%s.%N)
  if [ "$timeout_s" = - ]; then
    OMPI_MCA_orte_tmpdir_base="/tmp/ompi-$RANDOM$RANDOM" timeout -k 5 120 "${mpirun[@]}" "$@" \
      >"$tmp/out" 2>&1
  else
    NUCE_TIMEOUT_S="$timeout_s" OMPI_MCA_orte_tmpdir_base="/tmp/ompi-$RANDOM$RANDOM" \
      timeout -k 5 120 "${mpirun[@]}" "$@" >"$tmp/out" 2>&1
  fi
  code=$?
  t1=$(date +%s.%N)
  case "$needle" in
    @errs) # `ERR rank case message` lines: how many, per case how many texts.
      line="$(awk '/^ERR /{n++; c=$3; m=$0; sub(/^ERR [0-9]+ [^ ]+ /, "", m);
        if (!((c, m) in seen)) {seen[c, m]=1; k[c]++; if (!(c in first)) first[c]=m}}
        END{max=0; nc=0; for (c in k) {nc++; if (k[c]>max) max=k[c]; e=c ": " first[c]}
        printf "%d ERR lines, %d cases, at most %d text(s) per case; e.g. %s", n, nc, max, e}' \
        "$tmp/out" | cut -c1-260 | tr '|' '/')" ;;
    @checks) line="$(grep -c '^CHECK .* ok$' "$tmp/out") CHECK ok lines, $(grep -c FAIL "$tmp/out") FAIL" ;;
    *) line="$(grep -m1 -F -- "$needle" "$tmp/out" | cut -c1-220 | tr '|' '/')" ;;
  esac
  printf '| %s | `%s` | %s | %.1f s | %s | %s |\n' "$r" "$(echo "$*" | sed "s#$bin/##g")" \
    "$code" "$(echo "$t1 - $t0" | bc)" "$load" "${line:-NOT FOUND: $needle}"
}

echo "| row | command (NUCE_TIMEOUT_S per row) | exit | wall | load | message |"
echo "|---|---|---|---|---|---|"
# A dead rank is named by the launcher: Open MPI names its rank, hydra its PID.
if [ "${NUCE_MPI:-}" = mpich ]; then dead="EXIT CODE:"; else dead="noticed that process rank 1"; fi
row 1 10 "$dead" -np 3 "$heat" $G --die 1@1
row 2 10 "$dead" -np 3 "$heat" $G --kill 1@1
row 3 10 "rank(s) [2] of 3 did not reach" -np 3 "$heat" $G --hang 2@1
row 4 10 "the root, rank 0" -np 3 "$check" faults-hang 0
row 5 3 "rank(s) [2] of 3 did not reach" -np 3 "$check" faults-hang 2
row 7b - @errs -np 3 "$check" faults-order
row 8-12 - @errs -np 3 "$check" faults-remap 23 17 7
row 13-22 - @errs -np 3 "$check" faults-messages
row 42 - "the ranks disagree" -np 1 "$heat" $B --no-check : -np 1 "$heat" $B --no-check --uniform
row 43 - "the ranks disagree" -np 1 "$heat" $B --net --net-bytes 1024 : -np 1 "$heat" $B --net --net-bytes 1048576
row 44 - "the ranks disagree" -np 1 "$heat" $B --uniform : -np 1 "$heat" $B
row 44 - "the ranks disagree" -np 1 "$heat" $B : -np 1 "$heat" $B --net
row 45 - "the ranks disagree" -np 1 "$heat" $B --no-check : -np 1 "$heat" --rows 128 --cols 64 --phases 3 --iters 5 --no-check
row 46 - "the ranks disagree" -np 1 "$heat" $B : -np 1 "$heat" --rows 64 --cols 64 --phases 5 --iters 5
row 46 - "Disagreement {" -np 1 "$quick" 64 2 5 : -np 1 "$quick" 64 3 5
row 46 10 "Disagreement {" -np 1 "$quick" 64 2 5 : -np 1 "$quick" 64 2 6
row 47 - "the ranks disagree" -np 1 "$heat" $B : -np 1 "$heat" $B --algo foo
row 48 10 "did not reach" -np 2 "$heat" $B --slowdown 1:1000000000@0
row 49 10 "did not reach" -np 2 "$heat" --rows 64 --cols 48 --iters 5 --phases 3 --stop 1@1
# A dead rank that the launcher lets the others outlive: Open MPI's
# --enable-recovery, hydra's -disable-auto-cleanup.
if [ "${NUCE_MPI:-}" = mpich ]; then keep=-disable-auto-cleanup; else keep=--enable-recovery; fi
row 50 10 "did not reach" "$keep" -np 3 "$heat" $B --die 1@1
row 50 10 "did not reach" "$keep" -np 3 "$heat" $B --kill 1@1
row 51 - "--rows takes a positive integer" -np 2 "$bin/examples/master_worker" --rows 0
row 51 - "--slowdown" -np 2 "$heat" $B --slowdown 1:x@0
row 51 - "--size must be at least" -np 2 "$bin/examples/mesh_solver" --size 1e-9
row 53 - "the ranks disagree" -np 1 "$heat" $B : -np 1 "$heat" $B --hysteresis 0.5
for c in skip extra other gskip; do
  row 62-65 4 @errs -np 2 "$check" exchange-faults "$c"
done
row 66 - @checks -np 2 "$check" exchange-root 20
row 66 - @checks -np 8 "$check" exchange-root 20
