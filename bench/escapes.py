"""JEP 518's invariant, measured: the frame a cooperative sample names cannot escape before
the thread's next poll rebuilds it.

A cooperative request records where the signal landed; the thread's next poll finds that
frame on its stack and rebuilds the stack from it. When it cannot, the sample is the poll
site's stack, counted biased with the reason. Three reasons say that the sampled frame
(or, for a frame half built or half torn down, its caller) was not found at the poll:
`frame_escaped` (another method's frame stands where it was), `frame_not_found` and
`caller_not_found` (NOT_FOUND below). Every other biased reason is decided at the
interruption, from where the signal landed (a stub without a frame description, C++ code
on a thread still marked in Mini code, ...), not by the frame moving before the poll.

This runs every terminating workload and example (the bench's own list, bench/run.py's
WORKLOADS, plus any examples/*.mini, examples/lessons/*.mini or bench/workloads/*.mini it
does not name) in every execution mode (--xint, --xcomp, tiered) and both --suspend modes,
cooperative alone at 100 us, in as many runs as each configuration needs to reach its
equal share of the sample target (100,000 in all; 5,000 with --quick, on run.py's quick
workloads). A run ends by itself or, once it has had the time its configuration still
needs, by SIGINT, which writes the statistics and ends it. Counted from each run's
--profile-stats: samples and biased samples by reason. The runs write no events (a .jsonl
of deep_recursion grows by 300 MB a second); a configuration with an escaped or not-found
sample is run again with `--profile-out=....jsonl` until a run shows one again
(REPRODUCE_TRIES at most), and that file is kept under KEEP_DIR, its command in the
report.

`measure_escapes` runs minivm and returns plain data; `write_escapes` writes the report
section and escapes.csv; `target` judges it. bench/run.py calls all three; run alone
(`python3 bench/escapes.py [--quick] [--out DIR]`) it writes escapes.md, escapes.csv and
targets.json with this one target.
"""
import collections
import glob
import json
import math
import os
import shlex
import shutil
import signal
import subprocess
import time

import run  # bench/run.py, which imports this module too: only functions here use it

NOT_FOUND = ("frame_escaped", "frame_not_found", "caller_not_found")
MODES = [("xint", ["--xint"]), ("xcomp", ["--xcomp"]), ("tiered", [])]
SUSPENDS = ["signal", "handshake"]
FLAGS = ["--profile", "--sampler=cooperative", "--interval=100us"]
NON_TERMINATING = {"bench/workloads/forever.mini"}  # runs until stopped (the memory measurement)
REQUIRED = 100_000  # samples the target rests on
KEEP_DIR = "/tmp/minivm-escapes"
KEEP_PER_CONFIG = 3
REPRODUCE_TRIES = 5
TARGET = ("Zero escaped and zero not-found cooperative samples on every workload and example, in every mode "
          "and both --suspend modes, over at least 100,000 samples")


def workloads(quick):
    """(name, spec, flags) to run: run.py's quick list with --quick; otherwise its list
    without the variants of a program (`threads.mini@THREADS=N`: the program once, at its
    own default), plus every terminating program of examples/ (its lessons too) and
    bench/workloads/ that it does not name. Mode flags are dropped: every mode is run."""
    by_name = {w[0]: w for w in run.WORKLOADS}
    chosen = [by_name[n] for n in run.QUICK_WORKLOADS] if quick else [w for w in run.WORKLOADS if "@" not in w[1]]
    out = [(n, spec, [f for f in flags if f not in ("--xint", "--xcomp")]) for n, spec, flags, _ in chosen]
    if not quick:
        named = {w[1] for w in out}
        for folder, pattern in (("examples", "*.mini"), ("examples", "lessons/*.mini"), ("bench/workloads", "*.mini")):
            for path in sorted(glob.glob(os.path.join(run.ROOT, folder, pattern))):
                rel = os.path.relpath(path, run.ROOT)
                if rel not in named and rel not in NON_TERMINATING:
                    out.append((os.path.splitext(os.path.relpath(rel, folder))[0].replace("/", "_"), rel, []))
    return out


