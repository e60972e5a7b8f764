#!/usr/bin/env python3
"""The pages minivm writes, checked in a real headless Chromium (tests/browser.py): each
loads with no console error and no network request, its controls do what they say, and
a screenshot of each is left in the build tree for a person to look at.

Usage: test_pages.py MINIVM SCREENSHOT_DIR
Exits 77 (skipped) where Chromium or ChromeDriver is not installed.
"""
import decimal
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import browser  # noqa: E402
from checks import check, finish  # noqa: E402


def profile_page(minivm, tmp, program, *flags):
    out = os.path.join(tmp, os.path.basename(program).replace(".mini", ".html"))
    r = subprocess.run([minivm, "run", "--profile", *flags, f"--profile-out={out}", os.path.join(ROOT, program)],
                       capture_output=True, text=True, timeout=300)
    if r.returncode != 0 or not os.path.exists(out):
        sys.exit(f"minivm failed ({r.returncode}) writing {out}:\n{r.stderr[-2000:]}")
    return out


def flame_page(b, page, shots):
    b.open(page)
    errors, requests = b.console_errors(), b.network_requests()
    check("flame page: no console errors", errors == [], errors)
    check("flame page: no network requests", requests == [], requests)
    bars = b.js("return [...document.querySelectorAll('#graph div')].filter(d => d.node && d.node.f >= 0)"
                ".map(d => d.textContent)")
    check("flame page: the hot function is a bar", "work" in bars, bars)
    # Clicking a bar zooms into it (its callers stay, dimmed); reset zooms out.
    dimmed = ("return [...document.querySelectorAll('#graph div.dim')].filter(d => d.node && d.node.f >= 0)"
              ".map(d => d.textContent)")
    check("flame page: nothing dimmed before a zoom", b.js(dimmed) == [])
    b.js("const d = [...document.querySelectorAll('#graph div')].find(d => d.textContent === 'work');"
         "d.dispatchEvent(new MouseEvent('click', {bubbles: true}));")
    check("flame page: a click on a bar zooms into it (its caller dimmed)", "main" in b.js(dimmed))
    b.click("#reset")
    check("flame page: reset zooms out", b.js(dimmed) == [])
    b.type("#search", "work")
    info = b.text("#info")
    check("flame page: search reports matches", info.startswith("matched:"), info)
    b.screenshot(os.path.join(shots, "flame_page.png"))
    search_steps(b, shots)
    flame_layout(b, shots)
    reverse_view(b, shots)
    errors, requests = b.console_errors(), b.network_requests()
    check("flame page: no console errors after every control", errors == [], errors)
    check("flame page: no network requests after every control", requests == [], requests)


def mixed_page(b, page, shots):
    """--native-frames: C++ frames are bars of their own kind, in a colour no Mini kind has."""
    b.open(page)
    errors = b.console_errors()
    check("mixed page: no console errors", errors == [], errors)
    bars = b.js("return [...document.querySelectorAll('#graph div')].filter(d => d.node && d.node.f >= 0)"
                ".map(d => [d.textContent, d.style.background])")
    cpp = [bg for name, bg in bars if name.endswith("(cpp)")]
    mini = [bg for name, bg in bars if name in ("spin", "main", "busy")]
    check("mixed page: C++ frames are bars", any(name == "runtime::thread_main (cpp)" for name, _ in bars), bars[:8])
    check("mixed page: C++ frames are coloured apart from Mini frames",
          cpp and mini and not set(cpp) & set(mini), (cpp[:3], mini[:3]))
    legend = b.text("#legend")
    check("mixed page: the legend names the cpp kind", "cpp" in legend, legend)
    b.screenshot(os.path.join(shots, "mixed_page.png"))


def compare_page(minivm, tmp, program, *flags):
    out = os.path.join(tmp, "compare_" + os.path.basename(program).replace(".mini", ".html"))
    r = subprocess.run([minivm, "compare", *flags, "--html", out, os.path.join(ROOT, program)],
                       capture_output=True, text=True, timeout=300)
    if r.returncode != 0 or not os.path.exists(out):
        sys.exit(f"minivm compare failed ({r.returncode}) writing {out}:\n{r.stderr[-2000:]}")
    return out


