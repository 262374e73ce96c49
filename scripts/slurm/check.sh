#!/bin/bash
# Opt-in end-to-end check of the Slurm path on a real single-node cluster:
#
#   scripts/slurm/check.sh [WORKDIR]        (root; installs slurm-wlm and munge on first use)
#
#  1. runs the matrix serially (the reference): harness + agent-mini × sim-2b, sim-35b × 4 tasks
#     on the simulated backend (16 cells; LRAB_SLURM_ARMS overrides the arms);
#  2. brings up Slurm (up.sh: munge, slurmctld, slurmd);
#  3. submits it as a 4-task array with the merge job chained (submit.sh);
#  4. stops three array tasks in the middle of a cell, each another way, and lets them requeue:
#     lrab SIGKILLed (a crash: the task requeues itself), `scontrol requeue` (SIGTERM to the
#     job, Slurm requeues it), and `scancel --batch --signal=USR1` (the time-limit signal: the
#     task stops lrab and requeues itself);
#  5. checks that every task COMPLETED, the stopped ones after a restart; that the merged run
#     has exactly the cells of the serial run with the same scores, failure modes, exit codes
#     and token counts (only run_id and wall_seconds differ), no cell twice, no attempt folder
#     without its row (runfolder.sh's rf_verify on the merge and every shard), each interrupted
#     attempt set aside by the resume (interrupted/, named in its log and interrupted.jsonl)
#     and redone in a fresh folder; and that no process of the runs is left;
#  6. tears the cluster down (down.sh) and prints the wall times.
#
# Exit 0 when everything holds, 1 on a failed check, 77 when no cluster can be had here.
# Env: LRAB_BIN (default: cargo build -p lrab-runner -p lrab-harness; lrab-harness must sit
# next to lrab), CARGO_TARGET_DIR (default ~/.cache/lrab/target), AGENT_MINI_BIN (default:
# the arms cache, `lrab arms install agent-mini` when it is not there yet),
# OPENCODE_BIN (when LRAB_SLURM_ARMS names opencode), LRAB_SLURM_KEEP=1 (leave the cluster
# up and the work folder in place), LRAB_SLURM_BENCH=1 (also time a sharded run without
# interruptions).
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
# shellcheck source=runfolder.sh
. "$HERE/runfolder.sh"
T_ALL=$(date +%s.%N)
say() { printf '== %s\n' "$*"; }
fail() { printf 'slurm-check: FAIL: %s\n' "$*" >&2; exit 1; }
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }

[ "$(id -u)" = 0 ] || { echo "slurm-check: SKIP: needs root (installs and runs Slurm)" >&2; exit 77; }

# --- binaries and arms ----------------------------------------------------------------------
if [ -z "${LRAB_BIN:-}" ]; then
  export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$HOME/.cache/lrab/target}
  say "building lrab and lrab-harness"
  (cd "$REPO" && cargo build --quiet -p lrab-runner -p lrab-harness)
  LRAB_BIN="$CARGO_TARGET_DIR/debug/lrab"
fi
[ -x "$LRAB_BIN" ] || fail "lrab binary not found: $LRAB_BIN"
LRAB_BIN=$(cd "$(dirname "$LRAB_BIN")" && pwd)/$(basename "$LRAB_BIN")
[ -x "$(dirname "$LRAB_BIN")/lrab-harness" ] ||
  fail "no lrab-harness next to $LRAB_BIN (cargo build -p lrab-harness)"
export LRAB_BIN
ARMS=${LRAB_SLURM_ARMS:-harness,agent-mini}
# Third-party arms come from the arms cache (the pinned versions; the shards find them there).
for a in agent-mini opencode; do
  [[ ,$ARMS, == *,$a,* ]] || continue
  "$LRAB_BIN" arms check "$a" >/dev/null 2>&1 && continue
  say "installing $a into the arms cache"
  "$LRAB_BIN" arms install "$a" >&2 ||
    { echo "slurm-check: SKIP: cannot install $a (lrab arms install $a)" >&2; exit 77; }
done

