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


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    browser.skip_without_browser("test_pages")
    minivm, shots = sys.argv[1], sys.argv[2]
    os.makedirs(shots, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp, browser.Browser() as b:
        flame_page(b, profile_page(minivm, tmp, "examples/counted_loop_then_setter.mini", "--xcomp",
                                   "--sampler=all"), shots)
    print(f"screenshots in {shots}")
    finish()


if __name__ == "__main__":
    main()
