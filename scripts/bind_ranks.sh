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
set -euo pipefail
if [ $# -lt 1 ]; then
  echo "usage: NUCE_BIND='0:0,1:0,2:1' $0 PROG [ARGS...]" >&2
  exit 2
fi
rank="${OMPI_COMM_WORLD_RANK:-${PMIX_RANK:-${PMI_RANK:-}}}"
spec="${NUCE_BIND:-}"
if [ -z "$spec" ]; then
  exec "$@"
fi
if ! [[ "$rank" =~ ^[0-9]+$ ]]; then
  echo "bind_ranks.sh: no MPI rank in the environment (run under mpirun)" >&2
  exit 2
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
