#!/bin/bash
# The merge step of a distributed lrab run: after every shard finished (Slurm:
# `--dependency=afterok:<array job>`), merges OUT/RUN-s1ofN … OUT/RUN-sNofN into OUT/RUN.
#
#   lrab-merge.sh SHARDS RUN OUT
#
# The merge is written to a staging folder OUT/.merging-RUN/RUN and moved into place in one
# rename, so a merge job that is killed and requeued starts over cleanly and OUT/RUN is only
# ever a complete merge. An existing OUT/RUN is left alone (exit 0 with a note).
# Exit: lrab merge's (0 complete, 1 planned cells missing, 2 bad input).
#
#SBATCH --job-name=lrab-merge
#SBATCH --requeue
#SBATCH --open-mode=append
#SBATCH --cpus-per-task=1
set -uo pipefail
say() { printf 'lrab-merge: %s\n' "$*" >&2; }
die() { say "$*"; exit 2; }
[ $# -eq 3 ] || die "usage: lrab-merge.sh SHARDS RUN OUT"
N=$1 RUN=$2 OUT=$3
[[ $N =~ ^[0-9]+$ ]] && [ "$((10#$N))" -ge 1 ] || die "SHARDS '$N' is not a positive whole number"
N=$((10#$N))
case "$RUN" in
  "" | .* | */* | *[[:space:]]*) die "RUN '$RUN' must be a plain folder name" ;;
esac
LRAB=${LRAB_BIN:-lrab}
command -v "$LRAB" >/dev/null || die "lrab not found ('$LRAB'): put it on PATH or set LRAB_BIN"
if [ -e "$OUT/$RUN" ]; then
  say "$OUT/$RUN exists already; nothing to do (remove it to merge again)"
  exit 0
fi
inputs=()
for k in $(seq 1 "$N"); do
  d="$OUT/$RUN-s${k}of${N}"
  [ -f "$d/manifest.json" ] || die "shard $k/$N has no run folder ($d/manifest.json is missing)"
  inputs+=("$d")
done
stage="$OUT/.merging-$RUN"
rm -rf "$stage"
mkdir -p "$stage" || die "cannot create $stage"
"$LRAB" merge --out "$stage/$RUN" "${inputs[@]}"
rc=$?
if [ "$rc" -le 1 ] && [ -f "$stage/$RUN/plan.jsonl" ]; then
  mv "$stage/$RUN" "$OUT/$RUN" && rmdir "$stage"
  say "merged $N shards into $OUT/$RUN"
else
  rm -rf "$stage"
fi
exit "$rc"
