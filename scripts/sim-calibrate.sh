#!/usr/bin/env bash
# Opt-in, slow: the simulator's full calibration with the real third-party binaries.
#
#   scripts/sim-calibrate.sh [extra `lrab sim calibrate` flags, e.g. --cross-check]
#
# Fits sim/profiles/*.toml to the published opencode and agent-mini cells
# (failure_forms_2609.csv, carried in data/mingbird/), then verifies them by running the real
# opencode 1.18.23 and agent-mini 0.3.1 through the runner against the simulator on all 18
# tasks (2 arms × 4 models), and our harness (held out of the fit) for the plausibility rows.
# Writes sim/profiles/ and docs/sim-calibration.md only when every step succeeded; evaluations
# are cached under ~/.cache/lrab/calibrate (keyed by profiles, simulator sources, pack, arms)
# and resumed if interrupted. The default test suite only checks that the committed profiles
# and report are the fit's (runner/tests/sim_calibrate.rs).
#
# Env: OPENCODE_BIN (default ~/.local/opencode/node_modules/opencode-linux-x64/bin/opencode),
# AGENT_MINI_BIN (default ~/.local/agent-mini/bin/agent-mini), JOBS (default 2),
# CARGO_TARGET_DIR (default ~/.cache/lrab/target).
set -euo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
cd "$REPO"
export OPENCODE_BIN=${OPENCODE_BIN:-$HOME/.local/opencode/node_modules/opencode-linux-x64/bin/opencode}
export AGENT_MINI_BIN=${AGENT_MINI_BIN:-$HOME/.local/agent-mini/bin/agent-mini}
for b in "$OPENCODE_BIN" "$AGENT_MINI_BIN"; do
  [ -x "$b" ] || { echo "sim-calibrate: $b is not an executable (see docs/arms.md for installs)" >&2; exit 2; }
done
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$HOME/.cache/lrab/target}
nice -n 5 cargo build --quiet -p lrab-runner -p lrab-harness --bins
export LRAB_HARNESS_BIN="$CARGO_TARGET_DIR/debug/lrab-harness"
start=$(date +%s)
nice -n 5 "$CARGO_TARGET_DIR/debug/lrab" sim calibrate --jobs "${JOBS:-2}" --with-harness "$@"
echo "sim-calibrate: $(( $(date +%s) - start )) s" >&2
