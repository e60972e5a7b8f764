#!/usr/bin/env python3
"""The pages minivm writes, checked in a real headless Chromium (tests/browser.py): each
loads with no console error and no network request, its controls do what they say, and
a screenshot of each is left in the build tree for a person to look at.

Usage: test_pages.py MINIVM SCREENSHOT_DIR
Exits 77 (skipped) where Chromium or ChromeDriver is not installed.
"""
import os
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
    errors = b.console_errors()
    check("flame page: no console errors after clicks and search", errors == [], errors)
    b.screenshot(os.path.join(shots, "flame_page.png"))


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


def compare_checks(b, page, shots, hot_line):
    b.open(page)
    errors, requests = b.console_errors(), b.network_requests()
    check("compare page: no console errors", errors == [], errors)
    check("compare page: no network requests", requests == [], requests)
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
    b.js("document.querySelector('#flames').scrollIntoView()")
    b.screenshot(os.path.join(shots, "compare_page_graphs.png"))


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    browser.skip_without_browser("test_pages")
    minivm, shots = sys.argv[1], sys.argv[2]
    os.makedirs(shots, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp, browser.Browser() as b:
        flame_page(b, profile_page(minivm, tmp, "examples/counted_loop_then_setter.mini", "--xcomp",
                                   "--sampler=all"), shots)
        program = "examples/counted_loop_then_setter.mini"
        compare_checks(b, compare_page(minivm, tmp, program, "--xcomp"), shots, line_of(program, "acc = acc * 31"))
    print(f"screenshots in {shots}")
    finish()


if __name__ == "__main__":
    main()
