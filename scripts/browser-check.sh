#!/usr/bin/env bash
# Opt-in browser check of the analysis report: installs Debian's `chromium` when no Chromium is
# found (root, apt-get), then runs the report's browser tests and the load-time benchmark.
#
#   scripts/browser-check.sh
#
# 1. a headless Chromium opens report.html and one cell page of a generated run and the test
#    asserts what a reader sees (the cell links resolve; the page shows the check names and
#    scores, a tool call's arguments, a file's name, mechanism firings; model text stays text);
# 2. the benchmark builds a run of 288 cells with 25-request trajectories, analyzes it, and
#    loads report.html and a cell page five times each in Chromium, printing the median load
#    time measured inside the browser (lines starting with BENCH; docs/results-format.md
#    records the figures).
# The default test suite runs step 1 whenever a chromium binary is on PATH (or LRAB_CHROMIUM
# names one) and prints why it skipped otherwise.
#
# Env: LRAB_CHROMIUM (a Chromium binary to use instead), CARGO_TARGET_DIR.
set -euo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
say() { printf '== %s\n' "$*"; }
have_chromium() {
  [ -n "${LRAB_CHROMIUM:-}" ] && [ -x "$LRAB_CHROMIUM" ] && return 0
  command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1
}
if ! have_chromium; then
  if [ "$(id -u)" != 0 ]; then
    echo "browser-check: no chromium found and not root: install Debian's chromium package" >&2
    exit 1
  fi
  say "installing chromium from Debian's packages"
  apt-get update -q
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends chromium
fi
have_chromium || { echo "browser-check: chromium still missing" >&2; exit 1; }
say "chromium: $( (chromium --version || chromium-browser --version) 2>/dev/null | head -1)"
cd "$REPO"
say "report and cell page in headless chromium, and the 288-cell load benchmark"
LOG=$(mktemp "${TMPDIR:-/tmp}/browser-check.XXXXXX")
status=0
nice -n 5 cargo test -p lrab-analysis --test cell_pages -- --include-ignored --nocapture --test-threads 1 \
  >"$LOG" 2>&1 || status=$?
cat "$LOG"
say "figures"
grep -E '^(BENCH|lrab analyze|report.html)' "$LOG" || true
rm -f "$LOG"
exit "$status"
