"""The arithmetic of the accuracy bench: what one profiled run says, per sampler, and what K
runs say together. Pure functions over plain data, so that tests/test_accuracy.py can check
each on hand-made profiles; run.py feeds them minivm's `.jsonl` events.

A run under `--sampler=all` gives every sampler the same interruptions, each identified by
its `sample` id, so each sampler's answer can be set against the oracle's for the same
moment. A sampler's *profile* is what its user sees: the share of its own samples whose top
frame is in each method (self time) or on each line. Distances between two profiles are
total variation distances, TVD(p, q) = ½ Σ |p(k) − q(k)|: the share of samples that would
have to move for the two to agree (0: the same profile, 1: nothing in common).
"""
import collections
import random

SAMPLE_EVENTS = ("ExecutionSample", "NativeMethodSample")


class Outcome:
    """How one sampler ended one interruption: a sample (its top frame's method and line, and
    the reason it is biased, if it is) or a failure with its reason."""
    __slots__ = ("method", "line", "biased", "failed")

    def __init__(self, method=None, line=None, biased=None, failed=None):
        self.method, self.line, self.biased, self.failed = method, line, biased, failed


def top_frame(stack):
    """(method, line) of a stack's top frame: its function, and `function:line`."""
    if not stack:
        return "(empty)", "(empty)"
    f = stack[0]
    return f["function"], f"{f['function']}:{f.get('line', 0)}"


def read_outcomes(events):
    """{sampler: {interruption id: Outcome}} from a run's `.jsonl` events (dicts). Events
    without an interruption id (latencies) are not outcomes."""
    out = collections.defaultdict(dict)
    for e in events:
        if "sample" not in e or "sampler" not in e:
            continue
        if e["event"] in SAMPLE_EVENTS:
            method, line = top_frame(e["stack"])
            out[e["sampler"]][e["sample"]] = Outcome(method, line, e.get("reason") if e.get("biased") else None)
        elif e["event"] in ("FailedSample", "DroppedSample"):
            out[e["sampler"]][e["sample"]] = Outcome(failed=e.get("reason", "unknown"))
    return dict(out)


def profile(outcomes, key):
    """The Counter of a sampler's samples by `key` ("method" or "line")."""
    return collections.Counter(getattr(o, key) for o in outcomes.values() if o.failed is None)


def shares(counter):
    total = sum(counter.values())
    return {k: v / total for k, v in counter.items()} if total else {}


def tvd(p, q):
    """Total variation distance of two profiles given as Counters (or dicts of counts)."""
    ps, qs = shares(p), shares(q)
    return tvd_shares(ps, qs) if ps and qs else None



def tvd_shares(p, q):
    """TVD of two profiles already given as shares."""
    return sum(abs(p.get(k, 0.0) - q.get(k, 0.0)) for k in set(p) | set(q)) / 2


def largest_differences(p, q, k):
    """The k keys where two profiles (shares) differ most: [(key, p share, q share)]."""
    keys = sorted(set(p) | set(q), key=lambda key: (-abs(p.get(key, 0.0) - q.get(key, 0.0)), str(key)))
    return [(key, p.get(key, 0.0), q.get(key, 0.0)) for key in keys[:k]]


def ranked(counter):
    """Keys by count, most first; equal counts by name, so that a tie is broken the same way
    in every run."""
    return [k for k, _ in sorted(counter.items(), key=lambda kv: (-kv[1], str(kv[0])))]


def hottest(counter):
    r = ranked(counter)
    return r[0] if r else None


def top_k_agreement(mine, reference, k=5):
    """The share of the reference's top k that are in mine's top k (1: the same set)."""
    ref = ranked(reference)[:k]
    if not ref:
        return None
    return len(set(ranked(mine)[:k]) & set(ref)) / len(ref)


def sampling_bound(counter, rounds=400, level=0.95, seed=1):
    """How far a profile of these many samples lies from the distribution it was drawn from,
    by chance alone: the `level` quantile of TVD(resample, counter) over `rounds` bootstrap
    resamples (each n draws with replacement from the counter's own samples). A sampler on
    the oracle's interruptions whose distance to it is under this bound is within the
    sampling error of the oracle's own profile."""
    keys = list(counter)
    n = sum(counter.values())
    if n == 0:
        return None
    rng = random.Random(seed)
    weights = [counter[k] for k in keys]
    dists = []
    for _ in range(rounds):
        resample = collections.Counter(rng.choices(keys, weights=weights, k=n))
        dists.append(tvd(resample, counter))
    dists.sort()
    return dists[min(len(dists) - 1, int(level * len(dists)))]


def disagreement(mine, oracle, key):
    """Why a sampler's profile differs from the oracle's, interruption by interruption: of
    the oracle's samples, the shares that the sampler failed on (by failure reason), put on
    another `key` in a sample it flagged as biased (by bias reason), or put on another `key`
    with no flag at all ("unflagged": a distance nothing counted explains). Also the share
    (of the oracle's samples) of interruptions the sampler sampled and the oracle did not.
    The TVD of the two profiles is at most the sum of these shares, so when "unflagged" is 0
    the counted reasons explain the whole distance."""
    oracle_samples = {i: o for i, o in oracle.items() if o.failed is None}
    n = len(oracle_samples)
    split = collections.Counter()
    if n == 0:
        return {}
    for i, o in oracle_samples.items():
        m = mine.get(i)
        if m is None:
            split["failed: not recorded"] += 1
        elif m.failed is not None:
            split[f"failed: {m.failed}"] += 1
        elif getattr(m, key) != getattr(o, key):
            split[f"biased: {m.biased}" if m.biased else "unflagged"] += 1
    extra = sum(1 for i, m in mine.items() if m.failed is None and i not in oracle_samples)
    if extra:
        split["oracle has no sample"] += extra
    return {k: v / n for k, v in split.items()}


