#!/usr/bin/env python3
"""Every lesson in examples/lessons/ runs as written and teaches what is true.

The commands are read from the lesson pages themselves (every line of every ```sh block,
run from the source tree with `build/vm/cli/minivm` replaced by the minivm under test
and `/tmp/` by a scratch directory; a pipeline by bash), so a page and this test cannot
disagree. Each lesson then has its key facts checked from machine-readable output
(`.jsonl` events, `--profile-stats`, `--gc-log` lines, the bench's CSV), and from the
text report only what the page tells the reader to find in it. Shares are asked with
margins a loaded 2-core machine keeps, and each rests on a minimum number of samples,
checked first. What the oracle measures on this CPU (how
a loop's time splits between its lines, how long a stub runs) is never asked: a sampler's
share is compared with the oracle's on the same interruptions, within sampling error or
by a margin, and the oracle alone only where any x86-64 CPU gives the same (the loop of
100,000 iterations beside one call). A lesson whose checks fail, or rest on too few
samples, runs again, up to three times, and the last run is judged (a real change fails
every one); the samples each check rests on are printed.

Beyond the facts, what each page says in its text is checked (tests/lesson_text.py): every
output it quotes is what its commands print today (shares and times aside), every option
its prose names is accepted, every `minivm disasm` it names runs, and a "Few samples"
note's advice works for the run it ends.

Usage: test_lessons.py path/to/minivm
"""
import csv
import json
import os
import re
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile

import lesson_text as pagetext
from checks import check, finish

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
LESSONS = os.path.join(ROOT, "examples", "lessons")
PAGE = re.compile(r"^\d\d-[a-z0-9-]+\.md$")
GC_LINE = re.compile(r"^\[gc \d+\] .*\(time to safepoint (?P<ttsp>[\d.]+) ms, .*?"
                     r"(?:last to stop: thread \d+ at (?P<fn>\w+) \((?P<file>[^:]+):(?P<line>\d+)\), (?P<cpu>[\d.]+) ms of it on a CPU)?"
                     r"\), heap")
SAMPLE_EVENTS = ("ExecutionSample", "NativeMethodSample")


def blocks(page, info):
    """The text of every fenced block of `page` whose info string is `info`."""
    return [text for i, text, _ in pagetext.fenced(page) if i == info]


def commands(page):
    """The command lines of a lesson page's ```sh blocks, continuation lines joined."""
    out, pending = [], ""
    for line in "".join(blocks(page, "sh")).splitlines():
        text = pending + line.strip()
        if text.endswith("\\"):
            pending = text[:-1] + " "
            continue
        pending = ""
        if text and not text.startswith("#"):
            out.append(text)
    return out


class Lesson:
    """A lesson's commands, run in order, and readers for the files they wrote."""

    def __init__(self, minivm, page, tmp):
        self.name, self.page, self.tmp, self.runs = os.path.basename(page), page, tmp, []
        self.minivm = minivm
        for text in commands(page):
            if "|" in text or "$(" in text:
                # A pipeline a student types into a shell (picking one event out of a
                # .jsonl): run by bash, every stage's failure its own.
                script = self.local(text).replace("build/vm/cli/minivm", shlex.quote(minivm))
                argv = ["bash", "-o", "pipefail", "-c", script]
            else:
                argv = [self.local(a) for a in shlex.split(text, comments=True)]
            if argv[0] == "build/vm/cli/minivm":
                argv[0] = minivm
            elif argv[0] == "python3":
                argv[0] = sys.executable
                if "--minivm" not in argv:
                    argv += ["--minivm", minivm]
            p = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=600)
            check(f"{self.name}: `{text}` exits 0", p.returncode == 0, p.stdout[-1500:] + p.stderr[-1500:])
            self.runs.append((text, p))

    def local(self, arg):
        return arg.replace("/tmp/", self.tmp + "/")

    def run(self, fragment):
        """The run of the one command containing `fragment` (stdout, stderr)."""
        found = [p for text, p in self.runs if fragment in text]
        assert len(found) == 1, f"{self.name}: {len(found)} commands contain {fragment!r}"
        return found[0]

    def events(self, path):
        with open(self.local(path)) as f:
            return [json.loads(line) for line in f if line.strip()]

    def stats(self, path):
        """Per sampler name its statistics; under "" the whole document."""
        with open(self.local(path)) as f:
            doc = json.load(f)
        return {s["name"]: s for s in doc["samplers"]} | {"": doc}


def samples(events, sampler, kind=SAMPLE_EVENTS):
    """sample id -> stack of `sampler`'s samples."""
    return {e["sample"]: e["stack"] for e in events if e["event"] in kind and e["sampler"] == sampler}


def top(stack):
    return (stack[0]["function"], stack[0]["line"]) if stack else None


def weights(events, sampler):
    """sample id -> how many interruptions `sampler`'s sample stands for: 1, or more for a
    cooperative sample kept from a stretch its thread's store could not keep whole."""
    return {e["sample"]: e.get("count", 1) for e in events if e["event"] in SAMPLE_EVENTS and e["sampler"] == sampler}


def share(by_id, pred, weight=None):
    """The part of the samples with `pred`, each counted by its weight (default 1)."""
    w = (lambda i: weight.get(i, 1)) if weight else (lambda i: 1)
    return sum(w(i) for i, st in by_id.items() if st and pred(st)) / max(1, sum(w(i) for i in by_id))


def agreement(events, sampler, reference="oracle"):
    """Of the interruptions both `sampler` and `reference` sampled, the part where the top
    frames are the same (an interruption the cooperative store left out is no sample of
    it, and no disagreement: drops are counted, and unbiased, on their own)."""
    ref, mine = samples(events, reference), samples(events, sampler)
    both = [i for i in ref if i in mine]
    return sum(1 for i in both if top(mine[i]) == top(ref[i])) / max(1, len(both))


def enough(lesson, what, n, least):
    print(f"{lesson.name}: {what}: {n} samples", flush=True)
    return check(f"{lesson.name}: {what} rests on at least {least} samples (got {n})", n >= least)


Z = 3.29  # two-sided 99.9%
ATTEMPTS = 3  # runs of a lesson whose checks fail before the last one is judged


def within_error(p, n, q, k):
    """Whether shares p of n and q of k samples (fractions) differ by at most Z standard
    errors of their difference, taken as if independent (wider than the same
    interruptions need); the pooled share is kept off 0 and 1 so that a share nobody
    has still allows a few samples."""
    if not n or not k:
        return False
    pooled = min(max((p * n + q * k) / (n + k), 1.0 / (n + k)), 1.0 - 1.0 / (n + k))
    return abs(p - q) <= Z * (pooled * (1 - pooled) * (1.0 / n + 1.0 / k)) ** 0.5


