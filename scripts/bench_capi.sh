#!/usr/bin/env bash
# The C and Fortran APIs add no cost (issue 11): the same Jacobi solver in Rust
# (examples/heat2d.rs, --algo column: the C API's default decomposer), C
# (examples/c/heat2d.c) and Fortran (examples/fortran/heat2d.f90), on the same
# problem and heterogeneity, run interleaved on 2 ranks bound one per core.
# Reports the median time per iteration of the steady phases (from phase 2 on:
# the worst rank's wall time per iteration, as every example prints it), the
# ratios to Rust, and the worst rank's compute time per iteration (its sweeps
# and copies): what is not compute is the ghost exchange, nuce's calls and the
# wait for the slowest rank — where an API's cost would show.
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
def steady_rust(path, key="time_per_iter"):
    return [p[key] for p in json.load(open(path))["phases"][2:]]
def steady_table(path, col=1):
    rows = [l.split() for l in open(path) if re.match(r"^\s*\d+\s+[0-9.]+\s+[0-9.]+\s+(yes|no)\b", l)]
    assert rows, f"no phase lines in {path}"
    return [float(r[col]) for r in rows[2:]]
print(f"2 ranks one per core, {size}x{size}, steady phases (2 on), median over {reps} interleaved runs\n")
print("| heterogeneity | Rust s/iter | C s/iter | Fortran s/iter | C / Rust | Fortran / Rust | per-run medians C / Rust | per-run medians Fortran / Rust |")
print("|---|---|---|---|---|---|---|---|")
comp = {}
for het in ("none", "1:3@0"):
    runs = {
        "r": [steady_rust(f"{out}/rust_{het}_{k}.json") for k in range(1, reps + 1)],
        "c": [steady_table(f"{out}/c_{het}_{k}.txt") for k in range(1, reps + 1)],
        "f": [steady_table(f"{out}/f_{het}_{k}.txt") for k in range(1, reps + 1)],
    }
    med = {l: st.median(x for run in v for x in run) for l, v in runs.items()}
    # Runs k of the three languages ran back to back: their ratios show the spread.
    per = lambda l: " ".join(f"{st.median(a) / st.median(b):.2f}" for a, b in zip(runs[l], runs["r"]))
    name = "equal speeds" if het == "none" else "rank 1 does 3x the work"
    print(f"| {name} | {med['r']:.5f} | {med['c']:.5f} | {med['f']:.5f} | "
          f"{med['c'] / med['r']:.3f} | {med['f'] / med['r']:.3f} | {per('c')} | {per('f')} |")
    comp[name] = (
        st.median(x for k in range(1, reps + 1) for x in steady_rust(f"{out}/rust_{het}_{k}.json", "compute_per_iter_max")),
        st.median(x for k in range(1, reps + 1) for x in steady_table(f"{out}/c_{het}_{k}.txt", 2)),
        st.median(x for k in range(1, reps + 1) for x in steady_table(f"{out}/f_{het}_{k}.txt", 2)),
        med,
    )
print("\nThe same runs split: compute per iteration (worst rank) and the rest (ghost exchange, nuce, waiting)\n")
print("| heterogeneity | compute Rust | compute C | compute Fortran | rest Rust | rest C | rest Fortran |")
print("|---|---|---|---|---|---|---|")
for name, (r, c, f, med) in comp.items():
    print(f"| {name} | {r:.5f} | {c:.5f} | {f:.5f} | {med['r'] - r:.5f} | {med['c'] - c:.5f} | {med['f'] - f:.5f} |")
PY
