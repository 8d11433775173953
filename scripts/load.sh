#!/usr/bin/env bash
# Runs a command while competing busy loops occupy given CPUs: real
# heterogeneity from real competing processes, as when another job shares a
# rank's core (nuce is never told about it; it measures).
#
#   scripts/load.sh [--cpu LIST] [--after SECONDS] [--for SECONDS] [--nice N] \
#                   [--procs K] -- CMD ARGS...
#
# --cpu LIST   CPUs to load: indices (and ranges A-B) joined by commas, each in
#              0..nproc-1 (default: every CPU). On each listed CPU, K busy
#              loops run pinned there with `taskset -c CPU` (a pure-CPU bash
#              loop, nothing to compile).
# --procs K    busy loops per listed CPU (default 1): a rank that shares its
#              core with K loops gets about 1/(K+1) of it.
# --nice N     run the loops under `nice -n N` (default 0: they compete as
#              equals; 19: they mostly yield to the command).
# --after A    start the loops A seconds after CMD starts (default 0).
# --for B      stop them B seconds after they started (default: when CMD ends).
# Times may be fractional (`--after 2.5`). The loops are always killed when
# CMD ends, when it fails, and on SIGINT/SIGTERM/SIGHUP (their process group
# is killed; each loop also ends by itself within about 0.3 s once this
# script is gone, even after a SIGKILL). Exits with CMD's exit status
# (128+N after signal N). One line to stderr when the loops start and stop,
# with the time since CMD started, unless NUCE_LOAD_QUIET=1. Exits 2, with
# this usage, on a bad argument. The loops show as `nuce-load-busy` in
# `pgrep -af nuce-load-busy`.
#
# With scripts/bind_ranks.sh (ranks one per core, another job on rank 1's):
#
#   NUCE_BIND="0:0,1:1" scripts/load.sh --cpu 1 -- \
#     mpirun --bind-to none -np 2 scripts/bind_ranks.sh \
#     target/release/examples/heat2d --rows 1536 --cols 1536
#
# and a job that arrives 2.5 s into the run and leaves 3.5 s later:
# `scripts/load.sh --cpu 1 --after 2.5 --for 3.5 -- mpirun ...`.
#
# An alternative is a CPU quota (cgroup v1 `cpu.cfs_quota_us`, v2 `cpu.max`)
# on a rank's process. This machine (check: `cat /proc/self/cgroup`,
# `ls /sys/fs/cgroup`) has cgroup v1 with the `cpu` controller mounted
# read-write: as root, a child cgroup (`mkdir /sys/fs/cgroup/cpu/X`) takes a
# `cpu.cfs_quota_us` (the cgroup v2 hierarchy, /sys/fs/cgroup/unified, has no
# cpu controller, hence no `cpu.max`). A quota is a CPU-limited container,
# not a slower machine (BENCHMARKS.md, "A rank slower at everything"); for a
# rank slower at everything, `NUCE_SLOW` of scripts/bind_ranks.sh stops and
# resumes it on the wall clock. This script's busy loops are the third case,
# another job time-sharing the core; they need no root and leave nothing
# behind to clean up.
set -uo pipefail

usage() {
  cat >&2 <<EOF
usage: $0 [--cpu LIST] [--after SECONDS] [--for SECONDS] [--nice N] [--procs K] -- CMD [ARGS...]
  --cpu LIST   CPUs to load, e.g. 1 or 0,2-3 (each in 0..$((ncpu - 1)); default: all)
  --procs K    busy loops per listed CPU (default 1)
  --nice N     nice value of the loops, -20..19 (default 0)
  --after A    start the loops A s after CMD starts (default 0)
  --for B      stop them B s after they start (default: when CMD ends)
  NUCE_LOAD_QUIET=1: no start/stop lines on stderr
EOF
}
bad() {
  echo "load.sh: $*" >&2
  usage
  exit 2
}

ncpu=$(nproc --all)
cpu_arg="" after=0 dur="" nice_n=0 procs=1
time_re='^([0-9]+(\.[0-9]*)?|\.[0-9]+)$'
while [ $# -gt 0 ]; do
  case $1 in
    --cpu | --after | --for | --nice | --procs)
      [ $# -ge 2 ] || bad "option $1 needs a value"
      opt=$1 val=$2
      shift 2
      ;;
    --cpu=* | --after=* | --for=* | --nice=* | --procs=*)
      opt=${1%%=*} val=${1#*=}
      shift
      ;;
    -h | --help)
      usage
      exit 0
      ;;
    --)
      shift
      break
      ;;
    -*) bad "unknown option '$1'" ;;
    *) break ;;
  esac
  case $opt in
    --cpu) cpu_arg=$val ;;
    --after)
      [[ $val =~ $time_re ]] || bad "--after '$val': want seconds >= 0"
      after=$val
      ;;
    --for)
      [[ $val =~ $time_re ]] || bad "--for '$val': want seconds >= 0"
      dur=$val
      ;;
    --nice)
      if ! [[ $val =~ ^-?[0-9]+$ ]] || ((val < -20 || val > 19)); then
        bad "--nice '$val': want -20..19"
      fi
      nice_n=$val
      ;;
    --procs)
      if ! [[ $val =~ ^[0-9]+$ ]] || ((val < 1 || val > 64)); then
        bad "--procs '$val': want 1..64"
      fi
      procs=$val
      ;;
  esac
