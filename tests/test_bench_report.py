#!/usr/bin/env python3
"""The bench's report writers on measurements that are missing (a run that wrote no
statistics or events, a limits probe that recorded no timings under load, a perf that
could not run, a configuration of the escapes section whose runs wrote no statistics):
bench/run.py writes report.md, every CSV, targets.json and the plots, and says "missing"
(report), leaves the cell empty (CSV) or writes null (JSON) instead of crashing. The
escapes section names an escaped sample's configuration, reason and command. The plots
(bench/charts.py, matplotlib) are SVG documents matplotlib wrote, with their title, and say
"missing" in place of a missing bar and "no data" when there is nothing to draw; every label
of a plot stays inside the picture, and a histogram's data file holds the counts it drew.
Runs under Debian's python3 when the one that started it lacks matplotlib.
Usage: test_bench_report.py MINIVM (for the sampler names). Prints `N passed, N failed`."""
import csv
import json
import os
import sys
import tempfile
import xml.etree.ElementTree as ET

from checks import check, finish

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "bench"))
import charts  # noqa: E402
charts.ensure_matplotlib()  # may run this test again under Debian's python3
import escapes  # noqa: E402
import run  # noqa: E402
import stability  # noqa: E402

run.SAMPLERS[:] = run.sampler_names(os.path.abspath(sys.argv[1]))
run.COMPARED[:] = [s for s in run.SAMPLERS if s != "oracle"]
by_name = {w[0]: w for w in run.WORKLOADS}


def plan(out_dir, names):
    return {"quick": True, "runs": 1, "by_name": by_name, "out_dir": out_dir, "names": names,
            "workloads": [by_name[n] for n in names], "classics": [by_name["counted_loop_then_setter"]],
            "cost_workloads": [by_name["many_short_methods"]], "latency_workloads": [by_name["counted_loop_then_setter"]],
            "perf_set": []}


def svg(path):
    """(title, texts) of an SVG file matplotlib wrote, or None with why it is not one."""
    try:
        root = ET.parse(path).getroot()
    except (ET.ParseError, OSError) as e:
        return None, f"{path}: {e}"
    ns = "{http://www.w3.org/2000/svg}"
    creator = [t.text for t in root.iter("{http://purl.org/dc/elements/1.1/}title")]
    if root.tag != ns + "svg" or not any((c or "").startswith("Matplotlib v") for c in creator):
        return None, f"{path}: root {root.tag}, titles {creator}"
    title = root.find(ns + "title")
    return (title.text if title is not None else None), [t.text for t in root.iter(ns + "text")]


def check_svg(path, title, says=(), count=None):
    """The plot at path is matplotlib's SVG with this title drawn, saying every text of `says`;
    count: {text: times it is drawn}."""
    got, texts = svg(path)
    ok = got == title and title in texts and all(t in texts for t in says) \
        and all(texts.count(t) == n for t, n in (count or {}).items())
    check(f"{os.path.basename(path)}: matplotlib's SVG, titled {title!r}, saying {list(says) + list(count or {})}",
          ok, (got, texts))


def accuracy_of_missing_run():
    """What measure_accuracy makes of a run whose events and statistics were not written."""
    a = run.accuracy(None)
    for s in run.SAMPLERS:
        a[s]["dropped"] = run.dropped(None, s)
        a[s]["accounted"] = run.sampler_stats(None, s).get("accounted", False)
    return a


names = ["counted_loop_then_setter", "many_short_methods"]


def escapes_measured(configs):
    """What measure_escapes returns, over `names` with these configurations."""
    return {"target": 5000, "share": 10, "flags": escapes.FLAGS, "not_found": list(escapes.NOT_FOUND),
            "meanings": {"pc_in_stub": "in a stub"}, "workloads": [(n, by_name[n][1]) for n in names],
            "modes": [m for m, _ in escapes.MODES], "suspends": escapes.SUSPENDS, "configs": configs,
            "errors": {("many_short_methods", "xint", "handshake"): ["exit status -11: minivm run ..."]}, "seconds": 1.0}


def escapes_config(samples, biased, escape_runs=()):
    return {"runs": 1, "samples": samples, "interruptions": samples, "seconds": 0.3, "biased": biased, "stopped": 1,
            "no_stats": 0, "died": 0, "hung": 0, "unaccounted": 0, "escape_runs": list(escape_runs)}


# Every configuration measured but one, whose runs wrote no statistics.
escapes_configs = {(n, m, s): escapes_config(120, {"pc_in_stub": 3}) for n in names for m, _ in escapes.MODES
                   for s in escapes.SUSPENDS}