W=${1:-$(mktemp -d "${TMPDIR:-/tmp}/lrab-slurm-check.XXXXXX")}
mkdir -p "$W"
W=$(cd "$W" && pwd)
chmod 755 "$W"
OUT=$W/results
RUN=check
N=4
MATRIX=(--backend sim --arms "$ARMS" --models sim-2b,sim-35b --tasks WF-01,WF-04,WF-10,LH-01
  --quiet-poll-ms 200 --quiet-stable-ms 1000 --grace-ms 1000)
say "work folder $W; load average $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) cores"

# --- 1. the serial reference ----------------------------------------------------------------
# Its folder name has the length of the shards' (check-s1of4): arms that are told their
# absolute workdir (agent-mini's --workspace) spend prompt tokens on it, and the token columns
# are compared exactly.
SERIAL=$OUT/$RUN-whole
T=$(now)
"$LRAB_BIN" run "${MATRIX[@]}" --run-id "$RUN-whole" --out "$OUT" --no-progress >"$W/serial.log" 2>&1 ||
  { cat "$W/serial.log" >&2; fail "the serial run failed"; }
T_SERIAL=$(since "$T")
CELLS=$(tail -n +2 "$SERIAL/cells.csv" | grep -c .)
say "serial run: $CELLS rows in ${T_SERIAL} s"

# --- 2. the cluster -------------------------------------------------------------------------
T=$(now)
set +e
bash "$HERE/up.sh"
rc=$?
set -e
[ $rc = 77 ] && exit 77
[ $rc = 0 ] || fail "up.sh failed (exit $rc)"
T_UP=$(since "$T")
cleanup() {
  if [ "${LRAB_SLURM_KEEP:-0}" != 1 ]; then bash "$HERE/down.sh" >/dev/null 2>&1 || true; fi
}
trap cleanup EXIT
say "cluster up in ${T_UP} s"

# --- helpers --------------------------------------------------------------------------------
shard_dir() { echo "$OUT/$RUN-s${1}of$N"; }
# rf_recorded / rf_unrecorded (runfolder.sh): a run folder's recorded attempt folders, and those
# without a row (in flight, or orphaned).
state() { squeue -h -j "$1" -o %T 2>/dev/null | head -n1; }
# The pid of the lrab process working on shard k (by its exact arguments).
lrab_pid() {
  local p id="$RUN-s${1}of$N"
  for p in /proc/[0-9]*; do
    [ "$(readlink "$p/exe" 2>/dev/null)" = "$LRAB_BIN" ] || continue
    { tr '\0' '\n' <"$p/cmdline"; } 2>/dev/null | grep -qE "(^|/)$id\$" && { echo "${p#/proc/}"; return 0; }
  done
  return 1
}
wait_gone() { # wait_gone JOB TIMEOUT_S
  local t=$(( $2 * 5 ))
  while [ $t -gt 0 ] && [ -n "$(squeue -h -j "$1" 2>/dev/null)" ]; do sleep 0.2; t=$((t - 1)); done
  [ $t -gt 0 ]
}

submit() { # submit RUN: prints the array and merge job ids
  local out
  bash "$HERE/submit.sh" --shards $N --run "$1" --out "$OUT" -- "${MATRIX[@]}" |
    sed -n 's/^LRAB_ARRAY_JOB=//p; s/^LRAB_MERGE_JOB=//p' | paste -sd' '
}

# --- 3. submit ------------------------------------------------------------------------------
T=$(now)
read -r J M <<<"$(submit "$RUN")"
[ -n "${M:-}" ] || fail "submit.sh did not submit both jobs"
say "array job $J ($N tasks), merge job $M"

