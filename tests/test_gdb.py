#!/usr/bin/env python3
"""gdb unwinds through Mini code (`minivm run --gdb-jit`, jit/gdb_jit.h): `gdb -batch` stops
in runtime::native_spin_ns, called by three nested @noinline Mini functions under main, and
`bt` names every Mini frame in order with its file:line (--xcomp), or the interpreter's
templates (--xint), then the call stub and the C++ frames down to the thread's start.
Also under --stress-unload, where compiled code is freed and its objects withdrawn while
gdb watches. Where perf is installed and may record, `perf record --call-graph dwarf` with
--perf-map walks from native_spin_ns through every Mini frame to the call stub too
(skipped with a message otherwise).

Usage: test_gdb.py MINIVM (the launcher; gdb runs the VM beside it, minivm-vm)
Exits 77 (skipped) where gdb is not installed.
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

from checks import check, finish

MINIVM = os.path.abspath(sys.argv[1])
# gdb debugs the VM itself: `minivm` is the launcher that execs it (vm/cli/launcher).
VM = os.path.join(os.path.dirname(os.path.realpath(MINIVM)), "minivm-vm")

PROGRAM = """\
@noinline
fn inner(n: int): int {
    native_spin_ns(1000);
    return n + 1;
}
@noinline
fn middle(n: int): int {
    var r = inner(n);
    return r * 2;
}
@noinline
fn outer(n: int): int {
    var r = middle(n + 1);
    return r + 3;
}
fn main() {
    var s = 0;
    for i in 0..ROUNDS { s += outer(i) + busy(i); }
    print(s);
}
var ROUNDS: int = 1;
// Mini code between the natives, where a safepoint finds no frame of outer, middle or
// inner on the stack, so their replaced code can be freed (-D BUSY=N under --stress-unload).
@noinline
fn busy(n: int): int {
    var t = 0;
    for j in 0..BUSY { t += j ^ n; }
    return t;
}
var BUSY: int = 0;
"""
# Innermost first: each Mini function and the line of its call.
MINI_FRAMES = [("inner", 3), ("middle", 8), ("outer", 13), ("main", 18)]
# Below the Mini frames: the C++ -> Mini entry, then C++ to the thread's first frame (a
# Mini program's main runs on a thread of its own, runtime::thread_main).
BOTTOM = ["minivm::call_stub", "runtime::thread_main", "start_thread"]


def gdb_bt(program, *flags, before_run=(), after_bt=()):
    """The `#N` lines of gdb's backtrace at the first stop in native_spin_ns (gdb commands
    `before_run` may change which), and gdb's whole output."""
    script = ["set pagination off",
              # Poll traps (SIGSEGV) and profiling signals are the VM's own business.
              "handle SIGSEGV SIGPROF nostop noprint pass",
              "break runtime::native_spin_ns", *before_run, "run", "bt", *after_bt]
    with tempfile.NamedTemporaryFile("w", suffix=".gdb") as commands:
        commands.write("\n".join(script) + "\n")
        commands.flush()
        r = subprocess.run(["gdb", "-nx", "-batch", "-iex", "set debuginfod enabled off", "-x", commands.name,
                            "--args", VM, "run", "--gdb-jit", *flags, program],
                           capture_output=True, text=True, timeout=300)
    frames = [line for line in r.stdout.splitlines() if re.match(r"#\d+ ", line)]
    return frames, r.stdout + r.stderr


def frame_function(line):
    """The function a `#N` line names: `#3  0x... in NAME (...)` or `#0  NAME (...)`."""
    m = re.match(r"#\d+\s+(?:0x[0-9a-f]+ in )?(\S+) \(", line)
    return m.group(1) if m else None


def in_order(functions, wanted):
    """The indices of `wanted` in `functions`, each after the previous, or None."""
    at, found = 0, []
    for w in wanted:
        try:
            at = functions.index(w, at)
        except ValueError:
            return None
        found.append(at)
        at += 1
    return found


def check_common(mode, frames, out):
    functions = [frame_function(f) for f in frames]
    check(f"{mode}: bt starts in runtime::native_spin_ns", functions[:1] == ["runtime::native_spin_ns"], out)
    check(f"{mode}: no unnamed frame", None not in functions and "??" not in functions, out)
    check(f"{mode}: gdb did not stop the walk early", "Backtrace stopped" not in out, out)
    check(f"{mode}: bt reaches the thread's first frame (call stub, thread_main, start_thread)",
          in_order(functions, BOTTOM) is not None, out)
    return functions


def compiled(program):
    frames, out = gdb_bt(program, "--xcomp")
    functions = check_common("--xcomp", frames, out)
    mini = in_order(functions, [f"mini::{name}" for name, _ in MINI_FRAMES] + BOTTOM[:1])
    check("--xcomp: every Mini function, innermost first, then the call stub", mini is not None, out)
    check("--xcomp: the Mini frames are consecutive (nothing lost or invented between them)",
          mini is not None and mini[-1] - mini[0] == len(MINI_FRAMES), out)
    for (name, line), at in zip(MINI_FRAMES, mini or []):
        where = f"{os.path.basename(program)}:{line}"
        check(f"--xcomp: mini::{name} at {where}", frames[at].endswith(f"at {program}:{line}"), frames[at])
    print("\n".join(frames))


