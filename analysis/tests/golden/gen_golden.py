#!/usr/bin/env python3
"""Writes the golden values the Rust tests compare against. Run once by hand:

    python3 -m venv /tmp/gv && /tmp/gv/bin/pip install scipy statsmodels
    /tmp/gv/bin/python analysis/tests/golden/gen_golden.py        # all files
    /tmp/gv/bin/python analysis/tests/golden/gen_golden.py tau2   # tau2_binary_golden.json only

Outputs (committed): cpython_random.json (CPython's own `random` module, stdlib only),
stats_golden.json (scipy / statsmodels reference values) and tau2_binary_golden.json (scipy:
the tests behind the τ² McNemar tables). Inputs are fixed lists below, so a
re-run gives identical files for the same library versions (recorded in the JSON).
"""
import json
import os
import random
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def cpython_random():
    out = {"python": sys.version.split()[0], "seeds": {}}
    for seed in [0, 1, 42, 2609, 20260920, 2**32 + 5, 2**63 + 12345]:
        r = random.Random(seed)
        e = {
            # random() values as exact integers x * 2**53 (JSON float parsing may be off by an ulp).
            "random_x2p53": [int(r.random() * 2**53) for _ in range(5)],
            "getrandbits": [[k, r.getrandbits(k)] for k in (1, 5, 31, 32, 33, 53, 64)],
            "randrange": [[a, b, r.randrange(a, b)] for a, b in [(0, 18), (0, 1), (0, 4), (-3, 1000), (0, 2**40 + 7)]],
            "choice": [r.choice(list(range(18))) for _ in range(10)],
        }
        # A long stream crossing many twists of the state.
        r = random.Random(seed)
        h = 0
        for _ in range(5000):
            h = (h * 31 + r.randrange(0, 18)) & 0xFFFFFFFFFFFF
        e["randrange18_hash_5000"] = h
        out["seeds"][str(seed)] = e
    return out


CASES = {
    "no_ties_n10": [0.5, -0.2, 0.9, 0.3, -0.1, 0.7, 0.6, 0.8, -0.4, 1.0],
    "ties_and_zeros": [0.214, 0.214, -0.214, 0.0, 0.5, 0.5, 0.786, -0.071, 0.0, 0.429, 0.286, 0.286],
    "all_positive_n6": [0.1, 0.2, 0.3, 0.4, 0.5, 0.6],
    "float_near_ties": [0.1 + 0.2, 0.3, -0.7, 0.45, 0.9, -0.05, 0.6],
    "larger_n30": [((i * 37) % 23 - 9) / 10.0 for i in range(30)],
}


def stats_golden():
    import scipy
    import statsmodels
    from scipy import stats
    from statsmodels.stats.multitest import multipletests
    from statsmodels.stats.contingency_tables import mcnemar

    out = {"scipy": scipy.__version__, "statsmodels": statsmodels.__version__, "wilcoxon": {}, "holm": [], "mcnemar": []}
    for name, d in CASES.items():
        approx = stats.wilcoxon(d, zero_method="wilcox", correction=False, method="approx")
        nz = [x for x in d if x != 0]
        has_ties = len({abs(x) for x in nz}) < len(nz)
        entry = {"d": d, "p_normal": float(approx.pvalue)}
        if not has_ties:
            exact = stats.wilcoxon(d, zero_method="wilcox", method="exact")
            entry["p_exact"] = float(exact.pvalue)
        # scipy's two-sided statistic is min(W+, W-); record W+ from the data via rankdata.
        ranks = stats.rankdata([abs(x) for x in nz])
        entry["w_plus"] = float(sum(r for r, x in zip(ranks, nz) if x > 0))
        out["wilcoxon"][name] = entry
    for p in ([0.01, 0.04, 0.03, 0.9], [0.0007685, 0.0001907, 0.0001837], [0.5, 0.5, 0.01, 0.2, 0.04]):
        out["holm"].append({"p": p, "adjusted": [float(x) for x in multipletests(p, method="holm")[1]]})
    for b, c in [(40, 22), (47, 14), (5, 0), (3, 3), (0, 7), (120, 95)]:
        r = mcnemar([[10, b], [c, 10]], exact=True)
        out["mcnemar"].append({"b": b, "c": c, "p": float(r.pvalue)})
    return out


# Paired pass/fail outcomes of the tau2 tables: (wins, ties, losses) of the focal arm.
TAU2_BINARY = [(40, 216, 22), (47, 217, 14), (32, 110, 22), (46, 104, 14), (8, 106, 0), (1, 113, 0), (3, 5, 3)]


def tau2_binary_golden():
    """Wilcoxon (normal approximation, zeros dropped) and exact McNemar on binary pairs."""
    import scipy
    from scipy import stats

    out = {"scipy": scipy.__version__, "cases": []}
    for w, t, l in TAU2_BINARY:
        d = [1.0] * w + [0.0] * t + [-1.0] * l
        wil = stats.wilcoxon(d, zero_method="wilcox", correction=False, method="approx")
        exact = stats.binomtest(min(w, l), w + l, 0.5).pvalue if w + l else 1.0
        out["cases"].append({"wins": w, "ties": t, "losses": l, "wilcoxon_p": float(wil.pvalue), "mcnemar_p": float(exact)})
    with open(os.path.join(HERE, "tau2_binary_golden.json"), "w") as f:
        json.dump(out, f, indent=1)
        f.write("\n")


def main():
    if sys.argv[1:] == ["tau2"]:  # only the tau2 table goldens (needs scipy alone)
        tau2_binary_golden()
        return
    tau2_binary_golden()
    with open(os.path.join(HERE, "cpython_random.json"), "w") as f:
        json.dump(cpython_random(), f, indent=1)
        f.write("\n")
    try:
        g = stats_golden()
    except ImportError as e:
        sys.exit(f"scipy/statsmodels needed for stats_golden.json: {e}")
    with open(os.path.join(HERE, "stats_golden.json"), "w") as f:
        json.dump(g, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
