"""What one sample costs in CPU, all threads included (the sampler thread's, the signal
deliveries, the walk at the poll), against stack depth.

Per-sample CPU = (median process CPU of profiled runs - median of unprofiled runs) /
samples, with profiled and unprofiled runs alternating (`--xcomp`, 5 kHz). Two workloads:
  - `workloads/deep_stable.mini`: DEPTH frames that stay while the leaf spins for tens of
    milliseconds. A sampler that walks only what changed since its last sample (the
    cooperative sampler's stack watermark, runtime/return_barrier.h) costs the same at
    every depth here; the target is per-sample CPU at depth 10, 100 and 500 within 1.5x.
  - `workloads/deep_recursion.mini`: the same depths rebuilt every few tens of
    microseconds, so each sample finds DEPTH new frames. A sampler that walks at the
    interruption must decode them all; the cooperative poll finds them where the frames
    that returned were (a frame-pointer walk against its cache) and decodes only the top.
A second target: cooperative's CPU per sample at most async's, at every workload and
depth.
`measure_sample_cost` runs minivm and returns plain data; `write_sample_cost` writes the
report section, sample_cost.csv and the targets. bench/run.py calls both; run alone
(`python3 bench/sample_cost.py [--quick] [--out DIR]`) it writes only this section.
"""
import os
import statistics

WORKLOADS = [("deep_stable", "bench/workloads/deep_stable.mini"), ("deep_recursion", "bench/workloads/deep_recursion.mini")]
DEPTHS = [10, 100, 500]
# Each column: a name, the sampler whose samples it counts, and its flags. The
# `--native-frames` column is the cooperative sampler with mixed stacks (the thread's C/C++
# frames under its Mini frames, walked with libunwind at its first poll): its cost beside
# Mini-only.
CONFIGS = [("cooperative", "cooperative", []),
           ("cooperative+native-frames", "cooperative", ["--native-frames"]),
           ("async", "async", [])]
SAMPLERS = [name for name, _, _ in CONFIGS]
INTERVAL = "200us"
TARGET_RATIO = 1.5


def sampler_entry(stats, sampler):
    """One sampler's entry in a `--profile-stats` document, or {} if it did not run."""
    return next((s for s in (stats or {}).get("samplers", []) if s["name"] == sampler), {})


def on_thread_us(stats, sampler):
    """What the sampled thread itself spent per sample, in µs, from the profiler's own
    timings: the signal handler's p50 (suspension), plus for cooperative its poll's p50
    shared by the requests that poll served (a poll serves every request stored for the thread)."""
    s = sampler_entry(stats, sampler)
    if not s.get("suspension_ns") or not s.get("samples"):
        return None
    t = s["suspension_ns"]["p50"]
    walks = stats.get("poll_walks") or {}
    if sampler == "cooperative" and walks.get("polls"):
        t += walks["time_ns"]["p50"] * walks["polls"] / s["samples"]
    return t / 1000


def measure_sample_cost(b, quick, log):
    """{(workload, depth, sampler): per-sample CPU in µs or None}, and the runs behind it;
    `on_thread`: the same keys, the sampled thread's own part (on_thread_us), median of runs."""
    runs = 2 if quick else 7
    depths = [10, 500] if quick else DEPTHS
    out = {"runs": runs, "depths": depths, "cost": {}, "on_thread": {}}
    for name, path in WORKLOADS[:1] if quick else WORKLOADS:
        for d in depths:
            spec = f"{path}@DEPTH={d}"
            cpu = {s: [] for s in ["unprofiled"] + SAMPLERS}
            samples = {s: [] for s in SAMPLERS}
            own = {s: [] for s in SAMPLERS}
            for _ in range(runs):
                _, _, _ = b.run(spec, ["--xcomp"])
                cpu["unprofiled"].append(b.last_cpu)
                for s, sampler, extra in CONFIGS:
                    flags = ["--profile", f"--sampler={sampler}", f"--interval={INTERVAL}"] + extra
                    _, stats, _ = b.run(spec, ["--xcomp"] + flags)
                    cpu[s].append(b.last_cpu)
                    n = sampler_entry(stats, sampler).get("samples")
                    if n:
                        samples[s].append(n)
                    t = on_thread_us(stats, sampler)
                    if t is not None:
                        own[s].append(t)
            base = statistics.median(cpu["unprofiled"]) if cpu["unprofiled"] else None
            for s in SAMPLERS:
                if base is None or not cpu[s] or not samples[s]:
                    out["cost"][(name, d, s)] = None
                    continue
                out["cost"][(name, d, s)] = (statistics.median(cpu[s]) - base) / statistics.median(samples[s]) * 1e6
            for s in SAMPLERS:
                out["on_thread"][(name, d, s)] = statistics.median(own[s]) if own[s] else None
            log(f"sample cost {name} depth {d}: " + ", ".join(
                f"{s} {fmt(out['cost'][(name, d, s)])} µs" for s in SAMPLERS))
    return out


def fmt(v):
    return "missing" if v is None else f"{v:.1f}"