def line_of(program, text):
    with open(os.path.join(ROOT, program)) as f:
        return next(n for n, line in enumerate(f, 1) if text in line)


def compare_checks(b, page, shots, hot_line, loop_header):
    b.open(page)
    errors, requests = b.console_errors(), b.network_requests()
    check("compare page: no console errors", errors == [], errors)
    check("compare page: no network requests", requests == [], requests)
    check("compare page: with complete debug info the reference is the exact oracle, no banner",
          "Reference: oracle (exact)." in b.text("#summary")
          and b.js("return document.getElementById('banner').hidden")
          and "knows exactly" in b.text("header"), b.text("header"))
    check("compare page: the run's configuration is stated",
          all(v in b.text("#config") for v in ("samplers: oracle", "--suspend=signal", "--debug-info=all")),
          b.text("#config"))
    budget = b.text("#budget")
    m = {k: float(v) for k, v in re.findall(r"(cooperative|classical|async|safepoint) (\d\.\d{3}) \[", budget)}
    check("compare page: the header states each sampler's bias budget, safepoint's beyond cooperative's",
          budget.startswith("bias budget") and sorted(m) == ["async", "classical", "cooperative", "safepoint"]
          and m["safepoint"] > m["cooperative"], budget)
    heads = b.js("return [...document.querySelectorAll('#src thead th')].map(th => th.textContent)")
    check("compare page: a heat column per sampler, the oracle first",
          len(heads) == 9 and heads[2].startswith("oracle") and any(h.startswith("safepoint") for h in heads), heads)
    polls = b.js("return [...document.querySelectorAll('#src td.poll')].map(td => td.textContent).join('')")
    check("compare page: lines with polls are marked", "R" in polls, polls)
    graphs = b.js("return [...document.querySelectorAll('.flame')].map(f => f.querySelectorAll('.fr').length)")
    check("compare page: an icicle graph per sampler, each with frames", len(graphs) == 5 and all(graphs), graphs)
    ticks = b.js("return document.querySelectorAll('#timeline rect').length")
    check("compare page: the timeline has a tick per sample", ticks > 20, ticks)
    check("compare page: the latency histogram and the per-poll-site table are drawn",
          b.js("return document.querySelectorAll('#latency rect').length") > 0
          and b.js("return document.querySelectorAll('#sites tr').length") > 1)
    site_heads = b.js("return [...document.querySelectorAll('#sites th')].map(th => th.textContent)")
    check("compare page: latency and time to safepoint say how much of them the thread was on a CPU",
          b.text("#latencyCpu").startswith("of which on a CPU: p50 ") and site_heads[-2:] == ["p50 on CPU", "p99 on CPU"],
          (b.text("#latency"), site_heads))
    b.click(f'#src tr[data-line="{hot_line}"]')
    title = b.text("#detailTitle")
    check("compare page: clicking a line selects it", title.startswith(f"Line {hot_line}:"), title)
    samplers = b.js("return [...document.querySelectorAll('#detailBody .samp h3')].map(h => h.firstChild.textContent)")
    check("compare page: the line's stacks under every sampler",
          samplers == ["oracle", "cooperative", "classical", "async", "safepoint"], samplers)
    stacks = b.js("return [...document.querySelectorAll('#detailBody .samp')].slice(0, 2)"
                  ".map(s => [...s.querySelectorAll('.stack b')].map(b => b.textContent))")
    check("compare page: the oracle's and the cooperative sampler's stacks have the line on top",
          all(st and all(f.endswith(f":{hot_line}") for f in st) for st in stacks), stacks)
    errors = b.console_errors()
    check("compare page: no console errors after a click", errors == [], errors)
    b.screenshot(os.path.join(shots, "compare_page.png"))
    confusion_checks(b, shots, hot_line, loop_header)
    b.js("document.querySelector('#flames').scrollIntoView()")
    b.screenshot(os.path.join(shots, "compare_page_graphs.png"))


