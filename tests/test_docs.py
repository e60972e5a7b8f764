#!/usr/bin/env python3
"""The docs cannot drift from the command line or from the code `disasm` prints.

For every command `minivm --help` lists (and for `minivm` itself), the flags its `--help`
prints are read from that help, with the default the help states ("default X"), and
compared with the flag tables of the command's section of docs/reference.md (a section
is a `## `minivm NAME`` heading and everything up to the next `## `; a flag is a
`-x` or `--name` in the first column of a table row; a section that says it "takes the
options of `minivm run`" has those documented in run's): every flag printed is documented,
with its stated default in the row's default column; every flag documented exists. The
help topics `minivm --help` lists are documented too. Links between the docs resolve.

Listings quoted from `minivm disasm`, in every Markdown file of the tree (docs, lessons,
READMEs; build trees and hidden folders aside), are what `disasm` prints today. A quoted
listing is a fenced block whose line before the fence is a marker naming the command:

    <!-- disasm: --jit --strip-mining=0 examples/counted_loop_then_setter.mini -->

(the arguments of `minivm disasm`, paths from the top of the tree). The command is run and
the block's lines must appear in its output in the same order, consecutive lines of the
quote on consecutive lines of the output; a line `...` leaves out any number of lines.
Lines are compared with runs of spaces made one and blank lines dropped; a machine
instruction's `; comment` is not compared (the quote may annotate an instruction, and
`--templates` prints each one's encoding there), nor are absolute addresses (a hex
number of 9 digits or more, a decimal one of 12 or more), which change from run to run.
Offsets from a code's start (`+0x00a3`) are compared: they do not change between runs.
A block that shows generated code `disasm` cannot print (the safepoint blob, the return
barrier) is marked `<!-- sketch: FILE -->` instead, FILE the source that emits it, and
is not compared. Any other fenced block with a line that reads as an x86 instruction on
a register operand (`cmp rsp, [r15 + poll_limit]`) fails, as does `disasm`'s own
text quoted inline (an instruction with a `qword ptr` operand, or at a `+0x0000`
offset): a listing cannot slip past unchecked.

Two of the docs' tables are the code's: docs/architecture.md's table of the bytecode names
every opcode of vm/opcodes.def and nothing else, and `minivm help language` names every
keyword of the lexer (vm/lexer.cpp) and every builtin, and ends with a whole program
that prints, in both tiers, what the topic says it prints.

Usage: test_docs.py path/to/minivm
"""
import difflib
import os
import re
import shlex
import subprocess
import sys
import tempfile

from checks import check, finish

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
DOCS = os.path.join(ROOT, "docs")
# An option line of CLI11's help: 2 or 4 spaces, the names, maybe the value's name, the text.
# The value's name may be two words for an option that takes two (--diff BEFORE AFTER).
OPTION = re.compile(r"^ {2,4}((?:-\w,)?--[a-z][a-z0-9-]*|-\w,--[a-z][a-z0-9-]*)(?: (\S+(?: [A-Z]+)?))?(?: {2,}(.*))?$")
FLAG = re.compile(r"(?<![\w-])(--[a-z][a-z0-9-]*|-[a-zA-Z])(?![\w-])")
STATED_DEFAULT = re.compile(r"(?:\(|; )default ([^;)]+)\)")
# The sentence by which a command's section says it takes run's options (documented there).
SHARES_RUN = "takes the options of `minivm run`"

# The markers before a fenced block (module docstring) and the fence itself.
LISTING = re.compile(r"^\s*<!--\s*disasm:\s*(.*?)\s*-->\s*$")
SKETCH = re.compile(r"^\s*<!--\s*sketch:\s*(\S+)\s*-->\s*$")
FENCE = re.compile(r"^\s*(```+|~~~+)")
# disasm's own text quoted inline (in a `code span`), which no marker can check: an
# instruction with an operand in its form (`qword ptr [r15+8]`), or one at an offset.
MNEMONIC = (r"(?:mov\w*|cmp\w*|test|j[a-z]{1,3}|lea|push\w*|pop\w*|sub|add|and|or|xor|xchg|imul|"
            r"sar|shl|shr|inc|dec|neg|not|call|set[a-z]{1,3}|cmov[a-z]{1,3})")
INLINE_DISASM = re.compile(r"`[^`\n]*(?:\b" + MNEMONIC + r"\s[^`\n]*\b(?:byte|word|dword|qword|xmmword) ptr \["
                           r"|\+0x[0-9a-f]{4}\s+" + MNEMONIC + r"\b)[^`\n]*`")
