#!/usr/bin/env python3
"""Runs tests/programs/*.mini files in every execution mode and checks each run against the
expectations written in the program's comments (LANGUAGE.md, "Test-file conventions"):

    // expect: TEXT          the next line of stdout, in order (all of stdout must match)
    // expect error: TEXT    a substring of stderr; exit status must be 1 or 2
    // expect exit: N        the exit status
    // run with: FLAGS       extra `minivm run` flags for every mode (e.g. --heap=4m)

An expectation is a `//` line comment that starts with `expect`; text inside string
literals and block comments is not an expectation. Without `expect exit`, the exit status
must be 0 when there is no `expect error`, else 1 or 2. A file with no expectation at all
fails (a test that cannot fail is a defect).

Usage: run_programs.py --minivm PATH [--mode NAME ...] [--jobs N] [--filter SUBSTR]
                       [--timeout S] [-v] DIR_OR_FILES...
       run_programs.py --self-test
Ends with one line `N passed, N failed` (cases = files x modes); exit 1 on any failure.
"""
import argparse
import concurrent.futures
import os
import re
import subprocess
import sys

# Execution modes: name -> extra flags for `minivm run`. Adding a mode is one line here.
MODES = {
    "xint": ["--xint"],
    "xcomp": ["--xcomp"],
    "tiered": [],
    "osr-every-loop": ["--jit-sync", "--compile-threshold=1000000", "--backedge-threshold=1"],
    "xcomp-counted-polls": ["--xcomp", "--counted-loop-polls"],
    "xint-profiled": ["--xint", "--profile", "--interval=100us", "--sampler=cooperative,safepoint"],
    "tiered-profiled": ["--profile", "--interval=100us", "--sampler=cooperative,safepoint"],
    "xcomp-all-samplers": ["--xcomp", "--profile", "--interval=100us", "--sampler=all"],
    # A collection at every return from the runtime, every root checked: a stack map that
    # is wrong where a thread can stop shows every time (runtime/gc.h, --gc-a-lot).
    "xint-gc-a-lot": ["--xint", "--gc-a-lot", "--gc-verify"],
    "xcomp-gc-a-lot": ["--xcomp", "--gc-a-lot", "--gc-verify"],
    "tiered-gc-a-lot": ["--gc-a-lot", "--gc-verify", "--compile-threshold=2", "--backedge-threshold=50"],
}

DEFAULT_TIMEOUT = 60.0
STDERR_TAIL_LINES = 8
DIFF_CONTEXT = 2         # equal stdout lines shown around each differing one

EXPECT_RE = re.compile(r"^//\s*expect(?P<kind> error| exit)?:(?P<text>.*)$")
FLAGS_RE = re.compile(r"^//\s*run with:(?P<flags>.*)$")


class Expectations:
    def __init__(self):
        self.stdout = []      # expected stdout lines, in order
        self.errors = []      # substrings of stderr
        self.exit = None      # expected exit status, or None
        self.problems = []    # malformed expectation comments
        self.flags = []       # from `// run with:`

    def empty(self):
        return not self.stdout and not self.errors and self.exit is None


def line_comments(source):
    """Yields (line number, text of the `//` comment on that line) for every real line
    comment: not inside a string literal or a block comment (Mini's lexical rules)."""
    in_block = False
    for lineno, line in enumerate(source.splitlines(), 1):
        i, n = 0, len(line)
        while i < n:
            if in_block:
                end = line.find("*/", i)
                if end < 0:
                    break
                in_block, i = False, end + 2
            elif line.startswith("//", i):
                yield lineno, line[i:]
                break
            elif line.startswith("/*", i):
                in_block, i = True, i + 2
            elif line[i] == '"':
                i += 1
                while i < n and line[i] != '"':
                    i += 2 if line[i] == "\\" else 1
                i += 1
            else:
                i += 1


def parse_expectations(source):
    exp = Expectations()
    for lineno, comment in line_comments(source):
        f = FLAGS_RE.match(comment)
        if f:
            exp.flags += f.group("flags").split()
            continue
        m = EXPECT_RE.match(comment)
        if not m:
            continue
        kind, text = m.group("kind"), m.group("text")
        text = text[1:] if text.startswith(" ") else text   # one space after ':' is layout
        text = text.rstrip("\r")
        if kind is None:
            exp.stdout.append(text)
        elif kind == " error":
            if not text.strip():
                exp.problems.append(f"line {lineno}: empty 'expect error'")
            exp.errors.append(text.rstrip())
        else:
            try:
                code = int(text.strip())
            except ValueError:
                exp.problems.append(f"line {lineno}: 'expect exit' needs a number, got {text.strip()!r}")
                continue
            if exp.exit is not None and exp.exit != code:
                exp.problems.append(f"line {lineno}: second 'expect exit' ({code}, earlier {exp.exit})")
            exp.exit = code
    return exp


