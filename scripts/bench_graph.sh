#!/usr/bin/env bash
# Evaluation of nuce's graph partitioners against METIS ([KOR95], Tables 1–7):
# installs gmsh, gmsh-doc, sfepy meshes and metis when missing, generates the
# meshes under target/bench_graph (git-ignored), and prints Markdown
# (benchmarks/graph.md was written from its output).
#   scripts/bench_graph.sh [SAMPLES]      (default 3 samples per (p, ratio))
set -euo pipefail
cd "$(dirname "$0")/.."
SAMPLES="${1:-3}"
source scripts/graph_meshes.sh
cargo build --release --example bench_graph
target/release/examples/bench_graph "$SAMPLES" "$W" \
  "gmsh-t4-2D=$W/t4_2d.msh" "sfepy-big-2D=$S" "sfepy-cube_cylinder-3D=$C" "gmsh-t5-3D=$W/t5_3d.msh" \
  --remap "gmsh-t4-large-2D=$W/t4_large.msh"
