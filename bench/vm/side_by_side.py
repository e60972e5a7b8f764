#!/usr/bin/env python3
"""The same programs on different CPUs, side by side: reads the files `run.py --json FILE`
wrote (one per machine) and prints, per program, each target's ratio on each CPU, then
each CPU's verdicts. Usage: side_by_side.py A.json B.json [...]

A ratio is minivm's time over the other's in the same run on the same machine (below
1.00 minivm is faster), so files from machines of different speeds can stand together;
a wall time could not.
"""
import json
import sys

# (column heading, numerator configuration, denominator configuration)
RATIOS = [
    ("--xint / lua5.4", "minivm --xint", "lua5.4"),
    ("--xint / luajit -joff", "minivm --xint", "luajit -joff"),
    ("--xcomp / luajit", "minivm --xcomp", "luajit"),
    ("--xcomp / cc -O2", "minivm --xcomp", "cc -O2"),
]


def cpu_name(cpu):
    """'AMD EPYC f25 m1': the vendor's name for the model and /proc/cpuinfo's family and
    model, which tell core designs apart where the name does not (every EPYC is 'AMD EPYC'
    in a virtual machine)."""
    return f"{cpu['model_name']} f{cpu['family']} m{cpu['model']}"


def table(results):
    """The Markdown lines of the side-by-side table of `results` (parsed --json files)."""
    names = [cpu_name(r["cpu"]) for r in results]
    programs = list(dict.fromkeys(p for r in results for p in r["medians_s"]))
    head = ["program"]
    for title, _, _ in RATIOS:
        head += [f"{title} ({n})" for n in names]
    head += [f"poll cost ({n})" for n in names]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for prog in programs:
        cells = [prog]
        for _, a, b in RATIOS:
            for r in results:
                med = r["medians_s"].get(prog, {})
                cells.append(f"{med[a] / med[b]:.2f}" if a in med and b in med else "-")
        for r in results:
            cost = r.get("poll_cost", {}).get(prog)
            cells.append(f"{cost['median'] * 100:+.1f}%" if cost else "-")
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def main(paths):
    if not paths:
        sys.exit("usage: side_by_side.py A.json B.json [...] (files bench/vm/run.py --json wrote)")
    results = []
    for path in paths:
        try:
            with open(path) as f:
                results.append(json.load(f))
        except (OSError, ValueError) as e:
            sys.exit(f"side_by_side.py: {path}: {e}")
        if "cpu" not in results[-1] or "medians_s" not in results[-1]:
            sys.exit(f"side_by_side.py: {path} is not a file run.py --json wrote")
    for path, r in zip(paths, results):
        cpu = r["cpu"]
        print(f"- {cpu_name(cpu)}: {cpu['vendor']}, {cpu['cpus']} CPUs, {r['runs']} runs, {r['date']} ({path})")
    print()
    print("\n".join(table(results)))
    print()
    for r in results:
        if "startup_s" in r:  # files from before run.py timed start-up have none
            print(f"{cpu_name(r['cpu'])}: start-up " +
                  ", ".join(f"{n} {t * 1000:.1f} ms" for n, t in r["startup_s"].items()))
    print()
    for r in results:
        for target, v in r["targets"].items():
            print(f"{cpu_name(r['cpu'])}: '{target}': " + ("met" if v["met"] else "NOT met: " + v["detail"]))


if __name__ == "__main__":
    main(sys.argv[1:])
