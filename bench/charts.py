"""charts: every plot of the benches, drawn with matplotlib (Debian's python3-matplotlib) as
SVG, headless (the svg backend: no display, no pyplot state).

Debian's matplotlib is a module of Debian's python3; when the python3 running a bench is
another one (a pyenv shim, say) and lacks it, ensure_matplotlib installs the package (as
root, with apt-get) and runs the script again under /usr/bin/python3, as tests/test_pprof.py
does for python3-protobuf.

bench/run.py, bench/stability.py and bench/awfy/run.py draw with the three charts below;
bench/accuracy/plots.py draws its own on figure() and save(). Each chart is 8 x 4.5 inches
(wider with many bars), with a title, labelled axes and a legend when there is more than
one series. In every file text stays text (svg.fonttype none), so files are small and
searchable, and the same data draws the same file. A sampler has the same colour in every
plot.

    bar_chart(path, title, categories, series, y_label, y_max=None)
    line_chart(path, title, x_label, y_label, series, log_x=False, log_y=False)
    histogram(path, title, x_label, series, bins=30, log_x=False) -> the counts it drew

A value that is None is missing: "missing" stands in place of its bar (all of them, when
every value is); a line or histogram leaves it out, and a series left with nothing is named
"missing" in the legend. A chart with no categories, no series or no point at all says
"no data". Each *_figure function returns the figure the matching
writer saves (tests measure it).
"""
import importlib.util
import math
import os
import shutil
import subprocess
import sys

DEBIAN_PYTHON = "/usr/bin/python3"
COLOURS = {"oracle": "#333333", "cooperative": "#1b9e77", "safepoint": "#d95f02", "classical": "#7570b3",
           "async": "#e7298a", "JFR 17": "#a6761d", "JFR 25": "#66a61e"}
# Series that are no sampler take these in turn (matplotlib's tab10 without the colours above).
OTHER_COLOURS = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#17becf", "#bcbd22"]
WIDTH, HEIGHT = 8.0, 4.5  # inches, at 100 dpi


def has_matplotlib():
    return importlib.util.find_spec("matplotlib") is not None


def ensure_matplotlib(otherwise=""):
    """Returns when matplotlib can be imported; else installs python3-matplotlib when root,
    runs this script again under Debian's python3 when that one has it, or exits saying what
    to install (and `otherwise`, what else the user can do)."""
    if has_matplotlib():
        return
    debian_has = lambda: subprocess.run([DEBIAN_PYTHON, "-c", "import matplotlib"], capture_output=True).returncode == 0
    if os.path.exists(DEBIAN_PYTHON) and not debian_has() and os.geteuid() == 0 and shutil.which("apt-get"):
        print("installing python3-matplotlib (apt-get)", flush=True)
        subprocess.run(["apt-get", "install", "-y", "-q", "--no-install-recommends", "python3-matplotlib"],
                       capture_output=True, env={**os.environ, "DEBIAN_FRONTEND": "noninteractive"})
    if os.path.exists(DEBIAN_PYTHON) and os.path.realpath(sys.executable) != os.path.realpath(DEBIAN_PYTHON) \
            and debian_has():
        os.execv(DEBIAN_PYTHON, [DEBIAN_PYTHON, *sys.argv])
    sys.exit(f"{os.path.basename(sys.argv[0])}: the plots need matplotlib (apt-get install python3-matplotlib)"
             f"{otherwise}")


def figure(width=WIDTH, height=HEIGHT):
    """An empty figure laid out by matplotlib's constrained layout (titles, legends outside
    the axes and slanted labels all kept inside the picture)."""
    import matplotlib
    from matplotlib.figure import Figure
    matplotlib.rcParams.update({"font.size": 9, "svg.fonttype": "none", "svg.hashsalt": "minivm"})
    return Figure(figsize=(width, height), dpi=100, layout="constrained")


def save(fig, path, title=""):
    """The figure as SVG at path; no date in it, so the same data draws the same file."""
    fig.savefig(path, format="svg", metadata={"Date": None, **({"Title": title} if title else {})})


