#!/usr/bin/env python3
"""Are We Fast Yet in minivm, beside Lua 5.4, LuaJIT and JDK 25 running the suite's own sources.

    python3 bench/awfy/run.py --awfy-repo DIR   # or AWFY_REPO=DIR: a checkout of smarr/are-we-fast-yet
    python3 bench/awfy/run.py                   # without one: minivm alone, said in one line
    python3 bench/awfy/run.py --quick           # every benchmark at its smallest size, once
    python3 bench/awfy/run.py --profile         # also each sampler's top methods, and compare pages

Every system runs a benchmark as the suite's harnesses do (`Harness X ITERATIONS INNER`),
and each prints every outer iteration's time (`X: iterations=1 runtime: 4811us`):
  - minivm --xint, --xcomp and tiered on bench/awfy/X.mini (-D ITERATIONS, -D INNER_ITERATIONS);
  - lua5.4 and luajit on the checkout's benchmarks/Lua/harness.lua, with lua-socket so that
    the Lua harness times wall-clock as the others do (without it, it falls back to CPU time);
  - JDK 25's java (--java, else a JDK 25 found on PATH or in /usr/lib/jvm) on the checkout's
    benchmarks/Java/src, compiled once with that JDK's javac into a temporary directory.
The bench installs lua5.4, luajit and lua-socket (Debian packages) when it can and they are
missing. Rounds alternate: round k runs every system once on a benchmark, in an order that
rotates from round to round, before round k + 1. A run whose harness does not verify its
result or exits non-zero is a failure, reported with its output, never a time.

The report, per benchmark and system: the first iteration (warm-up) apart from the steady
state (the median of the last half of the iterations), the spread of the steady state over
the rounds, and each minivm mode's ratio to every other system (the median of the rounds'
paired ratios, with their range), then the geometric means; the targets with verdicts; and,
for a missed target, where minivm's time goes (the oracle's top methods, from a profiled
run). It is written to --out (default bench/results/DATE-awfy/): report.md, awfy.csv (every
iteration of every run), ratios.svg.
"""
import argparse
import csv
import datetime
import glob
import importlib.util
import json
import math
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.dirname(HERE))
import charts  # noqa: E402

# The benchmarks: (name, the inner iterations each run uses, the smallest the benchmark
# verifies, outer iterations when not --iterations). The inner iterations are the suite's
# problem size where a benchmark verifies only some (Mandelbrot, NBody, CD, Havlak), else
# repetitions chosen so that one outer iteration of minivm --xint takes about 0.1-0.5 s on a
# 2-core machine. Havlak runs fewer outer iterations: one takes 15 s under lua5.4.
BENCHMARKS = [
    ("Bounce", 300, 1, None), ("List", 50, 1, None), ("Mandelbrot", 500, 1, None), ("NBody", 250000, 1, None),
    ("Permute", 100, 1, None), ("Queens", 100, 1, None), ("Sieve", 200, 1, None), ("Storage", 100, 1, None),
    ("Towers", 50, 1, None), ("CD", 100, 2, None), ("DeltaBlue", 2000, 1, None), ("Havlak", 1, 1, 4),
    ("Json", 20, 1, None), ("Richards", 10, 1, None),
]
SMALLEST = {name: smallest for name, _, smallest, _ in BENCHMARKS}
MACRO = {"CD", "DeltaBlue", "Havlak", "Json", "Richards"}
MINIVM_MODES = [("minivm --xint", ["--xint"]), ("minivm --xcomp", ["--xcomp"]), ("minivm tiered", [])]
TIMEOUT = 900
# The targets (issue "Are We Fast Yet in minivm"): (minivm system, other system, what is met).
INTERP, COMPILED = "minivm --xint", "minivm --xcomp"


def harness_times(name, out):
    """The per-iteration times (µs) a harness printed."""
    return [float(m) for m in re.findall(rf"^{re.escape(name)}: iterations=1 runtime: ([\d.]+)us\s*$", out, re.M)]


def apt_install(packages):
    """Installs Debian packages when running as root with apt-get; True when it ran and succeeded."""
    if os.geteuid() != 0 or shutil.which("apt-get") is None:
        return False
    print(f"installing {' '.join(packages)} (apt-get)", flush=True)
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    p = subprocess.run(["apt-get", "install", "-y", "-q", "--no-install-recommends", *packages],
                       capture_output=True, text=True, env=env)
    return p.returncode == 0


