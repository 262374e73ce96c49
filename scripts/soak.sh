#!/bin/bash
# Opt-in soak of kill-and-resume: SIGKILLs at random (seeded) moments into a run of our harness
# and two third-party arms, each followed by `lrab run --resume`, then checks that nothing was
# lost, counted twice or orphaned and that no process was left behind.
#
#   scripts/soak.sh [WORKDIR]
#
#  1. installs opencode and agent-mini into the arms cache if needed (`lrab arms install`);
#  2. runs the matrix once without interruption (the reference): harness, opencode, agent-mini
#     × sim-2b, sim-35b × 6 tasks on the simulated backend, 2 cells at a time;
#  3. runs it again and SIGKILLs `lrab` LRAB_SOAK_KILLS (10) times, resuming the run after every
#     kill and once more at the end. Each kill comes at a random moment (bash's RANDOM, seeded
#     with LRAB_SOAK_SEED): one in four 0.2–6 s after the session started (its startup: backend,
#     checks, the resume's set-aside, the first launches), the others 0 s … LRAB_SOAK_MAX_DELAY_MS
#     (default 1.5 × the reference's time / kills) after the session's first attempt folder
#     appeared, so that the kills spread over the run's cells and arms; after each
#     kill it notes the attempt folders in flight (no row) and, 5 s later, any process of the
#     run still alive;
#  4. checks: the run completes; runfolder.sh's rf_verify (every planned cell has a row, no
#     attempt twice, every row's folder has its score.json and attempts.jsonl line, no folder
#     under cells/ without a row, interrupted/ = interrupted.jsonl); the resumes set aside
#     exactly the attempts that were in flight at the kills, and said so; `lrab merge` of the
#     run succeeds with 0 missing; no process of the run is left, after any kill or at the end;
#  5. reports how many rows equal the reference (scores, failure modes, token counts).
#
# Exit 0 when everything holds, 1 on a failed check, 77 when an arm cannot be installed.
# Env: LRAB_BIN (default: `cargo build -p lrab-runner -p lrab-harness`, target/debug/lrab),
# LRAB_SOAK_SEED (default: from the clock; printed), LRAB_SOAK_KILLS (10),
# LRAB_SOAK_MAX_DELAY_MS (default: 1.5 × reference time / kills), LRAB_SOAK_ARMS, LRAB_SOAK_MODELS, LRAB_SOAK_TASKS,
# LRAB_SOAK_JOBS (2), LRAB_SOAK_KEEP=1 (leave the work folder).
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/.." && pwd)
# shellcheck source=slurm/runfolder.sh
. "$HERE/slurm/runfolder.sh"
T_ALL=$(date +%s.%N)
say() { printf '== %s\n' "$*"; }
fail() { printf 'soak: FAIL: %s\n' "$*" >&2; exit 1; }
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }

if [ -z "${LRAB_BIN:-}" ]; then
  say "building lrab and lrab-harness"
  (cd "$REPO" && cargo build --quiet -p lrab-runner -p lrab-harness)
  LRAB_BIN=$REPO/target/debug/lrab
fi
[ -x "$LRAB_BIN" ] || fail "lrab binary not found: $LRAB_BIN"
ARMS=${LRAB_SOAK_ARMS:-harness,agent-mini,opencode}
for a in opencode agent-mini; do
  [[ ,$ARMS, == *,$a,* ]] || continue
  "$LRAB_BIN" arms check "$a" >/dev/null 2>&1 && continue
  say "installing $a into the arms cache"
  "$LRAB_BIN" arms install "$a" >&2 || { echo "soak: SKIP: cannot install $a" >&2; exit 77; }
done

KILLS=${LRAB_SOAK_KILLS:-10}
SEED=${LRAB_SOAK_SEED:-$(( $(date +%s) % 1000000 ))}
RANDOM=$SEED
W=${1:-$(mktemp -d "${TMPDIR:-/tmp}/lrab-soak.XXXXXX")}
mkdir -p "$W"
W=$(cd "$W" && pwd)
OUT=$W/results
MATRIX=(--backend sim --arms "$ARMS" --models "${LRAB_SOAK_MODELS:-sim-2b,sim-35b}"
  --tasks "${LRAB_SOAK_TASKS:-WF-01,WF-02,WF-04,WF-10,WF-12,LH-01}" --jobs "${LRAB_SOAK_JOBS:-2}"
  --quiet-poll-ms 200 --quiet-stable-ms 1000 --grace-ms 1000 --no-progress)
