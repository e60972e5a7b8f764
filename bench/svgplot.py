"""svgplot: the benchmark harness's charts, written as plain SVG 1.1 with the standard library.

bench/run.py draws its plots (accuracy per workload and sampler, held time versus stack depth,
slowdown versus rate, latency histograms) with these three functions, so the benchmarks need
no plotting package. Every file is self-contained (no scripts, links or web fonts), 800x450,
with a title, labelled axes with numbered ticks and a legend when there is more than one series.

    bar_chart(path, title, categories, series, y_label, y_max=None)
    line_chart(path, title, x_label, y_label, series, log_x=False, log_y=False)
    histogram(path, title, x_label, series, bins=30, log_x=False)

Empty input gives a chart that says "no data". `python3 bench/svgplot.py DIR` writes a demo.
"""
import math
import os
import random
import sys
from xml.sax.saxutils import escape

W, H = 800, 450
PALETTE = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd",
           "#8c564b", "#e377c2", "#17becf", "#7f7f7f", "#bcbd22"]
GRID, AXIS, INK = "#e0e0e0", "#333333", "#222222"


def _esc(s):
    return escape(str(s), {'"': "&quot;"})


def _color(i):
    return PALETTE[i % len(PALETTE)]


def _fmt(v):
    """A tick or value label: few digits, no float noise, short exponents."""
    if v == 0:
        return "0"
    if 1 <= abs(v) < 1e6 and abs(v - round(v)) < 1e-9 * abs(v):
        return str(int(round(v)))
    s = "%.4g" % v
    return s.replace("e+0", "e").replace("e+", "e").replace("e-0", "e-")


def _nice_step(x):
    """The smallest 1, 2, 2.5 or 5 times a power of ten that is >= x (x > 0)."""
    mag = 10.0 ** math.floor(math.log10(x))
    for f in (1, 2, 2.5, 5, 10):
        if f * mag >= x * (1 - 1e-9):
            return f * mag
    return 10 * mag


def _lin_axis(lo, hi, zero=False):
    """(lo, hi, log=False, ticks) widened to whole tick steps; zero=True keeps 0 in range."""
    if zero:
        lo, hi = min(lo, 0.0), max(hi, 0.0)
    if hi <= lo:
        pad = abs(lo) * 0.1 or 1.0
        lo, hi = lo - pad, hi + pad
    step = _nice_step((hi - lo) / 5)
    a, b = math.floor(lo / step + 1e-9), math.ceil(hi / step - 1e-9)
    return (a * step, b * step, False, [i * step for i in range(a, b + 1)])


def _log_axis(lo, hi):
    """(lo, hi, log=True, ticks) over whole decades; 2 and 5 ticks too when few decades."""
    a = math.floor(math.log10(lo) + 1e-9)
    b = math.ceil(math.log10(hi) - 1e-9)
    if b <= a:
        b = a + 1
    every = max(1, math.ceil((b - a) / 8))
    ticks = [10.0 ** e for e in range(a, b + 1, every)]
    if b - a <= 2:
        ticks = sorted(ticks + [m * 10.0 ** e for e in range(a, b) for m in (2, 5)])
    return (10.0 ** a, 10.0 ** b, True, ticks)


def _scale(axis, p0, p1):
    lo, hi, log, _ = axis
    if log:
        lo, hi = math.log10(lo), math.log10(hi)

    def f(v):
        if log:
            v = math.log10(v)
        return p0 + (v - lo) / (hi - lo) * (p1 - p0)
    return f


def _text(x, y, s, size=11, anchor="middle", extra=""):
    return (f'<text x="{x:.1f}" y="{y:.1f}" font-size="{size}" text-anchor="{anchor}" '
            f'fill="{INK}"{extra}>{_esc(s)}</text>')


def _write(path, title, body):
    head = [
        '<?xml version="1.0" encoding="UTF-8"?>',
        f'<svg xmlns="http://www.w3.org/2000/svg" version="1.1" width="{W}" height="{H}" '
        f'viewBox="0 0 {W} {H}" font-family="sans-serif">',
        f'<title>{_esc(title)}</title>',
        f'<rect x="0" y="0" width="{W}" height="{H}" fill="white"/>',
        _text(W / 2, 26, title, 16, extra=' font-weight="bold"'),
    ]
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(head + body + ["</svg>", ""]))


def _no_data(path, title):
    _write(path, title, [_text(W / 2, H / 2, "no data", 20, extra=' fill-opacity="0.6"')])


def _legend(names, kind):
    """A row (wrapping) of swatches under the title; returns (svg parts, height used)."""
    if len(names) < 2:
        return [], 0
    out, x, y = [], 70.0, 50.0
    for i, name in enumerate(names):
        w = 30 + 6.5 * len(str(name))
        if x + w > W - 20 and x > 70:
            x, y = 70.0, y + 18
        c = _color(i)
        if kind == "line":
            out.append(f'<line x1="{x:.1f}" y1="{y - 4:.1f}" x2="{x + 18:.1f}" y2="{y - 4:.1f}" '
                       f'stroke="{c}" stroke-width="2"/>')
            out.append(f'<circle cx="{x + 9:.1f}" cy="{y - 4:.1f}" r="3" fill="{c}"/>')
        else:
            out.append(f'<rect x="{x + 3:.1f}" y="{y - 10:.1f}" width="12" height="12" '
                       f'fill="{c}" fill-opacity="{0.35 if kind == "hist" else 1}" stroke="{c}"/>')
        out.append(_text(x + 23, y, name, 12, "start"))
        x += w + 14
    return out, y - 50 + 18


