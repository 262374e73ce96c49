#!/bin/bash
# One shard of a distributed lrab run. The same file is the Slurm array task (its #SBATCH lines
# below), the command of a Kubernetes Indexed Job pod, or a plain shell command:
#
#   lrab-shard.sh SHARDS RUN OUT [lrab run flags…]
#
# The shard's 0-based index comes from LRAB_SHARD_INDEX, else SLURM_ARRAY_TASK_ID, else
# JOB_COMPLETION_INDEX; shard k = index + 1 runs `lrab run --shard k/SHARDS` into
# OUT/RUN-s<k>of<SHARDS>. When that folder already holds a manifest (a requeued task, a
# restarted pod, a second try by hand) it continues it with `lrab run --resume`: cells.csv is
# the source of truth, so recorded cells are kept, and an attempt that was in flight when the
# task was stopped is set aside (its processes killed, its folder moved to interrupted/ and
# named in the log and interrupted.jsonl) and run again — nothing lost, nothing counted twice.
#
# Signals:
#   TERM/INT/HUP (scancel, preemption, `scontrol requeue`, pod deletion): lrab is stopped (it
#     kills its arms' process groups) and the script exits 143; whoever requeues or restarts
#     the task resumes the shard.
#   USR1 (`#SBATCH --signal=B:USR1@300`: five minutes before the time limit): lrab is stopped
#     and the task requeues itself, so a long shard continues in a fresh allocation.
#   lrab killed by another signal (the OOM killer's SIGKILL, a crash): under Slurm the task
#     requeues itself, at most LRAB_MAX_REQUEUES times (default 3). A task that ended FAILED
#     would block the merge job's `--dependency=afterok` for good; a requeued one does not.
#
# Env: LRAB_BIN (default: lrab on PATH), LRAB_MAX_REQUEUES, and whatever the arms and backend
# need (OPENCODE_BIN, AGENT_MINI_BIN, OLLAMA_HOST, …; sbatch exports the submitter's
# environment). Exit: lrab's own (0 done, 2 bad input), 143 stopped, 0 after a requeue.
#
#SBATCH --job-name=lrab-shard
#SBATCH --requeue
#SBATCH --signal=B:USR1@300
#SBATCH --open-mode=append
#SBATCH --cpus-per-task=1
set -uo pipefail

say() { printf 'lrab-shard: %s\n' "$*" >&2; }
die() { say "$*"; exit 2; }
is_count() { [[ $1 =~ ^[0-9]+$ ]] && [ "$((10#$1))" -ge 1 ]; }

[ $# -ge 3 ] || die "usage: lrab-shard.sh SHARDS RUN OUT [lrab run flags…]"
N=$1 RUN=$2 OUT=$3
shift 3
is_count "$N" || die "SHARDS '$N' is not a positive whole number"
N=$((10#$N))
case "$RUN" in
  "" | .* | */* | *[[:space:]]*) die "RUN '$RUN' must be a plain folder name" ;;
esac
IDX=${LRAB_SHARD_INDEX:-${SLURM_ARRAY_TASK_ID:-${JOB_COMPLETION_INDEX:-}}}
[ -n "$IDX" ] || die "no shard index: set LRAB_SHARD_INDEX (0-based), or run as a Slurm array task or an Indexed Job pod"
[[ $IDX =~ ^[0-9]+$ ]] || die "shard index '$IDX' is not a whole number"
IDX=$((10#$IDX))
[ "$IDX" -lt "$N" ] || die "shard index $IDX is out of range for $N shards (0..$((N - 1)))"
K=$((IDX + 1))
LRAB=${LRAB_BIN:-lrab}
command -v "$LRAB" >/dev/null || die "lrab not found ('$LRAB'): put it on PATH or set LRAB_BIN"
ID="$RUN-s${K}of${N}"
DIR="$OUT/$ID"

if [ -f "$DIR/manifest.json" ]; then
  # A folder of another slice (other SHARDS, edited by hand) must not be continued as this one.
  grep -Eq "\"shard\": *\"$K/$N\"" "$DIR/manifest.json" ||
    die "$DIR/manifest.json is not shard $K/$N; refusing to resume it as that shard"
  say "shard $K/$N: resuming $DIR (restart ${SLURM_RESTART_COUNT:-0})"
  cmd=("$LRAB" run --resume "$DIR" --no-progress "$@")
else
  say "shard $K/$N: starting $DIR"
  cmd=("$LRAB" run "$@" --shard "$K/$N" --run-id "$ID" --out "$OUT" --no-progress)
fi

child=
stop_lrab() {
  if [ -n "$child" ] && kill -0 "$child" 2>/dev/null; then
    kill -TERM "$child" 2>/dev/null
    wait "$child" 2>/dev/null
  fi
  child=
}
requeue_self() { # requeue_self REASON: only under Slurm, and a bounded number of times
  local n=${SLURM_RESTART_COUNT:-0} max=${LRAB_MAX_REQUEUES:-3}
  if [ -z "${SLURM_JOB_ID:-}" ] || ! command -v scontrol >/dev/null; then
    say "$1; not under Slurm, so not requeued: rerun this command to resume $DIR"
    return 1
  fi
  if [ "$n" -ge "$max" ]; then
    say "$1; already requeued $n times (LRAB_MAX_REQUEUES=$max): giving up"
    return 1
  fi
  say "$1; requeueing job $SLURM_JOB_ID (restart $((n + 1)) of at most $max)"
  scontrol requeue "$SLURM_JOB_ID"
}
on_stop() {
  say "stopped by SIG$1: stopping lrab; the attempt in flight is set aside and rerun on resume"
  stop_lrab
  exit 143
}
on_usr1() {
  say "time limit near (SIGUSR1): stopping lrab"
  stop_lrab
  requeue_self "shard $K/$N stopped before its time limit" && exit 0
  exit 143
}
trap 'on_stop TERM' TERM
trap 'on_stop INT' INT
trap 'on_stop HUP' HUP
trap on_usr1 USR1

# In the background so the traps run at once, not only after lrab exits.
"${cmd[@]}" &
child=$!
wait "$child"
rc=$?
child=
# 129/130/143: lrab was stopped on purpose (its own handler exits 128 + signal); no requeue.
if [ "$rc" -gt 128 ] && [ "$rc" != 129 ] && [ "$rc" != 130 ] && [ "$rc" != 143 ]; then
  requeue_self "lrab died of signal $((rc - 128)) in shard $K/$N" && exit 0
fi
exit "$rc"
