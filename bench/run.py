#!/usr/bin/env python3
"""Cooperative versus classical sampling, measured against ground truth, in one command.

    python3 bench/run.py [--quick] [--out DIR] [--minivm PATH] [--limits PATH] [--runs N]

Runs the workloads (bench/workloads/*.mini and the bias classics in examples/) under every
sampler and writes DIR (default bench/results/<today>/): report.md (tables, targets met
or not, a short reading), one CSV per table, and SVG plots. What each number means is in
bench/README.md. Stdlib only, but for the plots: bench/charts.py draws them with matplotlib
(python3-matplotlib), running this script again under Debian's python3 if need be.

Each profiled run's numbers come from the statistics it writes (`--profile-stats`) and,
where stacks matter, its events (`.jsonl`). The `measure_*` functions run minivm and
return plain data; the `write_*` functions turn that data into the report, the CSV files
and the plots; `main` runs the one, then the other. The stability section (code unloading
under sampling) lives in bench/stability.py, the escaped-frames section (cooperative
samples whose frame was not found at the poll) in bench/escapes.py.
"""
import argparse
import collections
import datetime
import json
import os
import re
import resource
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import sample_cost  # noqa: E402
import escapes  # noqa: E402
import stability  # noqa: E402
import charts  # noqa: E402

# The samplers in report order and those compared with the oracle: read from the binary's
# own table (`minivm help samplers`, sampler/profile/samplers.def) by make_plan.
SAMPLERS = []
# Extra flags of the accuracy runs: `--native-frames` (bench option) compares mixed C/C++
# and Mini stacks with the oracle's, frame for frame.
ACCURACY_FLAGS = []
COMPARED = []

# name, program, extra flags, kind ("classic": a bias classic from examples/).
WORKLOADS = [
    ("counted_loop_then_setter", "examples/counted_loop_then_setter.mini", [], "classic"),
    ("chain_of_nine_calls", "examples/chain_of_nine_calls.mini", [], "classic"),
    ("loop_in_inlined_callee", "examples/loop_in_inlined_callee.mini", [], "classic"),
    ("tiny_function_in_hot_loop", "examples/tiny_function_in_hot_loop.mini", [], "classic"),
    ("arraycopy_heavy", "examples/arraycopy_heavy.mini", [], "classic"),
    ("interpreted_only", "examples/interpreted_only.mini", ["--xint"], "classic"),
    ("native_beside_java", "examples/native_beside_java.mini", [], "classic"),
    ("deep_recursion", "bench/workloads/deep_recursion.mini", [], "workload"),
    ("many_short_methods", "bench/workloads/many_short_methods.mini", [], "workload"),
    ("interpreter_only", "bench/workloads/interpreter_only.mini", ["--xint"], "workload"),
    ("tier_up_mix", "bench/workloads/tier_up_mix.mini", [], "workload"),
    ("arraycopy_loop", "bench/workloads/arraycopy_loop.mini", [], "workload"),
    ("crc32_loop", "bench/workloads/crc32_loop.mini", ["--xcomp"], "workload"),
    ("native_thread", "bench/workloads/native_thread.mini", [], "workload"),
    ("sleeping_thread", "bench/workloads/sleeping_thread.mini", [], "workload"),
] + [(f"threads_{n}", f"bench/workloads/threads.mini@THREADS={n}", [], "workload") for n in (1, 2, 4, 8, 16, 32)]
QUICK_WORKLOADS = ["counted_loop_then_setter", "many_short_methods", "arraycopy_loop", "deep_recursion", "threads_2"]
COST_WORKLOADS = ["many_short_methods", "deep_recursion", "threads_2", "crc32_loop"]  # runs of ~0.5-1 s
DEPTHS = [10, 50, 100, 200, 500]
THREAD_COUNTS = [1, 2, 4, 8, 16, 32]
RATES = [("100 Hz", "10ms"), ("1 kHz", "1ms")]


# --- running minivm ---------------------------------------------------------------------

class Bench:
    def __init__(self, args):
        self.minivm = os.path.abspath(args.minivm)
        self.tmp = tempfile.mkdtemp(prefix="minivm-bench-")
        self.runs = 0

    def program(self, spec):
        """A workload path, with `@NAME=value` substituting `var NAME: int = ...;`."""
        path, _, subst = spec.partition("@")
        path = os.path.join(ROOT, path)
        if not subst:
            return path
        name, value = subst.split("=")
        with open(path) as f:
            text = f.read()
        text, n = re.subn(rf"^var {name}: int = \d+;", f"var {name}: int = {value};", text, flags=re.M)
        if n != 1:
            sys.exit(f"bench: {path} has no 'var {name}: int = N;' line")
        out = os.path.join(self.tmp, f"{os.path.basename(path)[:-5]}_{name}_{value}.mini")
        with open(out, "w") as f:
            f.write(text)
        return out

    def run(self, spec, flags, jsonl=False):
        """Runs minivm; returns (wall seconds, statistics or None, events or None): a
        profiled run's `--profile-stats` document, and its `.jsonl` events with `jsonl`.
        The run's process CPU seconds (every thread) are left in `self.last_cpu`."""
        out, stats_out = os.path.join(self.tmp, "p.jsonl"), os.path.join(self.tmp, "stats.json")
        for path in (out, stats_out):
            if os.path.exists(path):
                os.remove(path)
        profiled = "--profile" in flags
        cmd = ([self.minivm, "run"] + flags + ([f"--profile-stats={stats_out}"] if profiled else [])
               + ([f"--profile-out={out}"] if jsonl else []) + [self.program(spec)])
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        p = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, timeout=600)
        wall = time.perf_counter() - start
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        self.last_cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
        self.runs += 1
        if p.returncode != 0:
            sys.exit(f"bench: {' '.join(cmd)} failed ({p.returncode}):\n{p.stderr[-2000:]}")
        stats = events = None
        if profiled:
            stats = read_json(stats_out)
        if jsonl:
            try:
                with open(out) as f:
                    events = [json.loads(line) for line in f if line.strip()]
            except (OSError, ValueError):
                events = None  # missing: every measurement from it reads as missing
        return wall, stats, events


# --- reading a run's statistics and events ----------------------------------------------
# A measurement that could not be taken (a file not written, a tool that recorded nothing)
# is None all the way to the report, where it reads "missing", the CSV files (an empty
# cell) and targets.json (null); nothing here assumes a number is there.

MISSING = "missing"


def read_json(path):
    """A JSON document, or None if it was not written or does not parse."""
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def sampler_stats(stats, sampler):
    """One sampler's entry in a `--profile-stats` document, or {} if it did not run."""
    return next((e for e in (stats or {}).get("samplers", []) if e["name"] == sampler), {})


def us_percentiles(q, keys=("p50", "p99", "max")):
    """A percentiles object (ns; `--profile-stats` and minivm_limits write the same shape)
    as a tuple of µs, or None when nothing was recorded."""
    if not q or not q.get("n") or any(q.get(k) is None for k in keys):
        return None
    return tuple(q[k] / 1000 for k in keys)


