#!/usr/bin/env bash
# heat2d on a shaped 3-host namespace cluster (scripts/cluster.sh; needs root):
# hosts 1–2 at FAST, host 3 at SLOW (tbf), 2 ranks per host, rank 1 doing 3×
# the work per cell. Plans compared side by side, interleaved, REPS times:
#
#   uniform   --uniform                    HPF BLOCK, never remaps
#   compute   (default)                    RB2 on measured compute speeds,
#                                          remap decisions assume 1 GB/s
#   net-flat  --net --algo column          + measured network: latency-aware
#                                          column DP, measured β and τ in the
#                                          remap decision
#   net-hier  --net --hier                 + two levels over the detected hosts
#
#   scripts/bench_cluster.sh [REPS] [FAST] [SLOW] [N]     # defaults 3 1gbit 20mbit 1536
#
# Prints, per plan, the median over runs of the median time per iteration
# (phases 1..), and its ratio to `uniform` measured in the same round.
set -euo pipefail
cd "$(dirname "$0")/.."
reps="${1:-3}"; fast="${2:-1gbit}"; slow="${3:-20mbit}"; n="${4:-1536}"
export NUCE_CLUSTER=nuceb
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo -E env PATH=$PATH"
cargo build --release --example heat2d >/dev/null 2>&1
trap '$SUDO scripts/cluster.sh down' EXIT
$SUDO scripts/cluster.sh up -n 3 --rate "$fast" --host "3::$slow"
common=(--rows "$n" --cols "$n" --phases 5 --iters 10 --slowdown 1:3@0 --no-check --json --net-bytes 131072)
declare -A args=([uniform]="--uniform" [compute]="" [net-flat]="--net --algo column" [net-hier]="--net --hier")
order=(uniform compute net-flat net-hier)
out="$(mktemp)"
for ((r = 0; r < reps; r++)); do
  for v in "${order[@]}"; do
    # shellcheck disable=SC2086
    $SUDO scripts/cluster.sh mpirun -np 6 target/release/examples/heat2d "${common[@]}" ${args[$v]} 2>/dev/null |
      grep '^{' | sed "s/^/$r $v /" >>"$out"
  done
done
python3 - "$out" "$fast" "$slow" "$n" <<'EOF'
import json, statistics, sys
path, fast, slow, n = sys.argv[1:]
runs = {}
for line in open(path):
    r, v, js = line.split(" ", 2)
    d = json.loads(js)
    its = [p["time_per_iter"] for p in d["phases"][1:]]
    runs.setdefault(v, {})[int(r)] = (statistics.median(its), d)
print(f"heat2d {n}x{n}, 6 ranks on 3 namespace hosts (h1, h2 at {fast}, h3 at {slow}), rank 1 3x work\n")
print("| plan | algorithm | s/iter (median of runs) | ratio to uniform (same round, median) | remaps | network β (MB/s), τ (ms) | last areas |")
print("|---|---|---|---|---|---|---|")
for v in ["uniform", "compute", "net-flat", "net-hier"]:
    if v not in runs:
        continue
    t = statistics.median(x[0] for x in runs[v].values())
    ratios = [runs[v][r][0] / runs["uniform"][r][0] for r in runs[v] if r in runs.get("uniform", {})]
    d = list(runs[v].values())[-1][1]
    net = d.get("network")
    nets = f"{net['bandwidth']/1e6:.2f}, {net['latency_s']*1e3:.2f}" if net else "—"
    remaps = sum(p["remapped"] for p in d["phases"])
    print(f"| {v} | {d['algorithm']} | {t:.4f} | {statistics.median(ratios):.2f} | {remaps} | {nets} | {d['phases'][-1]['areas']} |")
EOF
rm -f "$out"
