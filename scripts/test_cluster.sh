#!/usr/bin/env bash
# Shaped-link test on a one-machine namespace cluster (scripts/cluster.sh):
# 3 hosts, 100 Mbit/s and 20 Mbit/s links (tbf, or netem with 5 ms delay when
# the kernel has sch_netem), `mpirun` across them, and the network probe must
# measure the shaping. Network namespaces need root: the test binary is built
# as the calling user and then run as root (through sudo when not root).
# Takes about 10 s after the build. Cleans up also on failure.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh iproute2
. scripts/env.sh
export NUCE_CLUSTER=nucet
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo -E env PATH=$PATH"
trap '$SUDO scripts/cluster.sh down' EXIT
exe="$(cargo test --release --test netprobe --no-run 2>&1 |
  sed -n 's/.*Executable tests\/netprobe.rs (\(.*\))/\1/p')"
[ -x "$exe" ] || { echo "test_cluster.sh: could not build tests/netprobe.rs" >&2; exit 1; }
$SUDO scripts/cluster.sh caps
$SUDO "$exe" --ignored --nocapture shaped_namespace_cluster
