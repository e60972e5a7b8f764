"""JFR on the JVM: the suite's own Java sources (a checkout of smarr/are-we-fast-yet, read
where it is, never copied into this project) run K times in fresh JVMs under JFR's method
sampler (`jdk.ExecutionSample`) at 10 ms, on JDK 17 (classical sampling: the sampler
thread suspends the thread and walks it) and JDK 25 (JEP 518's cooperative sampling).

Both run the same classes, compiled once with JDK 17's javac (`--release 17`). Each run's
recording is read with that JDK's `jfr print --json`; a sample's method is its top frame's
`type.name` and `name`. What is reported per benchmark and JDK is what MPLR 2023 reports:
how many different hottest methods the runs name, the winner's share, and the rate JFR
achieved (samples per 10 ms of the harness's total runtime). There is no oracle on the JVM.
"""
import collections
import glob
import json
import os
import re
import subprocess

PERIOD_MS = 10
JVM_ITERATIONS = {"Havlak": 10, "CD": 40}
TIMEOUT = 300


def find_jdks(awfy):
    """{"JDK 17": java, "JDK 25": java} for those present."""
    found = {}
    for java in sorted(glob.glob("/usr/lib/jvm/*/bin/java")):
        v = awfy.java_version(java)
        if v in (17, 25) and f"JDK {v}" not in found:
            found[f"JDK {v}"] = java
    return found


def settings(java, tmp, label):
    """The JDK's own default.jfc with the method sampler's period set to PERIOD_MS."""
    with open(os.path.join(os.path.dirname(os.path.dirname(java)), "lib", "jfr", "default.jfc")) as f:
        text = f.read()
    text, n = re.subn(r'(<setting name="period" control="method-sampling-java-interval">)[^<]*(</setting>)',
                      rf"\g<1>{PERIOD_MS} ms\g<2>", text)
    if n != 1:
        raise RuntimeError(f"{java}: default.jfc has no method-sampling-java-interval setting")
    path = os.path.join(tmp, f"{label.replace(' ', '')}.jfc")
    with open(path, "w") as f:
        f.write(text)
    return path


def sample_methods(java, recording):
    jfr = os.path.join(os.path.dirname(java), "jfr")
    p = subprocess.run([jfr, "print", "--json", "--events", "jdk.ExecutionSample", recording],
                       capture_output=True, text=True, timeout=TIMEOUT)
    if p.returncode != 0:
        raise RuntimeError(f"jfr print failed: {p.stderr[-300:]}")
    counts = collections.Counter()
    for e in json.loads(p.stdout)["recording"]["events"]:
        frames = (e["values"].get("stackTrace") or {}).get("frames") or []
        if frames:
            m = frames[0]["method"]
            counts[f"{m['type']['name'].replace('/', '.')}.{m['name']}"] += 1
    return counts


def measure(repo, tmp, names, runs, log, awfy):
    src = os.path.join(repo, "benchmarks", "Java", "src")
    jdks = find_jdks(awfy)
    out = {"benchmarks": {}, "jdks": {k: v for k, v in jdks.items()}}
    if "JDK 17" not in jdks:
        out["note"] = "No JDK 17 (apt-get install openjdk-17-jdk-headless): JFR skipped."
        return out
    sources = sorted(glob.glob(os.path.join(src, "**", "*.java"), recursive=True))
    classes = os.path.join(tmp, "classes")
    javac = os.path.join(os.path.dirname(jdks["JDK 17"]), "javac")
    p = subprocess.run([javac, "-nowarn", "--release", "17", "-d", classes, *sources], capture_output=True, text=True)
    if not sources or p.returncode != 0:
        out["note"] = f"The suite's Java sources under {src} did not compile: {p.stderr[-300:]}"
        return out
    out["note"] = (f"{runs} fresh JVMs per benchmark and JDK, `jdk.ExecutionSample` every {PERIOD_MS} ms "
                   f"(the JDK's default.jfc otherwise), the suite's Harness with its inner iterations and "
                   f"{awfy_iterations('')} outer ones ({', '.join(f'{k} {v}' for k, v in JVM_ITERATIONS.items())}). "
                   + ("" if "JDK 25" in jdks else "No JDK 25 was found in /usr/lib/jvm: JDK 17 only."))
    inner = {name: n for name, n, _, _ in awfy.BENCHMARKS}
    for name in names:
        per = {}
        for label, java in jdks.items():
            jfc = settings(java, tmp, label)
            shares, winners, rates = [], collections.Counter(), []
            error = None
            for k in range(runs):
                rec = os.path.join(tmp, "run.jfr")
                if os.path.exists(rec):
                    os.remove(rec)
                cmd = [java, f"-XX:StartFlightRecording=filename={rec},settings={jfc}", "-cp", classes, "Harness",
                       name, str(awfy_iterations(name)), str(inner[name])]
                try:
                    r = subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT)
                    total = re.search(r"Total Runtime: (\d+)us", r.stdout)
                    if r.returncode != 0 or not total:
                        raise RuntimeError(f"exit {r.returncode}: {(r.stdout + r.stderr)[-300:]}")
                    counts = sample_methods(java, rec)
                except (RuntimeError, subprocess.TimeoutExpired) as e:
                    error = str(e)
                    break
                n = sum(counts.values())
                if n:
                    top = min(counts, key=lambda m: (-counts[m], m))
                    winners[top] += 1
                    shares.append(counts[top] / n)
                rates.append(n / (int(total.group(1)) / 1000 / PERIOD_MS))
            if error:
                per[label] = {"error": error}
            else:
                per[label] = {"runs": len(shares), "hottest": dict(winners),
                              "winner_share": {"min": min(shares), "max": max(shares)} if shares else None,
                              "rate": sum(rates) / len(rates) if rates else None}
            log(f"JFR {name} {label}: {per[label]}")
        out["benchmarks"][name] = per
    return out


def awfy_iterations(name):
    return JVM_ITERATIONS.get(name, 100)