def check(exp, rc, out, err):
    """Returns a list of problems (empty when the run matches)."""
    problems = []
    lines = out.splitlines()
    if lines != exp.stdout:
        diff = [f"  stdout differs: expected {len(exp.stdout)} lines, got {len(lines)}"]
        total = max(len(lines), len(exp.stdout))
        bad = [i for i in range(total)
               if i >= len(lines) or i >= len(exp.stdout) or lines[i] != exp.stdout[i]]
        shown = sorted({j for i in bad for j in range(i - DIFF_CONTEXT, i + DIFF_CONTEXT + 1) if 0 <= j < total})
        prev = -1
        for i in shown:
            if i != prev + 1:
                diff.append("     ....")
            prev = i
            e = exp.stdout[i] if i < len(exp.stdout) else None
            a = lines[i] if i < len(lines) else None
            if e == a:
                diff.append(f"     {i + 1:4}  {e!r}")
            else:
                diff.append(f"  !  {i + 1:4}  expected {'<no line>' if e is None else repr(e)}")
                diff.append(f"           got      {'<no line>' if a is None else repr(a)}")
        if prev != total - 1:
            diff.append("     ....")
        problems.append("\n".join(diff))
    for text in exp.errors:
        if text not in err:
            problems.append(f"  stderr lacks {text!r}")
    if exp.exit is not None:
        want, ok = f"exit {exp.exit}", rc == exp.exit
    elif exp.errors:
        want, ok = "exit 1 or 2", rc in (1, 2)
    else:
        want, ok = "exit 0", rc == 0
    if not ok:
        got = f"killed by signal {-rc}" if rc < 0 else f"exit {rc}"
        problems.append(f"  expected {want}, got {got}")
    return problems


def run_case(minivm, path, mode, flags, timeout):
    """Returns (ok, problems, exit status or None, stderr)."""
    cmd = [minivm, "run", *flags, path]
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            exp = parse_expectations(f.read())
    except OSError as e:
        return False, cmd, [f"  cannot read the file: {e}"], None, ""
    cmd = [minivm, "run", *flags, *exp.flags, path]
    if exp.problems:
        return False, cmd, ["  " + p for p in exp.problems], None, ""
    if exp.empty():
        return False, cmd, ["  the file states no expectation (a test that cannot fail)"], None, ""
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, errors="replace", timeout=timeout,
                           stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired as e:
        err = e.stderr.decode(errors="replace") if isinstance(e.stderr, bytes) else (e.stderr or "")
        return False, cmd, [f"  timed out after {timeout:g} s"], None, err
    except OSError as e:
        return False, cmd, [f"  cannot run {minivm}: {e}"], None, ""
    problems = check(exp, p.returncode, p.stdout, p.stderr)
    return not problems, cmd, problems, p.returncode, p.stderr


