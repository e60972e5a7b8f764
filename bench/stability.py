"""The stability claim (JEP 518's first reason), measured: a sampler that guesses frames
from arbitrary pcs while the VM frees code can read freed memory; one that walks at the
thread's own poll cannot.

The workload is tests/stress/unload_churn.mini: eight threads in hot calls, a recursion
and allocation churn, run with `--stress-unload=1ms` (every compiled function recompiled
and the old code freed at a safepoint every millisecond) and 10 kHz sampling, alternately
`--xcomp` and tiered, with a small heap (`--heap=16m`), so that collections at global
safepoints interleave with the unloader's. Each compared sampler runs beside the oracle (`--sampler=NAME,oracle`,
so both see the same interruptions), in as many runs as it takes to reach the same number
of interruptions, and this counts, per sampler:
  - crashes caught: walks the crash protection ended (`stability.crashes_caught`, the
    `crashed_in_walk` failures);
  - disagreements: interruptions where the oracle has a sample and the sampler's stack
    (or its failure) differs from it, from the `.jsonl` events;
  - freed-code samples: interruptions whose walk or reconstruction used a pc in code that
    had already been freed (`stability.freed_code`, checked against the VM's freed-code
    log by sequence);
  - hangs: runs that did not finish within the timeout (and crashes: runs that died).
`measure_stability` runs minivm and returns plain data; `write_stability` writes the
report section, stability.csv and stability.svg. bench/run.py calls both; run alone
(`python3 bench/stability.py [--quick] [--out DIR]`) it writes only this section.
"""
import collections
import json
import os
import shutil
import subprocess

import charts

PROGRAM = "tests/stress/unload_churn.mini"
COMPARED = ["classical", "async", "cooperative"]
FLAGS = ["--stress-unload=1ms", "--heap=16m", "--profile", "--interval=100us"]
MODES = [["--xcomp"], ["--compile-threshold=20", "--backedge-threshold=200"]]
TIMEOUT_S = 120


def stack_key(stack):
    return tuple((f["function"], f["line"], f["kind"]) for f in stack)


def disagreements(events, sampler):
    """Interruptions the oracle sampled where `sampler`'s stack differs, and of them how
    many were its counted failures (the rest are wrong stacks)."""
    oracle, mine = {}, {}
    for e in events:
        if e["event"] in ("ExecutionSample", "NativeMethodSample"):
            (oracle if e["sampler"] == "oracle" else mine if e["sampler"] == sampler else {})[e["sample"]] = e["stack"]
    differ = [i for i, st in oracle.items() if i not in mine or stack_key(mine[i]) != stack_key(st)]
    return len(differ), sum(1 for i in differ if i not in mine)


def one_run(b, sampler, mode, rounds):
    """One profiled run: its numbers, or how it ended when it did not finish."""
    stats_path, events_path = os.path.join(b.tmp, "stab.json"), os.path.join(b.tmp, "stab.jsonl")
    for p in (stats_path, events_path):
        if os.path.exists(p):
            os.remove(p)
    cmd = ([b.minivm, "run"] + mode + FLAGS + [f"--sampler={sampler},oracle", f"--profile-stats={stats_path}",
                                               f"--profile-out={events_path}", b.program(f"{PROGRAM}@ROUNDS={rounds}")])
    b.runs += 1
    try:
        p = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, timeout=TIMEOUT_S)
    except subprocess.TimeoutExpired:
        return {"hang": 1}
    if p.returncode != 0:
        return {"died": 1, "stderr": p.stderr[-500:]}
    with open(stats_path) as f:
        stats = json.load(f)
    with open(events_path) as f:
        events = [json.loads(line) for line in f if line.strip()]
    mine = next(s for s in stats["samplers"] if s["name"] == sampler)
    differ, failed = disagreements(events, sampler)
    return {"interruptions": mine["interruptions"], "crashes_caught": mine["stability"]["crashes_caught"],
            "freed_code": mine["stability"]["freed_code"], "disagreements": differ, "failed_disagreements": failed,
            "accounted": all(s["accounted"] for s in stats["samplers"]),
            "freed_blobs": stats["code_unloading"]["freed"], "runs": 1}


