#!/usr/bin/env python3
"""End-to-end checks of `minivm run --native-frames` (mixed stacks, sampler/mixed_stack.h):
a thread in a native shows the C++ it runs above the Mini frame that called the native,
every stack ends in the call stub and the thread's start below its bottom Mini frame, in
cooperative and oracle; on the same interruptions cooperative's mixed stacks equal the
oracle's where both are exact; every format marks the C++ frames with kind `cpp`; without
the flag no stack has one. Prints `N passed, N failed`."""
import json
import os
import sys
import tempfile

from checks import check, events, finish, page_data, run_minivm

MINIVM = sys.argv[1]
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NATIVE = os.path.join(ROOT, "tests", "profiler", "native_beside_java.mini")


def run(*args, timeout=300):
    return run_minivm(MINIVM, "run", *args, timeout=timeout)


def samples(ev, sampler):
    return [e for e in ev if e["event"] in ("ExecutionSample", "NativeMethodSample") and e["sampler"] == sampler]


def names(stack):
    return [f["function"] for f in stack]


def below_mini(stack):
    """The frames below the bottom Mini frame, top first, as (function, kind). An -O0
    build keeps runtime::call_mini's frame between the call stub and thread_main (-O2
    makes its call of the stub a tail call): dropped, so both read the same."""
    mini = [i for i, f in enumerate(stack) if f["kind"] in ("interp", "jit", "inlined")]
    below = [(f["function"], f["kind"]) for f in stack[mini[-1] + 1:]] if mini else []
    return [fk for i, fk in enumerate(below) if not (i == 1 and fk == ("runtime::call_mini", "cpp"))]