say "seed $SEED (LRAB_SOAK_SEED=$SEED reproduces the kill moments); $KILLS kills; work folder $W"
say "load average $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) cores"

# Processes of the runs: anything whose command line or working directory is below $OUT.
left_behind() {
  local p c w
  for p in /proc/[0-9]*; do
    [ "${p#/proc/}" != $$ ] || continue
    c=$({ tr '\0' ' ' <"$p/cmdline"; } 2>/dev/null) || continue
    w=$(readlink "$p/cwd" 2>/dev/null || true)
    grep -q 'State:[[:space:]]*Z' "$p/status" 2>/dev/null && continue
    case "$c $w" in *"$OUT"*) echo "${p#/proc/}: ${c:0:160}" ;; esac
  done
}

# --- 1. the reference ---------------------------------------------------------------------------
# Same folder-name length as the soak's (arms told their absolute workdir spend tokens on it).
T=$(now)
"$LRAB_BIN" run "${MATRIX[@]}" --run-id soak-ref --out "$OUT" >"$W/ref.log" 2>&1 ||
  { tail -n 30 "$W/ref.log" >&2; fail "the reference run failed"; }
T_REF=$(since "$T")
CELLS=$(tail -n +2 "$OUT/soak-ref/cells.csv" | grep -c .)
say "reference run: $CELLS rows in $T_REF s"
# A session's startup (backend, arm versions, confinement check) takes seconds on a loaded
# machine: delays scaled to the run put the kills into its cells, not only into startups.
MAX_MS=${LRAB_SOAK_MAX_DELAY_MS:-$(awk -v t="$T_REF" -v k="$KILLS" 'BEGIN { printf "%d", 1500 * t / k }')}
[ "$MAX_MS" -gt 1000 ] || MAX_MS=1000
say "kill moments: 1 in 4 at 200 … 6000 ms after a session's start, the others at 0 … $MAX_MS ms after its first attempt began"
rand() { echo $(( $1 + (RANDOM * 32768 + RANDOM) % ($2 - $1 + 1) )); }  # rand LO HI
ms() { printf '%d.%03d' $(($1 / 1000)) $(($1 % 1000)); }
# first_attempt STAMP PID: waits until an attempt folder newer than STAMP exists (or PID ended)
first_attempt() {
  local t=0
  while kill -0 "$2" 2>/dev/null && [ $t -lt 2400 ]; do
    [ -n "$(find "$D/cells" -mindepth 5 -maxdepth 5 -type d -newer "$1" 2>/dev/null | head -n1)" ] && return 0
    sleep 0.05; t=$((t + 1))
  done
  return 1
}

# --- 2. kill, resume, kill … ---------------------------------------------------------------------
D=$OUT/soak-run
T=$(now)
k=0 session=0 survivors=0
MOMENTS=()
while [ $k -lt "$KILLS" ]; do
  session=$((session + 1))
  # killed before it wrote its manifest, the run starts afresh (as lrab-shard.sh does)
  if [ ! -f "$D/manifest.json" ]; then
    cmd=("$LRAB_BIN" run "${MATRIX[@]}" --run-id soak-run --out "$OUT")
  else
    cmd=("$LRAB_BIN" run --resume "$D" --no-progress --jobs "${LRAB_SOAK_JOBS:-2}")
  fi
  if [ $((RANDOM % 4)) = 0 ]; then anchor=start delay=$(rand 200 6000)
  else anchor="first attempt" delay=$(rand 0 "$MAX_MS"); fi
  touch "$W/stamp"
  sleep 0.01
  "${cmd[@]}" >>"$W/session-$session.log" 2>&1 &
  pid=$!
  [ "$anchor" = start ] || first_attempt "$W/stamp" "$pid" || true
  sleep "$(ms "$delay")"
  if ! kill -0 "$pid" 2>/dev/null; then
    wait "$pid" || { tail -n 30 "$W/session-$session.log" >&2; fail "session $session failed"; }
    fail "session $session finished before its kill at ${delay} ms: only $k of $KILLS kills landed (set a smaller LRAB_SOAK_MAX_DELAY_MS)"
  fi
  kill -KILL "$pid"
  wait "$pid" 2>/dev/null || true
  k=$((k + 1))
  MOMENTS+=("$delay ms after $anchor")
  # the folders in flight, by inode: a folder set aside keeps its inode under interrupted/
  n=0
  for a in $(rf_unrecorded "$D"); do
    echo "$(stat -c %i "$D/$a") $a" >>"$W/inflight.txt"
    n=$((n + 1))
  done
  rows=$(rf_recorded "$D" | grep -c . || true)
  sleep 5
  left=$(left_behind)
  if [ -n "$left" ]; then
    survivors=$((survivors + $(grep -c . <<<"$left")))
    printf 'soak: after kill %d, still alive after 5 s:\n%s\n' "$k" "$left" >&2
  fi
  say "kill $k, $delay ms after session $session's $anchor: $rows rows recorded, $n attempt(s) in flight"
