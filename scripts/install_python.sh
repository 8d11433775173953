#!/usr/bin/env bash
# Builds and installs the Python package nuce (crates/nuce-py) into a
# virtual environment, with what it needs (idempotent):
#
#   scripts/install_python.sh [VENV]      # default VENV: target/python-venv
#   . VENV/bin/activate; mpirun -np 2 python -c 'import nuce'
#
# Debian's python3-mpi4py and python3-numpy (built against Debian's Open
# MPI) are installed through apt when missing (scripts/setup.sh), and the
# environment is made over /usr/bin/python3 with --system-site-packages so
# that it sees them; pip fetches maturin (the build backend) from PyPI into
# it once; then `pip install` builds the extension in release mode with
# cargo (honours CARGO_TARGET_DIR). NUCE_MPI=mpich: the same over MPICH
# (pip's mpi4py built with mpicc.mpich, the extension linked with MPICH).
set -euo pipefail
cd "$(dirname "$0")/.."
venv="$(realpath -m "${1:-target/python-venv}")"
py=/usr/bin/python3
scripts/setup.sh python3-venv python3-dev python3-numpy python3-pytest \
  $([ "${NUCE_MPI:-}" = mpich ] && echo "mpich libmpich-dev" || echo python3-mpi4py)
if [ ! -x "$venv/bin/python" ]; then
  mkdir -p "$(dirname "$venv")"
  "$py" -m venv --system-site-packages "$venv"
fi
pip=("$venv/bin/python" -m pip -q --disable-pip-version-check)
"$venv/bin/python" -c 'import maturin' 2>/dev/null || "${pip[@]}" install 'maturin>=1.5,<2'
if [ "${NUCE_MPI:-}" = mpich ]; then
  export MPICC=mpicc.mpich
  # mpi4py built against MPICH, in the venv (it shadows Debian's Open MPI one).
  "$venv/bin/python" -c 'import sys; from mpi4py import MPI; sys.exit("MPICH" not in MPI.Get_library_version())' 2>/dev/null ||
    "${pip[@]}" install --no-binary mpi4py --force-reinstall 'mpi4py>=3.1,<5'
fi
# No build isolation: the venv's maturin, numpy and mpi4py are used as they are
# (the backend runs the maturin program: the venv's bin first on PATH).
export PATH="$venv/bin:$PATH"
"${pip[@]}" install --no-build-isolation --no-deps --force-reinstall ./crates/nuce-py
"$venv/bin/python" -c 'import nuce; print("nuce", nuce.__version__, "installed in '"$venv"'")'
