#!/usr/bin/env bash
# The widened multilevel benchmark of issue 21: nuce's Multilevel vs
# `gpmetis -tpwgts` on meshes not used to develop it (gmsh-doc demos and
# tutorials: a 2D electrical machine with a thin air gap and holes, t10's
# graded 2D mesh, the antenna surface, 3D indheat / filter / t18),
# nodal and dual graphs, with and without vertex and edge weights, plus the
# meshes of scripts/bench_multilevel.sh; p ∈ {4, 8, 16, 32, 64}, uniform /
# 1:4 / random targets. MPI-free (an example of nuce-plan). Prints Markdown,
# every case worst cut ratio first (BENCHMARKS.md, benchmarks/graph.md).
#   scripts/bench_multilevel_wide.sh [REPS]   (default 3: least time of 3 runs)
#   BASE_BIN=/tmp/bench_multilevel_old scripts/bench_multilevel_wide.sh 1
#     (a before/after of two builds: the old build's binary against this one)
set -euo pipefail
cd "$(dirname "$0")/.."
REPS="${1:-3}"
source scripts/graph_meshes.sh
mesh 3 t5.geo 0.25 t5_large.msh
D=$(dirname "$(dpkg -L gmsh-doc | grep '/demos/simple_geo/machine.geo' | head -1)")
T=$(dirname "$(dpkg -L gmsh-doc | grep '/tutorial/t10.geo' | head -1)")
for f in machine antenna indheat filter; do geo "$D/$f.geo.gz" "$f" 2>/dev/null || cp "$D/$f.geo" "$W/"; done
geo "$T/t10.geo.gz" t10; cp "$T/t18.geo" "$W/"
for i in "$D"/machine.i1 "$D"/machine.i2 "$D"/antenna.i1; do cp "$i" "$W/"; done
mesh 2 machine.geo 0.5 machine_2d.msh
mesh 2 t10.geo 1 t10_2d.msh
mesh 2 antenna.geo 1 antenna_surf.msh
mesh 3 indheat.geo 1 indheat_3d.msh
mesh 3 filter.geo 1 filter_3d.msh
mesh 3 t18.geo 1 t18_3d.msh
cargo build --release -p nuce-plan --example bench_multilevel
SPECS=("machine-2D=$W/machine_2d.msh" "machine-2D-dual=$W/machine_2d.msh:dual"
  "machine-2D-weighted=$W/machine_2d.msh:weighted" "t10-2D=$W/t10_2d.msh"
  "antenna-surface=$W/antenna_surf.msh" "indheat-3D=$W/indheat_3d.msh"
  "indheat-3D-dual=$W/indheat_3d.msh:dual" "indheat-3D-dual-weighted=$W/indheat_3d.msh:dualweighted"
  "filter-3D=$W/filter_3d.msh" "t18-3D=$W/t18_3d.msh"
  "gmsh-t4-2D=$W/t4_2d.msh" "sfepy-big-2D=$S" "gmsh-t4-large-2D=$W/t4_large.msh"
  "sfepy-cube_cylinder-3D=$C" "gmsh-t5-3D=$W/t5_3d.msh" "gmsh-t5-large-3D=$W/t5_large.msh")
NEW=target/release/examples/bench_multilevel
if [ -z "${BASE_BIN:-}" ]; then
  exec "$NEW" "$REPS" "$W" "${SPECS[@]}"
fi
# BASE_BIN=<a copy of bench_multilevel built from another commit>: both builds
# run graph by graph, alternating (same load), and one summary line each.
for spec in "${SPECS[@]}"; do
  for b in base new; do
    bin="$NEW"; [ "$b" = base ] && bin="$BASE_BIN"
    "$bin" "$REPS" "$W" "$spec" 2>&1 >/dev/null | grep '^| ' >> "$W/ab_$b.md.tmp"
  done
done
for b in base new; do
  mv "$W/ab_$b.md.tmp" "$W/ab_$b.md"
  # Column 13: CPU time ratio; 15 (builds since issue 21's seventh round):
  # nuce's wall time over METIS's CPU time (older builds: column 13 is that).
  awk -F'|' -v b="$b" '{c = $8 + 0; t = $13 + 0; w = (NF >= 16) ? $15 + 0 : t; n++
    lc += log(c); lt += log(t); lw += log(w)
    if (c > 1.10) o++; if (c > mc) mc = c; if (t > mt) mt = t; if (t > 3) t3++; if (w > mw) mw = w}
    END {printf "%s: %d cases, cut ratio gmean %.3f, max %.3f, %d above 1.10; time ratio gmean %.2f, max %.2f, %d above 3; wall ratio gmean %.2f, max %.2f\n",
      b, n, exp(lc / n), mc, o, exp(lt / n), mt, t3, exp(lw / n), mw}' "$W/ab_$b.md"
done
# Per mesh (issue 21's goals hold mesh by mesh): cut ratio geometric mean,
# max and cases above 1.10, time ratio geometric mean, base → new.
echo "| graph | cut gmean base → new | cut max base → new | > 1.10 base → new | time gmean base → new |"
echo "|---|---|---|---|---|"
awk -F'|' 'FNR == NR {b = "b"} FNR != NR {b = "n"} {g = $2; gsub(/ /, "", g)
    if (!(g in seen)) {seen[g] = 1; order[++m] = g}
    c = $8 + 0; t = $13 + 0; n[b, g]++; lc[b, g] += log(c); lt[b, g] += log(t)
    if (c > mc[b, g]) mc[b, g] = c; if (c > 1.10) o[b, g]++}
  END {for (i = 1; i <= m; i++) {g = order[i]
    printf "| %s | %.3f → %.3f | %.3f → %.3f | %d → %d | %.2f → %.2f |\n", g,
      exp(lc["b", g] / n["b", g]), exp(lc["n", g] / n["n", g]), mc["b", g], mc["n", g],
      o["b", g], o["n", g], exp(lt["b", g] / n["b", g]), exp(lt["n", g] / n["n", g])}}' \
  "$W/ab_base.md" "$W/ab_new.md"
echo "(every case: $W/ab_base.md, $W/ab_new.md)"
