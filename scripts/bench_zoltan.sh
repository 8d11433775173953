#!/usr/bin/env bash
# nuce's geometric partitioners vs Zoltan's, side by side in one run (issue 13
# item 5): Rcb vs LB_METHOD=RCB and Hci vs LB_METHOD=HSFC, serial, same graphs,
# coordinates and part sizes, on the meshes of scripts/bench_multilevel.sh
# (gmsh tutorials t4 2D and t5 3D, sfepy's big.mesh 2D and cube_cylinder.mesh
# 3D), p ∈ {4, 8, 16}, uniform / two-class 1:4 / random targets. Installs
# gmsh, gmsh-doc, python3-sfepy, metis and libtrilinos-zoltan-dev when
# missing, builds benchmarks/zoltan_geom.c with mpicc and prints Markdown
# (benchmarks/graph.md, section "Geometric partitioners vs Zoltan").
#   scripts/bench_zoltan.sh [REPS]      (default 3: best time of 3 runs each)
set -euo pipefail
cd "$(dirname "$0")/.."
REPS="${1:-3}"
source scripts/graph_meshes.sh
mesh 3 t5.geo 0.25 t5_large.msh
scripts/setup.sh libtrilinos-zoltan-dev
. scripts/env.sh
mpicc -O2 -o "$W/zoltan_geom" benchmarks/zoltan_geom.c -I/usr/include/trilinos -ltrilinos_zoltan -lm
cargo build --release --example bench_zoltan
target/release/examples/bench_zoltan "$REPS" "$W" "$W/zoltan_geom" \
  "gmsh-t4-2D=$W/t4_2d.msh" "sfepy-big-2D=$S" "gmsh-t4-large-2D=$W/t4_large.msh" \
  "sfepy-cube_cylinder-3D=$C" "gmsh-t5-3D=$W/t5_3d.msh" "gmsh-t5-large-3D=$W/t5_large.msh"
