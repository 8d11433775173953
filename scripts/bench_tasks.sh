#!/usr/bin/env bash
# Benchmarks of issue 5 (master–worker schedules and divisible work), printed as markdown:
#  1. the planners: MaxTasks1 (p = 1000) by the staircase flow vs pathfinding's kuhn_munkres vs
#     the restricted search, MinTime (p = 1000), the 2-factor approximation vs exact search,
#     LP solve times (examples/bench_tasks.rs);
#  2. a real master–worker matrix product on 4, 5 and 6 ranks (3–5 workers with work
#     multipliers 1..5, measured by the library), naive / semi-naive / optimal, measured vs
#     predicted makespans (examples/master_worker.rs), RUNS times each.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/env.sh
cargo build --release --examples >/dev/null
target/release/examples/bench_tasks
ROWS=${ROWS:-4000} COLS=${COLS:-300} RUNS=${RUNS:-3} REPEATS=${REPEATS:-5}
echo
echo "## Master–worker matrix product (${ROWS}x${COLS} · ${COLS}x${COLS}), median of $REPEATS runs per variant"
echo
echo "| ranks | run | naive (s) | semi-naive (s) | semi-naive predicted | optimal (s) | optimal predicted | optimal error |"
echo "|---|---|---|---|---|---|---|---|"
for np in 4 5 6; do
  for run in $(seq 1 "$RUNS"); do
    mpirun -np "$np" --oversubscribe target/release/examples/master_worker \
      --rows "$ROWS" --cols "$COLS" --repeats "$REPEATS" | awk -v np="$np" -v run="$run" '
      /^RESULT/ { pred[$2] = $4; meas[$2] = $6 }
      END {
        err = 100 * (meas["optimal"] - pred["optimal"]) / pred["optimal"];
        printf "| %d | %d | %.3f | %.3f | %.3f | %.3f | %.3f | %+.1f %% |\n", np, run,
          meas["naive"], meas["semi-naive"], pred["semi-naive"], meas["optimal"], pred["optimal"], err
      }'
  done
done
echo
echo "Machine load during the run (uptime): $(uptime)"
