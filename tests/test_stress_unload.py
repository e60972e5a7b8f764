#!/usr/bin/env python3
"""Code unloading under sampling, end to end: tests/stress/unload_churn.mini (eight
threads in hot calls, a recursion and allocation churn) under --stress-unload with every
sampler at 10 kHz, in --xcomp and tiered modes, with a heap small enough that collections interleave with
the unloading. It must print what an unprofiled --xint
run prints, really free code, account for every interruption in every sampler (stats and
.jsonl agree), and show the cooperative sampler never using freed code and never needing
crash protection, and rebuilding every stack the oracle took. Prints `N passed, N failed`."""
import collections
import json
import os
import subprocess
import sys
import tempfile

from checks import check, finish

MINIVM = sys.argv[1]
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PROGRAM = os.path.join(ROOT, "tests", "stress", "unload_churn.mini")


def run(*args, timeout=600):
    p = subprocess.run([MINIVM, "run", *args], capture_output=True, text=True, timeout=timeout)
    return p.returncode, p.stdout, p.stderr


rc, expected, se = run("--xint", PROGRAM)
check("the program runs in the interpreter", rc == 0 and expected.strip(), se)

rc, _, se = run("--xint", "--stress-unload", PROGRAM)
check("--stress-unload without the JIT is refused", rc == 2 and "--stress-unload" in se, se)
rc, _, se = run("--stress-unload=5", PROGRAM)
check("--stress-unload with a bad period is refused", rc == 2 and "bad period" in se, se)

with tempfile.TemporaryDirectory() as tmp:
    stats_path = os.path.join(tmp, "stats.json")
    events_path = os.path.join(tmp, "events.jsonl")
    for label, mode in (("xcomp", ["--xcomp"]), ("tiered", ["--compile-threshold=20", "--backedge-threshold=200"])):
        rc, so, se = run(*mode, "--stress-unload=1ms", "--heap=16m", "--gc-log", "--profile", "--sampler=all", "--interval=100us",
                         f"--profile-stats={stats_path}", f"--profile-out={events_path}", PROGRAM)
        if not check(f"{label}: runs and prints the interpreter's result", rc == 0 and so == expected,
                     f"rc={rc} out={so!r} expected={expected!r}\n{se[-2000:]}"):
            continue
        with open(stats_path) as f:
            stats = json.load(f)
        unloading = stats["code_unloading"]
        check(f"{label}: code was replaced and freed", unloading["freed"] > 0 and unloading["rounds"] > 0, unloading)
        check(f"{label}: every round could walk every stack", unloading["unwalkable_rounds"] == 0, unloading)
        check(f"{label}: the churn was collected meanwhile", "[gc " in se, se[-2000:])
        samplers = {s["name"]: s for s in stats["samplers"]}
        for name, s in samplers.items():
            check(f"{label}: {name}'s interruptions are all accounted for", s["accounted"], s)
        counts = {name: s["interruptions"] for name, s in samplers.items()}
        check(f"{label}: every sampler saw the same interruptions", len(set(counts.values())) == 1, counts)
        check(f"{label}: some interruptions happened", max(counts.values()) > 0, counts)
        # The .jsonl events against the stats: one sample event per sample, one failure
        # event per failure that has an interruption id.
        samples, failures = collections.Counter(), collections.Counter()
        stacks = collections.defaultdict(dict)  # sampler -> interruption -> stack
        reasons = {}  # (sampler, interruption) -> why it failed
        with open(events_path) as f:
            for line in f:
                e = json.loads(line)
                if e["event"] in ("ExecutionSample", "NativeMethodSample"):
                    samples[e["sampler"]] += 1
                    stacks[e["sampler"]][e["sample"]] = [(x["function"], x["line"], x["kind"]) for x in e["stack"]]
                elif e["event"] == "FailedSample":
                    failures[e["sampler"]] += 1
                    reasons[(e["sampler"], e.get("sample"))] = e["reason"]
        for name, s in samplers.items():
            without_id = sum(n for r, n in s["failed"].items()
                             if r in ("program_ended_before_poll", "signal_not_delivered", "thread_gone"))
            check(f"{label}: {name}'s events match its counts",
                  samples[name] == s["samples"] and failures[name] == sum(s["failed"].values()) - without_id,
                  (name, samples[name], failures[name], s))
        # Cooperative rebuilds every stack the oracle took (a poll interrupted between its
        # load and its test included: the frame must not escape before its request is served).
        differ = [i for i, st in stacks["oracle"].items() if stacks["cooperative"].get(i) != st]
        check(f"{label}: cooperative's stacks are the oracle's", not differ,
              ([(stacks["oracle"][i], stacks["cooperative"].get(i) or reasons.get(("cooperative", i)))
                for i in differ[:3]], samplers["cooperative"]["failed"]))
        coop = samplers["cooperative"]
        check(f"{label}: cooperative never used freed code and never crashed",
              coop["stability"] == {"crashes_caught": 0, "freed_code": 0}, coop["stability"])
        print(f"{label}: {counts['cooperative']} interruptions, {unloading['freed']} blobs freed in "
              f"{unloading['rounds']} rounds; " +
              ", ".join(f"{n} {s['stability']}" for n, s in samplers.items()))

finish()