def reason_meanings(minivm):
    """{reason: meaning}, as `minivm help reasons` lists them."""
    out = subprocess.run([minivm, "help", "reasons"], capture_output=True, text=True, check=True).stdout
    meanings = dict(line.strip().split(None, 1) for line in out.splitlines() if line.startswith("  "))
    unknown = [r for r in NOT_FOUND if r not in meanings]
    if unknown:
        raise SystemExit(f"bench: `minivm help reasons` has no {', '.join(unknown)}; bench/escapes.py's NOT_FOUND is stale")
    return meanings


def one_run(b, program, flags, seconds, stats_path, stderr_path, events_path=None):
    """One profiled run, ended by SIGINT after `seconds` if it has not ended by then:
    (statistics or None, how it ended, its wall time, stderr when it died)."""
    for p in (stats_path, events_path):
        if p and os.path.exists(p):
            os.remove(p)
    cmd = ([b.minivm, "run"] + flags + [f"--profile-stats={stats_path}"] +
           ([f"--profile-out={events_path}"] if events_path else []) + [program])
    b.runs += 1
    start = time.monotonic()
    with open(stderr_path, "w") as err:
        # SIGINT as a terminal sends it, even when this script runs as a background job.
        p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=err,
                             preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
        try:
            rc, how = p.wait(timeout=seconds), "ended"
        except subprocess.TimeoutExpired:
            p.send_signal(signal.SIGINT)
            try:
                rc, how = p.wait(timeout=120), "stopped"
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
                return None, "hung", time.monotonic() - start, "did not end within 120 s of SIGINT"
    wall = time.monotonic() - start
    if rc not in (0, -signal.SIGINT, 128 + signal.SIGINT):
        with open(stderr_path) as f:
            return None, "died", wall, f"exit status {rc}: {' '.join(cmd)}\n{f.read()[-1500:]}"
    try:
        with open(stats_path) as f:
            stats = json.load(f)
    except (OSError, ValueError):
        stats = None
    return stats, how, wall, None


def cooperative(stats):
    return next((s for s in (stats or {}).get("samplers", []) if s["name"] == "cooperative"), None)


def not_found_in(coop):
    """{reason: count} of a run's escaped and not-found samples."""
    return {r: coop["biased"][r] for r in NOT_FOUND if coop["biased"].get(r)}


def reproduce(b, name, program, flags, seconds, keep):
    """The same run again with its events written, until one has an escaped or not-found
    sample: the kept .jsonl's path, or None."""
    events = os.path.join(b.tmp, "escapes.jsonl")
    for i in range(REPRODUCE_TRIES):
        stats, _, _, _ = one_run(b, program, flags, seconds, os.path.join(b.tmp, "escapes.json"),
                                 os.path.join(b.tmp, "escapes.err"), events)
        coop = cooperative(stats)
        if coop and not_found_in(coop):
            os.makedirs(keep, exist_ok=True)
            kept = os.path.join(keep, f"{name}-again{i}.jsonl")
            shutil.move(events, kept)
            return kept
    return None


def shown(path):
    """A path as the report gives it: relative to the current directory when inside it."""
    rel = os.path.relpath(path)
    return path if rel.startswith("..") else rel