# --- 4. stop three tasks mid-cell -----------------------------------------------------------
# A task is stopped only while it has recorded at least one cell (so the resume must keep
# something) and has an attempt in flight (so the resume must set aside and redo something).
# An attempt can end between that look and the signal: a task stopped between two cells is
# still requeued and checked, and the mode is tried again on another task.
MODES=(crash requeue usr1)
declare -A STOPPED=()   # shard k -> mode
PARTIAL=()              # "k attempt_dir" of the attempts in flight when a task was stopped
m=0 t_end=$(( SECONDS + 150 ))
while [ $m -lt ${#MODES[@]} ] && [ $SECONDS -lt $t_end ]; do
  for k in $(seq 1 $N); do
    [ -z "${STOPPED[$k]:-}" ] || continue
    [ "$(state "${J}_$((k - 1))")" = RUNNING ] || continue
    d=$(shard_dir "$k")
    [ "$(rf_recorded "$d" | grep -c .)" -ge 1 ] || continue
    [ -n "$(rf_unrecorded "$d")" ] || continue
    mode=${MODES[$m]} task="${J}_$((k - 1))"
    case $mode in
      crash) pid=$(lrab_pid "$k") || continue; kill -KILL "$pid" ;;
      requeue) scontrol requeue "$task" ;;
      usr1) scancel --batch --signal=USR1 "$task" ;;
    esac
    # Wait until the task is off the node (requeued: PENDING), then look at what it left.
    for _ in $(seq 150); do
      s=$(state "$task"); [ "$s" = RUNNING ] || [ "$s" = COMPLETING ] || break; sleep 0.2
    done
    left=$(rf_unrecorded "$d")
    STOPPED[$k]=$mode
    if [ -z "$left" ]; then
      say "shard $k ($task): stopped by $mode between two cells; trying $mode again on another task"
      continue 2
    fi
    for a in $left; do
      PARTIAL+=("$k $a")
      : >"$d/$a/STOPPED-MID-CELL"   # must be gone after the resume redid the attempt
    done
    say "shard $k ($task): stopped mid-cell by $mode (state now $(state "$task")); in flight: $(echo $left)"
    m=$((m + 1))
    break
  done
  sleep 0.1