def _frame(box, x_label, y_label, xax, yax):
    """Grid, ticks, numbers and axis labels for the plot box (left, top, right, bottom);
    xax None means a categorical x axis the caller labels. Returns (parts, fx, fy)."""
    left, top, right, bottom = box
    fy = _scale(yax, bottom, top)
    out = []
    for t in yax[3]:
        y = fy(t)
        out.append(f'<line x1="{left}" y1="{y:.1f}" x2="{right}" y2="{y:.1f}" stroke="{GRID}"/>')
        out.append(f'<line x1="{left - 5}" y1="{y:.1f}" x2="{left}" y2="{y:.1f}" stroke="{AXIS}"/>')
        out.append(_text(left - 8, y + 4, _fmt(t), 11, "end"))
    fx = None
    if xax is not None:
        fx = _scale(xax, left, right)
        for t in xax[3]:
            x = fx(t)
            out.append(f'<line x1="{x:.1f}" y1="{top}" x2="{x:.1f}" y2="{bottom}" stroke="{GRID}"/>')
            out.append(f'<line x1="{x:.1f}" y1="{bottom}" x2="{x:.1f}" y2="{bottom + 5}" '
                       f'stroke="{AXIS}"/>')
            out.append(_text(x, bottom + 18, _fmt(t), 11))
        out.append(_text((left + right) / 2, H - 12, x_label, 13))
    out.append(f'<polyline points="{left},{top} {left},{bottom} {right},{bottom}" fill="none" '
               f'stroke="{AXIS}" stroke-width="1.2"/>')
    cy = (top + bottom) / 2
    out.append(_text(18, cy, y_label, 13, extra=f' transform="rotate(-90 18 {cy:.1f})"'))
    return out, fx, fy


def bar_chart(path, title, categories, series, y_label, y_max=None):
    """Grouped vertical bars: series is [(name, [value or None per category])]."""
    values = [v for _, vs in series for v in vs if v is not None]
    if not categories or not series or not values:
        return _no_data(path, title)
    legend, lh = _legend([n for n, _ in series], "bar")
    longest = max(len(str(c)) for c in categories)
    bottom = H - min(170, 34 + 6.5 * longest * math.sin(math.radians(35)))
    # The labels slant down to the left from their group's centre: the plot starts far
    # enough right that the first one ends inside the picture.
    reach = 6.5 * len(str(categories[0])) * math.cos(math.radians(35)) + 8
    half = 0.5 / len(categories)  # the first centre is at left + half * (right - left)
    left = round(max(70.0, (reach - half * (W - 20)) / (1 - half)), 1)
    box = (left, 50 + lh, W - 20, bottom)
    top_v = y_max if y_max else _lin_axis(0.0, max(max(values), 0.0), zero=True)[1]
    if top_v <= 0:
        top_v = 1.0
    step = _nice_step(top_v / 5)
    ticks = [i * step for i in range(int(top_v / step + 1e-9) + 1)]
    out, _, fy = _frame(box, "", y_label, None, (0.0, top_v, False, ticks))
    left, _, right, _ = box
    group = (right - left) / len(categories)
    bw = group * 0.8 / len(series)
    for ci, cat in enumerate(categories):
        gx = left + ci * group
        for si, (_, vs) in enumerate(series):
            v = vs[ci] if ci < len(vs) else None
            x = gx + group * 0.1 + si * bw
            if v is None:  # a measurement that is missing says so where its bar would be
                mx, my = x + bw / 2 + 3, bottom - 4
                out.append(_text(mx, my, "missing", 8, "start",
                                 f' fill-opacity="0.6" transform="rotate(-90 {mx:.1f} {my:.1f})"'))
                continue
            y = fy(min(max(v, 0.0), top_v))
            out.append(f'<rect x="{x:.1f}" y="{y:.1f}" width="{max(bw - 1, 1):.1f}" '
                       f'height="{bottom - y:.1f}" fill="{_color(si)}"/>')
            if bw >= 16:
                out.append(_text(x + bw / 2, y - 3, _fmt(v), 8))
        cx, ly = gx + group / 2, bottom + 14
        out.append(_text(cx, ly, cat, 11, "end", f' transform="rotate(-35 {cx:.1f} {ly:.1f})"'))
    _write(path, title, legend + out)


