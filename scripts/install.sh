#!/usr/bin/env bash
# Builds the C API (crate nuce-capi) in release and installs it under PREFIX:
#   PREFIX/include/nuce.h
#   PREFIX/lib/libnuce.so, PREFIX/lib/libnuce.a
#   PREFIX/lib/pkgconfig/nuce.pc            (pkg-config --cflags --libs nuce)
#   PREFIX/lib/cmake/nuce/nuceConfig.cmake  (find_package(nuce) → nuce::nuce, nuce::nuce_static,
#                                            and nuce::nuce_fortran when the module was built)
#   PREFIX/include/nuce.mod, PREFIX/lib/libnuce_fortran.a, PREFIX/lib/pkgconfig/nuce-fortran.pc
#                                           (the Fortran module, compiled here by mpifort, or $FC
#                                            as the MPI Fortran compiler; skipped when there is none)
#   PREFIX/share/nuce/fortran/nuce.f90      (its source, to compile with another compiler)
#   PREFIX/include/nuce_petsc.h, PREFIX/lib/libnuce_petsc.so, PREFIX/lib/pkgconfig/nuce-petsc.pc
#                                           (the PETSc partitioner "nuce", built when pkg-config
#                                            finds PETSc and the MPI is Open MPI, Debian's PETSc's)
# Usage: scripts/install.sh PREFIX   (honours CARGO_TARGET_DIR)
# MPI: the one rsmpi's build finds through $MPICC (default mpicc, Open MPI on
# Debian). NUCE_MPI=mpich (or MPICC=mpicc.mpich) installs for MPICH: builds
# with mpicc.mpich, nuce.pc requires `mpich` instead of `mpi`, the CMake file
# points FindMPI at mpicc.mpich/mpicxx.mpich/mpifort.mpich (unless the project
# chose its MPI), and the Fortran module is compiled with mpifort.mpich.
set -euo pipefail
if [ $# -ne 1 ]; then
  echo "usage: $0 PREFIX" >&2
  exit 2
fi
mkdir -p "$1"
PREFIX="$(cd "$1" && pwd)"
cd "$(dirname "$0")/.."
case "${NUCE_MPI:-}:${MPICC:-}" in
  mpich:* | *:*mpich*)
    export MPICC="${MPICC:-mpicc.mpich}"
    mpi_pc=mpich fc_default=mpifort.mpich mpi_suffix=.mpich
    ;;
  *) mpi_pc=mpi fc_default=mpifort mpi_suffix="" ;;
esac
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
# Static link: \${libdir}/libnuce.a, then \$(pkg-config --libs $mpi_pc hwloc) and these.
static_libs=$static_libs

Name: nuce
Description: Load balancing for MPI applications on heterogeneous clusters (C API)
Version: $version
Requires: $mpi_pc hwloc
Libs: -L\${libdir} -lnuce
Libs.private: $static_libs
Cflags: -I\${includedir}
PC
cat >"$PREFIX/lib/cmake/nuce/nuceConfig.cmake" <<'CM'
# nuce: find_package(nuce REQUIRED) gives nuce::nuce (shared) and
# nuce::nuce_static, both carrying the include directory and MPI for the
# project's languages (MPI::MPI_C, else MPI::MPI_CXX; a Fortran-only project
# gets MPI through nuce::nuce_fortran).
get_filename_component(_nuce_prefix "${CMAKE_CURRENT_LIST_DIR}/../../.." ABSOLUTE)
include(CMakeFindDependencyMacro)
get_property(_nuce_langs GLOBAL PROPERTY ENABLED_LANGUAGES)
set(_nuce_mpi "")
if("C" IN_LIST _nuce_langs)
  find_dependency(MPI COMPONENTS C)
  set(_nuce_mpi MPI::MPI_C)
elseif("CXX" IN_LIST _nuce_langs)
  find_dependency(MPI COMPONENTS CXX)
  set(_nuce_mpi MPI::MPI_CXX)
endif()
if(NOT TARGET nuce::nuce)
  add_library(nuce::nuce SHARED IMPORTED)
  set_target_properties(nuce::nuce PROPERTIES
    IMPORTED_LOCATION "${_nuce_prefix}/lib/libnuce.so"
    IMPORTED_SONAME libnuce.so
    INTERFACE_INCLUDE_DIRECTORIES "${_nuce_prefix}/include"
    INTERFACE_LINK_LIBRARIES "${_nuce_mpi}")
  add_library(nuce::nuce_static STATIC IMPORTED)
  set_target_properties(nuce::nuce_static PROPERTIES
    IMPORTED_LOCATION "${_nuce_prefix}/lib/libnuce.a"
    INTERFACE_INCLUDE_DIRECTORIES "${_nuce_prefix}/include"
    INTERFACE_LINK_LIBRARIES "${_nuce_mpi};hwloc;gcc_s;util;rt;pthread;m;dl")
