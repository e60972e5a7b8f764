#!/usr/bin/env python3
"""Every folder includes only the folders below it (docs/architecture.md, "The layers").

Reads every `#include "..."` of the C++ sources and checks it against the table below,
which is the layer diagram of docs/architecture.md as data: a folder may include itself
and what its row names. The profile library (sampler/profile/) stands apart: it includes
only base/, so its model and writers build and test without the VM (tests/profile/).

Usage: test_layers.py
"""
import os
import re
import subprocess

from checks import check, finish

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

# folder -> the folders it may include besides itself. Most specific folder first:
# a file belongs to the first folder whose path prefixes it.
MAY_INCLUDE = {
    "base": [],
    "sampler/profile": ["base"],
    "vm/cli": ["base", "vm", "runtime", "interp", "jit", "sampler", "sampler/profile"],
    "vm": ["base"],
    "runtime": ["base", "vm"],
    "interp": ["base", "vm", "runtime"],
    "jit": ["base", "vm", "runtime"],
    "sampler": ["base", "vm", "runtime", "jit", "sampler/profile"],
    "bench/limits": ["base"],
}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def folder_of(path):
    for f in MAY_INCLUDE:
        if path.startswith(f + "/"):
            return f
    return None


def sources():
    out = subprocess.run(["git", "ls-files", "-co", "--exclude-standard"], cwd=ROOT,
                         capture_output=True, text=True, check=True).stdout.split()
    return [p for p in out if re.search(r"\.(cpp|h|def)$", p) and folder_of(p)]


def main():
    files = sources()
    check("the sources are found", len(files) > 100, f"{len(files)} files")
    seen = set()
    for path in files:
        src = folder_of(path)
        with open(os.path.join(ROOT, path), encoding="utf-8") as f:
            text = f.read()
        for inc in INCLUDE.findall(text):
            dst = folder_of(inc)
            if dst is None or dst == src:
                continue
            seen.add((src, dst))
            check(f"{path} may include {inc}", dst in MAY_INCLUDE[src],
                  f"{src}/ may include only {', '.join(MAY_INCLUDE[src]) or 'itself'}")
    # The table states what is used: a permission no file uses is a layer that moved.
    for src, allowed in MAY_INCLUDE.items():
        for dst in allowed:
            if dst == "base":
                continue  # the bottom layer is open to every folder, whether it uses it yet or not
            check(f"{src}/ includes {dst}/ as the table allows", (src, dst) in seen,
                  "no file does: remove it from MAY_INCLUDE and the diagram")
    finish()


if __name__ == "__main__":
    main()
