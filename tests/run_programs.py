#!/usr/bin/env python3
"""Runs every tests/programs/*.mini file in every execution mode and checks it against
the expectations written in its comments (LANGUAGE.md, "Test-file conventions"):

    // expect: TEXT          the next line of stdout, in order (all of stdout must match)
    // expect error: TEXT    a substring of stderr; exit status must be 1 or 2
    // expect exit: N        the exit status

Ends with one line `N passed, N failed` (cases = files x modes); exit 1 on any failure.
"""
import argparse
import concurrent.futures
import os
import re
import subprocess
import sys

# Execution modes: name -> extra flags for `minivm run`. One line per mode.
MODES = {
    "xint": ["--xint"],
    "xcomp": ["--xcomp"],
    "tiered": [],
    "osr-every-loop": ["--jit-sync", "--compile-threshold=1000000", "--backedge-threshold=1"],
    "xcomp-counted-polls": ["--xcomp", "--counted-loop-polls"],
}

EXPECT_RE = re.compile(r"//\s*expect(?P<kind>(?: error| exit)?):\s?(?P<text>.*)$")


class Expectations:
    def __init__(self):
        self.stdout = []
        self.errors = []
        self.exit = None

    def empty(self):
        return not self.stdout and not self.errors and self.exit is None


def parse_expectations(source):
    exp = Expectations()
    for line in source.splitlines():
        m = EXPECT_RE.search(line)
        if not m:
            continue
        kind, text = m.group("kind"), m.group("text").rstrip()
        if kind == "":
            exp.stdout.append(text)
        elif kind == " error":
            exp.errors.append(text)
        else:
            exp.exit = int(text)
    return exp


def check(exp, rc, out, err):
    """Returns a list of problems (empty when the run matches)."""
    problems = []
    lines = out.splitlines()
    if lines != exp.stdout:
        diff = [f"  expected stdout ({len(exp.stdout)} lines) vs actual ({len(lines)} lines):"]
        for i in range(max(len(lines), len(exp.stdout))):
            e = exp.stdout[i] if i < len(exp.stdout) else "<none>"
            a = lines[i] if i < len(lines) else "<none>"
            mark = "  " if e == a else "! "
            diff.append(f"  {mark}{i + 1:3}: expected {e!r}")
            if e != a:
                diff.append(f"         got      {a!r}")
        problems.append("\n".join(diff))
    for text in exp.errors:
        if text not in err:
            problems.append(f"  stderr lacks {text!r}")
    if exp.exit is not None:
        want = f"exit {exp.exit}"
        ok = rc == exp.exit
    elif exp.errors:
        want, ok = "exit 1 or 2", rc in (1, 2)
    else:
        want, ok = "exit 0", rc == 0
    if not ok:
        problems.append(f"  {want}, got exit {rc}")
    return problems


def run_case(minivm, path, mode, flags, timeout):
    with open(path, encoding="utf-8", errors="replace") as f:
        exp = parse_expectations(f.read())
    cmd = [minivm, "run", *flags, path]
    if exp.empty():
        return False, path, mode, cmd, ["  the file states no expectation (a test that cannot fail)"], ""
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, errors="replace")
    except subprocess.TimeoutExpired:
        return False, path, mode, cmd, [f"  timed out after {timeout} s"], ""
    problems = check(exp, p.returncode, p.stdout, p.stderr)
    return not problems, path, mode, cmd, problems, p.stderr


def self_test():
    exp = parse_expectations('print(1); // expect: 1\n// expect: a  b\n// expect error: boom\n// expect exit: 3\n')
    assert exp.stdout == ["1", "a  b"], exp.stdout
    assert exp.errors == ["boom"] and exp.exit == 3
    assert check(exp, 3, "1\na  b\n", "xx boom") == []
    assert check(exp, 1, "1\na  b\n", "boom") != []
    assert check(exp, 3, "1\n", "boom") != []
    e2 = parse_expectations("print(2); // expect: 2\n")
    assert check(e2, 0, "2\n", "") == [] and check(e2, 0, "2\n3\n", "") != []
    assert parse_expectations("fn main() {}\n").empty()
    print("self-test: 6 passed, 0 failed")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--minivm", help="path of the minivm binary")
    ap.add_argument("--mode", action="append", choices=sorted(MODES), help="run only these modes (repeatable)")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--timeout", type=float, default=60)
    ap.add_argument("--filter", default="", help="only files whose name contains this")
    ap.add_argument("-v", "--verbose", action="store_true")
    ap.add_argument("--self-test", action="store_true", help="check the expectation parser and exit")
    ap.add_argument("paths", nargs="*", help="directories or .mini files")
    args = ap.parse_args()
    if args.self_test:
        self_test()
        return 0
    if not args.minivm or not args.paths:
        ap.error("--minivm and at least one path are required")
    files = []
    for p in args.paths:
        if os.path.isdir(p):
            files += [os.path.join(p, n) for n in sorted(os.listdir(p)) if n.endswith(".mini")]
        else:
            files.append(p)
    files = [f for f in files if args.filter in os.path.basename(f)]
    if not files:
        print("no .mini files found", file=sys.stderr)
        print("0 passed, 1 failed")
        return 1
    modes = args.mode or list(MODES)
    passed = failed = 0
    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        futures = [pool.submit(run_case, args.minivm, f, m, MODES[m], args.timeout) for f in files for m in modes]
        for fut in futures:
            ok, path, mode, cmd, problems, err = fut.result()
            if ok:
                passed += 1
                if args.verbose:
                    print(f"ok   {os.path.basename(path)} [{mode}]")
            else:
                failed += 1
                print(f"FAIL {os.path.basename(path)} [{mode}]: {' '.join(cmd)}")
                for pr in problems:
                    print(pr)
                if err:
                    tail = err.strip().splitlines()[-6:]
                    print("  stderr tail:\n" + "\n".join("    " + l for l in tail))
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
