#!/usr/bin/env bash
# nuce's multilevel partitioner vs `gpmetis -tpwgts`, side by side in one run
# (issue 13): the meshes of scripts/bench_graph.sh (gmsh tutorials t4 2D and
# t5 3D at two sizes each, sfepy's big.mesh 2D and cube_cylinder.mesh 3D),
# p ∈ {4, 8, 16}, uniform / two-class 1:4 / random targets. Installs gmsh,
# gmsh-doc, python3-sfepy and metis when missing; prints Markdown
# (benchmarks/graph.md, section "Multilevel vs METIS", was written from it).
#   scripts/bench_multilevel.sh [REPS]      (default 3: best time of 3 runs each)
set -euo pipefail
cd "$(dirname "$0")/.."
REPS="${1:-3}"
source scripts/graph_meshes.sh
mesh 3 t5.geo 0.25 t5_large.msh
cargo build --release -p nuce-plan --example bench_multilevel
NUCE_PS=4,8,16 target/release/examples/bench_multilevel "$REPS" "$W" \
  "gmsh-t4-2D=$W/t4_2d.msh" "sfepy-big-2D=$S" "gmsh-t4-large-2D=$W/t4_large.msh" \
  "sfepy-cube_cylinder-3D=$C" "gmsh-t5-3D=$W/t5_3d.msh" "gmsh-t5-large-3D=$W/t5_large.msh"
