"""The one way the end-to-end test scripts (test_cli.py, test_profiler.py, test_pages.py,
perf_map_test.py, test_bench_quick.py, ...) check things: `check(name, cond, detail)`
counts a pass, or counts a failure and prints `FAIL name` with the end of `detail`; `finish()`
prints `N passed, N failed` and exits with status 1 if anything failed."""
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