def measure_config(b, name, program, flags, share, limits, keep):
    """Runs one (workload, mode, suspend) until it has `share` cooperative samples, or
    its time or runs run out: (its totals, or None when no run wrote statistics; how the
    runs that died or hung ended)."""
    first, least, most_s, most_runs = limits
    tmp = lambda ext: os.path.join(b.tmp, "escapes." + ext)  # noqa: E731
    t = {"runs": 0, "samples": 0, "interruptions": 0, "seconds": 0.0, "biased": collections.Counter(),
         "stopped": 0, "no_stats": 0, "died": 0, "hung": 0, "unaccounted": 0, "escape_runs": []}
    errors = []
    start = time.monotonic()
    # Until a run has had samples, each run gets twice the time of the one before: on a
    # loaded machine a run can spend its first slice starting (compiling everything under
    # --xcomp), and a configuration with no sample would prove nothing.
    while t["runs"] < most_runs and (not t["samples"] or t["samples"] < share and time.monotonic() - start < most_s):
        rate = t["samples"] / t["seconds"] if t["samples"] else None
        left = most_s - (time.monotonic() - start)
        slice_s = max(least, min(left, 1.3 * (share - t["samples"]) / rate)) if rate else min(most_s, first * 2 ** t["runs"])
        stats, how, wall, error = one_run(b, program, flags, slice_s, tmp("json"), tmp("err"))
        t["runs"] += 1
        t["seconds"] += wall
        t["stopped"] += how == "stopped"
        if error:
            t["died" if how == "died" else "hung"] += 1
            errors.append(error)
        coop = cooperative(stats)
        if coop is None:
            t["no_stats"] += 1
            if t["no_stats"] >= 3 and not t["samples"]:
                break
            continue
        t["samples"] += coop["samples"]
        t["interruptions"] += coop["interruptions"]
        t["biased"].update(coop["biased"])
        t["unaccounted"] += not coop["accounted"]
        found = not_found_in(coop)
        if found:
            kept = (reproduce(b, f"{name}-run{t['runs']}", program, flags, slice_s, keep)
                    if len(t["escape_runs"]) < KEEP_PER_CONFIG else None)
            cmd = ([f"timeout -s INT {slice_s:.2f}"] if how == "stopped" else []) + [shlex.quote(c) for c in (
                [shown(b.minivm), "run"] + flags + ["--profile-out=escaped.jsonl", shown(program)])]
            t["escape_runs"].append({"reasons": found, "jsonl": kept, "seconds": round(wall, 2), "how": how,
                                     "command": " ".join(cmd)})
    if t["no_stats"] == t["runs"]:
        return None, errors
    t["biased"] = dict(t["biased"])
    t["seconds"] = round(t["seconds"], 2)
    return t, errors


def measure_escapes(b, quick, log):
    """Per (workload, mode, suspend): its samples and biased samples by reason, over runs
    until each configuration has an equal share of the target."""
    target = 5000 if quick else REQUIRED
    chosen = workloads(quick)
    configs = [(n, mode, s) for n, _, _ in chosen for mode, _ in MODES for s in SUSPENDS]
    share = math.ceil(target / len(configs))
    # (first slice, shortest slice, seconds and runs at most per configuration): a
    # handshake run on a loaded 2-core machine gets as few as 50 samples a second.
    limits = (0.3, 0.3, 3.0, 6) if quick else (0.5, 0.5, 60.0, 40)
    keep = os.path.join(KEEP_DIR, time.strftime("%Y%m%d-%H%M%S"))
    out = {"quick": quick, "target": target, "share": share, "flags": FLAGS, "not_found": list(NOT_FOUND),
           "meanings": reason_meanings(b.minivm), "workloads": [(n, spec) for n, spec, _ in chosen],
           "modes": [m for m, _ in MODES], "suspends": SUSPENDS, "configs": {}, "errors": {}}
    start = time.monotonic()
    for n, spec, extra in chosen:
        program = b.program(spec)
        for mode, mode_flags in MODES:
            for s in SUSPENDS:
                flags = mode_flags + extra + FLAGS + [f"--suspend={s}"]
                c, errors = measure_config(b, f"{n}-{mode}-{s}", program, flags, share, limits, keep)
                out["configs"][(n, mode, s)] = c
                if errors:
                    out["errors"][(n, mode, s)] = errors
                if c is None:
                    log(f"escapes {n} {mode} {s}: missing (no run wrote statistics)" +
                        (f"; {errors[0][:300]}" if errors else ""))
                    continue
                nf = sum(c["biased"].get(r, 0) for r in NOT_FOUND)
                log(f"escapes {n} {mode} {s}: {c['samples']} samples in {c['runs']} runs, {c['seconds']:.1f} s, "
                    f"{nf} escaped or not found" + (f", biased {c['biased']}" if c["biased"] else ""))
    out["seconds"] = round(time.monotonic() - start, 1)
    return out