# A line that reads as an x86 instruction with a register operand: what makes a block a
# listing (or a sketch of one). An offset (`+0x00a3`) or a label may come first.
REGISTER = r"\b(?:r(?:[0-9]|1[0-5])[dwb]?|[re]?(?:ax|bx|cx|dx|si|di|bp|sp)|xmm[0-9]+)\b"
INSTRUCTION = re.compile(
    r"^\s*(?:\+0x[0-9a-fA-F]+\s+)?(?:\w+:\s*)?(?:short\s+|rex\s+|lock\s+)?"
    + MNEMONIC + r"\s+[^(]*" + REGISTER)
# Absolute addresses, which change from run to run; a source line of `disasm --jit`
# (`    12 |     acc = ...`), whose `;` is Mini's, not a comment's.
ADDRESS = re.compile(r"\b0x[0-9a-fA-F]{9,}\b|(?<![\w+-])[0-9]{12,}\b")
SOURCE_LINE = re.compile(r"^[0-9]+ \|")
ELISION = ("...", "\u2026")


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
    check_listings(minivm)
    check_opcode_table()
    check_language_help(minivm)
    finish()


def check_opcode_table():
    """architecture.md's bytecode table names every opcode of vm/opcodes.def, once, and
    nothing else."""
    table = open(os.path.join(ROOT, "vm", "opcodes.def")).read()
    defined = re.findall(r"^DEF\((\w+),", table, re.M)
    text = section(open(os.path.join(DOCS, "architecture.md")).read(), "10. The bytecode") or ""
    named = [n for row in text.splitlines() if row.startswith("| ") for n in re.findall(r"`(\w+)`", row.split(" | ")[-1])]
    check(f"docs/architecture.md, 10. The bytecode, names each of the {len(defined)} opcodes of vm/opcodes.def once",
          sorted(named) == sorted(defined),
          (sorted(set(defined) - set(named)), sorted(set(named) - set(defined)), len(named), len(defined)))


# Builtins the front end compiles to opcodes of their own or to conversions; the natives
# are read from vm/builtins.h.
OWN_BUILTINS = ("print", "len", "sqrt", "atomic_add", "spawn", "substring", "string", "float", "int")


def check_language_help(minivm):
    """`minivm help language` names every keyword of the lexer and every builtin, and its
    example program prints what the topic says it prints."""
    p = subprocess.run([minivm, "help", "language"], capture_output=True, text=True, timeout=60)
    text = p.stdout
    check("minivm help language exits 0", p.returncode == 0 and text, p.stderr)
    check(f"minivm help language is under 80 lines ({len(text.splitlines())})", len(text.splitlines()) < 80)
    words = set(re.findall(r"[A-Za-z_]\w*", text))
    lexer = open(os.path.join(ROOT, "vm", "lexer.cpp")).read()
    keywords = re.findall(r'\{"([a-z]+)", Tok::Kw', lexer)
    check(f"the lexer's keywords are read ({len(keywords)})", len(keywords) > 20)
    natives = re.findall(r'\{"(\w+)", BuiltinKind::', open(os.path.join(ROOT, "vm", "builtins.h")).read())
    for name in keywords + natives + list(OWN_BUILTINS):
        check(f"minivm help language names `{name}`", name in words)
    m = re.search(r"^A whole program \(minivm run (\S+) prints: (.*)\):\n\n(.*)\Z", text, re.M | re.S)
    if not check("minivm help language ends with a whole program and the output it prints", m, text[-1500:]):
        return
    with tempfile.TemporaryDirectory() as tmp:
        program = os.path.join(tmp, m.group(1))
        with open(program, "w") as f:
            f.write(m.group(3))
        for mode in ("--xint", "--xcomp"):
            q = subprocess.run([minivm, "run", mode, program], capture_output=True, text=True, timeout=60)
            check(f"the help's example program runs ({mode}) and prints {m.group(2)!r}",
                  q.returncode == 0 and q.stdout == m.group(2) + "\n", q.stdout + q.stderr)


def markdown_files():
    """Every Markdown file of the source tree but build trees' and hidden folders'."""
    for top, dirs, files in os.walk(ROOT):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".")
                         and not os.path.exists(os.path.join(top, d, "CMakeCache.txt")))
        for f in sorted(files):
            if f.endswith(".md"):
                yield os.path.join(top, f)


def fenced_blocks(lines):
    """(index of the opening fence, the block's lines) for every fenced block."""
    out, opened, fence = [], None, None
    for i, line in enumerate(lines):
        m = FENCE.match(line)
        if opened is None and m:
            opened, fence = i, m.group(1)
        elif opened is not None and line.strip().startswith(fence) and not line.strip()[len(fence):].strip():
            out.append((opened, lines[opened + 1:i]))
            opened = None
    return out


