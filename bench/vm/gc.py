#!/usr/bin/env python3
"""The collector, measured: pauses, time to safepoint and peak memory (numbers and
verdicts, never a timed test).

1. Allocation: `alloc` and `sieve` under minivm's three modes with --gc-log, against
   lua5.4 and luajit (which collect too): wall time, peak RSS, collections, and pause
   and time-to-safepoint percentiles.
2. Object graphs: binary_trees at depth 16 under --heap=64m in the three modes, with the
   generational collector (the default) and with --gc=full: collections of each kind,
   pause percentiles, the collector's share of the run (its pauses over the wall time)
   and peak RSS. The issue's rule: an allocation-heavy program may spend at most a third
   of its time in the collector; above it, a young generation is due.
3. Time to safepoint: examples/time_to_safepoint.mini under --xcomp with no strip mining,
   the default strip mining and --counted-loop-polls: how long collections wait for the
   thread in the counted loop, and where it stopped.

Configurations alternate (machine noise hits all alike); medians of --runs runs.
Usage: bench/vm/gc.py [--minivm PATH] [--runs N]
"""
import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
GC_LINE = re.compile(r"^\[gc \d+\] (?P<kind>young|full), [^:]+: pause (?P<pause>[\d.]+) ms \(time to safepoint (?P<ttsp>[\d.]+) ms, "
                     r"\d+ threads? stopped, (?:no thread to wait for|last to stop: thread \d+ at (?P<where>[^()]+ \([^()]*\))"
                     r"(?:, (?P<cpu>[\d.]+) ms of it on a CPU)?)\)")


def run(cmd):
    """(stdout, stderr, wall seconds, peak RSS in MB) of one run; exits on failure. Output
    goes through files, so a long --gc-log cannot fill a pipe while we wait."""
    # A child's peak RSS starts at its parent's at fork, so python's own would hide a
    # smaller one: /usr/bin/time (a small parent) measures it when it is installed.
    timer = ["/usr/bin/time", "-f", "%M", "-o"] if os.access("/usr/bin/time", os.X_OK) else None
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err, \
            tempfile.NamedTemporaryFile("w+") as rss:
        t0 = time.perf_counter()
        p = subprocess.Popen((timer + [rss.name] if timer else []) + cmd, stdout=out, stderr=err)
        _, status, usage = os.wait4(p.pid, 0)
        wall = time.perf_counter() - t0
        p.returncode = 0  # reaped by wait4
        out.seek(0)
        err.seek(0)
        o, e = out.read(), err.read()
        peak_kb = int(rss.read().split()[-1]) if timer and status == 0 else usage.ru_maxrss
    if status != 0:
        sys.exit(f"gc.py: '{' '.join(cmd)}' failed (wait status {status}):\n{e[-2000:]}")
    return o, e, wall, peak_kb / 1024.0


def pct(values, q):
    """Nearest-rank percentile (q in 0..100) of a non-empty list."""
    s = sorted(values)
    k = max(0, min(len(s) - 1, int(round(q / 100.0 * len(s) + 0.5)) - 1))
    return s[k]


def gc_events(err):
    return [m for m in (GC_LINE.match(l) for l in err.splitlines()) if m]


def fmt_ms(values):
    if not values:
        return "n/a"
    return f"{pct(values, 50):.2f} / {pct(values, 99):.2f} / {max(values):.2f}"