done
[ $m = ${#MODES[@]} ] || fail "could stop only $m of ${#MODES[@]} tasks mid-cell (cells too quick?)"

# --- 5. wait, then check ----------------------------------------------------------------------
wait_gone "$J" 240 || fail "array job $J still queued after 240 s: $(squeue -h -j "$J")"
wait_gone "$M" 60 || fail "merge job $M still queued: $(squeue -h -j "$M")"
T_SHARDED=$(since "$T")
say "array and merge done in ${T_SHARDED} s"

info=$(scontrol -o show job "$J")
for k in $(seq 1 $N); do
  line=$(grep -E "ArrayTaskId=$((k - 1))( |$)" <<<"$info") || fail "no record of task ${J}_$((k - 1))"
  grep -q 'JobState=COMPLETED' <<<"$line" || fail "task ${J}_$((k - 1)): $(grep -o 'JobState=[A-Z_]*' <<<"$line")"
  grep -q 'ExitCode=0:0' <<<"$line" || fail "task ${J}_$((k - 1)): $(grep -o 'ExitCode=[0-9:]*' <<<"$line")"
  r=$(grep -o 'Restarts=[0-9]*' <<<"$line"); r=${r#Restarts=}
  if [ -n "${STOPPED[$k]:-}" ]; then
    [ "$r" -ge 1 ] || fail "task ${J}_$((k - 1)) was stopped (${STOPPED[$k]}) but not restarted"
    grep -q "resuming" "$OUT/logs/$RUN-${J}_$((k - 1)).out" ||
      fail "task ${J}_$((k - 1)) did not resume its folder (log: $OUT/logs/$RUN-${J}_$((k - 1)).out)"
  else
    [ "$r" = 0 ] || fail "task ${J}_$((k - 1)) restarted $r times unasked"
  fi
done
grep -q 'JobState=COMPLETED' <<<"$(scontrol -o show job "$M")" ||
  fail "merge job $M: $(scontrol -o show job "$M" | grep -o 'JobState=[A-Z_]*')"
MERGED=$OUT/$RUN
[ -f "$MERGED/plan.jsonl" ] || fail "no merged run at $MERGED"

# Same cells, same results: every column but run_id (differs by design) and wall_seconds.
key() { tail -n +2 "$1/cells.csv" | cut -d, -f2-10,12- | sort; }
key "$SERIAL" >"$W/serial.rows"
key "$MERGED" >"$W/merged.rows"
diff -u "$W/serial.rows" "$W/merged.rows" >"$W/rows.diff" ||
  { cat "$W/rows.diff" >&2; fail "merged rows differ from the serial run"; }
[ "$(wc -l <"$W/merged.rows")" = "$CELLS" ] || fail "merged run has $(wc -l <"$W/merged.rows") rows, serial $CELLS"
dups=$(tail -n +2 "$MERGED/cells.csv" | cut -d, -f2-7 | sort | uniq -d)
[ -z "$dups" ] || fail "attempts recorded twice: $dups"
[ "$(grep -c . "$MERGED/plan.jsonl")" = "$CELLS" ] || fail "merged plan is not the full matrix"
# Nothing lost, nothing twice, no orphan, set-aside folders all journalled (runfolder.sh).
for d in "$MERGED" "$OUT"/$RUN-s*of$N; do
  problems=$(rf_verify "$d") || fail "$problems"
done
for p in "${PARTIAL[@]}"; do
  read -r k a <<<"$p"
  d=$(shard_dir "$k")
  aside=interrupted/${a#cells/}-1
  [ ! -e "$d/$a/STOPPED-MID-CELL" ] || fail "shard $k: interrupted attempt $a was not redone"
  [ -f "$d/$a/score.json" ] || fail "shard $k: redone attempt $a has no score.json"
  [ "$(rf_recorded "$d" | grep -cxF "$a")" = 1 ] || fail "shard $k: $a is not recorded exactly once"
  for x in "$d" "$MERGED"; do
    [ -f "$x/$aside/STOPPED-MID-CELL" ] || fail "$x: interrupted attempt $a was not set aside as $aside"
    grep -qF "\"attempt_dir\":\"$aside\"" "$x/interrupted.jsonl" ||
      fail "$x/interrupted.jsonl does not name $aside"
  done
  grep -qF "resume: set aside $a -> $aside" "$OUT/logs/$RUN-${J}_$((k - 1)).out" ||
    fail "shard $k: the resume did not say it set $a aside"
done
# No process of the runs may be left (arms of the killed runner included).
left=$(for p in /proc/[0-9]*; do
  c=$({ tr '\0' ' ' <"$p/cmdline"; } 2>/dev/null) || continue
  w=$(readlink "$p/cwd" 2>/dev/null || true)
  case "$c $w" in *"$OUT"*) echo "${p#/proc/}: $c" ;; esac
done)
[ -z "$left" ] || fail "processes left behind: $left"
say "merged run = serial run: $CELLS cells, same scores, no duplicates, no orphans; ${#PARTIAL[@]} interrupted attempt(s) set aside and redone"

# --- optional: a clean sharded run for the timing table ----------------------------------------
T_CLEAN=-
if [ "${LRAB_SLURM_BENCH:-0}" = 1 ]; then
  T=$(now)
  read -r J2 M2 <<<"$(submit clean)"
  [ -n "${M2:-}" ] || fail "submit.sh did not submit both jobs"
  wait_gone "$J2" 240 && wait_gone "$M2" 60 || fail "clean sharded run did not finish"
  T_CLEAN=$(since "$T")
  key "$OUT/clean" | diff -q - "$W/serial.rows" >/dev/null || fail "clean sharded run differs from serial"
  say "clean sharded run (no interruptions) in ${T_CLEAN} s"
fi

# --- 6. teardown --------------------------------------------------------------------------------
T_DOWN=-
if [ "${LRAB_SLURM_KEEP:-0}" != 1 ]; then
  T=$(now)
  bash "$HERE/down.sh"
  T_DOWN=$(since "$T")
  trap - EXIT
  for pf in /run/slurm/slurmctld.pid /run/slurm/slurmd.pid /run/munge/munged.pid; do
    [ ! -e "$pf" ] || fail "$pf still there after down.sh"
  done
  rm -rf "$W"
fi
say "wall times (s): serial $T_SERIAL | cluster up $T_UP | sharded with 3 interruptions $T_SHARDED | sharded clean $T_CLEAN | teardown $T_DOWN | whole check $(since "$T_ALL"); load average $(cut -d' ' -f1-3 /proc/loadavg)"
say "OK: Slurm array + requeue + merge reproduce the serial run"
