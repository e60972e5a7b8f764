#!/usr/bin/env python3
"""End-to-end checks of `minivm run --profile`: the cooperative sampler corrects the
safepoint bias that the safepoint sampler shows, the accounting adds up exactly, the
output files parse, and a stress run (8 threads, 10 kHz) neither crashes nor hangs.
Prints `N passed, N failed`."""
import collections
import glob
import json
import os
import re
import subprocess
import sys
import tempfile

from checks import check, events, finish, run_minivm


def parse_ns(duration):
    """A duration as the command line takes it ("100us", "2ms") in nanoseconds."""
    m = re.fullmatch(r"(\d+)(ns|us|ms|s)", duration)
    return int(m.group(1)) * {"ns": 1, "us": 1000, "ms": 1000000, "s": 1000000000}[m.group(2)]

MINIVM = sys.argv[1]
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "bench"))
from run import sampler_names  # noqa: E402


def run(*args, timeout=300):
    return run_minivm(MINIVM, "run", *args, timeout=timeout)


# Starts a command and writes its peak RSS (KB) to a file. A child's ru_maxrss includes the
# memory of the process it was forked from until its exec (the kernel keeps the old
# mm's high-water mark), so minivm is started from this small process, not from the test,
# whose own memory (the events it has read) would be measured instead.
PEAK_SHIM = """import resource, subprocess, sys
p = subprocess.run(sys.argv[2:])
with open(sys.argv[1], "w") as f:
    f.write(str(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss))
sys.exit(p.returncode % 256)
"""


def run_peak(tmp, *args):
    """`minivm run ARGS...` to its end: (exit status, stdout, stderr, its peak RSS in MB)."""
    peak = os.path.join(tmp, "peak.kb")
    p = subprocess.run([sys.executable, "-c", PEAK_SHIM, peak, MINIVM, "run", *args], capture_output=True, text=True)
    with open(peak) as f:
        return p.returncode, p.stdout, p.stderr, int(f.read()) / 1024


class BusySiblings:
    """One busy process per core while the block runs: a loaded machine, on which a thread
    waits for a core."""

    def __enter__(self):
        self.procs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(os.cpu_count() or 1)]
        return self

    def __exit__(self, *exc):
        for p in self.procs:
            p.kill()
            p.wait()


# The outcomes the profiler counts without an interruption id (so without a .jsonl event).
WITHOUT_ID = ("program_ended_before_poll", "signal_not_delivered", "thread_gone")


ACCOUNTING_ROW = re.compile(r"^  (\w+)\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)  (.*)$", re.M)


def accounting_rows(stderr):
    """The accounting table of a several-sampler text report: sampler -> (interruptions,
    samples, biased, failed, dropped, notes), the notes naming each reason with its count."""
    at = stderr.find("Accounting per sampler")
    if at < 0:
        return {}
    block = stderr[at:].split("\n\n")[0]
    return {m.group(1): tuple(int(m.group(i)) for i in range(2, 7)) + (m.group(7),)
            for m in ACCOUNTING_ROW.finditer(block)}


def counts_by_sampler(stderr):
    """Per sampler of a several-sampler text report: (interruptions, outcomes counted
    without an id: every drop and the failures in WITHOUT_ID)."""
    out = {}
    for name, (interruptions, _, _, _, dropped, notes) in accounting_rows(stderr).items():
        without = sum(int(n) for r in WITHOUT_ID for n in re.findall(rf"\b{r} (\d+)", notes))
        out[name] = (interruptions, dropped + without)
    return out


SAMPLERS = sampler_names(MINIVM)  # in report order, from the binary's own table


def same_interruptions(ev, stderr):
    """Whether every method of a several-sampler run reported on the same interruptions, and
    the evidence. "The same interruptions" is what the text report counts per method; the
    .jsonl only names those that ended in an event. A request still waiting when the program
    ended (program_ended_before_poll) is counted without an id, for cooperative and safepoint
    only (the other methods walk at the interruption); a dropped one (ring_full) has a
    DroppedSample event, which this does not read, so drops count as without one here. So
    the counts must be equal, each method's ids plus what it counted without an id must
    make its count, and the ids it lacks of those any method reported must be among the
    ones it counted without an id."""
    counts = counts_by_sampler(stderr)
    ran = [s for s in SAMPLERS if s in counts]  # the methods of the run
    ids = {s: set() for s in ran}
    for e in ev:
        if e["event"] in ("ExecutionSample", "NativeMethodSample", "FailedSample"):
            ids[e["sampler"]].add(e["sample"])
    every_id = set().union(*ids.values())
    total = lambda s: counts.get(s, (None, 0))[0]
    without_id = lambda s: counts.get(s, (0, 0))[1]
    ok = (len(ran) > 1 and len(every_id) > 5 and len({total(s) for s in ran}) == 1
          and all(len(ids[s]) + without_id(s) == total(s) and len(every_id - ids[s]) <= without_id(s) for s in ran))
    return ok, {s: f"{total(s)} counted, {len(ids[s])} ids, {without_id(s)} without one, "
                   f"{len(every_id - ids[s])} ids of others missing" for s in ran}


def accounted(stderr):
    """The text report says every sampler's accounting adds up: the one sampler's section,
    or every row of the several samplers' accounting table."""
    rows = accounting_rows(stderr)
    if rows:
        return all(notes.startswith("all accounted for") for *_, notes in rows.values())
    return stderr.count("== sampler:") == 1 and len(re.findall(r"= interruptions: all accounted for", stderr)) == 1


