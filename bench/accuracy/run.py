#!/usr/bin/env python3
"""Can we know whether a profiler is accurate? The accuracy studies of the field, rerun on
Are We Fast Yet in minivm, where an exact oracle sees the same interruptions.

    python3 bench/accuracy/run.py                 # every benchmark, 30 runs each
    python3 bench/accuracy/run.py --quick         # three benchmarks, 3 runs, small sizes (CI)
    python3 bench/accuracy/run.py --awfy-repo DIR # also JFR 17 and JFR 25 on the suite's Java sources

Four sections, each a study of the literature asked of minivm's five samplers:
  - Aliasing (Mytkowicz et al., PLDI 2010): bench/accuracy/aliasing.mini spends the first
    half of every millisecond in `first`, the second in `second`; sampled every 1 ms
    exactly, then with `--interval-jitter=0.5`, K runs each: the spread of `first`'s share.
  - Stability and distance (Burchell and Marr, MPLR 2023): each benchmark K times under
    `--sampler=all`, so that every sampler ends the same interruptions as the oracle; per
    sampler, how many different hottest methods the K runs name, each top method's min /
    mean / max share, top-1 and top-5 agreement with the oracle of the same run, and the
    total variation distance (TVD) of the method and line self-time profiles to the oracle's,
    split by the counted reasons (failures, biased samples) and what nothing counted.
  - Actionability (Mytkowicz et al.; Burchell and Marr, OOPSLA 2025): the hottest line of
    each of the oracle's top methods slowed down (`--slowdown`) by as much time as the line
    takes (100% of its measured time, calibrated), and how much of the profile each sampler
    moves onto it against the oracle; and how far Divining's "expected" profile (the
    unslowed profile plus the added time on that line) is from what the oracle sees.
  - JFR on the JVM (with --awfy-repo and JDK 17 / JDK 25 present): the suite's own Java
    sources, K fresh JVMs each at JFR's 10 ms (`jdk.ExecutionSample`); hottest methods and
    their shares, before (17) and after (25) JEP 518. No oracle there.

Written to --out (default bench/results/DATE-accuracy/): report.md, accuracy.json (every
number the report states), runs.csv (every run, sampler), actionability.csv, and plots
(SVG, matplotlib): hottest-method shares per benchmark with min-max bars, and the distances.
The arithmetic is in metrics.py (tested by tests/test_accuracy.py on hand-made profiles).
"""
import argparse
import collections
import csv
import datetime
import importlib.util
import json
import os
import platform
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import metrics  # noqa: E402
import jfr_runs  # noqa: E402
import plots  # noqa: E402
import report  # noqa: E402

SAMPLERS = ["oracle", "cooperative", "safepoint", "classical", "async"]
TIMEOUT = 600
# (benchmark, INNER_ITERATIONS, ITERATIONS): sizes at which a tiered run takes about half a
# second of CPU on a 2-core machine (about 500 samples at 1 ms), at problem sizes the
# suite verifies. Quick: the suite's smallest verified sizes, a few iterations.
SIZES = [
    ("Bounce", 900, 10), ("List", 600, 10), ("Mandelbrot", 500, 10), ("NBody", 250000, 4),
    ("Permute", 500, 10), ("Queens", 600, 10), ("Sieve", 800, 10), ("Storage", 250, 10),
    ("Towers", 300, 10), ("CD", 100, 8), ("DeltaBlue", 8000, 10), ("Havlak", 1, 1),
    ("Json", 20, 8), ("Richards", 10, 10),
]
QUICK = [("DeltaBlue", 4000, 5), ("Richards", 10, 4), ("Json", 20, 3)]