def self_test():
    cases = 0

    def ok(cond, what):
        nonlocal cases
        cases += 1
        if not cond:
            raise AssertionError(what)

    src = ('fn main(): int {\n'
           '    print(1); // expect: 1\n'
           '    print("a  b"); //expect: a  b\n'
           '    print("// expect: not this", 2); // expect: // expect: not this 2\n'
           '    /* // expect: nor this */ print(3); // expect: 3\n'
           '    /* a block\n'
           '       // expect: still not this\n'
           '    */\n'
           '    print(""); // expect: \n'
           '    print("x\\"y // expect: no"); // expect: x"y // expect: no\n'
           '    return 3; // expect exit: 3\n'
           '}\n'
           '// expect error: boom \n'
           '// expectation: not one either\n')
    exp = parse_expectations(src)
    ok(exp.stdout == ["1", "a  b", "// expect: not this 2", "3", "", 'x"y // expect: no'], exp.stdout)
    ok(exp.errors == ["boom"] and exp.exit == 3 and not exp.problems, (exp.errors, exp.exit, exp.problems))
    ok(exp.flags == [], exp.flags)
    ok(parse_expectations("// run with: --heap=4m  --gc-log\n// expect: x\n").flags == ["--heap=4m", "--gc-log"],
       "run with: flags")
    good_out = '1\na  b\n// expect: not this 2\n3\n\nx"y // expect: no\n'
    ok(check(exp, 3, good_out, "error: boom\n") == [], "a matching run passes")
    ok(check(exp, 1, good_out, "error: boom\n") != [], "a wrong exit status fails")
    ok(check(exp, 3, good_out, "error: bam\n") != [], "a missing stderr substring fails")
    ok(check(exp, 3, good_out + "extra\n", "boom") != [], "an extra stdout line fails")
    ok(check(exp, 3, good_out.replace("3\n", ""), "boom") != [], "a missing stdout line fails")

    e2 = parse_expectations("fn main() {\n    print(2); // expect: 2\n}\n")
    ok(check(e2, 0, "2\n", "") == [] and check(e2, 1, "2\n", "") != [], "no exit given means exit 0")
    e3 = parse_expectations("fn main() { f(); } // expect error: at f (\n")
    ok(check(e3, 1, "", "error: x\n  at f (t.mini:1)\n") == [], "expect error allows exit 1")
    ok(check(e3, 2, "", "  at f (t.mini:1)") == [] and check(e3, 0, "", "  at f (") != [], "... 2 but not 0")
    ok(check(e3, -11, "", "  at f (") != [], "a crash fails")
    ok(parse_expectations("fn main() {}\n").empty(), "no expectation is detected")
    ok(parse_expectations('print("// expect: 1");\n').empty(), "strings hide expectations")
    ok(parse_expectations("// expect exit: x\n").problems, "a bad exit number is reported")
    ok(parse_expectations("// expect exit: 1\n// expect exit: 2\n").problems, "conflicting exits are reported")
    print(f"self-test: {cases} passed, 0 failed")


def collect(paths, substr):
    files = []
    for p in paths:
        if os.path.isdir(p):
            files += [os.path.join(p, n) for n in sorted(os.listdir(p)) if n.endswith(".mini")]
        else:
            files.append(p)
    return [f for f in files if substr in os.path.basename(f)]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--minivm", help="path of the minivm binary")
    ap.add_argument("--mode", action="append", metavar="NAME",
                    help=f"run only these modes (repeatable or comma separated; default all: {', '.join(MODES)})")
    ap.add_argument("--jobs", "-j", type=int, default=os.cpu_count() or 2, help="parallel runs (default: CPUs)")
    ap.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT, help="seconds per run (default 60)")
    ap.add_argument("--filter", default="", metavar="SUBSTR", help="only files whose name contains SUBSTR")
    ap.add_argument("-v", "--verbose", action="store_true", help="also list the cases that pass")
    ap.add_argument("--self-test", action="store_true", help="check the expectation parser and exit")
    ap.add_argument("paths", nargs="*", metavar="DIR_OR_FILES", help="directories (their *.mini) or .mini files")
    args = ap.parse_args()
    if args.self_test:
        self_test()
        return 0
    if not args.minivm or not args.paths:
        ap.error("--minivm and at least one directory or file are required")
    modes = []
    for m in args.mode or list(MODES):
        for x in m.split(","):
            if x and x not in modes:
                modes.append(x)
    unknown = [m for m in modes if m not in MODES]
    if unknown:
        ap.error(f"unknown mode {', '.join(unknown)} (known: {', '.join(MODES)})")
    if not os.access(args.minivm, os.X_OK):
        print(f"run_programs.py: {args.minivm} is not an executable", file=sys.stderr)
        print("0 passed, 1 failed")
        return 1
    files = collect(args.paths, args.filter)
    if not files:
        print("run_programs.py: no .mini files found", file=sys.stderr)
        print("0 passed, 1 failed")
        return 1

    passed = failed = 0
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        futures = [(f, m, pool.submit(run_case, args.minivm, f, m, MODES[m], args.timeout))
                   for f in files for m in modes]
        for path, mode, fut in futures:
            ok, cmd, problems, rc, err = fut.result()
            if ok:
                passed += 1
                if args.verbose:
                    print(f"ok   {path} [{mode}]")
                continue
            failed += 1
            print(f"FAIL {path} [{mode}]")
            print(f"  command: {' '.join(cmd)}")
            for pr in problems:
                print(pr)
            if rc is not None:
                print(f"  exit status: {rc}")
            tail = err.rstrip().splitlines()[-STDERR_TAIL_LINES:]
            if tail:
                print("  stderr (last lines):")
                for line in tail:
                    print("    " + line)
            sys.stdout.flush()
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
