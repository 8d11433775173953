#!/usr/bin/env bash
# The README's test command: installs what is missing, then runs every test.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
. scripts/env.sh
cargo build --release --all-targets
cargo test --release --all-targets
cargo test --release --doc