with tempfile.TemporaryDirectory() as tmp:
    example = os.path.join(ROOT, "examples", "counted_loop_then_setter.mini")
    # The compiled runs turn strip mining off: the classic bias is a counted loop with no
    # poll inside, and a strip poll (once per 2^20 counted iterations) lands in the loop
    # for about 5% of requests, which on a loaded machine (few samples) can push the
    # setter's share under the 90% this checks. The strip polls are tested below.
    for mode, suspend in (("--xcomp", "signal"), ("--xint", "signal"), ("--xcomp", "handshake")):
        out = os.path.join(tmp, "bias.jsonl")
        strip = ["--strip-mining=0"] if mode == "--xcomp" else []
        rc, so, se = run(mode, *strip, "--profile", f"--profile-out={out}", "--interval=500us", f"--suspend={suspend}",
                         "--sampler=cooperative,safepoint", example)
        mode = f"{mode} {suspend}"
        check(f"profiled example runs ({mode})", rc == 0 and so.startswith("total "), se)
        ev = events(out)
        by = collections.defaultdict(list)
        for e in ev:
            if e["event"] == "ExecutionSample":
                by[e["sampler"]].append(e)
        coop, safe = by["cooperative"], by["safepoint"]
        check(f"both samplers saw the same interruptions ({mode})",
              len(coop) > 20 and sorted(e["sample"] for e in coop) == sorted(e["sample"] for e in safe),
              f"{len(coop)} vs {len(safe)}")
        check(f"every safepoint sample is biased by construction, reason taken_at_poll ({mode})",
              safe and all(e["biased"] and e.get("reason") == "taken_at_poll" for e in safe),
              [e for e in safe if not (e["biased"] and e.get("reason") == "taken_at_poll")][:3])
        in_loop = sum(1 for e in coop if e["stack"][0]["function"] == "work" and e["stack"][0]["line"] in (18, 19))
        check(f"cooperative puts the time on the loop, lines 18-19 ({mode})", in_loop >= 0.9 * len(coop),
              f"{in_loop} of {len(coop)}")
        if mode.startswith("--xcomp"):
            # Compiled counted loops have no poll: the next poll is the setter's return.
            at_store = sum(1 for e in safe if e["stack"][0]["function"] == "store")
            check("the safepoint sampler charges the loop to the setter (compiled)", at_store >= 0.9 * len(safe),
                  f"{at_store} of {len(safe)}")
        # Regression: a signal landing in the poll's own SIGSEGV handler (C++ on a thread
        # still marked in_java) used to become a biased unknown_pc sample under load.
        unknown = [e for e in coop if e.get("reason") == "unknown_pc"]
        check(f"no interruption lands in the VM's own code as unknown_pc ({mode})", not unknown, unknown[:3])
        check(f"every cooperative sample has its latency event ({mode})",
              sum(1 for e in ev if e["event"] == "SafepointLatency") == len(coop))
        check(f"text report accounting adds up ({mode})", accounted(se), se)

    # Output formats from one run.
    files = {ext: os.path.join(tmp, "p" + ext) for ext in (".txt", ".collapsed", ".json", ".html", ".jsonl")}
    counts = {}
    for ext, path in files.items():
        rc, so, se = run("--xcomp", "--profile", f"--profile-out={path}", "--interval=500us", example)
        check(f"--profile-out {ext}", rc == 0 and os.path.getsize(path) > 0, se)
    with open(files[".json"]) as f:
        sp = json.load(f)
    check("speedscope file has a sampled profile", sp["profiles"][0]["type"] == "sampled")
    with open(files[".collapsed"]) as f:
        lines = [l.rstrip("\n") for l in f if l.strip()]
    # A frame may hold a space ("print (native)"): the count is after the last one.
    check("folded stacks are 'frame;frame count'", all(re.fullmatch(r"[^;]+(;[^;]+)* \d+", l) for l in lines),
          "\n".join(lines))
    with open(files[".html"]) as f:
        html = f.read()
    check("html flame graph is self-contained", "<script" in html and "http://" not in html and "https://" not in html)

    # A thread in native code is sampled from its anchor: NativeMethodSample events whose
    # top frame is the native, over the Mini frame that called it.
    native = os.path.join(ROOT, "tests", "profiler", "native_beside_java.mini")
    out = os.path.join(tmp, "native.jsonl")
    rc, so, se = run("--profile", f"--profile-out={out}", "--sampler=cooperative,safepoint", native)
    check("native program runs", rc == 0 and so == "true\n", se)
    ev = events(out)
    nat = [e for e in ev if e["event"] == "NativeMethodSample"]
    check("native thread yields NativeMethodSample events", len(nat) >= 20, f"{len(nat)} native samples")
    # (main's own print at the end is a native too: a sample may land in it under load.)
    check("their top frame is the native, kind native, over spin",
          all(e["stack"][0]["kind"] == "native" and
              [f["function"] for f in e["stack"][:2]] in (["native_spin_ns", "spin"], ["print", "main"]) for e in nat)
          and sum(1 for e in nat if e["stack"][0]["function"] == "native_spin_ns") >= 20,
          [e["stack"] for e in nat if e["stack"][0]["function"] != "native_spin_ns"][:2])
    ids = collections.Counter(e["sample"] for e in nat)
    check("one native sample per sampler for each visit, same id", set(ids.values()) == {2}, str(ids.most_common(3)))
    check("native run accounting adds up", accounted(se), se)

    # Samples inside the frameless arraycopy stub: biased without metadata, a stub frame
    # over the compiled caller with --stub-metadata; as many as the oracle finds in the
    # stub on the same interruptions (how long a copy takes is the CPU's and memory's own),
    # within 3.29 standard errors of the difference.
    copy = os.path.join(ROOT, "examples", "arraycopy_heavy.mini")
    for flags, want_stub in (([], False), (["--stub-metadata"], True)):
        out = os.path.join(tmp, "copy.jsonl")
        rc, so, se = run("--xcomp", "--profile", f"--profile-out={out}", "--sampler=cooperative,oracle", *flags, copy)
        ev = events(out)
        smp = [e for e in ev if e["event"] == "ExecutionSample" and e["sampler"] == "cooperative"]
        orc = [e for e in ev if e["event"] == "ExecutionSample" and e["sampler"] == "oracle"]
        in_stub = [e for e in smp if e["stack"][0]["kind"] == "stub"]
        biased = [e for e in smp if e["biased"] and e.get("reason") == "pc_in_stub"]
        stub = sum(1 for e in orc if e["stack"][0]["kind"] == "stub") / max(1, len(orc))
        tol = 3.29 * (max(stub * (1 - stub), 1 / max(1, len(orc))) * 2 / max(1, len(orc))) ** 0.5
        got = len(in_stub if want_stub else biased) / max(1, len(smp))
        seen = f"{got:.1%} of {len(smp)} against the oracle's {stub:.1%} of {len(orc)} (within {tol:.1%}?)"
        if want_stub:
            check(f"--stub-metadata: stub frame over copy_rows:10 as often as the oracle's, nothing biased by the stub: "
                  f"{seen}",
                  len(smp) >= 20 and abs(got - stub) <= tol and not biased
                  and all(e["stack"][0]["function"] == "arraycopy" and e["stack"][1]["function"] == "copy_rows"
                          and e["stack"][1]["line"] == 10 for e in in_stub))
        else:
            check(f"without stub metadata, samples in the stub are biased (pc_in_stub), as many as the oracle "
                  f"finds there: {seen}", len(smp) >= 20 and abs(got - stub) <= tol and not in_stub)
        check(f"arraycopy accounting adds up {flags}", rc == 0 and accounted(se), se)

    # --sampler=all on every example, tiered and interpreted: every method reports on the
    # same interruptions, the cooperative stack equals the oracle's (exact) on at least 95%
    # of them, a cooperative stack that differs is a counted biased sample, and each
    # method's accounting adds up ("the same interruptions": same_interruptions).
    key = lambda st: [(f["function"], f["line"], f["kind"]) for f in st]
    agreement = {}
    for ex in sorted(glob.glob(os.path.join(ROOT, "examples", "*.mini"))):
        name = os.path.basename(ex)[:-5]
        for mode in ("--tiered", "--xint"):
            out = os.path.join(tmp, "all.jsonl")
            args = ([] if mode == "--tiered" else [mode]) + ["--profile", "--sampler=all", "--stub-metadata",
                                                             "--interval=250us", f"--profile-out={out}", ex]
            # Some examples finish in a tenth of a second once compiled: on a loaded machine
            # such a run may get only a few interruptions, too few for the checks below, so
            # it is repeated (up to 5 times) until cooperative has 20 samples.
            for _ in range(5):
                rc, so, se = run(*args)
                ev = events(out) if rc == 0 else []
                if sum(1 for e in ev if e["event"] in ("ExecutionSample", "NativeMethodSample")
                       and e["sampler"] == "cooperative") >= 20:
                    break
            what = f"{name} {mode}"
            check(f"--sampler=all runs ({what})", rc == 0, se[-2000:])
            stacks = {s: {} for s in SAMPLERS}
            biased = set()
            for e in ev:
                if e["event"] in ("ExecutionSample", "NativeMethodSample"):
                    stacks[e["sampler"]][e["sample"]] = key(e["stack"])
                    if e["sampler"] == "cooperative" and e["biased"]:
                        biased.add(e["sample"])
            check(f"every method saw the same interruptions ({what})", *same_interruptions(ev, se))
            # Agreement on the interruptions both turned into a stack (a drop is no stack).
            oracle = stacks["oracle"]
            both = [i for i in stacks["cooperative"] if i in oracle]
            same = sum(1 for i in both if oracle[i] == stacks["cooperative"][i])
            agreement[what] = same / max(1, len(both))
            check(f"cooperative equals the oracle on >= 95% ({what})", len(both) > 5 and same >= 0.95 * len(both),
                  f"{same} of {len(both)}")
            unflagged = [i for i, st in stacks["cooperative"].items() if i in oracle and oracle[i] != st and i not in biased]
            check(f"a cooperative stack that differs from the oracle's is a counted biased sample ({what})",
                  not unflagged, [(stacks["cooperative"][i][:3], oracle[i][:3]) for i in unflagged[:2]])
            check(f"--sampler=all accounting adds up for every method ({what})",
                  accounted(se) and len(accounting_rows(se)) == 5, se[-3000:])
            if name == "counted_loop_then_setter" and mode == "--tiered":
                top_ok = sum(1 for i, st in stacks["safepoint"].items() if oracle.get(i, [None])[:1] == st[:1])
                check("the safepoint sampler's top line is wrong on most samples of the hot counted loop",
                      top_ok < 0.5 * len(oracle), f"{top_ok} of {len(oracle)} right")
    print("cooperative = oracle:", ", ".join(f"{k} {v:.1%}" for k, v in sorted(agreement.items())))

    # The VM's own C++ on a thread still marked in Java (nanotime never leaves Mini code;
    # print's way back runs in C++): every sampler takes the interruption at the anchor,
    # the Mini frame that made the call, so none is a pc in no code (unknown_pc), and the
    # cooperative stack is the oracle's. Repeated (up to 5 runs) until 50 samples.
    builtins = os.path.join(ROOT, "tests", "profiler", "builtins_in_java.mini")
    for mode in ("--xint", "--xcomp"):
        out = os.path.join(tmp, "builtins.jsonl")
        for _ in range(5):
            rc, so, se = run(mode, "--profile", "--sampler=all", "--interval=250us", f"--profile-out={out}", builtins)
            ev = events(out) if rc == 0 else []
            stacks = {s: {} for s in SAMPLERS}
            for e in ev:
                if e["event"] == "ExecutionSample":
                    stacks[e["sampler"]][e["sample"]] = key(e["stack"])
            if len(stacks["oracle"]) >= 50:
                break
        check(f"builtins_in_java runs ({mode})", rc == 0 and so.endswith("done true\n"), se[-2000:])
        # Only a thread entering or leaving Mini code has no anchor: its C++ there, still
        # marked in Java, is a pc in no code (before its first sample or after its last).
        sampled = [e["sample"] for e in ev if e["event"] == "ExecutionSample"]
        first, last = (min(sampled), max(sampled)) if sampled else (-1, float("inf"))  # none: every one counts
        unknown = [e for e in ev if e.get("reason") == "unknown_pc" and first < e["sample"] < last]
        check(f"an interruption in the VM's C++ is taken at the anchor, unknown_pc only where the thread enters "
              f"or leaves Mini code ({mode})", not unknown,
              f"unknown_pc by sampler: {collections.Counter(e['sampler'] for e in unknown)}, "
              f"oracle samples: {len(stacks['oracle'])}")
        oracle = stacks["oracle"]
        both = [i for i in stacks["cooperative"] if i in oracle]
        same = sum(1 for i in both if oracle[i] == stacks["cooperative"][i])
        check(f"cooperative equals the oracle in builtins_in_java on >= 95% ({mode})",
              len(both) >= 50 and same >= 0.95 * len(both), f"{same} of {len(both)}")
        check(f"builtins_in_java accounting adds up ({mode})", accounted(se), se[-3000:])

    # Classical fails in prologues and epilogues, by reason. Which pc gets which reason is
    # the unit tests' (tests/unit/test_walkers.cpp); here it is seen on real interruptions.
    # The interpreter's return sequence is a few instructions: about 1% of the in-Java
    # interruptions of tiny_function_in_hot_loop --xint land there (prologues: ~15%), so a
    # run of ~150 interruptions, all a loaded machine gives, misses it one time in six.
    # Runs are added until 2000 in-Java interruptions: P(no epilogue) < e^-(0.007*2000) < 1e-6
    # even at 0.7%. A machine too loaded to get there in 20 runs checks the prologue only
    # (P(none in 150) < 1e-10).
    tiny = os.path.join(ROOT, "examples", "tiny_function_in_hot_loop.mini")
    out = os.path.join(tmp, "tiny.jsonl")
    fails, in_java = collections.Counter(), 0
    for _ in range(20):
        rc, so, se = run("--xint", "--profile", "--sampler=classical", "--interval=100us", f"--profile-out={out}", tiny)
        for e in events(out):
            if e["event"] == "FailedSample":
                fails[e["reason"]] += 1
            in_java += e["event"] == "ExecutionSample" or (e["event"] == "FailedSample" and e["reason"] != "not_in_java")
        if in_java >= 2000:
            break
    check("classical fails in prologues (pc_in_prologue)", in_java >= 150 and fails["pc_in_prologue"] > 0,
          f"{in_java} in Java: {dict(fails)}")
    print(f"classical on tiny_function_in_hot_loop --xint: {in_java} in-Java interruptions, failures {dict(fails)}")
    if in_java >= 2000:
        check("classical fails in epilogues (pc_in_epilogue)", fails["pc_in_epilogue"] > 0, f"{in_java} in Java: {dict(fails)}")
    else:
        print(f"note: only {in_java} in-Java interruptions in 20 runs: pc_in_epilogue not checked")

    # Classical and async cannot leave a frameless stub: failed samples by reason, where
    # cooperative (no metadata) keeps a biased sample and the oracle the exact stack.
    out = os.path.join(tmp, "stub.jsonl")
    rc, so, se = run("--xcomp", "--profile", "--sampler=all", "--interval=500us", f"--profile-out={out}",
                     os.path.join(ROOT, "examples", "arraycopy_heavy.mini"))
    ev = events(out)
    fails = collections.Counter((e["sampler"], e["reason"]) for e in ev if e["event"] == "FailedSample")
    in_stub = [e for e in ev if e["event"] == "ExecutionSample" and e["sampler"] == "oracle" and e["stack"][0]["kind"] == "stub"]
    check("classical and async fail with pc_in_stub; the oracle names the stub",
          fails[("classical", "pc_in_stub")] > 0 and fails[("async", "pc_in_stub")] > 0 and len(in_stub) > 0
          and fails[("oracle", "pc_in_stub")] == 0, dict(fails))

    # Stacks rebuilt between samples at the same addresses, through one of two call sites:
    # the poll takes the frames found where they were from the watermark's stale part
    # (poll_client.cpp), and only a frame's return pc (compiled) or bcp (interpreted) tells
    # the two call sites apart. Every cooperative stack must equal the oracle's, and the
    # stale part must be used (frames taken from the watermark on average).
    rebuilt = os.path.join(ROOT, "tests", "profiler", "rebuilt_stacks.mini")
    for mode, rounds in (("--xint", 8000), ("--xcomp", 40000)):
        out, stats = os.path.join(tmp, "rebuilt.jsonl"), os.path.join(tmp, "rebuilt.json")
        rc, so, se = run(mode, "-D", f"ROUNDS={rounds}", "--sampler=cooperative,oracle", "--interval=250us",
                         f"--profile-out={out}", f"--profile-stats={stats}", rebuilt)
        ev = events(out) if rc == 0 else []
        stacks = collections.defaultdict(dict)
        for e in ev:
            if e["event"] == "ExecutionSample":
                stacks[e["sampler"]][e["sample"]] = (key(e["stack"]), e["biased"])
        both = [i for i in stacks["cooperative"] if i in stacks["oracle"]]
        wrong = [i for i in both if stacks["cooperative"][i][0] != stacks["oracle"][i][0]]
        check(f"stacks rebuilt alike between samples: cooperative equals the oracle on every sample ({mode})",
              rc == 0 and len(both) >= 100 and not wrong,
              f"{len(wrong)} of {len(both)} differ: " + "; ".join(
                  f"{stacks['cooperative'][i][0][:3]} vs {stacks['oracle'][i][0][:3]}" for i in wrong[:2]) + se[-1000:])
        walks = json.load(open(stats)).get("poll_walks", {}) if rc == 0 else {}
        check(f"stacks rebuilt alike: the poll takes most frames from the watermark ({mode})",
              walks.get("polls", 0) > 0 and walks["frames_cached"] > 0.25 * (walks["frames_cached"] + walks["frames_walked"]),
              walks)

    # A long counted loop still serves requests within a bound (the strip-mined latch
    # poll), and the latency shows the wait; without strip mining the thread's store of
    # requests overflows (tests/test_stretches.py checks what it keeps).
    # The bound is checked on the median: a strip poll comes every ~1 ms of the loop's CPU
    # time, but any one request also waits while the thread is off its core, and on a
    # loaded machine the longest wait (seen: 107 ms, 233 ms) measures the scheduler.
    long_loop = os.path.join(ROOT, "tests", "profiler", "long_counted_loop.mini")
    out = os.path.join(tmp, "long.jsonl")
    rc, so, se = run("--xcomp", "--profile", "--interval=500us", f"--profile-out={out}", long_loop)
    lat = sorted(e["latency_ns"] for e in events(out) if e["event"] == "SafepointLatency")
    drops = re.search(r"dropped\s+(\d+)", se)
    check("a long counted loop is served at its strip-mined poll: no drops, median latency under 100 ms",
          rc == 0 and len(lat) > 200 and drops and drops.group(1) == "0" and lat[len(lat) // 2] < 100e6,
          f"{len(lat)} latencies, median {lat[len(lat) // 2] if lat else None} ns, max {lat[-1] if lat else None} ns; "
          f"{se[-1500:]}")
    # Of each latency, the thread's time on a CPU, read on the thread itself at both ends:
    # the loop runs to its poll, so nearly every one has some, and a thread that kept its
    # core for a request has most of its latency. On a machine made busy, one core per
    # busy process, the thread waits for a core during some requests: most of those
    # latencies off a CPU.
    both = [(e["latency_ns"], e["cpu_ns"]) for e in events(out) if e["event"] == "SafepointLatency"]
    check("a latency's time on a CPU is some of it, nearly always, and most of it for a thread that kept its core",
          both and sum(1 for l, c in both if c > 0) >= 0.9 * len(both) and any(l / 2 <= c <= l for l, c in both),
          both[:10])
    stats = os.path.join(tmp, "long.json")
    for attempt in range(3):
        with BusySiblings():
            rc, so, se = run("--xcomp", "--profile", "--interval=500us", f"--profile-out={out}",
                             f"--profile-stats={stats}", long_loop)
        both = [(e["latency_ns"], e["cpu_ns"]) for e in events(out) if e["event"] == "SafepointLatency"] if rc == 0 else []
        off = sum(1 for l, c in both if c < l / 2)
        if off:
            break
    st = json.load(open(stats))["samplers"][0] if rc == 0 else {}
    check("on a busy machine some latencies are mostly off a CPU, and the statistics count both times",
          off > 0 and all(c <= l for l, c in both) and st["latency_cpu_ns"]["n"] == st["latency_ns"]["n"] == len(both)
          and st["latency_cpu_ns"]["p50"] <= st["latency_ns"]["p50"],
          f"{off} of {len(both)} latencies mostly off a CPU; {st.get('latency_ns')} {st.get('latency_cpu_ns')}")
    nest = os.path.join(ROOT, "tests", "profiler", "nested_counted_loops.mini")
    rc, so, se = run("--xcomp", "--profile", "--interval=500us", nest)
    drops = re.search(r"dropped\s+(\d+)", se)
    check("a nest of short counted loops is served too (the countdown is shared by every loop)",
          rc == 0 and drops and drops.group(1) == "0" and accounted(se), se[-1500:])
    stubs = os.path.join(ROOT, "tests", "profiler", "stub_in_counted_loop.mini")
    rc, so, se = run("--xcomp", "--profile", "--interval=500us", f"--profile-out={out}", stubs)
    lat = sorted(e["latency_ns"] for e in events(out) if e["event"] == "SafepointLatency")
    drops = re.search(r"dropped\s+(\d+)", se)
    check("a counted loop around stub calls is served too (copied elements end the strip): no drops",
          rc == 0 and drops and drops.group(1) == "0" and accounted(se) and len(lat) > 50
          and lat[len(lat) // 2] < 100e6, f"{len(lat)} latencies; {se[-1500:]}")
    # Every method but classical: classical holds the thread for each interruption, and on
    # a loaded machine a hold can wait a whole time slice (4 ms), too few interruptions in
    # the loop to fill the store (256).
    rc, so, se = run("--xcomp", "--strip-mining=0", "--profile", "--sampler=cooperative,async,safepoint,oracle",
                     "--interval=500us", f"--profile-out={out}", long_loop)
    drops = re.search(r"ring_full\s+(\d+)", se)
    check("without strip mining the loop never polls: its requests overflow the store (counted)",
          rc == 0 and drops and int(drops.group(1)) > 0 and accounted(se), se[-1500:])
    check("the dropped requests are the interruptions cooperative and safepoint lack",
          *same_interruptions(events(out), se))

    # --interval-jitter: intervals drawn from interval * (1 +- 0.5). aliasing.mini spends the
    # first half of every millisecond in `first`, the second in `second`; a fixed 1 ms
    # interval may catch it at one phase every time (whether it does depends on the timer's
    # own jitter), random intervals must not: each function's share is near half. The
    # oracle's samples are where the interruptions landed, so they measure the phases.
    aliasing = os.path.join(ROOT, "bench", "accuracy", "aliasing.mini")
    out = os.path.join(tmp, "jitter.jsonl")
    for periods in (1500, 6000):  # more samples before failing: a share is a statistic
        rc, so, se = run("--xcomp", "--sampler=oracle", "--interval=1ms", "--interval-jitter=0.5", "-D", f"PERIODS={periods}",
                         "-o", out, aliasing)
        taken = [e for e in events(out) if e["event"] == "ExecutionSample"]
        first = sum(1 for e in taken if any(f["function"] == "first" for f in e["stack"]))
        share = first / max(1, len(taken))
        times = sorted(e["time_ns"] for e in taken)
        gaps = sorted(b - a for a, b in zip(times, times[1:]))
        spread = gaps[3 * len(gaps) // 4] - gaps[len(gaps) // 4] if len(gaps) > 100 else 0
        if 0.3 <= share <= 0.7 and spread >= 300_000:
            break
    check("the jittered interval is reported", rc == 0 and "interval 1 ms ± 50%" in se, se[:500])
    check(f"jittered intervals vary: the middle half of the gaps between samples spans {spread / 1e3:.0f} us "
          f"(uniform from 0.5 to 1.5 ms: 500 us)", spread >= 300_000, gaps[:: max(1, len(gaps) // 20)])
    check(f"random intervals do not alias: `first` has {100 * share:.1f}% of {len(taken)} samples (truth 50%)",
          0.3 <= share <= 0.7)

    # Bad flags.
    rc, so, se = run("--profile", "--interval=5parsecs", example)
    check("a bad interval is a usage error", rc == 2 and "bad interval" in se, se)
    rc, so, se = run("--profile", "--sampler=psychic", example)
    check("an unknown sampler is a usage error", rc == 2 and "unknown sampler 'psychic'" in se, se)
    rc, so, se = run("--profile-out=" + os.path.join(tmp, "x.xyz"), example)
    check("an unknown output extension is reported", "unknown extension" in se, se)

    # Threads that end are forgotten: 10,000 short threads (100 live at a time) keep the
    # memory of a few, and the hot loop after them is visited at the full rate. Before
    # per-thread state was freed this run peaked at gigabytes, and the sampler's visits
    # went round every thread ever started (a dozen samples of the hot loop in 2 s).
    # A thread's state is freed by the thread itself as it ends, and holds only what its
    # samplers use, so the peak is bounded by the threads alive at once (100 here) even on
    # a loaded machine (a busy process per core), where threads waiting for a core all
    # overlap: with 1 MB a thread (a frame arena each had) the run reached 88 MB there
    # against 53 MB quiet. (The 406 MB once seen here was this test's own memory: see
    # PEAK_SHIM.)
    short = os.path.join(ROOT, "tests", "profiler", "many_short_threads.mini")
    # Under ASan the same run carries its shadow memory, redzones and the 16 MB quarantine
    # (tests/CMakeLists.txt): it peaked at 66 MB quiet there, so it gets 32 MB more; what
    # this bounds is the gigabytes of one state per thread ever started.
    peak_bound = 96 if os.environ.get("MINIVM_SANITIZED") else 64
    for loaded, samplers in ((False, "cooperative"), (False, "all"), (True, "cooperative"), (True, "all")):
        label = f"{samplers}{', loaded' if loaded else ''}"
        out = os.path.join(tmp, "short.jsonl")
        args = ("--xint", "--profile", f"--sampler={samplers}", f"--profile-out={out}", short)
        if loaded:
            # How many threads overlap depends on the scheduler of the moment (a sanitizer
            # build peaked at 66 MB once): up to three runs, and one under the bound passes.
            for _ in range(3):
                with BusySiblings():
                    rc, so, se, peak_mb = run_peak(tmp, *args)
                if rc != 0 or peak_mb < peak_bound:
                    break
        else:
            rc, so, se, peak_mb = run_peak(tmp, *args)
        check(f"10,000 short threads under --profile run ({label})", rc == 0 and so == "ended 10000\nhot true\n",
              se[-2000:])
        check(f"their accounting adds up ({label})", accounted(se), se[-3000:])
        check(f"10,000 ended threads cost megabytes, not gigabytes ({label}): peak {peak_mb:.0f} MB (at most {peak_bound})",
              peak_mb < peak_bound,
              f"{peak_mb:.0f} MB")
        if loaded:
            continue  # the rate is the quiet runs' to check
        hot = sum(1 for e in events(out) if e["event"] == "ExecutionSample" and e["sampler"] == "cooperative"
                  and e["stack"][0]["function"] == "hot")
        # About 2 s at 1 kHz: ~1,100 samples on a quiet machine, a dozen when the visits went
        # round every ended thread; 100 separates the two with room for a loaded machine,
        # whose sampler thread waits for a core.
        check(f"the hot loop after them is sampled at the full rate ({samplers}): {hot} samples", hot >= 100, hot)

    # A thread's sampling state is what its samplers use: 400 threads alive at once cost the
    # profiler kilobytes each (each had a 1 MB frame arena, for walks only async and the
    # oracle make: 446 MB against 11 MB unprofiled).
    live = os.path.join(ROOT, "tests", "profiler", "many_live_threads.mini")
    rc, so, se, alone_mb = run_peak(tmp, "--xint", live)
    check("400 live threads run", rc == 0 and so == "started 400\n", se[-2000:])
    # (Every sampler that does not hold the thread: classical holds 400 threads one by one.)
    # Under AddressSanitizer every allocation has red zones and what is freed waits in a
    # quarantine (16 MB here, 40 KB a thread): the bound is wider there, still far under a
    # megabyte a thread.
    per_thread_bound = 384 if os.environ.get("MINIVM_SANITIZED") else 128
    for samplers in ("cooperative", "cooperative,safepoint,async,oracle"):
        rc, so, se, peak_mb = run_peak(tmp, "--xint", "--profile", f"--sampler={samplers}", live)
        per_thread_kb = (peak_mb - alone_mb) * 1024 / 400
        check(f"400 live threads under --profile run ({samplers})", rc == 0 and so == "started 400\n", se[-2000:])
        check(f"a live thread costs the profiler kilobytes ({samplers}): {per_thread_kb:.0f} KB a thread "
              f"({peak_mb:.0f} MB against {alone_mb:.0f} MB)", per_thread_kb < per_thread_bound, f"{per_thread_kb:.0f} KB")

    # A recursion 300,000 frames deep: every sample keeps its top --stack-depth frames
    # (classical and async 64), marked truncated, and the oracle's cut stack is the
    # cooperative one. Neither the poll's walk, the trace tree, the watermark nor the
    # handler's walk grows with the depth: the memory stays near the unprofiled run's
    # (it was 4 GB, and the run took 6 minutes instead of 5 s).
    deep = os.path.join(ROOT, "tests", "profiler", "deep_stack.mini")
    rc, so, se, alone_mb = run_peak(tmp, "--xint", "--stack=128m", deep)
    check("a 300,000-deep recursion runs", rc == 0 and so == "true\n", se[-2000:])
    out = os.path.join(tmp, "deep.jsonl")
    rc, so, se, peak_mb = run_peak(tmp, "--xint", "--stack=128m", "--sampler=all", f"--profile-out={out}", deep)
    check("... and under --sampler=all", rc == 0 and so == "true\n" and accounted(se), se[-3000:])
    check(f"its profile costs megabytes: peak {peak_mb:.0f} MB against {alone_mb:.0f} MB", peak_mb < alone_mb + 64,
          f"{peak_mb:.0f} MB")
    by_id = collections.defaultdict(dict)
    for e in events(out):
        if e["event"] == "ExecutionSample":
            by_id[e["sample"]][e["sampler"]] = e
    limits = {"cooperative": 2048, "safepoint": 2048, "oracle": 2048, "classical": 64, "async": 64}
    samples = [e for d in by_id.values() for e in d.values()]
    wrong = [(e["sampler"], len(e["stack"])) for e in samples
             if not e.get("truncated") or len(e["stack"]) != limits[e["sampler"]]]
    # (A sample taken in the first moments of the descent may be whole: under the limit.)
    wrong = [w for w in wrong if w[1] >= limits[w[0]]]
    check(f"every deep sample is cut at its sampler's limit and marked truncated ({len(samples)} samples)",
          samples and not wrong, wrong[:10])
    both = [d for d in by_id.values() if "cooperative" in d and "oracle" in d and not d["cooperative"]["biased"]]
    differ = [d["cooperative"]["sample"] for d in both
              if (d["cooperative"]["stack"], d["cooperative"].get("truncated")) != (d["oracle"]["stack"],
                                                                                    d["oracle"].get("truncated"))]
    check(f"the cooperative cut stack is the oracle's ({len(both)} interruptions)", both and not differ, differ[:10])
    check("the text report counts them", re.search(r"cooperative .*truncated \d+", se), se[-3000:])
    rc, so, se, _ = run_peak(tmp, "--xint", "--stack=128m", "--stack-depth=100", f"--profile-out={out}", deep)
    cut = [len(e["stack"]) for e in events(out) if e["event"] == "ExecutionSample" and e.get("truncated")]
    check(f"--stack-depth=100 keeps 100 frames ({len(cut)} cut samples)", rc == 0 and cut and set(cut) == {100},
          collections.Counter(cut))

    # Collections in every output: each one --gc-log prints is a GarbageCollection event of
    # the .jsonl with the same pause and time to safepoint, and the statistics and the text
    # report count the same ones. (The .jfr's: test_jfr.py; the page's bands: test_pages.py.)
    gc_program = os.path.join(ROOT, "tests", "programs", "gc_eight_threads.mini")
    out, stats = os.path.join(tmp, "gc.jsonl"), os.path.join(tmp, "gc-stats.json")
    rc, so, se = run("--heap=8m", "--gc-log", f"--profile-out={out}", f"--profile-stats={stats}", gc_program)
    ev = events(out) if rc == 0 else []
    gcs = sorted((e for e in ev if e["event"] == "GarbageCollection"), key=lambda e: e["gc"])
    gc_stats = json.load(open(stats))["gc"] if rc == 0 else {}
    logged = re.findall(r"^\[gc (\d+)\] (young|full), [^:]*: pause ([\d.]+) ms \(time to safepoint ([\d.]+) ms", se,
                        re.M)
    as_logged = [(str(e["gc"]), "young" if e["young"] else "full", f"{e['pause_ns'] / 1e6:.3f}",
                  f"{e['time_to_safepoint_ns'] / 1e6:.3f}") for e in gcs]
    check("each collection --gc-log prints is a GarbageCollection event, with its pause and time to safepoint",
          rc == 0 and logged and as_logged == logged, (logged[:3], as_logged[:3], se[-1500:]))
    check("a collection's time to safepoint is part of its pause, its slowest thread one of the program's",
          gcs and all(0 <= e["time_to_safepoint_ns"] <= e["pause_ns"] and -1 <= e["slowest_thread"] <= 8
                      and e["threads_stopped"] <= 9 for e in gcs), gcs[:3])
    check("the statistics count the same collections",
          gc_stats.get("collections") == len(gcs) and gc_stats.get("young") == sum(e["young"] for e in gcs)
          and gc_stats.get("pause_total_ns") == sum(e["pause_ns"] for e in gcs), (gc_stats, len(gcs)))
    check("the text report says them",
          f"collections: {len(gcs)} ({gc_stats.get('young')} young, {gc_stats.get('full')} full)" in se, se[-2500:])

    # Stress: 8 threads at 10 kHz, interpreted and tiered.
    stress = os.path.join(ROOT, "tests", "profiler", "stress_threads.mini")
    # Compiled code finishes ~25x sooner, so it is sampled 5x more often. How many samples
    # a run gets depends on how busy the machine is (a quiet 2-core machine: ~40000 for
    # --xint); the floor only makes sure sampling really happened.
    # The last run holds every thread for the classical walk too (--sampler=all): with 8
    # threads on 2 cores the sampler waits for each one to be scheduled, so it gets fewer.
    for mode, interval, least, samplers in (("--xint", "100us", 100, "cooperative,safepoint"),
                                            ("--xcomp", "20us", 100, "cooperative,safepoint"),
                                            ("--jit-sync", "20us", 100, "cooperative,safepoint"),
                                            ("--xint", "100us", 30, "all")):
        out, stats = os.path.join(tmp, "stress.jsonl"), os.path.join(tmp, "stress-stats.json")
        # A loaded machine (a sanitizer build beside other tests) may give a short run too
        # few samples: run longer, up to twice, before judging.
        for rounds in (12000, 48000, 192000):
            define = ["-D", f"ROUNDS={rounds}"]
            rc, so, se = run(mode, "--profile", f"--interval={interval}", f"--profile-out={out}",
                             f"--profile-stats={stats}", f"--sampler={samplers}", *define, stress, timeout=600)
            n = sum(1 for e in events(out) if e["event"] == "ExecutionSample" and e["sampler"] == "cooperative")
            if rc != 0 or n >= least:
                break
        label = f"{mode} {samplers}"
        check(f"stress run finishes with the right result ({label})", rc == 0 and so == run(mode, *define, stress)[1],
              se[-2000:])
        check(f"stress accounting adds up ({label})", accounted(se), se[-3000:])
        check(f"stress run took at least {least} samples ({label})", n >= least, f"{n} samples")
        print(f"stress {label}: {n} cooperative samples")
        if rc != 0:
            continue
        # (Checked here, not on a short program: a fast machine may finish one before the
        # first interruption, and these runs are made long enough for 100 samples.)
        if mode == "--xint" and samplers == "cooperative,safepoint":
            ev = events(out)
            lat = [e for e in ev if e["event"] == "SafepointLatency"]
            samples_at = {(e["sample"], e["thread"]): e["time_ns"] for e in ev if e["event"] == "ExecutionSample"
                          and e["sampler"] == "cooperative"}
            check(f"a SafepointLatency has its interruption's time_ns ({len(lat)} of them)",
                  lat and all(e["time_ns"] == samples_at.get((e["sample"], e["thread"]), e["time_ns"])
                              and e["time_ns"] > 0 for e in lat), lat[:3])
        # 8 running threads on a 2-core machine cannot all be interrupted every 100 µs:
        # six of them are off their core at any moment, so a signal finds the previous one
        # still pending (coalesced), and classical, which holds each thread until walked,
        # makes the sampler thread miss periods. The report says the rate it got against
        # the one asked for, and why, with numbers that add up.
        rate = json.load(open(stats)).get("rate")
        if not check(f"stress: the statistics have the rate achieved and asked for ({label})", rate):
            continue
        short_by = rate["short_by"]
        check(f"stress: the statistics' rate adds up ({label}): {rate}",
              rate["asked"] == rate["achieved"] + sum(short_by.values()) > 0
              and rate["asked"] == rate["visits_due"] - rate["not_running"] and rate["asked_hz"] == 1e9 / parse_ns(interval))
        if mode == "--xint" and interval == "100us" and os.cpu_count() <= 4:
            check(f"stress: 8 threads on {os.cpu_count()} cores miss the rate asked for, and the report says so "
                  f"({label}): {rate}", rate["short"] and re.search(r"^  rate: \d+ of \d+ interruptions asked for "
                                                                    r"\([\d.]+%\): [\d.]+/s per running thread against "
                                                                    r"10000/s\n    short by: \d+ ", se, re.M), se[:3000])
            if samplers == "all":
                check(f"stress: the largest cause is the sampler thread falling behind ({label}): {short_by}",
                      max(short_by, key=short_by.get) == "sampler_behind")
                check(f"stress: classical beside the others is named as holding them back, with what to run ({label})",
                      rate["classical_throttles"] and "run it on its own (--sampler=classical)" in se, se[:3000])

# The bias budget in the statistics: none for the oracle, one per other sampler, the
# safepoint sampler's far from the oracle on the classic, cooperative's within its range.
with tempfile.TemporaryDirectory() as tmp:
    stats = os.path.join(tmp, "stats.json")
    rc, so, se = run_minivm(MINIVM, "run", "--xcomp", "--sampler=all", f"--profile-stats={stats}",
                            os.path.join(ROOT, "examples", "counted_loop_then_setter.mini"))
    by = {s["name"]: s.get("bias_budget", "missing") for s in json.load(open(stats))["samplers"]} if rc == 0 else {}
    check("--profile-stats: bias_budget null for the oracle, lines and functions for the others",
          by.get("oracle") is None and all(isinstance(b, dict) and set(b) == {"lines", "functions"}
                                           for n, b in by.items() if n != "oracle") and len(by) == 5, by)
    check("--profile-stats: safepoint's budget far from the oracle, cooperative's within its sampling range",
          by and by["safepoint"]["lines"]["tvd"] >= 0.5 and
          by["cooperative"]["lines"]["tvd"] <= by["cooperative"]["lines"]["high"], by)

finish()