def confusion_checks(b, shots, hot_line, loop_header):
    """Where the samples really were: the confusion matrices under the heat table and the
    side panel's pairing, against the oracle's line for the same interruptions."""
    picks = b.js("return [...document.querySelectorAll('#cmPick button')].map(x => x.textContent)")
    check("compare page: a confusion matrix to pick for every sampler but the oracle",
          sorted(picks) == ["async", "classical", "cooperative", "safepoint"], picks)
    # Each matrix's cells and failures add up to the interruptions it paired.
    sums = b.js("return D.confusion.map(m => [m.sampler, m.paired, m.agreed,"
                " [...m.cells, ...m.failed].reduce((a, c) => a + c[2], 0),"
                " m.cells.filter(c => c[0] === c[1]).reduce((a, c) => a + c[2], 0)])")
    check("compare page: each matrix's cells add up to its paired interruptions, its diagonal to those agreed",
          sums and all(paired == cells and agreed == diag and paired > 0 for _, paired, agreed, cells, diag in sums),
          sums)
    agree = {name: agreed / paired for name, paired, agreed, _, _ in sums if paired}
    check("compare page: the cooperative sampler is on the oracle's line for nearly every interruption, "
          "the safepoint sampler for few", agree.get("cooperative", 0) >= 0.95 and agree.get("safepoint", 1) < 0.5,
          agree)
    shown = b.js("return document.querySelector('#cmPick button.on').textContent")
    check("compare page: the matrix drawn first is the sampler that agrees least with the oracle",
          shown == min(agree, key=agree.get), (shown, agree))
    b.js("[...document.querySelectorAll('#cmPick button')].find(x => x.textContent === 'safepoint').click()")
    cols = b.js("return [...document.querySelectorAll('#cm thead th')].map(th => th.textContent)")
    check("compare page: the safepoint matrix has the oracle's hot line as a column", f"line {hot_line}" in cols, cols)
    # The safepoint row with the most interruptions: its biased line, which the oracle put
    # on the hot loop's line.
    row = b.js("const rows = [...document.querySelectorAll('#cm tbody tr')].filter(r => !r.querySelector('th.fail'));"
               "rows.sort((a, b) => +b.lastChild.textContent - +a.lastChild.textContent);"
               "const heads = [...document.querySelectorAll('#cm thead th')].map(th => th.textContent);"
               "const r = rows[0], cells = [...r.querySelectorAll('td')];"
               "return [r.querySelector('th').textContent, cells.map((td, i) => [heads[i + 1], td.textContent,"
               " td.classList.contains('diag')])]")
    label, cells = row if row else ("", [])
    # (How the loop's time splits between its body and its header is the CPU's own.)
    in_loop = sum(int(n) for head, n, _ in cells if head in (f"line {hot_line}", f"line {loop_header}") and n)
    check("compare page: the safepoint sampler's busiest line is off the diagonal, most of it the oracle's loop",
          label not in (f"line {hot_line}", f"line {loop_header}") and cells and in_loop * 2 > int(cells[-1][1]), row)
    # Every cell whose row and column are the same line is outlined, and no other (the
    # safepoint sampler's busiest lines may share none with the oracle's: then none is).
    cells = b.js("const heads = [...document.querySelectorAll('#cm thead th')].map(th => th.textContent);"
                 "return [...document.querySelectorAll('#cm tbody td:not(.tot)')].map(td => ["
                 " td.parentNode.querySelector('th').textContent, heads[[...td.parentNode.children].indexOf(td)],"
                 " td.classList.contains('diag')])")
    wrong = [c for c in cells or [] if c[2] != (c[0] == c[1] and c[0] != "other lines")]
    check(f"compare page: the outlined cells are the diagonal, the same line for both "
          f"({sum(c[2] for c in cells or [])} of {len(cells or [])} cells)", cells and not wrong, wrong[:5])
    b.js("[...document.querySelectorAll('#cm th.row')].find(th => th.textContent === arguments[0]).click()", label)
    title = b.text("#detailTitle")
    check("compare page: a click on a matrix row selects its line", label and title.startswith(label.replace("line", "Line")), (label, title))
    really = b.js("const box = [...document.querySelectorAll('#detailBody .samp')].find(s => s.querySelector('h3')"
                  ".firstChild.textContent === 'safepoint'); const r = box && box.querySelector('.really');"
                  "return r ? r.textContent : null")
    check("compare page: the side panel says what the safepoint samples on that line really were, the loop first",
          really and re.match(rf"These \d+ safepoint samples were really: line ({hot_line}|{loop_header}) \u00d7\d+",
                              really), really)
    b.click(f'#src tr[data-line="{hot_line}"]')
    moved = b.js("const box = [...document.querySelectorAll('#detailBody .samp')].find(s => s.querySelector('h3')"
                 ".firstChild.textContent === 'safepoint'); const r = box && box.querySelector('.moved');"
                 "return r ? r.textContent : null")
    check("compare page: on the hot line the side panel says where the safepoint sampler put the oracle's interruptions",
          moved and moved.startswith("Of the ") and f"{label} \u00d7" in moved, moved)
    b.js("[...document.querySelectorAll('#cmPick button')].find(x => x.textContent === 'cooperative').click()")
    check("compare page: picking another sampler draws its matrix",
          b.text("#cmNote").startswith("cooperative: on the oracle's line for "), b.text("#cmNote"))
    errors = b.console_errors()
    check("compare page: no console errors after the matrix's controls", errors == [], errors)
    b.js("document.querySelector('#confusion').scrollIntoView()")
    b.screenshot(os.path.join(shots, "compare_page_confusion.png"))


