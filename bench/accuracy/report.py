"""The accuracy report: run.py's measurements (plain data) into report.md, accuracy.json,
runs.csv, actionability.csv and the plots. Every number the report states is computed here
from the measurements; nothing is typed in."""
import csv
import html
import json
import os

import metrics

SAMPLERS = ["oracle", "cooperative", "safepoint", "classical", "async"]
COMPARED = SAMPLERS[1:]
# The report's stated distance for Divining's expected profile: within this TVD of the
# oracle, the approximation is good enough to judge a profiler by.
DIVINING_BOUND = 0.10


def pct(x, digits=1):
    return "–" if x is None else f"{100 * x:.{digits}f}%"


def num(x, digits=3):
    return "–" if x is None else f"{x:.{digits}f}"


def table(header, rows):
    out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    out += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(out) + "\n"


def spread(stat):
    return "–" if not stat else f"{num(stat['mean'])} [max {num(stat['max'])}]"


def reasons(split, limit=4):
    items = sorted(((k, v) for k, v in split.items() if v > 0), key=lambda kv: -kv[1])
    return ", ".join(f"{k} {pct(v)}" for k, v in items[:limit]) or "none"


def write_aliasing(data):
    rows = []
    for label, per in data.items():
        for s, xs in per.items():
            if xs:
                rows.append([label, s, len(xs), pct(min(xs)), pct(sum(xs) / len(xs)), pct(max(xs)),
                             pct(max(xs) - min(xs))])
    text = ("`first` and `second` each take half of every millisecond, by the clock. A sampler that\n"
            "interrupts every 1 ms exactly sees the same phase each time, so the share it gives `first`\n"
            "depends on the phase the run started in; one whose intervals are drawn at random sees every\n"
            "phase. Below, the share of each run's samples with `first` on the stack, over the runs.\n\n")
    text += table(["sampling", "sampler", "runs", "min", "mean", "max", "spread"], rows)
    fixed, jittered = data.get("fixed 1 ms", {}).get("oracle", []), data.get("1 ms ± 50%", {}).get("oracle", [])
    if fixed and jittered:
        text += (f"\nThe oracle's spread over the runs: {pct(max(fixed) - min(fixed))} with a fixed interval, "
                 f"{pct(max(jittered) - min(jittered))} with jitter. ")
        text += ("Fixed-period sampling aliases here; random intervals do not.\n"
                 if max(fixed) - min(fixed) > 2 * (max(jittered) - min(jittered)) else
                 "On this machine fixed-period sampling did not alias measurably more than random intervals.\n")
    return text


def top_methods(bench, k=5):
    o = bench["summary"]["oracle"]
    return sorted(o["methods"], key=lambda m: (-o["methods"][m]["mean"], m))[:k] if o else []


def write_stability(benchmarks):
    text = ("Per benchmark and sampler, over the runs: how many different methods the runs name hottest\n"
            "(the oracle's own count first: a benchmark whose true hottest method changes from run to run\n"
            "cannot be named the same by any profiler), in how many runs the sampler's hottest is the\n"
            "oracle's of the same run (top-1), the mean share of the oracle's top 5 in the sampler's top 5\n"
            "(top-5), and the TVD of its method and line self-time profiles to the oracle's, mean and max\n"
            "over the runs; `bound`: the oracle's own sampling error (the 95th percentile of the TVD of a\n"
            "bootstrap resample of its profile to itself, the largest over the runs).\n\n")
    rows = []
    for name, b in benchmarks.items():
        s = b["summary"]
        o = s["oracle"]
        if not o:
            continue
        rows.append([name, "oracle", o["runs"], o["distinct_hottest"], "–", "–", "–", "–",
                     f"{num(o['bound_method'])} / {num(o['bound_line'])}"])
        for sampler in COMPARED:
            m = s.get(sampler)
            if not m:
                continue
            rows.append(["", sampler, m["runs"], m["distinct_hottest"], f"{m['top1_runs']}/{m['runs']}",
                         pct(m["topk"]["mean"] if m["topk"] else None, 0), spread(m["tvd_method"]),
                         spread(m["tvd_line"]), ""])
    text += table(["benchmark", "sampler", "runs", "hottest named", "top-1", "top-5", "TVD methods", "TVD lines",
                   "bound (methods / lines)"], rows)
    text += "\n#### Each benchmark's top methods, share of self time over the runs: mean [min, max]\n\n"
    for name, b in benchmarks.items():
        methods = top_methods(b)
        if not methods:
            continue
        rows = []
        for sampler in SAMPLERS:
            m = b["summary"].get(sampler)
            if not m:
                continue
            cells = []
            for method in methods:
                st = m["methods"].get(method)
                cells.append("0" if not st else f"{pct(st['mean'], 0)} [{pct(st['min'], 0)}, {pct(st['max'], 0)}]")
            named = ", ".join(f"`{h}` ×{n}" for h, n in sorted(m["hottest"].items(), key=lambda kv: -kv[1]))
            rows.append([sampler, *cells, named])
        text += f"**{name}** ([page](pages/{name}.html), ![{name}](plots/{name}.svg))\n\n"
        text += table(["sampler", *[f"`{m}`" for m in methods], "hottest in the runs"], rows) + "\n"
    return text


