#!/usr/bin/env python3
"""End-to-end checks of the .jfr profile (`-o p.jfr`, `--format=jfr`;
sampler/profile/README.md, "`.jfr`"), read by the JDK's own `jfr` tool: JDK 17's (Debian's
openjdk-17-jdk-headless, which the README's test command installs) and JDK 25's where it
is installed (/usr/lib/jvm/temurin-25-jdk-amd64; else that part is skipped with a
message). One run under every sampler, with dumps (so the file has several chunks) and
--profile-stats:
- `jfr summary` and `jfr print --json` read it, and agree on every event type's count;
  JDK 17 and JDK 25 read the same events;
- every sample minivm counted is there, by sampler: the first sampler's as
  jdk.ExecutionSample / jdk.NativeMethodSample, the others' as minivm.*; their weights add
  up to the statistics' samples + represented; biased samples by reason, failures and drops
  by reason, SafepointLatency events as the statistics count them;
- stacks name the program's functions (class `Class` or the file's name, method, line,
  bytecode index, frame type), read back into the .jsonl's schema; on the same
  interruption cooperative's unbiased stacks are the oracle's, and the oracle's main stacks
  are those of a .jsonl run of the same program;
- the file is a readable recording while the program still runs (after a dump);
- `-o - --format=jfr` streams a recording to standard output, the program's output on stderr;
- every collection is a jdk.GarbageCollection inside its safepoint's jdk.SafepointBegin and
  End, as many as the statistics count, with its time to safepoint and slowest thread.
Exits 77 (skipped) where no `jfr` tool is installed. Prints `N passed, N failed`."""
import collections
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

from checks import check, events, finish, run_minivm

MINIVM = sys.argv[1]
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PROGRAM = os.path.join(ROOT, "examples", "native_beside_java.mini")
SAMPLE_TYPES = {"jdk.ExecutionSample": "ExecutionSample", "jdk.NativeMethodSample": "NativeMethodSample",
                "minivm.ExecutionSample": "ExecutionSample", "minivm.NativeMethodSample": "NativeMethodSample"}
KINDS = {"Interpreted": "interp", "JIT compiled": "jit", "Inlined": "inlined", "Native": "native", "Stub": "stub"}
# A collection's events, which have no sampler (check_collections).
GC_TYPES = {"jdk.GarbageCollection", "jdk.SafepointBegin", "jdk.SafepointEnd"}
# Failures counted without an interruption id, so without an event (in the .jsonl too).
NO_EVENT_REASONS = {"thread_gone", "signal_not_delivered", "program_ended_before_poll"}


def jfr_tools():
    tools = []
    jdk17 = shutil.which("jfr") or "/usr/lib/jvm/java-17-openjdk-amd64/bin/jfr"
    if os.path.exists(jdk17):
        tools.append(("JDK 17", jdk17))
    jdk25 = "/usr/lib/jvm/temurin-25-jdk-amd64/bin/jfr"
    if os.path.exists(jdk25):
        tools.append(("JDK 25", jdk25))
    else:
        print(f"skipped: JDK 25's jfr ({jdk25}) is not installed; checked with JDK 17's only")
    return tools


def jfr(tool, *args):
    p = subprocess.run([tool, *args], capture_output=True, text=True, timeout=300)
    return p.returncode, p.stdout, p.stderr


def summary_counts(text):
    """`jfr summary`'s table: event type -> count."""
    counts = {}
    for line in text.splitlines():
        m = re.match(r"\s+([\w.]+)\s+(\d+)\s+(\d+)\s*$", line)
        if m:
            counts[m.group(1)] = int(m.group(2))
    return counts


def chunk_count(text):
    m = re.search(r"Chunks:\s+(\d+)", text)
    return int(m.group(1)) if m else 0


def frame_of(f, stem):
    """A JFR stack frame as a .jsonl frame: `Class.method`, or a plain function's name
    (class = the file's name), or a builtin's (class [native], [stub] or [cpp])."""
    klass = f["method"]["type"]["name"]
    method = f["method"]["name"]
    kind = KINDS.get(f["type"], f["type"])
    if klass == "[cpp]":
        kind = "cpp"
    function = method if klass == stem or klass.startswith("[") else f"{klass}.{method}"
    return {"function": function, "line": f["lineNumber"], "bci": f["bytecodeIndex"], "kind": kind}


