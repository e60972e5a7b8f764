#!/usr/bin/env python3
"""The accuracy bench (bench/accuracy/): its arithmetic on hand-made profiles, whose every
answer is worked out here by hand, then `run.py --quick` end to end on the real VM, where
what is checked is how the samplers relate to the oracle, never what the oracle measures.
Usage: test_accuracy.py MINIVM. Prints `N passed, N failed`."""
import collections
import json
import os
import random
import subprocess
import sys
import tempfile

from checks import check, finish

MINIVM = sys.argv[1]
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "bench", "accuracy"))
import metrics  # noqa: E402
import report  # noqa: E402

C = collections.Counter


def close(a, b, eps=1e-9):
    return a is not None and b is not None and abs(a - b) <= eps


# --- distances and rankings ---------------------------------------------------------------
check("tvd: a 3:1 profile against a 1:3 one is 0.5", close(metrics.tvd(C(a=3, b=1), C(a=1, b=3)), 0.5))
check("tvd: the same shares at different counts are 0", close(metrics.tvd(C(a=2, b=6), C(a=1, b=3)), 0.0))
check("tvd: nothing in common is 1", close(metrics.tvd(C(a=5), C(b=1)), 1.0))
check("tvd: an empty profile has no distance", metrics.tvd(C(), C(a=1)) is None)
check("ranked: most first, a tie by name", metrics.ranked(C(b=2, a=2, c=5)) == ["c", "a", "b"])
check("top-5 agreement: 3 of the reference's 5 in mine",
      close(metrics.top_k_agreement(C(a=9, b=8, c=7, x=6, y=5), C(a=9, b=8, c=7, d=6, e=5)), 0.6))
check("top-k agreement: a reference with 2 methods, both in mine", close(metrics.top_k_agreement(C(b=1, a=5, z=9), C(a=2, b=1)), 1.0))
check("sampling bound: one method cannot vary", close(metrics.sampling_bound(C(a=500)), 0.0))
b = metrics.sampling_bound(C(a=50, b=50))
# Half the samples on each of two methods, n = 100: the resampled share of a is binomial
# with sd 5%, so TVD = |share - 0.5| has its 95th percentile near 1.96 sd = 9.8%.
check(f"sampling bound: two even methods, 100 samples: near 0.098 ({b})", b is not None and 0.07 <= b <= 0.13)

# --- one run's interruptions --------------------------------------------------------------
def sample(sampler, i, fn, line, reason=None):
    e = {"event": "ExecutionSample", "sampler": sampler, "sample": i, "thread": 0, "biased": reason is not None,
         "stack": [{"function": fn, "line": line, "bci": 0, "kind": "jit"}, {"function": "main", "line": 1}]}
    if reason:
        e["reason"] = reason
    return e


def failed(sampler, i, reason):
    return {"event": "FailedSample", "sampler": sampler, "sample": i, "thread": 0, "reason": reason}


# Ten interruptions. The oracle: f:3 on 0-5, g:7 on 6-9. Safepoint: biased to g:8 on 0-1
# (taken at the poll), failed on 2, agrees elsewhere. Classical: agrees on 0-7, puts 8 on
# f:3 with no flag, and samples 10, which the oracle failed on.
events = [sample("oracle", i, "f", 3) for i in range(6)] + [sample("oracle", i, "g", 7) for i in range(6, 10)]
events += [failed("oracle", 10, "not_in_java"), {"event": "SafepointLatency", "sampler": "safepoint", "latency_ns": 5}]
events += [sample("safepoint", i, "g", 8, "taken_at_poll") for i in (0, 1)] + [failed("safepoint", 2, "not_walkable")]
events += [sample("safepoint", i, "f", 3) for i in (3, 4, 5)] + [sample("safepoint", i, "g", 7) for i in (6, 7, 8, 9)]
events += [sample("classical", i, "f", 3) for i in range(6)] + [sample("classical", i, "g", 7) for i in (6, 7, 9)]
events += [sample("classical", 8, "f", 3), sample("classical", 10, "h", 2)]
out = metrics.read_outcomes(events)
check("read_outcomes: every interruption of each sampler, latencies left out",
      {s: len(v) for s, v in out.items()} == {"oracle": 11, "safepoint": 10, "classical": 11})
check("read_outcomes: a biased sample keeps its reason, a failure its own",
      out["safepoint"][0].biased == "taken_at_poll" and out["safepoint"][2].failed == "not_walkable")
