#!/usr/bin/env python3
"""Plain-Python (stdlib only) baseline of the statistics lrab-analysis computes for the 288-row
LRAB CSV, written from the method descriptions for timing comparison only:
per model x competitor a signed-rank test, a 10,000-resample bootstrap CI, a tier-cluster
bootstrap and a tier-stratified sign-flip permutation, Holm within each model, and the pooled
overall comparison (bootstrap + sign-flip). Usage: python3 stats_baseline.py lrab_scores.csv
"""
import csv
import math
import random
import sys
import time
from collections import defaultdict

B = 10_000


def tier(task):
    n = int(task[2:])
    if task.startswith("LH"):
        return 4
    return 1 if n <= 2 else 2 if n <= 6 else 3


def signed_rank(d):
    d = [x for x in d if abs(x) > 1e-12]
    a = sorted(d, key=abs)
    n = len(a)
    ranks, ties, i = [0.0] * n, 0.0, 0
    while i < n:
        j = i
        while j + 1 < n and abs(a[j + 1]) == abs(a[i]):
            j += 1
        for k in range(i, j + 1):
            ranks[k] = (i + j) / 2 + 1
        t = j - i + 1
        ties += t ** 3 - t
        i = j + 1
    wp = sum(r for r, x in zip(ranks, a) if x > 0)
    var = n * (n + 1) * (2 * n + 1) / 24 - ties / 48
    if var <= 0:
        return wp, 1.0
    z = (wp - n * (n + 1) / 4) / math.sqrt(var)
    return wp, math.erfc(abs(z) / math.sqrt(2))


def boot(d, rng):
    n = len(d)
    m = sorted(sum(rng.choice(d) for _ in range(n)) / n for _ in range(B))
    return m[int(0.025 * B)], m[int(0.975 * B)]


def cluster(tiers, rng):
    k = len(tiers)
    out = []
    for _ in range(B):
        s = n = 0
        for _ in range(k):
            c = rng.choice(tiers)
            s += sum(c)
            n += len(c)
        out.append(s / n)
    out.sort()
    return out[int(0.025 * B)], out[int(0.975 * B)]


def flip(strata, rng):
    stat = lambda v: sum(sum(s) / len(s) for s in v) / len(v)
    obs = stat(strata)
    c = 0
    for _ in range(B):
        w = [[-x if rng.random() < 0.5 else x for x in s] for s in strata]
        if abs(stat(w)) >= abs(obs) - 1e-12:
            c += 1
    return (c + 1) / (B + 1)


def holm(p):
    order = sorted(range(len(p)), key=lambda i: p[i])
    out, run = [0.0] * len(p), 0.0
    for r, i in enumerate(order):
        run = max(run, min(1.0, (len(p) - r) * p[i]))
        out[i] = run
    return out


def main(path):
    t0 = time.perf_counter()
    S = defaultdict(dict)
    for r in csv.DictReader(open(path)):
        S[(r["harness"], r["model"])][r["task"]] = float(r["score"])
    models = sorted({m for _, m in S})
    focal, comps = "Mingbird", ["goose", "opencode", "agent-mini"]
    i = 0
    for m in models:
        ps = []
        for c in comps:
            tasks = sorted(S[(focal, m)])
            d = [S[(focal, m)][t] - S[(c, m)][t] for t in tasks]
            ps.append(signed_rank(d)[1])
            boot(d, random.Random(42))
            by = defaultdict(list)
            for t, x in zip(tasks, d):
                by[tier(t)].append(x)
            strata = [by[k] for k in sorted(by)]
            cluster(strata, random.Random(42 + i))
            flip(strata, random.Random(20260920 + i))
            i += 1
        holm(ps)
    rng = random.Random(2609)
    for c in comps:
        tasks = sorted(S[(focal, models[0])])
        d = [sum(S[(focal, m)][t] - S[(c, m)][t] for m in models) / len(models) for t in tasks]
        boot(d, rng)
        flip([d], rng)
    print(f"plain-Python statistics: {time.perf_counter() - t0:.2f} s")


if __name__ == "__main__":
    main(sys.argv[1])
