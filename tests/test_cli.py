#!/usr/bin/env python3
"""Command-line behaviour of `minivm`: usage errors, missing files, --help, --version,
disasm. Each check runs the real binary; prints `N passed, N failed`."""
import os
import subprocess
import sys
import tempfile

from checks import check, finish

MINIVM = sys.argv[1]
HERE = os.path.dirname(os.path.abspath(__file__))


def run(*args, stdin=None):
    p = subprocess.run([MINIVM, *args], capture_output=True, text=True, timeout=60, stdin=stdin)
    return p.returncode, p.stdout, p.stderr


with tempfile.TemporaryDirectory() as tmp:
    hello = os.path.join(tmp, "hello.mini")
    with open(hello, "w") as f:
        f.write('fn main(): int {\n    print("hello", 1 + 2);\n    return 7;\n}\n')

    rc, out, err = run("--help")
    check("--help exits 0 and lists the commands", rc == 0 and "minivm run" in out and "disasm" in out, err)
    rc, out, err = run("help", "reasons")
    check("help reasons lists the reasons table", rc == 0 and "pc_in_prologue" in out and "frame_escaped" in out, err)
    rc, out, err = run("help", "samplers")
    names = [line.split()[0] for line in out.splitlines() if line.startswith("  ")]
    check("help samplers lists every sampler, cooperative first, the oracle among them",
          rc == 0 and names[:1] == ["cooperative"] and "oracle" in names and len(names) == len(set(names)), out + err)
    rc, out, err = run("help", "bogus")
    check("an unknown help topic says which and exits 2", rc == 2 and "unknown help topic 'bogus'" in err, err)
    rc, out, err = run("--version")
    check("--version", rc == 0 and out.startswith("minivm "), out + err)
    rc, out, err = run()
    check("no arguments is a usage error", rc == 2 and "usage" in err, err)
    rc, out, err = run("frobnicate")
    check("unknown command", rc == 2 and "unknown command 'frobnicate'" in err, err)
    rc, out, err = run("run", "--no-such-flag", hello)
    check("unknown flag says which and exits 2", rc == 2 and "unknown option '--no-such-flag'" in err
          and err.count("\n") <= 2, err)
    rc, out, err = run("run", os.path.join(tmp, "missing.mini"))
    check("missing file", rc == 2 and "cannot open" in err and "missing.mini" in err, err)
    rc, out, err = run("run", tmp)
    check("a directory is not a program", rc == 2 and tmp in err, err)
    rc, out, err = run("run")
    check("run without a program", rc == 2 and "needs a program" in err, err)
    rc, out, err = run("run", "--heap=12q", hello)
    check("bad size", rc == 2 and "bad heap size" in err, err)
    rc, out, err = run("run", hello)
    check("run prints and exits with main's result", rc == 7 and out == "hello 3\n", f"{rc} {out!r} {err!r}")
    rc, out, err = run("run", "--xint", hello)
    check("--xint runs the same", rc == 7 and out == "hello 3\n", f"{rc} {out!r} {err!r}")
    rc, out, err = run("disasm", hello)
    check("disasm lists main with its line", rc == 0 and "main" in out and "print" in out and "line 2" in out, out + err)
    rc, out, err = run("disasm", "--templates")
    check("disasm --templates lists every template with its size",
          rc == 0 and "iadd (" in out and "bytes" in out and "method_entry" in out and "test dword" in out, err)
    loop = os.path.join(tmp, "loop.mini")
    with open(loop, "w") as f:
        f.write("fn main() {\n    var s = 0;\n    var i = 0;\n    while (i < 100000) {\n        s += i;\n"
                "        i += 1;\n    }\n    print(s);\n}\n")
    rc, out, err = run("run", "--print-compilation", "--jit-sync", "--backedge-threshold=10", loop)
    check("a hot interpreted loop moves to compiled code by OSR", rc == 0 and out == "4999950000\n"
          and "[jit] compiled main" in err and "[jit] OSR into main at bci" in err and "(line 5)" in err, out + err)
    rc, out, err = run("run", "--compile-threshold=0", loop)
    check("a zero threshold is a usage error", rc == 2 and "bad count" in err, err)
    rc, out, err = run("disasm", "--jit", hello)
    check("disasm --jit shows compiled code, polls and debug info",
          rc == 0 and "compiled fn main" in out and "poll sites:" in out and "main@" in out and "bci 0:" in out, out + err)
    inl = os.path.join(tmp, "inl.mini")
    with open(inl, "w") as f:
        f.write("fn get(a: int[], i: int): int {\n    return a[i];\n}\n"
                "@inline\nfn twice(a: int[], i: int): int {\n    var x = get(a, i);\n    return x + get(a, i + 1);\n}\n"
                "fn main() {\n    var a = new int[4];\n    print(twice(a, 2));\n    print(twice(a, 3));\n}\n")
    rc, out, err = run("disasm", "--jit", inl)
    check("small and @inline callees are inlined with scope chains in the debug info",
          rc == 0 and "get@" in out and " twice@" in out and "main@" in out
          and any("get@" in l and "twice@" in l and "main@" in l for l in out.splitlines()), out)
    for mode in ("--xcomp", "--xint"):
        rc, out, err = run("run", mode, inl)
        check(f"an error in inlined code has the inlined frames in its trace ({mode})",
              rc == 1 and out == "0\n" and "index 4 out of bounds for length 4" in err
              and "at get (inl.mini:2)\n  at twice (inl.mini:7)\n  at main (inl.mini:12)" in err, out + err)
    bad = os.path.join(tmp, "bad.mini")
    with open(bad, "w") as f:
        f.write("fn main() {\n    var x = 1 + 2.0;\n}\n")
    rc, out, err = run("run", bad)
    check("compile error names file:line:col and exits 2", rc == 2 and err.startswith(bad + ":2:15: error:"), err)
    binary = os.path.join(tmp, "binary.mini")
    with open(binary, "wb") as f:
        f.write(bytes(range(256)))
    rc, out, err = run("run", binary)
    check("binary garbage is a compile error, not a crash", rc == 2 and "error:" in err, err)

finish()
