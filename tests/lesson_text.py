"""What a lesson page says in its text, read for tests/test_lessons.py: its fenced blocks,
the output it quotes, the flags and commands it names inline, and how a quoted line is
matched against what the tool prints today.

A quote of output (a fenced block with no info string and no `<!-- disasm: -->` or
`<!-- sketch: -->` marker, which tests/test_docs.py checks) shows what one of the lesson's
commands prints or writes. Its numbers with a decimal point are this machine's (a share, a
time) and are not compared, nor is a `*` after a share (which line is a sampler's top one
can be the CPU's); `...` stands for anything. Everything else is: the words, the line
numbers, the `.` and `-` of an empty cell, the poll marks. A quoted line matches the start
of a printed line, so a quote may leave out an annotation a CPU adds to the end of a row
(`<==` on a third line).
"""
import re

FENCE = re.compile(r"^(\s*)(```+)(.*)$")
MARKER = re.compile(r"^\s*<!--\s*(disasm|sketch):")
# What a quoted line leaves open: `...`, or a number with a decimal point (a share with
# its `%` and top-line `*`, a time).
OPEN = re.compile(r"\.\.\.|\d+\.\d+(?:%\*?)?")
SPAN = re.compile(r"`([^`]+)`")  # a code span may go on over a line break
FLAG = re.compile(r"^(--[a-z][a-z0-9-]*)(?:=(\S+))?$")
# An option line of CLI11's help: the names, then maybe the value's name.
OPTION = re.compile(r"^ {2,4}(?:-\w,)?(--[a-z][a-z0-9-]*)(?: (\S+))?")


def fenced(page):
    """[(info string, the block's text dedented by its fence's indent, the line before the
    fence)] for every fenced block of `page`, indented ones (in a list item) too."""
    out, inside = [], None
    lines = open(page).read().split("\n")
    for i, line in enumerate(lines):
        m = FENCE.match(line)
        if inside is None and m:
            inside = (m.group(3).strip(), len(m.group(1)), lines[i - 1] if i else "", [])
        elif inside is not None and m and not m.group(3).strip():
            info, indent, before, body = inside
            out.append((info, "".join(dedent(b, indent) + "\n" for b in body), before))
            inside = None
        elif inside is not None:
            inside[3].append(line)
    return out


def dedent(line, indent):
    """`line` of a block whose fence is indented by `indent` spaces, without them."""
    return line[indent:] if line[:indent].strip() == "" else line.lstrip()


def prose(page):
    """The page's text outside its fenced blocks."""
    kept, inside = [], False
    for line in open(page).read().split("\n"):
        if FENCE.match(line):
            inside = not inside
        elif not inside:
            kept.append(line)
    return "\n".join(kept)


def quotes(page):
    """The page's quotes of output: [(line of the page's block, its non-blank lines)]."""
    return [[l for l in text.splitlines() if l.strip()]
            for info, text, before in fenced(page) if info == "" and not MARKER.match(before)]


def pattern(quoted):
    """A quoted line as a regular expression on a printed line (spaces made one)."""
    text, out, at = " ".join(quoted.split()), "", 0
    for m in OPEN.finditer(text):
        out += re.escape(text[at:m.start()])
        out += ".*?" if m.group(0) == "..." else r"\d+(?:\.\d+)?" + ("%\\*?" if "%" in m.group(0) else "")
        at = m.end()
    return re.compile(out + re.escape(text[at:]))


def missing(quote, printed):
    """The lines of `quote` that start no line of `printed` (a text), each anywhere in it."""
    lines = [" ".join(l.split()) for l in printed.splitlines()]
    return [q for q in quote if not any(pattern(q).match(l) for l in lines)]


def spans(page):
    """Every `code span` of the page's prose, its spaces and line breaks made one space."""
    return [" ".join(s.split()) for s in SPAN.findall(prose(page))]


def flags(page):
    """[(flag, value or None)] of every span of the prose that is one option: `--name` or
    `--name=value`."""
    out = []
    for s in spans(page):
        m = FLAG.match(s)
        if m:
            out.append((m.group(1), m.group(2)))
    return sorted(set(out))


def inline_commands(page):
    """The `minivm disasm ... PROGRAM.mini` commands the prose names, as argument lists
    after `minivm` (cheap to run; the runs are the ```sh blocks')."""
    return [s.split()[1:] for s in spans(page) if s.startswith("minivm disasm ") and s.endswith(".mini")]


def options(help_text):
    """flag -> the name of its value ('' for a switch), from a command's --help."""
    return {m.group(1): m.group(2) or "" for m in map(OPTION.match, help_text.splitlines()) if m}
