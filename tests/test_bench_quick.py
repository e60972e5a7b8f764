#!/usr/bin/env python3
"""Smoke test of the sampling bench: `bench/run.py --quick` runs to the end and writes
its report, CSV files, targets and SVG plots, and they are well formed.
Usage: test_bench_quick.py MINIVM MINIVM_LIMITS. Prints `N passed, N failed`; exit status 1 on any
failure."""
import csv
import json
import os
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

from checks import check, finish

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
minivm, limits = (os.path.abspath(a) for a in sys.argv[1:3])


with tempfile.TemporaryDirectory() as out:
    p = subprocess.run([sys.executable, os.path.join(ROOT, "bench", "run.py"), "--quick", "--out", out,
                        "--minivm", minivm, "--limits", limits], capture_output=True, text=True, timeout=900)
    check("bench/run.py --quick finishes", p.returncode == 0, p.stdout[-2000:] + p.stderr[-2000:])
    report = open(os.path.join(out, "report.md")).read() if os.path.exists(os.path.join(out, "report.md")) else ""
    for heading in ("## Physical limits", "## Accuracy against the oracle", "## Honesty", "## Cost to the program",
                    "## Cooperative: suspension and safepoint latency", "## The oracle checked against perf",
                    "## Targets", "## Reading"):
        check(f"report has '{heading}'", heading in report)
    check("every run's accounting adds up", "adds up: yes, in every run" in report)
    for name in ("accuracy", "honesty", "overhead", "held_vs_depth", "held_vs_threads", "latency"):
        path = os.path.join(out, name + ".csv")
        rows = list(csv.reader(open(path))) if os.path.exists(path) else []
        check(f"{name}.csv has a header and data", len(rows) >= 2 and all(len(r) == len(rows[0]) for r in rows), rows[:3])
    acc = list(csv.DictReader(open(os.path.join(out, "accuracy.csv"))))
    coop = [float(r["exact_stack"]) for r in acc if r["sampler"] == "cooperative"]
    check("cooperative agrees with the oracle on >= 95% of samples in every quick workload",
          coop and min(coop) >= 0.95, coop)
    targets = json.load(open(os.path.join(out, "targets.json")))
    check("targets.json lists met/not met for each target", len(targets) >= 6 and all("met" in t for t in targets), targets)
    for name in ("accuracy", "held_vs_depth", "overhead", "latency"):
        try:
            root = ET.parse(os.path.join(out, name + ".svg")).getroot()
            ok = root.tag.endswith("svg")
        except (ET.ParseError, OSError) as e:
            ok = False
        check(f"{name}.svg is an SVG document", ok)

finish()
