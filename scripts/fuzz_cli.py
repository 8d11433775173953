#!/usr/bin/env python3
"""Campaign of hostile input for `nuce plan` (RELIABILITY.md, row 41).

Every combination below (about 3 000 runs) is run under `prlimit --as=2 GB`
and a wall-time limit; the script prints the runs that did not end with
status 0 or 2 within 2 s (a panic is 101, a signal a negative status, a
run killed past the limit TIMEOUT), then a summary line. The fast subset
that guards the same contract runs in `cargo test -p nuce-cli --test
fuzz_cli`.

    scripts/fuzz_cli.py target/release/nuce [TIMEOUT_S] [SUBCOMMANDS]

SUBCOMMANDS: comma-separated among array,distribute,tasks,divisible,pack
(default: all).
"""
import subprocess
import sys
import time


def cases():
    many = ",".join(["1"] * 10000)
    out = []
    for r in ["0", "1", "3", "1000", "18446744073709551615", "4294967296", "-1"]:
        for c in ["0", "1", "1000", "18446744073709551615"]:
            for s in ["1,2,3", "1,1,1,1", many, "1e308,1e-308"]:
                for a in ["best", "column", "xy", "tile", "kl", "rb", "rb3", "slices", "xy2", "rb2"]:
                    out.append(["plan", "array", "--rows", r, "--cols", c, "--speeds", s, "--algo", a])
    lists = ["1,2,3", "", "0", "-1,2", "nan", "inf,1", "1e308,1e308", "1e-308,1", "1,1e308", many, "1,,2"]
    for s in lists:
        for lat in ["0", "1e308", "-1", "nan"]:
            out.append(["plan", "array", "--rows", "50", "--cols", "40", "--speeds", s, "--latency", lat])
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
    counts = {"ok": 0, "error": 0, "panic": 0, "signal": 0, "timeout": 0, "slow": 0}
    start = time.time()
    for c in todo:
        t = time.time()
        try:
            p = subprocess.run(["prlimit", "--as=2000000000", exe] + c, stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE, timeout=limit)
            rc, err = p.returncode, p.stderr.decode(errors="replace")
        except subprocess.TimeoutExpired:
            rc, err = "TIMEOUT", ""
        dt = time.time() - t
        kind = {0: "ok", 2: "error", 101: "panic", "TIMEOUT": "timeout"}.get(rc, "signal")
        counts[kind] += 1
        if kind not in ("ok", "error") or dt > 2:
            counts["slow"] += dt > 2
            shown = [a if len(a) < 40 else a[:20] + "...(%d chars)" % len(a) for a in c]
            first = [l for l in err.splitlines() if "panicked" in l or "memory" in l or "error" in l][:1]
            print(rc, "%.1fs" % dt, " ".join(shown), first, flush=True)
    print("%d runs in %.0f s: %s" % (len(todo), time.time() - start, counts))


if __name__ == "__main__":
    main()
