#!/usr/bin/env bash
# The C and Fortran APIs add no cost (issue 11): the same Jacobi solver in Rust
# (examples/heat2d.rs, --algo column: the C API's default decomposer), C
# (examples/c/heat2d.c) and Fortran (examples/fortran/heat2d.f90), on the same
# problem and heterogeneity, run interleaved on 2 ranks bound one per core.
# Reports the median time per iteration of the steady phases (from phase 2 on:
# the worst rank's wall time per iteration, as every example prints it) and
# the ratios to Rust.
#   scripts/bench_capi.sh [REPS]   (default 3; SIZE=1536 PHASES=8 ITERS=30)
set -euo pipefail
cd "$(dirname "$0")/.."
REPS="${1:-3}" SIZE="${SIZE:-1536}" PHASES="${PHASES:-8}" ITERS="${ITERS:-30}"
scripts/setup.sh
. scripts/env.sh
out=target/bench/capi
rm -rf "$out"
mkdir -p "$out"
scripts/install.sh "$out/prefix" 2>/dev/null
cargo build --release --example heat2d 2>/dev/null
export PKG_CONFIG_PATH="$out/prefix/lib/pkgconfig"
rpath="-Wl,-rpath,$out/prefix/lib"
mpicc -O2 examples/c/heat2d.c $(pkg-config --cflags --libs nuce) -lm "$rpath" -o "$out/c_heat2d"
mpifort -O2 examples/fortran/heat2d.f90 $(pkg-config --cflags --libs nuce-fortran) "$rpath" -o "$out/f_heat2d"
two() { NUCE_BIND="0:0,1:1" mpirun --bind-to none -np 2 scripts/bind_ranks.sh "$@"; }
args=(--rows "$SIZE" --cols "$SIZE" --phases "$PHASES" --iters "$ITERS")
for k in $(seq "$REPS"); do
  for het in none 1:3@0; do
    slow=()
    [ "$het" = none ] || slow=(--slowdown "$het")
    two target/release/examples/heat2d "${args[@]}" "${slow[@]}" --algo column --json --no-check >"$out/rust_${het}_$k.json"
    two "$out/c_heat2d" "${args[@]}" "${slow[@]}" >"$out/c_${het}_$k.txt"
    two "$out/f_heat2d" "${args[@]}" "${slow[@]}" >"$out/f_${het}_$k.txt"
  done
done
python3 - "$out" "$REPS" "$SIZE" <<'PY'
import json, re, sys, statistics as st
out, reps, size = sys.argv[1], int(sys.argv[2]), sys.argv[3]
def steady_rust(path):
    return [p["time_per_iter"] for p in json.load(open(path))["phases"][2:]]
def steady_table(path):
    rows = [l.split() for l in open(path) if re.match(r"^\s*\d+\s+[0-9.]+\s+(yes|no)\b", l)]
    assert rows, f"no phase lines in {path}"
    return [float(r[1]) for r in rows[2:]]
print(f"2 ranks one per core, {size}x{size}, steady phases (2 on), median over {reps} interleaved runs\n")
print("| heterogeneity | Rust s/iter | C s/iter | Fortran s/iter | C / Rust | Fortran / Rust |")
print("|---|---|---|---|---|---|")
for het in ("none", "1:3@0"):
    r = st.median(x for k in range(1, reps + 1) for x in steady_rust(f"{out}/rust_{het}_{k}.json"))
    c = st.median(x for k in range(1, reps + 1) for x in steady_table(f"{out}/c_{het}_{k}.txt"))
    f = st.median(x for k in range(1, reps + 1) for x in steady_table(f"{out}/f_{het}_{k}.txt"))
    name = "equal speeds" if het == "none" else "rank 1 does 3x the work"
    print(f"| {name} | {r:.5f} | {c:.5f} | {f:.5f} | {c / r:.3f} | {f / r:.3f} |")
PY