def held_us(stats, sampler):
    """(p50, p99, max) µs the thread was held per interruption, or None."""
    return us_percentiles(sampler_stats(stats, sampler).get("suspension_ns"))


def latency_us(stats, sampler):
    """(p50, p99, max) µs from request to served, or None."""
    return us_percentiles(sampler_stats(stats, sampler).get("latency_ns"))


def sampler_cpu_us(stats):
    """(p50, p99) µs of the sampler thread's CPU per visit of a thread, or None."""
    return us_percentiles((stats or {}).get("sampler_thread", {}).get("cpu_per_visit_ns"), ("p50", "p99"))


def dropped(stats, sampler):
    return sum(sampler_stats(stats, sampler).get("dropped", {}).values())


def key(stack):
    return tuple((f["function"], f["line"], f["kind"]) for f in stack)


def frame_name(f):
    """A frame as the text report names it: function:line, or "arraycopy (stub)" for code
    outside Mini, which has no line."""
    return f"{f['function']} ({f['kind']})" if f["kind"] in ("native", "stub") else f"{f['function']}:{f['line']}"


def top_line(stack):
    return frame_name(stack[0]) if stack else "(empty)"


def overlap(p, q):
    """Σ min(p_i, q_i) of two distributions given as Counters."""
    tp, tq = sum(p.values()), sum(q.values())
    if tp == 0 or tq == 0:
        return None
    return sum(min(p[k] / tp, q[k] / tq) for k in set(p) | set(q))


def comparable(mine, oracle_stack):
    """The oracle's stack as `mine` can have it: whole when `mine` is mixed (--native-frames),
    its Mini part when `mine` took no C/C++ frames (classical stays Mini-only)."""
    if not ACCURACY_FLAGS or any(f["kind"] == "cpp" for f in mine):
        return oracle_stack
    return [f for f in oracle_stack if f["kind"] != "cpp" and f["function"] != "call_stub"]


def accuracy(events):
    """Per sampler: agreement with the oracle and honesty counts, from one --sampler=all run
    (events None: the run wrote none, and every share is missing)."""
    events = events or []
    stacks = {s: {} for s in SAMPLERS}
    biased = {s: collections.Counter() for s in SAMPLERS}
    failed = {s: collections.Counter() for s in SAMPLERS}
    biased_ids = {s: set() for s in SAMPLERS}
    for e in events:
        s = e.get("sampler")
        if e["event"] in ("ExecutionSample", "NativeMethodSample"):
            stacks[s][e["sample"]] = e["stack"]
            if e.get("biased"):
                biased[s][e["reason"]] += 1
                biased_ids[s].add(e["sample"])
        elif e["event"] == "FailedSample":
            failed[s][e["reason"]] += 1
    oracle = stacks["oracle"]
    out = {}
    for s in SAMPLERS:
        mine = stacks[s]
        n = len(oracle)
        exact = sum(1 for i, st in oracle.items() if i in mine and key(mine[i]) == key(comparable(mine[i], st)))
        both = sum(1 for i in oracle if i in mine)
        fn = sum(1 for i, st in oracle.items() if i in mine and mine[i] and st and mine[i][0]["function"] == st[0]["function"])
        ln = sum(1 for i, st in oracle.items() if i in mine and mine[i] and st and top_line(mine[i]) == top_line(st))
        unflagged_ids = [i for i, st in oracle.items()
                         if i in mine and key(mine[i]) != key(comparable(mine[i], st)) and i not in biased_ids[s]]
        unflagged = len(unflagged_ids)
        examples = [{"sample": i, "method": [top_line([f]) + "/" + f["kind"] for f in mine[i][:4]],
                     "oracle": [top_line([f]) + "/" + f["kind"] for f in oracle[i][:4]]} for i in unflagged_ids[:3]]
        lines_p = collections.Counter(top_line(st) for st in mine.values())
        lines_q = collections.Counter(top_line(st) for st in oracle.values())
        out[s] = {
            "samples": len(mine), "oracle_samples": n,
            "exact": exact / n if n else None, "exact_sampled": exact / both if both else None,
            "top_function": fn / n if n else None,
            "top_line": ln / n if n else None, "line_overlap": overlap(lines_p, lines_q),
            "biased": dict(biased[s]), "failed": dict(failed[s]), "unflagged_disagreements": unflagged,
            "unflagged_examples": examples,
            "hot_line": None, "hot_line_share": None,
        }
    # The true hot line: the oracle's most frequent top line.
    if oracle:
        hot, _ = collections.Counter(top_line(st) for st in oracle.values()).most_common(1)[0]
        for s in SAMPLERS:
            mine = stacks[s]
            out[s]["hot_line"] = hot
            out[s]["hot_line_share"] = (sum(1 for st in mine.values() if top_line(st) == hot) / len(mine)) if mine else None
    return out


# --- formatting -------------------------------------------------------------------------

def pct(x):
    return MISSING if x is None else f"{100 * x:.1f}%"


def scaled(x, factor=100):
    """x * factor for a plot, None when x is missing."""
    return None if x is None else factor * x


def us(x):
    return MISSING if x is None else (f"{x:.2f}" if x < 10 else f"{x:.1f}" if x < 100 else f"{x:.0f}")


def reasons(counter):
    return ", ".join(f"{k} {v}" for k, v in sorted(counter.items(), key=lambda kv: -kv[1])) or "-"


def table(header, rows):
    out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    out += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return "\n".join(out) + "\n"


def write_csv(path, header, rows):
    def cell(c):
        c = "" if c is None else str(c)
        return '"' + c.replace('"', '""') + '"' if any(ch in c for ch in ',"\n') else c
    with open(path, "w") as f:
        f.write(",".join(header) + "\n")
        for r in rows:
            f.write(",".join(cell(c) for c in r) + "\n")


# --- the measurements -------------------------------------------------------------------

def measure_limits(args, quick):
    exe = args.limits
    if not os.path.exists(exe):
        return None, f"`{exe}` not built"
    p = subprocess.run([exe] + (["--quick"] if quick else []), capture_output=True, text=True, timeout=120)
    if p.returncode != 0:
        return None, p.stderr.strip()
    try:
        return json.loads(p.stdout), None
    except ValueError:
        return None, f"`{exe}` printed no JSON"


def measure_accuracy(b, workloads, log):
    """One --sampler=all run per workload, with and without --stub-metadata."""
    acc = {}
    for name, spec, flags, kind in workloads:
        for meta in (True, False):
            f = flags + ["--profile", "--sampler=all", "--interval=500us"] + (["--stub-metadata"] if meta else []) \
                + ACCURACY_FLAGS
            _, stats, events = b.run(spec, f, jsonl=True)
            a = accuracy(events)
            for s in SAMPLERS:
                a[s]["dropped"] = dropped(stats, s)
                a[s]["accounted"] = sampler_stats(stats, s).get("accounted", False)
            acc[(name, meta)] = a
        log(f"accuracy {name}: cooperative {pct(acc[(name, True)]['cooperative']['exact'])} exact")
    return acc