def jsonl_form(e, stem):
    """A `jfr print --json` event in the .jsonl's schema (its keys, in its order)."""
    v = e["values"]
    thread = v.get("sampledThread") or v.get("eventThread")
    out = {"event": SAMPLE_TYPES.get(e["type"], e["type"].split(".")[-1]), "sampler": v["sampler"],
           "sample": v["sample"], "thread": thread["javaThreadId"] - 1}
    if e["type"] in SAMPLE_TYPES:
        out["biased"] = v["biased"]
        if v["biased"] and v["biasReason"] is not None:
            out["reason"] = v["biasReason"]
        if v["stackTrace"]["truncated"]:
            out["truncated"] = True
        if v["weight"] > 1:
            out["count"] = v["weight"]
    elif e["type"] == "jdk.SafepointLatency":
        out["event"] = "SafepointLatency"
        out["cpu_ns"] = v["cpuTime"]
    else:
        out["reason"] = v["reason"]
    if "stackTrace" in v:
        out["stack"] = [frame_of(f, stem) for f in v["stackTrace"]["frames"]]
    return out


def read_recording(tool, path, stem):
    """(summary counts, chunks, the events in .jsonl form, the raw events), or None with a failed check."""
    rc, summary, err = jfr(tool, "summary", path)
    if not check(f"{tool}: jfr summary reads it", rc == 0, err + summary):
        return None
    rc, printed, err = jfr(tool, "print", "--json", "--stack-depth", "4096", path)
    if not check(f"{tool}: jfr print --json reads it", rc == 0, err[-3000:]):
        return None
    raw = json.loads(printed)["recording"]["events"]
    samples = [jsonl_form(e, stem) for e in raw if e["type"] not in GC_TYPES]
    return summary_counts(summary), chunk_count(summary), samples, raw


def run_and_read_while_running(tools, out, stats):
    """The profiled run, with a dump every 300 ms; once a dump has written a chunk, the
    file is read while the program still runs."""
    cmd = [MINIVM, "run", "--sampler=all", "--interval=500us", "--profile-dump-every=300ms", "-D", "ROUNDS=600",
           f"-o{out}", f"--profile-stats={stats}", PROGRAM]
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 60
    while p.poll() is None and time.time() < deadline:
        if os.path.exists(out) and os.path.getsize(out) > 0:
            break
        time.sleep(0.05)
    if p.poll() is None:
        # A read that meets a chunk being appended (a dump every 300 ms) is tried again.
        for _ in range(3):
            time.sleep(0.1)
            rc, text, err = jfr(tools[0][1], "summary", out)
            if rc == 0:
                break
        still_running = p.poll() is None
        check("the .jfr is a readable recording while the program runs", rc == 0 and chunk_count(text) >= 1,
              err + text)
        print(f"read while the program ran: {chunk_count(text)} chunk(s)" if still_running else
              "note: the program ended while its .jfr was read; the read was not during the run")
    try:
        so, se = p.communicate(timeout=300)
    except subprocess.TimeoutExpired:
        p.kill()
        so, se = p.communicate()
    return p.returncode, so, se


