#!/usr/bin/env python3
"""`minivm compare` end to end: its --help and usage errors, then the terminal listing on
two examples: a column per sampler with the oracle first, the poll marks of the mode
that ran, the hot lines the examples' comments name (found by their text, so that a
comment's line numbers and the check cannot drift apart), at most one screen, the exit
status; the header's configuration (every code-shape and sampling option named, the
oracle called exact only with complete debug info); and --html writes one
self-contained page that says the same. Prints `N passed, N failed`."""
import os
import re
import subprocess
import sys
import tempfile

from checks import check, finish, page_data

MINIVM = sys.argv[1]
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
SAMPLERS = ["oracle", "cooperative", "classical", "async", "safepoint"]
SCREEN = 60


def run(*args, env=None):
    p = subprocess.run([MINIVM, *args], capture_output=True, text=True, timeout=300, env=env)
    return p.returncode, p.stdout, p.stderr


def usage_error(rc, err, *needles):
    return rc == 2 and "Try 'minivm compare --help'" in err and all(n in err for n in needles)


def line_of(path, text, after=0):
    """The number of the first line after `after` that contains `text`."""
    with open(path) as f:
        for n, line in enumerate(f, 1):
            if n > after and text in line:
                return n
    raise SystemExit(f"{path}: no line with {text!r}")


def table(out):
    """The listing's rows: line -> (poll marks, {sampler: percent}, the row's text), and
    the columns. Each column's cells end where its right-aligned name ends."""
    lines = out.splitlines()
    head = next(i for i, l in enumerate(lines) if re.match(r"\s*line\s+poll\s", l))
    header = lines[head]
    columns = header.split()[2:-1]
    spans, pos = [], 0
    for name in columns:
        end = header.index(name, pos) + len(name)
        spans.append((name, max(end - max(len(name), 6), 0), end))
        pos = end
    rows = {}
    for l in lines[head + 2:]:
        if not l.strip():
            break
        m = re.match(r"\s*(\d+) (.{4})", l)
        if not m:
            continue
        shares = {}
        for name, a, b in spans:
            cell = l[a:b].strip()
            shares[name] = float(cell) if re.fullmatch(r"\d+\.\d", cell) else 0.0
        rows[int(m.group(1))] = (m.group(2).strip(), shares, l)
    return columns, rows


def top_line(rows, sampler):
    return max(rows, key=lambda n: rows[n][1].get(sampler, 0.0))


rc, out, err = run("compare", "--help")
check("compare --help exits 0 and names --html and the run options it reuses",
      rc == 0 and "--html" in out and "--xint" in out and "--interval" in out and "--stub-metadata" in out, out + err)
check("compare --help leaves out the options compare decides itself",
      "--sampler" not in out and "--profile-out" not in out, out)
rc, out, err = run("help", "compare")
check("minivm help compare prints compare's options", rc == 0 and "--html" in out, err)
rc, out, err = run("--help")
check("minivm --help lists compare", rc == 0 and "minivm compare" in out, err)
rc, out, err = run("compare")
check("compare without a program is a usage error", usage_error(rc, err, "compare needs a program file"), err)
rc, out, err = run("compare", "/nonexistent/prog.mini")
check("compare of a missing file exits 2 naming it", rc == 2 and "/nonexistent/prog.mini" in err, err)
prog = os.path.join(ROOT, "examples", "interpreted_only.mini")
rc, out, err = run("compare", "--no-such-flag", prog)
check("compare with an unknown flag is a usage error", usage_error(rc, err, "unknown option '--no-such-flag'"), err)
rc, out, err = run("compare", "--sampler=all", prog)
check("compare refuses --sampler (it runs them all)", usage_error(rc, err, "--sampler"), err)
rc, out, err = run("compare", "--interval=3", prog)
check("compare checks run's option values", usage_error(rc, err, "--interval"), err)
rc, out, err = run("compare", "--html", "/nonexistent/dir/p.html", prog)
check("compare --html into a missing directory is refused before the run", usage_error(rc, err, "--html"), err)