def as_oracle(lesson, what, mine, ref, pred, weight=None):
    """Checks that the share of `mine`'s samples with `pred`, counted by `weight`, is the
    oracle's (`ref`), within the sampling error of the samples taken."""
    p, q = share(mine, pred, weight), share(ref, pred)
    return check(f"{lesson.name}: {what}: {p:.1%} of {len(mine)} against the oracle's {q:.1%} of {len(ref)}, "
                 f"within sampling error", within_error(p, len(mine), q, len(ref)))


def line_of(program, text):
    """The 1-based line of `program` (in examples/lessons/) that contains `text`."""
    with open(os.path.join(LESSONS, program)) as f:
        for i, line in enumerate(f, 1):
            if text in line:
                return i
    raise AssertionError(f"{program} has no line with {text!r}")


def gc_lines(stderr):
    return [m for m in (GC_LINE.match(l) for l in stderr.splitlines() if l.startswith("[gc ")) if m]


# ---- one function per lesson page: its key facts ----

def lesson_01(l):
    loop, ret = line_of("bias.mini", "h = h * 31"), line_of("bias.mini", "last = v;") + 1
    ev = l.events("/tmp/bias.jsonl")
    oracle, coop, sp = (samples(ev, s) for s in ("oracle", "cooperative", "safepoint"))
    if enough(l, "the bias shares", len(oracle), 100):
        # remember runs once per 100,000 iterations of mix's loop: on any CPU the oracle
        # has mix on top of nearly every sample (how the loop's lines share them is the CPU's).
        check(f"{l.name}: the oracle puts most samples in mix's loop",
              share(oracle, lambda st: st[0]["function"] == "mix") >= 0.8)
        w = weights(ev, "cooperative")
        as_oracle(l, f"cooperative's share of mix:{loop}", coop, oracle, lambda st: top(st) == ("mix", loop), w)
        as_oracle(l, f"cooperative's share of mix:{loop - 1}", coop, oracle, lambda st: top(st) == ("mix", loop - 1), w)
        check(f"{l.name}: cooperative agrees with the oracle on >= 90% of the same interruptions",
              agreement(ev, "cooperative") >= 0.9)
        on_ret = lambda st: top(st) == ("remember", ret)  # noqa: E731
        check(f"{l.name}: the safepoint sampler puts most samples on remember's return poll, remember:{ret}, "
              f"50 points above the oracle ({share(sp, on_ret):.1%} against {share(oracle, on_ret):.1%})",
              share(sp, on_ret) >= 0.6 and share(sp, on_ret) >= share(oracle, on_ret) + 0.5)
    # compare's pairing by interruption: where the safepoint sampler's samples on the
    # return poll really were (the loop's two lines), and the cooperative sampler on the
    # oracle's line.
    out = l.run("compare --xcomp").stdout
    coop = re.search(r"^cooperative +on the oracle's line for (\d+) of (\d+) interruptions", out, re.M)
    check(f"{l.name}: compare's pairing puts cooperative on the oracle's line for >= 90% of the interruptions",
          coop and int(coop.group(2)) > 0 and int(coop.group(1)) >= 0.9 * int(coop.group(2)), out)
    row = re.search(rf"^safepoint +on the oracle's line for \d+ of \d+ interruptions\n(?:  .*\n)*?"
                    rf"  line {ret}: (\d+) samples, really (.*)$", out, re.M)
    really = {int(a): int(n) for a, n in re.findall(r"line (\d+) x(\d+)", row.group(2))} if row else {}
    check(f"{l.name}: compare says the safepoint samples on line {ret} were really mix's loop, lines {loop - 1} "
          f"and {loop} ({really})", row and really.get(loop, 0) + really.get(loop - 1, 0) >= 0.9 * int(row.group(1)),
          out)
    listing = l.run("disasm examples").stdout
    check(f"{l.name}: disasm lists mix's loop as counted", re.search(r"loops: \[\d+\.\.\d+\] counted", listing))
    check(f"{l.name}: remember's ret is on line 7 in the bytecode listing",
          re.search(r"^fn remember.*?^  line 7:\n\s+\d+: ret\b", listing, re.M | re.S))
    polls = dict(re.findall(r"^fn (\w+): .*poll sites: (.*)$", l.run("disasm --jit").stdout, re.M))
    kinds = {f: sorted(re.findall(r"\(([a-z -]+)\)", v)) for f, v in polls.items()}
    check(f"{l.name}: the --jit listing's poll sites: remember its return, mix and main a strip-mined latch and "
          f"their return ({kinds})", kinds == {"remember": ["return"], "mix": ["return", "strip-mined latch"],
                                              "main": ["return", "strip-mined latch"]})
    # The pipeline that lists one interruption's events: one sample from each sampler.
    picked = [json.loads(x) for x in l.run("| sed -n 100p").stdout.splitlines() if x.strip()]
    taken = sorted(e["sampler"] for e in picked if e["event"] == "ExecutionSample")
    check(f"{l.name}: the grep of one interruption lists one ExecutionSample per sampler, of one id ({taken})",
          taken == ["cooperative", "oracle", "safepoint"] and len({e["sample"] for e in picked}) == 1, picked)