def write_split(benchmarks):
    text = ("Of the oracle's samples, the share each sampler ended differently (another method on top),\n"
            "by the reason it counted: a failure, a sample it flagged as biased, or nothing\n"
            "(`unflagged`). A profile's TVD to the oracle is at most the sum of these shares, so where\n"
            "`unflagged` is 0 the counted reasons explain the whole distance. Mean over each benchmark's runs.\n\n")
    rows = []
    worst = {}
    for name, b in benchmarks.items():
        for sampler in COMPARED:
            m = b["summary"].get(sampler)
            if not m:
                continue
            split = m["split_method"]
            rows.append([name, sampler, num(m["tvd_method"]["mean"] if m["tvd_method"] else None),
                         pct(sum(split.values())), pct(split.get("unflagged", 0.0), 2), reasons(split)])
            worst[sampler] = max(worst.get(sampler, 0.0), split.get("unflagged", 0.0))
    text += table(["benchmark", "sampler", "TVD methods", "ended differently", "unflagged", "by reason (largest)"],
                  rows)
    return text, worst


def write_actionability(rows):
    if not rows:
        return "No line was slowed.\n", {}
    text = ("Each row slows one line (the oracle's hottest line of one of its top methods) by as much time\n"
            "again as it takes: `--slowdown=LINE=N` with N its measured time (share x run time) over the\n"
            "passes the VM counted in a probe run. `added`: the time asked for (passes x N, from the VM's\n"
            "count), and beside it what the harness measured (slowed minus unslowed run time, paired runs).\n"
            "`base`: the line's share of the oracle's samples unslowed; `expected`: its share in Divining's\n"
            "expected profile (the unslowed profile plus the added time, all on the line); then the share of\n"
            "samples each sampler moved onto the line (slowed mean minus unslowed mean); `TVD expected`: the\n"
            f"distance of the expected line profile to what the oracle saw (stated bound {DIVINING_BOUND}),\n"
            "and beside it the oracle's own run-to-run distance (the mean TVD between two unslowed runs'\n"
            "line profiles): no expected profile built from other runs can be nearer than that.\n\n")
    out = []
    for r in rows:
        out.append([r["benchmark"], f"`{r['line']}`", f"{r['ns_per_pass']} ns x {r['passes']}",
                    f"{r['added_ms']:.0f} ms ({r['measured_added_ms']:.0f}) of {r['base_ms']:.0f}",
                    pct(r["base_share"]), pct(r["expected_share"]),
                    *[pct(r["moved"].get(s)) for s in SAMPLERS],
                    f"{num(r['divining_tvd'])} (runs {num(r.get('oracle_floor'))})"])
    text += table(["benchmark", "slowed line", "per pass x passes", "added (measured) of run", "base", "expected",
                   *[f"{s} moved" for s in SAMPLERS], "TVD expected (oracle run to run)"], out)
    far = [r for r in rows if r["divining_tvd"] is not None and r["divining_tvd"] > DIVINING_BOUND]
    if far:
        text += "\nWhere the expected profile is further than the bound, the lines that differ most (expected / oracle):\n\n"
        for r in far:
            diffs = "; ".join(f"`{k}` {pct(e)} / {pct(o)}" for k, e, o in r["divining_diff"])
            why = []
            if r.get("oracle_floor") is not None and r["oracle_floor"] >= DIVINING_BOUND:
                why.append(f"the oracle's unslowed runs differ from each other by {num(r['oracle_floor'])}")
            if r["added_ms"] and abs(r["measured_added_ms"] / r["added_ms"] - 1) > 0.25:
                why.append(f"the slowdown added {r['measured_added_ms']:.0f} ms by the harness's clock, "
                           f"{r['added_ms']:.0f} asked")
            text += f"- {r['benchmark']} `{r['line']}`: {diffs}" + (f" ({'; '.join(why)})" if why else "") + "\n"
    ratio = {}
    for s in COMPARED:
        xs = [r["moved"][s] / r["moved"]["oracle"] for r in rows
              if r["moved"].get(s) is not None and r["moved"].get("oracle") and r["moved"]["oracle"] > 0.01]
        ratio[s] = (min(xs), sum(xs) / len(xs), max(xs)) if xs else None
    text += "\nMoved by each sampler per share the oracle moved (1.0: actionable as the truth): " + "; ".join(
        f"{s} {num(v[1], 2)} [{num(v[0], 2)}, {num(v[2], 2)}]" for s, v in ratio.items() if v) + ".\n"
    return text, ratio


