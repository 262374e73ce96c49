#!/bin/bash
# Checks of a run folder's records, sourced by scripts/slurm/check.sh and scripts/soak.sh (and
# runner/tests/shard_scripts.rs). Bash functions; each reads only files:
#
#   rf_recorded DIR    the attempt_dir of every cells.csv row (the column is found by its header
#                      name: cells.csv gained columns after attempt_dir in version 2)
#   rf_folders DIR SUB the folders at attempt depth under DIR/SUB (cells, interrupted, lost),
#                      relative to DIR, sorted
#   rf_unrecorded DIR  attempt folders under cells/ without a row: in flight, or orphans
#   rf_verify DIR      "nothing lost, nothing twice, no orphan" of a finished run: every planned
#                      cell has a row, no attempt has two rows, every row's folder has its
#                      score.json and its attempts.jsonl line, no folder under cells/ lacks a row,
#                      and the folders under interrupted/ are exactly those interrupted.jsonl
#                      names. Prints each problem; returns 1 if there is one.

rf_col() { # rf_col DIR NAME: 1-based index of a cells.csv column
  head -n1 "$1/cells.csv" | tr ',' '\n' | grep -nxF "$2" | cut -d: -f1
}

rf_recorded() {
  local c
  [ -s "$1/cells.csv" ] || return 0
  c=$(rf_col "$1" attempt_dir)
  [ -n "$c" ] || { echo "rf: $1/cells.csv has no attempt_dir column" >&2; return 1; }
  tail -n +2 "$1/cells.csv" | awk -F, -v c="$c" 'NF >= c && $c != "" { print $c }'
}

rf_folders() {
  [ -d "$1/$2" ] || return 0
  (cd "$1" && find "$2" -mindepth 5 -maxdepth 5 -type d | LC_ALL=C sort)
}

rf_unrecorded() {
  local done a
  done=$(rf_recorded "$1") || return 1
  rf_folders "$1" cells | while read -r a; do
    grep -qxF "$a" <<<"$done" || echo "$a"
  done
}

rf_verify() {
  local d=$1 bad=0 x
  [ -f "$d/cells.csv" ] || { echo "$d: no cells.csv"; return 1; }
  x=$(rf_unrecorded "$d") || return 1
  [ -z "$x" ] || { echo "$d: attempt folders without a row (orphans):" $x; bad=1; }
  # arm, model, task, repeat, attempt: an attempt recorded twice
  x=$(tail -n +2 "$d/cells.csv" | cut -d, -f2-4,6-7 | LC_ALL=C sort | uniq -d)
  [ -z "$x" ] || { echo "$d: attempts recorded twice:" $x; bad=1; }
  python3 - "$d" <<'EOF' || bad=1
import csv, json, os, sys
d = sys.argv[1]
bad = []
rows = list(csv.DictReader(open(os.path.join(d, "cells.csv"))))
def lines(name):
    p = os.path.join(d, name)
    out = []
    if os.path.exists(p):
        for l in open(p):
            try:
                out.append(json.loads(l))
            except ValueError:
                pass
    return out
plan = lines("plan.jsonl")
cells = {(r["arm"], r["model"], r["task"], r["repeat"]) for r in rows}
lost = [p for p in plan if (p["arm"], p["model"], p["task"], str(p["repeat"])) not in cells]
if lost:
    bad.append("planned cells without a row (lost): %d, e.g. %s" % (len(lost), lost[0]))
journal = {j["attempt_dir"] for j in lines("attempts.jsonl") if not j.get("backend_failure")}
for r in rows:
    a = r["attempt_dir"]
    if not os.path.isfile(os.path.join(d, a, "score.json")):
        bad.append("%s: recorded but has no score.json" % a)
    if a not in journal:
        bad.append("%s: recorded but has no attempts.jsonl line" % a)
aside = [j["attempt_dir"] for j in lines("interrupted.jsonl")]
if len(aside) != len(set(aside)):
    bad.append("interrupted.jsonl names a folder twice")
found = set()
top = os.path.join(d, "interrupted")
for root, dirs, _ in os.walk(top):
    rel = os.path.relpath(root, d)
    if rel.count(os.sep) == 5:
        found.add(rel)
        dirs[:] = []
if set(aside) != found:
    bad.append("interrupted/ and interrupted.jsonl disagree: only in the folder %s, only in the journal %s"
               % (sorted(found - set(aside)), sorted(set(aside) - found)))
for b in bad:
    print("%s: %s" % (d, b))
sys.exit(1 if bad else 0)
EOF
  return $bad
}
