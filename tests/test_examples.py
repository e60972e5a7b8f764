#!/usr/bin/env python3
"""Every example's claims, checked: each examples/*.mini ends with `// run: FLAGS` lines,
each followed by `// claim: ...` lines (the grammar is in examples/README.md). For every
run line the example runs once under `--sampler=all` with those flags (a -D ROUNDS=N
there sizes it for enough samples), and every claim after it must hold of that run: a
sampler's top line, a line's share of its samples, the share of its samples biased or
of its interruptions failed, for a reason or any. A claim that does not parse is a
failure too, and so is an example with neither claims nor a line saying why it has
none. Prints `N passed, N failed`."""
import collections
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
# Fewer samples than this and a run is repeated once, twice as long (a loaded machine
# delivers fewer signals); claims are stated with margins that hold from here on. A run
# where a claim fails is repeated the same way, and the longer run is the one judged.
MIN_SAMPLES = 60
NO_CLAIMS = "// No sampling claims:"

SAMPLER_LIST = r"(?P<samplers>[a-z]+(?:,[a-z]+)*)"
LINE = r"(?P<line>\S+:\d+|\S+ \((?:native|stub)\))"
BOUND = r"(?P<op>>=|<=) (?P<pct>\d+(?:\.\d+)?)%"
CLAIMS = [
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
            return claim if all(s in SAMPLERS for s in claim["samplers"]) else None
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
    and biased and failed counts by reason (the statistics file)."""
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
                tops[e["sampler"]][frame_name(e["stack"][0]) if e["stack"] else "[no_frames]"] += 1
    with open(stats) as f:
        by_name = {s["name"]: s for s in json.load(f)["samplers"]}
    return {s: {"tops": tops[s], "samples": sum(tops[s].values()), "stats": by_name[s]} for s in SAMPLERS}, p.stderr


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
    return {s: basis(c, m[s]) for _, c in claims for s in c["samplers"] if basis(c, m[s]) < MIN_SAMPLES}


def holds(claim, m):
    """(whether the claim holds of every sampler it names, what was measured)."""
    seen = []
    ok = True
    for s in claim["samplers"]:
        r = m[s]
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
            # Too few samples, or a claim that does not hold: once more, twice as long. A
            # claim is a share with a margin; a share a few samples from its bound (seen:
            # 60.0% against >= 60%) is judged on the longer run, a real change fails both.
            if m and (few_for(claims, m) or not all(holds(c, m)[0] for _, c in claims)):
                flags = longer(flags)
                m, err = measure(path, flags, tmp)
            label = f"{name} ({' '.join(flags)})"
            if not check(f"{label}: runs", m is not None, err):
                continue
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