def lesson_02(l):
    ret, latch = line_of("stall.mini", "return acc;"), line_of("stall.mini", "for i in 0..n")
    none = gc_lines(l.run("--strip-mining=0").stderr)
    mined = gc_lines(l.run("--xcomp --gc-log").stderr)
    polls = gc_lines(l.run("--counted-loop-polls").stderr)
    check(f"{l.name}: every run collected (got {len(none)}, {len(mined)}, {len(polls)})",
          none and mined and polls)
    if not (none and mined and polls):
        return
    waited = [m for m in none if m["fn"]]
    check(f"{l.name}: --strip-mining=0: the last thread to stop is crunch at its return poll, line {ret}",
          waited and all(m["fn"] == "crunch" and int(m["line"]) == ret for m in waited), [m.group(0) for m in none])
    # A wait is wall time: a thread off its core on a loaded machine stretches any of them.
    # Without strip mining the typical wait is the rest of a call; with a poll in the loop,
    # the shortest wait (a collection whose threads had their cores) shows the bound.
    med = statistics.median(float(m["ttsp"]) for m in none)
    least = {k: min(float(m["ttsp"]) for m in v) for k, v in (("mined", mined), ("polls", polls))}
    check(f"{l.name}: --strip-mining=0 waits 5x longer for the safepoint than strip mining at its best "
          f"(median {med} ms, least {least})", med > 5 * least["mined"])
    check(f"{l.name}: --strip-mining=0 waits 5x longer than --counted-loop-polls at its best "
          f"(median {med} ms, least {least})", med > 5 * least["polls"])
    # The part of each wait the last thread ran on a CPU is its own work until the poll,
    # which a loaded machine does not stretch: the rest of a call of 30 million
    # iterations without strip mining, at most 2^20 iterations with it, one iteration
    # with a poll in the header.
    cpu = {k: statistics.median(float(m["cpu"]) for m in v if m["cpu"])
           for k, v in (("none", none), ("mined", mined), ("polls", polls)) if any(m["cpu"] for m in v)}
    check(f"{l.name}: the on-CPU part of the wait is over 10x shorter with strip mining than without "
          f"(medians {cpu} ms)", len(cpu) == 3 and cpu["none"] > 10 * cpu["mined"])
    check(f"{l.name}: ... and over 10x shorter again with --counted-loop-polls (medians {cpu} ms)",
          len(cpu) == 3 and cpu["mined"] > 10 * cpu["polls"])
    check(f"{l.name}: strip mining stops crunch at its loop's latch, line {latch}",
          any(m["fn"] == "crunch" and int(m["line"]) == latch for m in mined), [m.group(0) for m in mined])
    header = line_of("stall.mini", "acc = acc * 31")
    check(f"{l.name}: --counted-loop-polls stops crunch at its loop's first line, line {header}",
          any(m["fn"] == "crunch" and int(m["line"]) == header for m in polls), [m.group(0) for m in polls])
    # Without strip mining a collection ends only where crunch's thread polls: at the end of
    # a call (3 of them), or before the first.
    check(f"{l.name}: --strip-mining=0 collects at most once per call of crunch, and once before ({len(none)})",
          len(none) <= 4, [m.group(0) for m in none])


def lesson_03(l):
    body = line_of("inlined.mini", "s += a[i] * w;")
    full, lean = l.events("/tmp/inlined.jsonl"), l.events("/tmp/inlined-safepoints.jsonl")
    oracle, sp = samples(full, "oracle"), samples(full, "safepoint")
    if enough(l, "debug info for every pc", len(oracle), 100):
        check(f"{l.name}: with all debug info the oracle's top frame is the inlined weigh on most samples",
              share(oracle, lambda st: st[0]["function"] == "weigh" and st[0]["kind"] == "inlined") >= 0.8)
        as_oracle(l, f"cooperative's share of the loop body, weigh:{body}", samples(full, "cooperative"), oracle,
                  lambda st: top(st) == ("weigh", body), weights(full, "cooperative"))
        check(f"{l.name}: ... with main's compiled frame under it",
              share(oracle, lambda st: len(st) > 1 and st[1]["function"] == "main" and st[1]["kind"] == "jit") >= 0.8)
        check(f"{l.name}: cooperative agrees with the oracle on >= 90% of the same interruptions",
              agreement(full, "cooperative") >= 0.9)
        check(f"{l.name}: the safepoint sampler puts most samples on main", share(sp, lambda st: st[0]["function"] == "main") >= 0.6)
    lean_oracle = samples(lean, "oracle")
    if enough(l, "debug info at safepoints only", len(lean_oracle), 100):
        for s in ("oracle", "cooperative"):
            check(f"{l.name}: with --debug-info=safepoints the {s} sampler loses weigh: main on top of >= 90%",
                  share(samples(lean, s), lambda st: st[0]["function"] == "main") >= 0.9)
            check(f"{l.name}: with --debug-info=safepoints no {s} sample has weigh in its stack",
                  share(samples(lean, s), lambda st: any(f["function"] == "weigh" for f in st)) == 0)
    # The safepoint sampler names weigh:6 only when the next poll is the inlined loop's
    # strip-mined latch: one call in 2^20 / 50,000 reaches it, on average halfway through,
    # so the share is arithmetic; its debug info is a poll's, kept by both runs.
    latch, expected = line_of("inlined.mini", "for i in 0..len(a)"), 50_000 / 2 ** 20 / 2
    for what, ev in (("all debug info", full), ("--debug-info=safepoints", lean)):
        sp = samples(ev, "safepoint")
        if enough(l, f"the safepoint sampler's weigh share, {what}", len(sp), 100):
            p, bound = share(sp, lambda st: top(st) == ("weigh", latch)), expected + Z * (expected / len(sp)) ** 0.5
            check(f"{l.name}: {what}: the safepoint sampler keeps weigh:{latch}, about {expected:.1%} "
                  f"({p:.1%} of {len(sp)}, at most {bound:.1%})", 0 < p <= bound)
    check(f"{l.name}: with --debug-info=safepoints the report says the debug info is only at polls and calls",
          "Debug info only at polls and calls" in l.run("--debug-info=safepoints").stderr)
    call = line_of("inlined.mini", "total += weigh(")
    listing = l.run("disasm --jit").stdout
    check(f"{l.name}: disasm --jit --pc-table ends main with its debug info, weigh's scope inside main's",
          re.search(rf"debug info \(pc -> scopes.*weigh@\d+ \(line \d+\) main@\d+ \(line {call}\)", listing, re.S))
    bare = subprocess.run([l.minivm, "disasm", "--jit", os.path.join(LESSONS, "inlined.mini")],
                          capture_output=True, text=True, timeout=60).stdout
    check(f"{l.name}: without --pc-table, disasm --jit prints no debug info", bare and "debug info (" not in bare)