# Under --debug-info=safepoints the oracle knows only the polls and calls: the page labels
# it so, shows a banner and never calls it exact.
def safepoint_debug_info_compare_checks(b, page, shots):
    b.open(page)
    errors = b.console_errors()
    check("compare page, safepoint debug info: no console errors", errors == [], errors)
    check("compare page, safepoint debug info: the reference is labelled by its debug info",
          "Reference: oracle (safepoint debug info)." in b.text("#summary"), b.text("#summary"))
    check("compare page, safepoint debug info: a visible banner says the oracle is only as exact as the debug info",
          not b.js("return document.getElementById('banner').hidden")
          and "only as exact as the debug info" in b.text("#banner"), b.text("header"))
    check("compare page, safepoint debug info: nothing calls the oracle exact",
          "(exact" not in b.text("header") and "knows exactly" not in b.text("header"), b.text("header"))
    check("compare page, safepoint debug info: the configuration names it",
          "--debug-info=safepoints" in b.text("#config"), b.text("#config"))
    b.screenshot(os.path.join(shots, "compare_page_safepoint_debug_info.png"))


# A program that collects: each collection is a band across the timeline's rows, with its
# pause, time to safepoint and last thread to stop in its tooltip. On a loaded machine the
# first samples may come after every collection (12 samples, all later, once in CI), so
# the page is made again, up to three times, until some collection lies in the timeline.
def gc_compare_checks(b, make_page, shots):
    for attempt in range(3):
        b.open(make_page())
        wanted = b.js("const D = JSON.parse(document.getElementById('compare-data').textContent);"
                      "const t = D.events.filter(e => e.time_ns !== undefined && e.event !== 'GarbageCollection')"
                      "  .map(e => e.time_ns);"
                      "const t0 = Math.min(...t), t1 = Math.max(...t);"
                      "return D.events.filter(e => e.event === 'GarbageCollection' && e.time_ns <= t1 &&"
                      "  e.time_ns + e.pause_ns >= t0).length")
        if wanted > 0:
            break
    errors = b.console_errors()
    check("compare page, collections: no console errors", errors == [], errors)
    titles = b.js("return [...document.querySelectorAll('#timeline .gc-band title')].map(t => t.textContent)")
    check("compare page, collections: one band per collection in the timeline's span", wanted > 0 and
          len(titles) == wanted, (wanted, titles[:3]))
    check("compare page, collections: each band says its pause, time to safepoint and who stopped last",
          all(re.match(r"collection \d+ \((young|full), [a-z -]+\): pause .+, time to safepoint .+, "
                       r"(last to stop: (main|thread \d+)|no thread waited for)$", t) for t in titles), titles[:3])
    check("compare page, collections: the legend names the bands", "garbage collection" in b.text("#timelineLegend"),
          b.text("#timelineLegend"))
    b.screenshot(os.path.join(shots, "compare_page_collections.png"))
