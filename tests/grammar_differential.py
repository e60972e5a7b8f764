#!/usr/bin/env python3
"""Differential test of generated programs (tests/README.md, "Fuzzers"): minivm_gen writes
a well-typed Mini v2 program for each seed (tests/fuzz/program_generator.h), and every
execution mode must run it to the same end: the same stdout, the same exit status, the
same runtime error with the same Mini stack trace, and no crash, hang, compile error or
internal error. Every ERRORS_EVERY-th seed asks for a program that ends with a deliberate
runtime error, which must be the one the generator names.

A failing seed prints the seed, the saved program (kept in --keep, replayable with
`minivm run`), the command of each mode and the outputs that differ; the programs of
passing seeds are deleted.

Usage: grammar_differential.py --minivm PATH --gen PATH [--count N] [--first-seed S]
                               [--jobs N] [--keep DIR] [--mode NAME ...]
Ends with `N passed, N failed` (one case per seed); exit 1 on any failure.
"""
import argparse
import concurrent.futures
import os
import subprocess
import tempfile

from checks import check, finish
from run_programs import MODES

# xint, xcomp and tiered as they are; tiered with thresholds that compile at once and a
# collection at every return from the runtime; xcomp collecting so; every sampler at once.
DEFAULT_MODES = ["xint", "xcomp", "tiered", "tiered-gc-a-lot", "xcomp-gc-a-lot", "xcomp-all-samplers"]
ERRORS_EVERY = 5
TIMEOUT = 60.0
SHOWN_LINES = 6


def generate(gen, seed, runtime_error, directory):
    """Writes the program of `seed`; returns (path, expected error text or None)."""
    args = [gen, str(seed)] + (["--runtime-error"] if runtime_error else [])
    p = subprocess.run(args, capture_output=True, text=True, timeout=60)
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(args)} exited {p.returncode}: {p.stderr.strip()}")
    path = os.path.join(directory, f"grammar_{seed}{'_error' if runtime_error else ''}.mini")
    with open(path, "w", encoding="utf-8") as f:
        f.write(p.stdout)
    expected = None
    for line in p.stderr.splitlines():
        if line.startswith("expected error: "):
            expected = line[len("expected error: "):]
    return path, expected


def run(minivm, flags, path, timeout):
    cmd = [minivm, "run", *flags, path]
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, errors="replace", timeout=timeout,
                           stdin=subprocess.DEVNULL)
        return cmd, p.returncode, p.stdout, p.stderr
    except subprocess.TimeoutExpired:
        return cmd, None, "", f"timed out after {timeout:g} s"


def error_report(err):
    """The runtime error and its Mini stack trace, from stderr (a profile may follow).
    A stack overflow's trace is left out: its depth depends on the frames' sizes."""
    lines = err.splitlines()
    for i, line in enumerate(lines):
        if line.startswith("error: "):
            if "stack overflow" in line:
                return [line]
            trace = [line]
            for more in lines[i + 1:]:
                if not more.startswith("  at ") and not more.startswith("  ..."):
                    break
                trace.append(more)
            return trace
    return []


def show(text):
    lines = text.splitlines()
    out = "\n".join("      " + l for l in lines[:SHOWN_LINES])
    return out + (f"\n      ... ({len(lines) - SHOWN_LINES} more lines)" if len(lines) > SHOWN_LINES else "")


def first_difference(a, b):
    la, lb = a.splitlines(), b.splitlines()
    for i in range(max(len(la), len(lb))):
        x = la[i] if i < len(la) else "<no line>"
        y = lb[i] if i < len(lb) else "<no line>"
        if x != y:
            return f"line {i + 1}: {x!r} vs {y!r}"
    return "none"


def judge(seed, path, expected, results):
    """Problems of one seed's runs (empty when they agree and end as they must)."""
    problems = []
    for mode, (cmd, rc, out, err) in results.items():
        where = f"[{mode}] {' '.join(cmd)}"
        if rc is None:
            problems.append(f"{where}: {err}")
        elif rc < 0:
            problems.append(f"{where}: killed by signal {-rc}\n{show(err)}")
        elif ": error: " in err and rc == 2:
            problems.append(f"{where}: a compile error on a generated program (a generator or compiler bug)\n{show(err)}")
        elif "internal error" in err or "Sanitizer" in err or "runtime error:" in err:
            problems.append(f"{where}: an internal error or a sanitizer report\n{show(err)}")
        report = error_report(err)
        if expected is None and report:
            problems.append(f"{where}: a runtime error in a program that has none\n{show(err)}")
        if expected is not None and rc is not None and (rc != 1 or not report or expected not in report[0]):
            problems.append(f"{where}: exit {rc}, expected exit 1 and the error {expected!r}\n{show(err)}")
    if problems:
        return problems
    base_mode = next(iter(results))
    _, base_rc, base_out, base_err = results[base_mode]
    for mode, (cmd, rc, out, err) in results.items():
        if out != base_out:
            problems.append(f"stdout of {mode} differs from {base_mode}: first difference {first_difference(base_out, out)}\n"
                            f"    {base_mode}:\n{show(base_out)}\n    {mode}:\n{show(out)}")
        if rc != base_rc:
            problems.append(f"exit status of {mode} is {rc}, of {base_mode} {base_rc}")
        if error_report(err) != error_report(base_err):
            problems.append(f"the runtime error of {mode} differs from {base_mode}'s:\n"
                            f"    {base_mode}:\n{show(chr(10).join(error_report(base_err)))}\n"
                            f"    {mode}:\n{show(chr(10).join(error_report(err)))}")
    return problems


def one_seed(args, seed, modes):
    runtime_error = seed % ERRORS_EVERY == 0
    path, expected = generate(args.gen, seed, runtime_error, args.keep)
    results = {m: run(args.minivm, MODES[m], path, args.timeout) for m in modes}
    problems = judge(seed, path, expected, results)
    if not problems:
        os.unlink(path)
    return seed, path, problems


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--minivm", required=True)
    ap.add_argument("--gen", required=True, help="the minivm_gen binary")
    ap.add_argument("--count", type=int, default=150, help="seeds to run (default 150)")
    ap.add_argument("--first-seed", type=int, default=1)
    ap.add_argument("--jobs", "-j", type=int, default=2)
    ap.add_argument("--timeout", type=float, default=TIMEOUT, help="seconds per run")
    ap.add_argument("--keep", help="where failing programs stay (default: a new temporary directory)")
    ap.add_argument("--mode", action="append", help=f"modes to compare (default {', '.join(DEFAULT_MODES)})")
    args = ap.parse_args()
    modes = args.mode or DEFAULT_MODES
    unknown = [m for m in modes if m not in MODES]
    if unknown:
        ap.error(f"unknown mode {', '.join(unknown)} (run_programs.py's MODES: {', '.join(MODES)})")
    made_keep = not args.keep
    if args.keep:
        os.makedirs(args.keep, exist_ok=True)
    else:
        args.keep = tempfile.mkdtemp(prefix="grammar_differential.")
    seeds = range(args.first_seed, args.first_seed + args.count)
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        for seed, path, problems in pool.map(lambda s: one_seed(args, s, modes), seeds):
            detail = f"seed {seed}: program {path} (replay: {args.minivm} run MODE-FLAGS {path})\n" + "\n".join(
                "  " + p for p in problems)
            check(f"seed {seed}", not problems, detail)
    if made_keep and not os.listdir(args.keep):
        os.rmdir(args.keep)
    finish()


if __name__ == "__main__":
    main()
