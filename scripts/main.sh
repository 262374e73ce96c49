#!/usr/bin/env bash
# The main job on a fresh machine: build the suite, then run a small matrix — our harness arm
# (plus opencode and agent-mini when installed) × four model sizes × six tasks — against a real
# Ollama when one answers, else against the built-in simulated backend (labelled as simulated),
# and print where the report is. Extra arguments go to `lrab run` (e.g. --tasks all-of-them,
# --models ..., --backend sim). The dev profile is used: it builds several times faster than
# --release on small machines, and the arms, not the runner, dominate a cell's time.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --locked -p lrab-runner -p lrab-harness
exec cargo run --locked -q -p lrab-runner --bin lrab -- run --backend auto --arms upstream \
  --tasks WF-01,WF-04,WF-06,WF-10,LH-01,LH-03 "$@"