def measure_overhead(b, workloads, runs, log):
    """Wall-time slowdown against an unprofiled run, alternating, median of `runs`."""
    configs = [("unprofiled", None, None)] + [(s, r, iv) for s in SAMPLERS for r, iv in RATES]
    res = {}
    for name, spec, flags, _ in workloads:
        # Compiled up front: tiering's background compiler makes run times bimodal (which
        # method is compiled first), which would swamp a few percent of sampling cost.
        flags = flags if "--xint" in flags else flags + ["--xcomp"]
        walls = collections.defaultdict(list)
        cost = {}
        for _ in range(runs):
            for s, rate, iv in configs:
                f = list(flags) if s is None or s == "unprofiled" else flags + ["--profile", f"--sampler={s}", f"--interval={iv}"]
                wall, stats, _ = b.run(spec, f)
                walls[(s, rate)].append(wall)
                if s != "unprofiled" and rate == "1 kHz":
                    cost.setdefault(s, []).append((held_us(stats, s), sampler_cpu_us(stats)))
        base = statistics.median(walls[("unprofiled", None)]) if walls[("unprofiled", None)] else None
        for s in SAMPLERS:
            for rate, _ in RATES:
                res[(name, s, rate)] = statistics.median(walls[(s, rate)]) / base - 1 if base and walls[(s, rate)] else None
            held = [c[0] for c in cost.get(s, []) if c[0]]
            cpu = [c[1] for c in cost.get(s, []) if c[1]]
            res[(name, s, "held")] = (statistics.median(h[0] for h in held), statistics.median(h[1] for h in held)) if held else None
            res[(name, s, "cpu")] = (statistics.median(c[0] for c in cpu), statistics.median(c[1] for c in cpu)) if cpu else None
        res[(name, "base")] = base
        log(f"overhead {name}: base {us(base)} s, cooperative 1 kHz {pct(res[(name, 'cooperative', '1 kHz')])}")
    return res


def measure_scaling(b, quick, log):
    """Held time and sampler CPU per sample against stack depth and thread count (1 kHz)."""
    depth, threads = {}, {}
    for d in ([10, 100, 500] if quick else DEPTHS):
        for s in SAMPLERS:
            _, stats, _ = b.run(f"bench/workloads/deep_recursion.mini@DEPTH={d}", ["--profile", f"--sampler={s}", "--interval=1ms"])
            depth[(d, s)] = (held_us(stats, s), sampler_cpu_us(stats))
        log(f"depth {d}: classical held p50 {us((depth[(d, 'classical')][0] or (None,))[0])} µs")
    for n in ([1, 4] if quick else THREAD_COUNTS):
        for s in SAMPLERS:
            _, stats, _ = b.run(f"bench/workloads/threads.mini@THREADS={n}", ["--profile", f"--sampler={s}", "--interval=1ms"])
            threads[(n, s)] = (held_us(stats, s), sampler_cpu_us(stats))
        log(f"threads {n}: done")
    return depth, threads


def measure_latency(b, workloads, log):
    """Cooperative safepoint latency with and without --counted-loop-polls, and both
    --suspend modes (held time and latency)."""
    lat = {}
    for name, spec, flags, _ in workloads:
        for variant, extra in (("signal", ["--suspend=signal"]), ("handshake", ["--suspend=handshake"]),
                               ("counted-loop-polls", ["--suspend=signal", "--counted-loop-polls"])):
            _, stats, events = b.run(spec, flags + ["--profile", "--sampler=cooperative", "--interval=1ms"] + extra, jsonl=True)
            values = [e["latency_ns"] / 1000 for e in events or [] if e["event"] == "SafepointLatency"]
            lat[(name, variant)] = (held_us(stats, "cooperative"), latency_us(stats, "cooperative"), values)
        log(f"latency {name}: done")
    return lat


def rss_kb(pid):
    """A process's resident set (VmRSS, KB), or None once it has ended."""
    try:
        with open(f"/proc/{pid}/status") as f:
            return next((int(line.split()[1]) for line in f if line.startswith("VmRSS:")), None)
    except OSError:
        return None


def measure_memory(b, quick, log):
    """The profiler's memory over a long run: bench/workloads/forever.mini unprofiled and
    profiled at 1 kHz (cooperative, and all samplers at once, each writing .collapsed, and
    cooperative streaming .jsonl), run side by side; their RSS at each checkpoint (10 s
    and 60 s; 2 s and 6 s with --quick), then SIGINT, which must leave the profile
    written and exit 130. Returns ({run: [KB at each checkpoint]}, checkpoints, {run: ok})."""
    checkpoints = [2, 6] if quick else [10, 60]
    program = b.program("bench/workloads/forever.mini")
    runs = {"unprofiled": [], "cooperative .collapsed": ["--profile", "--profile-out={}.collapsed"],
            "all samplers .collapsed": ["--profile", "--sampler=all", "--profile-out={}.collapsed"],
            "cooperative .jsonl": ["--profile", "--profile-out={}.jsonl"]}
    procs = {}
    for i, (name, flags) in enumerate(runs.items()):
        flags = [f.format(os.path.join(b.tmp, f"memory{i}")) for f in flags]
        out = next((f.split("=", 1)[1] for f in flags if f.startswith("--profile-out=")), None)
        cmd = [b.minivm, "run"] + flags + (["--interval=1ms"] if flags else []) + [program]
        # SIGINT as a terminal sends it, even when this script runs as a background job
        # (which starts its children with SIGINT ignored).
        procs[name] = (subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL)), out)
        b.runs += 1
    rss = {name: [] for name in runs}
    start = time.monotonic()
    for t in checkpoints:
        time.sleep(max(0, start + t - time.monotonic()))
        for name, (p, _) in procs.items():
            rss[name].append(rss_kb(p.pid))
    ok = {}
    for name, (p, path) in procs.items():
        p.send_signal(signal.SIGINT)
        rc = p.wait(timeout=60)
        ok[name] = rc == -signal.SIGINT and (path is None or (os.path.exists(path) and os.path.getsize(path) > 0))
    log("memory: " + ", ".join(f"{n} {'/'.join(str(k) for k in v)} KB" for n, v in rss.items()))
    return rss, checkpoints, ok


def perf_report(data, sort):
    """perf report rows as (percent, columns...) for `sort` keys."""
    rep = subprocess.run(["perf", "report", "-i", data, "--stdio", "--no-children", "--sort", sort, "-g", "none"],
                         capture_output=True, text=True, timeout=300)
    rows = []
    for line in rep.stdout.splitlines():
        m = re.match(r"\s+([\d.]+)%\s+\[(.)\]\s+(\S+)(?:\s+(\S+))?", line)
        if m:
            rows.append((float(m.group(1)), m.group(3), m.group(4)))
    return rows


