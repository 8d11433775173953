#!/usr/bin/env bash
# Binds each MPI rank to CPUs from a spec, then runs the program: real,
# measured heterogeneity on one machine (nuce is never told about it).
#
#   NUCE_BIND="0:0,1:0,2:1" mpirun --bind-to none -np 3 scripts/bind_ranks.sh PROG ARGS...
#
# NUCE_BIND is a comma-separated list of RANK:CPUS, where CPUS is a CPU index,
# a range `0-3`, or indices joined by `+` (`0+2`, i.e. taskset's `0,2`).
# RANK `*` is the default for ranks not listed. Above, ranks 0 and 1 share
# CPU 0 (each runs at about half speed) and rank 2 has CPU 1 alone.
# The rank comes from OMPI_COMM_WORLD_RANK (Open MPI), PMIX_RANK or PMI_RANK.
# Without NUCE_BIND, or for an unlisted rank with no `*` entry, the program
# runs unbound. Exits 2 on a malformed spec.
#
# NUCE_SLOW="RANK:FACTOR[,RANK:FACTOR...]" makes a rank FACTOR times slower
# at everything (compute, memory, its MPI progress), as on a slower machine:
# a watcher stops the rank's process (SIGSTOP) for 1 - 1/FACTOR of every
# NUCE_SLOW_PERIOD_MS milliseconds (default 3) and lets it run (SIGCONT) for
# the rest. The stops follow the wall clock, whatever the rank does, so they
# fall into its compute and its waits alike. (A cgroup CPU quota does not
# do this: the kernel makes a rank that overspent its quota pay at its next
# scheduling point, which is inside a wait; see BENCHMARKS.md, "A rank
# slower at everything".) Needs python3.
#
#   NUCE_BIND="0:0,1:1" NUCE_SLOW="1:3" mpirun --bind-to none -np 2 \
#     scripts/bind_ranks.sh PROG ARGS...
set -euo pipefail
if [ $# -lt 1 ]; then
  echo "usage: NUCE_BIND='0:0,1:0,2:1' $0 PROG [ARGS...]" >&2
  exit 2
fi
rank="${OMPI_COMM_WORLD_RANK:-${PMIX_RANK:-${PMI_RANK:-}}}"
spec="${NUCE_BIND:-}"
slow="${NUCE_SLOW:-}"
if [ -z "$spec" ] && [ -z "$slow" ]; then
  exec "$@"
fi
if ! [[ "$rank" =~ ^[0-9]+$ ]]; then
  echo "bind_ranks.sh: no MPI rank in the environment (run under mpirun)" >&2
  exit 2
fi

# The watcher of NUCE_SLOW: stops process $1 for 1 - 1/$2 of every $3 ms,
# until it is gone (and never leaves it stopped); writes to the FIFO $4 when
# it starts.
watch_slow() {
  exec python3 -c '
import os, signal, sys, time
pid, factor, period = int(sys.argv[1]), float(sys.argv[2]), float(sys.argv[3]) / 1e3
run = period / factor
def resume(*_):
    try:
        os.kill(pid, signal.SIGCONT)
    finally:
        os._exit(0)
for s in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
    signal.signal(s, resume)
def gone():
    # Ended: no such process, or a zombie its parent has not reaped yet.
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] in "ZX"
    except OSError:
        return True
with open(sys.argv[4], "w") as ready:  # the rank starts once this is written
    ready.write("ready")
# Each stop lasts until the time run so far is 1/factor of the time since
# the start: sleeps that overshoot do not change the slowdown.
# (The run is counted from the moment it was resumed: a watcher that is
# itself descheduled then does not let the rank run uncounted.)
start = resumed = time.monotonic()
ran = 0.0
try:
    while not gone():
        time.sleep(max(0.0, resumed + run - time.monotonic()))
        os.kill(pid, signal.SIGSTOP)
        ran += time.monotonic() - resumed
        time.sleep(max(0.0, start + ran * factor - time.monotonic()))
        resumed = time.monotonic()
        os.kill(pid, signal.SIGCONT)
except ProcessLookupError:
    pass
' "$@" </dev/null >/dev/null 2>&1
}
if [ -n "$slow" ]; then
  period="${NUCE_SLOW_PERIOD_MS:-3}"
  if ! [[ "$period" =~ ^[0-9]+(\.[0-9]+)?$ ]] || awk -v p="$period" 'BEGIN { exit !(p < 0.5) }'; then
    echo "bind_ranks.sh: NUCE_SLOW_PERIOD_MS must be a number of milliseconds >= 0.5, not '$period'" >&2
    exit 2
  fi
  IFS=',' read -r -a slows <<<"$slow"
  for e in "${slows[@]}"; do
    e="${e//[[:space:]]/}"
    [ -z "$e" ] && continue
    if ! [[ "$e" =~ ^([0-9]+):([0-9]+(\.[0-9]+)?)$ ]] ||
      awk -v f="${BASH_REMATCH[2]}" 'BEGIN { exit !(f < 1) }'; then
      echo "bind_ranks.sh: bad NUCE_SLOW entry '$e' (want RANK:FACTOR, FACTOR >= 1, e.g. 1:3)" >&2
      exit 2
    fi
    if [ "${BASH_REMATCH[1]}" -eq "$rank" ] && awk -v f="${BASH_REMATCH[2]}" 'BEGIN { exit !(f > 1) }'; then
      command -v python3 >/dev/null || {
        echo "bind_ranks.sh: NUCE_SLOW needs python3" >&2
        exit 2
      }
      # The watcher outlives this shell's exec: it watches this PID, which
      # becomes PROG's. PROG starts once the watcher runs (python3 takes
      # tens of milliseconds to start: a short program would run unslowed).
      ready="$(mktemp -u "${TMPDIR:-/tmp}/nuce-slow.XXXXXX")"
      mkfifo -m 600 "$ready"
      watch_slow $$ "${BASH_REMATCH[2]}" "$period" "$ready" &
      read -r _ <"$ready" || true
      rm -f "$ready"
    fi
  done
fi
cpus=""
default=""
IFS=',' read -r -a entries <<<"$spec"
for e in "${entries[@]}"; do
  e="${e//[[:space:]]/}"
  [ -z "$e" ] && continue
  if ! [[ "$e" =~ ^([0-9]+|\*):([0-9]+(-[0-9]+)?(\+[0-9]+(-[0-9]+)?)*)$ ]]; then
    echo "bind_ranks.sh: bad NUCE_BIND entry '$e' (want RANK:CPUS, e.g. 0:1 or 2:0-3 or 1:0+2)" >&2
    exit 2
  fi
  r="${BASH_REMATCH[1]}"
  c="${BASH_REMATCH[2]//+/,}"
  if [ "$r" = "*" ]; then
    default="$c"
  elif [ "$r" -eq "$rank" ]; then
    cpus="$c"
  fi
done
cpus="${cpus:-$default}"
if [ -z "$cpus" ]; then
  exec "$@"
fi
exec taskset -c "$cpus" "$@"
