#!/usr/bin/env bash
# heat3d (DistArray3, 7-point Jacobi) on 2 ranks, one per core, rank 1 doing 3x the work of every
# iteration (--slowdown 1:3@0): balanced / uniform time per iteration (goal <= 0.55; the ideal
# for 1:3 is 0.5), runs interleaved back to back, K pairs (default 3). nuce times by itself.
# Prints a markdown table; the raw output is under target/bench/heat3d_*.txt.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/env.sh
cargo build --release -p nuce --example heat3d >/dev/null
out=target/bench; mkdir -p $out
K=${1:-3} N=${N:-96} PH=${PH:-8} IT=${IT:-20}
two() { NUCE_BIND="0:0,1:1" mpirun --bind-to none -np 2 scripts/bind_ranks.sh "$@"; }
H="target/release/examples/heat3d --nx $N --ny $N --nz $N --phases $PH --iters $IT --slowdown 1:3@0 --no-check"
echo "| pair | balanced s/iter | uniform s/iter | balanced / uniform (goal <= 0.55) | remaps |"
echo "|---|---|---|---|---|"
for k in $(seq 1 "$K"); do
  two $H > $out/heat3d_bal$k.txt
  two $H --uniform > $out/heat3d_uni$k.txt
  b=$(grep '^RESULT' $out/heat3d_bal$k.txt | sed 's/.*steady_s_per_iter \([0-9.]*\).*/\1/')
  u=$(grep '^RESULT' $out/heat3d_uni$k.txt | sed 's/.*steady_s_per_iter \([0-9.]*\).*/\1/')
  r=$(grep '^RESULT' $out/heat3d_bal$k.txt | sed 's/.*remaps \([0-9]*\).*/\1/')
  echo "| $k | $b | $u | $(python3 -c "print(f'{$b/$u:.3f}')") | $r |"
  ratios="${ratios:-} $(python3 -c "print($b/$u)")"
done
echo
python3 -c "import statistics,sys; r=[float(x) for x in sys.argv[1:]]; print(f'median balanced / uniform over {len(r)} pairs: {statistics.median(r):.3f}')" $ratios