def load_awfy_runner():
    """bench/awfy/run.py, for its harness parsing and its JDK and apt helpers (one owner)."""
    spec = importlib.util.spec_from_file_location("awfy_run", os.path.join(ROOT, "bench", "awfy", "run.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


AWFY = load_awfy_runner()


class RunFailed(Exception):
    pass


def read_events(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def run_minivm(args, tmp, name, inner, iterations, extra=()):
    """One profiled run under every sampler: (its .jsonl events, its statistics, its time in
    ns: the harness's own runtime of the benchmark's iterations, as Divining measures a
    slowdown, so that the VM's start-up and calibration are not in it)."""
    jsonl, stats = os.path.join(tmp, "run.jsonl"), os.path.join(tmp, "run.json")
    for p in (jsonl, stats):
        if os.path.exists(p):
            os.remove(p)
    program = os.path.join(ROOT, "bench", "awfy", f"{name}.mini")
    cmd = [args.minivm, "run", "--sampler=all", f"--interval={args.interval}", "-o", jsonl,
           f"--profile-stats={stats}", *extra, "-D", f"ITERATIONS={iterations}", "-D", f"INNER_ITERATIONS={inner}",
           program]
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, errors="replace", timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        raise RunFailed(f"timed out after {TIMEOUT} s: {' '.join(cmd)}")
    times = AWFY.harness_times(name, p.stdout)
    if p.returncode != 0 or len(times) != iterations:
        tail = "\n".join((p.stdout + p.stderr).strip().splitlines()[-6:])
        raise RunFailed(f"exit {p.returncode}, {len(times)} of {iterations} iterations: {' '.join(cmd)}\n{tail}")
    with open(stats) as f:
        return read_events(jsonl), json.load(f), sum(times) * 1000


# --- aliasing ----------------------------------------------------------------------------

def phase_shares(events, sampler):
    """The share of a sampler's samples with `first` (rather than `second`) on the stack."""
    first = second = 0
    for e in events:
        if e.get("sampler") != sampler or e["event"] not in metrics.SAMPLE_EVENTS:
            continue
        names = [f["function"] for f in e["stack"]]
        if "first" in names:
            first += 1
        elif "second" in names:
            second += 1
    return first / (first + second) if first + second else None


def measure_aliasing(args, tmp, log):
    program = os.path.join(HERE, "aliasing.mini")
    periods = 300 if args.quick else 2000
    out = {}
    for label, extra in (("fixed 1 ms", []), ("1 ms ± 50%", ["--interval-jitter=0.5"])):
        rows = collections.defaultdict(list)
        for k in range(args.runs):
            cmd = [args.minivm, "run", "--sampler=oracle,cooperative,safepoint", "--interval=1ms", *extra,
                   "-o", os.path.join(tmp, "alias.jsonl"), "-D", f"PERIODS={periods}", program]
            p = subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT)
            if p.returncode != 0:
                raise RunFailed(f"exit {p.returncode}: {' '.join(cmd)}\n{p.stderr[-800:]}")
            events = read_events(os.path.join(tmp, "alias.jsonl"))
            for s in ("oracle", "cooperative", "safepoint"):
                share = phase_shares(events, s)
                if share is not None:
                    rows[s].append(share)
        out[label] = dict(rows)
        log(f"aliasing {label}: oracle first-share " + " ".join(f"{x:.2f}" for x in rows["oracle"]))
    return out


# --- stability and distance ---------------------------------------------------------------

def measure_benchmark(args, tmp, name, inner, iterations, log):
    runs, times, rates = [], [], []
    for k in range(args.runs):
        events, stats, t = run_minivm(args, tmp, name, inner, iterations)
        runs.append(metrics.run_summary(metrics.read_outcomes(events)))
        times.append(t)
        rates.append(stats["rate"]["achieved_hz"] / stats["rate"]["asked_hz"] if stats["rate"]["asked_hz"] else None)
    summary = {s: metrics.across_runs(runs, s) for s in SAMPLERS}
    o = summary["oracle"]
    log(f"{name}: {len(runs)} runs, oracle hottest {o['hottest'] if o else None}, "
        f"cooperative tvd {summary['cooperative']['tvd_method']['max'] if summary['cooperative'] else None}")
    return {"runs": runs, "summary": summary, "time_ns": times, "rate": rates}


# --- actionability ------------------------------------------------------------------------

def slow_lines(result, k):
    """The hottest line (the oracle's, over every run) of each of the oracle's top k methods."""
    methods, lines = collections.Counter(), collections.Counter()
    for r in result["runs"]:
        o = r["oracle"]
        for m, s in o["method_shares"].items():
            methods[m] += s
        for line, s in o["line_shares"].items():
            lines[line] += s
    chosen = []
    for m in metrics.ranked(methods)[:k]:
        own = collections.Counter({line: s for line, s in lines.items() if line.rsplit(":", 1)[0] == m})
        line = metrics.hottest(own)
        if line and not line.endswith(":0") and not m.startswith("("):
            chosen.append(line)
    return chosen


def measure_actionability(args, tmp, name, inner, iterations, base, log):
    """Each slowed run alternates with an unslowed one, so that the time the slowdown added
    as the harness measures it (paired differences under the same load) can be set against
    the time it was asked to add (passes x ns, the VM counting every pass)."""
    base_lines = {s: [r[s]["line_shares"] for r in base["runs"] if s in r] for s in SAMPLERS}
    base_ns = sum(base["time_ns"]) / len(base["time_ns"])
    rows = []
    for line in slow_lines(base, args.slow_methods):
        share = sum(s.get(line, 0.0) for s in base_lines["oracle"]) / len(base_lines["oracle"])
        # How often control enters the line: a probe run at 1 ns a pass, which the VM counts.
        _, stats, _ = run_minivm(args, tmp, name, inner, iterations, [f"--slowdown={line}=1ns"])
        passes = stats["slowdown_passes"][0]
        target = share * base_ns * args.slowdown_percent / 100
        per_pass = int(min(1_000_000, max(1, round(target / passes)))) if passes else 0
        if not passes:
            log(f"{name}: {line} never ran in the probe run; not slowed")
            continue
        slowed, diffs, bases, asked = [], [], [], []
        for _ in range(args.slow_runs):
            _, _, b = run_minivm(args, tmp, name, inner, iterations)
            events, st, t = run_minivm(args, tmp, name, inner, iterations, [f"--slowdown={line}={per_pass}ns"])
            slowed.append(metrics.run_summary(metrics.read_outcomes(events)))
            diffs.append(t - b)
            bases.append(b)
            asked.append(st["slowdown_passes"][0] * per_pass)
        added_ns = sum(asked) / len(asked)
        paired_base = sum(bases) / len(bases)
        oracle_base = metrics.mean_shares(base_lines["oracle"])
        oracle_slowed = metrics.mean_shares([r["oracle"]["line_shares"] for r in slowed])
        expected = metrics.expected_profile(oracle_base, paired_base, added_ns, line)
        row = {"benchmark": name, "line": line, "ns_per_pass": per_pass, "passes": passes,
               "base_share": share, "added_ms": added_ns / 1e6, "measured_added_ms": sum(diffs) / len(diffs) / 1e6,
               "base_ms": paired_base / 1e6,
               "expected_share": expected.get(line),
               "divining_tvd": metrics.tvd_shares(expected, oracle_slowed),
               "divining_diff": metrics.largest_differences(expected, oracle_slowed, 3),
               "oracle_floor": metrics.mean_pairwise_tvd(base_lines["oracle"]),
               "moved": {s: metrics.slowdown_effect(base_lines[s], [r[s]["line_shares"] for r in slowed if s in r], line)
                         for s in SAMPLERS}}
        rows.append(row)
        log(f"{name} slowdown {line}={per_pass}ns x {passes}: added {row['added_ms']:.0f} ms (measured "
            f"{row['measured_added_ms']:.0f}) to {row['base_ms']:.0f} ms, oracle moved {row['moved']['oracle']:+.3f}, "
            f"expected {row['expected_share']:.3f} from {share:.3f}, divining tvd {row['divining_tvd']:.3f}")
    return rows


# --- JFR on the JVM ------------------------------------------------------------------------

def measure_jfr(args, tmp, log):
    names = args.jfr_benchmarks.split(",") if args.jfr_benchmarks else [n for n, _, _ in sizes(args)]
    unknown = [n for n in names if n not in {m for m, _, _ in SIZES}]
    if unknown:
        sys.exit(f"run.py: unknown benchmark {', '.join(unknown)} in --jfr-benchmarks")
    return jfr_runs.measure(args.awfy_repo, tmp, names, args.runs, log, AWFY)


# --- the report ----------------------------------------------------------------------------

def sizes(args):
    chosen = QUICK if args.quick else SIZES
    if args.benchmarks:
        wanted = args.benchmarks.split(",")
        unknown = [w for w in wanted if w not in {n for n, _, _ in SIZES}]
        if unknown:
            sys.exit(f"run.py: unknown benchmark {', '.join(unknown)} (known: {', '.join(n for n, _, _ in SIZES)})")
        chosen = [s for s in (QUICK if args.quick else SIZES) if s[0] in wanted] or \
                 [s for s in SIZES if s[0] in wanted]
    return chosen


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                 epilog="See the module docstring (python3 -m pydoc bench/accuracy/run.py).")
    ap.add_argument("--quick", action="store_true", help="three benchmarks at small sizes, 3 runs (CI-sized)")
    ap.add_argument("--runs", type=int, default=None, help="runs per benchmark and sampler (default 30; quick 3)")
    ap.add_argument("--slow-runs", type=int, default=None, help="runs per slowed line (default 5; quick 2)")
    ap.add_argument("--slow-methods", type=int, default=None, help="top methods whose hottest line is slowed "
                    "(default 5; quick 1)")
    ap.add_argument("--slowdown-percent", type=float, default=100.0,
                    help="time added to a slowed line, in percent of its measured time (default 100)")
    ap.add_argument("--interval", default="1ms", help="minivm's sampling interval (default 1ms)")
    ap.add_argument("--benchmarks", default="", help="comma-separated subset (default: all 14; quick: 3)")
    ap.add_argument("--awfy-repo", default=os.environ.get("AWFY_REPO", ""),
                    help="a checkout of smarr/are-we-fast-yet: also JFR 17 and 25 on its Java sources")
    ap.add_argument("--jfr-benchmarks", default="", help="comma-separated benchmarks JFR runs (default: those "
                    "minivm runs)")
    ap.add_argument("--minivm", default=os.path.join(ROOT, "build", "vm", "cli", "minivm"))
    ap.add_argument("--no-plots", action="store_true", help="no plots (matplotlib is not needed then)")
    ap.add_argument("--out", default="", help="the report's directory (default bench/results/DATE-accuracy)")
    args = ap.parse_args()
    args.runs = args.runs or (3 if args.quick else 30)
    args.slow_runs = args.slow_runs or (2 if args.quick else 5)
    args.slow_methods = args.slow_methods if args.slow_methods is not None else (1 if args.quick else 5)
    if args.runs < 2:
        sys.exit("run.py: --runs must be at least 2 (the study is about what runs agree on)")
    if not os.access(args.minivm, os.X_OK):
        sys.exit(f"run.py: no minivm at {args.minivm} (build first, or --minivm PATH)")
    out_dir = args.out or os.path.join(ROOT, "bench", "results", f"{datetime.date.today()}-accuracy")
    os.makedirs(out_dir, exist_ok=True)
    if not args.no_plots:
        plots.ensure_matplotlib(", or pass --no-plots")  # may install it, or run this again under Debian's python3

    def log(msg):
        print(msg, flush=True)

    data = {"args": {k: v for k, v in vars(args).items() if k != "minivm"}, "benchmarks": {}, "actionability": [],
            "machine": machine(), "failures": []}
    with tempfile.TemporaryDirectory(prefix="minivm-accuracy-") as tmp:
        data["aliasing"] = measure_aliasing(args, tmp, log)
        for name, inner, iterations in sizes(args):
            try:
                result = measure_benchmark(args, tmp, name, inner, iterations, log)
                data["benchmarks"][name] = result
                data["actionability"] += measure_actionability(args, tmp, name, inner, iterations, result, log)
            except RunFailed as e:
                data["failures"].append({"benchmark": name, "why": str(e)})
                log(f"{name}: FAILED: {e}")
        if args.awfy_repo:
            data["jfr"] = measure_jfr(args, tmp, log)
    report.write(out_dir, data, with_plots=not args.no_plots)
    print(f"wrote {out_dir}/report.md")
    return 1 if data["failures"] else 0


def machine():
    model = AWFY.cpu_model()
    commit = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    return {"cpu": model, "cores": os.cpu_count(), "python": platform.python_version(), "commit": commit,
            "date": str(datetime.date.today())}


if __name__ == "__main__":
    sys.exit(main())