def lesson_04(l):
    plain, described = l.stats("/tmp/crc.json"), l.stats("/tmp/crc-stubs.json")
    ev, ev_stubs = l.events("/tmp/crc.jsonl"), l.events("/tmp/crc-stubs.jsonl")
    coop = plain["cooperative"]
    in_stub = lambda st: st[0]["kind"] == "stub" and st[0]["function"] == "crc32"  # noqa: E731
    # How long the CPU spends in the crc32 stub is its own (the oracle measures it); each
    # sampler's part in it is said against the oracle's on the same interruptions.
    oracle = samples(ev, "oracle")
    stub = share(oracle, in_stub)
    if enough(l, "the stub shares", coop["samples"], 100):
        check(f"{l.name}: the oracle has the crc32 stub on top over checksum_blocks on {stub:.1%} of {len(oracle)}",
              stub > 0.1 and share(oracle, lambda st: in_stub(st) and len(st) > 1
                                   and st[1]["function"] == "checksum_blocks") == stub)
        # Counted by weight: a sample kept from a stretch its thread's store could not keep
        # whole (a thread long off its core) stands for several; the error rests on the
        # samples taken.
        weighted = [e for e in ev if e["event"] in SAMPLE_EVENTS and e["sampler"] == "cooperative"]
        total = sum(e.get("count", 1) for e in weighted)
        biased = sum(e.get("count", 1) for e in weighted if e.get("reason") == "pc_in_stub")
        check(f"{l.name}: without --stub-metadata the cooperative samples biased pc_in_stub are the oracle's "
              f"stub share ({biased} of {total} by weight, {coop['samples']} taken, against {stub:.1%})",
              within_error(biased / max(1, total), coop["samples"], stub, len(oracle)), coop)
        for s in ("classical", "async"):
            # Of the interruptions (a failure is no sample), against the oracle's samples in
            # the stub of the same interruptions.
            failed, n = plain[s]["failed"].get("pc_in_stub", 0), plain[s]["interruptions"]
            ref = sum(1 for st in oracle.values() if st and in_stub(st)) / max(1, plain["oracle"]["interruptions"])
            check(f"{l.name}: the {s} interruptions failed pc_in_stub are the oracle's share in the stub "
                  f"({failed} of {n} against {ref:.1%})", within_error(failed / max(1, n), n, ref, n), plain[s])
        # Every sample taken at a poll; a NativeMethodSample (the final print, when the
        # sampler thread finds main in it) is taken by the sampler thread, never biased.
        sp = plain["safepoint"]
        at_poll = len(samples(ev, "safepoint", ("ExecutionSample",)))
        check(f"{l.name}: every safepoint execution sample is biased, taken_at_poll ({at_poll})",
              at_poll > 0 and sp["biased"].get("taken_at_poll", 0) == at_poll, sp)
        # The answer's point: both are biased, but only the cooperative reason names the stub.
        check(f"{l.name}: the safepoint sampler's only biased reason is taken_at_poll, the cooperative's "
              f"pc_in_stub ({sp['biased']}, {coop['biased']})",
              set(sp["biased"]) == {"taken_at_poll"} and "pc_in_stub" in coop["biased"])
    coop = described["cooperative"]
    if enough(l, "the described stub shares", coop["samples"], 100):
        check(f"{l.name}: with --stub-metadata no cooperative sample is biased by pc_in_stub",
              coop["biased"].get("pc_in_stub", 0) == 0, coop)
        as_oracle(l, "with --stub-metadata, cooperative's share with the crc32 stub frame on top",
                  samples(ev_stubs, "cooperative"), samples(ev_stubs, "oracle"), in_stub, weights(ev_stubs, "cooperative"))
        check(f"{l.name}: ... agreeing with the oracle on >= 90% of the same interruptions",
              agreement(ev_stubs, "cooperative") >= 0.9)
        cls, n = described["classical"], described["classical"]["interruptions"]
        ref = sum(1 for st in samples(ev_stubs, "oracle").values() if st and in_stub(st)) / max(1, n)
        check(f"{l.name}: classical still fails in the stub (--stub-metadata is for the cooperative sampler): "
              f"{cls['failed'].get('pc_in_stub', 0)} of {n} against the oracle's {ref:.1%}",
              within_error(cls["failed"].get("pc_in_stub", 0) / max(1, n), n, ref, n))


def lesson_05(l):
    spin = line_of("native.mini", "native_spin_ns(")
    ev = l.events("/tmp/native.jsonl")
    native = {s: samples(ev, s, ("NativeMethodSample",)) for s in ("cooperative", "classical", "async", "safepoint", "oracle")}
    spinning = {i: st for i, st in native["cooperative"].items() if st[0]["function"] == "native_spin_ns"}
    if enough(l, "the native samples", len(spinning), 30):
        check(f"{l.name}: every native_spin_ns sample is a native frame on top of waiter:{spin}",
              share(spinning, lambda st: st[0]["kind"] == "native" and top(st[1:]) == ("waiter", spin)) == 1.0)
        check(f"{l.name}: every sampler records the same native samples (same ids, same stacks)",
              all(native[s] == native["cooperative"] for s in native))
        waiter = {e["thread"] for e in ev if e["event"] == "NativeMethodSample" and e["sample"] in spinning}
        in_mini = [e for e in ev if e["event"] == "ExecutionSample" and e["thread"] in waiter and e["sampler"] == "oracle"]
        check(f"{l.name}: the waiter thread is sampled in native code, not in Mini code ({len(in_mini)} Mini samples)",
              len(in_mini) <= 0.1 * len(spinning))
    java = samples(ev, "oracle", ("ExecutionSample",))
    if enough(l, "main's samples", len(java), 100):
        check(f"{l.name}: main's thread is sampled in hash", share(java, lambda st: st[0]["function"] == "hash") >= 0.8)
    alone = l.run("--sampler=cooperative examples").stderr
    check(f"{l.name}: the one-sampler report names both threads sampled", "threads sampled: 0, 1" in alone)
    m = re.search(r"^\s+samples\s+\d+\s+[\d.]+%\s+\((\d+) execution, (\d+) native\)", alone, re.M)
    check(f"{l.name}: its Interruptions block counts execution and native samples, some of each",
          m and int(m.group(1)) > 0 and int(m.group(2)) > 0, alone[-3000:])
    table = alone[alone.find("Lines by total"):].splitlines()[2:]
    totals = {r.split(None, 4)[4]: r.split()[0] for r in table if len(r.split(None, 4)) == 5}
    native, caller = (int(totals.get(k, -1)) for k in ("native_spin_ns (native)", f"waiter:{spin}"))
    check(f"{l.name}: under Lines by total, waiter:{spin} has the native's total, or a little more ({totals})",
          0 < native <= caller <= native * 1.02 + 2)


def lesson_06(l):
    for name, path in (("cooperative", "/tmp/unload.json"), ("classical", "/tmp/unload-classical.json")):
        st = l.stats(path)
        check(f"{l.name}: {name} run: compiled code was freed while sampling ({st['']['code_unloading']})",
              st[""]["code_unloading"]["freed"] > 0)
        check(f"{l.name}: {name} run: every sampler's accounting adds up", all(s["accounted"] for k, s in st.items() if k))
        check(f"{l.name}: {name} run: {name} neither crashed nor used freed code",
              st[name]["stability"] == {"crashes_caught": 0, "freed_code": 0}, st[name])
    ev = l.events("/tmp/unload.jsonl")
    if enough(l, "the agreement under unloading", len(samples(ev, "oracle")), 100):
        check(f"{l.name}: cooperative agrees with the oracle on >= 95% of the same interruptions",
              agreement(ev, "cooperative") >= 0.95)
    unloading = l.stats("/tmp/unload.json")[""]["code_unloading"]
    functions = len(re.findall(r"^fn \w+", open(os.path.join(LESSONS, "unload.mini")).read(), re.M))
    check(f"{l.name}: tens of rounds, each retiring about {functions} blobs ({unloading})",
          unloading["rounds"] >= 10 and abs(unloading["retired"] / unloading["rounds"] - functions) <= 0.5)
    classical = l.stats("/tmp/unload-classical.json")["classical"]
    if classical["interruptions"] >= 30:
        check(f"{l.name}: classical fails in prologues and epilogues ({classical['failed']})",
              classical["failed"].get("pc_in_prologue", 0) + classical["failed"].get("pc_in_epilogue", 0) > 0)
    rows = {r["sampler"]: r for r in csv.DictReader(open(l.local("/tmp/stability/stability.csv")))}
    coop = rows["cooperative"]
    check(f"{l.name}: bench/stability.py: cooperative has no crash, disagreement, freed-code sample or hang",
          all(coop[k] == "0" for k in ("crashes_caught", "disagreements", "freed_code_samples", "hangs", "died")), coop)
    check(f"{l.name}: bench/stability.py: the guessing walks disagree with the oracle",
          int(rows["classical"]["disagreements"]) + int(rows["async"]["disagreements"]) > 0, rows)


