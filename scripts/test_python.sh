#!/usr/bin/env bash
# The Python package end to end: installs what is missing (apt: Debian's
# python3-mpi4py, python3-numpy, python3-pytest, python3-venv; pip: maturin)
# and builds and installs the package into a virtual environment
# (scripts/install_python.sh, default target/python-venv, or $NUCE_PY_VENV),
# then runs its tests (crates/nuce-py/tests) with pytest under mpirun on 1,
# 2 and 3 ranks, and checks that objects outliving MPI.Finalize do not
# crash the interpreter's exit. A few minutes (most of it the first build).
# NUCE_MPI=mpich: the same against MPICH (mpi4py built by pip with
# mpicc.mpich, mpirun.mpich; a separate environment, target/python-venv-mpich).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/env.sh
if [ "${NUCE_MPI:-}" = mpich ]; then
  venv="${NUCE_PY_VENV:-target/python-venv-mpich}" mpirun=(mpirun.mpich)
  export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-target/mpich}" MPICC=mpicc.mpich
else
  venv="${NUCE_PY_VENV:-target/python-venv}" mpirun=(mpirun)
fi
mkdir -p target
scripts/install_python.sh "$venv"
py="$venv/bin/python"
for n in 1 2 3; do
  echo "test_python: pytest on $n rank(s)"
  # Every rank runs every test (each test is collective); -x stops all
  # ranks alike only when they fail alike, so the job timeout bounds it.
  NUCE_TIMEOUT_S=30 timeout 300 "${mpirun[@]}" -np "$n" "$py" -m pytest -q -p no:cacheprovider --color=no \
    crates/nuce-py/tests >"target/test_python_$n.log" 2>&1 || {
    cat "target/test_python_$n.log" >&2
    echo "test_python: pytest failed on $n rank(s)" >&2
    exit 1
  }
  grep -E "passed|failed" "target/test_python_$n.log" | sort -u
  # Every rank says "rank R ok" (counted by rank: mpirun may interleave lines).
  out="$(timeout 120 "${mpirun[@]}" -np "$n" "$py" crates/nuce-py/tests/outlive_finalize.py 2>&1)" &&
    [ "$(grep -o "rank [0-9]* ok" <<<"$out" | sort -u | wc -l)" -eq "$n" ] || {
    echo "$out" >&2
    echo "test_python: outlive_finalize failed on $n rank(s)" >&2
    exit 1
  }
done
echo "test_python: the Python example"
timeout 120 "${mpirun[@]}" -np 3 "$py" examples/python/heat2d.py --check --phases 4 --iters 10 --n 400 --slow 1:4@1 |
  tee target/test_python_heat2d.log
grep -q "check: bit-identical" target/test_python_heat2d.log
grep -q "remaps: [1-9]" target/test_python_heat2d.log
echo "test_python: all passed"
