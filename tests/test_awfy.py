#!/usr/bin/env python3
"""Every Are We Fast Yet benchmark of bench/awfy/ at a small size in every execution mode
of tests/run_programs.py (the samplers' modes and the collector's stress modes among them):
each run must exit 0 having verified its result, as the suite's harness prints it.

A benchmark is a bench/awfy/*.mini file with a main; harness.mini and som.mini are its
library. The size is the harness's INNER_ITERATIONS, the smallest the benchmark verifies
(bench/awfy/run.py's table: most verify any; CD's aircraft fly in pairs, so it needs 2),
one outer iteration. Havlak is left out of the collector's stress modes: its smallest run
is the suite's fixed 51 loop searches over a 5213-block graph, over 20 minutes when every
return from the runtime collects; the output says so.

Usage: test_awfy.py MINIVM [--mode NAME ...] [--filter SUBSTR]
"""
import argparse
import concurrent.futures
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
AWFY = os.path.join(os.path.dirname(HERE), "bench", "awfy")
sys.path.insert(0, HERE)
from run_programs import MODES  # noqa: E402  (one table of execution modes)
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "bench"))
sys.path.insert(0, AWFY)
from run import SMALLEST  # noqa: E402  (bench/awfy/run.py: the smallest size each verifies)

# Modes a benchmark is too slow for, and why (printed with the results).
WITHOUT = {"Havlak": ({"xint-gc-a-lot", "xcomp-gc-a-lot", "tiered-gc-a-lot"},
                      "its smallest run is over 20 minutes when every return from the runtime collects")}

TIMEOUT = 120.0
MAIN_RE = re.compile(r"^fn main\(", re.M)


def benchmarks(substr):
    found = []
    for name in sorted(os.listdir(AWFY)):
        path = os.path.join(AWFY, name)
        if name.endswith(".mini") and substr in name:
            with open(path, encoding="utf-8") as f:
                if MAIN_RE.search(f.read()):
                    found.append(path)
    return found


def run(minivm, path, mode):
    """None when the run verified; else what went wrong."""
    name = os.path.basename(path)[:-len(".mini")]
    if name not in SMALLEST:
        return f"{name}: not in bench/awfy/run.py's table of benchmarks"
    cmd = [minivm, "run", *MODES[mode], "-D", "ITERATIONS=1", "-D", f"INNER_ITERATIONS={SMALLEST[name]}", path]
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, errors="replace", timeout=TIMEOUT,
                           stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        return f"{' '.join(cmd)}: timed out after {TIMEOUT:g} s"
    ran = re.search(rf"^{re.escape(name)}: iterations=1 runtime: \d+us$", p.stdout, re.M)
    if p.returncode == 0 and ran and "failed" not in p.stdout:
        return None
    tail = "\n".join((p.stdout + p.stderr).splitlines()[-8:])
    return f"{' '.join(cmd)}: exit {p.returncode}\n{tail}"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("minivm")
    ap.add_argument("--mode", action="append", choices=sorted(MODES))
    ap.add_argument("--filter", default="")
    args = ap.parse_args()
    files = benchmarks(args.filter)
    if not files:
        print(f"no benchmark in {AWFY} matches '{args.filter}'")
        return 1
    modes = args.mode or list(MODES)
    failures = 0
    for name, (skipped, why) in WITHOUT.items():
        if any(name == os.path.basename(f)[:-5] for f in files) and skipped & set(modes):
            print(f"note: {name} not run in {', '.join(sorted(skipped & set(modes)))}: {why}")
    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
        jobs = [(f, m, pool.submit(run, args.minivm, f, m)) for f in files for m in modes
                if m not in WITHOUT.get(os.path.basename(f)[:-5], (set(), ""))[0]]
        for f, m, job in jobs:
            problem = job.result()
            if problem:
                failures += 1
                print(f"FAIL {os.path.basename(f)} [{m}]\n{problem}\n", flush=True)
    # bench/awfy/run.py end to end, minivm alone at the smallest sizes: a report with a row
    # per benchmark and its three modes, no failure.
    if not args.mode and not args.filter:
        with tempfile.TemporaryDirectory() as out:
            p = subprocess.run([sys.executable, os.path.join(AWFY, "run.py"), "--quick", "--minivm", args.minivm,
                                "--out", out], capture_output=True, text=True, env={**os.environ, "AWFY_REPO": ""})
            report = open(os.path.join(out, "report.md")).read() if os.path.exists(os.path.join(out, "report.md")) else ""
            rows = [f for f in files if re.search(rf"^\| {os.path.basename(f)[:-5]} \| \d+ \|", report, re.M)]
            if p.returncode != 0 or len(rows) != len(files) or "no Are We Fast Yet checkout named" not in p.stdout:
                failures += 1
                print(f"FAIL bench/awfy/run.py --quick: exit {p.returncode}, {len(rows)} of {len(files)} rows\n"
                      f"{p.stdout[-2000:]}{p.stderr[-2000:]}")
    print(f"{len(jobs) - failures} passed, {failures} failed ({len(files)} benchmarks in {len(modes)} modes)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