def run_summary(outcomes, reference="oracle", k=5):
    """Per sampler, what one run says and how far it is from the reference's profile on the
    same interruptions."""
    ref = outcomes.get(reference, {})
    ref_methods, ref_lines = profile(ref, "method"), profile(ref, "line")
    out = {}
    for sampler, mine in outcomes.items():
        methods, lines = profile(mine, "method"), profile(mine, "line")
        out[sampler] = {
            "samples": sum(methods.values()),
            "failed": sum(1 for o in mine.values() if o.failed is not None),
            "method_shares": shares(methods),
            "line_shares": shares(lines),
            "hottest": hottest(methods),
            "top": ranked(methods)[:k],
            "top1": hottest(methods) == hottest(ref_methods) if methods and ref_methods else None,
            "topk": top_k_agreement(methods, ref_methods, k),
            "tvd_method": tvd(methods, ref_methods),
            "tvd_line": tvd(lines, ref_lines),
            "split_method": disagreement(mine, ref, "method"),
            "split_line": disagreement(mine, ref, "line"),
            "bound_method": sampling_bound(ref_methods) if sampler == reference else None,
            "bound_line": sampling_bound(ref_lines) if sampler == reference else None,
        }
    return out


def across_runs(runs, sampler, reference="oracle"):
    """What K runs of one sampler say together (runs: run_summary results): how many
    different hottest methods they name, each method's min / mean / max share over the runs
    (a method a run did not sample has share 0 there), and the distances to the reference."""
    mine = [r[sampler] for r in runs if sampler in r and r[sampler]["samples"]]
    if not mine:
        return None
    hottest_counts = collections.Counter(m["hottest"] for m in mine)
    methods = set().union(*(m["method_shares"] for m in mine))
    per_method = {}
    for method in methods:
        values = [m["method_shares"].get(method, 0.0) for m in mine]
        per_method[method] = {"min": min(values), "mean": sum(values) / len(values), "max": max(values)}

    def stat(field):
        xs = [m[field] for m in mine if m[field] is not None]
        return {"mean": sum(xs) / len(xs), "max": max(xs), "min": min(xs)} if xs else None

    bounds_m = [r[reference]["bound_method"] for r in runs if reference in r and r[reference]["bound_method"] is not None]
    bounds_l = [r[reference]["bound_line"] for r in runs if reference in r and r[reference]["bound_line"] is not None]
    split = collections.Counter()
    for m in mine:
        split.update(m["split_method"])
    return {
        "runs": len(mine),
        "hottest": dict(hottest_counts),
        "distinct_hottest": len(hottest_counts),
        "methods": per_method,
        "top1_runs": sum(1 for m in mine if m["top1"]),
        "topk": stat("topk"),
        "tvd_method": stat("tvd_method"),
        "tvd_line": stat("tvd_line"),
        # per run, is the distance within the reference's own sampling error?
        "within_bound_method": sum(1 for m, r in zip(mine, runs) if m["tvd_method"] is not None and
                                   r[reference]["bound_method"] is not None and m["tvd_method"] <= r[reference]["bound_method"]),
        "bound_method": max(bounds_m) if bounds_m else None,
        "bound_line": max(bounds_l) if bounds_l else None,
        "split_method": {k: v / len(mine) for k, v in split.items()},
    }


def mean_shares(profiles):
    """The mean of several profiles given as shares (a key missing from one is 0 there)."""
    out = collections.defaultdict(float)
    for p in profiles:
        for k, v in p.items():
            out[k] += v / len(profiles)
    return dict(out)


def mean_pairwise_tvd(profiles):
    """How far runs of one sampler lie from each other: the mean TVD over every pair of the
    profiles (shares). Against another profile's distance, the run-to-run floor."""
    pairs = [(a, b) for i, a in enumerate(profiles) for b in profiles[i + 1:]]
    return sum(tvd_shares(a, b) for a, b in pairs) / len(pairs) if pairs else None


def slowdown_effect(base_shares, slowed_shares, line):
    """How much of the profile a slowdown moved onto its line: the line's share in the slowed
    runs minus its share in the unslowed ones (means over runs)."""
    def mean(xs):
        return sum(xs) / len(xs) if xs else None
    b = mean([s.get(line, 0.0) for s in base_shares])
    a = mean([s.get(line, 0.0) for s in slowed_shares])
    return None if a is None or b is None else a - b


def expected_profile(base_line_shares, base_ns, added_ns, line):
    """Divining's approximation of the truth under a slowdown: the unslowed profile, scaled
    to its time, plus the time the slowdown added, all on the slowed line."""
    if base_ns <= 0:
        return None
    total = base_ns + max(added_ns, 0.0)
    out = {k: v * base_ns / total for k, v in base_line_shares.items()}
    out[line] = out.get(line, 0.0) + max(added_ns, 0.0) / total
    return out