def line_chart(path, title, x_label, y_label, series, log_x=False, log_y=False):
    """Markers joined by lines: series is [(name, [(x, y), ...])]; log axes are base 10."""
    clean = []
    for name, pts in series:
        keep = [(float(x), float(y)) for x, y in pts if x is not None and y is not None
                and (x > 0 or not log_x) and (y > 0 or not log_y)]
        clean.append((name, sorted(keep)))
    xs = [x for _, p in clean for x, _ in p]
    ys = [y for _, p in clean for _, y in p]
    if not xs:
        return _no_data(path, title)
    xax = _log_axis(min(xs), max(xs)) if log_x else _lin_axis(min(xs), max(xs))
    if log_y:
        yax = _log_axis(min(ys), max(ys))
    else:
        yax = _lin_axis(min(ys), max(ys), zero=min(ys) >= 0 and min(ys) < 0.3 * max(ys))
    legend, lh = _legend([n for n, _ in clean], "line")
    out, fx, fy = _frame((70, 50 + lh, W - 20, H - 50), x_label, y_label, xax, yax)
    for i, (_, pts) in enumerate(clean):
        c = _color(i)
        coords = " ".join(f"{fx(x):.1f},{fy(y):.1f}" for x, y in pts)
        if len(pts) > 1:
            out.append(f'<polyline points="{coords}" fill="none" stroke="{c}" stroke-width="1.8"/>')
        for x, y in pts:
            out.append(f'<circle cx="{fx(x):.1f}" cy="{fy(y):.1f}" r="3.2" fill="{c}"/>')
    _write(path, title, legend + out)


def histogram(path, title, x_label, series, bins=30, log_x=False):
    """Overlaid step outlines of counts per bin over the common range of all series' values."""
    clean = [(n, [float(v) for v in vs if v is not None and (v > 0 or not log_x)])
             for n, vs in series]
    allv = [v for _, vs in clean for v in vs]
    if not allv or bins < 1:
        return _no_data(path, title)
    lo, hi = min(allv), max(allv)
    if log_x:
        lo, hi = (lo / 1.5, hi * 1.5) if lo == hi else (lo, hi)
        a, b = math.log10(lo), math.log10(hi)
        edges = [10.0 ** (a + (b - a) * i / bins) for i in range(bins + 1)]
        pos = lambda v: (math.log10(v) - a) / (b - a)
        xax = _log_axis(lo, hi)
    else:
        lo, hi = (lo - 0.5, hi + 0.5) if lo == hi else (lo, hi)
        edges = [lo + (hi - lo) * i / bins for i in range(bins + 1)]
        pos = lambda v: (v - lo) / (hi - lo)
        xax = _lin_axis(lo, hi)
    counts = []
    for _, vs in clean:
        c = [0] * bins
        for v in vs:
            c[min(bins - 1, max(0, int(pos(v) * bins)))] += 1
        counts.append(c)
    yax = _lin_axis(0.0, float(max(max(c) for c in counts)), zero=True)
    legend, lh = _legend([n for n, _ in clean], "hist")
    bottom = H - 50
    out, fx, fy = _frame((70, 50 + lh, W - 20, bottom), x_label, "samples", xax, yax)
    for i, c in enumerate(counts):
        d = [f"M{fx(edges[0]):.1f},{bottom}"]
        for k in range(bins):
            d.append(f"V{fy(c[k]):.1f}H{fx(edges[k + 1]):.1f}")
        d.append(f"V{bottom}Z")
        out.append(f'<path d="{"".join(d)}" fill="{_color(i)}" fill-opacity="0.15" '
                   f'stroke="{_color(i)}" stroke-width="1.6"/>')
    _write(path, title, legend + out)


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: svgplot.py OUTDIR   (writes bar.svg, line.svg, histogram.svg)")
    out_dir = sys.argv[1]
    os.makedirs(out_dir, exist_ok=True)
    rng = random.Random(7)
    workloads = ["fib", "sieve", "loops", "mandel", "deep_recursion", "threads", "alloc<&>",
                 "strings", "calls", "closures", "json_parse", "matrix", "nbody", "spectral",
                 "binary_trees"]
    bar_chart(os.path.join(out_dir, "bar.svg"), "Accuracy per workload & sampler", workloads,
              [(s, [None if (k == 2 and j % 5 == 0) else rng.uniform(40, 100)
                    for j in range(len(workloads))])
               for k, s in enumerate(["cooperative", "signal (SIGPROF)", "async stub"])],
              "share of samples attributed correctly (%)", y_max=100)
    depths = [10, 20, 50, 100, 200, 500]
    line_chart(os.path.join(out_dir, "line.svg"), "Held time versus stack depth",
               "stack depth (frames)", "held time per sample (ns)",
               [("cooperative", [(d, 900 + 40 * d) for d in depths]),
                ("signal", [(d, 3000 + 120 * d) for d in depths]),
                ("signal + unwind", [(d, 5000 + 900 * d) for d in depths])],
               log_x=True, log_y=True)
    histogram(os.path.join(out_dir, "histogram.svg"), "Sample latency", "latency (ns)",
              [("cooperative", [rng.lognormvariate(7, 0.4) for _ in range(4000)]),
               ("signal", [rng.lognormvariate(8, 0.6) for _ in range(4000)])],
              bins=40, log_x=True)
    print("wrote bar.svg, line.svg, histogram.svg to", out_dir)