def write_jfr(jfr):
    if not jfr:
        return ""
    text = "\n## 4. JFR on the JVM, before and after JEP 518\n\n"
    text += jfr.get("note", "") + "\n\n"
    rows = []
    for name, per in jfr.get("benchmarks", {}).items():
        for jdk, r in per.items():
            if r.get("error"):
                rows.append([name, jdk, 0, "–", "failed: " + r["error"][:80].replace("|", "/"), "–", "–"])
                continue
            named = ", ".join(f"`{h}` ×{n}" for h, n in sorted(r["hottest"].items(), key=lambda kv: -kv[1])[:4])
            win = r["winner_share"]
            rows.append([name, jdk, r["runs"], len(r["hottest"]), named,
                         f"{pct(win['min'], 0)}–{pct(win['max'], 0)}", pct(r.get("rate"), 0)])
    text += table(["benchmark", "JDK", "runs", "hottest named", "hottest methods (runs)",
                   "winner's share (min–max)", "rate achieved"], rows)
    return text


def verdicts(benchmarks, worst_unflagged, actionability):
    lines = []
    runs = same = within = 0
    for b in benchmarks.values():
        for r in b["runs"]:
            if "cooperative" not in r or "oracle" not in r or not r["oracle"]["samples"]:
                continue
            runs += 1
            same += bool(r["cooperative"]["top1"])
            bound = r["oracle"]["bound_method"]
            within += r["cooperative"]["tvd_method"] is not None and r["cooperative"]["tvd_method"] <= bound
    ok = runs and same == runs
    lines.append(f"- Cooperative names the oracle's hottest method in every run: **{'met' if ok else 'not met'}** "
                 f"({same} of {runs} runs).")
    ok = runs and within == runs
    lines.append(f"- Cooperative's method TVD to the oracle within the oracle's sampling error (bootstrap 95%): "
                 f"**{'met' if ok else 'not met'}** ({within} of {runs} runs).")
    for s in COMPARED:
        w = worst_unflagged.get(s)
        lines.append(f"- {s}: counted failures and biased samples explain its distance "
                     f"(unflagged share at most 0.5% on every benchmark): **{'met' if w is not None and w <= 0.005 else 'not met'}** "
                     f"(largest unflagged share {pct(w, 2)}).")
    far = [r for r in actionability if r["divining_tvd"] is not None and r["divining_tvd"] > DIVINING_BOUND]
    lines.append(f"- Divining's expected profile within TVD {DIVINING_BOUND} of the oracle: "
                 f"**{'met' if actionability and not far else 'not met'}** ({len(actionability) - len(far)} of "
                 f"{len(actionability)} slowed lines; the others are listed under Actionability).")
    return "\n".join(lines) + "\n"


PALETTE = ["#1b9e77", "#d95f02", "#7570b3", "#e7298a", "#66a61e", "#e6ab02", "#a6761d", "#1f78b4", "#b2df8a",
           "#fb9a99", "#cab2d6", "#ffff99"]


