"""The one way the end-to-end test scripts (test_cli.py, test_profiler.py, test_pages.py,
perf_map_test.py, test_bench_quick.py, ...) check things: `check(name, cond, detail)`
counts a pass, or counts a failure and prints `FAIL name` with the end of `detail`; `finish()`
prints `N passed, N failed` and exits with status 1 if anything failed. Also what several
of them run and read: `run_minivm`, `events` (a .jsonl profile) and `page_data` (a page's
embedded JSON)."""
import json
import re
import subprocess
import sys

passed = failed = 0


def check(name, cond, detail=""):
    global passed, failed
    if cond:
        passed += 1
    else:
        failed += 1
        print(f"FAIL {name}\n{str(detail)[-3000:]}", flush=True)
    return bool(cond)


def finish():
    print(f"{passed} passed, {failed} failed")
    sys.exit(1 if failed else 0)


def run_minivm(minivm, *args, timeout=300):
    """`minivm ARGS...` to its end: (exit status, stdout, stderr)."""
    p = subprocess.run([minivm, *args], capture_output=True, text=True, timeout=timeout)
    return p.returncode, p.stdout, p.stderr


def events(path):
    """The events of a .jsonl profile, one per line."""
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def page_data(html, element):
    """The JSON a page embeds in its <script type="application/json" id=ELEMENT>, parsed
    (read as JSON, never matched as text: its layout is the library's); {} without one."""
    m = re.search(rf'<script type="application/json" id="{element}">(.*?)</script>', html, re.S)
    return json.loads(m.group(1)) if m else {}