def interpreted(program):
    frames, out = gdb_bt(program, "--xint")
    functions = check_common("--xint", frames, out)
    # inner is in the `native` template; middle, outer and main each in a `call`.
    wanted = ["minivm::interpreter::native"] + ["minivm::interpreter::call"] * 3 + BOTTOM[:1]
    check("--xint: the interpreter's templates, one frame per Mini function, then the call stub",
          in_order(functions, wanted) is not None, out)
    print("\n".join(frames))


def unloading(program):
    # Code is recompiled and the old code freed every millisecond: gdb is told of every new
    # object and of every one withdrawn (breakpoint 2 counts the notifications), and the
    # backtrace after many rounds is still exact.
    count_notifications = ["break __jit_debug_register_code", "commands 2", "silent", "continue", "end"]
    frames, out = gdb_bt(program, "--xcomp", "--stress-unload=1ms", "-D", "ROUNDS=400", "-D", "BUSY=20000",
                         before_run=["ignore 1 300", *count_notifications],
                         after_bt=["info breakpoints", "maint info jit"])
    functions = check_common("--stress-unload", frames, out)
    mini = in_order(functions, [f"mini::{name}" for name, _ in MINI_FRAMES] + BOTTOM[:1])
    check("--stress-unload: every Mini function after code was freed and replaced", mini is not None, out)
    hits = re.search(r"__jit_debug_register_code.*\n\s+breakpoint already hit (\d+) time", out)
    live = len(re.findall(r"^0x[0-9a-f]+\s+0x[0-9a-f]+\s+\d+", out, re.M))  # `maint info jit` rows
    removed = (int(hits.group(1)) - live) // 2 if hits else 0  # each one freed: registered, then removed
    check("--stress-unload: freed code's objects were withdrawn from gdb", removed > 0, out)
    print(f"--stress-unload: {live} objects registered at the stop, {removed} withdrawn before it")


def perf_dwarf(program, tmp):
    """perf record --call-graph dwarf with --perf-map, then perf inject --jit: the samples in
    native_spin_ns have every Mini frame below them, in order, then the call stub (perf
    stops there: jit/README.md says why). Skipped, saying why, where perf is absent or
    cannot record."""
    if shutil.which("perf") is None:
        print("perf is not installed: the perf check is skipped")
        return
    data, jit = os.path.join(tmp, "perf.data"), os.path.join(tmp, "perf.jit.data")
    # The dump, the jitted-*.so files and perf's build-id cache all stay in tmp.
    env = dict(os.environ, MINIVM_JITDUMP_DIR=tmp, PERF_BUILDID_DIR=os.path.join(tmp, "buildid"))
    rec = subprocess.run(["perf", "record", "-q", "-k", "1", "-e", "cpu-clock", "--call-graph", "dwarf", "-o", data,
                          MINIVM, "run", "--xcomp", "--perf-map", "-D", "ROUNDS=50000", program],
                         capture_output=True, text=True, timeout=300, env=env)
    if rec.returncode != 0 or not os.path.exists(data):
        print(f"perf cannot record here ({rec.stderr.strip()[-300:]}): the perf check is skipped")
        return
    inj = subprocess.run(["perf", "inject", "--jit", "-i", data, "-o", jit], capture_output=True, text=True,
                         timeout=300, env=env)
    check("perf: inject --jit", inj.returncode == 0, inj.stderr)
    script = subprocess.run(["perf", "script", "-i", jit, "-F", "ip,sym"], capture_output=True, text=True,
                            timeout=300, env=env)
    # One sample per blank-line-separated block, one frame per line: `ADDRESS SYMBOL`.
    stacks = [[line.split()[1] for line in block.strip().splitlines() if len(line.split()) > 1]
              for block in script.stdout.split("\n\n")]
    spinning = [s for s in stacks if "runtime::native_spin_ns" in s]
    wanted = ["runtime::native_spin_ns"] + [f"mini::{name}" for name, _ in MINI_FRAMES] + BOTTOM[:1]
    whole = [s for s in spinning if in_order(s, wanted) is not None]
    check("perf: samples in native_spin_ns", len(spinning) > 0, script.stdout[-2000:] + script.stderr)
    check("perf: the samples in native_spin_ns walk through every Mini frame to the call stub",
          len(spinning) > 0 and len(whole) >= 0.9 * len(spinning), "\n\n".join(" ".join(s) for s in spinning[:3]))
    print(f"perf: {len(whole)} of {len(spinning)} samples in native_spin_ns have every Mini frame and the call stub "
          "below them")
    if whole:
        print("perf: one of them, top first: " + " <- ".join(whole[0]))


def main():
    if shutil.which("gdb") is None:
        print("gdb is not installed: test_gdb.py skipped (apt-get install gdb)")
        sys.exit(77)
    with tempfile.TemporaryDirectory() as tmp:
        program = os.path.join(tmp, "nested.mini")
        with open(program, "w") as f:
            f.write(PROGRAM)
        compiled(program)
        interpreted(program)
        unloading(program)
        perf_dwarf(program, tmp)
    finish()


if __name__ == "__main__":
    main()