# A click on the timeline picks the interruption nearest in time and shows what every
# sampler recorded for it, the oracle first: each cell is that sampler's event for the same
# interruption id (its stack top first, or its failure or drop with the reason).
def timeline_pick_checks(b, shots):
    b.js("const s = document.querySelector('#timeline svg'); s.scrollIntoView();"
         "const r = s.getBoundingClientRect();"
         "s.dispatchEvent(new MouseEvent('click', {bubbles: true, clientX: r.left + r.width * 0.6, "
         "clientY: r.top + 10}));")
    title = b.text("#interruption h3")
    m = re.match(r"Interruption (\d+), thread \d+, at [\d.]+ ms", title)
    check("compare page: a click on the timeline picks one interruption", m, title)
    if not m:
        return
    sid = int(m.group(1))
    want = b.js(f"""const D = JSON.parse(document.getElementById('compare-data').textContent);
      return D.columns.map(c => {{ const e = D.events.find(e => e.sample === {sid} && e.sampler === c &&
        e.event !== 'SafepointLatency'); return !e ? null : e.stack ? e.stack[0].function + ':' + (e.stack[0].line || '?')
        : e.reason; }});""")
    shown = b.js("return [...document.querySelectorAll('#interruption table.one td')].map(td => [td.dataset.sampler, "
                 "(td.querySelector('.topf') || td.querySelector('.biased') || td).textContent])")
    columns = b.js("return JSON.parse(document.getElementById('compare-data').textContent).columns")
    check("compare page: the interruption's panel has a column per sampler, the oracle first",
          [s for s, _ in shown] == columns and columns[0] == "oracle", shown)
    check("compare page: each column is that sampler's event for the same interruption: its top frame, or why it "
          "failed or was dropped",
          len(shown) == len(want) and all(w is not None and (t.startswith(w) or t.endswith(w))
                                          for (_, t), w in zip(shown, want)), (shown, want))
    check("compare page: the picked interruption is marked on the timeline",
          b.js("return +document.getElementById('tlPick').getAttribute('x')") > 0)
    errors = b.console_errors()
    check("compare page: no console errors after picking an interruption", errors == [], errors)
    b.js("document.getElementById('interruption').scrollIntoView()")
    b.screenshot(os.path.join(shots, "compare_page_interruption.png"))


# `compare --diff BEFORE AFTER --html`: two saved runs of the same program, complete debug
# info then --debug-info=safepoints, set side by side; both configurations stamped.
def sweep_checks(b, minivm, tmp, shots):
    """compare --sweep --html: the bias budget against each value, drawn as it is rendered."""
    out = os.path.join(tmp, "compare_sweep.html")
    r = subprocess.run([minivm, "compare", "--xcomp", "--sweep", "strip-mining=0,64,1048576", "--html", out,
                        os.path.join(ROOT, "examples", "counted_loop_then_setter.mini")],
                       capture_output=True, text=True, timeout=600)
    check("sweep page: written", r.returncode == 0 and os.path.exists(out), r.stderr[-1500:])
    if not os.path.exists(out):
        return
    b.open(out)
    errors, requests = b.console_errors(), b.network_requests()
    check("sweep page: no console errors, no network requests", errors == [] and requests == [], (errors, requests))
    charts = b.js("return [...document.querySelectorAll('svg')].map(s => [s.querySelectorAll('polyline').length, "
                  "s.querySelectorAll('circle').length, s.getBoundingClientRect().width])")
    check("sweep page: two charts, a line per sampler but the oracle, a point per value, drawn with a width",
          len(charts) == 2 and all(c[0] == 4 and c[1] == 12 and c[2] > 300 for c in charts), charts)
    tips = b.js("return [...document.querySelectorAll('svg circle title')].map(t => t.textContent)")
    check("sweep page: each point's tooltip names its sampler, value and budget with its range",
          all(re.match(r"(cooperative|classical|async|safepoint) (0|64|1048576): \d\.\d{3} \[\d\.\d{3}, \d\.\d{3}\]$", t)
              for t in tips) and len(tips) == 24, tips[:4])
    b.screenshot(os.path.join(shots, "compare_sweep.png"))