def colours(names):
    """Each series' colour: a sampler's own, else the next of OTHER_COLOURS."""
    others = iter(OTHER_COLOURS * (1 + len(names) // len(OTHER_COLOURS)))
    return [COLOURS.get(n) or next(others) for n in names]


def label(v):
    """A value as a bar's label: few digits, no float noise."""
    if v == 0:
        return "0"
    if 1 <= abs(v) < 1e6 and abs(v - round(v)) < 1e-9 * abs(v):
        return str(int(round(v)))
    return "%.3g" % v


def _log(axis, set_scale, values):
    """A base-10 log axis numbered as plain numbers (20, 500, not 2x10^1), with 2 and 5
    ticks too when the values span few decades."""
    from matplotlib import ticker
    set_scale("log")
    if math.log10(max(values) / min(values)) <= 2.5:
        axis.set_major_locator(ticker.LogLocator(subs=(1, 2, 5)))
    axis.set_major_formatter(ticker.FuncFormatter(lambda v, _: label(v)))
    axis.set_minor_formatter(ticker.NullFormatter())


def _titled(title, width=WIDTH):
    fig = figure(width)
    fig.suptitle(title, fontsize=12, fontweight="bold")
    return fig, fig.subplots()


def _legend(ax, count):
    if count > 1:
        ax.legend(loc="lower center", bbox_to_anchor=(0.5, 1.0), ncol=min(count, 5), frameon=False, fontsize=8)


def no_data_figure(title):
    fig, ax = _titled(title)
    ax.set_axis_off()
    ax.text(0.5, 0.5, "no data", fontsize=20, alpha=0.6, ha="center", va="center", transform=ax.transAxes)
    return fig


def bar_figure(title, categories, series, y_label, y_max=None):
    """Grouped vertical bars: series is [(name, [value or None per category])]; values above
    y_max are drawn to y_max and labelled with their value."""
    values = [v for _, vs in series for v in vs if v is not None]
    if not categories or not series:
        return no_data_figure(title)
    bars = len(categories) * len(series)
    fig, ax = _titled(title, max(WIDTH, 0.16 * bars + 0.5 * len(categories)))
    top = y_max or max(values + [0.0]) * 1.08 or 1.0
    width = 0.8 / len(series)
    for j, ((name, vs), colour) in enumerate(zip(series, colours([n for n, _ in series]))):
        vs = list(vs) + [None] * (len(categories) - len(vs))
        xs = [i + (j - (len(series) - 1) / 2) * width for i in range(len(categories))]
        shown = [(x, v) for x, v in zip(xs, vs) if v is not None]
        drawn = ax.bar([x for x, _ in shown], [min(max(v, 0.0), top) for _, v in shown], width * 0.95,
                       label=name if shown else f"{name}: missing", color=colour)
        if bars <= 30 or y_max:  # room for a label over each bar; a clipped bar always says its value
            ax.bar_label(drawn, [label(v) if bars <= 30 or v > top else "" for _, v in shown], fontsize=7, padding=1)
        for x, v in zip(xs, vs):
            if v is None:  # a measurement that is missing says so where its bar would be
                ax.text(x, top * 0.01, "missing", rotation=90, ha="center", va="bottom", fontsize=7, alpha=0.6)
    ax.set_ylim(0, top * 1.06)  # room for the labels over the highest bars
    ax.set_xlim(-0.5, len(categories) - 0.5)
    ax.set_xticks(range(len(categories)))
    ax.set_xticklabels([str(c) for c in categories], rotation=35, ha="right", rotation_mode="anchor")
    ax.set_ylabel(y_label)
    ax.grid(axis="y", color="#e0e0e0")
    ax.set_axisbelow(True)
    _legend(ax, len(series))
    return fig


def line_figure(title, x_label, y_label, series, log_x=False, log_y=False):
    """Markers joined by lines: series is [(name, [(x, y), ...])]; log axes are base 10 and
    leave out values at or below 0."""
    clean = [(name, sorted((float(x), float(y)) for x, y in pts if x is not None and y is not None
                           and (x > 0 or not log_x) and (y > 0 or not log_y)))
             for name, pts in series]
    if not any(pts for _, pts in clean):
        return no_data_figure(title)
    fig, ax = _titled(title)
    for (name, pts), colour in zip(clean, colours([n for n, _ in clean])):
        ax.plot([x for x, _ in pts], [y for _, y in pts], "o-", color=colour, markersize=4,
                label=name if pts else f"{name}: missing")
    if log_x:
        _log(ax.xaxis, ax.set_xscale, [x for _, pts in clean for x, _ in pts])
    if log_y:
        _log(ax.yaxis, ax.set_yscale, [y for _, pts in clean for _, y in pts])
    ax.set_xlabel(x_label)
    ax.set_ylabel(y_label)
    ax.grid(color="#e0e0e0")
    _legend(ax, len(clean))
    return fig


def histogram_bins(series, bins=30, log_x=False):
    """The counts a histogram draws: (edges, [(name, counts)]) with bins + 1 edges over the
    common range of all series' values (log-spaced when log_x), or None when there are no
    values. series is [(name, [value, ...])]; log_x leaves out values at or below 0."""
    import numpy
    clean = [(n, [float(v) for v in vs if v is not None and (v > 0 or not log_x)]) for n, vs in series]
    every = [v for _, vs in clean for v in vs]
    if not every or bins < 1:
        return None
    lo, hi = min(every), max(every)
    if log_x:
        lo, hi = (lo / 1.5, hi * 1.5) if lo == hi else (lo, hi)
        edges = numpy.logspace(math.log10(lo), math.log10(hi), bins + 1)
    else:
        lo, hi = (lo - 0.5, hi + 0.5) if lo == hi else (lo, hi)
        edges = numpy.linspace(lo, hi, bins + 1)
    return [float(e) for e in edges], [(n, [int(c) for c in numpy.histogram(vs, edges)[0]] if vs else None)
                                       for n, vs in clean]


def histogram_figure(title, x_label, binned, log_x=False):
    """Overlaid step outlines of histogram_bins' counts; a series with no values is named
    missing in the legend."""
    if binned is None:
        return no_data_figure(title)
    edges, counts = binned
    fig, ax = _titled(title)
    for (name, c), colour in zip(counts, colours([n for n, _ in counts])):
        c = c or [0] * (len(edges) - 1)
        ax.stairs(c, edges, fill=True, color=colour, alpha=0.15)
        ax.stairs(c, edges, color=colour, linewidth=1.6, label=name if any(c) else f"{name}: missing")
    if log_x:
        _log(ax.xaxis, ax.set_xscale, [edges[0], edges[-1]])
    ax.set_xlabel(x_label)
    ax.set_ylabel("samples")
    ax.grid(color="#e0e0e0")
    ax.set_axisbelow(True)
    _legend(ax, len(counts))
    return fig


def bar_chart(path, title, categories, series, y_label, y_max=None):
    save(bar_figure(title, categories, series, y_label, y_max), path, title)


def line_chart(path, title, x_label, y_label, series, log_x=False, log_y=False):
    save(line_figure(title, x_label, y_label, series, log_x, log_y), path, title)


def histogram(path, title, x_label, series, bins=30, log_x=False):
    """Returns what it drew, histogram_bins' (edges, [(name, counts)]) or None, for the
    data file beside the plot."""
    binned = histogram_bins(series, bins, log_x)
    save(histogram_figure(title, x_label, binned, log_x), path, title)
    return binned