def lua_systems(repo):
    """[(name, argv prefix, cwd)] for lua5.4 and luajit on the checkout's Lua sources."""
    lua_dir = os.path.join(repo, "benchmarks", "Lua")
    if not os.path.isfile(os.path.join(lua_dir, "harness.lua")):
        print(f"note: {lua_dir}/harness.lua not found; no Lua systems")
        return []
    missing = [t for t in ("lua5.4", "luajit") if shutil.which(t) is None]
    socket_ok = lambda lua: subprocess.run([lua, "-e", "require('socket')"], capture_output=True).returncode == 0
    if missing or not all(socket_ok(t) for t in ("lua5.4", "luajit") if shutil.which(t)):
        apt_install(["lua5.4", "luajit", "lua-socket"])
    systems = []
    for tool in ("lua5.4", "luajit"):
        if shutil.which(tool) is None:
            print(f"note: {tool} is not installed (apt-get install {tool}); skipped")
            continue
        if not socket_ok(tool):
            print(f"note: {tool} has no lua-socket (apt-get install lua-socket): its harness times CPU, not wall-clock")
        systems.append((tool, [tool, "harness.lua"], lua_dir))
    return systems


def java_version(java):
    p = subprocess.run([java, "-version"], capture_output=True, text=True)
    m = re.search(r'version "(\d+)', p.stderr + p.stdout)
    return int(m.group(1)) if m else None


def find_jdk25(given):
    candidates = [given] if given else [shutil.which("java") or ""] + sorted(glob.glob("/usr/lib/jvm/*/bin/java"))
    for java in candidates:
        if java and os.access(java, os.X_OK) and java_version(java) == 25:
            return java
    return None


def java_system(repo, java, classes):
    """[(name, argv prefix, cwd)] for JDK 25 on the checkout's Java sources, compiled into `classes`."""
    src = os.path.join(repo, "benchmarks", "Java", "src")
    if java is None:
        print("note: no JDK 25 found (--java PATH); JDK 25 skipped")
        return []
    javac = os.path.join(os.path.dirname(java), "javac")
    sources = sorted(glob.glob(os.path.join(src, "**", "*.java"), recursive=True))
    if not sources or not os.access(javac, os.X_OK):
        print(f"note: no Java sources under {src} or no javac beside {java}; JDK 25 skipped")
        return []
    p = subprocess.run([javac, "-nowarn", "-d", classes, *sources], capture_output=True, text=True)
    if p.returncode != 0:
        print(f"note: javac failed on the suite's sources; JDK 25 skipped:\n{p.stderr[-2000:]}")
        return []
    return [("JDK 25", [java, "-cp", classes, "Harness"], src)]


def run_once(system, name, iterations, inner, minivm):
    """(per-iteration µs, None) or (None, why it failed)."""
    label, argv, cwd = system
    if label.startswith("minivm"):
        cmd = [minivm, "run", *argv, "-D", f"ITERATIONS={iterations}", "-D", f"INNER_ITERATIONS={inner}",
               os.path.join(HERE, f"{name}.mini")]
    else:
        cmd = [*argv, name, str(iterations), str(inner)]
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, errors="replace", cwd=cwd, timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        return None, f"timed out after {TIMEOUT} s: {' '.join(cmd)}"
    times = harness_times(name, p.stdout)
    if p.returncode != 0 or len(times) != iterations:
        tail = "\n".join((p.stdout + p.stderr).strip().splitlines()[-6:])
        return None, f"exit {p.returncode}, {len(times)} of {iterations} iterations: {' '.join(cmd)}\n{tail}"
    return times, None


def cpu_model():
    """The CPU's model name, as /proc/cpuinfo gives it ("" where it cannot be read)."""
    try:
        with open("/proc/cpuinfo") as f:
            return next((l.split(":", 1)[1].strip() for l in f if l.startswith("model name")), "")
    except OSError:
        return ""