def normal(line):
    """A listing's line as compared: no comment, no address, runs of spaces made one."""
    text = line.strip()
    if text.startswith(";"):
        return ""
    if not SOURCE_LINE.match(text):
        text = re.sub(r"\s+;(?:\s.*)?$", "", text)
    return " ".join(ADDRESS.sub("<address>", text).split())


def segments(quote):
    """The quote's runs of consecutive lines, split where a `...` line leaves some out."""
    out = [[]]
    for line in quote:
        if line.strip() in ELISION:
            out.append([])
        elif normal(line):
            out[-1].append(normal(line))
    return [s for s in out if s]


def find_run(run, lines, start):
    """Where `run` first appears as consecutive lines of `lines` at or after `start`."""
    for at in range(start, len(lines) - len(run) + 1):
        if lines[at:at + len(run)] == run:
            return at
    return -1


def missing_line(run, lines, start):
    """What to say when `run` is not in `lines`: its first line that no match reaches."""
    best = 0
    for at in range(start, len(lines)):
        n = 0
        while n < len(run) and at + n < len(lines) and lines[at + n] == run[n]:
            n += 1
        best = max(best, n)
    wanted = run[best]
    if best > 0 and wanted in lines[start:]:
        return f"{wanted!r} is printed, but not right after {run[best - 1]!r} (a `...` line leaves lines out)"
    near = difflib.get_close_matches(wanted, lines[start:], n=1, cutoff=0.6)
    return f"not printed: {wanted!r}" + (f"\n  the closest line printed: {near[0]!r}" if near else "")


def quote_matches(quote, printed):
    """None if every segment of `quote` is in `printed` in order, else what is missing."""
    lines = [n for n in map(normal, printed.splitlines()) if n]
    at = 0
    for run in segments(quote):
        found = find_run(run, lines, at)
        if found < 0:
            return missing_line(run, lines, at)
        at = found + len(run)
    return None


def check_listings(minivm):
    """Every fenced block that reads as machine code is a marked disasm quote that matches
    what disasm prints today, or a marked sketch; no disasm text is quoted inline."""
    printed = {}
    quotes = 0
    for page in markdown_files():
        name = os.path.relpath(page, ROOT)
        lines = open(page).read().split("\n")
        blocks = fenced_blocks(lines)
        for opened, block in blocks:
            where = f"{name}:{opened + 1}"
            before = lines[opened - 1] if opened > 0 else ""
            listing, sketch = LISTING.match(before), SKETCH.match(before)
            if sketch:
                check(f"{where}: the sketch's source {sketch.group(1)} exists",
                      os.path.exists(os.path.join(ROOT, sketch.group(1))), before)
                continue
            if not listing:
                looks = [l for l in block if INSTRUCTION.match(l)]
                check(f"{where}: a block of machine code says which disasm command prints it "
                      "(<!-- disasm: ARGS --> or <!-- sketch: FILE --> on the line before)",
                      not looks, "\n".join(looks[:3]))
                continue
            quotes += 1
            args = shlex.split(listing.group(1))
            if not check(f"{where}: the quote is not empty", segments(block)):
                continue
            if tuple(args) not in printed:
                p = subprocess.run([minivm, "disasm", *args], capture_output=True, text=True,
                                   timeout=120, cwd=ROOT)
                check(f"minivm disasm {' '.join(args)} exits 0", p.returncode == 0, p.stderr)
                printed[tuple(args)] = p.stdout
            wrong = quote_matches(block, printed[tuple(args)])
            check(f"{where}: the quote is what `minivm disasm {' '.join(args)}` prints today",
                  wrong is None, wrong)
        # Markers that mark nothing: a marker is the line right before its fence.
        for i, line in enumerate(lines):
            if LISTING.match(line) or SKETCH.match(line):
                check(f"{name}:{i + 1}: a disasm or sketch marker is followed by a fenced block",
                      i + 1 < len(lines) and FENCE.match(lines[i + 1]), line)
        inside = {i for opened, block in blocks for i in range(opened, opened + len(block) + 2)}
        outside = "\n".join(l for i, l in enumerate(lines) if i not in inside)
        for span in INLINE_DISASM.findall(outside):
            check(f"{name}: disasm's text is quoted in a marked fenced block, not inline", False, span)
    check("the docs quote disasm listings (the markers were found)", quotes > 0, quotes)
    print(f"{quotes} quoted disasm listings checked against {len(printed)} commands")


if __name__ == "__main__":
    main()
