#!/usr/bin/env bash
# Opt-in, slow: the simulator's full calibration with the real published arms.
#
#   scripts/sim-calibrate.sh [extra `lrab sim calibrate` flags, e.g. --cross-check, --seeds 0,1,2]
#
# Fits sim/profiles/*.toml to the published opencode, agent-mini and Mingbird cells
# (failure_forms_2609.csv, carried in data/mingbird/), then verifies them by running the real
# opencode 1.18.23, agent-mini 0.3.1 and Mingbird v1.5.0 through the runner against the
# simulator on all 18 tasks (3 arms × 4 models) at seeds 0-4, and our harness (held out of the
# fit) for the prediction rows. Writes sim/profiles/ and docs/sim-calibration.md only when
# every step succeeded; evaluations are cached under ~/.cache/lrab/calibrate (per model, keyed
# by its profile, the seed, the simulator sources, the pack and the arm files) and resumed if
# interrupted. The default test suite only checks that the committed profiles and report are
# the fit's (runner/tests/sim_calibrate.rs).
#
# The arms must be installed (`lrab arms list`; `lrab arms install opencode agent-mini
# mingbird`, see docs/arms.md). Env: JOBS (default 2); CARGO_TARGET_DIR (default: the
# workspace's target/).
set -euo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
cd "$REPO"
TARGET=${CARGO_TARGET_DIR:-$REPO/target}
nice -n 5 cargo build --quiet -p lrab-runner -p lrab-harness --bins
export LRAB_HARNESS_BIN="$TARGET/debug/lrab-harness"
for arm in opencode agent-mini mingbird; do
  "$TARGET/debug/lrab" arms check "$arm" >/dev/null 2>&1 || {
    echo "sim-calibrate: the arm $arm is not installed (lrab arms install $arm; docs/arms.md)" >&2
    exit 2
  }
done
start=$(date +%s)
nice -n 5 "$TARGET/debug/lrab" sim calibrate --jobs "${JOBS:-2}" --with-harness "$@"
echo "sim-calibrate: $(( $(date +%s) - start )) s" >&2
