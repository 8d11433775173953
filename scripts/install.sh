#!/usr/bin/env bash
# Builds the C API (crate nuce-capi) in release and installs it under PREFIX:
#   PREFIX/include/nuce.h
#   PREFIX/lib/libnuce.so, PREFIX/lib/libnuce.a
#   PREFIX/lib/pkgconfig/nuce.pc            (pkg-config --cflags --libs nuce)
#   PREFIX/lib/cmake/nuce/nuceConfig.cmake  (find_package(nuce) → nuce::nuce, nuce::nuce_static)
# Usage: scripts/install.sh PREFIX   (honours CARGO_TARGET_DIR)
set -euo pipefail
if [ $# -ne 1 ]; then
  echo "usage: $0 PREFIX" >&2
  exit 2
fi
mkdir -p "$1"
PREFIX="$(cd "$1" && pwd)"
cd "$(dirname "$0")/.."
cargo build --release -p nuce-capi
target="${CARGO_TARGET_DIR:-target}"
version="$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -n 1)"
install -d "$PREFIX/include" "$PREFIX/lib/pkgconfig" "$PREFIX/lib/cmake/nuce"
install -m 644 crates/nuce-capi/include/nuce.h "$PREFIX/include/nuce.h"
install -m 755 "$target/release/libnuce_capi.so" "$PREFIX/lib/libnuce.so"
install -m 644 "$target/release/libnuce_capi.a" "$PREFIX/lib/libnuce.a"
# The release profile keeps line tables for profiling; installed libraries do without.
if command -v strip >/dev/null; then
  strip --strip-debug "$PREFIX/lib/libnuce.so" "$PREFIX/lib/libnuce.a"
fi
# What the static library needs besides MPI and hwloc (rustc's native-static-libs).
static_libs="-lgcc_s -lutil -lrt -lpthread -lm -ldl -lc"
cat >"$PREFIX/lib/pkgconfig/nuce.pc" <<PC
prefix=$PREFIX
libdir=\${prefix}/lib
includedir=\${prefix}/include
# Static link: \${libdir}/libnuce.a, then \$(pkg-config --libs mpi hwloc) and these.
static_libs=$static_libs

Name: nuce
Description: Load balancing for MPI applications on heterogeneous clusters (C API, 2D arrays)
Version: $version
Requires: mpi hwloc
Libs: -L\${libdir} -lnuce
Libs.private: $static_libs
Cflags: -I\${includedir}
PC
cat >"$PREFIX/lib/cmake/nuce/nuceConfig.cmake" <<'CM'
# nuce: find_package(nuce REQUIRED) gives nuce::nuce (shared) and
# nuce::nuce_static, both carrying the include directory and MPI::MPI_C.
get_filename_component(_nuce_prefix "${CMAKE_CURRENT_LIST_DIR}/../../.." ABSOLUTE)
include(CMakeFindDependencyMacro)
find_dependency(MPI COMPONENTS C)
if(NOT TARGET nuce::nuce)
  add_library(nuce::nuce SHARED IMPORTED)
  set_target_properties(nuce::nuce PROPERTIES
    IMPORTED_LOCATION "${_nuce_prefix}/lib/libnuce.so"
    IMPORTED_SONAME libnuce.so
    INTERFACE_INCLUDE_DIRECTORIES "${_nuce_prefix}/include"
    INTERFACE_LINK_LIBRARIES MPI::MPI_C)
  add_library(nuce::nuce_static STATIC IMPORTED)
  set_target_properties(nuce::nuce_static PROPERTIES
    IMPORTED_LOCATION "${_nuce_prefix}/lib/libnuce.a"
    INTERFACE_INCLUDE_DIRECTORIES "${_nuce_prefix}/include"
    INTERFACE_LINK_LIBRARIES "MPI::MPI_C;hwloc;gcc_s;util;rt;pthread;m;dl")
endif()
unset(_nuce_prefix)
CM
sed -i "1i set(nuce_VERSION $version)" "$PREFIX/lib/cmake/nuce/nuceConfig.cmake"
echo "install.sh: nuce $version installed under $PREFIX" >&2