def allocation(minivm, runs, have_lua, have_luajit):
    configs = [("minivm --xint", [minivm, "run", "--xint", "--gc-log"], ".mini"),
               ("minivm --xcomp", [minivm, "run", "--xcomp", "--gc-log"], ".mini"),
               ("minivm tiered", [minivm, "run", "--gc-log"], ".mini")]
    if have_lua:
        configs.append(("lua5.4", ["lua5.4"], ".lua"))
    if have_luajit:
        configs.append(("luajit", ["luajit"], ".lua"))
    print("## Allocation\n")
    print("| program | configuration | wall s (median) | peak RSS MB (max) | collections | pause ms p50 / p99 / max "
          "| time to safepoint ms p50 / p99 / max |")
    print("|---|---|---|---|---|---|---|")
    verdicts = []
    for prog in ("alloc", "sieve"):
        stats = {name: {"wall": [], "rss": [], "gcs": [], "pause": [], "ttsp": [], "out": set()}
                 for name, _, _ in configs}
        for _ in range(runs):
            for name, cmd, ext in configs:
                out, err, wall, rss = run(cmd + [os.path.join(HERE, prog + ext)])
                st = stats[name]
                st["wall"].append(wall)
                st["rss"].append(rss)
                ev = gc_events(err)
                st["gcs"].append(len(ev))
                st["pause"] += [float(m["pause"]) for m in ev]
                st["ttsp"] += [float(m["ttsp"]) for m in ev]
                st["out"].add(out)
        outs = set().union(*(st["out"] for st in stats.values()))
        if len(outs) != 1:
            sys.exit(f"gc.py: {prog}: the configurations disagree: {outs}")
        for name, _, _ in configs:
            st = stats[name]
            mini = name.startswith("minivm")
            print(f"| {prog} | {name} | {statistics.median(st['wall']):.2f} | {max(st['rss']):.1f} | "
                  f"{statistics.median(st['gcs']) if mini else 'n/a'} | {fmt_ms(st['pause']) if mini else 'n/a'} | "
                  f"{fmt_ms(st['ttsp']) if mini else 'n/a'} |")
        worst = max(max(stats[n]["rss"]) for n, _, _ in configs if n.startswith("minivm"))
        verdicts.append((f"{prog}: minivm's peak RSS {worst:.1f} MB stays under 64 MB (the heap is 4 GB of "
                         "address space; a collection is due every 8 MB of allocation, a full one once "
                         "the old generation has doubled)", worst < 64))
    print()
    return verdicts


TREE_DEPTH = 16
TREE_HEAP = "64m"
COLLECTOR_SHARE_LIMIT = 1 / 3


def object_graphs(minivm, runs):
    prog = os.path.join(HERE, "binary_trees.mini")
    modes = (("--xint", ["--xint"]), ("--xcomp", ["--xcomp"]), ("tiered", []))
    configs = [(f"{mode} --gc={gc}", [minivm, "run", *flags, f"--gc={gc}", f"--heap={TREE_HEAP}", "--gc-log", "-D",
                                      f"DEPTH={TREE_DEPTH}", prog])
               for mode, flags in modes for gc in ("generational", "full")]
    print(f"## Object graphs (binary_trees, depth {TREE_DEPTH}, --heap={TREE_HEAP})\n")
    print("| mode and collector | wall s (median) | collections young + full | pause ms p50 / p90 / p99 / max | "
          "collector's share of the run (median) | peak RSS MB (max) |")
    print("|---|---|---|---|---|---|")
    stats = {name: {"wall": [], "rss": [], "young": [], "full": [], "pause": [], "share": [], "total": [],
                    "out": set()} for name, _ in configs}
    for _ in range(runs):
        for name, cmd in configs:
            out, err, wall, rss = run(cmd)
            ev = gc_events(err)
            st = stats[name]
            pauses = [float(m["pause"]) for m in ev]
            st["wall"].append(wall)
            st["rss"].append(rss)
            st["young"].append(sum(1 for m in ev if m["kind"] == "young"))
            st["full"].append(sum(1 for m in ev if m["kind"] == "full"))
            st["pause"] += pauses
            st["total"].append(sum(pauses))
            st["share"].append(sum(pauses) / 1000.0 / wall)
            st["out"].add(out)
    outs = set().union(*(st["out"] for st in stats.values()))
    if len(outs) != 1:
        sys.exit(f"gc.py: binary_trees: the modes disagree: {outs}")
    verdicts = []
    for name, _ in configs:
        st = stats[name]
        p = st["pause"]
        pauses = f"{pct(p, 50):.2f} / {pct(p, 90):.2f} / {pct(p, 99):.2f} / {max(p):.2f}" if p else "n/a"
        share = statistics.median(st["share"])
        print(f"| {name} | {statistics.median(st['wall']):.2f} | {statistics.median(st['young'])} + "
              f"{statistics.median(st['full'])} | {pauses} | {share * 100:.1f}% | {max(st['rss']):.1f} |")
        if name.endswith("generational"):
            verdicts.append((f"binary_trees {name}: the collector takes {share * 100:.1f}% of the run, at most a "
                             "third", share <= COLLECTOR_SHARE_LIMIT))
    print()
    for mode, _ in modes:
        gen, full = (statistics.median(stats[f"{mode} --gc={gc}"]["total"]) for gc in ("generational", "full"))
        print(f"- {mode}: pauses add up to {gen:.1f} ms generational against {full:.1f} ms full "
              f"({gen / full:.2f}x, medians of the runs' totals)")
    print()
    return verdicts


