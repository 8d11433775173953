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
scripts/setup.sh gmsh gmsh-doc python3-sfepy metis
REPS="${1:-3}"
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
mesh() { # dimension, geo, clscale, output: meshed once, kept in $W
  [ -s "$W/$4" ] || (cd "$W" && gmsh "-$1" "$2" -format msh22 -clscale "$3" -o "$4" > /dev/null)
}
mesh 2 t4.geo 0.3 t4_2d.msh
mesh 3 t5.geo 0.5 t5_3d.msh
mesh 2 t4.geo 0.1 t4_large.msh
mesh 3 t5.geo 0.25 t5_large.msh
cargo build --release --example bench_multilevel
target/release/examples/bench_multilevel "$REPS" "$W" \
  "gmsh-t4-2D=$W/t4_2d.msh" "sfepy-big-2D=$S" "gmsh-t4-large-2D=$W/t4_large.msh" \
  "sfepy-cube_cylinder-3D=$C" "gmsh-t5-3D=$W/t5_3d.msh" "gmsh-t5-large-3D=$W/t5_large.msh"
