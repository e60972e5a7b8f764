#!/usr/bin/env bash
# VM speed benchmark: bench/vm/run.sh [--minivm PATH] [--runs N] [--programs a,b] [--json FILE]
#   --minivm PATH   the minivm binary (default: build/vm/cli/minivm of this checkout)
#   --runs N        alternating runs per configuration; the median is reported (default 5)
#   --json FILE     also the results and the CPU as JSON (side_by_side.py reads them)
# Runs every program of this folder under every minivm mode and under lua5.4, luajit -joff,
# luajit and its C port, checks that all outputs agree, and prints the CPU and a Markdown
# table (see README.md).
# The work is done by run.py next to this script; the configurations are a list at its top.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
exec python3 "$here/run.py" "$@"
