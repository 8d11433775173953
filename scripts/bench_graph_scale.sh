#!/usr/bin/env bash
# Distributed graphs at scale (issue 13): examples/graph_scale side by side
# with the root-based path and with Zoltan's parallel RCB (or, with ALGO=sfc,
# DistGraph::partition_sfc against Zoltan's parallel HSFC) on the same ranks
# and the same grid. Installs libtrilinos-zoltan-dev when missing, builds
# benchmarks/zoltan_rcb.c with mpicc, and prints Markdown rows
# (benchmarks/graph.md, section "Distributed graphs at scale").
# For each p, uniform speeds and speeds 1, 2, …, p; the distributed run
# partitions with RCB (best of 3), exchanges ghosts, then rank 0 becomes 2×
# slower and the graph is remapped by the prefix-sum cut.
#   [ALGO=sfc] scripts/bench_graph_scale.sh [N] [RANKS...]   (default 1000000, ranks 2 4)
set -euo pipefail
cd "$(dirname "$0")/.."
ALGO="${ALGO:-rcb}"
case "$ALGO" in rcb) ZM=RCB ;; sfc) ZM=HSFC ;; *) echo "ALGO is rcb or sfc" >&2; exit 2 ;; esac
N="${1:-1000000}"
shift || true
RANKS=("${@:-2 4}")
read -r -a RANKS <<< "${RANKS[*]}"
scripts/setup.sh libtrilinos-zoltan-dev
. scripts/env.sh
W=target/bench_graph_scale
mkdir -p "$W"
mpicc -O2 -o "$W/zoltan_rcb" benchmarks/zoltan_rcb.c -I/usr/include/trilinos -ltrilinos_zoltan -lm
cargo build --release --example graph_scale >/dev/null
EX=target/release/examples/graph_scale
field() { grep -o "\"$2\":[^,}]*" <<< "$1" | cut -d: -f2 | tr -d '"'; }
maxof() { sort -g | tail -1; }
echo "| N | p | speeds | nuce ${ALGO^^} partition (s) | Zoltan $ZM (s) | nuce / Zoltan | imbalance nuce / Zoltan | peak MiB per rank: distributed max / root-path root / Zoltan | remap: plan + move (s), moved | ghost exchange (ms) |"
echo "|---|---|---|---|---|---|---|---|---|---|"
for p in "${RANKS[@]}"; do
 for kind in uniform ramp; do
  if [ "$kind" = uniform ]; then speeds=$(seq 1 "$p" | sed 's/.*/1/' | paste -sd,); else speeds=$(seq 1 "$p" | paste -sd,); fi
  dist=$(mpirun -np "$p" "$EX" --n "$N" --speeds "$speeds" --algo "$ALGO" --slowdown 0:2 --reps 3 --json | grep "^{")
  root=$(mpirun -np "$p" "$EX" --n "$N" --speeds "$speeds" --root --json | grep "^{")
  zol=$(mpirun -np "$p" "$W/zoltan_rcb" "$N" 3 "$speeds" "$ZM")
  r0=$(grep '"rank":0,' <<< "$dist")
  n=$(field "$r0" n)
  tn=$(field "$r0" t_partition_s)
  tz=$(awk '{for(i=1;i<=NF;i++) if($i=="partition_s") print $(i+1)}' <<< "$zol")
  iz=$(awk '{for(i=1;i<=NF;i++) if($i=="imbalance") print $(i+1)}' <<< "$zol")
  hz=$(awk '{for(i=1;i<=NF;i++) if($i=="vmhwm_kib") print $(i+1)}' <<< "$zol")
  hd=$(while read -r l; do field "$l" vmhwm_kib; done <<< "$dist" | maxof)
  hr=$(while read -r l; do field "$l" vmhwm_kib; done <<< "$root" | maxof)
  printf '| %s | %s | %s | %.3f | %.3f | %.2f | %s / %s | %.0f / %.0f / %.0f (%.2f× the root) | %.3f + %.3f, %s | %.2f |\n' \
    "$n" "$p" "$speeds" "$tn" "$tz" "$(echo "$tn / $tz" | bc -l)" "$(field "$r0" imbalance)" "$iz" \
    "$(echo "$hd / 1024" | bc -l)" "$(echo "$hr / 1024" | bc -l)" "$(echo "$hz / 1024" | bc -l)" "$(echo "$hd / $hr" | bc -l)" \
    "$(field "$r0" t_remap_plan_s)" "$(field "$r0" t_remap_move_s)" "$(field "$r0" remap_moved)" \
    "$(echo "$(field "$r0" t_exchange_s) * 1000" | bc -l)"
 done
done