TARGET = f"Cooperative CPU per sample flat with stack depth (deep_stable, within {TARGET_RATIO}x)"
TARGET_ASYNC = "Cooperative CPU per sample (all threads) at most async's, at every workload and depth"


def target(cost):
    """The per-sample CPU target on deep_stable: (target, met or None, measured text)."""
    if not cost or not cost.get("cost"):
        return TARGET, None, "missing"
    vals = [cost["cost"].get(("deep_stable", d, "cooperative")) for d in cost["depths"]]
    text = ", ".join(f"depth {d}: {fmt(v)} µs" for d, v in zip(cost["depths"], vals))
    if any(v is None for v in vals):
        return TARGET, None, text
    lo, hi = min(vals), max(vals)
    ratio = hi / lo if lo > 0 else float("inf")
    return TARGET, ratio <= TARGET_RATIO, f"{text} (max/min {ratio:.2f})"


def target_vs_async(cost):
    """Cooperative against async, per sample, on every (workload, depth) measured."""
    if not cost or not cost.get("cost"):
        return TARGET_ASYNC, None, "missing"
    pairs = [(name, d, cost["cost"].get((name, d, "cooperative")), cost["cost"].get((name, d, "async")))
             for name, _ in WORKLOADS for d in cost["depths"] if (name, d, "cooperative") in cost["cost"]]
    text = ", ".join(f"{name} {d}: {fmt(c)} vs {fmt(a)} µs" for name, d, c, a in pairs)
    if not pairs or any(c is None or a is None for _, _, c, a in pairs):
        return TARGET_ASYNC, None, text or "missing"
    return TARGET_ASYNC, all(c <= a for _, _, c, a in pairs), text


def targets(cost):
    return [target(cost), target_vs_async(cost)]


def write_sample_cost(out_dir, cost):
    md = ["## CPU per sample against stack depth\n"]
    if not cost or not cost.get("cost"):
        md.append("Not measured: missing.\n")
        return md
    md.append(f"Per-sample CPU, all threads: (median process CPU of profiled runs - median of unprofiled runs) / "
              f"samples, `--xcomp --interval={INTERVAL}`, {cost['runs']} alternating runs per configuration. "
              "`cooperative+native-frames` is the cooperative sampler with mixed stacks: the thread's C/C++ "
              "frames (walked with LLVM libunwind at its first poll) under its Mini frames. "
              "`deep_stable` keeps its DEPTH frames between samples; `deep_recursion` rebuilds them every few "
              "tens of microseconds at the same addresses (async decodes DEPTH new frames per sample; "
              "cooperative compares them with the frames that returned and decodes only the top). A negative "
              "or tiny value is within the noise of the CPU clock.\n")
    header = ["workload", "depth"] + [f"{s} µs/sample" for s in SAMPLERS]
    rows = [[name, d] + [fmt(cost["cost"].get((name, d, s))) for s in SAMPLERS]
            for name, _ in WORKLOADS for d in cost["depths"] if (name, d, SAMPLERS[0]) in cost["cost"]]
    md.append("| " + " | ".join(header) + " |\n|" + "---|" * len(header) + "\n" +
              "".join("| " + " | ".join(str(c) for c in r) + " |\n" for r in rows))
    on = cost.get("on_thread") or {}
    if on:
        md.append("The part that differs between the samplers, measured on the sampled thread by the profiler itself "
                  "(median of the runs): its signal handler's p50, plus for cooperative its poll's p50 times polls "
                  "over samples, since one poll serves every request waiting for it (not counted: entering and "
                  "leaving the safepoint blob, about 0.1 µs a poll). The rest of the "
                  "figures above (the sampler thread's visit, the kernel's signal delivery) is the same work for "
                  "every sampler, and its run-to-run noise is several µs per sample.\n")
        own_rows = [[name, d] + [fmt(on.get((name, d, s))) for s in SAMPLERS]
                    for name, _ in WORKLOADS for d in cost["depths"] if (name, d, SAMPLERS[0]) in on]
        own_header = ["workload", "depth"] + [f"{s} µs on the thread" for s in SAMPLERS]
        md.append("| " + " | ".join(own_header) + " |\n|" + "---|" * len(own_header) + "\n" +
                  "".join("| " + " | ".join(str(c) for c in r) + " |\n" for r in own_rows))
    for name, met, text in targets(cost):
        verdict = "missing" if met is None else "met" if met else "NOT met"
        md.append(f"Target: {name}: **{verdict}** ({text}).\n")
    with open(os.path.join(out_dir, "sample_cost.csv"), "w") as f:
        f.write(",".join(h.replace(" ", "_").replace("/", "_per_").replace("µs", "us") for h in header) + "\n")
        for r in rows:
            f.write(",".join("" if c == "missing" else str(c) for c in r) + "\n")
    return md


def main():
    """Only this section: `python3 bench/sample_cost.py [--quick] [--out DIR] [--minivm PATH]`,
    writing DIR/sample_cost.md, sample_cost.csv and targets.json."""
    import run  # bench/run.py, which imports this module
    run.run_section("sample_cost", measure_sample_cost, write_sample_cost, targets)


if __name__ == "__main__":
    main()
