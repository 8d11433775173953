#!/usr/bin/env bash
# Shaped-link test on a one-machine namespace cluster (scripts/cluster.sh):
# 3 hosts, 100 Mbit/s and 20 Mbit/s links (tbf, or netem with 5 ms delay when
# the kernel has sch_netem), `mpirun` across them, the network probe must
# measure the shaping. Needs root (or sudo) for network namespaces.
# Takes about 15 s after the build. Cleans up also on failure.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh iproute2
. scripts/env.sh
export NUCE_CLUSTER=nucet
trap 'scripts/cluster.sh down' EXIT
scripts/cluster.sh caps
cargo test --release --test netprobe -- --ignored --nocapture shaped_namespace_cluster