def diff_page(minivm, tmp, before, after):
    out = os.path.join(tmp, "compare_diff.html")
    r = subprocess.run([minivm, "compare", "--diff", before, after, "--html", out], capture_output=True, text=True,
                       timeout=60)
    if r.returncode != 0 or not os.path.exists(out):
        sys.exit(f"minivm compare --diff failed ({r.returncode}) writing {out}:\n{r.stderr[-2000:]}")
    return out


def to_fixed_1(v):
    """JavaScript's v.toFixed(1): a tie on the double's exact value rounds up (95.25 is
    "95.3"), where Python's format rounds it to even ("95.2")."""
    return str(decimal.Decimal(v).quantize(decimal.Decimal("0.1"), rounding=decimal.ROUND_HALF_UP))


def diff_checks(b, page, shots, hot_line):
    b.open(page)
    errors, requests = b.console_errors(), b.network_requests()
    check("diff page: no console errors", errors == [], errors)
    check("diff page: no network requests", requests == [], requests)
    before, after = b.text("#before"), b.text("#after")
    check("diff page: both runs' configurations stamped side by side, each with its file and reference",
          "Before:" in before and "--debug-info=all" in before and "oracle (exact)" in before
          and "After:" in after and "--debug-info=safepoints" in after and "oracle (safepoint debug info)" in after
          and "--debug-info=safepoints" not in before, (before, after))
    data = b.js("return JSON.parse(document.getElementById('diff-data').textContent)")
    shown = b.js("return [...document.querySelectorAll('#src tr.line')].map(tr => "
                 "[...tr.querySelectorAll('td.before, td.after')].map(td => td.textContent))")
    want = [[("-" if v is None else "." if v == 0 else to_fixed_1(v)) for pair in zip(r["b"], r["a"]) for v in pair]
            for r in data["rows"]]
    check("diff page: a row per line, each sampler's before and after shares as the data says",
          len(shown) == len(data["rows"]) > 0 and shown == want, (shown[:4], want[:4]))
    k = next((i for i, r in enumerate(data["rows"]) if r["line"] == hot_line), None)
    check(f"diff page: the loop's line {hot_line} is a row", k is not None, [r["line"] for r in data["rows"]])
    if k is None:
        return
    r = data["rows"][k]
    change = b.js(f"return document.querySelectorAll('#src tr.line')[{k}].querySelector('td.change').textContent")
    check("diff page: the oracle's change on the loop's line is after - before, in points",
          change == f"{r['a'][0] - r['b'][0]:+.1f}", (change, r))
    b.js(f"document.querySelectorAll('#src tr.line')[{k}].dispatchEvent(new MouseEvent('click', {{bubbles: true}}))")
    title = b.text("#detailTitle")
    panel = b.js("return [...document.querySelectorAll('#detailBody .samp')].map(d => [d.dataset.sampler, d.textContent])")
    check("diff page: clicking a line selects it", title.startswith(f"Line {hot_line}:")
          and b.js(f"return document.querySelectorAll('#src tr.line')[{k}].classList.contains('sel')"), title)
    check("diff page: the side panel gives every sampler's samples on the line before and after",
          [p[0] for p in panel] == data["columns"]
          and all(f"before {r['b'][i]:.1f}% ({r['cb'][i]} of {data['samplesBefore'][i]})" in p[1]
                  and "after " in p[1] for i, p in enumerate(panel)), panel)
    errors = b.console_errors()
    check("diff page: no console errors after a click", errors == [], errors)
    b.screenshot(os.path.join(shots, "compare_diff_page.png"))