# interpreted_only under --xint: the interpreter polls at the inner loop's backward branch
# (line 11); the work is on lines 12-13, where the oracle and the cooperative sampler see it.
rc, out, err = run("compare", "--xint", "--interval=500us", prog)
check("interpreted_only --xint: exit status 0, nothing on stderr", rc == 0 and err == "", err)
check("interpreted_only --xint: the header says the code-shape options shaped nothing",
      "(unused: --xint compiles nothing)" in out and "code interpreted (--xint)" in out, out)
check(f"interpreted_only --xint: fits one screen ({SCREEN} lines)", len(out.splitlines()) <= SCREEN,
      f"{len(out.splitlines())} lines\n{out}")
columns, rows = table(out)
check("interpreted_only: one column per sampler, the oracle first", columns == SAMPLERS, columns)
inner = line_of(prog, "for i in 0..len(a)")
body = {line_of(prog, "a[i] = a[i]"), line_of(prog, "s += a[i]")}
check("interpreted_only: the inner loop's line holds the interpreter's backward-branch poll",
      inner in rows and "B" in rows[inner][0], out)
check("interpreted_only: the oracle's hottest line is in the loop body", top_line(rows, "oracle") in body, out)
check("interpreted_only: the cooperative sampler's hottest line is in the loop body",
      top_line(rows, "cooperative") in body, out)
check("interpreted_only: the safepoint sampler puts more on the latch than the oracle does",
      rows[inner][1]["safepoint"] > rows[inner][1]["oracle"] + 10, out)
check("interpreted_only: the per-sampler accounting lists every sampler",
      all(re.search(rf"^{s}\s+\d+\s+\d+\s+\d+\s+\d+", out, re.M) for s in SAMPLERS), out)
check("interpreted_only: a marked line names a sampler and its distance in points",
      re.search(r"<== [\w, ]+ off by [\d.]+ pt", out), out)

# counted_loop_then_setter under --xcomp: no poll in the counted loop (line 19), the next
# one at the setter's return; the biased sampler charges the loop to `store`.
prog = os.path.join(ROOT, "examples", "counted_loop_then_setter.mini")
rc, out, err = run("compare", "--xcomp", "--interval=500us", prog)
check("counted_loop_then_setter --xcomp: exit status 0", rc == 0, err)
check(f"counted_loop_then_setter --xcomp: fits one screen ({SCREEN} lines)", len(out.splitlines()) <= SCREEN,
      f"{len(out.splitlines())} lines\n{out}")
columns, rows = table(out)
check("counted_loop_then_setter: the oracle first", columns == SAMPLERS, columns)
loop = line_of(prog, "acc = acc * 31")
header = line_of(prog, "for i in 0..n")
store_begin = line_of(prog, "fn store")
store_end = line_of(prog, "}", after=store_begin)
check("counted_loop_then_setter: the counted loop has one mark, its strip-mined latch's",
      header in rows and rows[header][0] == "S", out)
check("counted_loop_then_setter: store's closing line holds a return poll",
      store_end in rows and "R" in rows[store_end][0], out)
# How the loop's time splits between its body and its header is the CPU's own; that the
# oracle's hottest line is one of the two, and the cooperative sampler's the same, is not.
check("counted_loop_then_setter: the oracle's hottest line is the loop's, body or header",
      top_line(rows, "oracle") in (loop, header), out)
check("counted_loop_then_setter: the cooperative sampler's hottest line is the oracle's",
      top_line(rows, "cooperative") == top_line(rows, "oracle"), out)
check("counted_loop_then_setter: the safepoint sampler's hottest line is in store",
      store_begin <= top_line(rows, "safepoint") <= store_end, out)
check("counted_loop_then_setter: the listing says the interruption rate achieved against the one asked for",
      re.search(r"^rate: \d+ of \d+ interruptions asked for \([\d.]+%\): [\d.]+/s per running thread against "
                r"2000/s$", out, re.M), out)
marked = [n for n, r in rows.items() if re.search(r"<== [\w, ]*safepoint", r[2])]
check("counted_loop_then_setter: the safepoint sampler's disagreement is marked", marked, out)
# Where the samples really were: each sampler's line set against the oracle's for the same
# interruptions. The safepoint sampler's samples in store were really the loop's; the
# cooperative sampler is on the oracle's line for (nearly) every interruption.
really = re.search(r"^safepoint +on the oracle's line for (\d+) of (\d+) interruptions\n((?:  .*\n)*)", out, re.M)
check("counted_loop_then_setter: the safepoint sampler is off the oracle's line for most interruptions",
      really and int(really.group(2)) > 0 and int(really.group(1)) < int(really.group(2)) / 2, out)
