#!/usr/bin/env python3
"""bench/vm's programs and its report's plumbing: every program has its Mini and Lua
files; those with a C port print, compiled by `cc -O2` as run.py compiles them, what
minivm prints compiled (--xcomp) and tiered, so a checksum in the bench cannot be wrong
in one language alone; run.py names the CPU from /proc/cpuinfo's fields; side_by_side.py
puts two CPUs' ratios in one table and refuses a file run.py did not write.
Usage: test_bench_vm.py MINIVM. Prints `N passed, N failed`."""
import json
import os
import shutil
import subprocess
import sys
import tempfile

from checks import check, finish

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BENCH_VM = os.path.join(ROOT, "bench", "vm")
sys.path.insert(0, BENCH_VM)
import run  # noqa: E402
import side_by_side  # noqa: E402

minivm = os.path.abspath(sys.argv[1])

for prog in run.PROGRAMS:
    check(f"{prog} has its .mini and .lua", all(os.path.exists(os.path.join(BENCH_VM, prog + ext))
                                                 for ext in (".mini", ".lua")))

with tempfile.TemporaryDirectory() as tmp:
    if shutil.which("cc"):
        exes = run.compile_c_ports("cc", run.PROGRAMS, tmp)
        check("the float programs have C ports", {"mandel", "spectral_norm", "nbody"} <= set(exes), sorted(exes))
        for prog, exe in sorted(exes.items()):
            want = subprocess.run([exe], capture_output=True, text=True).stdout
            for mode in (["--xcomp"], []):
                p = subprocess.run([minivm, "run", *mode, os.path.join(BENCH_VM, prog + ".mini")],
                                   capture_output=True, text=True, timeout=600)
                check(f"{prog} {' '.join(mode) or 'tiered'} prints what its C port prints ({want.strip()})",
                      p.returncode == 0 and p.stdout == want and want.strip() != "", f"{p.stdout!r} {p.stderr[-500:]}")
    else:
        print("note: no cc, the C ports were not compared")

    cpuinfo = os.path.join(tmp, "cpuinfo")
    with open(cpuinfo, "w") as f:
        for k in range(2):
            f.write(f"processor\t: {k}\nvendor_id\t: AuthenticAMD\ncpu family\t: 25\nmodel\t\t: 17\n"
                    "model name\t: AMD EPYC 9R14 96-Core Processor\nflags\t\t: fpu\n\n")
    cpu = run.cpu_model(cpuinfo)
    check("the CPU from /proc/cpuinfo", cpu == {"vendor": "AuthenticAMD", "model_name": "AMD EPYC 9R14 96-Core Processor",
                                                "family": "25", "model": "17", "cpus": 2}, cpu)
    check("the CPU's line", run.cpu_line(cpu) == "AMD EPYC 9R14 96-Core Processor (AuthenticAMD, family 25, model 17), "
          "2 CPUs", run.cpu_line(cpu))
    check("no /proc/cpuinfo is an unknown CPU, not a crash",
          run.cpu_model(os.path.join(tmp, "none"))["vendor"] == "unknown")

    def result(vendor, name, xint, lj):
        return {"cpu": {"vendor": vendor, "model_name": name, "family": "6", "model": "85", "cpus": 2}, "runs": 5,
                "date": "2026-11-27", "medians_s": {"fib": {"minivm --xint": xint, "luajit -joff": lj}},
                "poll_cost": {"fib": {"median": 0.015, "q1": 0.01, "q3": 0.02}},
                "targets": {"t": {"met": True, "detail": ""}}}
    lines = side_by_side.table([result("GenuineIntel", "Xeon", 1.0, 2.0), result("AuthenticAMD", "EPYC", 3.0, 2.0)])
    fib = [line for line in lines if line.startswith("| fib |")]
    check("side by side: one row per program, each CPU's ratio in its own column",
          len(fib) == 1 and "| 0.50 | 1.50 |" in fib[0] and "+1.5%" in fib[0] and "Xeon f6 m85" in lines[0], lines)
    bad = os.path.join(tmp, "bad.json")
    with open(bad, "w") as f:
        json.dump({"medians": {}}, f)
    p = subprocess.run([sys.executable, os.path.join(BENCH_VM, "side_by_side.py"), bad], capture_output=True, text=True)
    check("side_by_side.py refuses a file run.py did not write", p.returncode != 0 and "not a file run.py" in p.stderr,
          p.stderr)

finish()
