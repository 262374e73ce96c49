"""Run the export feature for real and record commands and outputs in EXPORT.md.

Uses a throw-away data file (demo_entries.json) and pins the clock with TIMETRACK_NOW so
the recorded output is reproducible.
"""
import os
import re
import subprocess
import sys

DB = "demo_entries.json"
STEPS = [
    ("2026-03-02 09:00", ["start", "thesis", "--note", "chapter 2"]),
    ("2026-03-02 11:30", ["stop"]),
    ("2026-03-03 13:00", ["start", "lab", "--note", "calibrate, then log"]),
    ("2026-03-03 13:20", ["stop"]),
    ("2026-03-04 10:00", ["start", "thesis"]),
    ("2026-03-04 10:05", ["export", "--format", "csv"]),
    ("2026-03-04 10:05", ["export", "--format", "csv", "--since", "2026-03-03"]),
    ("2026-03-04 10:05", ["export", "--format", "csv", "--since", "2026-04-01"]),
]


def run(args, now=None):
    env = dict(os.environ, TIMETRACK_DB=DB)
    if now:
        env["TIMETRACK_NOW"] = now
    proc = subprocess.run([sys.executable] + args, capture_output=True, text=True, env=env)
    return (proc.stdout + proc.stderr).rstrip("\n"), proc.returncode


def main():
    if os.path.exists(DB):
        os.remove(DB)
    out = ["# CSV export", "",
           "`timetrack.py export` writes finished entries as CSV with the columns",
           "`project,start,end,hours,note`; `hours` has two decimals, the running timer is left",
           "out, `--since YYYY-MM-DD` keeps entries that start on or after that date, and an",
           "empty result is just the header line. `--output FILE` writes to a file instead.", "",
           "## Session (real commands and their output)", "",
           f"Data file: `TIMETRACK_DB={DB}`; the clock is pinned per command with `TIMETRACK_NOW`.", ""]
    for now, args in STEPS:
        text, rc = run(["timetrack.py"] + args, now)
        out += ["```", f"$ TIMETRACK_NOW='{now}' python timetrack.py {' '.join(repr(a) if ' ' in a or ',' in a else a for a in args)}",
                text, "```", f"(exit status {rc})", ""]
    text, rc = run(["-m", "pytest", "test_export.py", "-q"])
    text = re.sub(r" in [0-9.]+s", "", text)  # wall time varies run to run
    out += ["## Tests", "", "```", "$ python -m pytest test_export.py -q", text, "```", f"(exit status {rc})", ""]
    with open("EXPORT.md", "w", encoding="utf-8") as fh:
        fh.write("\n".join(out))
    if rc != 0:
        sys.exit("tests failed; see EXPORT.md\n" + text)  # the cause, for `lrab tasks check`


if __name__ == "__main__":
    main()