def measure_perf(b, workloads, log):
    """The oracle against perf: function-level and line-level self distributions of the
    same run. perf resolves JIT lines through the jitdump file (`perf record -k 1`, then
    `perf inject --jit`)."""
    if shutil.which("perf") is None:
        return None, "perf is not installed (apt-get install linux-perf)"
    res = {}
    for name, spec, flags, _ in workloads:
        work = os.path.join(b.tmp, "perf")
        shutil.rmtree(work, ignore_errors=True)
        os.makedirs(work)
        data, injected = os.path.join(work, "perf.data"), os.path.join(work, "perf.jit.data")
        out = os.path.join(work, "o.jsonl")
        cmd = ["perf", "record", "-k", "1", "-F", "997", "-o", data, "--", b.minivm, "run"] + flags + [
            "--perf-map", "--profile", "--sampler=oracle", "--interval=1ms", f"--profile-out={out}", b.program(spec)]
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=600, cwd=work,
                           env=dict(os.environ, MINIVM_JITDUMP_DIR=work))
        if p.returncode != 0:
            return None, f"perf record failed: {p.stderr.strip().splitlines()[-1] if p.stderr.strip() else p.returncode}"
        inj = subprocess.run(["perf", "inject", "--jit", "-i", data, "-o", injected], capture_output=True, text=True,
                             timeout=300, cwd=work)
        source = injected if inj.returncode == 0 else data
        perf_fn, perf_line = collections.Counter(), collections.Counter()
        for pc, sym, srcline in perf_report(source, "sym,srcline"):
            if sym.startswith("mini::"):
                perf_fn[sym[6:]] += pc
                m = re.search(r"\.mini:(\d+)$", srcline or "")
                if m:
                    perf_line[f"line {m.group(1)}"] += pc
            elif sym.startswith("minivm::stub::"):
                key = "stub:" + sym[14:].removesuffix("_stub")
                perf_fn[key] += pc
                perf_line[key] += pc
        with open(out) as f:
            events = [json.loads(line) for line in f if line.strip()]
        oracle_fn, oracle_line = collections.Counter(), collections.Counter()
        for e in events:
            if e["event"] != "ExecutionSample" or not e["stack"]:
                continue
            # perf sees the physical frame (a stub, or the compiled method holding inlined
            # code) and, through the jitdump, the innermost scope's line.
            top = next((fr for fr in e["stack"] if fr["kind"] in ("jit", "interp", "stub")), None)
            if top is not None:
                oracle_fn["stub:" + top["function"] if top["kind"] == "stub" else top["function"]] += 1
            inner = e["stack"][0]
            oracle_line["stub:" + inner["function"] if inner["kind"] == "stub" else f"line {inner['line']}"] += 1
        line_ov = overlap(perf_line, oracle_line) if perf_line else None
        res[name] = (overlap(perf_fn, oracle_fn), perf_fn, oracle_fn, line_ov, perf_line, oracle_line)
        log(f"perf {name}: function overlap {pct(res[name][0])}, line overlap {pct(line_ov)}")
    return res, None


# --- writing the report -----------------------------------------------------------------

def depths(depth):
    return sorted({d for d, _ in depth})


def thread_counts(threads):
    return sorted({n for n, _ in threads})


def write_header(plan, m):
    quick = plan["quick"]
    return [f"# Sampling methods against ground truth — {datetime.date.today().isoformat()}{' (quick)' if quick else ''}\n",
            f"Produced by `python3 bench/run.py{' --quick' if quick else ''}` in {m['seconds']:.0f} s "
            f"({m['minivm_runs']} runs of minivm, {plan['runs']} alternating run(s) per cost configuration). "
            f"Machine: {os.cpu_count()} cores, `{os.uname().release}`. Workloads, metrics and method: "
            "`bench/README.md`.\n"]


def write_limits(out_dir, limits, limits_err):
    md = ["## Physical limits of this machine\n"]
    if not limits:
        return md + [f"Not measured: {limits_err}.\n"]
    rows = []
    for k, label in (("signal_round_trip_ns", "signal to another thread and back (tgkill → handler → seen)"),
                     ("signal_handler_entry_ns", "signal to another thread, until its handler runs"),
                     ("poll_trap_ns", "a poll that traps (SIGSEGV on the poll page, handler, resume)")):
        v = us_percentiles(limits.get(k))  # None when the tool recorded none (n = 0)
        rows.append([label] + ([us(x) for x in v] if v else [MISSING] * 3))
    md.append(table(["floor", "p50 µs", "p99 µs", "max µs"], rows))
    extra = []
    if "poll_untrapped_ns" in limits:
        v = limits["poll_untrapped_ns"]
        extra.append(f"an untrapped poll costs {MISSING if v is None else f'{v:.2f} ns'}")
    if "clock_gettime_ns" in limits:
        v = limits["clock_gettime_ns"]
        extra.append(f"one clock_gettime {MISSING if v is None else f'{v:.0f} ns'}")
    md.append("Also: " + "; ".join(extra) + ".\n" if extra else "")
    floor, sender = periodic_floor(limits)
    if floor is not None:
        md.append(f"A thread that another thread wakes for and signals every 1 ms (an empty handler, nothing else) "
                  f"runs {floor}slower (median and quartiles of alternating pairs); that sender spends "
                  f"{sender} of CPU per wake-up and signal. This is the least a signal-based sampler costs at "
                  f"1 kHz here: its handler, polls and walks come on top.\n")
    write_csv(os.path.join(out_dir, "limits.csv"), ["metric", "value"], [[k, json.dumps(v)] for k, v in limits.items()])
    return md


def periodic_floor(limits):
    """('X% (q1-q3) ', 'N µs') from minivm_limits' periodic-signal measurement, or (None, None)."""
    slow, cpu = ((limits or {}).get(k) or {} for k in ("periodic_signal_slowdown", "periodic_signal_sender_cpu_ns"))
    if slow.get("median") is None:
        return None, None
    sender = f"{us(cpu['median'] / 1000)} µs" if cpu.get("median") is not None else MISSING
    return f"{pct(slow['median'])} ({pct(slow['q1'])} to {pct(slow['q3'])}) ", sender