def steady(times):
    """The steady state of one run: the median of the last half of its iterations."""
    return statistics.median(times[len(times) // 2:])


def geomean(xs):
    xs = [x for x in xs if x and x > 0]
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else None


def fmt_ms(us):
    return "-" if us is None else f"{us / 1000:.1f}" if us < 100_000 else f"{us / 1000:.0f}"


def fmt_ratio(r):
    return "-" if r is None else f"{r:.2f}"


def top_methods(jsonl_path, k):
    """{sampler: [(function, share of its samples)]}: the top frames' functions, by samples."""
    counts = {}
    with open(jsonl_path) as f:
        for line in f:
            e = json.loads(line)
            if e.get("event") not in ("ExecutionSample", "NativeMethodSample") or not e.get("stack"):
                continue
            per = counts.setdefault(e["sampler"], {})
            fn = e["stack"][0]["function"]
            per[fn] = per.get(fn, 0) + e.get("count", 1)
    out = {}
    for sampler, per in counts.items():
        total = sum(per.values())
        out[sampler] = [(fn, n / total) for fn, n in sorted(per.items(), key=lambda kv: -kv[1])[:k]]
    return out


def sampling_bench():
    """bench/run.py as a module (its perf_report reads perf's rows), loaded under its own name:
    this script is run.py too."""
    spec = importlib.util.spec_from_file_location("bench_sampling", os.path.join(os.path.dirname(HERE), "run.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def perf_top(minivm, mode_flags, name, inner, k):
    """The VM's own top symbols by perf's cpu-clock samples (interpreter templates and compiled
    methods by name, through --perf-map): [(symbol, share)], or None without perf."""
    if shutil.which("perf") is None:
        return None
    maps_before = set(glob.glob("/tmp/perf-*.map"))
    with tempfile.TemporaryDirectory(prefix="minivm-awfy-perf-") as d:
        data = os.path.join(d, "perf.data")
        cmd = ["perf", "record", "-q", "-e", "cpu-clock", "-F", "2000", "-o", data, "--", minivm, "run", *mode_flags,
               "--perf-map", "-D", "ITERATIONS=2", "-D", f"INNER_ITERATIONS={inner}", os.path.join(HERE, f"{name}.mini")]
        env = {**os.environ, "MINIVM_JITDUMP_DIR": d}
        if subprocess.run(cmd, capture_output=True, timeout=TIMEOUT, env=env).returncode != 0:
            return None
        rows = sampling_bench().perf_report(data, "symbol")
        for written in set(glob.glob("/tmp/perf-*.map")) - maps_before:  # the run's own map, read by now
            os.remove(written)
        return [(sym, pct / 100) for pct, sym, _ in rows[:k]]


def profile_run(minivm, mode_flags, name, inner, samplers, out_jsonl):
    cmd = [minivm, "run", *mode_flags, "--profile", f"--sampler={samplers}", "-o", out_jsonl,
           "-D", "ITERATIONS=2", "-D", f"INNER_ITERATIONS={inner}", os.path.join(HERE, f"{name}.mini")]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT)
    return p.returncode == 0 and os.path.exists(out_jsonl)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                 epilog="See the module docstring (python3 -m pydoc bench/awfy/run.py).")
    ap.add_argument("--awfy-repo", default=os.environ.get("AWFY_REPO", ""),
                    help="a checkout of smarr/are-we-fast-yet (default: $AWFY_REPO)")
    ap.add_argument("--minivm", default=os.path.join(ROOT, "build", "vm", "cli", "minivm"))
    ap.add_argument("--java", default="", help="the JDK 25 java to run (default: found on PATH or in /usr/lib/jvm)")
    ap.add_argument("--runs", type=int, default=3, help="alternating rounds per benchmark (default 3)")
    ap.add_argument("--iterations", type=int, default=10, help="outer iterations per run (default 10; Havlak 4)")
    ap.add_argument("--benchmarks", default="", help="comma-separated subset (default: all 14)")
    ap.add_argument("--quick", action="store_true", help="each benchmark at the smallest size it verifies, 2 outer iterations, one round")
    ap.add_argument("--profile", action="store_true",
                    help="also run each benchmark under --sampler=all: each sampler's top 10 methods beside the "
                         "oracle's, and minivm compare --html pages for the macro benchmarks")
    ap.add_argument("--out", default="", help="the report's directory (default bench/results/DATE-awfy)")
    ap.add_argument("--replot", metavar="DIR", help="only draw DIR/ratios.svg again from DIR/awfy.csv")
    args = ap.parse_args()
    if args.replot or args.awfy_repo:  # only beside other systems is there a plot
        charts.ensure_matplotlib()  # may install it, or run this script again under Debian's python3
    if args.replot:
        replot(args.replot)
        return 0

    minivm = os.path.abspath(args.minivm)
    if not os.access(minivm, os.X_OK):
        sys.exit(f"run.py: no minivm binary at {minivm} (build first, or pass --minivm)")
    known = [b[0] for b in BENCHMARKS]
    chosen = [b for b in args.benchmarks.split(",") if b] or known
    unknown = [b for b in chosen if b not in known]
    if unknown:
        sys.exit(f"run.py: unknown benchmark(s) {unknown}; known: {', '.join(known)}")
    benchmarks = [(n, smallest if args.quick else inner) for n, inner, smallest, _ in BENCHMARKS if n in chosen]
    outer = {n: (2 if args.quick else it or args.iterations) for n, _, _, it in BENCHMARKS}
    missing = [n for n, _ in benchmarks if not os.path.exists(os.path.join(HERE, f"{n}.mini"))]
    if missing:
        print(f"note: not yet ported to Mini, skipped: {', '.join(missing)}")
        benchmarks = [(n, i) for n, i in benchmarks if n not in missing]
    runs = 1 if args.quick else args.runs
    out_dir = args.out or os.path.join(ROOT, "bench", "results",
                                       datetime.date.today().isoformat() + ("-awfy-quick" if args.quick else "-awfy"))
    os.makedirs(out_dir, exist_ok=True)

    work = tempfile.TemporaryDirectory(prefix="minivm-awfy-")
    systems = [(label, flags, None) for label, flags in MINIVM_MODES]
    repo = os.path.abspath(args.awfy_repo) if args.awfy_repo else ""
    if not repo:
        print("note: no Are We Fast Yet checkout named (--awfy-repo DIR or AWFY_REPO): timing minivm alone")
    elif not os.path.isdir(os.path.join(repo, "benchmarks")):
        sys.exit(f"run.py: {repo} is not a checkout of smarr/are-we-fast-yet (no benchmarks/ in it)")
    else:
        systems += lua_systems(repo)
        systems += java_system(repo, find_jdk25(args.java), work.name)
    names = [s[0] for s in systems]

    # results[bench][system] = [per-iteration times of each round, or None for a failed round]
    results, failures = {}, []
    for bench, inner in benchmarks:
        results[bench] = {s: [] for s in names}
        for r in range(runs):
            k = r % len(systems)
            for system in systems[k:] + systems[:k]:
                times, why = run_once(system, bench, outer[bench], inner, minivm)
                results[bench][system[0]].append(times)
                if why:
                    failures.append(f"{bench} under {system[0]}: {why}")
            print(f"{bench}: round {r + 1} of {runs} done", flush=True)

    lines = report(results, benchmarks, names, runs, outer, failures, minivm, args, out_dir)
    with open(os.path.join(out_dir, "awfy.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["benchmark", "inner_iterations", "system", "round", "iteration", "runtime_us"])
        for bench, inner in benchmarks:
            for s in names:
                for r, times in enumerate(results[bench][s]):
                    for i, t in enumerate(times or []):
                        w.writerow([bench, inner, s, r + 1, i + 1, f"{t:.0f}"])
    with open(os.path.join(out_dir, "report.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))
    written = [f for f in ("report.md", "awfy.csv", "ratios.svg") if os.path.exists(os.path.join(out_dir, f))]
    print(f"\nwritten in {out_dir}: {', '.join(written)}")
    return 1 if failures else 0


# The plot shows the targets' ratios (the interpreter against lua5.4, compiled code against
# LuaJIT and against JDK 25), clipped at PLOT_MAX so that one far bar does not flatten the rest.
PLOTTED = [(INTERP, "lua5.4"), (COMPILED, "luajit"), (COMPILED, "JDK 25")]
PLOT_MAX = 4.0


def plot_ratios(path, categories, per_pair):
    series = [(f"{m.replace('minivm ', '')} / {o}", per_pair[(m, o)]) for m, o in PLOTTED if (m, o) in per_pair]
    charts.bar_chart(path, f"Are We Fast Yet: minivm's steady state / other systems (clipped at {PLOT_MAX:g})",
                     categories, series, "ratio (below 1: minivm faster)", y_max=PLOT_MAX)


def replot(out_dir):
    """ratios.svg again from out_dir/awfy.csv, as the run that wrote it computed it."""
    runs = {}  # (benchmark, system) -> {round: [times]}
    order = []
    with open(os.path.join(out_dir, "awfy.csv")) as f:
        for row in csv.DictReader(f):
            if row["benchmark"] not in order:
                order.append(row["benchmark"])
            runs.setdefault((row["benchmark"], row["system"]), {}).setdefault(int(row["round"]), []).append(
                float(row["runtime_us"]))
    per_pair = {}
    for m, o in PLOTTED:
        meds = []
        for b in order:
            mine, other = runs.get((b, m), {}), runs.get((b, o), {})
            ratios = [steady(mine[r]) / steady(other[r]) for r in mine if r in other and steady(other[r]) > 0]
            meds.append(statistics.median(ratios) if ratios else None)
        if any(x is not None for x in meds):
            per_pair[(m, o)] = meds
    plot_ratios(os.path.join(out_dir, "ratios.svg"), order, per_pair)


def describe_outer(outer, benchmarks):
    counts = {outer[b] for b, _ in benchmarks}
    if len(counts) == 1:
        return f"{counts.pop()} outer iterations"
    common = max(counts, key=lambda c: sum(outer[b] == c for b, _ in benchmarks))
    rest = ", ".join(f"{b} {outer[b]}" for b, _ in benchmarks if outer[b] != common)
    return f"{common} outer iterations ({rest})"


def report(results, benchmarks, names, runs, outer, failures, minivm, args, out_dir):
    def steadies(bench, s):
        return [steady(t) if t else None for t in results[bench][s]]

    def ratio(bench, a, b):
        """The median of the rounds' paired steady-state ratios a / b, and their range."""
        pairs = [x / y for x, y in zip(steadies(bench, a), steadies(bench, b)) if x and y]
        return (statistics.median(pairs), min(pairs), max(pairs)) if pairs else (None, None, None)

    cpu = cpu_model()
    L = [f"# Are We Fast Yet: minivm beside {', '.join(n for n in names if not n.startswith('minivm')) or 'nothing else'}",
         "",
         f"Generated by `python3 bench/awfy/run.py{' --quick' if args.quick else ''}"
         f"{' --awfy-repo DIR' if args.awfy_repo else ''}` on {datetime.date.today().isoformat()}, CPU: {cpu or 'unknown'}.",
         f"{runs} alternating round(s) per benchmark, {describe_outer(outer, benchmarks)} per run; times in ms per "
         "outer iteration. *first* is the first iteration (warm-up included); *steady* the median of the last half of the "
         "iterations, its range over the rounds in brackets.",
         ""]
    head = "| benchmark | inner | " + " | ".join(f"{n} first | {n} steady" for n in names) + " |"
    L += [head, "|" + "---|" * (2 + 2 * len(names))]
    for bench, inner in benchmarks:
        cells = []
        for s in names:
            ok = [t for t in results[bench][s] if t]
            if not ok:
                cells += ["failed", "failed"]
                continue
            st = [steady(t) for t in ok]
            first = statistics.median(t[0] for t in ok)
            spread = f" [{fmt_ms(min(st))}-{fmt_ms(max(st))}]" if len(st) > 1 else ""
            cells += [fmt_ms(first), fmt_ms(statistics.median(st)) + spread]
        L.append(f"| {bench} | {inner} | " + " | ".join(cells) + " |")

    others = [n for n in names if not n.startswith("minivm")]
    pairs = [(m, o) for m, _ in MINIVM_MODES for o in others]
    verdicts, plot_series = [], []
    if pairs:
        L += ["", "Steady-state ratios, minivm / other (below 1: minivm is faster): the median of the rounds' paired "
              "ratios, their range in brackets.", ""]
        L += ["| benchmark | " + " | ".join(f"{m.replace('minivm ', '')} / {o}" for m, o in pairs) + " |",
              "|" + "---|" * (1 + len(pairs))]
        per_pair = {p: [] for p in pairs}
        for bench, _ in benchmarks:
            cells = []
            for p in pairs:
                med, lo, hi = ratio(bench, *p)
                per_pair[p].append(med)
                cells.append(fmt_ratio(med) + (f" [{lo:.2f}-{hi:.2f}]" if med is not None and runs > 1 else ""))
            L.append(f"| {bench} | " + " | ".join(cells) + " |")
        L.append("| **geometric mean** | " + " | ".join(f"**{fmt_ratio(geomean(per_pair[p]))}**" for p in pairs) + " |")
        plot_ratios(os.path.join(out_dir, "ratios.svg"), [b for b, _ in benchmarks], per_pair)

        def target(text, mine, other, each):
            if other not in names:
                verdicts.append(f"- {text}: **not measured** ({other} did not run)")
                return []
            rs = {b: ratio(b, mine, other)[0] for b, _ in benchmarks}
            g = geomean(list(rs.values()))
            missed = [b for b, r in rs.items() if r is not None and r > 1.0] if each else []
            unmeasured = [b for b, r in rs.items() if r is None]
            met = g is not None and g <= 1.0 and not missed
            detail = f"geometric mean {fmt_ratio(g)}" + (f"; slower on {', '.join(missed)}" if missed else "")
            if unmeasured:
                detail += f"; no ratio for {', '.join(unmeasured)} (a failed run, or a time under 1 us)"
            verdicts.append(f"- {text}: **{'met' if met else 'missed'}** ({detail})")
            return missed if each else ([] if met else [b for b, r in rs.items() if r and r > 1.0])

        missed_interp = target("the interpreter faster than lua5.4 on the geometric mean and on each benchmark",
                               INTERP, "lua5.4", True)
        missed_jit = target("compiled code (--xcomp, steady state) at least as fast as LuaJIT on the geometric mean",
                            COMPILED, "luajit", False)
        if "JDK 25" in names:
            rs = ", ".join(f"{b} {fmt_ratio(ratio(b, COMPILED, 'JDK 25')[0])}" for b, _ in benchmarks)
            verdicts.append(f"- the limit, JDK 25 (C2, steady state): --xcomp / JDK 25 per benchmark: {rs}")
        L += ["", "## Targets", ""] + verdicts
        explain = sorted(set(missed_interp) | set(missed_jit))
        if explain and not args.quick:
            L += ["", "## Where the time goes on the missed targets", "",
                  "The oracle's top methods by self time (exact, from `minivm run --profile --sampler=oracle`), "
                  "two outer iterations, and the VM's own top symbols by `perf record` (interpreter templates and "
                  "compiled methods named through `--perf-map`):", ""]
            for bench in explain:
                inner = dict(benchmarks)[bench]
                for label, flags, wanted in (("--xint", ["--xint"], bench in missed_interp),
                                             ("--xcomp", ["--xcomp"], bench in missed_jit)):
                    if not wanted:
                        continue
                    path = os.path.join(tempfile.gettempdir(), f"minivm-awfy-{os.getpid()}-{bench}.jsonl")
                    if profile_run(minivm, flags, bench, inner, "oracle", path):
                        top = top_methods(path, 5).get("oracle", [])
                        L.append(f"- {bench} {label}: " + ", ".join(f"{fn} {100 * s:.0f}%" for fn, s in top))
                        os.remove(path)
                    else:
                        L.append(f"- {bench} {label}: the profiled run failed")
                    vm_top = perf_top(minivm, flags, bench, inner, 6)
                    if vm_top:
                        L.append("  - in the VM (perf, cpu-clock): " +
                                 ", ".join(f"{sym} {100 * s:.0f}%" for sym, s in vm_top))
    if args.profile:
        L += profiles(benchmarks, minivm, out_dir)
    if failures:
        L += ["", "## Failures", ""] + [f"- {f}" for f in failures]
    return L


def profiles(benchmarks, minivm, out_dir):
    """Each sampler's top 10 methods beside the oracle's, per benchmark (tiered), and compare pages."""
    L = ["", "## Profiles: each sampler's top 10 methods beside the oracle's (tiered, --sampler=all)", ""]
    for bench, inner in benchmarks:
        path = os.path.join(tempfile.gettempdir(), f"minivm-awfy-{os.getpid()}-{bench}-all.jsonl")
        if not profile_run(minivm, [], bench, inner, "all", path):
            L.append(f"- {bench}: the profiled run failed")
            continue
        tops = top_methods(path, 10)
        os.remove(path)
        order = ["oracle"] + [s for s in ("cooperative", "classical", "async", "safepoint") if s in tops]
        L += [f"### {bench}", ""]
        if not tops:
            L += ["no samples: the run was shorter than the sampling interval", ""]
            continue
        L += ["| rank | " + " | ".join(order) + " |", "|" + "---|" * (1 + len(order))]
        for k in range(max(len(t) for t in tops.values())):
            cells = [f"{tops[s][k][0]} {100 * tops[s][k][1]:.0f}%" if s in tops and k < len(tops[s]) else ""
                     for s in order]
            L.append(f"| {k + 1} | " + " | ".join(cells) + " |")
        if bench in MACRO:
            page = os.path.join(out_dir, f"compare-{bench}.html")
            p = subprocess.run([minivm, "compare", "--html", page, "-D", "ITERATIONS=2", "-D",
                                f"INNER_ITERATIONS={inner}", os.path.join(HERE, f"{bench}.mini")],
                               capture_output=True, text=True, timeout=TIMEOUT)
            L.append("" if p.returncode else f"\n[the compare page]({os.path.basename(page)})")
        L.append("")
    return L


if __name__ == "__main__":
    sys.exit(main())