done
session=$((session + 1))
"$LRAB_BIN" run --resume "$D" --no-progress --jobs "${LRAB_SOAK_JOBS:-2}" >>"$W/session-$session.log" 2>&1 ||
  { tail -n 30 "$W/session-$session.log" >&2; fail "the last resume failed"; }
T_SOAK=$(since "$T")
say "$k kills, $session sessions, run complete in $T_SOAK s"

# --- 3. checks ------------------------------------------------------------------------------------
problems=$(rf_verify "$D") || fail "$problems"
[ "$(tail -n +2 "$D/cells.csv" | grep -c .)" -ge "$CELLS" ] || fail "fewer rows than the reference"
# Every attempt in flight at a kill is under interrupted/ now (the same folder: its inode), and
# nothing else is; each was named once in interrupted.jsonl and on stderr.
touch "$W/inflight.txt"
cut -d' ' -f1 "$W/inflight.txt" | LC_ALL=C sort -u >"$W/inflight.inodes"
inflight=$(grep -c . "$W/inflight.inodes" || true)
rf_folders "$D" interrupted | while read -r a; do stat -c %i "$D/$a"; done | LC_ALL=C sort -u >"$W/aside.inodes"
cmp -s "$W/inflight.inodes" "$W/aside.inodes" ||
  fail "in flight at the kills: $inflight folder(s) ($(sort -u -k2 "$W/inflight.txt" | cut -d' ' -f2 | paste -sd' ')); under interrupted/: $(rf_folders "$D" interrupted | paste -sd' ')"
aside=$(grep -c . "$D/interrupted.jsonl" 2>/dev/null || true)
[ "${aside:-0}" = "$inflight" ] ||
  fail "interrupted.jsonl has ${aside:-0} line(s), $inflight attempt(s) were in flight at the kills"
said=$(cat "$W"/session-*.log | grep -c '^resume: set aside ' || true)
[ "$said" = "$inflight" ] || fail "the resumes named $said set-aside folders on stderr, $inflight expected"
"$LRAB_BIN" merge --out "$W/merged" "$D" >"$W/merge.log" 2>&1 ||
  { cat "$W/merge.log" >&2; fail "lrab merge of the soaked run failed"; }
grep -q ' 0 missing' "$W/merge.log" || fail "merge: $(cat "$W/merge.log")"
[ "$survivors" = 0 ] || fail "$survivors process(es) of the run outlived a kill by 5 s"
left=$(left_behind)
[ -z "$left" ] || fail "processes left behind: $left"

# Rows against the reference: every column but run_id and wall_seconds (the final attempt of
# each cell; informational — third-party arms need not be deterministic).
key() { tail -n +2 "$1/cells.csv" | cut -d, -f2-10,12- | LC_ALL=C sort; }
same=$(LC_ALL=C comm -12 <(key "$OUT/soak-ref") <(key "$D") | grep -c . || true)
per_arm=$(LC_ALL=C comm -13 <(key "$OUT/soak-ref") <(key "$D") | cut -d, -f1 | sort | uniq -c |
  awk '{ printf "%s%s %s", s, $2, $1; s = ", " }')
say "rows equal to the uninterrupted reference: $same of $CELLS${per_arm:+ (differing: $per_arm)}"
say "kill moments: $(printf '%s; ' "${MOMENTS[@]}")"
say "OK: $k SIGKILLs (seed $SEED), $inflight attempt(s) in flight set aside and rerun, $CELLS cells: nothing lost, nothing twice, no orphan, no process left; wall $(since "$T_ALL") s, reference $T_REF s, soaked run $T_SOAK s; load average $(cut -d' ' -f1-3 /proc/loadavg)"
[ "${LRAB_SOAK_KEEP:-0}" = 1 ] || rm -rf "$W"