def lesson_07(l):
    signal, handshake = l.stats("/tmp/cost-signal.json"), l.stats("/tmp/cost-handshake.json")
    s, h = signal["cooperative"]["suspension_ns"], handshake["cooperative"]["suspension_ns"]
    if enough(l, "the held times", min(s["n"], h["n"]), 20):
        check(f"{l.name}: --suspend=signal holds a thread for less than handshake at the median ({s['p50']} < {h['p50']} ns)",
              s["p50"] < h["p50"])
        check(f"{l.name}: --suspend=signal holds a thread under 100 us at the median ({s['p50']} ns)", s["p50"] < 100_000)
        held = signal["cooperative"]["interruptions"] * s["p50"]
        check(f"{l.name}: interruptions x median held time is under 1% of the run ({held} ns)",
              held < 0.01 * signal[""]["duration_ns"])
    # The report's own words for the two timings, and the glossary's entry for the first.
    report = l.run("--profile-stats=/tmp/cost-signal.json").stderr
    for term in ("thread stopped (in the handler or held), per sample", "safepoint latency (signal -> its next poll)"):
        check(f"{l.name}: the report's timing line reads {term!r}", term in report, report[-2000:])
    glossary = open(os.path.join(ROOT, "docs", "glossary.md")).read()
    check(f"{l.name}: the glossary has an entry for the report's term, thread stopped",
          re.search(r"^\*\*thread stopped\*\*", glossary, re.M))
    for fragment in ("--xcomp examples", "--profile-stats=/tmp/cost-signal.json"):
        check(f"{l.name}: `{fragment}` prints its own time", re.search(r"^ms \d+ true$", l.run(fragment).stdout, re.M))


