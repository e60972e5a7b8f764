#!/usr/bin/env python3
"""Command-line behaviour of `minivm`: usage errors, missing files, --help, --version,
disasm, option forms and values, where profiles and output go and what a lost write does
to the exit status. Each check runs the real binary; prints `N passed, N failed`."""
import json
import os
import re
import subprocess
import sys
import tempfile
import time

from checks import check, finish

MINIVM = sys.argv[1]
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def run(*args, stdin=None, stdout=subprocess.PIPE, cwd=None):
    p = subprocess.run([MINIVM, *args], stdout=stdout, stderr=subprocess.PIPE, text=True, timeout=60, stdin=stdin,
                       cwd=cwd)
    return p.returncode, p.stdout or "", p.stderr


def events_of(path):
    return [json.loads(l) for l in open(path)] if os.path.exists(path) else []


def usage_error(rc, err, *needles):
    """A usage error: exit 2, one line saying what is wrong, one saying where help is."""
    return rc == 2 and err.count("\n") == 2 and "Try 'minivm" in err and all(n in err for n in needles)


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
    # The launcher starts the VM beside the file it is (a symbolic link to it works), and
    # says so when the VM is missing.
    vm = os.path.join(os.path.dirname(os.path.realpath(MINIVM)), "minivm-vm")
    check("the VM is beside the launcher", os.access(vm, os.X_OK), vm)
    link = os.path.join(tmp, "minivm-link")
    os.symlink(os.path.realpath(MINIVM), link)
    p = subprocess.run([link, "run", hello], capture_output=True, text=True, timeout=60)
    check("a symbolic link to the launcher runs the VM", p.returncode == 7 and p.stdout == "hello 3\n", p.stderr)
    alone = os.path.join(tmp, "minivm")
    with open(os.path.realpath(MINIVM), "rb") as src, open(alone, "wb") as dst:
        dst.write(src.read())
    os.chmod(alone, 0o755)
    p = subprocess.run([alone, "--version"], capture_output=True, text=True, timeout=60)
    check("a launcher with no VM beside it says which file is missing, exit 127",
          p.returncode == 127 and p.stderr == f"minivm: cannot start the VM {os.path.realpath(tmp)}/minivm-vm: no such file or directory\n",
          p.stderr)
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
    check("disasm --jit shows compiled code at offsets under its source lines, and its polls",
          rc == 0 and "fn main: " in out and "poll sites: +0x" in out and "         +0x0000  " in out
          and "(prologue)" in out and "<- POLL (return)" in out and "debug info" not in out, out + err)
    check("disasm --jit shows no labels and no raw addresses",
          not re.search(r"^L\d+:|\bL\d+\b|\b\d{10,}\b", out, re.M), out)
    rc, out, err = run("disasm", "--jit", "--pc-table", hello)
    check("disasm --jit --pc-table adds the debug info", rc == 0 and "main@0 (line" in out, out + err)
    rc, out, err = run("disasm", "--pc-table", hello)
    check("--pc-table without --jit is a usage error", rc == 2 and "--pc-table" in err, err)
    rc, out, err = run("disasm", "--strip-mining=0", hello)
    check("--strip-mining without --jit is a usage error", rc == 2 and "go with --jit" in err, err)
    setter = os.path.join(ROOT, "examples", "counted_loop_then_setter.mini")
    for extra, latch in (([], True), (["--strip-mining=0"], False)):
        rc, out, err = run("disasm", "--jit", *extra, setter)
        work = out[out.find("fn work: "):out.find("\n\n", out.find("fn work: "))]
        sites = re.search(r"poll sites:(.*)", work).group(1) if "poll sites:" in work else ""
        offsets = re.findall(r"\+(0x[0-9a-f]+) \(([a-z -]+)\)", sites)
        marked = {int(m.group(1), 16): m.group(2) for m in re.finditer(r"\+(0x[0-9a-f]{4})  .*<- .*POLL \(([a-z -]+)\)", work)}
        check(f"disasm --jit {' '.join(extra)}: each poll site of work is marked at its instruction with its kind",
              rc == 0 and offsets and all(marked.get(int(o, 16)) == k for o, k in offsets)
              and len(marked) == len(offsets), work)
        check(f"disasm --jit {' '.join(extra)}: work's counted loop polls at its latch, or is marked as having no poll",
              ("(strip-mined latch)" in sites) == latch and ("counted loop header: NO POLL in this loop" in work) != latch
              and "    19 |         acc = acc * 31 + (i ^ (acc >> 7));" in work, work)
    inl = os.path.join(tmp, "inl.mini")
    with open(inl, "w") as f:
        f.write("fn get(a: int[], i: int): int {\n    return a[i];\n}\n"
                "@inline\nfn twice(a: int[], i: int): int {\n    var x = get(a, i);\n    return x + get(a, i + 1);\n}\n"
                "fn main() {\n    var a = new int[4];\n    print(twice(a, 2));\n    print(twice(a, 3));\n}\n")
    rc, out, err = run("disasm", "--jit", inl)
    check("small and @inline callees are inlined: their source lines name the chain they are inlined into",
          rc == 0 and "     2 |     return a[i];   (get, inlined into twice:6 < main:11)" in out, out)
    rc, out, err = run("disasm", "--jit", "--pc-table", inl)
    check("... and the debug info has their scope chains",
          rc == 0 and any("get@" in l and "twice@" in l and "main@" in l for l in out.splitlines()), out)
    # Class hierarchy analysis: a call every receiver's class answers with the same method
    # is inlined like a static call; one with two possible targets stays a dispatch.
    cha = os.path.join(tmp, "cha.mini")
    with open(cha, "w") as f:
        f.write("interface Shape {\n    fn area(): float;\n}\n"
                "abstract class Base implements Shape {\n    var w: float;\n    fn scale(): float { return w * 2.0; }\n}\n"
                "class Sq extends Base {\n    fn init(w: float) { this.w = w; }\n    fn area(): float { return w * w; }\n}\n"
                "class Circ implements Shape {\n    var r: float;\n    fn init(r: float) { this.r = r; }\n"
                "    fn area(): float { return 3.0 * r * r; }\n}\n"
                "fn total(shapes: Shape[], b: Base): float {\n    var t = 0.0;\n    for i in 0..len(shapes) {\n"
                "        t += shapes[i].area() + b.scale();\n    }\n    return t;\n}\n"
                "fn main() {\n    var s: Shape[] = new Shape[2];\n    s[0] = new Sq(1.0);\n    s[1] = new Circ(2.0);\n"
                "    print(total(s, new Sq(3.0)));\n    var n: Base = null;\n    print(total(s, n));\n}\n")
    rc, out, err = run("disasm", "--jit", cha)
    check("a virtual call with one possible target is inlined, an interface call with two is not",
          rc == 0 and "(Base.scale, inlined into total:20)" in out and "(Sq.area, inlined" not in out
          and "(Circ.area, inlined" not in out, out + err)
    for mode in ("--xcomp", "--xint"):
        rc, out, err = run("run", mode, cha)
        check(f"an inlined virtual call on null is the contract's error at the call ({mode})",
              rc == 1 and out == "25.0\n" and "null reference: method scale of Base\n  at total (cha.mini:20)\n"
              "  at main (cha.mini:30)" in err, out + err)

    def fn_lines(program, fn):
        """Each source line's instructions in fn's compiled body (before its stubs)."""
        rc, out, err = run("disasm", "--jit", os.path.join(ROOT, "bench", "vm", program))
        section = ("\n" + out).split(f"\nfn {fn}:")[-1].split("\nfn ")[0]
        lines, current = {}, None
        for line in section.splitlines():
            head = line.split("|")[0].strip()
            if "<- slow path" in line:
                break
            if "|" in line and head.isdigit():
                current = int(head)
            elif current is not None:
                lines.setdefault(current, []).append(line.split("<-")[0].strip())
        return rc, lines

    # A while loop's body takes the products its condition just computed from registers
    # (jit/loop_products.cpp): mandel's line 13 multiplies nothing, its condition keeps both.
    rc, blocks = fn_lines("mandel.mini", "main")
    body, cond = " ".join(blocks.get(13, [])), " ".join(blocks.get(12, []))
    check("disasm --jit: mandel's loop body reuses its condition's products (no mulsd on line 13)",
          rc == 0 and "subsd" in body and "mulsd" not in body and cond.count("mulsd") == 2, "\n".join(blocks.get(13, [])))
    # `s += a(i, j) * v[j]`: v[j] is mulsd's memory operand and the sum goes straight into
    # s's register (the front end's `e; faddl s; store s`, jit/operand_fusion.cpp); the
    # inlined a(i, j) computes i + j and ij + 1 with lea.
    rc, lines = fn_lines("spectral_norm.mini", "mul_av")
    loop = lines.get(13, [])
    check("disasm --jit: spectral_norm's inner loop multiplies by v[j] in memory and adds into s's register, "
          "with no copy of s",
          rc == 0 and any(re.search(r"mulsd xmm\d+, qword ptr \[\w+\+\w+\*8\+16\]", l) for l in loop)
          and any(re.fullmatch(r"\+0x\w+\s+addsd xmm(8|9|1[0-5]), xmm[2-7]", l) for l in loop)
          and not any("movapd" in l for l in loop), "\n".join(loop))
    check("disasm --jit: spectral_norm's inlined a(i, j) adds with lea",
          sum("lea " in l for l in lines.get(6, []) + lines.get(7, [])) == 2,
          "\n".join(lines.get(6, []) + lines.get(7, [])))
    # `vx[j] += dx * mim`: the element's bounds are checked once, at the read.
    rc, lines = fn_lines("nbody.mini", "advance")
    check("disasm --jit: nbody's vx[j] += dx * mim checks vx[j]'s bounds once",
          rc == 0 and sum(l.split()[1:2] == ["jae"] for l in lines.get(29, [])) == 1
          and any("movsd qword ptr" in l for l in lines.get(29, [])), "\n".join(lines.get(29, [])))
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

    # Option forms: `--opt value` as well as `--opt=value`, per-command --help.
    prof = os.path.join(tmp, "space.txt")
    rc, out, err = run("run", "--xint", "--heap", "64m", "--interval", "1ms", "--profile-out", prof, hello)
    check("--opt value works like --opt=value", rc == 7 and out == "hello 3\n" and os.path.exists(prof)
          and "minivm profile:" in open(prof).read(), err)
    rc, out, err = run("run", "--help")
    check("run --help lists run's options and exits 0", rc == 0 and "--profile-out" in out and "--suspend" in out
          and "--xint" in out and "--templates" not in out, out + err)
    rc, out, err = run("disasm", "--help")
    check("disasm --help lists disasm's options", rc == 0 and "--templates" in out and "--profile" not in out, out + err)
    rc, out, err = run("help", "run")
    check("help run is run --help", rc == 0 and out == run("run", "--help")[1], out + err)

    # An option whose value is optional takes the next argument only when a program follows.
    for args in (["--stress-unload"], ["--stress-unload", "1ms"], ["--stress-unload=1ms"]):
        rc, out, err = run("run", "--xcomp", *args, hello)
        check(f"{' '.join(args)} before the program", rc == 7 and out == "hello 3\n", f"{rc} {out!r} {err!r}")
    rc, out, err = run("run", "--xcomp", hello, "--stress-unload")
    check("--stress-unload after the program", rc == 7 and out == "hello 3\n", f"{rc} {out!r} {err!r}")

    # --define replaces a global's literal initial value before main runs.
    defs = os.path.join(tmp, "defines.mini")
    with open(defs, "w") as f:
        f.write("var N: int = 3;\nvar F: float = 1.5;\nvar B: bool = false;\nfn main() { print(N, F, B); }\n")
    rc, out, err = run("run", defs)
    check("a program's globals start at their initialisers", rc == 0 and out == "3 1.5 false\n", out + err)
    rc, out, err = run("run", "-D", "N=1_000", "--define", "F=-2.25", "--define=B=true", defs)
    check("--define / -D replace them", rc == 0 and out == "1000 -2.25 true\n", out + err)
    for arg, needle in (("N=x", "global 'N' is int, and 'x' is not an int literal"),
                        ("F=true", "global 'F' is float"), ("B=1", "global 'B' is bool"),
                        ("Q=1", "has no global 'Q' (its globals: N, F, B)")):
        rc, out, err = run("run", "-D", arg, defs)
        check(f"--define {arg} is refused, naming the global, exit 2", rc == 2 and needle in err and out == "", err)
    rc, out, err = run("run", "-D", "N", defs)
    check("--define without '=' is a usage error", usage_error(rc, err, "--define", "NAME=VALUE"), err)
    # Exactly the literals a source may write (LANGUAGE.md): hex, '_' between digits, exponents.
    for args, expected in ((["N=0x10"], "16 1.5 false"), (["N=0xFF_FF"], "65535 1.5 false"),
                           (["N=-0x10"], "-16 1.5 false"), (["N=-9223372036854775808"], "-9223372036854775808 1.5 false"),
                           (["F=2.5e3"], "3 2500.0 false"), (["F=1_000.25"], "3 1000.25 false"),
                           (["F=-2.5e-1"], "3 -0.25 false"), (["N=1__0"], "10 1.5 false")):
        rc, out, err = run("run", *[a for d in args for a in ("-D", d)], defs)
        check(f"--define {' '.join(args)} takes the Mini literal", rc == 0 and out == expected + "\n", out + err)
    for arg, needle in (("N=0x", "at least one digit after '0x'"), ("N=_1", "is not an int literal"),
                        ("N=1_", "'_' in a number must be between digits"), ("N=9223372036854775808", "does not fit"),
                        ("N=1.5", "is not an int literal"), ("N= 5", "is not an int literal"),
                        ("N=5 // x", "is not an int literal"), ("N=+5", "is not an int literal"),
                        ("N=0x1p3", "is not an int literal"), ("F=2", "(write 2.0)"), ("F=inf", "is not a float literal"),
                        ("F=1e999", "out of range"), ("F=.5", "is not a float literal"), ("B=-true", "not a bool literal")):
        rc, out, err = run("run", "-D", arg, defs)
        check(f"--define {arg} is refused, saying why, exit 2", rc == 2 and needle in err and out == "", err)

    # A huge value is quoted shortened in its error line, wherever it is echoed.
    digits = "7" * 100_000
    for args, needle in ((["-D", "N=" + digits], "--define"), (["-D", "B=" + digits], "--define"),
                         ([f"--heap={digits}"], "--heap"), ([f"--interval={digits}s"], "--interval"),
                         ([f"--stack={digits}x"], "--stack"), ([f"--sampler={digits}"], "--sampler"),
                         ([f"--{digits}"], "unknown option")):
        rc, out, err = run("run", *args, defs)
        check(f"{args[-1][:12]}... (100,000 characters): refused in a short line naming {needle}",
              rc == 2 and needle in err and len(err) < 1000 and "characters)" in err, err[:1000])
    for name, text in (("literal", f"fn main() {{ print({digits}); }}\n"),
                       ("float literal", f"fn main() {{ print(1.{digits}e99999); }}\n"),
                       ("name", f"fn main() {{ print(x{digits}); }}\n")):
        long_source = os.path.join(tmp, "long_token.mini")
        with open(long_source, "w") as f:
            f.write(text)
        rc, out, err = run("run", long_source)
        check(f"a compile error about a 100,000-character {name} quotes it shortened",
              rc == 2 and err.startswith(long_source + ":1:") and len(err) < 600 and "characters)" in err, err[:600])
    rc, out, err = run("run", os.path.join(tmp, "x" * 100_000 + ".mini"))
    check("a 100,000-character program path is quoted shortened", rc == 2 and len(err) < 600, err[:600])

    # `--` ends the options: what follows is the program, even if it starts with '-'.
    rc, out, err = run("run", "--xint", "--", hello)
    check("run --xint -- PROGRAM runs the program", rc == 7 and out == "hello 3\n", f"{rc} {out!r} {err!r}")
    rc, out, err = run("run", hello, "--")
    check("run PROGRAM -- runs the program", rc == 7 and out == "hello 3\n", f"{rc} {out!r} {err!r}")
    dashed = os.path.join(tmp, "-dashed.mini")
    with open(dashed, "w") as f:
        f.write("fn main() { print(5); }\n")
    rc, out, err = run("run", "--", "-dashed.mini", cwd=tmp)
    check("run -- -dashed.mini runs a program whose name starts with '-'", rc == 0 and out == "5\n", out + err)
    rc, out, err = run("run", "--", hello, "--xint")
    check("after --, an option is an operand: a second program is refused",
          usage_error(rc, err, "takes one program", "--xint"), err)
    rc, out, err = run("disasm", "--", hello)
    check("disasm -- PROGRAM lists it", rc == 0 and "main" in out, out + err)

    # main's result becomes the exit status modulo 256, and a note says so when it differs.
    ret = os.path.join(tmp, "ret.mini")
    with open(ret, "w") as f:
        f.write("var R: int = 0;\nfn main(): int { return R; }\n")
    for value, status in (("256", 0), ("-1", 255), ("4294967296", 0), ("300", 44)):
        rc, out, err = run("run", "-D", f"R={value}", ret)
        check(f"main returning {value}: exit {status}, with a note on stderr",
              rc == status and f"main returned {value}; the exit status is that modulo 256: {status}" in err, err)
    rc, out, err = run("run", "-D", "R=255", ret)
    check("main returning 255: exit 255, no note", rc == 255 and err == "", err)

    # Bad values name the option and what it accepts; conflicts are refused.
    rc, out, err = run("run", "--suspend=bogus", hello)
    check("a bad --suspend names the value and the accepted ones",
          usage_error(rc, err, "'bogus'", "--suspend", "signal or handshake"), err)
    rc, out, err = run("run", "--debug-info", "some", hello)
    check("a bad --debug-info names the accepted ones", usage_error(rc, err, "'some'", "all or safepoints"), err)
    rc, out, err = run("run", "--xint", "--xcomp", hello)
    check("--xint --xcomp is refused", usage_error(rc, err, "--xint", "--xcomp") and out == "", err)
    rc, out, err = run("run", "--profile-out=", hello)
    check("an empty --opt= is refused, not filled with the next argument", usage_error(rc, err, "--profile-out"), err)

    # Sizes, counts and durations: negative and overflowing values are refused at parsing.
    for args, needle in ((["--heap=-1"], "cannot be negative"), (["--heap", "-1"], "cannot be negative"),
                         (["--stack=-1"], "cannot be negative"), (["--heap=99999999999999999999"], "too large"),
                         (["--heap=20000000t"], "the most is 1t"), (["--heap=17179869184g"], "the most is 1t"),
                         (["--stack=2g"], "the most is 1g"), (["--compile-threshold=-3"], "cannot be negative"),
                         (["--backedge-threshold=4294967296"], "the most is"),
                         (["--interval=99999999999999999999999s"], "the most is 10s"),
                         (["--interval=-1ms"], "cannot be negative"), (["--strip-mining=-1"], "cannot be negative"),
                         (["--interval-jitter=1"], "below 1 (100%)"), (["--interval-jitter=150%"], "below 1"),
                         (["--interval-jitter=-0.5"], "not a fraction"), (["--interval-jitter=lots"], "not a fraction"),
                         (["--heap=1.5g"], "whole number of bytes"), (["--heap=3x"], "whole number of bytes"),
                         (["--heap=2e"], "the most is 1t"), (["--profile-max-size=1k"], "the least is 4k")):
        rc, out, err = run("run", *args, hello)
        check(f"{' '.join(args)} is a usage error ({needle})", usage_error(rc, err, needle, args[0].split("=")[0])
              and out == "", err)

    # A size's unit as CLI11 reads it: k to e, with b or ib, either case, a space before it.
    for size in ("64m", "64M", "64mb", "64MiB", "64 mb", "1g", "1073741824"):
        rc, out, err = run("run", f"--heap={size}", hello)
        check(f"--heap={size} is a size", rc == 7 and out == "hello 3\n", err)

    # Profiling options imply --profile.
    rc, out, err = run("run", "--sampler=all", hello)
    check("--sampler without --profile profiles", rc == 7 and "minivm profile:" in err and "oracle" in err, err)

    # Where the profile goes: by extension (.folded too), by --format, or stdout with -o -.
    loop_ok = os.path.join(tmp, "loop0.mini")
    with open(loop_ok, "w") as f:
        f.write("fn work(): int {\n    var s = 0;\n    for i in 0..200000000 {\n"
                "        s += i & 7;\n    }\n    return s;\n}\n"
                "fn main(): int {\n    print(work());\n    return 0;\n}\n")
    folded = os.path.join(tmp, "p.folded")
    rc, out, err = run("run", "--xcomp", "--interval=500us", "-o", folded, loop_ok)
    lines = open(folded).read().splitlines() if os.path.exists(folded) else []
    check(".folded is written as folded stacks", rc == 0 and lines and all(l.rsplit(" ", 1)[1].isdigit()
                                                                          and ";" in l for l in lines), err)
    odd = os.path.join(tmp, "profile.out")
    rc, out, err = run("run", "--xcomp", "--format=json", "-o", odd, loop_ok)
    check("--format picks the writer whatever the file is called",
          rc == 0 and json.load(open(odd)).get("exporter") == "minivm", err)
    # A profile on stdout has the pipe to itself: the program's own output goes to stderr.
    rc, out, err = run("run", "--xcomp", "--interval=500us", "-o", "-", "--format", "collapsed", loop_ok)
    outl = out.splitlines()
    check("-o - --format=collapsed: only folded stacks on stdout, the program's output on stderr",
          rc == 0 and outl and all(re.fullmatch(r"\S.*;.* \d+", l) for l in outl)  # "print (native)": a space
          and err.splitlines()[0] == "700000000" and "minivm profile:" in err, out + err)
    rc, out, err = run("run", "--xcomp", "-o", "-", loop_ok)
    check("-o -: the text report on stdout instead of stderr, the program's output on stderr",
          rc == 0 and out.startswith("minivm profile:") and "700000000" not in out
          and "minivm profile:" not in err and "700000000" in err, out + err)
    # -o - --format=jsonl is the .jsonl file's stream, event by event: each interruption's
    # events with its id (here cooperative: a sample and its latency), not the aggregated
    # profile's one line per distinct stack.
    stats = os.path.join(tmp, "stdout_stats.json")
    rc, out, err = run("run", "--xcomp", "--interval=500us", "-o", "-", "--format=jsonl", f"--profile-stats={stats}",
                       loop_ok)
    events = [json.loads(l) for l in out.splitlines()]
    st = json.load(open(stats))["samplers"][0] if os.path.exists(stats) else {}
    # A sample that lands in the final print is a NativeMethodSample: a sample too, taken
    # from the anchor, with no SafepointLatency (it waited for no poll).
    samples = [e for e in events if e["event"] == "ExecutionSample"]
    natives = [e for e in events if e["event"] == "NativeMethodSample"]
    latencies = [e for e in events if e["event"] == "SafepointLatency"]
    every = samples + natives
    check("-o - --format=jsonl streams one event per line, as the file: every sample with its id and time",
          rc == 0 and "700000000" in err and samples and len({e["sample"] for e in every}) == len(every)
          and all("time_ns" in e for e in every)
          and sum(e.get("count", 1) for e in every) == st.get("samples"), (out[-2000:], err, st))
    check("-o - --format=jsonl: each execution sample's SafepointLatency, as in the file",
          {e["sample"] for e in latencies} == {e["sample"] for e in samples}, out[-2000:])
    rc, out, err = run("run", "-o", os.path.join(tmp, "p.txt"), "--profile-stats=-", hello)
    check("--profile-stats=-: only the statistics on stdout, the program's output on stderr",
          rc == 7 and json.loads(out)["samplers"] and "hello 3" in err, out + err)

    # async-profiler's options, with its names and meanings.
    two = os.path.join(tmp, "two_threads.mini")
    with open(two, "w") as f:
        f.write("fn hot(n: int): int {\n    var s = 0;\n    for i in 0..n { s += i & 7; }\n    return s;\n}\n"
                "fn worker(n: int) {\n    print(hot(n));\n}\n"
                "fn main() {\n    var t = spawn worker(60000000);\n    print(hot(60000000));\n    join(t);\n}\n")

    def folded(*flags, program=two):
        path = os.path.join(tmp, "ap.folded")
        if os.path.exists(path):
            os.remove(path)
        rc, out, err = run("run", *flags, "-o", path, program)
        lines = open(path).read().splitlines() if rc == 0 and os.path.exists(path) else []
        return rc, [(l.rsplit(" ", 1)[0].split(";"), int(l.rsplit(" ", 1)[1])) for l in lines], err

    def stats_of(*flags, program=two):
        path = os.path.join(tmp, "ap.json")
        rc, out, err = run("run", *flags, f"--profile-stats={path}", program)
        return json.load(open(path)) if rc in (0, 7) else {}  # hello returns 7

    check("-i/--interval takes a bare number of nanoseconds, as async-profiler's",
          stats_of("-i", "250000", program=hello).get("interval_ns") == 250000 and
          stats_of("--interval=300000ns", program=hello).get("interval_ns") == 300000)
    rc, out, err = run("run", "--interval=5000", hello)
    check("a bare --interval under 10us is refused like any other", usage_error(rc, err, "--interval", "the least is 10us"), err)
    rc, stacks, err = folded("--xcomp", "-j", "1")
    check("-j is --stack-depth", rc == 0 and stacks and all(s[0][0] == "[truncated]" and len(s[0]) == 2
                                                            for s in stacks if s[0][-1] == "hot"), stacks)
    rc, stacks, err = folded("--xcomp", "-t")
    check("-t: each thread's stacks under a root frame naming it",
          rc == 0 and {s[0][0] for s in stacks} == {"[main]", "[thread_1]"}
          and all(s[0][1] == ("main" if s[0][0] == "[main]" else "worker") for s in stacks if len(s[0]) > 1), stacks)
    rc, stacks, err = folded("--xcomp", "-I", "work*")
    rc2, every, err2 = folded("--xcomp")
    check("-I keeps only the stacks with a matching frame",
          rc == 0 and stacks and all("worker" in s[0] for s in stacks) and any("worker" not in s[0] for s in every),
          (stacks, every))
    rc, stacks, err = folded("--xcomp", "-X", "*ork*", "-X", "nothing")
    check("-X leaves out the stacks with a matching frame", rc == 0 and stacks and
          all("worker" not in s[0] for s in stacks), stacks)
    rc, stacks, err = folded("--xint", "-a")
    rc2, jit, err2 = folded("--xcomp", "-a")
    # A sample that lands in the print is in a native frame, which has no suffix.
    check("-a: frames end in their type, _[0] interpreted, _[j] compiled",
          rc == 0 and stacks and all(f.endswith(("_[0]", " (native)")) for s in stacks for f in s[0])
          and any(f.endswith("_[0]") for s in stacks for f in s[0])
          and jit and all(f.endswith(("_[j]", "_[i]", " (native)")) for s in jit for f in s[0])
          and any(f.endswith("_[j]") for s in jit for f in s[0]), (stacks, jit))
    st = os.path.join(tmp, "total.json")
    rc, stacks, err = folded("--xcomp", "--total", "-i", "500us", f"--profile-stats={st}")
    samples = json.load(open(st))["samplers"][0]["samples"] if rc == 0 else -1
    check("--total: folded counts are time, each sample the interval",
          rc == 0 and stacks and all(n % 500000 == 0 for _, n in stacks)
          and sum(n for _, n in stacks) == 500000 * samples, (stacks, samples))
    # -d: sampling stops after T, the program runs on (its wall time is the whole run). A
    # signal sent before T may reach a thread that was off its core a little later.
    # The program is two's with 3x the work: two's own run can end within 0.3 s on a fast
    # core (0.27 s on a Zen 5), which would be no sign that sampling stopped before it.
    jl = os.path.join(tmp, "d.jsonl")
    long_two = os.path.join(tmp, "two_threads_long.mini")
    with open(long_two, "w") as f:
        f.write(open(two).read().replace("60000000", "180000000"))
    started = time.monotonic()
    d_stats = stats_of("--xint", "-d", "30ms", "-o", jl, program=long_two)
    took = time.monotonic() - started
    times = [e["time_ns"] for e in events_of(jl) if e["event"] == "ExecutionSample"]
    check("-d: sampling stops after T, the program runs to its end",
          d_stats.get("duration_ns") == 30_000_000 and times and max(times) - min(times) < 100_000_000
          and took > 0.3, (d_stats.get("duration_ns"), took, len(times)))
    page = os.path.join(tmp, "ap.html")
    rc, out, err = run("run", "--xcomp", "--title", "Sample <CPU> profile", "--reverse", "-t", "-o", page, two)
    html = open(page).read() if rc == 0 else ""
    data = json.loads(re.search(r'id="profile-data">(.*?)</script>', html, re.S).group(1)) if html else {}
    check("--title names the flame graph page, --reverse opens it reversed",
          "<title>Sample &lt;CPU&gt; profile</title>" in html and data.get("title") == "Sample <CPU> profile"
          and data.get("reverse") is True, html[:300])
    check("-t in the flame graph: a root frame per thread",
          data and sorted(data["names"][c["f"]] for c in data["samplers"][0]["root"]["c"]) == ["[main]", "[thread_1]"],
          data.get("names"))
    rc, out, err = run("run", "--xcomp", "--minwidth", "100", "-t", "-o", page, two)
    data = json.loads(re.search(r'id="profile-data">(.*?)</script>', open(page).read(), re.S).group(1)) if rc == 0 else {}
    check("--minwidth: frames under that share of the samples are left out (each thread has part of them)",
          data and "c" not in data["samplers"][0]["root"], data.get("samplers"))
    rc, out, err = run("run", "--minwidth", "101", hello)
    check("--minwidth over 100 is refused", usage_error(rc, err, "--minwidth", "percentage"), err)
    # %p and %t in output names; %n numbers each write (dumps, then the end).
    rc, out, err = run("run", "--xint", "--profile-dump-every=20ms", "-o", os.path.join(tmp, "p-%p-%t-%n.folded"), two)
    named = sorted(n for n in os.listdir(tmp) if re.fullmatch(r"p-\d+-\d{8}-\d{6}-\d+\.folded", n))
    numbers = sorted(int(n.rsplit("-", 1)[1].split(".")[0]) for n in named)
    check("%p, %t and %n in an output name: one file per write, numbered from 0",
          rc == 0 and len(numbers) >= 2 and numbers == list(range(len(numbers)))
          and len({n.rsplit("-", 1)[0] for n in named}) == 1, (named, err[-500:]))
    capped = os.path.join(tmp, "capped.jsonl")
    rc, out, err = run("run", "--xcomp", "-i", "100us", "--profile-max-size=4k", "-o", capped, loop_ok)
    text = open(capped).read() if rc == 0 else ""
    check("--profile-max-size: the .jsonl stops at a whole line within the size, the rest counted on stderr",
          0 < len(text) <= 4096 and text.endswith("\n") and all(json.loads(l) for l in text.splitlines())
          and re.search(r"stopped at --profile-max-size \(\d+ bytes written\): \d+ later events not written", err),
          (len(text), err[-500:]))
    rc, out, err = run("run", "--help")
    groups = [g for g in ("Profiling (any of these implies --profile):",
                          "Profiling, folded stacks (.collapsed) and flame graph (.html) only:",
                          "Profiling, flame graph (.html) only:", "Profiling, .jsonl only:") if g in out]
    check("run --help groups async-profiler's options by the outputs they apply to, as its docs do",
          len(groups) == 4 and out.index(groups[1]) < out.index("--total") < out.index(groups[2])
          < out.index("--minwidth") < out.index(groups[3]) < out.index("--profile-max-size"), out[-3000:])
    rc, out, err = run("run", "-t", hello)
    check("async-profiler's options imply --profile like the others", rc == 7 and "minivm profile:" in err, err)

    # Output paths and formats are checked before the program runs.
    for path, needle in ((os.path.join(tmp, "p.xyz"), "unknown extension '.xyz'"),
                         (os.path.join(tmp, "p"), "no extension"),
                         (os.path.join(tmp, "missing", "p.txt"), "no such directory"),
                         (tmp, "no extension")):
        rc, out, err = run("run", "--profile-out", path, hello)
        check(f"--profile-out {os.path.basename(path)}: refused before running ({needle})",
              usage_error(rc, err, needle) and out == "", out + err)
    rc, out, err = run("run", "--profile-stats", os.path.join(tmp, "missing", "s.json"), hello)
    check("--profile-stats in a missing directory: refused before running",
          usage_error(rc, err, "no such directory") and out == "", out + err)
    rc, out, err = run("run", "--format=txt", hello)
    check("--format without --profile-out is refused", usage_error(rc, err, "--format", "--profile-out"), err)

    # Outputs that would destroy the program or each other are refused before the run, by
    # the files' identity: the same name, a second link, a symbolic link, ./ and ../.
    program_text = open(hello).read()
    link = os.path.join(tmp, "hello_link.mini")
    os.symlink(hello, link)
    hard = os.path.join(tmp, "hello_hard.mini")
    os.link(hello, hard)
    dotted = os.path.join(tmp, ".", "..", os.path.basename(tmp), "hello.mini")
    for args, needle in ((["-o", hello, "--format=txt"], "--profile-out"), (["--profile-stats", hello], "--profile-stats"),
                         (["-o", link, "--format=txt"], "--profile-out"), (["-o", hard, "--format=json"], "--profile-out"),
                         (["-o", dotted, "--format=txt"], "--profile-out")):
        rc, out, err = run("run", *args, hello)
        check(f"{' '.join(args)}: the program itself is refused as an output",
              usage_error(rc, err, needle, "is the program being run") and out == ""
              and open(hello).read() == program_text, err)
    same = os.path.join(tmp, "same.json")
    os.mkdir(os.path.join(tmp, "sub"))
    for first, second in ((same, same), (same, os.path.join(tmp, "sub", "..", "same.json"))):
        rc, out, err = run("run", "-o", first, "--profile-stats", second, hello)
        check("-o and --profile-stats naming one file (not yet there) is refused",
              usage_error(rc, err, "--profile-out", "--profile-stats", "are the same file") and out == ""
              and not os.path.exists(same), err)
    open(same, "w").close()
    os.symlink(same, os.path.join(tmp, "same_link.json"))
    rc, out, err = run("run", "-o", same, "--profile-stats", os.path.join(tmp, "same_link.json"), hello)
    check("-o FILE and --profile-stats LINK-TO-FILE is refused", usage_error(rc, err, "are the same file"), err)
    rc, out, err = run("run", "-o", "-", "--format=json", "--profile-stats=-", hello)
    check("-o - and --profile-stats=- (two documents on stdout) is refused",
          usage_error(rc, err, "--profile-out -", "--profile-stats -", "standard output") and out == "", out + err)
    redirected = os.path.join(tmp, "redirected.txt")
    with open(redirected, "w") as stdout_file:
        rc, out, err = run("run", "-o", redirected, hello, stdout=stdout_file)
    check("-o FILE while stdout goes to FILE is refused (it would overwrite the program's output)",
          usage_error(rc, err, "--profile-out", "where standard output goes"), err)
    rc, out, err = run("run", "-o", "/dev/null", "--format=txt", "--profile-stats=/dev/null", hello)
    check("/dev/null for both outputs is fine: writing it twice loses nothing", rc == 7, err)

    # A profile or output that could not be written makes the exit status non-zero.
    with open("/dev/full", "w") as full:
        rc, out, err = run("run", "--xcomp", "-o", "/dev/full", "--format=txt", loop_ok)
        check("a profile that cannot be written: reported, exit 1", rc == 1 and "/dev/full" in err
              and "No space left" in err, err)
        rc, out, err = run("run", "--xcomp", "--profile-stats=/dev/full", loop_ok)
        check("statistics that cannot be written: exit 1", rc == 1 and "No space left" in err, err)
        rc, out, err = run("run", "--xcomp", loop_ok, stdout=full)
        check("a write error on stdout: reported with its reason, exit 1",
              rc == 1 and "error writing standard output: No space left on device" in err, err)
        chatty = os.path.join(tmp, "chatty.mini")
        with open(chatty, "w") as f:  # more than stdio's buffer: the first write fails in print
            f.write("fn main() { for i in 0..3000 { print(i, i, i); } }\n")
        rc, out, err = run("run", chatty, stdout=full)
        check("a write error in the middle of the output: reported with its reason",
              rc == 1 and "error writing standard output: No space left on device" in err, err)
        rc, out, err = run("run", "--xcomp", "-o", "-", "--format=collapsed", loop_ok, stdout=full)
        check("a profile on a full stdout: exit 1", rc == 1 and "standard output" in err, err)
        rc, out, err = run("disasm", hello, stdout=full)
        check("disasm on a full stdout: exit 1, with the reason",
              rc == 1 and "error writing standard output: No space left on device" in err, err)
        rc, out, err = run("--help", stdout=full)
        check("--help on a full stdout: exit 1", rc == 1, err)

    # Sources that are not programs never abort.
    rc, out, err = run("run", "/dev/zero")
    check("/dev/zero is refused by the source size limit", rc == 2 and "larger than 16 MiB" in err, err)
    big = os.path.join(tmp, "big.mini")
    with open(big, "wb") as f:
        f.write(b"\xff\x00" * (9 << 20))
    rc, out, err = run("disasm", big)
    check("a huge binary file is refused by the source size limit", rc == 2 and "larger than 16 MiB" in err
          and err.count("\n") == 1, err)

finish()
