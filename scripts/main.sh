#!/usr/bin/env bash
# The main job on a fresh machine: build the suite, then run a small matrix — our harness arm
# (plus opencode and agent-mini when installed) × four model sizes × six tasks — against a real
# Ollama when one answers, else against the built-in simulated backend (labelled as simulated).
# Extra arguments are passed to `lrab run` (e.g. --tasks all, --models ..., --backend sim).
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --locked -p lrab-runner -p lrab-harness
exec target/release/lrab run --backend auto --arms upstream \
  --tasks WF-01,WF-04,WF-06,WF-10,LH-01,LH-03 "$@"
