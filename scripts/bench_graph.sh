#!/usr/bin/env bash
# Evaluation of nuce's graph partitioners against METIS ([KOR95], Tables 1–7):
# installs gmsh, gmsh-doc, sfepy meshes and metis when missing, generates the
# meshes under target/bench_graph (git-ignored), and prints Markdown
# (benchmarks/graph.md was written from its output).
#   scripts/bench_graph.sh [SAMPLES]      (default 3 samples per (p, ratio))
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh gmsh gmsh-doc python3-sfepy metis
SAMPLES="${1:-3}"
W=target/bench_graph
mkdir -p "$W"
T=$(dpkg -L gmsh-doc | grep '/tutorial/t4.geo' | head -1)
T5=$(dpkg -L gmsh-doc | grep '/tutorial/t5.geo' | head -1)
S=$(dpkg -L python3-sfepy | grep '/sfepy/meshes/2d/big.mesh$' | head -1)
C=$(dpkg -L python3-sfepy | grep '/sfepy/meshes/3d/special/cube_cylinder.mesh$' | head -1)
geo() { # gzipped or plain .geo → $W/$2.geo (t4 also needs its image)
  case "$1" in *.gz) zcat "$1" > "$W/$2.geo" ;; *) cp "$1" "$W/$2.geo" ;; esac
  cp "$(dirname "$1")/t4_image.png" "$W/" 2>/dev/null || true
}
geo "$T" t4; geo "$T5" t5
(cd "$W" && gmsh -2 t4.geo -format msh22 -clscale 0.3 -o t4_2d.msh > /dev/null \
         && gmsh -3 t5.geo -format msh22 -clscale 0.5 -o t5_3d.msh > /dev/null \
         && gmsh -2 t4.geo -format msh22 -clscale 0.1 -o t4_large.msh > /dev/null)
cargo build --release --example bench_graph
target/release/examples/bench_graph "$SAMPLES" "$W" \
  "gmsh-t4-2D=$W/t4_2d.msh" "sfepy-big-2D=$S" "sfepy-cube_cylinder-3D=$C" "gmsh-t5-3D=$W/t5_3d.msh" \
  --remap "gmsh-t4-large-2D=$W/t4_large.msh"