first = really.group(3).splitlines()[0] if really and really.group(3) else ""
m = re.match(r"  line (\d+): (\d+) samples, really line (\d+) x(\d+)", first)
check("counted_loop_then_setter: the safepoint sampler's line furthest off is in store and was really the loop's",
      m and store_begin <= int(m.group(1)) <= store_end and int(m.group(3)) in (loop, header)
      and int(m.group(4)) <= int(m.group(2)), first or out)
coop = re.search(r"^cooperative +on the oracle's line for (\d+) of (\d+) interruptions", out, re.M)
check("counted_loop_then_setter: the cooperative sampler is on the oracle's line for nearly every interruption",
      coop and int(coop.group(2)) > 0 and int(coop.group(1)) >= 0.95 * int(coop.group(2)), out)

# The bias budget: each sampler's distance from the oracle's profile. Cooperative sees what
# the oracle sees; the safepoint sampler moves most of the loop's time to store's poll.
budget = {m.group(1): (float(m.group(2)), float(m.group(3)), float(m.group(4)), float(m.group(5)))
          for m in re.finditer(r"^  (\w+) +(\d\.\d{3}) \[(\d\.\d{3}), (\d\.\d{3})\] +(\d\.\d{3}) ", out, re.M)}
check("counted_loop_then_setter: a bias budget for every sampler but the oracle, in the listing",
      "Bias budget:" in out and sorted(budget) == sorted(s for s in SAMPLERS if s != "oracle"), out[-1500:])
check("counted_loop_then_setter: cooperative's budget is within its sampling range, safepoint's far beyond it",
      budget.get("cooperative", (1,))[0] <= budget.get("cooperative", (0, 0, 0))[2] and
      budget.get("safepoint", (0,))[0] >= 0.5 and budget["safepoint"][1] > budget["cooperative"][2], budget)

check("without --debug-info=safepoints no debug-info note", "--debug-info=safepoints" not in out, out)
check("with defaults the header calls the oracle exact",
      "the oracle (exact, from complete metadata) is the reference" in out, out)
check("with defaults the header states the samplers, the suspension and every code-shape option",
      all(s in out for s in ("samplers: oracle, cooperative, classical, async, safepoint;", "--suspend=signal",
                             "--stub-metadata off", "--strip-mining=1048576", "--counted-loop-polls off",
                             "--debug-info=all")), out)
# A run with every configurable option away from its default: the header names each
# value, and under --debug-info=safepoints neither the listing nor the page calls the
# Poll marks from the code that runs, one per loop on the loop's own line. --xcomp:
# inlined.mini's weigh runs only inlined into main, so its return has no poll; main's
# while loop polls at its header, marked on the `while` line, not its first body line.
prog = os.path.join(ROOT, "examples", "lessons", "inlined.mini")
rc, out, err = run("compare", "--xcomp", "--no-classical", prog)
_, rows = table(out)
weigh_return = line_of(prog, "return s;")
loop_line = line_of(prog, "while (round < 8000)")
check("inlined --xcomp: the return of weigh, which runs only inlined, has no poll mark",
      rc == 0 and (weigh_return not in rows or rows[weigh_return][0] == ""), out)
check("inlined --xcomp: main's while loop is marked H on its own line, and only there",
      rc == 0 and loop_line in rows and rows[loop_line][0] == "H" and
      all("H" not in r[0] for n, r in rows.items() if n != loop_line), out)
check("inlined --xcomp: weigh's counted loop, inlined into main, keeps its one mark",
      rc == 0 and rows.get(line_of(prog, "for i in 0..len(a) {"), ("",))[0] == "S", out)
rc, out, err = run("compare", "--xint", "--no-classical", prog)
_, rows = table(out)
check("inlined --xint: weigh runs interpreted, so its return polls",
      rc == 0 and weigh_return in rows and rows[weigh_return][0] == "R", out)