def write_accuracy(out_dir, names, acc):
    md = ["## Accuracy against the oracle (one `--sampler=all --stub-metadata --interval=500us"
          f"{' --native-frames' if ACCURACY_FLAGS else ''}` run per workload)\n",
          "Share of the oracle's samples where the method's whole stack is the same (function, line "
          "and frame kind of every frame); a failed sample counts as a disagreement. (`accuracy.csv`'s "
          "`exact_stack_sampled` is the same share of the interruptions both sampled, where a failure or a "
          "drop is no disagreement.)\n"]
    rows, csv_rows = [], []
    for n in names:
        a = acc[(n, True)]
        rows.append([n] + [pct(a[s]["exact"]) for s in COMPARED] + [a["oracle"]["oracle_samples"]])
        for s in COMPARED:
            csv_rows.append([n, s, a[s]["oracle_samples"], a[s]["samples"], a[s]["exact"], a[s]["exact_sampled"],
                             a[s]["top_function"], a[s]["top_line"], a[s]["line_overlap"], a[s]["hot_line"],
                             a[s]["hot_line_share"]])
    md.append(table(["workload"] + [f"{s} exact" for s in COMPARED] + ["oracle samples"], rows))
    write_csv(os.path.join(out_dir, "accuracy.csv"),
              ["workload", "sampler", "oracle_samples", "samples", "exact_stack", "exact_stack_sampled", "top_function",
               "top_line", "line_overlap", "true_hot_line", "hot_line_share"], csv_rows)
    md.append("\nTop-line agreement / line-level self-time overlap Σmin(p,q) with the oracle:\n")
    rows = [[n] + [f"{pct(acc[(n, True)][s]['top_line'])} / {pct(acc[(n, True)][s]['line_overlap'])}" for s in COMPARED]
            for n in names]
    md.append(table(["workload"] + COMPARED, rows))
    md.append("\nShare of each method's samples on the true hot line (the oracle's most frequent top line):\n")
    rows = [[n, acc[(n, True)]["oracle"]["hot_line"] or MISSING] + [pct(acc[(n, True)][s]["hot_line_share"]) for s in SAMPLERS]
            for n in names]
    md.append(table(["workload", "true hot line"] + SAMPLERS, rows))
    charts.bar_chart(os.path.join(out_dir, "accuracy.svg"), "Exact-stack agreement with the oracle (--stub-metadata)",
                     names, [(s, [None if acc[(n, True)][s]["exact"] is None else round(100 * acc[(n, True)][s]["exact"], 1)
                                  for n in names]) for s in COMPARED],
                     "% of oracle samples", y_max=100)
    return md


def write_honesty(out_dir, names, acc):
    adds_up = all(acc[k][s]["accounted"] for k in acc for s in SAMPLERS)
    md = ["## Honesty: failed, biased and dropped samples by reason\n",
          "With `--stub-metadata` (left) and without (right, the default), per method. Every "
          "interruption ends as a sample, a failed sample or a drop, and each report's accounting "
          f"adds up: {'yes, in every run' if adds_up else 'NO (see the runs)'}.\n"]
    rows, csv_rows = [], []
    for n in names:
        for s in SAMPLERS:
            cells = []
            for meta in (True, False):
                a = acc[(n, meta)][s]
                cells.append(f"failed: {reasons(collections.Counter(a['failed']))}; biased: {reasons(collections.Counter(a['biased']))}; dropped {a['dropped']}")
                csv_rows.append([n, s, meta, json.dumps(a["failed"]), json.dumps(a["biased"]), a["dropped"], a["unflagged_disagreements"]])
            if any(acc[(n, m)][s]["failed"] or acc[(n, m)][s]["biased"] or acc[(n, m)][s]["dropped"] for m in (True, False)):
                rows.append([n, s] + cells)
    md.append(table(["workload", "sampler", "with --stub-metadata", "without"], rows))
    write_csv(os.path.join(out_dir, "honesty.csv"),
              ["workload", "sampler", "stub_metadata", "failed", "biased", "dropped", "unflagged_disagreements"], csv_rows)
    return md


def write_overhead(out_dir, cost_workloads, runs, over):
    md = ["## Cost to the program (wall time, separate runs)\n",
          f"Slowdown against the unprofiled run (`--xcomp`, so that tier-up timing does not vary): ratio of medians over {runs} alternating run(s) − 1.\n"]
    rows, csv_rows = [], []
    for w in cost_workloads:
        for s in SAMPLERS:
            rows.append([w[0], s] + [pct(over.get((w[0], s, r))) for r, _ in RATES])
            csv_rows.append([w[0], s] + [over.get((w[0], s, r)) for r, _ in RATES] + [over.get((w[0], "base"))])
    md.append(table(["workload", "sampler"] + [f"slowdown at {r}" for r, _ in RATES], rows))
    write_csv(os.path.join(out_dir, "overhead.csv"), ["workload", "sampler", "slowdown_100hz", "slowdown_1khz", "unprofiled_s"], csv_rows)
    first = cost_workloads[0][0]
    charts.line_chart(os.path.join(out_dir, "overhead.svg"), f"Slowdown versus sampling rate ({first})",
                      "samples per second", "slowdown %",
                      [(s, [(100, scaled(over.get((first, s, '100 Hz')))), (1000, scaled(over.get((first, s, '1 kHz'))))])
                       for s in SAMPLERS], log_x=True)
    md.append("\nCost per sample at 1 kHz (medians over the runs of each workload): how long the thread is "
              "held (signal arrival to resume) and the sampler thread's CPU per visit, p50 / p99 in µs.\n")
    rows = []
    for w in cost_workloads:
        for s in SAMPLERS:
            h, c = over.get((w[0], s, "held")), over.get((w[0], s, "cpu"))
            rows.append([w[0], s, f"{us(h[0])} / {us(h[1])}" if h else MISSING, f"{us(c[0])} / {us(c[1])}" if c else MISSING])
    md.append(table(["workload", "sampler", "held p50 / p99", "sampler CPU p50 / p99"], rows))
    return md


def write_scaling(out_dir, depth, threads):
    """Held time against stack depth and thread count: (held, cpu) per (depth or threads, sampler)."""
    depth, threads = collections.defaultdict(lambda: (None, None), depth), collections.defaultdict(lambda: (None, None), threads)
    md = ["\nHeld time against stack depth (`deep_recursion`, DEPTH frames; p50 / p99 µs):\n"]
    header = ["sampler", "held_p50_us", "held_p99_us", "sampler_cpu_p50_us", "sampler_cpu_p99_us"]
    ds = depths(depth)
    rows = [[d] + [f"{us(depth[(d, s)][0][0])} / {us(depth[(d, s)][0][1])}" if depth[(d, s)][0] else MISSING for s in SAMPLERS] for d in ds]
    md.append(table(["depth"] + SAMPLERS, rows))
    write_csv(os.path.join(out_dir, "held_vs_depth.csv"), ["depth"] + header,
              [[d, s] + list(depth[(d, s)][0] or (None, None, None))[:2] + list(depth[(d, s)][1] or (None, None)) for d in ds for s in SAMPLERS])
    charts.line_chart(os.path.join(out_dir, "held_vs_depth.svg"), "Thread held per sample versus stack depth (p50)",
                      "stack depth (frames)", "held µs",
                      [(s, [(d, depth[(d, s)][0][0]) for d in ds if depth[(d, s)][0]]) for s in SAMPLERS], log_x=True, log_y=True)
    md.append("\nHeld time against thread count (`threads`, 1 kHz; p50 / p99 µs):\n")
    ns = thread_counts(threads)
    rows = [[n] + [f"{us(threads[(n, s)][0][0])} / {us(threads[(n, s)][0][1])}" if threads[(n, s)][0] else MISSING for s in SAMPLERS] for n in ns]
    md.append(table(["threads"] + SAMPLERS, rows))
    write_csv(os.path.join(out_dir, "held_vs_threads.csv"), ["threads"] + header,
              [[n, s] + list(threads[(n, s)][0] or (None, None, None))[:2] + list(threads[(n, s)][1] or (None, None)) for n in ns for s in SAMPLERS])
    return md


