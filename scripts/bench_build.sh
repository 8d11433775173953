#!/usr/bin/env bash
# Build time of a fresh client crate that links nuce (issue: "linking the library costs a CLI"),
# before and after the workspace split, side by side in one run, each from an empty target dir.
#   scripts/bench_build.sh [OLD_REV]     (default OLD_REV: db8f566, the last single-crate commit)
# Prints one line per client: what it depends on, wall seconds, number of crates compiled.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh >/dev/null
old_rev=${1:-db8f566}
work=$(mktemp -d)
trap 'git worktree remove --force "$work/old" >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
git worktree add -q --detach "$work/old" "$old_rev"
client() { # name, dependency lines, main.rs
  mkdir -p "$work/$1/src"
  printf '[package]\nname = "%s"\nversion = "0.1.0"\nedition = "2021"\n\n[dependencies]\n%s\n' "$1" "$2" >"$work/$1/Cargo.toml"
  printf '%s\n' "$3" >"$work/$1/src/main.rs"
}
runtime_main='fn main() { let u = mpi::initialize().unwrap(); let _ = u; println!("{}", std::any::type_name::<nuce::internals::balancer::Balancer>()); }'
client before "nuce = { path = \"$work/old\" }
mpi = { version = \"0.8\", default-features = false }" "$runtime_main"
client after "nuce = { path = \"$PWD\" }
mpi = { version = \"0.8\", default-features = false }" "$runtime_main"
client plan_only "nuce-plan = { path = \"$PWD/crates/nuce-plan\" }" \
  'fn main() { let p = nuce_plan::array2d::ColumnDp::default(); let _ = p; }'
for c in before after plan_only; do
  (cd "$work/$c" && cargo generate-lockfile --offline -q 2>/dev/null || cargo generate-lockfile -q)
  t0=$(date +%s.%N)
  (cd "$work/$c" && CARGO_TARGET_DIR="$work/target-$c" cargo build --release --offline -q 2>"$work/$c.log") ||
    { echo "$c: build failed"; cat "$work/$c.log"; exit 1; }
  t1=$(date +%s.%N)
  n=$(find "$work/target-$c/release/deps" -name '*.rlib' | wc -l)
  heavy=$(cd "$work/$c" && cargo tree -e normal --prefix none --offline 2>/dev/null | sed 's/ (.*//' |
    grep -oE '^(clap|plotters|indicatif|tracing-subscriber|serde_json|mpi|hwloc2) ' | sort -u | tr '\n' ' ' || true)
  printf '%-10s %7.1f s  %3d crates  heavy deps: %s\n' "$c" "$(awk -v a="$t0" -v b="$t1" 'BEGIN{print b-a}')" "$n" "${heavy:-none}"
done
