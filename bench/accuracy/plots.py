"""The accuracy report's plots, drawn with matplotlib (Debian's python3-matplotlib) as SVG,
each with the data it shows in a CSV beside it.

The figures, how they are saved and the samplers' colours are bench/charts.py's, as is
ensure_matplotlib (installs python3-matplotlib, or runs the bench again under Debian's
python3 when the python3 running it lacks matplotlib).
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# bench/charts.py; run.py calls ensure_matplotlib through this module.
from charts import COLOURS, ensure_matplotlib, figure, save  # noqa: E402,F401


def _grouped_bars(path, categories, series, ylabel, title="", rotation=20, width_per=1.2):
    """Bars grouped by category, one per series (a sampler), each with a whisker from its low
    to its high value. series: {name: [(low, mid, high) per category, in percent]}."""
    fig = figure(max(6, width_per * len(categories)), 3.6)
    ax = fig.subplots()
    width = 0.8 / max(1, len(series))
    for j, (name, values) in enumerate(series.items()):
        xs = [i + (j - (len(series) - 1) / 2) * width for i in range(len(categories))]
        ax.bar(xs, [mid for _, mid, _ in values], width, capsize=2, label=name, color=COLOURS.get(name),
               yerr=[[mid - lo for lo, mid, _ in values], [hi - mid for _, mid, hi in values]],
               error_kw={"elinewidth": 0.8})
    ax.set_xticks(range(len(categories)))
    ax.set_xticklabels([c if len(c) <= 28 else c[:26] + "…" for c in categories], rotation=rotation, ha="right")
    ax.set_ylabel(ylabel)
    if title:
        ax.set_title(title)
    ax.legend(fontsize=7, ncol=len(series))
    save(fig, path, title or ylabel)


def method_shares(path, title, methods, per_sampler):
    """For each method, each sampler's mean share over the runs, with a whisker from its min to
    its max (as Burchell and Marr's figures). per_sampler: {sampler: {method: {"min", "mean",
    "max"}}}."""
    none = {"min": 0, "mean": 0, "max": 0}
    series = {s: [(100 * st["min"], 100 * st["mean"], 100 * st["max"]) for st in (per.get(m, none) for m in methods)]
              for s, per in per_sampler.items()}
    _grouped_bars(path, methods, series, "self time, % of samples", title, width_per=1.6)


def distances(path, benchmarks, per_sampler, ylabel):
    """Per benchmark, each sampler's mean distance to the oracle, its max as the whisker.
    per_sampler: {sampler: [(mean, max) per benchmark, or None]}."""
    series = {s: [(m, m, mx) for m, mx in (v or (0.0, 0.0) for v in values)] for s, values in per_sampler.items()}
    _grouped_bars(path, benchmarks, series, ylabel, width_per=0.9)


def moved(path, rows, samplers):
    """Actionability: per slowed line, the share each sampler moved onto it."""
    labels = [f"{r['benchmark']} {r['line']}" for r in rows]
    fig = figure(max(6, 0.8 * len(rows)), 3.6)
    ax = fig.subplots()
    width = 0.8 / max(1, len(samplers))
    for j, s in enumerate(samplers):
        xs = [i + (j - (len(samplers) - 1) / 2) * width for i in range(len(rows))]
        ax.bar(xs, [100 * (r["moved"].get(s) or 0) for r in rows], width, label=s, color=COLOURS.get(s, None))
    ax.plot(range(len(rows)), [100 * ((r["expected_share"] or 0) - r["base_share"]) for r in rows], "k_",
            markersize=14, label="expected (Divining)")
    ax.set_xticks(range(len(rows)))
    ax.set_xticklabels([lb if len(lb) <= 34 else lb[:32] + "…" for lb in labels], rotation=30, ha="right", fontsize=7)
    ax.set_ylabel("share moved onto the slowed line, %")
    ax.legend(fontsize=7, ncol=3)
    save(fig, path, "share moved onto the slowed line")