ROOT_BAR = "return [...document.querySelectorAll('#graph div')].find(d => d.node && d.node.f < 0)"
# The current match: its label and the row (depth) it is drawn in.
CURRENT = "const d = document.querySelector('#graph .f.cur'); return d ? [d.node.f, d.row, d.node.v] : null"


def search_steps(b, shots):
    """Next / previous match: the buttons and Enter / Shift+Enter in the search box."""
    b.click("#reset")
    b.type("#search", "/./")  # every frame matches
    n = b.js("return document.querySelectorAll('#graph .f.match').length")
    check("flame page: a search matches several frames", n >= 2, n)
    check("flame page: no current match before next", b.js(CURRENT) is None)
    b.click("#next")
    first = b.js(CURRENT)
    check("flame page: next makes the first match current (outlined), and says which",
          first is not None and b.text("#info").startswith("match 1 of "), (first, b.text("#info")))
    b.type("#search", "\ue007")  # Enter
    second = b.js(CURRENT)
    check("flame page: Enter in the search box goes to the next match",
          second is not None and second != first and b.text("#info").startswith("match 2 of "), (second, b.text("#info")))
    b.click("#prev")
    check("flame page: previous goes back to the first", b.js(CURRENT) == first, b.js(CURRENT))
    b.type("#search", "\ue008\ue007\ue000")  # Shift+Enter: from the first, round to the last
    last = b.text("#info")
    words = last.split()
    check("flame page: Shift+Enter goes to the previous match (from the first, the last)",
          len(words) > 3 and words[0] == "match" and words[1] == words[3], last)
    check("flame page: the current match is on screen",
          b.js("const d = document.querySelector('#graph .f.cur'); if (!d) return false;"
               "const r = d.getBoundingClientRect(); return r.bottom > 0 && r.top < innerHeight && r.width > 0"))
    b.screenshot(os.path.join(shots, "flame_page_match.png"))
    b.click("#reset")


def flame_layout(b, shots):
    """The flame toggle puts the root at the bottom, and back at the top."""
    tops = "return [...document.querySelectorAll('#graph div')].filter(d => d.node).map(d => parseFloat(d.style.top))"
    root_top = ROOT_BAR + ".style.top"
    y_of = lambda script: float(b.js(script.replace("return ", "return parseFloat(", 1) + ")"))
    check("flame page: icicle first, the root bar on top", y_of(root_top) == 0)
    b.click("#flame")
    all_tops, root = b.js(tops), y_of(root_top)
    check("flame page: after the flame toggle the root bar is at the bottom",
          all_tops and root == max(all_tops) and root > 0
          and b.js("return document.querySelector('#flame').classList.contains('on')"), (root, all_tops))
    above = b.js("const y = (t) => parseFloat([...document.querySelectorAll('#graph div')]"
                 ".find(d => d.textContent === t).style.top); return y('work') < y('main')")
    check("flame page: in the flame layout a callee is drawn above its caller", above is True)
    b.screenshot(os.path.join(shots, "flame_page_flame.png"))
    b.click("#flame")
    check("flame page: toggled back, the root is on top again", y_of(root_top) == 0)


