#!/usr/bin/env python3
"""Campaign of hostile input for `nuce plan` (RELIABILITY.md, row 41).

Every combination below (about 3 000 runs) is run under `prlimit --as=2 GB`
and a wall-time limit; the script prints the runs that did not end with
status 0 or 2 within 2 s (a panic is 101, a signal a negative status, a
run killed past the limit TIMEOUT), and the accepted runs (status 0) whose
answer is wrong ("invalid"): a NaN in the output, or for `plan array`
(asked with `--json`) JSON that does not parse, holds a null, or a plan
whose parts do not tile the array cell by cell; then a summary line. The fast subset
that guards the same contract runs in `cargo test -p nuce-cli --test
fuzz_cli`.

    scripts/fuzz_cli.py target/release/nuce [TIMEOUT_S] [SUBCOMMANDS]

SUBCOMMANDS: comma-separated among array,distribute,tasks,divisible,pack
(default: all).
"""
import json
import subprocess
import sys
import time


def has_null(v):
    if v is None:
        return True
    if isinstance(v, list):
        return any(has_null(x) for x in v)
    if isinstance(v, dict):
        return any(has_null(x) for x in v.values())
    return False


def invalid(args, out):
    """Why an accepted run's output is wrong, or None."""
    if "NaN" in out:
        return "NaN in the output"
    if "--json" not in args:
        return None
    try:
        v = json.loads(out)
    except ValueError as e:
        return "bad JSON: %s" % e
    if has_null(v):
        return "null in the JSON"
    rows, cols, parts = v.get("rows"), v.get("cols"), v.get("parts")
    if not (isinstance(rows, int) and isinstance(cols, int) and isinstance(parts, list)):
        return None
    total = 0
    for p in parts:
        r, c, h, w = p["row"], p["col"], p["rows"], p["cols"]
        if p.get("area", h * w) != h * w or r + h > rows or c + w > cols:
            return "part %s inconsistent or outside the %dx%d array" % (p, rows, cols)
        total += h * w
    if total != rows * cols:
        return "parts cover %d of %d cells" % (total, rows * cols)
    if rows * cols <= 4_000_000:
        seen = bytearray(rows * cols)
        for p in parts:
            for i in range(p["row"], p["row"] + p["rows"]):
                row = seen[i * cols + p["col"]:i * cols + p["col"] + p["cols"]]
                if any(row):
                    return "cells of row %d in two parts" % i
                seen[i * cols + p["col"]:i * cols + p["col"] + p["cols"]] = b"\x01" * p["cols"]
    return None


def cases():
    many = ",".join(["1"] * 10000)
    out = []
    for r in ["0", "1", "3", "1000", "18446744073709551615", "4294967296", "-1"]:
        for c in ["0", "1", "1000", "18446744073709551615"]:
            for s in ["1,2,3", "1,1,1,1", many, "1e308,1e-308"]:
                for a in ["best", "column", "xy", "tile", "kl", "rb", "rb3", "slices", "xy2", "rb2"]:
                    out.append(["plan", "array", "--rows", r, "--cols", c, "--speeds", s, "--algo", a, "--json"])
    lists = ["1,2,3", "", "0", "-1,2", "nan", "inf,1", "1e308,1e308", "1e-308,1", "1,1e308", many, "1,,2"]
    for s in lists:
        for lat in ["0", "1e308", "-1", "nan"]:
            out.append(["plan", "array", "--rows", "50", "--cols", "40", "--speeds", s, "--latency", lat, "--json"])
    for b in ["0", "1", "1000", "100000000", "18446744073709551615"]:
        for m in ["static", "incremental", "lu", "panel"]:
            for p in ["0", "1", "1000000000", "18446744073709551615"]:
                for s in ["1,2,3", "1e308,1e308", "1e-308,1", many]:
                    out.append(["plan", "distribute", "--chunks", b, "--cycle-times", s, "--mode", m, "--period", p])
        out.append(["plan", "distribute", "--chunks", b, "--cycle-times", "1,2", "--mode", "panel",
                    "--rows", "18446744073709551615"])
    for s in lists:
        out.append(["plan", "distribute", "--chunks", "10", "--cycle-times", s])
    numbers = ["0", "-1", "nan", "inf", "1e308", "18446744073709551615", "", "1e-308", "3"]
    for s in lists + ["1,3"]:
        for d in numbers:
            for tc in ["0", "1", "1e308"]:
                for goal in ["--deadline", "--tasks"]:
                    out.append(["plan", "tasks", "--cycle-times", s, goal, d, "--tcom", tc])
                    out.append(["plan", "tasks", "--cycle-times", s, goal, d, "--tcom", tc, "--tcom-return", "1"])
    costs = ["1,1", "0,0", "1e308,1e308", "1e10,1e10", "-1,1", "nan,1", "inf,1", "1e-308,1e308", "1", ""]
    for v in costs:
        for w in ["auto", "0", "1", "5", "10000", "18446744073709551615"]:
            out.append(["plan", "divisible", "--input", v, "--compute", v, "--output", v, "--workers", w])
            out.append(["plan", "divisible", "--input", "1,1", "--compute", v, "--output", "1,1", "--workers", w,
                        "--units", "18446744073709551615"])
        for mw in ["0", "1000", "18446744073709551615"]:
            out.append(["plan", "divisible", "--input", "0,1", "--compute", v, "--output", "0,1", "--max-workers", mw])
    grids = ["30x20,15x40", "0x0", "18446744073709551615x1", "1x18446744073709551615", "",
             ",".join(["3x4"] * 10000), "-1x2", "1e3x2"]
    for g in grids:
        for m in ["4x4", "0x0", "18446744073709551615x18446744073709551615", "4096x4096", "1x1"]:
            for a in ["tp", "lp"]:
                out.append(["plan", "pack", "--grids", g, "--mesh", m, "--algo", a])
        for d in ["0", "1", "30", "63", "64", "4294967295"]:
            out.append(["plan", "pack", "--grids", g, "--cube", d])
    return out


def main():
    exe = sys.argv[1]
    limit = float(sys.argv[2]) if len(sys.argv) > 2 else 10.0
    keep = sys.argv[3].split(",") if len(sys.argv) > 3 else None
    todo = [c for c in cases() if keep is None or c[1] in keep]
    counts = {"ok": 0, "error": 0, "panic": 0, "signal": 0, "timeout": 0, "slow": 0, "invalid": 0}
    start = time.time()
    for c in todo:
        t = time.time()
        try:
            p = subprocess.run(["prlimit", "--as=2000000000", exe] + c, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, timeout=limit)
            rc, err = p.returncode, p.stderr.decode(errors="replace")
            out = p.stdout.decode(errors="replace")
        except subprocess.TimeoutExpired:
            rc, err, out = "TIMEOUT", "", ""
        dt = time.time() - t
        kind = {0: "ok", 2: "error", 101: "panic", "TIMEOUT": "timeout"}.get(rc, "signal")
        why = invalid(c, out) if kind == "ok" else None
        if why:
            kind, err = "invalid", why
        counts[kind] += 1
        if kind not in ("ok", "error") or dt > 2:
            counts["slow"] += dt > 2
            shown = [a if len(a) < 40 else a[:20] + "...(%d chars)" % len(a) for a in c]
            first = [l for l in err.splitlines()
                     if kind == "invalid" or "panicked" in l or "memory" in l or "error" in l][:1]
            print(rc, "%.1fs" % dt, " ".join(shown), first, flush=True)
    print("%d runs in %.0f s: %s" % (len(todo), time.time() - start, counts))


if __name__ == "__main__":
    main()