def write_latency(out_dir, latency_workloads, lat):
    md = ["## Cooperative: suspension and safepoint latency (p50 / p99 / max µs)\n"]
    rows, csv_rows, hist = [], [], []
    fmt3 = lambda t: " / ".join(us(x) for x in t) if t else MISSING
    for w in latency_workloads:
        for variant in ("signal", "handshake", "counted-loop-polls"):
            hold, wait, values = lat.get((w[0], variant), (None, None, []))
            rows.append([w[0], variant, fmt3(hold), fmt3(wait)])
            csv_rows.append([w[0], variant] + list(hold or (None,) * 3) + list(wait or (None,) * 3))
            if w[0] == "counted_loop_then_setter" and variant != "handshake":
                hist.append((f"{variant}", values))
    md.append(table(["workload", "run", "held", "latency"], rows))
    write_csv(os.path.join(out_dir, "latency.csv"), ["workload", "run", "held_p50_us", "held_p99_us", "held_max_us",
                                                       "latency_p50_us", "latency_p99_us", "latency_max_us"], csv_rows)
    binned = charts.histogram(os.path.join(out_dir, "latency.svg"),
                              "Safepoint latency, counted_loop_then_setter (cooperative)", "latency µs", hist,
                              bins=40, log_x=True)
    edges, counts = binned or ([], [])
    write_csv(os.path.join(out_dir, "latency_histogram.csv"), ["bin_from_us", "bin_to_us"] + [n for n, _ in counts],
              [[f"{edges[k]:.6g}", f"{edges[k + 1]:.6g}"] + [c[k] if c else None for _, c in counts] for k in range(len(edges) - 1)])
    return md


def write_memory(out_dir, memory):
    rss, checkpoints, ok = memory
    md = ["## Memory over a long run\n",
          "`bench/workloads/forever.mini` (a handful of distinct stacks, runs until stopped) at 1 kHz, the runs side by "
          "side; resident set (VmRSS) at each time, then SIGINT. The profiler aggregates as it records (one entry per "
          "distinct stack, durations in bounded histograms; `.jsonl` goes to disk as it comes), so its memory follows "
          "the number of distinct stacks, not the length of the run: the columns should be flat.\n"]
    mb = lambda kb: f"{kb / 1024:.1f}" if kb else MISSING
    rows = [[name] + [mb(kb) for kb in values] + ["yes" if ok[name] else "NO"] for name, values in rss.items()]
    md.append(table(["run"] + [f"RSS MB at {t} s" for t in checkpoints] + ["SIGINT: exit 130, profile written"], rows))
    write_csv(os.path.join(out_dir, "memory.csv"), ["run"] + [f"rss_kb_{t}s" for t in checkpoints] + ["sigint_ok"],
              [[name] + values + [ok[name]] for name, values in rss.items()])
    return md


def write_perf(out_dir, perf, perf_err):
    md = ["## The oracle checked against perf\n"]
    if perf is None:
        return md + [f"perf could not run here: {perf_err}. The oracle is still exact by construction "
                     "(complete frame metadata); this check was skipped.\n"]
    md.append("Self-time distributions of the same `--xcomp` run: perf's samples (its own timer; symbols and "
              "lines from `--perf-map`'s jitdump through `perf inject --jit`) against the oracle's; overlap "
              "Σmin(p,q). perf sees the physical frame, so the oracle is counted by its first non-inlined frame "
              "for functions, and by its innermost frame's line (what the jitdump's line table gives) for lines.\n")
    top = lambda d: ", ".join(f"{k} {100 * v / sum(d.values()):.0f}%" for k, v in d.most_common(3)) if d else "-"
    rows = [[n, pct(ov), top(pd), top(od), pct(lov), top(pl), top(ol)] for n, (ov, pd, od, lov, pl, ol) in perf.items()]
    md.append(table(["workload", "function overlap", "perf top", "oracle top", "line overlap", "perf top lines",
                     "oracle top lines"], rows))
    write_csv(os.path.join(out_dir, "perf.csv"), ["workload", "function_overlap", "line_overlap", "perf_functions",
                                                  "oracle_functions", "perf_lines", "oracle_lines"],
              [[n, ov, lov, json.dumps(pd), json.dumps(od), json.dumps(pl), json.dumps(ol)]
               for n, (ov, pd, od, lov, pl, ol) in perf.items()])
    return md


def targets(plan, m):
    """The targets as (target, met, measured), from the measurements."""
    acc, over, depth = m["acc"], m["over"], m["depth"]
    names, by_name, cost_workloads = plan["names"], plan["by_name"], plan["cost_workloads"]
    depth, over = collections.defaultdict(lambda: (None, None), depth), collections.defaultdict(lambda: None, over)
    out = []

    def judged(values, ok, text):
        """(met, measured) over {name: value}: met is None (missing) when any value is."""
        missing = [n for n, v in values.items() if v is None]
        text = "; ".join(t for t in (text, f"{MISSING}: {', '.join(missing)}" if missing else "") if t)
        return (None if missing or not values else ok), text
    exact = {n: acc[(n, True)]["cooperative"]["exact"] for n in names}
    known = {n: v for n, v in exact.items() if v is not None}
    worst = min(known, key=known.get) if known else None
    out.append(("Cooperative ≥ 99% exact-stack agreement with the oracle on every workload (--stub-metadata)",
                *judged(exact, bool(known) and known[worst] >= 0.99, f"lowest: {worst} {pct(known[worst])}" if known else "")))
    unflagged = {n: acc[(n, False)]["cooperative"]["unflagged_disagreements"] for n in names}
    out.append(("Without --stub-metadata, every cooperative disagreement is a counted biased sample",
                all(v == 0 for v in unflagged.values()),
                "unflagged: " + (", ".join(f"{n} {v}" for n, v in unflagged.items() if v) or "none")))
    cl = [n for n in names if by_name[n][3] == "classic"]
    out.append(("Safepoint sampler's bias shown plainly on the classics (top-line agreement)", True,
                ", ".join(f"{n} {pct(acc[(n, True)]['safepoint']['top_line'])}" for n in cl)))
    deep = [d for d in depths(depth) if d >= 50 and depth[(d, "classical")][0] and depth[(d, "cooperative")][0]]
    ratio = [depth[(d, "cooperative")][0][0] / depth[(d, "classical")][0][0] for d in deep]
    out.append(("Cooperative held time per sample ≤ 1/5 of classical's at stack depth ≥ 50",
                max(ratio) <= 0.2 if ratio else None,
                ", ".join(f"depth {d}: {r:.3f}" for d, r in zip(deep, ratio)) or MISSING))
    slow = {w[0]: over[(w[0], "cooperative", "1 kHz")] for w in cost_workloads}
    floor, _ = periodic_floor(m["limits"])
    out.append(("Cooperative program slowdown at 1 kHz ≤ 2%",
                *judged(slow, all(v <= 0.02 for v in slow.values() if v is not None),
                        ", ".join(f"{n} {pct(v)}" for n, v in slow.items())
                        + (f" (the floor: an empty handler signalled at 1 kHz costs {floor.strip()})" if floor else ""))))
    pro = [n for n in names if n in ("many_short_methods", "arraycopy_loop", "crc32_loop", "arraycopy_heavy", "tiny_function_in_hot_loop")]
    cls_fail = {n: sum(acc[(n, False)]["classical"]["failed"].values()) for n in pro}
    coop_fail = {n: sum(v for r, v in acc[(n, True)]["cooperative"]["failed"].items() if r != "not_in_java") for n in pro}
    out.append(("Classical failed samples on prologue-heavy and stub workloads reported with reasons; cooperative has none there",
                all(cls_fail[n] > 0 for n in pro) and all(v == 0 for v in coop_fail.values()),
                "; ".join(f"{n}: classical {reasons(collections.Counter(acc[(n, False)]['classical']['failed']))}, "
                          f"cooperative {coop_fail[n]}" for n in pro)))
    out.extend(sample_cost.targets(m.get("cost")))
    out.append(escapes.target(m["esc"]))
    return out