def reverse_view(b, shots):
    """The reverse (callers) view: the first row under the root is the frames with self
    samples, each as wide as its self count; below each, its callers."""
    self_frames = b.js("const out = {}, todo = [document.querySelector('#graph div').node];"
                       "while (todo.length) { const n = todo.pop(); (n.c || []).forEach(c => todo.push(c));"
                       " if (n.f >= 0 && n.s) out[n.f] = (out[n.f] || 0) + n.s; } return out")
    b.click("#reverse")
    first_row = b.js("const out = {}; [...document.querySelectorAll('#graph div')].filter(d => d.node && d.row === 1)"
                     ".forEach(d => { out[d.node.f] = (out[d.node.f] || 0) + d.node.v; }); return out")
    check("flame page: in the reverse view the top-level bars are the self frames, with their self counts",
          self_frames and first_row == self_frames, (first_row, self_frames))
    below = b.js("const d = [...document.querySelectorAll('#graph div')].find(d => d.textContent === 'work' && d.row === 1);"
                 "return d ? [...document.querySelectorAll('#graph div')].filter(e => e.row === 2 && e.node.p === d.node)"
                 ".map(e => e.textContent) : null")
    check("flame page: in the reverse view a self frame's callers are below it (work, then main)",
          below == ["main"], below)
    check("flame page: the reverse view says so", "callers" in b.js(ROOT_BAR + ".textContent"))
    b.screenshot(os.path.join(shots, "flame_page_reverse.png"))
    b.click("#flame")
    b.screenshot(os.path.join(shots, "flame_page_reverse_flame.png"))
    b.click("#flame")
    b.click("#reverse")
    check("flame page: reverse toggled off, the first row is main again",
          b.js("return [...document.querySelectorAll('#graph div')].filter(d => d.node && d.row === 1)"
               ".map(d => d.textContent)") == ["main"])


# async-profiler's --title and --reverse: the page is named so, and opens in its reverse view.
def titled_reverse_page(b, page, shots):
    b.open(page)
    errors = b.console_errors()
    check("flame page --title --reverse: no console errors", errors == [], errors)
    check("flame page --title: the page and its header are named so",
          b.js("return document.title") == "CPU <profile>" and b.text("#title") == "CPU <profile>",
          (b.js("return document.title"), b.text("#title")))
    check("flame page --reverse: it opens in the reverse view, its button pressed",
          b.js("return document.getElementById('reverse').getAttribute('aria-pressed')") == "true"
          and "callers" in b.js(ROOT_BAR + ".textContent"), b.js(ROOT_BAR + ".textContent"))
    b.screenshot(os.path.join(shots, "flame_page_title_reverse.png"))


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    browser.skip_without_browser("test_pages")
    minivm, shots = sys.argv[1], sys.argv[2]
    os.makedirs(shots, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp, browser.Browser() as b:
        flame_page(b, profile_page(minivm, tmp, "examples/counted_loop_then_setter.mini", "--xcomp",
                                   "--sampler=all"), shots)
        mixed_page(b, profile_page(minivm, tmp, "examples/native_beside_java.mini", "--native-frames",
                                   "--interval=500us", "-D", "ROUNDS=200"), shots)
        titled_reverse_page(b, profile_page(minivm, tmp, "examples/counted_loop_then_setter.mini", "--xcomp",
                                            "--title", "CPU <profile>", "--reverse"), shots)
        program = "examples/counted_loop_then_setter.mini"
        full, lean = os.path.join(tmp, "all.json"), os.path.join(tmp, "safepoints.json")
        compare_checks(b, compare_page(minivm, tmp, program, "--xcomp", "--save", full), shots,
                       line_of(program, "acc = acc * 31"), line_of(program, "for i in 0..n"))
        timeline_pick_checks(b, shots)
        safepoint_debug_info_compare_checks(
            b, compare_page(minivm, tmp, program, "--xcomp", "--debug-info=safepoints", "--save", lean), shots)
        diff_checks(b, diff_page(minivm, tmp, full, lean), shots, line_of(program, "acc = acc * 31"))
        gc_compare_checks(b, lambda: compare_page(minivm, tmp, "tests/programs/gc_churn_small_heap.mini", "--heap=4m",
                                                  "--interval=200us"), shots)
        sweep_checks(b, minivm, tmp, shots)
    print(f"screenshots in {shots}")
    finish()


if __name__ == "__main__":
    main()