def time_to_safepoint(minivm, runs):
    prog = os.path.join(ROOT, "examples", "time_to_safepoint.mini")
    configs = [("--strip-mining=0", ["--strip-mining=0"]), ("default strip mining", []),
               ("--counted-loop-polls", ["--counted-loop-polls"])]
    print("## Time to safepoint (examples/time_to_safepoint.mini, --xcomp)\n")
    print("| polls in the counted loop | collections | time to safepoint ms p50 / p99 / max | pause ms p50 / p99 / max "
          "| most frequent last-to-stop place |")
    print("|---|---|---|---|---|")
    stats = {name: {"ttsp": [], "pause": [], "where": {}, "gcs": []} for name, _ in configs}
    for _ in range(runs):
        for name, flags in configs:
            _, err, _, _ = run([minivm, "run", "--xcomp", "--gc-log", *flags, prog])
            ev = gc_events(err)
            st = stats[name]
            st["gcs"].append(len(ev))
            st["ttsp"] += [float(m["ttsp"]) for m in ev]
            st["pause"] += [float(m["pause"]) for m in ev]
            for m in ev:
                if m["where"]:
                    w = m["where"].replace(prog, os.path.basename(prog))
                    st["where"][w] = st["where"].get(w, 0) + 1
    for name, _ in configs:
        st = stats[name]
        where = max(st["where"].items(), key=lambda kv: kv[1])[0] if st["where"] else "none waited for"
        print(f"| {name} | {statistics.median(st['gcs'])} | {fmt_ms(st['ttsp'])} | {fmt_ms(st['pause'])} | {where} |")
    print()
    # Medians: on a shared 2-core machine any thread may wait a scheduler slice for a
    # core, which no poll placement helps; the tail shows that, the median the loop.
    def median(name):
        return statistics.median(stats[name]["ttsp"]) if stats[name]["ttsp"] else 0.0
    none, mined, polls = median("--strip-mining=0"), median("default strip mining"), median("--counted-loop-polls")
    return [(f"without polls in the loop a collection waits for it (median {none:.1f} ms, over 50 ms)", none > 50),
            (f"strip mining bounds the wait (median {mined:.2f} ms, under a tenth of {none:.1f})", mined < none / 10),
            (f"--counted-loop-polls bounds it too (median {polls:.2f} ms, under a tenth of {none:.1f})",
             polls < none / 10)]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--minivm", default=os.path.join(ROOT, "build", "vm", "cli", "minivm"))
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    minivm = os.path.abspath(args.minivm)
    if not os.access(minivm, os.X_OK):
        sys.exit(f"gc.py: no minivm binary at {minivm} (build first, or pass --minivm)")
    have_lua, have_luajit = shutil.which("lua5.4") is not None, shutil.which("luajit") is not None
    for tool, have in (("lua5.4", have_lua), ("luajit", have_luajit)):
        if not have:
            print(f"note: {tool} is not installed (apt-get install lua5.4 luajit); its rows are skipped\n")
    verdicts = allocation(minivm, args.runs, have_lua, have_luajit)
    verdicts += object_graphs(minivm, args.runs)
    verdicts += time_to_safepoint(minivm, args.runs)
    print("## Verdicts\n")
    for text, ok in verdicts:
        print(f"- {'met' if ok else 'MISSED'}: {text}")


if __name__ == "__main__":
    main()
