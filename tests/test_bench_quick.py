#!/usr/bin/env python3
"""Smoke test of the sampling bench: `bench/run.py --quick` runs to the end and writes
its report, CSV files, targets and SVG plots (matplotlib's), and they are well formed; the statistics it
reads (`minivm run --profile-stats`) parse and add up.
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
sys.path.insert(0, os.path.join(ROOT, "bench"))
from run import sampler_names  # noqa: E402

minivm, limits = (os.path.abspath(a) for a in sys.argv[1:3])


with tempfile.TemporaryDirectory() as out:
    p = subprocess.run([sys.executable, os.path.join(ROOT, "bench", "run.py"), "--quick", "--out", out,
                        "--minivm", minivm, "--limits", limits], capture_output=True, text=True, timeout=900)
    check("bench/run.py --quick finishes", p.returncode == 0, p.stdout[-2000:] + p.stderr[-2000:])
    report = open(os.path.join(out, "report.md")).read() if os.path.exists(os.path.join(out, "report.md")) else ""
    for heading in ("## Physical limits", "## Accuracy against the oracle", "## Honesty", "## Cost to the program",
                    "## Cooperative: suspension and safepoint latency", "## The oracle checked against perf",
                    "## Memory over a long run", "## Stability under code unloading",
                    "## Cooperative samples whose frame escaped or was not found", "## Targets", "## Reading"):
        check(f"report has '{heading}'", heading in report)
    check("every run's accounting adds up", "adds up: yes, in every run" in report)
    check("the limits, the slowdown target and the reading name the 1 kHz signal's own cost (the floor)",
          "wakes for and signals every 1 ms (an empty handler, nothing else) runs" in report
          and "the floor: an empty handler signalled at 1 kHz costs" in report
          and "The floor under these: a thread signalled every 1 ms" in report, report[:3000])
    for name in ("accuracy", "honesty", "overhead", "held_vs_depth", "held_vs_threads", "latency", "stability", "escapes"):
        path = os.path.join(out, name + ".csv")
        rows = list(csv.reader(open(path))) if os.path.exists(path) else []
        check(f"{name}.csv has a header and data", len(rows) >= 2 and all(len(r) == len(rows[0]) for r in rows), rows[:3])
    acc = list(csv.DictReader(open(os.path.join(out, "accuracy.csv"))))
    # On the interruptions both sampled: on a loaded machine a thread long off its core
    # overflows its store of requests, and the requests left out are counted drops (in
    # honesty.csv), not disagreements.
    coop = [float(r["exact_stack_sampled"]) for r in acc if r["sampler"] == "cooperative"]
    check("cooperative agrees with the oracle on >= 95% of the interruptions both sampled in every quick workload",
          coop and min(coop) >= 0.95, [(r["workload"], r["exact_stack"], r["exact_stack_sampled"], r["samples"],
                                        r["oracle_samples"]) for r in acc if r["sampler"] == "cooperative"])
    mem = list(csv.DictReader(open(os.path.join(out, "memory.csv")))) if os.path.exists(os.path.join(out, "memory.csv")) else []
    check("memory.csv: every long run was measured and SIGINT left its profile written",
          len(mem) == 4 and all(r["sigint_ok"] == "True" and r["rss_kb_2s"] and r["rss_kb_6s"] for r in mem), mem)
    targets = json.load(open(os.path.join(out, "targets.json")))
    check("targets.json lists met/not met for each target", len(targets) >= 6 and all("met" in t for t in targets), targets)
    stab = {r["sampler"]: r for r in csv.DictReader(open(os.path.join(out, "stability.csv")))} \
        if os.path.exists(os.path.join(out, "stability.csv")) else {}
    coop_stab = stab.get("cooperative", {})
    check("stability: cooperative ran and shows no crash, disagreement, freed-code sample or hang",
          int(coop_stab.get("interruptions", 0)) > 0 and
          all(coop_stab.get(k) == "0" for k in ("crashes_caught", "disagreements", "freed_code_samples", "hangs", "died")),
          stab)
    esc = list(csv.DictReader(open(os.path.join(out, "escapes.csv")))) \
        if os.path.exists(os.path.join(out, "escapes.csv")) else []
    check("escapes: every mode and --suspend mode of every quick workload sampled, none escaped or not found",
          len(esc) >= 6 and all(r["samples"] and int(r["samples"]) > 0 and r["escaped_or_not_found"] == "0" for r in esc),
          [r for r in esc if r["escaped_or_not_found"] != "0" or not r["samples"] or int(r["samples"]) == 0]
          or esc[:6])
    for name in ("accuracy", "held_vs_depth", "overhead", "latency", "stability"):
        try:
            root = ET.parse(os.path.join(out, name + ".svg")).getroot()
            ok = root.tag == "{http://www.w3.org/2000/svg}svg" and any(
                (t.text or "").startswith("Matplotlib v") for t in root.iter("{http://purl.org/dc/elements/1.1/}title"))
        except (ET.ParseError, OSError):
            ok = False
        check(f"{name}.svg is an SVG document matplotlib drew", ok)
    rows = list(csv.reader(open(os.path.join(out, "latency_histogram.csv")))) \
        if os.path.exists(os.path.join(out, "latency_histogram.csv")) else []
    check("latency_histogram.csv has the latency plot's 40 bins", len(rows) == 41, rows[:3])

# The statistics run.py reads (--profile-stats), written beside --profile-out: they parse,
# list the samplers in report order, and every sampler's interruptions add up.
with tempfile.TemporaryDirectory() as out:
    stats_path, events_path = os.path.join(out, "s.json"), os.path.join(out, "e.jsonl")
    p = subprocess.run([minivm, "run", "--xcomp", "--profile", "--sampler=all", "--interval=500us",
                        f"--profile-stats={stats_path}", f"--profile-out={events_path}",
                        os.path.join(ROOT, "examples", "counted_loop_then_setter.mini")],
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, timeout=120)
    check("--profile-stats with --profile-out runs", p.returncode == 0, p.stderr)
    check("--profile-out is written too", os.path.exists(events_path) and os.path.getsize(events_path) > 0)
    try:
        stats = json.load(open(stats_path))
    except (OSError, ValueError):
        stats = None
    check("the stats JSON parses", stats is not None)
    samplers = (stats or {}).get("samplers", [])
    check("the stats list every sampler in report order",
          [s["name"] for s in samplers] == sampler_names(minivm), samplers)
    for s in samplers:
        ends = s["samples"] + sum(s["failed"].values()) + sum(s["dropped"].values())
        check(f"{s['name']}: samples + failed + dropped = interruptions, and says so",
              s["interruptions"] > 0 and ends == s["interruptions"] and s["accounted"] is True, s)
        check(f"{s['name']}: biased and truncated samples are part of the samples",
              sum(s["biased"].values()) <= s["samples"] and s["truncated"] <= s["samples"], s)
    timings = [(s["name"] + " " + k, s[k]) for s in samplers for k in ("suspension_ns", "latency_ns")]
    timings.append(("sampler thread per visit", (stats or {}).get("sampler_thread", {}).get("cpu_per_visit_ns")))
    for name, q in timings:
        ordered = q is not None and (q["p50"] <= q["p99"] <= q["max"] if q["n"] else
                                     q["p50"] is q["p99"] is q["max"] is None)
        check(f"{name}: p50 <= p99 <= max, or null when none were recorded", ordered, q)
    check("cooperative recorded its safepoint latencies", bool(samplers) and samplers[0]["latency_ns"]["n"] > 0, samplers[:1])

finish()
