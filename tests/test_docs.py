#!/usr/bin/env python3
"""docs/reference.md cannot drift from the command line.

For every command `minivm --help` lists (and for `minivm` itself), the flags its `--help`
prints are read from that help, with the default the help states ("default X"), and
compared with the flag tables of the command's section of docs/reference.md (a section
is a `## `minivm NAME`` heading and everything up to the next `## `; a flag is a
`-x` or `--name` in the first column of a table row; a section that says it "takes the
options of `minivm run`" has those documented in run's): every flag printed is documented,
with its stated default in the row's default column; every flag documented exists. The
help topics `minivm --help` lists are documented too. Links between the docs resolve.

Usage: test_docs.py path/to/minivm
"""
import os
import re
import subprocess
import sys

from checks import check, finish

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
DOCS = os.path.join(ROOT, "docs")
# An option line of CLI11's help: 2 or 4 spaces, the names, maybe the value's name, the text.
OPTION = re.compile(r"^ {2,4}((?:-\w,)?--[a-z][a-z0-9-]*|-\w,--[a-z][a-z0-9-]*)(?: (\S+))?(?: {2,}(.*))?$")
FLAG = re.compile(r"(?<![\w-])(--[a-z][a-z0-9-]*|-[a-zA-Z])(?![\w-])")
STATED_DEFAULT = re.compile(r"(?:\(|; )default ([^;)]+)\)")
# The sentence by which a command's section says it takes run's options (documented there).
SHARES_RUN = "takes the options of `minivm run`"


def help_text(minivm, *args):
    p = subprocess.run([minivm, *args, "--help"], capture_output=True, text=True, timeout=60)
    check(f"minivm {' '.join(args)} --help exits 0", p.returncode == 0, p.stderr)
    return p.stdout


def options(text):
    """flag -> the text of its help (continuation lines joined), for every option line."""
    out, current = {}, None
    for line in text.splitlines():
        m = OPTION.match(line)
        if m:
            current = [m.group(3) or ""]
            for name in m.group(1).split(","):
                out[name] = current
        elif current is not None and line.startswith(" " * 10):
            current.append(line.strip())
        else:
            current = None
    return {name: " ".join(parts) for name, parts in out.items()}


def commands(top_help):
    """The command names under "Subcommands:" in `minivm --help` (each alone on a line)."""
    listed = top_help[top_help.find("Subcommands:"):top_help.find("Help topics")]
    return re.findall(r"^([a-z]+)$", listed, re.M)


def topics(top_help):
    """The help topics `minivm --help` lists."""
    at = top_help.find("Help topics")
    return re.findall(r"^  ([a-z]+) ", top_help[at:], re.M) if at >= 0 else []


def section(doc, title):
    """The text of `## title` up to the next `## ` heading, or None."""
    m = re.search(r"^## " + re.escape(title) + r"\n(.*?)(?=^## |\Z)", doc, re.M | re.S)
    return m.group(1) if m else None


def documented(text):
    """flag -> the default column of its row, for every flag in a table's first column."""
    out = {}
    for line in text.splitlines():
        if not line.startswith("| `"):
            continue
        cells = [c.strip() for c in line.strip().strip("|").split(" | ")]
        for flag in FLAG.findall(cells[0]):
            out[flag] = cells[2] if len(cells) > 3 else ""
    return out


def main():
    minivm = sys.argv[1]
    doc = open(os.path.join(DOCS, "reference.md")).read()
    top = help_text(minivm)
    names = commands(top)
    check("minivm --help lists the commands", {"run", "disasm", "help"} <= set(names), names)
    every = set()
    for name in [None] + names:
        title = "`minivm` (no command)" if name is None else f"`minivm {name}`"
        text = section(doc, title)
        if not check(f"reference.md has a section {title}", text is not None):
            continue
        if name == "help":
            for t in topics(top):
                check(f"reference.md documents the help topic {t}", re.search(rf"^\| `{t}` \|", text, re.M), t)
            continue
        printed = options(top if name is None else help_text(minivm, name))
        if name is None:  # the top level's own options, before "Subcommands:"
            own = options(top[:top.find("Subcommands:")])
            printed = {k: v for k, v in printed.items() if k in own}
        every |= set(printed)
        listed = documented(text)
        # A command that shares run's options says so, and run's section documents them.
        if SHARES_RUN in text:
            run_text = section(doc, "`minivm run`") or ""
            listed = {**{f: d for f, d in documented(run_text).items() if f in printed}, **listed}
        for flag, what in sorted(printed.items()):
            if not check(f"reference.md documents {title} {flag}", flag in listed, sorted(listed)):
                continue
            stated = STATED_DEFAULT.search(what)
            if stated:
                check(f"reference.md gives {title} {flag} the default its help states ({stated.group(1)})",
                      stated.group(1) in listed[flag], listed[flag])
        for flag in sorted(listed):
            check(f"{title} {flag} in reference.md exists in its --help", flag in printed, sorted(printed))

    for flag in sorted(documented(doc)):
        check(f"{flag} in a table of reference.md is an option of some command", flag in every, sorted(every))

    # Every relative link of the docs and the lessons index points at a file that exists.
    pages = [os.path.join(DOCS, f) for f in os.listdir(DOCS) if f.endswith(".md")]
    pages += [os.path.join(ROOT, "README.md"), os.path.join(ROOT, "examples", "lessons", "README.md")]
    for page in pages:
        for target in re.findall(r"\]\(([^)#:]+)(?:#[^)]*)?\)", open(page).read()):
            check(f"{os.path.relpath(page, ROOT)}: the link {target} resolves",
                  os.path.exists(os.path.join(os.path.dirname(page), target)))
    finish()


if __name__ == "__main__":
    main()