with tempfile.TemporaryDirectory() as tmp:
    out = os.path.join(tmp, "p.jsonl")
    # On a loaded machine a run may get few interruptions: up to three runs, until each
    # sampler has the 20 samples the checks below judge.
    for _ in range(3):
        rc, so, se = run("--native-frames", "--sampler=cooperative,oracle", "--stub-metadata", "--interval=500us",
                         f"--profile-out={out}", NATIVE)
        ev = events(out) if rc == 0 else []
        if rc != 0 or min(len(samples(ev, s)) for s in ("cooperative", "oracle")) >= 20:
            break
    check("--native-frames runs", rc == 0, se[-2000:])
    for sampler in ("cooperative", "oracle"):
        ss = samples(ev, sampler)
        check(f"{sampler}: samples", len(ss) >= 20, len(ss))
        # A native sample of spin: C++ (what native_spin_ns runs) over the native frame over spin.
        # main's print is a native too, and rarely sampled in it (its first write allocates).
        native = [e["stack"] for e in ss if e["event"] == "NativeMethodSample"
                  and any(f["kind"] == "native" and f["function"] == "native_spin_ns" for f in e["stack"])]
        shaped = [st for st in native
                  if st[0]["kind"] == "cpp" and "runtime::native_spin_ns" in names(st)
                  and [f["kind"] for f in st].index("native") < names(st).index("spin")
                  and all(f["kind"] == "cpp" for f in st[:[f["kind"] for f in st].index("native")])]
        check(f"{sampler}: a native sample has C++ frames above the native's Mini caller",
              native and len(shaped) == len(native), [st for st in native if st not in shaped][:2])
        # Below the bottom Mini frame (main or spin): the call stub, runtime::thread_main, libc's start.
        bottoms = [below_mini(e["stack"]) for e in ss]
        good = [b for b in bottoms if b[:2] == [("call_stub", "stub"), ("runtime::thread_main", "cpp")]
                and b[-1] == ("clone3", "cpp") and ("start_thread", "cpp") in b]
        check(f"{sampler}: every stack has the call stub and thread_main below its bottom Mini frame",
              bottoms and len(good) == len(bottoms), [b for b in bottoms if b not in good][:2])
        execution = [e["stack"] for e in ss if e["event"] == "ExecutionSample"]
        check(f"{sampler}: main's samples are mixed too", any(names(st)[:2] == ["busy", "main"] for st in execution),
              [names(st) for st in execution[:2]])
    # Cooperative equals the oracle, frame for frame, on the interruptions both sampled
    # exactly (a biased cooperative sample is counted, and may differ).
    key = lambda st: [(f["function"], f["line"], f["kind"]) for f in st]
    coop = {e["sample"]: key(e["stack"]) for e in samples(ev, "cooperative") if not e["biased"]}
    oracle = {e["sample"]: key(e["stack"]) for e in samples(ev, "oracle")}
    both = [i for i in coop if i in oracle]
    same = sum(1 for i in both if coop[i] == oracle[i])
    check("cooperative's mixed stacks equal the oracle's", len(both) >= 20 and same == len(both),
          [(coop[i][:4], oracle[i][:4]) for i in both if coop[i] != oracle[i]][:2])
    fails = [e for e in ev if e["event"] == "FailedSample" and e["reason"].startswith("native_walk")]
    check("walks that disagree are rare", len(fails) <= 0.05 * max(1, len(both)), len(fails))
    check("the text report's accounting adds up", "all accounted for" in se and "NOT" not in se, se[-2000:])

    # A signal in the VM's own C/C++ on a thread still marked in Mini code (nanotime never
    # leaves it): the oracle's walk at the interruption has those C/C++ frames above the
    # Mini frame, the poll has not. Cooperative fails such an interruption
    # (native_frames_gone) and never names a stack without them. Up to five runs, until
    # 20 interruptions were both sampled exactly and 20 so failed.
    in_java = os.path.join(ROOT, "tests", "profiler", "builtins_in_java.mini")
    coop, oracle, gone = {}, {}, set()  # by (run, interruption id)
    for attempt in range(5):
        rc, so, se = run("--xint", "--native-frames", "--sampler=cooperative,oracle", "--interval=200us",
                         f"--profile-out={out}", in_java)
        ev = events(out) if rc == 0 else []
        coop.update({(attempt, e["sample"]): key(e["stack"]) for e in samples(ev, "cooperative") if not e["biased"]})
        oracle.update({(attempt, e["sample"]): key(e["stack"]) for e in samples(ev, "oracle")})
        gone |= {(attempt, e["sample"]) for e in ev if e["event"] == "FailedSample" and e["sampler"] == "cooperative"
                 and e["reason"] == "native_frames_gone"}
        both = [i for i in coop if i in oracle]
        if rc != 0 or (len(both) >= 20 and len(gone) >= 20):
            break
    check("builtins in Java, --native-frames: runs", rc == 0, se[-2000:])
    check("builtins in Java: cooperative's mixed stacks equal the oracle's on the interruptions both sampled",
          len(both) >= 20 and all(coop[i] == oracle[i] for i in both),
          (len(both), [(coop[i][:4], oracle[i][:4]) for i in both if coop[i] != oracle[i]][:2]))
    gone_sampled = [i for i in gone if i in oracle]
    check("builtins in Java: an interruption in the VM's C/C++ is native_frames_gone for cooperative, "
          "where the oracle has C/C++ frames on top",
          len(gone) >= 20 and all(oracle[i][0][2] == "cpp" for i in gone_sampled),
          (len(gone), [oracle[i][:3] for i in gone_sampled if oracle[i][0][2] != "cpp"][:2]))

    # A frameless intrinsic stub has no unwind info: the oracle's libunwind walk starts at
    # its caller, stepped to with the stub's frame table, and still agrees.
    # Up to three runs, until 5 samples land in the stub (a loaded machine gives few).
    for _ in range(3):
        rc, so, se = run("--native-frames", "--sampler=oracle", "--interval=500us", f"--profile-out={out}",
                         os.path.join(ROOT, "examples", "arraycopy_heavy.mini"))
        ev = events(out) if rc == 0 else []
        in_stub = [e["stack"] for e in samples(ev, "oracle") if e["stack"] and e["stack"][0]["kind"] == "stub"]
        if rc != 0 or len(in_stub) >= 5:
            break
    check("oracle: a sample in a stub is mixed below it",
          in_stub and all(below_mini(st)[:2] == [("call_stub", "stub"), ("runtime::thread_main", "cpp")]
                          for st in in_stub), in_stub[:1])
    fails = [e for e in ev if e["event"] == "FailedSample" and e["reason"].startswith("native_walk")]
    check("oracle: no walk disagrees in stubs", len(fails) <= 0.02 * max(1, len(in_stub)), len(fails))

    # Every format marks the C++ frames.
    for ext in ("collapsed", "json", "html", "txt"):
        path = os.path.join(tmp, "p." + ext)
        rc, _, se = run("--native-frames", "--interval=500us", f"--profile-out={path}", NATIVE)
        text = open(path).read() if rc == 0 else ""
        check(f".{ext}: runs", rc == 0, se[-1000:])
        check(f".{ext}: names runtime::native_spin_ns as a cpp frame", "runtime::native_spin_ns (cpp)" in text,
              text[:500])
        if ext == "collapsed":
            lines = [ln for ln in text.splitlines() if "spin" in ln]
            check(".collapsed: root first, the thread's start below spin",
                  lines and all(ln.startswith("clone3_(cpp);") or ln.startswith("clone3 (cpp);") for ln in lines),
                  lines[:2])
        if ext == "json":
            doc = json.loads(text)
            check(".json: speedscope frames name cpp frames without a file",
                  any(f["name"] == "runtime::thread_main (cpp)" and "file" not in f for f in doc["shared"]["frames"]),
                  doc["shared"]["frames"][:5])
        if ext == "html":
            check(".html: the flame page's data knows the cpp kind",
                  any(k.get("name") == "cpp" for k in page_data(text, "profile-data").get("kinds", [])))

    # Without the flag, nothing changes: no cpp frame anywhere.
    rc, _, se = run("--sampler=cooperative,oracle", "--interval=500us", f"--profile-out={out}", NATIVE)
    ev = events(out) if rc == 0 else []
    check("without --native-frames no stack has a cpp frame",
          rc == 0 and ev and not any(f["kind"] == "cpp" for e in ev for f in e.get("stack", [])), se[-1000:])

finish()