def main():
    tools = jfr_tools()
    if not tools:
        print("skipped: no jfr tool (apt-get install openjdk-17-jdk-headless)")
        sys.exit(77)
    stem = os.path.splitext(os.path.basename(PROGRAM))[0]
    source = open(PROGRAM).read()
    functions = set(re.findall(r"\bfn\s+(\w+)", source))
    with tempfile.TemporaryDirectory() as tmp:
        out, stats_path = os.path.join(tmp, "p.jfr"), os.path.join(tmp, "s.json")
        rc, so, se = run_and_read_while_running(tools, out, stats_path)
        if not check("the run writes p.jfr", rc == 0 and os.path.exists(out), se[-3000:]):
            finish()
        check("no file is left beside the .jfr", sorted(os.listdir(tmp)) == ["p.jfr", "s.json"], os.listdir(tmp))
        stats = {s["name"]: s for s in json.load(open(stats_path))["samplers"]}
        samplers = list(stats)
        primary = samplers[0]
        read = {}
        for name, tool in tools:
            r = read_recording(tool, out, stem)
            if r is None:
                continue
            counts, chunks, ev, raw = r
            read[name] = ev
            check(f"{name}: the dumps made several chunks", chunks >= 2, chunks)
            print(f"{name}: {len(raw)} events in {chunks} chunks")
            by_type = collections.Counter(e["type"] for e in raw)
            for t in ("jdk.ExecutionSample", "jdk.NativeMethodSample", "jdk.SafepointLatency",
                      "minivm.ExecutionSample", "minivm.NativeMethodSample", "minivm.FailedSample",
                      "minivm.DroppedSample"):
                check(f"{name}: summary and print agree on {t}", t in counts and counts[t] == by_type.get(t, 0),
                      (t, counts.get(t), by_type.get(t)))
            misplaced = [(e["type"], e["values"]["sampler"]) for e in raw if e["type"] in SAMPLE_TYPES
                         and e["type"].startswith("jdk.") != (e["values"]["sampler"] == primary)]
            check(f"{name}: {primary}'s samples are JDK's events, the others minivm's", not misplaced, misplaced[:5])

        if not read:
            finish()
        ev = next(iter(read.values()))
        if len(read) == 2:
            a, b = read.values()
            check("JDK 17 and JDK 25 read the same events", a == b, (len(a), len(b)))

        # Every event minivm counted, by sampler.
        for s in samplers:
            st = stats[s]
            ss = [e for e in ev if e["sampler"] == s and e["event"] in ("ExecutionSample", "NativeMethodSample")]
            check(f"{s}: one sample event per sample", len(ss) == st["samples"], (len(ss), st["samples"]))
            weights = sum(e.get("count", 1) for e in ss)
            check(f"{s}: the weights add up to samples + represented", weights == st["samples"] + st["represented"],
                  (weights, st["samples"], st["represented"]))
            biased = collections.Counter(e.get("reason") for e in ss if e["biased"])
            check(f"{s}: biased samples by reason", dict(biased) == st["biased"], (dict(biased), st["biased"]))
            for kind, key in (("FailedSample", "failed"), ("DroppedSample", "dropped")):
                got = collections.Counter(e["reason"] for e in ev if e["sampler"] == s and e["event"] == kind)
                want = {r: n for r, n in st[key].items() if n}
                exact = all(got.get(r, 0) == n for r, n in want.items() if r not in NO_EVENT_REASONS)
                bounded = all(got.get(r, 0) <= n for r, n in want.items()) and set(got) <= set(want)
                check(f"{s}: {kind} events by reason", exact and bounded, (dict(got), want))
        at_poll = [s for s in samplers if s in ("cooperative", "safepoint")]
        latencies = [e for e in ev if e["event"] == "SafepointLatency"]
        check("one SafepointLatency per request served at a poll",
              len(latencies) == stats[at_poll[0]]["latency_ns"]["n"], (len(latencies), stats[at_poll[0]]["latency_ns"]))
        check("SafepointLatency names the first sampler served at a poll",
              all(e["sampler"] == at_poll[0] for e in latencies))

        # Stacks: the program's functions, lines, bytecode indexes, frame types.
        bad = [f for e in ev for f in e.get("stack", [])
               if not ((f["kind"] in ("interp", "jit", "inlined") and f["function"] in functions and f["line"] > 0
                        and f["bci"] >= 0) or (f["kind"] == "native" and f["line"] == 0))]
        check("every frame is a function of the program (with line and bci) or a builtin", not bad, bad[:5])
        native = [e for e in ev if e["event"] == "NativeMethodSample"]
        check("native samples have native_spin_ns on top, over spin",
              native and all(e["stack"][0]["function"] == "native_spin_ns" for e in native
                             if e["stack"][1:2] and e["stack"][1]["function"] == "spin"), len(native))
        threads = {e["thread"] for e in ev}
        check("both threads are named", threads == {0, 1}, threads)
        coop = {(e["sample"], e["thread"]): e["stack"] for e in ev
                if e["sampler"] == "cooperative" and e["event"] == "ExecutionSample" and not e["biased"]}
        oracle = {(e["sample"], e["thread"]): e["stack"] for e in ev
                  if e["sampler"] == "oracle" and e["event"] == "ExecutionSample"}
        both = [k for k in coop if k in oracle]
        same = sum(coop[k] == oracle[k] for k in both)
        print(f"cooperative's unbiased stack is the oracle's on {same} of {len(both)} interruptions")
        check("on the same interruption, cooperative's unbiased stacks are the oracle's",
              len(both) >= 20 and same >= 0.9 * len(both), (same, len(both)))

        # The oracle's main stacks are those of a .jsonl run of the same program.
        jsonl = os.path.join(tmp, "p.jsonl")
        rc, so, se = run_minivm(MINIVM, "run", "--sampler=all", "--interval=500us", "-D", "ROUNDS=600",
                                f"-o{jsonl}", PROGRAM)
        if check("the .jsonl run", rc == 0, se[-2000:]):
            def stacks(evs):
                c = collections.Counter(json.dumps(e["stack"]) for e in evs if e["sampler"] == "oracle"
                                        and e["event"] in ("ExecutionSample", "NativeMethodSample"))
                return c, sum(c.values())
            lines = events(jsonl)
            (cj, nj), (cf, nf) = stacks(lines), stacks(ev)
            main_jsonl = {s for s, n in cj.items() if n >= 0.1 * nj}
            main_jfr = {s for s, n in cf.items() if n >= 0.1 * nf}
            check("the oracle's main stacks in the .jfr are in the .jsonl, and the other way",
                  main_jfr <= set(cj) and main_jsonl <= set(cf) and main_jfr, (main_jfr, main_jsonl))
            for kind in ("ExecutionSample", "FailedSample", "SafepointLatency"):
                want = next((list(e) for e in lines if e["event"] == kind), None)
                got = next((list(e) for e in ev if e["event"] == kind), None)
                drop = {"time_ns", "latency_ns", "cpu_ns", "count", "reason", "truncated"}
                if want and got:
                    check(f"{kind} reads back with the .jsonl's keys",
                          [k for k in got if k not in drop] == [k for k in want if k not in drop], (got, want))

        # A recording on standard output, streamed chunk by chunk (a dump every 100 ms), from a
        # program that prints: its output goes to stderr, the pipe carries the recording alone.
        chatty = os.path.join(tmp, "chatty.mini")
        with open(chatty, "w") as f:
            f.write("fn main() {\n    print(\"before\");\n    var s = 0;\n"
                    "    for i in 0..600000000 { s += i ^ (s >> 3); }\n    print(\"after\", s != 1);\n}\n")
        p = subprocess.run([MINIVM, "run", "--xcomp", "--profile-dump-every=100ms", "-o", "-", "--format=jfr", chatty],
                           capture_output=True, timeout=300, env=dict(os.environ, TMPDIR=tmp))
        piped = os.path.join(tmp, "piped.jfr")
        with open(piped, "wb") as f:
            f.write(p.stdout)
        rc, text, err = jfr(tools[0][1], "summary", piped)
        check("-o - --format=jfr streams a recording to stdout, in chunks, and the program's output to stderr",
              p.returncode == 0 and p.stdout[:4] == b"FLR\0" and rc == 0 and summary_counts(text).get(
                  "jdk.ExecutionSample", 0) > 0 and chunk_count(text) >= 2 and b"before" in p.stderr
              and b"after true" in p.stderr, (p.stderr[-1000:], err, text))
        check("-o - --format=jfr leaves no file behind in $TMPDIR",
              p.returncode == 0 and not [n for n in os.listdir(tmp) if n.startswith("minivm-jfr")], os.listdir(tmp))
        check_collections(tools, tmp)
    finish()