# --- the report -------------------------------------------------------------------------

def not_found(c):
    """A configuration's escaped and not-found samples, None when it was not measured."""
    return None if c is None else sum(c["biased"].get(r, 0) for r in NOT_FOUND)


def target(esc):
    """(target, met, measured): met is None when a configuration is missing."""
    if not esc or not esc.get("configs"):
        return TARGET, None, run.MISSING
    configs = esc["configs"]
    missing = [k for k, c in configs.items() if not_found(c) is None]
    total = sum(c["samples"] for c in configs.values() if not_found(c) is not None)
    bad = {k: not_found(c) for k, c in configs.items() if not_found(c)}
    measured = (f"{total:,} samples over {len(configs)} configurations, {sum(bad.values())} escaped or not found"
                + (": " + ", ".join(f"{' '.join(k)} {v}" for k, v in bad.items()) if bad else "")
                + (f"; fewer than {REQUIRED:,} samples" if total < REQUIRED else "")
                + (f"; runs that died or hung in {', '.join(' '.join(k) for k in esc['errors'])}" if esc.get("errors") else "")
                + (f"; {run.MISSING}: " + ", ".join(" ".join(k) for k in missing) if missing else ""))
    return TARGET, None if missing else (total >= REQUIRED and not bad), measured


def write_escapes(out_dir, esc):
    head = "## Cooperative samples whose frame escaped or was not found\n"
    csv_header = ["workload", "mode", "suspend", "runs", "samples", "seconds"] + list(NOT_FOUND) + [
        "escaped_or_not_found", "biased", "runs_died", "runs_hung", "runs_without_stats", "runs_unaccounted"]
    if not esc or not esc.get("configs"):
        run.write_csv(os.path.join(out_dir, "escapes.csv"), csv_header, [])
        return [head, "Not measured: missing.\n"]
    configs, modes, suspends = esc["configs"], esc["modes"], esc["suspends"]
    names = [n for n, _ in esc["workloads"]]
    cols = [(m, s) for m in modes for s in suspends]
    _, met, measured = target(esc)
    md = [head,
          ("The quick workloads" if esc.get("quick") else "Every workload and example that ends by itself") +
          f", in every mode and both `--suspend` modes, with "
          f"`{' '.join(esc['flags'])}`, each configuration in as many runs as it took to reach "
          f"{esc['share']:,} samples (its equal share of {esc['target']:,}; a run is ended by SIGINT once it has had "
          f"the time its configuration still needs). From each run's `--profile-stats`: the cooperative samples, "
          f"and of them the biased ones whose reason says the sampled frame was not found at the poll "
          f"({', '.join(f'`{r}`' for r in NOT_FOUND)}). Cells: samples / escaped + not found. "
          f"{esc.get('seconds', 0):.0f} s in all.\n",
          f"**{run.MISSING if met is None else 'Met' if met else 'Not met'}**: {measured}.\n"]

    def cell(c):
        return run.MISSING if not_found(c) is None else f"{c['samples']:,} / {not_found(c)}"
    rows = [[n] + [cell(configs.get((n, m, s))) for m, s in cols] for n in names]
    sums = []
    for m, s in cols:
        got = [configs.get((n, m, s)) for n in names]
        ok = [c for c in got if not_found(c) is not None]
        sums.append(f"{sum(c['samples'] for c in ok):,} / {sum(not_found(c) for c in ok)}" if ok else run.MISSING)
    rows.append(["**all**"] + sums)
    md.append(run.table(["workload"] + [f"{m} {s}" for m, s in cols], rows))

    short = [f"{' '.join(k)} {c['samples']}" for k, c in configs.items()
             if not_found(c) is not None and c["samples"] < esc["share"]]
    if short:
        md.append(f"Short of their share (time or runs ran out): {', '.join(short)}.\n")
    trouble = collections.Counter()
    for c in configs.values():
        if c is not None:
            for k in ("died", "hung", "unaccounted"):
                trouble[k] += c[k]
    md.append(f"Runs that died: {trouble['died']}; hung: {trouble['hung']}; whose accounting did not add up: "
              f"{trouble['unaccounted']}.\n")
    for k, errors in (esc.get("errors") or {}).items():
        for err in errors[:1]:
            md.append(f"\n{' '.join(k)}: a run ended abnormally:\n```\n{err.strip()}\n```\n")
    for k, c in configs.items():
        for e in (c or {}).get("escape_runs", []):
            md.append(f"- {' '.join(k)}: {', '.join(f'{r} {v}' for r, v in e['reasons'].items())} in a run "
                      f"{'stopped by SIGINT after' if e['how'] == 'stopped' else 'that ended by itself in'} "
                      f"{e['seconds']} s; events of a run that showed it again: "
                      f"`{e['jsonl'] or f'none in {REPRODUCE_TRIES} runs'}`; to reproduce: `{e['command']}`\n")

    md.append("Biased samples by reason (every cooperative sample that is the poll site's stack, not the "
              "interrupted one): where they were seen, and what the reason means (`minivm help reasons`).\n")
    by_reason = collections.defaultdict(collections.Counter)
    for k, c in configs.items():
        if not_found(c) is not None:
            for r, v in c["biased"].items():
                by_reason[r][k] += v
    total = sum(c["samples"] for c in configs.values() if not_found(c) is not None)
    meanings = esc.get("meanings") or {}
    rows = []
    for r, where in sorted(by_reason.items(), key=lambda kv: -sum(kv[1].values())):
        n = sum(where.values())
        rows.append([f"`{r}`" + (" (not found)" if r in NOT_FOUND else ""), f"{n:,}",
                     f"{100 * n / total:.3g}%" if total else run.MISSING,
                     ", ".join(f"{' '.join(k)} {v}" for k, v in where.most_common(4)) + (", ..." if len(where) > 4 else ""),
                     meanings.get(r, run.MISSING)])
    md.append(run.table(["reason", "samples", "of all samples", "where (most)", "meaning"], rows) if rows
              else "No biased samples.\n")
    others = [r for r in sorted(by_reason, key=lambda r: -sum(by_reason[r].values())) if r not in NOT_FOUND]
    if others:
        md.append(f"{', '.join(f'`{r}`' for r in others)}: decided where the signal landed, before any frame could move "
                  "(or a fault of another kind; `bench/README.md`, \"Escaped and not-found frames\")" +
                  ("; the runs use no `--stub-metadata`, so a sample in an intrinsic stub has the stack of the "
                   "next poll" if "pc_in_stub" in others else "") + ".\n")

    csv_rows = []
    for n in names:
        for m, s in cols:
            c = configs.get((n, m, s))
            csv_rows.append([n, m, s] + ([None] * (len(csv_header) - 3) if not_found(c) is None else
                                         [c["runs"], c["samples"], c["seconds"]] + [c["biased"].get(r, 0) for r in NOT_FOUND] +
                                         [not_found(c), sum(c["biased"].values()), c["died"], c["hung"], c["no_stats"],
                                          c["unaccounted"]]))
    run.write_csv(os.path.join(out_dir, "escapes.csv"), csv_header, csv_rows)
    return md


def main():
    """Only this section: `python3 bench/escapes.py [--quick] [--out DIR] [--minivm PATH]`,
    writing DIR/escapes.md, escapes.csv and targets.json."""
    run.run_section("escapes", measure_escapes, write_escapes, lambda esc: [target(esc)])


if __name__ == "__main__":
    main()