def write_page(path, name, bench, plot_svg):
    """One self-contained teaching page for a benchmark: for each sampler, the method each run
    named hottest, run by run, beside the oracle's for the same runs (a cell per run, coloured
    by method; hover for its share), then the top methods' shares over the runs."""
    runs = bench["runs"]
    names = []
    for r in runs:
        for s in SAMPLERS:
            h = r.get(s, {}).get("hottest")
            if h and h not in names:
                names.append(h)
    colour = {m: PALETTE[i % len(PALETTE)] for i, m in enumerate(names)}
    e = html.escape
    rows = []
    for s in SAMPLERS:
        cells = []
        for k, r in enumerate(runs):
            m = r.get(s)
            h = m["hottest"] if m else None
            if h is None:
                cells.append("<td class=none>–</td>")
                continue
            agree = h == r["oracle"]["hottest"]
            title = f"run {k + 1}: {h}, {100 * m['method_shares'][h]:.1f}% of {m['samples']} samples" + (
                "" if s == "oracle" else f"; the oracle's hottest: {r['oracle']['hottest']}")
            cells.append(f"<td style='background:{colour[h]}' class='{'' if agree else 'differs'}' "
                         f"title='{e(title)}'></td>")
        summary = bench["summary"].get(s)
        named = summary["distinct_hottest"] if summary else 0
        rows.append(f"<tr><th>{e(s)}</th>{''.join(cells)}<td class=n>{named} named</td></tr>")
    legend = "".join(f"<span><i style='background:{colour[m]}'></i>{e(m)}</span>" for m in names)
    methods = top_methods(bench)
    share_rows = []
    for s in SAMPLERS:
        m = bench["summary"].get(s)
        if not m:
            continue
        cells = "".join(
            f"<td>{100 * m['methods'][x]['mean']:.1f}% <small>[{100 * m['methods'][x]['min']:.0f}–"
            f"{100 * m['methods'][x]['max']:.0f}]</small></td>" if x in m["methods"] else "<td>0</td>" for x in methods)
        share_rows.append(f"<tr><th>{e(s)}</th>{cells}</tr>")
    page = f"""<!doctype html><html lang=en><head><meta charset=utf-8><title>{e(name)}: hottest methods over {len(runs)} runs</title>
<style>body{{font:14px system-ui,sans-serif;margin:2em;max-width:72em;color:#222}}
table.strip td{{width:14px;height:22px;padding:0;border:1px solid #fff}}table.strip td.differs{{outline:2px solid #000;outline-offset:-3px}}
table.strip th{{text-align:right;padding-right:.6em;font-weight:normal}}td.n{{padding-left:.8em;width:auto!important;color:#555}}
.legend span{{display:inline-block;margin:.2em 1em .2em 0}}.legend i{{display:inline-block;width:12px;height:12px;margin-right:.3em;vertical-align:-1px}}
table.shares{{border-collapse:collapse}}table.shares td,table.shares th{{border-bottom:1px solid #ddd;padding:.3em .8em;text-align:right}}
small{{color:#666}}</style></head><body>
<h1>{e(name)}: which method is hottest? {len(runs)} runs, five samplers, one oracle</h1>
<p>Each run of {e(name)} was sampled by all five samplers on the <em>same</em> interruptions. The oracle knows exactly
where each interruption landed, so its column is the truth for that run. Each cell below is one run, coloured by
the method that sampler named hottest; a cell outlined in black names a different method from the oracle's in
the same run. A profiler that names a different hottest method from run to run (as JFR did in "Don't Trust Your
Profiler") either follows a benchmark whose hottest method really changes (the oracle's row changes too) or is
wrong (only its row changes). Hover over a cell for the method's share.</p>
<table class=strip>{''.join(rows)}</table>
<p class=legend>{legend}</p>
<h2>The top methods' shares of self time over the runs: mean [min–max]</h2>
<table class=shares><tr><th></th>{''.join(f'<th>{e(x)}</th>' for x in methods)}</tr>{''.join(share_rows)}</table>
{plot_svg}
<p><small>Generated by bench/accuracy/run.py; the numbers are in ../accuracy.json.</small></p>
</body></html>
"""
    with open(path, "w") as f:
        f.write(page)


