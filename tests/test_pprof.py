#!/usr/bin/env python3
"""End-to-end checks of the pprof profile (`-o p.pb.gz`, `--format=pprof`;
sampler/profile/README.md, "pprof"), read back with protobuf's own parser: protoc
(protobuf-compiler) compiles sampler/profile/profile.proto to Python, and python3-protobuf
parses the gunzipped file with it. One run under every sampler with --profile-stats:
- one sample type per sampler (unit count), the first sampler the default;
- each sampler's values add up to its samples + represented (the statistics'), biased
  samples are labelled by reason (their weights against the statistics' counts);
- every sample's locations exist, each with a line naming a function of the program
  (with its file and a line) or a builtin; native samples have native_spin_ns over spin;
- the two threads are labelled.
Exits 77 (skipped) where protoc or python3-protobuf is not installed. Prints `N passed, N failed`."""
import collections
import gzip
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

from checks import check, finish, run_minivm

MINIVM = sys.argv[1]
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PROGRAM = os.path.join(ROOT, "examples", "native_beside_java.mini")
PROTO = os.path.join(ROOT, "sampler", "profile", "profile.proto")


def has_protobuf():
    try:
        return importlib.util.find_spec("google.protobuf") is not None
    except ModuleNotFoundError:
        return False


def main():
    # python3-protobuf is a module of Debian's python3: run under it when the python3
    # that started this script (another installation's, e.g. pyenv's) lacks it.
    debian = "/usr/bin/python3"
    if not has_protobuf() and os.path.exists(debian) and os.path.realpath(sys.executable) != os.path.realpath(debian):
        os.execv(debian, [debian, *sys.argv])
    if shutil.which("protoc") is None or not has_protobuf():
        print("skipped: protoc or python3-protobuf is not installed (apt-get install protobuf-compiler python3-protobuf)")
        sys.exit(77)
    functions = set(re.findall(r"\bfn\s+(\w+)", open(PROGRAM).read()))
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run(["protoc", f"--proto_path={os.path.dirname(PROTO)}", f"--python_out={tmp}", PROTO], check=True)
        sys.path.insert(0, tmp)
        import profile_pb2  # noqa: E402 (generated just above)

        out, stats_path = os.path.join(tmp, "p.pb.gz"), os.path.join(tmp, "s.json")
        rc, so, se = run_minivm(MINIVM, "run", "--sampler=all", "--interval=500us", "-D", "ROUNDS=300",
                                f"-o{out}", f"--profile-stats={stats_path}", PROGRAM)
        if not check("the run writes p.pb.gz", rc == 0 and os.path.exists(out), se[-3000:]):
            finish()
        prof = profile_pb2.Profile()
        prof.ParseFromString(gzip.decompress(open(out, "rb").read()))
        s = prof.string_table
        stats = {x["name"]: x for x in json.load(open(stats_path))["samplers"]}
        samplers = list(stats)
        types = [(s[t.type], s[t.unit]) for t in prof.sample_type]
        check("one sample type per sampler, in report order", types == [(n, "count") for n in samplers], types)
        check("the first sampler is the default", s[prof.default_sample_type] == samplers[0])
        check("the period is the interval", prof.period == 500_000 and s[prof.period_type.unit] == "nanoseconds")

        totals = [0] * len(samplers)
        biased = collections.defaultdict(collections.Counter)
        threads = set()
        for sample in prof.sample:
            for i, v in enumerate(sample.value):
                totals[i] += v
            labels = {s[label.key]: (s[label.str] if label.str else label.num) for label in sample.label}
            threads.add(labels.get("thread"))
            column = [i for i, v in enumerate(sample.value) if v]
            if "biased" in labels and len(column) == 1:
                biased[samplers[column[0]]][labels["biased"]] += sample.value[column[0]]
            if len(column) != 1:
                check("each sample counts under one sampler", False, list(sample.value))
        for i, name in enumerate(samplers):
            want = stats[name]["samples"] + stats[name]["represented"]
            check(f"{name}: its values add up to samples + represented", totals[i] == want, (totals[i], want))
            # Values are weights (a sample kept from a long stretch stands for several), the
            # statistics count samples: each reason's weight is at least its samples, and
            # the weights beyond one each are at most what the samples represent.
            got, want = biased[name], stats[name]["biased"]
            check(f"{name}: biased samples are labelled by reason",
                  set(got) == {r for r, n in want.items() if n} and all(got[r] >= n for r, n in want.items())
                  and sum(got.values()) - sum(want.values()) <= stats[name]["represented"], (dict(got), want))
        check("both threads are labelled", threads == {0, 1}, threads)

        fns = {f.id: f for f in prof.function}
        locs = {loc.id: loc for loc in prof.location}
        bad = []
        for loc in prof.location:
            f = fns.get(loc.line[0].function_id) if len(loc.line) == 1 else None
            name = s[f.name] if f else None
            mini = name in functions and s[f.filename] == PROGRAM and loc.line[0].line > 0
            builtin = name is not None and name.endswith(" (native)") and loc.line[0].line == 0
            if not (mini or builtin):
                bad.append((name, s[f.filename] if f else None, loc.line[0].line if loc.line else None))
        check("every location is a line of a function of the program, or a builtin", not bad, bad[:5])
        missing = [i for sample in prof.sample for i in sample.location_id if i not in locs]
        check("every sample's locations exist", not missing and prof.sample, missing[:5])

        def names(sample):
            return [s[fns[locs[i].line[0].function_id].name] for i in sample.location_id]
        native = [names(x) for x in prof.sample if names(x) and names(x)[0].endswith("(native)")]
        check("native samples: native_spin_ns over spin",
              any(n[:2] == ["native_spin_ns (native)", "spin"] for n in native), native[:3])
        check("main's samples: busy over main", any(names(x)[:2] == ["busy", "main"] for x in prof.sample))

        # --format=pprof names it whatever the file is called.
        other = os.path.join(tmp, "profile.bin")
        rc, so, se = run_minivm(MINIVM, "run", "--format=pprof", f"-o{other}", PROGRAM)
        ok = rc == 0 and open(other, "rb").read(2) == b"\x1f\x8b"
        if ok:
            again = profile_pb2.Profile()
            again.ParseFromString(gzip.decompress(open(other, "rb").read()))
            ok = len(again.sample) > 0 and [again.string_table[t.type] for t in again.sample_type] == ["cooperative"]
        check("--format=pprof writes a gzipped profile under any name", ok, se[-2000:])
    finish()


if __name__ == "__main__":
    main()
