#!/usr/bin/env bash
# The README's test command: installs what is missing, then runs every test.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh iproute2
. scripts/env.sh
cargo build --release --workspace --all-targets
cargo test --release --workspace --all-targets
cargo test --release --workspace --doc
# --- cluster step (issue 7): MPI across the hosts of a namespace cluster ---
# Runs only as root where network namespaces work; skips with a message otherwise.
if [ "$(id -u)" -eq 0 ] && ip netns add nucetsh 2>/dev/null && ip netns del nucetsh; then
  scripts/test_cluster.sh
else
  echo "test.sh: skipping the namespace-cluster tests (scripts/test_cluster.sh):" \
    "they need root and network namespaces" >&2
fi
# --- end cluster step ---
