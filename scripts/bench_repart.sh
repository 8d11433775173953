#!/usr/bin/env bash
# Repartitioning after a change of speeds (issue 13 item 2): index-based
# remap, migration-aware repartitioning at itr = 1, 10, 1000 and scratch
# partitioning on gmsh's t4 (2D) and t5 (3D) meshes and sfepy's
# cube_cylinder (3D). Installs gmsh, gmsh-doc, python3-sfepy and metis when
# missing; prints Markdown (benchmarks/graph.md, section "Repartitioning").
#   scripts/bench_repart.sh
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/graph_meshes.sh
cargo build --release --example bench_repart
target/release/examples/bench_repart \
  "gmsh-t4-2D=$W/t4_2d.msh" "gmsh-t4-large-2D=$W/t4_large.msh" \
  "sfepy-cube_cylinder-3D=$C" "gmsh-t5-3D=$W/t5_3d.msh"