summary = metrics.run_summary(out)
sp, cl, o = summary["safepoint"], summary["classical"], summary["oracle"]
# Safepoint's methods: f 3, g 6 of 9 samples; the oracle's f 6, g 4 of 10.
check("run_summary: safepoint's hottest is g, the oracle's f", sp["hottest"] == "g" and o["hottest"] == "f" and sp["top1"] is False)
check("run_summary: safepoint's method TVD is |3/9 - 6/10| = 0.2667", close(sp["tvd_method"], 6 / 10 - 3 / 9))
# Lines: safepoint f:3 3/9, g:7 4/9, g:8 2/9; oracle f:3 .6, g:7 .4.
check("run_summary: safepoint's line TVD", close(sp["tvd_line"], (abs(3 / 9 - .6) + abs(4 / 9 - .4) + 2 / 9) / 2))
check("disagreement: of the oracle's 10, safepoint moved 2 (taken_at_poll) and failed 1",
      sp["split_method"] == {"biased: taken_at_poll": 0.2, "failed: not_walkable": 0.1})
check("disagreement: classical moved 1 unflagged and sampled 1 the oracle has not",
      cl["split_method"] == {"unflagged": 0.1, "oracle has no sample": 0.1})
check("the oracle against itself: no distance, its bound set", o["tvd_method"] == 0 and o["bound_method"] is not None)

# The TVD is at most the sum of the split, on any interruptions: random runs.
rng = random.Random(7)
worst = 0.0
for case in range(300):
    ev = []
    for i in range(rng.randint(1, 40)):
        if rng.random() < 0.1:
            ev.append(failed("oracle", i, "not_in_java"))
        else:
            ev.append(sample("oracle", i, rng.choice("abcd"), 1))
        r = rng.random()
        if r < 0.15:
            ev.append(failed("async", i, "pc_in_prologue"))
        elif r < 0.9:
            ev.append(sample("async", i, rng.choice("abcd"), 1, rng.choice([None, "stale_bcp"])))
    s = metrics.run_summary(metrics.read_outcomes(ev)).get("async")
    if s and s["tvd_method"] is not None:
        worst = max(worst, s["tvd_method"] - sum(s["split_method"].values()))
check(f"disagreement: on 300 random runs the TVD never exceeds the split's sum (worst excess {worst:.3g})", worst <= 1e-12)

# --- over runs ----------------------------------------------------------------------------
def run_of(oracle_counts, coop_counts):
    ev, i = [], 0
    for fn, n in oracle_counts.items():
        for _ in range(n):
            ev.append(sample("oracle", i, fn, 1))
            i += 1
    i = 0
    for fn, n in coop_counts.items():
        for _ in range(n):
            ev.append(sample("cooperative", i, fn, 1))
            i += 1
    return metrics.run_summary(metrics.read_outcomes(ev))


runs = [run_of({"a": 6, "b": 4}, {"a": 6, "b": 4}), run_of({"a": 3, "b": 7}, {"b": 10}), run_of({"a": 5, "b": 5}, {"a": 5, "b": 5})]
acc = metrics.across_runs(runs, "cooperative")
check("across_runs: the runs name a, b, a (a tie goes to the name first)", acc["hottest"] == {"a": 2, "b": 1} and acc["distinct_hottest"] == 2)
check("across_runs: a's share over the runs min 0, mean 11/30, max 0.6",
      close(acc["methods"]["a"]["min"], 0) and close(acc["methods"]["a"]["mean"], 11 / 30) and close(acc["methods"]["a"]["max"], 0.6))
check("across_runs: top-1 in all 3 runs, the TVD 0, 0.3, 0", acc["top1_runs"] == 3 and close(acc["tvd_method"]["max"], 0.3)
      and close(acc["tvd_method"]["mean"], 0.1))
check("across_runs: within the oracle's sampling error in the 2 runs at distance 0 and not at 0.3",
      acc["within_bound_method"] == 2, [r["oracle"]["bound_method"] for r in runs])

# --- slowdowns ----------------------------------------------------------------------------
exp = metrics.expected_profile({"x": 0.5, "y": 0.5}, 100.0, 100.0, "x")
check("expected profile: half of 100 ns on x, 100 ns added there: x 75%, y 25%", close(exp["x"], 0.75) and close(exp["y"], 0.25))
exp = metrics.expected_profile({"x": 1.0}, 100.0, 50.0, "z")
check("expected profile: the added time on a line with none before", close(exp["z"], 1 / 3) and close(exp["x"], 2 / 3))
check("slowdown effect: the line's mean share slowed minus unslowed",
      close(metrics.slowdown_effect([{"x": 0.1}, {"x": 0.2}], [{"x": 0.4}, {"x": 0.6, "y": 0.4}], "x"), 0.35))
check("largest differences: the keys furthest apart first",
      metrics.largest_differences({"x": 0.75, "y": 0.25}, {"x": 0.5, "y": 0.4, "z": 0.1}, 2) == [("x", 0.75, 0.5), ("y", 0.25, 0.4)])