# time_to_safepoint: main's while loop, whose first body line is a counted loop: H on the
# while's line, S alone on the for's.
prog = os.path.join(ROOT, "examples", "time_to_safepoint.mini")
rc, out, err = run("compare", "--xcomp", "--no-classical", "-D", "ROUNDS=1", prog)
_, rows = table(out)
outer, inner = line_of(prog, "while (crunched < ROUNDS) {", after=line_of(prog, "fn main")), line_of(prog, "for k in 0..64")
check("time_to_safepoint --xcomp: main's while loop H on its line, its inner counted loop S on its own",
      rc == 0 and rows.get(outer, ("",))[0] == "H" and rows.get(inner, ("",))[0] == "S", out)

# oracle exact (it knows only the lines of polls and calls).
odd = ["--xcomp", "--interval=500us", "--strip-mining=0", "--counted-loop-polls", "--debug-info=safepoints",
       "--stub-metadata", "--suspend=handshake"]
with tempfile.TemporaryDirectory() as tmp:
    # The run's events go to a temporary file (the pairing by interruption reads them),
    # removed when compare ends, with or without --html.
    rc, out, err = run("compare", "--xcomp", "--interval=500us", prog, env={**os.environ, "TMPDIR": tmp})
    check("without --html: the temporary event file is gone", rc == 0 and os.listdir(tmp) == [], os.listdir(tmp))

with tempfile.TemporaryDirectory() as tmp:
    page = os.path.join(tmp, "compare.html")
    rc, out, err = run("compare", *odd, "--html", page, prog)
    text = open(page).read() if os.path.exists(page) else ""
header = "\n".join(out.splitlines()[:4])
check("non-default options: exit status 0", rc == 0, out + err)
for value in ("code compiled (--xcomp)", "every 500 us", "--strip-mining=0 (never)", "--counted-loop-polls on",
              "--debug-info=safepoints", "--stub-metadata on", "--suspend=handshake"):
    check(f"non-default options: the header names {value}", value in header, header)
check("with --debug-info=safepoints the header labels the oracle by its safepoint debug info",
      "the oracle (safepoint debug info: it knows only the lines of polls and calls" in out
      and "exact, from complete metadata" not in out, out)
check("with --debug-info=safepoints the listing says the oracle is only as exact as the debug info",
      "the oracle is only as exact as the debug info" in out, out)
check("with --debug-info=safepoints the page labels the oracle by its safepoint debug info and shows a banner",
      page_data(text, "compare-data").get("reference") == "oracle (safepoint debug info)"
      and page_data(text, "compare-data").get("banner", "").startswith("Debug info only at polls"), text[:3000])
check("with --debug-info=safepoints the page never calls the oracle exact",
      "(exact" not in text and "knows exactly" not in text and "exact, from" not in text, text[:3000])
check("the page states the run's configuration",
      all(v in text for v in ("--strip-mining=0", "--counted-loop-polls on", "--debug-info=safepoints",
                              "--stub-metadata on", "--suspend=handshake")), text[:3000])

with tempfile.TemporaryDirectory() as tmp:
    short = os.path.join(tmp, "short.mini")
    with open(short, "w") as f:
        f.write("fn main(): int {\n    return 3;\n}\n")
    rc, out, err = run("compare", "--interval=10s", short)
    check("a run too short for a sample: main's status, the listing says so and still marks the return poll",
          rc == 3 and "No samples" in out and re.search(r"^\s+2 R\s", out, re.M), out + err)

with tempfile.TemporaryDirectory() as tmp:
    # --html naming the program (by its name, a symbolic link or a second link) would
    # overwrite the program being run: refused before the run, the program intact.
    short = os.path.join(tmp, "short.mini")
    with open(short, "w") as f:
        f.write("fn main(): int {\n    return 3;\n}\n")
    os.symlink(short, os.path.join(tmp, "short_link.mini"))
    os.link(short, os.path.join(tmp, "short_hard.mini"))
    for name in ("short.mini", "short_link.mini", "short_hard.mini", "./short.mini"):
        rc, out, err = run("compare", "--html", os.path.join(tmp, name), short)
        check(f"compare --html {name} (the program) is refused before the run",
              usage_error(rc, err, "--html", "is the program being run") and out == ""
              and open(short).read().startswith("fn main"), err)