endif()
unset(_nuce_mpi)
unset(_nuce_langs)
unset(_nuce_prefix)
CM
# The Fortran module: compiled with the MPI Fortran wrapper (module files are
# specific to a compiler and its version, so the source is installed too).
install -d "$PREFIX/share/nuce/fortran"
install -m 644 crates/nuce-capi/fortran/nuce.f90 "$PREFIX/share/nuce/fortran/nuce.f90"
fc="${NUCE_MPI_FC:-$fc_default}"
if command -v "$fc" >/dev/null; then
  build="$(mktemp -d)"
  trap 'rm -rf "$build"' EXIT
  "$fc" -O2 -fPIC -c crates/nuce-capi/fortran/nuce.f90 -J "$build" -o "$build/nuce.o"
  ar rcs "$build/libnuce_fortran.a" "$build/nuce.o"
  install -m 644 "$build/nuce.mod" "$PREFIX/include/nuce.mod"
  install -m 644 "$build/libnuce_fortran.a" "$PREFIX/lib/libnuce_fortran.a"
  cat >"$PREFIX/lib/pkgconfig/nuce-fortran.pc" <<PC
prefix=$PREFIX
libdir=\${prefix}/lib
includedir=\${prefix}/include

Name: nuce-fortran
Description: Load balancing for MPI applications on heterogeneous clusters (Fortran module)
Version: $version
Requires: nuce
Libs: -L\${libdir} -lnuce_fortran
Cflags: -I\${includedir}
PC
  cat >>"$PREFIX/lib/cmake/nuce/nuceConfig.cmake" <<'CM'
# nuce::nuce_fortran: the Fortran module `nuce` (use nuce) over nuce::nuce;
# defined when the project enables Fortran.
get_property(_nuce_langs GLOBAL PROPERTY ENABLED_LANGUAGES)
if("Fortran" IN_LIST _nuce_langs AND NOT TARGET nuce::nuce_fortran)
  get_filename_component(_nuce_prefix "${CMAKE_CURRENT_LIST_DIR}/../../.." ABSOLUTE)
  find_dependency(MPI COMPONENTS Fortran)
  add_library(nuce::nuce_fortran STATIC IMPORTED)
  set_target_properties(nuce::nuce_fortran PROPERTIES
    IMPORTED_LOCATION "${_nuce_prefix}/lib/libnuce_fortran.a"
    INTERFACE_INCLUDE_DIRECTORIES "${_nuce_prefix}/include"
    INTERFACE_LINK_LIBRARIES "nuce::nuce;MPI::MPI_Fortran")
  unset(_nuce_prefix)
endif()
unset(_nuce_langs)
CM
else
  echo "install.sh: no MPI Fortran compiler ($fc): the Fortran module is not installed" >&2
fi
# The PETSc partitioner "nuce" (crates/nuce-capi/petsc): a small C library
# over libnuce and PETSc, built with the MPI C wrapper PETSc was built with
# (Debian's PETSc uses Open MPI: skipped for MPICH).
if [ -z "$mpi_suffix" ] && pkg-config --exists petsc; then
  "${MPICC:-mpicc}" -O2 -fPIC -shared -Wall -Werror crates/nuce-capi/petsc/nuce_petsc.c \
    -I crates/nuce-capi/include $(pkg-config --cflags petsc) -L "$PREFIX/lib" -lnuce \
    $(pkg-config --libs petsc) -Wl,-soname,libnuce_petsc.so -o "$PREFIX/lib/libnuce_petsc.so"
  install -m 644 crates/nuce-capi/petsc/nuce_petsc.h "$PREFIX/include/nuce_petsc.h"
  cat >"$PREFIX/lib/pkgconfig/nuce-petsc.pc" <<PC
prefix=$PREFIX
libdir=\${prefix}/lib
includedir=\${prefix}/include

Name: nuce-petsc
Description: The PETSc partitioner "nuce" (DMPlex cells in proportion to the ranks' speeds)
Version: $version
Requires: nuce petsc
Libs: -L\${libdir} -lnuce_petsc
Cflags: -I\${includedir}
PC
else
  echo "install.sh: PETSc not found (pkg-config petsc) or MPICH: the PETSc partitioner is not installed" >&2
fi
if [ -n "$mpi_suffix" ]; then
  # Built against MPICH: FindMPI must find MPICH's wrappers, not the default
  # (Open MPI) ones, unless the project already chose an MPI.
  cfg="$PREFIX/lib/cmake/nuce/nuceConfig.cmake"
  {
    echo "# Built against MPICH: FindMPI's wrappers, unless the project chose them."
    for l in C:mpicc CXX:mpicxx Fortran:mpifort; do
      w="$(command -v "${l#*:}$mpi_suffix" || echo "${l#*:}$mpi_suffix")"
      echo "set(MPI_${l%%:*}_COMPILER \"$w\" CACHE FILEPATH \"MPI ${l%%:*} wrapper (nuce was built against MPICH)\")"
    done
    cat "$cfg"
  } >"$cfg.new"
  mv "$cfg.new" "$cfg"
fi
sed -i "1i set(nuce_VERSION $version)" "$PREFIX/lib/cmake/nuce/nuceConfig.cmake"
echo "install.sh: nuce $version installed under $PREFIX (MPI: pkg-config $mpi_pc)" >&2