escapes_configs[("many_short_methods", "xint", "handshake")] = None
no_timings = {"p50": None, "p99": None, "max": None, "n": 0}
measured = {
    # minivm_limits under load: no signal timings at all, no untrapped-poll figure.
    "limits": {"cores": 2, "signal_round_trip_ns": no_timings, "signal_handler_entry_ns": no_timings,
               "poll_trap_ns": {"p50": 900, "p99": 2000, "max": 5000, "n": 10}, "poll_untrapped_ns": None,
               "periodic_signal_slowdown": {"median": None, "q1": None, "q3": None, "n": 0},
               "periodic_signal_sender_cpu_ns": {"median": None, "q1": None, "q3": None, "n": 0}},
    "limits_err": None,
    "acc": {(n, meta): accuracy_of_missing_run() for n in names for meta in (True, False)},
    # Profiled runs without statistics: held time and CPU missing; slowdowns missing.
    "over": {("many_short_methods", "base"): None,
             **{("many_short_methods", s, r): None for s in run.SAMPLERS for r in ("100 Hz", "1 kHz")},
             **{("many_short_methods", s, k): None for s in run.SAMPLERS for k in ("held", "cpu")}},
    "depth": {(d, s): (run.held_us(None, s), run.sampler_cpu_us(None)) for d in (10, 100) for s in run.SAMPLERS},
    "threads": {},  # not measured at all
    "lat": {("counted_loop_then_setter", v): (None, None, []) for v in ("signal", "handshake", "counted-loop-polls")},
    "perf": None, "perf_err": "perf is not installed",
    "stab": None,
    "esc": escapes_measured(escapes_configs),
    "memory": ({"unprofiled": [None, 5000], "cooperative .jsonl": [None, None]}, [2, 6],
               {"unprofiled": True, "cooperative .jsonl": False}),
    "cost": {"runs": 2, "depths": [10, 500], "cost": {("deep_stable", 10, "cooperative"): 30.0,
                                                       ("deep_stable", 500, "cooperative"): None,
                                                       ("deep_stable", 10, "async"): None,
                                                       ("deep_stable", 500, "async"): 31.0}},
    "seconds": 1.0, "minivm_runs": 0,
}

