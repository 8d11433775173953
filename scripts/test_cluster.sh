#!/usr/bin/env bash
# Tests on a one-machine namespace cluster (scripts/cluster.sh): 3 hosts,
# 100 Mbit/s and 20 Mbit/s links (tbf, or netem with 5 ms delay when the
# kernel has sch_netem), `mpirun` across them:
#   tests/netprobe.rs  the network probe must measure the shaping;
#   tests/cluster.rs   host detection, heat2d with the two-level plan and the
#                      measured network (equal to the serial solve), a rank
#                      killed / hanging on a remote host ends the job naming it.
# Network namespaces need root: the test binaries are built as the calling
# user and then run as root (through sudo when not root).
# Takes about 35 s after the build. Cleans up also on failure.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh iproute2
. scripts/env.sh
export NUCE_CLUSTER=nucet
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo -E env PATH=$PATH"
trap '$SUDO scripts/cluster.sh down' EXIT
# The examples the tests launch (heat2d, net_probe) are built with the tests.
cargo build --release --workspace --examples --bins
test_exe() {
  local t="$1" exe
  exe="$(cargo test --release --test "$t" --no-run 2>&1 |
    sed -n "s/.*Executable tests\/$t.rs (\(.*\))/\1/p")"
  [ -x "$exe" ] || { echo "test_cluster.sh: could not build tests/$t.rs" >&2; exit 1; }
  echo "$exe"
}
probe_exe="$(test_exe netprobe)"
cluster_exe="$(test_exe cluster)"
$SUDO scripts/cluster.sh caps
$SUDO "$probe_exe" --ignored --nocapture shaped_namespace_cluster
$SUDO "$cluster_exe" --ignored --nocapture