def write_targets(out_dir, names, acc, met):
    md = ["## Targets\n"]
    for n in names:
        for meta in (True, False):
            for ex in acc[(n, meta)]["cooperative"]["unflagged_examples"]:
                md.append(f"Cooperative disagreement not counted as biased ({n}, "
                          f"{'with' if meta else 'without'} --stub-metadata, sample {ex['sample']}): cooperative "
                          f"`{' < '.join(ex['method'])}`, oracle `{' < '.join(ex['oracle'])}` (top 4 frames).\n")
    md.append(table(["target", "met", "measured"],
                    [[t, MISSING if ok is None else "met" if ok else "**not met**", m] for t, ok, m in met]))
    with open(os.path.join(out_dir, "targets.json"), "w") as f:
        json.dump([{"target": t, "met": ok, "measured": m} for t, ok, m in met], f, indent=1)
    return md


def reading(plan, m):
    """A short reading of the tables, computed from them."""
    acc, over, depth, threads, lat, limits = m["acc"], m["over"], m["depth"], m["threads"], m["lat"], m["limits"]
    over, lat = collections.defaultdict(lambda: None, over), collections.defaultdict(lambda: (None, None, []), lat)
    depth, threads = collections.defaultdict(lambda: (None, None), depth), collections.defaultdict(lambda: (None, None), threads)
    names, by_name, classics, quick = plan["names"], plan["by_name"], plan["classics"], plan["quick"]
    cost_workloads, ds, ns = plan["cost_workloads"], depths(depth), thread_counts(threads)
    out = []
    def span(s, field="exact"):
        v = [acc[(n, True)][s][field] for n in names if acc[(n, True)][s][field] is not None]
        return f"{pct(min(v))}–{pct(max(v))}" if v else MISSING
    out.append(f"- **Accuracy.** With stub metadata, cooperative reproduces the oracle's whole stack on "
               f"{span('cooperative')} of samples across {len(names)} workloads; classical and async on "
               f"{span('classical')} and {span('async')}; the safepoint sampler on {span('safepoint')}.")
    fails = collections.Counter()
    for n in names:
        for r, v in acc[(n, False)]["classical"]["failed"].items():
            if r != "not_in_java":
                fails[r] += v
    if fails:
        out.append(f"  Classical and async lose samples where a frame is not walkable from the interrupted "
                   f"registers ({reasons(fails)} over all workloads, without stub metadata) and cut stacks deeper "
                   f"than 64 frames; cooperative parses the same interruptions at the next poll.")
    cl = [n for n in names if by_name[n][3] == "classic"]
    if cl:
        out.append("- **Bias.** On the classics the safepoint sampler's top line agrees with the truth on " +
                   ", ".join(f"{n} {pct(acc[(n, True)]['safepoint']['top_line'])}" for n in cl) +
                   ": it charges a counted loop to the next poll (a return, a callee), as the examples explain.")
    deep = [d for d in ds if d >= 50 and depth[(d, "classical")][0] and depth[(d, "cooperative")][0]]
    if deep:
        d = max(deep)
        c, k, o = depth[(d, "cooperative")][0][0], depth[(d, "classical")][0][0], (depth[(d, "oracle")][0] or (None,))[0]
        out.append(f"- **Held time.** At depth {d} the thread is held {us(c)} µs (p50) for cooperative, which only "
                   f"records pc/sp, against {us(k)} µs for classical (capped by its 64-frame limit) and {us(o)} µs for "
                   f"the oracle's full walk, which grows with depth.")
    trip, trap = (us_percentiles(limits.get(k)) if limits else None for k in ("signal_round_trip_ns", "poll_trap_ns"))
    if trip and trap:
        out.append(f"  The floors here are high: a signal round trip to another thread takes "
                   f"{us(trip[0])} µs and a poll trap "
                   f"{us(trap[0])} µs (p50), so every signal-based method pays "
                   f"tens of µs of kernel time per sample outside the held window.")
    many = [n for n in ns if n > 2]
    if many:
        n = max(many)
        h = threads[(n, "classical")][0]
        if h:
            out.append(f"- **Threads.** With {n} busy threads on {os.cpu_count()} cores, classical's hold waits for the "
                       f"target to be scheduled: held {us(h[0])} µs at p50, {us(h[1])} µs at p99; cooperative stays at "
                       f"{us((threads[(n, 'cooperative')][0] or (None,))[0])} µs.")
    worst = max(cost_workloads, key=lambda w: over[(w[0], "cooperative", "1 kHz")] or float("-inf"))
    out.append(f"- **Slowdown.** At 1 kHz cooperative costs {pct(over[(worst[0], 'cooperative', '1 kHz')])} on "
               f"{worst[0]} (the worst of the cost workloads); at 100 Hz "
               f"{pct(over[(worst[0], 'cooperative', '100 Hz')])}." +
               (" With one run per configuration (--quick) these are noise-level." if quick else ""))
    out.append("  async pays only the signal (its walk is a few µs); cooperative pays the signal, the poll's way into "
               "the safepoint blob (a branch in compiled code, a second signal in the interpreter) and the walk at "
               "the poll: " + ", ".join(
                   f"{w[0]} {pct(over[(w[0], 'async', '1 kHz')])} against {pct(over[(w[0], 'cooperative', '1 kHz')])}"
                   for w in cost_workloads) + " at 1 kHz.")
    floor, sender = periodic_floor(limits)
    if floor is not None:
        out.append(f"  The floor under these: a thread signalled every 1 ms with an empty handler runs {floor}slower "
                   f"here, and the thread that signals it spends {sender} of CPU per wake-up and signal, which a busy "
                   f"program loses outright when it has as many running threads as the machine has cores "
                   f"({os.cpu_count()} here: threads_2).")
    w = classics[0][0]
    if (w, "counted-loop-polls") in lat and lat[(w, "signal")][1] and lat[(w, "counted-loop-polls")][1]:
        out.append(f"- **Latency.** On {w} a request waits {us(lat[(w, 'signal')][1][0])} µs (p50) for the next "
                   f"poll; with --counted-loop-polls {us(lat[(w, 'counted-loop-polls')][1][0])} µs.")
    return "\n".join(out)