def write(out_dir, data, with_plots):
    benchmarks = data["benchmarks"]
    os.makedirs(os.path.join(out_dir, "plots"), exist_ok=True)
    with open(os.path.join(out_dir, "accuracy.json"), "w") as f:
        json.dump(data, f, indent=1, default=str)
    with open(os.path.join(out_dir, "runs.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["benchmark", "run", "sampler", "samples", "failed", "hottest", "top1", "top5", "tvd_method",
                    "tvd_line", "bound_method"])
        for name, b in benchmarks.items():
            for k, r in enumerate(b["runs"]):
                for s in SAMPLERS:
                    if s in r:
                        m = r[s]
                        w.writerow([name, k, s, m["samples"], m["failed"], m["hottest"], m["top1"], m["topk"],
                                    m["tvd_method"], m["tvd_line"], r["oracle"]["bound_method"] if "oracle" in r else ""])
    with open(os.path.join(out_dir, "actionability.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["benchmark", "line", "ns_per_pass", "passes", "added_ms", "measured_added_ms", "base_ms",
                    "base_share", "expected_share", "divining_tvd", *[f"moved_{s}" for s in SAMPLERS]])
        for r in data["actionability"]:
            w.writerow([r["benchmark"], r["line"], r["ns_per_pass"], r["passes"], r["added_ms"],
                        r["measured_added_ms"], r["base_ms"], r["base_share"],
                        r["expected_share"], r["divining_tvd"], *[r["moved"].get(s) for s in SAMPLERS]])
    if with_plots:
        import plots
        for name, b in benchmarks.items():
            methods = top_methods(b)
            if methods:
                plots.method_shares(os.path.join(out_dir, "plots", f"{name}.svg"), f"{name}: top methods over "
                                    f"{b['summary']['oracle']['runs']} runs (bars: min to max)", methods,
                                    {s: b["summary"][s]["methods"] for s in SAMPLERS if b["summary"].get(s)})
        names = [n for n, b in benchmarks.items() if b["summary"].get("oracle")]
        for field, label in (("tvd_method", "TVD to the oracle, methods"), ("tvd_line", "TVD to the oracle, lines")):
            plots.distances(os.path.join(out_dir, "plots", f"{field}.svg"), names,
                            {s: [(benchmarks[n]["summary"][s][field]["mean"], benchmarks[n]["summary"][s][field]["max"])
                                 if benchmarks[n]["summary"].get(s) and benchmarks[n]["summary"][s][field] else None
                                 for n in names] for s in COMPARED}, label)
        if data["actionability"]:
            plots.moved(os.path.join(out_dir, "plots", "moved.svg"), data["actionability"], SAMPLERS)

    os.makedirs(os.path.join(out_dir, "pages"), exist_ok=True)
    for name, b in benchmarks.items():
        if not b["summary"].get("oracle"):
            continue
        svg_path = os.path.join(out_dir, "plots", f"{name}.svg")
        svg = ""
        if os.path.exists(svg_path):
            with open(svg_path) as f:
                svg = f.read()
            svg = svg[svg.index("<svg"):] if "<svg" in svg else ""
        write_page(os.path.join(out_dir, "pages", f"{name}.html"), name, b, svg)

    m = data["machine"]
    a = data["args"]
    command = "python3 bench/accuracy/run.py" + (" --quick" if a["quick"] else "") + \
        (f" --runs {a['runs']}" if a["runs"] != (3 if a["quick"] else 30) else "") + \
        (f" --benchmarks {a['benchmarks']}" if a["benchmarks"] else "") + \
        (" --awfy-repo DIR" if a["awfy_repo"] else "") + \
        (f" --jfr-benchmarks {a['jfr_benchmarks']}" if a.get("jfr_benchmarks") else "")
    text = "# Profiler accuracy on Are We Fast Yet, against an exact oracle\n\n"
    text += (f"Generated by `{command}` on {m['date']}, minivm {m['commit']}, {m['cpu']} ({m['cores']} cores); "
             f"{a['runs']} runs per benchmark under `--sampler=all` at `--interval={a['interval']}` (tiered), "
             f"{a['slow_runs']} per slowed line. Every sampler ends the same interruptions as the oracle.\n\n")
    if data["failures"]:
        text += "**Failed runs** (not in any number below):\n\n" + "".join(
            f"- {f['benchmark']}: {f['why']}\n" for f in data["failures"]) + "\n"
    split_text, worst = write_split(benchmarks)
    act_text, _ = write_actionability(data["actionability"])
    text += "## Verdicts\n\n" + verdicts(benchmarks, worst, data["actionability"]) + "\n"
    text += "## 1. Aliasing (Mytkowicz et al., PLDI 2010)\n\n" + write_aliasing(data.get("aliasing", {})) + "\n"
    text += ("## 2. Hottest methods over runs, and distance to the oracle (Burchell and Marr, MPLR 2023)\n\n" +
             write_stability(benchmarks) + "\n![TVD, methods](plots/tvd_method.svg)\n\n### Why they differ\n\n" +
             split_text + "\n")
    text += ("## 3. Actionability and Divining's expected profile (OOPSLA 2025)\n\n" + act_text +
             "\n![moved](plots/moved.svg)\n")
    text += write_jfr(data.get("jfr"))
    with open(os.path.join(out_dir, "report.md"), "w") as f:
        f.write(text)