with tempfile.TemporaryDirectory() as out:
    try:
        run.write_report(plan(out, names), measured)
        error = None
    except Exception as e:  # noqa: BLE001 - the point is that nothing escapes
        error = f"{type(e).__name__}: {e}"
    check("the report writers do not crash on missing measurements", error is None, error)
    report = open(os.path.join(out, "report.md")).read() if os.path.exists(os.path.join(out, "report.md")) else ""
    check("report.md is written with every section", all(h in report for h in (
        "## Physical limits", "## Accuracy against the oracle", "## Honesty", "## Cost to the program",
        "## Cooperative: suspension and safepoint latency", "## The oracle checked against perf",
        "## Stability under code unloading", "## Cooperative samples whose frame escaped or was not found",
        "## Memory over a long run", "## Targets", "## Reading")), report[:3000])
    check("a floor with no timings is listed as missing, the one measured is shown",
          "| signal to another thread and back (tgkill → handler → seen) | missing | missing | missing |" in report
          and "| a poll that traps (SIGSEGV on the poll page, handler, resume) | 0.90 | 2.00 | 5.00 |" in report
          and "an untrapped poll costs missing" in report, report[:2000])
    check("missing shares, slowdowns, held times and latencies read 'missing', never None or n/a",
          "| counted_loop_then_setter | missing |" in report and "| many_short_methods | cooperative | missing | missing |"
          in report and "| counted_loop_then_setter | signal | missing | missing |" in report
          and "None" not in report and "n/a" not in report, report)
    rows = list(csv.DictReader(open(os.path.join(out, "accuracy.csv")))) if os.path.exists(os.path.join(out, "accuracy.csv")) else []
    check("accuracy.csv: a missing share is an empty cell",
          rows and all(r["exact_stack"] == "" and r["true_hot_line"] == "" for r in rows), rows[:2])
    rows = list(csv.DictReader(open(os.path.join(out, "overhead.csv")))) if os.path.exists(os.path.join(out, "overhead.csv")) else []
    check("overhead.csv: missing slowdowns are empty cells", rows and all(r["slowdown_1khz"] == "" for r in rows), rows[:2])
    try:
        targets = json.load(open(os.path.join(out, "targets.json")))
    except (OSError, ValueError):
        targets = []
    by_target = {t["target"]: t for t in targets}
    acc_t = next((t for k, t in by_target.items() if k.startswith("Cooperative ≥ 99%")), {})
    slow_t = next((t for k, t in by_target.items() if k.startswith("Cooperative program slowdown")), {})
    check("targets.json: a target resting on a missing measurement is met: null, and says what is missing",
          acc_t.get("met", False) is None and "missing" in acc_t.get("measured", "")
          and slow_t.get("met", False) is None, targets)
    cost_t = next((t for k, t in by_target.items() if k.startswith("Cooperative CPU per sample flat")), {})
    check("CPU per sample: a missing depth reads missing in the table, and its target is met: null",
          "| deep_stable | 500 | missing | missing | 31.0 |" in report and cost_t.get("met", False) is None, (cost_t, report[-3000:]))
    async_t = next((t for k, t in by_target.items() if k.startswith("Cooperative CPU per sample (all threads) at most async's")), {})
    check("CPU per sample against async: with either missing, met: null, and the pair reads missing",
          async_t.get("met", False) is None and "deep_stable 10: 30.0 vs missing µs" in async_t.get("measured", ""), async_t)
    esc_t = by_target.get(escapes.TARGET, {})
    check("targets.json: the escapes target with a configuration missing is met: null and names it",
          esc_t.get("met", False) is None and "missing: many_short_methods xint handshake" in esc_t.get("measured", ""),
          esc_t)
    check("escapes: the missing configuration's cell reads missing, the others samples / not found; how its run ended",
          "| many_short_methods | 120 / 0 | missing | 120 / 0 |" in report
          and "many_short_methods xint handshake: a run ended abnormally" in report, report)
    rows = list(csv.DictReader(open(os.path.join(out, "escapes.csv")))) if os.path.exists(os.path.join(out, "escapes.csv")) else []
    gone = [r for r in rows if (r["workload"], r["mode"], r["suspend"]) == ("many_short_methods", "xint", "handshake")]
    check("escapes.csv: a row per configuration, the missing one's numbers empty",
          len(rows) == len(escapes_configs) and len(gone) == 1 and gone[0]["samples"] == ""
          and gone[0]["escaped_or_not_found"] == "", rows[:3])
    check("report: such a target's 'met' column reads missing", "| missing | missing" in report
          or any(line.count("| missing |") for line in report.splitlines() if line.startswith("| Cooperative ≥ 99%")), report)
    # Every share missing: a bar chart of "missing", one per workload and sampler; the other
    # plots have no point at all.
    check_svg(os.path.join(out, "accuracy.svg"), "Exact-stack agreement with the oracle (--stub-metadata)",
              names + [f"{c}: missing" for c in run.COMPARED], {"missing": len(names) * len(run.COMPARED)})
    check_svg(os.path.join(out, "overhead.svg"), "Slowdown versus sampling rate (many_short_methods)", ["no data"])
    check_svg(os.path.join(out, "held_vs_depth.svg"), "Thread held per sample versus stack depth (p50)", ["no data"])
    check_svg(os.path.join(out, "latency.svg"), "Safepoint latency, counted_loop_then_setter (cooperative)", ["no data"])
    check_svg(os.path.join(out, "stability.svg"), "Stability under --stress-unload", ["no data"])
    rows = list(csv.reader(open(os.path.join(out, "latency_histogram.csv")))) \
        if os.path.exists(os.path.join(out, "latency_histogram.csv")) else None
    check("latency_histogram.csv: no latency, no bin", rows == [["bin_from_us", "bin_to_us"]], rows)

# The escapes section not measured at all, and measured with an escaped sample.
with tempfile.TemporaryDirectory() as out:
    try:
        md = "\n".join(escapes.write_escapes(out, None))
        t = escapes.target(None)
        error = None
    except Exception as e:  # noqa: BLE001
        md, t, error = "", (None, False, ""), f"{type(e).__name__}: {e}"
    check("escapes not measured: the section says missing and the target is met: null",
          error is None and "missing" in md and t[1] is None, (error, md, t))
    configs = {(n, m, s): escapes_config(20_000, {}) for n in names for m, _ in escapes.MODES for s in escapes.SUSPENDS}
    configs[("counted_loop_then_setter", "xcomp", "signal")] = escapes_config(
        20_000, {"frame_escaped": 2, "pc_in_stub": 1},
        [{"reasons": {"frame_escaped": 2}, "jsonl": "/tmp/x.jsonl", "seconds": 0.5, "how": "stopped",
          "command": "minivm run --xcomp x.mini"}])
    md = "\n".join(escapes.write_escapes(out, escapes_measured(configs)))
    t = escapes.target(escapes_measured(configs))
    check("an escaped sample: not met, named with its configuration, reason, events and command",
          t[1] is False and "counted_loop_then_setter xcomp signal 2" in t[2]
          and "| counted_loop_then_setter | 20,000 / 0 | 20,000 / 0 | 20,000 / 2 |" in md
          and "frame_escaped 2" in md and "`/tmp/x.jsonl`" in md and "`minivm run --xcomp x.mini`" in md, (t, md))
    configs[("counted_loop_then_setter", "xcomp", "signal")] = escapes_config(20_000, {"pc_in_stub": 1})
    t = escapes.target(escapes_measured(configs))
    check("no escaped sample over 240,000 samples: met", t[1] is True, t)