with tempfile.TemporaryDirectory() as tmp:
    # The run's events go to a temporary file (the pairing by interruption reads them),
    # removed when compare ends, with or without --html.
    rc, out, err = run("compare", "--xcomp", "--interval=500us", prog, env={**os.environ, "TMPDIR": tmp})
    check("without --html: the temporary event file is gone", rc == 0 and os.listdir(tmp) == [], os.listdir(tmp))

with tempfile.TemporaryDirectory() as tmp:
    page = os.path.join(tmp, "compare.html")
    rc, out, err = run("compare", "--xcomp", "--html", page, prog, env={**os.environ, "TMPDIR": tmp})
    check("--html: exit status 0 and the listing on stdout", rc == 0 and "safepoint" in out, err)
    text = open(page).read() if os.path.exists(page) else ""
    check("--html: one page with its data embedded, nothing loaded from elsewhere",
          'id="compare-data"' in text and "<script src" not in text and "<link" not in text, text[:500])
    check("--html: the temporary event file is gone", os.listdir(tmp) == ["compare.html"], os.listdir(tmp))
    check("--html with defaults: the oracle is labelled exact, no banner",
          page_data(text, "compare-data").get("reference") == "oracle (exact)"
          and page_data(text, "compare-data").get("banner") == "", text[:3000])

with tempfile.TemporaryDirectory() as tmp:
    # A program of two files: the imported file's lines are listed under its name with
    # their shares, and the page carries its source and the functions written there.
    os.mkdir(os.path.join(tmp, "lib"))
    with open(os.path.join(tmp, "lib", "work.mini"), "w") as f:
        f.write("// work, imported\nfn work(n: int): int {\n    var s = 0;\n    for r in 0..n {\n"
                "        for i in 0..1000 { s += i * r + (s >> 3); }\n    }\n    return s;\n}\n")
    main = os.path.join(tmp, "main.mini")
    with open(main, "w") as f:
        f.write('import "lib/work.mini";\n\nfn main() {\n    print(work(300000));\n}\n')
    page = os.path.join(tmp, "two_files.html")
    rc, out, err = run("compare", "--xint", "--interval=1ms", "--html", page, main)
    header = f"== {os.path.join(tmp, 'lib', 'work.mini')} =="
    listing = out.splitlines()
    hot = [l for l in listing[listing.index(next(l for l in listing if header in l)):]
           if "s += i * r" in l] if any(header in l for l in listing) else []
    check("two files: the listing names each file and shows the imported file's hot line with its share",
          rc == 0 and f"== {main} ==" in out and hot and re.match(r"\s+5 ", hot[0]) and re.search(r"\d+\.\d", hot[0]),
          out + err)
    text = open(page).read() if os.path.exists(page) else ""
    check("two files: the page embeds the imported file's source and where its functions are",
          any(i.get("path", "").endswith("work.mini") and any("s += i * r" in l for l in i.get("source", []))
              for i in page_data(text, "compare-data").get("imported", []))
          and page_data(text, "compare-data").get("fnFile") == {"work": 1}, text[:3000])
# --sweep: one run per value, each sampler's bias budget against it; the safepoint sampler
# stays far from the oracle at every value and cooperative near it; the page draws it.
# The budgets are statistics of a few hundred samples: a run that misses is run again with
# 4x, then 10x the samples before the check fails.
def sweep_budgets(out):
    """Each value's {sampler: (budget, low, high)} by top line, and the sampler columns."""
    by_line = out.split("By function:")[0]
    rows = {m.group(1): m.group(2) for m in re.finditer(r"^  (0|1048576) +(.*)$", by_line, re.M)}
    header = re.search(r"^  --strip-mining +(.*)$", out, re.M)
    cols = header.group(1).split() if header else []
    return rows, cols, {v: dict(zip(cols, re.findall(r"(\d\.\d{3}) \[(\d\.\d{3}), (\d\.\d{3})\]",
                                                     rows.get(v, "")))) for v in ("0", "1048576")}


def sweep_separates(budgets):
    return all(d and float(d["safepoint"][0]) > float(d["cooperative"][2]) and
               float(d["cooperative"][0]) <= float(d["cooperative"][2]) for d in budgets.values())