def measure_stability(b, quick, log):
    """Per compared sampler: totals over runs until it had `target` interruptions."""
    # Holding threads for classical gets ~20x fewer interruptions per second on a busy
    # 2-core machine (the sampler waits for each held thread to be scheduled), so it may
    # need many more runs to reach the target; max_runs bounds the time all the same.
    target, rounds, max_runs = (300, 20000, 20) if quick else (3000, 30000, 250)
    out = {"target": target, "rounds": rounds, "samplers": {}}
    for sampler in COMPARED:
        t = collections.Counter()
        errors = []
        while t["interruptions"] < target and t["runs"] + t["hang"] + t["died"] < max_runs:
            r = one_run(b, sampler, MODES[(t["runs"] + t["hang"] + t["died"]) % len(MODES)], rounds)
            if "stderr" in r:
                errors.append(r.pop("stderr"))
            if r.get("accounted") is False:
                t["unaccounted_runs"] += 1
            r.pop("accounted", None)
            t.update(r)
        out["samplers"][sampler] = {"totals": dict(t), "errors": errors}
        log(f"stability {sampler}: {t['interruptions']} interruptions in {t['runs']} runs, "
            f"{t['crashes_caught']} crashes caught, {t['disagreements']} disagreements, "
            f"{t['freed_code']} freed-code samples, {t['hang']} hangs")
    return out


def write_stability(out_dir, stab):
    if not stab or not stab.get("samplers"):
        charts.bar_chart(os.path.join(out_dir, "stability.svg"), "Stability under --stress-unload", [], [], "count")
        return ["## Stability under code unloading\n", "Not measured: missing.\n"]
    md = ["## Stability under code unloading\n",
          f"`{PROGRAM}` (8 threads, calls, recursion, a fresh array every round) with "
          f"`{' '.join(FLAGS)}`, alternately `--xcomp` and tiered, each sampler beside the oracle until it "
          f"had {stab['target']} interruptions (runs of {TIMEOUT_S} s at most). Crashes caught: walks the crash "
          "protection ended. Disagreements: interruptions the oracle sampled where the sampler's stack, or its "
          "failure, differs (the last column: how many of them were the sampler's counted failures, e.g. "
          "`pc_in_prologue`; the rest are wrong stacks). Freed-code samples: interruptions whose walk or reconstruction used a pc in code "
          "already freed (checked against the VM's freed-code log). Hangs: runs past the timeout; died: runs "
          "that ended abnormally.\n"]
    header = ["sampler", "interruptions", "runs", "blobs freed", "crashes caught", "disagreements",
              "freed-code samples", "hangs", "died", "disagreements that were failures"]
    rows = []
    for s in COMPARED:
        t = stab["samplers"].get(s, {}).get("totals", {})
        rows.append([s, t.get("interruptions", 0), t.get("runs", 0), t.get("freed_blobs", 0), t.get("crashes_caught", 0),
                     t.get("disagreements", 0), t.get("freed_code", 0), t.get("hang", 0), t.get("died", 0),
                     t.get("failed_disagreements", 0)])
    md.append("| " + " | ".join(header) + " |\n|" + "---|" * len(header) + "\n" +
              "".join("| " + " | ".join(str(c) for c in r) + " |\n" for r in rows))
    unaccounted = {s: v["totals"].get("unaccounted_runs", 0) for s, v in stab["samplers"].items()}
    md.append("Every run's accounting adds up: " + ("yes" if not any(unaccounted.values()) else f"no: {unaccounted}") + ".\n")
    for s in COMPARED:
        for err in stab["samplers"].get(s, {}).get("errors", [])[:2]:
            md.append(f"\n{s}: a run died:\n```\n{err.strip()}\n```\n")
    with open(os.path.join(out_dir, "stability.csv"), "w") as f:
        f.write(",".join(h.replace(" ", "_").replace("-", "_") for h in header) + "\n")
        for r in rows:
            f.write(",".join(str(c) for c in r) + "\n")
    charts.bar_chart(os.path.join(out_dir, "stability.svg"), "Stability under --stress-unload (counts per sampler)",
                     COMPARED, [(name, [r[i] for r in rows]) for name, i in
                                (("crashes caught", 4), ("disagreements", 5), ("freed-code samples", 6), ("hangs", 7))],
                     "count")
    return md


def main():
    """Only this section: `python3 bench/stability.py [--quick] [--out DIR] [--minivm PATH]`,
    writing DIR/stability.md, stability.csv and stability.svg."""
    import run  # bench/run.py, which imports this module
    charts.ensure_matplotlib()  # may install it, or run this script again under Debian's python3
    run.run_section("stability", measure_stability, write_stability)


if __name__ == "__main__":
    main()
