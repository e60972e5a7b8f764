#!/usr/bin/env python3
"""The cooperative sampler over a long stretch without a poll. profiler/two_phases.mini runs
two equal counted loops one after the other; under --strip-mining=0 compiled code has no
poll in either, so every request of the run waits for main's return: far more than a
thread's store of requests keeps (256). The samples kept must show both phases as the
oracle does, within sampling error, in every mode at 100 us and at 1 ms; every interruption
the store left out has a DroppedSample event with its id; the samples' weights add up to
the requests they stand for. Prints `N passed, N failed`."""
import json
import math
import os
import sys
import tempfile

from checks import check, events, finish, run_minivm

MINIVM = sys.argv[1]
ROOT = os.path.dirname(os.path.abspath(__file__))
PROGRAM = os.path.join(ROOT, "profiler", "two_phases.mini")
FIRST, SECOND = (8, 9), (12, 13)  # each loop's header and body lines
WITHOUT_ID = ("program_ended_before_poll", "signal_not_delivered", "thread_gone")
STORE = 256  # requests a thread's store keeps (sampler/profiler_state.h)


def phase_counts(ev, sampler):
    """(first loop, second loop) samples of `sampler`, each counted with its weight."""
    first = second = 0
    for e in ev:
        if e["event"] != "ExecutionSample" or e["sampler"] != sampler or not e["stack"]:
            continue
        top = e["stack"][0]
        if top["function"] != "main":
            continue
        w = e.get("count", 1)
        first += w if top["line"] in FIRST else 0
        second += w if top["line"] in SECOND else 0
    return first, second


def profile(tmp, mode, interval, n):
    out, stats = os.path.join(tmp, "p.jsonl"), os.path.join(tmp, "s.json")
    args = [m for m in (mode,) if m] + ["--strip-mining=0", f"--interval={interval}", "--sampler=cooperative,oracle",
                                        f"--profile-out={out}", f"--profile-stats={stats}", "-D", f"N={n}", PROGRAM]
    rc, so, se = run_minivm(MINIVM, "run", *args)
    if rc != 0:
        return None, se
    with open(stats) as f:
        st = {s["name"]: s for s in json.load(f)["samplers"]}
    return (events(out), st), se


def judge(ev, st):
    """What the run shows: the two samplers' shares of the first loop, the tolerance sampling
    error allows, and the evidence."""
    of, os_ = phase_counts(ev, "oracle")
    cf, cs = phase_counts(ev, "cooperative")
    if of + os_ == 0 or cf + cs == 0:
        return None
    po, pc = of / (of + os_), cf / (cf + cs)
    # Both samplers saw the same interruptions: their difference is the store's subsampling
    # alone, a binomial share of the samples it kept. Four standard errors, and a margin
    # for the few samples of the loops' edges.
    kept = st["cooperative"]["samples"]
    p = min(max(po, 0.05), 0.95)
    tol = 4 * math.sqrt(p * (1 - p) / max(kept, 1)) + 0.03
    return po, pc, tol, f"oracle {of}/{of + os_} = {po:.1%}, cooperative {cf}/{cf + cs} = {pc:.1%} " \
                        f"({kept} samples taken), allowed {tol:.1%}"


with tempfile.TemporaryDirectory() as tmp:
    for mode in ("--xint", "--xcomp", ""):
        for interval in ("100us", "1ms"):
            name = f"{mode or 'tiered'} {interval}"
            # Long enough for several hundred interruptions at 1 ms in compiled code; the
            # interpreter polls at every back branch (no stretch), so it runs shorter.
            n = 30_000_000 if mode == "--xint" else 150_000_000
            for attempt in range(2):  # a run that misses is repeated once, twice as long
                got, se = profile(tmp, mode, interval, n)
                if got is None or judge(*got) is None:
                    n *= 2
                    continue
                po, pc, tol, why = judge(*got)
                if abs(po - pc) <= tol:
                    break
                n *= 2
            if not check(f"{name}: the run profiles both loops", got is not None and judge(*got) is not None, se):
                continue
            ev, st = got
            po, pc, tol, why = judge(ev, st)
            check(f"{name}: cooperative shows the two loops as the oracle does", abs(po - pc) <= tol, why)
            co = st["cooperative"]
            ring_full = co["dropped"].get("ring_full", 0)
            if mode != "--xint":
                # The stretch is the whole run: the test means nothing unless it overflowed.
                check(f"{name}: the stretch overflowed the store", co["interruptions"] > STORE and ring_full > 0,
                      f"{co['interruptions']} interruptions, ring_full {ring_full}")
            ids = {e["sample"] for e in ev if e.get("sampler") == "cooperative"
                   and e["event"] in ("ExecutionSample", "NativeMethodSample", "FailedSample", "DroppedSample")}
            without = sum(co["failed"].get(r, 0) for r in WITHOUT_ID)
            dropped_ids = {e["sample"] for e in ev if e.get("sampler") == "cooperative" and e["event"] == "DroppedSample"}
            check(f"{name}: every interruption has an event with its id, drops too",
                  len(ids) + without == co["interruptions"] and len(dropped_ids) == ring_full,
                  f"{len(ids)} ids + {without} without = {co['interruptions']}? {len(dropped_ids)} drop events "
                  f"for ring_full {ring_full}")
            weights = sum(e.get("count", 1) for e in ev
                          if e["event"] in ("ExecutionSample", "NativeMethodSample") and e["sampler"] == "cooperative")
            check(f"{name}: the samples' weights add up to the requests they stand for",
                  weights == co["samples"] + co.get("represented", 0) and co["accounted"]
                  and co.get("represented", 0) <= ring_full,
                  f"weights {weights}, samples {co['samples']}, represented {co.get('represented', 0)}, ring_full {ring_full}")

finish()