# Plots of measurements, some missing. Every label (the accuracy plot's slanted workload
# names above all) stays inside the picture, as matplotlib lays it out.
def texts(fig):
    from matplotlib.text import Text
    return [t for t in fig.findobj(Text) if t.get_visible() and t.get_text()]


def inside(fig):
    """Empty when everything the figure draws (laid out and drawn by Agg) is inside it, else
    the box (inches) it all takes beside the figure's."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    canvas = FigureCanvasAgg(fig)
    canvas.draw()
    drawn, box = fig.get_tightbbox(canvas.get_renderer()), fig.bbox_inches
    ok = drawn.x0 >= box.x0 - 1e-3 and drawn.y0 >= box.y0 - 1e-3 and drawn.x1 <= box.x1 + 1e-3 and drawn.y1 <= box.y1 + 1e-3
    return [] if ok else [drawn.bounds, box.bounds]


with tempfile.TemporaryDirectory() as out:
    for names in ([w[0] for w in run.WORKLOADS], run.QUICK_WORKLOADS):
        series = [(s, [None if k == i % len(names) else 50.0 + k for k in range(len(names))])
                  for i, s in enumerate(run.COMPARED)]
        outside = inside(charts.bar_figure("t", names, series, "%", y_max=100))
        check(f"every label of a {len(names)}-workload accuracy plot is inside the picture", not outside, outside)
        path = os.path.join(out, "a.svg")
        charts.bar_chart(path, "t", names, series, "%", y_max=100)
        check_svg(path, "t", names + run.COMPARED, {"missing": len(run.COMPARED)})
    acc = {(n, True): accuracy_of_missing_run() for n in names}
    acc[(names[0], True)]["cooperative"]["exact"] = 0.987
    run.write_accuracy(out, names, acc)
    check_svg(os.path.join(out, "accuracy.svg"), "Exact-stack agreement with the oracle (--stub-metadata)", ["98.7"],
              {"missing": len(names) * len(run.COMPARED) - 1})
    stab = {"target": 300, "samplers": {s: {"totals": {"interruptions": 300, "crashes_caught": 2 if s == "classical" else 0,
                                                       "disagreements": 40 if s != "cooperative" else 0}, "errors": []}
                                        for s in stability.COMPARED}}
    stability.write_stability(out, stab)
    check_svg(os.path.join(out, "stability.svg"), "Stability under --stress-unload (counts per sampler)",
              stability.COMPARED + ["crashes caught", "disagreements", "40", "2"])
    fig = charts.line_figure("l", "x", "y", [("cooperative", [(10, 2.0), (100, None), (500, 9.0)]), ("async", [])],
                             log_x=True, log_y=True)
    check("a line chart with log axes keeps its labels inside and names an empty series missing",
          not inside(fig) and "async: missing" in [t.get_text() for t in texts(fig)], inside(fig))
    values = [1.0 + k for k in range(200)]
    lat = {("counted_loop_then_setter", v): ((1, 2, 3), (1, 2, 3), values if v == "signal" else [None])
           for v in ("signal", "handshake", "counted-loop-polls")}
    run.write_latency(out, [run.WORKLOADS[0]], lat)
    rows = list(csv.DictReader(open(os.path.join(out, "latency_histogram.csv"))))
    check("latency_histogram.csv: 40 bins over the values, the counts adding up to them, the empty series empty",
          len(rows) == 40 and sum(int(r["signal"]) for r in rows) == len(values)
          and float(rows[0]["bin_from_us"]) == 1.0 and float(rows[-1]["bin_to_us"]) == 200.0
          and all(r["counted-loop-polls"] == "" for r in rows), rows[:3])
    check_svg(os.path.join(out, "latency.svg"), "Safepoint latency, counted_loop_then_setter (cooperative)",
              ["signal", "counted-loop-polls: missing", "latency µs", "samples"])

finish()