done
[ $# -ge 1 ] || bad "no command given"

# The CPU list, expanded and checked.
cpus=()
if [ -z "$cpu_arg" ]; then
  for ((c = 0; c < ncpu; c++)); do cpus+=("$c"); done
else
  IFS=',' read -r -a items <<<"$cpu_arg"
  [ ${#items[@]} -ge 1 ] || bad "--cpu '$cpu_arg': empty list"
  for it in "${items[@]}"; do
    if [[ $it =~ ^([0-9]+)(-([0-9]+))?$ ]]; then
      lo=$((10#${BASH_REMATCH[1]})) hi=$((10#${BASH_REMATCH[3]:-${BASH_REMATCH[1]}}))
      ((lo <= hi)) || bad "--cpu '$it': empty range"
      ((hi < ncpu)) || bad "--cpu '$it': CPUs are 0..$((ncpu - 1))"
      for ((c = lo; c <= hi; c++)); do cpus+=("$c"); done
    else
      bad "--cpu '$it': want a CPU index or a range A-B"
    fi
  done
fi

quiet=${NUCE_LOAD_QUIET:-0}
t0=$EPOCHREALTIME
say() {
  [ "$quiet" = 1 ] && return 0
  local now=$EPOCHREALTIME
  # Seconds since CMD started, with millisecond resolution ($EPOCHREALTIME is s.us).
  local us=$(((${now/./} - ${t0/./}) / 1000))
  printf 'load.sh: t=%d.%03ds: %s\n' $((us / 1000)) $((us % 1000)) "$*" >&2
}

# The busy loop: pure CPU, checking every ~0.3 s that this script still
# exists ($1), so that no loop survives it even if it is SIGKILLed.
# shellcheck disable=SC2016 # expanded by the loop's own bash
busy='while kill -0 "$1" 2>/dev/null; do i=0; while ((i < 200000)); do ((i++)); done; done'
main_pid=$$
where="CPU ${cpu_arg:-0-$((ncpu - 1))}"

# Runs in the background, in a process group of its own with its loops:
# waits --after, starts the loops, stops them after --for or when killed.
controller() {
  local pids=() c k
  stop() {
    if [ ${#pids[@]} -gt 0 ]; then
      kill -TERM "${pids[@]}" 2>/dev/null
      wait "${pids[@]}" 2>/dev/null
      pids=()
      say "busy loops on $where stopped ($1)"
    fi
  }
  trap 'stop "command ended"; exit 0' TERM
  trap 'stop interrupted; exit 0' HUP
  # Sleeps in the background: a trap runs at once, and no "Terminated" line.
  if [ "$after" != 0 ]; then
    sleep "$after" &
    wait $!
  fi
  for c in "${cpus[@]}"; do
    for ((k = 0; k < procs; k++)); do
      nice -n "$nice_n" taskset -c "$c" bash -c "$busy" nuce-load-busy "$main_pid" &
      pids+=($!)
    done
  done
  say "${#pids[@]} busy loop(s) started on $where (${procs} per CPU, nice $nice_n)"
  if [ -n "$dur" ]; then
    sleep "$dur" &
    wait $!
    stop "after --for $dur s"
  else
    wait
  fi
}

ctl_pid="" cmd_pid=""
stop_loops() {
  if [ -n "$ctl_pid" ]; then
    # The controller, its sleep and every loop: one process group (SIGTERM:
    # CMD ended, SIGHUP: interrupted).
    kill "-${1:-TERM}" -- "-$ctl_pid" 2>/dev/null
    wait "$ctl_pid" 2>/dev/null
    ctl_pid=""
  fi
}
# shellcheck disable=SC2317 # called by the traps below
on_signal() {
  trap '' INT TERM HUP
  stop_loops HUP
  if [ -n "$cmd_pid" ]; then
    # A background command of a script ignores SIGINT: ask it with SIGTERM.
    kill -TERM "$cmd_pid" 2>/dev/null
    wait "$cmd_pid" 2>/dev/null
  fi
  exit $((128 + $1))
}
trap 'on_signal 2' INT
trap 'on_signal 15' TERM
trap 'on_signal 1' HUP
trap 'stop_loops' EXIT

# CMD keeps this script's stdin (a background job would get /dev/null).
"$@" <&0 &
cmd_pid=$!
# Job control for this one job: the controller leads a new process group,
# which its loops inherit.
set -m
controller </dev/null &
ctl_pid=$!
set +m
wait "$cmd_pid"
rc=$?
cmd_pid=""
stop_loops
exit "$rc"