with tempfile.TemporaryDirectory() as tmp:
    page = os.path.join(tmp, "sweep.html")
    for interval in ("1ms", "250us", "100us"):
        rc, out, err = run("compare", "--xcomp", f"--interval={interval}", "--sweep", "strip-mining=0,1048576",
                           "--html", page, prog)
        rows, cols, budgets = sweep_budgets(out)
        if rc != 0 or sweep_separates(budgets):
            break
    check("--sweep strip-mining=0,1048576: exit 0, a run per value said on stderr, a table row per value",
          rc == 0 and err.count("--sweep: running with --strip-mining=") == 2 and len(rows) == 2, out + err)
    check("--sweep: a column per sampler but the oracle", cols == [s for s in SAMPLERS if s != "oracle"], out)
    check("--sweep: at each value, by line, cooperative within its sampling range and safepoint beyond it",
          sweep_separates(budgets), out)
    text = open(page).read() if os.path.exists(page) else ""
    check("--sweep --html: the page draws the budget against the value", text.count("<svg") == 2 and
          "Bias budget against --strip-mining" in text and "1048576" in text, text[:800])
for args, needle in ((["--sweep", "strip-mining=0,x"], "--strip-mining=x was refused"),
                     (["--sweep", "sampler=a,b"], "--sampler is not an option of compare that takes a value"),
                     (["--sweep", "interval=1ms"], "a sweep needs at least two values"),
                     (["--sweep", "interval=1ms,2ms", "--interval=1ms"], "--interval is given too"),
                     (["--sweep", "interval"], "write FLAG=V1,V2")):
    rc, out, err = run("compare", *args, prog)
    check(f"--sweep refused: {' '.join(args)} ({needle})", rc == 2 and needle in err, err)
# --save and --diff: what a flag changes. The same program saved with complete debug info
# and with --debug-info=safepoints, then the two set side by side.
def diff_rows(out):
    """The --diff listing's rows: line -> {sampler: (before, after)} (None for "-", 0 for "."),
    and its columns."""
    lines = out.splitlines()
    head = next(i for i, l in enumerate(lines) if re.match(r"\s*line\s+poll\s", l))
    columns = lines[head].split()[2:-1]
    value = lambda v: None if v == "-" else 0.0 if v == "." else float(v)  # noqa: E731
    rows = {}
    for l in lines[head + 2:]:
        m = re.match(r"\s*(\d+) (\S*)\s", l)
        if not m:
            continue
        cells = re.findall(r"(?<!\S)(\d+\.\d|\.|-) -> (\d+\.\d|\.|-)(?: +[+-]\d+\.\d)?|(?<= )\.(?= )", l)
        shares = [(value(b), value(a)) if b else (0.0, 0.0) for b, a in cells][:len(columns)]
        rows[int(m.group(1))] = (m.group(2), dict(zip(columns, shares)), l)
    return columns, rows


