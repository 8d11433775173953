#!/usr/bin/env bash
# The balance point as the ranks grow (issue 32): examples/bench_balance_point
# at 8..128 real ranks (oversubscribed), flat and over emulated hosts, with
# Open MPI's message monitoring (pml monitoring) counting every message rank
# 0 receives, collectives included.
#
#   scripts/bench_scale.sh ["8 16 32 64 128"] [HOSTS=4] [POINTS=10] [CELLS_PER_RANK=1024]
#
# For each p and mode (flat: no hosts; hier: HOSTS emulated hosts) it runs
# the example twice, with POINTS balance points and with none (set-up only):
# the difference of the messages and bytes rank 0 received, divided by
# POINTS, is the cost of one balance point at the root. Prints a markdown
# table: the root's median time per balance point, the checkpoint messages
# the root received per balance point (nuce's own count), all the messages
# and bytes the root received per balance point (MPI monitoring), and the
# ranks' VmRSS (median, max) and VmHWM (max) in KiB after the run, and the
# Rust heap's peak during the balance points (median, max over the non-root
# ranks, the root's).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/env.sh
NPS=${1:-"8 16 32 64 128"}
HOSTS=${2:-4}
POINTS=${3:-10}
CELLS=${4:-1024}
TGT=${CARGO_TARGET_DIR:-target}
cargo build --release --example bench_balance_point >&2
exe=$TGT/release/examples/bench_balance_point
ulimit -n 65536 2>/dev/null || true
mon=$(mktemp -d)
trap 'rm -rf "$mon"' EXIT

# Messages and bytes rank 0 received in the monitored run under $1 (prefix).
received() {
    cat "$1".*.prof 2>/dev/null | awk -F'\t' '($1=="E"||$1=="I") && $3==0 {
        split($4, b, " "); split($5, m, " "); B += b[1]; M += m[1] }
        END { printf "%d %d\n", M, B }'
}

# One monitored run: np, hosts, points -> the example's line, then "M B".
run() {
    local prefix="$mon/p$1h$2n$3"
    timeout 900 mpirun --oversubscribe -np "$1" \
        --mca pml_monitoring_enable 2 --mca pml_monitoring_enable_output 3 \
        --mca pml_monitoring_filename "$prefix" \
        "$exe" --hosts "$2" --points "$3" --cells-per-rank "$CELLS" 2>/dev/null | grep '^p='
    received "$prefix"
}

field() { tr ' ' '\n' <<<"$1" | sed -n "s/^$2=//p"; }

echo "load average: $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) cores, $CELLS cells per rank, $POINTS balance points"
echo
echo "| p | hosts | ms per balance point (median) | checkpoint msgs at root | all msgs at root | bytes at root | VmRSS KiB median / max | VmHWM KiB max | heap KiB per balance point: median / max non-root / root |"
echo "|---|---|---|---|---|---|---|---|---|"
for np in $NPS; do
    for h in 0 "$HOSTS"; do
        out=$(run "$np" "$h" "$POINTS")
        line=$(head -1 <<<"$out")
        read -r m1 b1 < <(tail -1 <<<"$out")
        read -r m0 b0 < <(run "$np" "$h" 0 | tail -1)
        msgs=$(( (m1 - m0) / POINTS ))
        bytes=$(( (b1 - b0) / POINTS ))
        echo "| $np | $h | $(field "$line" bp_ms_median) | $(field "$line" root_msgs_per_bp) | $msgs | $bytes | $(field "$line" rss_kib_median) / $(field "$line" rss_kib_max) | $(field "$line" hwm_kib_max) | $(field "$line" heap_kib_median) / $(field "$line" heap_kib_nonroot_max) / $(field "$line" heap_kib_root) |"
    done
done
echo
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