def check_collections(tools, tmp):
    """Every collection of a run is a jdk.GarbageCollection with its time to safepoint and
    slowest thread, inside its safepoint's jdk.SafepointBegin and End, as many as the
    statistics count."""
    program = os.path.join(ROOT, "tests", "programs", "gc_eight_threads.mini")
    out, stats_path = os.path.join(tmp, "gc.jfr"), os.path.join(tmp, "gc.json")
    rc, so, se = run_minivm(MINIVM, "run", "--heap=8m", f"-o{out}", f"--profile-stats={stats_path}", program)
    if not check("the collecting run writes gc.jfr", rc == 0 and os.path.exists(out), se[-2000:]):
        return
    gc = json.load(open(stats_path))["gc"]
    for name, tool in tools:
        rc, summary, err = jfr(tool, "summary", out)
        counts = summary_counts(summary)
        rc2, printed, err2 = jfr(tool, "print", "--json", "--events",
                                 "jdk.GarbageCollection,jdk.SafepointBegin,jdk.SafepointEnd", out)
        if not check(f"{name}: jfr summary and print read the collections", rc == 0 and rc2 == 0, err + err2):
            continue
        raw = json.loads(printed)["recording"]["events"]
        collections_ = [e["values"] for e in raw if e["type"] == "jdk.GarbageCollection"]
        begins = [e["values"] for e in raw if e["type"] == "jdk.SafepointBegin"]
        ends = [e["values"] for e in raw if e["type"] == "jdk.SafepointEnd"]
        check(f"{name}: one jdk.GarbageCollection per collection the statistics count",
              gc["collections"] > 0 and counts.get("jdk.GarbageCollection") == gc["collections"] == len(collections_),
              (counts, gc))
        check(f"{name}: young and full as counted", sum(c["young"] for c in collections_) == gc["young"],
              (gc, collections_[:3]))
        check(f"{name}: each safepoint's begin and end, one per time to safepoint counted",
              len(begins) == len(ends) == gc["time_to_safepoint_ns"]["n"]
              and {b["safepointId"] for b in begins} == {c["safepointId"] for c in collections_}
              == {e["safepointId"] for e in ends}, (len(begins), len(ends), gc["time_to_safepoint_ns"]))
        threads = {c["slowestThread"]["javaThreadId"] - 1 for c in collections_ if c["slowestThread"]}
        check(f"{name}: the slowest threads are the program's (main and 8 workers)",
              threads <= set(range(9)) and {int(t) for t in gc["last_to_stop"]} == threads, (threads, gc["last_to_stop"]))
        check(f"{name}: each pause is its collection's duration and holds its time to safepoint",
              all(c["sumOfPauses"] == c["longestPause"] and c["cause"] in ("allocation budget", "heap full")
                  for c in collections_), collections_[:3])



if __name__ == "__main__":
    main()
