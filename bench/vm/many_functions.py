#!/usr/bin/env python3
"""Code registration at scale: a Mini program of N small functions under --xcomp and --xint.

--xcomp compiles and registers every function before it runs, so its time over --xint's
is what registering N blobs costs. Writes the programs to a temporary directory, runs each
mode alternately (median of --runs), checks the printed checksum, and prints wall time, peak
RSS, the growth from one size to the next (about 2.0 when the cost is linear, 4.0 when
quadratic) and a verdict. Usage: bench/vm/many_functions.py [--minivm PATH] [--runs N] [--sizes 5000,10000,20000]
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
MODES = ["--xint", "--xcomp"]
GROUP = 100  # functions called by one caller, so that no function is huge
ABOUT = 3.0  # "about the time --xint needs": within this factor


def program(n):
    """N functions f_i(x) = 3x + i, called once each (through n / GROUP callers) from main."""
    lines = [f"fn f{i}(x: int): int {{ return x * 3 + {i}; }}" for i in range(n)]
    groups = (n + GROUP - 1) // GROUP
    for g in range(groups):
        calls = "".join(f" s += f{i}(1);" for i in range(g * GROUP, min(n, (g + 1) * GROUP)))
        lines.append(f"fn g{g}(): int {{ var s = 0;{calls} return s; }}")
    lines.append("fn main() {\n    var s = 0;")
    lines += [f"    s += g{g}();" for g in range(groups)]
    lines.append("    print(s);\n}")
    return "\n".join(lines) + "\n", 3 * n + n * (n - 1) // 2


def run(cmd):
    """Wall seconds and peak RSS (MB) of one run, and its stdout."""
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        t0 = time.perf_counter()
        pid = subprocess.Popen(cmd, stdout=out, stderr=err).pid
        _, status, usage = os.wait4(pid, 0)  # this child's own rusage: its peak RSS
        wall = time.perf_counter() - t0
        out.seek(0)
        err.seek(0)
        if os.waitstatus_to_exitcode(status) != 0:
            sys.exit(f"many_functions.py: '{' '.join(cmd)}' failed ({os.waitstatus_to_exitcode(status)}):\n{err.read()}")
        return wall, usage.ru_maxrss / 1024, out.read()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--minivm", default=os.path.join(HERE, "..", "..", "build", "vm", "cli", "minivm"))
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--sizes", default="5000,10000,20000")
    args = ap.parse_args()
    minivm = os.path.abspath(args.minivm)
    if not os.access(minivm, os.X_OK):
        sys.exit(f"many_functions.py: no minivm binary at {minivm} (build first, or pass --minivm)")
    sizes = [int(s) for s in args.sizes.split(",")]
    rows = []
    with tempfile.TemporaryDirectory(prefix="minivm-many-") as tmp:
        for n in sizes:
            text, expect = program(n)
            path = os.path.join(tmp, f"many{n}.mini")
            with open(path, "w") as f:
                f.write(text)
            walls = {m: [] for m in MODES}
            rss = {m: [] for m in MODES}
            for _ in range(args.runs):
                for m in MODES:
                    wall, mb, out = run([minivm, "run", m, path])
                    if out.strip() != str(expect):
                        sys.exit(f"many_functions.py: {m} on {n} functions printed {out.strip()!r}, expected {expect}")
                    walls[m].append(wall)
                    rss[m].append(mb)
            rows.append((n, {m: statistics.median(walls[m]) for m in MODES}, {m: max(rss[m]) for m in MODES}))

    print(f"\n{len(sizes)} programs of N functions; median wall time of {args.runs} alternating runs, peak RSS\n")
    print("| N | --xint s | --xcomp s | xcomp / xint | --xint MB | --xcomp MB | xcomp growth |")
    print("|---|---|---|---|---|---|---|")
    prev = None
    for n, wall, mb in rows:
        growth = f"{wall['--xcomp'] / prev[1]['--xcomp']:.2f} for {n / prev[0]:.1f}x N" if prev else "-"
        print(f"| {n} | {wall['--xint']:.3f} | {wall['--xcomp']:.3f} | {wall['--xcomp'] / wall['--xint']:.2f} | "
              f"{mb['--xint']:.0f} | {mb['--xcomp']:.0f} | {growth} |")
        prev = (n, wall)
    n, wall, _ = rows[-1]
    ratio = wall["--xcomp"] / wall["--xint"]
    verdict = "met" if ratio <= ABOUT else "NOT met"
    print(f"\nTarget 'the {n}-function program compiles in about the time --xint needs to start it' "
          f"(about = within {ABOUT:.0f}x): {verdict} ({ratio:.2f}x).")


if __name__ == "__main__":
    main()
