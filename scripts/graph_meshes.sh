# Sourced by the graph benchmarks: installs gmsh, gmsh-doc, python3-sfepy and
# metis when missing, meshes gmsh's tutorials t4.geo (2D) and t5.geo (3D)
# into $W = target/bench_graph (git-ignored; kept between runs) and sets
# S (sfepy's big.mesh, 2D) and C (sfepy's cube_cylinder.mesh, 3D).
scripts/setup.sh gmsh gmsh-doc python3-sfepy metis
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
mesh() { # dimension, geo, clscale, output
  [ -s "$W/$4" ] || (cd "$W" && gmsh "-$1" "$2" -format msh22 -clscale "$3" -o "$4" > /dev/null)
}
mesh 2 t4.geo 0.3 t4_2d.msh
mesh 3 t5.geo 0.5 t5_3d.msh
mesh 2 t4.geo 0.1 t4_large.msh
