#!/bin/bash
# Submits a distributed lrab run to Slurm: an array of SHARDS tasks (lrab-shard.sh) and the
# merge job (lrab-merge.sh) chained with --dependency=afterok, so the merge runs once every
# shard has finished successfully (requeued tasks included).
#
#   scripts/slurm/submit.sh --shards N --run NAME [--out DIR] [--sbatch ARG]…
#                           [--merge-sbatch ARG]… [--] [lrab run flags…]
#
#   --shards N         number of shards = array tasks (indices 0..N-1, shard k = index + 1)
#   --run NAME         run name: shards go to DIR/NAME-s<k>ofN, the merge to DIR/NAME
#   --out DIR          results root on a file system every node sees (default: ./results)
#   --sbatch ARG       extra sbatch option for the array tasks, e.g. --sbatch=--gres=gpu:1,
#                      --sbatch=--time=48:00:00, --sbatch=--array=0-7%4 (at most 4 at once)
#   --merge-sbatch ARG extra sbatch option for the merge job
#   lrab run flags     the matrix and knobs, the same for every shard, e.g.
#                      --backend ollama --arms harness,opencode,agent-mini --models a,b
#
# The matrix is checked with `lrab plan` before anything is submitted, so bad input (unknown
# arm, task, bad --shards) fails here and not in N array tasks. Logs go to DIR/logs/.
# Prints LRAB_ARRAY_JOB=<id> and LRAB_MERGE_JOB=<id> on stdout.
# Env: LRAB_BIN (default: lrab on PATH) is exported to the jobs with the rest of the
# environment (sbatch's default --export=ALL).
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
die() { printf 'submit: %s\n' "$*" >&2; exit 2; }

N= RUN= OUT=results
SB=() MB=()
while [ $# -gt 0 ]; do
  case "$1" in
    --shards) N=${2-}; shift 2 || die "--shards needs a value" ;;
    --shards=*) N=${1#*=}; shift ;;
    --run) RUN=${2-}; shift 2 || die "--run needs a value" ;;
    --run=*) RUN=${1#*=}; shift ;;
    --out) OUT=${2-}; shift 2 || die "--out needs a value" ;;
    --out=*) OUT=${1#*=}; shift ;;
    --sbatch) SB+=("${2-}"); shift 2 || die "--sbatch needs a value" ;;
    --sbatch=*) SB+=("${1#*=}"); shift ;;
    --merge-sbatch) MB+=("${2-}"); shift 2 || die "--merge-sbatch needs a value" ;;
    --merge-sbatch=*) MB+=("${1#*=}"); shift ;;
    --) shift; break ;;
    *) break ;;
  esac
done
[[ $N =~ ^[0-9]+$ ]] && [ "$((10#$N))" -ge 1 ] || die "--shards '$N': need a positive whole number"
N=$((10#$N))
case "$RUN" in
  "" | .* | */* | *[[:space:]]* | *,*) die "--run '$RUN': need a plain folder name" ;;
esac
for a in "$@"; do
  case "$a" in
    --shard | --shard=* | --run-id | --run-id=* | --out | --out=* | --resume | --resume=*)
      die "$a is set per shard by lrab-shard.sh; give --shards/--run/--out to submit.sh instead" ;;
  esac
done
LRAB=${LRAB_BIN:-lrab}
command -v "$LRAB" >/dev/null || die "lrab not found ($LRAB); set LRAB_BIN"
command -v sbatch >/dev/null || die "sbatch not found: no Slurm client on this machine"
mkdir -p "$OUT/logs"
OUT=$(cd "$OUT" && pwd)

# Pre-flight: the matrix flags (those `lrab plan` knows) give the plan; run knobs are skipped.
plan_args=() args=("$@") i=0
while [ $i -lt ${#args[@]} ]; do
  a=${args[$i]}
  case "$a" in
    --config | --arms | --models | --tasks | --repeats | --backend | --pack | --arms-dir)
      plan_args+=("$a" "${args[$((i + 1))]-}"); i=$((i + 2)) ;;
    --config=* | --arms=* | --models=* | --tasks=* | --repeats=* | --backend=* | --pack=* | --arms-dir=*)
      plan_args+=("$a"); i=$((i + 1)) ;;
    *) i=$((i + 1)) ;;
  esac
done
cells=$("$LRAB" plan "${plan_args[@]}" | wc -l) || die "the matrix is invalid (see above); nothing submitted"
[ "$cells" -ge 1 ] || die "the matrix has no cell; nothing submitted"
[ "$N" -le "$cells" ] || printf 'submit: note: %s shards for %s cells; %s shards get no cell\n' \
  "$N" "$cells" "$((N - cells))" >&2

J=$(sbatch --parsable --array="0-$((N - 1))" --output="$OUT/logs/$RUN-%A_%a.out" \
  ${SB[@]+"${SB[@]}"} "$HERE/lrab-shard.sh" "$N" "$RUN" "$OUT" "$@")
J=${J%%;*}
M=$(sbatch --parsable --dependency="afterok:$J" --kill-on-invalid-dep=yes \
  --output="$OUT/logs/$RUN-merge-%j.out" ${MB[@]+"${MB[@]}"} \
  "$HERE/lrab-merge.sh" "$N" "$RUN" "$OUT")
M=${M%%;*}
printf 'submit: %s cells in %s shards: array job %s, merge job %s (afterok); results: %s/%s\n' \
  "$cells" "$N" "$J" "$M" "$OUT" "$RUN" >&2
echo "LRAB_ARRAY_JOB=$J"
echo "LRAB_MERGE_JOB=$M"