def lesson_08(l):
    program = "ledger.mini"
    body, latch = line_of(program, "h = h * 31"), line_of(program, "for r in 0..")
    call, each_call = line_of(program, ".price(it.qty)"), line_of(program, "f(items[k]);")
    flat = ("Flat.price", line_of(program, "return unit * qty;"))
    bulk = ("Bulk.price", line_of(program, "return unit * (qty - free);"))
    lam_line = line_of(program, "ledger.each(fn(")
    lam = f"main$fn@{lam_line}"
    ev = l.events("/tmp/ledger.jsonl")
    stats = l.stats("/tmp/ledger.json")
    oracle, coop, sp = (samples(ev, s) for s in ("oracle", "cooperative", "safepoint"))
    in_loop = lambda st: top(st) in ((lam, body), (lam, latch))  # noqa: E731
    in_price = lambda st: top(st) in (flat, bulk)  # noqa: E731
    if enough(l, "the bias shares", len(oracle), 100):
        # 100,000 iterations of the checksum against a few instructions of a call, per
        # item: on any CPU the oracle has the lambda's loop on top of nearly every sample
        # (how the loop's two lines share them is the CPU's).
        check(f"{l.name}: the oracle puts >= 95% of its samples in {lam}'s loop ({share(oracle, in_loop):.1%})",
              share(oracle, in_loop) >= 0.95)
        check(f"{l.name}: the oracle has a price method on top of <= 1% ({share(oracle, in_price):.1%})",
              share(oracle, in_price) <= 0.01)
        check(f"{l.name}: ... under {lam} the oracle's stack is Ledger.each:{each_call} and main:{lam_line}",
              share(oracle, lambda st: [(f["function"], f["line"]) for f in st[1:3]]
                    == [("Ledger.each", each_call), ("main", lam_line)]) >= 0.95)
        # A signal in a price method (its prologue, now and then): the cooperative sampler
        # names it as the oracle does; classical and async fail there or agree.
        failed = {(e["sampler"], e["sample"]): e["reason"] for e in ev if e["event"] == "FailedSample"}
        priced = [i for i, st in oracle.items() if st and st[0]["function"] in (flat[0], bulk[0])]
        guessed = {s: samples(ev, s) for s in ("classical", "async")}
        check(f"{l.name}: the oracle's samples in a price method ({len(priced)}) are the cooperative sampler's too, "
              f"and classical and async fail there in a prologue or epilogue or agree",
              all(top(coop.get(i, [])) == top(oracle[i]) for i in priced)
              and all(failed.get((s, i), "").startswith(("pc_in_prologue", "pc_in_epilogue"))
                      or top(guessed[s].get(i, [])) == top(oracle[i]) for s in guessed for i in priced),
              [(i, oracle[i][:1], {s: failed.get((s, i)) for s in guessed}) for i in priced])
        w = weights(ev, "cooperative")
        for line in (body, latch):
            as_oracle(l, f"cooperative's share of {lam}:{line}", coop, oracle, lambda st: top(st) == (lam, line), w)
        for s in ("cooperative", "classical", "async"):
            check(f"{l.name}: {s} agrees with the oracle on >= 90% of the same interruptions",
                  agreement(ev, s) >= 0.9)
        p = share(sp, in_price)
        check(f"{l.name}: the safepoint sampler puts >= 80% on the price methods' return polls, 70 points above "
              f"the oracle ({p:.1%} against {share(oracle, in_price):.1%})",
              p >= 0.8 and p >= share(oracle, in_price) + 0.7)
        check(f"{l.name}: ... every one of them over {lam}:{call}, the interface call",
              all(top(st[1:]) == (lam, call) for st in sp.values() if in_price(st)))
        # Each item's checksum is charged to the price method of its own class: 76 of the
        # 101 items are Flat. Successive interruptions land on items in a rhythm (the
        # interval against an item's time, and on a loaded machine the scheduler's slices),
        # so the samples are far from independent: a Bulk sample is followed by a Bulk one
        # up to 90% of the time. The bound is the method of batch means: the samples in
        # order, in ten runs of consecutive ones, and the spread of the ten runs' splits
        # (Student's t, 9 degrees of freedom, 99%), never below the binomial one.
        seq = [top(sp[i]) == flat for i in sorted(sp) if top(sp[i]) in (flat, bulk)]
        f, b = seq.count(True), seq.count(False)
        part, want = f / max(1, f + b), 76 / 101
        bound = Z * (want * (1 - want) / max(1, f + b)) ** 0.5
        if len(seq) >= 100:
            batches = [seq[k * len(seq) // 10:(k + 1) * len(seq) // 10] for k in range(10)]
            bound = max(bound, 3.25 * statistics.stdev(sum(x) / len(x) for x in batches) / 10 ** 0.5)
        check(f"{l.name}: the safepoint sampler gives Flat.price about 3/4 of the price samples, the items' mix "
              f"({f} Flat, {b} Bulk: {part:.1%} against {want:.1%} +- {bound:.1%})", abs(part - want) <= bound)
        # The strip-mined poll at the checksum's latch: one item in 2^20 / 100,000 reaches
        # it, on average halfway through, about 4.8% (the page: a few percent).
        on_latch = share(sp, lambda st: top(st) == (lam, latch))
        check(f"{l.name}: the safepoint sampler keeps a few percent on {lam}:{latch}, the strip-mined poll "
              f"({on_latch:.1%})", 0 < on_latch <= 0.15)
        check(f"{l.name}: the safepoint sampler never names the loop's body, {lam}:{body}",
              share(sp, lambda st: top(st) == (lam, body)) == 0)
        for s in ("cooperative", "classical", "async", "safepoint", "oracle"):
            total = share(samples(ev, s), lambda st: any(fr["function"] == lam for fr in st))
            check(f"{l.name}: by total, {s} has {lam} in >= 95% of its samples ({total:.1%})", total >= 0.95)
        at_poll = len(samples(ev, "safepoint", ("ExecutionSample",)))
        check(f"{l.name}: every safepoint execution sample is biased, taken_at_poll, and no other sampler's is "
              f"({ {k: v['biased'] for k, v in stats.items() if k} })",
              stats["safepoint"]["biased"] == {"taken_at_poll": at_poll}
              and all(not v["biased"] for k, v in stats.items() if k and k != "safepoint"))
    listing = l.run("disasm examples").stdout
    for header in ("fn Flat.price(this: Flat, qty: int): int", "fn Bulk.price(this: Bulk, qty: int): int",
                   f"fn {lam}($closure: fn(Item), it: Item)"):
        check(f"{l.name}: the bytecode listing has `{header}`", header in listing)
    lam_code = listing[listing.find(f"fn {lam}("):]
    check(f"{l.name}: {lam} calls price with invokeinterface, and loads total's cell with loadcapture",
          re.search(r"invokeinterface .*// Pricing\.price\(", lam_code) and re.search(r"loadcapture\s+0\s+// int\[\]", lam_code))
    jit = subprocess.run([l.minivm, "disasm", "--jit", os.path.join(LESSONS, program)],
                         capture_output=True, text=True, timeout=60).stdout
    polls = dict(re.findall(r"^fn (\S+): .*poll sites: (.*)$", jit, re.M))
    kinds = {f: sorted(re.findall(r"\(([a-z -]+)\)", polls.get(f, ""))) for f in ("Flat.price", "Bulk.price", lam)}
    check(f"{l.name}: the --jit listing's poll sites: each price method its return, {lam} its return and a "
          f"strip-mined latch ({kinds})", kinds == {"Flat.price": ["return"], "Bulk.price": ["return"],
                                                   lam: ["return", "strip-mined latch"]})
    # compare: the poll marks the page names, and where its <== marks go.
    rows = {int(m.group(1)): m for m in re.finditer(r"^\s*(\d+) (\S*)\s.*?(<==.*)?$", l.run("compare --xcomp").stdout, re.M)}
    marks = {n: rows[n].group(2) for n in (flat[1], bulk[1], latch) if n in rows}
    check(f"{l.name}: compare marks lines {flat[1]} and {bulk[1]} R and line {latch} S ({marks})",
          marks == {flat[1]: "R", bulk[1]: "R", latch: "S"})
    marked = sorted(n for n, m in rows.items() if m.group(3))
    check(f"{l.name}: compare's <== marks line {flat[1]} and two of {bulk[1]}, {latch} and {body} ({marked})",
          len(marked) == 3 and flat[1] in marked and set(marked) <= {flat[1], bulk[1], latch, body})
    # The pipeline that lists one interruption's events: one sample from each sampler.
    picked = [json.loads(x) for x in l.run("| sed -n 100p").stdout.splitlines() if x.strip()]
    by = {e["sampler"]: e["stack"] for e in picked if e["event"] == "ExecutionSample"}
    check(f"{l.name}: the grep of one interruption lists one ExecutionSample per sampler, of one id ({sorted(by)})",
          sorted(by) == sorted(("cooperative", "classical", "async", "safepoint", "oracle"))
          and len({e["sample"] for e in picked}) == 1, picked)
    if len(by) == 5:
        # The safepoint one: a price method over the call, or (one time in about twenty)
        # the lambda at the strip-mined poll of its latch.
        sp_one = by["safepoint"]
        check(f"{l.name}: ... four with {lam} on top, the safepoint one a price method over {lam}:{call} (or "
              f"{lam}:{latch}), the same frames below",
              all(by[s][0]["function"] == lam and by[s][1:] == by["oracle"][1:]
                  for s in ("cooperative", "classical", "async"))
              and by["oracle"][0]["function"] == lam
              and ((top(sp_one) in (flat, bulk) and top(sp_one[1:]) == (lam, call) and sp_one[2:] == by["oracle"][1:])
                   or (top(sp_one) == (lam, latch) and sp_one[1:] == by["oracle"][1:])), by)
        check(f"{l.name}: ... and a SafepointLatency with the cooperative stack",
              [e["stack"] for e in picked if e["event"] == "SafepointLatency"] == [by["cooperative"]], picked)


def lesson_09(l):
    first, second = (line_of("phases.mini", "a = a * 31"), line_of("phases.mini", "b = b * 31"))
    ret = line_of("phases.mini", "print(a + b") + 1
    in_first = lambda st: st[0]["function"] == "main" and st[0]["line"] in (first - 1, first)  # noqa: E731
    ev = l.events("/tmp/phases.jsonl")
    oracle, coop, sp = (samples(ev, s) for s in ("oracle", "cooperative", "safepoint"))
    report = l.run("--profile-out=/tmp/phases.jsonl").stderr
    rows = {m.group(1): [int(x) for x in m.groups()[1:]] for m in re.finditer(
        r"^  (cooperative|safepoint|oracle) +(\d+) +(\d+) +(\d+) +(\d+) +(\d+)  all accounted for", report, re.M)}
    check(f"{l.name}: every sampler's accounting row says all accounted for ({sorted(rows)})",
          sorted(rows) == ["cooperative", "oracle", "safepoint"], report[-2500:])
    if len(rows) < 3 or not enough(l, "the two phases", len(oracle), 100):
        return
    interruptions, taken, _, failed, dropped = rows["cooperative"]
    drops = [e for e in ev if e["event"] == "DroppedSample" and e["sampler"] == "cooperative"]
    # The samples kept from the overflowing stretch each stand for several (their "count").
    in_loops = sum(1 for e in ev if e["event"] == "ExecutionSample" and e["sampler"] == "cooperative"
                   and e.get("count", 1) > 1)
    # Of the interruptions that made a request (on a loaded machine many signals are not
    # sent, signal_coalesced, and fail for every sampler alike).
    requests = interruptions - failed
    check(f"{l.name}: the one stretch overflowed the store: cooperative dropped most requests, ring_full "
          f"({dropped} of {requests}), kept 256 from it ({in_loops}, weighted) and few elsewhere ({taken} in all)",
          dropped > requests / 2 and in_loops == 256 and taken <= 256 + 10 and re.search(r"^  cooperative .*dropped: ring_full \d+$",
                                                                      report, re.M))
    check(f"{l.name}: each drop is a DroppedSample event, ring_full, with its id, and the grep counts them "
          f"({len(drops)} events, the row's {dropped})",
          len(drops) == dropped and all(e["reason"] == "ring_full" for e in drops)
          and l.run("grep -c").stdout.strip() == str(dropped))
    w = weights(ev, "cooperative")
    check(f"{l.name}: the kept samples' weights add up to the samples and drops ({sum(w.values())} against "
          f"{taken} + {dropped})", sum(w.values()) == taken + dropped)
    as_oracle(l, f"cooperative's share of the first loop, lines {first - 1}-{first}, by weight", coop, oracle,
              in_first, w)
    check(f"{l.name}: both loops are in the cooperative profile",
          0 < share(coop, in_first, w) < 1)
    check(f"{l.name}: the safepoint sampler puts every execution sample on main:{ret}, the return poll",
          share(samples(ev, "safepoint", ("ExecutionSample",)), lambda st: top(st) == ("main", ret)) == 1.0)
    check(f"{l.name}: ... and has the same drops as the cooperative sampler ({rows['safepoint'][4]}, {dropped})",
          rows["safepoint"][4] == dropped)
    top_row = re.search(r"^  cooperative +main:\d+ .* of (\d+) by weight, (\d+) taken$", report, re.M)
    check(f"{l.name}: the top line's row gives the weighted count and the samples taken",
          top_row and int(top_row.group(2)) == taken, report[-2500:])
    # compare: where the dropped interruptions really were, both loops.
    out = l.run("compare --xcomp").stdout
    m = re.search(r"^  failed ring_full (\d+): really (.*)$", out[out.find("cooperative  on the oracle"):], re.M)
    really = {int(a): int(n) for a, n in re.findall(r"line (\d+) x(\d+)", m.group(2))} if m else {}
    if m and int(m.group(1)) >= 40:
        check(f"{l.name}: compare puts the cooperative drops in both loops ({really})",
              any(k in really for k in (first - 1, first)) and any(k in really for k in (second - 1, second)), out)
    else:
        check(f"{l.name}: compare lists the cooperative ring_full drops with where they really were", m, out)
    # Strip mining: short stretches; the latency's part on a CPU falls from most of the run.
    mined = l.stats("/tmp/phases-mined.json")["cooperative"]
    cpu = re.search(r"^    on a CPU +p50 (\d+(?:\.\d+)?) (µs|ms)", report, re.M)
    long_cpu = float(cpu.group(1)) * (1000 if cpu.group(2) == "ms" else 1) if cpu else 0
    check(f"{l.name}: with strip mining the cooperative sampler drops at most a few percent "
          f"({mined['dropped']} of {mined['interruptions']})",
          mined["dropped"].get("ring_full", 0) <= 0.05 * mined["interruptions"])
    check(f"{l.name}: ... and its latency's part on a CPU is 10x shorter (p50 {mined['latency_cpu_ns']['p50'] / 1000} "
          f"us against {long_cpu} us)", cpu and mined["latency_cpu_ns"]["p50"] / 1000 * 10 < long_cpu)


# ---- what every page says in its text ----

FEW_SAMPLES = re.compile(r"^Few samples: .*$", re.M)
RUN_INTERVAL = re.compile(r"^  interval (\d+(?:\.\d+)?) (µs|ms|s),", re.M)
UNIT_NS = {"us": 1e3, "µs": 1e3, "ms": 1e6, "s": 1e9}
TINY = "fn main() {\n    print(1);\n}\n"


def tiny(tmp):
    """A program that does nothing much, to try a flag on."""
    path = os.path.join(tmp, "tiny.mini")
    with open(path, "w") as f:
        f.write(TINY)
    return path


def quoted_output(l):
    """Every quote of output on the page is printed today by one of the lesson's commands
    or written by them (a file under its /tmp/): lesson_text says what is compared."""
    printed = [p.stdout + p.stderr for _, p in l.runs]
    for top, _, files in os.walk(l.tmp):
        for f in files:
            with open(os.path.join(top, f), errors="replace") as fh:
                printed.append(fh.read())
    for quote in pagetext.quotes(l.page):
        lost = min((pagetext.missing(quote, text) for text in printed), key=len)
        check(f"{l.name}: the quote {quote[0].strip()[:50]!r}... is what a command of the lesson prints today "
              f"(shares and times aside)", not lost, lost)


def few_samples_notes(l, minivm):
    """Each "Few samples" note's advice works for the run it ends: an --interval it offers
    is shorter than the run's and accepted, and -D ROUNDS=N is not offered to a lesson's
    program, which has no ROUNDS."""
    for text, p in l.runs:
        for note in FEW_SAMPLES.findall(p.stderr):
            m, ran = re.search(r"--interval=(\d+)(us|ms)\b", note), RUN_INTERVAL.search(p.stderr)
            if m:
                shorter = ran and float(m.group(1)) * UNIT_NS[m.group(2)] < float(ran.group(1)) * UNIT_NS[ran.group(2)]
                check(f"{l.name}: `{text}`: the note's --interval={m.group(1)}{m.group(2)} is shorter than the run's",
                      shorter, note)
                q = subprocess.run([minivm, "run", f"--interval={m.group(1)}{m.group(2)}", tiny(l.tmp)],
                                   capture_output=True, text=True, timeout=60)
                check(f"{l.name}: the note's --interval={m.group(1)}{m.group(2)} is accepted", q.returncode == 0, q.stderr)
            if "ROUNDS" in note:
                check(f"{l.name}: `{text}`: the note does not offer -D ROUNDS=N to a lesson's program",
                      "not those of its lessons/" in note, note)


def flags_and_commands(page, minivm, tmp):
    """Every option the page's prose names (`--name`, `--name=value`) is one of minivm run,
    disasm or compare's, and runs with the value given (or alone, when it takes none);
    every `minivm disasm ... PROGRAM.mini` it names runs."""
    name = os.path.basename(page)
    helps = {}
    for command in ("run", "disasm", "compare"):
        h = subprocess.run([minivm, command, "--help"], capture_output=True, text=True, timeout=60).stdout
        helps[command] = pagetext.options(h)
    program = tiny(tmp)
    for flag, value in pagetext.flags(page):
        owners = [c for c in helps if flag in helps[c]]
        if not check(f"{name}: `{flag}` is an option of minivm run, disasm or compare", owners):
            continue
        if (value is None and helps[owners[0]][flag]) or (value and not re.fullmatch(r"[a-z0-9.,_]+", value)):
            continue  # a value the page leaves to the reader (FILE, N)
        argv = [minivm, owners[0]] + (["--jit"] if owners[0] == "disasm" and flag != "--jit" else [])
        argv += [f"{flag}={value}" if value else flag, program]
        q = subprocess.run(argv, capture_output=True, text=True, timeout=60)
        check(f"{name}: `{' '.join(argv[1:-1])}` is accepted", q.returncode == 0, q.stderr)
    for args in pagetext.inline_commands(page):
        q = subprocess.run([minivm, *args], cwd=ROOT, capture_output=True, text=True, timeout=120)
        check(f"{name}: `minivm {' '.join(args)}`, named in the text, runs", q.returncode == 0, q.stderr)


# What every lesson's commands printed (stdout and stderr), for the glossary's quotes of
# the text report.
PRINTED = []
# The glossary's entries that quote the text report: each of their "quotes" of three
# words or more is a line the report prints (`...` for the numbers).
GLOSSARY_QUOTING = ("accounted", "thread stopped")


def glossary_quotes():
    text = open(os.path.join(ROOT, "docs", "glossary.md")).read()
    out = []
    for term in GLOSSARY_QUOTING:
        entry = re.search(rf"^\*\*{re.escape(term)}\*\*.*?(?=\n\n)", text, re.M | re.S).group(0)
        out += [(term, " ".join(q.split())) for q in re.findall(r'"([^"]+)"', entry) if len(q.split()) >= 3]
    return out


def glossary_quotes_printed():
    """The glossary says how the text report names a few things; each quote is printed by
    some lesson's command today."""
    lines = {" ".join(l.split()) for text in PRINTED for l in text.splitlines()}
    for term, quote in glossary_quotes():
        want = re.compile(".*?".join(re.escape(part.strip()) for part in quote.split("...")))
        check(f"glossary, {term}: the text report prints \"{quote}\"", any(want.search(l) for l in lines))


def collected(fn, lesson):
    """Runs a lesson's checks with their outcomes collected, not yet counted:
    [(name, holds, detail)]."""
    results = []

    def collect(name, cond, detail=""):
        results.append((name, bool(cond), detail))
        return bool(cond)

    g = globals()
    real, g["check"] = g["check"], collect
    try:
        fn(lesson)
        quoted_output(lesson)
        few_samples_notes(lesson, lesson.minivm)
    finally:
        g["check"] = real
    return results


def run_lesson(minivm, page, fn, first):
    """One run of a lesson's commands and its checks: (collected results, whether its
    commands all ran); the page's own layout is checked on the first run only."""
    tmp = tempfile.mkdtemp(prefix="lesson-")
    try:
        lesson = Lesson(minivm, os.path.join(LESSONS, page), tmp)
        if first:
            check(f"{page}: has commands", lesson.runs)
            programs = set(re.findall(r"examples/lessons/(\w+\.mini)", " ".join(t for t, _ in lesson.runs)))
            for listing in blocks(os.path.join(LESSONS, page), "mini"):
                check(f"{page}: its program listing is exactly one of the programs it runs ({sorted(programs)})",
                      any(listing == open(os.path.join(LESSONS, p)).read() for p in programs))
            flags_and_commands(os.path.join(LESSONS, page), minivm, tmp)
        PRINTED.extend(p.stdout + p.stderr for _, p in lesson.runs)
        ran = all(p.returncode == 0 for _, p in lesson.runs)
        return (collected(fn, lesson) if ran else []), ran
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def main():
    minivm = sys.argv[1]
    pages = sorted(f for f in os.listdir(LESSONS) if PAGE.match(f))
    checks = {name: fn for name, fn in globals().items() if name.startswith("lesson_")}
    check("every lesson page has its checks and every check its page",
          sorted(f"lesson_{p[:2]}" for p in pages) == sorted(checks), (pages, sorted(checks)))
    index = open(os.path.join(LESSONS, "README.md")).read()
    linked = re.findall(r"\]\((\d\d-[a-z0-9-]+\.md)\)", index)
    check("examples/lessons/README.md links every page once, in order", linked == pages, linked)
    only = sys.argv[2:]
    for page in pages:
        if only and not any(page.startswith(o) for o in only):
            continue
        headings = re.findall(r"^## (.+)$", open(os.path.join(LESSONS, page)).read(), re.M)
        check(f"{page}: has The program, Commands, What to look for, Question and, last, Answer ({headings})",
              headings == ["The program", "Commands", "What to look for", "Question", "Answer"])
        fn = checks[f"lesson_{page[:2]}"]
        results, ran = run_lesson(minivm, page, fn, True)
        for attempt in range(2, ATTEMPTS + 1):
            if not ran or all(ok for _, ok, _ in results):
                break
            # A share near its bound, too few samples, or a wait stretched by a thread off
            # its core on a loaded machine: the whole lesson again, the last run judged.
            print(f"{page}: {sum(not ok for _, ok, _ in results)} of {len(results)} checks failed on run "
                  f"{attempt - 1}: {[n for n, ok, _ in results if not ok]}; running the lesson again "
                  f"({attempt} of {ATTEMPTS})", flush=True)
            results, ran = run_lesson(minivm, page, fn, False)
        for name, ok, detail in results:
            check(name, ok, detail)
    if not only:
        glossary_quotes_printed()
    finish()


if __name__ == "__main__":
    main()
