#!/usr/bin/env python3
"""Every example's claims, checked: each examples/*.mini ends with `// run: FLAGS` lines,
each followed by `// claim: ...` lines (the grammar is in examples/README.md). For every
run line the example runs once under `--sampler=all` with those flags (a -D ROUNDS=N
there sizes it for enough samples), and every claim after it must hold of that run: a
sampler's top line, a line's share of its samples, the share of its samples biased or
of its interruptions failed, for a reason or any, and how a sampler relates to another
on the same interruptions (the same top line, a line's share within sampling error of
the other's, or so many points above or below it). A claim that does not parse is a
failure too, and so is an example with neither claims nor a line saying why it has
none. Each run judged is printed with the samples each sampler had. Prints `N passed,
N failed`."""
import collections
import math
import glob
import json
import os
import re
import subprocess
import sys
import tempfile

from checks import check, finish

MINIVM = sys.argv[1]
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "bench"))
from run import frame_name, sampler_names  # noqa: E402

SAMPLERS = sampler_names(MINIVM)
# Fewer samples than this and a run is repeated, twice as long each time, up to RETRIES
# times (a loaded machine delivers fewer signals); claims are stated with margins that
# hold from here on. A run where a claim fails is repeated the same way, and the last
# run is the one judged.
MIN_SAMPLES = 60
RETRIES = 3
NO_CLAIMS = "// No sampling claims:"

SAMPLER_LIST = r"(?P<samplers>[a-z]+(?:,[a-z]+)*)"
LINE = r"(?P<line>\S+:\d+|\S+ \((?:native|stub)\))"
BOUND = r"(?P<op>>=|<=) (?P<pct>\d+(?:\.\d+)?)%"
REF = r"(?P<ref>[a-z]+)"
# Relations to a reference sampler on the same interruptions: `= REF` is within sampling
# error (Z standard errors, as if the two were independent samples, which is wider than
# the same interruptions need), `>= REF + P points` / `<= REF - P points` a margin.
Z = 3.29  # two-sided 99.9%: a claim wrongly refused about once in a thousand runs
CLAIMS = [
    ("top_as", re.compile(rf"^{SAMPLER_LIST} top = {REF}$")),
    ("share_as", re.compile(rf"^{SAMPLER_LIST} {LINE} = {REF}$")),
    ("share_vs", re.compile(rf"^{SAMPLER_LIST} {LINE} (?P<op>>=|<=) {REF} (?P<sign>[+-]) (?P<pts>\d+) points$")),
    ("top", re.compile(rf"^{SAMPLER_LIST} top {LINE}$")),
    ("share", re.compile(rf"^{SAMPLER_LIST} {LINE} {BOUND}$")),
    ("outcome", re.compile(rf"^{SAMPLER_LIST} (?P<what>biased|failed)(?: (?P<reason>[a-z_]+))? {BOUND}$")),
]


def parse_claim(text):
    for kind, pattern in CLAIMS:
        m = pattern.match(text)
        if m:
            claim = {"kind": kind, **m.groupdict()}
            claim["samplers"] = claim["samplers"].split(",")
            named = claim["samplers"] + ([claim["ref"]] if claim.get("ref") else [])
            return claim if all(s in SAMPLERS for s in named) else None
    return None


def runs_of(path):
    """[(flags, [(claim text, parsed claim or None)])] in file order."""
    runs = []
    with open(path) as f:
        for line in f:
            line = line.strip()
            if line.startswith("// run:"):
                runs.append((line[len("// run:"):].split(), []))
            elif line.startswith("// claim:"):
                text = line[len("// claim:"):].strip()
                if runs:
                    runs[-1][1].append((text, parse_claim(text)))
                else:
                    runs.append((None, [(text, None)]))  # a claim before any run line
    return runs