def write_report(plan, m):
    """report.md, its CSV files, targets.json and the SVG plots, from the measurements."""
    out_dir, names, acc = plan["out_dir"], plan["names"], m["acc"]
    md = write_header(plan, m)
    md += write_limits(out_dir, m["limits"], m["limits_err"])
    md += write_accuracy(out_dir, names, acc)
    md += write_honesty(out_dir, names, acc)
    md += write_overhead(out_dir, plan["cost_workloads"], plan["runs"], m["over"])
    md += write_scaling(out_dir, m["depth"], m["threads"])
    md += write_latency(out_dir, plan["latency_workloads"], m["lat"])
    md += write_perf(out_dir, m["perf"], m["perf_err"])
    md += stability.write_stability(out_dir, m["stab"])
    md += sample_cost.write_sample_cost(out_dir, m.get("cost"))
    md += escapes.write_escapes(out_dir, m["esc"])
    md += write_memory(out_dir, m["memory"])
    md += write_targets(out_dir, names, acc, targets(plan, m))
    md += ["## Reading\n", reading(plan, m) + "\n",
           "## Plots\n\n![accuracy](accuracy.svg)\n![held vs depth](held_vs_depth.svg)\n"
           "![overhead](overhead.svg)\n![latency](latency.svg)\n![stability](stability.svg)\n"]
    with open(os.path.join(out_dir, "report.md"), "w") as f:
        f.write("\n".join(md))


# --- the run ----------------------------------------------------------------------------

def sampler_names(minivm):
    """The samplers, in report order, as `minivm help samplers` lists them."""
    out = subprocess.run([minivm, "help", "samplers"], capture_output=True, text=True, check=True).stdout
    return [line.split()[0] for line in out.splitlines() if line.startswith("  ")]


def run_section(name, measure, write, targets=None):
    """One section of the report alone, `python3 bench/NAME.py [--quick] [--out DIR]
    [--minivm PATH]`: writes DIR/NAME.md (and the section's CSV and plots) and, for a
    section with targets (a function of its data returning (target, met, measured)
    triples), DIR/targets.json with them."""
    args, plan = make_plan(sys.argv[1:])
    out_dir = args.out or os.path.join(HERE, "results", name + ("-quick" if plan["quick"] else ""))
    os.makedirs(out_dir, exist_ok=True)
    b = Bench(args)
    t0 = time.time()
    data = measure(b, plan["quick"], lambda msg: print(f"[{time.time() - t0:6.1f}s] {msg}", flush=True))
    with open(os.path.join(out_dir, name + ".md"), "w") as f:
        f.write("\n".join(write(out_dir, data)))
    if targets is not None:
        judged = targets(data)
        with open(os.path.join(out_dir, "targets.json"), "w") as f:
            json.dump([{"target": t, "met": met, "measured": measured} for t, met, measured in judged], f, indent=1)
        for t, met, measured in judged:
            print(f"{MISSING if met is None else 'met' if met else 'NOT MET'}: {t}: {measured}")
    shutil.rmtree(b.tmp, ignore_errors=True)
    print(f"wrote {out_dir}/{name}.md")


def make_plan(argv=None):
    """The options, and from them what to run and where to write."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="a smoke run (under 2 minutes)")
    ap.add_argument("--out", help="output directory (default bench/results/<today>)")
    ap.add_argument("--minivm", default=os.path.join(ROOT, "build", "vm", "cli", "minivm"))
    ap.add_argument("--limits", default=os.path.join(ROOT, "build", "bench", "limits", "minivm_limits"))
    ap.add_argument("--runs", type=int, default=None, help="alternating runs per cost configuration (default 9, quick 1)")
    ap.add_argument("--native-frames", action="store_true",
                    help="the accuracy runs take mixed C/C++ and Mini stacks (--native-frames), compared with the oracle's")
    args = ap.parse_args(argv)
    ACCURACY_FLAGS[:] = ["--native-frames"] if args.native_frames else []
    if not os.path.exists(args.minivm):
        sys.exit(f"bench: no minivm at {args.minivm}; build first (cmake -S . -B build -G Ninja && cmake --build build)")
    SAMPLERS[:] = sampler_names(args.minivm)
    COMPARED[:] = [s for s in SAMPLERS if s != "oracle"]
    quick = args.quick
    by_name = {w[0]: w for w in WORKLOADS}
    workloads = [by_name[n] for n in QUICK_WORKLOADS] if quick else WORKLOADS
    classics = [w for w in workloads if w[3] == "classic"] or [by_name["counted_loop_then_setter"]]
    perf_set = [("counted_loop_then_setter", "examples/counted_loop_then_setter.mini", ["--xcomp"], "classic")]
    if not quick:
        perf_set += [(n, by_name[n][1], ["--xcomp"], "") for n in ("chain_of_nine_calls", "many_short_methods", "deep_recursion", "arraycopy_loop")]
    return args, {
        "quick": quick, "runs": args.runs or (1 if quick else 9), "by_name": by_name,
        "out_dir": args.out or os.path.join(HERE, "results", datetime.date.today().isoformat() + ("-quick" if quick else "")),
        "workloads": workloads, "names": [w[0] for w in workloads], "classics": classics,
        "cost_workloads": [by_name[n] for n in (COST_WORKLOADS[:1] if quick else COST_WORKLOADS)],
        "latency_workloads": classics[:1] if quick else classics, "perf_set": perf_set,
    }


def main():
    charts.ensure_matplotlib()  # may install it, or run this script again under Debian's python3
    args, plan = make_plan()
    os.makedirs(plan["out_dir"], exist_ok=True)
    b = Bench(args)
    t0 = time.time()

    def log(msg):
        print(f"[{time.time() - t0:6.1f}s] {msg}", flush=True)

    m = {}
    m["limits"], m["limits_err"] = measure_limits(args, plan["quick"])
    log("limits measured" if m["limits"] else f"limits: {m['limits_err']}")
    m["acc"] = measure_accuracy(b, plan["workloads"], log)
    m["over"] = measure_overhead(b, plan["cost_workloads"], plan["runs"], log)
    m["depth"], m["threads"] = measure_scaling(b, plan["quick"], log)
    m["lat"] = measure_latency(b, plan["latency_workloads"], log)
    m["perf"], m["perf_err"] = measure_perf(b, plan["perf_set"], log)
    m["stab"] = stability.measure_stability(b, plan["quick"], log)
    m["cost"] = sample_cost.measure_sample_cost(b, plan["quick"], log)
    m["esc"] = escapes.measure_escapes(b, plan["quick"], log)
    m["memory"] = measure_memory(b, plan["quick"], log)
    log(f"{b.runs} runs of minivm")
    m["seconds"], m["minivm_runs"] = time.time() - t0, b.runs
    write_report(plan, m)
    shutil.rmtree(b.tmp, ignore_errors=True)
    log(f"wrote {os.path.relpath(plan['out_dir'], ROOT)}/report.md")


if __name__ == "__main__":
    main()
