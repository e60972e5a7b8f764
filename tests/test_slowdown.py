#!/usr/bin/env python3
"""--slowdown end to end (vm/slowdown.h): the added work changes the compiled code only on
the slowed line (inlining, polls and registers elsewhere as before), the oracle puts the
added time on that line in every execution mode and the cooperative sampler with it, and
the reports name the slowdown. Prints `N passed, N failed`."""
import collections
import json
import os
import re
import sys
import tempfile

from checks import check, events, finish, run_minivm

MINIVM = sys.argv[1]
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SIEVE = os.path.join(ROOT, "bench", "vm", "sieve.mini")


def listing_blocks(text):
    """`disasm --jit` as (function, source line header, instructions) blocks, with code
    offsets, jump targets and sizes taken out: what must match between two compilations
    apart from where the code lies."""
    blocks, fn = [], None
    for line in text.splitlines():
        m = re.match(r"fn (\S+):", line)
        if m:
            fn = m.group(1)
            continue
        if re.match(r"\s+\d+ \|", line):
            blocks.append((fn, line.strip(), []))
        elif blocks and line.strip():
            # The slowed function's bytecode indices move by the instruction's 5 bytes, and a
            # jump across the spin may need a longer encoding: neither is a change of code.
            # Addresses (of runtime functions: two processes place them apart) are not code.
            insn = re.sub(r"[+-]?0x[0-9a-f]+|\b\d{9,}\b", "X", line.strip())
            blocks[-1][2].append(re.sub(r"@\d+>", "@N>", insn.replace("short ", "")))
    return blocks


def without_line(blocks, line):
    return [b for b in blocks if not b[1].startswith(f"{line} |")]


def jit_listing(path, *flags):
    rc, out, err = run_minivm(MINIVM, "disasm", "--jit", *flags, path)
    return rc, listing_blocks(out), err


# The compiled code differs only on the slowed line: a plain loop, a callee the JIT inlines
# because it is marked so, and one it inlines because it is small (Box.get: the slowdown's
# bytes do not count against it).
for path, site in ((SIEVE, "sieve:10"), (os.path.join(ROOT, "examples", "loop_in_inlined_callee.mini"), "checksum:12"),
                   (os.path.join(ROOT, "tests", "programs", "slowdown_everywhere.mini"), "Box.get:25")):
    line = int(site.split(":")[1])
    rc0, plain, err0 = jit_listing(path)
    rc1, slowed, err1 = jit_listing(path, f"--slowdown={site}=100ns")
    changed = [b for b in slowed if b not in plain]
    check(f"{os.path.basename(path)} --slowdown={site}: disasm --jit differs only on line {line} "
          f"({len(changed)} blocks changed)", rc0 == rc1 == 0 and changed and without_line(plain, line) ==
          without_line(slowed, line) and all(b[1].startswith(f"{line} |") for b in changed), err0 + err1 + str(changed[:3]))
    check(f"... and its changed blocks hold the spin (imul)", any("imul" in " ".join(b[2]) for b in changed), changed[:2])


def shares(path, sampler):
    """Each line's share of one sampler's samples in a .jsonl profile, and the sample count."""
    lines = collections.Counter()
    for e in events(path):
        if e["event"] == "ExecutionSample" and e["sampler"] == sampler and e["stack"]:
            top = e["stack"][0]
            lines[f"{top['function']}:{top['line']}"] += 1
    n = sum(lines.values())
    return {k: v / n for k, v in lines.items()}, n


# The added time lands on the slowed line: sieve:7 (`count += 1`, once per prime: about 1.5
# million passes, a few percent of the run) with 1 us a pass about doubles the run, so the
# oracle's share of the line rises by far more than sampling error, in every mode, whatever
# the CPU; cooperative matches the oracle there.
with tempfile.TemporaryDirectory() as tmp:
    for mode in ("--xint", "--xcomp", "--tiered"):
        flags = [] if mode == "--tiered" else [mode]
        got = {}
        for slowed in (False, True):
            out = os.path.join(tmp, f"{mode}{slowed}.jsonl")
            stats = os.path.join(tmp, "stats.json")
            extra = ["--slowdown=sieve:7=1us"] if slowed else []
            rc, so, se = run_minivm(MINIVM, "run", *flags, *extra, "--sampler=cooperative,oracle", "-o", out,
                                    "--profile-stats", stats, SIEVE, timeout=600)
            oracle, n = shares(out, "oracle")
            coop, _ = shares(out, "cooperative")
            got[slowed] = (rc, so, se, oracle.get("sieve:7", 0), coop.get("sieve:7", 0), n, json.load(open(stats)))
        (rc0, so0, _, base, _, n0, _), (rc1, so1, se1, share, coop, n1, st) = got[False], got[True]
        check(f"sieve {mode}: the slowed run prints the same", rc0 == rc1 == 0 and so0 == so1, se1[-2000:])
        check(f"sieve {mode}: the oracle's share of sieve:7 rises from {100 * base:.1f}% ({n0} samples) to "
              f"{100 * share:.1f}% ({n1})", share >= base + 0.2, se1[-2000:])
        check(f"sieve {mode}: cooperative's share of sieve:7 is the oracle's ({100 * coop:.1f}%)",
              abs(coop - share) <= 0.02, se1[-2000:])
        check(f"sieve {mode}: the report and the stats name the slowdown",
              "--slowdown=sieve:7=1000ns" in se1 and st.get("slowdowns") == ["sieve:7=1000ns"], se1[:600])
        # sieve:7 runs once per prime, and the program prints how many primes it counted.
        check(f"sieve {mode}: the stats count every pass of sieve:7 ({st.get('slowdown_passes')}: the program "
              f"counted {so1.strip()} primes) and the report says it",
              st.get("slowdown_passes") == [int(so1.strip() or -1)] and f"({so1.strip()} passes)" in se1,
              se1[:600])

# Passes are counted in every mode, each copy of a generic method's and a lambda's too, on
# every thread: slowdown_everywhere.mini calls note() 10 times, Box.get twice (two copies)
# and its lambda once.
EVERYWHERE = os.path.join(ROOT, "tests", "programs", "slowdown_everywhere.mini")
with tempfile.TemporaryDirectory() as tmp:
    stats = os.path.join(tmp, "stats.json")
    for flags in (["--xint"], ["--xcomp"], [], ["--xcomp", "--sampler=all"]):
        rc, so, se = run_minivm(MINIVM, "run", *flags, "--profile-stats", stats, "--slowdown=note:30=1us",
                                "--slowdown=Box.get:25=1us", "--slowdown=main$fn@35:36=100ns", EVERYWHERE)
        passes = json.load(open(stats)).get("slowdown_passes") if rc == 0 else None
        check(f"slowdown_everywhere {' '.join(flags) or 'tiered'}: passes note 10, Box.get 2, the lambda 1 ({passes})",
              passes == [10, 2, 1], se[-1500:])

# What is refused, with the reason.
for arg, needle in (("seive:10=1us", "no function 'seive'"), ("sieve:99=1us", "sieve has no code on line 99"),
                    ("sieve:10=2ms", "the most is 1ms"), ("sieve10", "write FUNCTION:LINE=T"),
                    ("sieve:ten=1us", "bad line"), ("sieve:10=-5ns", "cannot be negative")):
    rc, so, se = run_minivm(MINIVM, "run", f"--slowdown={arg}", SIEVE)
    check(f"--slowdown={arg} is a usage error ({needle})", rc == 2 and needle in se and so == "", se)

finish()