def measure(path, flags, tmp):
    """One --sampler=all run: per sampler its samples' top frames, samples, interruptions,
    and biased and failed counts by reason (the statistics file). A sample kept from a
    stretch without a poll too long to keep whole counts by its weight ("count"); the
    samples taken ("kept") are what a share's sampling error rests on."""
    out, stats = os.path.join(tmp, "p.jsonl"), os.path.join(tmp, "s.json")
    p = subprocess.run([MINIVM, "run", *flags, "--profile", "--sampler=all", f"--profile-out={out}",
                        f"--profile-stats={stats}", path], capture_output=True, text=True, timeout=300)
    if p.returncode != 0:
        return None, p.stderr[-2000:]
    tops = {s: collections.Counter() for s in SAMPLERS}
    with open(out) as f:
        for line in f:
            e = json.loads(line)
            if e["event"] in ("ExecutionSample", "NativeMethodSample"):
                tops[e["sampler"]][frame_name(e["stack"][0]) if e["stack"] else "[no_frames]"] += e.get("count", 1)
    with open(stats) as f:
        by_name = {s["name"]: s for s in json.load(f)["samplers"]}
    return {s: {"tops": tops[s], "samples": sum(tops[s].values()), "kept": by_name[s]["samples"], "stats": by_name[s]}
            for s in SAMPLERS}, p.stderr


def longer(flags):
    """The same flags with -D ROUNDS doubled."""
    out = list(flags)
    for i, f in enumerate(out):
        if f == "-D" and i + 1 < len(out) and out[i + 1].startswith("ROUNDS="):
            out[i + 1] = f"ROUNDS={2 * int(out[i + 1].split('=')[1].replace('_', ''))}"
    return out


def basis(claim, r):
    """What a claim's share is of: the interruptions for failures, else the samples."""
    return r["stats"]["interruptions"] if claim.get("what") == "failed" else r["samples"]


def few_for(claims, m):
    """The samplers whose claims rest on fewer than MIN_SAMPLES, with that number."""
    named = [(c, s) for _, c in claims for s in c["samplers"] + ([c["ref"]] if c.get("ref") else [])]
    return {s: basis(c, m[s]) for c, s in named if basis(c, m[s]) < MIN_SAMPLES}


def pct(r, line):
    return 100.0 * r["tops"][line] / r["samples"] if r["samples"] else 0.0


def error_pts(p, n, q, k):
    """Z standard errors, in points, of the difference of two shares (percent) of n and k
    samples; the pooled share kept off 0 and 100 so that a line neither sampler saw much
    still has a tolerance of a few samples."""
    pooled = min(max((p * n + q * k) / (n + k) / 100.0, 1.0 / (n + k)), 1.0 - 1.0 / (n + k))
    return 100.0 * Z * math.sqrt(pooled * (1 - pooled) * (1.0 / n + 1.0 / k))


def leaders(r):
    most = max(r["tops"].values(), default=0)
    return most, sorted(k for k, n in r["tops"].items() if n == most)


def relation(claim, s, r, ref, rr):
    """(holds, what was measured) of a relation claim for sampler s against ref."""
    if not r["samples"] or not rr["samples"]:
        return False, f"{s}: {r['samples']} samples, {ref}: {rr['samples']}"
    if claim["kind"] == "top_as":
        # Its top line is the reference's, or one the reference's own samples cannot tell
        # from the reference's top (a difference of two shares of one multinomial sample).
        most, mine = leaders(r)
        ref_most, theirs = leaders(rr)
        n = rr["samples"]
        a = ref_most / n
        tied = [x for x in mine if x in theirs or
                a - rr["tops"][x] / n <= Z * math.sqrt((a + rr["tops"][x] / n - (a - rr["tops"][x] / n) ** 2) / n)]
        return bool(tied), (f"{s}: top {', '.join(mine)} ({most} of {r['samples']}); "
                            f"{ref}: top {', '.join(theirs)} ({ref_most} of {n})")
    line = claim["line"]
    p, q = pct(r, line), pct(rr, line)
    seen = f"{s}: {line} {r['tops'][line]} of {r['samples']} = {p:.1f}%; {ref}: {rr['tops'][line]} of {rr['samples']} = {q:.1f}%"
    if claim["kind"] == "share_as":
        tol = error_pts(p, min(r["samples"], r["kept"]), q, min(rr["samples"], rr["kept"]))
        return abs(p - q) <= tol, f"{seen} (within {tol:.1f} points?)"
    bound = q + int(claim["pts"]) * (1 if claim["sign"] == "+" else -1)
    return (p >= bound if claim["op"] == ">=" else p <= bound), f"{seen} (bound {bound:.1f}%)"


