#!/usr/bin/env python3
"""Soak: minivm run over and over for a while (10 minutes by default; outside CI), with
the samplers rotating, threads starting and ending, collections and code unloading,
random intervals and modes, and SIGINT at random moments. Ends with totals and exits 1
on any crash, hang, leak, lost event or unwritten profile.

Usage: tests/soak.py [--minivm PATH] [--minutes M] [--seed N]

Each run picks a program (threads that churn arrays and are unloaded under, short
threads, a loop that runs until interrupted), a mode, a sampler list (one sampler or
all), an interval, an output format, and whether to interrupt it. A run is wrong if:
  - it dies by a signal other than the SIGINT sent, prints an internal error or a
    sanitizer report, or exits with a status its program and the SIGINT do not explain
    (crash);
  - it does not end within its time limit (hang: then killed);
  - its peak resident memory passes 1 GB (leak);
  - a sampler's accounting in --profile-stats does not add up (lost event);
  - its --profile-out or --profile-stats file is missing or unparsable, or the profile
    is empty though the statistics count samples (unwritten).
"""
import argparse
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
# program, its normal exit statuses, whether it runs until interrupted
PROGRAMS = [
    ("tests/stress/unload_churn.mini", {0}, False),
    ("tests/programs/gc_eight_threads.mini", {0}, False),
    ("tests/profiler/many_short_threads.mini", {0}, False),
    ("bench/workloads/forever.mini", set(), True),
    ("examples/time_to_safepoint.mini", {0}, False),
]
MODES = [["--xint"], ["--xcomp"], [], ["--xcomp", "--stress-unload=1ms"], ["--stress-unload=2ms"]]
INTERVALS = ["100us", "250us", "1ms", "3ms"]
FORMATS = [".jsonl", ".collapsed", ".txt", ".json", ".html"]
TIME_LIMIT = 120.0
LEAK_KB = 1024 * 1024


def samplers(minivm):
    out = subprocess.run([minivm, "help", "samplers"], capture_output=True, text=True).stdout
    names = [l.split()[0] for l in out.splitlines() if l.startswith("  ") and l.split()]
    return [n for n in names if n.isidentifier()] or ["cooperative"]


def started(pid):
    """Whether minivm has begun: SIGINT is blocked (held until the profiler has its
    handler) or caught. A SIGINT before that (a loaded machine can delay exec) ends a
    process that has not started to profile, which no program could prevent."""
    try:
        with open(f"/proc/{pid}/status") as f:
            masks = [int(l.split()[1], 16) for l in f if l.startswith(("SigBlk:", "SigCgt:"))]
    except (OSError, ValueError, IndexError):
        return False
    return any(m & (1 << (signal.SIGINT - 1)) for m in masks)


def one_run(minivm, rng, names, tmp, totals):
    prog, statuses, endless = rng.choice(PROGRAMS)
    mode = rng.choice(MODES)
    sampler = rng.choice(names + ["all"])
    fmt = rng.choice(FORMATS)
    out, stats = os.path.join(tmp, "p" + fmt), os.path.join(tmp, "stats.json")
    for f in (out, stats):
        if os.path.exists(f):
            os.remove(f)
    cmd = [minivm, "run", *mode, "--heap=16m", "--profile", f"--sampler={sampler}",
           f"--interval={rng.choice(INTERVALS)}", f"--profile-out={out}", f"--profile-stats={stats}",
           os.path.join(ROOT, prog)]
    interrupt_at = rng.uniform(0.05, 3.0) if endless or rng.random() < 0.4 else None
    what = " ".join(cmd[2:]) + (f"  (SIGINT at {interrupt_at:.2f} s)" if interrupt_at else "")
    with open(os.path.join(tmp, "stdout"), "w") as so, open(os.path.join(tmp, "stderr"), "w+") as se:
        # SIGINT as a terminal's Ctrl-C delivers it: a soak started as a background job
        # inherits SIGINT ignored, and so would every run (minivm keeps an ignored SIGINT
        # ignored, as a shell's background job expects).
        p = subprocess.Popen(cmd, stdout=so, stderr=se,
                             preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
        start, sent, status, usage = time.monotonic(), False, None, None
        while status is None:
            pid, st, ru = os.wait4(p.pid, os.WNOHANG)
            if pid != 0:
                status, usage = st, ru
                break
            now = time.monotonic() - start
            if interrupt_at is not None and not sent and now >= interrupt_at and started(p.pid):
                p.send_signal(signal.SIGINT)
                sent = True
            if now > TIME_LIMIT:
                p.kill()
                os.wait4(p.pid, 0)
                totals["hangs"] += 1
                print(f"HANG {what}", flush=True)
                return
            time.sleep(0.01)
        p.returncode = os.waitstatus_to_exitcode(status)
        se.seek(0)
        err = se.read()
    totals["runs"] += 1
    totals["interrupted"] += sent
    rc = p.returncode
    # SIGINT ends the run by the same signal once the profile is written (a shell shows 130).
    ok_status = rc in statuses or (sent and rc in (-signal.SIGINT, 128 + signal.SIGINT))
    if not ok_status or "internal error" in err or "Sanitizer" in err:
        totals["crashes"] += 1
        print(f"CRASH (exit {rc}) {what}\n{err[-1500:]}", flush=True)
        return
    if usage.ru_maxrss > LEAK_KB:
        totals["leaks"] += 1
        print(f"LEAK ({usage.ru_maxrss} KB) {what}", flush=True)
    try:
        with open(stats) as f:
            st = json.load(f)
        with open(out) as f:
            text = f.read()
        # A run whose interruptions all failed has no stack to write in some formats.
        if not text and sum(x["samples"] for x in st["samplers"]) > 0:
            raise ValueError("empty profile though there were samples")
        if fmt == ".jsonl":
            for line in text.splitlines():
                json.loads(line)
        elif fmt == ".json":
            json.loads(text)
    except (OSError, ValueError) as e:
        totals["unwritten"] += 1
        print(f"UNWRITTEN ({e}) {what}", flush=True)
        return
    for s in st["samplers"]:
        totals["interruptions"] += s["interruptions"]
        totals["samples"] += s["samples"]
        if not s["accounted"]:
            totals["lost"] += 1
            print(f"LOST EVENTS ({s['name']}) {what}", flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--minivm", default=os.path.join(ROOT, "build", "vm", "cli", "minivm"))
    ap.add_argument("--minutes", type=float, default=10.0)
    ap.add_argument("--seed", type=int, default=int(time.time()))
    args = ap.parse_args()
    rng = random.Random(args.seed)
    names = samplers(args.minivm)
    totals = dict(runs=0, interrupted=0, interruptions=0, samples=0, crashes=0, hangs=0, leaks=0, lost=0, unwritten=0)
    end = time.monotonic() + 60 * args.minutes
    with tempfile.TemporaryDirectory() as tmp:
        while time.monotonic() < end:
            one_run(args.minivm, rng, names, tmp, totals)
    print(f"soak (seed {args.seed}, {args.minutes:g} min): " + ", ".join(f"{k} {v}" for k, v in totals.items()))
    bad = totals["crashes"] + totals["hangs"] + totals["leaks"] + totals["lost"] + totals["unwritten"]
    sys.exit(1 if bad or totals["runs"] == 0 else 0)


if __name__ == "__main__":
    main()
