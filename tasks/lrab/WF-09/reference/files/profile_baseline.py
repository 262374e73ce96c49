"""Profile the unchanged legacy code with cProfile; keep the exact part in a file.

cProfile records two things per function: how often it was called and how long
it ran. On the same corpus the call counts are exact and repeat on every run;
the times differ on every run and every machine. So profile_baseline.txt keeps
the call counts of everything legacy_slow_code.py calls (the evidence for the
hot spots that does not change), and the usual time-sorted cProfile listing is
printed on the console. The file is then the same bytes on every run, as the
rest of the reference's output is.

Usage: python profile_baseline.py [CORPUS_DIR] [OUT_JSON] [PROFILE_TXT]
"""

import cProfile
import pstats
import sys

import reference_impl

LEGACY = "legacy_slow_code.py"


def call_edges(stats):
    """(calls, caller, callee) for every call made by or into the legacy module."""
    edges = []
    for callee, (_, _, _, _, callers) in stats.stats.items():
        for caller, edge in callers.items():
            if LEGACY in (caller[0], callee[0]):
                edges.append((edge[1], pstats.func_std_string(caller),
                              pstats.func_std_string(callee)))
    # Most frequent first; names break ties so the order never depends on timing.
    edges.sort(key=lambda e: (-e[0], e[1], e[2]))
    return edges


def main(argv):
    folder = argv[1] if len(argv) > 1 else "corpus"
    out_json = argv[2] if len(argv) > 2 else "reference_outputs.json"
    out_txt = argv[3] if len(argv) > 3 else "profile_baseline.txt"
    profiler = cProfile.Profile()
    status = profiler.runcall(reference_impl.main,
                              ["reference_impl.py", folder, out_json])
    stats = pstats.Stats(profiler, stream=sys.stdout).strip_dirs()
    stats.sort_stats("cumulative").print_stats(25)

    rows = "\n".join(f"| {n} | `{caller}` | `{callee}` |"
                     for n, caller, callee in call_edges(stats))
    text = f"""# Baseline profile: cProfile call counts of the unchanged legacy code

Profiled: `reference_impl.py {folder} {out_json}` (the unchanged
`legacy_slow_code.analyse` on `{folder}/`) under `cProfile`.

cProfile measures how often each function is called and how long it ran.
The call counts below are exact: the same corpus gives the same counts on
every run. The times are not (they change with every run and machine), so
`profile_baseline.py` prints the time-sorted listing on the console instead
of storing it here.

## Calls made by or into {LEGACY}, most frequent first

| calls | caller | callee |
|---:|---|---|
{rows}
"""
    with open(out_txt, "w", encoding="utf-8") as handle:
        handle.write(text)
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv))