def holds(claim, m):
    """(whether the claim holds of every sampler it names, what was measured)."""
    seen = []
    ok = True
    for s in claim["samplers"]:
        r = m[s]
        if claim["kind"] in ("top_as", "share_as", "share_vs"):
            good, what = relation(claim, s, r, claim["ref"], m[claim["ref"]])
            ok &= good
            seen.append(what)
            continue
        if claim["kind"] == "top":
            most = max(r["tops"].values(), default=0)
            leaders = sorted(k for k, n in r["tops"].items() if n == most)
            ok &= most > 0 and claim["line"] in leaders
            seen.append(f"{s}: top {', '.join(leaders)} ({most} of {r['samples']})")
            continue
        if claim["kind"] == "share":
            part, whole = r["tops"][claim["line"]], r["samples"]
        else:
            counts = r["stats"][claim["what"]]
            part = counts.get(claim["reason"], 0) if claim["reason"] else sum(counts.values())
            whole = basis(claim, r)
        share = 100.0 * part / whole if whole else 0.0
        want = float(claim["pct"])
        ok &= whole > 0 and (share >= want if claim["op"] == ">=" else share <= want)
        seen.append(f"{s}: {part} of {whole} = {share:.1f}%")
    return ok, "; ".join(seen)


with tempfile.TemporaryDirectory() as tmp:
    examples = sorted(glob.glob(os.path.join(ROOT, "examples", "*.mini")))
    check("there are examples", len(examples) >= 7, examples)
    for path in examples:
        name = os.path.basename(path)
        runs = runs_of(path)
        with open(path) as f:
            says_none = NO_CLAIMS in f.read()
        check(f"{name}: has claims, or says why it has none", runs or says_none)
        for flags, claims in runs:
            check(f"{name}: every claim follows a run line", flags is not None, claims)
            if flags is None:
                continue
            for text, claim in claims:
                check(f"{name}: claim parses: {text}", claim is not None)
            claims = [(t, c) for t, c in claims if c]
            m, err = measure(path, flags, tmp)
            # Too few samples, or a claim that does not hold: again, twice as long, up to
            # RETRIES times (a loaded machine delivers a fraction of the signals asked for,
            # the report says how few). A claim is a share with a margin; a share a few
            # samples from its bound is judged on a longer run, a real change fails them all.
            for _ in range(RETRIES):
                if not m or not (few_for(claims, m) or not all(holds(c, m)[0] for _, c in claims)):
                    break
                flags = longer(flags)
                m, err = measure(path, flags, tmp)
            label = f"{name} ({' '.join(flags)})"
            if not check(f"{label}: runs", m is not None, err):
                continue
            print(f"{label}: judged " + ", ".join(f"{s} {m[s]['samples']} samples of {m[s]['stats']['interruptions']}"
                                                  f" interruptions" for s in SAMPLERS), flush=True)
            few = few_for(claims, m)
            check(f"{label}: every claim rests on at least {MIN_SAMPLES} samples (interruptions for failures)",
                  not few, few)
            for text, claim in claims:
                ok, seen = holds(claim, m)
                check(f"{label}: {text}", ok, seen)
            # The checker itself can say no: a line nobody shows is nobody's top line.
            if claims:
                ok, _ = holds({"kind": "top", "samplers": claims[0][1]["samplers"], "line": "nowhere:0"}, m)
                check(f"{label}: a false claim is refused", not ok)
    finish()