# --- the report, from hand-made measurements ----------------------------------------------
with tempfile.TemporaryDirectory() as tmp:
    data = {"args": {"quick": True, "runs": 3, "slow_runs": 2, "interval": "1ms", "benchmarks": "", "awfy_repo": ""},
            "machine": {"date": "D", "commit": "C", "cpu": "CPU", "cores": 2}, "failures": [],
            "aliasing": {"fixed 1 ms": {"oracle": [0.9, 0.1, 0.5]}, "1 ms ± 50%": {"oracle": [0.5, 0.55, 0.45]}},
            "benchmarks": {"Toy": {"runs": runs, "summary": {s: metrics.across_runs(runs, s) for s in ["oracle", "cooperative"]},
                                   "time_ns": [1, 1, 1], "rate": [1, 1, 1]}},
            "actionability": [{"benchmark": "Toy", "line": "a:1", "ns_per_pass": 10, "passes": 5, "base_share": 0.5,
                               "added_ms": 1.0, "measured_added_ms": 1.1, "base_ms": 1.0, "expected_share": 0.75,
                               "divining_tvd": 0.2, "divining_diff": [("a:1", 0.75, 0.6)],
                               "moved": {"oracle": 0.2, "cooperative": 0.2}}]}
    report.write(tmp, data, with_plots=False)
    text = open(os.path.join(tmp, "report.md")).read()
    check("report: cooperative's top-1 verdict counts the hand-made runs (3 of 3: met)",
          "every run: **met** (3 of 3 runs)" in text, text[:1500])
    check("report: the TVD verdict counts the run at 0.3 as outside the sampling error (2 of 3)",
          "(bootstrap 95%): **not met** (2 of 3 runs)" in text, text[:1500])
    check("report: the aliasing spread, 80.0% fixed against 10.0% jittered, and the verdict it implies",
          "80.0% with a fixed interval, 10.0% with jitter. Fixed-period sampling aliases here" in text, text)
    check("report: Divining's row beyond the bound is listed with its lines",
          "Divining's expected profile within TVD 0.1 of the oracle: **not met** (0 of 1" in text and
          "`a:1` 75.0% / 60.0%" in text, text)
    rows = list(open(os.path.join(tmp, "runs.csv")))
    check("report: runs.csv has a row per run and sampler", len(rows) == 1 + 3 * 2, rows[:3])

# --- the bench on the real VM -------------------------------------------------------------
# What holds on any CPU and under load: cooperative sees what the oracle sees on the same
# interruptions (distance within the oracle's own sampling error in every run, and the same
# share moved onto each slowed line), and the slowdown adds time somewhere: a line slowed by
# its own time again gains share in the oracle's profile on at least one benchmark. Not on
# every one: on an out-of-order core the multiply chain can run beside the line's own work
# and add nothing (Richards' Scheduler.schedule:494 often moves nothing; bench/accuracy/
# README.md). A run that misses is retried with more runs before the check fails.
for runs_n, slow_runs in ((3, 2), (6, 5)):
    with tempfile.TemporaryDirectory() as tmp:
        cmd = [sys.executable, os.path.join(ROOT, "bench", "accuracy", "run.py"), "--quick", "--no-plots",
               "--runs", str(runs_n), "--slow-runs", str(slow_runs), "--minivm", MINIVM, "--out", tmp]
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=1200)
        ok = p.returncode == 0 and os.path.exists(os.path.join(tmp, "accuracy.json"))
        data = json.load(open(os.path.join(tmp, "accuracy.json"))) if ok else {}
        text = open(os.path.join(tmp, "report.md")).read() if ok else ""
    coop_ok = ok and all(r["cooperative"]["tvd_method"] <= max(r["oracle"]["bound_method"], 0.02)
                         for b in data["benchmarks"].values() for r in b["runs"])
    moved = [(r["moved"]["oracle"], r["moved"]["cooperative"]) for r in data.get("actionability", [])]
    same_moved = bool(moved) and all(abs(o - c) <= 0.02 for o, c in moved)
    if coop_ok and same_moved and max(o for o, _ in moved) > 0.02:
        break
    print(f"retrying with more runs: cooperative within the error {coop_ok}, moved (oracle, cooperative) {moved}",
          flush=True)
check(f"run.py --quick: exits 0 and writes its report ({' '.join(cmd[1:])})", ok, p.stdout[-1500:] + p.stderr[-1500:])
check("run.py --quick: the three benchmarks, each run with all five samplers",
      ok and sorted(data["benchmarks"]) == ["DeltaBlue", "Json", "Richards"] and
      all(sorted(r) == sorted(report.SAMPLERS) for b in data["benchmarks"].values() for r in b["runs"]))
check("run.py --quick: cooperative's method profile within the oracle's sampling error in every run", coop_ok,
      [(n, [round(r["cooperative"]["tvd_method"], 4) for r in b["runs"]]) for n, b in data.get("benchmarks", {}).items()])
check(f"run.py --quick: cooperative moves as much onto each slowed line as the oracle ({moved})", same_moved)
check(f"run.py --quick: a slowed line gains share in the oracle's profile ({moved})",
      bool(moved) and max(o for o, _ in moved) > 0.02)
check("run.py --quick: the report states the verdicts and the sections",
      all(s in text for s in ("## Verdicts", "## 1. Aliasing", "## 2. Hottest methods", "## 3. Actionability")), text[:800])
finish()