inlined = os.path.join(ROOT, "examples", "lessons", "inlined.mini")
body, call = line_of(inlined, "s += a[i] * w;"), line_of(inlined, "total += weigh(")
with tempfile.TemporaryDirectory() as tmp:
    full, lean, page = (os.path.join(tmp, n) for n in ("all.json", "safepoints.json", "diff.html"))
    rc1, out1, err1 = run("compare", "--xcomp", "--no-classical", "--save", full, inlined)
    rc2, out2, err2 = run("compare", "--xcomp", "--no-classical", "--debug-info=safepoints", "--save", lean, inlined)
    check("--save: both runs exit 0 with their listing on stdout and write a JSON document",
          rc1 == 0 and rc2 == 0 and "safepoint" in out1 and os.path.exists(full) and os.path.exists(lean), err1 + err2)
    import json
    docs = [json.load(open(f)) for f in (full, lean)] if rc1 == 0 and rc2 == 0 else [{}, {}]
    check("--save: the document is the page's data without the events, the configuration stated",
          all(d.get("columns", [None])[0] == "oracle" and d.get("events") == [] and "rows" in d for d in docs)
          and "--debug-info=all" in docs[0]["config"][1] and "--debug-info=safepoints" in docs[1]["config"][1],
          [d.get("config") for d in docs])
    rc, out, err = run("compare", "--diff", full, lean, "--html", page)
    check("--diff: exit 0, nothing run (no program output), the listing on stdout", rc == 0 and out.startswith(
        "minivm compare --diff") and "\n0\n" not in out, out + err)
    stamps = out.split("Each cell")[0]
    check("--diff: both configurations stamped, each under its file, with its reference",
          re.search(rf"^before: {re.escape(full)}: .*inlined\.mini.*--xcomp", stamps, re.M)
          and re.search(rf"^after:  {re.escape(lean)}: ", stamps, re.M)
          and stamps.index("--debug-info=all") < stamps.index("after:") < stamps.index("--debug-info=safepoints")
          and "reference: oracle (exact)" in stamps and "reference: oracle (safepoint debug info)" in stamps, stamps)
    columns, rows = diff_rows(out)
    check("--diff: a column per sampler both runs had, the oracle first", columns == ["oracle", "cooperative",
                                                                                      "async", "safepoint"], columns)
    # Every cell is the saved documents' share, to the listing's one decimal.
    saved = [{r["line"]: dict(zip(d["columns"], r["p"])) for r in d["rows"]} for d in docs]
    wrong = [(n, c, shares[c]) for n, (_, shares, _) in rows.items() for c in columns
             if shares.get(c) != (round(saved[0].get(n, {}).get(c, 0), 1), round(saved[1].get(n, {}).get(c, 0), 1))]
    check("--diff: every cell is the two saved shares of its line and sampler", rows and not wrong, (wrong, out))
    oracle_body, oracle_call = rows.get(body, ("", {}, ""))[1].get("oracle"), rows.get(call, ("", {}, ""))[1].get("oracle")
    # How the loop's time splits between its body and its latch (line 6) is the CPU's
    # business (where an interrupt lands among instructions in flight): the body only
    # has to have a clear share before, and none after.
    check(f"--diff: the oracle's share leaves weigh's loop body (line {body}) for main's call (line {call}) "
          f"({oracle_body}, {oracle_call})",
          oracle_body and oracle_body[0] >= 5 and oracle_body[1] == 0 and oracle_call and oracle_call[1] >= 80)
    check(f"--diff: lines {body} and {call} are marked as moved, the safepoint sampler's busiest line is not",
          "<== " in rows.get(body, ("", {}, ""))[2] and "<== " in rows.get(call, ("", {}, ""))[2], out)
    text = open(page).read() if os.path.exists(page) else ""
    check("--diff --html: one page with its data embedded, both configurations, nothing loaded from elsewhere",
          'id="diff-data"' in text and "--debug-info=all" in text and "--debug-info=safepoints" in text
          and "<script src" not in text and "<link" not in text, text[:500])
    # Usage errors: --diff runs nothing and takes only --html.
    rc, out, err = run("compare", "--diff", full)
    check("--diff with one file is a usage error", usage_error(rc, err, "--diff takes two files"), err)
    rc, out, err = run("compare", "--diff", full, lean, inlined)
    check("--diff with a program is a usage error: it runs nothing", usage_error(rc, err, "runs nothing"), err)
    rc, out, err = run("compare", "--diff", full, lean, "--xcomp")
    check("--diff with a run option is a usage error naming it", usage_error(rc, err, "--xcomp is not for --diff"), err)
    rc, out, err = run("compare", "--diff", full, lean, "--html", full)
    check("--diff --html naming a file it reads is a usage error", usage_error(rc, err, "one of the files --diff reads")
          and json.load(open(full))["columns"], err)
    rc, out, err = run("compare", "--diff", full, inlined)
    check("--diff of a file that is not a saved comparison: exit 2 naming it",
          rc == 2 and f"--diff {inlined}: not a JSON document" in err and out == "", err)
    rc, out, err = run("compare", "--diff", full, os.path.join(tmp, "missing.json"))
    check("--diff of a missing file: exit 2 naming it", rc == 2 and "missing.json: cannot be read" in err, err)
    rc, out, err = run("compare", "--save", "-", inlined)
    check("--save - is a usage error (the listing is on stdout)", usage_error(rc, err, "--save -"), err)
    rc, out, err = run("compare", "--save", inlined, inlined)
    check("--save naming the program is a usage error before the run", usage_error(rc, err, "--save")
          and open(inlined).read().startswith("//"), err)
finish()
